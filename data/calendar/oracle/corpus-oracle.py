#!/usr/bin/env python3
"""Reference occurrences of many iCalendar files (the real-world corpus) in one JSON document.

    corpus-oracle.py [--start 2015-01-01] [--end 2031-01-01] [--jobs N] FILE...

Run it with the test venv (scripts/test-venv.sh prints its path):

    "$(scripts/test-venv.sh | tail -1)"/bin/python data/calendar/oracle/corpus-oracle.py \
        data/calendar/corpus/*.ics > /tmp/oracle.json

It prints to stdout

    {"generator": "...", "window": {"start": "2015-01-01T00:00:00Z", "end": "2031-01-01T00:00:00Z"},
     "files": {"<basename>": {"occurrences": [{"uid", "summary", "start", "end", "recurrenceId"?}, ...],
                              "count": N, "error": null | "ExceptionType: message"}}}

and a per-file line (count or error) plus the total run time on stderr.

Expansion: icalendar 7.3.0 + recurring-ical-events 3.8.2, `recurring_ical_events.of(calendar)
.between(start, end)` with the window's bounds as UTC instants (of() first applies X-WR-TIMEZONE
through x-wr-timezone, as the library always does). Occurrences are rendered exactly as
make-oracle.py renders them (the format the Calendar provider writes startDate/endDate in):

  * all-day values "YYYY-MM-DD"; floating times "YYYY-MM-DDTHH:MM:SS" (no offset); every other
    time its UTC instant "YYYY-MM-DDTHH:MM:SSZ";
  * "end" is the occurrence's DTEND and, like make-oracle.py, DTSTART when there is none.
    recurring-ical-events in fact always sets DTEND on the occurrences it returns, computed as:
    the event's DTEND if present; else DTSTART + DURATION (an all-day DTSTART with a DURATION
    that is not whole days becomes a floating datetime first); else DTSTART + 1 day for an
    all-day event and DTSTART itself for a timed one (RFC 5545 3.6.1). So the DTSTART fallback
    never fires in practice; DURATION is honoured through the library.
  * "uid" is str(UID) ("" when the event has none; make-oracle.py would fail there instead),
    "summary" str(SUMMARY) or "(No title)";
  * "recurrenceId" (rendered the same way) only for occurrences of a UID that recurs in the
    file: one of its VEVENTs has RRULE, RDATE or RECURRENCE-ID. (recurring-ical-events puts a
    RECURRENCE-ID equal to DTSTART on every occurrence, even of a one-off event; that one is
    left out.) It is informative: compare.py does not compare it.

Occurrences are sorted by (start, end, uid, summary, recurrenceId). If parsing or expansion
raises, "error" holds "ExceptionType: message" and "occurrences" is empty. A file with more
than 20000 occurrences in the window keeps them all; it is reported on stderr as large.

A child that is killed for taking too long or dies without an answer is not the reference
failing to read a file: its entry also has "failure": "timeout" or "crashed", and compare.py
reports it as an oracle failure (never left out of the comparison unnoticed).

Each file is expanded in a fresh process (icalendar caches time zones built from VTIMEZONE
components process-wide, and one file must not see another's zones). To keep that cheap the
parent imports the libraries once, parses nothing, and forks a new child per file (--jobs at a
time, default: the number of CPUs), so each child starts with the parent's clean state. The
parent stays single-threaded (no multiprocessing pool: a pool forks while its own threads hold
locks, and such a child can hang), reads each child's JSON from a pipe as it comes, and kills a
child that runs for more than 120 s (its file is then an error).
"""

import argparse
import datetime
import json
import os
import pathlib
import select
import sys
import time

from oracle_render import render

LARGE = 20000


def day(text):
    try:
        return datetime.datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=datetime.timezone.utc)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date YYYY-MM-DD: {text!r}")


def expand(path, start, end):
    import icalendar
    import recurring_ical_events

    calendar = icalendar.Calendar.from_ical(pathlib.Path(path).read_bytes())
    recurring = {
        str(event.get("UID", ""))
        for event in calendar.walk("VEVENT")
        if any(name in event for name in ("RRULE", "RDATE", "RECURRENCE-ID"))
    }
    occurrences = []
    for event in recurring_ical_events.of(calendar).between(start, end):
        uid = str(event.get("UID", ""))
        row = {
            "uid": uid,
            "summary": str(event.get("SUMMARY", "(No title)")),
            "start": render(event["DTSTART"].dt),
            "end": render(event["DTEND"].dt if "DTEND" in event else event["DTSTART"].dt),
        }
        if uid in recurring and "RECURRENCE-ID" in event:
            row["recurrenceId"] = render(event["RECURRENCE-ID"].dt)
        occurrences.append(row)
    occurrences.sort(key=lambda o: (o["start"], o["end"], o["uid"], o["summary"], o.get("recurrenceId", "")))
    return occurrences


TIMEOUT = 120


def one(task):
    path, start, end = task
    began = time.monotonic()
    try:
        result = {"occurrences": expand(path, start, end), "error": None}
    except BaseException as error:  # noqa: BLE001 - any failure of the oracle is data
        result = {"occurrences": [], "error": f"{type(error).__name__}: {error}"}
    result["count"] = len(result["occurrences"])
    return path, result, time.monotonic() - began


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--start", type=day, default=day("2015-01-01"), help="window start (UTC), YYYY-MM-DD")
    parser.add_argument("--end", type=day, default=day("2031-01-01"), help="window end (UTC, exclusive), YYYY-MM-DD")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="files expanded at a time")
    parser.add_argument("files", nargs="+", metavar="FILE")
    args = parser.parse_args()
    if args.end <= args.start:
        parser.error("--end must be after --start")
    names = [pathlib.Path(path).name for path in args.files]
    if len(set(names)) != len(names):
        parser.error("two FILEs have the same basename")

    import importlib.metadata as metadata

    import icalendar  # noqa: F401 - imported before forking, so each child starts warm and clean
    import recurring_ical_events  # noqa: F401

    versions = {name: metadata.version(name) for name in ("icalendar", "recurring-ical-events")}
    assert versions == {"icalendar": "7.3.0", "recurring-ical-events": "3.8.2"}, versions

    began = time.monotonic()
    tasks = [(path, args.start, args.end) for path in args.files]
    results = {}
    # One fork per file, from this single-threaded process (a multiprocessing pool forks while its
    # own threads hold locks, and a child can then hang forever); at most --jobs at a time; a
    # child that takes longer than TIMEOUT seconds is killed and its file recorded as an error.
    pending = list(tasks)
    running = {}  # read end -> [pid, task, started, bytes read so far]
    while pending or running:
        while pending and len(running) < max(1, args.jobs):
            task = pending.pop(0)
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(read_end)
                try:
                    payload = json.dumps(one(task)).encode()
                    view = memoryview(payload)
                    while view:
                        view = view[os.write(write_end, view):]
                finally:
                    os._exit(0)
            os.close(write_end)
            running[read_end] = [pid, task, time.monotonic(), bytearray()]
        ready, _, _ = select.select(list(running), [], [], 0.5)
        finished = []
        for fd in ready:
            chunk = os.read(fd, 1 << 16)
            if chunk:
                running[fd][3] += chunk
            else:
                finished.append((fd, None))
        for fd, entry in running.items():
            if fd not in ready and time.monotonic() - entry[2] > TIMEOUT:
                os.kill(entry[0], 9)
                finished.append((fd, f"TimeoutError: the oracle took over {TIMEOUT} s"))
        for fd, failure in finished:
            pid, task, _, payload = running.pop(fd)
            os.close(fd)
            os.waitpid(pid, 0)
            name = pathlib.Path(task[0]).name
            if payload and not failure:
                _, result, seconds = json.loads(payload)
            else:
                # Not an answer about the file but a failure of the oracle itself: marked as such,
                # so the comparison never counts it as a file the reference cannot read.
                kind = "timeout" if failure else "crashed"
                result = {"occurrences": [], "error": failure or "the oracle's process died", "count": 0, "failure": kind}
                seconds = 0.0
            results[name] = result
            note = result["error"] or f"{result['count']} occurrences"
            if result["count"] > LARGE:
                note += f" (large: over {LARGE})"
            print(f"{name}: {note} [{seconds:.2f}s]", file=sys.stderr)
    document = {
        "generator": "icalendar 7.3.0 + recurring-ical-events 3.8.2 (corpus-oracle.py)",
        "window": {"start": render(args.start), "end": render(args.end)},
        "files": {name: results[name] for name in sorted(results)},
    }
    json.dump(document, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")
    errors = sum(1 for r in results.values() if r["error"])
    empty = sum(1 for r in results.values() if not r["error"] and r["count"] == 0)
    total = sum(r["count"] for r in results.values())
    print(
        f"{len(results)} files, {total} occurrences, {empty} with none in the window, {errors} errors,"
        f" {time.monotonic() - began:.1f}s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()

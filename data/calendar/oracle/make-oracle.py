#!/usr/bin/env python3
"""Writes the reference occurrences of every sample calendar for the Calendar provider's tests.

An independent implementation expands each file in ../samples/*.ics over a fixed window:
Python's icalendar 7.3.0 with recurring-ical-events 3.8.2 (test-time only, never a runtime
dependency of the provider):

    python3 -m venv /tmp/calvenv
    /tmp/calvenv/bin/pip install icalendar==7.3.0 recurring-ical-events==3.8.2
    /tmp/calvenv/bin/python data/calendar/oracle/make-oracle.py

For each sample it writes <name>.json next to this script:

    {"source": "google-work.ics", "window": {"start": "...", "end": "..."},
     "occurrences": [{"uid", "summary", "start", "end"}, ...]}

Times: all-day values as "YYYY-MM-DD"; floating times as "YYYY-MM-DDTHH:MM:SS" (no offset);
every other time as its UTC instant "YYYY-MM-DDTHH:MM:SSZ". That is exactly how the provider
writes an item's startDate/endDate, so Tests/ProviderTests/CalendarOracleTests.swift can compare
the .so's expansion (collect/query, then collect/submit per option, with now = window start,
windowDays = 89, timeZone = UTC) with these files value for value.

Each file is expanded in a fresh Python process: icalendar caches time zones built from
VTIMEZONE components process-wide, and a later file must not see an earlier file's zones.
"""

import datetime
import json
import pathlib
import subprocess
import sys

from oracle_render import render

WINDOW_START = datetime.datetime(2025, 2, 15, tzinfo=datetime.timezone.utc)
WINDOW_END = datetime.datetime(2025, 5, 15, tzinfo=datetime.timezone.utc)
HERE = pathlib.Path(__file__).resolve().parent
SAMPLES = HERE.parent / "samples"


def expand(path):
    import icalendar
    import recurring_ical_events

    calendar = icalendar.Calendar.from_ical(pathlib.Path(path).read_bytes())
    occurrences = []
    for event in recurring_ical_events.of(calendar).between(WINDOW_START, WINDOW_END):
        occurrences.append({
            "uid": str(event["UID"]),
            "summary": str(event.get("SUMMARY", "(No title)")),
            "start": render(event["DTSTART"].dt),
            "end": render(event["DTEND"].dt if "DTEND" in event else event["DTSTART"].dt),
        })
    occurrences.sort(key=lambda o: (o["start"], o["end"], o["uid"], o["summary"]))
    return occurrences


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        json.dump(expand(sys.argv[2]), sys.stdout)
        return
    import icalendar
    import importlib.metadata as metadata

    versions = {name: metadata.version(name) for name in ("icalendar", "recurring-ical-events")}
    assert versions == {"icalendar": "7.3.0", "recurring-ical-events": "3.8.2"}, versions
    for path in sorted(SAMPLES.glob("*.ics")):
        output = subprocess.run(
            [sys.executable, __file__, "--one", str(path)], check=True, capture_output=True, text=True
        ).stdout
        document = {
            "source": path.name,
            "generator": "icalendar 7.3.0 + recurring-ical-events 3.8.2 (make-oracle.py)",
            "window": {"start": render(WINDOW_START), "end": render(WINDOW_END)},
            "occurrences": json.loads(output),
        }
        target = HERE / (path.stem + ".json")
        target.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
        print(f"{target.name}: {len(document['occurrences'])} occurrences")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Summarises a failed `swift test` log at its end, where a CI log's tail is read.

Prints the tests that failed, the tests that started and never finished (the ones running when
the process died), and, for a crash, the Swift backtracer's crashed thread: on a crash the
backtracer prints every thread, and the one that matters is far above the end of the log.

Usage: test-failure-summary.py LOG
"""
import re
import sys

# Swift Testing quotes a display name and prints a function's name bare: `Test "a name"`, `Test f()`.
STARTED = re.compile(r'^◇ Test (.+) started\.$')
FINISHED = re.compile(r'^[✔✘] Test (.+?)(?: with \d+ test cases?)? (?:passed|failed) after')
FAILED = re.compile(r'^✘ Test (.+?)(?: with \d+ test cases?)? failed after')
# Colour codes, which Swift Testing writes when TERM is set, even into a pipe.
ANSI = re.compile(r'\x1b\[[0-9;]*m')
CRASHED = re.compile(r'^Thread \d+(?: "[^"]*")? crashed:')
THREAD = re.compile(r'^Thread \d+(?: "[^"]*")?:')
MAXIMUM_FRAMES = 60


def main(path: str) -> None:
    with open(path, encoding="utf-8", errors="replace") as log:
        lines = [ANSI.sub("", line.rstrip("\n")) for line in log]
    running, failed, crash, signal = {}, [], [], []
    in_crashed_thread = False
    for line in lines:
        if line.startswith(("◇ Test case ", "✔ Test case ", "✘ Test case ", "◇ Test run started", "✔ Test run with", "✘ Test run with")):
            pass  # a parameterised test's case (its test's own lines say how it went), or the whole run
        elif match := STARTED.match(line):
            running[match.group(1)] = True
        elif match := FINISHED.match(line):
            running.pop(match.group(1), None)
            if FAILED.match(line):
                failed.append(match.group(1))
        if line.startswith(("💣", "*** Signal", "*** Program crashed")) or "exited with unexpected signal" in line.lower():
            signal.append(line)
        if CRASHED.match(line):
            in_crashed_thread = True
        elif in_crashed_thread and (THREAD.match(line) or line.startswith("Registers:") or line.startswith("Images")):
            in_crashed_thread = False
        if in_crashed_thread and len(crash) < MAXIMUM_FRAMES:
            crash.append(line)

    print("\n==== Summary of the failed test run (scripts/test-failure-summary.py) ====")
    if signal:
        print("The test process stopped on a signal:")
        for line in signal[:5]:
            print("  " + line.strip()[:300])
    if running:
        print("Started and never finished (running when the process stopped):")
        for name in running:
            print(f"  {name}")
    if failed:
        print(f"Failed ({len(failed)}):")
        for name in failed[:40]:
            print(f"  {name}")
    if crash:
        print("The crashed thread:")
        for line in crash:
            print("  " + line)
    if not (signal or running or failed):
        print("No failed, unfinished or crashed test found in the log; see the output above.")


if __name__ == "__main__":
    main(sys.argv[1])

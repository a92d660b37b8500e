#!/usr/bin/env bash
# Builds everything (the host, the provider libraries the tests load, the tests) and runs the
# whole test suite. This is the README's test command; .ci/run calls it.
#
# Tests run one at a time (--no-parallel): many integration tests block a thread while they
# wait for a spawned host, and provider tests run the providers' own tasks inside the test
# process; in parallel on a 2-core machine the blocking tests can take every thread of Swift's
# cooperative pool and starve the providers' tasks into timeouts. Serial, the suite takes about
# 15 minutes on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
# Test oracles (icalendar + recurring-ical-events, jsonschema) in a test-only venv; once, then cached.
scripts/test-venv.sh >/dev/null
swift build --build-tests
# The log is kept and, if the run fails, summarised at its end (failed tests, the test running
# when the process died, a crash's crashed thread), where a CI log's tail is read.
log=$(mktemp "${TMPDIR:-/tmp}/context-host-test.XXXXXX")
if swift test --skip-build --no-parallel "$@" 2>&1 | tee "$log"; then
    rm -f "$log"
    exit 0
fi
python3 scripts/test-failure-summary.py "$log" || true
echo "The whole log: $log"
exit 1

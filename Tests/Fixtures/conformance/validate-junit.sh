#!/usr/bin/env bash
# Validates a JUnit XML file against the common JUnit schema (junit-10.xsd next to this script:
# the Surefire/Jenkins dialect, MIT, as shipped in pytest 9.2.0's source distribution under
# testing/example_scripts/), with the xmlschema package of the test-only venv
# (scripts/test-requirements.txt, made by scripts/test-venv.sh, which scripts/test.sh runs).
#
# Test-only tooling; never a runtime dependency of context-host.
#
# Usage: validate-junit.sh FILE.xml
# Exit status: 0 valid, 1 invalid (errors on stdout), 77 the venv or xmlschema is missing (the
# Swift test fails on it: run scripts/test-venv.sh).
set -u
file=$1
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
venv="${CONTEXT_HOST_TEST_VENV:-$root/.build/test-venv}"
case "$venv" in /*) ;; *) venv="$root/$venv" ;; esac
if ! "$venv/bin/python" -c 'import xmlschema' 2>/dev/null; then
    echo "validate-junit.sh: no xmlschema in the test venv at $venv: run scripts/test-venv.sh (scripts/test.sh does)"
    exit 77
fi
"$venv/bin/python" - "$here/junit-10.xsd" "$file" <<'PY'
import sys
import xmlschema

schema = xmlschema.XMLSchema(sys.argv[1])
errors = list(schema.iter_errors(sys.argv[2]))
for error in errors[:10]:
    print(f"{error.path}: {error.reason}")
print("valid" if not errors else f"{len(errors)} error(s)")
sys.exit(1 if errors else 0)
PY

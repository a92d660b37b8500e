#!/usr/bin/env bash
# Validates a JUnit XML file against the common JUnit schema (junit-10.xsd, the Surefire/Jenkins
# dialect, as shipped in pytest's source distribution), with the xmlschema package.
#
# Test-only tooling, fetched from PyPI into a cache folder on first use; never a runtime
# dependency of context-host.
#
# Usage: validate-junit.sh FILE.xml
# Exit status: 0 valid, 1 invalid (errors on stdout), 77 the tools could not be installed.
set -u
file=$1
cache=${CONTEXT_HOST_TOOL_CACHE:-/tmp/context-host-test-tools}
mkdir -p "$cache"
if ! PYTHONPATH="$cache/py" python3 -c 'import xmlschema' 2>/dev/null; then
    python3 -m pip install --quiet --disable-pip-version-check --target "$cache/py" xmlschema >/dev/null 2>&1 || exit 77
fi
if [ ! -f "$cache/junit-10.xsd" ]; then
    tmp=$(mktemp -d)
    python3 -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: -d "$tmp" "pytest==9.2.0" >/dev/null 2>&1 || { rm -rf "$tmp"; exit 77; }
    tar xzf "$tmp"/pytest-*.tar.gz -C "$tmp" --wildcards '*/testing/example_scripts/junit-10.xsd' 2>/dev/null || { rm -rf "$tmp"; exit 77; }
    cp "$tmp"/pytest-*/testing/example_scripts/junit-10.xsd "$cache/junit-10.xsd.part" && mv "$cache/junit-10.xsd.part" "$cache/junit-10.xsd"
    rm -rf "$tmp"
fi
PYTHONPATH="$cache/py" python3 - "$cache/junit-10.xsd" "$file" <<'PY'
import sys
import xmlschema

schema = xmlschema.XMLSchema(sys.argv[1])
errors = list(schema.iter_errors(sys.argv[2]))
for error in errors[:10]:
    print(f"{error.path}: {error.reason}")
print("valid" if not errors else f"{len(errors)} error(s)")
sys.exit(1 if errors else 0)
PY

#!/usr/bin/env bash
# Creates (once) the Python virtual environment the tests' oracles run in, with the pinned
# packages of scripts/test-requirements.txt, and prints its path on the last line of stdout.
#
#   scripts/test-venv.sh            # venv at .build/test-venv (relative to the repository root)
#   CONTEXT_HOST_TEST_VENV=/tmp/v scripts/test-venv.sh
#
# Idempotent: after a successful install it writes a stamp (the SHA-256 of the requirements
# file) into the venv; a later call with the same requirements finds the stamp and returns at
# once, without the network. A changed requirements file reinstalls into the same venv.
# Needs python3 with the venv module (Debian/Ubuntu: sudo apt-get install python3-venv).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
requirements="$root/scripts/test-requirements.txt"
venv="${CONTEXT_HOST_TEST_VENV:-.build/test-venv}"
case "$venv" in /*) ;; *) venv="$root/$venv" ;; esac
stamp="$venv/.context-host-requirements.sha256"

hash="$(sha256sum "$requirements" | cut -d' ' -f1)"
if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$hash" ]]; then
    echo "$venv"
    exit 0
fi

if ! command -v python3 >/dev/null 2>&1; then
    echo "test-venv.sh: python3 not found (Debian/Ubuntu: sudo apt-get install python3 python3-venv)" >&2
    exit 1
fi
if [[ ! -x "$venv/bin/python" ]]; then
    # A venv without pip (ensurepip missing) is what a system without python3-venv leaves behind.
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    if ! python3 -m venv "$venv" >&2; then
        rm -rf "$venv"
        echo "test-venv.sh: 'python3 -m venv' is unavailable or failed;" \
            "install it (Debian/Ubuntu: sudo apt-get install python3-venv) and run again" >&2
        exit 1
    fi
fi
rm -f "$stamp"
"$venv/bin/python" -m pip install --disable-pip-version-check --quiet -r "$requirements" >&2
echo "$hash" >"$stamp"
echo "$venv"

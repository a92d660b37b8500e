#!/usr/bin/env bash
# Builds everything (the host, the provider libraries the tests load, the tests) and runs the
# whole test suite. This is the README's test command; .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests
swift test --skip-build "$@"

#!/bin/bash
# The egress p50 budget, interleaved (issue 37): ROUNDS (default 4) rounds of this build's
# `egress-bench 1000 8` (nginx), each brokered first through another build's `context-host` and
# fetch fixture (BASELINE, e.g. main's release build copied aside) and then through this build's;
# the load average before each row. The direct rows come from this build's egress-bench in both.
#   flock /tmp/heavy.lock Benchmarks/egress-rounds.sh /path/to/main-release-dir
set -euo pipefail
BASELINE=${1:?usage: egress-rounds.sh BASELINE_RELEASE_DIR (with context-host and libFixtureFetchProvider.so)}
B=${BUILD_DIR:-$(dirname "$0")/../.build/release}
ROUNDS=${ROUNDS:-4}
for round in $(seq 1 "$ROUNDS"); do
  echo "=== round $round: baseline host ($BASELINE) load: $(cat /proc/loadavg)"; CONTEXT_HOST_BUILD_DIR=$BASELINE "$B/egress-bench" 1000 8
  echo "=== round $round: this host load: $(cat /proc/loadavg)"; "$B/egress-bench" 1000 8
done
echo "=== end load: $(cat /proc/loadavg)"

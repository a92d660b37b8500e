# Sourced by the rpcload benchmark scripts (lazy-bench.sh, sandbox-bench.sh): from the package
# root, sets ROOT, BIN (the release build's bin folder unless set), REQ (the request files), LOAD
# (rpcload, unless RPCLOAD is set) and N (requests per throughput run, default 20000), and stops
# when rpcload is missing.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)
BIN=${BIN:-$(swift build -c release --show-bin-path)}
REQ=$ROOT/Benchmarks/requests
LOAD=${RPCLOAD:-$ROOT/.build/bench/rpcload}
N=${N:-20000}
[[ -x "$LOAD" ]] || { echo "missing $LOAD: run Benchmarks/compare.sh once, or set RPCLOAD" >&2; exit 1; }

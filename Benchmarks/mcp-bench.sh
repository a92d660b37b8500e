#!/usr/bin/env bash
# The MCP bridge (issue 29) side by side with two MCP servers in ONE run: `tools/call` of a cheap
# tool through `context-host mcp` (device_info_make: the Device Information provider, in-process,
# the item kept in a state folder), through a FastMCP server answering an equivalent tool
# (Benchmarks/peers/fastmcp/server.py: the same facts from /proc, as an item), and through the MCP
# Swift SDK peer (Benchmarks/peers/mcp-swift: its `lookup` tool, ~1 KB of text; it has no device
# tool). Same driver (rpcload), same preamble (`initialize` 2025-06-18 + `initialized`), pipelined
# (W in flight) and closed loop.
#
# Usage (from a clone; compare.sh calls it unless MCP=0):
#   Benchmarks/mcp-bench.sh                 builds what is missing, prints a Markdown table
#   N=20000 W=64 REPS=3 Benchmarks/mcp-bench.sh
# Needs python3 with venv and PyPI (fastmcp is installed into .build/bench-venv once).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
[[ -d /opt/swift/usr/bin ]] && export PATH=/opt/swift/usr/bin:$PATH
N=${N:-5000}; W=${W:-64}; REPS=${REPS:-3}; LAT_N=${LAT_N:-1000}
BIN=${BIN:-$(swift build -c release --show-bin-path)}
LOAD=${RPCLOAD:-$ROOT/.build/bench/rpcload}
if [[ "${NOBUILD:-0}" != 1 ]]; then
    swift build -c release --product context-host > /dev/null
    swift build -c release --product DeviceInfoProvider > /dev/null
    [[ -x "$LOAD" ]] || { mkdir -p "$(dirname "$LOAD")"; gcc -O2 -Wall -Wextra -o "$LOAD" Benchmarks/rpcload/rpcload.c -lm; }
    [[ -x .build/peers/mcp-swift/release/mcp-peer ]] || swift build -c release --package-path Benchmarks/peers/mcp-swift \
        --scratch-path .build/peers/mcp-swift > /dev/null || echo "mcp-swift: build failed; its row is skipped" >&2
fi
VENV=$ROOT/.build/bench-venv
STAMP=$VENV/.requirements.sha256
HASH=$(sha256sum Benchmarks/peers/fastmcp/requirements.txt | cut -d' ' -f1)
if [[ ! -x "$VENV/bin/python" || ! -f "$STAMP" || "$(cat "$STAMP")" != "$HASH" ]]; then
    python3 -m venv "$VENV" >&2
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r Benchmarks/peers/fastmcp/requirements.txt >&2
    echo "$HASH" > "$STAMP"
fi

SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
PRE=Benchmarks/peers/requests/mcp-preamble.jsonl
declare -A CMD CALL LABEL
ORDER=(bridge fastmcp mcp-swift)
LABEL[bridge]="context-host mcp, device_info_make"
CMD[bridge]="$BIN/context-host mcp --manifests $ROOT/manifests --library-path $BIN --no-installed --state-dir $SCRATCH/state --registry-cache none"
CALL[bridge]=Benchmarks/peers/requests/mcp-device-info.jsonl
LABEL[fastmcp]="FastMCP 4.2.3, device_info_make"
CMD[fastmcp]="$VENV/bin/python $ROOT/Benchmarks/peers/fastmcp/server.py"
CALL[fastmcp]=Benchmarks/peers/requests/mcp-device-info.jsonl
LABEL[mcp-swift]="MCP Swift SDK 0.12.1, lookup"
CMD[mcp-swift]="$ROOT/.build/peers/mcp-swift/release/mcp-peer"
CALL[mcp-swift]=Benchmarks/peers/requests/call.jsonl
[[ -x .build/peers/mcp-swift/release/mcp-peer ]] || ORDER=(bridge fastmcp)

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
declare -A RPS P50
for id in "${ORDER[@]}"; do
    rps=(); p50=()
    for rep in $(seq 1 "$REPS"); do
        rm -rf "$SCRATCH/state"
        # shellcheck disable=SC2086
        line=$("$LOAD" -m throughput -t "${CALL[$id]}" -p "$PRE" -n "$N" -w "$W" -W $((N / 10)) -T 60 -- ${CMD[$id]} 2> "$SCRATCH/$id.stderr") \
            || { echo "$id: rpcload failed: $line $(tail -3 "$SCRATCH/$id.stderr")" >&2; continue; }
        grep -q " errors=0 " <<< " $line " || { echo "$id: errors: $line" >&2; continue; }
        rps+=("$(sed -n 's/.*rps=\([0-9.]*\).*/\1/p' <<< "$line")")
        # shellcheck disable=SC2086
        line=$("$LOAD" -m latency -t "${CALL[$id]}" -p "$PRE" -n "$LAT_N" -W $((LAT_N / 10)) -T 60 -- ${CMD[$id]} 2>> "$SCRATCH/$id.stderr") || true
        p50+=("$(sed -n 's/.*p50_us=\([0-9.]*\).*/\1/p' <<< "$line")")
        echo "  $id rep=$rep: ${rps[-1]} calls/s pipelined, p50 ${p50[-1]:-?} µs closed loop" >&2
    done
    RPS[$id]=$(printf '%s\n' "${rps[@]:-0}" | median)
    P50[$id]=$(printf '%s\n' "${p50[@]:-0}" | median)
done

echo
echo "MCP bridge (issue 29), same run: \`tools/call\` through each server, medians of $REPS runs (\`rpcload\`, $N calls with $W in flight; closed loop $LAT_N calls). $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)."
echo
echo "| server, tool | calls/s, $W in flight | p50 µs, closed loop | bridge ÷ this (calls/s) |"
echo "|---|---:|---:|---:|"
for id in "${ORDER[@]}"; do
    ratio=$(awk -v a="${RPS[bridge]}" -v b="${RPS[$id]}" 'BEGIN { printf (b > 0 ? "%.1f×" : "—"), (b > 0 ? a / b : 0) }')
    printf '| %s | %.0f | %s | %s |\n' "${LABEL[$id]}" "${RPS[$id]}" "${P50[$id]}" "$ratio"
done

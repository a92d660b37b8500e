#!/usr/bin/env bash
# The MCP bridge (issue 29) side by side with two MCP servers in ONE run: `tools/call` of a cheap
# tool through `context-host mcp` (device_info_make: the Device Information provider, in-process,
# the item kept in a state folder), through a FastMCP server answering an equivalent tool
# (Benchmarks/peers/fastmcp/server.py: the same facts from /proc, as an item), and through the MCP
# Swift SDK peer (Benchmarks/peers/mcp-swift: its `lookup` tool, ~1 KB of text; it has no device
# tool). Same driver (rpcload), same preamble (`initialize` 2025-06-18 + `initialized`), pipelined
# (W in flight) and closed loop.
#
# Then the same over the Streamable HTTP transport (issue 38), also in this run: `context-host mcp
# --http` against FastMCP's Streamable HTTP server (the same server.py, `--http PORT`: FastMCP's
# defaults, sessions and SSE answers), driven by httpload (Benchmarks/rpcload/httpload.c: W
# keep-alive connections with one call each in flight, then one connection closed loop), after
# `initialize` 2025-06-18 + `initialized` on a session. Budget: the bridge ≥ 5× FastMCP in calls/s.
#
# Usage (from a clone; compare.sh calls it unless MCP=0):
#   Benchmarks/mcp-bench.sh                 builds what is missing, prints Markdown tables
#   N=20000 W=64 REPS=3 Benchmarks/mcp-bench.sh
#   STDIO=0 Benchmarks/mcp-bench.sh         only the HTTP rows;  HTTP=0: only the stdio rows
# Needs python3 with venv and PyPI (fastmcp is installed into .build/bench-venv once).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
[[ -d /opt/swift/usr/bin ]] && export PATH=/opt/swift/usr/bin:$PATH
N=${N:-5000}; W=${W:-64}; REPS=${REPS:-3}; LAT_N=${LAT_N:-1000}
BIN=${BIN:-$(swift build -c release --show-bin-path)}
LOAD=${RPCLOAD:-$ROOT/.build/bench/rpcload}
HTTPLOAD=${HTTPLOAD:-$ROOT/.build/bench/httpload}
STDIO=${STDIO:-1}; HTTP=${HTTP:-1}
if [[ "${NOBUILD:-0}" != 1 ]]; then
    swift build -c release --product context-host > /dev/null
    swift build -c release --product DeviceInfoProvider > /dev/null
    [[ -x "$LOAD" ]] || { mkdir -p "$(dirname "$LOAD")"; gcc -O2 -Wall -Wextra -o "$LOAD" Benchmarks/rpcload/rpcload.c -lm; }
    [[ -x "$HTTPLOAD" && "$HTTPLOAD" -nt Benchmarks/rpcload/httpload.c ]] || { mkdir -p "$(dirname "$HTTPLOAD")"; gcc -O2 -Wall -Wextra -pthread -o "$HTTPLOAD" Benchmarks/rpcload/httpload.c -lm; }
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
CALL_HTTP=Benchmarks/peers/requests/mcp-device-info.jsonl
LABEL[fastmcp]="FastMCP 4.2.3, device_info_make"
CMD[fastmcp]="$VENV/bin/python $ROOT/Benchmarks/peers/fastmcp/server.py"
CALL[fastmcp]=Benchmarks/peers/requests/mcp-device-info.jsonl
LABEL[mcp-swift]="MCP Swift SDK 0.12.1, lookup"
CMD[mcp-swift]="$ROOT/.build/peers/mcp-swift/release/mcp-peer"
CALL[mcp-swift]=Benchmarks/peers/requests/call.jsonl
[[ -x .build/peers/mcp-swift/release/mcp-peer ]] || ORDER=(bridge fastmcp)

[[ "$STDIO" == 1 ]] || ORDER=()
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

# table TITLE RATE-HEADER BASE-ID LABELS RATES P50S IDS…: one result table in Markdown. LABELS, RATES
# and P50S name associative arrays keyed by server id; the last column is BASE-ID's rate over each row's.
table() {
    local title=$1 rate_header=$2 base=$3
    local -n labels=$4 rates=$5 p50s=$6
    shift 6
    echo
    echo "$title $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)."
    echo
    echo "| server, tool | $rate_header | p50 µs, closed loop | bridge ÷ this (calls/s) |"
    echo "|---|---:|---:|---:|"
    local id ratio
    for id in "$@"; do
        ratio=$(awk -v a="${rates[$base]}" -v b="${rates[$id]}" 'BEGIN { printf (b > 0 ? "%.1f×" : "—"), (b > 0 ? a / b : 0) }')
        printf '| %s | %.0f | %s | %s |\n' "${labels[$id]}" "${rates[$id]}" "${p50s[$id]}" "$ratio"
    done
}

if [[ "$STDIO" == 1 ]]; then
    table "MCP bridge (issue 29), same run: \`tools/call\` through each server, medians of $REPS runs (\`rpcload\`, $N calls with $W in flight; closed loop $LAT_N calls)." \
        "calls/s, $W in flight" bridge LABEL RPS P50 "${ORDER[@]}"
fi

[[ "$HTTP" == 1 ]] || exit 0
# --- Streamable HTTP rows -------------------------------------------------------------------------
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_port() {  # PORT PID: until something answers on the port (60 s), or the server died
    for _ in $(seq 1 600); do
        kill -0 "$2" 2> /dev/null || return 1
        (exec 3<> "/dev/tcp/127.0.0.1/$1") 2> /dev/null && return 0
        sleep 0.1
    done
    return 1
}
declare -A HCMD HLABEL
HORDER=(bridge-http fastmcp-http)
HLABEL[bridge-http]="context-host mcp --http, device_info_make"
HCMD[bridge-http]="$BIN/context-host mcp --http 127.0.0.1:PORT --manifests $ROOT/manifests --library-path $BIN --no-installed --state-dir $SCRATCH/state --registry-cache none"
HLABEL[fastmcp-http]="FastMCP 4.2.3 Streamable HTTP, device_info_make"
HCMD[fastmcp-http]="$VENV/bin/python $ROOT/Benchmarks/peers/fastmcp/server.py --http PORT"
declare -A HRPS HP50
for id in "${HORDER[@]}"; do
    rps=(); p50=()
    for rep in $(seq 1 "$REPS"); do
        rm -rf "$SCRATCH/state"
        port=$(free_port)
        # shellcheck disable=SC2086
        ${HCMD[$id]//PORT/$port} > /dev/null 2> "$SCRATCH/$id.stderr" &
        pid=$!
        if ! wait_port "$port" "$pid"; then
            echo "$id: the server did not listen: $(tail -3 "$SCRATCH/$id.stderr")" >&2
            kill "$pid" 2> /dev/null; wait "$pid" 2> /dev/null || true; continue
        fi
        line=$("$HTTPLOAD" -a "127.0.0.1:$port" -u /mcp -t "$CALL_HTTP" -n "$N" -c "$W" -W $((N / 10)) -l "$id" 2>> "$SCRATCH/$id.stderr") \
            && grep -q " errors=0 " <<< " $line " && rps+=("$(sed -n 's/.*rps=\([0-9.]*\).*/\1/p' <<< "$line")") \
            || echo "$id: httpload failed: $line $(tail -3 "$SCRATCH/$id.stderr")" >&2
        line=$("$HTTPLOAD" -a "127.0.0.1:$port" -u /mcp -t "$CALL_HTTP" -n "$LAT_N" -c 1 -W $((LAT_N / 10)) -l "$id" 2>> "$SCRATCH/$id.stderr") || true
        p50+=("$(sed -n 's/.*p50_us=\([0-9.]*\).*/\1/p' <<< "$line")")
        kill "$pid" 2> /dev/null; wait "$pid" 2> /dev/null || true
        echo "  $id rep=$rep: ${rps[-1]:-?} calls/s with $W connections, p50 ${p50[-1]:-?} µs closed loop" >&2
    done
    HRPS[$id]=$(printf '%s\n' "${rps[@]:-0}" | median)
    HP50[$id]=$(printf '%s\n' "${p50[@]:-0}" | median)
done

table "MCP over Streamable HTTP (issue 38), same run: \`tools/call\` through each server, medians of $REPS runs (\`httpload\`, $N calls on $W keep-alive connections, one call in flight on each; closed loop $LAT_N calls on one)." \
    "calls/s, $W connections" bridge-http HLABEL HRPS HP50 "${HORDER[@]}"

#!/usr/bin/env bash
# `serve --listen` (issue 38): `items/preview` of the ~1 KB note over ONE WebSocket connection,
# W in flight, beside the same request over stdio (the `context-host (in-process)` row of
# compare.sh), interleaved in one run. Same driver (rpcload; `-u` speaks WebSocket: one masked
# text frame per request), same preamble and template (Benchmarks/requests/), same host flags
# (`--isolation in-process --no-state`). The listener runs with `--max-messages-per-second 0`
# (the default rate limit, 2000/s per connection, caps a connection by design; a third row shows
# it). Budget (issue 38): WebSocket ≥ 50% of the stdio in-process rate.
#
# Usage (from a clone):
#   flock /tmp/heavy.lock Benchmarks/web-bench.sh       builds what is missing, prints a Markdown table
#   N=200000 W=64 REPS=3 Benchmarks/web-bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
[[ -d /opt/swift/usr/bin ]] && export PATH=/opt/swift/usr/bin:$PATH
N=${N:-200000}; W=${W:-64}; REPS=${REPS:-3}
BIN=${BIN:-$(swift build -c release --show-bin-path)}
LOAD=${RPCLOAD:-$ROOT/.build/bench/rpcload-ws}
if [[ "${NOBUILD:-0}" != 1 ]]; then
    swift build -c release --product context-host > /dev/null
    swift build -c release --product NoteProvider > /dev/null
    mkdir -p "$(dirname "$LOAD")"
    gcc -O2 -Wall -Wextra -o "$LOAD" Benchmarks/rpcload/rpcload.c -lm
fi
SCRATCH=$(mktemp -d)
LISTENER=""
cleanup() { [[ -n "$LISTENER" ]] && kill "$LISTENER" 2>/dev/null; rm -rf "$SCRATCH"; }
trap cleanup EXIT
PRE=Benchmarks/requests/preamble.jsonl
CALL=Benchmarks/requests/preview-note.jsonl
HOST_FLAGS=(--manifests "$ROOT/manifests" --isolation in-process --no-state --no-installed --registry-cache none)

# Starts a listener with extra flags; sets LISTENER (pid) and ADDR (127.0.0.1:PORT).
start_listener() {
    "$BIN/context-host" serve --listen 127.0.0.1:0 --no-watch "${HOST_FLAGS[@]}" "$@" 2> "$SCRATCH/listener.stderr" &
    LISTENER=$!
    for _ in $(seq 1 200); do
        ADDR=$(sed -n 's|.*listening on ws://\(127\.0\.0\.1:[0-9]*\)/rpc.*|\1|p' "$SCRATCH/listener.stderr")
        [[ -n "$ADDR" ]] && return 0
        sleep 0.05
    done
    echo "the listener did not start:" >&2; cat "$SCRATCH/listener.stderr" >&2; exit 1
}
stop_listener() { kill "$LISTENER"; wait "$LISTENER" 2>/dev/null || true; LISTENER=""; }
# CPU seconds (user + system, all threads) a process has used so far.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"; }
# "busy total" jiffies of all CPUs so far (two snapshots give the machine's busy share between them).
stat_snapshot() { awk '/^cpu / { busy = $2 + $3 + $4 + $7 + $8 + $9; print busy, busy + $5 + $6 }' /proc/stat; }

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
declare -A RPS P50 CPU
ORDER=(stdio ws ws-default)
read -r busy0 total0 <<< "$(stat_snapshot)"
for rep in $(seq 1 "$REPS"); do
    for id in "${ORDER[@]}"; do
        case $id in
            stdio)
                line=$("$LOAD" -m throughput -t "$CALL" -p "$PRE" -n "$N" -w "$W" -W $((N / 10)) -T 60 -l stdio -- \
                    "$BIN/context-host" "${HOST_FLAGS[@]}" 2> "$SCRATCH/stdio.stderr") ;;
            ws)
                start_listener --max-messages-per-second 0
                before=$(cpu_s "$LISTENER")
                line=$("$LOAD" -m throughput -t "$CALL" -p "$PRE" -n "$N" -w "$W" -W $((N / 10)) -T 60 -l ws -u "$ADDR" 2> "$SCRATCH/ws.stderr")
                line="$line listener_cpu_s=$(awk -v a="$before" -v b="$(cpu_s "$LISTENER")" 'BEGIN { print b - a }')"
                stop_listener ;;
            ws-default)
                # At the default 2000/s a run of N takes N/2000 s: a tenth of N.
                start_listener
                line=$("$LOAD" -m throughput -t "$CALL" -p "$PRE" -n $((N / 10)) -w "$W" -W 0 -T 60 -l ws-default -u "$ADDR" 2> "$SCRATCH/ws-default.stderr")
                stop_listener ;;
        esac
        errors=$(echo "$line" | field errors)
        [[ "$errors" == 0 ]] || { echo "$id: errors in: $line" >&2; cat "$SCRATCH/$id.stderr" >&2; exit 1; }
        RPS[$id]+="$(echo "$line" | field rps) "
        P50[$id]+="$(echo "$line" | field p50_us) "
        # The server's CPU per request (warm-up included, start-up not for the listener):
        # child_cpu_s from rpcload for the spawned host, the listener's own /proc figure.
        case $id in
            stdio) CPU[$id]+="$(echo "$line" | awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } } END { printf "%.1f", v["child_cpu_s"] * 1e6 / (v["n"] + v["warmup"]) }') " ;;
            ws) CPU[$id]+="$(echo "$line" | awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } } END { printf "%.1f", v["listener_cpu_s"] * 1e6 / (v["n"] + v["warmup"]) }') " ;;
        esac
        echo "$line" >&2
    done
done
declare -A LABEL
LABEL[stdio]="stdio (\`context-host --isolation in-process\`, pipes)"
LABEL[ws]="WebSocket, one connection (\`serve --listen\`, \`--max-messages-per-second 0\`)"
LABEL[ws-default]="WebSocket, one connection, default rate limit (2000/s)"
stdio=$(echo "${RPS[stdio]}" | tr ' ' '\n' | grep . | median)
read -r busy1 total1 <<< "$(stat_snapshot)"
echo "$(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ); the machine was $(awk -v b=$((busy1 - busy0)) -v t=$((total1 - total0)) 'BEGIN { printf "%.0f", 100 * b / t }')% busy over the run (this run's processes included); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| row | \`items/preview\` req/s, $W in flight (median of $REPS) | runs | p50 µs | server CPU µs/req | vs stdio |"
echo "|---|---:|---|---:|---:|---:|"
for id in "${ORDER[@]}"; do
    m=$(echo "${RPS[$id]}" | tr ' ' '\n' | grep . | median)
    p=$(echo "${P50[$id]}" | tr ' ' '\n' | grep . | median)
    c=$( [[ -n "${CPU[$id]:-}" ]] && echo "${CPU[$id]}" | tr ' ' '\n' | grep . | median || echo "—")
    printf '| %s | %.0f | %s | %s | %s | %.2f× |\n' "${LABEL[$id]}" "$m" "$(echo "${RPS[$id]}" | xargs | tr ' ' ',' | sed 's/,/, /g')" "$p" "$c" \
        "$(awk -v a="$m" -v b="$stdio" 'BEGIN { print a / b }')"
done

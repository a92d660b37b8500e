#!/usr/bin/env bash
# Issue 36's in-process budgets, interleaved with a baseline build: ROUNDS (default 3) rounds, each
# running, for the baseline and then this build, `embed-bench --rows in-process` (typed
# `items/preview` of the ~1 KB note through `InProcessHost`: closed-loop p50 and the rate with 64
# callers, medians of 3 reps) and the same preview over stdio (`rpcload`, N previews, 64 in flight,
# `serve --isolation in-process`), with the load average before each row. Budgets: p50 ≤ 15 µs, and
# InProcessHost's rate ≥ the stdio rate of the same build in the same round.
#
#   flock /tmp/heavy.lock Benchmarks/embed-rounds.sh BASELINE_DIR
#
# BASELINE_DIR (and this build's release folder) hold embed-bench, context-host and
# libNoteProvider.so. Each embed-bench reads its manifests beside the source it was built from.
set -euo pipefail
source "$(dirname "$0")/rpcload-env.sh"
BASE=${1:?usage: embed-rounds.sh BASELINE_DIR}
N=${N:-100000}
printf '%-6s %-10s %6s %14s %14s %12s\n' round build load p50_us inprocess_rps stdio_rps
for round in $(seq 1 "${ROUNDS:-3}"); do
    for build in "$BASE" "$BIN"; do
        name=$([[ $build == "$BASE" ]] && echo base || echo this)
        load=$(cut -d' ' -f1 /proc/loadavg)
        # (A build older than --rows and --only runs every row; the in-process line is read.)
        embed=$("$build/embed-bench" --rows in-process --only preview_p50_us,preview_rps --reps 3 2> /dev/null ||
            "$build/embed-bench" --reps 3)
        embed=$(grep 'row=in-process' <<< "$embed")
        p50=$(sed -n 's/.*preview_p50_us=\([0-9.]*\).*/\1/p' <<< "$embed" | head -1)
        rate=$(sed -n 's/.*preview_rps=\([0-9.]*\).*/\1/p' <<< "$embed" | head -1)
        stdio=$("$LOAD" -m throughput -t "$REQ/preview-note.jsonl" -p "$REQ/preamble.jsonl" -n "$N" -w 64 -W 1000 -T 600 -- \
            "$build/context-host" --manifests "$ROOT/manifests" --library-path "$build" --isolation in-process --no-state 2> /dev/null |
            sed -n 's/.* rps=\([0-9.]*\) .*/\1/p')
        printf '%-6s %-10s %6s %14s %14s %12s\n' "$round" "$name" "$load" "$p50" "$rate" "$stdio"
    done
done

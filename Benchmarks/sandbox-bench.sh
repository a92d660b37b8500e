#!/usr/bin/env bash
# Worker sandbox cost (issue 25), in one run: every bundled provider in a worker (--isolation
# process), --sandbox off vs best-effort (every layer on a current kernel), interleaved, 3 reps:
#   start-up: spawn -> initialize answered (p50 of 10 spawns), and "ready": spawn -> providers/list
#             answered with every worker loaded;
#   items/preview of a ~1 KB note through its worker: pipelined throughput (64 in flight).
# Needs a release build of context-host and the bundled providers, and rpcload (Benchmarks/compare.sh
# builds both; or NOBUILD=1 with RPCLOAD=path). Hold the build lock on a shared machine:
#   flock /tmp/ctxhost-build.lock Benchmarks/sandbox-bench.sh
set -euo pipefail
source "$(dirname "$0")/rpcload-env.sh"
for rep in 1 2 3; do
    for sandbox in off best-effort; do
        host=("$BIN/context-host" --manifests "$ROOT/manifests" --isolation process --sandbox "$sandbox" --no-state)
        startup=$("$LOAD" -m startup -t "$REQ/ping.jsonl" -p "$REQ/preamble.jsonl" -r 10 -f "$REQ/providers-list.jsonl" -- "${host[@]}" 2>/dev/null \
            | grep -oE '(p50_us|ready_p50_us)=[^ ]*' | tr '\n' ' ')
        preview=$("$LOAD" -m throughput -t "$REQ/preview-note.jsonl" -p "$REQ/preamble.jsonl" -n "$N" -w 64 -W 2000 -T 60 -- "${host[@]}" 2>/dev/null \
            | grep -oE '(rps|errors)=[^ ]*' | tr '\n' ' ')
        echo "rep=$rep sandbox=$sandbox startup: $startup preview: $preview"
    done
done

#!/usr/bin/env bash
# Lazy workers (issue 28), in one run: 300 copies of the Note manifest with `isolation: process`
# (distinct ids, one keeps `com.contexthost.note` for the warm preview), lazy (the default) vs
# --eager-workers, interleaved, 3 reps:
#   start-up: spawn -> initialize answered, and spawn -> providers/list answered (p50 of 10 spawns;
#             rpcload), with the registry and metadata caches warm;
#   list: spawn -> providers/list answered with all 300 listed; idle memory of host + workers
#         (all their processes' RSS, after 2 s); worker processes then;
#   cold: items/preview to a provider whose worker is not running, p50 over 20 providers (lazy
#         only: eager workers are all running);
#   warm: items/preview of a ~1 KB note through its (running) worker, pipelined (64 in flight).
# Budgets (Benchmarks/README.md): initialize <= 15 ms, list <= 50 ms, idle host + workers <= 120 MB, cold
# p50 <= 40 ms, warm unchanged against eager.
# Needs a release build of context-host and libNoteProvider.so, and rpcload (Benchmarks/compare.sh
# builds both; or NOBUILD-style: BIN=dir RPCLOAD=path). Hold the build lock on a shared machine:
#   flock /tmp/ctxhost-build.lock Benchmarks/lazy-bench.sh
set -euo pipefail
source "$(dirname "$0")/rpcload-env.sh"
COUNT=${COUNT:-300}
WORK=$(mktemp -d)
trap 'chmod -R u+w "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT
mkdir -p "$WORK/manifests"
for i in $(seq 0 $((COUNT - 1))); do
    id=com.contexthost.note-copy-$i
    [[ $i == 0 ]] && id=com.contexthost.note
    sed -e "s/^id: com.contexthost.note$/id: $id/" -e 's/^isolation: in-process$/isolation: process/' \
        "$ROOT/manifests/note.yaml" > "$WORK/manifests/note-$i.yaml"
done
# INSTALLED=1: the same providers installed (a lock file and a store, as `context-host install`
# leaves them: the packaged manifest, the library pinned by hash, runtime checked in the worker),
# loaded with an empty --manifests folder. Made directly, since every copy's provider/info says
# com.contexthost.note and the install probe would refuse the others.
if [[ -n "${INSTALLED:-}" ]]; then
    export XDG_CONFIG_HOME=$WORK/config XDG_DATA_HOME=$WORK/data
    "$BIN/context-host" package "$ROOT/manifests/note.yaml" --library-path "$BIN" --output "$WORK/note.ctxp" >/dev/null
    python3 "$ROOT/Benchmarks/lazy/make-store.py" "$WORK/note.ctxp" "$COUNT" "$WORK/config/context-host" "$WORK/data/context-host/packages"
    rm -rf "$WORK/manifests"
    mkdir -p "$WORK/manifests"
fi
# Warm the registry cache and fill the metadata cache (every provider's worker started once).
python3 "$ROOT/Benchmarks/lazy/cold.py" "$COUNT" $((COUNT - 1)) 0 -- "$BIN/context-host" --manifests "$WORK/manifests" \
    --library-path "$BIN" --no-state --registry-cache "$WORK/cache" --no-watch --max-worker-starts 2 --worker-idle-timeout 0.2 >/dev/null
for rep in 1 2 3; do
    for mode in lazy eager; do
        flags=()
        [[ $mode == eager ]] && flags=(--eager-workers)
        # The registry and metadata caches as `serve` keeps them (warmed by the first run below).
        host=("$BIN/context-host" --manifests "$WORK/manifests" --library-path "$BIN" --no-state --registry-cache "$WORK/cache" --no-watch "${flags[@]}")
        startup=$("$LOAD" -m startup -t "$REQ/ping.jsonl" -p "$REQ/preamble.jsonl" -r 10 -f "$REQ/providers-list.jsonl" -- "${host[@]}" 2>/dev/null \
            | grep -oE '(p50_us|ready_p50_us)=[^ ]*' | tr '\n' ' ')
        cold=0
        [[ $mode == lazy ]] && cold=20
        figures=$(python3 "$ROOT/Benchmarks/lazy/cold.py" "$COUNT" "$cold" 2 -- "${host[@]}")
        preview=$("$LOAD" -m throughput -t "$REQ/preview-note.jsonl" -p "$REQ/preamble.jsonl" -n "$N" -w 64 -W 2000 -T 120 -- "${host[@]}" 2>/dev/null \
            | grep -oE '(rps|errors)=[^ ]*' | tr '\n' ' ')
        echo "rep=$rep mode=$mode initialize: $startup $figures warm preview: $preview"
    done
done

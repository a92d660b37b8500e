#!/usr/bin/env bash
# Instructions per `items/preview` of the ~1 KB note, counted by valgrind's callgrind, in two rows:
# `in-process` (Note loaded into the host) and `worker` (Note in a worker process: the host and the
# worker counted together, callgrind following the host's children). A deterministic figure for comparing two builds on a machine whose speed changes by up to 2×
# within half an hour (Benchmarks/README.md, "Latest results"). Throughput still needs compare.sh; this tells whether
# a change made the host do less work.
#
# Usage, from a clone (needs valgrind: apt-get install valgrind):
#   Benchmarks/instructions.sh                 the release build in .build/release (builds it)
#   Benchmarks/instructions.sh DIR [DIR…]      builds copied elsewhere (context-host + lib*.so)
#   NOBUILD=1 Benchmarks/instructions.sh       use the release build as it is
#   ROWS=in-process Benchmarks/instructions.sh  one row only (default: "in-process worker")
#
# Each build is copied to a scratch folder and stripped of its DWARF (valgrind 3.19 cannot read
# the DWARF 5 that Swift 6.3 writes), then run twice under callgrind with rpcload sending 2,000 and
# 6,000 pipelined previews (16 in flight); the difference of the two totals over 4,000 is the cost
# of one preview, start-up and loading excluded (in the worker row, the worker's start too: each run
# starts it once). The worker row runs with `--sandbox off`: valgrind cannot run under the worker's
# seccomp filter, and the sandbox is set up once per start, not per call. Prints one line per build
# and row. Runs take ~1 min each.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
[[ -d /opt/swift/usr/bin ]] && export PATH=/opt/swift/usr/bin:$PATH
command -v valgrind > /dev/null || { echo "valgrind is not installed: apt-get install valgrind" >&2; exit 1; }

LOAD=$ROOT/.build/bench/rpcload
if [[ ! -x "$LOAD" ]]; then
    mkdir -p "$ROOT/.build/bench"
    gcc -O2 -Wall -Wextra -o "$LOAD" "$ROOT/Benchmarks/rpcload/rpcload.c" -lm
fi

BUILDS=("$@")
if [[ ${#BUILDS[@]} -eq 0 ]]; then
    if [[ "${NOBUILD:-0}" != 1 ]]; then
        swift build -c release --product context-host > /dev/null
        swift build -c release --product NoteProvider > /dev/null
    fi
    BUILDS=("$(swift build -c release --show-bin-path)")
fi

SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
# The worker row's manifests: Note alone, its preview timeout 30 s, as a worker started under
# valgrind takes seconds to answer its first previews.
RELAXED=$SCRATCH/manifests
mkdir -p "$RELAXED"
sed 's/preview: 500ms/preview: 30s/' "$ROOT/manifests/note.yaml" > "$RELAXED/note.yaml"

# Callgrind's total for n previews of one stripped build: the sum over every process of the run.
total() { # dir n row
    rm -f "$SCRATCH"/callgrind.*
    local isolation=(--isolation in-process) children=()
    local manifests=$ROOT/manifests
    if [[ $3 == worker ]]; then
        isolation=(--isolation process --sandbox off)
        children=(--trace-children=yes)
        manifests=$RELAXED
    fi
    "$LOAD" -m throughput -t "$ROOT/Benchmarks/requests/preview-note.jsonl" -p "$ROOT/Benchmarks/requests/preamble.jsonl" \
        -n "$2" -w 16 -W 10 -T 600 -- valgrind --tool=callgrind "${children[@]}" --callgrind-out-file="$SCRATCH/callgrind.%p" \
        "$1/context-host" --manifests "$manifests" --library-path "$1" "${isolation[@]}" --no-state \
        > "$SCRATCH/rpcload.txt" 2> /dev/null
    grep -q " errors=0 " "$SCRATCH/rpcload.txt" || { echo "rpcload reported errors: $(cat "$SCRATCH/rpcload.txt")" >&2; exit 1; }
    local sum=0 count out
    for out in "$SCRATCH"/callgrind.*; do
        [[ -s "$out" ]] || continue  # a child that execs at once leaves an empty file
        count=$(awk '/^totals:/ { print $2 }' "$out")
        [[ -n "$count" ]] || { echo "callgrind wrote no total in $out (a process did not exit cleanly?)" >&2; exit 1; }
        sum=$((sum + count))
    done
    echo "$sum"
}

for build in "${BUILDS[@]}"; do
    copy=$SCRATCH/build
    rm -rf "$copy" && mkdir -p "$copy"
    cp "$build/context-host" "$build"/lib*.so "$copy/"
    strip -g "$copy"/* 2> /dev/null || true
    for row in ${ROWS:-in-process worker}; do
        small=$(total "$copy" 2000 "$row")
        large=$(total "$copy" 6000 "$row")
        echo "$build: $(( (large - small) / 4000 )) instructions per items/preview (callgrind, $row)"
    done
done

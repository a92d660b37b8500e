#!/usr/bin/env bash
# Instructions per `items/preview` of the ~1 KB note, in-process, counted by valgrind's callgrind:
# a deterministic figure for comparing two builds on a machine whose speed changes by up to 2×
# within half an hour (Benchmarks/README.md, "Latest results"). Throughput still needs compare.sh; this tells whether
# a change made the host do less work.
#
# Usage, from a clone (needs valgrind: apt-get install valgrind):
#   Benchmarks/instructions.sh                 the release build in .build/release (builds it)
#   Benchmarks/instructions.sh DIR [DIR…]      builds copied elsewhere (context-host + lib*.so)
#   NOBUILD=1 Benchmarks/instructions.sh       use the release build as it is
#
# Each build is copied to a scratch folder and stripped of its DWARF (valgrind 3.19 cannot read
# the DWARF 5 that Swift 6.3 writes), then run twice under callgrind with rpcload sending 2,000 and
# 6,000 pipelined previews (16 in flight); the difference of the two totals over 4,000 is the cost
# of one preview, start-up and loading excluded. Prints one line per build. Runs take ~1 min each.
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

# Callgrind's total for n previews of one stripped build.
total() { # dir n
    local out=$SCRATCH/callgrind.$2.out
    "$LOAD" -m throughput -t "$ROOT/Benchmarks/requests/preview-note.jsonl" -p "$ROOT/Benchmarks/requests/preamble.jsonl" \
        -n "$2" -w 16 -W 10 -T 600 -- valgrind --tool=callgrind --callgrind-out-file="$out" \
        "$1/context-host" --manifests "$ROOT/manifests" --library-path "$1" --isolation in-process --no-state \
        > "$SCRATCH/rpcload.txt" 2> /dev/null
    grep -q " errors=0 " "$SCRATCH/rpcload.txt" || { echo "rpcload reported errors: $(cat "$SCRATCH/rpcload.txt")" >&2; exit 1; }
    awk '/^totals:/ { print $2 }' "$out"
}

for build in "${BUILDS[@]}"; do
    copy=$SCRATCH/build
    rm -rf "$copy" && mkdir -p "$copy"
    cp "$build/context-host" "$build"/lib*.so "$copy/"
    strip -g "$copy"/* 2> /dev/null || true
    small=$(total "$copy" 2000)
    large=$(total "$copy" 6000)
    echo "$build: $(( (large - small) / 4000 )) instructions per items/preview (callgrind, in-process)"
done

#!/usr/bin/env bash
# Instructions per `composer/list {composerId}` of 100 notes (~175 KB answer), counted by valgrind's
# callgrind over every thread of the host: the listing's counterpart of instructions.sh, for
# telling whether a change made a listing do less work on a machine whose speed swings (the
# latency itself needs composer-bench or compare.sh).
#
# Usage, from a clone (needs valgrind: apt-get install valgrind):
#   Benchmarks/listing-instructions.sh              the release build in .build/release (builds it)
#   Benchmarks/listing-instructions.sh DIR [DIR…]   builds copied elsewhere (context-host,
#                                                   composer-bench and lib*.so in each)
#   NOBUILD=1 Benchmarks/listing-instructions.sh    use the release build as it is
#
# Each build is copied to a scratch folder, stripped of its DWARF (valgrind 3.19 cannot read the
# DWARF 5 that Swift 6.3 writes), and composer-bench runs the host under callgrind twice (5
# composers of 100 notes, 100 and 300 listings); the difference of the totals over 200 is the cost
# of one listing, start-up and attaching excluded. Prints one line per build; ~1 min each. Work
# that runs by the clock (timers, the output's late flush) is counted too, and runs longer under
# callgrind: expect differences of ~1–2% between invocations of the same build.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -d /opt/swift/usr/bin ]] && export PATH=/opt/swift/usr/bin:$PATH
command -v valgrind > /dev/null || { echo "valgrind is not installed: apt-get install valgrind" >&2; exit 1; }

BUILDS=("$@")
if [[ ${#BUILDS[@]} -eq 0 ]]; then
    if [[ "${NOBUILD:-0}" != 1 ]]; then
        for product in context-host NoteProvider composer-bench; do swift build -c release --product "$product" > /dev/null; done
    fi
    BUILDS=("$(swift build -c release --show-bin-path)")
fi

SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT

for build in "${BUILDS[@]}"; do
    for file in context-host composer-bench libNoteProvider.so; do
        [[ -f "$build/$file" ]] || { echo "$build has no $file" >&2; exit 1; }
    done
    rm -rf "$SCRATCH"/*
    cp "$build/context-host" "$SCRATCH/context-host.real"
    cp "$build/composer-bench" "$build"/lib*.so "$SCRATCH/"
    strip -g "$SCRATCH/context-host.real" "$SCRATCH"/lib*.so 2> /dev/null || true
    # composer-bench starts the `context-host` beside it: a wrapper that runs the real one under callgrind.
    cat > "$SCRATCH/context-host" <<WRAP
#!/usr/bin/env bash
exec valgrind --tool=callgrind --callgrind-out-file="$SCRATCH/cg-\$\$.out" "$SCRATCH/context-host.real" "\$@"
WRAP
    chmod +x "$SCRATCH/context-host"
    totals=()
    for lists in 100 300; do
        rm -f "$SCRATCH"/cg-*.out
        "$SCRATCH/composer-bench" --composers 5 --items 100 --lists "$lists" --summaries 0 --settle 0 > "$SCRATCH/bench.log" 2>&1 \
            || { cat "$SCRATCH/bench.log" >&2; exit 1; }
        total=0
        for out in "$SCRATCH"/cg-*.out; do
            # (A child the host forks and that execs at once, a worker or a probe, leaves an empty file.)
            [[ -s "$out" ]] || continue
            count=$(awk '/^totals:/ { print $2 }' "$out")
            [[ -n "$count" ]] || { echo "callgrind wrote no total in $out (the host did not exit cleanly?)" >&2; exit 1; }
            total=$((total + count))
        done
        [[ $total -gt 0 ]] || { echo "no callgrind output for $build" >&2; exit 1; }
        totals+=("$total")
    done
    awk -v a="${totals[0]}" -v b="${totals[1]}" -v build="$build" \
        'BEGIN { printf "%s: %.0f instructions per composer/list of 100 notes\n", build, (b - a) / 200 }'
done

#!/usr/bin/env bash
# Builds the libFuzzer targets and runs each for SECONDS (default 600: 10 minutes), one after the other.
#
#   Fuzz/run.sh [SECONDS]            every target
#   TARGETS=manifest-fuzzer Fuzz/run.sh 60
#
# Limits (the issue's): an input that takes over 1 s (FUZZ_TIMEOUT) or 512 MB (FUZZ_RSS_MB) fails.
# Targets are built with -sanitize=fuzzer -DFUZZING into .build-fuzz (never the normal .build).
# Each run starts from the committed seeds in Fuzz/corpus/<name>/ plus the inputs found by earlier
# runs in .build-fuzz/corpus/<name>/ (new inputs go there). A crash leaves its input in
# .build-fuzz/crashes/<name>/ (replay it with the normal build: .build/debug/<target> FILE) and
# makes the script exit 1. Builds take the shared build lock (BUILD_LOCK, once for all of them);
# fuzzing runs under nice -n 10 without it, one
# target at a time (a second lock keeps concurrent invocations from running fuzzers side by side).
# LOG_DIR=Fuzz/logs/<date> keeps each target's libFuzzer log (less its NEW/REDUCE lines) and its
# summary line there (commit them with the results). .ci/run runs every target for a few seconds (CI_FUZZ_SECONDS).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
targets=${TARGETS:-"framing-fuzzer manifest-fuzzer calendar-fuzzer caldav-xml-fuzzer health-export-fuzzer health-csv-fuzzer price-csv-fuzzer gazetteer-fuzzer coordinate-fuzzer sdk-json-fuzzer ctxui-fuzzer elf-fuzzer signature-fuzzer bundle-fuzzer protocol-fuzzer"}
build_lock=${BUILD_LOCK:-/tmp/heavy.lock}
fuzz_lock=${FUZZ_LOCK:-/tmp/ctxhost-fuzz.lock}
flags=(-c release --scratch-path .build-fuzz -Xswiftc -sanitize=fuzzer -Xswiftc -DFUZZING)

mkdir -p .build-fuzz/logs
# The build lock is taken once for all the builds (not once per target), so a busy shared lock
# costs one wait, not one per target; it is released before any fuzzing starts.
exec 9<>"$build_lock"
flock 9
for target in $targets; do
  echo "== building $target" >&2
  nice -n 10 swift build "${flags[@]}" --product "$target" > ".build-fuzz/logs/$target.build.log" 2>&1 \
    || { tail -30 ".build-fuzz/logs/$target.build.log" >&2; exit 2; }
done
exec 9>&-
bin=$(swift build "${flags[@]}" --show-bin-path)
status=0
for target in $targets; do
  name=${target%-fuzzer}
  mkdir -p ".build-fuzz/corpus/$name" ".build-fuzz/crashes/$name"
  log=".build-fuzz/logs/$name.log"
  case $name in framing|bundle) max_len=8192 ;; calendar|caldav-xml) max_len=16384 ;; elf) max_len=8192 ;; *) max_len=4096 ;; esac
  # Real files seed some targets beside their committed seeds (read, never written to).
  seeds=()
  case $name in calendar) seeds=(data/calendar/samples data/calendar/corpus) ;; esac
  echo "== fuzzing $target for $seconds s (log: $log)" >&2
  set +e
  # SWIFT_BACKTRACE=enable=no: let libFuzzer's own handler save the crashing input.
  SWIFT_BACKTRACE=enable=no flock "$fuzz_lock" nice -n 10 "$bin/$target" \
    -max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-1}" -rss_limit_mb="${FUZZ_RSS_MB:-512}" -max_len="$max_len" \
    -print_final_stats=1 -artifact_prefix=".build-fuzz/crashes/$name/" \
    ".build-fuzz/corpus/$name" "Fuzz/corpus/$name" "${seeds[@]}" > "$log" 2>&1
  code=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(echo "$last" | grep -o 'cov: [0-9]*' | grep -o '[0-9]*' || true)
  ft=$(echo "$last" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*' || true)
  corp=$(echo "$last" | grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' | cut -d' ' -f2 || true)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  crashes=$(ls ".build-fuzz/crashes/$name" | wc -l)
  summary="$target: seconds=$seconds exit=$code execs=${execs:-?} execs_per_s=${rate:-?} cov=${cov:-?} ft=${ft:-?} corpus=${corp:-?} artifacts=$crashes"
  echo "$summary"
  if [ -n "${LOG_DIR:-}" ]; then
    mkdir -p "$LOG_DIR"
    # Without libFuzzer's NEW/REDUCE lines (one per corpus change: megabytes), which the corpus
    # in .build-fuzz/corpus records anyway; everything else (seed, pulses, stats) is kept.
    grep -vE '^#[0-9]+[[:space:]]+(NEW|REDUCE) ' "$log" > "$LOG_DIR/$name.log" || true
    echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $(git rev-parse --short HEAD 2>/dev/null || echo '?') $summary" >> "$LOG_DIR/summary.txt"
  fi
  if [ "$code" != 0 ]; then
    status=1
    grep -E 'ERROR|Fatal error|SUMMARY|Test unit written' "$log" | head -10 >&2
  fi
done
exit $status

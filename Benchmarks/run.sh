#!/usr/bin/env bash
# Measures the host over stdio with the rpcload driver: start-up, and ping / items/preview (Note,
# in-process) latency and pipelined throughput. Run from anywhere: Benchmarks/run.sh
# Environment: RUNS (default 3: each cell is the median of RUNS), QUICK=1 for a fast smoke run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
# Only what the runs need: the host and its worker, the bundled providers it loads, the discovery benchmark.
for product in context-host NoteProvider LocationProvider CalendarProvider StockQuoteProvider HealthMetricProvider discovery-bench; do
  swift build -c release --product "$product" >&2
done
if grep -q DeviceInfoProvider Package.swift; then swift build -c release --product DeviceInfoProvider >&2; fi
bin=$(swift build -c release --show-bin-path)
mkdir -p .build/bench
gcc -O2 -Wall -Wextra -o .build/bench/rpcload Benchmarks/rpcload/rpcload.c -lm
load=.build/bench/rpcload
req=Benchmarks/requests
host=("$bin/context-host" --manifests "$root/manifests")
runs=${RUNS:-3}
if [ "${QUICK:-0}" = 1 ]; then lat_n=2000; thr_n=20000; spawns=5; else lat_n=20000; thr_n=200000; spawns=20; fi

# Prints the median of a key over RUNS runs of one rpcload command.
median() {
  local key=$1; shift
  for _ in $(seq "$runs"); do
    "$load" "$@" | tr ' ' '\n' | grep "^$key=" | cut -d= -f2
  done | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

echo "# context-host benchmarks ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, medians of $runs runs)"
echo
echo "| workload | mode | n | p50 µs | p99 µs | req/s |"
echo "|---|---|---:|---:|---:|---:|"
for tmpl in ping preview-note; do
  args=(-t "$req/$tmpl.jsonl" -p "$req/preamble.jsonl")
  p50=$(median p50_us -m latency "${args[@]}" -n "$lat_n" -W 1000 -- "${host[@]}")
  p99=$(median p99_us -m latency "${args[@]}" -n "$lat_n" -W 1000 -- "${host[@]}")
  echo "| $tmpl | latency (1 in flight) | $lat_n | $p50 | $p99 | |"
  rps=$(median rps -m throughput "${args[@]}" -n "$thr_n" -w 64 -W 2000 -- "${host[@]}")
  tp50=$(median p50_us -m throughput "${args[@]}" -n "$thr_n" -w 64 -W 2000 -- "${host[@]}")
  echo "| $tmpl | throughput (64 in flight) | $thr_n | $tp50 | | $rps |"
done
startup_us=$(median p50_us -m startup -t "$req/ping.jsonl" -p "$req/preamble.jsonl" -r "$spawns" -- "${host[@]}")
echo
echo "Start-up, spawn → initialize reply (loads the bundled providers): median $(awk -v u="$startup_us" 'BEGIN {printf "%.2f", u / 1000}') ms over $spawns spawns."
echo
"$bin/discovery-bench" 1000 15

#!/usr/bin/env bash
# Side-by-side benchmark (project issue 9; budgets: Benchmarks/README.md): context-host, with its providers in-process
# and in worker processes, against the team bench kit's peer servers (Benchmarks/peers/), in ONE
# run, printed as one set of tables with the budgets checked.
#
# Usage, from a clone (the command in Benchmarks/README.md):
#   Benchmarks/compare.sh              full run, ~4 min on 2 cores after the builds; writes Benchmarks/results/compare.md
#   QUICK=1 Benchmarks/compare.sh      smoke run, ~1 min; the tables go to the raw folder only
# On a machine shared with other builds, hold the build lock around it (it takes no lock itself):
#   flock /tmp/ctxhost-build.lock Benchmarks/compare.sh
#
# What runs, for every row, interleaved (rep 1 of every row, then rep 2, ...; each cell is the
# median over the reps): closed-loop latency and pipelined throughput of `ping` and of the row's
# "call", then start-up (spawn -> initialize reply; for the host also spawn -> `providers/list`
# answered with every provider loaded, "ready"). The host's call is `items/preview` of a ~1 KB
# note (Benchmarks/requests/); the peers' call is the kit's `tools/call` lookup with a ~1 KB result
# (Benchmarks/peers/requests/). Throughput runs wrap the server in treerun (Benchmarks/compare/),
# which reaps and measures the host's worker processes too. On a VM an idle vCPU sleeps and takes
# tens of µs to wake, which dominates closed-loop latency; so the AWAKE_ROWS also run closed-loop
# `ping` once more with a nice-19 busy loop keeping the vCPUs awake (it yields to any other task).
# Then the manifest discovery benchmark and the composer benchmark (composer-bench: memory held by
# 100,000 attached notes and `composer/list` latency).
#
# Environment [defaults]:
#   REPS [3]  LAT_N [20000]  THR_N [200000]  THR_W [64]  STARTUP_RUNS [20]
#   LAT_WARMUP [1000]  THR_WARMUP [2000]
#   PEERS  [limit python swift-foundation mcp-swift]; also mcp-swift-blocking; "" = the host only
#   HOSTS  [in-process worker worker-nosandbox defaults]  (worker = sandboxed, the default)
#   SLOW_PEERS [mcp-swift mcp-swift-blocking]  SLOW_LAT_N [1000]  SLOW_THR_N [20000]
#          (the MCP SDK peer needs ~10 ms per idle request; see Benchmarks/peers/README.md)
#   QUICK=1      REPS=1, a tenth of every N, 5 spawns (each still overridable)
#   NOBUILD=1    use the binaries already built
#   DISCOVERY=0  skip the manifest discovery benchmark
#   COMPOSER=0   skip the composer benchmark (100,000 notes in 1,000 composers; COMPOSER_LISTS [3000])
#   AWAKE=0      skip the extra closed-loop ping run with the vCPUs kept awake (see below)
#   AWAKE_ROWS [host-in-process host-worker limit]
#   EXTRAS=0     skip the lazy-worker and package benchmarks that follow the tables
#   EMBED=0      skip the embedding API rows (embed-bench: InProcessHost and ContextHostClient)
#   OUT          where the tables are written [Benchmarks/results/compare.md; QUICK: the raw folder]
#   BASELINE     another build's release folder (context-host + lib*Provider.so, e.g. a worktree of
#                an older commit): adds the row `host-baseline`, that build in-process, interleaved
#                with the others, and a table of both builds' ratios to the peers. BASELINE_MANIFESTS
#                [$BASELINE/../../manifests: the worktree's own] and BASELINE_LABEL [its git commit].
#                The way to show a change keeps its ratios: one run, not two runs minutes apart.
# Raw key=value lines, server stderr and build logs: Benchmarks/results/raw/compare-<UTC>/ (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BENCH_DIR=$ROOT/Benchmarks
[[ -d /opt/swift/usr/bin ]] && export PATH=/opt/swift/usr/bin:$PATH

if [[ "${QUICK:-0}" == 1 ]]; then
    REPS=${REPS:-1}; LAT_N=${LAT_N:-2000}; THR_N=${THR_N:-20000}; STARTUP_RUNS=${STARTUP_RUNS:-5}
    SLOW_LAT_N=${SLOW_LAT_N:-200}; SLOW_THR_N=${SLOW_THR_N:-2000}
fi
REPS=${REPS:-3}
LAT_N=${LAT_N:-20000}
THR_N=${THR_N:-200000}
THR_W=${THR_W:-64}
STARTUP_RUNS=${STARTUP_RUNS:-20}
LAT_WARMUP=${LAT_WARMUP:-1000}
THR_WARMUP=${THR_WARMUP:-2000}
SLOW_LAT_N=${SLOW_LAT_N:-1000}
SLOW_THR_N=${SLOW_THR_N:-20000}
SLOW_PEERS=${SLOW_PEERS:-"mcp-swift mcp-swift-blocking"}
PEERS=${PEERS-"limit python swift-foundation mcp-swift"}
HOSTS=${HOSTS-"in-process worker worker-nosandbox defaults"}
AWAKE_ROWS=${AWAKE_ROWS-"host-in-process host-worker limit"}
[[ "${AWAKE:-1}" == 0 ]] && AWAKE_ROWS=""

STAMP=$(date -u +%Y%m%d-%H%M%S)
RAW=$BENCH_DIR/results/raw/compare-$STAMP
mkdir -p "$RAW"
if [[ -z "${OUT:-}" ]]; then
    if [[ "${QUICK:-0}" == 1 ]]; then OUT=$RAW/compare.md; else OUT=$BENCH_DIR/results/compare.md; fi
fi
BIN_TOOLS=$ROOT/.build/bench          # rpcload, limit, treerun
PEER_BUILD=$ROOT/.build/peers         # scratch folders of the two Swift peer packages

# Runs a build step, its output to a log; on failure prints the log's tail and returns non-zero.
build_step() { # name command...
    local name=$1; shift
    if "$@" > "$RAW/build-$name.log" 2>&1; then return 0; fi
    echo "build of $name failed ($RAW/build-$name.log):" >&2
    tail -n 20 "$RAW/build-$name.log" >&2
    return 1
}

# The bundled providers are the libraries the shipped manifests name: libXProvider.so -> product XProvider.
PROVIDER_PRODUCTS=$(sed -n 's/^library: *lib\(.*\)\.so *$/\1/p' "$ROOT"/manifests/*.yaml | sort -u)
if [[ -z "${NOBUILD:-}" ]]; then
    echo "== build (release; logs in $RAW)" >&2
    for product in context-host $PROVIDER_PRODUCTS discovery-bench composer-bench embed-bench; do
        build_step "$product" swift build -c release --product "$product" || exit 1
    done
    mkdir -p "$BIN_TOOLS"
    build_step rpcload gcc -O2 -Wall -Wextra -o "$BIN_TOOLS/rpcload" "$BENCH_DIR/rpcload/rpcload.c" -lm || exit 1
    build_step treerun gcc -O2 -Wall -Wextra -o "$BIN_TOOLS/treerun" "$BENCH_DIR/compare/treerun.c" || exit 1
    if [[ -n "$PEERS" ]]; then
        build_step limit gcc -O2 -Wall -Wextra -o "$BIN_TOOLS/limit" "$BENCH_DIR/peers/limit/limit.c" || exit 1
    fi
    for pkg in swift-foundation mcp-swift; do
        [[ " $PEERS " == *" $pkg"* ]] || continue
        if ! build_step "$pkg" swift build -c release --package-path "$BENCH_DIR/peers/$pkg" \
                --scratch-path "$PEER_BUILD/$pkg"; then
            echo "$pkg: build failed, skipping the $pkg peer(s)" >&2
            PEERS=$(echo " $PEERS " | sed "s/ $pkg-blocking / /; s/ $pkg / /")
        fi
    done
fi
BIN=$(swift build -c release --show-bin-path)
LOAD=$BIN_TOOLS/rpcload
for tool in "$LOAD" "$BIN_TOOLS/treerun" "$BIN/context-host"; do
    [[ -x "$tool" ]] || { echo "missing $tool: run without NOBUILD=1" >&2; exit 1; }
done

# the real interpreter, not the pyenv shim (the shim adds ~100 ms per spawn)
PY=$(python3 -c 'import sys; print(sys.executable)')

# Rows: id -> command, preamble, ping template, call template, display name.
declare -A CMD PRE PING CALL NAME
HOST_REQ=$BENCH_DIR/requests
PEER_REQ=$BENCH_DIR/peers/requests
add_row() { # id "display name" preamble ping call command...
    local id=$1; NAME[$id]=$2; PRE[$id]=$3; PING[$id]=$4; CALL[$id]=$5; shift 5
    CMD[$id]=$(printf '%q ' "$@")     # shell-quoted; server_command turns it back into words
    ORDER+=("$id")
}
ORDER=()
for mode in $HOSTS; do
    case $mode in
        in-process) add_row host-in-process "context-host (in-process)" "$HOST_REQ/preamble.jsonl" "$HOST_REQ/ping.jsonl" \
                        "$HOST_REQ/preview-note.jsonl" "$BIN/context-host" --manifests "$ROOT/manifests" --isolation in-process --no-state ;;
        # Workers are sandboxed by default (--sandbox best-effort; every layer on this kernel, see
        # docs/security.md §8); the no-sandbox row is the same host with --sandbox off, in the same run.
        worker)     add_row host-worker "context-host (worker, sandboxed)" "$HOST_REQ/preamble.jsonl" "$HOST_REQ/ping.jsonl" \
                        "$HOST_REQ/preview-note.jsonl" "$BIN/context-host" --manifests "$ROOT/manifests" --isolation process --sandbox best-effort --no-state ;;
        worker-nosandbox) add_row host-worker-nosandbox "context-host (worker, no sandbox)" "$HOST_REQ/preamble.jsonl" "$HOST_REQ/ping.jsonl" \
                        "$HOST_REQ/preview-note.jsonl" "$BIN/context-host" --manifests "$ROOT/manifests" --isolation process --sandbox off --no-state ;;
        # Each manifest's own choice: Note and Device Info in-process, the four providers that
        # read users' files in workers (docs/security.md, "Default isolation").
        defaults)   add_row host-defaults "context-host (bundled defaults)" "$HOST_REQ/preamble.jsonl" "$HOST_REQ/ping.jsonl" \
                        "$HOST_REQ/preview-note.jsonl" "$BIN/context-host" --manifests "$ROOT/manifests" --isolation manifest --no-state ;;
        *) echo "unknown host mode '$mode' in HOSTS (use in-process, worker, worker-nosandbox, defaults)" >&2; exit 2 ;;
    esac
done
if [[ -n "${BASELINE:-}" ]]; then
    [[ -x "$BASELINE/context-host" ]] || {
        echo "BASELINE=$BASELINE holds no context-host: give another build's release folder (e.g. ../old/.build/release after 'swift build -c release' there)" >&2
        exit 2
    }
    BASELINE=$(cd "$BASELINE" && pwd)
    BASELINE_MANIFESTS=${BASELINE_MANIFESTS:-$BASELINE/../../manifests}
    [[ -d "$BASELINE_MANIFESTS" ]] || {
        echo "BASELINE_MANIFESTS=$BASELINE_MANIFESTS is not a folder: set it to the baseline's manifests (an older host may reject this tree's)" >&2
        exit 2
    }
    BASELINE_MANIFESTS=$(cd "$BASELINE_MANIFESTS" && pwd)
    BASELINE_LABEL=${BASELINE_LABEL:-$(git -C "$BASELINE" rev-parse --short HEAD 2>/dev/null || echo "$BASELINE")}
    add_row host-baseline "context-host (in-process, baseline $BASELINE_LABEL)" "$HOST_REQ/preamble.jsonl" "$HOST_REQ/ping.jsonl" \
        "$HOST_REQ/preview-note.jsonl" "$BASELINE/context-host" --manifests "$BASELINE_MANIFESTS" --isolation in-process --no-state
fi
for peer in $PEERS; do
    case $peer in
        limit)              command=("$BIN_TOOLS/limit") ;;
        python)             command=("$PY" "$BENCH_DIR/peers/python/server.py") ;;
        swift-foundation)   command=("$PEER_BUILD/swift-foundation/release/foundation-peer") ;;
        mcp-swift)          command=("$PEER_BUILD/mcp-swift/release/mcp-peer") ;;
        mcp-swift-blocking) command=("$PEER_BUILD/mcp-swift/release/mcp-peer" --blocking-transport) ;;
        *) echo "unknown peer '$peer' in PEERS (use limit, python, swift-foundation, mcp-swift, mcp-swift-blocking)" >&2; exit 2 ;;
    esac
    [[ -x "${command[0]}" ]] || { echo "missing ${command[0]}: run without NOBUILD=1" >&2; exit 1; }
    add_row "$peer" "$peer" "$PEER_REQ/mcp-preamble.jsonl" "$PEER_REQ/ping.jsonl" "$PEER_REQ/call.jsonl" "${command[@]}"
done
[[ ${#ORDER[@]} -gt 0 ]] || { echo "nothing to run: HOSTS and PEERS are both empty" >&2; exit 2; }

SUM=$RAW/summary.txt
: > "$SUM"
is_slow() { [[ " $SLOW_PEERS " == *" $1 "* ]]; }
# Sets the array SERVER to row $1's command.
server_command() { eval "SERVER=(${CMD[$1]})"; }

# One rpcload run; appends its summary line (plus treerun's, for throughput) to $SUM.
# kind "idle" is one ping under treerun: the server's start-up + shutdown CPU, which the report
# subtracts from the throughput runs' CPU.
run() { # id rep mode kind(ping|call|idle) extra-rpcload-args...
    local id=$1 rep=$2 mode=$3 kind=$4; shift 4
    local tmpl line rc=0 wrap=() tree="" treefile=""
    if [[ $kind == call ]]; then tmpl=${CALL[$id]}; else tmpl=${PING[$id]}; fi
    if [[ $mode == throughput || $kind == idle ]]; then
        treefile=$RAW/$id-$kind-$mode-$rep.tree
        rm -f "$treefile"
        wrap=("$BIN_TOOLS/treerun" -o "$treefile" --)
    fi
    server_command "$id"
    # The machine's CPU steal during this run (time the hypervisor gave the vCPUs to others).
    local a b
    read -r -a a < /proc/stat
    line=$("$LOAD" -m "$mode" -t "$tmpl" -p "${PRE[$id]}" -l "$id" -E "$RAW/$id.stderr" "$@" \
        -- "${wrap[@]}" "${SERVER[@]}") || rc=$?
    read -r -a b < /proc/stat
    local steal
    steal=$(awk -v st=$(( b[8] - a[8] )) -v t=$(( b[1]+b[2]+b[3]+b[4]+b[5]+b[6]+b[7]+b[8] - a[1]-a[2]-a[3]-a[4]-a[5]-a[6]-a[7]-a[8] )) \
        'BEGIN { printf "%.1f", (t > 0 ? 100 * st / t : 0) }')  # (parenthesized: a bare > would redirect)
    [[ -n "$treefile" && -f "$treefile" ]] && tree=$(cat "$treefile")
    echo "peer=$id kind=$kind rep=$rep rc=$rc steal_pct=$steal $tree $line" >> "$SUM"
    echo "  $id rep=$rep $mode $kind rc=$rc: $(echo "$line" | grep -oE '(^| )(rps|p50_us|p99_us|ready_p50_us|errors)=[^ ]*' | tr '\n' ' ')" >&2
}

# One request of each template, to record the sizes in the notes (and catch a template the server rejects).
echo "== sizes" >&2
for id in "${ORDER[@]}"; do
    for kind in ping call; do
        if [[ $kind == ping ]]; then tmpl=${PING[$id]}; else tmpl=${CALL[$id]}; fi
        server_command "$id"
        probe=$("$PY" "$BENCH_DIR/compare/probe_sizes.py" "$kind" "$tmpl" "${PRE[$id]}" -- "${SERVER[@]}" 2>> "$RAW/$id.stderr") || true
        echo "peer=$id $probe" >> "$SUM"
        echo "  $id $probe" >&2
    done
done

echo "== run: rows=${ORDER[*]} reps=$REPS raw=$RAW" >&2
# Sets variable $1 to the CPU seconds used by this script's reaped children (the driver and the
# servers). `times` must run in this shell: in a $(...) subshell it would report the subshell's own.
children_cpu_s() {
    times > "$RAW/times.txt"
    printf -v "$1" '%s' "$(awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%.2f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$RAW/times.txt")"
}
read -r _ u0 n0 s0 i0 w0 q0 sq0 st0 _ < /proc/stat
children_cpu_s C0
T_START=$(date +%s.%N)
for rep in $(seq 1 "$REPS"); do
    for id in "${ORDER[@]}"; do
        ln=$LAT_N; tn=$THR_N; lw=$LAT_WARMUP; tw=$THR_WARMUP
        if is_slow "$id"; then ln=$SLOW_LAT_N; tn=$SLOW_THR_N; lw=$((LAT_WARMUP / 10)); tw=$((THR_WARMUP / 2)); fi
        for kind in ping call; do
            run "$id" "$rep" latency "$kind" -n "$ln" -W "$lw"
            run "$id" "$rep" throughput "$kind" -n "$tn" -w "$THR_W" -W "$tw" -T 30
        done
        # Host rows: also spawn -> `providers/list` answered with every provider loaded ("ready");
        # `initialize` answers before the providers finish loading in the background.
        ready=()
        [[ $id == host-* ]] && ready=(-f "$HOST_REQ/providers-list.jsonl")
        run "$id" "$rep" startup ping -r "$STARTUP_RUNS" "${ready[@]}"
        run "$id" "$rep" latency idle -n 1 -W 0
        if [[ " $AWAKE_ROWS " == *" $id "* ]]; then
            nice -n 19 sh -c 'while :; do :; done' &
            spinner=$!
            run "$id" "$rep" latency ping-awake -n "$ln" -W "$lw"
            kill "$spinner"; wait "$spinner" 2>/dev/null || true
        fi
    done
done
read -r _ u1 n1 s1 i1 w1 q1 sq1 st1 _ < /proc/stat
children_cpu_s C1
WALL=$(awk -v a="$T_START" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')

if [[ "${DISCOVERY:-1}" != 0 && -x "$BIN/discovery-bench" ]]; then
    echo "== discovery" >&2
    disc=$("$BIN/discovery-bench" 1000 15 2>&1) || true
    echo "$disc" | sed 's/^/  /' >&2
    cold=$(echo "$disc" | sed -n 's/^ *cold .*median \([0-9.]*\) ms.*/\1/p')
    cached=$(echo "$disc" | sed -n 's/^ *cached .*median \([0-9.]*\) ms.*/\1/p')
    echo "discovery_line=cold_${cold:-NA}_ms,_cached_${cached:-NA}_ms discovery_median_ms=${cold:-NA} discovery_cached_ms=${cached:-NA}" >> "$SUM"
fi

if [[ "${COMPOSER:-1}" != 0 && -x "$BIN/composer-bench" ]]; then
    echo "== composer" >&2
    lists=${COMPOSER_LISTS:-$([[ -n "${QUICK:-}" ]] && echo 500 || echo 3000)}
    comp=$("$BIN/composer-bench" --lists "$lists" --settle 0 2>&1) || true
    echo "$comp" | sed 's/^/  /' >&2
    held=$(echo "$comp" | sed -n 's/^holding every item: VmRSS \([0-9.]*\) MB.*/\1/p')
    peak=$(echo "$comp" | sed -n 's/^at the end: .*VmHWM \([0-9.]*\) MB.*/\1/p')
    one=$(echo "$comp" | sed -n 's/^composer\/list {composerId}.*p50 \([0-9.]*\) ms, p90 \([0-9.]*\) ms, p99 \([0-9.]*\) ms.*/\1_\2_\3/p')
    all=$(echo "$comp" | sed -n 's/^composer\/list (summaries.*p50 \([0-9.]*\) ms, p90 \([0-9.]*\) ms, p99 \([0-9.]*\) ms.*/\1_\2_\3/p')
    # The host's CPU per call (all threads): the line after each latency line.
    one_cpu=$(echo "$comp" | grep -A1 '^composer/list {composerId}' | sed -n 's/^ *host CPU per call: \([0-9.]*\) ms.*/\1/p' | head -1)
    all_cpu=$(echo "$comp" | grep -A1 '^composer/list (summaries' | sed -n 's/^ *host CPU per call: \([0-9.]*\) ms.*/\1/p' | head -1)
    # ... and call by call: p50_p90_p99 of one call's host CPU.
    one_cpu_spread=$(echo "$comp" | grep -A1 '^composer/list {composerId}' | sed -n 's/.*call by call p50 \([0-9.]*\), p90 \([0-9.]*\), p99 \([0-9.]*\) ms.*/\1_\2_\3/p' | head -1)
    all_cpu_spread=$(echo "$comp" | grep -A1 '^composer/list (summaries' | sed -n 's/.*call by call p50 \([0-9.]*\), p90 \([0-9.]*\), p99 \([0-9.]*\) ms.*/\1_\2_\3/p' | head -1)
    # ... and the slowest 1% of calls: the host's CPU in them, the machine probe in them and over all calls.
    slow_re='s/.*slowest 1% of calls.*host CPU median \([0-9.]*\) ms; machine probe median \([0-9.]*\) µs, against \([0-9.]*\) µs.*/\1_\2_\3/p'
    one_slowest=$(echo "$comp" | grep -A2 '^composer/list {composerId}' | sed -n "$slow_re" | head -1)
    all_slowest=$(echo "$comp" | grep -A2 '^composer/list (summaries' | sed -n "$slow_re" | head -1)
    echo "composer_line=1 composer_held_mb=${held:-NA} composer_peak_mb=${peak:-NA} composer_list_one_ms=${one:-NA} composer_list_all_ms=${all:-NA} composer_list_one_cpu_ms=${one_cpu:-NA} composer_list_all_cpu_ms=${all_cpu:-NA} composer_list_one_cpu_spread_ms=${one_cpu_spread:-NA} composer_list_all_cpu_spread_ms=${all_cpu_spread:-NA} composer_list_one_slowest=${one_slowest:-NA} composer_list_all_slowest=${all_slowest:-NA} composer_lists=$lists" >> "$SUM"
fi

TOT=$(( (u1+n1+s1+i1+w1+q1+sq1+st1) - (u0+n0+s0+i0+w0+q0+sq0+st0) ))
STEAL=$(awk -v a=$((st1 - st0)) -v t=$TOT 'BEGIN { printf "%.1f", t ? 100 * a / t : 0 }')
# Busy CPU of the whole machine during the loop minus what the driver and the servers used: the
# other load this run competed with (the /proc/stat counters are in USER_HZ, 100 per second).
BUSY=$(( (u1+n1+s1+q1+sq1) - (u0+n0+s0+q0+sq0) ))
OTHER=$(awk -v b=$BUSY -v t=$TOT -v c0="$C0" -v c1="$C1" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { o = b / hz - (c1 - c0); if (o < 0) o = 0; printf "%.0f", t ? 100 * o / (t / hz) : 0 }')
MACHINE="$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(free -g | awk '/Mem:/ {print $2}') GiB, Linux $(uname -r); load avg at end: $(cut -d' ' -f1-3 /proc/loadavg); CPU steal during the run: ${STEAL}%; CPU used by other processes during the run: ${OTHER}% of the machine; wall ${WALL} s (measurement loop)"
SETTINGS="REPS=$REPS LAT_N=$LAT_N THR_N=$THR_N THR_W=$THR_W STARTUP_RUNS=$STARTUP_RUNS SLOW_LAT_N=$SLOW_LAT_N SLOW_THR_N=$SLOW_THR_N${QUICK:+ QUICK=$QUICK}"
ROWS=()
for id in "${ORDER[@]}"; do ROWS+=("$id=${NAME[$id]}"); done
mkdir -p "$(dirname "$OUT")"
"$PY" "$BENCH_DIR/compare/report.py" "$SUM" "$MACHINE" "$SETTINGS" "${ROWS[@]}" | tee "$OUT"
echo "tables: $OUT; raw results: $RAW" >&2

# The embedding API (issue 26): `ping` and the same `items/preview` through InProcessHost (the host
# in the benchmark's process, typed Swift calls over the in-memory connection) and through
# ContextHostClient (typed calls to a spawned host over pipes); the stdio rows above are the
# baseline. Appended to the tables.
if [[ "${EMBED:-1}" != 0 && -x "$BIN/embed-bench" ]]; then
    echo "== embedding API" >&2
    if [[ -n "${QUICK:-}" ]]; then embed_args=(--n 2000 --reps 1); else embed_args=(--n $((LAT_N / 4)) --reps "$REPS"); fi
    embed=$("$BIN/embed-bench" "${embed_args[@]}" --window "$THR_W" 2>/dev/null | grep '^embed ') || true
    echo "$embed" | tee "$RAW/embed.txt" >&2
    {
        echo
        echo "Embedding API (issue 26), same run: typed Swift calls, \`ping\` and the same \`items/preview\` of the ~1 KB note; medians of ${embed_args[-1]} runs (\`embed-bench ${embed_args[*]} --window $THR_W\`). InProcessHost = the host inside the benchmark's process (Note in-process); ContextHostClient = a spawned \`context-host --isolation in-process\` over pipes. Baseline: the \`context-host (in-process)\` row above (rpcload, raw JSON over pipes)."
        echo
        echo "| row | ping p50 µs, closed loop | ping req/s, $THR_W in flight | preview p50 µs, closed loop | preview req/s, $THR_W callers | preview req/s, a task per request, $THR_W in flight |"
        echo "|---|---:|---:|---:|---:|---:|"
        echo "$embed" | while read -r line; do
            row=$(sed -n 's/.* row=\([^ ]*\).*/\1/p' <<< "$line")
            get() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<< "$line"; }
            label=$([[ "$row" == in-process ]] && echo InProcessHost || echo ContextHostClient)
            printf '| %s | %s | %.0f | %s | %.0f | %.0f |\n' "$label" "$(get ping_p50_us)" "$(get ping_rps)" "$(get preview_p50_us)" "$(get preview_rps)" "$(get preview_spawned_rps)"
        done
    } >> "$OUT"
fi

# The MCP bridge (issue 29): `tools/call` of device_info_make through `context-host mcp`, side by
# side with a FastMCP server and the MCP Swift SDK peer (MCP=0 skips it). Appended to the tables,
# and kept in results/mcp.md.
if [[ "${MCP:-1}" != 0 ]]; then
    echo "== MCP bridge" >&2
    if [[ -n "${QUICK:-}" ]]; then mcp_env=(N=2000 REPS=1 LAT_N=300); else mcp_env=(N=$((THR_N / 20)) REPS="$REPS" LAT_N=$((LAT_N / 20))); fi
    if mcp=$(env "${mcp_env[@]}" W="$THR_W" NOBUILD=1 BIN="$BIN" RPCLOAD="$LOAD" "$BENCH_DIR/mcp-bench.sh" 2> "$RAW/mcp.stderr"); then
        echo "$mcp" | tee "$BENCH_DIR/results/mcp.md" >> "$OUT"
        cat "$RAW/mcp.stderr" >&2
    else
        echo "mcp-bench.sh failed: $(tail -5 "$RAW/mcp.stderr")" >&2
    fi
fi

# Then, each side by side with its own baseline in one run (EXTRAS=0 skips them; not with QUICK):
# lazy workers, 300 providers lazy vs eager, from manifests and installed (issue 28,
# results/lazy.md), and installing a 10 MB bundle against the reference tools (issue 27,
# results/package.md).
if [[ "${EXTRAS:-1}" == 1 && "${QUICK:-0}" != 1 ]]; then
    BIN="$BIN" RPCLOAD="$LOAD" "$BENCH_DIR/lazy-bench.sh" 2>&1 | tee "$RAW/lazy-manifests.txt" >&2
    INSTALLED=1 BIN="$BIN" RPCLOAD="$LOAD" "$BENCH_DIR/lazy-bench.sh" 2>&1 | tee "$RAW/lazy-installed.txt" >&2
    NOBUILD=1 BIN="$BIN" "$BENCH_DIR/package-bench.sh" 2>&1 | tee "$RAW/package.txt" >&2
fi

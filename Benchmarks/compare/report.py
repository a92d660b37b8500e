#!/usr/bin/env python3
"""Turns the summary lines of Benchmarks/compare.sh into the comparison tables (Markdown).

    report.py SUMMARY MACHINE SETTINGS ID=DISPLAY_NAME...

SUMMARY has one line per rpcload run (`peer=ID kind=ping|call|idle rep=N rc=N [tree_*=...]`
followed by rpcload's own key=value output), one `peer=ID probe=...` line per size probe and an
optional `discovery_...` and `composer_...` line. Every cell is the median over the reps.
"""
import datetime
import statistics
import sys

# The budgets of Benchmarks/README.md (issue 9), checked against the host rows.
STARTUP_MS = 15.0
PING_P50_US = 8.0
PING_RPS = 200_000
PREVIEW_RPS = {"host-in-process": 100_000, "host-worker": 30_000, "host-defaults": 100_000}
DISCOVERY_MS = 100.0
DISCOVERY_CACHED_MS = 10.0
COMPOSER_MB = 200.0
COMPOSER_LIST_P99_MS = 1.0


def parse(path):
    rows = []
    for line in open(path, encoding="utf-8"):
        d = {}
        for token in line.split():
            if "=" in token:
                key, value = token.split("=", 1)
                d.setdefault(key, value)
        if d:
            rows.append(d)
    return rows


def fmt(x, digits=1):
    if x is None:
        return "n/a"
    if abs(x) >= 1000 and digits <= 1:
        return f"{x:,.0f}"
    return f"{x:.{digits}f}"


def main():
    summary, machine, settings = sys.argv[1:4]
    order, names = [], {}
    for arg in sys.argv[4:]:
        row_id, name = arg.split("=", 1)
        order.append(row_id)
        names[row_id] = name
    rows = parse(summary)
    runs = [r for r in rows if "mode" in r and "peer" in r]
    probes = {(r["peer"], r["probe"]): r for r in rows if "probe" in r}
    discovery = next((r for r in rows if "discovery_line" in r), None)
    composer = next((r for r in rows if "composer_line" in r), None)

    def sel(row_id, mode, kind=None):
        return [r for r in runs if r["peer"] == row_id and r["mode"] == mode and (kind is None or r["kind"] == kind)]

    def med(rs, key, scale=1.0):
        values = [float(r[key]) * scale for r in rs if r.get(key) not in (None, "NA", "")]
        return statistics.median(values) if values else None

    def ready_ms(row_id):
        """Spawn -> `providers/list` answered with every provider loaded (rpcload -f), host rows."""
        rs = [r for r in sel(row_id, "startup") if "ready_p50_us" in r]
        return med(rs, "ready_p50_us", 1e-3) if rs else None

    def idle_cpu_s(row_id):
        """CPU of an idle run of the row's server (spawn, preamble, one ping, exit), median over the reps."""
        return med(sel(row_id, "latency", "idle"), "tree_cpu_s") or 0.0

    def requests_sent(r):
        return int(r["n"]) + int(r["warmup"])

    def cpu_per_request(r):
        """Server CPU (µs) per request of a throughput run: treerun's CPU of the whole process tree
        (host + reaped workers) minus the idle run's (start-up and shutdown), over the requests sent."""
        seconds = float(r.get("tree_cpu_s", r["child_cpu_s"])) - idle_cpu_s(r["peer"])
        return max(seconds, 0.0) * 1e6 / requests_sent(r)

    def driver_per_request(r):
        return float(r["driver_cpu_s"]) * 1e6 / requests_sent(r)

    def med_of(rs, fn):
        values = [fn(r) for r in rs]
        return statistics.median(values) if values else None

    problems = []
    for r in runs:
        bad = r.get("rc") != "0" or r.get("errors", "0") != "0" or r.get("aborted", "no") != "no" \
            or (r.get("mode") != "startup" and r.get("child") != "exit:0") \
            or r.get("tree_orphans_killed", "0") != "0"
        if bad:
            problems.append(f"{names.get(r['peer'], r['peer'])} rep {r.get('rep')} {r.get('mode')} {r.get('kind')}: "
                            f"rc={r.get('rc')} errors={r.get('errors')} (bad_json={r.get('bad_json')} "
                            f"unknown_id={r.get('unknown_id')} rpc_error={r.get('rpc_error')} lost={r.get('lost')}) "
                            f"aborted={r.get('aborted')} child={r.get('child')} "
                            f"failed_runs={r.get('failed_runs', '-')} orphans_killed={r.get('tree_orphans_killed', '-')}")
    for (row_id, kind), p in probes.items():
        if p.get("status") != "ok":
            problems.append(f"{names.get(row_id, row_id)} {kind} size probe: {p.get('error', 'failed')}")

    out = []
    say = out.append
    now = datetime.datetime.now(datetime.timezone.utc)
    setting = dict(token.split("=", 1) for token in settings.split() if "=" in token)
    reps, window = setting.get("REPS", "?"), setting.get("THR_W", "?")
    say(f"Run {now:%Y-%m-%d %H:%M} UTC; machine: {machine}")
    say(f"Command: `Benchmarks/compare.sh` ({settings}). Medians of {reps} runs per cell; the runs are "
        "interleaved across rows (rep 1 of every row, then rep 2, ...).")
    say("")
    say("Rows: `context-host (in-process)` = `context-host --manifests manifests --isolation in-process --no-state` "
        "(all six bundled providers loaded into the host); `context-host (worker)` = the same with "
        "`--isolation process` (each provider in its own worker process). Peers: the team bench kit's servers "
        "(Benchmarks/peers/README.md); `limit` parses no JSON and shows the floor of the pipes, the framing and "
        "the driver.")
    say("Workloads: `ping` -> `{}` for every row. `call`: for the peers, the kit's `tools/call` lookup (355-byte "
        "request, ~1 KB result); **for context-host, `items/preview` of an attached ~1 KB note** (the Note "
        "provider's chip). Sizes are in the notes below.")
    say("")

    # Closed-loop latency
    say("Closed-loop latency (1 in flight), microseconds")
    say("")
    say("| row | n | ping p50 | ping p90 | ping p99 | ping max | call p50 | call p90 | call p99 | call max |")
    say("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row_id in order:
        a, b = sel(row_id, "latency", "ping"), sel(row_id, "latency", "call")
        n = a[0]["n"] if a else "?"
        cells = [fmt(med(x, k)) for x in (a, b) for k in ("p50_us", "p90_us", "p99_us", "max_us")]
        say(f"| {names[row_id]} | {n} | " + " | ".join(cells) + " |")
    say("")

    awake_rows = [row_id for row_id in order if sel(row_id, "latency", "ping-awake")]
    if awake_rows:
        say("Closed-loop `ping` with the vCPUs kept awake (a `nice -n 19` busy loop runs alongside; it yields to any "
            "other task), microseconds")
        say("")
        say("| row | n | ping p50 | ping p90 | ping p99 | ping max |")
        say("|---|---:|---:|---:|---:|---:|")
        for row_id in awake_rows:
            a = sel(row_id, "latency", "ping-awake")
            say(f"| {names[row_id]} | {a[0]['n']} | " + " | ".join(fmt(med(a, k)) for k in ("p50_us", "p90_us", "p99_us", "max_us")) + " |")
        say("")
        plain, awake = med(sel("limit", "latency", "ping"), "p50_us"), med(sel("limit", "latency", "ping-awake"), "p50_us")
        if plain is not None and awake is not None:
            verdict = (f"in this run that was {fmt(plain - awake)} µs of the `limit` row's {fmt(plain)} µs"
                       if plain > 2 * awake else "in this run the CPUs were busy enough that it hardly showed")
            say("On a VM an idle vCPU halts and takes tens of µs to wake up; in a closed loop each side idles while "
                f"the other works, so wake-up time adds to every plain closed-loop figure ({verdict}).")
        say("")

    # Throughput
    say(f"Pipelined throughput (window W={window}); latency under load in microseconds; "
        "server CPU = user+sys of the server's processes (host + workers for the worker row), less start-up, / requests")
    say("")
    say("| row | n | ping rps | ping p50 / p99 | call rps | call p50 / p99 | server CPU µs/req ping / call | driver CPU µs/req ping / call |")
    say("|---|---:|---:|---:|---:|---:|---:|---:|")
    for row_id in order:
        n, cells, cpu, drv = "?", [], [], []
        for kind in ("ping", "call"):
            x = sel(row_id, "throughput", kind)
            if x:
                n = x[0]["n"]
            cells.append(fmt(med(x, "rps")))
            cells.append(f"{fmt(med(x, 'p50_us'))} / {fmt(med(x, 'p99_us'))}")
            cpu.append(fmt(med_of(x, cpu_per_request), 2))
            drv.append(fmt(med_of(x, driver_per_request), 2))
        say(f"| {names[row_id]} | {n} | {cells[0]} | {cells[1]} | {cells[2]} | {cells[3]} | "
            f"{cpu[0]} / {cpu[1]} | {drv[0]} / {drv[1]} |")
    say("")

    # Against a baseline build (BASELINE=...), same run: the change's cost, as ratios to the peers.
    if "host-baseline" in order and "host-in-process" in order:
        peers = [p for p in ("python", "swift-foundation") if p in order]
        say(f"This build against the baseline build, in-process, same run (interleaved; medians of {reps}); "
            "× = the host's rate over the peer's (higher is better)")
        say("")
        say("| measure | this build | baseline | this ÷ baseline | " + " | ".join(f"this ÷ {p} / baseline ÷ {p}" for p in peers) + " |")
        say("|---|---:|---:|---:|" + "---:|" * len(peers))
        for label, kind in (("`ping` pipelined, req/s", "ping"), ("`items/preview` pipelined, req/s", "call")):
            this, base = med(sel("host-in-process", "throughput", kind), "rps"), med(sel("host-baseline", "throughput", kind), "rps")
            cells = []
            for p in peers:
                peer = med(sel(p, "throughput", kind), "rps")
                cells.append(f"{this / peer:.2f}× / {base / peer:.2f}×" if this and base and peer else "n/a")
            change = f"{this / base:.3f}" if this and base else "n/a"
            say(f"| {label} | {fmt(this)} | {fmt(base)} | {change} | " + " | ".join(cells) + " |")
        for label, kind in (("server CPU per `ping`, µs", "ping"), ("server CPU per `items/preview`, µs", "call")):
            this = med_of(sel("host-in-process", "throughput", kind), cpu_per_request)
            base = med_of(sel("host-baseline", "throughput", kind), cpu_per_request)
            change = f"{this / base:.3f}" if this and base else "n/a"
            say(f"| {label} (lower is better) | {fmt(this, 2)} | {fmt(base, 2)} | {change} | " + " | ".join("" for _ in peers) + " |")
        say("")

    # Start-up and memory
    startup_runs = None
    say("Start-up and memory")
    say("")
    say("| row | spawn -> initialize reply, ms (median) | min / max ms | ready ms: spawn -> `providers/list` with all loaded (median) | start-up + exit CPU ms | peak RSS MB, ping thr | peak RSS MB, call thr | processes | all processes' peak RSS MB, call thr |")
    say("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row_id in order:
        s = sel(row_id, "startup")
        if s:
            startup_runs = s[0].get("runs")
        rp = med(sel(row_id, "throughput", "ping"), "tree_max_rss_kb", 1 / 1024)
        rc = med(sel(row_id, "throughput", "call"), "tree_max_rss_kb", 1 / 1024)
        tree = med(sel(row_id, "throughput", "call"), "tree_peak_rss_kb", 1 / 1024)
        procs = med(sel(row_id, "throughput", "call"), "tree_processes")
        mn = min((float(r["min_us"]) for r in s), default=None)
        mx = max((float(r["max_us"]) for r in s), default=None)
        ready = ready_ms(row_id)
        say(f"| {names[row_id]} | {fmt(med(s, 'p50_us', 1e-3), 2)} | "
            f"{fmt(mn / 1000 if mn is not None else None, 2)} / {fmt(mx / 1000 if mx is not None else None, 2)} | "
            f"{fmt(ready, 2) if ready is not None else '—'} | "
            f"{fmt(med(sel(row_id, 'latency', 'idle'), 'tree_cpu_s', 1e3))} | {fmt(rp)} | {fmt(rc)} | {fmt(procs, 0)} | {fmt(tree)} |")
    say("")
    say(f"Start-up: {startup_runs or '?'} spawns per rep, the median of the per-rep medians; min / max over all spawns. "
        "Ready (host rows): the host answers `initialize` before its providers finish loading in the background; "
        "`providers/list`, sent as soon as `initialize` is answered, waits for every load, so its answer marks the "
        "host fully loaded. "
        "Start-up + exit CPU: user+sys of all the server's processes in an idle run (spawn, preamble, one `ping`, "
        "exit). Peak RSS: the largest single process (getrusage), during the throughput runs; the last column adds "
        "up the peak RSS of every process of the server (host + workers), sampled every 100 ms by treerun.")
    say("")

    # Budgets
    lim = "limit" in order

    def ratio(value, floor, higher_is_better):
        if value is None or floor is None or not lim or floor == 0 or value == 0:
            return "n/a"
        return f"{(floor / value) if higher_is_better else (value / floor):.1f}×"

    def bound_by(row_id, kind):
        """Measured CPU split of a throughput run: which side used the machine's cores."""
        x = sel(row_id, "throughput", kind)
        rps = med(x, "rps")
        server, driver = med_of(x, cpu_per_request), med_of(x, driver_per_request)
        if not rps or server is None or driver is None:
            return "n/a"
        text = (f"server {server * rps / 1e6:.2f} cores ({server:.2f} µs/req), driver {driver * rps / 1e6:.2f} cores "
                f"({driver:.2f} µs/req)")
        # The busiest single thread of the server (treerun samples each thread's CPU): at close
        # to 100% of a core it bounds the run whatever the other core does.
        shares = [float(r["tree_busiest_thread_cpu_s"]) / float(r["elapsed_s"]) for r in x
                  if r.get("tree_busiest_thread_cpu_s") not in (None, "", "NA") and float(r.get("elapsed_s", 0) or 0) > 0]
        if shares:
            names = sorted({r.get("tree_busiest_thread", "-") for r in x if r.get("tree_busiest_thread")})
            text += (f"; busiest thread ({', '.join(names)}) {100 * statistics.median(shares):.0f}% of a core over the "
                     f"run (start-up included)")
        # Time the hypervisor gave these vCPUs to other machines while the runs went on.
        steals = [float(r["steal_pct"]) for r in x if r.get("steal_pct") not in (None, "", "NA")]
        if steals:
            text += f"; CPU steal during these runs {min(steals):.0f}–{max(steals):.0f}% (median {statistics.median(steals):.0f}%)"
        return text

    def startup_ms(row_id):
        return med(sel(row_id, "startup"), "p50_us", 1e-3)

    def ping_p50(row_id):
        return med(sel(row_id, "latency", "ping"), "p50_us")

    def startup_context(row_id):
        parts = [f"start-up + exit CPU {fmt(idle_cpu_s(row_id) * 1e3)} ms"]
        if row_id.startswith("host-") and ready_ms(row_id) is not None:
            parts.append(f"providers load in the background after the answer: `providers/list` with all of them "
                         f"loaded after {fmt(ready_ms(row_id), 2)} ms"
                         + (" (six worker processes started side by side)" if row_id == "host-worker" else "")
                         + (" (four worker processes, for the providers that read users' files)" if row_id == "host-defaults" else ""))
        for peer, what in (("limit", "C, no runtime"), ("swift-foundation", "Swift runtime + Foundation, nothing loaded")):
            if peer in order:
                parts.append(f"{peer} ({what}) {fmt(startup_ms(peer), 2)} ms")
        return "; ".join(parts)

    def awake_p50(row_id):
        return med(sel(row_id, "latency", "ping-awake"), "p50_us")

    def latency_context():
        parts = [f"{peer} {fmt(ping_p50(peer))} µs" for peer in ("limit", "python", "swift-foundation") if peer in order]
        text = ("closed-loop floor of this machine, ping p50: " + ", ".join(parts)) if parts else "n/a"
        plain, awake = ping_p50("limit"), awake_p50("limit")
        if plain is not None and awake is not None:
            text += f"; `limit` with the vCPUs kept awake: {fmt(awake)} µs"
            if plain > 2 * awake:
                text += f", so {fmt(plain - awake)} µs of the floor is vCPU wake-up"
        return text

    limit_startup = med(sel("limit", "startup"), "p50_us", 1e-3)
    limit_ping_p50 = med(sel("limit", "latency", "ping"), "p50_us")
    limit_ping_rps = med(sel("limit", "throughput", "ping"), "rps")
    limit_call_rps = med(sel("limit", "throughput", "call"), "rps")
    budget_rows = []
    for row_id in ("host-in-process", "host-worker", "host-defaults"):
        if row_id not in order:
            continue
        name = names[row_id]
        v = med(sel(row_id, "startup"), "p50_us", 1e-3)
        budget_rows.append((f"start-up to `initialize` reply, six bundled providers", name, f"≤ {STARTUP_MS:g} ms",
                            f"{fmt(v, 2)} ms", v is not None and v <= STARTUP_MS,
                            f"{fmt(limit_startup, 2)} ms", ratio(v, limit_startup, False), startup_context(row_id)))
        v = med(sel(row_id, "latency", "ping"), "p50_us")
        budget_rows.append(("`ping` p50, closed loop", name, f"≤ {PING_P50_US:g} µs", f"{fmt(v)} µs",
                            v is not None and v <= PING_P50_US, f"{fmt(limit_ping_p50)} µs",
                            ratio(v, limit_ping_p50, False), latency_context()))
        v = awake_p50(row_id)
        if v is not None:
            budget_rows.append(("`ping` p50, closed loop, vCPUs kept awake", name, f"≤ {PING_P50_US:g} µs", f"{fmt(v)} µs",
                                v <= PING_P50_US, f"{fmt(awake_p50('limit'))} µs", ratio(v, awake_p50("limit"), False),
                                "pipes + driver (the `limit` figure) + the host's own work"))
            # The budget is worded as the host's overhead per request: what the host adds to
            # the floor of the pipes and the driver, which the `limit` row measures in the same run.
            limit_awake, plain = awake_p50("limit"), ping_p50(row_id)
            if limit_awake is not None:
                overhead = v - limit_awake
                context = (f"host {fmt(v)} µs − `limit` {fmt(limit_awake)} µs, both with the vCPUs kept awake: the host's "
                           "reading, framing, envelope and answer on top of the pipes and the driver")
                if plain is not None and limit_ping_p50 is not None:
                    context += (f"; without the busy loop host {fmt(plain)} µs and `limit` {fmt(limit_ping_p50)} µs, whose "
                                "difference is mostly how long each waited for a vCPU to wake")
                budget_rows.append(("`ping` host overhead p50 (host − `limit`)", name, f"≤ {PING_P50_US:g} µs",
                                    f"{fmt(overhead)} µs", overhead <= PING_P50_US, f"{fmt(limit_awake)} µs", "—", context))
        v = med(sel(row_id, "throughput", "ping"), "rps")
        budget_rows.append((f"`ping` pipelined, W={window}", name, f"≥ {PING_RPS:,}/s", f"{fmt(v)}/s",
                            v is not None and v >= PING_RPS, f"{fmt(limit_ping_rps)}/s",
                            ratio(v, limit_ping_rps, True), bound_by(row_id, "ping")))
        v = med(sel(row_id, "throughput", "call"), "rps")
        where = {"host-in-process": "in-process", "host-worker": "through a worker"}.get(row_id, "in-process, bundled defaults")
        budget_rows.append((f"`items/preview` of a note, {where}, W={window}", name, f"≥ {PREVIEW_RPS[row_id]:,}/s",
                            f"{fmt(v)}/s", v is not None and v >= PREVIEW_RPS[row_id], f"{fmt(limit_call_rps)}/s (1 KB call)",
                            ratio(v, limit_call_rps, True), bound_by(row_id, "call")))
    if discovery and discovery.get("discovery_median_ms", "NA") != "NA":
        v = float(discovery["discovery_median_ms"])
        budget_rows.append(("manifest discovery, 1,000 manifests, cold (`discovery-bench 1000 15`)", "—",
                            f"≤ {DISCOVERY_MS:g} ms", f"{fmt(v)} ms", v <= DISCOVERY_MS, "—", "—", "reading and parsing 1,000 YAML files"))
    if discovery and discovery.get("discovery_cached_ms", "NA") != "NA":
        v = float(discovery["discovery_cached_ms"])
        budget_rows.append(("manifest discovery, 1,000 manifests, registry cache", "—",
                            f"≤ {DISCOVERY_CACHED_MS:g} ms", f"{fmt(v)} ms", v <= DISCOVERY_CACHED_MS, "—", "—",
                            "listing the folders, one `fstatat` per file and decoding the cache file"))
    if composer and composer.get("composer_held_mb", "NA") != "NA":
        held, peak = float(composer["composer_held_mb"]), composer.get("composer_peak_mb", "NA")
        budget_rows.append(("100,000 notes in 1,000 composers held in memory (`composer-bench`)", "—",
                            f"≤ {COMPOSER_MB:g} MB", f"{fmt(held)} MB", held <= COMPOSER_MB, "—", "—",
                            f"host VmRSS once every note is attached (16 MB of it is the host after `initialize`); "
                            f"peak over the run {peak} MB"))
    for key, what, bound in (
        ("composer_list_one_ms", "`composer/list {composerId}` p99, 100 notes with ~1 KB chips",
         "the Note provider making 100 chips (parse, preview, thumbnail), in two `item/previewMany` calls per core, plus the wake-ups between the reader, the call thread, the pool and the client (see the `limit` ping above)"),
        ("composer_list_all_ms", "`composer/list` p99, summaries of 1,000 composers",
         "writing 1,000 summaries (~110 KB)"),
    ):
        if composer and composer.get(key, "NA") != "NA":
            p50, p90, p99 = (float(x) for x in composer[key].split("_"))
            cpu = composer.get(key.replace("_ms", "_cpu_ms"), "NA")
            if cpu != "NA":
                bound = f"{bound}; host CPU {float(cpu):.2f} ms a call (all threads)"
            # The host's CPU call by call: the same work each time, so its spread is the machine's
            # speed and how the threads shared the vCPUs from call to call.
            spread = composer.get(key.replace("_ms", "_cpu_spread_ms"), "NA")
            if spread != "NA":
                c50, _, c99 = (float(x) for x in spread.split("_"))
                bound = f"{bound}, call by call p50 {c50:.2f} and p99 {c99:.2f} ms for the same work"
            # The slowest 1% of calls: did the host work longer, and was the machine slower then?
            slowest = composer.get(key.replace("_ms", "_slowest"), "NA")
            if slowest != "NA":
                slow_cpu, slow_probe, all_probe = (float(x) for x in slowest.split("_"))
                bound = (f"{bound}. In the slowest 1% of calls the host's CPU was {slow_cpu:.2f} ms, and a fixed piece of "
                         f"memory work the client times between calls took {slow_probe:.1f} µs against {all_probe:.1f} µs "
                         f"over all calls ({slow_probe / all_probe:.2f}×)")
                bound += (": the machine was slower at those moments" if slow_probe >= 1.2 * all_probe
                          else ": the machine was not measurably slower then")
            budget_rows.append((what, "in-process", f"≤ {COMPOSER_LIST_P99_MS:g} ms", f"{p99:.2f} ms (p50 {p50:.2f})",
                                p99 <= COMPOSER_LIST_P99_MS, "—", "—", bound))
    if budget_rows:
        say("Budgets (Benchmarks/README.md, issue 9), measured in this run")
        say("")
        say("| budget | row | target | measured | met | `limit` | × limit | what bounds it, measured in this run (throughput: CPU at that rate, 2 cores in all) |")
        say("|---|---|---:|---:|:---:|---:|---:|---|")
        for what, row, target, measured, met, limit_value, times, bound in budget_rows:
            say(f"| {what} | {row} | {target} | {measured} | {'✔ met' if met else '✘ not met'} | {limit_value} | {times} | {bound} |")
        say("")
        say("× limit: how many times slower than the `limit` peer on the same measure (latency and start-up: "
            "host / limit; throughput: limit / host). The CPU split shows what bounds a throughput figure: when "
            "server + driver CPU is close to the 2 cores, the run is CPU-bound on this machine; the `limit` row "
            "shows what the pipes and the driver alone reach with the same requests in flight.")
        say("")

    # Notes
    say("Notes")
    say("")
    sizes = []
    for row_id in order:
        p = probes.get((row_id, "call"))
        if p and p.get("status") == "ok":
            sizes.append(f"{names[row_id]} {p['request_b']} B request -> {p['response_b']} B response "
                         f"({p['result_b']} B result)")
    if sizes:
        say("- `call` sizes (one request sent before the runs, bytes on the wire incl. newline): " + "; ".join(sizes) + ".")
    say("- The host's `call` is `items/preview` of a Note item taken from a real `collect/submit` in a composer "
        "(Benchmarks/compare/make_preview_note.py wrote Benchmarks/requests/preview-note.jsonl). The preamble is "
        "`initialize` + `initialized` only: rpcload sends fixed lines, and `collect/submit` needs the `sessionId` "
        "that `collect/start` returns (host-generated, a client cannot choose it), so the attach cannot be "
        "replayed inside the preamble. `items/*` are stateless (the item is passed in full), so the preview does "
        "not depend on the composer.")
    say("- Server CPU per request: the CPU of the server's whole process tree during a throughput run, minus "
        "that of an idle run (start-up and exit), over the requests sent (warmup included). For the worker row it "
        "is host + workers: treerun (Benchmarks/compare/treerun.c) becomes a child subreaper, so the workers, "
        "which the host never reaps (they die by PDEATHSIG when it exits), are reaped and counted there.")
    say("- The driver and the server share the 2 cores. Compare p50/p90 and medians, not max.")
    if composer:
        say(f"- Composers: `composer-bench --lists {composer.get('composer_lists')} --settle 0` (release, `--no-state`, "
            "Note provider in-process): 1,000 composers × 100 notes of 100–1,000 bytes attached through "
            "`collect/start` + `collect/submit`, then closed-loop `composer/list` of random composers "
            "(Benchmarks/results/composer.md).")
    if discovery:
        say(f"- Manifest discovery: `{discovery['discovery_line'].replace('_', ' ')}` (medians of 15 runs).")
    say("")
    if problems:
        say("Problems (errors, aborted runs, bad child exit or orphaned processes):")
        say("")
        for p in problems:
            say("- " + p)
    else:
        say("All runs: errors=0, child exit 0.")
    print("\n".join(out))


if __name__ == "__main__":
    main()

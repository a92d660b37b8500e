#!/usr/bin/env python3
"""Lazy-worker figures for one host command line (Benchmarks/lazy-bench.sh).

Spawns the host, sends initialize and providers/list, and reports:
  list_ms      spawn -> providers/list answered with every provider listed
  rss_mb       host + worker processes' resident memory once idle (after `settle` seconds)
  workers      worker processes (children of the host) at that moment
  cold_p50_ms  items/preview to a provider whose worker is not running (each to a different
               copy, one at a time), p50 and max over `cold` providers
Usage: cold.py PROVIDERS COLD SETTLE -- HOST ARGS...
"""
import os, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import hostproc  # noqa: E402
from hostproc import rss_kb  # noqa: E402


def children(pid):
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = open(f"/proc/{name}/stat").read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(name))
    return out


def tree(pid):
    """The process and all its descendants (workers fork a relay and an init in their namespaces)."""
    seen, todo = [], [pid]
    while todo:
        p = todo.pop()
        seen.append(p)
        todo.extend(children(p))
    return seen


def main():
    sep = sys.argv.index("--")
    providers, cold, settle = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    host = sys.argv[sep + 1:]
    start = time.perf_counter()
    proc = subprocess.Popen(host, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    next_id = [0]

    def call(method, params=None):
        next_id[0] += 1
        return hostproc.call(proc, next_id[0], method, params)

    call("initialize", {"clientInfo": {"name": "lazy-bench"}, "locale": "en-US"})
    listed = call("providers/list")["result"]["providers"]
    list_ms = (time.perf_counter() - start) * 1000
    assert len(listed) >= providers, f"{len(listed)} providers listed"
    time.sleep(settle)
    pids = tree(proc.pid)
    rss = sum(rss_kb(p) for p in pids) / 1024
    workers = len(children(proc.pid))
    note = {"title": "Groceries", "body": "- milk\n- eggs", "wordCount": 2}
    times = []
    for index in range(1, cold + 1):
        item = {"id": "3f2504e0-4f89-41d3-9a0c-0305e82c3301", "providerId": f"com.contexthost.note-copy-{index}",
                "type": "note", "displayName": "Groceries", "content": note}
        begin = time.perf_counter()
        answer = call("items/preview", {"item": item})
        times.append((time.perf_counter() - begin) * 1000)
        assert "result" in answer, answer
    times.sort()
    p50 = times[len(times) // 2] if times else 0
    print(f"list_ms={list_ms:.1f} rss_mb={rss:.0f} workers={workers} cold_p50_ms={p50:.1f} cold_max_ms={max(times or [0]):.1f}")
    proc.stdin.close()
    proc.wait(timeout=30)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Times the Stock Quote provider through a release `context-host serve` (client-side timings,
including pipes and host work). Run from the package root after

    swift build -c release --product context-host
    swift build -c release --product StockQuoteProvider

Results go to Benchmarks/results/stock-quote.md.
"""
import json, os, shutil, subprocess, tempfile, time, statistics

ROOT = os.getcwd()
work = tempfile.mkdtemp(prefix="sq-bench-")
NOTE_ONLY, NOTE_AND_STOCK = os.path.join(work, "m1"), os.path.join(work, "m2")
for folder in (NOTE_ONLY, NOTE_AND_STOCK):
    os.makedirs(folder)
    shutil.copy(os.path.join(ROOT, "manifests/note.yaml"), folder)
with open(os.path.join(ROOT, "manifests/stock-quote.yaml")) as source:
    text = source.read().replace('"../data/stock-quote', '"' + os.path.join(ROOT, "data/stock-quote"))
with open(os.path.join(NOTE_AND_STOCK, "stock-quote.yaml"), "w") as target:
    target.write(text)
HOST = ".build/release/context-host"
def init_ms(mdir, runs=30):
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        p = subprocess.Popen([HOST, "serve", "--manifests", mdir], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        p.stdin.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n'); p.stdin.flush()
        p.stdout.readline(); samples.append((time.perf_counter() - t) * 1000)
        p.stdin.close(); p.wait()
    return statistics.median(samples), min(samples)
a = init_ms(NOTE_ONLY); b = init_ms(NOTE_AND_STOCK)
print("initialize (spawn → reply), note only: median %.2f ms, min %.2f ms" % a)
print("initialize (spawn → reply), note + stock-quote: median %.2f ms, min %.2f ms" % b)

p = subprocess.Popen([HOST, "serve", "--manifests", NOTE_AND_STOCK], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
n = 0
def call(method, params=None):
    global n; n += 1
    msg = {"jsonrpc": "2.0", "id": n, "method": method}
    if params is not None: msg["params"] = params
    t = time.perf_counter()
    p.stdin.write(json.dumps(msg) + "\n"); p.stdin.flush()
    while True:
        line = json.loads(p.stdout.readline())
        if line.get("id") == n: return line, (time.perf_counter() - t) * 1000
call("initialize", {})
sid = call("collect/start", {"providerId": "com.contexthost.stock-quote"})[0]["result"]["sessionId"]
_, q1 = call("collect/query", {"sessionId": sid, "fieldId": "symbol", "query": "a"})
qs = [call("collect/query", {"sessionId": sid, "fieldId": "symbol", "query": "glo"})[1] for _ in range(50)]
print("collect/query: first %.2f ms, then median %.3f ms" % (q1, statistics.median(qs)))
firsts = {}
for sym in ["ACME", "GLBX", "HOOL"]:
    sid = call("collect/start", {"providerId": "com.contexthost.stock-quote"})[0]["result"]["sessionId"]
    r, t = call("collect/submit", {"sessionId": sid, "values": {"symbol": sym, "range": "5Y"}})
    firsts[sym] = t
item = r["result"]["item"]
again = []
for _ in range(30):
    sid = call("collect/start", {"providerId": "com.contexthost.stock-quote"})[0]["result"]["sessionId"]
    again.append(call("collect/submit", {"sessionId": sid, "values": {"symbol": "HOOL", "range": "5Y"}})[1])
print("collect/submit 5Y, first (parse ~1,300 rows): " + ", ".join("%s %.2f ms" % kv for kv in firsts.items()) + "; cached median %.2f ms (submit only)" % statistics.median(again))
for m in ["items/preview", "items/detail", "items/encode"]:
    ts = [call(m, {"item": item})[1] for _ in range(100)]
    print("%s (5Y item, %d bytes content): median %.3f ms" % (m, len(json.dumps(item["content"])), statistics.median(ts)))
p.stdin.close(); p.wait()
shutil.rmtree(work)

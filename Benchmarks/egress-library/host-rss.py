"""The host's memory with its HTTP library dormant and in use (issue 37's HTTP library numbers):
`context-host serve` (release) with the fetch fixture in a worker, VmRSS of the host process after
`initialize` + `providers/list` (AsyncHTTPClient linked, no fetch made yet), then after COUNT
brokered 10 KB HTTPS GETs on loopback (NIO's event loop threads, a BoringSSL context and one
kept-alive connection made) and a second of quiet. Standard-library Python; needs openssl.

    python3 Benchmarks/egress-library/host-rss.py BUILD_DIR [COUNT]

BUILD_DIR holds context-host and libFixtureFetchProvider.so (e.g. .build/release).
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(root, "Benchmarks"))
import hostproc  # noqa: E402
from hostproc import rss_kb  # noqa: E402
build = os.path.abspath(sys.argv[1])
count = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
fixtures = os.path.join(root, "Tests", "Fixtures", "https")


with tempfile.TemporaryDirectory() as folder:
    subprocess.run(["bash", os.path.join(fixtures, "make-test-ca.sh"), folder + "/ca"], check=True)
    os.makedirs(folder + "/recordings")
    server = subprocess.Popen(
        ["python3", os.path.join(fixtures, "replay_server.py"), "--cert", folder + "/ca/server.pem", "--key", folder + "/ca/server.key",
         "--recordings", folder + "/recordings", "--log", "/dev/null", "--port-file", folder + "/port"],
        stdout=subprocess.DEVNULL)
    port = 0
    for _ in range(500):
        try:
            port = int(open(folder + "/port", encoding="utf-8").read().strip())
            break
        except (OSError, ValueError):
            time.sleep(0.02)
    os.makedirs(folder + "/manifests")
    with open(folder + "/manifests/fetch.yaml", "w", encoding="utf-8") as handle:
        handle.write(f"""manifestVersion: 1
id: com.contexthost.fetch-fixture
title: Fetch bench
iconName: network
version: 0.0.1
library: libFixtureFetchProvider.so
collection: programmatic
isolation: process
network:
  timeout: 60s
  origins:
    - {{ origin: "https://localhost:{port}", privateAddresses: true }}
timeouts: {{ collect: 60s, preview: 10s, detail: 10s, encode: 10s }}
""")
    environment = dict(os.environ, CONTEXT_HOST_EXTRA_CA_FILE=folder + "/ca/ca.pem", XDG_STATE_HOME=folder + "/state",
                       XDG_CACHE_HOME=folder + "/cache", CONTEXT_HOST_SECRETS_DIR=folder + "/secrets", CONTEXT_HOST_SECRETS_BACKEND="file")
    host = subprocess.Popen(
        [build + "/context-host", "serve", "--no-watch", "--no-installed", "--manifests", folder + "/manifests", "--log-level", "warning"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=environment)

    def call(identifier, method, params=None):
        return hostproc.call(host, identifier, method, params)

    call(0, "initialize", {"protocolVersion": 1, "clientInfo": {"name": "host-rss"}, "locale": "en-US"})
    host.stdin.write(b'{"jsonrpc":"2.0","method":"initialized","params":{}}\n')
    call(1, "providers/list")
    time.sleep(1)
    idle = rss_kb(host.pid)
    item = {"id": str(uuid.uuid4()), "providerId": "com.contexthost.fetch-fixture", "type": "fetch", "displayName": "fetch",
            "content": {"url": f"https://localhost:{port}/huge/10240", "repeat": count}, "createdAt": "2026-11-28T00:00:00Z"}
    answer = call(2, "items/describe", {"item": item})
    result = json.loads(answer["result"]["text"])
    if "microseconds" not in result:
        sys.exit(f"host-rss.py: the brokered fetch failed: {answer}")
    times = sorted(result["microseconds"])
    time.sleep(1)
    used = rss_kb(host.pid)
    print(f"context-host serve (host process): VmRSS {idle / 1024:.1f} MB after initialize + providers/list (no fetch yet), "
          f"{used / 1024:.1f} MB after {count} brokered GETs (+{(used - idle) / 1024:.1f} MB); those GETs' p50 {times[(len(times) - 1) // 2]:.0f} µs")
    host.stdin.close()
    host.wait(timeout=20)
    server.terminate()
    server.wait()

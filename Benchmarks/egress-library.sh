#!/usr/bin/env bash
# The HTTP library comparison of issue 37 (docs/architecture.md, "HTTP library"): AsyncHTTPClient,
# the broker's transport, beside libcurl (Debian libcurl4-openssl-dev), in one run:
#   1. egress-bench (the 10 KB HTTPS GET on loopback: AsyncHTTPClient direct in its process, then
#      brokered through a worker of the real context-host) and curl-get (egress-library/curl-get.c:
#      the same GET with libcurl, one kept-alive handle, the name pinned to 127.0.0.1 as the
#      broker pins it, against the same replay server code with the same kind of test CA),
#      interleaved for REPS rounds (default 3);
#   2. the host's VmRSS before any fetch and after COUNT brokered ones (egress-library/host-rss.py),
#      beside curl-get's own VmRSS before and after libcurl is in use;
#   3. what ContextNetwork and the modules only it needs add to the release context-host
#      (egress-library/module-sizes.py), and what libcurl would add instead: its shared libraries
#      that context-host does not already load.
#
#   flock /tmp/heavy.lock Benchmarks/egress-library.sh [BUILD_DIR] [COUNT]
#
# BUILD_DIR: a release folder with egress-bench, context-host and libFixtureFetchProvider.so
# (default .build/release); HOST_DIR=… takes context-host and the fixture from another release
# folder (egress-bench's CONTEXT_HOST_BUILD_DIR). COUNT: GETs per round (default 1000). curl-get is built here
# (cc -O2, -lcurl) into .build/bench/: never by the package, never by CI's tests, and nothing
# links it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$root/.build/release}" && pwd)"
count="${2:-1000}"
host_dir="$(cd "${HOST_DIR:-$build}" && pwd)"
reps="${REPS:-3}"
out="$root/.build/bench"
mkdir -p "$out"
if ! cc -O2 -Wall -o "$out/curl-get" "$root/Benchmarks/egress-library/curl-get.c" -lcurl; then
    echo "egress-library.sh: cannot build curl-get; install libcurl (Debian: apt-get install libcurl4-openssl-dev)" >&2
    exit 1
fi
work="$(mktemp -d)"
server=""
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
fixtures="$root/Tests/Fixtures/https"
bash "$fixtures/make-test-ca.sh" "$work/ca"
mkdir -p "$work/recordings"
python3 "$fixtures/replay_server.py" --cert "$work/ca/server.pem" --key "$work/ca/server.key" --recordings "$work/recordings" \
    --log /dev/null --port-file "$work/port" >/dev/null 2>&1 &
server=$!
for _ in $(seq 250); do [[ -s "$work/port" ]] && break; sleep 0.02; done
port="$(cat "$work/port")"

echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, egress-bench of $build, context-host of $host_dir; libcurl $(curl-config --version | cut -d' ' -f2) ($(curl-config --ssl-backends))"
echo "== 1. the 10 KB HTTPS GET, $reps rounds of $count: AsyncHTTPClient direct and brokered (egress-bench), libcurl (curl-get)"
for round in $(seq "$reps"); do
    echo "-- round $round"
    CONTEXT_HOST_BUILD_DIR="$host_dir" "$build/egress-bench" "$count" 8 --server python
    "$out/curl-get" "https://localhost:$port/huge/10240" "$work/ca/ca.pem" "$count" "localhost:$port:127.0.0.1"
done
echo "== 2. memory"
python3 "$root/Benchmarks/egress-library/host-rss.py" "$host_dir" "$count"
echo "== 3. binary size: context-host's release binary, ContextNetwork and what only it needs"
python3 "$root/Benchmarks/egress-library/module-sizes.py" "$host_dir"
echo "-- libcurl instead: shared libraries curl-get loads that context-host does not"
python3 - "$out/curl-get" "$host_dir/context-host" <<'PY'
import os, re, subprocess, sys
def libraries(binary):
    found = {}
    for line in subprocess.run(["ldd", binary], check=True, capture_output=True, text=True).stdout.splitlines():
        match = re.search(r"(\S+) => (\S+)", line)
        if match and os.path.exists(match.group(2)):
            found[match.group(1)] = os.path.realpath(match.group(2))
    return found
curl, host = libraries(sys.argv[1]), libraries(sys.argv[2])
extra = {name: path for name, path in curl.items() if name not in host}
total = 0
for name, path in sorted(extra.items(), key=lambda item: -os.path.getsize(item[1])):
    fields = subprocess.run(["size", "-B", path], check=True, capture_output=True, text=True).stdout.splitlines()[1].split()
    total += int(fields[0]) + int(fields[1])
    print(f"  {name}: file {os.path.getsize(path) / 1e3:,.0f} KB, text+data {(int(fields[0]) + int(fields[1])) / 1e3:,.0f} KB")
print(f"  {len(extra)} libraries beyond context-host's own: text+data {total / 1e6:.2f} MB (shared with every other program that loads them)")
PY

#!/usr/bin/env python3
"""Memory of idle WebSocket connections on `serve --listen` (issue 38's budget: 100 idle
connections <= 20 MB on top of the host). Standard library only.

    Benchmarks/web-idle.py CONTEXT_HOST MANIFESTS [COUNT] [--smaps] [-- EXTRA_HOST_FLAGS...]

Starts a listener on 127.0.0.1:0 (the default isolation: providers in lazily started workers; no
state), reads its RSS (VmRSS) once it listens, opens COUNT connections (default 100) and reads
the RSS again, then sends `initialize` + `providers/list` on each (a client that said hello and
went quiet) and reads it a third time. Prints one key=value line: rss_kb_start,
rss_kb_connected, rss_kb_initialized, the per-connection cost of each step, the listener's
threads at each step and the worker processes it started. Flags after `--` go to `serve` (e.g.
`--isolation in-process`).

With --smaps, also one line per step of where the listener's resident memory is (from
/proc/PID/smaps): `heap` (the brk heap), `anon_arena` (glibc's per-thread malloc arenas: anonymous
mappings in 64 MiB-aligned reservations), `anon_stack` (anonymous mappings right after a guard
page: thread stacks), `anon_other`, `file` (the executable and libraries).
"""
import base64
import json
import os
import re
import socket
import subprocess
import sys
import time


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def threads(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return 0


def workers(pid):
    """Worker processes the listener started (its children)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as children:
            return len(children.read().split())
    except OSError:
        return 0


def smaps(pid):
    """Resident KB of the listener by kind of mapping (see the module's doc)."""
    kinds = {"heap": 0, "anon_arena": 0, "anon_stack": 0, "anon_other": 0, "file": 0}
    previous_guard_end = None
    kind = None
    with open(f"/proc/{pid}/smaps") as maps:
        for line in maps:
            fields = line.split()
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                start, end = (int(x, 16) for x in fields[0].split("-"))
                perms = fields[1]
                path = fields[5] if len(fields) > 5 else ""
                if path == "[heap]":
                    kind = "heap"
                elif path.startswith("/"):
                    kind = "file"
                elif path:
                    kind = "anon_other"
                elif perms.startswith("---"):
                    kind = None
                    previous_guard_end = end
                    continue
                elif start % (64 << 20) == 0:
                    kind = "anon_arena"
                elif previous_guard_end == start:
                    kind = "anon_stack"
                else:
                    kind = "anon_other"
                previous_guard_end = None
            elif fields and fields[0] == "Rss:" and kind is not None:
                kinds[kind] += int(fields[1])
    return " ".join(f"{name}={value}" for name, value in kinds.items())


def frame(text):
    """One masked text frame (a client must mask)."""
    payload = text.encode()
    mask = os.urandom(4)
    header = bytearray([0x81])
    if len(payload) < 126:
        header.append(0x80 | len(payload))
    else:
        header.append(0x80 | 126)
        header += len(payload).to_bytes(2, "big")
    return bytes(header) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def read_frame(sock):
    def exact(n):
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise RuntimeError("connection closed")
            data += chunk
        return data

    first, second = exact(2)
    length = second & 0x7F
    if length == 126:
        length = int.from_bytes(exact(2), "big")
    elif length == 127:
        length = int.from_bytes(exact(8), "big")
    return first & 0x0F, exact(length)


def connect(address):
    host, port = address.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET /rpc HTTP/1.1\r\nHost: {address}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    response = b""
    while b"\r\n\r\n" not in response:
        chunk = sock.recv(4096)
        if not chunk:
            raise RuntimeError("closed during the handshake")
        response += chunk
    if not response.startswith(b"HTTP/1.1 101"):
        raise RuntimeError(f"handshake refused: {response[:80]!r}")
    return sock


def main():
    arguments = sys.argv[1:]
    extra = []
    if "--" in arguments:
        extra = arguments[arguments.index("--") + 1:]
        arguments = arguments[:arguments.index("--")]
    show_smaps = "--smaps" in arguments
    arguments = [a for a in arguments if a != "--smaps"]
    executable, manifests = arguments[0], arguments[1]
    count = int(arguments[2]) if len(arguments) > 2 else 100
    listener = subprocess.Popen(
        [executable, "serve", "--listen", "127.0.0.1:0", "--no-watch", "--manifests", manifests,
         "--no-state", "--no-installed", "--registry-cache", "none",
         "--max-connections", str(count + 10), *extra],
        stderr=subprocess.PIPE, text=True)
    try:
        address = None
        deadline = time.time() + 30
        while address is None and time.time() < deadline:
            line = listener.stderr.readline()
            match = re.search(r"listening on ws://(127\.0\.0\.1:\d+)/rpc", line)
            if match:
                address = match.group(1)
        if address is None:
            raise RuntimeError("the listener did not start")
        time.sleep(0.5)
        start = rss_kb(listener.pid)
        steps = [("start", threads(listener.pid), smaps(listener.pid) if show_smaps else "")]
        sockets = [connect(address) for _ in range(count)]
        time.sleep(1.0)
        connected = rss_kb(listener.pid)
        steps.append(("connected", threads(listener.pid), smaps(listener.pid) if show_smaps else ""))
        hello = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                            "params": {"clientInfo": {"name": "idle", "version": "1"}, "protocolVersions": [2]}})
        listing = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "providers/list", "params": {}})
        for sock in sockets:
            sock.sendall(frame(hello) + frame(listing))
        for sock in sockets:
            answers = 0
            while answers < 2:
                opcode, payload = read_frame(sock)
                if opcode == 1 and b'"id"' in payload:
                    answers += 1
        time.sleep(1.0)
        initialized = rss_kb(listener.pid)
        steps.append(("initialized", threads(listener.pid), smaps(listener.pid) if show_smaps else ""))
        print(f"connections={count} rss_kb_start={start} rss_kb_connected={connected} "
              f"rss_kb_initialized={initialized} kb_per_connection_connected={(connected - start) / count:.1f} "
              f"kb_per_connection_initialized={(initialized - start) / count:.1f} "
              + " ".join(f"threads_{name}={n}" for name, n, _ in steps) + f" workers={workers(listener.pid)}")
        if show_smaps:
            for name, _, kinds in steps:
                print(f"smaps_kb {name}: {kinds}")
        for sock in sockets:
            sock.close()
    finally:
        listener.terminate()
        listener.wait(timeout=10)


if __name__ == "__main__":
    main()

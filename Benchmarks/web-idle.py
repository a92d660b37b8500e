#!/usr/bin/env python3
"""Memory of idle WebSocket connections on `serve --listen` (issue 38's budget: 100 idle
connections <= 20 MB on top of the host). Standard library only.

    Benchmarks/web-idle.py CONTEXT_HOST MANIFESTS [COUNT]

Starts a listener on 127.0.0.1:0 (in-process providers, no state), reads its RSS (VmRSS) once
it listens, opens COUNT connections (default 100) and reads the RSS again, then sends
`initialize` + `providers/list` on each (a client that said hello and went quiet) and reads it a
third time. Prints one key=value line: rss_kb_start, rss_kb_connected, rss_kb_initialized and the
per-connection cost of each step.
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
    executable, manifests = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    listener = subprocess.Popen(
        [executable, "serve", "--listen", "127.0.0.1:0", "--no-watch", "--manifests", manifests,
         "--no-state", "--no-installed", "--registry-cache", "none",
         "--max-connections", str(count + 10)],
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
        sockets = [connect(address) for _ in range(count)]
        time.sleep(1.0)
        connected = rss_kb(listener.pid)
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
        print(f"connections={count} rss_kb_start={start} rss_kb_connected={connected} "
              f"rss_kb_initialized={initialized} kb_per_connection_connected={(connected - start) / count:.1f} "
              f"kb_per_connection_initialized={(initialized - start) / count:.1f}")
        for sock in sockets:
            sock.close()
    finally:
        listener.terminate()
        listener.wait(timeout=10)


if __name__ == "__main__":
    main()

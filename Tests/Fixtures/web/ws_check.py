#!/usr/bin/env python3
"""Checks `context-host serve --listen` with a real WebSocket client (PyPI `websockets`, in the
test-only venv) and, for the handshake refusals, raw HTTP over a socket.

    ws_check.py SCENARIO HOST_BINARY

Each scenario starts its own host on a free port, prints one line per check, `PASS name` or
`FAIL name: why`, and exits 0 only if every check passed. Hostile checks each have a control
that succeeds without the defence's trigger. Used by Tests/IntegrationTests/WebListenerTests.swift.
"""
import asyncio
import base64
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
checks = 0
failures = 0


def check(name, ok, why=""):
    """Prints `PASS name` or `FAIL name: why` (what Tests' CheckScript counts), counting both."""
    global checks, failures
    checks += 1
    if ok:
        print(f"PASS {name}", flush=True)
    else:
        failures += 1
        print(f"FAIL {name}: {why}", flush=True)


def stop_child(proc):
    """SIGTERM, then SIGKILL after 10 s; returns once `proc` has exited."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Host:
    """A `context-host serve --listen` process (or `mcp --http`, with command="mcp" and
    scheme="http"; Tests/Fixtures/mcp/mcp_http_check.py); `url` and `port` once it listens."""

    def __init__(self, binary, args, command="serve", scheme="ws"):
        self.scratch = tempfile.mkdtemp(prefix="ws-check-")
        env = dict(os.environ)
        env.pop("CONTEXT_HOST_MANIFESTS", None)
        env.pop("CONTEXT_HOST_REGISTRY_CACHE", None)
        env["XDG_STATE_HOME"] = self.scratch + "/state"
        env["XDG_CACHE_HOME"] = self.scratch + "/cache"
        env["XDG_DATA_HOME"] = self.scratch + "/data"
        self.lines = []
        self.cond = threading.Condition()
        self.proc = subprocess.Popen(
            [binary, command, *args], cwd=ROOT, env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        threading.Thread(target=self._drain, daemon=True).start()
        line = self.wait_for(rf"listening on ({scheme}://\S+)", 60)
        if line is None:
            self.stop()
            raise RuntimeError("the host did not report its address within 60 s; stderr:\n" + "\n".join(self.lines))
        self.url = re.search(rf"listening on ({scheme}://\S+)", line).group(1)
        self.port = int(re.search(r":(\d+)/\w+$", self.url).group(1))

    def _drain(self):
        for raw in self.proc.stderr:
            with self.cond:
                self.lines.append(raw.decode("utf-8", "replace").rstrip("\n"))
                self.cond.notify_all()

    def wait_for(self, pattern, timeout):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for line in self.lines:
                    if re.search(pattern, line):
                        return line
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    return None
                self.cond.wait(left)

    def children(self):
        """Process ids of the host's children (its workers)."""
        pids = set()
        try:
            for task in os.listdir(f"/proc/{self.proc.pid}/task"):
                with open(f"/proc/{self.proc.pid}/task/{task}/children") as f:
                    pids.update(int(p) for p in f.read().split())
        except FileNotFoundError:
            pass
        return pids

    def stop(self):
        stop_child(self.proc)
        shutil.rmtree(self.scratch, ignore_errors=True)


class Session:
    """JSON-RPC over one WebSocket connection."""

    def __init__(self, ws):
        self.ws = ws
        self.next_id = 0
        self.notifications = []

    async def call(self, method, params=None, timeout=30):
        self.next_id += 1
        request_id = self.next_id
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.ws.send(json.dumps(message))
        while True:
            answer = json.loads(await asyncio.wait_for(self.ws.recv(), timeout))
            if answer.get("id") == request_id:
                return answer
            if "id" not in answer:
                self.notifications.append(answer)

    async def notify(self, method, params=None):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.ws.send(json.dumps(message))

    async def initialize(self):
        answer = await self.call("initialize", {"clientInfo": {"name": "ws-check"}, "locale": "en-US"})
        await self.notify("initialized", {})
        return answer


def ws_connect(url, **kwargs):
    kwargs.setdefault("proxy", None)
    kwargs.setdefault("open_timeout", 30)
    kwargs.setdefault("compression", None)
    return connect(url, **kwargs)


def raw_request(port, lines, upgrade=True, path="/rpc", tls=None):
    """Sends one HTTP request by hand (so any Host, Origin or token can be sent) and returns
    (status, response head). `lines` are header lines; an upgrade adds the WebSocket ones.
    `tls`: an `ssl.SSLContext` to speak TLS (server name `localhost`) instead of plain TCP."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as plain, \
            (tls.wrap_socket(plain, server_hostname="localhost") if tls else plain) as s:
        head = [f"GET {path} HTTP/1.1", *lines]
        if upgrade:
            key = base64.b64encode(os.urandom(16)).decode()
            head += ["Upgrade: websocket", "Connection: Upgrade", f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
        s.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        text = data.decode("utf-8", "replace")
        match = re.match(r"HTTP/1\.1 (\d{3})", text)
        return (int(match.group(1)) if match else None), text


async def refused_response(url, **kwargs):
    """The HTTP status and body a refused WebSocket handshake got, or (101, b"") if accepted."""
    try:
        async with ws_connect(url, **kwargs):
            return 101, b""
    except InvalidStatus as error:
        return error.response.status_code, error.response.body or b""


async def refused_status(url, **kwargs):
    """The HTTP status a refused WebSocket handshake got, or 101 if it was accepted."""
    return (await refused_response(url, **kwargs))[0]


async def note_item(session, title, composer=None):
    params = {"providerId": "com.contexthost.note"}
    if composer:
        params["composerId"] = composer
    start = await session.call("collect/start", params)
    session_id = start["result"]["sessionId"]
    submit = await session.call("collect/submit", {"sessionId": session_id, "values": {"title": title, "body": "Milk, eggs and bread."}})
    return start, submit


# MARK: scenarios


async def flow(binary):
    host = Host(binary, ["--listen", "127.0.0.1:0", "--no-watch"])
    try:
        check("listening on loopback", host.url.startswith("ws://127.0.0.1:"), host.url)
        async with ws_connect(host.url, subprotocols=["context-host.jsonrpc"]) as ws:
            check("subprotocol context-host.jsonrpc selected", ws.subprotocol == "context-host.jsonrpc", str(ws.subprotocol))
            s = Session(ws)
            init = await s.initialize()
            check("initialize", init.get("result", {}).get("protocolVersion") == 2, json.dumps(init)[:300])
            listed = await s.call("providers/list")
            note = [p for p in listed["result"]["providers"] if p["id"] == "com.contexthost.note"]
            check("providers/list has the Note provider, available",
                  len(note) == 1 and note[0].get("available") is True, json.dumps(listed)[:300])
            start = await s.call("collect/start", {"providerId": "com.contexthost.note"})
            fields = [f["id"] for f in start["result"]["form"]["fields"]]
            check("collect/start: the note form", fields == ["title", "body"], json.dumps(start)[:300])
            sid = start["result"]["sessionId"]
            invalid = await s.call("collect/submit", {"sessionId": sid, "values": {"title": "", "body": "x"}})
            check("collect/submit invalid: field error", invalid["result"]["outcome"] == "invalid"
                  and "title" in invalid["result"]["fieldErrors"], json.dumps(invalid)[:300])
            submit = await s.call("collect/submit", {"sessionId": sid, "values": {"title": "Groceries", "body": "Milk, eggs and **bread**.\nAlso coffee."}})
            item = submit["result"]["item"]
            check("collect/submit: a note item", submit["result"]["outcome"] == "item" and item["displayName"] == "Groceries",
                  json.dumps(submit)[:300])
            chip = await s.call("items/preview", {"item": item})
            check("items/preview: the chip", chip["result"]["title"] == "Groceries" and chip["result"]["subtitle"] == "6 words",
                  json.dumps(chip)[:300])
            # Pipelined: 64 requests in flight on one connection, every answer comes back.
            for i in range(64):
                await ws.send(json.dumps({"jsonrpc": "2.0", "id": f"p{i}", "method": "items/preview", "params": {"item": item}}))
            seen = set()
            while len(seen) < 64:
                answer = json.loads(await asyncio.wait_for(ws.recv(), 30))
                if str(answer.get("id", "")).startswith("p") and answer.get("result", {}).get("title") == "Groceries":
                    seen.add(answer["id"])
            check("64 items/preview in flight on one connection", len(seen) == 64, str(len(seen)))
            bad = await s.call("no/such-method")
            check("unknown method: JSON-RPC error -32601", bad.get("error", {}).get("code") == -32601, json.dumps(bad))
            shutdown = await s.call("shutdown")
            check("shutdown", "result" in shutdown, json.dumps(shutdown))
            await s.notify("exit")
            try:
                await asyncio.wait_for(ws.recv(), 10)
                check("exit closes the connection (1000)", False, "a message came after exit")
            except ConnectionClosed as closed:
                check("exit closes the connection (1000)", closed.rcvd is not None and closed.rcvd.code == 1000, str(closed))
        # The listener still serves after a session's exit.
        async with ws_connect(host.url) as ws:
            ping = await Session(ws).call("ping")
            check("a new connection after another's exit", "result" in ping, json.dumps(ping))
        status, text = raw_request(host.port, [f"Host: 127.0.0.1:{host.port}"], upgrade=False, path="/rpc")
        check("GET /rpc without upgrade: 426", status == 426, text[:200])
        status, text = raw_request(host.port, [f"Host: 127.0.0.1:{host.port}"], upgrade=False, path="/")
        check("GET /: 200, no CORS header", status == 200 and "access-control" not in text.lower(), text[:300])
    finally:
        host.stop()


async def composers(binary):
    host = Host(binary, ["--listen", "127.0.0.1:0", "--no-watch"])
    try:
        async with ws_connect(host.url) as a, ws_connect(host.url) as b:
            sa, sb = Session(a), Session(b)
            await sa.initialize()
            await sb.initialize()
            opened = await sa.call("composer/open", {})
            composer = opened["result"]["composerId"]
            _, submit = await note_item(sa, "For A", composer)
            check("A attaches a note to its composer", submit["result"]["outcome"] == "item", json.dumps(submit)[:300])
            listed_a = await sa.call("composer/list", {"composerId": composer})
            check("control: A lists its composer with the item", listed_a.get("result", {}).get("itemCount") == 1,
                  json.dumps(listed_a)[:300])
            all_b = await sb.call("composer/list", {})
            check("B sees no composers", all_b.get("result", {}).get("composers") == [], json.dumps(all_b)[:300])
            foreign = await sb.call("composer/list", {"composerId": composer})
            check("B cannot read A's composer (-32032)", foreign.get("error", {}).get("code") == -32032, json.dumps(foreign)[:300])
            sent = await sb.call("composer/send", {"composerId": composer, "text": "steal"})
            check("B cannot send A's composer (-32032)", sent.get("error", {}).get("code") == -32032, json.dumps(sent)[:300])
            opened_b = await sb.call("composer/open", {})
            all_a = await sa.call("composer/list", {})
            ids = [c["composerId"] for c in all_a["result"]["composers"]]
            check("A sees only its own composer", ids == [composer] and opened_b["result"]["composerId"] != composer,
                  json.dumps(all_a)[:300])
    finally:
        host.stop()


async def origin(binary):
    host = Host(binary, ["--listen", "127.0.0.1:0", "--no-watch", "--allow-origin", "http://localhost:5173"])
    try:
        own = f"http://127.0.0.1:{host.port}"
        status = await refused_status(host.url, origin=own)
        check("control: the listener's own origin connects (101)", status == 101, str(status))
        status = await refused_status(host.url, origin="http://localhost:5173")
        check("control: an --allow-origin origin connects (101)", status == 101, str(status))
        status = await refused_status(host.url, origin="http://evil.example")
        check("foreign Origin refused with 403", status == 403, str(status))
        status = await refused_status(host.url, origin="null")
        check("Origin null refused with 403", status == 403, str(status))
        status = await refused_status(host.url, origin=f"http://127.0.0.1:{host.port + 1}")
        check("own host on another port refused with 403", status == 403, str(status))
        status, text = raw_request(host.port, [f"Host: 127.0.0.1:{host.port}", "Origin: http://evil.example"], upgrade=False, path="/")
        check("foreign Origin refused on plain HTTP too (403, no CORS header)", status == 403 and "access-control" not in text.lower(), text[:300])
        status, text = raw_request(host.port, [f"Host: 127.0.0.1:{host.port}", "Origin: http://evil.example", "Origin: " + own])
        check("two Origin headers refused with 403", status == 403, text[:200])
    finally:
        host.stop()


async def rebinding(binary):
    host = Host(binary, ["--listen", "127.0.0.1:0", "--no-watch"])
    try:
        port = host.port
        status, text = raw_request(port, [f"Host: 127.0.0.1:{port}"])
        check("control: Host 127.0.0.1:PORT upgrades (101)", status == 101, text[:200])
        status, text = raw_request(port, [f"Host: localhost:{port}"])
        check("control: Host localhost:PORT upgrades (101)", status == 101, text[:200])
        status, text = raw_request(port, [f"Host: evil.example:{port}"])
        check("rebinding Host evil.example:PORT refused with 403", status == 403 and "rebinding" in text, text[:300])
        status, text = raw_request(port, [f"Host: evil.example:{port}", f"Origin: http://evil.example:{port}"])
        check("rebinding Host with its own Origin refused with 403", status == 403, text[:300])
        status, text = raw_request(port, [f"Host: 127.0.0.1:{port + 1}"])
        check("Host with another port refused with 403", status == 403, text[:300])
        status, text = raw_request(port, [])
        check("no Host header refused with 400", status == 400, text[:300])
        # The refused ones did not disturb the listener.
        async with ws_connect(host.url) as ws:
            ping = await Session(ws).call("ping")
            check("the listener serves after the refusals", "result" in ping, json.dumps(ping))
    finally:
        host.stop()


async def token(binary):
    host = Host(binary, ["--listen", "0.0.0.0:0", "--no-watch"])
    try:
        line = host.wait_for(r"token for this listener.*: ([0-9a-f]{64})$", 10)
        check("a token is generated and printed for a non-loopback address", line is not None, "\n".join(host.lines))
        secret = re.search(r"([0-9a-f]{64})$", line).group(1) if line else "0" * 64
        check("the token is printed once", sum(secret in l for l in host.lines) == 1, "")
        url = f"ws://127.0.0.1:{host.port}/rpc"
        status = await refused_status(url)
        check("no token refused with 401", status == 401, str(status))
        wrong = ("1" if secret[0] != "1" else "2") + secret[1:]
        status = await refused_status(url, additional_headers={"Authorization": "Bearer " + wrong})
        check("a wrong token refused with 401", status == 401, str(status))
        status = await refused_status(url, subprotocols=["context-host.jsonrpc", "bearer." + secret[:-1]])
        check("a truncated token (subprotocol) refused with 401", status == 401, str(status))
        async with ws_connect(url, additional_headers={"Authorization": "Bearer " + secret}) as ws:
            ping = await Session(ws).call("ping")
            check("control: the right token (Authorization: Bearer) connects", "result" in ping, json.dumps(ping))
        async with ws_connect(url, subprotocols=["context-host.jsonrpc", "bearer." + secret], origin=f"http://127.0.0.1:{host.port}") as ws:
            ping = await Session(ws).call("ping")
            check("control: the right token as a browser sends it (subprotocol) connects",
                  "result" in ping and ws.subprotocol == "context-host.jsonrpc", json.dumps(ping))
        status, text = raw_request(host.port, [f"Host: evil.example:{host.port}", "Authorization: Bearer " + secret])
        check("a wildcard bind still refuses a rebinding Host with the token (403)", status == 403, text[:200])
        check("the token is not logged with a refusal", sum(secret in l for l in host.lines) == 1, "")
    finally:
        host.stop()
    # --token-file: required on loopback too; a file others can read is refused.
    scratch = tempfile.mkdtemp(prefix="ws-token-")
    try:
        path = scratch + "/token"
        with open(path, "w") as f:
            f.write("t" * 40 + "\n")
        os.chmod(path, 0o644)
        proc = subprocess.run([binary, "serve", "--listen", "127.0.0.1:0", "--token-file", path], cwd=ROOT,
                              capture_output=True, timeout=60)
        check("a token file others can read is refused (exit 64, chmod 600 hint)",
              proc.returncode == 64 and b"chmod 600" in proc.stderr, proc.stderr.decode()[:300])
        os.chmod(path, 0o600)
        host = Host(binary, ["--listen", "127.0.0.1:0", "--no-watch", "--token-file", path])
        try:
            status = await refused_status(host.url)
            check("--token-file on loopback: no token refused with 401", status == 401, str(status))
            status = await refused_status(host.url, additional_headers={"Authorization": "Bearer " + "t" * 40})
            check("control: --token-file's token connects", status == 101, str(status))
        finally:
            host.stop()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


async def oversize(binary):
    limit = 65536
    host = Host(binary, ["--listen", "127.0.0.1:0", "--no-watch", "--max-message-bytes", str(limit)])
    try:
        async with ws_connect(host.url) as peer, ws_connect(host.url) as a:
            sp, sa = Session(peer), Session(a)
            await sp.initialize()
            await sa.initialize()
            padded = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * (limit - 200)}})
            await a.send(padded)
            answer = json.loads(await asyncio.wait_for(a.recv(), 30))
            check("control: a message just under the limit is answered", answer.get("id") == 1, json.dumps(answer)[:200])
            await a.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"pad": "x" * (limit + 100)}}))
            try:
                extra = await asyncio.wait_for(a.recv(), 30)
                check("an oversized frame closes the connection with 1009", False, "answered: " + extra[:200])
            except ConnectionClosed as closed:
                check("an oversized frame closes the connection with 1009", closed.rcvd is not None and closed.rcvd.code == 1009, str(closed))
            ping = await sp.call("ping")
            check("the peer connection is unaffected", "result" in ping, json.dumps(ping))
        async with ws_connect(host.url) as a:
            # Control: a fragmented message under the limit is put together and answered.
            await a.send(iter(["{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",", "\"params\":{\"pad\":\"é\"}}"]))
            answer = json.loads(await asyncio.wait_for(a.recv(), 30))
            check("control: a fragmented message under the limit is answered", answer.get("id") == 4, json.dumps(answer)[:200])
        async with ws_connect(host.url) as a:
            # Fragmented: frames under the limit that add up to more.
            chunks = ["{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"params\":{\"pad\":\"", "x" * (limit // 2), "x" * (limit // 2), "\"}}"]
            await a.send(iter(chunks))
            try:
                extra = await asyncio.wait_for(a.recv(), 30)
                check("an oversized fragmented message closes the connection with 1009", False, "answered: " + extra[:200])
            except ConnectionClosed as closed:
                check("an oversized fragmented message closes the connection with 1009",
                      closed.rcvd is not None and closed.rcvd.code == 1009, str(closed))
        # A text message that is not UTF-8 (RFC 6455 §8.1: close with 1007); the same message
        # with valid UTF-8 in its place is answered.
        raw = RawWebSocket(host.port)
        raw.sock.sendall(raw.frame_bytes('{"jsonrpc":"2.0","id":5,"method":"ping","params":{"s":"é"}}'.encode()))
        n, eof = raw.read_messages(1, 30)
        check("control: a text message with valid UTF-8 is answered", n == 1 and not eof, f"{n} {eof}")
        raw.sock.sendall(raw.frame_bytes(b'{"jsonrpc":"2.0","id":6,"method":"ping","params":{"s":"\xc3\x28\xff"}}'))
        n, eof = raw.read_messages(1, 30)
        check("a text message that is not UTF-8 closes the connection with 1007", n == 0 and eof and raw.close_code == 1007,
              f"{n} answers, eof={eof}, close code {raw.close_code}")
        async with ws_connect(host.url) as b:
            await b.send(b"\x00binary")
            try:
                await asyncio.wait_for(b.recv(), 30)
                check("a binary frame closes the connection with 1003", False, "answered")
            except ConnectionClosed as closed:
                check("a binary frame closes the connection with 1003", closed.rcvd is not None and closed.rcvd.code == 1003, str(closed))
    finally:
        host.stop()


async def many(binary):
    cap = 8
    host = Host(binary, ["--listen", "127.0.0.1:0", "--no-watch", "--max-connections", str(cap)])
    try:
        held = []
        for _ in range(cap):
            ws = await ws_connect(host.url)
            held.append(ws)
        check("control: connections up to the cap are accepted", len(held) == cap, str(len(held)))

        async def attempt():
            try:
                return await refused_status(host.url, open_timeout=60)
            except Exception as error:  # a reset or timeout counts as not answered
                return repr(error)
        started = time.monotonic()
        results = await asyncio.gather(*(attempt() for _ in range(500)))
        elapsed = time.monotonic() - started
        refused = sum(1 for r in results if r == 503)
        others = [r for r in results if r != 503]
        check("500 more connections past the cap: each refused with 503", refused == 500, f"{refused} refused; others: {others[:5]}")
        print(f"INFO 500 refusals in {elapsed:.2f} s", flush=True)
        for ws in held:
            pong = await Session(ws).call("ping")
            if "result" not in pong:
                break
        else:
            pong = {"result": {}}
        check("the connections within the cap still answer", "result" in pong, json.dumps(pong))
        for ws in held:
            await ws.close()
        await asyncio.sleep(0.5)
        status = await refused_status(host.url)
        check("slots are released when connections close (101)", status == 101, str(status))
        # Connections that send nothing are closed (they would hold slots).
        idle = socket.create_connection(("127.0.0.1", host.port), timeout=30)
        idle.settimeout(30)
        started = time.monotonic()
        data = idle.recv(1)
        check("a connection that sends no request is closed within the header timeout",
              data == b"" and time.monotonic() - started < 20, f"{data!r} after {time.monotonic() - started:.1f} s")
        idle.close()
    finally:
        host.stop()


async def vanish(binary):
    host = Host(binary, ["--listen", "127.0.0.1:0", "--no-watch", "--isolation", "process"])
    try:
        async with ws_connect(host.url) as stay:
            a = await ws_connect(host.url)
            sa, ss = Session(a), Session(stay)
            await sa.initialize()
            await ss.initialize()
            before = host.children()
            start = await sa.call("collect/start", {"providerId": "com.contexthost.note"})
            worker_a = host.children() - before
            check("A's collection starts a worker", "result" in start and len(worker_a) >= 1, f"{json.dumps(start)[:200]} {worker_a}")
            start_s = await ss.call("collect/start", {"providerId": "com.contexthost.note"})
            # Connections whose clients grant the same permissions share their providers (HostCore).
            check("the staying connection uses the same Note worker (shared providers)",
                  "result" in start_s and host.children() - before == worker_a, str(host.children() - before))
            # A vanishes mid-collection: a request in flight, then the TCP connection drops
            # without a close frame.
            await a.send(json.dumps({"jsonrpc": "2.0", "id": 99, "method": "collect/query",
                                     "params": {"sessionId": start["result"]["sessionId"], "fieldId": "title", "query": "x"}}))
            a.transport.abort()
            await asyncio.sleep(1.0)
            check("the shared worker keeps running for the staying connection", worker_a <= host.children(), str(host.children()))
            submit = await ss.call("collect/submit", {"sessionId": start_s["result"]["sessionId"],
                                                      "values": {"title": "Still here", "body": "x"}})
            check("the staying connection still collects", submit.get("result", {}).get("outcome") == "item", json.dumps(submit)[:300])
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and host.children():
            await asyncio.sleep(0.1)
        check("no worker left once every client is gone", not host.children(), str(host.children()))
        check("the host is still running", host.proc.poll() is None, "")
    finally:
        host.stop()


async def timed_pings(url, count):
    """Seconds to send `count` pings on one connection and read every answer."""
    async with ws_connect(url) as ws:
        started = time.monotonic()
        for i in range(count):
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": i, "method": "ping"}))
        for _ in range(count):
            await asyncio.wait_for(ws.recv(), 30)
        return time.monotonic() - started


async def rate(binary):
    for args, name, expect in [
        (["--max-messages-per-second", "50"], "150 messages at 50/s (burst 50) take at least 1.8 s", lambda t: t >= 1.8),
        ([], "control: the same 150 messages at the default rate take under 1 s", lambda t: t < 1.0),
    ]:
        host = Host(binary, ["--listen", "127.0.0.1:0", "--no-watch", *args])
        try:
            elapsed = await timed_pings(host.url, 150)
            check(name, expect(elapsed), f"{elapsed:.2f} s")
        finally:
            host.stop()


class RawWebSocket:
    """A WebSocket client on a plain socket, so a test decides exactly when it reads."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET /rpc HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(1)
        if not head.startswith(b"HTTP/1.1 101"):
            raise RuntimeError("handshake refused: " + head.decode())
        self.buffer = b""
        self.close_code = None

    def frame(self, text):
        return self.frame_bytes(text.encode())

    def frame_bytes(self, data):
        mask = os.urandom(4)
        n = len(data)
        header = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big") if n < 65536
                                  else bytes([0x80 | 127]) + n.to_bytes(8, "big"))
        return header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data))

    def read_messages(self, limit, timeout):
        """Reads text messages until `limit` or EOF or `timeout`; returns (count, eof)."""
        self.sock.settimeout(timeout)
        count = 0
        try:
            while count < limit:
                while True:
                    if len(self.buffer) >= 2:
                        n = self.buffer[1] & 0x7F
                        offset = 2
                        if n == 126 and len(self.buffer) >= 4:
                            n, offset = int.from_bytes(self.buffer[2:4], "big"), 4
                        elif n == 127 and len(self.buffer) >= 10:
                            n, offset = int.from_bytes(self.buffer[2:10], "big"), 10
                        elif n >= 126:
                            n = None
                        if n is not None and len(self.buffer) >= offset + n:
                            opcode = self.buffer[0] & 0x0F
                            body = self.buffer[offset:offset + n]
                            self.buffer = self.buffer[offset + n:]
                            if opcode == 0x1:
                                count += 1
                            if opcode == 0x8:
                                self.close_code = int.from_bytes(body[:2], "big") if len(body) >= 2 else None
                                return count, True
                            break
                    chunk = self.sock.recv(1 << 20)
                    if not chunk:
                        return count, True
                    self.buffer += chunk
        except (socket.timeout, ConnectionResetError):
            return count, isinstance(sys.exc_info()[1], ConnectionResetError)
        return count, False


async def slow(binary):
    host = Host(binary, ["--listen", "127.0.0.1:0", "--no-watch", "--max-messages-per-second", "0", "--max-message-bytes", "1048576"])
    try:
        count = 4000
        request = {"jsonrpc": "2.0", "id": 1, "method": "providers/list", "params": {}}
        # Control: a client that reads gets every answer.
        reader = RawWebSocket(host.port)
        reader.sock.sendall(reader.frame(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"clientInfo": {"name": "ws-check"}}})))
        reader.read_messages(1, 30)
        got = 0
        for start in range(0, count, 500):
            reader.sock.sendall(b"".join(reader.frame(json.dumps(request)) for _ in range(500)))
            n, eof = reader.read_messages(500, 30)
            got += n
        check("control: a client that reads gets all 4000 answers", got == count, f"{got} answers")
        # A client that sends the same and never reads: dropped once 8 MiB of answers wait.
        peer = RawWebSocket(host.port)
        sleeper = RawWebSocket(host.port)
        sleeper.sock.sendall(sleeper.frame(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"clientInfo": {"name": "ws-check"}}})))
        sleeper.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        flood = 20000
        try:
            for _ in range(flood // 500):
                sleeper.sock.sendall(b"".join(sleeper.frame(json.dumps(request)) for _ in range(500)))
        except (BrokenPipeError, ConnectionResetError):
            pass
        dropped = host.wait_for(r"does not read its answers", 60)
        check("a client that does not read is dropped (log line)", dropped is not None, "\n".join(host.lines[-5:]))
        n, eof = sleeper.read_messages(flood + 1, 30)
        check("… its connection ends before all its answers", eof and n < flood, f"{n} answers, eof={eof}")
        peer.sock.sendall(peer.frame(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"})))
        n, eof = peer.read_messages(1, 30)
        check("the other connection is unaffected", n == 1 and not eof, f"{n} {eof}")
    finally:
        host.stop()


def free_port():
    """A loopback port nothing listens on right now (for a child that cannot bind port 0 and say
    which port it got)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Nginx:
    """nginx as the TLS-terminating reverse proxy of docs/web.md ("TLS"), in front of a listener
    on loopback: a throwaway test CA (Tests/Fixtures/https/make-test-ca.sh) signs its certificate
    for localhost and 127.0.0.1; config, pid, logs and temp files in a temporary folder; one
    foreground process (`daemon off`, `master_process off`) that `stop()` ends."""

    class PortTaken(Exception):
        """The chosen port was taken before nginx could bind it (pick another and retry)."""

    def __init__(self, upstream_port, port):
        self.port = port
        nginx = shutil.which("nginx") or next((p for p in ["/usr/sbin/nginx", "/usr/local/sbin/nginx"] if os.access(p, os.X_OK)), None)
        if nginx is None:
            raise RuntimeError("nginx not found: the TLS reverse-proxy test needs it (Debian/Ubuntu: apt-get install nginx; .ci/run installs it)")
        self.dir = tempfile.mkdtemp(prefix="ws-tlsproxy-")
        self.proc = None
        try:
            made = subprocess.run(["/bin/bash", os.path.join(ROOT, "Tests/Fixtures/https/make-test-ca.sh"), self.dir + "/ca"],
                                  capture_output=True, timeout=60)
            if made.returncode != 0:
                raise RuntimeError(f"make-test-ca.sh failed ({made.returncode}; is openssl installed?): {made.stderr.decode()[-500:]}")
            self.ca = self.dir + "/ca/ca.pem"
            self._start(nginx, upstream_port)
            if not self._wait_listening(20):
                log = self.log()
                stop_child(self.proc)
                if "Address already in use" in log:
                    raise Nginx.PortTaken(log[-500:])
                raise RuntimeError("nginx did not start listening within 20 s; its error log:\n" + log[-1500:])
        except BaseException:
            self.stop()
            raise

    def _start(self, nginx, upstream_port):
        d = self.dir
        for sub in ["body", "proxy", "fastcgi", "uwsgi", "scgi"]:
            os.makedirs(f"{d}/tmp/{sub}", exist_ok=True)
        user = ""
        if os.geteuid() == 0:
            # As root nginx would switch to its default unprivileged user, which cannot read the
            # key or write the temp folders here: stay the current user.
            import grp
            import pwd
            user = f"user {pwd.getpwuid(os.geteuid()).pw_name} {grp.getgrgid(os.getegid()).gr_name};"
        conf = f"""{user}
daemon off;
master_process off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log info;
events {{ worker_connections 256; }}
http {{
    access_log {d}/access.log;
    client_body_temp_path {d}/tmp/body;
    proxy_temp_path {d}/tmp/proxy;
    fastcgi_temp_path {d}/tmp/fastcgi;
    uwsgi_temp_path {d}/tmp/uwsgi;
    scgi_temp_path {d}/tmp/scgi;
    server {{
        listen 127.0.0.1:{self.port} ssl;
        server_name localhost;
        ssl_certificate     {d}/ca/server.pem;
        ssl_certificate_key {d}/ca/server.key;
        location /rpc {{
            proxy_pass http://127.0.0.1:{upstream_port};
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection "upgrade";
            proxy_set_header Host $host;
            proxy_read_timeout 120s;
        }}
    }}
}}
"""
        with open(d + "/nginx.conf", "w") as f:
            f.write(conf)
        self.proc = subprocess.Popen([nginx, "-c", d + "/nginx.conf", "-p", d + "/", "-e", d + "/error.log"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(d + "/stderr.log", "wb"))

    def _wait_listening(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return True
            except OSError:
                time.sleep(0.05)
        return False

    def log(self):
        text = ""
        for name in ["error.log", "stderr.log"]:
            try:
                with open(f"{self.dir}/{name}", errors="replace") as f:
                    text += f.read()
            except FileNotFoundError:
                pass
        return text

    def stop(self):
        if self.proc is not None:
            stop_child(self.proc)
        shutil.rmtree(self.dir, ignore_errors=True)


async def tlsproxy(binary):
    """docs/web.md "TLS": wss:// through nginx in front of a loopback listener, set up as the
    page documents (Host $host checked against --allow-host, the page's https origin allowed)."""
    host = proxy = None
    try:
        # The listener needs the proxy's port (the page's origin, --allow-origin) and nginx the
        # listener's: the proxy's port is chosen first; if something takes it meanwhile, again.
        for attempt in range(3):
            port = free_port()
            host = Host(binary, ["--listen", "127.0.0.1:0", "--no-watch", "--allow-host", "localhost",
                                 "--allow-origin", f"https://localhost:{port}", "--no-own-origin"])
            try:
                proxy = Nginx(host.port, port)
                break
            except Nginx.PortTaken:
                host.stop()
                host = None
                if attempt == 2:
                    raise
        page = f"https://localhost:{proxy.port}"
        url = f"wss://localhost:{proxy.port}/rpc"
        # Trusts the test CA only (with a cafile, create_default_context loads no system roots).
        trusted = ssl.create_default_context(cafile=proxy.ca)

        async with ws_connect(url, ssl=trusted) as ws:
            s = Session(ws)
            init = await s.initialize()
            check("through nginx (wss://, the test CA trusted): initialize",
                  init.get("result", {}).get("protocolVersion") == 2, json.dumps(init)[:300])
            listed = await s.call("providers/list")
            note = [p for p in listed.get("result", {}).get("providers", []) if p["id"] == "com.contexthost.note"]
            check("through nginx: providers/list has the Note provider", len(note) == 1, json.dumps(listed)[:300])
            check("the TLS session is verified TLS 1.2+ against the test CA",
                  ws.transport.get_extra_info("ssl_object").version() in ("TLSv1.2", "TLSv1.3"),
                  str(ws.transport.get_extra_info("ssl_object").version()))
        status = await refused_status(url, ssl=trusted, origin=page)
        check("control: the page's origin (--allow-origin https://localhost:PORT) connects through nginx (101)", status == 101, str(status))
        status, body = await refused_response(url, ssl=trusted, origin="https://evil.example")
        check("a foreign Origin through nginx refused with 403 (by the listener)",
              status == 403 and b"is not allowed" in body, f"{status} {body[:200]!r}")
        # --no-own-origin: the listener's own origin (http:// + Host) would be a plain-HTTP page
        # on the proxy's name. (The rule itself, on and off, is AccessPolicyTests'.)
        status, body = await refused_response(url, ssl=trusted, origin="http://localhost")
        check("with --no-own-origin, Origin http://localhost (a plain-HTTP page on the proxy's name) refused with 403",
              status == 403 and b"is not allowed" in body, f"{status} {body[:200]!r}")
        status, text = raw_request(proxy.port, ["Host: localhost"], tls=trusted)
        check("control: a raw upgrade through nginx with Host localhost (--allow-host) upgrades (101)", status == 101, text[:200])
        status, text = raw_request(proxy.port, ["Host: evil.example"], tls=trusted)
        check("a Host not in --allow-host through nginx refused with 403 (DNS rebinding)",
              status == 403 and "rebinding" in text, text[:300])

        # Control: the same wss:// connection trusting the system's roots only fails verification.
        try:
            async with ws_connect(url, ssl=ssl.create_default_context()):
                outcome = "connected"
        except ssl.SSLCertVerificationError as error:
            outcome = f"verify_code {error.verify_code}: {error.verify_message}"
        print(f"INFO wss:// with the system's CAs: {outcome}", flush=True)
        check("control: wss:// with the system's CAs fails certificate verification (unable to get local issuer certificate)",
              outcome.startswith("verify_code 20:"), outcome)
        # Control: without the proxy the listener speaks plain ws:// and works; TLS to it fails.
        async with ws_connect(host.url) as ws:
            init = await Session(ws).initialize()
            check("control: a direct ws:// connection to the listener (no proxy) initializes",
                  host.url.startswith("ws://127.0.0.1:") and init.get("result", {}).get("protocolVersion") == 2,
                  f"{host.url} {json.dumps(init)[:200]}")
        try:
            raw_request(host.port, [f"Host: 127.0.0.1:{host.port}"], tls=trusted)
            outcome = "TLS handshake succeeded"
        except ssl.SSLError as error:
            outcome = f"SSLError {error.reason}"
        except OSError as error:
            outcome = repr(error)
        print(f"INFO TLS straight to the listener: {outcome}", flush=True)
        check("control: TLS straight to the listener's port fails (the listener speaks no TLS; nginx adds it)",
              outcome in ("SSLError UNEXPECTED_EOF_WHILE_READING", "SSLError WRONG_VERSION_NUMBER"), outcome)
    finally:
        if proxy is not None:
            proxy.stop()
            check("nginx stopped", proxy.proc is None or proxy.proc.poll() is not None, "")
        if host is not None:
            host.stop()


SCENARIOS = {f.__name__: f for f in [flow, composers, origin, rebinding, token, oversize, many, vanish, rate, slow, tlsproxy]}


def run_scenario(scenarios, program):
    """The command line of a scenario script, `program SCENARIO HOST_BINARY`: runs that scenario
    (an exception is a failed check) and exits 1 if a check failed, else 0."""
    if len(sys.argv) != 3 or sys.argv[1] not in scenarios:
        print(f"usage: {program} {{{','.join(scenarios)}}} HOST_BINARY", file=sys.stderr)
        sys.exit(2)
    try:
        asyncio.run(scenarios[sys.argv[1]](sys.argv[2]))
    except Exception as error:  # noqa: BLE001 - reported as a failed check
        check(f"{sys.argv[1]} ran to the end", False, repr(error))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    run_scenario(SCENARIOS, "ws_check.py")

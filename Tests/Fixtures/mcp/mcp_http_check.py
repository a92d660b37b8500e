"""`context-host mcp --http` against hostile requests: each scenario starts the real binary and
sends raw HTTP requests (stdlib http.client, so every header, `Host` included, is as written).
Each refusal is asserted with its specific status, and each has a control: the same request
without the trigger succeeds. The checks of the MCP protocol itself run through the official SDK
(mcp_check.py --http); the token scenario also drives the SDK client with the token.

Usage: mcp_http_check.py SCENARIO BINARY (from the repository root). One line per check, PASS or
FAIL; the exit status is 0 only when every check passed. Run by
Tests/IntegrationTests/MCPHTTPTests.swift.
"""

import contextlib
import http.client
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "web"))
from ws_check import ROOT, Host, check  # noqa: E402 - the `serve --listen` tests' helpers

import ws_check  # noqa: E402

HOST_ARGS = ["--manifests", os.path.join(ROOT, "manifests"), "--no-installed", "--no-state"]
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "check", "version": "1"}}}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}


def start(address="127.0.0.1:0", extra=()):
    return Host(sys.argv[2], ["--http", address, *HOST_ARGS, *extra], command="mcp", scheme="http")


class Answer:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def header(self, name):
        return self.headers.get(name.lower())

    def json(self):
        """The JSON-RPC message: the body, or the last `data:` of an SSE body."""
        text = self.body.decode("utf-8", "replace")
        if (self.header("content-type") or "").startswith("text/event-stream"):
            data = [line[5:].strip() for line in text.split("\n") if line.startswith("data:")]
            return json.loads(data[-1]) if data else None
        return json.loads(text) if text else None

    def __repr__(self):
        return f"{self.status} {self.headers} {self.body[:300]!r}"


@contextlib.contextmanager
def serving(address="127.0.0.1:0", extra=()):
    """`start`'s host for a `with` block, stopped when the block ends, however it ends."""
    host = start(address, extra)
    try:
        yield host
    finally:
        host.stop()


def send(port, method="POST", body=None, headers=None, read=True):
    """One request on a new connection; `headers` values None are left out (Host too)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.putrequest(method, "/mcp", skip_host=True, skip_accept_encoding=True)
    fields = {"Host": f"127.0.0.1:{port}", "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    fields.update(headers or {})
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    for name, value in fields.items():
        if value is not None:
            connection.putheader(name, value)
    if data is not None:
        connection.putheader("Content-Length", str(len(data)))
    connection.endheaders(data)
    response = connection.getresponse()
    headers = {name.lower(): value for name, value in response.getheaders()}
    payload = response.read() if read else b""
    connection.close()
    return Answer(response.status, headers, payload)


def no_cors(answer):
    return not any(name.startswith("access-control-") for name in answer.headers)


async def origin(binary):
    with serving() as host:
        p = host.port
        evil = send(p, body=INIT, headers={"Origin": "http://evil.example"})
        check("foreign Origin: 403", evil.status == 403, evil)
        check("foreign Origin: no session made", evil.header("mcp-session-id") is None, evil)
        null = send(p, body=INIT, headers={"Origin": "null"})
        check("Origin null: 403", null.status == 403, null)
        twice = send(p, body=LIST, headers={"Origin": "http://evil.example", "Mcp-Session-Id": "0" * 32})
        check("foreign Origin refused before the session is looked up (403, not 404)", twice.status == 403, twice)
        control = send(p, body=INIT)
        check("control: no Origin (a program) initializes", control.status == 200 and control.header("mcp-session-id"), control)
        own = send(p, body=INIT, headers={"Origin": f"http://127.0.0.1:{p}"})
        check("control: the listener's own origin initializes", own.status == 200 and own.json()["result"]["protocolVersion"] == "2025-11-25", own)
        check("no CORS headers on refusals or answers", all(no_cors(a) for a in (evil, null, control, own)), [evil.headers, own.headers])
    with serving(extra=["--allow-origin", "http://localhost:5173"]) as allowed:
        answer = send(allowed.port, body=INIT, headers={"Origin": "http://localhost:5173"})
        check("control: an --allow-origin origin initializes", answer.status == 200, answer)


async def rebinding(binary):
    with serving() as host:
        p = host.port
        evil = send(p, body=INIT, headers={"Host": f"attacker.example:{p}"})
        check("rebinding Host: 403", evil.status == 403 and b"DNS rebinding" in evil.body, evil)
        missing = send(p, body=INIT, headers={"Host": None})
        check("no Host: 400", missing.status == 400, missing)
        control = send(p, body=INIT, headers={"Host": f"localhost:{p}"})
        check("control: Host localhost initializes", control.status == 200 and control.header("mcp-session-id"), control)
        control = send(p, body=INIT)
        check("control: Host 127.0.0.1 initializes", control.status == 200, control)


async def token(binary):
    with serving("0.0.0.0:0") as host:
        p = host.port
        line = host.wait_for(r"token for this listener", 10)
        match = re.search(r"\): ([0-9a-f]{64})$", line or "")
        check("a non-loopback bind prints a token once", match is not None, line)
        secret = match.group(1)
        missing = send(p, body=INIT)
        check("no token: 401 with WWW-Authenticate", missing.status == 401 and missing.header("www-authenticate", ), missing)
        wrong = send(p, body=INIT, headers={"Authorization": "Bearer " + "0" * 64})
        check("wrong token: 401", wrong.status == 401, wrong)
        check("the refusal does not echo the token sent", b"0" * 64 not in wrong.body, wrong)
        right = send(p, body=INIT, headers={"Authorization": "Bearer " + secret})
        check("control: the right token initializes", right.status == 200 and right.header("mcp-session-id"), right)
        session = right.header("mcp-session-id")
        stolen = send(p, body=LIST, headers={"Mcp-Session-Id": session})
        check("a session id is no token: 401 without the token", stolen.status == 401, stolen)
        check("the token is printed once", sum(1 for l in host.lines if secret in l) == 1, host.lines)

        # The official SDK client, with the token in its HTTP client's headers.
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        async with create_mcp_http_client(headers={"Authorization": "Bearer " + secret}) as http:
            async with Client(streamable_http_client(f"http://127.0.0.1:{p}/mcp", http_client=http), mode="legacy") as client:
                result = await client.call_tool("device_info_make", {})
                check("the SDK client with the token calls a tool", not result.is_error, result)


async def session(binary):
    with serving() as host:
        p = host.port
        init = send(p, body=INIT)
        sid = init.header("mcp-session-id")
        check("initialize answers an Mcp-Session-Id of 32 hex digits", init.status == 200 and re.fullmatch(r"[0-9a-f]{32}", sid or ""), init)
        initialized = send(p, body={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers={"Mcp-Session-Id": sid})
        check("a notification: 202", initialized.status == 202 and initialized.body == b"", initialized)
        unknown = send(p, body=LIST, headers={"Mcp-Session-Id": "f" * 32})
        check("unknown session id: 404", unknown.status == 404 and unknown.json()["error"]["code"] == -32001, unknown)
        missing = send(p, body=LIST)
        check("no session id after initialize: 400", missing.status == 400, missing)
        control = send(p, body=LIST, headers={"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
        tools = (control.json() or {}).get("result", {}).get("tools", [])
        check("control: the session's id lists the tools", control.status == 200 and any(t["name"] == "note_collect" for t in tools), control)
        bad_version = send(p, body=LIST, headers={"Mcp-Session-Id": sid, "MCP-Protocol-Version": "1900-01-01"})
        check("unsupported MCP-Protocol-Version: 400", bad_version.status == 400, bad_version)
        html = send(p, body=LIST, headers={"Mcp-Session-Id": sid, "Accept": "text/html"})
        check("a POST that does not accept JSON and SSE: 406", html.status == 406, html)
        form = send(p, body=b"a=1", headers={"Mcp-Session-Id": sid, "Content-Type": "application/x-www-form-urlencoded"})
        check("a form-encoded POST (a cross-site form): 415", form.status == 415, form)
        stream = send(p, method="GET", headers={"Mcp-Session-Id": sid, "Accept": "text/event-stream", "Content-Type": None}, read=False)
        check("GET opens the session's SSE stream", stream.status == 200 and stream.header("content-type") == "text/event-stream", stream)
        gone = send(p, method="DELETE", headers={"Mcp-Session-Id": sid, "Content-Type": None})
        check("DELETE ends the session: 204", gone.status == 204, gone)
        after = send(p, body=LIST, headers={"Mcp-Session-Id": sid})
        check("the ended session's id: 404", after.status == 404, after)
        again = send(p, method="DELETE", headers={"Mcp-Session-Id": sid, "Content-Type": None})
        check("DELETE of an ended session: 404", again.status == 404, again)


async def oversize(binary):
    limit = 65536
    with serving(extra=["--max-message-bytes", str(limit)]) as host:
        p = host.port
        sid = send(p, body=INIT).header("mcp-session-id")

        def call(size):
            text = "x" * size
            return {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                    "params": {"name": "note_collect", "arguments": {"title": "Big", "body": text}}}
        big = json.dumps(call(limit)).encode()
        refused = send(p, body=big, headers={"Mcp-Session-Id": sid})
        check(f"a body over --max-message-bytes ({len(big)} > {limit}): 413", refused.status == 413, refused)
        # Chunked (no Content-Length): refused while reading.
        connection = http.client.HTTPConnection("127.0.0.1", p, timeout=60)
        connection.request("POST", "/mcp", body=iter([big[i:i + 8192] for i in range(0, len(big), 8192)]),
                           headers={"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                                    "Mcp-Session-Id": sid, "Transfer-Encoding": "chunked"}, encode_chunked=True)
        chunked = connection.getresponse()
        check("a chunked body over the limit: 413", chunked.status == 413, chunked.status)
        connection.close()
        small = json.dumps(call(10000)).encode()
        control = send(p, body=small, headers={"Mcp-Session-Id": sid})
        result = (control.json() or {}).get("result", {})
        check("control: the same call under the limit collects the note", control.status == 200 and not result.get("isError")
              and result.get("structuredContent", {}).get("displayName") == "Big", control)


async def stateless(binary):
    with serving() as host:
        p = host.port
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
        body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "device_info_make", "arguments": {}, "_meta": meta}}
        good = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "device_info_make"}
        wrong = send(p, body=body, headers={**good, "Mcp-Name": "note_collect"})
        check("2026-07-28: Mcp-Name unlike the body: 400 -32020", wrong.status == 400 and wrong.json()["error"]["code"] == -32020, wrong)
        no_method = send(p, body=body, headers={**good, "Mcp-Method": None})
        check("2026-07-28: no Mcp-Method: 400 -32020", no_method.status == 400 and no_method.json()["error"]["code"] == -32020, no_method)
        version = send(p, body=body, headers={**good, "MCP-Protocol-Version": "2099-01-01"})
        check("an unknown protocol version: 400 -32022 with the supported ones", version.status == 400
              and "2026-07-28" in version.json()["error"]["data"]["supported"], version)
        control = send(p, body=body, headers=good)
        answer = control.json() or {}
        check("control: matching headers call the tool, the client's id kept", control.status == 200 and answer.get("id") == 7
              and answer["result"]["resultType"] == "complete" and control.header("mcp-session-id") is None, control)
        get = send(p, method="GET", headers={"MCP-Protocol-Version": "2026-07-28", "Accept": "text/event-stream", "Content-Type": None})
        check("2026-07-28 has no GET stream: 405", get.status == 405, get)


SCENARIOS = {f.__name__: f for f in [origin, rebinding, token, session, oversize, stateless]}

if __name__ == "__main__":
    ws_check.run_scenario(SCENARIOS, "mcp_http_check.py")

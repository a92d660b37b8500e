#!/usr/bin/env python3
"""A ContextHost client in plain Python (standard library only), driven by docs/openrpc.json.

The OpenRPC document names every method and its params, so this client builds one Python method
per protocol method (``providers/list`` -> ``client.providers_list()``, ``items/preview`` ->
``client.items_preview(item=...)``) and checks the required params before sending. Notifications
from the host (``providers/changed``, ``$/progress``, ``log/message``) are collected in
``client.notifications``.

    python3 Examples/python/contexthost.py .build/debug/context-host manifests

runs a Note round trip: list the providers, collect a note (first with a missing field, which
the provider answers with a field error, then valid), preview it, show its detail and encode it.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OPENRPC = os.path.join(HERE, "..", "..", "docs", "openrpc.json")


class HostError(Exception):
    """A JSON-RPC error answered by the host: ``code``, ``message`` and ``data``."""

    def __init__(self, error):
        super().__init__(f"[{error.get('code')}] {error.get('message')}")
        self.code = error.get("code")
        self.data = error.get("data")


class ContextHost:
    """A ``context-host serve`` child process, one request at a time, with methods from OpenRPC."""

    def __init__(self, executable, args=("serve",), openrpc_path=DEFAULT_OPENRPC):
        with open(openrpc_path, encoding="utf-8") as f:
            self.spec = json.load(f)
        self.methods = {m["name"]: m for m in self.spec["methods"]}
        self.notifications = []
        self._next_id = 1
        self._process = subprocess.Popen(
            [executable, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def __getattr__(self, name):
        method = name.replace("__", "$/").replace("_", "/", 1) if "_" in name else name
        if method not in self.methods:
            raise AttributeError(f"{name}: the protocol has no method {method!r}")
        return lambda **params: self.call(method, **params)

    def call(self, method, **params):
        """Sends ``method`` with ``params`` and returns its result (or raises HostError)."""
        spec = self.methods.get(method)
        if spec is None:
            raise ValueError(f"unknown method {method!r}; see docs/openrpc.json")
        missing = [p["name"] for p in spec.get("params", []) if p.get("required") and p["name"] not in params]
        if missing:
            raise ValueError(f"{method}: missing required params {missing}")
        request_id = self._next_id
        self._next_id += 1
        self._write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        while True:
            message = self._read()
            if "id" not in message or message.get("method"):
                self.notifications.append(message)
                continue
            if message["id"] != request_id:
                continue
            if "error" in message:
                raise HostError(message["error"])
            return message.get("result")

    def notify(self, method, **params):
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def close(self):
        try:
            self.call("shutdown")
            self.notify("exit")
        finally:
            self._process.stdin.close()
            self._process.wait(timeout=10)

    def _write(self, message):
        self._process.stdin.write(json.dumps(message).encode() + b"\n")
        self._process.stdin.flush()

    def _read(self):
        line = self._process.stdout.readline()
        if not line:
            raise ConnectionError(f"context-host exited (status {self._process.wait()})")
        return json.loads(line)


def note_round_trip(executable, manifests):
    host = ContextHost(executable, ("serve", "--manifests", manifests, "--no-installed", "--no-state"))
    try:
        info = host.initialize(clientInfo={"name": "python-example"}, protocolVersions=[2, 1], locale="en-US")
        print("protocol version", info["protocolVersion"])
        providers = host.call("providers/list")["providers"]
        print("providers:", ", ".join(p["id"] for p in providers if p.get("available")))
        session = host.call("collect/start", providerId="com.contexthost.note")
        outcome = host.call("collect/submit", sessionId=session["sessionId"], values={"title": "Groceries"})
        print("first submit:", outcome["outcome"], outcome.get("fieldErrors"))
        outcome = host.call("collect/submit", sessionId=session["sessionId"],
                            values={"title": "Groceries", "body": "- milk\n- bread"})
        item = outcome["item"]
        chip = host.call("items/preview", item=item)
        detail = host.call("items/detail", item=item)
        encoded = host.call("items/encode", item=item)
        print("chip:", chip["fallbackText"])
        print("detail:", detail["title"], "-", len(detail["blocks"]), "blocks")
        print("encoded:", encoded["representation"], len(encoded["data"]), "base64 chars")
        return {"chip": chip, "detail": detail, "encoded": encoded}
    finally:
        host.close()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: contexthost.py PATH/TO/context-host MANIFEST_FOLDER")
    note_round_trip(sys.argv[1], sys.argv[2])

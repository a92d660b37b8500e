"""A minimal JSON-RPC 2.0 client for servers that speak newline-delimited JSON on stdin/stdout.

Used by the comparison harness for the few one-off exchanges that rpcload cannot do: building the
`items/preview` template from a real attached note (make_preview_note.py) and measuring the size of
one response per workload (probe_sizes.py). It is not used for timing.
"""
import json
import os
import select
import subprocess
import time


class RPCError(Exception):
    """A JSON-RPC error response, or a server that stopped answering."""


class StdioClient:
    """Spawns `command` and exchanges one request at a time with it."""

    def __init__(self, command, timeout=10.0, stderr=subprocess.DEVNULL):
        self.command = command
        self.timeout = timeout
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
        self.buffer = b""
        self.next_id = 1

    def send_line(self, line):
        """Writes one raw line (bytes or str, without the newline)."""
        if isinstance(line, str):
            line = line.encode()
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def read_line(self):
        """Returns the next line from the server (bytes, without the newline)."""
        deadline = time.monotonic() + self.timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RPCError(f"{self.command[0]}: no answer within {self.timeout} s")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise RPCError(f"{self.command[0]}: closed stdout (exit status {self.proc.wait()})")
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def read_response(self, request_id):
        """Reads lines until the response with `request_id`; skips server notifications and requests."""
        while True:
            raw = self.read_line()
            message = json.loads(raw)
            if message.get("id") == request_id and "method" not in message:
                return raw, message

    def exchange_line(self, line):
        """Sends a template line (its `id` replaced by a fresh one) and returns (raw response, decoded)."""
        request = json.loads(line)
        if "id" not in request:
            self.send_line(line.rstrip("\n"))
            return None, None
        request["id"] = self.next_id
        self.next_id += 1
        self.send_line(json.dumps(request, separators=(",", ":"), ensure_ascii=False))
        return self.read_response(request["id"])

    def call(self, method, params=None):
        """Sends a request and returns its `result`; raises RPCError for an error response."""
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        self.next_id += 1
        if params is not None:
            request["params"] = params
        self.send_line(json.dumps(request, separators=(",", ":"), ensure_ascii=False))
        _, message = self.read_response(request["id"])
        if "error" in message:
            raise RPCError(f"{method}: {json.dumps(message['error'])}")
        return message.get("result")

    def close(self):
        """Closes stdin and waits for the server to exit (kills it after the timeout)."""
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            return self.proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

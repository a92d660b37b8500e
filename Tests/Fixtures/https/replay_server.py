#!/usr/bin/env python3
"""A loopback HTTPS server for the egress and quote tests (standard library only).

    replay_server.py --cert server.pem --key server.key --recordings DIR --log FILE [--api-key-file F] [--port-file F]

Prints the port it listens on (127.0.0.1, an ephemeral port) as the first line of stdout (and
to --port-file, written atomically), then serves until killed. Every request is appended to --log as one JSON line
{method, path, headers}, so a test can check what the host really sent (the injected secret).

Routes (recorded responses from DIR, plus failure modes):
  /stooq/q/d/l/?s=SYM&i=d           DIR/stooq-SYM.csv (Stooq's daily-history CSV download)
  /av/query?function=TIME_SERIES_DAILY&symbol=SYM&apikey=K
                                    DIR/av-SYM.json when K matches --api-key-file, else the
                                    service's own error JSON (HTTP 200, "Error Message")
  /echo                             the request line and headers back, as text
  /redirect?to=URL                  302 to URL
  /status/N[/…]                     status N (429 and 503 with Retry-After: 1)
  /flaky/NAME/N[/…]                 503 for the first N requests to NAME, then the ACME recording
  /slow/MS                          waits MS milliseconds, then 200
  /huge/BYTES                       BYTES bytes of 'x'
"""
import argparse
import json
import os
import socket
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

counters = {}
lock = threading.Lock()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--recordings", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--api-key-file")
    parser.add_argument("--port-file", help="also write the port to this file (atomically)")
    args = parser.parse_args()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def send(self, status, body, content_type="text/plain", extra=()):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in extra:
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def recording(self, name):
            path = os.path.join(args.recordings, name)
            if not os.path.isfile(path):
                return None
            with open(path, "rb") as handle:
                return handle.read()

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            query = urllib.parse.parse_qs(url.query)
            with lock:
                with open(args.log, "a") as log:
                    log.write(json.dumps({"method": self.command, "path": self.path, "headers": dict(self.headers)}) + "\n")
            parts = [p for p in url.path.split("/") if p]
            if url.path.startswith("/stooq/q/d/l"):
                body = self.recording("stooq-%s.csv" % query.get("s", [""])[0].lower())
                if body is None:
                    return self.send(200, b"No data")
                return self.send(200, body, "text/csv")
            if url.path == "/av/query":
                expected = None
                if args.api_key_file:
                    with open(args.api_key_file) as handle:
                        expected = handle.read().strip()
                if query.get("apikey", [""])[0] != expected:
                    return self.send(200, json.dumps({"Error Message": "the parameter apikey is invalid or missing."}).encode(), "application/json")
                body = self.recording("av-%s.json" % query.get("symbol", [""])[0].upper())
                if body is None:
                    return self.send(200, json.dumps({"Error Message": "Invalid API call."}).encode(), "application/json")
                return self.send(200, body, "application/json")
            if url.path == "/echo":
                text = "%s %s\n" % (self.command, self.path) + "".join("%s: %s\n" % kv for kv in self.headers.items())
                return self.send(200, text.encode())
            if url.path == "/redirect":
                return self.send(302, b"", extra=[("Location", query.get("to", ["/"])[0])])
            if len(parts) >= 2 and parts[0] == "status":
                status = int(parts[1])
                extra = [("Retry-After", "1")] if status in (429, 503) else []
                return self.send(status, b"status %d" % status, extra=extra)
            if len(parts) >= 3 and parts[0] == "flaky":
                with lock:
                    counters[parts[1]] = counters.get(parts[1], 0) + 1
                    count = counters[parts[1]]
                if count <= int(parts[2]):
                    return self.send(503, b"busy", extra=[("Retry-After", "0")])
                return self.send(200, self.recording("stooq-acme.us.csv") or b"", "text/csv")
            if len(parts) == 2 and parts[0] == "slow":
                time.sleep(int(parts[1]) / 1000)
                return self.send(200, b"slow")
            if len(parts) == 2 and parts[0] == "huge":
                return self.send(200, b"x" * int(parts[1]))
            return self.send(404, b"not found")

        do_HEAD = do_GET
        do_POST = do_GET

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)

    class TLSServer(ThreadingHTTPServer):
        # The TLS handshake runs in each connection's own thread, with a time limit: wrapping
        # the listening socket would do it inside accept(), where one client that connects and
        # says nothing (a raw socket test, a half-open connection) stalls every other client.
        daemon_threads = True

        def finish_request(self, request, client_address):
            request.settimeout(10)
            # Headers and body go out as separate writes: with Nagle's algorithm on, the body
            # waits for the client's delayed ACK of the headers (~40 ms a response on Linux),
            # which made every fetch of egress-bench take ~44 ms. Servers set TCP_NODELAY.
            request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            try:
                tls = context.wrap_socket(request, server_side=True)
            except (OSError, ssl.SSLError):
                return
            try:
                self.RequestHandlerClass(tls, client_address, self)
            finally:
                tls.close()

    server = TLSServer(("127.0.0.1", 0), Handler)
    port = server.server_address[1]
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as handle:
            handle.write("%d\n" % port)
        os.rename(args.port_file + ".tmp", args.port_file)
    print(port, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Makes calendars and events on a test CalDAV server over HTTPS, as another client would
(standard library only), for the CalDAV-through-the-broker tests.

    dav_ops.py --base https://localhost:PORT --ca ca.pem --user alice --password-file F OPS.json

OPS.json is a list of {"method", "path", "body"?, "contentType"?, "expect": [statuses]}. Each is
sent with Basic auth; the first answer whose status is not in "expect" ends the run with exit
status 1 and a message naming the request. The password is read from a file, never argv.
"""
import argparse
import base64
import http.client
import json
import ssl
import sys
import urllib.parse


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--password-file", required=True)
    parser.add_argument("ops")
    args = parser.parse_args()
    with open(args.password_file) as handle:
        password = handle.read()
    with open(args.ops) as handle:
        ops = json.load(handle)
    base = urllib.parse.urlsplit(args.base)
    context = ssl.create_default_context(cafile=args.ca)
    auth = "Basic " + base64.b64encode(("%s:%s" % (args.user, password)).encode()).decode()
    for op in ops:
        connection = http.client.HTTPSConnection(base.hostname, base.port, context=context, timeout=20)
        headers = {"Authorization": auth}
        body = op.get("body")
        if body is not None:
            body = body.encode()
            headers["Content-Type"] = op.get("contentType", "application/xml")
        connection.request(op["method"], op["path"], body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        connection.close()
        if response.status not in op["expect"]:
            print("%s %s answered %d (expected %s)" % (op["method"], op["path"], response.status, op["expect"]), file=sys.stderr)
            sys.exit(1)


if __name__ == "__main__":
    main()

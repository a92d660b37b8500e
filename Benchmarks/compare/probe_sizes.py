#!/usr/bin/env python3
"""Sends one request of a template to a server and prints the sizes involved, for the table notes.

    probe_sizes.py LABEL TEMPLATE PREAMBLE -- COMMAND [ARGS...]

Runs the preamble like rpcload does (requests awaited, notifications sent), then the template's
first line, and prints one key=value line:
    probe=LABEL tmpl=NAME request_b=N response_b=N result_b=N status=ok|error
`response_b` is the whole response line with its newline; `result_b` is the compact JSON of its
`result` member. Exit status 1 when the server answers an error (printed as `error=...`).
"""
import json
import os
import sys

from stdio_client import StdioClient, RPCError


def main():
    if "--" not in sys.argv or sys.argv.index("--") != 4:
        sys.exit("usage: probe_sizes.py LABEL TEMPLATE PREAMBLE -- COMMAND [ARGS...]")
    label, template, preamble = sys.argv[1:4]
    command = sys.argv[5:]
    client = StdioClient(command)
    try:
        with open(preamble, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    client.exchange_line(line)
        with open(template, encoding="utf-8") as f:
            line = next(l for l in f if l.strip())
        request_bytes = len(line.rstrip("\n").encode()) + 1
        raw, message = client.exchange_line(line)
    except (RPCError, OSError, ValueError) as error:
        print(f"probe={label} tmpl={os.path.basename(template)} status=error error={str(error).replace(' ', '_')}")
        return 1
    finally:
        client.close()
    fields = f"probe={label} tmpl={os.path.basename(template)} request_b={request_bytes} response_b={len(raw) + 1}"
    if "result" in message:
        result = json.dumps(message["result"], separators=(",", ":"), ensure_ascii=False).encode()
        print(f"{fields} result_b={len(result)} status=ok")
        return 0
    print(f"{fields} status=error error={json.dumps(message.get('error'), separators=(',', ':')).replace(' ', '_')}")
    return 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Writes Benchmarks/requests/preview-note.jsonl from a note attached through a real host.

    python3 Benchmarks/compare/make_preview_note.py .build/release/context-host manifests Benchmarks/requests/preview-note.jsonl

It runs the host (`--isolation in-process --no-state`), opens a composer, collects a Note through
the form (`collect/start` with `composerId`, `collect/submit` with a title and a ~1 KB Markdown
body) and writes one `items/preview` request whose `params.item` is the item exactly as the host
answered it. The template is committed; rerun this only to change the note.
"""
import json
import sys

from stdio_client import StdioClient

TITLE = "Checkout latency review, 19 Nov"
BODY = """\
## Attendees
Priya (payments), Tomás (platform), Mei (SRE), Jonas (mobile).

## What we saw
- p99 of `POST /checkout` went from **420 ms to 1.9 s** after Tuesday's deploy.
- Only card payments are slow; wallet and invoice checkouts are unchanged.
- The fraud-score call now retries 3 times with no backoff when the scorer returns 503.

## Decisions
1. Roll back the retry change today; keep the new timeout of 800 ms.
2. Add a circuit breaker around the fraud scorer (Tomás, by Friday).
3. Alert on p99 > 1 s for 10 minutes instead of p95 > 2 s.

## Open questions
- Do we fail open or closed when the scorer is down? Legal wants a written answer.
- Can mobile show a spinner after 700 ms instead of 2 s?
- Who owns the scorer's capacity plan now that the risk team moved?

## Action items
- [ ] Mei: add the p99 panel to the on-call dashboard and link the runbook.
- [ ] Jonas: measure the spinner change on the slowest supported phones.

Follow-up review on **Thursday 10:00**, same room. Dashboards: checkout-latency, fraud-scorer-errors."""


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: make_preview_note.py CONTEXT_HOST MANIFESTS_DIR OUTPUT.jsonl")
    host, manifests, output = sys.argv[1:]
    client = StdioClient([host, "--manifests", manifests, "--isolation", "in-process", "--no-state"])
    client.call("initialize", {"protocolVersion": 1, "clientInfo": {"name": "make-preview-note", "version": "1.0.0"},
                               "locale": "en-US"})
    client.send_line('{"jsonrpc":"2.0","method":"initialized","params":{}}')
    composer = client.call("composer/open")["composerId"]
    session = client.call("collect/start", {"providerId": "com.contexthost.note", "composerId": composer})["sessionId"]
    outcome = client.call("collect/submit", {"sessionId": session, "values": {"title": TITLE, "body": BODY}})
    if outcome.get("outcome") != "item":
        sys.exit(f"collect/submit did not answer an item: {json.dumps(outcome)}")
    item = outcome["item"]
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "items/preview", "params": {"item": item}},
                      separators=(",", ":"), ensure_ascii=False)
    chip = client.call("items/preview", {"item": item})
    client.close()
    with open(output, "w", encoding="utf-8") as f:
        f.write(line + "\n")
    print(f"{output}: request {len(line.encode()) + 1} B (body {len(BODY.encode())} B); "
          f"chip result {len(json.dumps(chip, separators=(',', ':'), ensure_ascii=False).encode())} B")


if __name__ == "__main__":
    main()

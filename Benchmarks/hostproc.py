"""What the Python benchmark drivers share about a `context-host` child (standard library only):
its resident memory and one JSON-RPC request at a time over its stdin/stdout. Import it after
putting Benchmarks/ on sys.path (egress-library/host-rss.py, lazy/cold.py)."""
import json


def rss_kb(pid):
    """VmRSS of process `pid` in KiB, 0 when it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def call(proc, identifier, method, params=None):
    """Sends request `identifier` to the host child `proc` and answers the message that answers it
    (notifications and other answers are passed over)."""
    message = {"jsonrpc": "2.0", "id": identifier, "method": method}
    if params is not None:
        message["params"] = params
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()
    while True:
        answer = json.loads(proc.stdout.readline())
        if answer.get("id") == identifier:
            return answer

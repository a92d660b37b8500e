#!/usr/bin/env python3
"""FastMCP (PyPI `fastmcp`) peer for the MCP bridge benchmark (Benchmarks/mcp-bench.sh): one tool,
`device_info_make`, doing what the Device Information provider does through `context-host mcp`:
read the machine's facts (uname, /proc/uptime, /proc/meminfo) and answer them as a context item
(structured content) with a one-line description. stdio, newline-delimited JSON; with
`--http PORT`, FastMCP's Streamable HTTP server at http://127.0.0.1:PORT/mcp (its defaults: sessions,
SSE answers), for the HTTP rows."""
import os
import sys
import time
import uuid

from fastmcp import FastMCP

mcp = FastMCP("fastmcp-peer")


def meminfo():
    values = {}
    with open("/proc/meminfo") as file:
        for line in file:
            key, _, rest = line.partition(":")
            if key in ("MemTotal", "MemAvailable"):
                values[key] = int(rest.split()[0]) * 1024
    return values


@mcp.tool
def device_info_make() -> dict:
    """Makes a Device Information context item; takes no input."""
    uname = os.uname()
    with open("/proc/uptime") as file:
        uptime = int(float(file.read().split()[0]))
    memory = meminfo()
    used = memory.get("MemTotal", 0) - memory.get("MemAvailable", 0)
    content = {
        "hostname": uname.nodename, "kernel": f"{uname.sysname} {uname.release}", "architecture": uname.machine,
        "cpuCount": os.cpu_count(), "uptimeSeconds": uptime, "memoryTotalBytes": memory.get("MemTotal", 0),
        "memoryUsedBytes": used,
    }
    return {
        "id": str(uuid.uuid4()), "providerId": "com.contexthost.device-info", "type": "device-info",
        "displayName": f"Device {uname.nodename}", "content": content,
        "createdAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        mcp.run(transport="http", host="127.0.0.1", port=int(sys.argv[2]), path="/mcp", log_level="warning", show_banner=False)
    else:
        mcp.run(show_banner=False)

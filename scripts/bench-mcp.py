#!/usr/bin/env python3
"""MCP and citation-export figures (`make bench-mcp`), with the official MCP Python SDK.

Starts `cited serve` (CITED_BIN, default the release build) offline (the knowledge base,
20 results per search) with a scripted OpenAI-compatible model served here, which answers
in 20 sentences citing [1] to [20] (a word every 10 ms). Prints:

- for N `ask` calls (chat) over streamable HTTP and over stdio (`cited mcp`): the time from
  the call to its first progress notification and to its result (median and slowest);
- the sizes of the exports of a 20-source conversation (`cited history export --format
  md|bib|ris|csl`), and how many entries each holds.

Run with the MCP venv's Python (make mcp-venv): the Makefile does.
"""

import asyncio
import http.server
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CITED = os.environ.get("CITED_BIN", os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/cited-target")), "release", "cited"))
RUNS = int(os.environ.get("BENCH_MCP_RUNS", "10"))
QUESTION = "How does cited check its citations?"


class Model(http.server.BaseHTTPRequestHandler):
    """A scripted model: 20 sentences, the n-th citing [n], streamed a word at a time."""

    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("content-length", 0))
        self.rfile.read(length)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        words = []
        for n in range(1, 21):
            words += [f"Point {n} of the answer", f"is stated by source [{n}]."]
        for word in words:
            chunk = {"choices": [{"index": 0, "delta": {"content": word + " "}}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
            time.sleep(0.01)
        done = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        self.wfile.write(f"data: {json.dumps(done)}\n\ndata: [DONE]\n\n".encode())


def free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def timed_ask(session):
    started = time.monotonic()
    first = None

    async def progress(value, total, message):
        nonlocal first
        if first is None:
            first = time.monotonic() - started

    result = await session.call_tool("ask", {"question": QUESTION}, progress_callback=progress)
    total = time.monotonic() - started
    assert not result.is_error, result
    return first, total, result.structured_content


async def over_http(url, key):
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, trust_env=False, timeout=httpx2.Timeout(30, read=300)) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return [await timed_ask(session) for _ in range(RUNS)]


async def over_stdio(env):
    params = StdioServerParameters(command=CITED, args=["mcp", "--user", "bench"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return [await timed_ask(session) for _ in range(RUNS)]


def report(name, runs):
    firsts = [f * 1000 for f, _, _ in runs if f is not None]
    totals = [t * 1000 for _, t, _ in runs]
    print(f"{name}: {len(runs)} asks; first progress median {statistics.median(firsts):.1f} ms, "
          f"slowest {max(firsts):.1f} ms; result median {statistics.median(totals):.1f} ms, slowest {max(totals):.1f} ms")


def main():
    if not os.path.exists(CITED):
        sys.exit(f"no cited binary at {CITED} (CITED_BIN)")
    model = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Model)
    threading.Thread(target=model.serve_forever, daemon=True).start()
    workdir = tempfile.mkdtemp(prefix="cited-bench-mcp-")
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", ""),
        "CITED_DATABASE_URL": f"sqlite:{workdir}/cited.db",
        "CITED_SOURCES": "knowledge",
        "CITED_SEARCH_RESULTS": "20",
        "CITED_LLM_BASE_URL": f"http://127.0.0.1:{model.server_address[1]}/v1",
        "CITED_LLM_MODEL": "scripted",
        "CITED_TITLES": "question",
        "CITED_RELATED": "sources",
        "CITED_IMAGES": "off",
        "CITED_FAVICONS": "off",
        "CITED_CHECK": "lexical",
        "CITED_RATE_ASKS_PER_MIN": "10000",
        "CITED_LOG": "warn",
    }
    run = lambda *args, **kw: subprocess.run([CITED, *args], env=env, cwd=ROOT, capture_output=True, text=True, check=True, **kw)
    run("user", "add", "bench", input="bench password\n")
    key = run("key", "add", "bench").stdout.strip()
    port = free_port()
    server = subprocess.Popen([CITED, "serve"], env={**env, "CITED_ADDR": f"127.0.0.1:{port}"}, cwd=ROOT, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        print(f"cited: {CITED}; scripted model: 20 sentences, a word every 10 ms")
        http_runs = asyncio.run(over_http(f"http://127.0.0.1:{port}/mcp", key))
        report("streamable HTTP", http_runs)
    finally:
        server.terminate()
        server.wait()
    stdio_runs = asyncio.run(over_stdio({k: v for k, v in env.items() if k.startswith("CITED_")}))
    report("stdio", stdio_runs)

    structured = http_runs[-1][2]
    sources = len(structured["sources"])
    conversation = structured["conversation"].rsplit("/", 1)[-1]
    print(f"exports of one answer's conversation citing {sources} sources:")
    for fmt, count in [("md", None), ("bib", "@online"), ("ris", "TY  -"), ("csl", None)]:
        out = run("history", "export", conversation, "--format", fmt).stdout
        if fmt == "csl":
            entries = len(json.loads(out))
        elif count:
            entries = out.count(count)
        else:
            entries = None
        size = len(out.encode())
        print(f"  {fmt}: {size} bytes" + (f", {entries} entries" if entries is not None else ""))


if __name__ == "__main__":
    main()

"""A real MCP client (the official Python SDK, `mcp`, pinned in scripts/requirements-mcp.txt)
driving cited's MCP server; the Rust tests (src/tests/mcp.rs, tests/mcp_stdio.rs) run it and
check what it prints: one JSON object.

    mcp_client.py SCENARIO TRANSPORT TARGET [KEY] [MODES] [QUESTION]

TRANSPORT is `http` (TARGET: the /mcp URL; KEY: a Bearer key or "-") or `stdio` (TARGET: the
cited binary, started as `cited mcp` with this process's CITED_* variables).
Scenarios: `tour` (tools, search, ask in MODES, bad arguments, read, resources), `ask`
(MODES only), `cancel`
(a Research answer cancelled after its first progress notification), `auth` (connect and list
the tools), `modern` (the 2026-07-28 protocol, no handshake), `timing` (a chat answer's first
progress and result, in milliseconds).
"""

import asyncio
import contextlib
import json
import os
import sys
import time

import httpx2
from mcp import ClientSession, Client, MCPError, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client


def connect(transport, target, key, statuses):
    """The (read, write) streams to cited, as an async context manager."""
    if transport == "stdio":
        env = {k: v for k, v in os.environ.items() if k.startswith("CITED_") or k == "RUST_LOG"}
        args = ["mcp"] + ([f"--user={key}"] if key not in (None, "-") else [])
        return stdio_client(StdioServerParameters(command=target, args=args, env=env))

    @contextlib.asynccontextmanager
    async def http():
        async def hook(response):
            statuses.append(response.status_code)

        headers = {"Authorization": f"Bearer {key}"} if key not in (None, "-") else {}
        async with httpx2.AsyncClient(
            headers=headers,
            trust_env=False,
            timeout=httpx2.Timeout(30, read=300),
            event_hooks={"response": [hook]},
        ) as client:
            async with streamable_http_client(target, http_client=client) as streams:
                yield streams

    return http()


def error_of(e):
    return {"code": e.code, "message": e.message}


def summary(result):
    """What a tool call gave: the error flag, its text and structured content."""
    text = "".join(getattr(c, "text", "") for c in result.content)
    return {"is_error": result.is_error, "text": text, "structured": result.structured_content}


async def call(session, name, arguments, progress=None):
    try:
        return summary(await session.call_tool(name, arguments, progress_callback=progress))
    except MCPError as e:
        return {"error": error_of(e)}


async def ask(session, modes, question="量子计算 入门"):
    """`ask` in each mode, with the progress notifications each sent."""
    out = {"ask": {}}
    for mode in modes:
        notes = []

        async def progress(value, total, message, notes=notes):
            notes.append({"progress": value, "message": message})

        started = time.monotonic()
        result = await call(session, "ask", {"question": question, "mode": mode}, progress)
        result["ms"] = round((time.monotonic() - started) * 1000)
        await asyncio.sleep(0.1)
        result["progress"] = notes
        out["ask"][mode] = result
    return out


async def tour(session, modes, question):
    out = {}
    tools = await session.list_tools()
    out["tools"] = {
        t.name: {
            "required": t.input_schema.get("required", []),
            "properties": sorted(t.input_schema.get("properties", {})),
            "description": t.description,
        }
        for t in tools.tools
    }
    out["search"] = await call(session, "search", {"query": question, "count": 3})
    out.update(await ask(session, modes, question))
    out["bad"] = {
        "no_question": await call(session, "ask", {}),
        "bad_mode": await call(session, "ask", {"question": "x", "mode": "poem"}),
        "unknown_argument": await call(session, "ask", {"question": "x", "langauge": "en"}),
        "bad_count": await call(session, "search", {"query": "x", "count": 500}),
        "bad_site": await call(session, "search", {"query": "x", "site": "not a site"}),
        "unknown_tool": await call(session, "summon", {}),
    }
    out["read_private"] = await call(session, "read", {"url": "http://127.0.0.1:1/"})
    out["read_file"] = await call(session, "read", {"url": "file:///etc/passwd"})
    resources = await session.list_resources()
    out["resources"] = [{"uri": r.uri, "name": r.name, "mime": r.mime_type} for r in resources.resources]
    templates = await session.list_resource_templates()
    out["templates"] = [t.uri_template for t in templates.resource_templates]
    if resources.resources:
        read = await session.read_resource(str(resources.resources[0].uri))
        out["resource_text"] = read.contents[0].text
    try:
        await session.read_resource("cited://conversations/0000")
        out["missing_resource"] = None
    except MCPError as e:
        out["missing_resource"] = error_of(e)
    return out


async def cancel(session):
    """Cancels a Research answer once its first progress notification arrives."""
    first = asyncio.Event()
    notes = []

    async def progress(value, total, message):
        notes.append(message)
        first.set()

    started = time.monotonic()
    task = asyncio.create_task(
        session.call_tool("ask", {"question": "endless research", "mode": "research"}, progress_callback=progress)
    )
    waited = asyncio.create_task(first.wait())
    done, _ = await asyncio.wait({task, waited}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
    out = {"progress_before_cancel": len(notes), "first_progress_ms": round((time.monotonic() - started) * 1000)}
    out["finished_before_cancel"] = task in done
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, MCPError):
        await task
    # The session goes on after a cancellation.
    out["after"] = len((await session.list_tools()).tools)
    return out


async def timing(session):
    first = None
    started = time.monotonic()

    async def progress(value, total, message):
        nonlocal first
        if first is None:
            first = time.monotonic() - started

    result = await session.call_tool("ask", {"question": "量子计算 入门"}, progress_callback=progress)
    total = time.monotonic() - started
    return {
        "first_progress_ms": None if first is None else round(first * 1000, 1),
        "result_ms": round(total * 1000, 1),
        "is_error": result.is_error,
    }


async def modern(target, key):
    """The 2026-07-28 protocol (server/discover, no handshake), as `mcp.Client` speaks it."""
    headers = {"Authorization": f"Bearer {key}"} if key not in (None, "-") else {}
    async with httpx2.AsyncClient(headers=headers, trust_env=False) as http:
        async with Client(streamable_http_client(target, http_client=http)) as client:
            tools = await client.list_tools()
            result = await client.call_tool("search", {"query": "量子计算 入门", "count": 2})
            return {
                "protocol": client.protocol_version,
                "tools": [t.name for t in tools.tools],
                "search": summary(result),
            }


async def main():
    scenario, transport, target = sys.argv[1:4]
    key = sys.argv[4] if len(sys.argv) > 4 else None
    modes = sys.argv[5].split(",") if len(sys.argv) > 5 else ["chat"]
    question = sys.argv[6] if len(sys.argv) > 6 else "量子计算 入门"
    if scenario == "modern":
        print(json.dumps(await modern(target, key), ensure_ascii=False))
        return
    statuses = []
    out = {}
    try:
        async with connect(transport, target, key, statuses) as (read, write):
            async with ClientSession(read, write) as session:
                try:
                    init = await session.initialize()
                    out["protocol"] = init.protocol_version
                    out["server"] = init.server_info.name
                    if scenario == "tour":
                        out.update(await tour(session, modes, question))
                    elif scenario == "ask":
                        out.update(await ask(session, modes, question))
                    elif scenario == "cancel":
                        out.update(await cancel(session))
                    elif scenario == "timing":
                        out.update(await timing(session))
                    elif scenario == "auth":
                        out["tools"] = [t.name for t in (await session.list_tools()).tools]
                except MCPError as e:
                    out["error"] = error_of(e)
    except BaseException as e:  # noqa: BLE001 - the transport's errors come grouped
        if not out.get("error"):
            out["failure"] = repr(e)
    out["statuses"] = statuses
    print(json.dumps(out, ensure_ascii=False))


asyncio.run(main())

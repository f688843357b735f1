"""Drives rcp-sidecar's MCP server with the reference Python MCP SDK (PyPI
"mcp" 2.x), an implementation independent of the server's Go SDK.

Usage: check_client.py PLAN_JSON

PLAN_JSON describes the connection and what to expect:
  {"stdio": [argv...]} or {"http": url, "key": "..."}
  "tools":          the tool names the session must list, sorted
  "search":         the search tool to use
  "query":          a query every expected document matches
  "filter":         {"field", "value"}: a keyword eq filter to apply
  "want_ids":       the ids the filtered search must return (any order), from
                    an oracle over the source documents
  "page_k":         page size for the pagination check
  "bad_field":      a field that is not filterable
  "forbidden_write": arguments of an index_add the server must refuse
                    as a tool error (tool "write_tool")

Prints a transcript, one line per exchange, and exits non-zero on the first
failed expectation.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def say(*parts):
    print(" ".join(str(p) for p in parts), flush=True)


def fail(msg):
    say("FAIL:", msg)
    sys.exit(1)


def rcp_error(result):
    """The RCP error object of an isError result: its text ends with
    {"error": {code, message, data}}; it has no structured content, which a
    client would validate against the tool's output schema."""
    if result.structured_content is not None:
        fail(f"isError result with structured content {result.structured_content}")
    text = result.content[0].text if result.content else ""
    try:
        return json.loads(text.splitlines()[-1]).get("error", {})
    except (ValueError, IndexError):
        fail(f"isError text does not end with the RCP error object: {text!r}")


def hit_ids(result):
    sc = result.structured_content or {}
    return [h["id"] for h in sc.get("hits", [])]


async def run(plan, session):
    init = await session.initialize()
    say("initialize ->", init.server_info.name, init.server_info.version, "protocol", init.protocol_version)

    tools = await session.list_tools()
    names = sorted(t.name for t in tools.tools)
    say("tools/list ->", names)
    caps = init.capabilities.tools
    if names != plan["tools"] and caps is not None and getattr(caps, "list_changed", None):
        # Over stdio the sidecar answers before its engine's first probe
        # and says tools/list_changed when the engine's tools replace the
        # stand-in: a client lists again. Bounded.
        deadline = asyncio.get_running_loop().time() + 60
        while names != plan["tools"] and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.2)
            tools = await session.list_tools()
            names = sorted(t.name for t in tools.tools)
        say("tools/list (after list_changed) ->", names)
    if names != plan["tools"]:
        fail(f"tools {names} != {plan['tools']}")
    search = next(t for t in tools.tools if t.name == plan["search"])
    if not (search.annotations and search.annotations.read_only_hint):
        fail("search tool is not annotated read-only")
    if "filter" not in search.input_schema.get("properties", {}):
        fail("search tool has no filter argument")
    if not search.output_schema:
        fail("search tool has no output schema")

    f = plan["filter"]
    args = {"query": plan["query"], "k": 50, "filter": {"field": f["field"], "op": "eq", "value": f["value"]}}
    res = await session.call_tool(plan["search"], args)
    got = hit_ids(res)
    say("tools/call", plan["search"], json.dumps(args), "->", len(got), "hits", got[:5], "...")
    if res.is_error:
        fail(f"filtered search failed: {res.content}")
    if sorted(got) != sorted(plan["want_ids"]):
        fail(f"filtered search returned {sorted(got)}, oracle {sorted(plan['want_ids'])}")
    for h in res.structured_content["hits"]:
        if h.get("meta", {}).get(f["field"]) != f["value"]:
            fail(f"hit {h['id']} does not match the filter: {h.get('meta')}")
    first = res.content[0].text if res.content else ""
    say("  first text block:", first.splitlines()[0] if first else "(none)")
    if got and not first.startswith("[1] "):
        fail("hits are not rendered as text")

    # Pagination: follow nextCursor with the same arguments.
    paged, cursor, pages = [], None, 0
    while True:
        a = dict(args, k=plan["page_k"])
        if cursor:
            a["cursor"] = cursor
        r = await session.call_tool(plan["search"], a)
        if r.is_error:
            fail(f"page {pages}: {r.content}")
        paged += hit_ids(r)
        pages += 1
        cursor = (r.structured_content or {}).get("nextCursor")
        if not cursor or pages > 100:
            break
    say("  paged with k =", plan["page_k"], "->", pages, "pages,", len(paged), "hits")
    if paged != got:
        fail(f"pages {paged} != single call {got}")

    bad = {"query": plan["query"], "filter": {"field": plan["bad_field"], "op": "eq", "value": "x"}}
    r = await session.call_tool(plan["search"], bad)
    err = rcp_error(r) if r.is_error else {}
    say("tools/call", plan["search"], json.dumps(bad), "-> isError", r.is_error, json.dumps(err))
    if not r.is_error or err.get("code") != -32602 or err.get("data", {}).get("field") != "filter." + plan["bad_field"]:
        fail("a bad filter is not a tool error naming the field")

    if "forbidden_write" in plan:
        w = await session.call_tool(plan["write_tool"], plan["forbidden_write"])
        err = rcp_error(w) if w.is_error else {}
        say("tools/call", plan["write_tool"], json.dumps(plan["forbidden_write"]), "-> isError", w.is_error, json.dumps(err))
        if not w.is_error or err.get("code") not in (-32602, -32012):
            fail("a forbidden write is not a tool error")

    resources = await session.list_resources()
    uris = [str(r.uri) for r in resources.resources]
    say("resources/list ->", uris)
    if uris:
        rr = await session.read_resource(uris[0])
        probe = json.loads(rr.contents[0].text)
        say("  probe:", probe.get("engine"), probe.get("version"), len(probe.get("reasons", [])), "reasons")
    say("OK")


async def main():
    plan = json.loads(sys.argv[1])
    if "stdio" in plan:
        argv = plan["stdio"]
        params = StdioServerParameters(command=argv[0], args=argv[1:])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await run(plan, session)
    else:
        headers = {"Authorization": "Bearer " + plan["key"]} if plan.get("key") else None
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(plan["http"], http_client=http) as streams:
                read, write = streams[0], streams[1]
                async with ClientSession(read, write) as session:
                    await run(plan, session)


asyncio.run(main())

#!/usr/bin/env python3
"""Drives an RCP server with the official Python SDK (PyPI rcp-protocol) and
prints one JSON report on stdout for the Go interop test to assert on.

Usage: sdk_driver.py PLAN.json

The plan names the transport and the requests to make:

    {"stdio": ["rcp-sidecar", "serve", "--stdio", "--config", "c.yaml"]}
      or {"http": "http://127.0.0.1:PORT/rcp"}
    "retrieve": {"query": str, "k": int, "filter": [[op, field, value], ...]},
    "add": {"documents": [{"id", "text", "meta"}], "query": str, "k": int},
    "embed": {"inputs": [str], "kind": "query"|"document"}      (optional)

Each step is reported as its result or as {"error": {code, message, data}};
the driver itself only fails (exit 2) when it cannot connect at all.
"""
import json
import sys

import rcp
from rcp import filter as f

# Capabilities whose methods the driver can call to provoke a client-side
# -32003, with the raw method name and params for the server-side check.
GATED = [
    (rcp.Capability.Rerank, lambda c: c.rerank("q", ["a"]), "rerank", {"query": "q", "passages": ["a"]}),
    (rcp.Capability.Graph, lambda c: c.graph("local", {"query": "q"}), "graph", {"op": "local", "query": "q"}),
    (rcp.Capability.Memory, lambda c: c.memory_recall("q"), "memory/recall", {"query": "q"}),
    (rcp.Capability.Feedback, lambda c: c.feedback([{"hitId": "x"}]), "feedback", {"signals": [{"hitId": "x"}]}),
    (rcp.Capability.Transform, lambda c: c.transform("q", "hyde"), "query/transform", {"query": "q", "method": "hyde"}),
]


def err(e):
    return {"error": {"code": e.code, "message": e.message, "data": e.data}}


def step(fn):
    try:
        return fn()
    except rcp.RcpError as e:
        return err(e)


def build_filter(clauses):
    """Builds the filter with the SDK's builder: every clause ANDed."""
    leaves = [getattr(f, op if op != "in" else "in_")(field, value) for op, field, value in clauses]
    return (leaves[0] if len(leaves) == 1 else f.all_(*leaves)).to_json()


def retrieve(c, query, k, flt=None):
    opts = {"filter": flt} if flt is not None else None
    hits = c.retrieve(query, k=k, opts=opts)
    return {"ids": [h["id"] for h in hits], "scores": [h["score"] for h in hits]}


def count_calls(c):
    """Wraps the transport so the report can prove a call made no I/O."""
    box = {"n": 0}
    inner = c._transport.call

    def call(req):
        box["n"] += 1
        return inner(req)

    c._transport.call = call
    return box


def gate(c, calls):
    for cap, invoke, method, params in GATED:
        if c.supports(cap):
            continue
        before = calls["n"]
        out = {"capability": cap.value, "method": method}
        try:
            invoke(c)
            out["code"] = 0
        except rcp.RcpError as e:
            out["code"] = e.code
        out["local"] = calls["n"] == before
        server = step(lambda: c.call(method, params))
        out["serverCode"] = server["error"]["code"] if "error" in server else 0
        return out
    return {"error": {"code": 0, "message": "every gated capability is advertised"}}


def embed(c, spec):
    vecs = c.embed(spec["inputs"], kind=spec.get("kind"))
    return {"count": len(vecs), "dimensions": sorted({len(v) for v in vecs})}


def add(c, spec):
    res = c.index_add({"documents": spec["documents"]})
    return {"ids": res.get("ids"), "after": step(lambda: retrieve(c, spec["query"], spec.get("k", 3)))}


def run(plan):
    try:
        c = rcp.connect_stdio(plan["stdio"]) if "stdio" in plan else rcp.connect_http(plan["http"])
    except rcp.RcpError as e:
        print(json.dumps({"connect": err(e)}))
        sys.exit(2)
    calls = count_calls(c)
    report = {
        "protocolVersion": c.protocol_version,
        "server": c.server,
        "capabilities": sorted(c.capabilities),
    }
    r = plan["retrieve"]
    report["retrieve"] = step(lambda: retrieve(c, r["query"], r["k"], build_filter(r["filter"])))
    report["add"] = step(lambda: add(c, plan["add"]))
    if "embed" in plan:
        report["embed"] = step(lambda: embed(c, plan["embed"]))
    report["gate"] = gate(c, calls)
    report["ping"] = step(lambda: {"ok": isinstance(c.ping(), dict)})
    c.shutdown()
    print(json.dumps(report))


if __name__ == "__main__":
    with open(sys.argv[1]) as fh:
        run(json.load(fh))

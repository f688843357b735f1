#!/usr/bin/env python3
"""Runs the RCP/1 §14 conformance MUSTs (L0–L2) against a server spawned
over stdio, through the official Python SDK (PyPI rcp-protocol), and prints
one JSON report on stdout for the Go test to assert on.

Usage: conformance_driver.py -- ARGV...

Raw frames (before initialize, notifications, malformed requests) go
through the SDK's StdioTransport on one connection; the retrieval, write,
session and feedback checks use the SDK's Client (rcp.connect_stdio) on a
second one. Each check is tagged with its level; a check for a capability
the server does not advertise is reported as skipped. The certified level
is computed as the official harness does (§14.5): the highest level whose
applicable checks, and those of every lower level, all passed.
"""
import json
import select
import sys

import rcp
from rcp import filter as f

LEVELS = ("L0", "L1", "L2")
results = []


def check(level, name, ok, detail=""):
    results.append({"level": level, "name": name, "status": "pass" if ok else "fail",
                    "detail": "" if ok else str(detail)[:300]})


def skip(level, name, why):
    results.append({"level": level, "name": name, "status": "skip", "detail": why})


def code_of(reply):
    return (reply.get("error") or {}).get("code")


def field_of(reply):
    return ((reply.get("error") or {}).get("data") or {}).get("field")


class Raw:
    """Raw NDJSON frames over the SDK's stdio transport."""

    def __init__(self, argv):
        self.t = rcp.StdioTransport.spawn(argv)
        self.proc = self.t._proc

    def call(self, obj):
        return self.t.call(obj)

    def write(self, line):
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def silent(self, obj, timeout=0.5):
        """Sends a notification and reports whether nothing came back."""
        self.write(json.dumps(obj))
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return True
        line = self.proc.stdout.readline()
        return not line.strip() or "method" in json.loads(line)

    def close(self):
        self.t.close()


def level0(raw):
    r = raw.call({"jsonrpc": "2.0", "id": 1, "method": "info", "params": {}})
    check("L0", "info answers before initialize", (r.get("result") or {}).get("server", {}).get("name"), r)
    for nonce in (777, "n-1"):
        r = raw.call({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"nonce": nonce}})
        check("L0", f"ping before initialize echoes nonce {nonce!r}", (r.get("result") or {}).get("nonce") == nonce, r)
    r = raw.call({"jsonrpc": "2.0", "id": 3, "method": "retrieve", "params": {"query": "x", "k": 1}})
    check("L0", "pre-initialize retrieve is -32001", code_of(r) == rcp.Errc.NOT_INITIALIZED, r)
    check("L0", "notification for a gated method is not answered",
          raw.silent({"jsonrpc": "2.0", "method": "retrieve", "params": {"query": "x", "k": 1}}))
    check("L0", "notification for an unknown method is not answered",
          raw.silent({"jsonrpc": "2.0", "method": "does/not/exist", "params": {}}))
    check("L0", "notifications/cancel for an unknown id is a no-op",
          raw.silent({"jsonrpc": "2.0", "method": "notifications/cancel", "params": {"id": 12345}}))
    r = raw.call({"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {"protocolVersion": 0, "client": {"name": "c"}}})
    check("L0", "initialize with an unsupported version is -32002", code_of(r) == rcp.Errc.VERSION_MISMATCH, r)
    r = raw.call({"jsonrpc": "2.0", "id": 5, "method": "retrieve", "params": {"query": "x", "k": 1}})
    check("L0", "a failed handshake leaves the session uninitialized", code_of(r) == rcp.Errc.NOT_INITIALIZED, r)
    r = raw.call({"jsonrpc": "2.0", "id": 6, "method": "initialize",
                  "params": {"protocolVersion": 1, "client": {"name": "c", "version": "1"}, "capabilities": {"x-unknown": {}},
                             "_meta": {"x": 1}}})
    res = r.get("result") or {}
    caps = res.get("capabilities") or {}
    check("L0", "initialize negotiates protocolVersion >= 1", isinstance(res.get("protocolVersion"), int) and res["protocolVersion"] >= 1, r)
    check("L0", "advertises a retrieval capability", any(k in caps for k in ("embed", "rerank", "retrieve", "graph")), caps)
    check("L0", "server identity present", (res.get("server") or {}).get("name"), res)
    r = raw.call({"jsonrpc": "2.0", "id": 7, "method": "does/not/exist", "params": {}})
    check("L0", "undefined method is -32004", code_of(r) == rcp.Errc.UNKNOWN_METHOD, r)
    absent = next((m for m, c in (("rerank", "rerank"), ("graph", "graph"), ("query/transform", "transform"))
                   if c not in caps), None)
    r = raw.call({"jsonrpc": "2.0", "id": 8, "method": absent, "params": {}})
    check("L0", f"un-advertised method {absent} is -32003", code_of(r) == rcp.Errc.CAPABILITY_MISSING, r)
    modes = (caps.get("retrieve") or {}).get("modes") or []
    missing = next((m for m in ("dense", "sparse", "hybrid") if m not in modes), None)
    if missing:
        r = raw.call({"jsonrpc": "2.0", "id": 9, "method": "retrieve", "params": {"query": "x", "k": 1, "mode": missing}})
        opt = ((r.get("error") or {}).get("data") or {}).get("option")
        check("L0", f"unsupported option mode={missing} is -32005 naming it", code_of(r) == rcp.Errc.OPTION_UNSUPPORTED and opt == missing, r)
    else:
        skip("L0", "unsupported option is -32005", "every mode is advertised")
    for rid in ("str-id-1", 42, -7):
        r = raw.call({"jsonrpc": "2.0", "id": rid, "method": "ping", "params": {}})
        check("L0", f"response echoes id {rid!r} with its type", r.get("id") == rid and type(r.get("id")) is type(rid) and r.get("jsonrpc") == "2.0", r)
    r = raw.call({"jsonrpc": "2.0", "id": 10, "method": "retrieve", "params": {"query": "x", "k": "three"}})
    check("L0", "malformed params are -32602 naming the field", code_of(r) == rcp.Errc.INVALID_PARAMS and field_of(r) == "k", r)
    r = raw.call({"jsonrpc": "2.0", "id": 11, "method": "retrieve",
                  "params": {"query": "comet", "k": 1, "x-unknown-field": {"a": 1}, "_meta": {"anything": True}}})
    check("L0", "unknown fields and _meta are tolerated", isinstance((r.get("result") or {}).get("hits"), list), r)
    return caps


def level1(c, caps):
    if "retrieve" not in caps:
        for n in ("retrieve returns ranked hits", "filter is honoured"):
            skip("L1", n, "retrieve not advertised")
        return
    out = c.search("how does a search engine rank documents", k=5)
    hits = out["hits"]
    scores = [h["score"] for h in hits]
    ids = [h["id"] for h in hits]
    check("L1", "retrieve returns at most k hits", 0 < len(hits) <= 5, len(hits))
    check("L1", "hits carry ids and numeric scores, descending", all(isinstance(s, (int, float)) for s in scores)
          and scores == sorted(scores, reverse=True), scores)
    check("L1", "hit ids are unique", len(ids) == len(set(ids)), ids)
    max_k = (caps.get("retrieve") or {}).get("maxK")
    if isinstance(max_k, int):
        over = c.search("the", k=max_k + 1000)["hits"]
        check("L1", "k above maxK is clamped, not rejected", len(over) <= max_k, len(over))
    for params, field, name in (({"query": "x", "k": -5}, "k", "negative k is -32602"),
                                ({"query": "x", "k": 10, "candidateK": 2}, "candidateK", "candidateK < k is -32602")):
        try:
            c.call("retrieve", params)
            check("L1", name, False, "accepted")
        except rcp.RcpError as e:
            check("L1", name, e.code == rcp.Errc.INVALID_PARAMS and (e.data or {}).get("field") == field, (e.code, e.data))
    if "filter" in caps:
        flt = f.eq("topic", "astronomy").to_json()
        fh = c.search("stars and planets", k=5, opts={"filter": flt})["hits"]
        check("L1", "filter is honoured", fh and all((h.get("meta") or {}).get("topic") == "astronomy" for h in fh), fh)
    else:
        skip("L1", "filter is honoured", "filter not advertised")
    if len(scores) >= 2:
        floor = scores[1]
        mh = c.search("how does a search engine rank documents", k=5, opts={"minScore": floor})["hits"]
        check("L1", "minScore is honoured", mh and all(h["score"] >= floor for h in mh) and len(mh) <= 2, [h["score"] for h in mh])
    if "citations" in caps:
        check("L1", "hits carry citations", all(h.get("citation") for h in hits), hits[:1])


def level2(c, caps):
    modes = (caps.get("retrieve") or {}).get("modes") or []
    if "hybrid" in modes:
        check("L2", "advertised hybrid mode returns hits", isinstance(c.search("comet", k=3, opts={"mode": "hybrid"})["hits"], list))
    else:
        skip("L2", "advertised hybrid mode returns hits", "hybrid not advertised")
    if "rerank" in caps:
        passages = ["Bananas are rich in potassium.", "a comet grows two tails near the sun", "comets"]
        scores = c.rerank("why do comets grow tails", passages)
        check("L2", "rerank scores every passage, the relevant one highest", len(scores) == 3 and scores[1] == max(scores), scores)
        out = c.search("why do comets grow tails", k=2, opts={"rerank": {"method": "cross-encoder", "topN": 5}})
        ok = out["hits"] and all("rerank" in (h.get("scores") or {}) for h in out["hits"]) and out["usage"].get("reranked") == 5
        check("L2", "retrieve reranks its top topN (scores.rerank, usage.reranked)", ok, out)
    else:
        skip("L2", "rerank scores every passage", "rerank not advertised")
    if (caps.get("index") or {}).get("writable") is True:
        doc = {"id": "conf-upsert", "text": "zyxwv conformance probe document one"}
        ids = c.index_add({"documents": [doc]}).get("ids")
        check("L2", "index/add returns one id per document", ids == ["conf-upsert"], ids)
        c.index_add({"documents": [dict(doc, text="zyxwv conformance probe document two updated")]})
        found = [h for h in c.retrieve("zyxwv conformance probe", k=5) if h["id"] == "conf-upsert"]
        check("L2", "re-adding an id upserts (one copy, new text)", len(found) == 1 and "updated" in found[0].get("text", ""), found)
        first = c.index_delete({"ids": ["conf-upsert"]}).get("deleted")
        again = c.index_delete({"ids": ["conf-upsert"]}).get("deleted")
        check("L2", "index/delete deletes, then is idempotent", first == 1 and again == 0, (first, again))
        gone = [h for h in c.retrieve("zyxwv conformance probe", k=5) if h["id"] == "conf-upsert"]
        check("L2", "a deleted document is not retrieved", not gone, gone)
    else:
        for n in ("index/add returns one id per document", "re-adding an id upserts", "index/delete is idempotent"):
            skip("L2", n, "index not writable")
    if "pagination" in caps:
        p1 = c.search("how does a search engine rank documents", k=2)
        cur = p1.get("next_cursor")
        p2 = c.search("how does a search engine rank documents", k=2, opts={"cursor": cur}) if cur else {"hits": []}
        a, b = {h["id"] for h in p1["hits"]}, {h["id"] for h in p2["hits"]}
        check("L2", "pagination: the next page is disjoint", cur and b and not (a & b), (a, b))
    else:
        skip("L2", "pagination", "pagination not advertised")
    if "session" in caps and caps["session"].get("dedup"):
        q = "how do telescopes work"
        s1 = {h["id"] for h in c.search(q, k=3, opts={"sessionId": "conf-s"})["hits"]}
        s2 = {h["id"] for h in c.search(q, k=3, opts={"sessionId": "conf-s"})["hits"]}
        o = {h["id"] for h in c.search(q, k=3, opts={"sessionId": "conf-other"})["hits"]}
        check("L2", "session dedup suppresses hits already returned", s1 and not (s1 & s2) and o == s1, (s1, s2, o))
    else:
        skip("L2", "session dedup", "session dedup not advertised")
    if "feedback" in caps:
        res = c.feedback([{"hitId": "d001", "helpful": True, "reward": 0.5}, {"hitId": 7, "used": True}], query="q", session_id="conf-s")
        check("L2", "feedback accepts every valid signal", res.get("accepted") == 2, res)
        try:
            c.call("feedback", {"signals": [{"hitId": "d001", "reward": 3}]})
            check("L2", "feedback reward outside [-1,1] is -32602", False, "accepted")
        except rcp.RcpError as e:
            check("L2", "feedback reward outside [-1,1] is -32602", e.code == rcp.Errc.INVALID_PARAMS and
                  (e.data or {}).get("field") == "signals[0].reward", (e.code, e.data))
    else:
        skip("L2", "feedback", "feedback not advertised")


def certified():
    best = None
    for lvl in LEVELS:
        st = [r["status"] for r in results if r["level"] == lvl]
        if "fail" in st:
            break
        if "pass" in st:
            best = lvl
    return best


def main():
    argv = sys.argv[sys.argv.index("--") + 1:]
    raw = Raw(argv)
    try:
        caps = level0(raw)
        declared = None
    finally:
        raw.close()
    c = rcp.connect_stdio(argv)
    try:
        declared = (c.info() or {}).get("_meta", {}).get("conformance")
        level1(c, caps)
        level2(c, caps)
    except rcp.RcpError as e:
        check("L2", "driver finished without an unexpected error", False, (e.code, e.message, e.data))
    finally:
        c.shutdown()
    print(json.dumps({"checks": results, "certified": certified(), "declared": declared}))


if __name__ == "__main__":
    main()

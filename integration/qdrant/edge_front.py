"""A gRPC front over Qdrant Edge, for tests. It is not a Qdrant server.

Qdrant Edge (PyPI qdrant-edge-py) is Qdrant's Rust engine as an in-process
library: segments, HNSW/plain search, payload indexes, filters, fusion, MMR,
sparse IDF and the BM25 model. It has no network API. This front serves the
part of Qdrant's gRPC API that rcp-sidecar's Qdrant adapter and its tests
use, with the servicers generated in qdrant-client, and answers every
request from one EdgeShard per collection. Everything that decides a result
(scores, distance post-processing, filters, tokenisation, stemming, stop
words, IDF, RRF/DBSF, MMR, thresholds, offsets) is Qdrant's engine; the
front only converts messages, as Qdrant's own gRPC layer does:

  - Mmr.diversity d becomes the engine's lambda 1 - d (default 0.5) and
    candidates_limit defaults to the request's limit;
  - Fusion.RRF and Rrf without k use DEFAULT_RRF_K = 2;
  - Document{model: "qdrant/bm25"} is embedded with the engine's Bm25
    (documents on writes, queries on searches), options as Bm25Config;
  - DatetimeRange timestamps become RFC 3339 instants in UTC.

What it keeps itself, because one shard is not a cluster: the collection
list, the collection parameters as created, and aliases. HealthCheck
reports --server-version (default 1.17.0); the engine does not change with
it, so a lower version exercises a client's version gates, not an older
engine. There is no authentication, TLS, rate limiting, sharding,
replication, snapshots or strict mode. A request field the front does not
map is refused with UNIMPLEMENTED naming it, never ignored, so a test cannot
pass on something the front dropped.

Run: python edge_front.py --data DIR [--host 127.0.0.1] [--port 0]
     [--port-file FILE] [--server-version 1.17.0]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import shutil
import signal
import sys
import tempfile
import threading
import uuid
from concurrent import futures
from importlib import metadata

import grpc
import numpy as np
import qdrant_edge as qe
from qdrant_client.grpc import collections_pb2 as cpb
from qdrant_client.grpc import collections_service_pb2_grpc as csvc
from qdrant_client.grpc import json_with_int_pb2 as jpb
from qdrant_client.grpc import points_pb2 as ppb
from qdrant_client.grpc import points_service_pb2_grpc as psvc
from qdrant_client.grpc import qdrant_common_pb2 as qpb
from qdrant_client.grpc import qdrant_pb2 as hpb
from qdrant_client.grpc import qdrant_pb2_grpc as hsvc

DEFAULT_VERSION = "1.17.0"
DEFAULT_RRF_K = 2  # segment::common::reciprocal_rank_fusion::DEFAULT_RRF_K
DEFAULT_MMR_LAMBDA = 0.5  # collection_query.rs DEFAULT_MMR_LAMBDA
BM25_MODELS = ("qdrant/bm25", "bm25")  # local_model.rs, compared lower-cased
TITLE = "qdrant-edge front (Qdrant Edge engine; not a Qdrant server)"


class Refused(Exception):
    """A request the front cannot or will not serve, with its gRPC code."""

    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__(message)
        self.code = code


def unmapped(what: str) -> Refused:
    return Refused(grpc.StatusCode.UNIMPLEMENTED, f"edge front: {what} is not mapped onto Qdrant Edge")


def invalid(message: str) -> Refused:
    return Refused(grpc.StatusCode.INVALID_ARGUMENT, message)


def only(msg, allowed: set[str], where: str) -> None:
    """Refuses msg when it sets a field outside allowed."""
    for field, _ in msg.ListFields():
        if field.name not in allowed:
            raise unmapped(f"{where}.{field.name}")


def served(method):
    """Wraps a servicer method: Refused and engine errors become statuses."""

    def wrapper(self, request, context):
        try:
            with self.state.lock:
                return method(self, request, context)
        except Refused as e:
            context.abort(e.code, str(e))
        except (ValueError, TypeError, RuntimeError, OSError, KeyError, OverflowError) as e:
            # The engine's bad-input errors; Qdrant answers them with
            # InvalidArgument too.
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"Wrong input: {e}")

    wrapper.__name__ = method.__name__
    wrapper.__doc__ = method.__doc__
    return wrapper


# ---------------------------------------------------------------------------
# Values, ids, vectors


def from_value(v: jpb.Value):
    kind = v.WhichOneof("kind")
    if kind in (None, "null_value"):
        return None
    if kind == "struct_value":
        return {k: from_value(x) for k, x in v.struct_value.fields.items()}
    if kind == "list_value":
        return [from_value(x) for x in v.list_value.values]
    return getattr(v, kind)


def to_value(x) -> jpb.Value:
    if x is None:
        return jpb.Value(null_value=jpb.NULL_VALUE)
    if isinstance(x, (bool, np.bool_)):
        return jpb.Value(bool_value=bool(x))
    if isinstance(x, (int, np.integer)):
        return jpb.Value(integer_value=int(x))
    if isinstance(x, (float, np.floating)):
        return jpb.Value(double_value=float(x))
    if isinstance(x, str):
        return jpb.Value(string_value=x)
    if isinstance(x, dict):
        return jpb.Value(struct_value=jpb.Struct(fields={k: to_value(e) for k, e in x.items()}))
    if isinstance(x, (list, tuple)):
        return jpb.Value(list_value=jpb.ListValue(values=[to_value(e) for e in x]))
    raise invalid(f"payload value of type {type(x).__name__}")


def payload_in(fields) -> dict:
    return {k: from_value(v) for k, v in fields.items()}


def id_in(pid: qpb.PointId):
    kind = pid.WhichOneof("point_id_options")
    if kind == "num":
        return pid.num
    if kind == "uuid":
        try:
            return uuid.UUID(pid.uuid)
        except ValueError:
            raise invalid(f"Unable to parse UUID: {pid.uuid}") from None
    raise invalid("point id is missing")


def id_out(pid) -> qpb.PointId:
    if isinstance(pid, int):
        return qpb.PointId(num=pid)
    return qpb.PointId(uuid=str(pid))


def bm25(doc: ppb.Document) -> qe.Bm25:
    if doc.model.lower() not in BM25_MODELS:
        # What Qdrant says without an inference service.
        raise invalid("InferenceService URL not configured - please provide valid address in config file")
    opts = {k: from_value(v) for k, v in doc.options.items()}
    known = {"k", "b", "avg_len", "language", "lowercase", "ascii_folding", "min_token_len", "max_token_len"}
    extra = sorted(set(opts) - known)
    if extra:
        raise unmapped(f"Document.options {extra}")
    return qe.Bm25(qe.Bm25Config(**opts))


def vector_in(v, search: bool):
    """A Vector or VectorInput as the engine's dense list or SparseVector."""
    kind = v.WhichOneof("vector" if isinstance(v, ppb.Vector) else "variant")
    if kind == "dense":
        return list(v.dense.data)
    if kind == "sparse":
        return qe.SparseVector(list(v.sparse.indices), list(v.sparse.values))
    if kind == "document":
        model = bm25(v.document)
        return model.embed_query(v.document.text) if search else model.embed_document(v.document.text)
    if kind is None and isinstance(v, ppb.Vector) and len(v.data) > 0:
        # The deprecated flat form: data (+ indices for sparse).
        if v.HasField("indices"):
            return qe.SparseVector(list(v.indices.data), list(v.data))
        return list(v.data)
    if kind == "id":
        raise unmapped("a query by point id (Qdrant Edge's Query.Nearest takes vectors only)")
    raise unmapped(f"vector input {kind}")


def vectors_in(vs: ppb.Vectors) -> dict:
    kind = vs.WhichOneof("vectors_options")
    if kind == "vector":
        return {"": vector_in(vs.vector, False)}
    if kind == "vectors":
        return {name: vector_in(v, False) for name, v in vs.vectors.vectors.items()}
    return {}


def vector_out(v) -> ppb.VectorOutput:
    if isinstance(v, qe.SparseVector):
        return ppb.VectorOutput(sparse=ppb.SparseVector(indices=list(v.indices), values=list(v.values)))
    return ppb.VectorOutput(dense=ppb.DenseVector(data=list(v)))


def vectors_out(v, unnamed: bool) -> ppb.VectorsOutput | None:
    if v is None:
        return None
    if isinstance(v, dict):
        if unnamed and set(v) == {""}:
            return ppb.VectorsOutput(vector=vector_out(v[""]))
        return ppb.VectorsOutput(vectors=ppb.NamedVectorsOutput(vectors={k: vector_out(x) for k, x in v.items()}))
    return ppb.VectorsOutput(vector=vector_out(v))


def with_payload_in(sel: ppb.WithPayloadSelector | None):
    if sel is None:
        return False
    kind = sel.WhichOneof("selector_options")
    if kind == "enable":
        return sel.enable
    if kind == "include":
        return qe.PayloadSelector.Include(list(sel.include.fields))
    if kind == "exclude":
        return qe.PayloadSelector.Exclude(list(sel.exclude.fields))
    return False


def with_vectors_in(sel: ppb.WithVectorsSelector | None):
    if sel is None:
        return False
    kind = sel.WhichOneof("selector_options")
    if kind == "enable":
        return sel.enable
    if kind == "include":
        return list(sel.include.names)
    return False


# ---------------------------------------------------------------------------
# Filters


def timestamp(ts) -> str:
    t = _dt.datetime.fromtimestamp(ts.seconds, _dt.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + f".{ts.nanos:09d}Z"


def match_in(m: qpb.Match):
    kind = m.WhichOneof("match_value")
    if kind == "keyword":
        return qe.MatchValue(m.keyword)
    if kind == "integer":
        return qe.MatchValue(m.integer)
    if kind == "boolean":
        # A Python bool reaches the binding as the integer 1 or 0.
        return qe.MatchValue(np.bool_(m.boolean))
    if kind == "text":
        return qe.MatchText(m.text)
    if kind == "text_any":
        return qe.MatchTextAny(m.text_any)
    if kind == "phrase":
        return qe.MatchPhrase(m.phrase)
    if kind == "prefix":
        return qe.MatchPrefix(m.prefix)
    if kind == "substring":
        return qe.MatchSubstring(m.substring)
    if kind == "keywords":
        return qe.MatchAny(list(m.keywords.strings))
    if kind == "integers":
        return qe.MatchAny(list(m.integers.integers))
    if kind == "except_keywords":
        return qe.MatchExcept(list(m.except_keywords.strings))
    if kind == "except_integers":
        return qe.MatchExcept(list(m.except_integers.integers))
    raise unmapped(f"Match.{kind}")


def opt(msg, name):
    return getattr(msg, name) if msg.HasField(name) else None


def field_in(fc: qpb.FieldCondition):
    only(fc, {"key", "match", "range", "datetime_range", "values_count", "is_empty", "is_null"}, "FieldCondition")
    kw = {}
    if fc.HasField("match"):
        kw["match"] = match_in(fc.match)
    if fc.HasField("range"):
        r = fc.range
        kw["range"] = qe.RangeFloat(gte=opt(r, "gte"), gt=opt(r, "gt"), lte=opt(r, "lte"), lt=opt(r, "lt"))
    if fc.HasField("datetime_range"):
        r = fc.datetime_range
        kw["range"] = qe.RangeDateTime(**{b: timestamp(getattr(r, b)) for b in ("gte", "gt", "lte", "lt") if r.HasField(b)})
    if fc.HasField("values_count"):
        r = fc.values_count
        kw["values_count"] = qe.ValuesCount(**{b: getattr(r, b) for b in ("gte", "gt", "lte", "lt") if r.HasField(b)})
    if fc.HasField("is_empty"):
        kw["is_empty"] = fc.is_empty
    if fc.HasField("is_null"):
        kw["is_null"] = fc.is_null
    return qe.FieldCondition(fc.key, **kw)


def condition_in(c: qpb.Condition):
    kind = c.WhichOneof("condition_one_of")
    if kind == "field":
        return field_in(c.field)
    if kind == "filter":
        return filter_in(c.filter)
    if kind == "is_empty":
        return qe.IsEmptyCondition(c.is_empty.key)
    if kind == "is_null":
        return qe.IsNullCondition(c.is_null.key)
    if kind == "has_id":
        return qe.HasIdCondition({id_in(i) for i in c.has_id.has_id})
    if kind == "nested":
        return qe.NestedCondition(c.nested.key, filter_in(c.nested.filter))
    if kind == "has_vector":
        return qe.HasVectorCondition(c.has_vector.has_vector)
    raise unmapped(f"Condition.{kind}")


def filter_in(f: qpb.Filter | None):
    if f is None:
        return None
    kw = {name: [condition_in(c) for c in getattr(f, name)] or None for name in ("must", "should", "must_not")}
    if f.HasField("min_should"):
        ms = f.min_should
        kw["min_should"] = qe.MinShould([condition_in(c) for c in ms.conditions], ms.min_count)
    return qe.Filter(**kw)


def params_in(p: ppb.SearchParams | None):
    if p is None:
        return None
    only(p, {"hnsw_ef", "exact", "indexed_only"}, "SearchParams")
    return qe.SearchParams(hnsw_ef=opt(p, "hnsw_ef"), exact=p.exact, indexed_only=p.indexed_only)


# ---------------------------------------------------------------------------
# Queries


def query_in(q: ppb.Query | None, using: str, limit: int):
    if q is None:
        return None
    kind = q.WhichOneof("variant")
    if kind == "nearest":
        return qe.Query.Nearest(vector_in(q.nearest, True), using=using)
    if kind == "nearest_with_mmr":
        mmr = q.nearest_with_mmr.mmr
        lam = 1.0 - mmr.diversity if mmr.HasField("diversity") else DEFAULT_MMR_LAMBDA
        cand = mmr.candidates_limit if mmr.HasField("candidates_limit") else limit
        return qe.Mmr(vector_in(q.nearest_with_mmr.nearest, True), lambda_=lam, candidates_limit=cand, using=using)
    if kind == "fusion":
        if q.fusion == ppb.Fusion.RRF:
            return qe.Fusion.Rrf(k=DEFAULT_RRF_K)
        if q.fusion == ppb.Fusion.DBSF:
            return qe.Fusion.Dbsf()
        raise unmapped(f"Fusion {q.fusion}")
    if kind == "rrf":
        k = q.rrf.k if q.rrf.HasField("k") else DEFAULT_RRF_K
        return qe.Fusion.Rrf(k=k, weights=list(q.rrf.weights) or None)
    raise unmapped(f"Query.{kind}")


def prefetch_in(p: ppb.PrefetchQuery):
    only(p, {"prefetch", "query", "using", "filter", "params", "score_threshold", "limit"}, "PrefetchQuery")
    limit = p.limit if p.HasField("limit") else 10
    return qe.Prefetch(limit=limit, query=query_in(opt(p, "query"), p.using, limit),
                       prefetches=[prefetch_in(x) for x in p.prefetch] or None,
                       params=params_in(opt(p, "params")), filter=filter_in(opt(p, "filter")),
                       score_threshold=opt(p, "score_threshold"))


def scored_out(p, unnamed: bool) -> ppb.ScoredPoint:
    out = ppb.ScoredPoint(id=id_out(p.id), score=p.score, version=p.version)
    for k, v in (p.payload or {}).items():
        out.payload[k].CopyFrom(to_value(v))
    vs = vectors_out(p.vector, unnamed)
    if vs is not None:
        out.vectors.CopyFrom(vs)
    return out


def retrieved_out(r, unnamed: bool) -> ppb.RetrievedPoint:
    out = ppb.RetrievedPoint(id=id_out(r.id))
    for k, v in (r.payload or {}).items():
        out.payload[k].CopyFrom(to_value(v))
    vs = vectors_out(r.vector, unnamed)
    if vs is not None:
        out.vectors.CopyFrom(vs)
    return out


# ---------------------------------------------------------------------------
# Collections

DISTANCES = {cpb.Cosine: qe.Distance.Cosine, cpb.Euclid: qe.Distance.Euclid,
             cpb.Dot: qe.Distance.Dot, cpb.Manhattan: qe.Distance.Manhattan}
SCHEMA_IN = {ppb.FieldTypeKeyword: qe.PayloadSchemaType.Keyword, ppb.FieldTypeInteger: qe.PayloadSchemaType.Integer,
             ppb.FieldTypeFloat: qe.PayloadSchemaType.Float, ppb.FieldTypeGeo: qe.PayloadSchemaType.Geo,
             ppb.FieldTypeText: qe.PayloadSchemaType.Text, ppb.FieldTypeBool: qe.PayloadSchemaType.Bool,
             ppb.FieldTypeDatetime: qe.PayloadSchemaType.Datetime, ppb.FieldTypeUuid: qe.PayloadSchemaType.Uuid}
SCHEMA_OUT = {str(v): k for k, v in {
    cpb.Keyword: qe.PayloadSchemaType.Keyword, cpb.Integer: qe.PayloadSchemaType.Integer,
    cpb.Float: qe.PayloadSchemaType.Float, cpb.Geo: qe.PayloadSchemaType.Geo, cpb.Text: qe.PayloadSchemaType.Text,
    cpb.Bool: qe.PayloadSchemaType.Bool, cpb.Datetime: qe.PayloadSchemaType.Datetime,
    cpb.Uuid: qe.PayloadSchemaType.Uuid}.items()}
TOKENIZERS = {cpb.Word: "Word", cpb.Whitespace: "Whitespace", cpb.Prefix: "Prefix", cpb.Multilingual: "Multilingual"}


def vector_params_in(p: cpb.VectorParams) -> qe.EdgeVectorParams:
    only(p, {"size", "distance"}, "VectorParams")
    if p.distance not in DISTANCES:
        raise invalid(f"unknown distance {p.distance}")
    return qe.EdgeVectorParams(size=p.size, distance=DISTANCES[p.distance])


def sparse_params_in(p: cpb.SparseVectorParams) -> qe.EdgeSparseVectorParams:
    only(p, {"modifier"}, "SparseVectorParams")
    return qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf if p.modifier == cpb.Idf else None)


def index_schema_in(r: ppb.CreateFieldIndexCollection):
    if not r.HasField("field_type"):
        raise invalid("field_type is required")
    schema = SCHEMA_IN.get(r.field_type)
    if schema is None:
        raise unmapped(f"field type {r.field_type}")
    if not r.HasField("field_index_params"):
        return schema
    kind = r.field_index_params.WhichOneof("index_params")
    p = getattr(r.field_index_params, kind)
    if kind == "text_index_params":
        only(p, {"tokenizer", "lowercase", "min_token_len", "max_token_len", "phrase_matching", "ascii_folding"},
             "TextIndexParams")
        kw = {b: opt(p, b) for b in ("lowercase", "min_token_len", "max_token_len", "phrase_matching", "ascii_folding")}
        return qe.TextIndexParams(tokenizer=getattr(qe.TokenizerType, TOKENIZERS[p.tokenizer]), **kw)
    if kind == "integer_index_params":
        only(p, {"lookup", "range"}, "IntegerIndexParams")
        return qe.IntegerIndexParams(lookup=opt(p, "lookup"), range=opt(p, "range"))
    raise unmapped(f"PayloadIndexParams.{kind}")


class Collection:
    """One collection: an EdgeShard in its own directory, and its params."""

    def __init__(self, name: str, root: str, params: cpb.CollectionParams, config: qe.EdgeConfig):
        self.name = name
        self.params = params
        self.dir = tempfile.mkdtemp(prefix="c-", dir=root)
        self.shard = qe.EdgeShard.create(self.dir, config)
        self.unnamed = params.HasField("vectors_config") and params.vectors_config.HasField("params")

    def drop(self) -> None:
        self.shard.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class State:
    """Collections and aliases behind one lock (requests run one at a time)."""

    def __init__(self, root: str, version: str):
        self.root = root
        self.version = version
        self.lock = threading.Lock()
        self.collections: dict[str, Collection] = {}
        self.aliases: dict[str, str] = {}

    def resolve(self, name: str) -> Collection:
        c = self.collections.get(self.aliases.get(name, name))
        if c is None:
            raise Refused(grpc.StatusCode.NOT_FOUND, f"Not found: Collection `{name}` doesn't exist!")
        return c


def op_response(result=True) -> cpb.CollectionOperationResponse:
    return cpb.CollectionOperationResponse(result=result, time=0.0)


def updated() -> ppb.PointsOperationResponse:
    return ppb.PointsOperationResponse(result=ppb.UpdateResult(operation_id=0, status=ppb.Completed))


class QdrantService(hsvc.QdrantServicer):
    """qdrant.Qdrant: HealthCheck with the configured version."""

    def __init__(self, state: State):
        self.state = state

    @served
    def HealthCheck(self, request, context):
        return hpb.HealthCheckReply(title=TITLE, version=self.state.version,
                                    commit="qdrant-edge-py " + metadata.version("qdrant-edge-py"))


class CollectionsService(csvc.CollectionsServicer):
    """qdrant.Collections: create, get, list, delete, exists and aliases."""

    def __init__(self, state: State):
        self.state = state

    @served
    def Create(self, r, context):
        only(r, {"collection_name", "vectors_config", "sparse_vectors_config", "timeout"}, "CreateCollection")
        st = self.state
        if r.collection_name in st.collections or r.collection_name in st.aliases:
            raise Refused(grpc.StatusCode.ALREADY_EXISTS, f"Wrong input: Collection `{r.collection_name}` already exists!")
        vectors = {}
        vc = r.vectors_config
        if vc.HasField("params"):
            vectors = vector_params_in(vc.params)
        elif vc.HasField("params_map"):
            vectors = {k: vector_params_in(p) for k, p in vc.params_map.map.items()}
        sparse = {k: sparse_params_in(p) for k, p in r.sparse_vectors_config.map.items()}
        params = cpb.CollectionParams(shard_number=1, on_disk_payload=True)
        if r.HasField("vectors_config"):
            params.vectors_config.CopyFrom(r.vectors_config)
        if r.HasField("sparse_vectors_config"):
            params.sparse_vectors_config.CopyFrom(r.sparse_vectors_config)
        config = qe.EdgeConfig(vectors=vectors, sparse_vectors=sparse or None)
        st.collections[r.collection_name] = Collection(r.collection_name, st.root, params, config)
        return op_response()

    @served
    def Delete(self, r, context):
        c = self.state.collections.pop(r.collection_name, None)
        if c is None:
            return op_response(False)
        for alias in [a for a, t in self.state.aliases.items() if t == r.collection_name]:
            del self.state.aliases[alias]
        c.drop()
        return op_response()

    @served
    def Get(self, r, context):
        c = self.state.resolve(r.collection_name)
        info = c.shard.info()
        schema = {}
        for key, pi in info.payload_schema.items():
            schema[key] = cpb.PayloadSchemaInfo(data_type=SCHEMA_OUT[str(pi.data_type)], points=pi.points)
        ci = cpb.CollectionInfo(status=cpb.Green, optimizer_status=cpb.OptimizerStatus(ok=True),
                                segments_count=info.segments_count, points_count=info.points_count,
                                indexed_vectors_count=info.indexed_vectors_count, payload_schema=schema,
                                config=cpb.CollectionConfig(params=c.params))
        return cpb.GetCollectionInfoResponse(result=ci, time=0.0)

    @served
    def List(self, r, context):
        return cpb.ListCollectionsResponse(
            collections=[cpb.CollectionDescription(name=n) for n in sorted(self.state.collections)], time=0.0)

    @served
    def CollectionExists(self, r, context):
        exists = r.collection_name in self.state.collections
        return cpb.CollectionExistsResponse(result=cpb.CollectionExists(exists=exists), time=0.0)

    @served
    def UpdateAliases(self, r, context):
        st = self.state
        for a in r.actions:
            kind = a.WhichOneof("action")
            if kind == "create_alias":
                if a.create_alias.collection_name not in st.collections:
                    raise Refused(grpc.StatusCode.NOT_FOUND,
                                  f"Not found: Collection `{a.create_alias.collection_name}` doesn't exist!")
                st.aliases[a.create_alias.alias_name] = a.create_alias.collection_name
            elif kind == "delete_alias":
                if st.aliases.pop(a.delete_alias.alias_name, None) is None:
                    raise Refused(grpc.StatusCode.NOT_FOUND, f"Not found: Alias {a.delete_alias.alias_name} does not exists!")
            elif kind == "rename_alias":
                target = st.aliases.pop(a.rename_alias.old_alias_name, None)
                if target is None:
                    raise Refused(grpc.StatusCode.NOT_FOUND, f"Not found: Alias {a.rename_alias.old_alias_name} does not exists!")
                st.aliases[a.rename_alias.new_alias_name] = target
        return op_response()

    @served
    def ListAliases(self, r, context):
        return cpb.ListAliasesResponse(aliases=[cpb.AliasDescription(alias_name=a, collection_name=c)
                                                for a, c in sorted(self.state.aliases.items())], time=0.0)

    @served
    def ListCollectionAliases(self, r, context):
        return cpb.ListAliasesResponse(aliases=[cpb.AliasDescription(alias_name=a, collection_name=c)
                                                for a, c in sorted(self.state.aliases.items())
                                                if c == r.collection_name], time=0.0)


class PointsService(psvc.PointsServicer):
    """qdrant.Points: upsert, delete, get, count, query, field indexes."""

    def __init__(self, state: State):
        self.state = state

    @served
    def Upsert(self, r, context):
        only(r, {"collection_name", "wait", "points", "timeout"}, "UpsertPoints")
        c = self.state.resolve(r.collection_name)
        points = []
        for p in r.points:
            vec = vectors_in(p.vectors)
            if c.unnamed and set(vec) == {""}:
                vec = vec[""]
            points.append(qe.Point(id_in(p.id), vec, payload_in(p.payload)))
        c.shard.update(qe.UpdateOperation.upsert_points(points))
        return updated()

    @served
    def Delete(self, r, context):
        only(r, {"collection_name", "wait", "points", "timeout"}, "DeletePoints")
        c = self.state.resolve(r.collection_name)
        kind = r.points.WhichOneof("points_selector_one_of")
        if kind == "points":
            c.shard.update(qe.UpdateOperation.delete_points([id_in(i) for i in r.points.points.ids]))
        elif kind == "filter":
            c.shard.update(qe.UpdateOperation.delete_points_by_filter(filter_in(r.points.filter)))
        else:
            raise invalid("points selector is missing")
        return updated()

    @served
    def Get(self, r, context):
        only(r, {"collection_name", "ids", "with_payload", "with_vectors", "timeout"}, "GetPoints")
        c = self.state.resolve(r.collection_name)
        got = c.shard.retrieve([id_in(i) for i in r.ids], with_payload=with_payload_in(opt(r, "with_payload")),
                               with_vector=with_vectors_in(opt(r, "with_vectors")))
        return ppb.GetResponse(result=[retrieved_out(x, c.unnamed) for x in got], time=0.0)

    @served
    def Count(self, r, context):
        only(r, {"collection_name", "filter", "exact", "timeout"}, "CountPoints")
        c = self.state.resolve(r.collection_name)
        exact = r.exact if r.HasField("exact") else True
        n = c.shard.count(qe.CountRequest(filter=filter_in(opt(r, "filter")), exact=exact))
        return ppb.CountResponse(result=ppb.CountResult(count=n), time=0.0)

    @served
    def Query(self, r, context):
        return self.query(r)

    @served
    def QueryBatch(self, r, context):
        only(r, {"collection_name", "query_points", "timeout"}, "QueryBatchPoints")
        out = ppb.QueryBatchResponse(time=0.0)
        for q in r.query_points:
            if not q.collection_name:
                q.collection_name = r.collection_name
            out.result.add(result=self.query(q).result)
        return out

    def query(self, r: ppb.QueryPoints) -> ppb.QueryResponse:
        only(r, {"collection_name", "prefetch", "query", "using", "filter", "params", "score_threshold", "limit",
                 "offset", "with_vectors", "with_payload", "timeout"}, "QueryPoints")
        c = self.state.resolve(r.collection_name)
        limit = r.limit if r.HasField("limit") else 10
        req = qe.QueryRequest(limit=limit, offset=opt(r, "offset"), query=query_in(opt(r, "query"), r.using, limit),
                              prefetches=[prefetch_in(p) for p in r.prefetch] or None,
                              with_vector=with_vectors_in(opt(r, "with_vectors")),
                              with_payload=with_payload_in(opt(r, "with_payload")),
                              filter=filter_in(opt(r, "filter")), score_threshold=opt(r, "score_threshold"),
                              params=params_in(opt(r, "params")))
        return ppb.QueryResponse(result=[scored_out(p, c.unnamed) for p in c.shard.query(req)], time=0.0)

    @served
    def CreateFieldIndex(self, r, context):
        only(r, {"collection_name", "wait", "field_name", "field_type", "field_index_params", "timeout"},
             "CreateFieldIndexCollection")
        c = self.state.resolve(r.collection_name)
        c.shard.update(qe.UpdateOperation.create_field_index(r.field_name, index_schema_in(r)))
        return updated()

    @served
    def DeleteFieldIndex(self, r, context):
        c = self.state.resolve(r.collection_name)
        c.shard.update(qe.UpdateOperation.delete_field_index(r.field_name))
        return updated()


def serve(host: str, port: int, root: str, version: str, workers: int = 4):
    """Starts the front; returns (grpc server, bound port, state)."""
    state = State(root, version)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers),
                         options=[("grpc.max_receive_message_length", 64 << 20)])
    hsvc.add_QdrantServicer_to_server(QdrantService(state), server)
    csvc.add_CollectionsServicer_to_server(CollectionsService(state), server)
    psvc.add_PointsServicer_to_server(PointsService(state), server)
    bound = server.add_insecure_port(f"{host}:{port}")
    if bound == 0:
        raise OSError(f"cannot listen on {host}:{port}")
    server.start()
    return server, bound, state


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--data", required=True, help="directory for the shards (emptied at start)")
    ap.add_argument("--port-file", help="write the bound port here once serving")
    ap.add_argument("--server-version", default=DEFAULT_VERSION)
    args = ap.parse_args(argv)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        ap.error("the front serves loopback only")
    os.makedirs(args.data, exist_ok=True)
    server, port, _ = serve(args.host, args.port, args.data, args.server_version)
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.replace(tmp, args.port_file)
    print(f"edge front: serving Qdrant Edge {metadata.version('qdrant-edge-py')} as Qdrant {args.server_version} "
          f"on {args.host}:{port}", file=sys.stderr, flush=True)
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    done.wait()
    server.stop(grace=1).wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())

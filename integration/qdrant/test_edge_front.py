"""Tests of the gRPC front over Qdrant Edge (edge_front.py).

They drive a front started in-process through qdrant-client's generated
gRPC stubs, and check the front's own conversions against oracles computed
here from the inputs (distances, RRF, MMR), plus the refusal of what it
does not map. Run: python -m pytest integration/qdrant (go test runs it too,
see front_test.go).
"""

import math
import tempfile
import uuid

import grpc
import numpy as np
import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from qdrant_client.grpc import collections_pb2 as cpb
from qdrant_client.grpc import collections_service_pb2_grpc as csvc
from qdrant_client.grpc import json_with_int_pb2 as jpb
from qdrant_client.grpc import points_pb2 as ppb
from qdrant_client.grpc import points_service_pb2_grpc as psvc
from qdrant_client.grpc import qdrant_common_pb2 as qpb
from qdrant_client.grpc import qdrant_pb2 as hpb
from qdrant_client.grpc import qdrant_pb2_grpc as hsvc

import edge_front

VECS = {1: [1.0, 0.0], 2: [0.9, 0.1], 3: [0.0, 1.0], 4: [0.7, 0.7], 5: [-0.5, 0.2]}


class Front:
    def __init__(self, version="1.16.3"):
        self.dir = tempfile.mkdtemp()
        self.server, port, _ = edge_front.serve("127.0.0.1", 0, self.dir, version, workers=2)
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        self.health = hsvc.QdrantStub(self.channel)
        self.coll = csvc.CollectionsStub(self.channel)
        self.points = psvc.PointsStub(self.channel)

    def close(self):
        self.channel.close()
        self.server.stop(None)

    def create(self, name, distance=cpb.Cosine, named=True, sparse=False):
        params = cpb.VectorParams(size=2, distance=distance)
        vc = cpb.VectorsConfig(params_map=cpb.VectorParamsMap(map={"v": params})) if named else cpb.VectorsConfig(params=params)
        req = cpb.CreateCollection(collection_name=name, vectors_config=vc)
        if sparse:
            req.sparse_vectors_config.CopyFrom(cpb.SparseVectorConfig(map={"s": cpb.SparseVectorParams(modifier=cpb.Idf)}))
        assert self.coll.Create(req).result

    def upsert(self, name, points):
        self.points.Upsert(ppb.UpsertPoints(collection_name=name, wait=True, points=points))

    def query(self, **kw):
        return list(self.points.Query(ppb.QueryPoints(**kw)).result)


@pytest.fixture
def front():
    f = Front()
    yield f
    f.close()


def dense_points(named=True):
    out = []
    for i, v in VECS.items():
        vec = ppb.Vector(dense=ppb.DenseVector(data=v))
        vectors = ppb.Vectors(vectors=ppb.NamedVectors(vectors={"v": vec})) if named else ppb.Vectors(vector=vec)
        out.append(ppb.PointStruct(id=qpb.PointId(num=i), vectors=vectors,
                                   payload={"n": jpb.Value(integer_value=i)}))
    return out


def nearest(v):
    return ppb.Query(nearest=ppb.VectorInput(dense=ppb.DenseVector(data=v)))


def test_health_reports_configured_version():
    f = Front(version="1.15.2")
    try:
        r = f.health.HealthCheck(hpb.HealthCheckRequest())
        assert r.version == "1.15.2"
        assert "not a Qdrant server" in r.title
    finally:
        f.close()


@pytest.mark.parametrize("named", [True, False])
def test_collection_info_round_trip(front, named):
    front.create("c", distance=cpb.Dot, named=named, sparse=True)
    front.upsert("c", dense_points(named))
    ft = ppb.FieldTypeInteger
    front.points.CreateFieldIndex(ppb.CreateFieldIndexCollection(collection_name="c", field_name="n", field_type=ft))
    info = front.coll.Get(cpb.GetCollectionInfoRequest(collection_name="c")).result
    assert info.points_count == len(VECS)
    vc = info.config.params.vectors_config
    params = vc.params_map.map["v"] if named else vc.params
    assert params.size == 2 and params.distance == cpb.Dot
    assert info.config.params.sparse_vectors_config.map["s"].modifier == cpb.Idf
    assert info.payload_schema["n"].data_type == cpb.Integer
    assert info.payload_schema["n"].points == len(VECS)


def euclid(a, b):
    return math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))


@pytest.mark.parametrize("named", [True, False])
def test_euclid_distances_ascending_and_threshold(front, named):
    front.create("c", distance=cpb.Euclid, named=named)
    front.upsert("c", dense_points(named))
    q = [1.0, 0.0]
    using = {"using": "v"} if named else {}
    got = front.query(collection_name="c", query=nearest(q), limit=10, **using)
    want = sorted(VECS, key=lambda i: euclid(q, VECS[i]))
    assert [p.id.num for p in got] == want
    for p in got:
        assert p.score == pytest.approx(euclid(q, VECS[p.id.num]), abs=1e-6)
    got = front.query(collection_name="c", query=nearest(q), limit=10, score_threshold=0.5, **using)
    assert [p.id.num for p in got] == [i for i in want if euclid(q, VECS[i]) < 0.5]


def sim(distance, a, b):
    """The raw similarity Qdrant's MMR compares (Euclid: −Σ(a−b)²)."""
    if distance == cpb.Euclid:
        return -sum((x - y) ** 2 for x, y in zip(a, b))
    if distance == cpb.Manhattan:
        return -sum(abs(x - y) for x, y in zip(a, b))
    if distance == cpb.Cosine:
        a, b = np.array(a) / np.linalg.norm(a), np.array(b) / np.linalg.norm(b)
    return float(np.dot(a, b))


def mmr_oracle(distance, q, lam, k):
    """argmax λ·sim(q,d) − (1−λ)·max sim(d,s), starting with the nearest."""
    left, out = list(VECS), []
    while left and len(out) < k:
        def gain(i):
            rel = sim(distance, q, VECS[i])
            if not out:
                return rel
            return lam * rel - (1 - lam) * max(sim(distance, VECS[i], VECS[j]) for j in out)
        ranked = sorted(left, key=gain, reverse=True)
        assert len(ranked) == 1 or gain(ranked[0]) - gain(ranked[1]) > 1e-4, "the test data must not tie"
        best = ranked[0]
        out.append(best)
        left.remove(best)
    return out


@pytest.mark.parametrize("distance", [cpb.Cosine, cpb.Dot, cpb.Euclid, cpb.Manhattan])
@pytest.mark.parametrize("diversity", [0.0, 0.5, 0.9])
def test_mmr_diversity_is_one_minus_lambda(front, distance, diversity):
    front.create("c", distance=distance)
    front.upsert("c", dense_points())
    q = [0.3, 0.45]
    mmr = ppb.Query(nearest_with_mmr=ppb.NearestInputWithMmr(
        nearest=ppb.VectorInput(dense=ppb.DenseVector(data=q)),
        mmr=ppb.Mmr(diversity=diversity, candidates_limit=len(VECS))))
    got = front.query(collection_name="c", query=mmr, using="v", limit=3)
    assert [p.id.num for p in got] == mmr_oracle(distance, q, 1 - diversity, 3)


def test_rrf_default_k_is_two(front):
    front.create("c")
    front.upsert("c", dense_points())
    lists = [[1.0, 0.0], [0.0, 1.0]]
    prefetch = [ppb.PrefetchQuery(query=nearest(v), using="v", limit=5) for v in lists]
    ranks = []
    for v in lists:
        ranks.append([p.id.num for p in front.query(collection_name="c", query=nearest(v), using="v", limit=5)])
    for query, k in [(ppb.Query(fusion=ppb.RRF), 2), (ppb.Query(rrf=ppb.Rrf()), 2), (ppb.Query(rrf=ppb.Rrf(k=61)), 61)]:
        got = front.query(collection_name="c", prefetch=prefetch, query=query, limit=5)
        want = {i: sum(1 / (k + r.index(i)) for r in ranks if i in r) for i in VECS}
        for p in got:
            assert p.score == pytest.approx(want[p.id.num], rel=1e-6)
        assert [p.score for p in got] == sorted((p.score for p in got), reverse=True)


def bm25_doc(text):
    return ppb.Vector(document=ppb.Document(text=text, model="qdrant/bm25"))


def test_bm25_documents_are_stemmed_and_stop_words_dropped(front):
    front.create("c", sparse=True)
    texts = {1: "I was running fast", 2: "she runs every day", 3: "a cat sat"}
    front.upsert("c", [ppb.PointStruct(id=qpb.PointId(num=i), payload={"t": jpb.Value(string_value=t)},
                                       vectors=ppb.Vectors(vectors=ppb.NamedVectors(vectors={"s": bm25_doc(t)})))
                       for i, t in texts.items()])

    def search(text):
        q = ppb.Query(nearest=ppb.VectorInput(document=ppb.Document(text=text, model="qdrant/bm25")))
        return sorted(p.id.num for p in front.query(collection_name="c", query=q, using="s", limit=10))

    assert search("running") == [1, 2]
    assert search("the") == []
    with pytest.raises(grpc.RpcError) as e:
        q = ppb.Query(nearest=ppb.VectorInput(document=ppb.Document(text="x", model="sentence-transformers/x")))
        front.query(collection_name="c", query=q, using="s", limit=1)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_payload_round_trip_and_filters(front):
    front.create("c")
    pid = str(uuid.uuid4())
    payload = {"s": "x", "i": 7, "f": 2.5, "b": True, "z": None, "l": [1, "y"], "o": {"k": {"d": False}},
               "d": "2024-01-01T00:00:00.000001Z"}
    vec = ppb.Vectors(vectors=ppb.NamedVectors(vectors={"v": ppb.Vector(dense=ppb.DenseVector(data=[1, 0]))}))
    front.upsert("c", [ppb.PointStruct(id=qpb.PointId(uuid=pid), vectors=vec,
                                       payload={k: edge_front.to_value(v) for k, v in payload.items()})])
    got = front.points.Get(ppb.GetPoints(collection_name="c", ids=[qpb.PointId(uuid=pid)],
                                         with_payload=ppb.WithPayloadSelector(enable=True))).result
    assert len(got) == 1 and got[0].id.uuid == pid
    assert {k: edge_front.from_value(v) for k, v in got[0].payload.items()} == payload

    def count(*conds):
        return front.points.Count(ppb.CountPoints(collection_name="c", filter=qpb.Filter(must=list(conds)))).result.count

    def field(key, **kw):
        return qpb.Condition(field=qpb.FieldCondition(key=key, **kw))

    assert count(field("b", match=qpb.Match(boolean=True))) == 1
    assert count(field("b", match=qpb.Match(boolean=False))) == 0
    assert count(field("o.k.d", match=qpb.Match(boolean=False))) == 1
    assert count(field("l", match=qpb.Match(integer=1))) == 1
    assert count(field("f", range=qpb.Range(gte=2.5, lte=2.5))) == 1
    at = Timestamp(seconds=1704067200, nanos=1000)
    assert count(field("d", datetime_range=qpb.DatetimeRange(gte=at, lte=at))) == 1
    assert count(field("d", datetime_range=qpb.DatetimeRange(gt=at))) == 0
    assert count(qpb.Condition(is_null=qpb.IsNullCondition(key="z"))) == 1
    assert count(qpb.Condition(is_empty=qpb.IsEmptyCondition(key="absent"))) == 1


def test_aliases(front):
    front.create("c")
    front.coll.UpdateAliases(cpb.ChangeAliases(actions=[
        cpb.AliasOperations(create_alias=cpb.CreateAlias(collection_name="c", alias_name="a"))]))
    got = front.coll.ListAliases(cpb.ListAliasesRequest()).aliases
    assert [(a.alias_name, a.collection_name) for a in got] == [("a", "c")]
    assert front.coll.Get(cpb.GetCollectionInfoRequest(collection_name="a")).result.points_count == 0
    front.coll.Delete(cpb.DeleteCollection(collection_name="c"))
    assert list(front.coll.ListAliases(cpb.ListAliasesRequest()).aliases) == []
    with pytest.raises(grpc.RpcError) as e:
        front.coll.Get(cpb.GetCollectionInfoRequest(collection_name="a"))
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


def test_unmapped_fields_are_refused(front):
    front.create("c")
    for req in [
        ppb.QueryPoints(collection_name="c", query=nearest([1, 0]), using="v", lookup_from=ppb.LookupLocation(collection_name="x")),
        ppb.QueryPoints(collection_name="c", query=ppb.Query(order_by=ppb.OrderBy(key="n"))),
        ppb.QueryPoints(collection_name="c", query=ppb.Query(nearest=ppb.VectorInput(id=qpb.PointId(num=1))), using="v"),
    ]:
        with pytest.raises(grpc.RpcError) as e:
            front.points.Query(req)
        assert e.value.code() == grpc.StatusCode.UNIMPLEMENTED, req
    with pytest.raises(grpc.RpcError) as e:
        front.coll.Create(cpb.CreateCollection(collection_name="d", shard_number=2))
    assert e.value.code() == grpc.StatusCode.UNIMPLEMENTED

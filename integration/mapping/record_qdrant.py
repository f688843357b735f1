"""Records Qdrant collection info (GetCollectionInfo, in its proto3 JSON
form) of representative collections into mapping/testdata/qdrant-<version>/,
the inputs of the mapping package's golden tests.

Usage: python record_qdrant.py HOST:PORT  (the venv of integration/qdrant)

Collections rcp-mapping-unnamed (one unnamed dense vector, a BM25 sparse
vector and a payload index of every type, at plain, nested, array and
quoted keys) and rcp-mapping-named (named vectors) are created, recorded
and deleted.
"""

import json
import os
import sys

import grpc
from google.protobuf import json_format
from qdrant_client.grpc import collections_pb2 as cpb
from qdrant_client.grpc import collections_service_pb2_grpc as csvc
from qdrant_client.grpc import points_pb2 as ppb
from qdrant_client.grpc import points_service_pb2_grpc as psvc
from qdrant_client.grpc import qdrant_pb2, qdrant_pb2_grpc

INDEXES = [
    ("tag", ppb.FieldTypeKeyword), ("year", ppb.FieldTypeInteger), ("score", ppb.FieldTypeFloat),
    ("done", ppb.FieldTypeBool), ("at", ppb.FieldTypeDatetime), ("loc", ppb.FieldTypeGeo),
    ("body", ppb.FieldTypeText), ("uid", ppb.FieldTypeUuid), ("meta.lang", ppb.FieldTypeKeyword),
    ("authors[].name", ppb.FieldTypeKeyword), ('"dotted.key"', ppb.FieldTypeInteger),
]


def main() -> None:
    addr = sys.argv[1]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with grpc.insecure_channel(addr) as ch:
        version = qdrant_pb2_grpc.QdrantStub(ch).HealthCheck(qdrant_pb2.HealthCheckRequest()).version
        out = os.path.join(root, "mapping", "testdata", f"qdrant-{version}")
        os.makedirs(out, exist_ok=True)
        cols, points = csvc.CollectionsStub(ch), psvc.PointsStub(ch)
        specs = {
            "unnamed": cpb.CreateCollection(
                collection_name="rcp-mapping-unnamed",
                vectors_config=cpb.VectorsConfig(params=cpb.VectorParams(size=4, distance=cpb.Cosine)),
                sparse_vectors_config=cpb.SparseVectorConfig(map={"bm25": cpb.SparseVectorParams(modifier=cpb.Idf)})),
            "named": cpb.CreateCollection(
                collection_name="rcp-mapping-named",
                vectors_config=cpb.VectorsConfig(params_map=cpb.VectorParamsMap(map={
                    "dot": cpb.VectorParams(size=8, distance=cpb.Dot),
                    "l2": cpb.VectorParams(size=3, distance=cpb.Euclid),
                    "l1": cpb.VectorParams(size=3, distance=cpb.Manhattan)})),
                sparse_vectors_config=cpb.SparseVectorConfig(map={"plain": cpb.SparseVectorParams()})),
        }
        for name, create in specs.items():
            cols.Delete(cpb.DeleteCollection(collection_name=create.collection_name))
            cols.Create(create)
            try:
                if name == "unnamed":
                    for key, kind in INDEXES:
                        points.CreateFieldIndex(ppb.CreateFieldIndexCollection(
                            collection_name=create.collection_name, field_name=key, field_type=kind, wait=True))
                info = cols.Get(cpb.GetCollectionInfoRequest(collection_name=create.collection_name)).result
                with open(os.path.join(out, f"{name}.json"), "w") as f:
                    json.dump(json_format.MessageToDict(info), f, indent=1, sort_keys=True)
                    f.write("\n")
                print(f"  {name}.json", file=sys.stderr)
            finally:
                cols.Delete(cpb.DeleteCollection(collection_name=create.collection_name))


if __name__ == "__main__":
    main()

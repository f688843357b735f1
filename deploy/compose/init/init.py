"""Creates the empty `docs` index in Elasticsearch and OpenSearch and the
`docs` collection in Qdrant, so that the sidecars' start-up probes find a
target with BM25 text fields, a dense vector, filterable metadata and (in
Qdrant) a BM25 sparse vector. Idempotent: existing targets are left alone.

Environment: ES_URL, OS_URL, QDRANT_URL (REST, port 6333), INDEX (default
docs), DIM (default 384, the embedding server's vector length). An unset
URL skips that engine. Standard library only.
"""

import json
import os
import sys
import time
import urllib.error
import urllib.request

INDEX = os.environ.get("INDEX", "docs")
DIM = int(os.environ.get("DIM", "384"))

# Document shape shared by the three engines: title and text are searched
# with BM25, topic and year are filterable, url feeds citations.
TEXT = {"type": "text"}
PROPERTIES = {
    "title": TEXT,
    "text": TEXT,
    "url": {"type": "keyword"},
    "topic": {"type": "keyword"},
    "year": {"type": "integer"},
}


def call(method, url, body=None):
    """Returns (status, parsed JSON or None); never raises on HTTP errors."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            raw = r.read()
            return r.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw)
        except ValueError:
            return e.code, raw.decode(errors="replace")


def wait(url):
    """Retries until the engine answers at all (compose health checks
    normally make this immediate)."""
    for _ in range(60):
        try:
            call("GET", url)
            return
        except OSError:
            time.sleep(2)
    sys.exit(f"init: {url} did not answer")


def ensure(what, exists_url, create):
    status, _ = call("GET", exists_url)
    if status == 200:
        print(f"init: {what} exists")
        return
    status, body = create()
    if status not in (200, 201):
        sys.exit(f"init: creating {what} failed: {status} {body}")
    print(f"init: created {what}")


def elasticsearch(url):
    props = dict(PROPERTIES, embedding={
        "type": "dense_vector", "dims": DIM, "index": True, "similarity": "cosine"})
    body = {"settings": {"number_of_shards": 1, "number_of_replicas": 0},
            "mappings": {"properties": props}}
    ensure(f"Elasticsearch index {INDEX}", f"{url}/{INDEX}",
           lambda: call("PUT", f"{url}/{INDEX}", body))


def opensearch(url):
    props = dict(PROPERTIES, embedding={
        "type": "knn_vector", "dimension": DIM,
        "method": {"name": "hnsw", "engine": "lucene", "space_type": "cosinesimil"}})
    body = {"settings": {"index": {"knn": True, "number_of_shards": 1, "number_of_replicas": 0}},
            "mappings": {"properties": props}}
    ensure(f"OpenSearch index {INDEX}", f"{url}/{INDEX}",
           lambda: call("PUT", f"{url}/{INDEX}", body))


def qdrant(url):
    col = f"{url}/collections/{INDEX}"
    body = {"vectors": {"dense": {"size": DIM, "distance": "Cosine"}},
            "sparse_vectors": {"bm25": {"modifier": "idf"}}}

    def create():
        status, resp = call("PUT", col, body)
        for field, schema in (("topic", "keyword"), ("year", "integer")):
            if status in (200, 201):
                status, resp = call("PUT", f"{col}/index?wait=true",
                                    {"field_name": field, "field_schema": schema})
        return status, resp

    ensure(f"Qdrant collection {INDEX}", col, create)


def main():
    for env, setup in (("ES_URL", elasticsearch), ("OS_URL", opensearch), ("QDRANT_URL", qdrant)):
        url = os.environ.get(env, "").rstrip("/")
        if url:
            wait(url)
            setup(url)


if __name__ == "__main__":
    main()

"""An OpenAI-compatible int8 embedding front for the embedding server.

It serves POST /v1/embeddings. A request that asks for int8 embeddings
("encoding_format": "int8", or Cohere's "embedding_types": ["int8"]) is sent
to the upstream server for float embeddings, and each value x is answered as
the integer round(x * SCALE) clamped to [-128, 127], in the OpenAI response
shape: int8 quantisation with one fixed symmetric scale, the scheme an int8
embedding service applies server-side (the upstream model is real; only the
quantisation is done here, since no embedding server on the package
registries answers int8 without fetching model weights at run time). Any
other request is passed through unchanged.

Usage: python int8_front.py --upstream URL --port PORT [--scale 400]
"""
import argparse
import json
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# multilingual-e5-small vectors are unit length over 384 dimensions, with
# small components (measured within ±0.15): 400 keeps them inside int8.
DEFAULT_SCALE = 400.0


def wants_int8(req):
    types = req.get("embedding_types")
    return req.get("encoding_format") == "int8" or (isinstance(types, list) and "int8" in types)


def quantise(vec, scale):
    return [max(-128, min(127, int(round(x * scale)))) for x in vec]


class Handler(BaseHTTPRequestHandler):
    upstream = ""
    scale = DEFAULT_SCALE
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, code, body, ctype="application/json"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.reply(200, b'{"status":"ok"}')

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0) or 0)
        raw = self.rfile.read(n) if n > 0 else b""
        try:
            req = json.loads(raw.decode("utf-8") or "{}")
        except ValueError:
            self.reply(400, b'{"error":{"message":"invalid JSON body"}}')
            return
        int8 = isinstance(req, dict) and wants_int8(req)
        if int8:
            req = dict(req, encoding_format="float")
            req.pop("embedding_types", None)
            raw = json.dumps(req).encode("utf-8")
        up = urllib.request.Request(self.upstream + self.path, data=raw, method="POST",
                                    headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(up, timeout=120) as r:
                status, body = r.status, r.read()
        except urllib.error.HTTPError as e:
            status, body = e.code, e.read()
        except OSError as e:
            self.reply(502, json.dumps({"error": {"message": "upstream: %s" % e}}).encode())
            return
        if int8 and status == 200:
            doc = json.loads(body)
            for d in doc.get("data", []):
                d["embedding"] = quantise(d["embedding"], self.scale)
            body = json.dumps(doc).encode("utf-8")
        self.reply(status, body)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--scale", type=float, default=DEFAULT_SCALE)
    a = ap.parse_args()
    Handler.upstream = a.upstream.rstrip("/")
    Handler.scale = a.scale
    ThreadingHTTPServer((a.host, a.port), Handler).serve_forever()


if __name__ == "__main__":
    main()

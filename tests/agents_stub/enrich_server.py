"""A chat-completions server in a thread (the OpenAI API's shape) for LLM enrichment:
``mode`` picks a good answer, fenced or malformed JSON, a schema mismatch, HTTP 429
insufficient_quota, or a reply past the client's timeout. Shared by the enrichment
tests (tests/core/enrich/) and `ars enrich --pending` in tests/core/ingest/."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FIXTURES = Path(__file__).parents[1] / "fixtures"
OPENCLAW = FIXTURES / "openclaw" / "agents" / "main" / "sessions" / "5f1c2a9e-7d41-4a0b-9c3e-2b8f6d1e0a77.jsonl"

GOOD = {
    "summary": "Repaired the nightly NAS backup after the NAS host key changed.",
    "topics": ["backup", "nas", "ssh host keys"],
    "entities": [{"name": "NAS", "type": "product"}, {"name": "Lin Wei", "type": "person"},
                 {"name": "known_hosts", "type": "file"}, {"name": "firmware update", "type": "event"}],
    "relations": [{"src": "rsync", "rel": "copies to", "dst": "NAS"}],
}


class ChatServer:
    """A chat-completions server in a thread; ``mode`` picks its behaviour."""

    def __init__(self) -> None:
        self.mode = "good"
        self.requests: list[dict] = []
        self.release = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                outer.requests.append({"path": self.path, "body": body,
                                       "auth": self.headers.get("Authorization", "")})
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self._send(404, {"error": {"message": "not found"}})
                mode = outer.mode
                if mode == "quota":
                    return self._send(429, {"error": {
                        "message": "You exceeded your current quota, please check your plan and billing details.",
                        "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}})
                if mode == "slow":
                    outer.release.wait(3.0)  # past the client's timeout
                content = {
                    "good": json.dumps(GOOD),
                    "slow": json.dumps(GOOD),
                    "fenced": "```json\n" + json.dumps(GOOD) + "\n```",
                    "malformed": '{"summary": "cut off here", "topics": ["a",',
                    "schema": json.dumps({"topics": "not a list", "entities": []}),
                }[mode]
                self._send(200, {
                    "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", "test"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
                })

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (the timeout case)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()

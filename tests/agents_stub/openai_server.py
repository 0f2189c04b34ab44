"""A scripted model behind a real HTTP server that speaks the OpenAI Chat
Completions API well enough for an agent's tool loop (OpenClaw's
``api: "openai-completions"`` custom provider, Hermes' OpenAI client).

The agent is pointed at ``http://127.0.0.1:PORT/v1``; it sends ``POST
/v1/chat/completions`` (streamed or not) with its tool definitions; the script
answers:

* a request offering the tool ``tool`` whose messages hold no ``role: "tool"``
  message for our call yet: one assistant message with a ``tool_calls`` entry
  calling ``tool`` with ``arguments`` (JSON);
* a request after that tool message: the final text (``FINAL_TEXT``).

Anything else (a request without the tool, a title request) gets a short text;
``GET /v1/models`` lists one model. Every request is logged (``log``) and each
tool message the agent sent back is kept (``tool_results``), so a test can
print what the agent asked and saw. Each answer is decided by the request alone
(no conversation state), so retries get the same answer.

Standard library only: ``http.server`` in a daemon thread on 127.0.0.1.
"""

from __future__ import annotations

import json
import time
import uuid
from http.server import BaseHTTPRequestHandler

try:
    from agents_stub.serving import StubServer
except ImportError:  # run by hand as a script: its own folder is on sys.path
    from serving import StubServer

FINAL_TEXT = "ARS-STUB-DONE: the command has been dealt with."
OTHER_TEXT = "Stub session"
MODEL = "stub-model"


def _content_text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return ""


def _tool_names(body: dict) -> list[str]:
    names = []
    for t in body.get("tools") or []:
        if isinstance(t, dict):
            fn = t.get("function") if isinstance(t.get("function"), dict) else t
            if isinstance(fn.get("name"), str):
                names.append(fn["name"])
    return names


class StubOpenAI(StubServer):
    """The server; ``with StubOpenAI("exec", {"command": ...}) as stub: ... stub.url``."""

    thread_name = "openai-stub"

    def __init__(self, tool: str, arguments: dict):
        super().__init__()
        self.tool = tool
        self.arguments = arguments
        self.call_id = "call_stub_" + uuid.uuid4().hex[:20]
        self.tool_results: list[dict] = []
        self.first_prompt = ""  # every message's text of the first tool-offering request (what the agent added)

    def handler_class(self) -> type:
        return _Handler

    @property
    def url(self) -> str:
        """The base URL an OpenAI client takes (with ``/v1``)."""
        return self.origin + "/v1"

    def reply_for(self, body: dict) -> dict:
        """The assistant message for one chat-completions request."""
        if self.tool not in _tool_names(body):
            return {"role": "assistant", "content": OTHER_TEXT}
        with self._lock:
            if not self.first_prompt:
                self.first_prompt = "\n".join(_content_text(m.get("content")) for m in body.get("messages") or []
                                              if isinstance(m, dict))[:200_000]
        # the agent's answer to our call: its id as we sent it, or (agents that rename call ids) any
        # tool message at all, since this model never asks for another tool
        tools = [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "tool"]
        ours = [m for m in tools if m.get("tool_call_id") == self.call_id] or tools
        if ours:
            item = {"tool_call_id": ours[-1].get("tool_call_id"), "text": _content_text(ours[-1].get("content"))}
            with self._lock:
                if item not in self.tool_results:
                    self.tool_results.append(item)
            return {"role": "assistant", "content": FINAL_TEXT}
        return {"role": "assistant", "content": None,
                "tool_calls": [{"id": self.call_id, "type": "function",
                                "function": {"name": self.tool, "arguments": json.dumps(self.arguments)}}]}


class _Handler(BaseHTTPRequestHandler):
    owner: StubOpenAI
    protocol_version = "HTTP/1.0"  # one response per connection: no keep-alive bookkeeping for SSE

    def log_message(self, fmt, *args):
        pass

    def _json(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        path = self.path.split("?")[0]
        self.owner.record({"t": round(time.time(), 3), "method": "GET", "path": path})
        if path.endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "stub"}]})
        else:
            self._json(404, {"error": {"message": f"stub: no {path}", "type": "not_found"}})

    def do_POST(self):
        path = self.path.split("?")[0]
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = None
        if not isinstance(body, dict) or not path.endswith("/chat/completions"):
            self.owner.record({"t": round(time.time(), 3), "method": "POST", "path": path, "answered": "400/404"})
            self._json(404 if isinstance(body, dict) else 400, {"error": {"message": "stub: unexpected request"}})
            return
        message = self.owner.reply_for(body)
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        self.owner.record({"t": round(time.time(), 3), "method": "POST", "path": path, "stream": body.get("stream"),
                           "model": body.get("model"), "tools": _tool_names(body)[:60],
                           "messages": [m.get("role") for m in body.get("messages") or [] if isinstance(m, dict)],
                           "answered": finish})
        cid = "chatcmpl-stub-" + uuid.uuid4().hex[:12]
        created = int(time.time())
        model = body.get("model") or MODEL
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if not body.get("stream"):
            self._json(200, {"id": cid, "object": "chat.completion", "created": created, "model": model,
                             "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()

        def chunk(delta: dict, finish_reason=None, **extra) -> None:
            payload = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}], **extra}
            self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())

        chunk({"role": "assistant", "content": ""})
        if message.get("tool_calls"):
            call = message["tool_calls"][0]
            chunk({"tool_calls": [{"index": 0, "id": call["id"], "type": "function",
                                   "function": {"name": call["function"]["name"], "arguments": ""}}]})
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": call["function"]["arguments"]}}]})
        else:
            chunk({"content": message["content"]})
        chunk({}, finish)
        payload = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                   "choices": [], "usage": usage}
        self.wfile.write(f"data: {json.dumps(payload)}\n\ndata: [DONE]\n\n".encode())
        self.wfile.flush()


if __name__ == "__main__":  # by hand: python tests/agents_stub/openai_server.py 'rm -rf /tmp/x'
    import sys

    with StubOpenAI("exec", {"command": sys.argv[1] if len(sys.argv) > 1 else "echo hi"}) as s:
        print(s.url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass

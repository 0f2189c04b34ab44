"""A scripted model behind a real HTTP server that speaks the Anthropic
Messages API well enough for Claude Code's print mode (``claude -p``).

Claude Code is pointed at it with ``ANTHROPIC_BASE_URL=http://127.0.0.1:PORT``.
Its main loop sends ``POST /v1/messages`` (streamed, ``"stream": true``) with
the tool definitions; the script answers:

* a turn whose messages hold no ``tool_result`` yet: one ``tool_use`` block
  calling ``Bash`` with ``{"command": <command>, "description": ...}``;
* a turn after the ``tool_result``: a final text (``FINAL_TEXT``), which ends
  the session.

Every other request (a title or summary request without tools, a token count,
anything Claude Code calls at start) is answered with a short text or an empty
JSON object and logged, so a test can print what Claude Code asked for when
something goes wrong. Each answer is decided by the request alone (no
conversation state), so Claude Code's retries get the same answer.

Standard library only: ``http.server`` in a daemon thread on 127.0.0.1.
Run it by hand: ``python tests/agents_stub/anthropic_server.py --command 'rm -rf /tmp/x'``.
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
OTHER_TEXT = "Stub session"  # what a request without the Bash tool (a title, a summary) gets
MODEL = "claude-stub-1"


def _tool_results(body: dict) -> list[dict]:
    """Every tool_result block in the request's messages, oldest first."""
    found = []
    for msg in body.get("messages") or []:
        content = msg.get("content") if isinstance(msg, dict) else None
        if isinstance(content, list):
            found.extend(b for b in content if isinstance(b, dict) and b.get("type") == "tool_result")
    return found


def _text_of(block: dict) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return ""


def _has_tool(body: dict, name: str) -> bool:
    return any(isinstance(t, dict) and t.get("name") == name for t in body.get("tools") or [])


class StubAnthropic(StubServer):
    """The server; ``with StubAnthropic(command) as stub: ... stub.url``.

    ``log`` holds one entry per request (method, path, a summary of the body
    and what was answered); ``tool_results`` every distinct tool_result Claude
    Code sent back (id, is_error, text), i.e. what the agent saw of the call.
    """

    thread_name = "anthropic-stub"

    def __init__(self, command: str, description: str = "Remove the directory"):
        super().__init__()
        self.command = command
        self.description = description
        self.tool_results: list[dict] = []
        self.tool_use_id = "toolu_stub_" + uuid.uuid4().hex[:20]

    def handler_class(self) -> type:
        return _Handler

    @property
    def url(self) -> str:
        return self.origin

    # -- what a test reads ---------------------------------------------------------------
    def saw_tool_result(self, block: dict) -> None:
        item = {"tool_use_id": block.get("tool_use_id"), "is_error": bool(block.get("is_error")),
                "text": _text_of(block)}
        with self._lock:
            if item not in self.tool_results:
                self.tool_results.append(item)

    def requests(self, path: str | None = None) -> list[dict]:
        with self._lock:
            return [e for e in self.log if path is None or e["path"] == path]

    def reply_for(self, body: dict) -> tuple[list[dict], str]:
        """(content blocks, stop_reason) for one /v1/messages request."""
        if not _has_tool(body, "Bash"):
            return [{"type": "text", "text": OTHER_TEXT}], "end_turn"
        results = _tool_results(body)
        for block in results:
            self.saw_tool_result(block)
        if any(b.get("tool_use_id") == self.tool_use_id for b in results):
            return [{"type": "text", "text": FINAL_TEXT}], "end_turn"
        return [{"type": "tool_use", "id": self.tool_use_id, "name": "Bash",
                 "input": {"command": self.command, "description": self.description}}], "tool_use"


class _Handler(BaseHTTPRequestHandler):
    owner: StubAnthropic
    protocol_version = "HTTP/1.0"  # one response per connection: no keep-alive bookkeeping for SSE

    def log_message(self, fmt, *args):  # the stub's own log is self.owner.log
        pass

    def _body(self) -> tuple[bytes, dict | None]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            return raw, None
        return raw, body if isinstance(body, dict) else None

    def _json(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", "req_stub_" + uuid.uuid4().hex[:12])
        self.end_headers()
        self.wfile.write(data)

    def _entry(self, body: dict | None, raw: bytes, answered: str) -> dict:
        entry = {"t": round(time.time(), 3), "method": self.command, "path": self.path.split("?")[0],
                 "query": self.path.partition("?")[2], "answered": answered,
                 "user_agent": self.headers.get("User-Agent", "")}
        if body is not None:
            entry.update({"model": body.get("model"), "stream": body.get("stream"),
                          "max_tokens": body.get("max_tokens"),
                          "tools": [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)][:40],
                          "messages": len(body.get("messages") or []),
                          "tool_results": [{"id": b.get("tool_use_id"), "is_error": bool(b.get("is_error")),
                                            "text": _text_of(b)[:300]} for b in _tool_results(body)]})
        elif raw:
            entry["raw"] = raw[:300].decode("utf-8", "replace")
        return entry

    def do_GET(self):
        _, _ = self._body()
        self.owner.record(self._entry(None, b"", "404"))
        self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": f"stub: no {self.path}"}})

    do_DELETE = do_GET

    def do_HEAD(self):
        self.owner.record(self._entry(None, b"", "200 head"))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        raw, body = self._body()
        path = self.path.split("?")[0]
        if body is None:
            self.owner.record(self._entry(None, raw, "400"))
            self._json(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                         "message": "stub: the body is not a JSON object"}})
            return
        if path == "/v1/messages/count_tokens":
            self.owner.record(self._entry(body, raw, "count_tokens"))
            self._json(200, {"input_tokens": max(1, len(raw) // 4)})
            return
        if path != "/v1/messages":
            self.owner.record(self._entry(body, raw, "404"))
            self._json(404, {"type": "error", "error": {"type": "not_found_error",
                                                         "message": f"stub: no {path}"}})
            return
        blocks, stop = self.owner.reply_for(body)
        kinds = ",".join(b["type"] for b in blocks)
        self.owner.record(self._entry(body, raw, f"{kinds} ({'stream' if body.get('stream') else 'json'})"))
        message = {"id": "msg_stub_" + uuid.uuid4().hex[:20], "type": "message", "role": "assistant",
                   "model": body.get("model") or MODEL, "stop_reason": stop, "stop_sequence": None}
        usage = {"input_tokens": max(1, len(raw) // 4), "output_tokens": 12,
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        if not body.get("stream"):
            self._json(200, {**message, "content": blocks, "usage": usage})
            return
        self._stream(message, blocks, usage)

    def _stream(self, message: dict, blocks: list[dict], usage: dict) -> None:
        """The Messages API's server-sent events: message_start, one
        start/delta/stop per block, message_delta (stop_reason), message_stop."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("request-id", "req_stub_" + uuid.uuid4().hex[:12])
        self.end_headers()

        def event(name: str, data: dict) -> None:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

        event("message_start", {"type": "message_start",
                                "message": {**message, "content": [], "stop_reason": None,
                                            "usage": {**usage, "output_tokens": 1}}})
        for i, block in enumerate(blocks):
            if block["type"] == "text":
                event("content_block_start", {"type": "content_block_start", "index": i,
                                              "content_block": {"type": "text", "text": ""}})
                event("content_block_delta", {"type": "content_block_delta", "index": i,
                                              "delta": {"type": "text_delta", "text": block["text"]}})
            else:
                event("content_block_start", {"type": "content_block_start", "index": i,
                                              "content_block": {"type": "tool_use", "id": block["id"],
                                                                "name": block["name"], "input": {}}})
                event("content_block_delta", {"type": "content_block_delta", "index": i,
                                              "delta": {"type": "input_json_delta",
                                                        "partial_json": json.dumps(block["input"])}})
            event("content_block_stop", {"type": "content_block_stop", "index": i})
        event("message_delta", {"type": "message_delta",
                                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                "usage": {"output_tokens": usage["output_tokens"]}})
        event("message_stop", {"type": "message_stop"})


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--command", required=True, help="the Bash command the model asks for")
    args = parser.parse_args()
    with StubAnthropic(args.command) as stub:
        print(stub.url, flush=True)
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
        print(stub.dump_log())


if __name__ == "__main__":
    main()

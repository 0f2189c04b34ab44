"""The part every scripted model server here shares: a real HTTP server on
127.0.0.1 (a free port) in a daemon thread, started and stopped by the test,
and the log of what the agent sent it (shown when a test fails)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class StubServer:
    """Subclasses give ``handler_class()``: a BaseHTTPRequestHandler that reads ``self.owner``."""

    thread_name = "model-stub"

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    def __init__(self) -> None:
        self.log: list[dict] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def start(self):
        handler = type("Handler", (self.handler_class(),), {"owner": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name=self.thread_name, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def origin(self) -> str:
        assert self._server is not None, "start() the stub first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def record(self, entry: dict) -> None:
        with self._lock:
            self.log.append(entry)

    def dump_log(self) -> str:
        with self._lock:
            return "\n".join(json.dumps(e, ensure_ascii=False) for e in self.log)

"""How the approvals page answers a request: one line of text, or JSON for the page's
script. Shared by the page's handlers (approvals.py), a decision (decide.py) and the server."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web


def one_line_response(status: int, line: str) -> web.Response:
    return web.Response(status=status, text=line + "\n", content_type="text/plain")


def answer(request: web.Request, status: int, line: str, **extra: Any) -> web.Response:
    """JSON for the page's script, one line of text for anything else (curl, a form without script)."""
    if "application/json" in request.headers.get("Accept", ""):
        key = "line" if status < 400 else "error"
        return web.json_response({key: line, **extra}, status=status, dumps=lambda o: json.dumps(o, ensure_ascii=False))
    return one_line_response(status, line)

"""A scripted model for a story of several sessions (the issue's days: a project, an
approved restart, the questions the day after), behind the same Chat Completions
server as tests/agents_stub/openai_server.py, and every request body kept whole.

The script maps the user's own prompt (the last one in the user messages: what the
agent's hooks put before it may quote earlier prompts) to one beat: a tool call and its
arguments, then the final text once the tool's result came back; or just the final
text. A request for another prompt (a title, a summary) gets a short text.
``requests(prompt)`` gives every request body a beat's turn sent, in order, so a test
reads what the model was given (``first_text(prompt)``: all message text of the first).

Standard library only, like the server it extends.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field

try:
    from agents_stub.openai_server import StubOpenAI, _content_text
except ImportError:  # run by hand as a script
    from openai_server import StubOpenAI, _content_text


@dataclass
class Beat:
    prompt: str                 # the user's own words this turn
    final: str                  # the assistant's last answer
    tool: str | None = None     # a tool call first (its result comes back before ``final``)
    arguments: dict = field(default_factory=dict)
    call_id: str = field(default_factory=lambda: "call_story_" + uuid.uuid4().hex[:16])


def _user_text(body: dict) -> str:
    return "\n".join(_content_text(m.get("content")) for m in body.get("messages") or []
                     if isinstance(m, dict) and m.get("role") == "user")


def _all_text(body: dict) -> str:
    return "\n".join(_content_text(m.get("content")) for m in body.get("messages") or [] if isinstance(m, dict))


class StoryModel(StubOpenAI):
    thread_name = "openai-story"

    def __init__(self, beats: list[Beat]):
        super().__init__("", {})
        self.beats = beats
        self.bodies: list[tuple[str, dict]] = []  # (the beat's prompt or "", the request body)

    def beat_of(self, body: dict) -> Beat | None:
        """The beat whose prompt comes last in the user's messages: the agent wraps the words
        (a time before them, its runtime line after) and ARS's memory, put before them, may
        quote an earlier beat's prompt."""
        text = _user_text(body)
        found = [(text.rfind(b.prompt), b) for b in self.beats if b.prompt in text]
        return max(found, key=lambda f: f[0])[1] if found else None

    def reply_for(self, body: dict) -> dict:
        beat = self.beat_of(body)
        with self._lock:
            self.bodies.append((beat.prompt if beat else "", body))
        if beat is None:
            return {"role": "assistant", "content": "Story stub"}
        answered = any(isinstance(m, dict) and m.get("role") == "tool" for m in body.get("messages") or [])
        if beat.tool is None or answered:
            if beat.tool is not None:
                tools = [m for m in body["messages"] if isinstance(m, dict) and m.get("role") == "tool"]
                item = {"tool_call_id": tools[-1].get("tool_call_id"), "text": _content_text(tools[-1].get("content"))}
                with self._lock:
                    if item not in self.tool_results:
                        self.tool_results.append(item)
            return {"role": "assistant", "content": beat.final}
        return {"role": "assistant", "content": None,
                "tool_calls": [{"id": beat.call_id, "type": "function",
                                "function": {"name": beat.tool, "arguments": json.dumps(beat.arguments)}}]}

    def requests(self, prompt: str) -> list[dict]:
        with self._lock:
            return [b for p, b in self.bodies if p == prompt]

    def first_text(self, prompt: str) -> str:
        """Every message's text in the first request of the turn with ``prompt`` ("" if none came)."""
        got = self.requests(prompt)
        return _all_text(got[0]) if got else ""

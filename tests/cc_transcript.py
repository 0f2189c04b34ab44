"""A Claude Code session transcript written as Claude Code 2.1 writes it, a line at a time.

The line shapes are those of a real ``claude -p`` run (2.1.332): ``user`` lines with a
string prompt or ``tool_result`` blocks, ``assistant`` lines with ``text`` or ``tool_use``
blocks, the bookkeeping lines around them (``queue-operation``, ``attachment``,
``last-prompt``, ``system``/``stop_hook_summary``) and a compaction (``compact_boundary``
then an ``isCompactSummary`` user line). Used by the capture tests and bench/capture.py.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path


class Transcript:
    def __init__(self, path: Path, session: str | None = None, cwd: str = "/home/lin/work/jobs",
                 start: datetime | None = None):
        self.path = Path(path)
        self.session = session or str(uuid.uuid4())
        self.cwd = cwd
        self.now = start or datetime(2026, 12, 4, 11, 58, tzinfo=timezone.utc)
        self.parent: str | None = None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.touch()

    def _ts(self, seconds: float) -> str:
        self.now += timedelta(seconds=seconds)
        return self.now.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def _write(self, obj: dict) -> None:
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")

    def _line(self, kind: str, message: dict, seconds: float, **extra) -> str:
        uid = str(uuid.uuid4())
        self._write({"parentUuid": self.parent, "isSidechain": False, "type": kind, "message": message, "uuid": uid,
                     "timestamp": self._ts(seconds), "userType": "external", "entrypoint": "sdk-cli",
                     "cwd": self.cwd, "sessionId": self.session, "version": "2.1.332", "gitBranch": "main", **extra})
        self.parent = uid
        return uid

    def user(self, text: str, seconds: float = 1) -> None:
        self._write({"type": "queue-operation", "operation": "enqueue", "timestamp": self._ts(0),
                     "sessionId": self.session, "content": text})
        self._line("user", {"role": "user", "content": text}, seconds, promptId=str(uuid.uuid4()))
        self._write({"parentUuid": self.parent, "isSidechain": False, "type": "attachment",
                     "attachment": {"type": "date", "date": self.now.date().isoformat()}, "uuid": str(uuid.uuid4()),
                     "timestamp": self._ts(0), "sessionId": self.session, "cwd": self.cwd})

    def tool(self, name: str, tool_input: dict, output: str, is_error: bool = False, seconds: float = 3) -> str:
        """The model calls a tool and gets its result; returns the tool_use id."""
        tid = "toolu_" + uuid.uuid4().hex[:24]
        self._line("assistant", {"id": "msg_" + uuid.uuid4().hex[:20], "type": "message", "role": "assistant",
                                 "model": "claude-opus-5-5", "stop_reason": "tool_use",
                                 "content": [{"type": "tool_use", "id": tid, "name": name, "input": tool_input}]},
                   seconds)
        self._line("user", {"role": "user", "content": [{"tool_use_id": tid, "type": "tool_result",
                                                         "content": output, "is_error": is_error}]}, seconds,
                   toolUseResult={"stdout": output, "stderr": "", "interrupted": False})
        return tid

    def assistant(self, text: str, seconds: float = 2) -> None:
        self._line("assistant", {"id": "msg_" + uuid.uuid4().hex[:20], "type": "message", "role": "assistant",
                                 "model": "claude-opus-5-5", "stop_reason": "end_turn",
                                 "content": [{"type": "text", "text": text}]}, seconds)
        self._write({"type": "last-prompt", "lastPrompt": "", "leafUuid": self.parent, "sessionId": self.session})
        self._write({"parentUuid": self.parent, "isSidechain": False, "type": "system", "subtype": "stop_hook_summary",
                     "hookCount": 1, "timestamp": self._ts(0), "uuid": str(uuid.uuid4()), "sessionId": self.session})

    def compact(self, summary: str, seconds: float = 5) -> None:
        self._write({"parentUuid": None, "logicalParentUuid": self.parent, "isSidechain": False, "type": "system",
                     "subtype": "compact_boundary", "content": "Conversation compacted", "timestamp": self._ts(seconds),
                     "uuid": str(uuid.uuid4()), "sessionId": self.session, "cwd": self.cwd,
                     "compactMetadata": {"trigger": "manual", "preTokens": 12000}})
        self._line("user", {"role": "user", "content": summary}, 0, isCompactSummary=True,
                   isVisibleInTranscriptOnly=True)

    def partial(self, text: str) -> None:
        """Half a line, as a write in progress leaves it (no newline yet)."""
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(text)

    def turn(self, prompt: str, tools: list[tuple[str, dict, str]], answer: str, gap: float = 30) -> None:
        self.user(prompt, seconds=gap)
        for name, inp, out in tools:
            self.tool(name, inp, out)
        self.assistant(answer)

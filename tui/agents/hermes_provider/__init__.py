"""ARS as Hermes Agent's memory provider (``memory.provider: ars``).

``ars install hermes`` copies this file into ``$HERMES_HOME/plugins/ars/`` beside
``ars.json`` (the command that starts ARS for it). Hermes (agent/memory_manager.py,
0.19) then calls, every turn:

* ``prefetch(query)`` before the model call: ARS's per-turn context for the user's
  message and the reply before it, as text Hermes fences as recalled memory;
* ``sync_turn(user, assistant, messages=...)`` after it, on Hermes' background
  worker: the turn, with its tool calls and their results, captured into ARS;
* ``on_pre_compress`` before a compaction: turns whose capture failed are tried
  again, so the compaction loses nothing ARS has not kept;
* ``on_session_end``: captures finished, the session's open inbox requests end,
  and the session's ingest (the catch-up) starts;
* the tools ``ars_recall`` and ``ars_get`` (an episode's whole text, a page at a time).

It runs inside Hermes' Python, so it cannot import ARS: it is the standard library
only, and talks to ``ars hook hermes --serve`` (tui/agents/hermes_serve.py), a
process it starts once when Hermes builds its agent and that lives as long as Hermes
(its stdin closing ends it), one JSON line per request and per answer (ars_process.py).
Every wait has a deadline: a slow, dead or missing ARS means nothing injected and one
line in Hermes' log, never a lost reply; a dead ARS is started again at most every
``ars_process.RESTART_EVERY`` seconds.
"""

from __future__ import annotations

import json
import logging
import os
import time
from datetime import datetime, timezone
from typing import Any

from .ars_process import ArsProcess

try:  # inside Hermes; outside it (ARS's tests import this file) a plain base does
    from agent.memory_provider import MemoryProvider
except ImportError:  # pragma: no cover - exercised by ARS's tests
    MemoryProvider = object  # type: ignore[misc,assignment]

logger = logging.getLogger("ars.memory")

CONFIG = "ars.json"     # beside this file: {"command": [...], "state": DIR}, written by `ars install hermes`
START_WAIT = 5.0        # s: the first turn waits this long for ARS to start (Hermes gives a prefetch 8 s)
TURN_WAIT = 1.5         # s: a turn's context after that (a warm ARS answers in tens of milliseconds)
CAPTURE_WAIT = 5.0      # s: a capture, on Hermes' background worker
TOOL_WAIT = 15.0        # s: ars_recall / ars_get
END_WAIT = 5.0          # s: what on_session_end and on_pre_compress wait for in all
MAX_PROMPT = 16_000     # characters of the user's message sent as the query (a 1 MB paste is not a query)
MAX_OUTPUT = 4_000      # characters of a tool's result kept in a captured turn
MAX_UNSYNCED = 50       # turns kept for another capture try when ARS did not take them
LOG_EVERY = 60.0        # s: the same problem is logged once in this long


def _clean(text: Any, limit: int) -> str:
    """Text as ARS reads it: a string, lone surrogates replaced, at most ``limit`` characters."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    text = text[:limit]
    return text.encode("utf-8", "replace").decode("utf-8")


RECALL_SCHEMA = {
    "name": "ars_recall",
    "description": ("Search ARS, the user's memory of every agent's past sessions (this one's, OpenClaw's, Claude "
                    "Code's): what was done, what a command printed, what the supervisor approved and what then ran. "
                    "Call it before answering about past work the recalled context above does not cover. Returns "
                    "hits with episode_id, time, agent and a snippet; ars_get reads one whole."),
    "parameters": {"type": "object", "properties": {
        "query": {"type": "string", "description": "words of the topic, names, commands, errors (any language)"},
        "k": {"type": "integer", "description": "how many hits, 1-20 (default 5)"}},
        "required": ["query"]},
}
GET_SCHEMA = {
    "name": "ars_get",
    "description": ("One ARS memory's whole text (an episode_id from ars_recall or the recalled context), a page "
                    "at a time: call again with offset = next_offset until next_offset is null."),
    "parameters": {"type": "object", "properties": {
        "episode_id": {"type": "string", "description": "the episode id"},
        "offset": {"type": "integer", "description": "where to start (a previous page's next_offset)"},
        "limit": {"type": "integer", "description": "at most this many characters, 1-20000 (default 6000)"}},
        "required": ["episode_id"]},
}


class ArsMemoryProvider(MemoryProvider):
    """Hermes' memory provider backed by ARS (see the module's docstring)."""

    def __init__(self, config_path: str | None = None):
        self._config_path = config_path or os.path.join(os.path.dirname(os.path.abspath(__file__)), CONFIG)
        self._ars: ArsProcess | None = None
        self._session = ""
        self._turn = 0
        self._previous: dict[str, str] = {}    # session -> the last assistant reply (the next turn's "previous")
        self._unsynced: list[tuple[str, dict]] = []
        self._writes = True                     # False for cron and flush agents: they must not write memory
        self._logged: dict[str, float] = {}
        self._first = True                      # the first context waits for ARS to start
        self._home = ""                         # Hermes' home (its state.db is the session's catch-up)

    # -- who we are -----------------------------------------------------------------
    @property
    def name(self) -> str:
        return "ars"

    def _config(self) -> dict:
        try:
            with open(self._config_path, encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            return {}
        ok = isinstance(data, dict) and isinstance(data.get("command"), list) and data["command"] \
            and all(isinstance(a, str) for a in data["command"])
        return data if ok else {}

    def is_available(self) -> bool:
        return bool(self._config())

    def _say(self, problem: str) -> None:
        """One log line per problem per ``LOG_EVERY`` s."""
        key = problem.split("(")[0][:80]
        now = time.monotonic()
        if now - self._logged.get(key, -LOG_EVERY) >= LOG_EVERY:
            self._logged[key] = now
            logger.warning("ARS memory: %s", problem)

    def initialize(self, session_id: str, **kwargs) -> None:
        self._session = session_id or ""
        self._writes = kwargs.get("agent_context", "primary") == "primary"
        config = self._config()
        if not config:
            self._say(f"no usable {self._config_path}: run `ars install hermes`")
            return
        home = kwargs.get("hermes_home") or os.environ.get("HERMES_HOME") or os.path.expanduser("~/.hermes")
        self._home = str(home)
        self._ars = ArsProcess(list(config["command"]), os.path.join(home, "logs", "ars-memory.log"))
        if not self._ars.start():  # now, so ARS is warm by the first turn
            self._say(self._ars.error)

    def system_prompt_block(self) -> str:
        if self._ars is None:
            return ""
        return ("ARS memory is on: memories of past sessions (of every agent this user runs) that bear on a turn "
                "appear with it as recalled context. ars_recall searches for more; ars_get reads one whole.")

    # -- every turn -------------------------------------------------------------------
    def on_turn_start(self, turn_number: int, message: str, **kwargs) -> None:
        self._turn = turn_number if isinstance(turn_number, int) else self._turn + 1

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        if self._ars is None:
            return ""
        session = session_id or self._session
        prompt = _clean(query, MAX_PROMPT)
        if isinstance(query, str) and len(query) > MAX_PROMPT:
            self._say(f"the user's message is {len(query):,} characters: the first {MAX_PROMPT:,} are the query")
        wait = START_WAIT if self._first else TURN_WAIT
        self._first = False
        got = self._ars.ask("context", wait, prompt=prompt, session=session, agent="hermes",
                            previous=_clean(self._previous.get(session, ""), MAX_PROMPT),
                            turn=str(self._turn) if self._turn else None)
        if "error" in got:
            self._say(f"nothing recalled for this turn: {got['error']}")
            return ""
        text = got.get("text")
        return text if isinstance(text, str) else ""

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list | None = None) -> None:
        session = session_id or self._session
        self._previous[session] = _clean(assistant_content, MAX_PROMPT)
        if self._ars is None or not self._writes:
            return
        turn = {"user": _clean(user_content, 200_000), "assistant": _clean(assistant_content, 200_000),
                "tools": turn_tools(messages), "ts": datetime.now(timezone.utc).isoformat(),
                "turn": str(self._turn) if self._turn else None}
        self._capture(session, turn, CAPTURE_WAIT)

    def _capture(self, session: str, turn: dict, wait: float) -> bool:
        got = self._ars.ask("capture", wait, session=session, turn=turn)
        if "error" not in got:
            return True
        if got.get("unsupported"):
            self._say(got["error"])
            return True  # nothing to retry: this ARS ingests the session at its end instead
        self._say(f"this turn was not captured yet: {got['error']}")
        self._unsynced = (self._unsynced + [(session, turn)])[-MAX_UNSYNCED:]
        return False

    def _retry_unsynced(self, deadline: float) -> None:
        pending, self._unsynced = self._unsynced, []
        for i, (session, turn) in enumerate(pending):
            left = deadline - time.monotonic()
            if left <= 0 or not self._capture(session, turn, left):
                self._unsynced = (pending[i + 1:] + self._unsynced)[-MAX_UNSYNCED:]
                return

    def on_pre_compress(self, messages: list) -> str:
        if self._ars is not None and self._unsynced:
            self._retry_unsynced(time.monotonic() + END_WAIT)
        return ""

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", reset: bool = False,
                          **kwargs) -> None:
        self._session = new_session_id or self._session
        if reset:
            self._turn = 0

    def on_session_end(self, messages: list) -> None:
        if self._ars is None:
            return
        deadline = time.monotonic() + END_WAIT
        if self._unsynced:
            self._retry_unsynced(deadline)
        got = self._ars.ask("end_session", max(0.5, deadline - time.monotonic()), session=self._session,
                            hermes_home=self._home)
        if "error" in got:
            self._say(f"the session's end was not recorded: {got['error']}")

    def shutdown(self) -> None:
        if self._ars is not None:
            self._ars.stop()

    # -- tools ------------------------------------------------------------------------
    def get_tool_schemas(self) -> list:
        return [RECALL_SCHEMA, GET_SCHEMA]

    def handle_tool_call(self, tool_name: str, args: dict, **kwargs) -> str:
        args = args if isinstance(args, dict) else {}
        if self._ars is None:
            return json.dumps({"error": "ARS memory is not set up here (run `ars install hermes`)"})
        if tool_name == "ars_recall":
            got = self._ars.ask("recall", TOOL_WAIT, query=_clean(args.get("query"), MAX_PROMPT), k=args.get("k"))
        elif tool_name == "ars_get":
            got = self._ars.ask("get", TOOL_WAIT, episode_id=_clean(args.get("episode_id"), 500),
                                offset=args.get("offset"), limit=args.get("limit"))
        else:
            return json.dumps({"error": f"ARS has no tool {tool_name!r}"})
        got.pop("id", None)
        return json.dumps(got, ensure_ascii=False)


def turn_tools(messages: Any) -> list[dict]:
    """The tool calls of the turn that just ended (after the last user message), each with
    what it returned: ``{"name", "input", "exit", "output"}`` (the output's head)."""
    if not isinstance(messages, list):
        return []
    start = max((i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user"), default=-1)
    calls: dict[str, dict] = {}
    order: list[dict] = []
    for m in messages[start + 1:]:
        if not isinstance(m, dict):
            continue
        for call in m.get("tool_calls") or []:
            fn = call.get("function") if isinstance(call, dict) else None
            if not isinstance(fn, dict):
                continue
            raw = fn.get("arguments")
            try:
                given = json.loads(raw) if isinstance(raw, str) else raw
            except ValueError:
                given = raw
            item = {"name": str(fn.get("name") or ""), "input": given, "exit": None, "output": ""}
            calls[str(call.get("id"))] = item
            order.append(item)
        if m.get("role") == "tool":
            item = calls.get(str(m.get("tool_call_id")))
            if item is not None:
                item["exit"], item["output"] = _result(m.get("content"))
    return order


def _result(content: Any) -> tuple[int | None, str]:
    """(exit status, output head) of a tool message: Hermes' terminal answers JSON with
    ``exit_code`` and ``output``; other tools' text is the output."""
    if isinstance(content, list):
        content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, default=str)
    exit_code = None
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        code = data.get("exit_code", data.get("returncode"))
        exit_code = code if isinstance(code, int) and not isinstance(code, bool) else None
        out = data.get("output", data.get("stdout"))
        if isinstance(out, str):
            err = data.get("error") or data.get("stderr")
            text = out + (f"\n{err}" if isinstance(err, str) and err else "")
    return exit_code, _clean(text, MAX_OUTPUT)


def register(ctx) -> None:
    """Hermes' plugin entry point (plugins/memory/__init__.py: register(ctx))."""
    ctx.register_memory_provider(ArsMemoryProvider())

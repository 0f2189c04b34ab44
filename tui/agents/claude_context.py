"""What ARS gives a Claude Code session to read: per turn, and at its start.

* ``UserPromptSubmit`` (every turn, a fresh process, standard library only): the
  recall daemon's ``context`` answer for the prompt and the reply before it (read
  from the tail of ``transcript_path``) becomes ``additionalContext``: a bounded,
  dated block of what memory holds about it, or nothing. No answer in time (no
  daemon yet, a slow or dead one): nothing is injected, one line on stderr, and
  a daemon is started for the next turn.
* ``SessionStart``: what ``ars rehydrate`` writes (open loops, next steps, sync
  health) and the requests waiting in the inbox; after a compaction or on resume
  (``source`` ``compact`` / ``resume``), also the context for what the session was
  about (its last prompt and reply). A new session is never given memories picked
  by the project folder's name. It starts the recall daemon and waits (at most
  ``DAEMON_WAIT`` s, once) until it is warm, so the first prompt gets its context.
"""

from __future__ import annotations

import json
import os
import time

CONTEXT_LIMIT = 9_500  # characters of additionalContext (Claude Code previews larger hook output)
TAIL_BYTES = 256 << 10  # how much of the transcript's end is read for the reply before the prompt
PREVIOUS_CHARS = 2_000
PROMPT_CHARS = 16_000  # of a prompt, what goes to the query (a megabyte paste is not a question)
DEFAULT_TIMEOUT = 1.0  # seconds the daemon has to answer (ARS_CONTEXT_TIMEOUT)
DAEMON_WAIT = 8.0  # seconds SessionStart waits for a daemon it started to be warm
AGENT = "claude-code"
HEAD = ("ARS memory for this session (state directory {state}). Ask for more with the ARS MCP tools "
        "(`mcp__ars__recall` to search, `mcp__ars__get` for an episode's whole text); risky tool calls wait "
        "for a person in the ARS inbox.")


# -- the transcript's tail: the turn before this one ------------------------------------------
def _tail_objects(path: object) -> list[dict]:
    """The JSON objects of the transcript's last ``TAIL_BYTES``, newest first."""
    if not isinstance(path, str) or not path or "\0" in path:
        return []
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - TAIL_BYTES))
            raw = fh.read(TAIL_BYTES)
    except OSError:
        return []
    lines = raw.split(b"\n")
    if size > TAIL_BYTES:
        lines = lines[1:]  # the first is cut
    out = []
    for line in reversed(lines):
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def _texts(obj: dict) -> list[str]:
    msg = obj.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)]


def last_exchange(path: object) -> tuple[str, str]:
    """(the last prompt, the last reply) in the transcript; "" where there is none."""
    prompt = reply = ""
    for obj in _tail_objects(path):
        if obj.get("isSidechain") or obj.get("isMeta"):
            continue
        if not reply and obj.get("type") == "assistant":
            reply = "\n".join(_texts(obj)).strip()
        elif not prompt and obj.get("type") == "user":
            prompt = "\n".join(t for t in _texts(obj) if not t.lstrip().startswith("<")).strip()
        if prompt and reply:
            break
    return prompt[:PREVIOUS_CHARS], reply[:PREVIOUS_CHARS]


def _clean(text: str, limit: int) -> str:
    return text[:limit].encode("utf-8", "replace").decode("utf-8")  # a lone surrogate becomes "?"


def _timeout() -> float:
    try:
        return max(0.05, float(os.environ.get("ARS_CONTEXT_TIMEOUT") or DEFAULT_TIMEOUT))
    except ValueError:
        return DEFAULT_TIMEOUT


# -- UserPromptSubmit ---------------------------------------------------------------------------
def user_prompt(event: dict, state: str, say, answer) -> int:
    """The context for the prompt as ``additionalContext``; at most one line said (stderr)."""
    prompt = event.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return 0
    code, line = _prompt_context(event, prompt, state, answer)
    if len(prompt) > PROMPT_CHARS:  # a pasted log is not a question: its start is the query
        cut = f"prompt of {len(prompt):,} characters, its first {PROMPT_CHARS:,} searched"
        line = f"{cut}; {line}" if line else cut
    if line:
        say(line)
    return code


def _prompt_context(event: dict, prompt: str, state: str, answer) -> tuple[int, str]:
    """(exit code, the line to say or "")."""
    if not os.path.isdir(state):
        return 0, f"no ARS state directory at {state}: nothing injected"
    from tui.daemon import client

    ask = getattr(client, "context", None)
    if ask is None:
        return 0, "this ARS has no recall daemon context request: nothing injected"
    _, previous = last_exchange(event.get("transcript_path"))
    session = str(event.get("session_id") or "") or None
    reply = ask(state, _clean(prompt, PROMPT_CHARS), session=session, agent=AGENT,
                previous=_clean(previous, PREVIOUS_CHARS) or None, budget=None,
                turn=str(event.get("prompt_id") or "") or None, timeout=_timeout())
    if not isinstance(reply, dict):  # client.context itself starts a daemon for the next turn
        return 0, (f"the recall daemon gave no context within {_timeout():g} s: nothing injected (one is started "
                   "for the next turn)")
    text = reply.get("text") if isinstance(reply.get("text"), str) else ""
    if not text:
        return 0, ""
    return answer({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}}), ""


# -- SessionStart -------------------------------------------------------------------------------
def session_start(event: dict, state: str, say, answer) -> int:
    if not os.path.isdir(state):
        say(f"no ARS state directory at {state} yet: no startup context")
        return 0
    started = _start_daemon(state)
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from core.api import ARS
    from core.api import load_settings
    from core.api import render_markdown

    source = event.get("source") if isinstance(event.get("source"), str) else ""
    parts: list[str] = []
    with ARS(load_settings(state_dir=state), create=False) as ars:
        if source in ("compact", "resume"):
            parts.append(_again(ars, event, source))
        parts.append(_waiting(ars))
        report = ars.rehydrate(write=True)
        parts.append(render_markdown(report))
    if started is not None and not _daemon_ready(state, started):
        say(f"the recall daemon is still warming up after {DAEMON_WAIT:g} s: the first prompt may get no context")
    text = "\n\n".join([HEAD.format(state=os.path.abspath(state))] + [p for p in parts if p])
    if len(text) > CONTEXT_LIMIT:
        tail = f"\n\n[... cut at {CONTEXT_LIMIT:,} characters; `ars rehydrate` prints all of it]"
        text = text[: CONTEXT_LIMIT - len(tail)] + tail
    return answer({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}})


def _daemon_socket(state: str):
    from tui.daemon import address

    st = address.state_path(state)
    return st, address.socket_path(st, address.fingerprint())


def _ready_now(state: str) -> bool:
    from tui.daemon import client

    st, sock = _daemon_socket(state)
    reply = client.request(sock, {"op": "status"}, timeout=1.0, state=st)
    return bool(reply and reply.get("ready"))


def _start_daemon(state: str) -> float | None:
    """Start the recall daemon unless a warm one answers; when it was started (None: no need)."""
    from tui.daemon import address, client

    if address.mode() != "auto" or _ready_now(state):
        return None
    client.spawn(state)
    return time.monotonic()


def _daemon_ready(state: str, started: float) -> bool:
    """Wait (up to ``DAEMON_WAIT`` s from ``started``) for the daemon to be warm: the session's
    first prompt then gets its context (a new session pays this once; a warm daemon, nothing)."""
    while True:
        if _ready_now(state):
            return True
        if time.monotonic() - started >= DAEMON_WAIT:
            return False
        time.sleep(0.1)


def _again(ars, event: dict, source: str) -> str:
    """After a compaction or on resume: the context for what the session was about."""
    context = getattr(ars, "context", None)
    prompt, reply = last_exchange(event.get("transcript_path"))
    if context is None or not (prompt or reply):
        return ""
    session = str(event.get("session_id") or "")
    try:
        # no session: what was given before the compaction is given again (the model lost it)
        got = context(prompt or reply, agent=AGENT, previous=reply or None, turn=f"{session}:{source}")
    except Exception as exc:  # noqa: BLE001 - a part of the context, never the whole
        return f"(ARS could not recall for this session: {' '.join(str(exc).split())[:160]})"
    return getattr(got, "text", "") or ""


def _waiting(ars) -> str:
    try:
        pending = [r for r in ars.inbox.list("pending")]
    except Exception as exc:  # noqa: BLE001
        return f"## Waiting in the ARS inbox\n\n(cannot list it: {' '.join(str(exc).split())[:160]})"
    if not pending:
        return ""
    lines = [f"## Waiting in the ARS inbox ({len(pending)})", ""]
    for r in pending[:10]:
        lines.append(f"- `{r.id}` {r.source} {r.risk}: {r.summary[:200]}")
    if len(pending) > 10:
        lines.append(f"- ... and {len(pending) - 10} more (ask the supervisor)")
    return "\n".join(lines)

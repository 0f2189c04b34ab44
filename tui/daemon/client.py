"""Ask the state directory's recall daemon; start one after answering alone.

Stdlib only, and nothing is imported until it is needed: this runs before
every fresh ``ars recall --json``. Any trouble with a daemon (none running, a
stale socket, a slow or broken one) means the process answers by itself, as
it would without a daemon: the daemon is a cache of warm connections, never
the only way to an answer.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

from tui.daemon import address

# A daemon answers within its largest tier deadline (0.5 s by default); a busy CPU
# can stretch that. Past this the process answers by itself.
ANSWER_TIMEOUT = 3.0
MAX_REPLY = 64 << 20


def _connect(path: Path, timeout: float) -> socket.socket | None:
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except (OSError, AttributeError):  # AttributeError: a platform without Unix sockets
        return None
    sock.settimeout(timeout)
    try:
        sock.connect(os.fspath(path))
    except OSError:  # none listening (gone, killed, never started), or not ours
        sock.close()
        return None
    return sock


def request(path: Path, message: dict, timeout: float = ANSWER_TIMEOUT, state: Path | None = None) -> dict | None:
    """Send one request line and read one reply line; None on any failure
    (or when the socket's directory is not private to this user)."""
    if not (address.socket_dir_ok(path.parent, state) if state is not None else address.private_dir_ok(path.parent)):
        return None
    sock = _connect(path, timeout)
    if sock is None:
        return None
    try:
        sock.sendall(json.dumps(message, ensure_ascii=True).encode() + b"\n")
        chunks, size = [], 0
        while True:
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if chunk.endswith(b"\n") or size > MAX_REPLY:
                break
        reply = json.loads(b"".join(chunks))
        return reply if isinstance(reply, dict) else None
    except (OSError, ValueError):
        return None
    finally:
        sock.close()


def recall(args) -> dict | None:
    """The daemon's answer ``{"code", "stdout", "stderr"}`` to ``args`` (tui.fast_recall.RecallArgs),
    or None: answer alone."""
    if address.mode() != "auto":
        return None
    st = address.state_path(args.state)
    reply = request(address.socket_path(st, address.fingerprint()), args.request(), state=st)
    if reply is None or not isinstance(reply.get("code"), int):
        return None
    return reply


# An agent's turn waits at most this long for its context (the daemon answers within
# ARS_CONTEXT_DEADLINE, 0.3 s, plus the receipt's fsync); a capture waits for its fsync.
CONTEXT_TIMEOUT = 0.5
CAPTURE_TIMEOUT = 2.0
PROMPT_HEAD, PROMPT_TAIL = 1000, 1500  # what core/context/query.py searches of a long prompt
PREVIOUS_TAIL = 600


def _cut(value, head: int, tail: int) -> str | None:
    """A prompt as the daemon needs it: text (bytes decoded), only the part searched."""
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value[: (head + tail) * 4]).decode("utf-8", "replace")
    value = str(value)
    if len(value) > head + tail:
        value = value[:head] + ("\n…\n" + value[-tail:] if tail else "")
    return value


def _ask(state, message: dict, timeout: float, start: bool) -> dict | None:
    if address.mode() != "auto":
        return None
    try:
        st = address.state_path(None if state is None else os.fspath(state))
    except (TypeError, ValueError, OSError):
        return None
    if not st.is_dir():
        return None
    reply = request(address.socket_path(st, address.fingerprint()), message, timeout=timeout, state=st)
    if reply is None and start:
        spawn(os.fspath(st))  # none listening: the next turn finds one warm
    return reply


def context(state_dir, prompt, *, session: str | None = None, agent: str | None = None,
            previous: str | None = None, budget: int | None = None, turn: str | None = None,
            timeout: float = CONTEXT_TIMEOUT, record: bool = True, start: bool = True) -> dict | None:
    """What this turn gets from memory, from the state directory's daemon:
    ``{"text", "memories", "latency_ms", "note"}``, or None (no daemon, not warm yet, no
    answer within ``timeout``: inject nothing). With ``start``, a missing daemon is started
    for the next turn. Stdlib only; never raises."""
    try:
        message = {"op": "context", "prompt": _cut(prompt, PROMPT_HEAD, PROMPT_TAIL) or "",
                   "previous": _cut(previous, 0, PREVIOUS_TAIL), "session": session, "agent": agent,
                   "budget": budget, "turn": turn, "record": bool(record)}
        reply = _ask(state_dir, message, timeout, start)
    except Exception:  # noqa: BLE001 - a turn never fails on ARS
        return None
    if reply is None or not isinstance(reply.get("text"), str):
        return None
    return reply


def capture(state_dir, agent: str, session: str, turn: dict, *, timeout: float = CAPTURE_TIMEOUT,
            start: bool = True) -> dict | None:
    """Hand one finished turn to the daemon (``ARS.capture_turn``): ``{"ids": [...]}`` once
    it is durable, or None (no daemon, no answer in time, or it could not capture: the
    transcript's ingest catches up later). Stdlib only; never raises."""
    try:
        reply = _ask(state_dir, {"op": "capture", "agent": agent, "session": session, "turn": turn}, timeout, start)
    except Exception:  # noqa: BLE001
        return None
    if reply is None or not isinstance(reply.get("ids"), list):
        return None
    return reply


def spawn(state: str | None) -> None:
    """Start a daemon for this state directory and configuration, detached:
    its own session, no inherited descriptors (a caller reading our output
    until EOF must not wait for it). A second one exits at once (it cannot take
    the lock), so racing processes are harmless."""
    if address.mode() != "auto":
        return
    st = address.state_path(state)
    if not st.is_dir():
        return
    import subprocess

    try:
        subprocess.Popen(
            [sys.executable, "-m", "tui.daemon.server", "--state", os.fspath(st),
             "--fingerprint", address.fingerprint()],
            cwd=os.fspath(st), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, close_fds=True, start_new_session=True,
            env={**os.environ, "PYTHONPATH": _import_root(os.environ.get("PYTHONPATH"))},
        )
    except OSError:
        pass  # no daemon: every call answers by itself, as before


def _import_root(existing: str | None) -> str:
    """PYTHONPATH that finds this very ``tui`` package from the state directory."""
    root = os.fspath(Path(__file__).resolve().parents[2])
    return root if not existing else f"{root}{os.pathsep}{existing}"

"""Claude Code's transcript into memory, from its hooks (tui/agents/claude_code.py).

* ``capture_transcript``: what the transcript added since the last capture,
  recallable when the hook exits: captured by the warm recall daemon when one
  answers (the hook then loads nothing of ARS), else by ``ARS.capture_transcript``
  in this process. A transcript never captured and over ``FIRST_READ_MAX`` bytes is
  read whole in a process of its own (``ars hook claude-code --capture PATH``, detached).
* ``capture_soon``: after a tool call, that background capture when the last
  capture is over ``CAPTURE_EVERY`` s old (one stat otherwise).
* ``ingest_transcript``: ``ars ingest`` of the transcript, detached (the catch-up at
  SessionEnd: it registers the file for the raw tier and adds nothing captured).

Detached children run in their own session (they outlive the hook, and Claude
Code's signals to the hook do not reach them); their output goes to
``<state>/hook-ingest.log``.
"""

from __future__ import annotations

import os
import sys

from tui.agents import hook_io

INGEST_LOG = "hook-ingest.log"
INGEST_LOG_MAX = 1 << 20  # bytes; then the log starts again (the previous one kept as .1)
CAPTURE_EVERY = 30.0  # s: a tool call starts a background capture when the last one is older
FIRST_READ_MAX = 2 << 20  # bytes: a longer transcript's first capture runs in the background
CAPTURE_WAIT = 3.0  # s: how long a capture waits for the state directory's writer lock
DAEMON_WAIT = 2.0  # s: how long the recall daemon has to capture before this process does it

_say = hook_io.sayer("claude-code")


def _transcript(event: dict) -> str | None:
    path = event.get("transcript_path")
    if not isinstance(path, str) or not path or "\0" in path:
        _say(f"{event.get('hook_event_name')} without a transcript_path: nothing to capture")
        return None
    path = os.path.abspath(os.path.expanduser(path))
    if not os.path.isfile(path):
        _say(f"transcript {path} is not a file: nothing to capture")
        return None
    return path


def capture_transcript(event: dict, state: str) -> int:
    path = _transcript(event)
    if path is not None:
        capture_now(state, path, first_read_max=FIRST_READ_MAX)
    return 0


def capture_now(state: str, path: str, first_read_max: int | None) -> int:
    """Capture ``path``: by the warm recall daemon when one answers (this process then loads
    nothing of ARS), else in this process (a first read of a long one: in a process of its own)."""
    if first_read_max is not None and _by_daemon(state, path, first_read_max):
        return 0
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from core.hook_api import CaptureBusy, CaptureDeferred, capture_transcript as capture  # not the facade: every turn

    try:
        capture(state, path, "claude-code", wait=CAPTURE_WAIT, first_read_max=first_read_max)
    except CaptureDeferred as exc:
        _say(f"{exc}: in the background")
        spawn_capture(state, path)
    except CaptureBusy as exc:
        _say(f"turn not captured now: {exc}")
    except Exception as exc:  # noqa: BLE001 - the turn goes on; the next capture or the catch-up stores it
        if os.environ.get("ARS_DEBUG"):
            raise
        _say(f"turn not captured: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}")
    return 0


def _by_daemon(state: str, path: str, first_read_max: int) -> bool:
    """The daemon's ``capture`` of the transcript (``ARS.capture_turn`` with ``{"transcript": path}``),
    durable when it answers; False when no warm daemon took it (none running, an older one, busy)."""
    from tui.daemon import address, client

    ask = getattr(client, "capture", None)
    if ask is None or address.mode() != "auto":
        return False
    reply = ask(state, "claude-code", "-", {"transcript": path, "first_read_max": first_read_max},
                timeout=DAEMON_WAIT, start=False)
    return isinstance(reply, dict) and isinstance(reply.get("ids"), list)


def capture_soon(event: dict, state: str) -> None:
    """After a tool call: a background capture when the last one is older than ``CAPTURE_EVERY``."""
    path = event.get("transcript_path")
    if not isinstance(path, str) or not path or "\0" in path or not os.path.isdir(state) or not os.path.isfile(path):
        return
    from core.hook_api import checkpoint_age  # one stat

    age = checkpoint_age(state, path)
    if age is None or age > CAPTURE_EVERY:
        checkpoint_age(state, path, starting=True)  # the tool calls right after this one start none
        try:
            spawn_capture(state, os.path.abspath(os.path.expanduser(path)))
        except OSError as exc:
            _say(f"could not start a capture: {exc}")


# -- SessionEnd: the catch-up ingest of the transcript ----------------------------------------------
def ingest_transcript(event: dict, state: str) -> int:
    path = _transcript(event)
    if path is not None:
        spawn_ingest(state, path)
    return 0


def spawn_capture(state: str, path: str) -> int:
    """``ars hook claude-code --state STATE --capture PATH`` detached (as ``spawn_ingest``)."""
    return _spawn(state, ["hook", "claude-code", "--state", os.path.abspath(state), "--capture", path], f"capture {path}")


def spawn_ingest(state: str, path: str, fmt: str | None = "claude-code") -> int:
    """Start ``ars ingest --state STATE [--format FMT] PATH`` in its own
    session (it outlives the hook, and Claude Code's signals to the hook do
    not reach it); its output goes to ``<state>/hook-ingest.log``. Returns its pid."""
    state = os.path.abspath(state)
    return _spawn(state, ["ingest", "--state", state, *(["--format", fmt] if fmt else []), "--json", path],
                  f"ingest {path}")


def _spawn(state: str, args: list[str], what: str) -> int:
    """``ars ARGS`` detached, its output appended to ``<state>/hook-ingest.log``; its pid."""
    import subprocess

    from core.hook_api import PRIVATE_FILE, private_dir

    state = os.path.abspath(state)
    private_dir(state)
    log_path = os.path.join(state, INGEST_LOG)
    try:
        if os.path.getsize(log_path) > INGEST_LOG_MAX:
            os.replace(log_path, log_path + ".1")
    except OSError:
        pass
    fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE)
    try:
        from datetime import datetime, timezone

        os.write(fd, f"--- {datetime.now(timezone.utc).isoformat(timespec='seconds')} {what}\n".encode())
        child = subprocess.Popen(
            ars_command() + args,
            stdin=subprocess.DEVNULL, stdout=fd, stderr=fd, start_new_session=True, close_fds=True,
            cwd=state)  # never the project directory: its own `tui` package must not shadow ARS's
    finally:
        os.close(fd)
    return child.pid


def ars_command() -> list[str]:
    """How to start ``ars`` from here: the console script beside this Python
    (a venv's bin/), else this Python running the CLI module."""
    exe = sys.executable or "python3"
    script = os.path.join(os.path.dirname(exe), "ars")
    if os.path.isfile(script) and os.access(script, os.X_OK):
        return [script]
    return [exe, "-c", f"import sys; sys.path.insert(0, {_ROOT!r}); from tui.entry import main; main()"]


_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # holds tui/ and core/



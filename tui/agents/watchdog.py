"""A hook answers before its agent's own timeout, whatever blocks it.

A killed hook is an allowed call for Claude Code and Hermes: an agent that makes the
hook hang (holds ``<state>/.ledger.lock`` with ``flock``, plants a FIFO or a dangling
symlink where the hook reads, fills a disk) gets its call through when the agent's
timeout kills the hook. So every hook arms this watchdog first: a daemon thread that,
``seconds`` after the process started, writes the hook's fail-closed answer straight to
file descriptor 1 (unless the hook already answered) and ends the process with
``os._exit`` (no cleanup that could block again). It does not depend on the main thread:
a thread blocked in ``flock``, ``open`` or ``read`` releases the GIL, so the timer runs.

Standard library only: it runs on every tool call.
"""

from __future__ import annotations

import os
import sys
import threading
import time

_lock = threading.Lock()
_answered = False
_armed = False  # a process that never armed (OpenClaw's --serve checker answers a line per request) writes freely
STARTUP_GUESS = 0.0  # seconds already spent before arming when /proc cannot tell (see _age)


def _age() -> float:
    """Seconds since this process started (Linux: /proc), else 0: the agent's clock starts
    when it forks the hook, and a busy CPU can spend seconds in Python's start-up."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        start_ticks = int(fields[19])  # field 22 of stat(5), counted after the command name
        with open("/proc/uptime", "rb") as fh:
            uptime = float(fh.read().split()[0])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return STARTUP_GUESS


def answer(payload: bytes) -> bool:
    """Write the hook's one answer unless the watchdog already did; True when written."""
    global _answered
    with _lock:
        if _answered:
            return False
        _answered = _armed
        _write(payload)
        return True


def _write(payload: bytes) -> None:
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    view = memoryview(payload)
    while view:
        try:
            n = os.write(1, view)
        except InterruptedError:
            continue
        except OSError:
            return
        view = view[n:]


def arm(seconds: float, fail_closed: bytes | None, say=None) -> threading.Thread:
    """Answer ``fail_closed`` (None: nothing, the agent's own prompt decides) and exit 0 once the
    process is ``seconds`` old, unless it exits first. Returns the (daemon) timer thread."""
    global _armed
    deadline = time.monotonic() + max(0.0, seconds - _age())
    _armed = True

    def fire() -> None:
        while (left := deadline - time.monotonic()) > 0:
            time.sleep(min(left, 1.0))
        global _answered
        with _lock:
            late = not _answered
            _answered = True
            if late and fail_closed is not None:
                _write(fail_closed)
        if late and say is not None:
            try:
                say(f"no answer within {seconds:g} s of the hook's start (a lock, a file or the disk held it): "
                    "answered closed")
            except Exception:  # noqa: BLE001 - the exit below is what matters
                pass
        os._exit(0)

    thread = threading.Thread(target=fire, name="ars-hook-watchdog", daemon=True)
    thread.start()
    return thread

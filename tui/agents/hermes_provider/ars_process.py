"""The ARS process behind Hermes' memory provider: ``ars hook hermes --serve``, started
once and spoken to one JSON line a request, every wait with a deadline.

Part of the provider ``ars install hermes`` copies into ``$HERMES_HOME/plugins/ars/``
(Hermes loads a plugin's modules beside its ``__init__.py``): standard library only.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import subprocess
import threading
import time

RESTART_EVERY = 30.0    # s: at most one new start of a dead ARS in this long
STOP_WAIT = 5.0         # s: what stopping waits for ARS to finish what it was asked


class ArsProcess:
    """``ars hook hermes --serve`` and the requests waiting for its answers."""

    def __init__(self, command: list[str], log_path: str | None):
        self.command = command
        self.log_path = log_path
        self.proc: subprocess.Popen | None = None
        self.ready = threading.Event()
        self.error = ""            # why ARS cannot answer (its first line said so, or it died)
        self.started = 0.0
        self._ids = itertools.count(1)
        self._waiting: dict[int, list] = {}  # id -> [Event, answer]
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> bool:
        """Start ARS unless it runs, or started less than ``RESTART_EVERY`` s ago; whether it runs."""
        with self._lock:
            if self.alive():
                return True
            if self.proc is not None and time.monotonic() - self.started < RESTART_EVERY:
                # its exit code, now: the reader thread that also records it may not have run yet (a busy machine)
                self.error = self.error or _exited(self.proc.returncode)
                return False
            self.started = time.monotonic()
            self.ready.clear()
            self.error = ""
            err = subprocess.DEVNULL
            try:
                if self.log_path:
                    os.makedirs(os.path.dirname(self.log_path), exist_ok=True)
                    err = open(self.log_path, "ab")
                self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=err, start_new_session=True, close_fds=True)
            except OSError as exc:
                self.proc = None
                self.error = f"cannot start ARS ({' '.join(self.command[:1])}: {exc.strerror or exc})"
                return False
            finally:
                if err is not subprocess.DEVNULL:
                    err.close()
            threading.Thread(target=self._read, args=(self.proc,), daemon=True, name="ars-memory-read").start()
            return True

    def _read(self, proc: subprocess.Popen) -> None:
        for line in proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if not isinstance(msg, dict):
                continue
            if "ready" in msg and "id" not in msg:
                if msg.get("ready") is not True:
                    self.error = str(msg.get("error") or "ARS could not open its state")
                self.ready.set()
                continue
            with self._lock:
                slot = self._waiting.pop(msg.get("id"), None)
            if slot is not None:
                slot[1] = msg
                slot[0].set()
        # ARS is gone: nobody waits in vain (unless a new ARS took its place meanwhile)
        code = proc.wait()
        with self._lock:
            if self.proc is not proc and self.proc is not None:
                return
            self.error = self.error or _exited(code)
            slots, self._waiting = list(self._waiting.values()), {}
        self.ready.set()
        for slot in slots:
            slot[0].set()

    def ask(self, op: str, timeout: float, **fields) -> dict:
        """ARS's answer, or ``{"error": LINE}`` (not started, dead, or no answer in ``timeout`` s)."""
        deadline = time.monotonic() + timeout
        if not self.start():
            return {"error": self.error or "ARS is not running (started again in a while)"}
        if not self.ready.wait(max(0.0, deadline - time.monotonic())):
            return {"error": f"ARS was not ready within {timeout:g} s"}
        if self.error:
            return {"error": self.error}
        if op == "context":  # ARS stops recalling in time to answer within this wait
            fields["deadline"] = round(max(0.05, (deadline - time.monotonic()) * 0.9 - 0.05), 3)
        rid = next(self._ids)
        slot = [threading.Event(), None]
        with self._lock:
            self._waiting[rid] = slot
        data = json.dumps({"id": rid, "op": op, **fields}, ensure_ascii=True).encode() + b"\n"
        problem = self._write(data, deadline)
        if problem:
            with self._lock:
                self._waiting.pop(rid, None)
            return {"error": problem}
        if not slot[0].wait(max(0.0, deadline - time.monotonic())):
            with self._lock:
                self._waiting.pop(rid, None)
            return {"error": f"no answer from ARS within {timeout:g} s"}
        return slot[1] if isinstance(slot[1], dict) else {"error": self.error or "ARS exited"}

    def _write(self, data: bytes, deadline: float) -> str:
        """Write one request whole before ``deadline``; "" or what went wrong. The pipe is
        non-blocking: an ARS that stopped reading cannot hold a turn past its deadline."""
        with self._write_lock:
            proc = self.proc
            if proc is None or proc.stdin is None:
                return "ARS is gone"
            fd = proc.stdin.fileno()
            os.set_blocking(fd, False)
            view = memoryview(data)
            while view:
                left = deadline - time.monotonic()
                if left <= 0:
                    # a request cut in half would garble the next: this process is of no more use
                    self._kill(proc, "ARS did not read its requests in time")
                    return "ARS did not take the request within its deadline"
                if not select.select([], [fd], [], left)[1]:
                    continue
                try:
                    view = view[os.write(fd, view):]
                except BlockingIOError:
                    continue
                except OSError as exc:
                    return f"ARS is gone ({exc.strerror or exc})"
            return ""

    def _kill(self, proc: subprocess.Popen, why: str) -> None:
        self.error = why
        try:
            proc.kill()
        except OSError:
            pass

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            os.set_blocking(proc.stdin.fileno(), True)
            proc.stdin.close()  # ARS finishes what it was asked, then exits
            proc.wait(STOP_WAIT)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            proc.kill()


def _exited(code: int | None) -> str:
    """Why a dead ARS cannot answer (the turn that finds it and its reader thread say the same)."""
    return f"ARS exited (code {code})"

"""The next batches of a large ingest redacted and tokenised in a second process.

Why: a durable ingest spends ~40 % of its time redacting episodes (secrets never
enter memory) and computing their full-text terms, all pure Python under one
GIL, and the rest parsing and writing the ledger and SQLite. With a second
core, a worker process prepares the batches ahead while this one writes them:
``bench/scale.py`` measures the rate at 100,000 and 1,000,000 episodes.

What is sent is what was parsed; what comes back is the same episodes
redacted (``redact_episodes``, the one redaction) and each one's index terms
(``index_text``, what ``SqliteStore.upsert`` would compute itself), in order.
Small ingests (a hook's turn, a session file) never start the worker: the
first ``IN_PROCESS`` batches of a stream are prepared here, and a worker costs
~0.3 s to start.

The worker is a plain child process on two private pipes, not a
``multiprocessing`` pool: a pool's worker and its resource tracker inherit
the caller's stdout and outlive a SIGKILLed ingest (found by
bench/crash_ingest.py: the caller waited forever for EOF on a pipe the orphans
held). This one's stdin is the request pipe, so it exits at EOF when this
process dies however it dies, and its stdout and stderr are its own. If it
dies, the batches it held are prepared here and the ingest goes on without
it: nothing is lost.
"""

from __future__ import annotations

import os
import pickle
import queue
import struct
import subprocess
import sys
import threading
from collections import deque
from typing import BinaryIO, Iterable, Iterator

from core.models import Episode

IN_PROCESS = 2  # batches of a stream prepared here before the worker is used
AHEAD = 2  # batches in the worker's hands while this process writes
_LEN = struct.Struct("<Q")


def prepare(chunk: list[Episode]) -> tuple[list[Episode], dict[str, str]]:
    """A batch redacted, and each redacted episode's index terms by id."""
    from core.govern.redact import redact_episodes
    from core.memory.text import index_text

    eps = redact_episodes(chunk)
    return eps, {ep.id: index_text(ep.search_text()) for ep in eps}


def _send(fh: BinaryIO, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    fh.write(_LEN.pack(len(data)) + data)
    fh.flush()


def _recv(fh: BinaryIO):
    head = fh.read(_LEN.size)
    if len(head) < _LEN.size:
        raise EOFError("the other end closed its pipe")
    size = _LEN.unpack(head)[0]
    data = fh.read(size)
    if len(data) < size:
        raise EOFError("the other end closed its pipe mid-message")
    return pickle.loads(data)


def serve() -> None:
    """The worker: ``prepare`` each batch read from stdin, answers on stdout, until EOF."""
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            chunk = _recv(inp)
        except EOFError:
            return  # the ingest finished, or died
        _send(out, prepare(chunk))


class _Worker:
    """The child process, and a thread that feeds it (a batch written while the child is
    busy writing its last answer would otherwise block both ends)."""

    def __init__(self) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # the code this process runs
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from core.ingest.prep_worker import serve; serve()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
            close_fds=True, start_new_session=True)  # a Ctrl-C at the terminal reaches the ingest only
        self.todo: queue.Queue = queue.Queue()
        self.feeder = threading.Thread(target=self._feed, name="ars-prep-feeder", daemon=True)
        self.feeder.start()

    def _feed(self) -> None:
        while (chunk := self.todo.get()) is not None:
            try:
                _send(self.proc.stdin, chunk)
            except (OSError, ValueError):
                return  # the worker is gone: the reader finds EOF
        try:
            self.proc.stdin.close()
        except OSError:
            pass

    def submit(self, chunk: list[Episode]) -> None:
        self.todo.put(chunk)

    def result(self) -> tuple[list[Episode], dict[str, str]]:
        return _recv(self.proc.stdout)

    def close(self) -> None:
        self.todo.put(None)
        self.feeder.join(timeout=5)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


class PrepWorker:
    """One worker process for a whole ingest (started on first use, ended by ``close``)."""

    def __init__(self) -> None:
        self._worker: _Worker | None = None
        self.broken = False  # the worker died once: the rest of this ingest is prepared in-process

    def batches(self, chunks: Iterable[list[Episode]]) -> Iterator[tuple[list[Episode], dict[str, str]]]:
        """``prepare`` of each chunk, in order; the worker works ahead after ``IN_PROCESS`` chunks."""
        chunks = iter(chunks)
        for i, chunk in enumerate(chunks):
            yield prepare(chunk)
            if i + 1 >= IN_PROCESS:
                break
        else:
            return
        inflight: deque[tuple[list[Episode], bool]] = deque()  # (chunk, sent to the worker)
        for chunk in chunks:
            inflight.append((chunk, self._submit(chunk)))
            if len(inflight) > AHEAD:
                yield self._result(*inflight.popleft())
        while inflight:
            yield self._result(*inflight.popleft())

    def _submit(self, chunk: list[Episode]) -> bool:
        if self.broken:
            return False
        try:
            if self._worker is None:
                self._worker = _Worker()
            self._worker.submit(chunk)
            return True
        except OSError:
            self.broken = True
            return False

    def _result(self, chunk: list[Episode], sent: bool) -> tuple[list[Episode], dict[str, str]]:
        if sent and not self.broken and self._worker is not None:
            try:
                return self._worker.result()
            except (EOFError, OSError, pickle.UnpicklingError):
                self.broken = True  # killed (OOM, a signal): this batch and the rest are prepared here
        return prepare(chunk)

    @property
    def pid(self) -> int | None:
        return self._worker.proc.pid if self._worker is not None else None

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None

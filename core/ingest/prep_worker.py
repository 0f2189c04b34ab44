"""The next batches of a large ingest redacted and tokenised in a second process.

Why: a durable ingest spends ~40 % of its time redacting episodes (secrets never
enter memory) and computing their full-text terms, all pure Python under one
GIL, and the rest parsing and writing the ledger and SQLite. With a second
core, a worker process prepares the batches ahead while this one writes them:
``bench/scale.py`` measures the rate at 100,000 and 1,000,000 episodes.

What is sent is what was parsed; what comes back is the same episodes
redacted (``redact_episodes``, the one redaction) and each one's index terms
(``index_text``, what ``SqliteStore.upsert`` would compute itself). Results
come back in order. Small ingests (a hook's turn, a session file) never start
the worker: the first ``IN_PROCESS`` batches of a stream are prepared here,
and a worker costs ~0.3 s to start. If the worker dies, the batch it held is
prepared here and the rest of the ingest goes on without it: nothing is lost.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Iterable, Iterator

from core.models import Episode

IN_PROCESS = 2  # batches of a stream prepared here before the worker is used
AHEAD = 2  # batches in the worker's hands while this process writes


def prepare(chunk: list[Episode]) -> tuple[list[Episode], dict[str, str]]:
    """A batch redacted, and each redacted episode's index terms by id."""
    from core.govern.redact import redact_episodes
    from core.memory.text import index_text

    eps = redact_episodes(chunk)
    return eps, {ep.id: index_text(ep.search_text()) for ep in eps}


class PrepWorker:
    """One worker process for a whole ingest (started on first use, shut by ``close``)."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
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
        inflight: deque[tuple[list[Episode], Future | None]] = deque()
        for chunk in chunks:
            inflight.append((chunk, self._submit(chunk)))
            if len(inflight) > AHEAD:
                yield self._result(*inflight.popleft())
        while inflight:
            yield self._result(*inflight.popleft())

    def _submit(self, chunk: list[Episode]) -> Future | None:
        if self.broken:
            return None
        try:
            if self._pool is None:
                import multiprocessing

                # spawn: this process holds threads and SQLite connections a fork would copy mid-use
                self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
            return self._pool.submit(prepare, chunk)
        except (BrokenProcessPool, OSError, RuntimeError):
            self.broken = True
            return None

    def _result(self, chunk: list[Episode], future: Future | None) -> tuple[list[Episode], dict[str, str]]:
        if future is not None:
            try:
                return future.result()
            except (BrokenProcessPool, OSError, EOFError):
                self.broken = True  # killed (OOM, a signal): this batch and the rest are prepared here
        return prepare(chunk)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

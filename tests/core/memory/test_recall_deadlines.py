"""Recall keeps its deadlines: the files scan answers "timeout" past its deadline
(with and without ripgrep), and a recall never waits for a writer that holds the
writer lock."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from conftest import make_memory
from core.infra.writer_lock import writer_lock
from core.memory.query import prepare_query
from core.memory.tiers.files import FilesTier
from loophelp import ars
from statehelp import seeded  # noqa: F401 - seeded: the fixture


@pytest.mark.parametrize("use_rg", [False, True])
def test_files_scan_answers_timeout_past_its_deadline(seeded: Path, use_rg: bool):
    import shutil

    if use_rg and not shutil.which("rg"):
        if os.environ.get("CI") == "true":
            pytest.fail("ripgrep is missing under CI (.ci/run installs it)")
        pytest.skip("ripgrep is not on PATH; the Python scan is tested by the other case")
    tier = FilesTier(seeded, use_ripgrep=use_rg)
    assert tier.search(prepare_query("Neo4j outage"), 5, time.monotonic() + 30).status == "ok"
    report = tier.search(prepare_query("Neo4j outage"), 5, time.monotonic())
    assert report.status == "timeout"


@pytest.mark.parametrize("use_rg", [False, True])
def test_files_scan_keeps_a_bounded_share_of_matching_lines(seeded: Path, use_rg: bool, monkeypatch):
    """A query of words in most lines stops at MAX_MATCHED_CHARS (a warm process kept
    ~650 MB of lines per such query at 100,000 episodes), says so, and still ranks."""
    import shutil

    from core.memory.tiers.files import search as files_search

    if use_rg and not shutil.which("rg"):
        if os.environ.get("CI") == "true":
            pytest.fail("ripgrep is missing under CI (.ci/run installs it)")
        pytest.skip("ripgrep is not on PATH; the Python scan is tested by the other case")
    tier = FilesTier(seeded, use_ripgrep=use_rg)
    whole = tier.search(prepare_query("Neo4j outage"), 5, time.monotonic() + 30)
    assert whole.status == "ok" and whole.error == "" and whole.candidates > 1
    monkeypatch.setattr(files_search, "MAX_MATCHED_CHARS", 1)  # the first matching line fills it
    capped = tier.search(prepare_query("Neo4j outage"), 5, time.monotonic() + 30)
    assert capped.status == "ok" and capped.candidates == 1 and len(capped.hits) == 1
    assert "scan stopped after" in capped.error and "partial results" in capped.error


def test_recall_never_waits_for_a_writer(seeded: Path):
    """Opening a state directory repairs SQLite from the ledger, but not while
    another process writes: that writer applies its own events."""
    from core.ledger.ledger import Event, Ledger

    done = threading.Event()
    with writer_lock(seeded, "a long ingest"):
        # an acknowledged event SQLite has not applied yet: the writer is mid-store
        Ledger(seeded).append([Event("ep:pending", "episode.upsert", {"id": "manual:pending", "text": "pending"})])
        t = threading.Thread(target=lambda: (ars("recall", "outage", state=seeded), done.set()))
        t.start()
        assert done.wait(60)
    t.join()
    mem = make_memory(seeded)
    try:
        mem.recover()  # the writer is gone: the next open applies it
        assert mem.sqlite.has("manual:pending")
    finally:
        mem.close()

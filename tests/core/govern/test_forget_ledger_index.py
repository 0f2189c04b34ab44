"""``ars forget`` finds a memory's ledger lines through memory.sqlite's
``ledger_lines`` (core/govern/scrub.py ``indexed_patches``), not by reading
the whole ledger (1.7 GB at a million episodes): the lines of each version,
the events quoting it, and a scan only of what the index does not cover.

Real parts: a real ledger and memory.sqlite in a temporary state directory.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import make_memory
from core.events import EPISODE_EVENT
from core.govern import forget as F
from core.govern import scrub
from core.ledger.ledger import Event, Ledger, content_id
from core.models import Episode

SECRET = "qvzledgersecret"


def episodes(n: int, secret_at: int = 3) -> list[Episode]:
    return [Episode(id=f"manual:s{i // 10}:{i % 10}", source="manual", session_id=f"s{i // 10}",
                    text=(f"the vault code is {SECRET}" if i == secret_at else f"note number {i} about otters"),
                    first_ts=f"2026-11-01T10:{i % 60:02d}:00+00:00") for i in range(n)]


def ledger_holds(state: Path, needle: str = SECRET) -> bool:
    return needle.encode() in (state / "ledger.jsonl").read_bytes()


@pytest.fixture
def scans(monkeypatch):
    """The ranges forget read the ledger over, instead of going through the index."""
    seen: list[tuple[int, int | None]] = []
    real = scrub.ledger_patches

    def spy(path, ids, start=0, stop=None):
        seen.append((start, stop))
        return real(path, ids, start, stop)

    monkeypatch.setattr(scrub, "ledger_patches", spy)
    return seen


def test_the_index_names_every_line_that_holds_an_episode(state_dir, scans):
    memory = make_memory(state_dir)
    eps = episodes(40)
    memory.store(eps)
    memory.store([eps[3].model_copy(update={"summary": f"again {SECRET}"})])  # a second version
    at, lines_from, applied = memory.sqlite.ledger_lines(["manual:s0:3"])
    assert len(at) == 2 and lines_from == 0 and applied == memory.ledger.size()
    raw = (state_dir / "ledger.jsonl").read_bytes()
    assert all(SECRET.encode() in raw[a:raw.index(b"\n", a)] for a in at)
    sel = F.select(memory, ids=["manual:s0:3"])
    rep = F.forget(memory, sel)
    assert rep.removed["ledger"] == "2 lines scrubbed in place"
    assert not ledger_holds(state_dir)
    assert scans == [(applied, None)]  # only the tombstone's line, after what SQLite applied, was scanned
    assert memory.sqlite.ledger_lines(["manual:s0:3"])[0] == []  # patched, then dropped from the index
    assert memory.recall("otters note 7", k=3).hits  # the others are there
    memory.close()


def test_events_quoting_a_memory_are_indexed_and_scrubbed(state_dir, scans):
    """A loop transition quoting recall hits: its line holds the text too."""
    memory = make_memory(state_dir)
    memory.store(episodes(20))
    data = {"loop": "l1", "results": [{"episode_id": "manual:s0:3", "snippet": f"the vault code is {SECRET}"}]}
    memory.ledger.append([Event(content_id("tr", data), "loop.transition", data)])
    memory.recover()  # SQLite applies the transition: its line goes into the index
    at, _from, applied = memory.sqlite.ledger_lines(["manual:s0:3"])
    assert len(at) == 2 and applied == memory.ledger.size()
    F.forget(memory, F.select(memory, ids=["manual:s0:3"]))
    assert not ledger_holds(state_dir)
    assert all(start >= applied for start, _stop in scans)  # nothing before the applied offset was read
    memory.close()


def test_lines_sqlite_has_not_applied_yet_are_scanned(state_dir):
    memory = make_memory(state_dir)
    memory.store(episodes(20, secret_at=-1))
    late = episodes(20, secret_at=13)[13].model_copy(update={"id": "manual:s9:0", "session_id": "s9"})
    # written by another process whose SQLite commit a crash cut short: in the ledger only
    memory.ledger.append([Event(content_id("ep", late.model_dump(mode="json")), EPISODE_EVENT,
                                late.model_dump(mode="json"))])
    F.forget(memory, F.Selection(ids=["manual:s9:0"]))
    assert not ledger_holds(state_dir)
    memory.close()


def test_a_store_from_before_the_index_scans_what_it_held_then(state_dir):
    """Schema 3 had no ``ledger_lines``: opened by this ARS, what its ledger held is scanned, what comes after
    is indexed."""
    memory = make_memory(state_dir)
    memory.store(episodes(20))
    conn = memory.sqlite.team()
    with conn:
        conn.execute("DROP TABLE ledger_lines")
        conn.execute("PRAGMA user_version = 3")
    memory.close()
    size = Ledger(state_dir).size()
    memory = make_memory(state_dir)
    assert any("upgraded to schema 5" in n and "nothing re-indexed" in n for n in memory.sqlite.notices)
    at, lines_from, _applied = memory.sqlite.ledger_lines(["manual:s0:3"])
    assert at == [] and lines_from == size
    memory.store([episodes(30, secret_at=25)[25]])
    assert len(memory.sqlite.ledger_lines(["manual:s2:5"])[0]) == 1
    F.forget(memory, F.select(memory, ids=["manual:s0:3", "manual:s2:5"]))
    assert not ledger_holds(state_dir)
    assert json.loads((state_dir / "forgotten.json").read_text())["ids"] == ["manual:s0:3", "manual:s2:5"]
    memory.close()


def test_an_offset_that_is_not_a_line_is_never_patched(state_dir):
    """A stale or wrong row in the index: the line there is read and checked, never trusted."""
    memory = make_memory(state_dir)
    memory.store(episodes(20))
    at, _f, applied = memory.sqlite.ledger_lines(["manual:s0:3"])
    before = (state_dir / "ledger.jsonl").read_bytes()
    patches = list(scrub.indexed_patches(state_dir / "ledger.jsonl", {"manual:s0:3"}, [at[0] + 5, 0], 0, applied))
    assert patches == []  # mid-line, and another episode's line
    assert (state_dir / "ledger.jsonl").read_bytes() == before
    memory.close()

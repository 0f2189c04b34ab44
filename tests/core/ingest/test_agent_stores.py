"""Conformance: OpenClaw 2026.8+ agent stores and Hermes' state.db, read as the agents ship them.

The fixtures are built from each agent's published schema and entry shapes
(tests/fixtures/agent_stores/*_store.py name their sources and versions).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "fixtures" / "agent_stores"))

from conftest import make_memory  # noqa: E402
from core.ingest.pipeline import ingest  # noqa: E402
from core.ingest.stores.cursor import CURSOR_FILE  # noqa: E402
from core.ingest.stores.sqlite_ro import read_store  # noqa: E402
from hermes_store import HermesStore, T0, conformance_store  # noqa: E402
from loophelp import ars  # noqa: E402
from openclaw_store import OpenClawStore, assistant, conformance_events, entry, header, user  # noqa: E402

HERE = Path(__file__).parents[2]  # tests/


def episodes(mem, source: str | None = None) -> dict:
    out = {}
    for i in mem.sqlite.ids():
        ep = mem.sqlite.get(i)
        if source is None or ep.source == source:
            out[i] = ep
    return out


def store_summary(report, suffix: str):
    [s] = [f for f in report.per_file if f.file.endswith(suffix)]
    return s


@pytest.fixture
def mem(state_dir):
    m = make_memory(state_dir, neo4j_uri=None)
    yield m
    m.close()


def full_home(tmp_path: Path) -> OpenClawStore:
    store = OpenClawStore(tmp_path / ".openclaw").create()
    events = conformance_events("sess-a")
    store.add_events("sess-a", events)  # plain and zstd events, alternately
    # the legacy JSONL the SQLite import moved aside: the same first events again (read once)
    store.import_archive("sess-a", events[:6])
    store.add_cold("sess-cold", [header("sess-cold"), user("k1", None, "Where does the VPN config live?", 1),
                                 assistant("k2", "k1", "In vault path secret/vpn-cold-archive.", 2)])
    store.add_cold("sess-emb", [header("sess-emb"), user("e1", None, "Which port does grafana use?", 1),
                                assistant("e2", "e1", "Grafana listens on 3000, embedded-cold.", 2)], embedded=True)
    store.write_jsonl(store.sessions / "sess-old.jsonl.reset.2026-09-01T08-00-00.000Z",
                      [header("sess-old"), user("o1", None, "Old topic before a reset: kubernetes quotas", 1)])
    store.checkpoint()
    return store


# -- OpenClaw ----------------------------------------------------------------------------------------
def test_openclaw_store_reads_every_copy_once_with_openclaw_semantics(mem, tmp_path):
    store = full_home(tmp_path)
    before = sorted(os.listdir(store.db.parent))
    report = ingest(mem, [store.home])
    assert report.failed_files == 0 and not report.malformed, report.malformed
    assert sorted(os.listdir(store.db.parent)) == before == ["openclaw-agent.sqlite"]  # no -wal/-shm left behind
    eps = episodes(mem, "openclaw")
    assert set(eps) == {"openclaw:sess-a:0", "openclaw:sess-a:1", "openclaw:sess-cold:0", "openclaw:sess-emb:0",
                        "openclaw:sess-old:0"}
    first, second = eps["openclaw:sess-a:0"], eps["openclaw:sess-a:1"]
    assert {e.agent for e in eps.values()} == {"main"}
    # the reset (no time gap) split the two topics
    assert "billing" in first.text and "sourdough" not in first.text
    assert "sourdough" in second.text and "billing" not in second.text and second.meta["reset"] == "new"
    # the failed turn is kept, as a failure
    assert "assistant (failed): 429 rate limited by provider" in first.text and first.meta["failed_turns"] == 1
    # model switch and custom snapshot: metadata, not text; label and display:false: left out
    assert first.meta["custom"] == "plan-snapshot" and "plan-snapshot" not in first.text
    assert "HIDDEN-REMINDER" not in first.text + second.text
    # the branch: only the active path counts
    assert "ABANDONED-BRANCH" not in second.text and "rye flour" in second.text
    # each event once, though the import archive holds the first six again
    assert first.text.count("Deploy the billing service") == 1
    assert "secret/vpn-cold-archive" in eps["openclaw:sess-cold:0"].text
    assert "embedded-cold" in eps["openclaw:sess-emb:0"].text
    assert "kubernetes quotas" in eps["openclaw:sess-old:0"].text
    # the raw-file tier never registers a database
    assert not [p for p in mem.files.registry.files() if p.endswith((".sqlite", ".zst"))]


def test_legacy_jsonl_and_the_store_copy_are_one_episode(mem, tmp_path):
    store = OpenClawStore(tmp_path / ".openclaw")
    events = conformance_events("sess-a")
    legacy = store.write_jsonl(store.sessions / "sess-a.jsonl", events)
    ingest(mem, [store.sessions])  # an install before 2026.8: the JSONL file alone
    before = {i: e.text for i, e in episodes(mem).items()}
    assert set(before) == {"openclaw:sess-a:0", "openclaw:sess-a:1"}
    # the upgrade imports the session into SQLite and moves the JSONL aside
    store.create()
    store.add_events("sess-a", events)
    store.import_archive("sess-a", events)
    legacy.unlink()
    store.checkpoint()
    report = ingest(mem, [store.home])
    assert report.failed_files == 0
    after = {i: e.text for i, e in episodes(mem).items()}
    assert after == before  # same ids, same text: one episode per part whichever copy was read


def test_reingest_reads_only_what_changed(mem, tmp_path, state_dir):
    store = full_home(tmp_path)
    ingest(mem, [store.home])
    again = ingest(mem, [store.home])
    assert store_summary(again, "openclaw-agent.sqlite").status == "unchanged" and again.episodes_added == 0
    assert (state_dir / CURSOR_FILE).is_file()
    store.add_events("sess-a", [user("u5", "a5", "And the baking temperature for rye?", 7)], compress=True)
    store.checkpoint()
    grown = ingest(mem, [store.home])
    summary = store_summary(grown, "openclaw-agent.sqlite")
    # only sess-a was read again; of its two episodes only the last changed
    assert (summary.episodes_added, summary.duplicates_skipped) == (1, 1), summary
    assert "baking temperature" in mem.sqlite.get("openclaw:sess-a:1").text


def test_the_readme_sessions_folder_finds_its_store(tmp_path, state_dir):
    store = full_home(tmp_path)
    (store.sessions / "sessions.json").write_text("{}")
    r = ars("ingest", str(store.sessions), "--json", state=state_dir)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["episodes_added"] == 5 and report["failed_files"] == 0
    assert [u["file"].endswith("sessions.json") for u in report["unsupported"]] == [True]


def test_store_written_by_another_process_while_ars_reads(mem, tmp_path):
    """OpenClaw's writer keeps appending (WAL, its own process); ARS reads alongside, never in its way."""
    store = OpenClawStore(tmp_path / ".openclaw").create()
    store.add_events("live", [header("live")])
    writer = subprocess.Popen([sys.executable, "-c", f"""
import sys, time
sys.path.insert(0, {str(HERE / 'fixtures' / 'agent_stores')!r})
from pathlib import Path
from openclaw_store import OpenClawStore, connect, user
s = OpenClawStore(Path({str(store.home)!r}))
conn = connect(s.db)
conn.execute("PRAGMA journal_mode = WAL")
parent = None
for i in range(300):
    conn.execute("BEGIN IMMEDIATE")
    s.add_events("live", [user(f"w{{i}}", parent, f"writer message number {{i}} zz{{i}}zz", i % 50)], conn=conn)
    conn.commit()
    parent = f"w{{i}}"
    time.sleep(0.005)
conn.close()
"""])
    reports = []
    try:
        while writer.poll() is None:
            reports.append(ingest(mem, [store.home]))
    finally:
        assert writer.wait(timeout=60) == 0
    reports.append(ingest(mem, [store.home]))
    assert len(reports) >= 2 and not any(r.failed_files or r.malformed for r in reports)
    text = "\n".join(e.text for e in episodes(mem).values())
    assert all(f"zz{i}zz" in text for i in range(300))


def test_a_commit_that_leaves_the_store_files_looking_the_same_is_still_read(mem, tmp_path, state_dir):
    """A running agent's WAL restarts from its first frame after a checkpoint, so a commit can leave
    the -wal file's size as it was, and an mtime within the clock's tick looks the same too. Files that
    look unchanged prove nothing while a WAL is in use: the store's sessions are listed again (the busy
    run's flake of test_store_written_by_another_process_while_ars_reads)."""
    from openclaw_store import connect

    store = OpenClawStore(tmp_path / ".openclaw").create()
    writer = connect(store.db)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    store.add_events("live", [header("live"), user("u1", None, "first message alpha", 1)], conn=writer)
    writer.commit()
    writer.execute("PRAGMA wal_checkpoint(RESTART)")
    store.add_events("live", [user("u2", "u1", "second message bravo", 2)], conn=writer)
    writer.commit()
    wal = Path(f"{store.db}-wal")
    assert wal.exists()
    ingest(mem, [store.home])
    looks = {p: (p.stat().st_size, p.stat().st_atime_ns, p.stat().st_mtime_ns) for p in (store.db, wal)}
    # the next commit overwrites the same frames (a checkpoint restarted the WAL): same size
    def same_looking_commit(eid: str, parent: str, text: str, minute: int) -> None:
        writer.execute("PRAGMA wal_checkpoint(RESTART)")
        store.add_events("live", [user(eid, parent, text, minute)], conn=writer)
        writer.commit()
        for p, (size, atime, mtime) in looks.items():
            assert p.stat().st_size == size, "the WAL did not restart: the test no longer shows the case"
            os.utime(p, ns=(atime, mtime))  # within one tick of the clock: the same mtime

    same_looking_commit("u3", "u2", "third message charlie", 3)
    ingest(mem, [store.home])
    assert "third message charlie" in "\n".join(e.text for e in episodes(mem).values())
    mem.close()
    # the fresh `ars ingest DB --json` a hook runs answers "unchanged" without the CLI only for a store at rest
    same_looking_commit("u4", "u3", "fourth message delta", 4)
    from conftest import env_without_ars

    entry = Path(sys.executable).parent / "ars"  # the installed entry point, with its fast path (tui/fast_ingest.py)
    r = subprocess.run([str(entry), "ingest", str(store.db), "--json", "--state", str(state_dir)],
                       capture_output=True, text=True, env=env_without_ars(), timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["episodes_added"] == 1
    writer.close()


def test_a_busy_database_is_retried_not_an_error(tmp_path):
    db = tmp_path / "rollback.sqlite"  # a rollback-journal database: a writer's exclusive lock blocks readers
    conn = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    conn.execute("CREATE TABLE t (x)")
    conn.execute("INSERT INTO t VALUES (1)")
    conn.execute("BEGIN EXCLUSIVE")
    conn.execute("INSERT INTO t VALUES (2)")
    threading.Timer(0.4, lambda: conn.execute("COMMIT")).start()
    started = time.monotonic()
    assert read_store(db, lambda c: c.execute("SELECT count(*) FROM t").fetchone()[0]) == 2
    assert time.monotonic() - started >= 0.3
    conn.close()


# -- Hermes ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("schema", [22, 30])
def test_hermes_state_db(mem, tmp_path, schema):
    """hermes-agent 0.19.0's schema (22), and the repository's schema 30 (summary flag, display identity)."""
    store = conformance_store(tmp_path / ".hermes" / "state.db", schema)
    if schema == 30:
        store.message("20260909_100000_abc123", "user", "HIDDEN-SCAFFOLD background process done", T0 + 12,
                      display_kind="hidden")
    report = ingest(mem, [tmp_path / ".hermes"])
    assert report.failed_files == 0 and not report.malformed, report.malformed
    assert sorted(os.listdir(store.path.parent)) == ["state.db"]
    eps = episodes(mem, "hermes")
    parent, child = eps["hermes:20260909_100000_abc123:0"], eps["hermes:20260909_110000_def456:0"]
    assert parent.channel == "telegram" and parent.meta["title"] == "Nginx rollout"
    assert "assistant → terminal: command=nginx -t -c /etc/nginx/edge.conf" in parent.text
    assert "user: Here is the edge map diagram" in parent.text  # \x00json: content
    assert "REWOUND-TEXT" not in parent.text and "SYSTEM-PROMPT" not in parent.text
    assert "HIDDEN-SCAFFOLD" not in parent.text and "Reloaded edge-2." in parent.text
    # the compaction summary: a summary, boilerplate removed, never the user's words
    assert "compaction summary: ## Historical Task Snapshot" in parent.text
    assert "REFERENCE ONLY" not in parent.text and "END OF CONTEXT SUMMARY" not in parent.text
    assert "user: [CONTEXT" not in parent.text
    # the tail the compaction copied back is read once
    assert parent.text.count("The map shows three edge nodes.") == 1
    # the continuation is chained to its parent
    assert child.meta["parent_session_id"] == "20260909_100000_abc123"
    assert "compaction summary: Edge-2 reloaded after the rollout." in child.text
    assert "PRIOR CONTEXT" not in child.text


def test_hermes_reingest_reads_only_what_changed(mem, tmp_path):
    store = conformance_store(tmp_path / ".hermes" / "state.db")
    ingest(mem, [store.path])
    assert store_summary(ingest(mem, [store.path]), "state.db").status == "unchanged"
    store.message("20260909_110000_def456", "user", "And edge-4 after that", T0 + 3700)
    summary = store_summary(ingest(mem, [store.path]), "state.db")
    assert (summary.episodes_added, summary.duplicates_skipped) == (1, 0), summary
    assert "edge-4" in mem.sqlite.get("hermes:20260909_110000_def456:0").text


def test_hermes_db_being_written_while_ars_reads(mem, tmp_path):
    store = HermesStore(tmp_path / "state.db").create()
    store.session("s1")
    writer = subprocess.Popen([sys.executable, "-c", f"""
import sys, time
sys.path.insert(0, {str(HERE / 'fixtures' / 'agent_stores')!r})
from pathlib import Path
from hermes_store import HermesStore, T0
s = HermesStore(Path({str(store.path)!r}))
conn = s.connect()
conn.execute("PRAGMA journal_mode = WAL")
for i in range(300):
    s.message("s1", "user" if i % 2 == 0 else "assistant", f"hermes line {{i}} qq{{i}}qq", T0 + i, conn=conn)
    conn.commit()
    time.sleep(0.005)
conn.close()
"""])
    reports = []
    try:
        while writer.poll() is None:
            reports.append(ingest(mem, [store.path]))
    finally:
        assert writer.wait(timeout=60) == 0
    reports.append(ingest(mem, [store.path]))
    assert len(reports) >= 2 and not any(r.failed_files or r.malformed for r in reports)
    text = "\n".join(e.text for e in episodes(mem).values())
    assert all(f"qq{i}qq" in text for i in range(300))


# -- nothing silently skipped ------------------------------------------------------------------------
def test_a_folder_with_nothing_readable_is_exit_1_naming_what_it_found(tmp_path, state_dir):
    folder = tmp_path / "odd"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello")
    (folder / "photo.png").write_bytes(b"\x89PNG\r\n")
    other = sqlite3.connect(folder / "inventory.db")
    other.execute("CREATE TABLE parts (sku TEXT)")
    other.commit()
    other.close()
    r = ars("ingest", str(folder), state=state_dir)
    assert r.returncode == 1, (r.stdout, r.stderr)
    line = " ".join(r.stderr.split())
    assert "3 files, none in a supported format" in line and "inventory.db (a SQLite database that is neither" in line
    j = ars("ingest", str(folder), "--json", state=state_dir)
    assert j.returncode == 1
    listed = {Path(u["file"]).name: u["reason"] for u in json.loads(j.stdout)["unsupported"]}
    assert set(listed) == {"notes.txt", "photo.png", "inventory.db"} and "(.txt)" in listed["notes.txt"]


def test_unsupported_files_beside_readable_ones_are_listed_not_fatal(mem, tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    OpenClawStore(tmp_path).write_jsonl(folder / "s.jsonl", [header("s"), user("a", None, "hello there", 1)])
    (folder / "notes.txt").write_text("x")
    report = ingest(mem, [folder])
    assert report.episodes_added == 1 and not report.unreadable
    assert [Path(u.file).name for u in report.unsupported] == ["notes.txt"]


def test_reset_without_gap_in_legacy_jsonl_also_splits(mem, tmp_path):
    store = OpenClawStore(tmp_path / ".openclaw")
    store.write_jsonl(store.sessions / "r.jsonl", [
        header("r"), user("a", None, "topic one: invoices", 1), assistant("b", "a", "ok invoices", 1),
        entry("reset", "c", "b", 1, reason="reset"), user("d", "c", "topic two: gardening", 1)])
    ingest(mem, [store.sessions])
    eps = episodes(mem)
    assert "gardening" not in eps["openclaw:r:0"].text and "gardening" in eps["openclaw:r:1"].text


def test_a_no_change_reingest_answers_fast_with_the_full_clis_json(tmp_path, state_dir):
    """tui/fast_ingest.py answers a no-change store re-ingest; its JSON is the full CLI's."""
    store = full_home(tmp_path)
    hermes = conformance_store(tmp_path / ".hermes" / "state.db")
    paths = [str(store.home), str(hermes.path)]
    assert ars("ingest", *paths, "--json", state=state_dir).returncode == 0
    full = subprocess.run([sys.executable, "-c", "import sys; from tui.cli.main import main; main()", "ingest", *paths,
                           "--json", "--state", str(state_dir)], capture_output=True, text=True, cwd=HERE.parent)
    from tui.fast_ingest import unchanged

    fast = subprocess.run([sys.executable, "-c", "import sys; from tui.entry import main; main()", "ingest", *paths,
                           "--json", "--state", str(state_dir)], capture_output=True, text=True, cwd=HERE.parent)
    assert full.returncode == fast.returncode == 0, (full.stderr, fast.stderr)
    assert json.loads(fast.stdout) == json.loads(full.stdout) and json.loads(fast.stdout)["unchanged_files"] == 2
    # the fast path answered (not the full CLI): it does not load pydantic
    probe = subprocess.run([sys.executable, "-c", "import sys; from tui.fast_ingest import unchanged; "
                            f"code = unchanged([{paths[0]!r}, {paths[1]!r}, '--json', '--state', {str(state_dir)!r}]); "
                            "print(code, 'pydantic' in sys.modules)"], capture_output=True, text=True, cwd=HERE.parent)
    assert probe.stdout.strip().endswith("0 False"), probe
    # something changed: the fast path steps aside
    hermes.message("20260909_110000_def456", "user", "one more", T0 + 9000)
    assert unchanged([paths[1], "--json", "--state", str(state_dir)]) is None
    # other options and a person's table go to the full CLI
    assert unchanged([paths[0], "--state", str(state_dir)]) is None
    assert unchanged([paths[0], "--json", "--force", "--state", str(state_dir)]) is None


def test_watch_follows_the_database_as_openclaw_writes(mem, tmp_path):
    """``ars ingest --watch ~/.openclaw``: a write to the agent's database (its WAL) is read."""
    from core.ingest.watch import Watcher

    store = OpenClawStore(tmp_path / ".openclaw").create()
    store.add_events("w", [header("w"), user("w1", None, "first watched question about invoices", 1)])
    reports = []
    w = Watcher(mem, [store.home], idle_seconds=1.0, on_report=reports.append)
    t = threading.Thread(target=w.run, daemon=True)
    t.start()
    try:
        deadline = time.monotonic() + 20
        while not reports and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
        conn = __import__("openclaw_store").connect(store.db)
        conn.execute("PRAGMA journal_mode = WAL")
        store.add_events("w", [assistant("w2", "w1", "WATCHED-REPLY the invoices are paid", 2)], conn=conn)
        conn.commit()  # the writer stays open: the event sits in its WAL
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not (mem.sqlite.has("openclaw:w:0")
                                                   and "WATCHED-REPLY" in mem.sqlite.get("openclaw:w:0").text):
            time.sleep(0.2)
        conn.close()
    finally:
        w.stop_event.set()
        t.join(timeout=10)
    assert "WATCHED-REPLY" in mem.sqlite.get("openclaw:w:0").text
    assert not any(r.failed_files for r in reports)


def test_a_store_the_real_openclaw_wrote(mem, tmp_path):
    """The database `openclaw doctor --session-sqlite import` (openclaw 2026.9.6) wrote from legacy JSONL
    (tests/fixtures/agent_stores/real-openclaw-2026.9.6/README.md): read as the fixture builder's are."""
    import shutil

    import zstandard

    real = HERE / "fixtures" / "agent_stores" / "real-openclaw-2026.9.6"
    home = tmp_path / ".openclaw"
    shutil.copytree(real / "agents", home / "agents")
    packed = home / "agents" / "main" / "agent" / "openclaw-agent.sqlite.zst"
    db = packed.with_suffix("")
    db.write_bytes(zstandard.ZstdDecompressor().decompress(packed.read_bytes()))
    packed.unlink()
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode = WAL").fetchone() == ("wal",)  # as OpenClaw keeps it
    assert conn.execute("SELECT count(*) FROM transcript_events WHERE event_zstd IS NOT NULL").fetchone() == (2,)
    conn.close()
    report = ingest(mem, [home])
    assert report.failed_files == 0 and not report.malformed and not report.unsupported
    eps = episodes(mem)
    a, b = "openclaw:0f6c2a9e-7d41-4a0b-9c3e-2b8f6d1e0a77", "openclaw:1a2b3c4d-0000-4000-8000-00000000beef"
    assert set(eps) == {f"{a}:0", f"{a}:1", f"{b}:0"}
    assert "assistant (failed): 429 rate limited" in eps[f"{a}:0"].text and "sourdough" in eps[f"{a}:1"].text
    assert "ABANDONED-BRANCH" not in eps[f"{a}:1"].text and "HIDDEN-REMINDER" not in eps[f"{a}:0"].text
    assert "ZSTDMARK24" in eps[f"{b}:0"].text and eps[f"{b}:0"].text.count("Write the long release checklist") == 1


def test_a_database_named_directly_that_is_no_store_says_what_it_is(tmp_path, state_dir):
    db = tmp_path / "inventory.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE parts (sku TEXT)")
    conn.commit()
    conn.close()
    r = ars("ingest", str(db), state=state_dir)
    assert r.returncode == 2  # the CLI's contract when nothing named could be read at all
    out = " ".join((r.stdout + r.stderr).split())
    assert "neither an OpenClaw nor a Hermes store (tables: parts)" in out


def test_a_pi_branch_without_leaf_control_keeps_the_latest_path(mem, tmp_path):
    """Legacy pi JSONL persists no leaf entry: a second child of an entry is the branch taken."""
    store = OpenClawStore(tmp_path / ".openclaw")
    store.write_jsonl(store.sessions / "p.jsonl", [
        header("p"), user("a", None, "plan the garden beds", 1), assistant("b", "a", "OLD-PATH raised beds", 1),
        assistant("c", "a", "NEW-PATH in-ground beds", 2), user("d", "c", "and the soil mix?", 2)])
    ingest(mem, [store.sessions])
    text = mem.sqlite.get("openclaw:p:0").text
    assert "NEW-PATH" in text and "soil mix" in text and "OLD-PATH" not in text


def test_a_fifo_beside_a_store_never_hangs_discovery(mem, tmp_path):
    store = full_home(tmp_path)
    os.mkfifo(store.root / "pipe.db")
    report = ingest(mem, [store.home])  # store discovery and the unsupported-file reasons never open it blocking
    assert report.episodes_added == 5
    assert [Path(u.file).name for u in report.unsupported] == ["pipe.db"]


def test_openclaw_file_names_are_told_apart(mem, tmp_path):
    """Reset archives may be zstd (2026.8+), checkpoints are copies, trajectories are no transcript."""
    import zstandard

    store = OpenClawStore(tmp_path / ".openclaw").create()
    store.add_events("live", [header("live"), user("l1", None, "a live question about backups", 1)])
    old = [header("gone"), user("g1", None, "ZSTD-RESET-ARCHIVE question about printers", 1)]
    raw = "".join(json.dumps(e) + "\n" for e in old).encode()
    (store.sessions / "gone.jsonl.reset.2026-09-01T08-00-00.000Z.zst").write_bytes(zstandard.ZstdCompressor().compress(raw))
    store.write_jsonl(store.sessions / "live.checkpoint.0f6c2a9e-7d41-4a0b-9c3e-2b8f6d1e0a77.jsonl",
                      [header("live"), user("l1", None, "a live question about backups", 1)])
    (store.sessions / "live.trajectory.jsonl").write_text('{"type": "span", "ms": 12}\n')
    store.checkpoint()
    report = ingest(mem, [store.home])
    assert report.failed_files == 0 and not report.malformed
    eps = episodes(mem)
    assert set(eps) == {"openclaw:live:0", "openclaw:gone:0"}
    assert "ZSTD-RESET-ARCHIVE" in eps["openclaw:gone:0"].text
    assert eps["openclaw:live:0"].text.count("backups") == 1  # the checkpoint is a copy: read once
    assert [(Path(u.file).name, "trajectory" in u.reason) for u in report.unsupported] == [("live.trajectory.jsonl", True)]


def test_a_store_whose_agent_is_running_is_unchanged_when_nothing_was_written(mem, tmp_path):
    """A running agent keeps its -wal and -shm; reading the database touches the -shm, which holds no data:
    a second ingest with nothing new must still take the fast path (not read the store again)."""
    store = full_home(tmp_path)
    agent = __import__("openclaw_store").connect(store.db)  # the agent, running: its WAL stays
    agent.execute("PRAGMA journal_mode = WAL")
    agent.execute("SELECT count(*) FROM transcript_events").fetchone()
    assert Path(f"{store.db}-wal").exists() and Path(f"{store.db}-shm").exists()
    try:
        ingest(mem, [store.db])
        again = ingest(mem, [store.db])
        assert store_summary(again, "openclaw-agent.sqlite").status == "unchanged"
    finally:
        agent.close()


def test_watching_an_agents_sessions_folder_follows_its_database(mem, tmp_path):
    """``ars ingest ~/.openclaw/agents/main/sessions --watch`` (the README's example): the database is
    in ../agent/, outside the folder named, and is followed all the same."""
    from core.ingest.watch import Watcher

    store = OpenClawStore(tmp_path / ".openclaw").create()
    store.add_events("s", [header("s"), user("s1", None, "first question about the VPN", 1)])
    reports = []
    w = Watcher(mem, [store.sessions], idle_seconds=1.0, on_report=reports.append)
    t = threading.Thread(target=w.run, daemon=True)
    t.start()
    try:
        deadline = time.monotonic() + 20
        while not reports and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
        store.add_events("s", [assistant("s2", "s1", "SIBLING-DB-REPLY use wireguard", 2)])
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and "SIBLING-DB-REPLY" not in mem.sqlite.get("openclaw:s:0").text:
            time.sleep(0.2)
    finally:
        w.stop_event.set()
        t.join(timeout=10)
    assert "SIBLING-DB-REPLY" in mem.sqlite.get("openclaw:s:0").text


def test_a_state_db_the_real_hermes_wrote(mem, tmp_path):
    """tests/fixtures/agent_stores/real-hermes-0.19.0/README.md: a session Hermes 0.19.0 itself stored."""
    import zstandard

    packed = HERE / "fixtures" / "agent_stores" / "real-hermes-0.19.0" / "state.db.zst"
    db = tmp_path / ".hermes" / "state.db"
    db.parent.mkdir()
    db.write_bytes(zstandard.ZstdDecompressor().decompress(packed.read_bytes()))
    report = ingest(mem, [db])
    assert report.failed_files == 0 and not report.malformed
    [ep] = episodes(mem, "hermes").values()
    assert ep.text.splitlines()[:2] == ["user: Please echo a marker REALHERMES-PROMPT in the terminal.",
                                        "assistant → terminal: command=echo REALHERMES-ECHO-42"]
    assert "REALHERMES-ECHO-42" in ep.text.splitlines()[2] and ep.channel == "cli"
    assert sorted(os.listdir(db.parent)) == ["state.db"]

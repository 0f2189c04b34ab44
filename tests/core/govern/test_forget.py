"""``ars forget``: a memory gone from every file ARS wrote, kept gone by
rebuilds and re-ingests, carried to Neo4j and to a second team host.

Real SQLite files, real `ars` processes (no terminal: a new session), a real
SIGKILL at each step of a forget, the real Neo4j of the fixtures. The test
looks for the forgotten text's bytes in every file of the state directory."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import env_without_ars, make_memory, passphrase_pipe, write_episodes
from core.govern import forget as F
from core.events import FORGET_EVENT
from core.govern.tombstone import PENDING_FILE
from core.ingest.pipeline import ingest
from core.ledger.ledger import Ledger

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = Path(sys.executable).parent / "ars"
PASS = "correct horse battery staple"
SECRET = "zqxsecretword"  # one token: found in every file that holds the forgotten text


def rows() -> list[dict]:
    out = [
        {"id": "manual:s1:0", "source": "manual", "session_id": "s1", "summary": "database password",
         "text": f"the staging password is {SECRET} do not share", "first_ts": "2026-11-01T10:00:00+00:00"},
        {"id": "manual:s1:1", "source": "manual", "session_id": "s1", "summary": "giraffes",
         "text": "giraffes like acacia leaves", "first_ts": "2026-11-01T10:01:00+00:00"},
        {"id": "manual:s1:2", "source": "manual", "session_id": "s1", "summary": "elephants",
         "text": "elephants remember waterholes", "first_ts": "2026-11-01T10:02:00+00:00"},
        {"id": "manual:s2:0", "source": "manual", "session_id": "s2", "summary": "lions",
         "text": "lions sleep twenty hours a day", "first_ts": "2026-11-01T11:00:00+00:00"},
    ]
    return out


def _env(state: Path, **extra: str) -> dict:
    env = env_without_ars(("ARS_", "CLAUDE_"))
    env.update({"ARS_STATE_DIR": str(state), "ARS_EMBEDDER": "off", **extra})
    return env


def ars(state: Path, *args: str, passphrase: str | None = None, preexec=None,
        **extra: str) -> subprocess.CompletedProcess:
    cmd = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "tui.cli.main"]
    with passphrase_pipe(passphrase) as pp:
        return subprocess.run(cmd + list(args) + pp.args, capture_output=True, text=True, timeout=120, cwd=ROOT,
                              stdin=subprocess.DEVNULL, start_new_session=True, pass_fds=pp.fds,
                              env=_env(state, **extra), preexec_fn=preexec)


def holders(state: Path, needle: str = SECRET) -> list[str]:
    """Every file under the state directory whose bytes hold ``needle``."""
    found = []
    for p in sorted(state.rglob("*")):
        if p.is_file() and needle.encode() in p.read_bytes():
            found.append(str(p.relative_to(state)))
    return found


@pytest.fixture
def ingested(tmp_path: Path) -> tuple[Path, Path]:
    state = tmp_path / "state"
    src = write_episodes(tmp_path / "eps.jsonl", rows())
    p = ars(state, "ingest", str(src), "--format", "episodes")
    assert p.returncode == 0, p.stderr
    assert holders(state), "the secret is stored before the forget"
    return state, src


def recall_ids(state: Path, query: str, tiers: str | None = None) -> list[str]:
    args = ["recall", query, "--json"] + (["--tiers", tiers] if tiers else [])
    p = ars(state, *args)
    assert p.returncode == 0, p.stderr
    return [h["episode_id"] for h in json.loads(p.stdout)["hits"]]


def test_forget_by_id_leaves_no_byte_of_it_in_the_state(ingested):
    state, src = ingested
    assert "manual:s1:0" in recall_ids(state, SECRET)
    p = ars(state, "forget", "manual:s1:0", "--why", "a password")
    assert p.returncode == 0, p.stderr
    assert "forgot 1 episodes" in p.stdout and "removed from ledger: 1 lines" in p.stdout
    assert holders(state) == [], "no file ARS wrote holds the forgotten text"
    # every tier, the raw file scan included (the raw file itself is the user's and still holds it)
    assert SECRET.encode() in src.read_bytes()
    for tiers in (None, "sqlite", "files"):
        assert "manual:s1:0" not in recall_ids(state, f"{SECRET} staging password", tiers)
    # the others are all there
    assert "manual:s1:1" in recall_ids(state, "giraffes acacia")
    # a rebuild keeps it forgotten, and so does ingesting its file again
    assert ars(state, "rebuild").returncode == 0
    assert ars(state, "ingest", str(src), "--format", "episodes").returncode == 0
    assert "manual:s1:0" not in recall_ids(state, f"{SECRET} staging password")
    assert holders(state) == []
    # the tombstone is in the ledger, without the text
    tombs = list(Ledger(state).read(types=(FORGET_EVENT,)))
    assert len(tombs) == 1 and tombs[0].data["ids"] == ["manual:s1:0"]


def test_neighbours_lose_the_forgotten_terms_from_their_context(ingested):
    state, _ = ingested
    # the neighbour is found by the forgotten episode's words through its session context
    assert "manual:s1:1" in recall_ids(state, SECRET, "sqlite")
    assert ars(state, "forget", "manual:s1:0").returncode == 0
    assert recall_ids(state, SECRET, "sqlite") == []


def test_forget_a_session_and_a_source(ingested, tmp_path):
    state, src = ingested
    p = ars(state, "forget", "--session", "s1", "--yes")
    assert p.returncode == 0, p.stderr
    assert holders(state) == [] and holders(state, "acacia") == []
    assert recall_ids(state, "lions") == ["manual:s2:0"]
    p = ars(state, "forget", "--source", str(src), "--yes")
    assert p.returncode == 0, p.stderr
    assert holders(state, "twenty hours") == []
    assert recall_ids(state, "lions twenty", "files") == []


def test_query_needs_a_confirmation_without_yes(ingested):
    state, _ = ingested
    p = ars(state, "forget", "--query", "giraffes")
    assert p.returncode == 2 and "confirmation" in p.stderr
    assert "manual:s1:1" in recall_ids(state, "giraffes acacia")
    p = ars(state, "forget", "--query", "giraffes", "--dry-run")
    assert p.returncode == 0 and "manual:s1:1" in p.stdout and "would be forgotten" in p.stdout
    p = ars(state, "forget", "--query", "giraffes acacia", "--yes")
    assert p.returncode == 0, p.stderr
    assert "manual:s1:1" not in recall_ids(state, "giraffes acacia")


@pytest.mark.parametrize("args, code, words", [
    (["forget", "manual:nope:0"], 1, "unknown episode id"),
    (["forget", "--query", "  "], 2, "empty --query"),
    (["forget"], 2, "nothing to forget"),
    (["forget", "--session", "nosuch", "--yes"], 1, "no episode of session"),
])
def test_bad_input_one_line_nothing_lost(ingested, args, code, words):
    state, _ = ingested
    before = (state / "ledger.jsonl").read_bytes()
    p = ars(state, *args)
    assert p.returncode == code, p.stderr
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and words in lines[0], p.stderr
    assert (state / "ledger.jsonl").read_bytes() == before
    assert "manual:s1:0" in recall_ids(state, SECRET)


KILL_POINTS = {
    # after forget.pending is written, before the tombstone reaches the ledger
    "before-tombstone": "core.ledger.ledger.Ledger.append",
    "before-ledger-scrub": "core.ledger.ledger.Ledger.patch",
    "before-sqlite": "core.memory.tiers.sqlite.SqliteStore.forget",
    "before-vectors": "core.govern.scrub.forget_vectors",
    "before-checkpoints": "core.govern.forget._scrub_checkpoints",
    "before-done": "core.govern.tombstone.clear_pending",
}
KILLER = """
import importlib, os, signal, sys
sys.path.insert(0, {root!r})
mod, _, attr = {target!r}.rpartition(".")
try:
    owner = importlib.import_module(mod)
except ModuleNotFoundError:
    m, _, cls = mod.rpartition(".")
    owner = getattr(importlib.import_module(m), cls)
def die(*a, **k):
    os.kill(os.getpid(), signal.SIGKILL)
setattr(owner, attr, die)
from core.api import ARS
from core.config import Settings
ars = ARS(Settings(state_dir={state!r}, embedder="off"))
ars.forget(ars.forget_select(["manual:s1:0"]), why="killed mid-way")
"""


@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_sigkill_at_any_step_then_the_next_command_finishes_it(ingested, point):
    state, _ = ingested
    ck = state / "checkpoints"
    ck.mkdir(mode=0o700)
    (ck / "goal__loop1.json").write_text(json.dumps({"observation": {"hits": [
        {"episode_id": "manual:s1:0", "snippet": f"password is {SECRET}"}]}}))
    code = KILLER.format(root=str(ROOT), target=KILL_POINTS[point], state=str(state))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env=_env(state), cwd=ROOT)
    assert p.returncode == -signal.SIGKILL, p.stderr
    assert (state / PENDING_FILE).exists()
    # the next command of any kind finishes it: here a recall
    assert "manual:s1:0" not in recall_ids(state, f"{SECRET} staging")
    assert not (state / PENDING_FILE).exists()
    assert holders(state) == [], point
    tombs = list(Ledger(state).read(types=(FORGET_EVENT,)))
    assert len(tombs) == 1  # appended once, even when the crash came after it
    assert ars(state, "rebuild").returncode == 0
    assert "manual:s1:0" not in recall_ids(state, f"{SECRET} staging")
    assert "manual:s1:1" in recall_ids(state, "giraffes acacia")


def test_a_write_that_fails_mid_forget_is_one_line_and_finished_later(ingested):
    """A full disk (a file-size limit stands in: root ignores read-only modes):
    one line, exit 1; the next command finishes the forget."""
    state, _ = ingested
    size = max(p.stat().st_size for p in state.rglob("*") if p.is_file())

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    # a sqlite page or the WAL grows past the limit mid-forget
    big = "x" * (size + 10)
    p = ars(state, "forget", "manual:s1:0", "--why", big, preexec=limit)
    assert p.returncode in (1, 2), p.stderr
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), p.stderr
    assert "manual:s1:1" in recall_ids(state, "giraffes acacia")  # nothing else lost
    # all or nothing once the next command ran: never half-forgotten
    gone = "manual:s1:0" not in recall_ids(state, f"{SECRET} staging")
    assert not (state / PENDING_FILE).exists()
    assert (holders(state) == []) if gone else ("nothing was forgotten" in p.stderr and holders(state))
    # and it can be done once there is room
    p = ars(state, "forget", "manual:s1:0")
    assert p.returncode == 0 and holders(state) == []


def test_supervisor_key_needs_the_passphrase_and_signs_the_tombstone(ingested):
    state, _ = ingested
    p = ars(state, "supervisor", "init", passphrase=PASS)
    assert p.returncode == 0, p.stderr
    # the agent: no terminal, no passphrase
    p = ars(state, "forget", "manual:s1:0")
    assert p.returncode != 0 and "passphrase" in p.stderr.lower()
    assert "manual:s1:0" in recall_ids(state, SECRET)
    p = ars(state, "forget", "manual:s1:0", passphrase="wrong passphrase!!")
    assert p.returncode == 1
    assert "manual:s1:0" in recall_ids(state, SECRET)
    p = ars(state, "forget", "manual:s1:0", "--why", "leaked", passphrase=PASS)
    assert p.returncode == 0, p.stderr
    from core.inbox.signing import public_fingerprint

    tomb = next(Ledger(state).read(types=(FORGET_EVENT,)))
    ok, why = F.verify(tomb.data, public_fingerprint(state))
    assert ok, why
    forged = dict(tomb.data, ids=["manual:s1:1"])
    assert F.verify(forged, public_fingerprint(state))[0] is False


def test_mcp_request_forget_is_an_inbox_request_that_forgets_nothing(ingested):
    state, _ = ingested
    from core.api import ARS
    from core.config import Settings
    from tui.agents.mcp_server import request_forget_record

    ars = ARS(Settings(state_dir=state, embedder="off"))
    try:
        req = request_forget_record(ars, "manual:s1:0", "it holds a password")
        assert req.status == "pending" and "ars forget manual:s1:0" in req.detail
    finally:
        ars.close()
    assert "manual:s1:0" in recall_ids(state, SECRET)


# -- Neo4j and a second team host ------------------------------------------------------------
@pytest.mark.neo4j
def test_neo4j_drops_it_at_the_next_sync_and_a_peer_at_its_next_pull(tmp_path, neo4j_uri):
    a_state, b_state = tmp_path / "a", tmp_path / "b"
    src = write_episodes(tmp_path / "eps.jsonl", rows())
    a = make_memory(a_state, neo4j_uri=neo4j_uri, host_id="host-a", embedder="off")
    b = make_memory(b_state, neo4j_uri=neo4j_uri, host_id="host-b", embedder="off")
    try:
        ingest(a, [src], fmt="episodes")
        assert a.sync_neo4j(max_seconds=60).ok
        assert a.neo4j.has("manual:s1:0")
        b_state.mkdir(exist_ok=True)
        rep = b.sync_neo4j(max_seconds=60)
        assert rep.ok, rep.error
        assert b.sqlite.has("manual:s1:0")  # the peer pulled its copy
        assert "manual:s1:0" in [h.episode_id for h in b.recall(SECRET, tiers="sqlite").hits]

        report = F.forget(a, F.select(a, ids=["manual:s1:0"]), why="leak")
        assert any("next `ars sync run`" in line for line in report.pending_on_peers)
        assert a.neo4j.has("manual:s1:0")  # not yet: at the next sync
        assert a.sync_neo4j(max_seconds=60).ok
        assert not a.neo4j.has("manual:s1:0")
        assert a.neo4j.has("manual:s1:1")
        hits = a.neo4j._run("MATCH (e:Episode {namespace: $ns}) WHERE e.text CONTAINS $s OR e.terms CONTAINS $s"
                            " OR e.context CONTAINS $s RETURN count(e) AS c", s=SECRET)
        assert hits[0]["c"] == 0, "no node of the graph holds the forgotten text or terms"

        assert b.sqlite.has("manual:s1:0")  # the peer still has it until its next pull
        rep = b.sync_neo4j(max_seconds=60)
        assert rep.ok, rep.error
        assert not b.sqlite.has("manual:s1:0")
        assert b.recall(SECRET, tiers="sqlite").hits == [] or all(
            h.episode_id != "manual:s1:0" for h in b.recall(SECRET, tiers="sqlite").hits)
        assert holders(b_state) == []
        # a reset pull does not bring it back
        from core.consumers.team_pull import pull, reset

        reset(b)
        pull(b)
        assert not b.sqlite.has("manual:s1:0") and b.sqlite.has("manual:s1:1")
    finally:
        a.close()
        b.close()


# -- ars redact --scan: secrets an older store kept, rewritten everywhere -----------------------
OLD_KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdEFGH"
OLD_PW = "Sup3rS3cretPw"


def older_store(tmp_path: Path) -> Path:
    """A state written before redaction existed: its events go to the ledger as they were."""
    from core.ledger.ledger import Event, content_id

    state = tmp_path / "old"
    state.mkdir(mode=0o700)
    rows = [
        {"id": "manual:k:0", "source": "manual", "session_id": "k", "summary": "keys",
         "text": f"set OPENAI_API_KEY={OLD_KEY} and postgres://app:{OLD_PW}@db:5432/x",
         "first_ts": "2026-11-01T10:00:00+00:00"},
        {"id": "manual:k:1", "source": "manual", "session_id": "k", "summary": "plain",
         "text": "postgres vacuum notes, nothing secret here", "first_ts": "2026-11-01T10:01:00+00:00"},
    ]
    Ledger(state, "default").append([Event(content_id("ep", r), "episode.upsert", r) for r in rows])
    assert ars(state, "rebuild").returncode == 0
    assert holders(state, OLD_PW) and holders(state, OLD_KEY)
    return state


def snippets(state: Path, query: str) -> dict[str, str]:
    p = ars(state, "recall", query, "--json")
    assert p.returncode == 0, p.stderr
    return {h["episode_id"]: h["snippet"] for h in json.loads(p.stdout)["hits"]}


def test_redact_scan_rewrites_stored_secrets_everywhere(tmp_path):
    state = older_store(tmp_path)
    p = ars(state, "redact", "--scan", "--dry-run")
    assert p.returncode == 0 and "would rewrite 1" in p.stdout and holders(state, OLD_PW)
    p = ars(state, "redact", "--scan")
    assert p.returncode == 0, p.stderr
    assert "rewrote 1" in p.stdout and "[secret:password]" in p.stdout
    assert holders(state, OLD_PW) == [] and holders(state, OLD_KEY) == []
    got = snippets(state, "postgres")
    assert "[secret:password]" in got["manual:k:0"] and "db:5432" in got["manual:k:0"]  # the rest stays recallable
    assert "manual:k:1" in got
    assert ars(state, "rebuild").returncode == 0
    assert "[secret:openai-key]" in snippets(state, "postgres OPENAI_API_KEY")["manual:k:0"]
    assert holders(state, OLD_PW) == []
    assert "rewrote 0" in ars(state, "redact", "--scan").stdout  # nothing left to find


def test_redact_scan_killed_mid_way_is_finished_by_the_next_command(tmp_path):
    state = older_store(tmp_path)
    code = KILLER.format(root=str(ROOT), target="core.ledger.ledger.Ledger.patch", state=str(state)).replace(
        'ars.forget(ars.forget_select(["manual:s1:0"]), why="killed mid-way")', "ars.redact_scan()")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env=_env(state), cwd=ROOT)
    assert p.returncode == -signal.SIGKILL, p.stderr
    assert (state / "redact.pending").exists()
    assert "[secret:password]" in snippets(state, "postgres")["manual:k:0"]
    assert not (state / "redact.pending").exists()
    assert holders(state, OLD_PW) == []


async def test_mcp_request_forget_tool_asks_and_forgets_nothing(ingested):
    """Through a real MCP client: the agent's only way to have a memory forgotten."""
    from mcp import Client
    from mcp_types import Implementation

    from core.api import ARS
    from core.config import Settings
    from tui.agents.mcp_server import build_server

    state, _ = ingested
    with ARS(Settings(state_dir=state, embedder="off")) as a:
        async with Client(build_server(a), client_info=Implementation(name="agent", version="1")) as c:
            r = await c.call_tool("request_forget", {"episode_id": "manual:s1:0", "why": "holds a password"})
            both = await c.call_tool("request_forget", {"why": "x"})
        assert not r.is_error, r
        rid = r.structured_content["request_id"]
        assert "ars forget manual:s1:0" in r.structured_content["note"]
        assert both.is_error and "exactly one" in both.content[0].text
        req = a.inbox_get(rid)
        assert req.status == "pending" and req.kind == "approval"
    assert "manual:s1:0" in recall_ids(state, SECRET)


def test_rebuild_regenerates_the_forgotten_list_from_the_tombstones(ingested):
    state, src = ingested
    assert ars(state, "forget", "manual:s1:0").returncode == 0
    (state / "forgotten.json").unlink()
    assert ars(state, "rebuild").returncode == 0
    assert "manual:s1:0" in json.loads((state / "forgotten.json").read_text())["ids"]
    assert ars(state, "ingest", str(src), "--format", "episodes").returncode == 0
    assert "manual:s1:0" not in recall_ids(state, f"{SECRET} staging password")
    assert holders(state) == []


def test_redact_scan_is_the_supervisors_decision_too(tmp_path):
    state = older_store(tmp_path)
    assert ars(state, "supervisor", "init", passphrase=PASS).returncode == 0
    p = ars(state, "redact", "--scan")
    assert p.returncode != 0 and "passphrase" in p.stderr.lower()
    assert holders(state, OLD_PW)
    p = ars(state, "redact", "--scan", passphrase=PASS)
    assert p.returncode == 0, p.stderr
    assert holders(state, OLD_PW) == []


def test_the_sqlite_that_forgets_without_a_merge_is_installed_and_used(ingested):
    """make install builds pysqlite3 on SQLite >= 3.54 (scripts/sqlite/build); forget then
    removes the postings with FTS5 secure-delete instead of merging the whole index, and
    turns the option off again so ordinary writes do not pay for it."""
    from core.infra import sqlite_lib

    if os.environ.get("CI") == "true" or sqlite_lib.FTS_SECURE_DELETE:
        assert sqlite_lib.FTS_SECURE_DELETE, f"SQLite {sqlite_lib.VERSION}: run scripts/sqlite/build"
    else:
        pytest.skip(f"SQLite {sqlite_lib.VERSION} here: forget merges the index (covered by the other tests)")
    state, _src = ingested
    assert ars(state, "forget", "manual:s1:0", "--why", "x").returncode == 0
    conn = sqlite_lib.sqlite3.connect(state / "memory.sqlite")
    config = dict(conn.execute("SELECT k, v FROM episodes_fts_config").fetchall())
    conn.close()
    assert config.get("secure-delete") == 0 and config.get("version") == 5, config
    assert holders(state) == []


def test_a_sqlite_too_old_for_the_forgotten_index_says_what_to_run(ingested):
    """A state forgotten in with secure-delete, opened by an ARS on the system SQLite 3.40
    (the build failed there): recall keeps working from the other tiers, and the
    SQLite tier says why it is down and what to run, not a bare FTS5 error."""
    from core.infra import sqlite_lib

    if not sqlite_lib.FTS_SECURE_DELETE:
        pytest.skip("needs the SQLite of scripts/sqlite/build to write the index first")
    state, _src = ingested
    assert ars(state, "forget", "manual:s1:0", "--why", "x").returncode == 0
    code = ("import sys, json; sys.modules['pysqlite3'] = None\n"
            "from core.api import ARS\nfrom core.config import Settings\n"
            f"ars = ARS(Settings(state_dir={str(state)!r}, embedder='off'))\n"
            "r = ars.recall('giraffes acacia', k=3)\n"
            "print(json.dumps({t.tier: [t.status, t.error] for t in r.tiers}))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                       env=_env(state))
    assert p.returncode == 0, p.stderr
    tiers = json.loads(p.stdout.strip().splitlines()[-1])
    import sqlite3 as system_sqlite

    if system_sqlite.sqlite_version_info >= (3, 42, 0):  # this system's SQLite reads it
        assert tiers["sqlite"][0] == "ok", tiers
        return
    assert tiers["sqlite"][0] == "down", tiers
    assert "scripts/sqlite/build" in tiers["sqlite"][1] and system_sqlite.sqlite_version in tiers["sqlite"][1], tiers


def test_a_peer_obeys_only_tombstones_its_writers_supervisor_signed(tmp_path, neo4j_uri):
    """An agent holding the team's Neo4j credentials writes a Forgotten node for another
    of host A's episodes, to erase it from every peer: host B pinned A's supervisor key
    at first sight and keeps the copy; A's signed forget is obeyed."""
    from core.inbox import signing
    from core.team.pins import PINS_FILE

    a_state, b_state = tmp_path / "a", tmp_path / "b"
    a_state.mkdir(mode=0o700)
    b_state.mkdir(mode=0o700)
    fp = signing.init(a_state, PASS.encode())
    src = write_episodes(tmp_path / "eps.jsonl", rows())
    a = make_memory(a_state, neo4j_uri=neo4j_uri, host_id="host-a", embedder="off")
    b = make_memory(b_state, neo4j_uri=neo4j_uri, host_id="host-b", embedder="off")
    try:
        ingest(a, [src], fmt="episodes")
        assert a.sync_neo4j(max_seconds=60).ok and b.sync_neo4j(max_seconds=60).ok
        assert b.sqlite.has("manual:s1:0") and b.sqlite.has("manual:s1:1")
        F.forget(a, F.select(a, ids=["manual:s1:0"]), why="leak", signer=signing.unlock(a_state, PASS.encode()))
        assert a.sync_neo4j(max_seconds=60).ok
        # the forgery: a Forgotten node for manual:s1:1, once unsigned and once signed by the agent's own key
        other = tmp_path / "agent-key"
        other.mkdir(mode=0o700)
        signing.init(other, b"the agent's own passphrase")
        forged = signing.unlock(other, b"the agent's own passphrase").sign_text(signing.canonical(
            {"v": 1, "kind": "forget", "ids": ["manual:s1:1"], "sessions": [], "sources": [], "why": "",
             "decided_at": "2026-11-01T00:00:00+00:00"}))
        for eid, decision in (("manual:s1:1", forged), ("manual:s2:0", {})):
            a.neo4j._run("MERGE (f:Forgotten {namespace: $ns, host: 'host-a', id: $id}) "
                         "SET f.team_id = $id, f.decision = $d", write=True, id=eid, d=json.dumps(decision))
        from core.consumers.team_pull import pull

        rep = pull(b)
        assert rep.ok, rep.error
        assert not b.sqlite.has("manual:s1:0"), "the signed forget is obeyed"
        assert b.sqlite.has("manual:s1:1") and b.sqlite.has("manual:s2:0"), "the forged ones are not"
        assert len(rep.refused) == 1 and "host-a" in rep.refused[0] and "2 tombstones" in rep.refused[0], rep.refused
        pins = json.loads((b_state / PINS_FILE).read_text())
        assert pins["host-a"]["supervisor"] == fp and pins["host-a"]["key"]  # declared with A's claim, pinned then
        # the graph now declares other keys for host A: the pinned ones still count, and the pull says so
        a.neo4j._run("MATCH (h:Host {namespace: $ns, name: 'host-a'}) SET h.supervisor = $fp, h.key = $key",
                     write=True, fp=signing.public_fingerprint(other),
                     key=(other / "supervisor" / "key.pub").read_text().strip())
        rep = pull(b)
        assert b.sqlite.has("manual:s1:1") and any("now declares key" in line for line in rep.refused), rep.refused
        assert json.loads((b_state / PINS_FILE).read_text()) == pins
    finally:
        a.close()
        b.close()

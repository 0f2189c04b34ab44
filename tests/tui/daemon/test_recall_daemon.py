"""The recall daemon (tui/daemon/): fresh ``ars recall --json`` processes hand
their query to a warm process of the same state, settings and code, and get
exactly the answer they would have computed themselves.

Real processes, sockets and files; a real Neo4j for the warm-driver case.
Every daemon a test starts is stopped (and, failing that, killed) at teardown.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import SAMPLE

ROOT = Path(__file__).resolve().parents[3]
READY_WITHIN = 60.0  # seconds to wait for a daemon's warm-up (a loaded 2-core CI)


def _env(extra: dict | None = None) -> dict:
    e = {k: v for k, v in os.environ.items() if not k.startswith("ARS_")}
    e.update({"ARS_RECALL_DAEMON": "auto", "ARS_RECALL_DAEMON_IDLE": "120"})
    e.update(extra or {})
    return e


def run(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    # timeout: a first call whose daemon kept our pipes open would never end
    return subprocess.run([sys.executable, "-m", "tui.entry", *args], capture_output=True, text=True, cwd=ROOT,
                          env=_env(env), timeout=timeout)


def status(state: Path, env: dict | None = None) -> list[dict]:
    r = run("daemon", "status", "--json", "--state", str(state), env=env)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["daemons"]


def wait_ready(state: Path, env: dict | None = None, n: int = 1) -> list[dict]:
    """The daemons of ``state`` once ``n`` of them are warm."""
    until = time.monotonic() + READY_WITHIN
    while True:
        found = [d for d in status(state, env) if d.get("ready")]
        if len(found) >= n:
            return found
        assert time.monotonic() < until, f"no ready recall daemon for {state} after {READY_WITHIN:.0f} s"
        time.sleep(0.2)


def comparable(stdout: str) -> dict:
    d = json.loads(stdout)
    d.pop("latency_ms")
    for t in d["tiers"]:
        t.pop("latency_ms")
        t.pop("error", None)  # a breaker's "since ..." differs by the second
    return d


def served(state: Path, env: dict | None = None) -> int:
    return sum(d["served"] for d in status(state, env) if d["current"])


@pytest.fixture
def seeded(tmp_path: Path):
    state = tmp_path / "state"
    r = run("ingest", str(SAMPLE), "--state", str(state))
    assert r.returncode == 0, r.stderr
    yield state
    pids = [d["pid"] for d in status(state)] if state.is_dir() else []
    run("daemon", "stop", "--state", str(state))
    for pid in pids:  # a daemon of another configuration, or one that did not stop
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_first_call_answers_alone_then_the_daemon_answers_the_same(seeded: Path):
    args = ["recall", "Neo4j outage", "--json", "--state", str(seeded)]
    first = run(*args)
    assert first.returncode == 0, first.stderr
    assert wait_ready(seeded)[0]["served"] == 0  # the first answer was this process's own
    second = run(*args)
    assert second.returncode == 0, second.stderr
    assert served(seeded) == 1
    assert comparable(second.stdout) == comparable(first.stdout)
    assert json.loads(second.stdout)["hits"][0]["episode_id"] == "openclaw:s-0412:0"
    other = run("recall", "--json", "-k", "3", "--tiers", "sqlite,files", "--state", str(seeded), "--", "第一性原理 outage")
    off = run("recall", "--json", "-k", "3", "--tiers", "sqlite,files", "--state", str(seeded), "--", "第一性原理 outage",
              env={"ARS_RECALL_DAEMON": "off"})
    assert served(seeded) == 2
    assert comparable(other.stdout) == comparable(off.stdout)
    # a scope (parsed by the full CLI) is handed to the daemon, never dropped
    nobody = run(*args, "--scope", "host=nobody")
    assert nobody.returncode == 0 and served(seeded) == 3 and json.loads(nobody.stdout)["hits"] == []
    # its memory, as the kernel counts it, in its status and in ars doctor
    (d,) = status(seeded)
    assert 20 < d["rss_mb"] <= d["rss_peak_mb"] < 4096
    doc = run("doctor", "--state", str(seeded))
    assert doc.returncode == 0, doc.stderr
    assert f"recall daemon pid {d['pid']}: RSS " in doc.stdout and "answers served" in doc.stdout
    assert json.loads(run("doctor", "--json", "--state", str(seeded)).stdout)["daemons"][0]["pid"] == d["pid"]


@pytest.mark.parametrize("args", [["recall", "", "--json"], ["recall", "x", "--json", "-k", "0"],
                                  ["recall", "x", "--json", "--tiers", "bogus"]])
def test_the_daemon_reports_bad_input_as_a_fresh_process_does(seeded: Path, args: list[str]):
    assert run("recall", "warm", "--json", "--state", str(seeded)).returncode == 0
    wait_ready(seeded)
    via = run(*args, "--state", str(seeded))
    alone = run(*args, "--state", str(seeded), env={"ARS_RECALL_DAEMON": "off"})
    assert served(seeded) == 1
    assert via.returncode == alone.returncode == 2
    assert via.stderr == alone.stderr and via.stderr.count("\n") == 1 and via.stderr.startswith("error: ")


def test_the_daemon_sees_what_other_processes_wrote(seeded: Path, tmp_path: Path):
    assert run("recall", "zebracorn", "--json", "--state", str(seeded)).returncode == 0
    wait_ready(seeded)
    note = tmp_path / "z.jsonl"
    note.write_text(json.dumps({"role": "user", "content": "the zebracorn migration finished",
                                "timestamp": "2026-11-30T10:00:00Z", "session_id": "z1"}) + "\n")
    assert run("ingest", str(note), "--state", str(seeded)).returncode == 0
    found = run("recall", "zebracorn", "--json", "--state", str(seeded))
    assert [h["episode_id"] for h in json.loads(found.stdout)["hits"]] == ["jsonl:z1:0"]
    # ars rebuild swaps in a new memory.sqlite: the daemon reads the new file
    assert run("rebuild", "--state", str(seeded)).returncode == 0
    again = run("recall", "zebracorn", "--json", "--state", str(seeded))
    assert [h["episode_id"] for h in json.loads(again.stdout)["hits"]] == ["jsonl:z1:0"]
    (d,) = status(seeded)
    assert d["served"] == 2 and d["reopened"] == 1


def test_other_settings_get_a_daemon_of_their_own(seeded: Path):
    q = ["recall", "outage", "--json", "--state", str(seeded)]
    roomy = {"ARS_SQLITE_DEADLINE": "2"}
    assert run(*q).returncode == 0
    assert run(*q, env=roomy).returncode == 0
    daemons = wait_ready(seeded, n=2)
    assert len({d["fingerprint"] for d in daemons}) == 2
    assert run(*q, env=roomy).returncode == 0
    assert served(seeded, roomy) == 1 and served(seeded) == 0


def test_a_killed_daemon_is_replaced_and_its_socket_swept(seeded: Path):
    q = ["recall", "outage", "--json", "--state", str(seeded)]
    expected = comparable(run(*q).stdout)
    (d,) = wait_ready(seeded)
    os.kill(d["pid"], signal.SIGKILL)
    after = run(*q)  # a stale socket: this process answers by itself and starts another
    assert after.returncode == 0 and comparable(after.stdout) == expected
    (new,) = wait_ready(seeded)
    assert new["pid"] != d["pid"] and new["socket"] == d["socket"]
    assert run(*q).returncode == 0 and served(seeded) == 1


def test_socket_is_private_and_off_starts_none(seeded: Path, tmp_path: Path):
    assert run("recall", "outage", "--json", "--state", str(seeded)).returncode == 0
    (d,) = wait_ready(seeded)
    sock = Path(d["socket"])
    assert stat.S_ISSOCK(sock.stat().st_mode) and stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert stat.S_IMODE(sock.parent.stat().st_mode) == 0o700
    other = tmp_path / "other"
    assert run("ingest", str(SAMPLE), "--state", str(other)).returncode == 0
    assert run("recall", "outage", "--json", "--state", str(other), env={"ARS_RECALL_DAEMON": "off"}).returncode == 0
    time.sleep(1.0)  # a daemon, had one been started, would have bound its socket by now
    assert not (other / "daemon").exists() and status(other) == []


def test_daemon_exits_when_idle_or_when_its_state_is_gone(seeded: Path, tmp_path: Path):
    quick = {"ARS_RECALL_DAEMON_IDLE": "1"}
    assert run("recall", "outage", "--json", "--state", str(seeded), env=quick).returncode == 0
    (d,) = wait_ready(seeded, quick)
    until = time.monotonic() + READY_WITHIN
    while status(seeded, quick):
        assert time.monotonic() < until, "an idle daemon did not exit"
        time.sleep(0.2)
    assert not Path(d["socket"]).exists()
    # a state directory removed under a daemon: it notices and exits
    gone = tmp_path / "gone"
    assert run("ingest", str(SAMPLE), "--state", str(gone)).returncode == 0
    assert run("recall", "outage", "--json", "--state", str(gone)).returncode == 0
    (g,) = wait_ready(gone)
    subprocess.run(["rm", "-rf", str(gone)], check=True)
    until = time.monotonic() + READY_WITHIN
    while _alive(g["pid"]):
        assert time.monotonic() < until, "a daemon outlived its state directory"
        time.sleep(0.2)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is gone too (its parent, the first `ars recall`, exited at once)
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_daemon_keeps_neo4j_warm(seeded: Path, neo4j_uri: str):
    neo = {"ARS_NEO4J_URI": neo4j_uri, "ARS_NEO4J_DEADLINE": "3"}  # roomy: a busy CI is not the subject
    assert run("sync", "run", "--state", str(seeded), env=neo).returncode == 0
    # asked by name: without tiers it stands by while SQLite answers, and must be warm when it does not
    q = ["recall", "Neo4j outage", "--tiers", "neo4j,sqlite", "--json", "--state", str(seeded)]
    assert run(*q, env=neo).returncode == 0
    wait_ready(seeded, neo)
    for _ in range(3):
        r = run(*q, env=neo)
        tiers = {t["tier"]: t["status"] for t in json.loads(r.stdout)["tiers"]}
        assert tiers["neo4j"] == "ok" and tiers["sqlite"] == "ok", r.stdout
    r = run("recall", "Neo4j outage", "--json", "--state", str(seeded), env=neo)
    tiers = {t["tier"]: t["status"] for t in json.loads(r.stdout)["tiers"]}
    assert tiers["neo4j"] == "skipped" and tiers["sqlite"] == "ok", r.stdout
    assert served(seeded, neo) == 4


def test_a_state_path_too_long_for_a_socket_listens_in_a_private_user_dir(tmp_path: Path):
    state = tmp_path / ("deep-" * 20) / "state"
    assert run("ingest", str(SAMPLE), "--state", str(state)).returncode == 0
    try:
        q = ["recall", "outage", "--json", "--state", str(state)]
        assert run(*q).returncode == 0
        (d,) = wait_ready(state)
        sock = Path(d["socket"])
        assert not sock.is_relative_to(state) and len(str(sock)) < 108
        for directory in (sock.parent, sock.parent.parent):  # ars-<uid>/<state's tag>/
            st = directory.stat()
            assert st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) == 0o700
        assert run(*q).returncode == 0 and served(state) == 1
    finally:
        run("daemon", "stop", "--state", str(state))


def test_a_socket_directory_others_can_enter_is_never_used(seeded: Path):
    q = ["recall", "outage", "--json", "--state", str(seeded)]
    expected = comparable(run(*q).stdout)
    (d,) = wait_ready(seeded)
    sock_dir = Path(d["socket"]).parent
    sock_dir.chmod(0o755)  # as if another user could reach (or plant) the socket
    r = run(*q)
    assert r.returncode == 0 and comparable(r.stdout) == expected
    sock_dir.chmod(0o700)
    assert served(seeded) == 0  # the process answered by itself


def test_the_table_for_a_person_comes_from_the_daemon_too(seeded: Path):
    q = ["recall", "Neo4j outage", "--state", str(seeded)]
    alone = run(*q, env={"ARS_RECALL_DAEMON": "off", "COLUMNS": "160"})
    assert run(*q, env={"COLUMNS": "160"}).returncode == 0  # leaves a daemon
    wait_ready(seeded, {"COLUMNS": "160"})
    via = run(*q, env={"COLUMNS": "160"})
    assert via.returncode == 0 and served(seeded) == 1
    strip = lambda out: [ln for ln in out.splitlines() if " ms" not in ln and "ms ·" not in ln]  # noqa: E731
    assert "openclaw:s-0412:0" in via.stdout and strip(via.stdout) == strip(alone.stdout)

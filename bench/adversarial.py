"""Adversarial probes: ARS under hostile but real conditions ("Trust under real conditions").

    .venv/bin/python bench/adversarial.py [--json] [--only ID[,ID...]] [--big] [--keep] [--timeout 30]

Every probe runs real ``ars`` processes (a fresh process for each call,
``--state`` a fresh temporary directory, ``ARS_*`` variables removed from the
environment) and reports what it expected, what it observed (exit code, the
first stderr line, counts) and whether that passes. A probe is a small
function returning ``(expected, observed, passed)``; ``passed`` is ``None``
when the probe cannot be made faithful here (printed "n/a", with the reason).
A probe that crashes is reported as a failure and the others still run. Each
``ars`` call has a timeout (30 s by default): a hang is observed as
"hung >30 s" and fails.

This is a benchmark, not a test: it always exits 0 unless the script itself
breaks, and prints the number of passes at the end.

Some probes need root (a 64 KiB tmpfs for the full disk, a read-only bind
mount for the read-only state directory, since permission bits do not stop
root); they fall back to ``chattr +i`` or to ``chmod 0500`` as a non-root user,
else report "n/a".
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import random
import re
import shlex
import shutil
import signal
import socket
import sqlite3
import stat
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
ARS = ROOT / ".venv" / "bin" / "ars"
PY = ROOT / ".venv" / "bin" / "python"
SAMPLES = ROOT / "samples" / "sessions"
GOALS = ROOT / "samples" / "goals"
TIMEOUT = 30.0
MB = 1024 * 1024
IS_ROOT = os.geteuid() == 0


# =============================================================================
# running ars
# =============================================================================
@dataclass
class Res:
    code: int | None  # None: could not start, or killed after the timeout
    out: str
    err: str
    wall: float
    hung: bool
    rss_mb: float
    timeout: float
    spawn_error: str = ""

    @property
    def both(self) -> str:
        return self.out + "\n" + self.err

    def err_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.strip()]

    def first_err(self, n: int = 60) -> str:
        lines = self.err_lines()
        return clip(short(lines[0].strip()), n) if lines else ""

    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.both

    def brief(self, n: int = 60) -> str:
        if self.spawn_error:
            return f"not started: {clip(self.spawn_error, n)}"
        if self.hung:
            return f"hung >{self.timeout:g} s"
        s = f"exit {self.code}"
        fe = self.first_err(n)
        if self.traceback():  # the exception, not "Traceback (most recent call last):"
            fe = clip(self.err_lines()[-1].strip(), n) if self.err_lines() else fe
        if fe:
            s += f": {fe}"
        if len(self.err_lines()) > 1:
            s += f" (+{len(self.err_lines()) - 1} stderr lines)"
        if self.traceback():
            s += " [Traceback]"
        return s

    def json(self) -> Any:
        try:
            return json.loads(self.out)
        except ValueError:
            return None


def clip(s: str, n: int = 60) -> str:
    s = " ".join(short(str(s)).split())
    return s if len(s) <= n else s[: n - 1] + "…"


def short(s: str) -> str:
    """The temporary base directory shown as $T (observed cells stay readable)."""
    return s.replace(str(BASE), "$T") if BASE else s


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARS_")}
    env["COLUMNS"] = "200"
    env.pop("NO_COLOR", None)
    env.update(extra or {})
    return env


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)  # the group this script created for that one child
    except (ProcessLookupError, PermissionError):
        pass


def run(cmd: list[str], *, env: dict[str, str] | None = None, timeout: float | None = None,
        cwd: Path | None = None, stdin: bytes | None = None) -> Res:
    """One process, its own process group (killed whole after ``timeout``), its
    peak RSS from wait4()."""
    timeout = timeout or TIMEOUT
    t0 = time.monotonic()
    try:
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(cwd or WORKDIR),
                             env=clean_env(env), start_new_session=True)
    except OSError as exc:
        return Res(None, "", "", 0.0, False, 0.0, timeout, spawn_error=f"{type(exc).__name__}: {exc}")
    bufs: dict[str, list[bytes]] = {"out": [], "err": []}

    def reader(stream, key):
        for chunk in iter(lambda: stream.read(65536), b""):
            bufs[key].append(chunk)
        stream.close()

    threads = [threading.Thread(target=reader, args=(p.stdout, "out"), daemon=True),
               threading.Thread(target=reader, args=(p.stderr, "err"), daemon=True)]
    if stdin is not None:
        def writer():
            try:
                p.stdin.write(stdin)
                p.stdin.close()
            except OSError:
                pass
        threads.append(threading.Thread(target=writer, daemon=True))
    for t in threads:
        t.start()
    hung = threading.Event()

    def on_timeout():
        hung.set()
        _kill_group(p.pid)

    timer = threading.Timer(timeout, on_timeout)
    timer.start()
    try:
        _, status, ru = os.wait4(p.pid, 0)
    finally:
        timer.cancel()
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    _kill_group(p.pid)  # anything it left behind in its group
    for t in threads:
        t.join(5)
    out = b"".join(bufs["out"]).decode("utf-8", "replace")
    err = b"".join(bufs["err"]).decode("utf-8", "replace")
    return Res(None if hung.is_set() else p.returncode, out, err, wall, hung.is_set(),
               ru.ru_maxrss / 1024.0, timeout)


def ars(*args: Any, state: Path | None = None, **kw: Any) -> Res:
    cmd = [str(ARS), *map(str, args)] + (["--state", str(state)] if state is not None else [])
    return run(cmd, **kw)


# =============================================================================
# fixtures
# =============================================================================
WORDS = ("backup ledger recall outage breaker staging rollout tokenizer sqlite neo4j episode memory agent "
         "deadline session nightly restart runbook checkpoint approval").split()


def write_session(path: Path | bytes, sid: str, word: str, n: int = 4, extra: str = "") -> None:
    lines = []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        content = f"Message {i} of {sid}: the {word} note about the nightly backup and the staging rollout. {extra}"
        lines.append(json.dumps({"session_id": sid, "role": role, "content": content,
                                 "timestamp": f"2026-03-01T10:{i:02d}:00Z"}))
    data = ("\n".join(lines) + "\n").encode()
    if isinstance(path, bytes):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
    else:
        path.write_bytes(data)


def uniq(tag: str) -> str:
    """A word no sample holds (letters only, so stemming leaves it alone in query and index alike)."""
    rnd = random.Random(tag)
    return "zq" + "".join(rnd.choice("bcdfghjklmnpqrstvwxz") for _ in range(8)) + "x"


def count_episodes(state: Path) -> int | None:
    db = state / "memory.sqlite"
    if not db.is_file():
        return None
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute("select count(*) from episodes").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return None


def recall_hits(state: Path, query: str, *extra: str, env: dict | None = None) -> tuple[int | None, dict, Res]:
    """(number of fused hits or None when recall failed, {tier: status}, the run)."""
    r = ars("recall", query, "--json", *extra, state=state, env=env)
    d = r.json()
    if r.code != 0 or not isinstance(d, dict):
        return None, {}, r
    return len(d.get("hits", [])), {t["tier"]: t["status"] for t in d.get("tiers", [])}, r


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def goal_file(path: Path, goal_id: str, script: list[dict], goal: str = "") -> Path:
    path.write_text(json.dumps({"goal_id": goal_id, "goal": goal or f"adversarial probe {goal_id}",
                                "budget": {"max_iterations": 6, "max_consecutive_failures": 2},
                                "script": script}), encoding="utf-8")
    return path


def history_path(state: Path, loop_id: str) -> Path | None:
    found = list((state / "checkpoints").glob(f"*__{loop_id}.history.jsonl"))
    return found[0] if found else None


class Ctx:
    def __init__(self, base: Path, big: bool):
        self.base = base
        self.big = big
        self._n = 0

    def dir(self, name: str) -> Path:
        self._n += 1
        d = self.base / f"{self._n:02d}-{re.sub(r'[^A-Za-z0-9_-]', '_', name)}"
        d.mkdir(parents=True)
        return d

    def seeded(self, name: str) -> Path:
        """A fresh state directory with the sample sessions ingested (no Neo4j)."""
        state = self.dir(name) / "state"
        r = ars("ingest", SAMPLES, "--json", state=state, timeout=60)
        if r.code != 0:
            raise RuntimeError(f"setup: ingest of samples: {r.brief()}")
        return state

    def loop(self, state: Path, goal: Path) -> dict:
        r = ars("loop", "run", "--goal-file", goal, "--json", state=state)
        d = r.json()
        if not isinstance(d, dict) or "loop_id" not in d:
            raise RuntimeError(f"setup: loop run {goal.name}: {r.brief()}")
        return d


Probe = Callable[[Ctx], tuple[str, str, "bool | None"]]
PROBES: list[tuple[str, str, Probe]] = []


def probe(pid: str, name: str):
    def deco(fn: Probe) -> Probe:
        PROBES.append((pid, name, fn))
        return fn
    return deco


def one_line(r: Res, codes: tuple[int, ...], says: str = "") -> bool:
    """Exit code in ``codes``, exactly one stderr line, no traceback, and (when ``says`` is
    given) that line names the cause (a regex, case-insensitive): a one-line error about
    something else, say an ImportError, is not the error the probe asks for."""
    ok = not r.hung and r.code in codes and len(r.err_lines()) == 1 and not r.traceback()
    return ok and (not says or re.search(says, r.err, re.I) is not None)


# =============================================================================
# 1. Neo4j configured but unreachable
# =============================================================================
def _neo4j_down(ctx: Ctx, busy: bool, n: int = 8):
    state = ctx.seeded("neo4j-down" + ("-busy" if busy else ""))
    env = {"ARS_NEO4J_URI": f"bolt://127.0.0.1:{closed_port()}"}
    hogs: list[subprocess.Popen] = []
    try:
        if busy:
            hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True)
                    for _ in range(2)]
            time.sleep(0.3)
        results = [recall_hits(state, "neo4j outage", env=env) for _ in range(n)]
    finally:
        for h in hogs:
            try:
                os.kill(h.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            h.wait()
    ok = sum(1 for hits, tiers, _ in results if tiers.get("sqlite") == "ok" and hits)
    sq: dict[str, int] = {}
    neo: dict[str, int] = {}
    for hits, tiers, r in results:
        key = tiers.get("sqlite") or r.brief(30)
        sq[key] = sq.get(key, 0) + 1
        nk = tiers.get("neo4j", "?")
        neo[nk] = neo.get(nk, 0) + 1
    walls = sorted(r.wall for _, _, r in results)
    fmt = lambda c: ", ".join(f"{k}×{v}" for k, v in c.items())  # noqa: E731
    obs = (f"sqlite ok+hits {ok}/{n} (sqlite: {fmt(sq)}; neo4j: {fmt(neo)}); "
           f"wall p50 {walls[len(walls) // 2]:.2f} s max {walls[-1]:.2f} s")
    return f"{n}/{n} fresh recalls: sqlite ok with hits", obs, ok == n


@probe("1a", "neo4j unreachable: 8 fresh recalls")
def p_neo4j_down(ctx):
    return _neo4j_down(ctx, busy=False)


@probe("1b", "neo4j unreachable + 2 busy CPU loops: 8 recalls")
def p_neo4j_down_busy(ctx):
    return _neo4j_down(ctx, busy=True)


# =============================================================================
# 2. ledger damage
# =============================================================================
@probe("2a", "schema-invalid ledger line: rebuild")
def p_ledger_schema(ctx):
    state = ctx.seeded("ledger-schema")
    ledger = state / "ledger.jsonl"
    lines = ledger.read_bytes().split(b"\n")
    eps = [i for i, line in enumerate(lines) if b'"episode.upsert"' in line and b'"text":' in line]
    if len(eps) < 3:
        return "setup", f"only {len(eps)} episode lines in the ledger", False
    i = eps[2]
    lines[i] = lines[i].replace(b'"text":', b'"texT":', 1)
    ledger.write_bytes(b"\n".join(lines))
    line_no = i + 1
    valid = len(eps) - 1
    r = ars("rebuild", state=state)
    names = f"ledger.jsonl:{line_no}" in r.both
    n = count_episodes(state)
    hits, tiers, rr = recall_hits(state, "neo4j")
    ok = (not r.hung and r.code in (0, 1) and names and len(r.err_lines()) <= 1 and not r.traceback()
          and n is not None and n >= valid and bool(hits) and tiers.get("sqlite") == "ok")
    obs = (f"rebuild {r.brief(45)}; names ledger.jsonl:{line_no}: {'yes' if names else 'no'}; "
           f"store {n}/{valid} valid episodes; recall {hits if hits is not None else rr.brief(30)} hits")
    return f"exit 0|1, one line naming ledger.jsonl:{line_no}; store >= {valid} episodes; recall finds them", obs, ok


@probe("2b", "ledger.jsonl is a directory")
def p_ledger_dir(ctx):
    state = ctx.seeded("ledger-dir")
    before = count_episodes(state)
    (state / "ledger.jsonl").rename(state / "ledger.jsonl.bak")
    (state / "ledger.jsonl").mkdir()
    good = state.parent / "more"
    good.mkdir()
    write_session(good / "s.jsonl", "more-1", uniq("ledger-dir"))
    r1 = ars("rebuild", state=state)
    r2 = ars("ingest", good, state=state)
    after = count_episodes(state)
    ok = all(one_line(r, (1, 2), "ledger") for r in (r1, r2)) and after == before
    obs = f"rebuild {r1.brief(40)}; ingest {r2.brief(30)}; memory.sqlite {before} -> {after} episodes"
    return "rebuild & ingest: exit !=0, one line naming the ledger; memory.sqlite not emptied", obs, ok


# =============================================================================
# 3. fork after approval does not replay
# =============================================================================
@probe("3", "fork after approval x3 does not replay shell")
def p_fork_replay(ctx):
    d = ctx.dir("fork-replay")
    state = d / "state"
    state.mkdir()
    marker = d / "marker.txt"
    g = goal_file(d / "g.json", "fork-replay", [
        {"action": "append a line to the marker file", "tool": "shell",
         "args": {"cmd": f"echo ran >> {shlex.quote(str(marker))}"}, "needs_approval": True},
        {"action": "confirm the marker is written", "outcome": "pass", "reason": "the marker file has its line"},
    ])
    s = ctx.loop(state, g)
    lid = s["loop_id"]
    if s["status"] != "waiting_human":
        return "waiting_human first", f"run ended {s['status']} before approval", False
    a = ars("loop", "approve", lid, "--json", state=state)
    after_approve = marker.read_text().count("ran") if marker.exists() else 0
    h = ars("loop", "history", lid, "--json", state=state).json() or []
    dec = [e["index"] for e in h if e.get("kind") == "decision"]
    if not dec:
        return "a decision entry", f"approve {a.brief(40)}; no decision entry in history", False
    at = dec[0]
    statuses = []
    for _ in range(3):
        f = ars("loop", "fork", lid, "--at", at, "--run", "--json", state=state)
        fj = f.json()
        statuses.append(fj.get("status") if isinstance(fj, dict) else f.brief(30))
    runs = marker.read_text().count("ran") if marker.exists() else 0
    ok = runs == 1 and after_approve == 1 and all(st == "waiting_human" for st in statuses)
    obs = f"fork --at {at} (decision entry): marker written {runs}x (1 after approve); forks: {', '.join(map(str, statuses))}"
    return "marker written once; each fork waiting_human", obs, ok


# =============================================================================
# 4. {answer} shell injection
# =============================================================================
@probe("4", "{answer} shell injection via respond")
def p_answer_injection(ctx):
    d = ctx.dir("answer-injection")
    state = d / "state"
    state.mkdir()
    pwned = d / "PWNED"
    g = goal_file(d / "g.json", "greet", [
        {"action": "greet the person named in the answer", "tool": "shell",
         "args": {"cmd": "echo hello {answer}"}, "question": "Whom should I greet?"},
        {"action": "confirm the greeting", "outcome": "pass", "reason": "greeted"},
    ])
    s = ctx.loop(state, g)
    lid = s["loop_id"]
    steps = [f"run: {s['status']}"]
    r = ars("loop", "respond", lid, f"world; touch {pwned}", "--json", state=state)
    j = r.json()
    steps.append(f"respond: {j.get('status') if isinstance(j, dict) else r.brief(30)}")
    for _ in range(3):
        if not (isinstance(j, dict) and j.get("status") == "waiting_human"
                and (j.get("pending_approval") or {}).get("kind") == "approval"):
            break
        r = ars("loop", "approve", lid, "--json", state=state)
        j = r.json()
        steps.append(f"approve: {j.get('status') if isinstance(j, dict) else r.brief(30)}")
    shell_out = ""
    if isinstance(j, dict):
        for it in j.get("iterations", []):
            if (it.get("action") or {}).get("tool") == "shell":
                shell_out = clip((it.get("result") or {}).get("output", ""), 30)
    exists = pwned.exists()
    obs = f"{'; '.join(steps)}; shell said {shell_out!r}; X {'CREATED' if exists else 'absent'}"
    return "X never created (answer is one argument, not shell code)", obs, not exists


# =============================================================================
# 5. two concurrent ingests
# =============================================================================
@probe("5", "two concurrent ingests of overlapping folders")
def p_concurrent_ingest(ctx, trials: int = 4):
    d = ctx.dir("concurrent-ingest")
    src = d / "src"
    (src / "sub").mkdir(parents=True)
    files = []
    for i in range(60):
        f = (src / "sub" if i % 3 == 0 else src) / f"s{i:02d}.jsonl"
        write_session(f, f"conc-{i:02d}", uniq(f"conc{i}"), n=6, extra="filler " * 40)
        files.append(f)
    ref = d / "ref"
    r = ars("ingest", src, "--json", state=ref, timeout=60)
    n_ref = count_episodes(ref)
    if r.code != 0 or not n_ref:
        return "setup", f"reference ingest {r.brief(40)}", False
    problems = []
    summary = []
    for t in range(trials):
        state = d / f"state{t}"
        # the same folder twice (trials 0-2), or the folder and its subfolder plus a few of its files (trial 3)
        a_args = [src]
        b_args = [src] if t < trials - 1 else [src / "sub", *sorted(src.glob("*.jsonl"))[:5]]
        res: dict[str, Res] = {}
        ta = threading.Thread(target=lambda: res.__setitem__("a", ars("ingest", *a_args, state=state, timeout=60)))
        tb = threading.Thread(target=lambda: res.__setitem__("b", ars("ingest", *b_args, state=state, timeout=60)))
        ta.start()
        tb.start()
        ta.join()
        tb.join()
        n = count_episodes(state)
        srcs = set()
        try:
            for line in (state / "sources.jsonl").read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    srcs.add(json.loads(line).get("path"))
                except ValueError:
                    pass
        except OSError:
            pass
        missing = [f for f in files if str(f) not in srcs and str(f.resolve()) not in srcs]
        integ = any("IntegrityError" in x.err for x in res.values())
        codes = (res["a"].code, res["b"].code)
        bad = codes != (0, 0) or integ or n != n_ref or missing or any(x.traceback() for x in res.values())
        summary.append(f"exits {codes[0]},{codes[1]} eps {n} missing {len(missing)}{' IntegrityError' if integ else ''}")
        if bad:
            problems.append(t)
    obs = f"{trials - len(problems)}/{trials} trials clean; " + "; ".join(summary)
    return (f"both exit 0, no IntegrityError, {n_ref} episodes, all {len(files)} files in sources.jsonl",
            obs, not problems)


# =============================================================================
# 6. hostile files next to one good transcript
# =============================================================================
def _hostile(ctx: Ctx, name: str, make_bad: Callable[[Path], str], *, limit: float = TIMEOUT,
             timeout: float | None = None, rss_limit_mb: float | None = None):
    d = ctx.dir(name)
    folder = d / "in"
    folder.mkdir()
    word = uniq(name)
    write_session(folder / "good.jsonl", f"good-{name}", word)
    note = make_bad(folder) or ""
    state = d / "state"
    r = ars("ingest", folder, "--json", state=state, timeout=timeout or TIMEOUT)
    hits, tiers, rr = recall_hits(state, word) if not r.hung else (None, {}, None)
    found = bool(hits)
    ok = (not r.hung and r.code in (0, 1) and not r.traceback() and found and r.wall < limit)
    obs = f"ingest {r.brief(40)}{'' if r.hung else f' in {r.wall:.1f} s'}; good file {'found' if found else 'NOT found'}"
    if rss_limit_mb is not None:
        obs += f"; peak RSS {r.rss_mb:.0f} MB"
        ok = ok and r.rss_mb < rss_limit_mb
    if note:
        obs += f"; {note}"
    return ok, obs, state


@probe("6a", "FIFO in the folder")
def p_fifo(ctx):
    ok, obs, _ = _hostile(ctx, "fifo", lambda f: os.mkfifo(f / "pipe.jsonl"))
    return "finishes < 30 s, exit 0|1, good file ingested", obs, ok


@probe("6a2", "FIFO named on the command line")
def p_fifo_explicit(ctx):
    d = ctx.dir("fifo-explicit")
    folder = d / "in"
    folder.mkdir()
    word = uniq("fifo-explicit")
    write_session(folder / "good.jsonl", "good-fifo-explicit", word)
    fifo = folder / "pipe.jsonl"
    os.mkfifo(fifo)
    state = d / "state"
    r = ars("ingest", fifo, folder / "good.jsonl", state=state)
    hits = recall_hits(state, word)[0] if not r.hung else None
    ok = not r.hung and r.code in (0, 1) and not r.traceback() and bool(hits)
    obs = f"ingest {r.brief(45)}{'' if r.hung else f' in {r.wall:.1f} s'}; good file {'found' if hits else 'NOT found'}"
    return "finishes < 30 s, exit 0|1, FIFO reported, good file ingested", obs, ok


@probe("6b", "JSONL line with a 5,000-digit integer")
def p_bigint(ctx):
    def make(f: Path):
        (f / "bigint.jsonl").write_text(
            json.dumps({"session_id": "bigint", "role": "user", "content": "a line before the big number"}) + "\n"
            + '{"session_id": "bigint", "role": "user", "content": "big", "n": ' + "7" * 5000 + "}\n",
            encoding="utf-8")
    ok, obs, _ = _hostile(ctx, "bigint", make)
    return "exit 0|1, no traceback, good file ingested", obs, ok


@probe("6c", "front matter with 1,200 nested [ (closed)")
def p_nested_front_matter(ctx):
    def make(f: Path):
        (f / "notes.md").write_text("---\ntags: " + "[" * 1200 + "]" * 1200 + "\ntitle: deep\n---\n# Heading\nBody text.\n",
                                    encoding="utf-8")
    ok, obs, _ = _hostile(ctx, "nested-fm", make)
    return "exit 0|1, no traceback, good file ingested", obs, ok


@probe("6d", "file name not UTF-8 (bad\\xff.jsonl)")
def p_bad_name(ctx):
    word = uniq("badname-content")

    def make(f: Path):
        write_session(os.fsencode(f) + b"/bad\xff.jsonl", "badname", word)
    ok, obs, state = _hostile(ctx, "badname", make)
    hits, _, _ = recall_hits(state, word)
    obs += f"; bad-name file itself {'ingested' if hits else 'not ingested'}"
    return "exit 0|1, no traceback, good file ingested", obs, ok


@probe("6e", "heading '# a' + 2,000 spaces + 'b'")
def p_heading_spaces(ctx):
    def make(f: Path):
        (f / "spaces.md").write_text("# a" + " " * 2000 + "b\nsome body\n", encoding="utf-8")
    ok, obs, _ = _hostile(ctx, "heading-spaces", make, limit=5.0)
    return "finishes in < 5 s, good file ingested", obs, ok


@probe("6f", "100 MB transcript: peak RSS")
def p_big_file(ctx):
    if not ctx.big:
        return "peak RSS < 250 MB", "not run: give --big (about 80 s)", None

    def make(f: Path):
        line_pad = "lorem ipsum dolor sit amet backup ledger recall " * 18
        with open(f / "big.jsonl", "w", encoding="utf-8") as fh:
            i = 0
            written = 0
            while written < 100 * MB:
                line = json.dumps({"session_id": "big-session", "role": "user" if i % 2 == 0 else "assistant",
                                   "content": f"message {i} {line_pad}",
                                   "timestamp": f"2026-03-02T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}Z"}) + "\n"
                fh.write(line)
                written += len(line)
                i += 1
        return f"{written / MB:.0f} MB, {i} lines"
    ok, obs, _ = _hostile(ctx, "big-file", make, limit=120, timeout=120, rss_limit_mb=250)
    return "finishes, good file ingested, peak RSS < 250 MB", obs, ok


# =============================================================================
# 7. privacy
# =============================================================================
@probe("7a", "umask 022: state 0700, files 0600")
def p_modes(ctx):
    d = ctx.dir("modes")
    state = d / "state"  # created by ars itself
    old = os.umask(0o022)
    try:
        steps = []
        r = ars("ingest", SAMPLES, state=state)
        steps.append(("ingest", r))
        s = ctx.loop(state, GOALS / "deploy-hotfix.json")
        r = ars("loop", "approve", s["loop_id"], "--json", state=state)
        steps.append(("approve", r))
    finally:
        os.umask(old)
    if not state.exists():
        return "state 0700", "state dir not created", False
    mode = stat.S_IMODE(state.stat().st_mode)
    bad_files, bad_dirs = [], []
    for root, dirs, fs in os.walk(state):
        for name in fs:
            p = Path(root) / name
            m = stat.S_IMODE(p.lstat().st_mode)
            if m != 0o600:
                bad_files.append(f"{p.relative_to(state)} {m:o}")
        for name in dirs:
            p = Path(root) / name
            m = stat.S_IMODE(p.lstat().st_mode)
            if m & 0o077:
                bad_dirs.append(f"{p.relative_to(state)}/ {m:o}")
    ok = mode == 0o700 and not bad_files
    failed = [f"{what} {r.brief(40)}" for what, r in steps if r.code != 0]
    if failed:
        ok = False
        bad_files.insert(0, "setup failed: " + "; ".join(failed))
    obs = f"state {mode:o}; {len(bad_files)} files not 0600"
    if bad_files:
        obs += ": " + ", ".join(bad_files[:6]) + (" …" if len(bad_files) > 6 else "")
    if bad_dirs:
        obs += f" (subdirs open to group/other, not counted: {', '.join(bad_dirs)})"
    return "state dir 0700, every file 0600", obs, ok


@probe("7b", "symlink to a file outside the folder not followed")
def p_symlink(ctx):
    d = ctx.dir("symlink")
    folder = d / "in"
    folder.mkdir()
    outside = d / "outside"
    outside.mkdir()
    w_good, w_file, w_dir = uniq("sym-good"), uniq("sym-secret-file"), uniq("sym-secret-dir")
    write_session(folder / "good.jsonl", "sym-good", w_good)
    write_session(outside / "secret.jsonl", "sym-secret", w_file)
    (outside / "dir").mkdir()
    write_session(outside / "dir" / "secret2.jsonl", "sym-secret2", w_dir)
    (folder / "leak.jsonl").symlink_to(outside / "secret.jsonl")
    (folder / "leakdir").symlink_to(outside / "dir")
    state = d / "state"
    r = ars("ingest", folder, "--json", state=state)
    good, _, _ = recall_hits(state, w_good)
    h1, _, r1 = recall_hits(state, w_file, "--tiers", "sqlite,files")
    h2, _, r2 = recall_hits(state, w_dir, "--tiers", "sqlite,files")
    srcs = (state / "sources.jsonl").read_text(errors="replace") if (state / "sources.jsonl").exists() else ""
    listed = "secret" in srcs
    ok = h1 == 0 and h2 == 0 and not listed and bool(good)
    obs = (f"ingest {r.brief(30)}; secret (file link) hits {h1 if h1 is not None else r1.brief(20)}, "
           f"secret (dir link) hits {h2 if h2 is not None else r2.brief(20)}; in sources.jsonl: "
           f"{'yes' if listed else 'no'}; good found: {'yes' if good else 'no'}")
    return "0 hits for the secret words; good file found", obs, ok


# =============================================================================
# 8. one-line errors
# =============================================================================
def _uri_probe(ctx, uri: str):
    state = ctx.seeded("uri")
    r = ars("recall", "neo4j", state=state, env={"ARS_NEO4J_URI": uri})
    return "exit 2, one stderr line naming ARS_NEO4J_URI", r.brief(), one_line(r, (2,), "ARS_NEO4J_URI")


@probe("8a", "ARS_NEO4J_URI=http://x")
def p_uri_http(ctx):
    return _uri_probe(ctx, "http://x")


@probe("8b", "ARS_NEO4J_URI=garbage")
def p_uri_garbage(ctx):
    return _uri_probe(ctx, "garbage")


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


def _umount(path: Path) -> None:
    subprocess.run(["umount", str(path)], capture_output=True)


@probe("8c", "read-only state dir")
def p_readonly(ctx):
    state = ctx.seeded("readonly")
    more = state.parent / "more"
    more.mkdir()
    write_session(more / "s.jsonl", "ro-more", uniq("ro-more"))
    how = ""
    target = state
    cleanup: Callable[[], None] = lambda: None  # noqa: E731
    if IS_ROOT:
        ro = state.parent / "ro"
        ro.mkdir()
        if _mount("--bind", str(state), str(ro)) and _mount("-o", "remount,ro,bind", str(ro)):
            how, target = "read-only bind mount", ro
            cleanup = lambda: _umount(ro)  # noqa: E731
        else:
            _umount(ro)
            paths = [state, *state.rglob("*")]
            if subprocess.run(["chattr", "+i", *map(str, paths)], capture_output=True).returncode == 0:
                how = "chattr +i"
                cleanup = lambda: subprocess.run(["chattr", "-i", *map(str, paths)], capture_output=True)  # noqa: E731
            else:
                subprocess.run(["chattr", "-i", *map(str, paths)], capture_output=True)
                return "exit 1, one line", "n/a as root (no mount, no chattr here)", None
    else:
        state.chmod(0o500)
        how = "chmod 0500"
        cleanup = lambda: state.chmod(0o700)  # noqa: E731
    try:
        ri = ars("ingest", more, state=target)
        rr = ars("recall", "neo4j", state=target)
    finally:
        cleanup()
    recall_ok = not rr.hung and not rr.traceback() and (rr.code == 0 or one_line(rr, (1, 2)))
    ok = one_line(ri, (1, 2), r"read-only|permission|cannot write|not writable|denied") and recall_ok
    return ("ingest: exit 1 (or 2), one line saying it cannot write; recall: answers or one line",
            f"[{how}] ingest {ri.brief(45)}; recall {rr.brief(30)}", ok)


@probe("8d", "full disk (64 KiB tmpfs)")
def p_full_disk(ctx):
    d = ctx.dir("full-disk")
    if not IS_ROOT:
        return "exit 1, one line", "n/a: mounting a tmpfs needs root", None
    mnt = d / "mnt"
    mnt.mkdir()
    if not _mount("-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)):
        return "exit 1, one line", "n/a: mount -t tmpfs failed", None
    try:
        more = d / "in"
        more.mkdir()
        for i in range(20):
            write_session(more / f"s{i}.jsonl", f"full-{i}", uniq(f"full{i}"), n=10, extra="filler " * 200)
        state = mnt / "state"
        ri = ars("ingest", more, state=state)
        rr = ars("recall", "filler", state=state)
    finally:
        _umount(mnt)
    recall_ok = not rr.hung and not rr.traceback() and (rr.code == 0 or one_line(rr, (1, 2)))
    ok = one_line(ri, (1, 2), r"space|disk.*full|full.*disk|ENOSPC") and recall_ok
    return ("ingest: exit 1 (or 2), one line saying the disk is full; recall no traceback",
            f"ingest {ri.brief(45)}; recall {rr.brief(25)}", ok)


@probe("8e", "checkpoint path is a directory")
def p_checkpoint_dir(ctx):
    d = ctx.dir("checkpoint-dir")
    state = d / "state"
    state.mkdir()
    s = ctx.loop(state, GOALS / "deploy-hotfix.json")
    lid = s["loop_id"]
    latest = list((state / "checkpoints").glob(f"*__{lid}.json"))
    if not latest:
        return "setup", "no checkpoint file found", False
    latest[0].unlink()
    latest[0].mkdir()
    ra = ars("loop", "approve", lid, state=state)
    rs = ars("loop", "show", lid, state=state)
    ok = one_line(ra, (1, 2), r"checkpoint|director") and not rs.traceback() and not rs.hung and (rs.code == 0 or one_line(rs, (1, 2)))
    return ("approve: exit 1 (or 2), one line naming the checkpoint; show: no traceback",
            f"approve {ra.brief(40)}; show {rs.brief(25)}", ok)


@probe("8f", "truncated approvals/*.json, then recover")
def p_truncated_approval(ctx):
    d = ctx.dir("truncated-approval")
    state = d / "state"
    state.mkdir()
    s = ctx.loop(state, GOALS / "deploy-hotfix.json")
    lid = s["loop_id"]
    r = ars("loop", "approve", lid, "--no-resume", state=state)
    files = sorted((state / "approvals").glob(f"{lid}__*.json")) if (state / "approvals").is_dir() else []
    if not files:
        return "setup", f"approve --no-resume {r.brief(30)}; no approvals file", False
    f = files[0]
    data = f.read_bytes()
    f.write_bytes(data[: len(data) // 2])
    steps = []
    errors_ok = True
    names_file = True
    rr = ars("loop", "resume", lid, "--json", state=state)
    steps.append(f"resume {rr.brief(50)}")
    if rr.hung or rr.traceback() or (rr.code != 0 and not one_line(rr, (1, 2))):
        errors_ok = False
    action = ""
    if rr.code != 0:
        line = rr.first_err(400)
        names_file = f.name in rr.err
        m = re.search(r"`(ars [^`]+)`", rr.err)
        if m:
            cmd = shlex.split(m.group(1).replace("ID", lid))
            if "--state" not in cmd:
                cmd += ["--state", str(state)]
            fix = run([str(ARS), *cmd[1:]])
            action = f"ran `{clip(' '.join(cmd[:4]), 40)}` -> {fix.code}"
        elif re.search(r"\b(delete|remove)\b", line, re.I) and f.exists():
            f.unlink()
            action = "deleted the file as told"
        else:
            action = "no command or action named"
        steps.append(action)
    # drive the loop to its end as a person would: approve if it waits, else resume
    final = None
    for _ in range(3):
        sh = ars("loop", "show", lid, "--json", state=state).json()
        st = sh.get("status") if isinstance(sh, dict) else None
        final = st
        if st in ("done", "blocked", "aborted") or st is None:
            break
        if st == "waiting_human":
            x = ars("loop", "approve", lid, "--json", state=state)
        else:
            x = ars("loop", "resume", lid, "--json", state=state)
        steps.append(f"{'approve' if st == 'waiting_human' else 'resume'} {x.brief(40) if x.code else 'ok'}")
        if x.traceback() or x.hung:
            errors_ok = False
        if x.code != 0:
            break
    steps.append(f"final {final}")
    ok = errors_ok and names_file and final == "done"
    return ("one-line error naming the file; the named command/action recovers; loop ends done",
            "; ".join(steps), ok)


@probe("8g", "goal file with 100,000 nested [")
def p_deep_goal(ctx):
    d = ctx.dir("deep-goal")
    state = d / "state"
    state.mkdir()
    g = d / "deep.json"
    g.write_text("[" * 100_000, encoding="utf-8")
    r = ars("loop", "run", "--goal-file", g, state=state)
    return "exit 2, one line about the nesting", r.brief(), one_line(r, (2,), r"nest|deep")


@probe("8h", "loop edit --args with 100,000 nested [")
def p_deep_args(ctx):
    d = ctx.dir("deep-args")
    state = d / "state"
    state.mkdir()
    s = ctx.loop(state, GOALS / "deploy-hotfix.json")
    lid = s["loop_id"]
    r = ars("loop", "edit", lid, "--args", '{"cmd": ' + "[" * 100_000, state=state)
    sh = ars("loop", "show", lid, "--json", state=state).json()
    st = sh.get("status") if isinstance(sh, dict) else "?"
    ok = one_line(r, (2,), r"nest|deep") and st == "waiting_human"
    return "exit 2, one line about the nesting; loop still waiting_human", f"{r.brief(45)}; loop {st}", ok


# =============================================================================
# 9. a 1 MB query
# =============================================================================
def _query(n_bytes: int) -> str:
    """Words a person might paste: mostly distinct (random letters), one in ten a word the samples hold."""
    rnd = random.Random(9)
    parts, size = [], 0
    while size < n_bytes:
        if len(parts) % 10 == 0:
            w = rnd.choice(WORDS)
        else:
            w = "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(3, 10)))
        parts.append(w)
        size += len(w) + 1
    return " ".join(parts)[:n_bytes].rsplit(" ", 1)[0]


@probe("9a", "1 MB query through the ars CLI")
def p_big_query(ctx):
    state = ctx.seeded("big-query")
    q = _query(MB)
    r = ars("recall", q, "--json", state=state)
    note = ""
    if r.spawn_error:
        # Linux refuses one argv string over MAX_ARG_STRLEN (128 KiB): 1 MB cannot be an argument of
        # any exec'd process. Run the same ars entry point (tui.cli.main:main) in a fresh process, with
        # the query put into sys.argv from a file instead of by execve.
        qf = state.parent / "query.txt"
        qf.write_text(q, encoding="utf-8")
        code = ("import sys; from tui.cli.main import main; q = open(sys.argv[1], encoding='utf-8').read(); "
                "sys.argv = ['ars', 'recall', q, '--state', sys.argv[2], '--json']; sys.exit(main())")
        r = run([str(PY), "-c", code, str(qf), str(state)])
        note = "argv E2BIG; via tui.cli.main:main in a fresh process; "
    d = r.json()
    tiers = {t["tier"]: t["status"] for t in d.get("tiers", [])} if isinstance(d, dict) else {}
    ok = not r.hung and r.code == 0 and tiers.get("sqlite") == "ok" and r.wall < 5
    obs = (f"{note}{'exit 0' if r.code == 0 else r.brief(30)}{'' if r.hung else f'; wall {r.wall:.2f} s'}; "
           f"sqlite {tiers.get('sqlite', '?')}")
    return "answers < 5 s, sqlite ok", obs, ok


@probe("9b", "largest argv query (127 KiB) through ars")
def p_argv_query(ctx):
    state = ctx.seeded("argv-query")
    r = ars("recall", _query(127 * 1024), "--json", state=state)
    d = r.json()
    tiers = {t["tier"]: t["status"] for t in d.get("tiers", [])} if isinstance(d, dict) else {}
    ok = not r.hung and r.code == 0 and tiers.get("sqlite") == "ok" and r.wall < 5
    obs = (f"{'exit 0' if r.code == 0 else r.brief(30)}{'' if r.hung else f'; wall {r.wall:.2f} s'}; "
           f"sqlite {tiers.get('sqlite', '?')}")
    return "answers < 5 s, sqlite ok", obs, ok


# =============================================================================
# 10. the files tier honours its deadline
# =============================================================================
@probe("10", "files tier, no rg, ARS_FILES_DEADLINE=0")
def p_files_deadline(ctx):
    state = ctx.seeded("files-deadline")
    empty_bin = state.parent / "bin"
    empty_bin.mkdir()
    r = ars("recall", "neo4j", "--tiers", "files", "--json", state=state,
            env={"PATH": str(empty_bin), "ARS_FILES_DEADLINE": "0"})
    d = r.json()
    files = next((t for t in d.get("tiers", []) if t["tier"] == "files"), None) if isinstance(d, dict) else None
    if files is None:
        return "files status timeout", r.brief(), False
    obs = f"files {files['status']} ({len(files.get('hits', []))} hits, {files.get('latency_ms', 0):.1f} ms)"
    return "files status timeout", obs, files["status"] == "timeout"


# =============================================================================
# 11. ids, history, NUL bytes, the dashboard on an empty directory
# =============================================================================
@probe("11a", "goal id with __loop-x can't alias another loop")
def p_goal_id_alias(ctx):
    d = ctx.dir("goal-id-alias")
    state = d / "state"
    state.mkdir()
    victim = ctx.loop(state, goal_file(d / "v.json", "victim", [{"action": "a", "outcome": "pass", "reason": "ok"}]))
    a = victim["loop_id"]
    e1 = ctx.loop(state, goal_file(d / "e1.json", f"evil__{a}", [{"action": "a", "outcome": "pass", "reason": "ok"}]))
    e2 = ctx.loop(state, goal_file(d / "e2.json", "evil__loop-x", [{"action": "a", "outcome": "pass", "reason": "ok"}]))
    checks = []
    r = ars("loop", "show", a, "--json", state=state)
    j = r.json()
    checks.append(("show A -> victim", isinstance(j, dict) and j.get("goal_id") == "victim" and j.get("loop_id") == a))
    r = ars("loop", "show", "loop-x", state=state)
    checks.append(("show loop-x -> no loop", r.code == 2 and "no loop" in r.err))
    fake = f"loop-x__{e2['loop_id']}"
    r = ars("loop", "show", fake, "--json", state=state)
    j = r.json()
    checks.append((f"show loop-x__<E2> -> no loop", r.code == 2 and not (isinstance(j, dict) and j.get("loop_id"))))
    r = ars("loop", "history", a, "--json", state=state)
    h = r.json() or []
    checks.append(("history A is A's", bool(h) and all((e.get("state") or {}).get("loop_id") == a for e in h)))
    fake1 = f"{a}__{e1['loop_id']}"
    r = ars("loop", "show", fake1, "--json", state=state)
    j = r.json()
    checks.append(("show A__<E1> -> no loop", r.code == 2 and not (isinstance(j, dict) and j.get("loop_id"))))
    failed = [c for c, okc in checks if not okc]
    obs = f"{len(checks) - len(failed)}/{len(checks)} checks" + (f"; failed: {', '.join(failed)}" if failed else "")
    return "show/history open only the loop asked for", obs, not failed


@probe("11b", "history with 3 garbage lines appended")
def p_history_garbage(ctx):
    d = ctx.dir("history-garbage")
    state = d / "state"
    state.mkdir()
    s = ctx.loop(state, GOALS / "release-notes.json")
    lid = s["loop_id"]
    hp = history_path(state, lid)
    if hp is None:
        return "setup", "no history file", False
    with open(hp, "ab") as fh:
        fh.write(b"garbage line\n{not json\n" + json.dumps({"index": "x", "kind": 3}).encode() + b"\n")
    r = ars("loop", "history", lid, state=state)
    said = re.search(r"\b3\b[^\n]{0,60}skip|skip[^\n]{0,60}\b3\b", r.both, re.I)
    ok = r.code == 0 and not r.traceback() and bool(said)
    obs = f"exit {r.code}" + (f"; says {clip(said.group(0), 40)!r}" if said else
                               f"; no count of 3 skipped ({r.first_err(35) or 'nothing on stderr'})")
    return "exit 0, reports 3 lines skipped", obs, ok


@probe("11c", "JSONL with one NUL byte in one line")
def p_nul_line(ctx):
    d = ctx.dir("nul-line")
    folder = d / "in"
    folder.mkdir()
    w1, w3 = uniq("nul-first"), uniq("nul-third")
    lines = [json.dumps({"session_id": "nul-a", "role": "user", "content": f"first line {w1}"}).encode(),
             b'{"session_id": "nul-b", "role": "user", "content": "bad \x00 byte"}',
             json.dumps({"session_id": "nul-c", "role": "user", "content": f"third line {w3}"}).encode()]
    (folder / "mixed.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    state = d / "state"
    r = ars("ingest", folder, "--json", state=state)
    h1, _, _ = recall_hits(state, w1)
    h3, _, _ = recall_hits(state, w3)
    ok = not r.hung and r.code in (0, 1) and not r.traceback() and bool(h1) and bool(h3)
    return ("lines 1 and 3 ingested, line 2 reported", f"ingest {r.brief(30)}; line 1 "
            f"{'found' if h1 else 'missing'}, line 3 {'found' if h3 else 'missing'}", ok)


def _tui_in_pty(state: Path, wait_paint: float = 12.0) -> tuple[str, bool]:
    """Run `ars tui` in a real pseudo-terminal, wait for it to paint, press q."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    env = clean_env({"TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"})
    p = subprocess.Popen([str(ARS), "tui", "--state", str(state)], stdin=slave, stdout=slave, stderr=slave,
                         cwd=str(WORKDIR), env=env, start_new_session=True, close_fds=True)
    os.close(slave)
    buf = bytearray()
    stop = threading.Event()

    def reader():
        while not stop.is_set():
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            buf.extend(chunk)

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    t0 = time.monotonic()
    painted = False
    while time.monotonic() - t0 < wait_paint and p.poll() is None:
        if len(buf) > 2000:
            painted = True
            time.sleep(1.0)
            break
        time.sleep(0.1)
    how = ""
    if p.poll() is None:
        os.write(master, b"q")
        try:
            p.wait(8)
            how = f"quit on q (exit {p.returncode})"
        except subprocess.TimeoutExpired:
            os.write(master, b"\x03")
            try:
                p.wait(3)
                how = f"quit on ctrl+c (exit {p.returncode})"
            except subprocess.TimeoutExpired:
                _kill_group(p.pid)
                p.wait()
                how = "killed (did not quit)"
    else:
        text = re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", bytes(buf)).decode("utf-8", "replace")
        how = f"exit {p.returncode} at once: {clip(text, 40)}"
    stop.set()
    try:
        os.close(master)
    except OSError:
        pass
    t.join(2)
    return how, painted


@probe("11d", "ars tui on EMPTY_DIR (in a pty), then demo --no-tui")
def p_tui_then_demo(ctx):
    d = ctx.dir("tui-then-demo")
    empty = d / "empty"
    empty.mkdir()
    how, painted = _tui_in_pty(empty)
    left = sorted(p.name for p in empty.iterdir())
    r = ars("demo", "--no-tui", "--json", state=empty, timeout=120)
    obs = (f"tui {'painted, ' if painted else 'no paint, '}{how}; left {len(left)} entries"
           f"{' (' + clip(', '.join(left), 30) + ')' if left else ''}; demo {r.brief(40)}")
    return "demo exit 0 after the dashboard was opened and closed", obs, r.code == 0


@probe("11e", "ars tui on EMPTY_DIR without a tty, then demo")
def p_tui_notty_then_demo(ctx):
    d = ctx.dir("tui-notty-then-demo")
    empty = d / "empty"
    empty.mkdir()
    rt = ars("tui", state=empty, env={"TERM": "dumb"}, timeout=15)
    left = sorted(p.name for p in empty.iterdir())
    r = ars("demo", "--no-tui", "--json", state=empty, timeout=120)
    ok = one_line(rt, (1, 2)) and r.code == 0
    obs = (f"tui {rt.brief(35)}; left {len(left)} entries; demo {r.brief(40)}")
    return "tui: one-line error; demo then exit 0", obs, ok


# =============================================================================
# regressions: bad input already handled
# =============================================================================
def _regression(ctx, args: list[str], code: int, needle: str):
    state = ctx.seeded("regression")
    r = ars(*args, state=state)
    ok = one_line(r, (code,)) and needle in r.err
    return f"exit {code}, one line with '{needle}'", r.brief(), ok


@probe("R1", "recall ''")
def p_r1(ctx):
    return _regression(ctx, ["recall", ""], 2, "empty query")


@probe("R2", "recall x -k 0")
def p_r2(ctx):
    return _regression(ctx, ["recall", "x", "-k", "0"], 2, "k must be")


@probe("R3", "recall x --tiers bogus")
def p_r3(ctx):
    return _regression(ctx, ["recall", "x", "--tiers", "bogus"], 2, "unknown tier")


@probe("R4", "ingest /nonexistent")
def p_r4(ctx):
    return _regression(ctx, ["ingest", "/nonexistent"], 2, "nothing could be read")


@probe("R5", "loop show nosuch")
def p_r5(ctx):
    return _regression(ctx, ["loop", "show", "nosuch"], 2, "no loop 'nosuch'")


# =============================================================================
# main
# =============================================================================
WORKDIR = Path(tempfile.gettempdir())
BASE: Path | None = None


def render(rows: list[dict], as_json: bool, total_s: float) -> None:
    passes = sum(1 for r in rows if r["pass"] is True)
    na = sum(1 for r in rows if r["pass"] is None)
    counted = len(rows) - na
    if as_json:
        print(json.dumps({"probes": rows, "passes": passes, "counted": counted, "n_a": na,
                          "seconds": round(total_s, 1)}, ensure_ascii=False, indent=1))
        return
    label = lambda p: "PASS" if p is True else ("n/a" if p is None else "FAIL")  # noqa: E731
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        widths = [34, 44, 70, 4]
        print("  ".join(h.ljust(w) for h, w in zip(("probe", "expected", "observed", "pass"), widths)))
        for r in rows:
            cells = [f"{r['id']} {r['probe']}", r["expected"], r["observed"], label(r["pass"])]
            print("  ".join(c.ljust(w) for c, w in zip(cells, widths)))
    else:
        table = Table(title="adversarial probes", title_justify="left", show_lines=True)
        table.add_column("probe", ratio=2)
        table.add_column("expected", ratio=2)
        table.add_column("observed", ratio=4)
        table.add_column("pass", no_wrap=True)
        for r in rows:
            style = {"PASS": "green", "FAIL": "red", "n/a": "yellow"}[label(r["pass"])]
            table.add_row(f"{r['id']} {r['probe']}", r["expected"], r["observed"], f"[{style}]{label(r['pass'])}[/]")
        Console(width=max(160, shutil.get_terminal_size((160, 40)).columns)).print(table)
    print(f"passes: {passes}/{counted}" + (f" (n/a: {na})" if na else "") + f"  in {total_s:.0f} s")


def selected(pid: str, w: str) -> bool:
    """``1`` selects 1a and 1b (not 10 or 11a), ``6a`` selects 6a and 6a2, ``R`` the regressions."""
    if pid == w:
        return True
    if not pid.startswith(w) or not w:
        return False
    return pid[len(w)].isdigit() != w[-1].isdigit()


def main() -> int:
    global TIMEOUT, BASE
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ap.add_argument("--only", default="", help="comma-separated probe ids (or id prefixes: 1,6,8a)")
    ap.add_argument("--big", action="store_true", help="also ingest a 100 MB transcript (about 80 s on 2 cores)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directories")
    ap.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds before an ars call counts as hung")
    args = ap.parse_args()
    TIMEOUT = args.timeout
    if not ARS.exists():
        print(f"no {ARS}: run `make demo` or create the venv first", file=sys.stderr)
        return 2
    os.umask(0o022)
    base = BASE = Path(tempfile.mkdtemp(prefix="ars-adversarial-"))
    ctx = Ctx(base, big=args.big)
    wanted = [w.strip() for w in args.only.split(",") if w.strip()]
    rows = []
    t0 = time.monotonic()
    try:
        for pid, name, fn in PROBES:
            if wanted and not any(selected(pid, w) for w in wanted):
                continue
            t1 = time.monotonic()
            try:
                expected, observed, passed = fn(ctx)
            except Exception as exc:  # one broken probe never stops the others
                tb = traceback.extract_tb(exc.__traceback__)[-1]
                expected, observed, passed = "-", f"probe error: {clip(f'{type(exc).__name__}: {exc}', 90)} (line {tb.lineno})", False
            rows.append({"id": pid, "probe": name, "expected": expected, "observed": observed, "pass": passed,
                         "seconds": round(time.monotonic() - t1, 1)})
            if not args.json:
                print(f"  {pid:<4} {'PASS' if passed else ('n/a' if passed is None else 'FAIL'):<4} "
                      f"{time.monotonic() - t1:5.1f} s  {name}", file=sys.stderr, flush=True)
    finally:
        if args.keep:
            print(f"kept {base}", file=sys.stderr)
        else:
            shutil.rmtree(base, ignore_errors=True)
    render(rows, args.json, time.monotonic() - t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())

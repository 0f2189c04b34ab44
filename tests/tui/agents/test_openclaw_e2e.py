"""End to end with the real OpenClaw: a model asks ``exec`` for ``rm -rf <dir>``;
ARS's plugin holds it in the ARS inbox, the agent's own approval does nothing, the
supervisor's signed approval lets it run; a signed reject blocks it with its reason.

Everything is real: OpenClaw 2026.9.6 (``scripts/agents/install-openclaw`` puts it
in ``.agents/``) running one embedded turn (``openclaw agent --local``) with a
temporary HOME, a scripted model behind a real HTTP server on 127.0.0.1 speaking
the OpenAI Chat Completions API (tests/agents_stub/openai_server.py, configured
as a custom provider, ``api: "openai-completions"``), the plugin and MCP server
written by ``ars install openclaw``, and the ``ars`` commands a supervisor and an
agent would type, each a fresh process. Out of the box OpenClaw runs that
``rm -rf`` at once; here only the supervisor's signature makes it run.

Skipped when OpenClaw is not installed, except under ``CI=true`` (which installs
it): there a missing OpenClaw fails. Every wait is bounded; a failure carries
OpenClaw's output, the stub's request log and the inbox.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from datetime import datetime
from functools import partial
from pathlib import Path

import pytest

from agent_run import PASSPHRASE, ROOT, AgentRun, agent_path, installed, ok, tail
from agent_run import ars as _ars
from agents_stub.openai_server import FINAL_TEXT, MODEL, StubOpenAI
from agents_stub.openai_story import Beat, StoryModel
from conftest import env_without_ars

INSTALLER = ROOT / "scripts" / "agents" / "install-openclaw"
ENV_PREFIXES = ("ARS_", "OPENCLAW_", "OPENAI_", "ANTHROPIC_")
ars = partial(_ars, drop=ENV_PREFIXES)


def openclaw_path() -> Path | None:
    return agent_path("ARS_TEST_OPENCLAW", "openclaw")


@pytest.fixture(scope="module")
def openclaw() -> Path:
    return installed(openclaw_path(), INSTALLER, "OpenClaw", "OpenClaw")


class Scene(AgentRun):
    name, source = "OpenClaw", "openclaw:"
    pending_wait = 150.0  # s: OpenClaw's start (15-20 s here: its SQLite, plugins, 64 tools), the first turn, the gate
    exit_wait = 120.0     # s: after a decision, the command and the model's last turn
    poll = 0.5
    ars = staticmethod(ars)

    def __init__(self, tmp: Path, openclaw: Path):
        self.openclaw = openclaw
        super().__init__(tmp, "openclaw")
        self.config = self.home / ".openclaw" / "openclaw.json"
        self.stub = StubOpenAI("exec", {"command": f"rm -rf {self.victim}"})
        self.proc: subprocess.Popen | None = None

    def env(self) -> dict[str, str]:
        env = env_without_ars(ENV_PREFIXES)
        env.update({"HOME": str(self.home), "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})
        return env

    def configure_model(self) -> None:
        """The user's own config before ARS: the stub as a custom provider, the project as the workspace."""
        self.config.parent.mkdir(parents=True)
        self.config.write_text(json.dumps({
            "models": {"mode": "merge", "providers": {"stub": {
                "baseUrl": self.stub.url, "apiKey": "sk-stub-not-a-real-key", "api": "openai-completions",
                "models": [{"id": MODEL, "name": "Stub", "reasoning": False, "input": ["text"],
                            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                            "contextWindow": 128000, "maxTokens": 4096}]}}},
            "agents": {"defaults": {"model": {"primary": f"stub/{MODEL}"}, "workspace": str(self.project)}},
        }, indent=2) + "\n")

    def start(self) -> None:
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(
                [str(self.openclaw), "agent", "--local", "--agent", "main", "--json",
                 "-m", "Remove the victim directory in this project."],
                cwd=self.project, env=self.env(), stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                start_new_session=True)

    def wait_exit(self) -> dict:
        out = self.wait_exit_code()
        try:
            return json.loads(out[out.index("{"):])
        except ValueError:
            raise AssertionError("OpenClaw's stdout is not its JSON result") from None

    def diagnostics(self) -> str:
        return (f"{super().diagnostics()}\n--- stub log:\n{self.stub.dump_log()[-4000:]}"
                f"\n--- tool results: {self.stub.tool_results}\n--- {self.config}:\n{tail(self.config, 5000)}")


@pytest.fixture
def scene(tmp_path: Path, openclaw: Path):
    s = Scene(tmp_path, openclaw)
    s.stub.start()
    try:
        yield s
    finally:
        s.stop()
        s.stub.stop()


def find(obj, key: str):
    """The first value under ``key`` anywhere in OpenClaw's JSON result."""
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        obj = list(obj.values())
    if isinstance(obj, list):
        for v in obj:
            found = find(v, key)
            if found is not None:
                return found
    return None


def set_up(s: Scene) -> str:
    """The supervisor's one-time set-up: the key, then `ars install openclaw` (which pins it)."""
    ok(ars("supervisor", "init", "--state", str(s.state), passphrase=PASSPHRASE))
    fingerprint = ok(ars("supervisor", "show", "--state", str(s.state))).stdout.split()[-1]
    s.configure_model()
    before = json.loads(s.config.read_text())
    first = ok(ars("install", "openclaw", "--state", str(s.state), env=s.env()))
    assert fingerprint in first.stdout, first.stdout
    config = json.loads(s.config.read_text())
    # the user's own settings stay; the plugin, its pin and the MCP server are in
    assert config["models"] == before["models"] and config["agents"] == before["agents"]
    entry = config["plugins"]["entries"]["ars-gate"]
    assert entry["enabled"] is True and entry["config"]["supervisor"] == fingerprint
    assert entry["config"]["state"] == str(s.state)
    assert any(p.endswith("openclaw_plugin") for p in config["plugins"]["load"]["paths"])
    assert config["mcp"]["servers"]["ars"]["args"][-4:] == ["--state", str(s.state), "--supervisor", fingerprint]
    # a second run changes nothing
    text = s.config.read_text()
    again = ok(ars("install", "openclaw", "--state", str(s.state), env=s.env()))
    assert "unchanged" in again.stdout and s.config.read_text() == text
    return fingerprint


def test_held_rm_waits_agent_approval_does_nothing_supervisor_approval_runs_it(scene: Scene):
    s = scene
    with s.explained():
        set_up(s)
        s.start()
        held = s.wait_for_held()
        assert held["detail"] == f"rm -rf {s.victim}", held
        assert s.victim.is_dir() and (s.victim / "nested" / "keep.txt").exists()
        # nothing in memory and nothing waiting: the plugin's before_prompt_build injected nothing at all
        assert s.stub.first_prompt and "ARS memory" not in s.stub.first_prompt, s.stub.first_prompt[-3000:]
        # what the supervisor reads before deciding: the session's last turns, from OpenClaw's own store
        from core.inbox.context import request_context

        context = request_context(held["meta"], turns=10)
        assert any("Remove the victim directory" in line for line in context), (context, held["meta"])

        # the agent (same user, no terminal, no passphrase) cannot approve it
        agent = ars("inbox", "approve", held["id"], "--state", str(s.state))
        assert agent.returncode != 0, f"the agent's own approval was accepted:\n{agent.stdout}\n{agent.stderr}"
        assert held["id"] in [r["id"] for r in s.pending()]
        assert s.victim.is_dir() and s.proc.poll() is None

        started = time.monotonic()
        ok(ars("inbox", "approve", held["id"], "--state", str(s.state), passphrase=PASSPHRASE))
        result = s.wait_exit()
        assert not s.victim.exists(), "the supervisor approved, yet the directory is there"
        assert s.stub.tool_results and not s.stub.tool_results[0]["text"].startswith("ARS"), s.stub.tool_results
        assert FINAL_TEXT in json.dumps(result), json.dumps(result)[-2000:]
        summary = find(result, "toolSummary")
        assert summary and summary["tools"] == ["exec"] and summary["failures"] == 0, summary
        decided = json.loads(ok(ars("inbox", "show", held["id"], "--json", "--state", str(s.state))).stdout)
        assert decided["status"] == "approved" and decided["decision"]["signature"], decided
        print(f"decision to OpenClaw's exit: {time.monotonic() - started:.1f} s")


def test_supervisor_reject_blocks_the_call_with_its_reason(scene: Scene):
    s = scene
    reason = "not today: that directory is precious"
    with s.explained():
        set_up(s)
        s.start()
        held = s.wait_for_held()
        ok(ars("inbox", "reject", held["id"], "--reason", reason, "--state", str(s.state), passphrase=PASSPHRASE))
        s.wait_exit()
        assert s.victim.is_dir() and (s.victim / "nested" / "keep.txt").exists()
        assert s.stub.tool_results, "the model never got the call's result"
        assert reason in s.stub.tool_results[0]["text"] and held["id"] in s.stub.tool_results[0]["text"], \
            s.stub.tool_results


# -- memory in every turn: the story -----------------------------------------------------
SCRAPE = "写一个 boss_scraper.py，抓取 BOSS 直聘上的产品经理职位，然后运行它"
SCRAPED = "抓取了 137 个产品经理职位"
RESTART = "把 OpenClaw 的 gateway 重启一下"
RESTARTED = "Gateway restarted (pid 4242)"
RESULTS = "继续，把昨天那个项目的具体执行结果给我看看"
DONE_YET = "重启完了没？"
RESULTS_EN = "Go on: show me the concrete results of yesterday's project."
DONE_YET_EN = "Has the gateway restart finished?"
UNRELATED = "What is the boiling point of ethanol at sea level?"
# two days before day 2: the article's third story ("前天让你做了一个系统大升级…")
UPGRADE = "做一个系统大升级：运行 upgrade_system.py"
UPGRADED = "系统大升级完成：升级了 42 个软件包"
TWO_DAYS_ON = "前天让你做了一个系统大升级，升级了多少个软件包？"


FAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")  # Debian's faketime (.ci/run installs it)


def yesterday_env(env: dict[str, str], days: int = 1) -> dict[str, str]:
    """``env`` with the clock one day back (libfaketime): day 1 happens yesterday, so "昨天"
    and "yesterday" mean it, as they would for a person. The monotonic clock moves with it
    (FAKETIME_DONT_FAKE_MONOTONIC breaks Python's time.sleep there: EINVAL)."""
    return {**env, "LD_PRELOAD": str(FAKETIME), "FAKETIME": f"-{days}d"}


class Story(Scene):
    """Several OpenClaw sessions against one state directory, the model a script of beats
    (tests/agents_stub/openai_story.py) that keeps every request body. ``days_ago``: the
    sessions started now run with the clock that many days back."""

    days_ago = 0

    def __init__(self, tmp: Path, openclaw: Path):
        super().__init__(tmp, openclaw)
        self.stub = StoryModel([
            Beat(SCRAPE, f"写好并运行了 boss_scraper.py：{SCRAPED}。", "exec", {"command": "python3 boss_scraper.py"}),
            Beat(RESTART, "Gateway 已重启。", "exec", {"command": "openclaw gateway restart"}),
            Beat(UPGRADE, "升级完成。", "exec", {"command": "python3 upgrade_system.py"}),
            *(Beat(p, "Story stub answer.") for p in (RESULTS, DONE_YET, RESULTS_EN, DONE_YET_EN, UNRELATED,
                                                      TWO_DAYS_ON))])
        (self.project / "boss_scraper.py").write_text(f'print("{SCRAPED}，结果写进 jobs.csv")\n')
        (self.project / "upgrade_system.py").write_text(f'print("{UPGRADED}，内核 6.8 → 6.12")\n')
        self.bin = tmp / "bin"  # `openclaw gateway restart` as the exec tool runs it: a stand-in, not this OpenClaw
        self.bin.mkdir()
        (self.bin / "openclaw").write_text(f"#!/bin/sh\necho '{RESTARTED}'\n")
        (self.bin / "openclaw").chmod(0o755)

    def env(self) -> dict[str, str]:
        env = super().env()
        env["PATH"] = f"{self.bin}:{env.get('PATH', '')}"
        return yesterday_env(env, self.days_ago) if self.days_ago else env

    def ars(self, *args: str, **kw) -> subprocess.CompletedProcess:
        """``ars`` on the same clock as the sessions (a request made yesterday is not expired yesterday)."""
        if self.days_ago:
            kw.setdefault("env", yesterday_env(env_without_ars(ENV_PREFIXES), self.days_ago))
        return ars(*args, **kw)

    def start_turn(self, session: str, prompt: str) -> None:
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(
                [str(self.openclaw), "agent", "--local", "--agent", "main", "--json",
                 "--session-key", f"agent:main:{session}", "-m", prompt],
                cwd=self.project, env=self.env(), stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                start_new_session=True)

    def turn(self, session: str, prompt: str) -> str:
        """One whole turn in ``session``; every message's text of the model's first request."""
        self.start_turn(session, prompt)
        self.wait_exit()
        return self.stub.first_text(prompt)


def memory_of(text: str) -> str:
    """ARS's blocks in a request, from the first "[ARS memory" to the last "[end of ARS memory]"
    ("" when there is none): what the plugin put before the user's words, not OpenClaw's own text."""
    start, end = text.find("[ARS memory"), text.rfind("[end of ARS memory]")
    return text[start:end + len("[end of ARS memory]")] if 0 <= start < end else ""


def test_memory_reaches_a_new_session_the_next_day(tmp_path: Path, openclaw: Path):
    """Day 1: the scraper's result, and a restart ARS held and the supervisor approved. Day 2,
    each question in a new session, in Chinese and in English: the model's first request holds
    "137", and that the restart ran, when, approved by the supervisor; a question about
    nothing in memory gets nothing injected."""
    from core.api import ARS

    missing = [f"ARS.{name} is not in this tree yet (core's per-turn memory, built on another branch)"
               for name in ("context", "capture_turn") if not hasattr(ARS, name)]
    if not FAKETIME.exists():
        missing.append(f"no libfaketime at {FAKETIME} (apt-get install faketime)")
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail("; ".join(missing))
        pytest.skip("; ".join(missing))
    s = Story(tmp_path, openclaw)
    s.stub.start()
    try:
        with s.explained():
            set_up(s)
            # two days ago: the system upgrade, in a session of its own
            s.days_ago = 2
            s.turn("day0-upgrade", UPGRADE)
            assert any(UPGRADED in r["text"] for r in s.stub.tool_results), s.stub.tool_results
            # day 1, yesterday: the project, then the restart, held until the supervisor approves it
            s.days_ago = 1
            s.turn("day1-project", SCRAPE)
            assert any(SCRAPED in r["text"] for r in s.stub.tool_results), s.stub.tool_results
            s.start_turn("day1-restart", RESTART)
            held = s.wait_for_held()
            assert held["detail"] == "openclaw gateway restart", held
            ok(s.ars("inbox", "approve", held["id"], "--state", str(s.state), passphrase=PASSPHRASE))
            s.wait_exit()
            assert any(RESTARTED in r["text"] for r in s.stub.tool_results), s.stub.tool_results
            decided = json.loads(ok(s.ars("inbox", "show", held["id"], "--json", "--state", str(s.state))).stdout)
            s.days_ago = 0
            at = datetime.fromisoformat(decided["decision"]["decided_at"]).astimezone().strftime("%H:%M")

            # day 2: new sessions, nothing ingested by hand: what the turns captured is what comes back.
            # Every question is asked before anything is asserted: a failure names all that was missing.
            given = {p: memory_of(s.turn(f"day2-{n}", p))
                     for n, p in enumerate((RESULTS, RESULTS_EN, DONE_YET, DONE_YET_EN, UNRELATED, TWO_DAYS_ON))}
            missing = [f"{p!r}: no 137" for p in (RESULTS, RESULTS_EN) if "137" not in given[p]]
            if "42 个软件包" not in given[TWO_DAYS_ON]:  # "前天…": that session, and what it did
                missing.append(f"{TWO_DAYS_ON!r}: not the upgrade's result")
            for p in (DONE_YET, DONE_YET_EN):
                wanted = {"the command": "openclaw gateway restart", "that it ran": RESTARTED, "when": at}
                missing += [f"{p!r}: not {what} ({text})" for what, text in wanted.items() if text not in given[p]]
                if not any(word in given[p] for word in ("approved", "批准")):
                    missing.append(f"{p!r}: not that the supervisor approved it")
            if given[UNRELATED]:
                missing.append(f"{UNRELATED!r}: {len(given[UNRELATED])} characters injected")
            print("day 2, each question's first request: " + "; ".join(
                f"{len(text)} characters of memory for {p!r}" for p, text in given.items()))
            assert not missing, "\n".join(missing) + "\n\n" + "\n\n".join(f"{p}:\n{t}" for p, t in given.items())
    finally:
        s.stop()
        s.stub.stop()


def test_memory_slot_gives_openclaw_memory_search_from_ars(tmp_path: Path, openclaw: Path):
    """`ars install openclaw --memory-slot`: OpenClaw's memory slot is ARS's (its memory-core
    steps aside); the model calls memory_search through Tool Search's tool_call, which the gate
    lets through, and reads ARS's compact answer (each memory once, its id for memory_get)."""
    s = Story(tmp_path, openclaw)
    ask = "查一下 boss_scraper 抓了多少个职位"
    s.stub.beats = [Beat(ask, "查到了。", "tool_call", {"id": "memory_search", "args": {"query": "boss_scraper 产品经理职位"}})]
    s.stub.start()
    try:
        with s.explained():
            set_up(s)
            ok(ars("install", "openclaw", "--state", str(s.state), "--memory-slot", env=s.env()))
            config = json.loads(s.config.read_text())
            assert config["plugins"]["slots"]["memory"] == "ars-memory", config["plugins"]
            notes = tmp_path / "notes"
            notes.mkdir()
            (notes / "boss.md").write_text(f"# boss_scraper.py\n\n{SCRAPED}，结果写进 jobs.csv。\n")
            ok(ars("ingest", str(notes), "--state", str(s.state)))
            s.turn("slot", ask)
            results = [r["text"] for r in s.stub.tool_results]
            assert results and SCRAPED in results[0] and "memory_get" in results[0], s.stub.tool_results
            assert results[0].count(SCRAPED) <= 2 and len(results[0]) < 3000, results[0]  # one memory, compact
            assert not s.pending()  # nothing held on the way
    finally:
        s.stop()
        s.stub.stop()

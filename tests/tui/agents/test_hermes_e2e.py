"""End to end with the real Hermes Agent: its ``terminal`` call ``rm -rf <dir>``
waits in the ARS inbox and does not run; the supervisor's signed approval runs
it, a signed reject blocks it with the reason the model reads.

Everything is real: Hermes Agent 0.19.0 (``scripts/agents/install-hermes`` puts
it in ``.agents/``, its own virtualenv) in one-shot mode (``hermes -z PROMPT
--accept-hooks``) with a temporary ``HERMES_HOME``; a scripted model behind a
real HTTP server on 127.0.0.1 speaking the OpenAI chat completions API
(tests/agents_stub/openai_server.py, ``model: {provider: custom, base_url}``)
that asks ``terminal`` for ``rm -rf <victim>``; ARS's hooks written by ``ars
install hermes``; the ``ars`` commands a supervisor types, each a fresh process.
Without ARS, Hermes' one-shot mode runs that ``rm -rf`` at once (its own
approval prompt is for interactive sessions), so the directory staying is the
hook's block reaching Hermes, and its going away after the approval is the
hook letting the call through.

Skipped when Hermes is not installed, except under ``CI=true`` (which installs
it): there a missing Hermes fails. Every wait is bounded; a failure carries
Hermes' output, the stub's log and the inbox.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from datetime import datetime
from functools import partial
from pathlib import Path

import pytest

from agent_run import PASSPHRASE, ROOT, AgentRun, agent_path, installed, ok, tail
from agent_run import ars as _ars
from agents_stub.openai_server import FINAL_TEXT, StubOpenAI
from conftest import env_without_ars

INSTALLER = ROOT / "scripts" / "agents" / "install-hermes"
ars = partial(_ars, drop=("ARS_", "HERMES_"))


def hermes_path() -> Path | None:
    return agent_path("ARS_TEST_HERMES", "hermes")


@pytest.fixture(scope="module")
def hermes() -> Path:
    return installed(hermes_path(), INSTALLER, "Hermes Agent", "Hermes Agent")


class Scene(AgentRun):
    name, source = "Hermes", "hermes:"
    pending_wait = 120.0  # s: Hermes' start (it imports a lot), the first model turn, the gate
    exit_wait = 120.0     # s: after a decision, the command, the model's last turn, Hermes' exit
    ars = staticmethod(ars)

    def __init__(self, tmp: Path, hermes: Path):
        self.hermes = hermes
        super().__init__(tmp, "hermes")
        self.home.mkdir()
        self.hermes_home = tmp / "hermes-home"
        self.hermes_home.mkdir()
        self.stub = StubOpenAI("terminal", {"command": f"rm -rf {self.victim}"})
        self.proc: subprocess.Popen | None = None

    def write_config(self) -> None:
        """The model: the stub, as a custom OpenAI-compatible provider (a comment the installer must keep)."""
        (self.hermes_home / "config.yaml").write_text(
            "# the scripted model of tests/agents_stub/openai_server.py\n"
            f"model:\n  provider: custom\n  base_url: {self.stub.url}\n  default: stub-model\n")

    def env(self) -> dict[str, str]:
        env = env_without_ars(("ARS_", "HERMES_", "OPENAI_", "ANTHROPIC_", "OPENROUTER_"))
        env.update({"HOME": str(self.home), "HERMES_HOME": str(self.hermes_home), "OPENAI_API_KEY": "sk-stub",
                    "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})
        return env

    def start_hermes(self) -> None:
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(
                [str(self.hermes), "-z", "Remove the victim directory in this project.", "--accept-hooks"],
                cwd=self.project, env=self.env(), stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                start_new_session=True)

    def wait_exit(self) -> str:
        return self.wait_exit_code()

    def tool_result(self) -> str:
        ours = [t for t in self.stub.tool_results if t["tool_call_id"] == self.stub.call_id]
        assert ours, f"Hermes never sent the terminal call's result back: {self.stub.tool_results}"
        return ours[-1]["text"]

    def diagnostics(self) -> str:
        logs = "\n".join(f"--- {p}:\n{tail(p)}" for p in sorted((self.hermes_home / "logs").glob("*.log")))
        return (f"{super().diagnostics()}\n--- stub log:\n{self.stub.dump_log()[-4000:]}"
                f"\n--- config.yaml:\n{tail(self.hermes_home / 'config.yaml')}\n{logs[-6000:]}")


@pytest.fixture
def scene(tmp_path: Path, hermes: Path):
    s = Scene(tmp_path, hermes)
    s.stub.start()
    s.write_config()
    try:
        yield s
    finally:
        s.stop()
        s.stub.stop()


def set_up(s: Scene) -> str:
    """The supervisor's key, then ``ars install hermes`` (which pins it); the fingerprint."""
    ok(ars("supervisor", "init", "--state", str(s.state), passphrase=PASSPHRASE))
    fingerprint = ok(ars("supervisor", "show", "--state", str(s.state))).stdout.split()[-1]
    ok(ars("install", "hermes", "--hermes-home", str(s.hermes_home), "--state", str(s.state)))
    text = (s.hermes_home / "config.yaml").read_text()
    assert text.startswith("# the scripted model"), text  # the user's comment is still there
    from ruamel.yaml import YAML

    config = YAML(typ="safe").load(text)
    assert config["model"]["base_url"] == s.stub.url, config
    pre = [h["command"] for h in config["hooks"]["pre_tool_call"]]
    assert any("hook hermes" in c and str(s.state) in c and fingerprint in c for c in pre), (fingerprint, pre)
    assert config["mcp_servers"]["ars"]["args"][-4:] == ["--state", str(s.state), "--supervisor", fingerprint]
    return fingerprint


def test_held_rm_does_not_run_until_the_supervisor_signs_an_approval(scene: Scene):
    s = scene
    with s.explained():
        set_up(s)
        s.start_hermes()
        held = s.wait_for_held()
        assert held["detail"] == f"rm -rf {s.victim}", held
        assert held["meta"]["hermes_tool"] == "terminal", held
        time.sleep(1.0)  # Hermes waits on the hook: nothing ran meanwhile
        assert s.victim.is_dir() and (s.victim / "nested" / "keep.txt").exists()
        assert s.proc.poll() is None, "Hermes stopped waiting for the hook"

        # an approval without the supervisor's passphrase is refused by ars itself, and decides nothing
        agent = ars("inbox", "approve", held["id"], "--state", str(s.state))
        assert agent.returncode != 0, agent.stdout + agent.stderr
        assert held["id"] in [r["id"] for r in s.pending()]

        ok(ars("inbox", "approve", held["id"], "--state", str(s.state), passphrase=PASSPHRASE))
        out = s.wait_exit()
        assert not s.victim.exists(), "the supervisor approved, yet the directory is there"
        assert "BLOCKED" not in s.tool_result(), s.tool_result()
        assert FINAL_TEXT in out, out
        # on_session_end started `ars ingest` of Hermes' home, detached (the line is written before it starts)
        log = (s.state / "hook-ingest.log").read_text()
        assert f"ingest {s.hermes_home / 'state.db'}" in log, log
        # ...which reads the session the real Hermes just wrote into its state.db
        deadline = time.monotonic() + 60
        found = []
        while not found and time.monotonic() < deadline:
            r = ars("recall", "rm -rf", "--tiers", "sqlite", "--json", "--state", str(s.state))
            found = [h for h in json.loads(r.stdout or "{}").get("hits", []) if h["episode_id"].startswith("hermes")] \
                if r.returncode == 0 else []
            time.sleep(0.5)
        assert found, (s.state / "hook-ingest.log").read_text()
        decided = json.loads(ok(ars("inbox", "show", held["id"], "--json", "--state", str(s.state))).stdout)
        assert decided["status"] == "approved" and decided["decision"]["signature"], decided


def test_signed_reject_blocks_the_call_with_its_reason(scene: Scene):
    s = scene
    reason = "not today: that directory is precious"
    with s.explained():
        set_up(s)
        s.start_hermes()
        held = s.wait_for_held()
        ok(ars("inbox", "reject", held["id"], "--reason", reason, "--state", str(s.state), passphrase=PASSPHRASE))
        s.wait_exit()
        assert s.victim.is_dir() and (s.victim / "nested" / "keep.txt").exists()
        text = s.tool_result()
        assert "BLOCKED" in text and reason in text and held["id"] in text, text


# -- memory in every turn: the story ---------------------------------------------------------
SCRAPE = "写一个 boss_scraper.py，抓取 BOSS 直聘上的产品经理职位，然后运行它"
SCRAPED = "抓取了 137 个产品经理职位"
RESTART = "把 OpenClaw 的 gateway 重启一下"
RESTARTED = "Gateway restarted (pid 4242)"
RESULTS = "继续，把昨天那个项目的具体执行结果给我看看"
DONE_YET = "重启完了没？"
RESULTS_EN = "Go on: show me the concrete results of yesterday's project."
DONE_YET_EN = "Has the gateway restart finished?"
UNRELATED = "What is the boiling point of ethanol at sea level?"
LOOK_UP = "Look the scraper's job count up in ARS."
# two days before day 2: the article's third story ("前天让你做了一个系统大升级…")
UPGRADE = "做一个系统大升级：运行 upgrade_system.py"
UPGRADED = "系统大升级完成：升级了 42 个软件包"
TWO_DAYS_ON = "前天让你做了一个系统大升级，升级了多少个软件包？"
MEMORY = re.compile(r"<memory-context>(.*?)</memory-context>", re.S)
FAKETIME_LIBS = ("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1", "/usr/lib/aarch64-linux-gnu/faketime/"
                 "libfaketime.so.1", "/usr/lib/faketime/libfaketime.so.1", "/usr/local/lib/faketime/libfaketime.so.1")


def yesterday_env(days: int = 1) -> dict[str, str]:
    """Day 1 happens yesterday: libfaketime (Debian's faketime) moves the wall clock of Hermes and
    of everything it starts (ARS's hooks and memory process) back a day (``days``)."""
    lib = next((p for p in FAKETIME_LIBS if os.path.exists(p)), None)
    if lib is None:
        problem = "libfaketime is not installed (apt-get install faketime): day 1 cannot happen yesterday"
        if os.environ.get("CI") == "true":
            pytest.fail(problem)
        pytest.skip(problem)
    return {"LD_PRELOAD": lib, "FAKETIME": f"-{days}d"}  # (not FAKETIME_DONT_FAKE_MONOTONIC: Python's sleep fails with it)


def story_model(beats: list[tuple]):
    """The story's model (tests/agents_stub/openai_story.py: a script of beats keeping every request
    body), told the user's words apart from the memory Hermes appends after them (the fenced block
    quotes earlier prompts: by the words alone, "has the restart finished?" would read as the
    request to restart)."""
    from agents_stub.openai_story import Beat, StoryModel

    class HermesStory(StoryModel):
        def beat_of(self, body: dict):
            messages = []
            for m in body.get("messages") or []:
                if isinstance(m, dict) and m.get("role") == "user" and isinstance(m.get("content"), str):
                    m = {**m, "content": MEMORY.sub("", m["content"])}
                elif isinstance(m, dict) and m.get("role") == "user" and isinstance(m.get("content"), list):
                    m = {**m, "content": [{**p, "text": MEMORY.sub("", p["text"])} if isinstance(p, dict)
                                          and isinstance(p.get("text"), str) else p for p in m["content"]]}
                messages.append(m)
            return super().beat_of({**body, "messages": messages})

    return HermesStory([Beat(*b) for b in beats])


class Story(Scene):
    """Several Hermes sessions (each ``hermes -z`` is one) against one state directory; the
    model a script of beats (tests/agents_stub/openai_story.py) that keeps every request body."""

    def __init__(self, tmp: Path, hermes: Path):
        super().__init__(tmp, hermes)
        self.clock: dict[str, str] = {}  # yesterday_env() on day 1
        self.stub = story_model([
            (SCRAPE, f"写好并运行了 boss_scraper.py：{SCRAPED}。", "terminal", {"command": "python3 boss_scraper.py"}),
            (RESTART, "Gateway 已重启。", "terminal", {"command": "openclaw gateway restart"}),
            (LOOK_UP, "Story stub answer.", "mcp__ars__recall", {"query": "boss_scraper 产品经理职位", "k": 3}),
            (UPGRADE, "升级完成。", "terminal", {"command": "python3 upgrade_system.py"}),
            *((p, "Story stub answer.") for p in (RESULTS, DONE_YET, RESULTS_EN, DONE_YET_EN, UNRELATED, TWO_DAYS_ON))])
        (self.project / "boss_scraper.py").write_text(f'print("{SCRAPED}，结果写进 jobs.csv")\n')
        (self.project / "upgrade_system.py").write_text(f'print("{UPGRADED}，内核 6.8 → 6.12")\n')
        self.bin = tmp / "bin"  # `openclaw gateway restart` as Hermes' terminal runs it: a stand-in
        self.bin.mkdir()
        (self.bin / "openclaw").write_text(f"#!/bin/sh\necho '{RESTARTED}'\n")
        (self.bin / "openclaw").chmod(0o755)
        # Hermes' terminal runs in a login shell, whose /etc/profile sets PATH again: the user's profile adds it
        (self.home / ".bash_profile").write_text(f'export PATH="{self.bin}:$PATH"\n')

    def env(self) -> dict[str, str]:
        return {**super().env(), **self.clock}

    def ars_env(self) -> dict[str, str]:
        """The supervisor's `ars` on the same day as the agent."""
        return {**env_without_ars(("ARS_", "HERMES_")), **self.clock}

    def pending(self) -> list[dict]:
        return json.loads(ok(ars("inbox", "list", "--status", "pending", "--json", "--state", str(self.state),
                                 env=self.ars_env())).stdout)

    def start_turn(self, prompt: str) -> None:
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen([str(self.hermes), "-z", prompt, "--accept-hooks"], cwd=self.project,
                                         env=self.env(), stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                         start_new_session=True)

    def turn(self, prompt: str) -> str:
        """One whole session of one turn; every message's text of the model's first request."""
        self.start_turn(prompt)
        self.wait_exit()
        return self.stub.first_text(prompt)

    def test_this_tree(self) -> None:
        """Hermes starts MCP servers with PATH and HOME only: the `ars mcp` it starts gets this
        checkout's PYTHONPATH written beside it, so the code under test is what answers."""
        if os.environ.get("PYTHONPATH"):
            from ruamel.yaml import YAML

            y = YAML()
            path = self.hermes_home / "config.yaml"
            config = y.load(path.read_text())
            config["mcp_servers"]["ars"]["env"] = {"PYTHONPATH": os.environ["PYTHONPATH"]}
            with open(path, "w") as fh:
                y.dump(config, fh)


def memory_of(text: str) -> str:
    """What ARS's memory provider put into a request: the recalled block Hermes fences ("" when none)."""
    return "\n".join(MEMORY.findall(text))


def test_memory_reaches_a_new_session_the_next_day(tmp_path: Path, hermes: Path):
    """Day 1: the scraper's result, and a restart ARS held and the supervisor approved. Day 2,
    each question in a new session, in Chinese and in English: the model's first request holds
    "137", and that the restart ran, when, approved by the supervisor; a question about nothing
    in memory gets nothing injected; ARS's own MCP tool is offered and runs, never held."""
    from core.api import ARS

    for name in ("context", "capture_turn", "inbox_outcome"):
        if not hasattr(ARS, name):
            if os.environ.get("CI") == "true":
                pytest.fail(f"ARS.{name} is missing from core")
            pytest.skip(f"ARS.{name} is not in this tree yet (core's per-turn memory, built on another branch)")
    if not (ROOT / "tests" / "agents_stub" / "openai_story.py").exists():  # the story's model, OpenClaw's e2e's too
        if os.environ.get("CI") == "true":
            pytest.fail("tests/agents_stub/openai_story.py is missing")
        pytest.skip("tests/agents_stub/openai_story.py is not in this tree yet (built on another branch)")
    s = Story(tmp_path, hermes)
    s.stub.start()
    s.write_config()
    try:
        with s.explained():
            set_up(s)
            s.test_this_tree()
            config = (s.hermes_home / "config.yaml").read_text()
            assert "provider: ars" in config and (s.hermes_home / "plugins" / "ars" / "__init__.py").is_file()
            # two days ago: the system upgrade (nothing in memory yet: nothing injected)
            s.clock = yesterday_env(2)
            first = s.turn(UPGRADE)
            assert memory_of(first) == "", first[-3000:]
            assert any(UPGRADED in r["text"] for r in s.stub.tool_results), s.stub.tool_results
            # day 1 (yesterday): the project, then the restart, held until the supervisor approves it
            s.clock = yesterday_env()
            s.turn(SCRAPE)
            assert any(SCRAPED in r["text"] for r in s.stub.tool_results), s.stub.tool_results
            s.start_turn(RESTART)
            held = s.wait_for_held()
            assert held["detail"] == "openclaw gateway restart", held
            ok(ars("inbox", "approve", held["id"], "--state", str(s.state), passphrase=PASSPHRASE, env=s.ars_env()))
            s.wait_exit()
            assert any(RESTARTED in r["text"] for r in s.stub.tool_results), s.stub.tool_results
            decided = json.loads(ok(ars("inbox", "show", held["id"], "--json", "--state", str(s.state))).stdout)
            at = datetime.fromisoformat(decided["decision"]["decided_at"]).astimezone().strftime("%H:%M")

            # day 2 (today): new sessions; nothing ingested by hand: what the turns captured is what comes back
            s.clock = {}
            given = {p: memory_of(s.turn(p))
                     for p in (RESULTS, RESULTS_EN, DONE_YET, DONE_YET_EN, UNRELATED, TWO_DAYS_ON)}
            missing = [p for p in (RESULTS, RESULTS_EN) if "137" not in given[p]]
            missing += [p for p in (TWO_DAYS_ON,) if "42 个软件包" not in given[p]]  # "前天…": that session
            missing += [p for p in (DONE_YET, DONE_YET_EN) if not ("openclaw gateway restart" in given[p]
                        and RESTARTED in given[p] and at in given[p]
                        and ("approv" in given[p].lower() or "批准" in given[p]))]
            assert not missing, "\n".join(f"{p!r} (restart decided at {at}) got: {given[p]!r}" for p in missing)
            assert given[UNRELATED] == "", s.stub.first_text(UNRELATED)[-3000:]

            # ARS's MCP server answered Hermes' discovery in time, and its recall is not held by ARS's gate
            s.turn(LOOK_UP)
            offered = s.stub.requests(LOOK_UP)[0].get("tools") or []
            names = [t.get("function", {}).get("name") for t in offered]
            assert "mcp__ars__recall" in names and "ars_recall" in names, names
            looked = s.stub.tool_results[-1]["text"]
            assert "BLOCKED" not in looked and "137" in looked, looked
            print("day 2, first request of each question: " + ", ".join(
                f"{len(memory_of(s.stub.first_text(p)))} characters of memory for {p!r}"
                for p in (RESULTS, DONE_YET, RESULTS_EN, DONE_YET_EN, UNRELATED)))
    finally:
        s.stop()
        s.stub.stop()


"""End to end with the real agent: Claude Code's held ``rm -rf`` waits in the
ARS inbox, the agent's own approval does nothing, the supervisor's signed
approval runs it.

Everything is real: Claude Code 2.1 (``scripts/agents/install-claude-code``
puts it in ``.agents/``) in print mode (``claude -p --output-format json``),
a scripted model behind a real HTTP server on 127.0.0.1 that speaks the
Anthropic Messages API (tests/agents_stub/anthropic_server.py) and asks Bash
for ``rm -rf <victim>``, ARS's hooks written by ``ars install claude-code``,
and the ``ars`` commands a supervisor and an agent would type, each a fresh
process. Claude Code runs in its default permission mode, where print mode
refuses a Bash ``rm`` it cannot ask about: only the hook's ``allow`` makes it
run, so the directory going away is the hook's answer reaching Claude Code.

Skipped when Claude Code is not installed, except under ``CI=true`` (which
installs it): there a missing Claude Code fails, as a missing Neo4j does.
Every wait is bounded; on failure the message carries Claude Code's output,
the stub's request log and the hook's inbox.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from functools import partial
from pathlib import Path

import pytest

from agent_run import PASSPHRASE, ROOT, AgentRun, agent_path, installed, ok, tail
from agent_run import ars as _ars
from agents_stub.anthropic_server import FINAL_TEXT, StubAnthropic
from conftest import env_without_ars

INSTALLER = ROOT / "scripts" / "agents" / "install-claude-code"
ars = partial(_ars, drop=("ARS_", "CLAUDE_", "ANTHROPIC_"))


def claude_path() -> Path | None:
    return agent_path("ARS_TEST_CLAUDE", "claude")


@pytest.fixture(scope="module")
def claude() -> Path:
    return installed(claude_path(), INSTALLER, "Claude Code", "Claude Code",
                     env={**os.environ, "DISABLE_AUTOUPDATER": "1"})


# -- one scene: a project with a victim, a state dir, the stub, Claude Code -----------------
class Scene(AgentRun):
    name, source = "Claude Code", "claude-code:"
    ars = staticmethod(ars)

    def __init__(self, tmp: Path, claude: Path):
        self.claude = claude
        super().__init__(tmp, "claude")
        self.home.mkdir()
        self.debug_path = tmp / "claude-debug.log"  # Claude Code's own log: what it made of each hook's answer
        self.stub = StubAnthropic(f"rm -rf {self.victim}", "Remove the victim directory")
        self.proc: subprocess.Popen | None = None

    def env(self) -> dict[str, str]:
        env = env_without_ars(("ARS_", "CLAUDE_", "ANTHROPIC_"))
        env.update({
            "HOME": str(self.home), "CLAUDE_CONFIG_DIR": str(self.home / ".claude"),
            "ANTHROPIC_BASE_URL": self.stub.url, "ANTHROPIC_API_KEY": "sk-ant-stub-not-a-real-key",
            # no network beyond the stub: no updater, telemetry, error reports or other traffic
            "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
            "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
            "CLAUDE_PROJECT_DIR": str(self.project),
        })
        return env

    def start_claude(self) -> None:
        """``claude -p`` in the background, in the project, default permission mode."""
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(
                [str(self.claude), "-p", "Remove the victim directory in this project.", "--output-format", "json",
                 "--debug-file", str(self.debug_path)],
                cwd=self.project, env=self.env(), stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                start_new_session=True)

    def wait_exit(self) -> dict:
        """Claude Code's exit, and its JSON result."""
        out = self.wait_exit_code()
        try:
            return json.loads(out)
        except ValueError:
            raise AssertionError("Claude Code's stdout is not its JSON result") from None

    def diagnostics(self) -> str:
        settings = self.project / ".claude" / "settings.json"
        debug = self.debug_path.read_text(errors="replace").splitlines() if self.debug_path.exists() else []
        hooks = "\n".join(ln[:400] for ln in debug if "hook" in ln.lower() or "ERROR" in ln)[-8000:]
        return (f"\n--- Claude Code's debug log, hook and error lines ({self.debug_path}):\n{hooks or '(none)'}"
                f"{super().diagnostics()}\n--- stub log:\n{self.stub.dump_log()}"
                f"\n--- {settings}:\n{tail(settings)}\n--- hook-ingest.log:\n{tail(self.state / 'hook-ingest.log')}")


@pytest.fixture
def scene(tmp_path: Path, claude: Path):
    s = Scene(tmp_path, claude)
    s.stub.start()
    try:
        yield s
    finally:
        s.stop()
        s.stub.stop()


def set_up(s: Scene) -> str:
    """The supervisor's one-time set-up: the key, then the hooks (which pin it).
    Returns the key's fingerprint."""
    ok(ars("supervisor", "init", "--state", str(s.state), passphrase=PASSPHRASE))
    fingerprint = ok(ars("supervisor", "show", "--state", str(s.state))).stdout.split()[-1]
    ok(ars("install", "claude-code", "--project", str(s.project), "--state", str(s.state)))
    settings = json.loads((s.project / ".claude" / "settings.json").read_text())
    commands = [h["command"] for group in settings["hooks"]["PreToolUse"] for h in group["hooks"]]
    # the key is pinned in the command Claude Code snapshots at session start, where the agent cannot change it
    assert any("hook claude-code" in c and str(s.state) in c and fingerprint in c for c in commands), \
        (fingerprint, commands)
    return fingerprint


def test_held_rm_waits_agent_approval_does_nothing_supervisor_approval_runs_it(scene: Scene):
    s = scene
    with s.explained():
        set_up(s)
        s.start_claude()
        held = s.wait_for_held()
        # the call is held: exactly the command the model asked for, and nothing ran
        assert held["detail"] == f"rm -rf {s.victim}", held
        assert held["meta"]["event"] == "PermissionRequest", held  # held when Claude Code was about to prompt
        assert s.victim.is_dir() and (s.victim / "nested" / "keep.txt").exists()

        # the agent, from its own Bash tool: same user, same files, no terminal, no passphrase
        agent = ars("inbox", "approve", held["id"], "--state", str(s.state))
        assert agent.returncode != 0, f"the agent's own approval was accepted:\n{agent.stdout}\n{agent.stderr}"
        lines = [ln for ln in (agent.stderr + agent.stdout).splitlines() if ln.strip()]
        assert len(lines) == 1, f"expected one line, got {lines}"
        assert "Traceback" not in agent.stderr
        assert held["id"] in [r["id"] for r in s.pending()], "the agent's approval decided the request"
        assert s.victim.is_dir(), "the agent's own approval let the rm -rf run"
        assert s.proc.poll() is None, "Claude Code stopped waiting after the agent's approval"

        # the supervisor: the passphrase on a pipe, the decision signed
        ok(ars("inbox", "approve", held["id"], "--state", str(s.state), passphrase=PASSPHRASE))
        result = s.wait_exit()

        assert not s.victim.exists(), "the supervisor approved and Claude Code ran the command, yet the directory is there"
        # the hook's allow reached Claude Code: no permission denial, the tool ran, the model got its result
        assert result.get("is_error") is False, result
        assert result.get("permission_denials") == [], result
        assert result.get("result") == FINAL_TEXT, result
        ours = [t for t in s.stub.tool_results if t["tool_use_id"] == s.stub.tool_use_id]
        assert ours and not ours[0]["is_error"], s.stub.tool_results
        decided = json.loads(ok(ars("inbox", "show", held["id"], "--json", "--state", str(s.state))).stdout)
        assert decided["status"] == "approved", decided
        assert decided["decision"]["signature"], decided


def test_supervisor_reject_reaches_claude_code_as_a_deny(scene: Scene):
    """The other verdict: the supervisor's signed reject becomes a deny whose
    reason the model reads in its tool_result; nothing runs."""
    s = scene
    reason = "not today: that directory is precious"
    with s.explained():
        set_up(s)
        s.start_claude()
        held = s.wait_for_held()
        ok(ars("inbox", "reject", held["id"], "--reason", reason, "--state", str(s.state), passphrase=PASSPHRASE))
        result = s.wait_exit()
        assert s.victim.is_dir() and (s.victim / "nested" / "keep.txt").exists()
        ours = [t for t in s.stub.tool_results if t["tool_use_id"] == s.stub.tool_use_id]
        assert ours and ours[0]["is_error"], s.stub.tool_results
        assert reason in ours[0]["text"], ours
        assert [d["tool_use_id"] for d in result.get("permission_denials", [])] == [s.stub.tool_use_id], result


def test_agent_with_its_own_key_cannot_approve(scene: Scene):
    """The agent can rewrite ARS's files: it replaces the supervisor's key with
    one of its own (a passphrase it knows) and signs an approval with it. The
    hook's pinned key is the supervisor's, so that approval never becomes an
    allow: Claude Code does not run the command."""
    s = scene
    agent_passphrase = "the agent knows this one"
    with s.explained():
        pinned = set_up(s)
        # the hook sets a refused approval aside and waits on for the supervisor, who cannot
        # sign once the key files are gone: a short signed wait keeps the test short
        policy = s.state.parent / "gate-short.toml"
        import re

        from core.inbox.policy import current_text

        policy.write_text(re.sub(r"(?m)^timeout = .*$", "timeout = 6", current_text(s.state)))
        ok(ars("gate", "set", str(policy), "--state", str(s.state), passphrase=PASSPHRASE))
        s.start_claude()
        held = s.wait_for_held()
        shutil.rmtree(s.state / "supervisor")
        ok(ars("supervisor", "init", "--state", str(s.state), passphrase=agent_passphrase))
        forged = ok(ars("supervisor", "show", "--state", str(s.state))).stdout.split()[-1]
        assert forged != pinned
        ok(ars("inbox", "approve", held["id"], "--state", str(s.state), passphrase=agent_passphrase))
        result = s.wait_exit()
        # the hook refused it loudly and set it aside: the record does not say the supervisor approved
        assert (s.state / "inbox" / f"{held['id']}.refused.1.json").exists()
        status = json.loads(ok(ars("inbox", "show", held["id"], "--json", "--state", str(s.state))).stdout)
        # the hook gave up and left the call to Claude Code's prompt (print mode: denied); Stop settled it
        assert status["status"] == "withdrawn" and "decided in the terminal" in status["decision"]["note"], status
        assert s.victim.is_dir() and (s.victim / "nested" / "keep.txt").exists(), "a forged key's approval ran the rm"
        ours = [t for t in s.stub.tool_results if t["tool_use_id"] == s.stub.tool_use_id]
        assert ours and ours[0]["is_error"], s.stub.tool_results
        assert [d["tool_use_id"] for d in result.get("permission_denials", [])] == [s.stub.tool_use_id], result


# -- memory in the agent's turn: the day-1 / day-2 story of issue 30 ------------------------------
SCRAPER = "import sys\nprint('抓取了 137 个产品经理职位')\nprint('saved to jobs.csv')\n"
FAKE_OPENCLAW = "#!/bin/sh\necho \"Gateway restarted (pid 4242)\"\necho \"listening on 127.0.0.1:18789\"\n"
DAY1_PROJECT = "写一个 boss_scraper.py 抓取 BOSS 直聘上的产品经理职位，然后运行它"
DAY1_RESTART = "重启一下 openclaw 网关"
DAY2_ZH = "重启完了没？继续，把昨天那个项目的具体执行结果给我看看"
DAY2_EN = "Did the gateway restart finish? And show me the results of yesterday's scraper project."
UNRELATED = "What is the capital of Australia?"
# two days before day 2: the article's third story ("前天让你做了一个系统大升级…")
UPGRADE = "print('系统大升级完成：升级了 42 个软件包，内核 6.8 → 6.12')\n"
DAY0_UPGRADE = "做一个系统大升级：运行 upgrade_system.py"
TWO_DAYS_ON = "前天让你做了一个系统大升级，升级了多少个软件包？"


class ScriptedAnthropic(StubAnthropic):
    """The stub, scripted by the session's prompt: a prompt naming a script runs it, the restart
    prompt asks for ``openclaw gateway restart``, any other prompt is answered in words. Every
    request body is kept whole (``bodies``): what the model was given."""

    SCRIPT = {DAY1_PROJECT: "python3 boss_scraper.py", DAY1_RESTART: "openclaw gateway restart",
              DAY0_UPGRADE: "python3 upgrade_system.py"}

    def __init__(self):
        super().__init__("unused")
        self.bodies: list[dict] = []

    def reply_for(self, body: dict) -> tuple[list[dict], str]:
        with self._lock:
            self.bodies.append(body)
        if not _has_tool(body, "Bash"):
            return [{"type": "text", "text": "Stub session"}], "end_turn"
        prompt = next((p for p in self.SCRIPT if p in _prompts(body)), None)
        results = _tool_results(body)
        for block in results:
            self.saw_tool_result(block)
        if prompt is None or results:
            return [{"type": "text", "text": FINAL_TEXT}], "end_turn"
        tool_id = "toolu_story_" + str(abs(hash(prompt)))[:12]
        return [{"type": "tool_use", "id": tool_id, "name": "Bash",
                 "input": {"command": self.SCRIPT[prompt], "description": "run it"}}], "tool_use"

    def first_turn_of(self, prompt: str) -> str:
        """The first main-loop request (the one with the tools) of the session asked ``prompt``."""
        with self._lock:
            for body in self.bodies:
                if _has_tool(body, "Bash") and prompt in _prompts(body):
                    return json.dumps(body, ensure_ascii=False)
        raise AssertionError(f"no request asked {prompt!r}")


def _prompts(body: dict) -> list[str]:
    """What the user typed: the text blocks of the user messages that are not system reminders
    (an injected memory quoting an older prompt is inside one)."""
    out = []
    for msg in body.get("messages") or []:
        content = msg.get("content") if isinstance(msg, dict) and msg.get("role") == "user" else None
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        out += [b["text"].strip() for b in blocks if isinstance(b, dict) and b.get("type") == "text"
                and isinstance(b.get("text"), str) and not b["text"].lstrip().startswith("<system-reminder>")]
    return out


from agents_stub.anthropic_server import _has_tool, _tool_results  # noqa: E402


FAKETIME_LIB = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")  # Debian's faketime package


class Story(Scene):
    """Day 1 runs a day ago: Claude Code, its hooks and the supervisor's `ars` under libfaketime
    (``FAKETIME=-1d``), so day 2's "yesterday" is what it says; the upgrade two days ago (-2d)."""

    days_ago = 0

    def __init__(self, tmp: Path, claude: Path):
        super().__init__(tmp, claude)
        self.stub = ScriptedAnthropic()
        self.bin = tmp / "bin"
        self.bin.mkdir()
        (self.bin / "openclaw").write_text(FAKE_OPENCLAW)
        (self.bin / "openclaw").chmod(0o755)
        (self.project / "boss_scraper.py").write_text(SCRAPER)
        (self.project / "upgrade_system.py").write_text(UPGRADE)

    def clock(self) -> dict[str, str]:
        """The scene's day for a process: libfaketime ``days_ago`` back (nothing today)."""
        if not self.days_ago:
            return {}
        return {"FAKETIME": f"-{self.days_ago}d", "LD_PRELOAD": str(FAKETIME_LIB)}

    def env(self) -> dict[str, str]:
        env = super().env()
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        env["ARS_RECALL_DAEMON"] = "auto"  # the per-turn context comes from the daemon (the suite turns it off)
        env.update(self.clock())
        return env

    def run_ars(self, *args: str, passphrase: str | None = None) -> subprocess.CompletedProcess:
        """`ars ARGS --state STATE` as the supervisor runs it, on the scene's day."""
        env = {**env_without_ars(("ARS_", "CLAUDE_", "ANTHROPIC_")), **self.clock()}
        return ars(*args, "--state", str(self.state), passphrase=passphrase, env=env)

    def pending(self) -> list[dict]:
        return json.loads(ok(self.run_ars("inbox", "list", "--status", "pending", "--json")).stdout)

    def next_day(self) -> None:
        """The night between: the recall daemon (started on the day before, on its clock) is gone."""
        ok(ars("daemon", "stop", "--state", str(self.state),
               env={**env_without_ars(("ARS_", "CLAUDE_", "ANTHROPIC_")), "ARS_RECALL_DAEMON": "auto"}))
        self.days_ago -= 1

    def trust(self) -> None:
        """What answering Claude Code's trust prompt once in this folder leaves (its allow rules then count),
        and the user's own rule for the script (ARS's gate passes it; Claude Code would prompt)."""
        cfg = self.home / ".claude" / ".claude.json"
        cfg.parent.mkdir(parents=True, exist_ok=True)
        cfg.write_text(json.dumps({"projects": {str(self.project): {"hasTrustDialogAccepted": True}}}))
        settings = self.project / ".claude" / "settings.json"
        data = json.loads(settings.read_text())
        data["permissions"]["allow"] += ["Bash(python3 boss_scraper.py)", "Bash(python3 upgrade_system.py)"]
        settings.write_text(json.dumps(data, indent=2))

    def start(self, prompt: str) -> None:
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(
                [str(self.claude), "-p", prompt, "--output-format", "json", "--debug-file", str(self.debug_path)],
                cwd=self.project, env=self.env(), stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                start_new_session=True)

    def run(self, prompt: str) -> dict:
        self.start(prompt)
        return self.wait_exit()

    def recall(self, query: str) -> list[dict]:
        return json.loads(ok(self.run_ars("recall", query, "--json")).stdout)["hits"]


@pytest.fixture
def story(tmp_path: Path, claude: Path):
    s = Story(tmp_path, claude)
    s.stub.start()
    try:
        yield s
    finally:
        s.stop()
        s.stub.stop()
        ars("daemon", "stop", "--state", str(s.state), env={**env_without_ars(("ARS_", "CLAUDE_", "ANTHROPIC_")),
                                                           "ARS_RECALL_DAEMON": "auto"})


def test_day_two_a_new_session_hears_what_ran_yesterday_and_who_approved_it(story: Story):
    s = story
    if not FAKETIME_LIB.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{FAKETIME_LIB} is missing (apt-get install faketime): day 1 runs a day ago")
        pytest.skip(f"{FAKETIME_LIB} is missing (apt-get install faketime)")
    with s.explained():
        set_up(s)
        s.trust()
        # two days ago: the system upgrade, in a session of its own
        s.days_ago = 2
        assert s.run(DAY0_UPGRADE).get("is_error") is False
        s.next_day()
        # day 1: the project, captured turn by turn (recallable when each turn ends)
        assert s.run(DAY1_PROJECT).get("is_error") is False
        [hit] = [h for h in s.recall("抓取了多少个产品经理职位")[:1]]
        assert hit["episode_id"].startswith("claude-code:"), hit
        # day 1: the restart, held by ARS and approved by the supervisor with a signed decision
        s.start(DAY1_RESTART)
        held = s.wait_for_held()
        assert held["detail"] == "openclaw gateway restart", held
        ok(s.run_ars("inbox", "approve", held["id"], "--note", "ok, restart it", passphrase=PASSPHRASE))
        assert s.wait_exit().get("is_error") is False
        decided = json.loads(ok(s.run_ars("inbox", "show", held["id"], "--json")).stdout)
        # the decision and what ran are one memory, found by the words a person uses
        for query in ("approved", "重启完了没", "did the gateway restart finish"):
            hits = s.recall(query)
            assert hits[0]["episode_id"] == f"inbox:{held['id']}", (query, hits)
        from datetime import datetime

        approved_at = datetime.fromisoformat(decided["decision"]["decided_at"]).astimezone()
        assert approved_at.date() < datetime.now().astimezone().date()  # day 1 was yesterday
        at = approved_at.strftime("%H:%M")

        from tui.daemon import client
        if getattr(client, "context", None) is None:
            if os.environ.get("CI") == "true":
                pytest.fail("the recall daemon has no context request (issue 30's per-turn context)")
            pytest.skip("day 2 needs the recall daemon's context request (tui.daemon.client.context)")

        # day 2: new sessions; the model's first request holds yesterday's result and the restart
        s.next_day()
        missing = []
        for prompt in (DAY2_ZH, DAY2_EN):
            assert s.run(prompt).get("is_error") is False
            given = _injected(s.stub.first_turn_of(prompt))
            # yesterday's result; that the restart ran; when; who approved it (in either language)
            wanted = {"137": ("137",), "the restart ran": ("Gateway restarted", "重启完了"), "when": (at,),
                      "who approved": ("supervisor approved", "监督者")}
            got = [what for what, words in wanted.items() if not any(w in given for w in words)]
            if got:
                missing.append(f"{prompt!r}: missing {got}; given: {given!r}")
        # two days on: "前天…系统大升级" finds that session, and what it did
        assert s.run(TWO_DAYS_ON).get("is_error") is False
        given = _injected(s.stub.first_turn_of(TWO_DAYS_ON))
        if "42 个软件包" not in given:
            missing.append(f"{TWO_DAYS_ON!r}: missing the upgrade's result; given: {given!r}")
        # a question memory knows nothing about gets nothing injected
        assert s.run(UNRELATED).get("is_error") is False
        given = _injected(s.stub.first_turn_of(UNRELATED))
        if given:
            missing.append(f"{UNRELATED!r}: given {given!r}")
        assert not missing, "\n".join(missing)


def _injected(body_text: str) -> str:
    """The ARS block in a request body ("" when none)."""
    start = body_text.find("[ARS memory")
    return "" if start < 0 else body_text[start:body_text.find("[end of ARS memory]", start) + 19]

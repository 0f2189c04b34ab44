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
import subprocess
import time
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

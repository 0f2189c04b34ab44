"""``ars install openclaw``: the plugin, its pinned config, the MCP server and the
permissions its memory in every turn needs (conversation access, prompt injection)
merged into OpenClaw's openclaw.json; ``--memory-slot`` gives OpenClaw's memory slot to
ARS; idempotent, backed up, ``--dry-run`` writes nothing, a JSON5 file or a wrong shape
stops it with one line. Each case runs the real ``ars`` command with a temporary HOME."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import env_without_ars, passphrase_pipe

SCRIPT = Path(sys.executable).parent / "ars"
PLUGIN = Path(__file__).resolve().parents[3] / "tui" / "agents" / "openclaw_plugin"
MEMORY_PLUGIN = PLUGIN.parent / "openclaw_memory_plugin"


def run(home: Path, *args: str, passphrase: str | None = None, extra_env: dict | None = None):
    env = env_without_ars(("ARS_", "OPENCLAW_"))
    env["HOME"] = str(home)
    env.update(extra_env or {})
    with passphrase_pipe(passphrase) as pp:
        return subprocess.run([str(SCRIPT), *args, *pp.args], capture_output=True, text=True, env=env,
                              pass_fds=pp.fds, stdin=subprocess.DEVNULL, timeout=60)


def test_install_merges_pins_and_is_idempotent(tmp_path: Path):
    home, state = tmp_path / "home", tmp_path / "state"
    config = home / ".openclaw" / "openclaw.json"
    config.parent.mkdir(parents=True)
    mine = {"models": {"providers": {"x": {"baseUrl": "http://127.0.0.1:1/v1"}}},
            "plugins": {"allow": ["telegram"], "load": {"paths": ["/opt/other-plugin"]},
                        "entries": {"telegram": {"enabled": True}}},
            "mcp": {"servers": {"docs": {"command": "uvx", "args": ["mcp-server-fetch"]}}}}
    config.write_text(json.dumps(mine, indent=4) + "\n")
    assert run(home, "supervisor", "init", "--state", str(state), passphrase="pp for the test").returncode == 0
    pin = run(home, "supervisor", "show", "--state", str(state)).stdout.split()[-1]

    dry = run(home, "install", "openclaw", "--state", str(state), "--dry-run")
    assert dry.returncode == 0 and "+" in dry.stdout and "nothing was written" in dry.stdout, dry.stderr
    assert json.loads(config.read_text()) == mine

    first = run(home, "install", "openclaw", "--state", str(state))
    assert first.returncode == 0 and "updated" in first.stdout and pin in first.stdout, first.stderr
    got = json.loads(config.read_text())
    assert got["models"] == mine["models"] and got["mcp"]["servers"]["docs"] == mine["mcp"]["servers"]["docs"]
    assert got["plugins"]["allow"] == ["telegram", "ars-gate"]
    assert got["plugins"]["load"]["paths"] == ["/opt/other-plugin", str(PLUGIN)]
    assert got["plugins"]["entries"]["telegram"] == {"enabled": True}
    entry = got["plugins"]["entries"]["ars-gate"]
    assert entry["enabled"] is True and entry["hooks"]["allowConversationAccess"] is True
    assert entry["hooks"]["allowPromptInjection"] is True  # prependContext: the turn's recalled memories
    assert "slots" not in got["plugins"] and "ars-memory" not in got["plugins"]["entries"]  # OpenClaw's own memory
    assert f"ars ingest ~/.openclaw --state {state}" in first.stdout  # the catch-up, said once
    assert entry["hooks"]["timeouts"]["before_tool_call"] == (50 + 20) * 1000  # the gate's wait + the margin
    assert entry["config"]["supervisor"] == pin and entry["config"]["state"] == str(state)
    assert entry["config"]["waitSeconds"] == 50
    server = got["mcp"]["servers"]["ars"]
    assert server["args"][-5:] == ["mcp", "--state", str(state), "--supervisor", pin]
    assert "    " in config.read_text()  # the file's own indent kept
    backups = list(config.parent.glob("openclaw.json.bak-*"))
    assert len(backups) == 1 and json.loads(backups[0].read_text()) == mine

    text = config.read_text()
    again = run(home, "install", "openclaw", "--state", str(state))
    assert again.returncode == 0 and "unchanged" in again.stdout
    assert config.read_text() == text and len(list(config.parent.glob("openclaw.json.bak-*"))) == 1


def test_install_follows_openclaw_state_dir_and_updates_a_stale_entry(tmp_path: Path):
    home, state, oc = tmp_path / "home", tmp_path / "state", tmp_path / "oc-state"
    oc.mkdir()
    (oc / "openclaw.json").write_text(json.dumps({"plugins": {"load": {"paths": ["/old/tui/agents/openclaw_plugin"]},
                                                              "entries": {"ars-gate": {"config": {"state": "/old"}}}}}))
    r = run(home, "install", "openclaw", "--state", str(state), extra_env={"OPENCLAW_STATE_DIR": str(oc)})
    assert r.returncode == 0, r.stderr
    got = json.loads((oc / "openclaw.json").read_text())
    assert got["plugins"]["load"]["paths"] == [str(PLUGIN)]
    assert got["plugins"]["entries"]["ars-gate"]["config"]["state"] == str(state)
    assert "no supervisor key yet" in r.stdout
    assert not (home / ".openclaw").exists()


def test_install_stops_on_json5_or_a_wrong_shape_and_writes_nothing(tmp_path: Path):
    home, state = tmp_path / "home", tmp_path / "state"
    config = home / ".openclaw" / "openclaw.json"
    config.parent.mkdir(parents=True)
    for text, words in [("{\n  // my comment\n  agents: {},\n}\n", "JSON5"),
                        ('{"plugins": {"load": {"paths": "/x"}}}', "plugins.load.paths"),
                        ('{"mcp": []}', '"mcp"'),
                        ("[1]", "not an object")]:
        config.write_text(text)
        r = run(home, "install", "openclaw", "--state", str(state))
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert r.returncode == 2 and len(lines) == 1 and words in lines[0], (text, r.stdout, r.stderr)
        assert "nothing was written" in lines[0] and "Traceback" not in r.stderr
        assert config.read_text() == text and not list(config.parent.glob("*.bak-*"))


def test_install_leaves_a_foreign_ars_mcp_server(tmp_path: Path):
    home, state = tmp_path / "home", tmp_path / "state"
    config = home / ".openclaw" / "openclaw.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"mcp": {"servers": {"ars": {"command": "node", "args": ["other.js"]}}}}))
    r = run(home, "install", "openclaw", "--state", str(state))
    assert r.returncode == 0 and "does not run `ars mcp`" in r.stdout, r.stdout
    assert json.loads(config.read_text())["mcp"]["servers"]["ars"] == {"command": "node", "args": ["other.js"]}


def test_memory_slot_is_opt_in_and_kept(tmp_path: Path):
    """--memory-slot: ARS's memory plugin loaded and given OpenClaw's memory slot; a later
    install without the flag keeps it (and says how to give it back), a second run changes
    nothing, the user's own memory settings in the gate's config stay."""
    home, state = tmp_path / "home", tmp_path / "state"
    config = home / ".openclaw" / "openclaw.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"plugins": {"slots": {"memory": "memory-lancedb"}, "allow": ["memory-lancedb"],
                                              "entries": {"ars-gate": {"config": {"memory": {"budget": 900}}}}}}))
    r = run(home, "install", "openclaw", "--state", str(state), "--memory-slot")
    assert r.returncode == 0 and "memory_search/memory_get are ARS's" in r.stdout, r.stdout + r.stderr
    assert "was memory-lancedb" in r.stdout
    got = json.loads(config.read_text())["plugins"]
    assert got["slots"]["memory"] == "ars-memory" and got["allow"] == ["memory-lancedb", "ars-gate", "ars-memory"]
    assert got["load"]["paths"] == [str(PLUGIN), str(MEMORY_PLUGIN)]
    assert got["entries"]["ars-memory"] == {"enabled": True, "config": {"ars": got["entries"]["ars-gate"]["config"]["ars"],
                                                                       "state": str(state)}}
    assert got["entries"]["ars-gate"]["config"]["memory"] == {"budget": 900}
    text = config.read_text()
    again = run(home, "install", "openclaw", "--state", str(state))
    assert again.returncode == 0 and "unchanged" in again.stdout and "stays ars-memory" in again.stdout
    assert config.read_text() == text
    wrong = run(home, "install", "claude-code", "--state", str(state), "--memory-slot")
    assert wrong.returncode != 0 and "--memory-slot is for openclaw" in wrong.stdout + wrong.stderr

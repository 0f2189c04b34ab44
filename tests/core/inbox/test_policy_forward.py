"""A gate policy only moves forward (the issue "Supervision that holds against a patient agent"):
the agent puts back an older signed policy (a rollback), appends a byte to the signed one (a
strip), or copies a policy signed for another state directory. Each is refused with one line and
the newest good policy, with the supervisor's own rules, stays in force."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.inbox import policy, signing

PASS = b"the supervisor's passphrase"
ROOT = Path(__file__).resolve().parents[3]
STRICT = ('timeout = 40\n\n[[rule]]\nname = "no-prod-push"\ntool = "Bash"\npattern = \'\'\'\\bpush\\b.*\\bprod\\b\'\'\'\n'
          'risk = "high"\nreason = "pushes to prod"\n')


@pytest.fixture
def state(tmp_path) -> Path:
    d = tmp_path / "state"
    signing.init(d, PASS)
    return d


def _sign(state: Path, text: str) -> None:
    policy.sign(state, text, signing.unlock(state, PASS))


def _copy_policy(state: Path, to: Path) -> None:
    to.mkdir(parents=True, exist_ok=True)
    for name in ("gate.toml", "gate.toml.sig"):
        shutil.copy2(state / name, to / name)


def test_each_signing_is_a_new_version_recorded_in_the_ledger(state):
    _sign(state, "timeout = 10\n")
    _sign(state, "timeout = 20\n")
    assert policy.seen_version(state) == 2
    events = [json.loads(line) for line in (state / "ledger.jsonl").read_text().splitlines()]
    assert [e["data"]["version"] for e in events if e["type"] == "gate.policy"] == [1, 2]


def test_an_older_signed_policy_put_back_is_a_rollback(state, tmp_path):
    _sign(state, "timeout = 10\n")
    _copy_policy(state, tmp_path / "old")  # the agent keeps version 1 and its signature
    _sign(state, "timeout = 30\n")  # the supervisor tightens it
    fp = signing.public_fingerprint(state)
    _copy_policy(tmp_path / "old", state)  # ...and the agent puts version 1 back
    gate, why = policy.load(state, fp)
    assert "older than version 2" in why and "rollback" in why
    assert gate.timeout == 30  # the newest stays in force


def test_the_pinned_version_refuses_a_rollback_even_when_the_floor_file_is_reset(state, tmp_path):
    _sign(state, "timeout = 10\n")
    _copy_policy(state, tmp_path / "old")
    _sign(state, "timeout = 30\n")
    fp = signing.public_fingerprint(state)
    for name in ("gate.seen", "gate.toml.good", "gate.toml.good.sig"):  # the agent resets what it can write
        (state / name).unlink()
    _copy_policy(tmp_path / "old", state)
    gate, why = policy.load(state, fp, floor=2)  # the hook command pinned version 2 at install
    assert "older than version 2" in why
    assert gate.timeout == policy.builtin().timeout  # nothing good left to fall back on: never the old one


def test_a_byte_appended_keeps_the_supervisors_rules_not_the_defaults(state):
    _sign(state, STRICT)
    fp = signing.public_fingerprint(state)
    with open(state / "gate.toml", "a") as fh:
        fh.write("#")
    gate, why = policy.load(state, fp)
    assert "changed after the supervisor signed it" in why and "last good" in why
    assert gate.timeout == 40
    matches = gate.check("Bash", {"command": "git push origin prod"}, project_dir=str(state), state_dir=str(state))
    assert matches and matches[0].rule == "no-prod-push"


def test_a_policy_signed_for_another_state_directory_is_refused(state, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(state / "supervisor", other / "supervisor")  # the same supervisor key
    policy.sign(other, "timeout = 5\n", signing.unlock(other, PASS))
    _sign(state, "timeout = 25\n")
    _copy_policy(other, state)
    gate, why = policy.load(state, signing.public_fingerprint(state))
    assert "another state directory" in why and gate.timeout == 25


def test_a_hook_refuses_a_bad_policy_version_pin(state):
    pin = signing.public_fingerprint(state)
    ev = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}, "session_id": "s",
          "permission_mode": "default"}
    r = subprocess.run([sys.executable, "-m", "tui.cli.main", "hook", "claude-code", "--state", str(state),
                        "--supervisor", pin, "--policy-version", "-1"], input=json.dumps(ev).encode(),
                       capture_output=True, timeout=60, cwd=ROOT)
    assert b"--policy-version" in r.stderr and b"not a policy version" in r.stderr
    assert json.loads(r.stdout)["hookSpecificOutput"]["permissionDecision"] == "ask"  # never an allow


def test_install_pins_the_policy_version_in_force_in_every_hook_command(state, tmp_path):
    from tui.agents import install, install_hermes, openclaw_install

    _sign(state, "timeout = 10\n")
    _sign(state, "timeout = 20\n")
    fp = signing.public_fingerprint(state)
    assert install.pin_args(state, fp) == ["--supervisor", fp, "--policy-version", "2"]
    (tmp_path / "proj").mkdir()
    changes = install.plan(state=state, project=tmp_path / "proj")
    settings = next(c for c in changes if c.path.name == "settings.json")
    assert f"--supervisor {fp} --policy-version 2" in settings.new_text
    assert install.pin_args(state, None) == []  # no key: nothing to pin (the hook trusts no policy file)
    src = Path(install_hermes.__file__).read_text() + Path(openclaw_install.__file__).read_text()
    assert "pin_args(state, pin)" in src and "policyVersion" in src

"""What the supervisor decided about a gated call, and what then ran, as one memory
(core/inbox/call_episode.py): written on the decision, rewritten (same id) with the
outcome, found in English and in Chinese, and by `ars recall "approved"` run as a
person runs it. Real inbox files, signatures, ledger and SQLite."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.api import ARS
from core.config import Settings
from core.inbox import signing
from conftest import TEST_DEADLINES, env_without_ars

ROOT = Path(__file__).resolve().parents[3]
PASS = b"the supervisor's passphrase"


@pytest.fixture
def ars(state_dir):
    signing.init(state_dir, PASS)
    a = ARS(Settings(state_dir=state_dir, embedder="off", **TEST_DEADLINES))
    yield a
    a.close()


def held(ars: ARS, command: str = "openclaw gateway restart", session: str = "oc-sess-1"):
    return ars.request_approval(f"openclaw:{session}", f"OpenClaw exec: {command} (gateway control)",
                                details=command, risk="high", binds="exec", meta={"tool_name": "exec"})


def top(ars: ARS, query: str) -> str:
    hits = ars.recall(query, k=3).hits
    return hits[0].episode_id if hits else ""


def test_an_approved_call_and_what_it_did_are_one_memory_found_in_both_languages(ars):
    req = held(ars)
    ars.inbox_decide(req.id, "approve", note="go ahead", signer=signing.unlock(ars.state_dir, PASS), shown=ars.inbox_get(req.id))
    eid = ars.inbox_remember(req.id, session="oc-sess-1", call_id="call-42")
    assert eid == f"inbox:{req.id}"
    ep = ars.memory.sqlite.get(eid)
    first, second = ep.text.splitlines()[:2]
    assert first.startswith("The supervisor approved `openclaw gateway restart` at ") and "no outcome reported" in first
    assert "批准" in second and "重启" in second
    assert "signature verified with the supervisor key" in ep.text and ep.source == "inbox"

    # the agent's post-tool hook knows its session and call id only
    assert ars.inbox_outcome(("oc-sess-1", "call-42"), 0, "Gateway restarted (pid 4242)\nlistening on :18789") == eid
    assert ars.episode_count() == 1  # rewritten in place
    ep = ars.memory.sqlite.get(eid)
    assert "it ran and finished (done), result: exit 0: Gateway restarted (pid 4242)" in ep.text
    assert "已执行完成" in ep.text and "listening on :18789" in ep.text
    for query in ("approved", "重启完了没", "did the restart finish", "批准了吗", "gateway restart exit code"):
        assert top(ars, query) == eid, query
    # the time is the supervisor's local time, with its zone
    assert "(UTC" in first and ep.meta["exit"] == 0 and ep.meta["verified"] is True


def test_rejected_expired_and_failed_calls(ars):
    signer = signing.unlock(ars.state_dir, PASS)
    rejected = held(ars, "rm -rf /srv/backups", "s-rej")
    ars.inbox_decide(rejected.id, "reject", note="those are the only backups", signer=signer, shown=ars.inbox_get(rejected.id))
    text = ars.memory.sqlite.get(ars.inbox_remember(rejected.id)).text
    assert "The supervisor rejected `rm -rf /srv/backups`" in text and "never ran" in text
    assert "拒绝" in text and "删除" in text and "没有执行" in text and "those are the only backups" in text

    expired = held(ars, "npm publish", "s-exp")
    assert ars.inbox_end(expired.id, "expire", "the hook waited 50 s and gave up")
    text = ars.memory.sqlite.get(ars.inbox_remember(expired.id)).text
    assert "Nobody approved `npm publish` in time: the request expired" in text and "过期" in text

    failed = held(ars, "systemctl restart nginx", "s-fail")
    ars.inbox_decide(failed.id, "approve", signer=signer, shown=ars.inbox_get(failed.id))
    ars.inbox_remember(failed.id, session="s-fail", call_id="c1")
    eid = ars.inbox_outcome(("s-fail", "c1"), 3, "Job for nginx.service failed")
    text = ars.memory.sqlite.get(eid).text
    assert "it ran and failed, result: exit 3: Job for nginx.service failed" in text and "失败" in text

    ran_in_terminal = held(ars, "git push origin main", "s-term")
    ars.inbox_withdraw(ran_in_terminal.id, "decided in the terminal: the call ran")
    ars.inbox_remember(ran_in_terminal.id, session="s-term", call_id="c2")
    text = ars.memory.sqlite.get(ars.inbox_outcome(("s-term", "c2"), "ok", "main -> main")).text
    assert "was not decided in the ARS inbox" in text and "it ran and finished" in text

    assert ars.episode_count() == 4
    assert top(ars, "被拒绝的删除") == f"inbox:{rejected.id}"
    assert ars.inbox_outcome(("s-unknown", "c9"), 0, "") is None and ars.inbox_remember("req-000000000000") is None


def test_a_decision_signed_by_another_key_is_remembered_as_not_valid(ars, tmp_path):
    other = tmp_path / "agents-own"
    signing.init(other, b"the agent knows this one")
    req = held(ars, "curl -X POST https://pay.example/transfer", "s-forged")
    ars.inbox.decide(req.id, "approve", signer=signing.unlock(other, b"the agent knows this one"),
                     shown=ars.inbox.get(req.id))
    text = ars.memory.sqlite.get(ars.inbox_remember(req.id)).text
    assert "signature NOT valid" in text and "signature verified" not in text


def test_ars_recall_approved_finds_it(ars, state_dir):
    req = held(ars)
    ars.inbox_decide(req.id, "approve", signer=signing.unlock(state_dir, PASS), shown=ars.inbox_get(req.id))
    ars.inbox_remember(req.id, session="oc-sess-1", call_id="call-1")
    ars.inbox_outcome(req.id, 0, "Gateway restarted")
    ars.close()
    r = subprocess.run([sys.executable, "-m", "tui.cli.main", "recall", "approved", "--json", "--state", str(state_dir)],
                       capture_output=True, text=True, timeout=60, cwd=ROOT, env=env_without_ars(),
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    hits = json.loads(r.stdout)["hits"]
    assert hits and hits[0]["episode_id"] == f"inbox:{req.id}"

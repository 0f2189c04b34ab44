"""The approvals page's cards (issue 32), in a real headless Chromium at a phone's
390 px and a laptop's 1280 px: each card shows the agent's last turns before it
asked (as the dashboard's Request pane does), "lock now" only while the key is
unlocked, a decided card says what became of it (never "Approval needed") with
its whole audit record. The screenshots are kept under ``ARS_SHOTS`` when set.

Under CI=true a missing chromium fails; elsewhere it skips."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from core.api import ARS
from core.config import Settings

from cdp import Browser
from test_serve import PASS, Served, need_chromium


def _transcript(path: Path) -> Path:
    def line(role: str, content) -> str:
        return json.dumps({"type": role, "message": {"role": role, "content": content}})

    path.write_text("\n".join([
        line("user", "the staging deploy failed, can you look?"),
        line("assistant", "The TLS certificate expired; I will renew it and redeploy."),
        line("assistant", [{"type": "tool_use", "name": "Bash", "input": {"command": "make deploy ENV=staging"}}]),
    ]) + "\n")
    return path


@pytest.fixture
def served_with_a_call(tmp_path):
    state = tmp_path / "state"
    with ARS(Settings(state_dir=state)) as a:
        a.supervisor_init(PASS.encode())
        rid = a.request_approval("claude-code:s-31", "Bash: make deploy ENV=staging (held: deploys)",
                                 "make deploy ENV=staging", risk="high", binds="Bash", expires_in=600,
                                 meta={"tool_name": "Bash", "session_id": "s-31",
                                       "transcript_path": str(_transcript(tmp_path / "s-31.jsonl"))}).id
    s = Served(state)
    yield s, state, rid
    s.stop()


@pytest.mark.parametrize("width", [390, 1280])
async def test_a_card_shows_the_last_turns_the_lock_and_the_decided_state(served_with_a_call, tmp_path, width):
    need_chromium()
    s, state, rid = served_with_a_call
    shots = Path(os.environ.get("ARS_SHOTS") or tmp_path)
    async with Browser(width=width, height=1000) as b:
        page = await b.new_page()
        await page.goto(s.url)
        card = f'article[data-id="{rid}"]'
        turns = await page.eval(f"Array.from(document.querySelectorAll('{card} .turns li')).map(l => l.textContent)")
        assert turns[-1] == "assistant: tool Bash: make deploy ENV=staging" and "TLS certificate" in turns[-2]
        assert "transcript_path" not in await page.eval(f"document.querySelector('{card}').textContent")
        assert await page.eval("document.getElementById('lock').hidden") is True  # locked: nothing to lock
        await page.screenshot(str(shots / f"approvals-{width}-pending.png"))
        await page.type("#passphrase", PASS)
        await page.type(f"{card} input[name=note]", "window is open")
        await page.click(f'{card} button[value="approve"]')
        await page.wait_for(f"document.querySelector('{card}').dataset.status === 'approved'")
        assert await page.eval("document.getElementById('lock').hidden") is False  # unlocked for 10 minutes
        head = await page.eval(f"document.querySelector('{card} .kind').textContent")
        assert head == "Approval request: approved"
        record = await page.eval(f"Array.from(document.querySelectorAll('{card} dl.audit dt')).map(d => d.textContent)")
        assert {"kind", "risk", "asked", "runs", "decided", "signature", "note", "next"} <= set(record)
        sig = await page.eval(f"document.querySelector('{card} dd.a-signature').textContent")
        assert sig.endswith(": verified")
        width_ok = await page.eval("document.documentElement.scrollWidth <= window.innerWidth")
        assert width_ok, "nothing wider than the screen"
        await page.screenshot(str(shots / f"approvals-{width}-decided.png"))
        await page.click("#lock")
        await page.wait_for("document.getElementById('lock').hidden === true")

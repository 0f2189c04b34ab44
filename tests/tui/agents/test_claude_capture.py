"""Claude Code's turns and held calls as memory (`ars hook claude-code`), as real processes:
events in Claude Code 2.1's shapes piped into the console script, transcripts written as
Claude Code writes them (tests/cc_transcript.py), decisions taken by `ars inbox approve`
with the supervisor's passphrase. A turn is recallable when the Stop hook exits; the
catch-up ingest at SessionEnd adds nothing; a held call's decision and what it did are
one memory; UserPromptSubmit never breaks a turn. The real Claude Code runs in
tests/tui/agents/test_claude_code_e2e.py."""

from __future__ import annotations

import json
import time
from pathlib import Path

from cc_transcript import Transcript
from core.api import ARS
from core.config import Settings
from core.inbox import Inbox
from test_hooks import (ars, event, finish, hook, hook_bg, project, set_gate, state,  # noqa: F401 - fixtures
                        wait_for_request, with_timeout)
from test_permission_request import decision, perm

SESSION = "5f0c1d2e-hooks-test"  # test_hooks.event's session


def recall(state: Path, query: str, k: int = 3) -> list[str]:
    with ARS(Settings(state_dir=state, embedder="off"), create=False) as a:
        return [h.episode_id for h in a.recall(query, k=k).hits]


def text_of(state: Path, episode_id: str) -> str:
    with ARS(Settings(state_dir=state, embedder="off"), create=False) as a:
        ep = a.memory.sqlite.get(episode_id)
        return ep.text if ep else ""


def transcript(project: Path) -> Transcript:
    return Transcript(project / "t.jsonl", session=SESSION, cwd=str(project))


def quiet(r) -> None:
    assert (r.returncode, r.stdout) == (0, b""), (r.returncode, r.stdout, r.stderr)


def test_stop_makes_the_turn_recallable_and_the_catch_up_adds_nothing(project, state):
    t = transcript(project)
    t.turn("运行 boss_scraper.py 抓取产品经理职位",
           [("Bash", {"command": "python boss_scraper.py", "description": "run it"}, "抓取了 137 个产品经理职位")],
           "抓取完成：137 个职位。")
    quiet(hook(event("Stop", project, stop_hook_active=False), state))
    # when the hook has exited, the turn is memory: the command and what it printed
    assert recall(state, "抓取了多少个职位")[:1] == [f"claude-code:{SESSION}:0"]
    assert "assistant → Bash: command=python boss_scraper.py" in text_of(state, f"claude-code:{SESSION}:0")

    # before a compaction, everything so far is memory too
    t.turn("now sort jobs.csv by salary", [("Bash", {"command": "sort -t, -k3 -n jobs.csv"}, "PM,Beijing,35k")],
           "Sorted.")
    quiet(hook(event("PreCompact", project, trigger="auto", custom_instructions=""), state))
    assert "Sorted." in text_of(state, f"claude-code:{SESSION}:0")

    # SessionEnd captures what is left and starts the catch-up ingest: it finds everything stored
    t.turn("thanks", [], "You're welcome.")
    quiet(hook(event("SessionEnd", project, reason="prompt_input_exit"), state))
    log = state / "hook-ingest.log"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and '"episodes_added"' not in (log.read_text() if log.exists() else ""):
        time.sleep(0.1)
    report = json.loads(log.read_text().strip().splitlines()[-1])
    assert (report["episodes_added"], report["duplicates_skipped"]) == (0, 1), report
    assert "welcome" in text_of(state, f"claude-code:{SESSION}:0")


def test_a_held_call_its_signed_approval_and_what_it_did_are_one_memory(project, state):
    set_gate(state, with_timeout(45))
    p = hook_bg(perm(project, "openclaw gateway restart"), state)
    req = wait_for_request(state, p)
    assert ars("inbox", "approve", req.id, "--note", "restart it", state=state).returncode == 0
    assert decision(finish(p)) == {"behavior": "allow"}
    eid = f"inbox:{req.id}"
    assert "approved `openclaw gateway restart`" in text_of(state, eid)  # remembered on the decision
    # Claude Code ran it: PostToolUse carries the tool_use_id (the request was keyed by the input)
    done = event("PostToolUse", project, tool_name="Bash", tool_use_id="toolu_01RESTART",
                 tool_input={"command": "openclaw gateway restart", "description": "run it"},
                 tool_response={"stdout": "Gateway restarted (pid 4242)", "stderr": "", "interrupted": False,
                                "isImage": False})
    quiet(hook(done, state))
    text = text_of(state, eid)
    assert "it ran and finished (done), result: exit 0: Gateway restarted (pid 4242)" in text, text
    assert "signature verified" in text and "restart it" in text
    assert recall(state, "重启完了没")[:1] == [eid]
    assert recall(state, "approved")[:1] == [eid]
    # the same command run again later (Claude Code's own rules let it) is another call: the
    # approved one's outcome stays as it was
    again = {**done, "tool_use_id": "toolu_01AGAIN", "tool_response": {**done["tool_response"], "stdout": "second run"}}
    quiet(hook(again, state))
    assert "second run" not in text_of(state, eid)


def test_a_held_call_that_failed_or_was_rejected(project, state):
    set_gate(state, with_timeout(45))
    p = hook_bg(perm(project, "systemctl restart nginx"), state)
    req = wait_for_request(state, p)
    assert ars("inbox", "approve", req.id, state=state).returncode == 0
    assert decision(finish(p)) == {"behavior": "allow"}
    failed = event("PostToolUseFailure", project, tool_name="Bash", tool_use_id="toolu_01NGINX",
                   tool_input={"command": "systemctl restart nginx", "description": "run it"},
                   error="Exit code 5\nFailed to restart nginx.service: Unit nginx.service not found.",
                   is_interrupt=False)
    quiet(hook(failed, state))
    assert "it ran and failed, result: exit 5" in text_of(state, f"inbox:{req.id}")

    p = hook_bg(perm(project, "rm -rf /srv/backups"), state)
    req = wait_for_request(state, p)
    assert ars("inbox", "reject", req.id, "--reason", "those are the only backups", state=state).returncode == 0
    assert decision(finish(p))["behavior"] == "deny"
    text = text_of(state, f"inbox:{req.id}")
    assert "rejected `rm -rf /srv/backups`" in text and "never ran" in text and "拒绝" in text


def test_a_request_the_session_stopped_without_running_is_remembered(project, state):
    set_gate(state, with_timeout(0.3))  # nobody decides in time: the prompt decides (print mode: no)
    quiet(hook(perm(project, "kubectl delete namespace prod"), state))
    [req] = Inbox(state).list("pending")
    transcript(project).turn("delete the prod namespace", [], "I could not: it was not approved.")
    quiet(hook(event("Stop", project, stop_hook_active=False), state))
    text = text_of(state, f"inbox:{req.id}")
    assert "was not decided in the ARS inbox" in text and "without running it" in text


def test_a_tool_call_nothing_held_loads_only_the_standard_library(project, state):
    import subprocess
    import sys

    from test_hooks import ROOT, _env

    probe = ("import sys\nfrom tui.entry import hook\n"
             "code = hook(['--state', sys.argv[1]])\n"
             "heavy = [m for m in ('typer', 'rich', 'pydantic', 'core.api', 'core.memory.memory', 'sqlite3')"
             " if m in sys.modules]\n"
             "sys.stderr.write(repr((code, heavy)))\n")
    ev = event("PostToolUse", project, tool_name="Bash", tool_use_id="toolu_01LS", tool_input={"command": "ls"},
               tool_response={"stdout": "a\nb", "stderr": "", "interrupted": False, "isImage": False})
    r = subprocess.run([sys.executable, "-c", probe, str(state)], input=json.dumps(ev).encode(),
                       capture_output=True, timeout=60, env=_env(), cwd=ROOT)
    assert r.stdout == b"" and r.stderr.decode() == "(0, [])", r.stderr


def test_user_prompt_submit_never_breaks_the_turn(project, state, tmp_path):
    """Nothing in memory about it, a megabyte prompt, a lone surrogate, no state directory: no
    context, exit 0, at most one line on stderr; never a traceback."""
    prompts = ["what is the capital of Australia?", "x" * (1 << 20), "bad \ud800 surrogate"]
    for prompt in prompts:
        ev = event("UserPromptSubmit", project, prompt=prompt, prompt_id="p1")
        for where in (state, tmp_path / "no-state"):
            r = hook(json.dumps(ev).encode("utf-8", "surrogatepass"), where)
            assert r.returncode == 0 and b"Traceback" not in r.stderr, r.stderr
            assert len(r.stderr.decode().strip().splitlines()) <= 1, r.stderr
            if r.stdout:  # a context answer for an unrelated prompt carries no memory
                ctx = json.loads(r.stdout)["hookSpecificOutput"]
                assert ctx["hookEventName"] == "UserPromptSubmit" and "137" not in ctx["additionalContext"]

"""The LLM policy through the real `openai` client against a local HTTP server
that speaks the chat-completions API with tool calls: orient, decide (a
registered tool or ask_human), verify; a failed first-principles check is
sent back once; risky tools wait for a person; token budgets abort; a dead
model blocks the loop after its failures, with the reason."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

import pytest

from core.config import Settings
from core.loop.decisions import decide
from core.loop.engine import Engine
from core.loop.models import GoalFrame
from core.errors import BadQuery

from loophelp import ars


class ToolCallServer:
    """POST /v1/chat/completions; ``brain(body)`` returns (function name, arguments)."""

    def __init__(self, brain: Callable[[dict], tuple[str, dict] | tuple[str, str]], tokens: int = 30):
        self.brain = brain
        self.tokens = tokens
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                outer.requests.append(body)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self._send(404, {"error": {"message": "not found"}})
                name, args = outer.brain(body)
                n = len(outer.requests)
                self._send(200, {
                    "id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model"),
                    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                        "role": "assistant", "content": None,
                        "tool_calls": [{"id": f"call_{n}", "type": "function", "function": {
                            "name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}]}}],
                    "usage": {"prompt_tokens": outer.tokens - 5, "completion_tokens": 5,
                              "total_tokens": outer.tokens},
                })

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def phase(body: dict) -> str:
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        return choice["function"]["name"]
    return "decide"


def sent_back(body: dict) -> str | None:
    last = body["messages"][-1]
    return last["content"] if last.get("role") == "tool" else None


def user_text(body: dict) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


ORIENT = {"premises": [{"id": "P1", "text": "the nightly job failed at the rsync step", "source": "observed"},
                       {"id": "P2", "text": "the NAS host key changed on Tuesday", "source": "recalled",
                        "ref": "openclaw:s-1"}],
          "hypotheses": [{"id": "H1", "text": "rsync rejects the new host key", "because": ["P1", "P2"]}]}
VERIFY_DONE = {"outcome": "pass", "reason": "the note holds the fix and the success criterion is met",
               "goal_done": True}


def note_call(text="NAS backup fix: re-pin the host key, then rerun rsync"):
    return "note", {"text": text, "rationale": "Because H1 holds, write the fix down so the next session has it.",
                    "because": ["H1"]}


@pytest.fixture
def server():
    servers: list[ToolCallServer] = []

    def make(brain, tokens: int = 30) -> ToolCallServer:
        s = ToolCallServer(brain, tokens)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.close()


def llm_engine(state_dir, memory, url: str) -> Engine:
    settings = Settings(state_dir=state_dir, openai_base_url=url, openai_model="test-model")
    return Engine(state_dir, memory, settings)


GOAL = GoalFrame(goal="Fix the nightly NAS backup after the host key change",
                 success_criteria=["the fix is written down for the next session"],
                 budget={"max_iterations": 4, "max_consecutive_failures": 2})


def test_llm_policy_runs_to_done_through_tool_calls(state_dir, memory, server):
    def brain(body):
        return {"orient": ("orient", ORIENT), "decide": note_call(), "verify": ("verify", VERIFY_DONE)}[phase(body)]

    srv = server(brain)
    eng = llm_engine(state_dir, memory, srv.url)
    s = eng.run(eng.create(GOAL, policy="llm").loop_id)
    assert s.status == "done" and s.policy == "llm"
    assert [phase(b) for b in srv.requests] == ["orient", "decide", "verify"]
    assert all(b["model"] == "test-model" for b in srv.requests)
    decide_req = srv.requests[1]
    offered = {t["function"]["name"]: t["function"] for t in decide_req["tools"]}
    assert set(offered) == {"recall", "note", "wait", "shell", "finish", "ask_human"}  # never "scripted"
    assert "RISKY" in offered["shell"]["description"]
    assert {"rationale", "because"} <= set(offered["note"]["parameters"]["required"])
    assert decide_req["tool_choice"] == "required"
    assert "P1 [observed]" in user_text(decide_req) and "H1 rsync rejects" in user_text(decide_req)
    assert s.premises[1].ref == "openclaw:s-1" and s.tokens_used == 90
    assert s.iterations[0].action.tool == "note" and s.iterations[0].action.because == ["H1"]
    assert "re-pin the host key" in memory.sqlite.get(s.iterations[0].result.data["episode_id"]).text
    verify_req = srv.requests[2]
    assert "Action taken: note" in user_text(verify_req) and "stored note" in user_text(verify_req)


def test_a_failed_check_is_sent_back_once_and_the_revision_is_used(state_dir, memory, server):
    def brain(body):
        p, back = phase(body), sent_back(body)
        if p == "orient":
            if back is None:
                vague = json.loads(json.dumps(ORIENT))
                vague["premises"][0]["text"] = "显然 the NAS is broken"
                return "orient", vague
            return "orient", ORIENT
        if p == "decide":
            if back is None:
                return "note", {"text": "fix it", "rationale": "", "because": []}  # cites nothing
            return note_call()
        return "verify", VERIFY_DONE

    srv = server(brain)
    eng = llm_engine(state_dir, memory, srv.url)
    s = eng.run(eng.create(GOAL, policy="llm").loop_id)
    assert s.status == "done"
    assert [phase(b) for b in srv.requests] == ["orient", "orient", "decide", "decide", "verify"]
    feedback = sent_back(srv.requests[1])
    assert "First-principles check failed" in feedback and "拆解到底" in feedback and "“显然”" in feedback
    feedback = sent_back(srv.requests[3])
    assert "decision" in feedback and "怀疑一切" in feedback and "重建路径" in feedback
    assert s.premises[0].text == "the nightly job failed at the rsync step"  # the revision was used
    assert s.iterations[0].action.args == {"text": "NAS backup fix: re-pin the host key, then rerun rsync"}
    by_rev = [(c.step, c.revision, c.result.passed) for c in s.checks if not c.result.passed or c.revision]
    assert ("orient", 0, False) in by_rev and ("decide", 0, False) in by_rev
    assert ("decide", 1, True) in by_rev and all(p for st, r, p in by_rev if r == 1)
    assert s.iterations[0].checks_failed == 2


def test_a_revision_that_still_fails_is_recorded_and_the_loop_goes_on(state_dir, memory, server):
    def brain(body):
        p = phase(body)
        if p == "orient":
            bad = json.loads(json.dumps(ORIENT))
            bad["hypotheses"][0]["because"] = ["P7"]  # a step from nowhere, twice
            return "orient", bad
        return note_call() if p == "decide" else ("verify", VERIFY_DONE)

    srv = server(brain)
    eng = llm_engine(state_dir, memory, srv.url)
    s = eng.run(eng.create(GOAL, policy="llm").loop_id)
    assert [phase(b) for b in srv.requests] == ["orient", "orient", "decide", "verify"]  # sent back once only
    failed = [c for c in s.checks if not c.result.passed]
    assert [c.revision for c in failed] == [0, 1]
    assert s.status == "done"


def test_risky_tool_waits_for_approval_then_runs(state_dir, memory, server):
    def brain(body):
        p = phase(body)
        if p == "decide":
            return "shell", {"cmd": "echo re-pinned nas.local", "rationale": "Because H1, re-pin the key.",
                             "because": ["H1"]}
        return ("orient", ORIENT) if p == "orient" else ("verify", VERIFY_DONE)

    srv = server(brain)
    eng = llm_engine(state_dir, memory, srv.url)
    s = eng.run(eng.create(GOAL, policy="llm").loop_id)
    assert s.status == "waiting_human" and s.pending_approval.action.args == {"cmd": "echo re-pinned nas.local"}
    assert len(srv.requests) == 2  # nothing ran, nothing verified
    decide(state_dir, s.loop_id, "approve", note="host key checked by hand")
    s = eng.run(s.loop_id)
    assert s.status == "done" and s.iterations[0].result.output.strip() == "re-pinned nas.local"
    assert "re-pinned nas.local" in user_text(srv.requests[-1])


def test_a_rejection_reaches_the_next_decision(state_dir, memory, server):
    def brain(body):
        p = phase(body)
        if p == "decide":
            if "rejected by a person" in user_text(body):
                return note_call("NAS backup: a person must re-pin the host key by hand")
            return "shell", {"cmd": "ssh-keygen -R nas.local", "rationale": "Because H1, drop the old key.",
                             "because": ["H1"]}
        if p == "verify":
            return "verify", VERIFY_DONE
        return "orient", ORIENT

    srv = server(brain)
    eng = llm_engine(state_dir, memory, srv.url)
    s = eng.run(eng.create(GOAL, policy="llm").loop_id)
    decide(state_dir, s.loop_id, "reject", note="never edit known_hosts from the agent")
    s = eng.run(s.loop_id)
    assert s.status == "done"
    assert s.iterations[0].verification.reason == "rejected by a person: never edit known_hosts from the agent"
    assert s.iterations[1].action.tool == "note"
    later = [b for b in srv.requests if phase(b) == "decide"][-1]
    assert "person: reject: never edit known_hosts from the agent" in user_text(later)


def test_the_model_can_ask_a_person(state_dir, memory, server):
    def brain(body):
        p = phase(body)
        if p == "decide":
            if "A person answered" in user_text(body):
                return note_call("NAS backup fix: the new key fingerprint is SHA256:x1y2")
            return "ask_human", {"question": "What is the NAS's new host key fingerprint?",
                                 "rationale": "Because P2 says the key changed, the fingerprint must be confirmed.",
                                 "because": ["P2"]}
        return ("orient", ORIENT) if p == "orient" else ("verify", VERIFY_DONE)

    srv = server(brain)
    eng = llm_engine(state_dir, memory, srv.url)
    s = eng.run(eng.create(GOAL, policy="llm").loop_id)
    assert s.status == "waiting_human" and s.pending_approval.kind == "question"
    assert s.open_questions == ["What is the NAS's new host key fingerprint?"]
    decide(state_dir, s.loop_id, "respond", note="SHA256:x1y2")
    s = eng.run(s.loop_id)
    assert s.status == "done" and "SHA256:x1y2" in s.iterations[0].action.args["text"]


def test_token_budget_aborts(state_dir, memory, server):
    def brain(body):
        return {"orient": ("orient", ORIENT), "decide": note_call(),
                "verify": ("verify", {"outcome": "unknown", "reason": "cannot see the NAS", "goal_done": False})
                }[phase(body)]

    srv = server(brain, tokens=40)
    eng = llm_engine(state_dir, memory, srv.url)
    g = GOAL.model_copy(update={"budget": GOAL.budget.model_copy(update={"max_tokens": 100, "max_iterations": 9})})
    s = eng.run(eng.create(g, policy="llm").loop_id)
    assert s.status == "aborted" and s.exit_reason == "budget: 120 of 100 tokens used"
    assert len(srv.requests) == 3


def test_malformed_model_answers_fail_the_iteration(state_dir, memory, server):
    def brain(body):
        p = phase(body)
        if p == "orient":
            return "orient", ORIENT
        if p == "decide":
            return "note", '{"text": "cut off'  # not JSON
        return "verify", VERIFY_DONE

    srv = server(brain)
    eng = llm_engine(state_dir, memory, srv.url)
    s = eng.run(eng.create(GOAL, policy="llm").loop_id)
    assert s.status == "blocked"  # two failed iterations (the goal's limit)
    assert all("arguments for note are not JSON" in r.verification.reason for r in s.iterations)


def test_a_dead_model_blocks_with_the_reason(state_dir, memory):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens here
    eng = llm_engine(state_dir, memory, f"http://127.0.0.1:{port}/v1")
    s = eng.run(eng.create(GOAL, policy="llm").loop_id)
    assert s.status == "blocked" and len(s.blockers) == 2
    assert all("orient: model call failed" in b for b in s.blockers)


def test_llm_policy_needs_a_model(state_dir, memory, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    eng = Engine(state_dir, memory, Settings(state_dir=state_dir, openai_base_url=None, openai_api_key=None))
    with pytest.raises(BadQuery, match="ARS_OPENAI_BASE_URL"):
        eng.create(GOAL, policy="llm")
    r = ars("loop", "run", "--goal", "x", "--policy", "llm", state=state_dir, env={"OPENAI_API_KEY": ""})
    assert r.returncode == 2 and "needs a model" in r.stderr


def test_cli_runs_the_llm_policy(state_dir, server):
    def brain(body):
        return {"orient": ("orient", ORIENT), "decide": note_call(), "verify": ("verify", VERIFY_DONE)}[phase(body)]

    srv = server(brain)
    r = ars("loop", "run", "--goal", "Fix the nightly NAS backup", "--policy", "llm", "--json", state=state_dir,
            env={"ARS_OPENAI_BASE_URL": srv.url, "ARS_OPENAI_MODEL": "local-model"})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["status"] == "done" and srv.requests[0]["model"] == "local-model"


def test_resuming_an_llm_loop_without_a_model_is_one_line_and_keeps_the_decision(state_dir, memory, server):
    def brain(body):
        p = phase(body)
        if p == "decide":
            return "shell", {"cmd": "echo ok", "rationale": "Because H1, test it.", "because": ["H1"]}
        return ("orient", ORIENT) if p == "orient" else ("verify", VERIFY_DONE)

    srv = server(brain)
    eng = llm_engine(state_dir, memory, srv.url)
    s = eng.run(eng.create(GOAL, policy="llm").loop_id)
    assert s.status == "waiting_human"
    r = ars("loop", "approve", s.loop_id, state=state_dir, env={"OPENAI_API_KEY": ""})
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "uses the llm policy" in r.stderr and "decision applies when it resumes" in r.stderr
    r = ars("loop", "resume", s.loop_id, "--json", state=state_dir, env={"ARS_OPENAI_BASE_URL": srv.url})
    assert r.returncode == 0 and json.loads(r.stdout)["status"] == "done"

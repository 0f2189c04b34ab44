"""``ars loop ...`` (run and supervise the autonomous loop), ``ars check`` and ``ars rehydrate`` (core/loop)."""

from __future__ import annotations

import shlex

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape as _esc
from rich.table import Table

from core.api import ARS
from core.errors import BadInput
from tui.cli.common import LOOP_STYLE, JsonOpt, StateOpt, call, err, fail, fail_on, open_ars, out, warn
from tui.cli.supervisor import PassFdOpt, signer_for

loop_app = typer.Typer(no_args_is_help=True,
                       help="Run and supervise the autonomous loop (observe, orient, decide, act, verify, record).")
OUTCOME_STYLE = {"pass": "green", "fail": "red", "unknown": "yellow"}
LoopIdArg = Annotated[str, typer.Argument(help="the loop id (ars loop list shows them)")]
RequestOpt = Annotated[Optional[str], typer.Option("--request", help="the request id to decide (default: the open one)")]
NoResumeOpt = Annotated[bool, typer.Option("--no-resume", help="record the decision only; resume later")]


def _loop_exit(state) -> None:
    """0 when the loop is done or waits for a person; 1 when it ended blocked or aborted."""
    if state.status in ("blocked", "aborted"):
        raise typer.Exit(1)


def print_loop(s) -> None:
    style = LOOP_STYLE.get(s.status, "")
    out.print(f"[bold]{_esc(s.loop_id)}[/]  goal [bold]{_esc(s.goal_id)}[/]  policy {s.policy}"
              + (f"  forked from {_esc(s.parent.loop_id)}@{s.parent.index}" if s.parent else ""), highlight=False)
    out.print(f"status [{style}]{s.status}[/]  iteration {s.iteration}/{s.budget.max_iterations}  "
              f"step {s.current_step}  failures {s.consecutive_failures}/{s.budget.max_consecutive_failures}  "
              f"tokens {s.tokens_used}  elapsed {s.elapsed_s:.1f} s", highlight=False)
    out.print(f"goal: {_esc(s.goal.goal)}", highlight=False)
    if s.exit_reason:
        out.print(f"exit: {_esc(s.exit_reason)}", highlight=False)
    p = s.pending_approval
    if p is not None:
        out.print(f"[yellow bold]waiting for a person[/] — request {p.request_id} ({p.kind}): {_esc(p.prompt)}",
                  highlight=False)
        if p.action is not None and p.kind == "approval":
            out.print(f"  proposed: {_esc(p.action.tool)} {_esc(json.dumps(p.action.args, ensure_ascii=False))}"
                      f"  [dim]({_esc(p.risk)})[/]", highlight=False)
            cmd = p.action.args.get("cmd") if p.action.tool == "shell" else None
            if isinstance(cmd, str):  # the command exactly as it will run (no JSON escaping)
                out.print(f"  runs: {_esc(cmd)}", highlight=False, soft_wrap=True)
        q = shlex.quote(s.loop_id)  # pasted into a shell: a loop id comes from a goal an agent may write
        hints = {"approve": f"ars loop approve {q} [--note TEXT]",
                 "edit": f"ars loop edit {q} --args JSON",
                 "reject": f"ars loop reject {q} --reason TEXT",
                 "respond": f'ars loop respond {q} "TEXT"'}
        for kind in p.allowed:
            out.print(f"  [dim]{_esc(hints[kind])}[/]", highlight=False)
    for b in s.blockers:
        out.print(f"[red]blocker:[/] {_esc(b)}", highlight=False)
    if s.iterations:
        table = Table("#", "action", "outcome", "reason", "checks failed", "person", title_justify="left",
                      expand=True)
        for r in s.iterations:
            a = r.action
            what = f"{a.tool}: {a.description}" if a and a.description and a.description != a.tool else (
                a.tool if a else "-")
            v = r.verification
            oc = f"[{OUTCOME_STYLE.get(v.outcome, '')}]{v.outcome}[/]" if v else "-"
            table.add_row(str(r.iteration), _esc(what), oc, _esc(v.reason if v else ""), str(r.checks_failed),
                          _esc(r.decision))
        out.print(table)


def _show(state, as_json: bool, ars: ARS) -> None:
    warn(ars.loops.warnings)
    if as_json:
        sys.stdout.write(state.model_dump_json() + "\n")
    else:
        print_loop(state)


@loop_app.command("run")
def loop_run(
    goal: Annotated[Optional[str], typer.Option("--goal", help="the goal as text")] = None,
    goal_file: Annotated[Optional[Path], typer.Option("--goal-file", help="a GoalFrame JSON file (may hold a script)")] = None,
    policy: Annotated[str, typer.Option("--policy", help="offline (follows the goal file's script) or llm")] = "offline",
    state: StateOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Start a loop and run it until it exits or waits for a person; prints the final LoopState."""
    if (goal is None) == (goal_file is None):
        fail("give exactly one of --goal TEXT or --goal-file FILE")
    if policy not in ("offline", "llm"):
        fail(f"unknown policy {policy!r}: choose offline or llm")
    with open_ars(state, create=True) as ars:
        s = call(lambda: ars.loop_start(goal if goal is not None else goal_file, policy=policy))
        _show(s, as_json, ars)
    _loop_exit(s)


@loop_app.command("list")
def loop_list(state: StateOpt = None, as_json: JsonOpt = False,
              wide: Annotated[bool, typer.Option("--wide", help="every column in full, however wide")] = False) -> None:
    """Every loop, newest first; unreadable checkpoints are reported by name."""
    from core.api import pending_problem

    with open_ars(state) as ars:
        states, problems = call(ars.loop_list)
        # a decision file that cannot be read keeps its loop waiting: say so here too
        problems += [pr for s in states if s.pending_approval is not None
                     for pr in [call(lambda s=s: pending_problem(ars.state_dir, s))] if pr]
    warn(problems)
    if as_json:
        sys.stdout.write("[" + ",".join(s.model_dump_json() for s in states) + "]\n")
        return
    if not states:
        out.print("no loops yet: ars loop run --goal-file samples/goals/release-notes.json")
        return
    # the loop id is what a person copies into the next command: never cut or wrapped; the status
    # says what a waiting loop asks (no column of its own), the goal takes what is left (80 columns:
    # about 20), and the zone is said once, in the header
    from rich import box

    from core.api import local_short, local_zone

    table = Table(expand=not wide, box=box.SIMPLE_HEAD, padding=(0, 1), collapse_padding=True)
    table.add_column("loop", no_wrap=True, min_width=max(len(s.loop_id) for s in states))
    table.add_column("goal", overflow="fold" if wide else "ellipsis", no_wrap=True, ratio=None if wide else 1,
                     min_width=12)
    table.add_column("status", no_wrap=True)
    table.add_column("it step", no_wrap=True)
    table.add_column(f"updated ({local_zone()})", no_wrap=True)
    asks = {"approval": "approve?", "question": "question", "unblock": "blocked"}
    for s in states:
        style = LOOP_STYLE.get(s.status, "")
        p = s.pending_approval
        status = f"waits: {asks.get(p.kind, p.kind)}" if p is not None and s.status == "waiting_human" else s.status
        table.add_row(s.loop_id, _esc(s.goal_id), f"[{style}]{status}[/]", f"{s.iteration} {s.current_step}",
                      local_short(s.updated_at, with_zone=False))
    if wide:  # as wide as the rows are, whatever the terminal
        from rich.console import Console

        Console(file=out.file, width=1000, color_system=out.color_system, force_terminal=out.is_terminal,
                highlight=False).print(table)
        return
    out.print(table)


@loop_app.command("show")
def loop_show(loop_id: LoopIdArg, state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """One loop's latest state."""
    from core.api import pending_problem

    with open_ars(state) as ars:
        s = call(lambda: ars.loop_show(loop_id))
        problem = call(lambda: pending_problem(ars.state_dir, s))
        if problem:
            ars.loops.warnings.append(problem)
        _show(s, as_json, ars)


def _decide(loop_id: str, state: Path | None, as_json: bool, decide, *, sign: str = "",
            passphrase_fd: int | None = None) -> None:
    """Run a loop call; ``sign`` (what is decided, for the passphrase prompt): the
    decision is signed with the supervisor's key when one is set up."""
    with open_ars(state) as ars:
        if sign:
            signer = signer_for(ars, passphrase_fd, f"{sign} loop {loop_id}")
            s = call(lambda: decide(ars, signer))
        else:
            s = call(lambda: decide(ars))
        _show(s, as_json, ars)
    _loop_exit(s)


@loop_app.command("approve")
def loop_approve(loop_id: LoopIdArg, note: Annotated[str, typer.Option("--note", help="why (kept in the ledger)")] = "",
                 request: RequestOpt = None, no_resume: NoResumeOpt = False, state: StateOpt = None,
                 as_json: JsonOpt = False, passphrase_fd: PassFdOpt = None) -> None:
    """Approve the proposed action and resume the loop."""
    _decide(loop_id, state, as_json, lambda a, k: a.loop_approve(loop_id, note, request, not no_resume, signer=k),
            sign="approve", passphrase_fd=passphrase_fd)


@loop_app.command("reject")
def loop_reject(loop_id: LoopIdArg,
                reason: Annotated[str, typer.Option("--reason", help="why not (required; kept in the ledger)")] = "",
                request: RequestOpt = None, no_resume: NoResumeOpt = False, state: StateOpt = None,
                as_json: JsonOpt = False, passphrase_fd: PassFdOpt = None) -> None:
    """Reject the proposed action (or decline a question); the loop follows its policy."""
    _decide(loop_id, state, as_json, lambda a, k: a.loop_reject(loop_id, reason, request, not no_resume, signer=k),
            sign="reject", passphrase_fd=passphrase_fd)


@loop_app.command("respond")
def loop_respond(loop_id: LoopIdArg, text: Annotated[str, typer.Argument(help="the answer")],
                 request: RequestOpt = None, no_resume: NoResumeOpt = False, state: StateOpt = None,
                 as_json: JsonOpt = False, passphrase_fd: PassFdOpt = None) -> None:
    """Answer the loop's question (or unblock it with guidance) and resume."""
    _decide(loop_id, state, as_json, lambda a, k: a.loop_respond(loop_id, text, request, not no_resume, signer=k),
            sign="answer", passphrase_fd=passphrase_fd)


@loop_app.command("edit")
def loop_edit(loop_id: LoopIdArg,
              args: Annotated[str, typer.Option("--args", help='the new arguments as a JSON object, e.g. \'{"cmd": "make test"}\'')],
              note: Annotated[str, typer.Option("--note", help="why the change")] = "",
              request: RequestOpt = None, no_resume: NoResumeOpt = False, state: StateOpt = None,
              as_json: JsonOpt = False, passphrase_fd: PassFdOpt = None) -> None:
    """Change the proposed action's arguments, approve it, and resume."""
    from core.api import parse_json

    parsed = call(lambda: parse_json(args, "--args"))
    if not isinstance(parsed, dict):
        fail("--args must be a JSON object, e.g. '{\"cmd\": \"make test\"}'")
    _decide(loop_id, state, as_json, lambda a, k: a.loop_edit(loop_id, parsed, note, request, not no_resume, signer=k),
            sign="edit and approve", passphrase_fd=passphrase_fd)


@loop_app.command("resume")
def loop_resume(loop_id: LoopIdArg, state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """Continue a loop from its checkpoint (after a crash, or to apply a recorded decision)."""
    _decide(loop_id, state, as_json, lambda a: a.loop_resume(loop_id))


@loop_app.command("cancel")
def loop_cancel(loop_id: LoopIdArg,
                reason: Annotated[str, typer.Option("--reason", help="why")] = "cancelled by a person",
                state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """Abort a loop that has not ended."""
    with open_ars(state) as ars:
        s = call(lambda: ars.loop_cancel(loop_id, reason))
        _show(s, as_json, ars)


@loop_app.command("fork")
def loop_fork(loop_id: LoopIdArg,
              at: Annotated[int, typer.Option("--at", help="the history entry to start from (ars loop history ID)")],
              run: Annotated[bool, typer.Option("--run", help="run the new loop at once")] = False,
              state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """Start a new loop from history entry N (its parent recorded); the original is untouched."""
    with open_ars(state) as ars:
        s = call(lambda: ars.loop_fork(loop_id, at, run=run))
        _show(s, as_json, ars)
    if run:
        _loop_exit(s)


def _warn_skipped(problems) -> None:
    """One line on stderr for the history lines that could not be read (a torn
    last line after a crash, or damage): how many, which, and the first reason."""
    if not problems:
        return
    name, _, _ = problems[0].file.rpartition(":")
    nums = [p.file.rpartition(":")[2] for p in problems]
    shown = ", ".join(nums[:10]) + (f" and {len(nums) - 10} more" if len(nums) > 10 else "")
    n = len(problems)
    warn([f"skipped {n} unreadable line{'s' * (n != 1)} of {name} (line{'s' * (n != 1)} {shown}; "
           f"the entries shown are the readable ones): line {nums[0]}: {problems[0].error}"])


@loop_app.command("history")
def loop_history(loop_id: LoopIdArg,
                 at: Annotated[Optional[int], typer.Option("--at", help="show entry N in full (replay one step)")] = None,
                 state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """Step through a loop's transitions (what replay and fork use)."""
    with open_ars(state) as ars:
        _, problems = call(lambda: ars.loops.store.history(loop_id))
        _warn_skipped(problems)
        if at is not None:
            e = call(lambda: ars.loop_entry(loop_id, at))
            if as_json:
                sys.stdout.write(e.model_dump_json() + "\n")
                return
            from core.api import local_time

            out.print(f"[bold]entry {e.index}[/] {local_time(e.ts)}  {e.kind}: "
                      f"{e.from_status or '-'}/{e.from_step or '-'} -> {e.to_status}/{e.to_step}  "
                      f"iteration {e.iteration}", highlight=False)
            out.print(f"reason: {_esc(e.reason)}", highlight=False)
            rec = e.detail.get("recall")
            if rec:
                out.print(f"recall {_esc(rec['query'])!s}: " + ", ".join(
                    f"{_esc(h['episode_id'])} {h['score']:.3f}" for h in rec["hits"]) or "no hits", highlight=False)
            for key in ("premises", "hypotheses", "action", "question", "result", "verification", "decision"):
                if e.detail.get(key) is not None:
                    out.print(f"{key}: {_esc(json.dumps(e.detail[key], ensure_ascii=False, default=str))}",
                              highlight=False, soft_wrap=True)
            failed = [c for c in e.detail.get("checks", []) if not c["result"]["passed"]]
            for c in failed:
                out.print(f"[red]check failed[/] {_esc(c['result']['subject'])}: " + "; ".join(
                    f"{_esc(v['title'])}: {_esc(v['reason'])}" for v in c["result"]["verdicts"]
                    if v["verdict"] == "fail"), highlight=False)
            print_loop(e.state)
            return
        entries = call(lambda: ars.loop_history(loop_id))
    if as_json:
        sys.stdout.write("[" + ",".join(e.model_dump_json() for e in entries) + "]\n")
        return
    from core.api import local_time, local_zone

    table = Table("#", f"time ({local_zone()})", "kind", "status", "step", "it", "reason", expand=True)
    for e in entries:
        st = e.to_status if e.from_status == e.to_status else f"{e.from_status or '-'} -> {e.to_status}"
        table.add_row(str(e.index), local_time(e.ts, date=False).rsplit(" ", 1)[0], e.kind, st, f"{e.from_step or '-'} -> {e.to_step}",
                      str(e.iteration), _esc(e.reason))
    out.print(table)


def check(
    text: Annotated[Optional[str], typer.Argument(help="the reasoning to check; '-' or nothing reads stdin")] = None,
    as_json: JsonOpt = False,
) -> None:
    """First-principles verdicts (SOUL.md) with the offending spans; exit 1 when a rule fails."""
    if text is None or text == "-":
        text = sys.stdin.read()
    try:
        result = ARS.check(text)
    except BadInput as exc:
        fail_on(exc)
    if as_json:
        sys.stdout.write(result.model_dump_json() + "\n")
    else:
        table = Table("rule", "verdict", "evidence", "reason", title=f"check: {_esc(result.text[:80])}",
                      title_justify="left", expand=True)
        for v in result.verdicts:
            style = "green" if v.verdict == "pass" else "red bold"
            ev = " · ".join(f"“{e.text}”" for e in v.evidence if v.verdict == "fail")
            table.add_row(_esc(v.title), f"[{style}]{v.verdict}[/]", _esc(ev), _esc(v.reason))
        out.print(table)
        out.print("[green bold]PASS[/]" if result.passed else
                  f"[red bold]FAIL[/] ({len(result.failures())} of 4 rules)")
    if not result.passed:
        raise typer.Exit(1)


def rehydrate(
    fmt: Annotated[str, typer.Option("--format", help="md or json")] = "md",
    state: StateOpt = None,
) -> None:
    """Startup summary: open loops, next steps, memories, sync health; also writes startup-context.md."""
    if fmt not in ("md", "json"):
        fail(f"unknown format {fmt!r}: choose md or json")
    from core.api import render_markdown

    with open_ars(state, create=True) as ars:
        report = call(ars.rehydrate)
    sys.stdout.write(report.model_dump_json() + "\n" if fmt == "json" else render_markdown(report))
    if fmt == "md":
        err.print(f"[dim]written to {_esc(report.path)}[/]", highlight=False)


"""A loop's current state for a person: where it is, what it believes
(premises, hypotheses), what blocks it, what it asks, and the last
first-principles verdicts."""

from __future__ import annotations

import json

from textual.containers import VerticalScroll
from textual.markup import escape
from textual.widgets import Static

from core.api import LoopState

from tui.widgets.status import STATUS_MARK, STATUS_VAR, age, one_line

RULE_SHORT = {"decompose": "decompose", "doubt": "doubt", "rebuild": "rebuild", "no_skip": "no-skip"}
OUTCOME = {"pass": "$text-success", "fail": "$text-error", "unknown": "$text-warning"}


def e(text: object, limit: int = 400) -> str:
    return escape(one_line(str(text), limit))


def status_markup(status: str) -> str:
    var, bold = STATUS_VAR.get(status, ("foreground", False))
    return f"[{'b ' if bold else ''}${var}]{STATUS_MARK.get(status, '')} {status}[/]"


def render_loop(s: LoopState, running: bool | None = None) -> str:
    lines: list[str] = []
    add = lines.append

    def heading(title: str, var: str = "accent", note: str = "") -> None:
        add("")
        add(f"[b ${var}]{title}[/]" + (f" [dim]({note})[/]" if note else ""))

    title = s.goal.name or s.goal_id
    paused = s.status == "active" and running is False  # active on disk, nobody runs it
    add(f"[b]{e(title)}[/]  {status_markup('paused' if paused else s.status)}")
    meta = f"[dim]{e(s.loop_id)} · goal {e(s.goal_id)} · {s.policy} policy"
    if s.parent:
        meta += f" · forked from {e(s.parent.loop_id)}@{s.parent.index}"
    add(meta + "[/]")
    b = s.budget
    where = (f"iteration [b]{s.iteration}[/]/{b.max_iterations} · step [b]{s.current_step}[/] · "
             f"failures {s.consecutive_failures}/{b.max_consecutive_failures} · "
             f"updated {age(s.updated_at)} ago")
    if s.tokens_used:
        where += f" · {s.tokens_used} tokens"
    add(where)
    if s.status == "active" and running is not None:
        add("[$text-primary]running now[/]" if running else
            "[$text-warning]active, but nothing is running it: press R to resume[/]")
    if s.status == "initialized":
        add("[dim]created, not started: press R to run it[/]")
    add("")
    add(f"[b $text-accent]Goal[/] {e(s.goal.goal)}")
    if s.exit_reason:
        add(f"[b $text-accent]Exit[/] {e(s.exit_reason)}")
    p = s.pending_approval
    if p is not None:
        add("")
        kind = {"approval": "Approval needed", "question": "Question", "unblock": "Blocked"}[p.kind]
        add(f"[b $text-warning]{kind}[/] [dim]{e(p.request_id)}[/]  {e(p.prompt)}")
        if p.action is not None:
            add(f"  proposed [b]{e(p.action.tool)}[/] {e(json.dumps(p.action.args, ensure_ascii=False))}")
        if p.risk:
            add(f"  [dim]why: {e(p.risk)}[/]")
        keys = {"approve": "a approve", "reject": "r reject", "edit": "e edit", "respond": "enter respond"}
        add("  [dim]answer it in the Inbox (key 2, or n): " + " · ".join(keys[k] for k in p.allowed) + "[/]")
    if s.blockers:
        heading("Blockers", "error")
        for bl in s.blockers:
            add(f"  ■ {e(bl)}")
    if s.open_questions:
        heading("Open questions")
        for q in s.open_questions:
            add(f"  ? {e(q)}")
    if s.premises:
        heading("Premises")
        for pr in s.premises:
            ref = f" [dim]({e(pr.ref, 60)})[/]" if pr.ref else ""
            add(f"  {e(pr.id)} [i]{pr.source}[/] {e(pr.text, 200)}{ref}")
    if s.working_hypotheses:
        heading("Hypotheses")
        for h in s.working_hypotheses:
            because = f" [dim]because {', '.join(h.because)}[/]" if h.because else ""
            add(f"  {e(h.id)} {e(h.text, 200)}{because}")
    if s.selected_action is not None:
        a = s.selected_action
        add("")
        add(f"[b $text-accent]Action[/] [b]{e(a.tool)}[/] {e(a.description, 120)}"
            + (" [$text-success](approved)[/]" if s.approved else ""))
        if a.args:
            add(f"  [dim]{e(json.dumps(a.args, ensure_ascii=False), 200)}[/]")
    if s.checks:
        heading("First-principles checks", note="this iteration")
        for c in s.checks[-6:]:
            r = c.result
            marks = " ".join(
                f"[{'$text-success' if v.verdict == 'pass' else '$text-error b'}]"
                f"{'✓' if v.verdict == 'pass' else '✗'} {RULE_SHORT.get(v.rule, v.rule)}[/]"
                for v in r.verdicts)
            rev = " [dim](revised)[/]" if c.revision else ""
            add(f"  {e(r.subject, 40)}{rev}: {marks}")
            for v in r.failures():
                spans = "; ".join(f"“{ev.text}”" for ev in v.evidence) or "(structure)"
                add(f"    [$text-error]{e(v.title, 60)}[/]: {e(v.reason, 160)} [dim]{e(spans, 120)}[/]")
    if s.iterations:
        heading("Iterations")
        for r in s.iterations[-5:]:
            a = r.action
            what = (a.description or a.tool) if a else "no action"
            v = r.verification
            oc = f"[{OUTCOME.get(v.outcome, '')}]{v.outcome}[/]" if v else "-"
            person = f" [dim]· {e(r.decision, 60)}[/]" if r.decision else ""
            add(f"  #{r.iteration} {e(what, 70)} → {oc}{person}")
    if s.last_observation:
        add("")
        add(f"[b $text-accent]Last observation[/] [dim]{e(s.last_observation.splitlines()[0], 160)}[/]")
    return "\n".join(lines)


class LoopDetail(VerticalScroll):
    """The detail pane of the Loops view."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self._body = Static("", id="loop-detail-body")
        self.border_title = "Detail"

    def compose(self):
        yield self._body

    def show(self, state: LoopState | None, running: bool | None = None) -> None:
        if state is None:
            self._body.update("[dim]Select a loop to see its state, beliefs, blockers and checks.[/]")
            return
        self._body.update(render_loop(state, running))

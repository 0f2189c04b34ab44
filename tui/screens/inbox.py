"""Inbox (2): every request waiting for a person (approvals, questions) and
every blocker, from loops and from agents (MCP clients, Claude Code's gate:
the source column says which). ``a`` approve, ``r`` reject (with a reason),
``e`` edit a loop's proposed action, ``enter`` respond; each asks y/n before
the decision is written. A loop then resumes (in this process, unless another
runs it); an agent waiting on its request goes ahead. Agents' requests go
through ``ARS.inbox_decide``: decided exactly once, whoever else decides."""

from __future__ import annotations

import json
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, VerticalScroll
from textual.markup import escape
from textual.widgets import DataTable, Static

from core.inbox import InboxRequest
from core.loop.models import LoopState

from ..modals import ConfirmModal, InputModal, json_object
from ..widgets.table import FlexTable
from ..widgets.status import age, one_line, theme_style
from .base import DashboardView

STYLES = Path(__file__).resolve().parents[2] / "styles"
COLUMNS = (("loop", "loop / id", 17), ("kind", "kind", 9), ("source", "source", 12), ("goal", "goal", 22),
           ("asks", "asks", None), ("age", "age", 4))
KIND_LABEL = {"approval": "approve?", "question": "question", "unblock": "blocked", "blocker": "blocked"}
NARROW_BELOW = 100  # terminal columns under which source and goal are drawn narrower
AGENT_POLL_S = 1.0  # how often agents' requests are read (a listing of state/inbox/)


class InboxScreen(DashboardView):
    MODE = "inbox"
    AUTO_FOCUS = "#inbox-table"
    CSS_PATH = [STYLES / "inbox.tcss"]
    BINDINGS = [
        Binding("a", "approve", "Approve", show=True),
        Binding("r", "reject", "Reject", show=True),
        Binding("e", "edit", "Edit", show=True),
        Binding("enter", "respond", "Respond", show=True),
    ]
    PALETTE = (
        ("Approve", "Approve the selected request's proposed action (a)", "approve"),
        ("Reject", "Reject the selected request, with a reason (r)", "reject"),
        ("Edit and approve", "Change the proposed action's arguments, then approve (e)", "edit"),
        ("Respond", "Answer the selected question or unblock with guidance (enter)", "respond"),
    )

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, int] = {}
        self.cells: dict[str, tuple] = {}
        self.busy: dict[str, str] = {}  # loop id -> request id decided, until the loop moves on
        self.agents: dict[str, InboxRequest] = {}  # agents' pending requests, by id (rows keyed by it)

    def compose(self) -> ComposeResult:
        yield from self.compose_header()
        with Container(id="inbox-body"):
            yield FlexTable(id="inbox-table", cursor_type="row", zebra_stripes=True, enter_label="Respond", flex="asks")
            with VerticalScroll(id="request"):
                yield Static("", id="request-body")
        yield Static("", id="inbox-empty")
        yield from self.compose_footer()

    def on_mount(self) -> None:
        table = self.query_one("#inbox-table", DataTable)
        for key, label, width in COLUMNS:
            table.add_column(label, key=key, width=width)
        table.focus()
        self.query_one("#request").border_title = "Request"
        self.call_after_refresh(self.query_one("#inbox-table", FlexTable).fit)
        super().on_mount()
        self.load_agents()
        if getattr(self.app, "watching", False):
            self.set_interval(AGENT_POLL_S, self.load_agents)

    def on_resize(self, event) -> None:
        super().on_resize(event)
        # narrow: the source and goal columns give room to "asks" (what a person reads first)
        from textual.widgets.data_table import ColumnKey

        table = self.query_one("#inbox-table", FlexTable)
        wide = event.size.width >= NARROW_BELOW
        for key, (full, narrow) in (("source", (12, 8)), ("goal", (22, 14))):
            column = table.columns.get(ColumnKey(key))
            if column is not None and column.width != (full if wide else narrow):
                column.width = full if wide else narrow
                table._require_update_dimensions = True
        table.fit()

    # -- drawing -------------------------------------------------------------------------
    def row(self, s: LoopState) -> tuple:
        p = s.pending_approval
        kind = KIND_LABEL.get(p.kind, p.kind) if p else s.status
        asks = p.prompt if p else (s.blockers[0] if s.blockers else s.exit_reason)
        if s.loop_id in self.busy:
            asks = "… decision sent, waiting for the loop"
        style = theme_style(self.app, "text-error" if s.status == "blocked" else "text-warning", bold=True)
        return (s.loop_id, Text(kind, style=style), "loop", one_line(s.goal_id, 40), one_line(asks, 160),
                age(p.created_at if p else s.updated_at))

    def agent_row(self, r: InboxRequest) -> tuple:
        style = theme_style(self.app, "text-error" if r.risk == "high" else "text-warning", bold=True)
        asks = r.summary + (f" · {r.detail}" if r.detail and r.detail != r.summary else "")
        return (r.id, Text(KIND_LABEL.get(r.kind, r.kind), style=style), one_line(r.source, 40),
                one_line(str(r.meta.get("cwd") or r.meta.get("tool_name") or "-"), 40), one_line(asks, 160),
                age(r.created_at))

    # -- agents' requests (read in a thread; drawn here) ----------------------------------
    @work(thread=True, exclusive=True, group="inbox-agents")
    def load_agents(self) -> None:
        try:
            pending = self.app.ars.inbox.list("pending")  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - an unreadable inbox leaves the loops' requests
            return
        self.app.call_from_thread(self._agents_loaded, pending)

    def _agents_loaded(self, pending: list[InboxRequest]) -> None:
        now = {r.id: r for r in pending}
        if {k: v.model_dump() for k, v in now.items()} == {k: v.model_dump() for k, v in self.agents.items()}:
            return
        self.agents = now
        self.sync()

    def sync(self, theme: bool = False) -> None:
        table = self.query_one("#inbox-table", FlexTable)
        store = self.store
        if theme:
            self.seen = {k: v for k, v in self.seen.items() if k not in self.cells}
        changed, gone = store.changed_since(self.seen)
        for loop_id in gone:
            self.seen.pop(loop_id, None)
            self._drop(table, loop_id)
        for loop_id in changed:
            s = store.states[loop_id]
            self.seen[loop_id] = store.versions[loop_id]
            sent = self.busy.get(loop_id)
            if sent is not None and (s.pending_approval is None or s.pending_approval.request_id != sent
                                     or s.status not in ("waiting_human", "blocked")):
                del self.busy[loop_id]
            if s.status not in ("waiting_human", "blocked"):
                self._drop(table, loop_id)
                continue
            new = self.row(s)
            old = self.cells.get(loop_id)
            if old is None:
                table.add_row(*new, key=loop_id)
            else:
                for (key, _l, _w), before, after in zip(COLUMNS, old, new):
                    if before != after or (theme and key == "kind"):
                        table.update_cell(loop_id, key, after)
            self.cells[loop_id] = new
        self._sync_agents(table, theme)
        if changed or gone:
            table.filled()
        empty = self.query_one("#inbox-empty", Static)
        if not store.loaded:
            text = "Loading…"
        elif not self.cells:
            text = ("[b]Nothing is waiting for you.[/]\n\nLoops that need an approval, an answer or "
                    "help past a blocker show up here, and the header counts them from every view; so do "
                    "agents' requests (MCP clients, Claude Code's gate).")
        else:
            text = ""
        empty.update(text)
        empty.display = bool(text)
        self.query_one("#inbox-body").display = not text
        self.show_request()

    def _sync_agents(self, table: DataTable, theme: bool) -> None:
        for rid in [k for k in self.cells if k.startswith("req-") and k not in self.agents]:
            self._drop(table, rid)
        for rid, r in self.agents.items():
            new = self.agent_row(r)
            old = self.cells.get(rid)
            if old is None:
                table.add_row(*new, key=rid)
            else:
                for (key, _l, _w), before, after in zip(COLUMNS, old, new):
                    if before != after or (theme and key == "kind"):
                        table.update_cell(rid, key, after)
            self.cells[rid] = new

    def _drop(self, table: DataTable, loop_id: str) -> None:
        if loop_id in self.cells:
            table.remove_row(loop_id)
            del self.cells[loop_id]

    def current_key(self) -> str | None:
        table = self.query_one("#inbox-table", DataTable)
        if not table.row_count:
            return None
        try:
            return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        except Exception:  # noqa: BLE001
            return None

    def current(self) -> LoopState | None:
        key = self.current_key()
        return self.store.states.get(key) if key is not None else None

    def current_agent(self) -> InboxRequest | None:
        key = self.current_key()
        return self.agents.get(key) if key is not None else None

    def show_agent(self, r: InboxRequest) -> None:
        head = {"approval": "[b $warning]Approval needed[/]", "question": "[b $warning]Question[/]",
                "blocker": "[b $error]Blocked[/]"}[r.kind]
        out = [f"[b]{escape(r.source)}[/]  [dim]{escape(r.id)} · asked {age(r.created_at)} ago[/]", "",
               f"{head}  [dim]risk[/] {'[b $error]high[/]' if r.risk == 'high' else escape(r.risk)}",
               escape(r.summary)]
        if r.detail:
            out += ["", f"[b]runs:[/] {escape(r.detail[:2000])}"]
        for k, v in r.meta.items():
            text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
            out.append(f"[dim]{escape(k)}: {escape(one_line(text, 200))}[/]")
        keys = {"approve": "[b]a[/] approve", "reject": "[b]r[/] reject (reason)", "respond": "[b]enter[/] respond"}
        out += ["", "keys: " + " · ".join(keys[k] for k in r.allowed())]
        self.query_one("#request-body", Static).update("\n".join(out))

    def show_request(self) -> None:
        body = self.query_one("#request-body", Static)
        agent = self.current_agent()
        if agent is not None:
            self.show_agent(agent)
            return
        s = self.current()
        if s is None:
            body.update("")
            return
        p = s.pending_approval
        out = [f"[b]{escape(s.goal.name or s.goal_id)}[/]  [dim]{escape(s.loop_id)} · iteration "
               f"{s.iteration}/{s.budget.max_iterations} · step {s.current_step}[/]",
               f"[dim]goal:[/] {escape(one_line(s.goal.goal, 300))}", ""]
        if p is not None:
            head = {"approval": "[b $warning]Approval needed[/]", "question": "[b $warning]Question[/]",
                    "unblock": "[b $error]Blocked[/]"}[p.kind]
            out.append(f"{head} [dim]{escape(p.request_id)} · asked {age(p.created_at)} ago[/]")
            out.append(escape(p.prompt))
            if p.action is not None:
                out.append("")
                out.append(f"[b]proposed:[/] {escape(p.action.tool)} — {escape(p.action.description)}")
                out.append(f"[b]args:[/] {escape(json.dumps(p.action.args, ensure_ascii=False))}")
                if p.action.rationale:
                    out.append(f"[dim]why: {escape(one_line(p.action.rationale, 240))}[/]")
            if p.risk:
                out.append(f"[$text-warning]risk: {escape(p.risk)}[/]")
            keys = {"approve": "[b]a[/] approve", "reject": "[b]r[/] reject (reason)",
                    "edit": "[b]e[/] edit args", "respond": "[b]enter[/] respond"}
            out.append("")
            out.append("keys: " + " · ".join(keys[k] for k in p.allowed))
        if s.blockers:
            out.append("")
            out.append("[b $error]blockers[/]")
            out.extend(f"  ■ {escape(one_line(b, 200))}" for b in s.blockers)
        if s.loop_id in self.busy:
            out.append("")
            out.append("[$text-primary]decision sent; the loop is resuming…[/]")
        body.update("\n".join(out))

    def decision_failed(self, loop_id: str) -> None:
        """The app could not record our decision: the row is live again."""
        if self.busy.pop(loop_id, None) is not None:
            self.seen.pop(loop_id, None)
            self.sync()

    @on(DataTable.RowHighlighted, "#inbox-table")
    def _highlighted(self, _event: DataTable.RowHighlighted) -> None:
        self.soon("request", self.show_request)

    @on(DataTable.RowSelected, "#inbox-table")
    def _selected(self, _event: DataTable.RowSelected) -> None:
        self.action_respond()

    # -- decisions -----------------------------------------------------------------------------
    def _agent_target(self, kind: str) -> InboxRequest | None:
        """The selected agent's request when ``kind`` applies to it (else a notice and None)."""
        r = self.current_agent()
        if r is None:
            return None
        allowed = r.allowed()
        if kind not in allowed:
            keys = {"approve": "a", "reject": "r", "respond": "enter"}
            what = "an approval request" if r.kind == "approval" else f"a {r.kind}"
            self.notify(f"cannot {kind} {what}: use " + " or ".join(f"{keys[k]} ({k})" for k in allowed),
                        severity="warning")
        return r if kind in allowed else None

    async def _decide_agent(self, r: InboxRequest, verdict: str, title: str, body: str, note: str = "") -> None:
        ok = await self.app.push_screen_wait(ConfirmModal(title, body))
        if not ok:
            self.notify("nothing written")
            return
        self._send_agent(r.id, verdict, note)

    @work(thread=True, group="inbox-agent-decision")
    def _send_agent(self, request_id: str, verdict: str, note: str) -> None:
        from core.api import BadInput

        try:
            done = self.app.ars.inbox_decide(request_id, verdict, note)  # type: ignore[attr-defined]
        except BadInput as exc:  # AlreadyDecided says who decided what and when
            self.app.call_from_thread(self.notify, str(exc), severity="error", title="Not recorded", timeout=8)
        except Exception as exc:  # noqa: BLE001 - an unreadable file: say so, keep the dashboard
            self.app.call_from_thread(self.notify, str(exc), severity="error", title="Not recorded", timeout=8)
        else:
            self.app.call_from_thread(self.notify, f"{request_id}: {done.status}", title="Decision recorded")
        self.app.call_from_thread(self.load_agents)

    def _target(self, kind: str) -> LoopState | None:
        s = self.current()
        if s is None:
            self.notify("nothing selected: the inbox is empty", severity="warning")
            return None
        p = s.pending_approval
        if p is None:
            self.notify(f"{s.loop_id} has no open request", severity="warning")
            return None
        if s.loop_id in self.busy:
            self.notify(f"a decision on {s.loop_id} is already on its way", severity="warning")
            return None
        if kind not in p.allowed:
            what = {"approval": "an approval request", "question": "a question", "unblock": "a blocked loop"}[p.kind]
            keys = {"approve": "a", "reject": "r", "edit": "e", "respond": "enter"}
            self.notify(f"cannot {kind} {what}: use " + " or ".join(f"{keys[k]} ({k})" for k in p.allowed),
                        severity="warning")
            return None
        return s

    async def _confirm_and_send(self, s: LoopState, kind: str, title: str, body: str, note: str = "",
                                args: dict | None = None) -> None:
        ok = await self.app.push_screen_wait(ConfirmModal(title, body))
        if not ok:
            self.notify("nothing written")
            return
        p = s.pending_approval
        assert p is not None
        self.busy[s.loop_id] = p.request_id
        self.seen.pop(s.loop_id, None)  # redraw its row as "sent"
        self.sync()
        self.app.decide(s.loop_id, kind, p.request_id, note=note, args=args)  # type: ignore[attr-defined]

    @work(exclusive=True, group="inbox-decision")
    async def action_approve(self) -> None:
        if self.current_agent() is not None:
            r = self._agent_target("approve")
            if r is not None:
                await self._decide_agent(r, "approve", f"Approve {r.id} from {r.source}?",
                                         f"{one_line(r.summary, 300)}\nruns: {one_line(r.detail or '-', 300)}")
            return
        s = self._target("approve")
        if s is None:
            return
        a = s.pending_approval.action  # type: ignore[union-attr]
        what = f"{a.tool} {json.dumps(a.args, ensure_ascii=False)}" if a else s.pending_approval.prompt  # type: ignore[union-attr]
        await self._confirm_and_send(s, "approve", f"Approve on {s.loop_id}?",
                                     f"{s.goal_id}\nruns: {one_line(what, 300)}")

    @work(exclusive=True, group="inbox-decision")
    async def action_reject(self) -> None:
        if self.current_agent() is not None:
            r = self._agent_target("reject")
            if r is None:
                return
            reason = await self.app.push_screen_wait(
                InputModal(f"Reject {r.id} from {r.source}", prompt=f"{one_line(r.summary, 300)}\n\nWhy not? "
                           "(required; the agent is told)", placeholder="the reason"))
            if reason:
                await self._decide_agent(r, "reject", f"Reject {r.id}?", f"reason: {reason}", note=reason)
            return
        s = self._target("reject")
        if s is None:
            return
        p = s.pending_approval
        assert p is not None
        reason = await self.app.push_screen_wait(
            InputModal(f"Reject {p.request_id} of {s.loop_id}", prompt=f"{one_line(p.prompt, 300)}\n\nWhy not? "
                       "(required; kept in the ledger)", placeholder="the reason"))
        if not reason:
            return
        await self._confirm_and_send(s, "reject", f"Reject on {s.loop_id}?", f"reason: {reason}", note=reason)

    @work(exclusive=True, group="inbox-decision")
    async def action_edit(self) -> None:
        if self.current_agent() is not None:
            self.notify("an agent's request is approved or rejected as it is: reject it with a reason saying "
                        "what to change", severity="warning")
            return
        s = self._target("edit")
        if s is None:
            return
        p = s.pending_approval
        assert p is not None and p.action is not None
        text = await self.app.push_screen_wait(
            InputModal(f"Edit {p.action.tool} for {s.loop_id}", prompt="The new arguments, as a JSON object; "
                       "the edited action is approved.", value=json.dumps(p.action.args, ensure_ascii=False),
                       validate=json_object))
        if not text:
            return
        args = json.loads(text)
        await self._confirm_and_send(s, "edit", f"Approve the edited {p.action.tool} on {s.loop_id}?",
                                     f"args: {json.dumps(p.action.args, ensure_ascii=False)}\n"
                                     f"  →   {json.dumps(args, ensure_ascii=False)}", args=args)

    @work(exclusive=True, group="inbox-decision")
    async def action_respond(self) -> None:
        if self.current_agent() is not None:
            r = self._agent_target("respond")
            if r is None:
                return
            text = await self.app.push_screen_wait(
                InputModal(f"Answer {r.id} from {r.source}", prompt=one_line(r.summary, 400),
                           placeholder="your answer"))
            if text:
                await self._decide_agent(r, "respond", f"Send this answer to {r.source}?", text, note=text)
            return
        s = self._target("respond")
        if s is None:
            return
        p = s.pending_approval
        assert p is not None
        label = "Unblock" if p.kind == "unblock" else "Answer"
        text = await self.app.push_screen_wait(
            InputModal(f"{label} {s.loop_id}", prompt=one_line(p.prompt, 400), placeholder="your answer"))
        if not text:
            return
        await self._confirm_and_send(s, "respond", f"Send this {label.lower()} to {s.loop_id}?", text, note=text)

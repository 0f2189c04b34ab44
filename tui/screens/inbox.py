"""Inbox (2): every request waiting for a person, whoever asks: loops'
approvals, questions and blockers, MCP clients' requests, Claude Code tool
calls held by the gate. One row each, oldest first: its source, its kind,
its risk, exactly what will run (or what is asked), its age.

``a`` approve (with an optional note), ``r`` reject (with a reason), ``e``
edit a loop's proposed action, ``enter`` respond; each asks y/n before the
decision is written, and the footer shows only the keys the selected item
takes. ``n`` (from any view) selects the next item; ``/`` filters; ``y``
copies the id. A loop then resumes (in this process, unless another runs
it); an agent waiting on its request goes ahead. Agents' requests go through
``ARS.inbox_decide``: decided exactly once, whoever else decides.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, VerticalScroll
from textual.markup import escape
from textual.widgets import DataTable, Input, Static

from core.api import ARS
from core.inbox import InboxRequest
from core.loop.models import LoopState

from ..modals import ConfirmModal, InputModal, json_object
from ..widgets.status import age, one_line, theme_style, unique_prefixes
from ..widgets.table import KeyedTable
from .base import DashboardView

STYLES = Path(__file__).resolve().parents[2] / "styles"
COLUMNS = (("id", "id", 8), ("source", "source", 18), ("kind", "kind", 9), ("risk", "risk", 6),
           ("runs", "runs / asks", None), ("age", "age", 4))
KIND_LABEL = {"approval": "approve?", "question": "question", "unblock": "blocked", "blocker": "blocked"}
RISK_VAR = {"high": "text-error", "medium": "text-warning", "low": "text-success"}
NARROW_BELOW = 100  # terminal columns under which the source column is drawn narrower
KEY_OF = {"approve": "a", "reject": "r", "edit": "e", "respond": "enter"}


class InboxScreen(DashboardView):
    MODE = "inbox"
    AUTO_FOCUS = "#inbox-table"
    CSS_PATH = [STYLES / "inbox.tcss"]
    BINDINGS = [
        Binding("a", "approve", "Approve", show=True),
        Binding("r", "reject", "Reject", show=True),
        Binding("e", "edit", "Edit", show=True),
        Binding("enter", "respond", "Respond", show=True),
        Binding("y", "copy", "Copy id", show=True),
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]
    PALETTE = (
        ("Approve", "Approve the selected request's proposed action, with an optional note (a)", "approve"),
        ("Reject", "Reject the selected request, with a reason (r)", "reject"),
        ("Edit and approve", "Change the proposed action's arguments, then approve (e)", "edit"),
        ("Respond", "Answer the selected question or unblock with guidance (enter)", "respond"),
        ("Copy request id", "Put the selected request's id on the clipboard (y)", "copy"),
    )

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, int] = {}
        self.cells: dict[str, tuple] = {}
        self.items: dict[str, InboxRequest] = {}  # row key (loop id, or an agent's request id) -> the request
        self.busy: dict[str, str] = {}  # loop id -> request id decided, until the loop moves on
        self.filter = ""
        self.selected: str | None = None

    def compose(self) -> ComposeResult:
        yield from self.compose_header()
        yield Input(placeholder="/ filter requests: source, what runs, what is asked", id="inbox-filter",
                    compact=True)
        with Container(id="inbox-body"):
            yield KeyedTable(id="inbox-table", cursor_type="row", zebra_stripes=True, enter_label="Respond",
                             flex="runs")
            with VerticalScroll(id="request"):
                yield Static("", id="request-body")
        yield Static("", id="inbox-empty")
        yield from self.compose_footer()

    def on_mount(self) -> None:
        table = self.table
        for key, label, width in COLUMNS:
            table.add_column(label, key=key, width=width)
        table.focus()
        self.query_one("#request").border_title = "Request"
        self.call_after_refresh(table.fit)
        super().on_mount()
        self._take_next()

    def on_screen_resume(self) -> None:
        super().on_screen_resume()
        self._take_next()

    def _take_next(self) -> None:
        if getattr(self.app, "next_first", False) and self.store.loaded:
            self.app.next_first = False  # type: ignore[attr-defined]
            self.select_next(first=True)

    @property
    def table(self) -> KeyedTable:
        return self.query_one("#inbox-table", KeyedTable)

    def on_resize(self, event) -> None:
        super().on_resize(event)
        # narrow: the source column gives room to "runs / asks" (what a person reads first)
        from textual.widgets.data_table import ColumnKey

        table = self.table
        width = 18 if event.size.width >= NARROW_BELOW else 11
        column = table.columns.get(ColumnKey("source"))
        if column is not None and column.width != width:
            column.width = width
            table._require_update_dimensions = True
        table.fit()

    # -- drawing -------------------------------------------------------------------------
    def request_of(self, s: LoopState) -> InboxRequest | None:
        return ARS.inbox_request_of(s)

    def row(self, key: str, r: InboxRequest, short: str) -> tuple:
        kind_var = "text-error" if r.kind == "blocker" else "text-warning"
        source = r.source if r.source != "loop" else f"loop:{r.meta.get('goal_id') or ''}"
        if r.detail and r.kind == "approval":
            runs = Text("runs ", style="dim") + Text(one_line(r.detail, 200))
        else:
            runs = Text(one_line(r.summary, 200))
        if key in self.busy:
            runs = Text("… decision sent, waiting for the loop", style="dim")
        return (short, one_line(source, 60), Text(KIND_LABEL.get(r.kind, r.kind),
                                                  style=theme_style(self.app, kind_var, bold=True)),
                Text(r.risk, style=theme_style(self.app, RISK_VAR.get(r.risk, "foreground"), r.risk == "high")),
                runs, age(r.created_at))

    def matches(self, r: InboxRequest) -> bool:
        if not self.filter:
            return True
        hay = f"{r.id} {r.source} {r.kind} {r.risk} {r.summary} {r.detail} {r.meta.get('goal_id', '')}".casefold()
        return all(w in hay for w in self.filter.casefold().split())

    def wanted(self) -> dict[str, InboxRequest]:
        """Every request waiting now, by row key (a loop's: its loop id)."""
        out: dict[str, InboxRequest] = {}
        for loop_id, s in self.store.states.items():
            if s.status in ("waiting_human", "blocked"):
                r = self.request_of(s)
                if r is not None:
                    r.meta.setdefault("goal_id", s.goal_id)
                    out[loop_id] = r
        out.update(getattr(self.app, "agent_requests", {}))
        return out

    def sync(self, theme: bool = False) -> None:
        table = self.table
        store = self.store
        keep = self.selected or table.cursor_key()
        if theme:
            self.cells.clear()
            table.clear()
        changed, gone = store.changed_since(self.seen)
        for loop_id in changed:
            self.seen[loop_id] = store.versions[loop_id]
            s = store.states[loop_id]
            sent = self.busy.get(loop_id)
            if sent is not None and (s.pending_approval is None or s.pending_approval.request_id != sent
                                     or s.status not in ("waiting_human", "blocked")):
                del self.busy[loop_id]
        for loop_id in gone:
            self.seen.pop(loop_id, None)
        items = {k: r for k, r in self.wanted().items() if self.matches(r)}
        drop = [k for k in self.cells if k not in items]
        if drop:
            table.remove_rows(drop)
            for k in drop:
                self.cells.pop(k, None)
        shorts = self.shorts(items)
        fresh: list[tuple[str, tuple]] = []
        for key, r in items.items():
            new = self.row(key, r, shorts[key])
            old = self.cells.get(key)
            if old is None:
                fresh.append((key, new))
            else:
                for (col, _l, _w), before, after in zip(COLUMNS, old, new):
                    if before != after:
                        table.update_cell(key, col, after)
            self.cells[key] = new
        table.add_keyed_rows(fresh)
        self.items = items
        if fresh or drop:
            table.order_rows(sorted(items, key=lambda k: (items[k].created_at, k)))  # oldest first: the next one
            table.filled()
        self.empty_state()
        if keep is None or not table.go_to(keep):
            keep = table.cursor_key()
        self.selected = keep
        self.show_request()
        self.bindings_follow()

    @staticmethod
    def shorts(items: dict[str, InboxRequest]) -> dict[str, str]:
        loops = unique_prefixes([k for k, r in items.items() if r.source == "loop"])
        agents = unique_prefixes([k for k, r in items.items() if r.source != "loop"], strip="req-")
        return {**loops, **agents}

    def empty_state(self) -> None:
        empty = self.query_one("#inbox-empty", Static)
        if not self.store.loaded:
            text = "Loading…"
        elif not self.cells and self.filter:
            text = f"No request matches the filter “{escape(self.filter)}” (escape clears it)."
        elif not self.cells:
            text = ("[b]Nothing is waiting for you.[/]\n\nLoops that need an approval, an answer or "
                    "help past a blocker show up here, and the header counts them from every view; so do "
                    "agents' requests (MCP clients, Claude Code's gate). n jumps here from any view.")
        else:
            text = ""
        empty.update(text)
        empty.display = bool(text)
        # filtered to nothing: the empty table keeps the focus (see LoopsScreen.empty_state)
        self.query_one("#inbox-body").display = not text or bool(self.filter)

    def retime(self) -> None:
        table = self.table
        for key, cells in self.cells.items():
            r = self.items.get(key)
            if r is None:
                continue
            a = age(r.created_at)
            if a != cells[5]:
                table.update_cell(key, "age", a)
                self.cells[key] = (*cells[:5], a)
        self.show_request()

    # -- the selection ---------------------------------------------------------------------
    def current_key(self) -> str | None:
        return self.selected if self.selected in self.cells else None

    def current(self) -> LoopState | None:
        key = self.current_key()
        return self.store.states.get(key) if key is not None else None

    def current_agent(self) -> InboxRequest | None:
        key = self.current_key()
        return getattr(self.app, "agent_requests", {}).get(key) if key is not None else None

    def current_request(self) -> InboxRequest | None:
        key = self.current_key()
        return self.items.get(key) if key is not None else None

    def select_next(self, first: bool = False) -> None:
        """``n``: the next waiting item after the selected one (oldest first, wrapping)."""
        table = self.table
        if not table.row_count:
            self.notify("nothing is waiting for you", timeout=3)
            return
        index = 0 if first or self.current_key() is None else (table.cursor_row + 1) % table.row_count
        table.move_cursor(row=index, animate=False)
        self.selected = table.cursor_key()
        table.focus()
        self.show_request()
        self.bindings_follow()

    @on(DataTable.RowHighlighted, "#inbox-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        # the row under the cursor now: a queued event may name a row that has since moved away
        key = self.table.cursor_key()
        if key in self.cells:
            self.selected = key
        self.bindings_follow()  # the footer shows the keys this item takes
        self.soon("request", self.show_request)

    @on(DataTable.RowSelected, "#inbox-table")
    def _selected(self, _event: DataTable.RowSelected) -> None:
        self.action_respond()

    def allowed(self) -> tuple[str, ...]:
        r = self.current_request()
        if r is None:
            return ()
        if r.source == "loop":
            s = self.current()
            return tuple(s.pending_approval.allowed) if s is not None and s.pending_approval else ()
        return r.allowed()

    def on_key(self, event) -> None:
        """A decision key the selected item does not take (hidden from the footer): say which keys it takes."""
        kind = {"a": "approve", "r": "reject", "e": "edit"}.get(event.key)
        if kind is None or self.focused is not self.table or kind in self.allowed():
            return
        r = self.current_request()
        if r is None:
            self.notify("nothing selected: the inbox is empty", severity="warning")
            return
        what = {"approval": "an approval request", "question": "a question", "blocker": "a blocked loop"}[r.kind]
        self.notify(f"cannot {kind} {what}: use " + " or ".join(f"{KEY_OF[k]} ({k})" for k in self.allowed()),
                    severity="warning")

    def bindings_follow(self) -> None:
        """Redraw the footer when the keys the selected item takes changed (a
        footer redraw restyles every key: not on every cursor move)."""
        allowed = self.allowed()
        if allowed != self.__dict__.get("_footer_for"):
            self.__dict__["_footer_for"] = allowed
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in KEY_OF:
            return action in self.allowed()  # False: not in the footer, and the key does nothing here
        return True

    # -- the request pane ----------------------------------------------------------------------
    def show_request(self) -> None:
        body = self.query_one("#request-body", Static)
        r = self.current_request()
        if r is None:
            body.update("")
            return
        s = self.current() if r.source == "loop" else None
        out: list[str] = []
        head = {"approval": "[b $warning]Approval needed[/]", "question": "[b $warning]Question[/]",
                "blocker": "[b $error]Blocked[/]"}[r.kind]
        risk = "[b $error]high[/]" if r.risk == "high" else escape(r.risk)
        if s is not None:
            out += [f"[b]{escape(s.goal.name or s.goal_id)}[/]  [dim]{escape(s.loop_id)} · iteration "
                    f"{s.iteration}/{s.budget.max_iterations} · step {s.current_step}[/]",
                    f"[dim]goal:[/] {escape(one_line(s.goal.goal, 300))}", ""]
        else:
            out += [f"[b]{escape(r.source)}[/]  [dim]{escape(r.id)}[/]", ""]
        out.append(f"{head}  [dim]risk[/] {risk}  [dim]· asked {age(r.created_at)} ago · "
                   f"{escape(r.meta.get('request_id', r.id))}[/]")
        out.append(escape(r.summary))
        p = s.pending_approval if s is not None else None
        if p is not None and p.action is not None:
            out += ["", f"[b]runs:[/] {escape(r.detail or p.action.tool)}",
                    f"[dim]{escape(p.action.tool)} — {escape(p.action.description)}[/]"]
            if p.action.rationale:
                out.append(f"[dim]why: {escape(one_line(p.action.rationale, 240))}[/]")
            if p.risk:
                out.append(f"[$text-warning]risk: {escape(p.risk)}[/]")
        elif r.detail:
            out += ["", f"[b]runs:[/] {escape(r.detail[:2000])}"]
        if s is None:
            for k, v in r.meta.items():
                text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
                out.append(f"[dim]{escape(k)}: {escape(one_line(text, 200))}[/]")
        keys = {"approve": "[b]a[/] approve (optional note)", "reject": "[b]r[/] reject (reason)",
                "edit": "[b]e[/] edit args", "respond": "[b]enter[/] respond"}
        out += ["", "keys: " + " · ".join(keys[k] for k in self.allowed() if k in keys) + " · [b]n[/] next"]
        if s is not None and s.blockers:
            out += ["", "[b $error]blockers[/]"]
            out.extend(f"  ■ {escape(one_line(b, 200))}" for b in s.blockers)
        if s is not None and s.loop_id in self.busy:
            out += ["", "[$text-primary]decision sent; the loop is resuming…[/]"]
        body.update("\n".join(out))

    def decision_failed(self, loop_id: str) -> None:
        """The app could not record our decision: the row is live again."""
        if self.busy.pop(loop_id, None) is not None:
            self.cells.pop(loop_id, None)
            self.table.remove_rows([loop_id])
            self.sync()

    # -- filter, copy ------------------------------------------------------------------------
    def focus_search(self) -> None:
        self.query_one("#inbox-filter", Input).focus()

    @on(Input.Changed, "#inbox-filter")
    def _filter(self, event: Input.Changed) -> None:
        value = event.value.strip()
        self.soon("filter", lambda: self.apply_filter(value), delay=0.12)

    def apply_filter(self, value: str) -> None:
        if value != self.filter:
            self.filter = value
            self.sync()

    @on(Input.Submitted, "#inbox-filter")
    def _filter_done(self, _event: Input.Submitted) -> None:
        self.table.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#inbox-filter", Input)
        if box.value:
            box.value = ""
            self.apply_filter("")
        self.table.focus()

    def action_copy(self) -> None:
        r = self.current_request()
        self.copy_id(r.id if r is not None else None, "request id")

    # -- decisions -----------------------------------------------------------------------------
    def _agent_target(self, kind: str) -> InboxRequest | None:
        """The selected agent's request when ``kind`` applies to it (else a notice and None)."""
        r = self.current_agent()
        if r is None:
            return None
        allowed = r.allowed()
        if kind not in allowed:
            what = "an approval request" if r.kind == "approval" else f"a {r.kind}"
            self.notify(f"cannot {kind} {what}: use " + " or ".join(f"{KEY_OF[k]} ({k})" for k in allowed),
                        severity="warning")
        return r if kind in allowed else None

    async def _decide_agent(self, r: InboxRequest, verdict: str, title: str, body: str, note: str = "",
                            ask_note: bool = False) -> None:
        modal = ConfirmModal(title, body, note=ask_note)
        ok = await self.app.push_screen_wait(modal)
        if not ok:
            self.notify("nothing written")
            return
        go, signer = await self.app.unlock_signer()  # type: ignore[attr-defined]
        if not go:
            return
        self._send_agent(r.id, verdict, modal.note if ask_note else note, signer)

    @work(thread=True, group="inbox-agent-decision")
    def _send_agent(self, request_id: str, verdict: str, note: str, signer=None) -> None:
        from core.api import BadInput

        try:
            done = self.app.ars.inbox_decide(request_id, verdict, note, signer=signer)  # type: ignore[attr-defined]
        except BadInput as exc:  # AlreadyDecided says who decided what and when
            self.app.call_from_thread(self.notify, str(exc), severity="error", title="Not recorded", timeout=8)
        except Exception as exc:  # noqa: BLE001 - an unreadable file: say so, keep the dashboard
            self.app.call_from_thread(self.notify, str(exc), severity="error", title="Not recorded", timeout=8)
        else:
            unverified = done.decision is not None and not done.decision.is_signed and verdict == "approve"
            self.app.call_from_thread(self.notify, f"{request_id}: {done.status}"
                                      + (f" ({note})" if note else "")
                                      + (": unverified, so the agent's hook will not act on it (its own prompt "
                                         "asks instead; ars supervisor init)" if unverified else ""),
                                      title="Decision recorded", severity="warning" if unverified else "information")
        self.app._load_agents()  # type: ignore[attr-defined]  (the header count and this list, at once)

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
            self.notify(f"cannot {kind} {what}: use " + " or ".join(f"{KEY_OF[k]} ({k})" for k in p.allowed),
                        severity="warning")
            return None
        return s

    async def _confirm_and_send(self, s: LoopState, kind: str, title: str, body: str, note: str = "",
                                args: dict | None = None, ask_note: bool = False) -> None:
        modal = ConfirmModal(title, body, note=ask_note)
        ok = await self.app.push_screen_wait(modal)
        if not ok:
            self.notify("nothing written")
            return
        if ask_note:
            note = modal.note
        go, signer = await self.app.unlock_signer()  # type: ignore[attr-defined]
        if not go:
            return
        p = s.pending_approval
        assert p is not None
        self.busy[s.loop_id] = p.request_id
        self.cells.pop(s.loop_id, None)  # redraw its row as "sent"
        self.table.remove_rows([s.loop_id])
        self.sync()
        self.app.decide(s.loop_id, kind, p.request_id, note=note, args=args,  # type: ignore[attr-defined]
                        signer=signer)

    @work(exclusive=True, group="inbox-decision")
    async def action_approve(self) -> None:
        if self.current_agent() is not None:
            r = self._agent_target("approve")
            if r is not None:
                await self._decide_agent(r, "approve", f"Approve {r.id} from {r.source}?",
                                         f"{one_line(r.summary, 300)}\nruns: {one_line(r.detail or '-', 300)}",
                                         ask_note=True)
            return
        s = self._target("approve")
        if s is None:
            return
        r = self.current_request()
        a = s.pending_approval.action  # type: ignore[union-attr]
        what = (r.detail if r is not None and r.detail else
                f"{a.tool} {json.dumps(a.args, ensure_ascii=False)}" if a else s.pending_approval.prompt)  # type: ignore[union-attr]
        await self._confirm_and_send(s, "approve", f"Approve on {s.loop_id}?",
                                     f"{s.goal_id}\nruns: {one_line(what, 300)}", ask_note=True)

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

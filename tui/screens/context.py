"""Context (6): what each agent turn was given from memory, and why not what you expected.

Every turn's injection is a receipt in the ledger (``ARS.context_receipts``): the sessions
that got turn contexts (agent, turns, how many got memories) on top; the selected
session's turns below (when, memories, characters of the budget, latency, the note); the
selected turn's memories and query in the pane. ``e`` picks the memory you expected (by
its content, or its id) and shows, turn by turn, why it was not given
(``ARS.context_why_not``, which reuses explain). Everything is read in a thread worker;
the receipts are read again when the view is shown and with ``g``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, VerticalScroll
from textual.markup import escape
from textual.widgets import DataTable, Static

from tui.screens.base import DashboardView
from tui.widgets.status import one_line, short_ids
from tui.widgets.table import KeyedTable

STYLES = Path(__file__).resolve().parents[2] / "styles"
ID_WIDTH = 24


class ContextScreen(DashboardView):
    MODE = "context"
    AUTO_FOCUS = "#sessions"
    CSS_PATH = [STYLES / "context.tcss"]
    BINDINGS = [
        Binding("e", "expect", "Why not…", show=True),
        Binding("g", "reload", "Reload", show=True),
        Binding("tab", "app.focus_next", "Next table", show=False),
    ]
    PALETTE = (
        ("Why was a memory not given", "Pick the memory you expected; per turn, why it was not injected (e)", "expect"),
        ("Reload the receipts", "Read the turns' receipts again (g)", "reload"),
    )

    def __init__(self) -> None:
        super().__init__()
        self.sessions: list[dict[str, Any]] = []
        self.receipts: list[Any] = []  # the selected session's, oldest first
        self.session: str | None = None
        self.why: dict[str, Any] = {}  # receipt event id -> WhyNot, for the expected memory
        self.expected: str | None = None

    def compose(self) -> ComposeResult:
        yield from self.compose_header()
        yield Static("", id="context-intro")
        with Container(id="context-body"):
            yield KeyedTable(id="sessions", cursor_type="row", zebra_stripes=True, flex="session")
            yield KeyedTable(id="turns", cursor_type="row", zebra_stripes=True, flex="note")
            with VerticalScroll(id="turn-pane"):
                yield Static("", id="turn-detail")
        yield from self.compose_footer()

    def on_mount(self) -> None:
        sessions = self.query_one("#sessions", KeyedTable)
        for label, key, width in (("session", "session", None), ("agent", "agent", 12), ("turns", "turns", 6),
                                  ("given", "given", 6), ("last (UTC)", "last", 17)):
            sessions.add_column(label, key=key, width=width)
        turns = self.query_one("#turns", KeyedTable)
        for label, key, width in (("turn", "turn", 10), ("when (UTC)", "when", 9), ("memories", "memories", 26),
                                  ("chars", "chars", 10), ("ms", "ms", 6), ("note", "note", None)):
            turns.add_column(label, key=key, width=width)
        sessions.border_title = "Sessions"
        turns.border_title = "Turns"
        self.query_one("#turn-pane").border_title = "Given"
        super().on_mount()

    # -- loading ---------------------------------------------------------------------------------
    def sync(self, theme: bool = False) -> None:
        if theme:
            self.show_sessions()
            return
        self.load_sessions()

    def action_reload(self) -> None:
        self.load_sessions()

    @work(thread=True, exclusive=True, group="context-sessions")
    def load_sessions(self) -> None:
        try:
            rows = self.app.ars.context_sessions()  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: BLE001 - said in the view
            self.app.call_from_thread(self.say, f"[$text-error]cannot read the receipts: {escape(one_line(str(exc), 200))}[/]")
            return
        self.app.call_from_thread(self.got_sessions, rows)

    def got_sessions(self, rows: list[dict[str, Any]]) -> None:
        self.sessions = rows
        self.show_sessions()
        if self.session is None and rows:
            self.select_session(rows[0]["session"])
        elif self.session is not None:
            self.load_turns(self.session)

    @work(thread=True, exclusive=True, group="context-turns")
    def load_turns(self, session: str) -> None:
        receipts = self.app.ars.context_receipts(session)  # type: ignore[attr-defined]
        self.app.call_from_thread(self.got_turns, session, receipts)

    def got_turns(self, session: str, receipts: list[Any]) -> None:
        if session != self.session:
            return
        self.receipts = receipts
        self.show_turns()

    # -- drawing -------------------------------------------------------------------------------------
    def say(self, text: str) -> None:
        self.query_one("#context-intro", Static).update(text)

    def show_sessions(self) -> None:
        table = self.query_one("#sessions", KeyedTable)
        keep = table.cursor_key()
        table.clear()
        for r in self.sessions:
            table.add_row(r["session"] or "(no session)", r["agent"] or "-", str(r["turns"]), str(r["injected"]),
                          r["last"][:19].replace("T", " "), key=r["session"])
        table.filled()
        table.go_to(keep)
        self.say("[dim]No turn got a context yet: agents' hooks record one per turn (ars context \"...\" shows "
                 "what a turn would get).[/]" if not self.sessions else
                 f"[dim]{len(self.sessions)} sessions with turn contexts · e: why was a memory not given · "
                 "g: reload[/]")

    def select_session(self, session: str) -> None:
        self.session = session
        self.why, self.expected = {}, None
        self.query_one("#sessions", KeyedTable).go_to(session)
        self.load_turns(session)

    @on(DataTable.RowHighlighted, "#sessions")
    def _session_moved(self, event: DataTable.RowHighlighted) -> None:
        key = event.row_key.value if event.row_key is not None else None
        if key is not None and key != self.session:
            self.select_session(key)

    @on(DataTable.RowHighlighted, "#turns")
    def _turn_moved(self, _event: DataTable.RowHighlighted) -> None:
        self.show_turn()

    def turn_key(self, i: int, r: Any) -> str:
        return r.event_id or f"#{i}"

    def show_turns(self) -> None:
        table = self.query_one("#turns", KeyedTable)
        keep = table.cursor_key()
        table.clear()
        shorts = short_ids([m.episode_id for r in self.receipts for m in r.memories], ID_WIDTH)
        for i, r in enumerate(self.receipts, 1):
            mems = ", ".join(shorts[m.episode_id] for m in r.memories) or "nothing"
            note = r.note
            w = self.why.get(self.turn_key(i, r))
            if w is not None:
                note = ("✓ " if w.injected else "✗ ") + w.reason
            table.add_row(r.turn or f"#{i}", r.at[11:19], mems, f"{r.chars}/{r.budget}", f"{r.latency_ms:.0f}",
                          one_line(note, 300), key=self.turn_key(i, r))
        table.filled()
        if not table.go_to(keep) and self.receipts:
            table.move_cursor(row=len(self.receipts) - 1)  # the latest turn
        self.show_turn()

    def selected_turn(self) -> tuple[int, Any] | None:
        key = self.query_one("#turns", KeyedTable).cursor_key()
        for i, r in enumerate(self.receipts, 1):
            if self.turn_key(i, r) == key:
                return i, r
        return None

    def show_turn(self) -> None:
        got = self.selected_turn()
        detail = self.query_one("#turn-detail", Static)
        if got is None:
            detail.update("")
            return
        i, r = got
        lines = [f"[b]{escape(r.turn or f'#{i}')}[/] of {escape(r.session or '(no session)')}"
                 f"{' · agent ' + escape(r.agent) if r.agent else ''} · {escape(r.at[:19].replace('T', ' '))} UTC",
                 f"[dim]query:[/] {escape(one_line(r.query, 400))}",
                 f"[dim]{r.chars} of {r.budget} characters · {r.latency_ms:.0f} ms[/]"]
        if r.note:
            lines.append(f"[$text-warning]{escape(r.note)}[/]")
        for n, m in enumerate(r.memories, 1):
            lines.append(f"{n}. [b]{escape(m.episode_id)}[/]  score {m.score:.3f} · {m.chars} ch"
                         f"{' · ' + escape(m.agent) if m.agent else ''}{' · ' + escape((m.ts or '')[:16]) if m.ts else ''}")
        if not r.memories:
            lines.append("[dim]nothing was given this turn[/]")
        w = self.why.get(self.turn_key(i, r))
        if w is not None:
            mark = "[$text-success]given[/]" if w.injected else "[$text-error]not given[/]"
            lines += ["", f"[b]expected {escape(self.expected or '')}[/]: {mark}", escape(w.reason)]
            if w.explain:
                lines.append(f"[dim]explain:[/] {escape(w.explain)}")
        detail.update("\n".join(lines))

    # -- why not ---------------------------------------------------------------------------------------
    @work(exclusive=True, group="context-expect")
    async def action_expect(self) -> None:
        from tui.modals import EpisodePicker

        got = self.selected_turn()
        if self.session is None or got is None:
            self.notify("select a session and a turn first", severity="warning")
            return
        _i, r = got
        shown = [(m.episode_id, "", n) for n, m in enumerate(r.memories, 1)]
        episode = await self.app.push_screen_wait(EpisodePicker(r.query or "this turn", len(r.memories) or 1, shown,
                                                                self.find_episodes))
        if episode:
            self.expected = episode
            self.why = {}
            self.show_turns()
            self.say(f"[dim]asking why {escape(episode)} was not given…[/]")
            self.run_why(self.session, episode)

    def find_episodes(self, text: str) -> list[tuple[str, str]]:
        r = self.app.ars.recall(text, k=30, tiers="sqlite,files")  # type: ignore[attr-defined]
        return [(h.episode_id, h.snippet) for h in r.hits]

    @work(thread=True, exclusive=True, group="context-why")
    def run_why(self, session: str, episode: str) -> None:
        answers = self.app.ars.context_why_not(session, episode, limit=0)  # type: ignore[attr-defined]
        self.app.call_from_thread(self.got_why, session, episode, answers)

    def got_why(self, session: str, episode: str, answers: list[Any]) -> None:
        if session != self.session or episode != self.expected:
            return
        by_at = {w.at: w for w in answers}
        self.why = {self.turn_key(i, r): by_at[r.at] for i, r in enumerate(self.receipts, 1) if r.at in by_at}
        given = sum(1 for w in answers if w.injected)
        self.say(f"[b]{escape(episode)}[/]: given at {given} of {len(answers)} turns · the note column says why not")
        self.show_turns()

"""Recall (3): search memory and see why each hit ranks where it does, and
why an episode was missed, without a second shell.

A query box and ``k`` (``+``/``-`` change it and search again); the tier
status bar (ok / down / timeout with latency, ``DEGRADED`` plainly); the hits
with each tier's rank; ``m`` pages past the cut-off (the hits below ``k``
are drawn dimmed under a cut-off line); the selected hit's score pane shows
how its fused score is made, in numbers that add up to it, and each tier's
components, which add up to that tier's score. ``x`` picks an episode to
explain by searching its content (or the hits and the ones past the cut-off)
and shows the explanation in its own pane, its verdict first.

Every tier, component and ``fuse_<tier>`` contribution is drawn from what the
result holds, so a tier or component core adds later shows up as it comes.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, Horizontal, VerticalScroll
from textual.markup import escape
from textual.widgets import DataTable, Input, Label, Static

from core.api import BadInput, cue, fusion_weights
from core.models import TIER_NAMES, Explanation, Hit, RecallResult

from tui.modals import EpisodePicker
from tui.widgets.status import one_line, short_ids, theme_style
from tui.widgets.table import KeyedTable
from tui.screens.base import DashboardView
from tui.messages import ExplainAnswered, RecallAnswered
from tui.screens.recall_score import explanation_text, placeholders_marked, score_tables, tier_bar

FIT_VAR = {"strong": "text-success", "partial": "text-warning", "weak": "text-error"}
STYLES = Path(__file__).resolve().parents[2] / "styles"
ALL_TIERS = ",".join(TIER_NAMES)
EXAMPLES = "Neo4j outage · 第一性原理 检查 · staging rollout runbook · 熔断器 冷却"
PAGE = 10  # hits one ``m`` adds past the cut-off
K_STEP = 5
ID_WIDTH = 20


class RecallScreen(DashboardView):
    MODE = "recall"
    DETAIL = "#explain-pane, #hit-pane"
    AUTO_FOCUS = "#hits"
    CSS_PATH = [STYLES / "recall.tcss"]
    BINDINGS = [
        Binding("x", "explain", "Explain", show=True),
        Binding("plus,equals_sign", "k(1)", "k+", show=True, key_display="+"),
        Binding("minus", "k(-1)", "k-", show=True, key_display="-"),
        Binding("m", "more", "Past cut-off", show=True),
        Binding("t", "toggle_tiers", "Tiers", show=True),
        Binding("d", "forget", "Forget", show=True),
        Binding("escape", "leave_box", "Results", show=False),
    ]
    PALETTE = (
        ("Explain an episode", "Why recall did or did not return an episode: pick it by its content (x)", "explain"),
        ("More past the cut-off", f"The next {PAGE} hits below k, dimmed (m)", "more"),
        ("Toggle tiers", "All three tiers side by side, or as the agent asks (t)", "toggle_tiers"),
        ("Forget this memory", "Remove the selected memory from every file ARS wrote, after a confirmation "
                               "that shows it (d)", "forget"),
    )

    def __init__(self) -> None:
        super().__init__()
        self.result: RecallResult | None = None
        self.explanation: Explanation | None = None
        self.all_tiers = True
        self.extra = 0  # hits fetched past the cut-off (m)
        self.cut = 10  # the k the result was asked for (the cut-off)
        self.shown: tuple[int, str] | None = None  # (result, episode) the score pane draws

    def compose(self) -> ComposeResult:
        yield from self.compose_header()
        with Horizontal(id="query-row"):
            yield Input(placeholder="search memory: English, 中文, or both — enter", id="query", compact=True)
            yield Label("k", id="k-label")
            yield Input(value="10", id="k", type="integer", compact=True, max_length=4)
            yield Label("", id="tiers-mode")
        yield Static("", id="tierbar")
        with Container(id="recall-body"):
            yield KeyedTable(id="hits", cursor_type="row", zebra_stripes=True, flex="snippet")
            with VerticalScroll(id="hit-pane"):
                yield Static("", id="hit-title")
                yield Static("", id="breakdown")
                yield Static("", id="hit-snippet")
            with VerticalScroll(id="explain-pane"):
                yield Static("", id="explain-verdict")
                yield Static("", id="explain-table")
        yield from self.compose_footer()

    def on_mount(self) -> None:
        hits = self.query_one("#hits", DataTable)
        hits.add_column("#", key="rank", width=3)
        hits.add_column("episode", key="episode", width=ID_WIDTH)
        hits.add_column("score", key="score", width=6)
        hits.add_column("fit", key="fit", width=7)  # absolute: query words found · cosine (core/memory/confidence.py)
        hits.add_column("n·s·f", key="tiers", width=8)
        hits.add_column("snippet", key="snippet")
        self.query_one("#hit-pane").border_title = "Score"
        self.query_one("#explain-pane").border_title = "Explain"
        self.query_one("#explain-pane").display = False
        self._mode_label()
        self.show_intro()
        self.call_after_refresh(self.query_one("#hits", KeyedTable).fit)
        super().on_mount()

    # -- search ------------------------------------------------------------------------------
    def focus_search(self) -> None:
        self.query_one("#query", Input).focus()

    def action_leave_box(self) -> None:
        if self.query_one("#explain-pane").display and self.focused is self.query_one("#hits"):
            self.close_explain()
            return
        self.query_one("#hits", DataTable).focus()

    def action_toggle_tiers(self) -> None:
        self.all_tiers = not self.all_tiers
        self._mode_label()
        if self.result is not None:
            self.search(self.result.query)

    def _mode_label(self) -> None:
        self.query_one("#tiers-mode", Label).update(
            "tiers: all" if self.all_tiers else "tiers: as the agent asks")

    def k(self) -> int:
        try:
            return max(1, min(500, int(self.query_one("#k", Input).value or "10")))
        except ValueError:
            return 10

    def tiers(self) -> str | None:
        if not self.all_tiers:
            return None
        # every tier, but the dense one only once it has vectors: asking it loads a model
        dense = self.app.ars.dense_available()  # type: ignore[attr-defined]
        return ",".join(t for t in TIER_NAMES if t != "dense" or dense)

    def action_k(self, step: int) -> None:
        k = max(1, min(500, self.k() + step * K_STEP))
        self.query_one("#k", Input).value = str(k)
        if self.result is not None:
            self.search(self.result.query)

    def action_more(self) -> None:
        if self.result is None:
            self.notify("search first (/ then enter)", severity="warning")
            return
        self.extra += PAGE
        self.search(self.result.query, keep_extra=True)

    @on(Input.Submitted, "#query")
    @on(Input.Submitted, "#k")
    def _submitted(self, _event: Input.Submitted) -> None:
        query = self.query_one("#query", Input).value.strip()
        if not query:
            self.notify("type what to search for", severity="warning")
            return
        self.search(query)
        self.query_one("#hits", DataTable).focus()

    def search(self, query: str, keep_extra: bool = False) -> None:
        if not keep_extra:
            self.extra = 0
        self.cut = self.k()
        self.query_one("#tierbar", Static).update(f"[dim]searching {escape(query)!s}…[/]")
        self.run_recall(query, self.cut, self.extra, self.tiers())

    @work(thread=True, exclusive=True, group="recall")
    def run_recall(self, query: str, k: int, extra: int, tiers: str | None) -> None:
        # messages, not calls from the thread: an answer that arrives after this view was
        # removed (the app closing mid-search) is dropped with it
        try:
            result = self.app.ars.recall(query, k=k + extra, tiers=tiers)  # type: ignore[attr-defined]
        except BadInput as exc:
            self.post_message(RecallAnswered(None, k, refused=str(exc)))
            return
        self.post_message(RecallAnswered(result, k))

    def on_recall_answered(self, msg: RecallAnswered) -> None:
        if msg.result is None:
            self.show_error(msg.refused)
            return
        self.app.record_recall(msg.result.latency_ms)  # type: ignore[attr-defined]
        self.show_result(msg.result, msg.cut)

    def show_error(self, message: str) -> None:
        self.query_one("#tierbar", Static).update(f"[$text-error]{escape(message)}[/]")

    # -- drawing -------------------------------------------------------------------------------
    def show_intro(self) -> None:
        count = getattr(self.app, "episode_count", None)
        held = f"Memory holds {count} episodes." if count is not None else ""
        self.query_one("#tierbar", Static).update(
            f"[dim]{held} Press / to type a query, enter to search. Try: {escape(EXAMPLES)}[/]" if count != 0 else
            "[dim]Memory is empty: ingest sessions first (ars ingest PATH), or run ars demo.[/]")

    def tier_bar(self, r: RecallResult) -> Text:
        return tier_bar(self.app, r, self.cut)

    def tier_names(self, r: RecallResult) -> list[str]:
        """The tiers of this result, in the order core reports them (a new tier shows up)."""
        names = [t.tier for t in r.tiers]
        for h in r.hits:
            names += [t for t in h.per_tier if t not in names]
        return names

    def show_result(self, r: RecallResult, cut: int | None = None) -> None:
        self.result = r
        self.cut = cut or self.cut
        self.shown = None
        self.query_one("#tierbar", Static).update(self.tier_bar(r))
        hits = self.query_one("#hits", KeyedTable)
        hits.clear()
        names = self.tier_names(r)
        from textual.widgets.data_table import ColumnKey

        hits.columns[ColumnKey("tiers")].label = Text("·".join(n[:1] for n in names))
        shorts = short_ids([h.episode_id for h in r.hits], ID_WIDTH)
        for h in r.hits:
            past = h.rank > self.cut
            dim = "dim" if past else ""
            ranks = "·".join(str(h.per_tier[t].rank) if t in h.per_tier else "-" for t in names)
            c = cue(h, r.tokens)
            fit = f"{c.matched}/{c.of}" + (f" {c.cosine:.2f}".replace(" 0.", " .") if c.cosine is not None else "")
            cells = [Text(str(h.rank), style=dim), Text(shorts[h.episode_id], style=dim),
                     Text(f"{h.score:.3f}", style=dim),
                     Text(fit, style=dim or theme_style(self.app, FIT_VAR[c.level], c.level == "strong")),
                     Text(ranks, style=dim),
                     Text(("▸ past cut-off · " if h.rank == self.cut + 1 else "") + one_line(h.snippet, 200),
                          style=dim)]
            hits.add_row(*cells, key=h.episode_id)
        hits.filled()
        if not r.hits:
            self.query_one("#hit-title", Static).update(
                "[b]No memories matched.[/] Press [b]x[/] and search for the episode you expected by its "
                "content, to see where it was cut off.")
            self.query_one("#breakdown", Static).update("")
            self.query_one("#hit-snippet", Static).update("")
        self.close_explain()
        self.show_hit()

    def selected_hit(self) -> Hit | None:
        if self.result is None or not self.result.hits:
            return None
        key = self.query_one("#hits", KeyedTable).cursor_key()
        return next((h for h in self.result.hits if h.episode_id == key), None)

    @on(DataTable.RowHighlighted, "#hits")
    def _highlighted(self, _event: DataTable.RowHighlighted) -> None:
        self.soon("hit", self.show_hit)

    def came_from(self, h) -> str:
        """`` from HOST (AGENT)`` for a memory another host of the team wrote."""
        host = (h.origin or {}).get("host")
        try:
            mine = self.app.ars.identity.host  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - a label only
            mine = None
        if not host or host == mine:
            return ""
        agent = h.origin.get("agent")
        return f"  [b]from {escape(host)}[/]" + (f" [dim]({escape(agent)})[/]" if agent else "")

    def show_hit(self) -> None:
        h = self.selected_hit()
        if h is None or self.result is None:
            return
        if self.shown == (id(self.result), h.episode_id) and not self.query_one("#explain-pane").display:
            return
        self.close_explain()
        self.shown = (id(self.result), h.episode_id)
        past = f"  [b $text-warning]past the cut-off k={self.cut}[/]" if h.rank > self.cut else ""
        self.query_one("#hit-pane").border_title = f"Score · #{h.rank}"
        self.query_one("#hit-title", Static).update(
            f"[b]{escape(h.episode_id)}[/]{past}{self.came_from(h)}\n"
            f"[dim]matched: {escape(' '.join(h.matched_tokens)) or '-'} · fit[/] "
            f"[${FIT_VAR[cue(h, self.result.tokens).level]}]{escape(cue(h, self.result.tokens).text())}[/]")
        self.query_one("#breakdown", Static).update(self.score_tables(h))
        self.query_one("#hit-snippet", Static).update(placeholders_marked(one_line(h.snippet, 300)))

    # -- forgetting (core/govern): the supervisor's decision, signed like any other -------------
    @work(exclusive=True, group="recall-forget")
    async def action_forget(self) -> None:
        import asyncio

        from tui.modals import ConfirmModal

        h = self.selected_hit()
        if h is None:
            self.notify("nothing selected: search first, then pick the memory to forget", severity="warning")
            return
        ars = self.app.ars  # type: ignore[attr-defined]
        try:
            sel = await asyncio.to_thread(ars.forget_select, [h.episode_id])
        except BadInput as exc:
            self.notify(str(exc), severity="error", title="Nothing to forget", timeout=8)
            return
        shown = "\n".join(f"{p.get('id', '')}  {one_line(p.get('summary', ''), 160)}" for p in sel.preview[:8])
        body = (f"{shown}\n\nIt is removed from every file ARS wrote in this state directory now, from Neo4j at "
                "the next sync and from the team's hosts at their next pull. This cannot be undone.")
        if not await self.app.push_screen_wait(ConfirmModal(f"Forget {h.episode_id}?", body)):
            self.notify("nothing forgotten")
            return
        go, signer = await self.app.unlock_signer("forget", f"forget {h.episode_id}")  # type: ignore[attr-defined]
        if not go:
            return
        try:
            report = await asyncio.to_thread(ars.forget, sel, "forgotten from the dashboard", signer)
        except Exception as exc:  # noqa: BLE001 - one line; a forget a crash cut short is finished next time
            self.notify(one_line(str(exc), 300), severity="error", title="Not forgotten", timeout=10)
            return
        where = ", ".join(sorted(report.removed)) or "here"
        peers = f"; still to go: {'; '.join(report.pending_on_peers)}" if report.pending_on_peers else ""
        self.notify(f"{len(report.ids)} forgotten ({where}){peers}", title="Forgotten", timeout=8)
        if self.result is not None:
            self.search(self.result.query)

    def score_tables(self, h: Hit):
        """How the fused score is made, then each tier's components (recall_score.py)."""
        names = [t for t in self.tier_names(self.result) if t in h.per_tier] if self.result else list(h.per_tier)
        weights = fusion_weights([r.tier for r in self.result.tiers if r.hits]) if self.result else None
        return score_tables(h, names, weights)

    # -- explain ---------------------------------------------------------------------------------
    @work(exclusive=True, group="explain-ask")
    async def action_explain(self) -> None:
        query = (self.result.query if self.result else "") or self.query_one("#query", Input).value.strip()
        if not query:
            self.notify("search first: explain tells why a query did or did not return an episode",
                        severity="warning")
            self.focus_search()
            return
        h = self.selected_hit()
        shown = [(x.episode_id, x.snippet, x.rank) for x in self.result.hits] if self.result else []
        episode = await self.app.push_screen_wait(EpisodePicker(
            query, self.k(), shown, self.find_episodes, selected=h.episode_id if h else None))
        if episode:
            self.explain(query, episode)

    def find_episodes(self, text: str) -> list[tuple[str, str]]:
        """Episodes whose content matches ``text`` (the picker calls this in a thread)."""
        r = self.app.ars.recall(text, k=30, tiers="sqlite,files")  # type: ignore[attr-defined]
        return [(h.episode_id, h.snippet) for h in r.hits]

    def explain(self, query: str, episode_id: str) -> None:
        self.open_explain(f"[dim]explaining {escape(episode_id)}…[/]", "")
        self.run_explain(query, episode_id, self.k(), self.tiers())

    @work(thread=True, exclusive=True, group="explain")
    def run_explain(self, query: str, episode_id: str, k: int, tiers: str | None) -> None:
        try:
            ex = self.app.ars.explain(query, episode_id, k=k, tiers=tiers)  # type: ignore[attr-defined]
        except BadInput as exc:
            self.post_message(ExplainAnswered(None, refused=str(exc)))
            return
        self.post_message(ExplainAnswered(ex))

    def on_explain_answered(self, msg: ExplainAnswered) -> None:
        if msg.explanation is None:
            self.open_explain(f"[$text-error]{escape(msg.refused)}[/]", "")
        else:
            self.show_explanation(msg.explanation)

    def open_explain(self, verdict: str, table: str, title: str = "Explain") -> None:
        pane = self.query_one("#explain-pane", VerticalScroll)
        pane.border_title = title
        self.query_one("#explain-verdict", Static).update(verdict)
        self.query_one("#explain-table", Static).update(table)
        self.query_one("#hit-pane").display = False
        pane.display = True
        pane.scroll_home(animate=False)

    def close_explain(self) -> None:
        self.query_one("#explain-pane").display = False
        self.query_one("#hit-pane").display = True

    def show_explanation(self, ex: Explanation) -> None:
        self.explanation = ex
        verdict, lines = explanation_text(ex)
        self.open_explain(verdict, lines, title=f"Explain {ex.episode_id}")

    def sync(self, theme: bool = False) -> None:
        if theme and self.result is not None:
            self.show_result(self.result, self.cut)
            if self.explanation is not None:
                self.show_explanation(self.explanation)

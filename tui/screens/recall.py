"""Recall (3): search memory and see why each hit ranks where it does.

A query box (and ``k``); the tier status bar (ok / down / timeout with
latency, ``DEGRADED`` plainly); results with each tier's rank and score side by
side (Neo4j / SQLite / files); the selected hit's score components per tier;
``x`` explains a selected or typed episode id: per tier, is it stored, which
query tokens it holds, its raw score and rank, and what cut it off.
"""

from __future__ import annotations

from pathlib import Path

from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, Horizontal, VerticalScroll
from textual.markup import escape
from textual.widgets import DataTable, Input, Label, Static

from core.api import BadInput
from core.models import TIER_NAMES, Explanation, Hit, RecallResult

from ..modals import InputModal
from ..widgets.table import FlexTable, RowsTable
from ..widgets.status import ms, one_line, theme_style, tier_text
from .base import DashboardView

STYLES = Path(__file__).resolve().parents[2] / "styles"
ALL_TIERS = ",".join(TIER_NAMES)
COMPONENT_ORDER = ("bm25", "lucene", "scan", "token_match", "phrase", "entity", "recency", "source", "tier_weight")
EXAMPLES = "Neo4j outage · 第一性原理 检查 · staging rollout runbook · 熔断器 冷却"


class RecallScreen(DashboardView):
    MODE = "recall"
    AUTO_FOCUS = "#hits"
    CSS_PATH = [STYLES / "recall.tcss"]
    BINDINGS = [
        Binding("x", "explain", "Explain", show=True),
        Binding("t", "toggle_tiers", "Tiers", show=True),
        Binding("escape", "leave_box", "Results", show=False),
    ]
    PALETTE = (
        ("Explain an episode", "Why recall did or did not return an episode, per tier (x)", "explain"),
        ("Toggle tiers", "All three tiers side by side, or as the agent asks (t)", "toggle_tiers"),
    )

    def __init__(self) -> None:
        super().__init__()
        self.result: RecallResult | None = None
        self.explanation: Explanation | None = None
        self.all_tiers = True
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
            yield FlexTable(id="hits", cursor_type="row", zebra_stripes=True, flex="snippet")
            with VerticalScroll(id="hit-pane"):
                yield Static("", id="hit-title")
                yield RowsTable(id="breakdown", cursor_type="none", show_cursor=False)
                yield Static("", id="hit-snippet")
                yield Static("", id="explain-title")
                yield Static("", id="explain-table")
                yield Static("", id="explain-verdict")
        yield from self.compose_footer()

    def on_mount(self) -> None:
        hits = self.query_one("#hits", DataTable)
        hits.add_column("#", key="rank", width=3)
        hits.add_column("episode", key="episode", width=22)
        hits.add_column("score", key="score", width=6)
        for t in TIER_NAMES:
            hits.add_column(t, key=t, width=8)
        hits.add_column("snippet", key="snippet")
        self.query_one("#hit-pane").border_title = "Score components"
        self.query_one("#breakdown").display = False
        self.query_one("#explain-table").display = False
        self._mode_label()
        self.show_intro()
        self.call_after_refresh(self.query_one("#hits", FlexTable).fit)
        super().on_mount()

    # -- search ------------------------------------------------------------------------------
    def focus_search(self) -> None:
        self.query_one("#query", Input).focus()

    def action_leave_box(self) -> None:
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

    @on(Input.Submitted, "#query")
    @on(Input.Submitted, "#k")
    def _submitted(self, _event: Input.Submitted) -> None:
        query = self.query_one("#query", Input).value.strip()
        if not query:
            self.notify("type what to search for", severity="warning")
            return
        self.search(query)
        self.query_one("#hits", DataTable).focus()

    def search(self, query: str) -> None:
        self.query_one("#tierbar", Static).update(f"[dim]searching {escape(query)!s}…[/]")
        self.run_recall(query, self.k(), self.tiers())

    @work(thread=True, exclusive=True, group="recall")
    def run_recall(self, query: str, k: int, tiers: str | None) -> None:
        try:
            result = self.app.ars.recall(query, k=k, tiers=tiers)  # type: ignore[attr-defined]
        except BadInput as exc:
            self.app.call_from_thread(self.show_error, str(exc))
            return
        self.app.call_from_thread(self.show_result, result)

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
        out = Text()
        for i, t in enumerate(r.tiers):
            if i:
                out.append("  ·  ", style="dim")
            out.append(f"{t.tier} ")
            out.append_text(tier_text(self.app, t.status))
            if t.status not in ("skipped",):
                out.append(f" {ms(t.latency_ms)}", style="dim")
            if t.status in ("down", "timeout", "error") and t.error:
                out.append(f" ({one_line(t.error, 60)})", style="dim")
        out.append(f"   {len(r.hits)} hits · {ms(r.latency_ms)}", style="dim")
        if r.degraded:
            out.append("   ")
            out.append(" DEGRADED ", style=theme_style(self.app, "text-error", bold=True) + Style(reverse=True))
            out.append(" a tier that should have answered did not", style=theme_style(self.app, "text-error"))
        out.append(f"\ntokens: {' '.join(r.tokens)}", style="dim")
        return out

    def show_result(self, r: RecallResult) -> None:
        self.result = r
        self.shown = None
        self.query_one("#tierbar", Static).update(self.tier_bar(r))
        hits = self.query_one("#hits", DataTable)
        hits.clear()
        for h in r.hits:
            cells = [str(h.rank), h.episode_id, f"{h.score:.3f}"]
            for t in TIER_NAMES:
                th = h.per_tier.get(t)
                cells.append(f"#{th.rank} {th.score:.2f}" if th else Text("-", style="dim"))
            cells.append(one_line(h.snippet, 200))
            hits.add_row(*cells, key=h.episode_id)
        hits.filled()
        if not r.hits:
            self.query_one("#hit-title", Static).update(
                "[b]No memories matched.[/] Press [b]x[/] and give the episode id you expected, "
                "to see where it was cut off.")
            self.query_one("#breakdown").display = False
        self.show_hit()

    def selected_hit(self) -> Hit | None:
        if self.result is None or not self.result.hits:
            return None
        hits = self.query_one("#hits", DataTable)
        row = hits.cursor_row
        if 0 <= row < len(self.result.hits):
            return self.result.hits[row]
        return None

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
        table = self.query_one("#breakdown", RowsTable)
        if h is None:
            return
        # the cursor's highlight event arrives after show_result drew this hit: redrawing it would
        # clear the table and leave it blank until its next layout
        if self.shown == (id(self.result), h.episode_id):
            return
        self.shown = (id(self.result), h.episode_id)
        title = self.query_one("#hit-title", Static)
        title.update(f"[b]#{h.rank} {escape(h.episode_id)}[/]  fused {h.score:.4f}  "
                     f"[dim]matched: {escape(' '.join(h.matched_tokens)) or '-'}[/]{self.came_from(h)}")
        self.query_one("#hit-snippet", Static).update(f"[dim]{escape(one_line(h.snippet, 300))}[/]")
        table.clear(columns=True)
        table.add_column("component", key="component")
        for t in TIER_NAMES:
            table.add_column(t, key=t)
        table.add_column("fused", key="fused")
        comps: list[str] = []
        for t in TIER_NAMES:
            th = h.per_tier.get(t)
            if th:
                comps.extend(c for c in th.breakdown if c not in comps)
        comps.sort(key=lambda c: COMPONENT_ORDER.index(c) if c in COMPONENT_ORDER else len(COMPONENT_ORDER))
        for c in comps:
            row: list = [c]
            for t in TIER_NAMES:
                th = h.per_tier.get(t)
                v = th.breakdown.get(c) if th else None
                row.append(f"{v:.3f}" if v is not None else Text("-", style="dim"))
            row.append("")
            table.add_row(*row)
        for c, v in h.breakdown.items():
            table.add_row(c, *[Text("", style="dim")] * len(TIER_NAMES), f"{v:.4f}")
        total: list = [Text("= score", style="bold")]
        ranks: list = ["rank"]
        for t in TIER_NAMES:
            th = h.per_tier.get(t)
            total.append(Text(f"{th.score:.3f}", style="bold") if th else Text("-", style="dim"))
            ranks.append(f"#{th.rank}" if th else Text("not returned", style="dim"))
        total.append(Text(f"{h.score:.4f}", style="bold"))
        ranks.append(f"#{h.rank}")
        table.add_row(*total)
        table.add_row(*ranks)
        table.filled()
        table.display = True

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
        episode = await self.app.push_screen_wait(InputModal(
            "Explain an episode", prompt=f"query: {query}  (k={self.k()})\nWhich episode id? The selected hit is "
            "filled in; type another to see why it was missed.", value=h.episode_id if h else "",
            placeholder="e.g. openclaw:s-0412:0"))
        if episode:
            self.explain(query, episode)

    def explain(self, query: str, episode_id: str) -> None:
        self.query_one("#explain-title", Static).update(f"[dim]explaining {escape(episode_id)}…[/]")
        self.run_explain(query, episode_id, self.k(), self.tiers())

    @work(thread=True, exclusive=True, group="explain")
    def run_explain(self, query: str, episode_id: str, k: int, tiers: str | None) -> None:
        try:
            ex = self.app.ars.explain(query, episode_id, k=k, tiers=tiers)  # type: ignore[attr-defined]
        except BadInput as exc:
            self.app.call_from_thread(self.query_one("#explain-title", Static).update,
                                      f"[$text-error]{escape(str(exc))}[/]")
            return
        self.app.call_from_thread(self.show_explanation, ex)

    def show_explanation(self, ex: Explanation) -> None:
        self.explanation = ex
        title = self.query_one("#explain-title", Static)
        title.update(f"\n[b $accent]Explain[/] [b]{escape(ex.episode_id)}[/] for “{escape(ex.query)}” "
                     f"[dim](k={ex.tiers[0].k if ex.tiers else '?'}; tokens {escape(' '.join(ex.tokens))})[/]")
        lines: list[str] = []
        stored_word = {True: "[$text-success]yes[/]", False: "[b $text-error]no[/]", None: "[dim]?[/]"}
        status_var = {"ok": "$text-success", "empty": "$text-warning", "skipped": "dim"}
        for t in ex.tiers:
            st = f"[{status_var.get(t.status, 'b $text-error')}]{t.status}[/]"
            rank = str(t.rank) if t.rank else "-"
            raw = f"{t.raw_score:.3f}" if t.raw_score is not None else "-"
            lines.append(f"[b]{t.tier:<7}[/]{st} · stored {stored_word[t.stored]} · rank [b]{rank}[/] · raw {raw}"
                         f" · matched {escape(' '.join(t.matched_tokens)) or '-'}")
            lines.append(f"        → {escape(t.verdict)}")
        box_ = self.query_one("#explain-table", Static)
        box_.update("\n".join(lines))
        box_.display = True
        missing = ex.tiers[0].missing_tokens if ex.tiers else []
        fused = f"fused rank {ex.fused_rank}" if ex.fused_rank else "not in the fused results"
        self.query_one("#explain-verdict", Static).update(
            f"[b]verdict:[/] {escape(ex.verdict)}  [dim]({fused}"
            + (f"; missing tokens: {escape(' '.join(missing))}" if missing else "") + ")[/]")
        self.query_one("#hit-pane", VerticalScroll).scroll_end(animate=False)

    def sync(self, theme: bool = False) -> None:
        if theme and self.result is not None:
            self.show_result(self.result)
            if self.explanation is not None:
                self.show_explanation(self.explanation)

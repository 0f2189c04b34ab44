"""Health (5): the numbers ``ars doctor`` and ``ars sync status`` print, live.

Each tier's status and latency (a table keyed by tier: a tier core adds later
gets its row), the Neo4j breaker, the sync push backlog, failures, counts and
drift, the ledger's lines, size and last fsync, and a sparkline of recall
latency over the last minutes: the recalls a person ran from the Recall view,
never this view's own probe, whose latency is said
apart (a sparkline of its own polling measured only how often it polled). Everything is read by ``ARS.health()`` in a
thread worker. A number core does not report yet is shown as absent (no team
sync, no embedder), and any other key core reports is listed as it comes.
"""

from __future__ import annotations

import json
import time
from collections import deque
from datetime import datetime
from pathlib import Path
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.containers import Container, Vertical, VerticalScroll
from textual.markup import escape
from textual.widgets import Sparkline, Static

from tui.widgets import status
from tui.widgets.status import age, ms, one_line, tier_text
from tui.widgets.table import KeyedTable
from tui.screens.base import DashboardView

STYLES = Path(__file__).resolve().parents[2] / "styles"
POLL_S = 2.0  # a poll while the view is shown (at least 5x what the last poll cost)
PROBE_QUERY = "health probe recall latency"
SAMPLES = 150  # recall latencies kept: five minutes of polls
KNOWN = {"state_dir", "sync", "tiers", "config", "breaker", "ledger_file", "team"}  # team: in the Team section
KNOWN_SYNC = {"pending", "failed", "counts", "drift", "last_error", "last_ok", "ledger",
              "namespace", "host", "push_backlog", "hosts", "drift_by_namespace", "claim"}  # the last six: Team
# numbers a later core will report; until then they are named as absent
ABSENT = (("embedding_backlog", "embedding backlog", "no embedder"),)


def value(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.2f}"
    if isinstance(v, (dict, list)):
        return one_line(json.dumps(v, ensure_ascii=False, default=str), 200)
    return one_line(str(v), 200)


def size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def when(iso: str | None) -> str:
    if not iso:
        return "never"
    try:
        ts = datetime.fromisoformat(iso)
    except ValueError:
        return escape(iso)
    return f"{status.stamp(ts)} ({age(ts)} ago)"


def claim_line(claim: dict[str, Any]) -> str:
    """Whether this state directory holds its host id in the graph (a conflict in the warning colour)."""
    if claim.get("conflict"):
        return f"  [b $text-warning]claim: {escape(one_line(str(claim['conflict']), 240))}[/]"
    state = str(claim.get("state") or "?")
    since = f" since {escape(str(claim['since']))}" if claim.get("since") else ""
    note = f" · [dim]{escape(str(claim['note']))}[/]" if claim.get("note") else ""
    return f"  claim: host {escape(str(claim.get('host', '?')))} {escape(state)}{since}{note}"


def team_lines(sync: dict[str, Any], agent: str | None = None) -> list[str]:
    """The Team section: this host's namespace, then one line per host of it (episodes in the
    graph and here, and for the other hosts the pull lag), then the drift per namespace."""
    if "namespace" not in sync:
        return []
    out = ["", f"[b $text-accent]Team[/] [dim](namespace[/] {escape(str(sync['namespace']))}[dim], this host[/] "
               f"{escape(str(sync.get('host', '?')))}"
               + (f"[dim], agent[/] {escape(agent)}" if agent else "") + "[dim]; ars sync run pushes and pulls)[/]"]
    claim = sync.get("claim")
    if isinstance(claim, dict):
        out.append(claim_line(claim))
    hosts = sync.get("hosts") or {}
    if not hosts:
        out.append("  [dim]no host has written to this namespace yet[/]")
    for name, row in hosts.items():
        graph = "-" if row.get("graph") is None else row["graph"]
        local = "-" if row.get("local") is None else row["local"]
        line = f"  {escape(name)}: graph {graph} · here {local}"
        if row.get("self"):
            line += f" · [dim]this host ·[/] push backlog {sync.get('push_backlog', sync.get('pending', 0))}"
        elif row.get("note"):
            line += f" · [dim]{escape(str(row['note']))}[/]"
        else:
            lag = row.get("lag")
            lag_s = "-" if lag is None else (f"[b $text-warning]{lag}[/]" if lag else "0")
            line += f" · pull lag {lag_s} · last pull {when(row.get('last_pull'))}"
        out.append(line)
    drifts = sync.get("drift_by_namespace") or {}
    if drifts:
        out.append("  drift: " + " · ".join(
            f"{escape(ns)} " + ("-" if d is None else f"[b $text-warning]{d}[/]" if d else "0")
            for ns, d in drifts.items()))
    return out


class HealthScreen(DashboardView):
    MODE = "health"
    DETAIL = "#health-pane"
    CSS_PATH = [STYLES / "health.tcss"]

    def __init__(self) -> None:
        super().__init__()
        self.report: dict[str, Any] | None = None
        self.cells: dict[str, tuple] = {}
        self.cost = 0.0
        self.polls = 0  # polls shown (its probe recalls are not recall samples: see the docstring)
        self._next = None  # the timer of the next poll (only while the view is shown)

    def compose(self) -> ComposeResult:
        yield from self.compose_header()
        with Container(id="health-body"):
            with Vertical(id="health-left"):
                yield KeyedTable(id="tiers", cursor_type="row", zebra_stripes=True, flex="detail")
                yield Static("", id="latency-title")
                yield Sparkline([], id="latency")
            with VerticalScroll(id="health-pane"):
                yield Static("[dim]reading…[/]", id="health-body-text")
        yield from self.compose_footer()

    def on_mount(self) -> None:
        table = self.query_one("#tiers", KeyedTable)
        for key, label, width in (("tier", "tier", 8), ("status", "status", 8), ("latency", "latency", 8),
                                  ("detail", "detail", None)):
            table.add_column(label, key=key, width=width)
        self.query_one("#health-pane").border_title = "Sync · breaker · ledger"
        self.query_one("#tiers").border_title = "Tiers"
        self.call_after_refresh(table.fit)
        super().on_mount()
        self.poll()

    @property
    def samples(self) -> deque:
        return self.app.recall_samples  # type: ignore[attr-defined]

    # -- reading (a thread) --------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="health")
    def poll(self) -> None:
        t0 = time.perf_counter()
        ars = self.app.ars  # type: ignore[attr-defined]
        try:
            report = ars.health()
        except Exception as exc:  # noqa: BLE001 - a failing probe is itself the news
            report = {"error": one_line(exc, 300)}
        try:
            r = ars.recall(PROBE_QUERY, k=5)
            report["_probe_ms"] = r.latency_ms
        except Exception as exc:  # noqa: BLE001
            report.setdefault("recall_probe_error", one_line(exc, 300))
        self.cost = time.perf_counter() - t0
        self.app.call_from_thread(self.show, report)

    def on_screen_resume(self) -> None:
        super().on_screen_resume()
        self.poll()

    # -- drawing ---------------------------------------------------------------------------------
    def show(self, report: dict[str, Any]) -> None:
        self.report = report
        self.polls += 1
        self.show_tiers(report.get("tiers") or [])
        self.show_latency()
        self.query_one("#health-body-text", Static).update(self.render_report(report))
        if self.app.screen is self and self._next is None and getattr(self.app, "watching", True):
            # the next poll: every POLL_S, or slower when a poll costs much (a huge ledger)
            delay = max(POLL_S, 5 * self.cost)
            self._next = self.set_timer(delay, self._again)

    def _again(self) -> None:
        self._next = None
        if self.app.screen is self:
            self.poll()

    def show_tiers(self, tiers: list[dict[str, Any]]) -> None:
        table = self.query_one("#tiers", KeyedTable)
        for t in tiers:
            name = str(t.get("tier"))
            lat = t.get("latency_ms")
            detail = one_line(str(t.get("error") or ""), 200)
            if status.STILL:  # whether this machine has ripgrep is not the dashboard's picture
                detail = detail.replace("ripgrep", "scan").replace("python scan", "scan")
            new = (name, tier_text(self.app, str(t.get("status", "?"))),
                   "-" if not isinstance(lat, (int, float)) or t.get("status") == "skipped" else
                   "<1 ms" if lat < 1 and not status.STILL else ms(lat), detail)
            old = self.cells.get(name)
            if old is None:
                table.add_row(*new, key=name)
            else:
                for col, before, after in zip(("tier", "status", "latency", "detail"), old, new):
                    if before != after:
                        table.update_cell(name, col, after)
            self.cells[name] = new
        table.filled()

    def show_latency(self) -> None:
        probe = (self.report or {}).get("_probe_ms")
        probe_text = f" [dim]· this view's probe[/] {ms(probe)}" if isinstance(probe, (int, float)) else ""
        values = [v for _t, v in self.samples]
        spark = self.query_one("#latency", Sparkline)
        spark.data = values[-SAMPLES:] if not status.STILL else [1.0, 2.0, 1.5, 3.0, 2.0, 1.0]
        if not values:
            text = "[b]recall latency[/] [dim]no recall run yet (3 searches)[/]" + probe_text
        else:
            srt = sorted(values)
            p50, p95 = srt[len(srt) // 2], srt[min(len(srt) - 1, int(0.95 * len(srt)))]
            span = self.samples[-1][0] - self.samples[0][0]
            minutes = "n" if status.STILL else f"{max(span, 0) / 60:.1f}"
            text = (f"[b]recall latency[/] [dim]last {minutes} min, {len(values) if not status.STILL else 'n'} "
                    f"recalls:[/] p50 {ms(p50)} · p95 {ms(p95)} · last {ms(values[-1])}" + probe_text)
        self.query_one("#latency-title", Static).update(text)

    def render_report(self, r: dict[str, Any]) -> str:
        out: list[str] = []
        add = out.append
        if "error" in r:
            add(f"[b $text-error]health could not be read:[/] {escape(r['error'])}")
        b = r.get("breaker")
        add("[b $text-accent]Neo4j breaker[/]")
        if b is None:
            add("  [dim]neo4j not configured (set ARS_NEO4J_URI)[/]")
        else:
            var = {"closed": "$text-success", "half_open": "$text-warning"}.get(b.get("state"), "b $text-error")
            add(f"  [{var}]{escape(str(b.get('state')))}[/] · failures {b.get('failures', 0)}"
                + (f" · open for {b.get('opened_for_s', 0):.0f}s" if b.get("state") != "closed" else ""))
            if b.get("last_error"):
                add(f"  [dim]last error: {escape(one_line(b['last_error'], 200))}[/]")
        sync = r.get("sync") or {}
        if sync:
            c = sync.get("counts") or {}
            add("")
            add("[b $text-accent]Sync to Neo4j[/] [dim](push)[/]")
            pending = sync.get("pending", 0)
            if b is None:  # nothing to push to: no "last ok never", no drift against a graph that is not there
                add(f"  [dim]neo4j not configured:[/] {pending} events kept to push once it is · episodes here "
                    f"{value(c.get('sqlite'))}")
            else:
                add(f"  backlog [b]{pending}[/] events · failed {sync.get('failed', 0)} · "
                    f"last ok {when(sync.get('last_ok'))}")
                drift = sync.get("drift")
                drift_s = "-" if drift is None else (f"[b $text-warning]{drift}[/]" if drift else "0")
                add(f"  episodes: sqlite {value(c.get('sqlite'))} · neo4j {value(c.get('neo4j'))} · drift {drift_s}")
            if sync.get("last_error"):
                add(f"  [$text-error]last error:[/] {escape(one_line(sync['last_error'], 240))}")
            for k, v in sync.items():
                if k not in KNOWN_SYNC and k != "embeddings":
                    add(f"  {escape(k)}: {escape(value(v))}")
            out.extend(team_lines(sync, (r.get("team") or {}).get("agent")))
            emb = sync.get("embeddings")
            if isinstance(emb, dict):
                add("")
                add("[b $text-accent]Embeddings[/] [dim](the dense tier; ars sync run embeds)[/]")
                if emb.get("embedder", "off") == "off":
                    add("  [dim]embedder off (ARS_EMBEDDER=off)[/]")
                else:
                    add(f"  {escape(str(emb.get('model') or emb.get('embedder')))} · vectors {value(emb.get('vectors'))}"
                        f" · failed {emb.get('failed', 0)} · last ok {when(emb.get('last_ok'))}")
                    if emb.get("last_error"):
                        add(f"  [$text-error]last error:[/] {escape(one_line(str(emb['last_error']), 240))}")
        for key, label, none in ABSENT:
            v = r.get(key, sync.get(key) if sync else None)
            add(f"  {label}: " + (escape(value(v)) if v is not None else f"[dim]{none}[/]"))
        led = (sync.get("ledger") if sync else None) or {}
        lf = r.get("ledger_file") or {}
        add("")
        add("[b $text-accent]Ledger[/]")
        if led:
            bad = led.get("corrupt", 0)
            add(f"  {led.get('events', 0)} events · "
                + (f"[b $text-error]{bad} corrupt[/]" if bad else "0 corrupt")
                + f" · torn tail {led.get('torn_tail', 0)}")
        if lf:
            add(f"  {size(int(lf.get('bytes') or 0)) if not status.STILL else 'n KB'} · last fsync "
                f"{when(lf.get('last_fsync')) if not status.STILL else '2026-03-20 09:00:00 (1m ago)'}")
        extra = [k for k in r if k not in KNOWN and k not in {a for a, _l, _n in ABSENT} and k != "error"
                 and not k.startswith("_")]
        if extra:
            add("")
            add("[b $text-accent]Also reported[/]")
            for k in extra:
                add(f"  {escape(k)}: {escape(value(r[k]))}")
        add("")
        add(f"[dim]state {escape(str(r.get('state_dir', '')) if not status.STILL else 'demo')} · "
            f"updated every {POLL_S:.0f}s while shown · ars doctor / ars sync status print the same[/]")
        return "\n".join(out)

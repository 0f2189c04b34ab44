"""``ars recall``: memories from every tier, as a table for a person or JSON for an agent.

The same recall is answered without typer by tui/fast_recall.py and by the recall
daemon (tui/daemon/server.py): all three take a ``RecallArgs`` and answer through
``tui.recall_answer`` so an option is added in one place.
"""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer
from rich.markup import escape as _esc
from rich.table import Table

from core.models import Explanation, RecallResult
from core.errors import BadInput
from tui.cli.common import STATUS_STYLE, JsonOpt, StateOpt, fail_on, open_ars, out
from tui.fast_recall import RecallArgs, recall as recall_with

def tier_line(result: RecallResult) -> str:
    parts = []
    for t in result.tiers:
        style = STATUS_STYLE.get(t.status, "")
        lat = f" {t.latency_ms:.0f}ms" if t.status not in ("skipped",) else ""
        if t.skip_reason:  # why, in a word or two: standby, fallback only, not configured, off
            lat = f" ({t.skip_reason})"
        parts.append(f"{t.tier} [{style}]{t.status}[/]{lat}")
    line = " · ".join(parts)
    if result.degraded:
        line += "  [red bold]DEGRADED[/]"
    return line


ABBREV = {"token_match": "tok", "phrase": "phr", "entity": "ent", "recency": "rec", "source": "src",
          "tier_weight": "tw"}


def components(breakdown: dict[str, float]) -> str:
    return " ".join(f"{ABBREV.get(k, k)} {v:.2f}" for k, v in breakdown.items() if v)


WIDE_FROM = 120  # columns from which the table fits; under them each hit is three lines (or --wide)


def _fit_level(fit) -> str:
    return "green" if fit.level == "strong" else "yellow" if fit.level == "partial" else "red"


def print_hits(result: RecallResult, me: str | None = None) -> None:
    """The hits in a terminal under ``WIDE_FROM`` columns: three lines each (the episode, its score
    and fit; each tier's rank and score; the snippet on one line), never one word per line."""
    from rich.text import Text

    from core.api import cue, when_text

    width = max(40, out.width)
    out.print(f"[bold]recall[/] {_esc(repr(result.query))}  [dim]tokens: {_esc(' '.join(result.tokens))}[/]",
              highlight=False)
    tiers = [t.tier for t in result.tiers if t.status not in ("skipped",)]
    for h in result.hits:
        fit = cue(h, result.tokens)
        host = (h.origin or {}).get("host")
        where = f"  [dim]from {_esc(host)}[/]" if host and host != me else ""
        cos = f" cos {fit.cosine:.2f}" if fit.cosine is not None else ""
        out.print(f"[bold]{h.rank:>2}[/] {_esc(h.episode_id)}  {h.score:.3f}  "
                  f"[{_fit_level(fit)}]{fit.matched}/{fit.of} {fit.level}[/]{cos}{where}", highlight=False)
        ranks = [f"{t} #{h.per_tier[t].rank} {h.per_tier[t].score:.2f}" for t in tiers if t in h.per_tier]
        if "time" in h.breakdown:  # it happened in a time the query names (the tail line says which)
            ranks.append(f"time +{h.breakdown['time']:.2f}")
        if h.ts is not None:
            ranks.append(when_text(h.ts))
        if h.copies:
            ranks.append(f"near-copies: {', '.join(h.copies)}")
        out.print(f"   [dim]{_esc(' · '.join(ranks))}[/]", highlight=False)
        snippet = Text("   " + " ".join(h.snippet.split()), no_wrap=True, overflow="ellipsis")
        snippet.truncate(width, overflow="ellipsis")
        out.print(snippet, highlight=False)


def print_recall(result: RecallResult, me: str | None = None, wide: bool = False) -> None:
    """The hits as a table (``wide``, or a terminal of ``WIDE_FROM`` columns), else three lines a hit;
    a memory another host of the team wrote says which (``me``: this host)."""
    if not wide and out.width < WIDE_FROM:
        print_hits(result, me)
        _tail(result)
        return
    table = Table(title=f"recall: {result.query!r}  tokens: {' '.join(result.tokens)}", title_justify="left",
                  show_lines=False, expand=True)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("episode, when", overflow="fold", max_width=28)
    table.add_column("score", justify="right", no_wrap=True)
    tiers = [t.tier for t in result.tiers if t.status not in ("skipped",)]
    for t in tiers:
        table.add_column(t, overflow="fold", ratio=1, min_width=14)
    table.add_column("snippet", overflow="fold", ratio=2, min_width=30)
    from core.api import when_text

    for h in result.hits:
        host = (h.origin or {}).get("host")
        where = f"from {host}/{h.origin.get('agent', '')}".rstrip("/") if host and host != me else ""
        from core.api import cue

        fit = cue(h, result.tokens)  # absolute, beside the score normalised within this result
        when = f"\n[dim]{_esc(when_text(h.ts))}[/]" if h.ts is not None else ""
        cells = [str(h.rank), _esc(h.episode_id) + when + (f"\n[dim]{_esc(where)}[/]" if where else ""),
                 f"{h.score:.4f}\n[{'green' if fit.level == 'strong' else 'yellow' if fit.level == 'partial' else 'red'}]"
                 f"{fit.matched}/{fit.of} {fit.level}[/]" + (f"\n[dim]cos {fit.cosine:.2f}[/]" if fit.cosine is not None else "")]
        for t in tiers:
            th = h.per_tier.get(t)
            cells.append(f"#{th.rank} {th.score:.2f}\n[dim]{components(th.breakdown)}[/]" if th else "[dim]-[/]")
        cells.append(h.snippet)
        table.add_row(*cells)
    out.print(table)
    _tail(result)


def _tail(result: RecallResult) -> None:
    if not result.hits:
        out.print("[yellow]no memories matched[/]")
    from core.api import weak_result

    if weak_result(result):
        out.print(f"[yellow]{_esc(weak_result(result))}[/]", highlight=False)
    out.print(tier_line(result))
    if result.times:  # the times the query names, weighed against when each memory happened
        out.print(f"[dim]time: {_esc('; '.join(result.times))}[/]", highlight=False)
    for t in result.tiers:
        if t.error and t.status in ("down", "timeout", "error"):
            out.print(f"  [dim]{t.tier}: {t.error}[/]", highlight=False)


def print_explain(ex: Explanation, wide: bool = False) -> None:
    """Each tier: status, stored, its rank (of how many), raw score, the words it matched, its verdict; then
    the fused rank and the verdict that follows from them. A table when wide, else two lines a tier."""
    k = ex.tiers[0].k if ex.tiers else "?"
    fused = (f"fused rank {ex.fused_rank}" if ex.fused_rank is not None else
             f"in the fusion of no tier's top {ex.depth}" if ex.depth else "not fused")
    if wide or out.width >= WIDE_FROM:
        table = Table(title=f"explain {ex.episode_id!r} for {ex.query!r}", title_justify="left", expand=True)
        for col in ("tier", "status", "stored", "rank", "raw score", "matched", "verdict"):
            table.add_column(col, overflow="fold")
        for t in ex.tiers:
            table.add_row(t.tier, t.status, {True: "yes", False: "no", None: "?"}[t.stored], _rank(t),
                          f"{t.raw_score:.3f}" if t.raw_score is not None else "-",
                          " ".join(t.matched_tokens) or "-", t.verdict)
        out.print(table)
    else:
        out.print(f"[bold]explain[/] {_esc(ex.episode_id)} for {_esc(repr(ex.query))}", highlight=False)
        for t in ex.tiers:
            stored = {True: "stored", False: "not stored", None: "?"}[t.stored]
            raw = f" · raw {t.raw_score:.3f}" if t.raw_score is not None else ""
            matched = f" · matched {_esc(' '.join(t.matched_tokens)) or '-'}" if t.stored else ""
            out.print(f"[bold]{t.tier:<7}[/]{t.status} · {stored} · rank {_rank(t)}{raw}{matched}", highlight=False)
            out.print(f"        [dim]→ {_esc(t.verdict)}[/]", highlight=False)
    if ex.tiers and ex.tiers[0].missing_tokens:
        out.print(f"missing query tokens: {' '.join(ex.tiers[0].missing_tokens)}", highlight=False)
    out.print(f"{fused} · k={k}", highlight=False)
    out.print(f"[bold]verdict:[/] {_esc(ex.verdict)}", highlight=False)


def _rank(t) -> str:
    if t.rank is None:
        return "-"
    return f"{t.rank} of {t.candidates}" if t.candidates else str(t.rank)


def recall(
    query: Annotated[str, typer.Argument(help="what to remember (English, Chinese or both)")],
    k: Annotated[int, typer.Option("-k", help="how many memories to return")] = 10,
    tiers: Annotated[Optional[str], typer.Option("--tiers", help="comma-separated: neo4j,sqlite,dense,files (default: neo4j and sqlite, dense once episodes are embedded (ars sync run), files as the fallback)")] = None,
    explain: Annotated[Optional[str], typer.Option("--explain", help="explain why this episode id was or was not returned")] = None,
    scope: Annotated[Optional[str], typer.Option("--scope", help="only these agents or hosts of the namespace: agent=NAME,host=NAME")] = None,
    wide: Annotated[bool, typer.Option("--wide", help="a table with every tier's components, however wide")] = False,
    state: StateOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Recall memories from every tier (neo4j, sqlite, dense by meaning, files), with per-tier scores."""
    args = RecallArgs(query=query, k=k, tiers=tiers, scope=scope, state=None if state is None else str(state))
    if explain is None:
        from tui.daemon import client

        reply = client.recall(args)
        if reply is not None and reply["code"] == 0:  # a warm daemon answered (errors: said below, as always)
            if as_json:
                sys.stdout.write(reply["stdout"])
            else:
                print_recall(RecallResult.model_validate_json(reply["stdout"]), reply.get("host"), wide)
            return
    with open_ars(state) as ars:
        try:
            if explain is not None:
                ex = ars.explain(query, explain, k=k, tiers=tiers)
                out.print_json(ex.model_dump_json()) if as_json else print_explain(ex, wide)
                return
            result = recall_with(args, ars)
        except BadInput as exc:
            fail_on(exc)
    _print_result(result, as_json, ars.identity.host, wide)
    if explain is None:
        sys.stdout.flush()
        client.spawn(args.state)  # the next call finds it warm


def _print_result(result, as_json: bool, me: str | None, wide: bool = False) -> None:
    if as_json:
        sys.stdout.write(result.model_dump_json() + "\n")
    else:
        print_recall(result, me, wide)


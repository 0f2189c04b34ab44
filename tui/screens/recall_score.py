"""What the Recall screen draws for a result, one hit and one explanation: the tier bar,
the snippet with its redaction placeholders marked, the tables that add a fused score up
from its tiers and each tier's from its components, and the explain pane's text."""

from __future__ import annotations

from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.markup import escape

from core.api import FUSION, FUSION_DEPTH, RRF_K, TIER_WEIGHT, weak_result
from core.models import Explanation, Hit, RecallResult

from tui.widgets.status import ms, one_line, theme_style, tier_text

COMPONENT_ORDER = ("bm25", "lucene", "scan", "cosine", "context", "token_match", "phrase", "entity", "recency", "source", "tier_weight")


def tier_bar(app, r: RecallResult, cut: int) -> Text:
    """The tiers' status line, the hit count and cut-off, DEGRADED and WEAK said plainly."""
    out = Text()
    for i, t in enumerate(r.tiers):
        if i:
            out.append("  ·  ", style="dim")
        out.append(f"{t.tier} ")
        out.append_text(tier_text(app, t.status))
        if t.status not in ("skipped",):
            out.append(f" {ms(t.latency_ms)}", style="dim")
        elif t.skip_reason:  # standby, fallback only, not configured, off
            out.append(f" ({t.skip_reason})", style="dim")
        if t.status in ("down", "timeout", "error") and t.error:
            out.append(f" ({one_line(t.error, 60)})", style="dim")
    shown = min(len(r.hits), cut)
    past = len(r.hits) - shown
    out.append(f"   {shown} hits (k={cut})" + (f" + {past} past the cut-off" if past else "")
               + f" · {ms(r.latency_ms)}", style="dim")
    if r.degraded:
        out.append("   ")
        out.append(" DEGRADED ", style=theme_style(app, "text-error", bold=True) + Style(reverse=True))
        out.append(" a tier that should have answered did not", style=theme_style(app, "text-error"))
    out.append(f"\ntokens: {' '.join(r.tokens)}", style="dim")
    weak = weak_result(r)
    if weak:  # 1.000 at the top says nothing about how good the top is
        out.append("\n")
        out.append(" WEAK ", style=theme_style(app, "text-warning", bold=True) + Style(reverse=True))
        out.append(f" {weak}", style=theme_style(app, "text-warning"))
    return out


def placeholders_marked(text: str) -> str:
    """A snippet as markup, a redacted secret's placeholder shown as such (not dimmed like
    the text around it), so nobody mistakes ``[secret:openai-key]`` for the key."""
    from core.api import PLACEHOLDER_RE

    out, at = [], 0
    for m in PLACEHOLDER_RE.finditer(text):
        out.append(f"[dim]{escape(text[at:m.start()])}[/]")
        out.append(f"[reverse $text-warning]{escape(m.group(0))}[/]")
        at = m.end()
    out.append(f"[dim]{escape(text[at:])}[/]")
    return "".join(out)


def score_tables(h: Hit, names: list[str], weights: dict[str, float] | None = None):
    """How the fused score is made (each tier's contribution, weight times
    its normalised score, adds up to it), then each tier's components (each
    column adds up to that tier's score). ``weights``: what fusion weighted each
    tier by in this answer (``fusion_weights``: SQLite answering without Neo4j
    carries both lexical tiers' weight); ``TIER_WEIGHT`` when not given."""
    from rich.console import Group

    fused = Table(box=None, padding=(0, 1), show_header=True, header_style="bold", expand=False)
    fused.add_column("fused")
    fused.add_column("tier rank", justify="right")
    fused.add_column(f"{'weight × share' if FUSION != 'rrf' else f'weight/({RRF_K}+rank)'}", justify="right")
    fused.add_column("=", justify="right")
    others = dict(h.breakdown)
    for t in names:
        th = h.per_tier[t]
        for key in (f"fuse_{t}", f"rrf_{t}"):
            v = others.pop(key, None)
            if v is None:
                continue
            w = (weights or TIER_WEIGHT).get(t, 1.0)
            how = f"{w:.2f}/({RRF_K}+{th.rank})" if FUSION == "rrf" else f"{w:.2f} × {v / w if w else 0:.3f}"
            fused.add_row(t, f"#{th.rank}", how, f"{v:.4f}")  # the tier's name whole (fuse_s… said nothing)
    for c, v in others.items():  # a component core adds to fusion later
        fused.add_row(c, "", "", f"{v:.4f}")
    fused.add_row(Text("= fused", style="bold"), "", "", Text(f"{h.score:.4f}", style="bold"))
    comps: list[str] = []
    for t in names:
        comps.extend(c for c in h.per_tier[t].breakdown if c not in comps)
    comps.sort(key=lambda c: COMPONENT_ORDER.index(c) if c in COMPONENT_ORDER else len(COMPONENT_ORDER))
    per = Table(box=None, padding=(0, 1), show_header=True, header_style="bold", expand=False)
    per.add_column("component")
    for t in names:
        per.add_column(t, justify="right")
    for c in comps:
        row: list = [c]
        for t in names:
            v = h.per_tier[t].breakdown.get(c)
            row.append(f"{v:.3f}" if v is not None else Text("-", style="dim"))
        per.add_row(*row)
    per.add_row(Text("= tier score", style="bold"),
                *[Text(f"{h.per_tier[t].score:.3f}", style="bold") for t in names])
    note = Text(f"share: the tier's score min-max scaled over its first {FUSION_DEPTH} hits (its best 1),"
                " whatever k"
                if FUSION != "rrf" else "fusion uses each tier's rank", style="dim")
    return Group(fused, Text(""), per, note) if names else fused


def explanation_text(ex: Explanation) -> tuple[str, str]:
    """The explain pane's verdict and its lines, one tier each."""
    k = ex.tiers[0].k if ex.tiers else "?"
    missing = ex.tiers[0].missing_tokens if ex.tiers else []
    depth = f" of every tier's top {ex.depth}" if ex.depth else ""
    fused = (f"fused rank {ex.fused_rank}" if ex.fused_rank else f"not in the fusion{depth}")
    verdict = (f"[b]verdict:[/] {escape(ex.verdict)}\n[dim]{fused} · k={k}"
               + (f" · missing tokens: {escape(' '.join(missing))}" if missing else "") + "[/]\n"
               f"[dim]query “{escape(ex.query)}” · tokens {escape(' '.join(ex.tokens))}[/]\n")
    lines: list[str] = []
    stored_word = {True: "[$text-success]yes[/]", False: "[b $text-error]no[/]", None: "[dim]?[/]"}
    status_var = {"ok": "$text-success", "empty": "$text-warning", "skipped": "dim"}
    for t in ex.tiers:
        st = f"[{status_var.get(t.status, 'b $text-error')}]{t.status}[/]"
        rank = (f"{t.rank} of {t.candidates}" if t.candidates else str(t.rank)) if t.rank else "-"
        raw = f"{t.raw_score:.3f}" if t.raw_score is not None else "-"
        matched = f" · matched {escape(' '.join(t.matched_tokens)) or '-'}" if t.stored else ""  # a tier not asked
        lines.append(f"[b]{escape(t.tier)}[/] {st} · stored {stored_word[t.stored]} · rank [b]{rank}[/] · "
                     f"raw {raw}{matched}")
        lines.append(f"  → {escape(t.verdict)}")
    return verdict, "\n".join(lines)

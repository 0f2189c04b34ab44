"""The ``ars`` command (typer + rich). Calls ``core.api`` only.

Exit codes: 0 ok, 1 failed, 2 bad input (one line on stderr saying what was
wrong and what to do). The dashboard is imported only by the commands that
open it, so ``ars recall`` never loads textual.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from core.api import ARS, BadInput
from core.config import load_settings
from core.ingest.pipeline import FORMATS
from core.models import Explanation, RecallResult

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="ARS: episodic memory, a bounded loop and a dashboard for personal AI agents.")
out = Console()
err = Console(stderr=True)

StateOpt = Annotated[Optional[Path], typer.Option("--state", help="state directory (else $ARS_STATE_DIR, else ./state)")]
JsonOpt = Annotated[bool, typer.Option("--json", help="print JSON instead of a table")]

STATUS_STYLE = {"ok": "green", "empty": "yellow", "skipped": "dim", "down": "red bold",
                "timeout": "red", "error": "red"}


def fail(message: str, code: int = 2) -> None:
    err.print(f"[red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def open_ars(state: Path | None, *, create: bool = False) -> ARS:
    try:
        return ARS(load_settings(state_dir=state), create=create)
    except BadInput as exc:
        fail(str(exc))
    except ValueError as exc:  # pydantic-settings: a malformed ARS_* variable
        fail(f"bad configuration: {' '.join(str(exc).split())[:200]}; check the ARS_* environment variables")
    raise AssertionError("unreachable")


def tier_line(result: RecallResult) -> str:
    parts = []
    for t in result.tiers:
        style = STATUS_STYLE.get(t.status, "")
        lat = f" {t.latency_ms:.0f}ms" if t.status not in ("skipped",) else ""
        parts.append(f"{t.tier} [{style}]{t.status}[/]{lat}")
    line = " · ".join(parts)
    if result.degraded:
        line += "  [red bold]DEGRADED[/]"
    return line


ABBREV = {"token_match": "tok", "phrase": "phr", "entity": "ent", "recency": "rec", "source": "src",
          "tier_weight": "tw"}


def components(breakdown: dict[str, float]) -> str:
    return " ".join(f"{ABBREV.get(k, k)} {v:.2f}" for k, v in breakdown.items() if v)


def print_recall(result: RecallResult) -> None:
    table = Table(title=f"recall: {result.query!r}  tokens: {' '.join(result.tokens)}", title_justify="left",
                  show_lines=False, expand=True)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("episode", overflow="fold", max_width=28)
    table.add_column("score", justify="right", no_wrap=True)
    tiers = [t.tier for t in result.tiers if t.status not in ("skipped",)]
    for t in tiers:
        table.add_column(t, overflow="fold", ratio=1, min_width=14)
    table.add_column("snippet", overflow="fold", ratio=2, min_width=30)
    for h in result.hits:
        cells = [str(h.rank), h.episode_id, f"{h.score:.4f}"]
        for t in tiers:
            th = h.per_tier.get(t)
            cells.append(f"#{th.rank} {th.score:.2f}\n[dim]{components(th.breakdown)}[/]" if th else "[dim]-[/]")
        cells.append(h.snippet)
        table.add_row(*cells)
    out.print(table)
    if not result.hits:
        out.print("[yellow]no memories matched[/]")
    out.print(tier_line(result))
    for t in result.tiers:
        if t.error and t.status in ("down", "timeout", "error"):
            out.print(f"  [dim]{t.tier}: {t.error}[/]", highlight=False)


def print_explain(ex: Explanation) -> None:
    table = Table(title=f"explain {ex.episode_id!r} for {ex.query!r}", title_justify="left", expand=True)
    for col in ("tier", "status", "stored", "rank", "raw score", "matched", "verdict"):
        table.add_column(col, overflow="fold")
    for t in ex.tiers:
        stored = {True: "yes", False: "no", None: "?"}[t.stored]
        table.add_row(t.tier, t.status, stored, str(t.rank or "-"),
                      f"{t.raw_score:.3f}" if t.raw_score is not None else "-",
                      " ".join(t.matched_tokens) or "-", t.verdict)
    out.print(table)
    if ex.tiers and ex.tiers[0].missing_tokens:
        out.print(f"missing query tokens: {' '.join(ex.tiers[0].missing_tokens)}", highlight=False)
    out.print(f"[bold]verdict:[/] {ex.verdict}", highlight=False)


@app.command()
def recall(
    query: Annotated[str, typer.Argument(help="what to remember (English, Chinese or both)")],
    k: Annotated[int, typer.Option("-k", help="how many memories to return")] = 10,
    tiers: Annotated[Optional[str], typer.Option("--tiers", help="comma-separated: neo4j,sqlite,files (default: the index tiers, files as fallback)")] = None,
    explain: Annotated[Optional[str], typer.Option("--explain", help="explain why this episode id was or was not returned")] = None,
    state: StateOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Recall memories from every tier, with per-tier scores."""
    with open_ars(state) as ars:
        try:
            if explain is not None:
                ex = ars.explain(query, explain, k=k, tiers=tiers)
                out.print_json(ex.model_dump_json()) if as_json else print_explain(ex)
                return
            result = ars.recall(query, k=k, tiers=tiers)
        except BadInput as exc:
            fail(str(exc))
        if as_json:
            sys.stdout.write(result.model_dump_json() + "\n")
        else:
            print_recall(result)


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="files or folders to ingest")],
    fmt: Annotated[str, typer.Option("--format", help=f"one of: {', '.join(FORMATS)}")] = "auto",
    state: StateOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Ingest session files into memory."""
    with open_ars(state, create=True) as ars:
        try:
            report = ars.ingest(paths, fmt=fmt)
        except BadInput as exc:
            fail(str(exc))
    if as_json:
        sys.stdout.write(report.model_dump_json() + "\n")
        return
    out.print(f"files: {report.files}  episodes added: {report.episodes_added}  "
              f"duplicates skipped: {report.duplicates_skipped}  malformed lines: {len(report.malformed)}")
    for m in report.malformed[:50]:
        out.print(f"  [yellow]{m.file}:{m.line}[/]: {m.error}", highlight=False)
    if len(report.malformed) > 50:
        out.print(f"  ... and {len(report.malformed) - 50} more (use --json for all)")


@app.command()
def doctor(state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """Each tier's health and the configuration in force (no secrets)."""
    with open_ars(state) as ars:
        report = ars.doctor()
    if as_json:
        sys.stdout.write(json.dumps(report) + "\n")
        return
    out.print(f"state: {report['state_dir']}")
    table = Table("tier", "status", "latency", "detail")
    for t in report["tiers"]:
        style = STATUS_STYLE.get(t["status"], "")
        table.add_row(t["tier"], f"[{style}]{t['status']}[/]", f"{t['latency_ms']:.0f} ms", t["error"])
    out.print(table)
    cfg = Table("setting", "value")
    for key, value in report["config"].items():
        cfg.add_row(key, str(value))
    out.print(cfg)


def main() -> None:
    app()


if __name__ == "__main__":
    main()

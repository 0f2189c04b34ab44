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


def print_ingest(report) -> None:
    table = Table("file", "format", "added", "skipped", "malformed", "status", title="ingest", title_justify="left")
    for f in report.per_file[-40:]:
        style = {"failed": "red", "unchanged": "dim"}.get(f.status, "")
        table.add_row(f.file, f.format or "-", str(f.episodes_added), str(f.duplicates_skipped), str(f.malformed),
                      f"[{style}]{f.status}[/]" if style else f.status)
    if len(report.per_file) > 1:
        out.print(table)
    out.print(f"files: {report.files}  episodes added: {report.episodes_added}  "
              f"duplicates skipped: {report.duplicates_skipped}  unchanged files: {report.unchanged_files}  "
              f"malformed lines: {len(report.malformed)}")
    for m in report.malformed[:50]:
        where = f"{m.file}:{m.line}" if m.line else m.file
        out.print(f"  [yellow]{where}[/]: {m.error}", highlight=False)
    if len(report.malformed) > 50:
        out.print(f"  ... and {len(report.malformed) - 50} more (use --json for all)")
    if report.sync is not None:
        s = report.sync
        if s["ok"]:
            out.print(f"neo4j: synced {s['applied']} events, {s['pending']} pending")
        else:
            out.print(f"[yellow]neo4j: sync deferred ({s['error']}); {s['pending']} pending; "
                      f"run `ars sync run` when it is back[/]", highlight=False)


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="files or folders to ingest")],
    fmt: Annotated[str, typer.Option("--format", help=f"one of: {', '.join(FORMATS)}")] = "auto",
    watch: Annotated[bool, typer.Option("--watch", help="keep following the folders and ingest what changes")] = False,
    idle: Annotated[float, typer.Option("--idle", help="with --watch: seconds of quiet before a session is finalised")] = 300.0,
    force: Annotated[bool, typer.Option("--force", help="re-read files even when unchanged")] = False,
    state: StateOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Ingest session files into memory (incremental: unchanged files are skipped)."""
    with open_ars(state, create=True) as ars:
        try:
            if watch:
                return _watch(ars, paths, fmt, idle, as_json)
            report = _ingest_with_progress(ars, paths, fmt, force, quiet=as_json)
        except BadInput as exc:
            fail(str(exc))
    if as_json:
        sys.stdout.write(report.model_dump_json(exclude={"per_file"}) + "\n")
    else:
        print_ingest(report)
    if report.failed_files and report.failed_files == len(report.per_file):
        fail("nothing could be read: check the paths and their permissions")
    if report.failed_files:
        raise typer.Exit(1)


def _ingest_with_progress(ars: ARS, paths: list[Path], fmt: str, force: bool, quiet: bool):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if quiet or not err.is_terminal:
        return ars.ingest(paths, fmt=fmt, force=force)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True) as bar:
        task = bar.add_task("ingesting", total=None)

        def step(path: Path, summary) -> None:
            bar.update(task, advance=1, description=f"{path.name[:40]} +{summary.episodes_added}")

        return ars.ingest(paths, fmt=fmt, force=force, progress=step)


def _watch(ars: ARS, paths: list[Path], fmt: str, idle: float, as_json: bool) -> None:
    def on_report(report) -> None:
        if as_json:
            sys.stdout.write(report.model_dump_json(exclude={"per_file"}) + "\n")
            sys.stdout.flush()
        elif report.episodes_added or report.malformed or report.failed_files:
            print_ingest(report)

    def on_finalized(path: Path) -> None:
        if not as_json:
            out.print(f"[green]finalised[/] {path} (idle {idle:.0f}s)")

    watcher = ars.watcher(paths, fmt=fmt, idle_seconds=idle, on_report=on_report, on_finalized=on_finalized)
    if not as_json:
        out.print(f"watching {', '.join(map(str, paths))} (Ctrl-C to stop)")
    try:
        watcher.run()
    except KeyboardInterrupt:
        watcher.stop_event.set()


sync_app = typer.Typer(no_args_is_help=True, help="Neo4j sync: status, drain the ledger, rebuild.")
app.add_typer(sync_app, name="sync")


@sync_app.command("status")
def sync_status(state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """Pending and failed counts, episodes per store, drift, last error."""
    with open_ars(state) as ars:
        st = ars.sync_status()
    if as_json:
        sys.stdout.write(json.dumps(st) + "\n")
        return
    c = st["counts"]
    out.print(f"pending: {st['pending']}  failed: {st['failed']}  sqlite: {c['sqlite']}  "
              f"neo4j: {c['neo4j'] if c['neo4j'] is not None else '-'}  drift: {st['drift'] if st['drift'] is not None else '-'}")
    led = st["ledger"]
    out.print(f"ledger: {led['events']} events, {led['corrupt']} corrupt, torn tail: {led['torn_tail']}")
    if st["last_error"]:
        out.print(f"[yellow]last error:[/] {st['last_error']}", highlight=False)


def _print_sync(report, what: str) -> None:
    if report.ok:
        out.print(f"{what}: {report.applied} applied in {report.seconds:.1f}s, {report.pending} pending")
    else:
        err.print(f"[red]{what} failed:[/] {report.error}; {report.pending} pending (nothing is lost: "
                  "the ledger keeps them)", highlight=False)
        raise typer.Exit(1)


@sync_app.command("run")
def sync_run(state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """Drain the ledger into Neo4j (retried with backoff)."""
    with open_ars(state) as ars:
        try:
            report = ars.sync_run()
        except BadInput as exc:
            fail(str(exc))
    if as_json:
        sys.stdout.write(report.model_dump_json() + "\n")
        raise typer.Exit(0 if report.ok else 1)
    _print_sync(report, "sync")


@sync_app.command("backfill")
def sync_backfill(
    clear: Annotated[bool, typer.Option("--clear", help="delete what Neo4j has first")] = False,
    state: StateOpt = None, as_json: JsonOpt = False,
) -> None:
    """Rebuild Neo4j from SQLite, the store of record."""
    with open_ars(state) as ars:
        try:
            report = ars.backfill(clear=clear)
        except BadInput as exc:
            fail(str(exc))
    if as_json:
        sys.stdout.write(report.model_dump_json() + "\n")
        raise typer.Exit(0 if report.ok else 1)
    _print_sync(report, "backfill")


@app.command()
def rebuild(state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """Recreate memory.sqlite from the ledger."""
    with open_ars(state) as ars:
        try:
            n = ars.rebuild()
        except BadInput as exc:
            fail(str(exc))
        count = ars.memory.sqlite.count()
    if as_json:
        sys.stdout.write(json.dumps({"applied": n, "episodes": count}) + "\n")
    else:
        out.print(f"rebuilt memory.sqlite from the ledger: {n} events applied, {count} episodes")


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

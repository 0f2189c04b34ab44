"""``ars ingest`` (once, or ``--watch``) and ``ars enrich``: sessions into memory."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape as _esc
from rich.table import Table

from core.api import ARS, FORMATS
from core.errors import BadInput
from tui.cli.common import JsonOpt, StateOpt, err, fail, fail_on, open_ars, out

def _common_dir(files: list[str]) -> str:
    """The folder every file is under ("" when they share none but the root)."""
    import os

    try:
        common = os.path.commonpath([os.path.dirname(f) for f in files])
    except ValueError:
        return ""
    return common if common not in ("", "/", ".") else ""


def _tail(path: str, width: int) -> str:
    """A path in ``width`` columns: whole, else its end (the file's name is what tells files apart)."""
    return path if len(path) <= width else "…" + path[-(width - 1):]


def print_ingest(report) -> None:
    files = [f.file for f in report.per_file[-40:]]
    under = _common_dir(files) if len(files) > 1 else ""
    # the folder they share is said once; each row names the file under it, its end kept when cut
    room = max(16, out.width - 52)
    table = Table("file", "format", "added", "skipped", "bad", "status", title="ingest"
                  + (f" (under {_esc(under)})" if under else ""), title_justify="left", expand=False)
    # file names and errors are escaped: a name or a quoted line holding
    # "[/]" is text, not console markup (it raised MarkupError)
    for f in report.per_file[-40:]:
        style = {"failed": "red", "unchanged": "dim", "skipped": "yellow"}.get(f.status, "")
        name = f.file[len(under) + 1:] if under and f.file.startswith(under + "/") else f.file
        table.add_row(_esc(_tail(name, room)), f.format or "-", str(f.episodes_added), str(f.duplicates_skipped),
                      str(f.malformed), f"[{style}]{f.status}[/]" if style else f.status)
    if len(report.per_file) > 1:
        out.print(table)
    skipped = getattr(report, "skipped_files", 0)
    out.print(f"files: {report.files}  episodes added: {report.episodes_added}  "
              f"duplicates skipped: {report.duplicates_skipped}  unchanged files: {report.unchanged_files}  "
              + (f"skipped inputs: {skipped}  " if skipped else "")
              + f"malformed lines: {len(report.malformed)}")
    for m in report.malformed[:50]:
        where = f"{m.file}:{m.line}" if m.line else m.file
        out.print(f"  [yellow]{_esc(where)}[/]: {_esc(m.error)}", highlight=False)
    if len(report.malformed) > 50:
        out.print(f"  ... and {len(report.malformed) - 50} more (use --json for all)")
    left_out = getattr(report, "unsupported", [])
    if left_out:  # files found in folders and not read: counted here, each with its reason in --json
        out.print(f"left out: {len(left_out)} file{'s' if len(left_out) != 1 else ''} in formats ars does not read "
                  f"(e.g. {_esc(Path(left_out[0].file).name)}: {_esc(left_out[0].reason)}); --json lists them",
                  highlight=False)
    if report.sync is not None:
        s = report.sync
        if s["ok"]:
            out.print(f"neo4j: synced {s['applied']} events, {s['pending']} pending")
        elif s.get("refused"):  # another state directory holds this host id (ars sync run --rename)
            out.print(f"[yellow]neo4j: not synced: {_esc(s['error'])}; {s['pending']} pending in the ledger[/]",
                      highlight=False)
        else:
            out.print(f"[yellow]neo4j: sync deferred ({s['error']}); {s['pending']} pending; "
                      f"run `ars sync run` when it is back[/]", highlight=False)


def ingest(
    paths: Annotated[list[str], typer.Argument(help="files or folders to ingest (checked by ars, so one bad path never stops the rest)")],
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
            fail_on(exc)
    if as_json:
        sys.stdout.write(report.model_dump_json(exclude={"per_file"}) + "\n")
    else:
        print_ingest(report)
    if report.failed_files and report.failed_files == len(report.per_file):
        fail("nothing could be read: check the paths and their permissions")
    if report.unreadable:  # a folder of files none of which ars reads: said, not silently ingested as nothing
        fail("; ".join(report.unreadable), code=1)
    if report.failed_files:
        raise typer.Exit(1)


def _ingest_with_progress(ars: ARS, paths: list[Path], fmt: str, force: bool, quiet: bool):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    def waiting(message: str) -> None:
        err.print(f"[yellow]{_esc(message)}[/]", highlight=False, soft_wrap=True)

    if quiet or not err.is_terminal:
        return ars.ingest(paths, fmt=fmt, force=force, on_wait=waiting)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True) as bar:
        task = bar.add_task("ingesting", total=None)

        def step(path: Path, summary) -> None:
            bar.update(task, advance=1, description=f"{path.name[:40]} +{summary.episodes_added}")

        return ars.ingest(paths, fmt=fmt, force=force, progress=step, on_wait=waiting)


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


def enrich(
    pending: Annotated[bool, typer.Option("--pending", help="upgrade episodes marked deterministic:pending")] = False,
    limit: Annotated[Optional[int], typer.Option("--limit", help="at most this many")] = None,
    state: StateOpt = None, as_json: JsonOpt = False,
) -> None:
    """Re-enrich episodes with the configured model (ARS_OPENAI_BASE_URL)."""
    if not pending:
        fail("say what to enrich: --pending upgrades the episodes a failed model call left deterministic")
    with open_ars(state) as ars:
        try:
            upgraded, still = ars.enrich_pending(limit=limit)
        except BadInput as exc:
            fail_on(exc)
    if as_json:
        sys.stdout.write(json.dumps({"upgraded": upgraded, "still_pending": still}) + "\n")
    else:
        out.print(f"enriched {upgraded} episodes with the model; {still} still pending")
    if still and not upgraded:
        raise typer.Exit(1)


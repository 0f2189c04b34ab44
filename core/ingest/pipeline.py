"""Ingest files into memory: parse, skip unchanged episodes, store, register spans.

A file is streamed: its episodes are stored in batches as the parser yields
them, so memory is bounded by a batch, not by the file. What is read: regular
files only (a FIFO or a device is reported, never opened for a blocking
read); in a folder, only files that stay inside it (a symlink out of it is
skipped and reported). One bad file or line is reported and the run goes on.
"""

from __future__ import annotations

import os
from itertools import islice
from pathlib import Path
from typing import Callable, Iterable, Iterator

from pydantic import BaseModel, Field, PrivateAttr

from core.enrich.extract import source_key
from core.ingest.prep_worker import PrepWorker
from core.models import Episode
from core.errors import BadQuery
from core.memory.memory import Memory
from core.memory.sources import SourceRegistry, not_regular
from core.ingest.formats.parsed import Parsed, shown
from core.ingest.parsers import PARSERS, STREAMS, detect_format
from core.ingest.stores.cursor import StoreCursors
from core.ingest.stores.discover import find_stores, is_legacy_archive, not_a_transcript, nothing_readable, unsupported_reason
from core.ingest.stores.run import ingest_store, store_format, store_label
from core.ingest.stores.sqlite_ro import is_sqlite

from core.ingest import FORMATS

assert set(FORMATS) == {"auto", *PARSERS}, "core/ingest/__init__.FORMATS must name every parser"


class MalformedLine(BaseModel):
    file: str
    line: int
    error: str


class FileSummary(BaseModel):
    file: str
    format: str = ""
    episodes_added: int = 0
    duplicates_skipped: int = 0
    malformed: int = 0
    status: str = "ingested"  # ingested | unchanged | failed | skipped
    error: str = ""


class SkippedFile(BaseModel):
    file: str
    reason: str


class IngestReport(BaseModel):
    files: int = 0
    episodes_added: int = 0
    duplicates_skipped: int = 0
    malformed: list[MalformedLine] = Field(default_factory=list)
    unchanged_files: int = 0
    failed_files: int = 0
    skipped_files: int = 0  # left alone on purpose (a symlink out of a folder, a broken symlink)
    per_file: list[FileSummary] = Field(default_factory=list)
    sync: dict | None = None  # the Neo4j sync after the ingest, when configured
    unsupported: list[SkippedFile] = Field(default_factory=list)  # files found in folders and not read, with why
    unreadable: list[str] = Field(default_factory=list)  # one line per named folder that had files but none readable
    _reported: set[str] = PrivateAttr(default_factory=set)  # inputs already reported as not read


# Directory walks take the files a parser knows; anything else is listed, not guessed.
INGESTIBLE = (".jsonl", ".md")

LEAVES_FOLDER = "symlink leaves the folder: skipped (name the target itself to ingest it)"
BROKEN_LINK = "broken symlink: its target does not exist; skipped"


def _problem(report: IngestReport, path: str | Path, error: str, status: str = "failed") -> None:
    """One input that is not read: one line in ``malformed`` (line 0) and its
    summary, once (a FIFO named and also found in a folder is one report)."""
    name = shown(path)
    if name in report._reported:
        return
    report._reported.add(name)
    report.malformed.append(MalformedLine(file=name, line=0, error=error))
    report.per_file.append(FileSummary(file=name, status=status, error=error))
    if status == "failed":
        report.failed_files += 1
    else:
        report.skipped_files += 1


def _inside(folder: Path, path: Path) -> bool:
    """``path``, all symlinks resolved, is ``folder`` or under it (``folder`` resolved)."""
    return Path(os.path.realpath(path)).is_relative_to(folder)


def _ingestible(name: str) -> bool:
    return (Path(name).suffix in INGESTIBLE or is_legacy_archive(name)) and not not_a_transcript(name)


def _walk(folder: Path, report: IngestReport, owned: frozenset[str] | set[str] = frozenset()) -> list[Path]:
    """The ingestible regular files under ``folder``, sorted. Symlinks (to a
    file or a folder) whose target resolves outside ``folder`` are skipped
    and reported: a link in a transcript folder must not make ingestion read
    (and store, and show in recall) a file the folder does not hold. Links
    that stay inside are read at their target; linked folders inside are not
    descended (their files are walked where they are; no loops)."""
    root = folder.resolve()
    out: list[Path] = []

    def unreadable(exc: OSError) -> None:
        _problem(report, exc.filename or folder, f"cannot read folder: {exc.strerror or exc}")

    for dirpath, dirnames, filenames in os.walk(folder, onerror=unreadable, followlinks=False):
        for name in dirnames:
            sub = Path(dirpath, name)
            if sub.is_symlink() and not _inside(root, sub):
                _problem(report, sub, LEAVES_FOLDER, "skipped")
        for name in filenames:
            if os.path.realpath(os.path.join(dirpath, name)) in owned:
                continue  # read as part of an agent's store
            if not _ingestible(name):
                report.unsupported.append(SkippedFile(file=shown(Path(dirpath, name)),
                                                      reason=unsupported_reason(Path(dirpath, name))))
                continue
            f = _walked_file(Path(dirpath, name), root, report)
            if f is not None:
                out.append(f)
    return sorted(out)


def _walked_file(path: Path, root: Path, report: IngestReport) -> Path | None:
    """A file found by a folder walk, as it is to be read; None when reported instead."""
    if path.is_symlink():
        if not _inside(root, path):
            _problem(report, path, LEAVES_FOLDER, "skipped")
            return None
        if not path.exists():
            _problem(report, path, BROKEN_LINK, "skipped")
            return None
        path = Path(os.path.realpath(path))  # read at its target, under the target's name
    return path if _regular(path, report) else None


def _regular(path: Path, report: IngestReport) -> bool:
    """The path is a regular file; otherwise it is reported (missing, a FIFO, a device...)."""
    try:
        problem = not_regular(os.stat(path).st_mode)
    except FileNotFoundError:
        problem = "no such file or directory"
    except OSError as exc:
        problem = f"cannot read: {exc.strerror or exc}"
    if problem:
        _problem(report, path, problem)
        return False
    return True


def expand_paths(paths: Iterable[str | Path], report: IngestReport,
                 roots: Iterable[str | Path] = (), owned: frozenset[str] | set[str] = frozenset()) -> list[Path]:
    """The files to read under the given paths, each once. A folder is walked
    (``_walk``); a path named directly is the user's choice and is followed
    wherever it links, unless it lies in one of ``roots`` (the folders a
    watcher follows), which hold it to the folder rule. A path that does not
    exist or is not a regular file is reported (line 0); the others are still
    ingested."""
    folders = [Path(os.path.abspath(r)) for r in roots]
    out: list[Path] = []
    seen: set[str] = set()
    for p in map(Path, paths):
        if os.path.realpath(p) in owned:
            found = []  # part of an agent's store, read as that store
        elif p.is_dir():
            found = _walk(p, report, owned)
        elif _leaves_root(p, folders):
            _problem(report, p, LEAVES_FOLDER, "skipped")
            found = []
        elif is_sqlite(p):  # a database named directly that is no agent's store: say what it is
            _problem(report, p, unsupported_reason(p))
            found = []
        else:
            found = [p] if _regular(p, report) else []
        for f in found:
            key = os.path.realpath(f)
            if key not in seen:  # a folder and a file in it, or two links to one file: read it once
                seen.add(key)
                out.append(f)
    return out


def _leaves_root(path: Path, folders: list[Path]) -> bool:
    """``path`` lies in one of ``folders`` (as named) but resolves outside it."""
    named = Path(os.path.abspath(path))
    return any(named.is_relative_to(f) and not _inside(f.resolve(), named) for f in folders)


BATCH = 1000  # episodes per ledger append (one fsync each)


def ingest(memory: Memory, paths: Iterable[str | Path], fmt: str = "auto",
           progress: Callable[[Path, FileSummary], None] | None = None, sync: bool = True,
           force: bool = False, batch: int = BATCH,
           on_ack: Callable[[list[str]], None] | None = None,
           on_wait: Callable[[str], None] | None = None,
           roots: Iterable[str | Path] = ()) -> IngestReport:
    """Ingest files: parse, store what changed (acknowledged per batch), then
    let Neo4j catch up. A bad file or line is reported and never stops the rest.

    ``on_ack`` gets the episode ids of each batch once it is durable. The run
    holds the state directory's writer lock (a watcher and a manual ingest of
    the same transcripts take turns; ``on_wait`` hears who it waits for): what
    changed is decided, stored and registered by one writer at a time.
    ``roots``: folders the paths were found in (a watcher's), whose symlinks
    out are skipped as in a folder walk."""
    if fmt not in FORMATS:
        raise BadQuery(f"unknown format {fmt!r}: choose from {', '.join(FORMATS)}")
    with memory.writer("ars ingest", on_wait=on_wait):
        report = _ingest_locked(memory, paths, fmt, progress, force, batch, on_ack, roots)
    if sync:
        # one attempt, no retries: a Neo4j outage must not hold up ingestion
        # (the breaker makes later attempts instant; `ars sync run` retries)
        result = memory.sync_neo4j(retries=0)
        if result is not None:
            report.sync = result.model_dump()
    memory.settle()
    return report


def _ingest_locked(memory: Memory, paths: Iterable[str | Path], fmt: str,
                   progress: Callable[[Path, FileSummary], None] | None, force: bool, batch: int,
                   on_ack: Callable[[list[str]], None] | None, roots: Iterable[str | Path] = ()) -> IngestReport:
    report = IngestReport()
    registry = SourceRegistry(memory.state_dir)
    writer = _GroupWriter(memory, registry, batch, on_ack)
    try:
        return _ingest_with(memory, writer, paths, fmt, progress, force, report, roots)
    finally:
        writer.close()


def _ingest_with(memory: Memory, writer: "_GroupWriter", paths: Iterable[str | Path], fmt: str,
                 progress: Callable[[Path, FileSummary], None] | None, force: bool, report: IngestReport,
                 roots: Iterable[str | Path]) -> IngestReport:
    registry = writer.registry
    paths = list(paths)
    units, owned = find_stores(paths)
    _ingest_stores(memory, writer, units, report, force, progress)
    unsupported_before = len(report.unsupported)
    for path in expand_paths(paths, report, roots, owned):
        report.files += 1
        summary = FileSummary(file=shown(path))
        report.per_file.append(summary)
        if not force and registry.unchanged(path):
            summary.status = "unchanged"
            report.unchanged_files += 1
        else:
            _ingest_file(memory, writer, path, fmt, summary, report)
        if progress:
            progress(path, summary)
    writer.flush()
    report.unreadable.extend(nothing_readable(paths, units, report.per_file, report.unsupported[unsupported_before:]))
    return report


def _ingest_stores(memory: Memory, writer: _GroupWriter, units: list, report: IngestReport, force: bool,
                   progress: Callable[[Path, FileSummary], None] | None) -> None:
    """Each agent store found under the paths (stores/): what changed since its cursor."""
    cursors = StoreCursors(memory.state_dir)
    for unit in units:
        report.files += 1
        summary = FileSummary(file=store_label(unit), format=store_format(unit))
        report.per_file.append(summary)
        parsed = Parsed()
        try:
            ingest_store(unit, cursors, summary, parsed, lambda eps, s: _put(memory, writer, eps, s),
                         writer.flush, force=force)
        except Exception as exc:  # noqa: BLE001 - one store that cannot be read is reported; the rest go on
            _file_failed(summary, report, f"cannot read the store: {type(exc).__name__}: {exc}")
        finally:
            parsed.close(summary.file)
        report.episodes_added += summary.episodes_added
        report.duplicates_skipped += summary.duplicates_skipped
        report.malformed.extend(MalformedLine(**m.__dict__) for m in parsed.malformed)
        summary.malformed = parsed.bad_lines
        if summary.status == "unchanged":
            report.unchanged_files += 1
        if progress:
            progress(unit.shown, summary)


def _put(memory: Memory, writer: _GroupWriter, episodes: Iterator[Episode], summary: FileSummary) -> None:
    """Store episodes batch by batch: redacted, compared with what is stored, enriched, written.
    A long stream's next batches are redacted and tokenised by a worker process meanwhile
    (prep_worker.py)."""
    # secrets never enter memory: redacted before the comparison with what is
    # stored (which was redacted the same way) and before the ledger
    for chunk, terms in writer.prep.batches(_batches(episodes, writer.batch)):
        fresh = _changed(memory, chunk)
        if memory.settings.enrich_with_llm and fresh:
            from core.enrich.llm import enrich_many

            fresh = enrich_many(fresh, memory.settings)
            terms = {}  # enriched: other words to index, tokenised when written
        writer.add(fresh, terms)
        summary.episodes_added += len(fresh)
        summary.duplicates_skipped += len(chunk) - len(fresh)


def _ingest_file(memory: Memory, writer: _GroupWriter, path: Path, fmt: str, summary: FileSummary,
                 report: IngestReport) -> None:
    """Stream one file into memory. Its episodes are stored batch by batch as
    they come; it is registered for the raw tier only if it was read to the
    end (a file that failed part-way keeps what was stored, and is read again
    next time)."""
    try:
        signature = writer.registry.signature_of(path)
    except OSError as exc:
        _file_failed(summary, report, f"cannot read: {exc.strerror or exc}")
        return
    kind = detect_format(path) if fmt == "auto" else fmt
    summary.format = kind
    parsed = Parsed()
    _put(memory, writer, STREAMS[kind](path, parsed), summary)
    report.episodes_added += summary.episodes_added
    report.duplicates_skipped += summary.duplicates_skipped
    report.malformed.extend(MalformedLine(**m.__dict__) for m in parsed.malformed)
    summary.malformed = parsed.bad_lines
    file_error = next((m.error for m in parsed.malformed if m.line == 0), "")
    if file_error and not file_error.startswith("empty file"):
        # unreadable, not a transcript at all (binary), or broken off part-way
        _file_failed(summary, report, file_error, reported=True)
        return
    writer.file_done((path, kind, parsed.spans, signature))


def _file_failed(summary: FileSummary, report: IngestReport, error: str, reported: bool = False) -> None:
    if not reported:
        report.malformed.append(MalformedLine(file=summary.file, line=0, error=error))
    summary.status, summary.error = "failed", error
    report.failed_files += 1


def _batches(episodes: Iterator[Episode], size: int) -> Iterator[list[Episode]]:
    while chunk := list(islice(episodes, size)):
        yield chunk


class _GroupWriter:
    """Group commit across files: episodes of many small files share one
    ledger append + fsync and one SQLite transaction (thousands of session
    files would otherwise cost two fsyncs each). A file is registered for the
    raw tier only once its episodes are durable."""

    def __init__(self, memory: Memory, registry: SourceRegistry, batch: int,
                 on_ack: Callable[[list[str]], None] | None):
        self.memory, self.registry, self.batch, self.on_ack = memory, registry, batch, on_ack
        self.episodes: list[Episode] = []
        self.terms: dict[str, str] = {}  # episode id -> index terms the worker computed
        self.files: list[tuple] = []
        self.prep = PrepWorker()

    def add(self, episodes: list[Episode], terms: dict[str, str] | None = None) -> None:
        for ep in episodes:
            self.episodes.append(ep)
            if terms and ep.id in terms:
                self.terms[ep.id] = terms[ep.id]
            if len(self.episodes) >= self.batch:
                self._store()

    def file_done(self, registration: tuple) -> None:
        """A file was read to the end: register it once its episodes are durable."""
        self.files.append(registration)
        if not self.episodes:  # nothing of this file is waiting: register now
            self._register()

    def _store(self) -> None:
        if self.episodes:
            self.memory.store(self.episodes, terms=self.terms)
            if self.on_ack:
                self.on_ack([ep.id for ep in self.episodes])
            self.episodes, self.terms = [], {}

    def _register(self) -> None:
        for path, kind, spans, signature in self.files:
            self.registry.register(path, kind, spans, signature, fsync=False)
        if self.files:
            self.registry.flush()
        self.files = []

    def flush(self) -> None:
        self._store()
        self._register()

    def close(self) -> None:
        self.prep.close()


def _changed(memory: Memory, episodes: list[Episode]) -> list[Episode]:
    """Episodes whose source content differs from the stored version (or is
    missing). Enrichment is left out of the comparison, so re-reading a grown
    file never replaces an LLM enrichment with the parser's deterministic one."""
    stored = memory.sqlite.source_keys([ep.id for ep in episodes])
    return [ep for ep in episodes if stored.get(ep.id) != source_key(ep)]

"""Ingest files into memory: parse, skip unchanged episodes, store, register spans."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from pydantic import BaseModel, Field

from ..enrich.extract import source_key
from ..models import Episode
from ..recall import BadQuery, Memory
from ..sources import SourceRegistry
from .parsers import PARSERS, detect_format

from . import FORMATS

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
    status: str = "ingested"  # ingested | unchanged | failed
    error: str = ""


class IngestReport(BaseModel):
    files: int = 0
    episodes_added: int = 0
    duplicates_skipped: int = 0
    malformed: list[MalformedLine] = Field(default_factory=list)
    unchanged_files: int = 0
    failed_files: int = 0
    per_file: list[FileSummary] = Field(default_factory=list)
    sync: dict | None = None  # the Neo4j sync after the ingest, when configured


# Directory walks take the files a parser knows; anything else is listed, not guessed.
INGESTIBLE = (".jsonl", ".md")


def expand_paths(paths: Iterable[str | Path], report: IngestReport) -> list[Path]:
    """Files under the given paths. A path that does not exist is reported
    (line 0) and the others are still ingested."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*") if f.is_file() and f.suffix in INGESTIBLE))
        elif p.exists():
            out.append(p)
        else:
            report.malformed.append(MalformedLine(file=str(p), line=0, error="no such file or directory"))
            report.per_file.append(FileSummary(file=str(p), status="failed", error="no such file or directory"))
            report.failed_files += 1
    return out


BATCH = 1000  # episodes per ledger append (one fsync each)


def ingest(memory: Memory, paths: Iterable[str | Path], fmt: str = "auto",
           progress: Callable[[Path, FileSummary], None] | None = None, sync: bool = True,
           force: bool = False, batch: int = BATCH,
           on_ack: Callable[[list[str]], None] | None = None,
           on_wait: Callable[[str], None] | None = None) -> IngestReport:
    """Ingest files: parse, store what changed (acknowledged per batch), then
    let Neo4j catch up. A bad file or line is reported and never stops the rest.

    ``on_ack`` gets the episode ids of each batch once it is durable. The run
    holds the state directory's writer lock (a watcher and a manual ingest of
    the same transcripts take turns; ``on_wait`` hears who it waits for): what
    changed is decided, stored and registered by one writer at a time."""
    if fmt not in FORMATS:
        raise BadQuery(f"unknown format {fmt!r}: choose from {', '.join(FORMATS)}")
    with memory.writer("ars ingest", on_wait=on_wait):
        report = _ingest_locked(memory, paths, fmt, progress, force, batch, on_ack)
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
                   on_ack: Callable[[list[str]], None] | None) -> IngestReport:
    report = IngestReport()
    registry = SourceRegistry(memory.state_dir)
    writer = _GroupWriter(memory, registry, batch, on_ack)
    for path in expand_paths(paths, report):
        report.files += 1
        summary = FileSummary(file=str(path))
        report.per_file.append(summary)
        if not force and registry.unchanged(path):
            summary.status = "unchanged"
            report.unchanged_files += 1
            if progress:
                progress(path, summary)
            continue
        try:
            signature = registry.signature_of(path)
            kind = detect_format(path) if fmt == "auto" else fmt
            summary.format = kind
            parsed = PARSERS[kind](path)
        except OSError as exc:
            error = f"cannot read: {exc.strerror or exc}"
            report.malformed.append(MalformedLine(file=str(path), line=0, error=error))
            summary.status, summary.error = "failed", error
            report.failed_files += 1
            if progress:
                progress(path, summary)
            continue
        report.malformed.extend(MalformedLine(**m.__dict__) for m in parsed.malformed)
        summary.malformed = len(parsed.malformed)
        file_error = next((m.error for m in parsed.malformed if m.line == 0), "")
        if file_error and not parsed.episodes and not file_error.startswith("empty file"):
            # unreadable or not a transcript at all (binary): the file failed
            summary.status, summary.error = "failed", file_error
            report.failed_files += 1
            if progress:
                progress(path, summary)
            continue
        fresh = _changed(memory, parsed.episodes)
        if memory.settings.enrich_with_llm and fresh:
            from ..enrich.llm import enrich_many

            fresh = enrich_many(fresh, memory.settings)
        summary.duplicates_skipped = len(parsed.episodes) - len(fresh)
        writer.add(fresh, (path, kind, parsed.spans, signature))
        summary.episodes_added = len(fresh)
        report.episodes_added += len(fresh)
        report.duplicates_skipped += summary.duplicates_skipped
        if progress:
            progress(path, summary)
    writer.flush()
    return report


class _GroupWriter:
    """Group commit across files: episodes of many small files share one
    ledger append + fsync and one SQLite transaction (thousands of session
    files would otherwise cost two fsyncs each). A file is registered for the
    raw tier only once its episodes are durable."""

    def __init__(self, memory: Memory, registry: SourceRegistry, batch: int,
                 on_ack: Callable[[list[str]], None] | None):
        self.memory, self.registry, self.batch, self.on_ack = memory, registry, batch, on_ack
        self.episodes: list[Episode] = []
        self.files: list[tuple] = []

    def add(self, episodes: list[Episode], registration: tuple) -> None:
        for ep in episodes:
            self.episodes.append(ep)
            if len(self.episodes) >= self.batch:
                self._store()
        self.files.append(registration)
        if not self.episodes:  # nothing of this file is waiting: register now
            self._register()

    def _store(self) -> None:
        if self.episodes:
            self.memory.store(self.episodes)
            if self.on_ack:
                self.on_ack([ep.id for ep in self.episodes])
            self.episodes = []

    def _register(self) -> None:
        for path, kind, spans, signature in self.files:
            self.registry.register(path, kind, spans, signature, fsync=False)
        if self.files:
            self.registry.flush()
        self.files = []

    def flush(self) -> None:
        self._store()
        self._register()


def _changed(memory: Memory, episodes: list[Episode]) -> list[Episode]:
    """Episodes whose source content differs from the stored version (or is
    missing). Enrichment is left out of the comparison, so re-reading a grown
    file never replaces an LLM enrichment with the parser's deterministic one."""
    stored = memory.sqlite.source_keys([ep.id for ep in episodes])
    return [ep for ep in episodes if stored.get(ep.id) != source_key(ep)]

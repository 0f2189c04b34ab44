"""Ingest files into memory: parse, skip unchanged episodes, store, register spans."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from pydantic import BaseModel, Field

from ..ledger import content_id
from ..models import Episode
from ..recall import BadQuery, Memory
from ..sources import SourceRegistry
from .parsers import PARSERS, detect_format

FORMATS = ("auto", *PARSERS)


class MalformedLine(BaseModel):
    file: str
    line: int
    error: str


class IngestReport(BaseModel):
    files: int = 0
    episodes_added: int = 0
    duplicates_skipped: int = 0
    malformed: list[MalformedLine] = Field(default_factory=list)


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files under the given paths; a missing path is an input error."""
    out: list[Path] = []
    for p in map(Path, paths):
        if not p.exists():
            raise BadQuery(f"{p}: no such file or directory; check the path")
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*.jsonl") if f.is_file()))
        else:
            out.append(p)
    return out


BATCH = 1000  # episodes per ledger append (one fsync each)


def ingest(memory: Memory, paths: Iterable[str | Path], fmt: str = "auto",
           progress: Callable[[Path, int], None] | None = None, sync: bool = True) -> IngestReport:
    if fmt not in FORMATS:
        raise BadQuery(f"unknown format {fmt!r}: choose from {', '.join(FORMATS)}")
    report = IngestReport()
    registry = SourceRegistry(memory.state_dir)
    for path in expand_paths(paths):
        report.files += 1
        try:
            kind = detect_format(path) if fmt == "auto" else fmt
            parsed = PARSERS[kind](path)
        except OSError as exc:
            report.malformed.append(MalformedLine(file=str(path), line=0, error=f"cannot read: {exc.strerror or exc}"))
            continue
        report.malformed.extend(MalformedLine(**m.__dict__) for m in parsed.malformed)
        fresh = _changed(memory, parsed.episodes)
        report.duplicates_skipped += len(parsed.episodes) - len(fresh)
        for i in range(0, len(fresh), BATCH):
            memory.store(fresh[i : i + BATCH])
        report.episodes_added += len(fresh)
        registry.register(path, kind, parsed.spans)
        if progress:
            progress(path, len(fresh))
    if sync:
        memory.sync_neo4j()
    memory.settle()
    return report


def _changed(memory: Memory, episodes: list[Episode]) -> list[Episode]:
    """Episodes whose stored version differs (or is missing): re-ingesting an
    unchanged file writes nothing."""
    stored = memory.sqlite.event_ids([ep.id for ep in episodes])
    out = []
    for ep in episodes:
        if stored.get(ep.id) != content_id("ep", ep.model_dump(mode="json")):
            out.append(ep)
    return out

"""Ingest files into memory: parse, skip unchanged episodes, store, register spans."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from pydantic import BaseModel, Field

from ..models import Episode
from ..recall import BadQuery, Memory
from ..sources import SourceRegistry
from .parsers import PARSERS, Malformed, detect_format

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


def ingest(memory: Memory, paths: Iterable[str | Path], fmt: str = "auto",
           progress: Callable[[Path, int], None] | None = None) -> IngestReport:
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
        fresh = [ep for ep in parsed.episodes if not _unchanged(memory, ep)]
        report.duplicates_skipped += len(parsed.episodes) - len(fresh)
        memory.store(fresh)
        report.episodes_added += len(fresh)
        registry.register(path, kind, parsed.spans)
        if progress:
            progress(path, len(fresh))
    memory.settle()
    return report


def _unchanged(memory: Memory, ep: Episode) -> bool:
    old = memory.sqlite.get(ep.id)
    return old is not None and old.text == ep.text and old.summary == ep.summary


_ = Malformed  # re-exported for callers that build reports by hand

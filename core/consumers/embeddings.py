"""Embedding as a deferred ledger consumer, with its own cursor.

Ingest never waits for a model: episodes are acknowledged by the ledger
fsync and applied to SQLite; this consumer reads the ledger from its cursor
(``vectors.sqlite``, row ``embed``), embeds the latest version of each
episode in batches, and commits each batch's vectors together with the
cursor after it. A crash loses at most the batch in flight; a restart
resumes at the cursor and never embeds a committed batch again. An episode
whose stored vector was made by the same model from the same text is
skipped (a replay, or an enrichment that changed only the summary).

Each batch's vectors lean toward their session neighbours' (the same
window as the lexical context field; see context_vectors.py), and the
stored neighbours of a batch get their vectors recomputed in the same
transaction: a turn that arrives later is part of the context of the turns
before it. A store from before context vectors gets them once, on the first
run (cursor ``context``).

A change of model (``ARS_EMBEDDER``, ``ARS_EMBED_MODEL``, a new package
version) is seen by the model id stored in the cursor: the cursor goes back
to the start of the ledger and every episode is embedded again; until then
the dense tier uses the vectors of the new model it has and says how many
episodes are not embedded yet.

Then the vectors go on to Neo4j's vector index (cursor ``neo4j`` over the
vector rows' ``seq``), when Neo4j is configured: an outage delays that copy
only.
"""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Iterator

from pydantic import BaseModel

from core.consumers.embed_pulled import embed_pulled
from core.events import EPISODE_EVENT
from core.ledger.cursors import CONTEXT_CURSOR, EMBED_CURSOR, VECTORS_NEO4J_CURSOR, VectorCursors
from core.memory.embed import context_vectors
from core.memory.embed.base import EmbedderUnavailable, embed_text
from core.memory.embed.choice import embedder_for
from core.consumers.embed_pulled import embed_pulled
from core.memory.embed.store import Cursor, VectorRow, VectorStore, text_key
from core.memory.tiers.base import one_line

if TYPE_CHECKING:
    from core.ledger.ledger import Ledger
    from core.memory.stores import Stores

BATCH = 64  # episodes embedded and committed together (the most a crash can make us redo)
PUSH_BATCH = 500  # vectors per Neo4j write


class EmbedReport(BaseModel):
    model: str = ""
    embedded: int = 0  # episodes embedded by this run
    skipped: int = 0  # episode events whose vector was already current
    events: int = 0  # episode events read from the ledger
    pending: int = 0  # episodes with no vector of the current model
    neo4j_pushed: int = 0
    neo4j_pending: int = 0
    neo4j_error: str = ""
    ann: str = ""  # what the approximate index did (ann.AnnUpdate.line), or why it could not
    ok: bool = True
    error: str = ""
    seconds: float = 0.0
    busy: bool = False  # another process held the embedding lock (run(wait=False))


@contextmanager
def _embed_lock(state_dir, wait: bool) -> Iterator[bool]:
    """``state/.embed.lock``: two consumers (``ars sync run`` and a dashboard) never embed the
    same events at once. An ``flock``: a killed process never leaves it held."""
    fd = os.open(os.path.join(os.fspath(state_dir), ".embed.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # closing releases the lock


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class EmbedSync:
    """The embedding consumer (core/consumers/consumer.py): the ledger, the
    stores (SQLite for session order and counts, the vectors, Neo4j's copy),
    and its cursors in ``vectors.sqlite``."""

    name = "embeddings"

    def __init__(self, ledger: "Ledger", stores: "Stores", cursor: VectorCursors):
        self.ledger, self.stores, self.cursor = ledger, stores, cursor
        self.store: VectorStore = stores.vectors

    def _chunks(self, offset: int) -> Iterator[tuple[int, str, int, dict[str, str]]]:
        """(end offset, last event id, episode events, {episode id: text}) per
        batch of ``BATCH`` episode events (the latest version of an episode wins)."""
        latest: dict[str, str] = {}
        end, last_id, n = offset, "", 0
        for entry in self.ledger.read(offset):
            if entry.type == EPISODE_EVENT and isinstance(entry.data, dict):
                eid, text = entry.data.get("id"), entry.data.get("text")
                if isinstance(eid, str) and eid and isinstance(text, str):
                    latest[eid] = text
                    n += 1
            end, last_id = entry.end, entry.event_id
            if len(latest) >= BATCH:
                yield end, last_id, n, latest
                latest, n = {}, 0
        if end != offset:
            yield end, last_id, n, latest

    def run(self, max_seconds: float = 3600.0, on_batch=None, wait: bool = True) -> EmbedReport:
        """Embed what the ledger holds after the cursor, then copy the new
        vectors to Neo4j. ``on_batch(report)`` is called after each commit.
        One process at a time (``.embed.lock``): ``wait=False`` returns at once,
        ``busy`` set, when another one is at it (the dashboard after a loop ran)."""
        with _embed_lock(self.stores.state_dir, wait) as got:
            if not got:
                return EmbedReport(busy=True)
            return self._run(max_seconds, on_batch)

    def _run(self, max_seconds: float, on_batch) -> EmbedReport:
        t0 = time.monotonic()
        report = EmbedReport()
        embedder = embedder_for(self.stores.settings)
        if embedder is None:
            report.error = "embedding is off (ARS_EMBEDDER=off)"
            report.seconds = time.monotonic() - t0
            return report
        try:
            embedder.load()
            model = report.model = embedder.model_id
            cur = self.cursor.of(EMBED_CURSOR)
            if cur.model != model:
                # another model made the vectors we have: embed everything again
                cur = Cursor(EMBED_CURSOR, 0, "", model)
            self._backfill_context(model)
            for end, last_id, n, texts in self._chunks(cur.offset):
                report.events += n
                cur.offset, cur.event_id = end, last_id
                cur.failed, cur.last_error, cur.last_ok = 0, "", _now()
                embedded, skipped = self.embed_batch(texts, embedder, model, cursor=cur)
                report.embedded += embedded
                report.skipped += skipped
                if on_batch is not None:
                    on_batch(report)
                if time.monotonic() - t0 >= max_seconds:
                    break
            if time.monotonic() - t0 < max_seconds:  # then what other hosts wrote (team memory)
                embedded, skipped = embed_pulled(self.stores, self.cursor, self.embed_batch, embedder, model,
                                                 t0 + max_seconds)
                report.embedded += embedded
                report.skipped += skipped
        except Exception as exc:  # noqa: BLE001 - recorded, reported; the cursor is after the last commit
            report.ok, report.error = False, one_line(exc) if not isinstance(exc, EmbedderUnavailable) else str(exc)
            self._record_failure(report.error)
        if report.embedded:
            self.store.checkpoint()
        self._update_ann(report, t0 + max_seconds)
        self._push_neo4j(report, t0 + max_seconds)
        report.pending = self.not_embedded(report.model) if report.model else 0
        report.seconds = time.monotonic() - t0
        return report

    def embed_batch(self, texts: dict[str, str], embedder, model: str,
                    cursor: Cursor | None = None) -> tuple[int, int]:
        """Embed those of ``texts`` (id -> text) whose vector is not current,
        with their session context, and commit them (and ``cursor``) in one
        transaction; (embedded, skipped as current)."""
        todo = self._stale(texts, model)
        rows: list[VectorRow] = []
        dim = 0
        if todo:
            ids = list(todo)
            vecs = embedder.passages([todo[i] for i in ids])
            dim = vecs.shape[1]
            rows = [VectorRow(eid, model, text_key(todo[eid]), vecs[j].astype("<f4").tobytes())
                    for j, eid in enumerate(ids)]
            rows = self._in_context(rows, model)
        if rows or cursor is not None:
            self.store.put(rows, dim, cursor=cursor)
        return len(todo), len(texts) - len(todo)

    def _update_ann(self, report: EmbedReport, deadline: float) -> None:
        """Bring the approximate index up to the vectors (core/memory/embed/ann.py).
        A failure is reported, never raised: recall scans what the index lacks."""
        if not report.model:
            return
        from core.memory.embed import ann

        try:
            rep = ann.update(self.store, report.model, self.stores.state_dir, deadline=deadline)
        except Exception as exc:  # noqa: BLE001 - the vectors are committed; the next run tries again
            report.ann = f"approximate index not updated: {one_line(exc)}"
            return
        if rep.size or rep.added or rep.removed:
            report.ann = rep.line()

    # -- session context ------------------------------------------------------
    def _in_context(self, fresh: list[VectorRow], model: str,
                    current: dict[str, bytes] | None = None) -> list[VectorRow]:
        """``fresh`` (rows whose ``vec`` is the episode's own vector) with
        searched vectors that lean toward their neighbours, plus the stored
        neighbours whose searched vector that changes. ``current``: the fresh
        rows' stored searched vectors (the backfill), to leave out those that
        stay as they are."""
        import numpy as np

        if not fresh:
            return fresh
        mine = {r.episode_id for r in fresh}
        try:
            windows = self.stores.sqlite.session_neighbours(sorted(mine))
            around = {n for ns in windows.values() for n in ns} - mine
            windows.update(self.stores.sqlite.session_neighbours(sorted(around)))
        except Exception:  # noqa: BLE001 - no session order readable: own vectors (the tier still works)
            return fresh
        known = {n for ns in windows.values() for n in ns} | set(windows)
        stored = self.store.stored_rows(sorted(known - mine), model)
        rows = {r.episode_id: r for r in fresh}
        rows.update({eid: r for eid, r in stored.items() if eid in around})
        own = {eid: np.frombuffer(r.own if r.own is not None else r.vec, dtype="<f4")
               for eid, r in [*stored.items(), *((r.episode_id, r) for r in fresh)]}
        searched = context_vectors.recompute(list(rows), own, windows)
        before = {eid: r.vec for eid, r in stored.items()} | (current or {})
        out = []
        for eid, r in rows.items():
            vec = searched[eid].astype("<f4").tobytes()
            if eid in before and before[eid] == vec:
                continue  # stored as it should be
            own_bytes = own[eid].tobytes()
            out.append(VectorRow(eid, model, r.text_key, vec, None if vec == own_bytes else own_bytes))
        return out

    def _backfill_context(self, model: str) -> None:
        """Context vectors for a store that predates them (once per model; cursor ``context``)."""
        cur = self.cursor.of(CONTEXT_CURSOR)
        if cur.model == model:
            return
        ids = list(self.store.ids(model))
        for i in range(0, len(ids), 500):
            stored = self.store.stored_rows(ids[i : i + 500], model)
            current = {eid: r.vec for eid, r in stored.items()}
            own_rows = [VectorRow(eid, model, r.text_key, r.own) for eid, r in stored.items()]  # own: filled in
            rows = self._in_context(own_rows, model, current)
            if rows:
                self.store.put(rows, len(rows[0].vec) // 4)
        cur.model, cur.last_ok = model, _now()
        self.cursor.save(cur)

    def _stale(self, texts: dict[str, str], model: str) -> dict[str, str]:
        """Those of ``texts`` (id -> text) with no vector of ``model`` from the same text."""
        prepared = {eid: embed_text(t) for eid, t in texts.items()}
        have = self.store.keys_of(list(prepared))
        return {eid: t for eid, t in prepared.items() if have.get(eid) != (model, text_key(t))}

    def _record_failure(self, error: str) -> None:
        try:
            cur = self.cursor.of(EMBED_CURSOR)
            cur.failed += 1
            cur.last_error = error
            self.cursor.save(cur)
        except Exception:  # noqa: BLE001 - the report carries the error anyway
            pass

    # -- the Neo4j copy -------------------------------------------------------
    def _push_neo4j(self, report: EmbedReport, until: float) -> None:
        import numpy as np

        from core.memory.embed import neo4j_vectors

        store = self.stores.neo4j
        if store is None:
            return
        cur = self.cursor.of(VECTORS_NEO4J_CURSOR)
        try:
            store.breaker.before_call()
            dim_ready = 0
            while True:
                rows = list(self.store.rows_after(cur.offset, limit=PUSH_BATCH))
                if not rows:
                    break
                for dim in sorted({r[3] for r in rows if r[2] == report.model}):
                    if dim != dim_ready:
                        neo4j_vectors.ensure_index(store, dim)
                        dim_ready = dim
                neo4j_vectors.push(store, [
                    {"id": eid, "model": model, "vec": np.frombuffer(vec, dtype="<f4").tolist()}
                    for _seq, eid, model, _dim, vec in rows])
                cur.offset = rows[-1][0]
                cur.failed, cur.last_error, cur.last_ok = 0, "", _now()
                self.cursor.save(cur)
                report.neo4j_pushed += len(rows)
                if time.monotonic() >= until:
                    break
            store.breaker.success()
        except Exception as exc:  # noqa: BLE001 - Neo4j is a copy: its outage delays it only
            store.breaker.failure(one_line(exc))
            report.neo4j_error = one_line(exc)
            cur.failed += 1
            cur.last_error = report.neo4j_error
            self.cursor.save(cur)
        report.neo4j_pending = self.neo4j_pending()

    def neo4j_pending(self) -> int:
        cur = self.cursor.of(VECTORS_NEO4J_CURSOR)
        return self.store._conn().execute("SELECT count(*) FROM vectors WHERE seq > ?", (cur.offset,)).fetchone()[0]

    def reset_neo4j(self) -> None:
        """Copy every vector to Neo4j again (after its graph was cleared)."""
        cur = self.cursor.of(VECTORS_NEO4J_CURSOR)
        cur.offset = 0
        self.cursor.save(cur)

    # -- the view for `ars sync status` ---------------------------------------
    def not_embedded(self, model: str) -> int:
        """Episodes SQLite holds that have no vector of ``model``."""
        try:
            episodes = self.stores.sqlite.count()
        except Exception:  # noqa: BLE001
            return 0
        return max(0, episodes - self.store.count(model))

    def status(self) -> dict:
        settings = self.stores.settings
        if settings.embedder == "off":
            return {"embedder": "off"}
        emb = embedder_for(settings)
        model = emb.model_id if emb is not None else ""
        cur = self.cursor.of(EMBED_CURSOR)
        out = {
            "embedder": settings.embedder,
            "model": model,
            "vectors": self.store.count(model),
            "not_embedded": self.not_embedded(model),
            "failed": cur.failed,
            "last_error": cur.last_error,
            "last_ok": cur.last_ok,
        }
        if self.stores.neo4j is not None:
            out["neo4j_pending"] = self.neo4j_pending()
        return out

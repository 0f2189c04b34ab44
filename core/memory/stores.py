"""The stores of one state directory, opened lazily: SQLite, Neo4j, the vectors.

What a deferred consumer (core/consumers), a tier or a governance step needs
from a state directory, without the recall machinery around it (``Memory``,
core/memory/memory.py, holds one of these): its settings, the identity it
writes as, its ledger, and each store opened on first use, so one broken
store never stops the others. The identity is kept here because the Neo4j
push may change it (a claimed instance, a renamed host) and every part of the
process must see the change.
"""

from __future__ import annotations

from pathlib import Path

from core.config import Settings
from core.infra.writer_lock import writer_lock
from core.ledger.ledger import Ledger
from core.memory.tiers.sqlite import SqliteStore
from core.team.identity import resolve as resolve_identity


class Stores:
    """The ledger and the stores derived from it, for one state directory."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.state_dir = Path(settings.state_dir)
        # the namespace and host this state directory writes as (state/team.json)
        self.identity = resolve_identity(self.state_dir, settings.namespace, settings.host_id, settings.agent,
                                         record=self.state_dir.is_dir())
        self.ledger = Ledger(self.state_dir, self.identity.namespace)
        self._sqlite: SqliteStore | None = None
        self._neo4j = None
        self._vectors = None  # state/vectors.sqlite (core/memory/embed/store.py)

    @property
    def sqlite(self) -> SqliteStore:
        if self._sqlite is None:
            self._sqlite = SqliteStore(self.state_dir / "memory.sqlite")
        return self._sqlite

    def sqlite_opened(self) -> SqliteStore | None:
        """The SQLite store if this process opened it (nothing is opened to ask)."""
        return self._sqlite

    def reopen_sqlite(self) -> None:
        """Close SQLite; the next use opens the file anew (``ars rebuild`` swapped it)."""
        if self._sqlite is not None:
            self._sqlite.close()
            self._sqlite = None

    @property
    def neo4j(self):
        """The Neo4j store, or None when no URI is configured."""
        if self._neo4j is None and self.settings.neo4j_uri:
            from core.memory.tiers.neo4j import Neo4jStore

            pw = self.settings.neo4j_password
            self._neo4j = Neo4jStore(
                self.settings.neo4j_uri, self.settings.neo4j_user,
                pw.get_secret_value() if pw else None, self.settings.neo4j_database,
                connect_timeout=self.settings.neo4j_connect_timeout,
                breaker_cooldown=self.settings.neo4j_breaker_cooldown,
                namespace=self.identity.namespace, host=self.identity.host, agent=self.identity.agent,
                bookmarks_path=str(self.state_dir / "neo4j-bookmarks.json"),
            )
            # what this host wrote and what the pull verified, as recall's check of
            # the graph's answers (core/team/local.py)
            self._neo4j.on_written = self._record_digests
            self._neo4j.vouch = self._vouch
            self._neo4j.own_signed = self._own_signed
        return self._neo4j

    def _record_digests(self, digests) -> None:
        self.sqlite.record_digests(self.identity.host, digests, own=True)

    def _vouch(self, rows) -> set[str]:
        from core.team import local as team_local

        return team_local.vouched(self.sqlite.team(), rows, self.identity)

    def _own_signed(self, rows) -> set[str]:
        from core.team import host_key
        from core.team.verify import signed_by

        key = host_key.load(self.state_dir)
        if key is None:  # never pushed: no row in the graph is this host's
            return set()
        return signed_by(self._neo4j, self._neo4j.namespace, self._neo4j.host, key.public, rows)

    def neo4j_opened(self):
        """The Neo4j store if this process created its driver (None: not yet, or not configured)."""
        return self._neo4j

    @property
    def vectors(self):
        """The vector store, created if missing (the embedding consumer writes it)."""
        if self._vectors is None:
            from core.memory.embed.store import VectorStore

            self._vectors = VectorStore(self.state_dir)
        return self._vectors

    def vectors_readonly(self):
        """The vector store; FileNotFoundError when nothing was embedded yet (a reader creates no file)."""
        if self._vectors is None:
            from core.memory.embed.store import VectorStore

            self._vectors = VectorStore(self.state_dir, create=False)
        return self._vectors

    def writer(self, who: str = "", on_wait=None, blocking: bool = True):
        """The state directory's writer lock (``core/infra/writer_lock.py``)."""
        return writer_lock(self.state_dir, who, blocking=blocking, on_wait=on_wait)

    def close(self, neo4j: bool = True) -> None:
        """Close what was opened; ``neo4j=False`` keeps the driver (a search still connecting holds it)."""
        if self._sqlite is not None:
            self._sqlite.close()
        if self._vectors is not None:
            self._vectors.close()
        if neo4j:
            self.close_neo4j()

    def close_neo4j(self) -> None:
        """Close the Neo4j driver if this process made one."""
        if self._neo4j is not None:
            self._neo4j.close()

"""The one facade the front ends (CLI, dashboard) call.

Everything a person can do goes through ``ARS``; front ends own no storage
logic. Errors a person must fix are ``BadInput`` (the CLI exits 2 on them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from .config import Settings, load_settings
from .ingest.pipeline import FileSummary, IngestReport, ingest
from .models import Explanation, RecallResult, TierReport
from .recall import BadQuery, Memory
from .sync import SyncReport

BadInput = BadQuery


class ARS:
    def __init__(self, settings: Settings | None = None, *, create: bool = True, **overrides: Any):
        self.settings = settings or load_settings(**overrides)
        state = Path(self.settings.state_dir)
        if not state.is_dir():
            if not create:
                raise BadInput(
                    f"state directory {state} does not exist: run `ars ingest` first, "
                    "or pass --state / set ARS_STATE_DIR to an existing one"
                )
            state.mkdir(parents=True, exist_ok=True)
        self.memory = Memory(self.settings)
        try:
            # a crash between a ledger fsync and the SQLite commit is repaired here
            self.memory.recover()
        except Exception:  # noqa: BLE001 - a broken SQLite still leaves the other tiers
            pass

    @property
    def state_dir(self) -> Path:
        return Path(self.settings.state_dir)

    def close(self) -> None:
        self.memory.close()

    def __enter__(self) -> "ARS":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- memory ----------------------------------------------------------------
    def recall(self, query: str, k: int = 10, tiers: str | Sequence[str] | None = None) -> RecallResult:
        return self.memory.recall(query, k=k, tiers=tiers)

    def explain(self, query: str, episode_id: str, k: int = 10,
                tiers: str | Sequence[str] | None = None) -> Explanation:
        return self.memory.explain(query, episode_id, k=k, tiers=tiers)

    def ingest(self, paths: Iterable[str | Path], fmt: str = "auto",
               progress: Callable[[Path, FileSummary], None] | None = None, force: bool = False) -> IngestReport:
        return ingest(self.memory, paths, fmt=fmt, progress=progress, force=force)

    def watcher(self, paths: Iterable[str | Path], fmt: str = "auto", idle_seconds: float = 300.0,
                on_report=None, on_finalized=None):
        from .ingest.watch import Watcher

        return Watcher(self.memory, paths, fmt=fmt, idle_seconds=idle_seconds,
                       on_report=on_report, on_finalized=on_finalized)

    # -- durability ----------------------------------------------------------------
    def sync_status(self) -> dict[str, Any]:
        """Pending and failed sync counts, per-store counts, drift, last error."""
        return self.memory.sync.status()

    def sync_run(self, max_seconds: float = 300.0) -> SyncReport:
        if self.memory.neo4j is None:
            raise BadInput("neo4j is not configured: set ARS_NEO4J_URI (see README, Neo4j)")
        return self.memory.sync.run(max_seconds=max_seconds)

    def backfill(self, clear: bool = False) -> SyncReport:
        if self.memory.neo4j is None:
            raise BadInput("neo4j is not configured: set ARS_NEO4J_URI (see README, Neo4j)")
        return self.memory.sync.backfill(clear=clear)

    def rebuild(self) -> int:
        """Recreate memory.sqlite from the ledger."""
        if not self.memory.ledger.path.exists():
            raise BadInput(f"no ledger at {self.memory.ledger.path}: nothing to rebuild from")
        return self.memory.rebuild_sqlite()

    # -- health ------------------------------------------------------------------
    def doctor(self) -> dict[str, Any]:
        tiers: list[TierReport] = self.memory.health()
        return {
            "state_dir": str(self.state_dir.resolve()),
            "sync": self.sync_status(),
            "tiers": [t.model_dump(include={"tier", "status", "latency_ms", "error"}) for t in tiers],
            "config": self.settings.public(),
        }

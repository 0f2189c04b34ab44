"""What ``ars doctor`` and the dashboard's health screen report about a state
directory: each tier's status and latency, the sync counts, backlog and drift, the
team identity; for the live view also the Neo4j breaker and the ledger file."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable


def doctor_report(memory, settings, state_dir: Path, sync_status: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``ars doctor``: the tiers, the sync status, the team identity and the settings."""
    tiers = memory.health()
    identity = memory.identity
    return {
        "state_dir": str(Path(state_dir).resolve()),
        "team": {"namespace": identity.namespace, "host": identity.host, "agent": identity.agent or None},
        "sync": sync_status(),
        "tiers": [t.model_dump(include={"tier", "status", "latency_ms", "error"}) for t in tiers],
        "config": settings.public(),
    }


def live_report(memory, report: dict[str, Any]) -> dict[str, Any]:
    """``report`` (the doctor's) for a live view: without the settings, with the Neo4j
    breaker's state and the ledger file's size and last write. A number core does not
    have is absent, not made up: the dashboard says so, and shows any key a later core adds."""
    from dataclasses import asdict
    from datetime import datetime, timezone

    report["config"] = {}  # the settings are `ars doctor`'s business, not a live number
    store = memory.neo4j  # None when ARS_NEO4J_URI is unset
    report["breaker"] = asdict(store.breaker.snapshot()) if store is not None else None
    embeddings = (report.get("sync") or {}).get("embeddings") or {}
    if embeddings.get("embedder", "off") != "off" and embeddings.get("not_embedded") is not None:
        report["embedding_backlog"] = embeddings["not_embedded"]  # episodes `ars sync run` has yet to embed
    path = memory.ledger.path
    try:
        st = path.stat()
    except FileNotFoundError:
        report["ledger_file"] = {"path": str(path), "bytes": 0, "last_fsync": None}
    else:
        # every append fsyncs before it returns, so the file's last change is its last fsync
        report["ledger_file"] = {"path": str(path), "bytes": st.st_size,
                                 "last_fsync": datetime.fromtimestamp(st.st_mtime, timezone.utc).isoformat()}
    return report

"""ARS core: memory tiers, ingestion, ledger and loop. Never imports a UI."""

__version__ = "0.1.0"

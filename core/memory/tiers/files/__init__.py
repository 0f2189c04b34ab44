"""The raw-file tier: the session files themselves, scanned at recall time
(``search.FilesTier``; which lines belong to which episode is in
core/memory/sources.py)."""

from core.memory.tiers.files.search import FilesTier

__all__ = ["FilesTier"]

"""The dense tier: cosine between the query's vector and the episodes' vectors
(``search.DenseTier``; the vectors and embedders are in core/memory/embed)."""

from core.memory.tiers.dense.search import DenseTier

__all__ = ["DenseTier"]

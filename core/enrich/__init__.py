"""Enrichment: summary, topics, typed entities and relations for an episode.

``extract`` is deterministic and always available (it runs on every parsed
episode); ``llm`` upgrades episodes through an OpenAI-compatible chat model
and falls back to ``extract`` when that model cannot answer.
"""

from core.enrich.extract import Extraction, Hints, enrich_deterministic, extract, source_key

__all__ = ["Extraction", "Hints", "enrich_deterministic", "extract", "source_key"]

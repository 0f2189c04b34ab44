"""Enrichment: summary, topics, typed entities and relations for an episode.

``extract`` is deterministic and always available (it runs on every parsed
episode; its parts: ``summary``, ``words``, ``commands``, and ``hints``, what a
parser tells it); ``llm`` upgrades episodes through an OpenAI-compatible chat
model and falls back to ``extract`` when that model cannot answer.
"""

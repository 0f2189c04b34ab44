"""The recall tiers, one package per backend (sqlite, neo4j, dense, files),
behind one protocol (``base.Tier``). A tier never imports another: what two
of them share is in base.py or outside the tiers (core/memory/context.py,
scoring.py, text.py; core/team/graph.py for the team's Cypher names)."""

"""Capture: a turn is memory when it ends, not when its session does.

Two ways in, one way of building episodes (the ingest's ``SessionBuilder``,
carried on between turns by a checkpoint), so the catch-up ingest of the
agent's transcript or store later finds the same ids and stores nothing twice:

* ``transcript.capture_transcript``: an agent that writes a transcript as it
  goes (Claude Code): read the lines added since the last capture with the
  format's own reader, carrying on its state; the open part is stored as it
  stands and replaced (same id) as it grows.
* ``turns.capture_turn``: an agent that hands over the turn itself (Hermes'
  ``sync_turn``, OpenClaw's ``agent_end``): its messages rendered as the
  agent's store parser renders them, into the same builder.

``checkpoints``: one private JSON file per transcript or session under
``<state>/capture/``, held under its own lock while a capture runs.
``write``: redact, keep what changed, append to the ledger and SQLite at once.
"""

"""The autonomous loop (DESIGN.md, Loop engine): first-principles checks, the
OODA engine with honest exits, checkpoints with history, human decisions,
replay, fork and rehydrate.

One job per module: ``models`` (shapes and the transition table), ``checker``
(SOUL.md rules), ``checkpoints`` (safe names, atomic latest, history with
retention), ``tools`` (registry with risk levels), ``policies`` (offline
script, LLM tool calls), ``engine`` (the loop), ``decisions`` (exactly-once
human decisions), ``rehydrate`` (startup context).
"""

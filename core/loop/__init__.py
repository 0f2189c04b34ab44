"""The autonomous loop (DESIGN.md, Loop engine): first-principles checks, the
OODA engine with honest exits, checkpoints with history, human decisions,
replay, fork and rehydrate.

One job per module: ``models`` (shapes and the transition table), ``goals``
(goal files), ``checker`` (SOUL.md rules), ``checkpoints`` (the store: where a
loop's files are, atomic latest, locks, listing), ``checkpoint_names`` (safe
file names), ``history_file`` (reading a history file, from either end),
``tools`` (registry with risk levels), ``policies/`` (one module a policy:
offline script, LLM tool calls), ``transitions`` (one commit per transition),
``steps`` (the six steps and the exits), ``engine`` (the loop: create, fork,
run, cancel, resume), ``decisions`` (exactly-once human decisions),
``rehydrate`` (startup context).
"""

"""The ledger's event types, named once (``ledger.jsonl``'s ``"type"``).

The values are on disk in every ledger ever written: never change one; a new
kind of event gets a new name here.
"""

from __future__ import annotations

EPISODE_EVENT = "episode.upsert"  # an Episode, remembered (the stores apply these)
FORGET_EVENT = "memory.forget"  # the tombstone: what it names is forgotten (core/govern/forget.py)
FORGOTTEN_EVENT = "episode.forgotten"  # what a scrubbed episode line becomes (same length, no text)
SESSION_FINALIZED_EVENT = "session.finalized"  # a watched session went idle (core/ingest/watch.py)
LOOP_TRANSITION_EVENT = "loop.transition"  # a loop's state moved (core/loop/transitions.py)
LOOP_RECORD_EVENT = "loop.record"  # a loop iteration's record (core/loop/steps.py)
HUMAN_DECISION_EVENT = "human.decision"  # a person answered a loop's request (core/loop/decisions.py)
SUPERVISOR_KEY_EVENT = "supervisor.key"  # a supervisor key was set (core/api.py)
GATE_POLICY_EVENT = "gate.policy"  # the supervisor signed a gate policy version (core/inbox/policy.py)
CONTEXT_INJECTED_EVENT = "context.injected"  # what a turn was given from memory (core/context/receipts.py)
INBOX_OUTCOME_EVENT = "inbox.outcome"  # what a gated call did once decided (core/inbox/call_episode.py)

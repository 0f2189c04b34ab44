"""The facade for a process that runs once per agent tool call or turn: the agents' hooks (Claude
Code, Hermes, OpenClaw: the gate, and the capture of a turn) and `ars ingest`'s nothing-changed fast path.

A tool call no rule matches must not pay for loading ``core.api`` (the memory, the loop,
pydantic): tests/tui/agents/test_hooks.py checks that such a call loads the standard library
only. So these few names are all such a process may take from core besides ``core.api``; each
is loaded on first use (core/infra/lazy_names.py), and none of their modules imports a facade.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.infra.lazy_names import Table, each, module_getattr

if TYPE_CHECKING:
    from core.inbox import policy as gate_policy
    from core.inbox.gate import Match as GateMatch
    from core.inbox.key_memory import no_dumps, wipe
    from core.inbox.signing import pin_problem
    from core.infra.fsutil import PRIVATE_FILE, private_dir
    from core.ingest.stores.cursor import StoreCursors
    from core.ingest.stores.layout import find_stores, store_signature, wal_in_use
    from core.inbox.call_links import linked as call_linked, session_links as call_session_links, unlink as call_unlink
    from core.capture.checkpoints import CaptureBusy, checkpoint_age
    from core.capture.transcript import CaptureDeferred, capture_in as capture_transcript

HOOK_EXPORTS: Table = {
    "gate_policy": ("core.inbox.policy", None),  # the signed gate.toml, else the built-in defaults
    "GateMatch": ("core.inbox.gate", "Match"),  # a reason to hold a call
    **each("core.inbox.signing", "pin_problem"),  # a --supervisor pin that cannot be one
    # a fresh `ars` that reads --passphrase-fd at its very start (tui/cli/passphrase.py), before core.api
    **each("core.inbox.key_memory", "no_dumps", "wipe"),
    **each("core.infra.fsutil", "PRIVATE_FILE", "private_dir"),  # the detached ingest's log
    **each("core.ingest.stores.cursor", "StoreCursors"),  # has an agent's store changed?
    **each("core.ingest.stores.layout", "find_stores", "store_signature", "wal_in_use"),
    "call_linked": ("core.inbox.call_links", "linked"),  # the request a held call was (its outcome)
    "call_session_links": ("core.inbox.call_links", "session_links"),  # a session's held calls' requests
    "call_unlink": ("core.inbox.call_links", "unlink"),  # a held call's outcome is recorded
    **each("core.capture.checkpoints", "checkpoint_age", "CaptureBusy"),  # when a transcript was last captured
    "capture_transcript": ("core.capture.transcript", "capture_in"),  # a turn's new lines into memory
    **each("core.capture.transcript", "CaptureDeferred"),
}

__all__ = sorted(HOOK_EXPORTS)

__getattr__ = module_getattr(HOOK_EXPORTS, globals(), __name__)

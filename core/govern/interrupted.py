"""Finishing what a crash interrupted, before anything is read.

A forget (core/govern/forget.py) or a ``redact --scan`` (core/govern/rescan.py)
that a crash cut short left its pending file; whoever opens the state directory
finishes it, then applies what the ledger holds beyond SQLite
(``Memory.recover``). Called where a state directory is opened (the facade,
the recall daemon): the governance steps use ``Memory``, so ``Memory`` cannot
call them itself without an import circle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.govern.forget import finish_pending as finish_forget
from core.govern.rescan import PENDING, finish_pending as finish_redact

if TYPE_CHECKING:
    from core.memory.memory import Memory


def recover(memory: "Memory", *, wait: bool = True) -> int:
    """Finish an interrupted forget or redaction, then ``memory.recover``; the episodes applied."""
    if (memory.state_dir / PENDING).exists():  # an interrupted `ars redact --scan`
        finish_redact(memory, wait=wait)
    finish_forget(memory, wait=wait)  # a forget a crash interrupted is finished before anything is read
    return memory.recover(wait=wait)

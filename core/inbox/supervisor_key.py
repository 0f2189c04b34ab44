"""The supervisor's key as the facade uses it: create it (and record its fingerprint in
the ledger), and refuse an unsigned decision where a key is set up (core/inbox/signing.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def init_key(state_dir: Path, passphrase: bytes, old_passphrase: bytes | None = None) -> str:
    """Create (or, with the current passphrase, replace) the key; its fingerprint."""
    from core.inbox.signing import init
    from core.events import SUPERVISOR_KEY_EVENT
    from core.ledger.ledger import Event, Ledger, content_id

    fp = init(state_dir, passphrase, old_passphrase=old_passphrase)
    Ledger(state_dir).append([Event(content_id(SUPERVISOR_KEY_EVENT, fp), SUPERVISOR_KEY_EVENT, {"fingerprint": fp})])
    return fp


def require_signer(state_dir: Path, signer: Any) -> None:
    """SignatureRequired when there is a key and no ``signer``."""
    from core.inbox.signing import has_key, public_fingerprint
    from core.inbox.store import SignatureRequired

    if signer is None and has_key(state_dir):
        raise SignatureRequired(
            f"decisions here are signed with the supervisor's key ({public_fingerprint(state_dir)}): "
            "run the command on your terminal (it asks for the passphrase) or pass --passphrase-fd N")


def fingerprint(state_dir: Path) -> str | None:
    from core.inbox.signing import public_fingerprint

    return public_fingerprint(state_dir)


def unlock_key(state_dir: Path, passphrase: bytes) -> Any:
    """The key unlocked in this process's memory (a ``signing.Signer``)."""
    from core.inbox.signing import unlock

    return unlock(state_dir, passphrase)

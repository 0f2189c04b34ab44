"""This state directory's host key: what the other hosts of the namespace
know its memories and tombstones by.

An Ed25519 key made the first time the directory claims its host id
(core/team/claim.py) and declared then, on its ``Host`` node (``key``: the
raw public key, base64), so a peer pins it the first time it sees the host
(core/team/pins.py, trust on first use). Every batch of episodes the push
writes is signed with it (core/team/digest.py), and so is every tombstone
of a host with no supervisor key. Anyone holding only the team's Neo4j
credentials can write nodes that say ``host: 'laptop'``; none can sign as
laptop.

The private half is kept unencrypted in ``<state>/host.key`` (0600): the
push signs unattended, with no person to type a passphrase. An agent on this
host (the same OS user) can read it, and so can write memories as this host,
as it already can by writing transcripts; what it cannot do with this key
is forget another host's memories, or a supervisor's (a host with a
supervisor key has its tombstones signed by the supervisor, whose key is
encrypted: core/govern/trusted.py).

Stdlib at import; ``cryptography`` is imported only to make, sign or verify.
"""

from __future__ import annotations

import base64
import os
import threading
from pathlib import Path

KEY_FILE = "host.key"

_cache: dict[str, "HostKey"] = {}
_lock = threading.Lock()


class HostKeyError(OSError):
    """The host key cannot be read or made: one line naming the file and the fix."""


def fingerprint_of(public_b64: str) -> str:
    """``SHA256:<base64>`` of a raw public key given in base64 ("" when it is not one)."""
    from core.inbox.signing import fingerprint

    raw = _raw(public_b64)
    return fingerprint(raw) if raw is not None else ""


def _raw(public_b64: str) -> bytes | None:
    try:
        raw = base64.b64decode(str(public_b64 or ""), validate=True)
    except ValueError:
        return None
    return raw if len(raw) == 32 else None


class HostKey:
    """The unlocked host key (kept in this process: the push signs every batch)."""

    def __init__(self, private_key):
        from cryptography.hazmat.primitives import serialization

        self._key = private_key
        raw = private_key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        self.public = base64.b64encode(raw).decode()
        self.fingerprint = fingerprint_of(self.public)

    def sign(self, text: str) -> str:
        """The base64 signature of ``text``."""
        return base64.b64encode(self._key.sign(text.encode("utf-8"))).decode()


def verify(public_b64: str, text: str, signature_b64: str) -> bool:
    """Whether ``signature_b64`` is the key ``public_b64``'s signature of ``text``."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    raw = _raw(public_b64)
    if raw is None or not isinstance(text, str) or not isinstance(signature_b64, str):
        return False
    try:
        sig = base64.b64decode(signature_b64, validate=True)
        Ed25519PublicKey.from_public_bytes(raw).verify(sig, text.encode("utf-8"))
    except (ValueError, InvalidSignature):
        return False
    return True


def load(state_dir: Path, create: bool = False) -> HostKey | None:
    """The host key of ``state_dir`` (made and saved when missing and
    ``create``); None when there is none. Cached per file and its mtime."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    path = Path(state_dir) / KEY_FILE
    with _lock:
        try:
            st = path.stat()
        except FileNotFoundError:
            st = None
        key = f"{path}:{st.st_mtime_ns if st else 0}"
        if st is not None and key in _cache:
            return _cache[key]
        if st is None:
            if not create:
                return None
            from core.infra.fsutil import atomic_write

            made = Ed25519PrivateKey.generate()
            atomic_write(path, made.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                  serialization.NoEncryption()))
            os.chmod(path, 0o600)
            return load_cached(path, made)
        try:
            from core.infra.fsutil import read_regular

            loaded = serialization.load_pem_private_key(read_regular(path, 16_384), password=None)
        except (OSError, ValueError, TypeError) as exc:
            raise HostKeyError(f"{path} is not this host's key ({' '.join(str(exc).split())[:100]}): restore it "
                               f"from a backup; a new one (delete the file) makes the other hosts refuse this "
                               f"host's new memories until each removes its pin") from None
        if not isinstance(loaded, Ed25519PrivateKey):
            raise HostKeyError(f"{path} is not an Ed25519 key: restore it from a backup")
        out = HostKey(loaded)
        _cache[key] = out
        return out


def load_cached(path: Path, private_key) -> HostKey:
    out = HostKey(private_key)
    try:
        _cache[f"{path}:{path.stat().st_mtime_ns}"] = out
    except OSError:
        pass
    return out

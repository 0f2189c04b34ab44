"""The supervisor's private key on disk: sealed with a key derived from the passphrase.

The agent can copy ``key.enc`` and guess the passphrase offline, as fast as its
hardware allows, so the only brake is what each guess costs. Version 2 (this
module) derives the sealing key with **Argon2id** (RFC 9106; memory-hard, so a
GPU gains little) at ``ARGON2`` below, about 0.3 s and 96 MiB a guess on this
machine (bench/unlock_kdf.py prints it), or with **scrypt** (stdlib) where the
installed ``cryptography`` has no Argon2id, and seals the 32-byte Ed25519 seed
with ChaCha20-Poly1305. The file is one JSON object:

    {"ars_supervisor_key": 2, "kdf": {"name": "argon2id", "t": 3, "m_kib": 98304, "p": 1, "salt": b64},
     "aead": "chacha20-poly1305", "nonce": b64, "public": b64, "sealed": b64}

Everything but ``sealed`` is the AEAD's associated data: the parameters and the
public key cannot be changed without the passphrase failing. A wrong passphrase
fails the tag, never a parse (no one-in-256 ambiguity as with PKCS#8 padding).

Version 1 (ARS before this) is PKCS#8 PEM with PBKDF2-HMAC-SHA256 at 2,048
iterations (``cryptography``'s BestAvailableEncryption): about a millisecond a
guess. ``open_key`` still reads it and says it wants an upgrade; ``signing.unlock``
then rewrites the same key as version 2 (atomically; same key, same fingerprint).
A version 2 file with weaker parameters than today's is upgraded the same way;
one with absurd parameters (a planted file that would take all memory) is refused.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass

from core.inbox.key_memory import wipe, wipe_bytes

VERSION = 2
ARGON2 = {"name": "argon2id", "t": 3, "m_kib": 96 * 1024, "p": 1}
SCRYPT = {"name": "scrypt", "n": 2 ** 16, "r": 8, "p": 1}
# refused above these: a planted file must not make an unlock take gigabytes or minutes
MAX_ARGON2 = {"t": 20, "m_kib": 1024 * 1024, "p": 8}
MAX_SCRYPT = {"n": 2 ** 20, "r": 16, "p": 4}
MAX_FILE = 64 * 1024
LEGACY_HEAD = b"-----BEGIN ENCRYPTED PRIVATE KEY-----"
SEED = 32
KEY = 32


class KeyFileError(ValueError):
    """The file is not a supervisor key ARS can open (one line)."""


class WrongPassphrase(ValueError):
    pass


@dataclass
class Opened:
    """An opened key file: the Ed25519 private key and whether the file should be rewritten."""
    key: object  # Ed25519PrivateKey
    stale: str  # "" when the file is as strong as today's; else what it is (said when upgraded)


# -- the KDF ---------------------------------------------------------------------------------------
def argon2_available() -> bool:
    try:
        from cryptography.hazmat.primitives.kdf.argon2 import Argon2id  # noqa: F401
    except ImportError:
        return False
    return True


def current_kdf() -> dict:
    """The parameters a new file gets (without its salt)."""
    return dict(ARGON2 if argon2_available() else SCRYPT)


def derive_into(params: dict, passphrase: bytes | bytearray, out: bytearray) -> None:
    """The sealing key for ``params`` (salt included), written into ``out`` (32 bytes)."""
    salt = _b64(params.get("salt"), "kdf.salt")
    name = params.get("name")
    if name == "argon2id":
        t, m, p = (_int(params, k, 1, MAX_ARGON2[k]) for k in ("t", "m_kib", "p"))
        if m < 8 * p:
            raise KeyFileError("its Argon2id memory is below what its lanes need")
        from cryptography.hazmat.primitives.kdf.argon2 import Argon2id

        kdf = Argon2id(salt=salt, length=KEY, iterations=t, lanes=p, memory_cost=m)
        if hasattr(kdf, "derive_into"):
            kdf.derive_into(passphrase, out)
        else:  # older cryptography: a bytes result, zeroed once copied
            got = kdf.derive(bytes(passphrase))
            out[:] = got
            wipe_bytes(got)
        return
    if name == "scrypt":
        n, r, p = (_int(params, k, 2, MAX_SCRYPT[k]) if k == "n" else _int(params, k, 1, MAX_SCRYPT[k])
                   for k in ("n", "r", "p"))
        if n & (n - 1):
            raise KeyFileError("its scrypt n is not a power of two")
        import hashlib

        got = hashlib.scrypt(passphrase, salt=salt, n=n, r=r, p=p, maxmem=256 * n * r * p + (1 << 20), dklen=KEY)
        out[:] = got
        wipe_bytes(got)
        return
    raise KeyFileError(f"its key derivation {str(name)[:20]!r} is not argon2id or scrypt")


def weaker_than_today(params: dict) -> str:
    """"" when ``params`` are at least today's; else what they are, in a few words."""
    today = current_kdf()
    if params.get("name") != today["name"]:
        if params.get("name") == "argon2id":
            return ""  # Argon2id read where a new file would get scrypt: keep it
        return f"{params.get('name')} (today: {today['name']})"
    keys = ("t", "m_kib") if today["name"] == "argon2id" else ("n", "r")
    if any(int(params.get(k, 0)) < today[k] for k in keys):
        return f"{today['name']} " + ", ".join(f"{k}={params.get(k)}" for k in keys) + " (below today's)"
    return ""


# -- writing and reading ---------------------------------------------------------------------------
def seal(private_key, passphrase: bytes | bytearray, kdf: dict | None = None) -> bytes:
    """Version 2 of ``private_key`` (an Ed25519PrivateKey) sealed with ``passphrase``: the file's bytes.
    ``kdf``: other parameters than today's (the benchmark's and the tests' weaker files)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

    kdf = dict(kdf or current_kdf())
    kdf["salt"] = _e(os.urandom(16))
    public = private_key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    head = {"ars_supervisor_key": VERSION, "kdf": kdf, "aead": "chacha20-poly1305",
            "nonce": _e(os.urandom(12)), "public": _e(public)}
    key = bytearray(KEY)
    seed = private_key.private_bytes_raw()
    try:
        derive_into(kdf, passphrase, key)
        sealed = ChaCha20Poly1305(key).encrypt(_b64(head["nonce"], "nonce"), seed, _aad(head))
    finally:
        wipe(key)
        wipe_bytes(seed)
    return (json.dumps({**head, "sealed": _e(sealed)}, sort_keys=True) + "\n").encode("ascii")


def open_key(data: bytes, passphrase: bytes | bytearray) -> Opened:
    """The key in ``data`` (a file's bytes), or WrongPassphrase / KeyFileError."""
    if data.lstrip().startswith(LEGACY_HEAD):
        return Opened(_open_pkcs8(data, passphrase), "PKCS#8 with PBKDF2 at 2,048 iterations")
    try:
        head = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise KeyFileError("it is neither JSON nor PEM") from None
    if not isinstance(head, dict) or head.get("ars_supervisor_key") != VERSION:
        raise KeyFileError(f"it is not a version {VERSION} supervisor key")
    if head.get("aead") != "chacha20-poly1305" or not isinstance(head.get("kdf"), dict):
        raise KeyFileError("its cipher or key derivation is not one ARS writes")
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

    sealed = _b64(head.pop("sealed", None), "sealed")
    nonce = _b64(head.get("nonce"), "nonce")
    if len(nonce) != 12 or len(sealed) != SEED + 16:
        raise KeyFileError("its nonce or sealed key has the wrong length")
    key = bytearray(KEY)
    seed = bytearray(SEED)
    try:
        derive_into(head["kdf"], passphrase, key)
        aead = ChaCha20Poly1305(key)
        try:
            if hasattr(aead, "decrypt_into"):
                aead.decrypt_into(nonce, sealed, _aad(head), seed)
            else:
                got = aead.decrypt(nonce, sealed, _aad(head))
                seed[:] = got
                wipe_bytes(got)
        except InvalidTag:
            raise WrongPassphrase() from None
        private = Ed25519PrivateKey.from_private_bytes(seed)
    finally:
        wipe(key)
        wipe(seed)
    return Opened(private, weaker_than_today(head["kdf"]))


def _open_pkcs8(pem: bytes, passphrase: bytes | bytearray):
    from cryptography.hazmat.primitives import serialization

    try:
        return serialization.load_pem_private_key(pem, password=passphrase)
    except (ValueError, TypeError) as exc:
        text = str(exc).lower()
        # a wrong passphrase usually fails the padding check ("bad decrypt"), but about one time in 256 the
        # garbage it decrypts to passes it and fails the parse instead: an encrypted key that does not open
        # is a wrong passphrase either way
        if "password" in text or "decrypt" in text or LEGACY_HEAD in pem:
            raise WrongPassphrase() from None
        raise KeyFileError(" ".join(str(exc).split())[:120]) from None


# -- small helpers ---------------------------------------------------------------------------------
def _aad(head: dict) -> bytes:
    return json.dumps({k: v for k, v in head.items() if k != "sealed"}, sort_keys=True,
                      separators=(",", ":")).encode("utf-8")


def _e(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _b64(value, what: str) -> bytes:
    try:
        return base64.b64decode(str(value), validate=True)
    except ValueError:
        raise KeyFileError(f"its {what} is not base64") from None


def _int(params: dict, name: str, low: int, high: int) -> int:
    value = params.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise KeyFileError(f"its key derivation's {name}={str(value)[:20]} is outside {low}..{high}")
    return value

"""The supervisor's key: decisions and the gate policy that only a person can sign.

Threat model (README, "Who can decide"): the agent runs as the same OS user,
reads and writes every file that user can and shares its environment, but has
no terminal of the supervisor's and does not know the supervisor's
passphrase. So a decision that lets an agent's call go ahead is an Ed25519
signature, made with a private key that is stored only encrypted with that
passphrase, over exactly what is decided:

    {"v": 1, "request_id", "input_hash", "verdict", "note", "decided_at", "expires_at"}

as canonical JSON. The signed text is kept as it was signed (``signed``), so
verifying never depends on how a datetime is printed back. A verifier checks
the signature, that the key is the one *pinned* where the agent cannot change
it (the hook command Claude Code snapshots at session start, the dashboard's
start), that the request id and the hash of the input it is about to run are
the ones signed, and that the decision has not expired.

Files (``<state>/supervisor/``, 0700/0600): ``key.pub`` (the raw public key,
base64, one line) and ``key.enc`` (PKCS#8 PEM, encrypted with the
passphrase). An agent can replace both; it cannot make its key the pinned one.

Stdlib at import; ``cryptography`` is imported only to sign or verify (~13 ms).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from datetime import datetime, timedelta, timezone

KEY_DIR = "supervisor"
PUB_FILE = "key.pub"
PRIV_FILE = "key.enc"
MIN_PASSPHRASE = 8
SIGNED_FIELDS = ("request_id", "input_hash", "verdict", "note", "decided_at", "expires_at")
DECISION_TTL = timedelta(minutes=10)  # a signed decision is acted on within this, or never
FP_PREFIX = "SHA256:"
SETUP_HINT = "run `ars supervisor init` once on your terminal (then `ars install <agent>` again to pin the key)"


class SigningError(ValueError):
    """One line for a person: the key cannot be made, unlocked or used."""


class BadPassphrase(SigningError):
    pass


# -- names ---------------------------------------------------------------------------
def key_dir(state_dir: str | os.PathLike) -> str:
    return os.path.join(os.fspath(state_dir), KEY_DIR)


def fingerprint(public_raw: bytes) -> str:
    """``SHA256:<base64>`` of the raw public key, as OpenSSH prints one."""
    digest = hashlib.sha256(public_raw).digest()
    return FP_PREFIX + base64.b64encode(digest).decode().rstrip("=")


def short(fp: str) -> str:
    """The first 12 characters after the prefix: what a person compares by eye."""
    return fp[len(FP_PREFIX):][:12] if fp.startswith(FP_PREFIX) else fp[:12]


def looks_like_fingerprint(text: str) -> bool:
    body = text[len(FP_PREFIX):] if isinstance(text, str) and text.startswith(FP_PREFIX) else ""
    if len(body) != 43:
        return False
    try:
        return len(base64.b64decode(body + "=", validate=True)) == 32
    except ValueError:
        return False


def pin_problem(value: str, flag: str = "--supervisor") -> str:
    """"" when ``value`` is a fingerprint to pin, else the one line that says why not."""
    if looks_like_fingerprint(value):
        return ""
    return (f"{flag} {str(value)[:60]!r} is not a key fingerprint (SHA256:<43 characters>, "
            "as `ars supervisor show` prints it)")


def input_hash(kind: str, exact: str) -> str:
    """What a decision is about: ``kind`` (a tool's name, ``mcp``, ``loop``) and
    exactly what will run (a shell command, a tool input as JSON, an action)."""
    h = hashlib.sha256()
    h.update(kind.encode("utf-8", "surrogatepass"))
    h.update(b"\n")
    h.update(exact.encode("utf-8", "surrogatepass"))
    return "sha256:" + h.hexdigest()


def canonical(payload: dict) -> str:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def iso(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).isoformat(timespec="milliseconds")


# -- the key on disk ---------------------------------------------------------------------
def public_fingerprint(state_dir: str | os.PathLike) -> str | None:
    """The fingerprint of the key in the state directory (None when there is none).
    Only a hint of what is set up: what counts is the pinned one."""
    try:
        with open(os.path.join(key_dir(state_dir), PUB_FILE), "rb") as fh:
            raw = base64.b64decode(fh.read().strip(), validate=True)
    except (OSError, ValueError):
        return None
    return fingerprint(raw) if len(raw) == 32 else None


def has_key(state_dir: str | os.PathLike) -> bool:
    return os.path.exists(os.path.join(key_dir(state_dir), PRIV_FILE))


def init(state_dir: str | os.PathLike, passphrase: bytes, *, old_passphrase: bytes | None = None) -> str:
    """Create the supervisor's key; returns its fingerprint. A key that exists
    is replaced only when ``old_passphrase`` unlocks it (a rotation is the
    supervisor's act too)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from core.infra.fsutil import atomic_write, private_dir

    if len(passphrase) < MIN_PASSPHRASE:
        raise SigningError(f"the passphrase is {len(passphrase)} characters: use at least {MIN_PASSPHRASE}")
    if has_key(state_dir):
        if old_passphrase is None:
            raise SigningError(f"a supervisor key already exists ({public_fingerprint(state_dir) or 'unreadable'}): "
                               "to replace it, run `ars supervisor init --rotate` (asks for the current passphrase)")
        unlock(state_dir, old_passphrase)
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.BestAvailableEncryption(passphrase))
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    d = private_dir(key_dir(state_dir))
    atomic_write(os.path.join(d, PRIV_FILE), pem)
    atomic_write(os.path.join(d, PUB_FILE), base64.b64encode(raw).decode() + "\n")
    return fingerprint(raw)


class Signer:
    """The unlocked key, in this process's memory only."""

    def __init__(self, private_key):
        from cryptography.hazmat.primitives import serialization

        self._key = private_key
        self.public_raw = private_key.public_key().public_bytes(serialization.Encoding.Raw,
                                                                serialization.PublicFormat.Raw)
        self.fingerprint = fingerprint(self.public_raw)

    def sign_text(self, text: str) -> dict:
        """``{"signed", "signature", "key"}`` for ``text``."""
        sig = self._key.sign(text.encode("utf-8"))
        return {"signed": text, "signature": base64.b64encode(sig).decode(),
                "key": base64.b64encode(self.public_raw).decode()}

    def sign_decision(self, *, request_id: str, input_hash: str, verdict: str, note: str,
                      decided_at: datetime, ttl: timedelta = DECISION_TTL, shown_hash: str = "") -> dict:
        """``shown_hash``: of the text the person was shown (secrets redacted), so an agent
        that edits what a request shows, keeping its input hash, makes the decision void."""
        payload = {"v": 1, "request_id": request_id, "input_hash": input_hash, "verdict": verdict,
                   "note": note, "decided_at": iso(decided_at), "expires_at": iso(decided_at + ttl)}
        if shown_hash:
            payload["shown_hash"] = shown_hash
        return self.sign_text(canonical(payload))


def unlock(state_dir: str | os.PathLike, passphrase: bytes) -> Signer:
    from cryptography.hazmat.primitives import serialization

    path = os.path.join(key_dir(state_dir), PRIV_FILE)
    try:
        with open(path, "rb") as fh:
            pem = fh.read()
    except FileNotFoundError:
        raise SigningError(f"no supervisor key in {key_dir(state_dir)}: {SETUP_HINT}") from None
    except OSError as exc:
        raise SigningError(f"cannot read {path} ({exc.strerror or exc})") from None
    try:
        key = serialization.load_pem_private_key(pem, password=passphrase)
    except (ValueError, TypeError) as exc:
        text = str(exc).lower()
        # a wrong passphrase usually fails the padding check ("bad decrypt"), but about one time in
        # 256 the garbage it decrypts to passes it and fails the parse instead: an encrypted key
        # that does not open is a wrong passphrase either way
        if "password" in text or "decrypt" in text or b"-----BEGIN ENCRYPTED PRIVATE KEY-----" in pem:
            raise BadPassphrase("wrong supervisor passphrase: nothing was decided") from None
        raise SigningError(f"{path} is not a supervisor key ({' '.join(str(exc).split())[:120]}): "
                           "run `ars supervisor init --rotate`, or restore it from a backup") from None
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    if not isinstance(key, Ed25519PrivateKey):
        raise SigningError(f"{path} is not an Ed25519 key: run `ars supervisor init --rotate`")
    signer = Signer(key)
    pub = public_fingerprint(state_dir)
    if pub is not None and pub != signer.fingerprint:
        raise SigningError(f"{key_dir(state_dir)}/{PUB_FILE} ({pub}) is not the public half of {PRIV_FILE} "
                           f"({signer.fingerprint}): the key files were changed; run `ars supervisor show`")
    return signer


# -- verifying ------------------------------------------------------------------------------
def verify_text(record: dict, pin: str) -> tuple[str | None, str]:
    """(the signed text, "") when ``record`` holds a valid signature by the pinned
    key, else (None, why not) as one line."""
    if not isinstance(record, dict) or not record.get("signature"):
        return None, "it is not signed by the supervisor's key"
    try:
        raw = base64.b64decode(str(record.get("key", "")), validate=True)
        sig = base64.b64decode(str(record.get("signature", "")), validate=True)
    except ValueError:
        return None, "its signature cannot be read"
    text = record.get("signed")
    if not isinstance(text, str) or len(raw) != 32:
        return None, "its signature cannot be read"
    fp = fingerprint(raw)
    if fp != pin:
        return None, f"it is signed by another key ({fp}), not the supervisor's pinned key ({pin})"
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        Ed25519PublicKey.from_public_bytes(raw).verify(sig, text.encode("utf-8"))
    except InvalidSignature:
        return None, "its signature does not match what it says (altered or forged)"
    return text, ""


def verify_decision(record: dict, *, pin: str, request_id: str, input_hash: str,
                    now: datetime | None = None, shown_hash: str | None = None) -> tuple[dict | None, str]:
    """(the signed payload, "") when ``record`` is a decision the pinned key signed
    for this request and this exact input, still in time; else (None, why not)."""
    text, why = verify_text(record, pin)
    if text is None:
        return None, why
    try:
        payload = json.loads(text)
    except ValueError:
        return None, "its signed text is not JSON"
    if not isinstance(payload, dict) or payload.get("v") != 1:
        return None, "its signed text is not a decision"
    if payload.get("request_id") != request_id:
        return None, f"it was signed for another request ({str(payload.get('request_id'))[:40]})"
    if payload.get("input_hash") != input_hash:
        return None, "it was signed for another input than the one about to run"
    if shown_hash is not None and payload.get("shown_hash") != shown_hash:
        return None, "it was signed for another input than the one about to run (the request showed other text)"
    try:
        expires = datetime.fromisoformat(str(payload.get("expires_at")))
    except ValueError:
        return None, "its expiry cannot be read"
    if (now or datetime.now(timezone.utc)) > expires:
        return None, f"it expired at {iso(expires)}"
    return payload, ""

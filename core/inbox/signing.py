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
base64, one line) and ``key.enc`` (the private key sealed with a key derived
from the passphrase by Argon2id: core/inbox/key_file.py; a key made before is
upgraded on its next unlock). An agent can replace both; it cannot make its
key the pinned one. Every process that unlocks the key is made non-dumpable
first (core/inbox/key_memory.py).

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
# The agent can copy key.enc and guess offline, with no rate limit: the KDF makes each guess cost ~0.3 s
# of a core here, and length is what the person controls. 12 characters (three short words) is the least
# that keeps a guessed-offline passphrase out of reach of a list of common ones; NIST SP 800-63B asks 15
# of a single-factor password. Existing keys with shorter passphrases still unlock (and are upgraded).
MIN_PASSPHRASE = 12
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


def init(state_dir: str | os.PathLike, passphrase: bytes | bytearray, *,
         old_passphrase: bytes | bytearray | None = None) -> str:
    """Create the supervisor's key; returns its fingerprint. A key that exists
    is replaced only when ``old_passphrase`` unlocks it (a rotation is the
    supervisor's act too)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from core.inbox.key_file import seal
    from core.inbox.key_memory import no_dumps
    from core.infra.fsutil import atomic_write, private_dir

    no_dumps()
    length = sum(1 for b in passphrase if b & 0xC0 != 0x80)  # UTF-8 characters, without a str copy of it
    if length < MIN_PASSPHRASE:
        raise SigningError(f"the passphrase is {length} characters: use at least {MIN_PASSPHRASE} "
                           "(e.g. three or four words)")
    if has_key(state_dir):
        if old_passphrase is None:
            raise SigningError(f"a supervisor key already exists ({public_fingerprint(state_dir) or 'unreadable'}): "
                               "to replace it, run `ars supervisor init --rotate` (asks for the current passphrase)")
        unlock(state_dir, old_passphrase)
    key = Ed25519PrivateKey.generate()
    sealed = seal(key, passphrase)
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    d = private_dir(key_dir(state_dir))
    atomic_write(os.path.join(d, PRIV_FILE), sealed)
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
        self.upgraded = ""  # what the key file was, when this unlock rewrote it with today's KDF

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


def unlock(state_dir: str | os.PathLike, passphrase: bytes | bytearray) -> Signer:
    """The key unlocked in this process (made non-dumpable first). A key file older or weaker
    than today's (key_file.py) is rewritten as today's, atomically: same key, same fingerprint."""
    from core.inbox import key_file
    from core.inbox.key_memory import no_dumps
    from core.infra.fsutil import NotARegularFile, read_regular

    no_dumps()
    path = os.path.join(key_dir(state_dir), PRIV_FILE)
    try:
        data = read_regular(path, key_file.MAX_FILE)  # a FIFO or symlink planted as key.enc is refused
    except FileNotFoundError:
        raise SigningError(f"no supervisor key in {key_dir(state_dir)}: {SETUP_HINT}") from None
    except NotARegularFile as exc:
        raise SigningError(f"{path} is {exc.strerror}: run `ars supervisor init --rotate`, or restore it "
                           "from a backup") from None
    except OSError as exc:
        raise SigningError(f"cannot read {path} ({exc.strerror or exc})") from None
    try:
        opened = key_file.open_key(data, passphrase)
    except key_file.WrongPassphrase:
        raise BadPassphrase("wrong supervisor passphrase: nothing was decided") from None
    except key_file.KeyFileError as exc:
        raise SigningError(f"{path} is not a supervisor key ({exc}): run `ars supervisor init --rotate`, "
                           "or restore it from a backup") from None
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    if not isinstance(opened.key, Ed25519PrivateKey):
        raise SigningError(f"{path} is not an Ed25519 key: run `ars supervisor init --rotate`")
    signer = Signer(opened.key)
    pub = public_fingerprint(state_dir)
    if pub is not None and pub != signer.fingerprint:
        raise SigningError(f"{key_dir(state_dir)}/{PUB_FILE} ({pub}) is not the public half of {PRIV_FILE} "
                           f"({signer.fingerprint}): the key files were changed; run `ars supervisor show`")
    if opened.stale:
        signer.upgraded = _upgrade(path, opened, passphrase)
    return signer


def _upgrade(path: str, opened, passphrase: bytes | bytearray) -> str:
    """Rewrite ``path`` with today's KDF (same key): what it was, or "" when it could not be written
    (the key still works; the next unlock tries again)."""
    from core.inbox.key_file import seal
    from core.infra.fsutil import atomic_write

    try:
        atomic_write(path, seal(opened.key, passphrase))
    except OSError:
        return ""
    return opened.stale


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

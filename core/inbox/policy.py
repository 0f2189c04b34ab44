"""The gate policy in force: the newest ``gate.toml`` the supervisor signed for this state directory.

The agent can write ``<state>/gate.toml`` like any file of its user (a policy with no rules
switches the gate off), put back an older signed policy with its signature (a rollback), or
append a byte to the signed one (so that it fails and something laxer applies). So:

* the file counts only with ``gate.toml.sig`` beside it: the pinned supervisor key's signature
  over the file's SHA-256, its **version** (one more than any before it here) and the **state
  directory** it was signed for (``ars gate edit`` signs on save; ``ars gate set FILE`` for
  scripts);
* a policy only moves forward: the newest version accepted here is kept as a floor
  (``gate.seen``, and a ``gate.policy`` event in the ledger for the audit), and the installed
  hook commands pin the version in force when they were installed (``--policy-version N``,
  which Claude Code snapshots at session start). A policy older than the floor, signed for
  another state directory, by another key, altered, or unreadable is refused with one line;
* what is refused is replaced by the **last good** policy (``gate.toml.good`` and its signature,
  the newest one accepted here), never by the laxer defaults; only when there was never a
  signed policy (or the last good one is gone too) do the built-in defaults hold.

Stdlib at import (the hook runs this on every tool call); the signature check imports
``cryptography`` only when a policy file exists.
"""

from __future__ import annotations

import hashlib
import json
import os

from core.inbox import gate as gate_mod
from core.inbox.signing import SETUP_HINT, canonical, verify_text

POLICY_FILE = gate_mod.GATE_FILE
SIG_SUFFIX = ".sig"
GOOD_SUFFIX = ".good"  # gate.toml.good (+ .sig): the newest policy accepted here
SEEN_FILE = "gate.seen"  # the newest version accepted here: older ones are refused
MAX_POLICY = 1 << 20  # bytes
LAST_GOOD = "the last good policy stays in force"  # how load's one line ends when that is what holds


def paths(state_dir: str | os.PathLike) -> tuple[str, str]:
    path = os.path.join(os.fspath(state_dir), POLICY_FILE)
    return path, path + SIG_SUFFIX


def good_paths(state_dir: str | os.PathLike) -> tuple[str, str]:
    path, _ = paths(state_dir)
    return path + GOOD_SUFFIX, path + GOOD_SUFFIX + SIG_SUFFIX


def builtin() -> "gate_mod.Gate":
    make = getattr(gate_mod.Gate, "builtin", None)
    return make() if make is not None else gate_mod.Gate.parse(gate_mod.DEFAULT_TOML, "(built-in defaults)")


def state_id(state_dir: str | os.PathLike) -> str:
    """What a policy is signed for: the state directory's real path."""
    return os.path.realpath(os.fspath(state_dir))


def _signed_text(data: bytes, version: int, state: str) -> str:
    return canonical({"v": 2, "what": "ars gate policy", "sha256": hashlib.sha256(data).hexdigest(),
                      "version": version, "state": state})


def _legacy_text(data: bytes) -> str:  # before versions: accepted as version 0 while nothing newer was seen
    return canonical({"v": 1, "what": "ars gate policy", "sha256": hashlib.sha256(data).hexdigest()})


class Refused(Exception):
    """One line: why a policy file is not used."""


def _read(path: str) -> bytes:
    from core.infra.fsutil import read_regular

    return read_regular(path, MAX_POLICY)


def _verified(path: str, sig_path: str, pin: str, state: str) -> tuple["gate_mod.Gate", int]:
    """(the gate, its version) of a policy file the pinned key signed for this state; ``Refused`` else."""
    try:
        data = _read(path)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise Refused(f"{path} cannot be read ({exc.strerror or exc})") from None
    try:
        record = json.loads(_read(sig_path))
    except FileNotFoundError:
        raise Refused(f"{path} is not signed (no {os.path.basename(sig_path)}; `ars gate edit` signs it)") from None
    except (OSError, ValueError):
        raise Refused(f"{sig_path} cannot be read (`ars gate edit` signs it again)") from None
    text, why = verify_text(record if isinstance(record, dict) else {}, pin)
    if text is None:
        raise Refused(f"{path} is not used: {why}")
    try:
        signed = json.loads(text)
    except ValueError:
        raise Refused(f"{sig_path} signs something that is not a policy record") from None
    version = signed.get("version", 0) if isinstance(signed, dict) else -1
    if signed.get("v") == 1 and text == _legacy_text(data):
        version = 0
    elif not isinstance(version, int) or text != _signed_text(data, version, str(signed.get("state"))):
        raise Refused(f"{path} was changed after the supervisor signed it (`ars gate edit` to review and sign it)")
    elif signed.get("state") != state:
        raise Refused(f"{path} was signed for another state directory ({str(signed.get('state'))[:200]}), "
                      f"not {state}")
    try:
        return gate_mod.Gate.parse(data.decode("utf-8"), path), version
    except (UnicodeDecodeError, gate_mod.GateError) as exc:
        raise Refused(" ".join(str(exc).split())[:300]) from None


def seen_version(state_dir: str | os.PathLike) -> int:
    """The newest policy version accepted in this state directory (0: none)."""
    try:
        value = int(_read(os.path.join(os.fspath(state_dir), SEEN_FILE)).decode().strip() or 0)
    except (OSError, ValueError, UnicodeDecodeError):
        return 0
    return max(0, value)


def _raise_seen(state_dir: str | os.PathLike, version: int) -> None:
    """Keep ``version`` as the floor, and the policy as the last good one (best effort: a hook
    that cannot write still enforces the floor it read)."""
    from core.infra.fsutil import atomic_write

    path, sig_path = paths(state_dir)
    good, good_sig = good_paths(state_dir)
    try:
        data, sig = _read(path), _read(sig_path)
        atomic_write(good, data)
        atomic_write(good_sig, sig)
        atomic_write(os.path.join(os.fspath(state_dir), SEEN_FILE), f"{version}\n")
    except OSError:
        pass


def load(state_dir: str | os.PathLike, pin: str | None, floor: int = 0) -> tuple["gate_mod.Gate", str]:
    """(the gate in force, "" or one line saying why not the current file).

    ``floor``: the version the hook's command pins (``--policy-version``); the floor in force is
    the higher of it and ``gate.seen``."""
    path, sig_path = paths(state_dir)
    if not os.path.lexists(path):
        good, why = _last_good(state_dir, pin, floor)
        return (good, f"{path} is missing: {LAST_GOOD}") if good else (builtin(), why)
    if pin is None:
        return builtin(), (f"{path} is not used: this hook pins no supervisor key to check its signature, so the "
                           f"built-in defaults hold ({SETUP_HINT})")
    state = state_id(state_dir)
    high = max(floor, seen_version(state_dir))
    try:
        gate, version = _verified(path, sig_path, pin, state)
        if version < high:
            raise Refused(f"{path} is version {version}, older than version {high} already in force here "
                          "(a rollback)")
    except (Refused, FileNotFoundError) as exc:
        why = str(exc) or f"{path} vanished while read"
        good, _ = _last_good(state_dir, pin, floor)
        if good is not None:
            return good, f"{why}: {LAST_GOOD}"
        return builtin(), f"{why}: the built-in defaults hold"
    if version > high:
        _raise_seen(state_dir, version)
    return gate, ""


def _last_good(state_dir, pin: str | None, floor: int) -> tuple["gate_mod.Gate | None", str]:
    if pin is None:
        return None, ""
    good, good_sig = good_paths(state_dir)
    try:
        gate, version = _verified(good, good_sig, pin, state_id(state_dir))
    except FileNotFoundError:
        return None, ""  # never a good policy here: the built-in defaults, quietly
    except Refused as exc:
        return None, str(exc)
    if version < max(floor, seen_version(state_dir)):
        return None, f"{good} is older than the version in force"
    return gate, ""


def next_version(state_dir: str | os.PathLike) -> int:
    """One more than any version this state directory has accepted or holds."""
    best = seen_version(state_dir)
    for path, _ in (paths(state_dir), good_paths(state_dir)):
        try:
            signed = json.loads(json.loads(_read(path + SIG_SUFFIX)).get("signed", "{}"))
            best = max(best, int(signed.get("version", 0)))
        except (OSError, ValueError, TypeError, AttributeError):
            continue
    return best + 1


def sign(state_dir: str | os.PathLike, text: str, signer) -> str:
    """Check ``text`` parses as a policy, then write it and its signature (atomically, the
    signature last) as the next version for this state directory; returns the policy's path."""
    from core.infra.fsutil import atomic_write, private_dir
    from core.events import GATE_POLICY_EVENT
    from core.ledger.ledger import Event, Ledger, content_id

    path, sig_path = paths(state_dir)
    gate_mod.Gate.parse(text, path)  # GateError (one line) before anything is written
    data = text.encode("utf-8")
    private_dir(os.fspath(state_dir))
    version = next_version(state_dir)
    digest = hashlib.sha256(data).hexdigest()
    atomic_write(path, data)
    atomic_write(sig_path, json.dumps(signer.sign_text(_signed_text(data, version, state_id(state_dir))), indent=1))
    _raise_seen(state_dir, version)
    Ledger(os.fspath(state_dir)).append([Event(content_id(GATE_POLICY_EVENT, version, digest), GATE_POLICY_EVENT,
                                               {"version": version, "sha256": digest, "key": signer.fingerprint})])
    return path


def good_text(state_dir: str | os.PathLike) -> str | None:
    try:
        return _read(good_paths(state_dir)[0]).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def current_text(state_dir: str | os.PathLike) -> str:
    """The policy file's text, or the built-in defaults' when there is none."""
    path, _ = paths(state_dir)
    try:
        return _read(path).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return gate_mod.DEFAULT_TOML

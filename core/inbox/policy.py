"""The gate policy in force: ``gate.toml`` when the supervisor signed it, else the built-in defaults.

The agent can write ``<state>/gate.toml`` like any file of its user (a policy
with no rules was valid and switched the gate off). So the file counts only
with ``gate.toml.sig`` beside it: the pinned supervisor key's signature over
the file's SHA-256 (``ars gate edit`` signs on save; ``ars gate set FILE`` for
scripts). A policy that is missing, unsigned, signed by another key, altered
after signing, or read by a hook that pins no key is not used: the gate holds
everything its built-in defaults would not pass, and ``load`` says why in one
line. Stdlib at import (the hook runs this on every tool call); the signature
check imports ``cryptography`` only when a policy file exists.
"""

from __future__ import annotations

import hashlib
import json
import os

from core.inbox import gate as gate_mod
from core.inbox.signing import SETUP_HINT, canonical, verify_text

POLICY_FILE = gate_mod.GATE_FILE
SIG_SUFFIX = ".sig"


def paths(state_dir: str | os.PathLike) -> tuple[str, str]:
    path = os.path.join(os.fspath(state_dir), POLICY_FILE)
    return path, path + SIG_SUFFIX


def builtin() -> "gate_mod.Gate":
    make = getattr(gate_mod.Gate, "builtin", None)
    return make() if make is not None else gate_mod.Gate.parse(gate_mod.DEFAULT_TOML, "(built-in defaults)")


def _signed_text(data: bytes) -> str:
    return canonical({"v": 1, "what": "ars gate policy", "sha256": hashlib.sha256(data).hexdigest()})


def load(state_dir: str | os.PathLike, pin: str | None) -> tuple["gate_mod.Gate", str]:
    """(the gate in force, "" or one line saying why the built-in defaults hold instead)."""
    path, sig_path = paths(state_dir)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return builtin(), ""
    except OSError as exc:
        return builtin(), f"{path} cannot be read ({exc.strerror or exc}): the built-in defaults hold"
    if pin is None:
        return builtin(), (f"{path} is not used: this hook pins no supervisor key to check its signature, so the "
                           f"built-in defaults hold ({SETUP_HINT})")
    try:
        with open(sig_path, "rb") as fh:
            record = json.loads(fh.read())
    except FileNotFoundError:
        return builtin(), (f"{path} is not signed (no {os.path.basename(sig_path)}): the built-in defaults hold "
                           "(`ars gate edit` signs it)")
    except (OSError, ValueError):
        return builtin(), f"{sig_path} cannot be read: the built-in defaults hold (`ars gate edit` signs it again)"
    text, why = verify_text(record if isinstance(record, dict) else {}, pin)
    if text is None:
        return builtin(), f"{path} is not used: {why}; the built-in defaults hold"
    if text != _signed_text(data):
        return builtin(), (f"{path} was changed after the supervisor signed it: the built-in defaults hold "
                           "(`ars gate edit` to review and sign it)")
    try:
        decoded = data.decode("utf-8")
        return gate_mod.Gate.parse(decoded, path), ""
    except (UnicodeDecodeError, gate_mod.GateError) as exc:
        return builtin(), f"{' '.join(str(exc).split())[:300]}: the built-in defaults hold"


def sign(state_dir: str | os.PathLike, text: str, signer) -> str:
    """Check ``text`` parses as a policy, then write it and its signature
    (atomically, the signature last); returns the policy's path."""
    from core.infra.fsutil import atomic_write, private_dir

    path, sig_path = paths(state_dir)
    gate_mod.Gate.parse(text, path)  # GateError (one line) before anything is written
    data = text.encode("utf-8")
    private_dir(os.fspath(state_dir))
    atomic_write(path, data)
    atomic_write(sig_path, json.dumps(signer.sign_text(_signed_text(data)), indent=1))
    return path


def current_text(state_dir: str | os.PathLike) -> str:
    """The policy file's text, or the built-in defaults' when there is none."""
    path, _ = paths(state_dir)
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return gate_mod.DEFAULT_TOML

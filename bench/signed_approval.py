"""The benches' supervisor: a key in a bench's state (the trust model refuses an unsigned
approval, so a bench that approves must sign) and `ars inbox approve` run as a person
would, a new process that unlocks the key from a passphrase pipe and signs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from core.inbox import signing

PASS = "bench supervisor passphrase"


def supervise(state: Path) -> str:
    """Set up the supervisor key in ``state``; its fingerprint (the hooks' ``--supervisor`` pin)."""
    signing.init(state, PASS.encode())
    return signing.public_fingerprint(state)


def unlock(state: Path) -> signing.Signer:
    """The key unlocked once, as the dashboard does at its start."""
    return signing.unlock(state, PASS.encode())


def passphrase_socket(passphrase: str = PASS) -> int:
    """A socket holding the passphrase, for ``--passphrase-fd N`` (ARS refuses a pipe: any process
    of the user can drain one through /proc before ars reads it)."""
    import socket

    a, b = socket.socketpair()
    b.sendall(passphrase.encode() + b"\n")
    b.close()
    return a.detach()


def approve(ars: list[str], state: Path, request_id: str, *, env: dict[str, str], cwd: Path | None = None,
            note: str = "bench") -> subprocess.CompletedProcess:
    """``ars inbox approve ID --passphrase-fd N`` in a new process (unlocking the key is part of it)."""
    r = passphrase_socket()
    try:
        return subprocess.run(ars + ["inbox", "approve", request_id, "--note", note, "--state", str(state),
                                     "--passphrase-fd", str(r)],
                              capture_output=True, text=True, env=env, cwd=cwd, pass_fds=(r,),
                              stdin=subprocess.DEVNULL)
    finally:
        os.close(r)

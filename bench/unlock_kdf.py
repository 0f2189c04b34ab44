"""What unlocking the supervisor's key costs, and what a guess costs an attacker:

    .venv/bin/python bench/unlock_kdf.py [--rounds 20] [--guess-seconds 3] [--cli 5]

In one run, on the same machine at the same load (rounds interleaved: old, new, old, ...):

* ``unlock``: ``signing.unlock`` in process, p50/p95, of a key as ARS wrote it before
  (PKCS#8, PBKDF2-HMAC-SHA256 at 2,048 iterations) and as it writes it now
  (Argon2id, core/inbox/key_file.py; scrypt where cryptography has no Argon2id);
  plus the first unlock of an old key, which rewrites it (the upgrade);
* ``ars inbox approve``: the whole deciding process (``--passphrase-fd``), old key vs new;
* ``guesses/s``: an attacker in Python on one core, with a copy of key.enc, trying
  wrong passphrases as fast as it can (what the KDF is there to slow down).

Printed as markdown with the 1-minute load average (2 shared cores); never asserted.
"""

from __future__ import annotations

import argparse
import base64
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from core.inbox import key_file, signing  # noqa: E402

PASS = b"the bench supervisor's passphrase"

from signed_approval import passphrase_socket  # noqa: E402


def progress(msg: str) -> None:
    print(f"[unlock_kdf] {msg}", file=sys.stderr, flush=True)


def legacy_state(root: Path) -> Path:
    """A state directory holding a key as ARS wrote it before (PKCS#8, PBKDF2 2,048)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    d = root / "supervisor"
    d.mkdir(parents=True, mode=0o700)
    (d / "key.enc").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                  serialization.BestAvailableEncryption(PASS)))
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    (d / "key.pub").write_text(base64.b64encode(raw).decode() + "\n")
    return root


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def guesses_per_second(data: bytes, seconds: float) -> tuple[float, int]:
    """Wrong passphrases tried against ``data`` (a key file) for ``seconds``: (rate, tries)."""
    n = 0
    end = time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < end or n == 0:
        try:
            key_file.open_key(data, b"guess %d" % n)
        except key_file.WrongPassphrase:
            pass
        n += 1
    return n / (time.perf_counter() - start), n


def approve_cli(state: Path) -> float:
    """``ars inbox approve`` of a fresh request, in its own process: ms."""
    from core.api import ARS
    from core.config import Settings

    with ARS(Settings(state_dir=state)) as a:
        rid = a.request_approval("claude-code:bench", "bench", "make test", binds="Bash").id
    r = passphrase_socket(PASS.decode())  # a pipe is refused: see tui/cli/passphrase.py
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARS_")}
    env.update(ARS_RECALL_DAEMON="off", PYTHONPATH=str(ROOT))
    try:
        t = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "tui.entry", "inbox", "approve", rid, "--state", str(state),
                            "--passphrase-fd", str(r)], capture_output=True, text=True, env=env, pass_fds=(r,),
                           stdin=subprocess.DEVNULL, cwd=ROOT)
        ms = (time.perf_counter() - t) * 1000
    finally:
        os.close(r)
    if p.returncode != 0:
        raise SystemExit(f"ars inbox approve failed: {p.stderr.strip()}")
    return ms


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--guess-seconds", type=float, default=3.0)
    ap.add_argument("--cli", type=int, default=5, help="rounds of `ars inbox approve` per key (0: skip)")
    opts = ap.parse_args()
    kdf = key_file.current_kdf()
    new_name = (f"Argon2id t={kdf['t']}, {kdf['m_kib'] // 1024} MiB, p={kdf['p']}" if kdf["name"] == "argon2id"
                else f"scrypt n=2^{kdf['n'].bit_length() - 1}, r={kdf['r']}, p={kdf['p']}")
    with tempfile.TemporaryDirectory(prefix="ars-kdf-") as tmp:
        root = Path(tmp)
        old_state = legacy_state(root / "old")
        new_state = root / "new"
        signing.init(new_state, PASS)
        old_bytes = (old_state / "supervisor" / "key.enc").read_bytes()
        progress(f"{opts.rounds} unlocks each, interleaved")
        old_ms, new_ms, upgrade_ms = [], [], []
        for i in range(opts.rounds):
            old_ms.append(timed(lambda: key_file.open_key(old_bytes, PASS)))  # read, never rewritten
            new_ms.append(timed(lambda: signing.unlock(new_state, PASS)))
            fresh = legacy_state(root / f"up{i}")
            upgrade_ms.append(timed(lambda: signing.unlock(fresh, PASS)))
        cli_old, cli_new = [], []
        for i in range(opts.cli):
            progress(f"ars inbox approve {i + 1}/{opts.cli}")
            cli_old.append(approve_cli(legacy_state(root / f"cli{i}")))  # each its own old key (upgraded by it)
            cli_new.append(approve_cli(new_state))
        progress(f"guessing for {opts.guess_seconds:.0f} s each")
        old_rate, old_n = guesses_per_second(old_bytes, opts.guess_seconds)
        new_rate, new_n = guesses_per_second((new_state / "supervisor" / "key.enc").read_bytes(),
                                             opts.guess_seconds)
    load = os.getloadavg()[0]
    print(f"\n### Unlocking the supervisor key ({os.cpu_count()} cores, load {load:.2f})\n")
    print("| what | key file | p50 ms | p95 ms | n |")
    print("|---|---|---:|---:|---:|")
    rows = [("unlock (in process)", "old: PKCS#8, PBKDF2 2,048", old_ms),
            ("unlock (in process)", f"new: {new_name}", new_ms),
            ("first unlock of an old key (+ upgrade)", "old -> new", upgrade_ms)]
    if opts.cli:
        rows += [("`ars inbox approve` (process)", "old (upgraded by it)", cli_old),
                 ("`ars inbox approve` (process)", "new", cli_new)]
    for what, which, xs in rows:
        print(f"| {what} | {which} | {statistics.median(xs):.1f} | {pct(xs, 0.95):.1f} | {len(xs)} |")
    print("\n### An attacker with a copy of key.enc (Python, one core)\n")
    print("| key file | guesses/s | tries | 8 lowercase letters (26^8) would take | 3 words of 7,776 would take |")
    print("|---|---:|---:|---:|---:|")
    for which, rate, n in (("old: PKCS#8, PBKDF2 2,048", old_rate, old_n), (f"new: {new_name}", new_rate, new_n)):
        print(f"| {which} | {rate:,.1f} | {n} | {_span(26 ** 8 / 2 / rate)} | {_span(7776 ** 3 / 2 / rate)} |")
    print(f"\nslow-down per guess: x{old_rate / new_rate:,.0f} (on average half the space is searched)")


def _span(seconds: float) -> str:
    for unit, size in (("years", 365 * 86400), ("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= size:
            return f"{seconds / size:,.1f} {unit}"
    return f"{seconds:.1f} s"


if __name__ == "__main__":
    main()

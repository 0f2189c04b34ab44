"""The supervisor's key file (core/inbox/key_file.py): Argon2id-sealed, a key made by
an older ARS (PKCS#8, PBKDF2 at 2,048 iterations) upgraded on its next unlock with
the same key and fingerprint, planted files refused in one line. Real files, real
cryptography; the timing of the KDF is bench/unlock_kdf.py's business."""

from __future__ import annotations

import base64
import json
import os
import stat
import threading
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from core.inbox import key_file, signing

PASS = b"correct horse battery staple"


def _key_enc(state: Path) -> Path:
    return state / "supervisor" / "key.enc"


def _legacy_key(state: Path, passphrase: bytes) -> str:
    """A key as ARS wrote it before: PKCS#8 PEM with cryptography's BestAvailableEncryption."""
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.BestAvailableEncryption(passphrase))
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    d = state / "supervisor"
    d.mkdir(parents=True, mode=0o700)
    (d / "key.enc").write_bytes(pem)
    (d / "key.pub").write_text(base64.b64encode(raw).decode() + "\n")
    return signing.fingerprint(raw)


def test_a_new_key_is_sealed_with_argon2id_and_holds_no_plain_seed(tmp_path):
    fp = signing.init(tmp_path, PASS)
    path = _key_enc(tmp_path)
    doc = json.loads(path.read_bytes())
    assert doc["ars_supervisor_key"] == 2 and doc["aead"] == "chacha20-poly1305"
    assert doc["kdf"]["name"] == "argon2id" and doc["kdf"]["t"] >= 3 and doc["kdf"]["m_kib"] >= 64 * 1024
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    signer = signing.unlock(tmp_path, bytearray(PASS))  # a bytearray (what the front ends hold) works
    assert signer.fingerprint == fp and signer.upgraded == ""
    seed = signer._key.private_bytes_raw()
    assert seed not in path.read_bytes() and base64.b64encode(seed) not in path.read_bytes()
    with pytest.raises(signing.BadPassphrase):
        signing.unlock(tmp_path, b"correct horse battery stapler")


def test_a_key_made_before_is_upgraded_on_its_next_unlock_same_key_same_fingerprint(tmp_path):
    fp = _legacy_key(tmp_path, b"an old passphrase")
    before = _key_enc(tmp_path).stat().st_ino
    with pytest.raises(signing.BadPassphrase):  # a wrong passphrase changes nothing
        signing.unlock(tmp_path, b"not the old passphrase")
    assert _key_enc(tmp_path).read_bytes().startswith(b"-----BEGIN ENCRYPTED PRIVATE KEY-----")
    signer = signing.unlock(tmp_path, b"an old passphrase")
    assert signer.fingerprint == fp and "PBKDF2" in signer.upgraded
    after = _key_enc(tmp_path)
    assert after.stat().st_ino != before  # replaced by a rename (atomic), never rewritten in place
    assert json.loads(after.read_bytes())["kdf"]["name"] == "argon2id"
    assert stat.S_IMODE(after.stat().st_mode) == 0o600
    assert sorted(p.name for p in after.parent.iterdir()) == ["key.enc", "key.pub"]  # no temporary file left
    again = signing.unlock(tmp_path, b"an old passphrase")  # the short old passphrase still opens it
    assert again.fingerprint == fp and again.upgraded == ""
    # what the upgraded key signs verifies against the pin taken before the upgrade
    from datetime import datetime, timezone

    rec = again.sign_decision(request_id="req-1", input_hash="sha256:x", verdict="approve", note="",
                              decided_at=datetime.now(timezone.utc))
    payload, why = signing.verify_decision(rec, pin=fp, request_id="req-1", input_hash="sha256:x")
    assert payload is not None, why


def test_weaker_parameters_are_upgraded_and_stronger_ones_kept(tmp_path):
    fp = signing.init(tmp_path, PASS)
    key = signing.unlock(tmp_path, PASS)._key
    weak = {"name": "argon2id", "t": 1, "m_kib": 8 * 1024, "p": 1}
    _key_enc(tmp_path).write_bytes(key_file.seal(key, PASS, weak))
    signer = signing.unlock(tmp_path, PASS)
    assert signer.fingerprint == fp and "below today's" in signer.upgraded
    assert json.loads(_key_enc(tmp_path).read_bytes())["kdf"]["t"] == key_file.ARGON2["t"]
    scrypt = dict(key_file.SCRYPT, n=2 ** 14)  # an scrypt file (where Argon2id was missing) moves to Argon2id
    _key_enc(tmp_path).write_bytes(key_file.seal(key, PASS, scrypt))
    assert "scrypt" in signing.unlock(tmp_path, PASS).upgraded
    strong = dict(key_file.ARGON2, t=key_file.ARGON2["t"] + 1)
    _key_enc(tmp_path).write_bytes(key_file.seal(key, PASS, strong))
    assert signing.unlock(tmp_path, PASS).upgraded == ""
    assert json.loads(_key_enc(tmp_path).read_bytes())["kdf"]["t"] == strong["t"]  # never downgraded


def test_planted_key_files_are_refused_in_one_line_without_hanging_or_eating_memory(tmp_path):
    signing.init(tmp_path, PASS)
    path = _key_enc(tmp_path)
    doc = json.loads(path.read_bytes())
    # parameters that would take a terabyte: refused before any work
    path.write_text(json.dumps({**doc, "kdf": {**doc["kdf"], "m_kib": 2 ** 30}}))
    with pytest.raises(signing.SigningError) as exc:
        signing.unlock(tmp_path, PASS)
    assert "m_kib" in str(exc.value) and "\n" not in str(exc.value)
    # the parameters or the public key edited: the seal's associated data no longer matches
    path.write_text(json.dumps({**doc, "kdf": {**doc["kdf"], "t": doc["kdf"]["t"] + 1}}))
    with pytest.raises(signing.BadPassphrase):
        signing.unlock(tmp_path, PASS)
    path.write_text("not a key at all")
    with pytest.raises(signing.SigningError) as exc:
        signing.unlock(tmp_path, PASS)
    assert "not a supervisor key" in str(exc.value)
    # a FIFO named key.enc: refused at once, never read (a reader would wait for a writer for ever)
    path.unlink()
    os.mkfifo(path)
    result: list = []
    t = threading.Thread(target=lambda: result.append(_try_unlock(tmp_path)), daemon=True)
    t.start()
    t.join(30)
    assert result and isinstance(result[0], signing.SigningError) and "not a regular file" in str(result[0])


def _try_unlock(state: Path):
    try:
        return signing.unlock(state, PASS)
    except signing.SigningError as exc:
        return exc


def test_a_new_passphrase_needs_twelve_characters(tmp_path):
    with pytest.raises(signing.SigningError) as exc:
        signing.init(tmp_path / "a", b"elevenchars")
    assert "11 characters" in str(exc.value) and "at least 12" in str(exc.value)
    assert not _key_enc(tmp_path / "a").exists()
    assert signing.init(tmp_path / "b", "пароль-двенадцать".encode())  # counted in characters, not bytes


def test_the_process_that_unlocks_the_key_is_not_dumpable(tmp_path):
    import subprocess
    import sys

    signing.init(tmp_path, PASS)
    code = ("import sys\nfrom core.inbox import signing, key_memory\nbefore = key_memory.dumpable()\n"
            f"signing.unlock({str(tmp_path)!r}, b{PASS.decode()!r})\n"
            "print(before, key_memory.dumpable())")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])})
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["True", "False"]


def test_wipe_zeroes_buffers_and_leaves_shared_bytes_alone():
    from core.inbox.key_memory import wipe, wipe_bytes

    buf = bytearray(b"a passphrase")
    wipe(buf)
    assert buf == bytearray(len(b"a passphrase"))

    def made_here() -> bytes:
        seed = os.urandom(32)
        wipe_bytes(seed)
        return seed

    assert made_here() == bytes(32)
    shared = os.urandom(32)
    kept = shared
    wipe_bytes(shared)  # another name holds it: not ours to zero
    assert kept == shared and kept != bytes(32)

"""Checkpoint file names, safe for any goal id: ASCII letters, digits, ``-``, ``_`` and CJK
are kept, everything else is percent-escaped (``/``, ``..``, NUL, control
characters, quotes), Windows device names (``CON``, ``NUL``, ``COM1``...) are
escaped, and a long name is cut with a hash suffix, so every file stays inside
``checkpoints/`` and under the file-name length limit. A ``_`` that starts or
ends a name or touches another ``_`` is escaped too (``%5F``), so a name never
holds the ``__`` separator and ``<goal>__<loop>`` splits one way only. A loop
is found by exactly that split: the part after the last ``__`` must equal
its escaped id (older files, whose goal part may hold ``__``, still split
right: loop ids are ``loop-<hex>``), and a loop keeps the file names it was
first written under.
"""

from __future__ import annotations

import hashlib
import unicodedata
from typing import Iterator

GOAL_NAME_BYTES = 120
LOOP_NAME_BYTES = 60
WINDOWS_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(10)), *(f"LPT{i}" for i in range(10))}


def _is_cjk(ch: str) -> bool:
    """A CJK ideograph, kana or hangul letter that is assigned (kept readable in names)."""
    o = ord(ch)
    in_range = (0x3040 <= o <= 0x30FF or 0x3400 <= o <= 0x4DBF or 0x4E00 <= o <= 0x9FFF
                or 0xAC00 <= o <= 0xD7AF or 0xF900 <= o <= 0xFAFF or 0x20000 <= o <= 0x2FA1F)
    return in_range and unicodedata.category(ch) == "Lo"


def _escape(ch: str) -> str:
    return "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))


def safe_name(raw: str, limit: int = GOAL_NAME_BYTES) -> str:
    """A file-name component for ``raw``: reversible percent-escaping (so two
    different ids never share a name), CJK kept, capped at ``limit`` bytes."""
    out: list[str] = []
    prev = ""
    last = len(raw) - 1
    for i, ch in enumerate(raw):
        if ch == "_":
            # never "__" inside a name, nor a "_" at either end: "<goal>__<loop>" splits one way only
            alone = 0 < i < last and prev != "_" and raw[i + 1] != "_"
            out.append(ch if alone else _escape(ch))
        elif ch.isascii() and (ch.isalnum() or ch == "-"):
            out.append(ch)
        elif ch == "." and i > 0 and prev != "." and i < len(raw) - 1:
            out.append(ch)  # no leading, doubled or trailing dots
        elif _is_cjk(ch):
            out.append(ch)
        else:
            out.append(_escape(ch))
        prev = ch
    name = "".join(out) or "%00empty"
    if name.split(".")[0].upper() in WINDOWS_RESERVED:
        name = _escape(name[0]) + name[1:]
    if len(name.encode("utf-8")) > limit:
        digest = hashlib.blake2b(raw.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()
        budget = limit - len(digest) - 1
        cut = ""
        for token in _tokens(name):
            if len((cut + token).encode("utf-8")) > budget:
                break
            cut += token
        name = f"{cut}~{digest}"  # "~" never appears unescaped, so this cannot collide with a plain name
    return name


def _tokens(name: str) -> Iterator[str]:
    """Characters, with each %XX escape kept whole (a cut never splits one)."""
    i = 0
    while i < len(name):
        step = 3 if name[i] == "%" else 1
        yield name[i:i + step]
        i += step


def base_name(name: str) -> str | None:
    """``<goal>__<loop>`` of a checkpoint or history file name (None for other files)."""
    if name.startswith("."):
        return None
    if name.endswith(".history.jsonl"):
        return name[: -len(".history.jsonl")]
    if name.endswith(".json"):
        return name[: -len(".json")]
    return None

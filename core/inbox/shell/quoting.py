"""A word's text as bash reads it: quotes removed, escapes and ``$'...'``
resolved, braces and globs noticed."""

from __future__ import annotations


_GLOB = frozenset("*?[")
_ANSI = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
         "\\": "\\", "'": "'", '"': '"', "?": "?"}


def short_text(text: str, width: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def plain_piece(raw: str) -> tuple[str, bool, bool, str]:
    value, glob = _unquoted(raw)
    return value, False, glob, raw


def _unquoted(raw: str) -> tuple[str, bool]:
    """An unquoted word's value (backslashes removed), and whether an
    unescaped glob character makes it a pattern."""
    if "\\" not in raw:
        return raw, not _GLOB.isdisjoint(raw)
    out = []
    glob = False
    i = 0
    n = len(raw)
    while i < n:
        ch = raw[i]
        if ch == "\\":
            if i + 1 < n:
                if raw[i + 1] != "\n":
                    out.append(raw[i + 1])
                i += 2
                continue
            out.append(ch)
        else:
            if ch in _GLOB:
                glob = True
            out.append(ch)
        i += 1
    return "".join(out), glob


def has_braces(raw: str) -> bool:
    """An unquoted ``{a,b}`` or ``{1..3}`` expands to several words."""
    if "{" not in raw or ("," not in raw and ".." not in raw):
        return False
    i = raw.find("{")
    while i != -1:
        if i == 0 or raw[i - 1] != "\\":
            close = raw.find("}", i)
            if close != -1:
                inner = raw[i + 1:close]
                if "," in inner or ".." in inner:
                    return True
        i = raw.find("{", i + 1)
    return False


def dq_unescape(raw: str) -> str:
    """Inside double quotes a backslash escapes only $ ` \" \\ and newline."""
    if "\\" not in raw:
        return raw
    out = []
    i = 0
    n = len(raw)
    while i < n:
        ch = raw[i]
        if ch == "\\" and i + 1 < n and raw[i + 1] in '$`"\\\n':
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def ansi_c(raw: str) -> str:
    r"""$'...': \n, \t, \xHH, \uHHHH, \NNN (octal), \cX and the rest."""
    if "\\" not in raw:
        return raw
    out = []
    i = 0
    n = len(raw)
    while i < n:
        ch = raw[i]
        if ch != "\\" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        e = raw[i + 1]
        i += 2
        if e in _ANSI:
            out.append(_ANSI[e])
        elif e in "01234567":
            j = i - 1
            k = j
            while k < n and k < j + 3 and raw[k] in "01234567":
                k += 1
            out.append(chr(int(raw[j:k], 8) & 0xFF))
            i = k
        elif e in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[e]
            k = i
            while k < n and k < i + width and raw[k] in "0123456789abcdefABCDEF":
                k += 1
            if k == i:
                out.append("\\" + e)
            else:
                try:
                    out.append(chr(int(raw[i:k], 16)))
                except (ValueError, OverflowError):
                    out.append("\ufffd")
                i = k
        elif e == "c" and i < n:
            out.append(chr(ord(raw[i]) & 0x1F))
            i += 1
        else:
            out.append("\\" + e)
    return "".join(out)

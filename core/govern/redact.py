"""Secrets never enter memory: ``redact(text)`` replaces each secret with a
typed placeholder (``[secret:openai-key]``, ``[secret:password]``...) and drops
``<private>...</private>`` spans (``[private]``), keeping the rest recallable
(``postgres://app:[secret:password]@db:5432/x`` keeps its user and host).

What finds secrets, in order (an earlier finding wins an overlap):

1. ``<private>`` spans (an unclosed one runs to the end of the text);
2. private key blocks: detect-secrets' ``PrivateKeyDetector`` headers, the
   block taken to its END line (or to the end of its base64 when cut off);
3. provider keys: the ``denylist`` regexes of detect-secrets' plugins (AWS,
   GitHub, GitLab, Slack, Stripe, JWT, SendGrid, Twilio, Discord, Telegram,
   Mailchimp, PyPI, npm, Azure storage, Square) plus the formats it lacks or
   has only in an old shape (OpenAI ``sk-proj-``, Anthropic ``sk-ant-``, Google
   ``AIza``, GitHub ``github_pat_``, Hugging Face ``hf_``, Stripe test keys,
   ``Authorization: Bearer``);
4. URLs with a password (detect-secrets' basic-auth shape): only the password goes;
5. keyword assignments (detect-secrets' keyword list: ``password=``,
   ``api_key:``, ``AWS_SECRET_ACCESS_KEY=``..., plus token/credential words);
6. high-entropy strings (Shannon entropy, as detect-secrets' high-entropy
   plugins compute it, but unquoted too and with a bar set by the token's
   length), with the hard false positives left alone: hex (commit hashes,
   digests), UUIDs, paths and identifiers of words, lockfile hashes, base64 of
   readable text, ids with a known non-secret prefix (``toolu_``, ``msg_``...).

Why not detect-secrets' ``scan_line``: it runs every plugin with its filters
on each line, ~1,600 lines/s here, and in ad-hoc mode flags every word as
"high entropy". Its plugins' regexes are used directly instead (as data:
``ds_patterns.py``), each behind a cheap anchor: the providers' regexes run only on runs
of 16+ token characters, the keyword rule only where a keyword is, the
private-key and URL rules only when their literal is in the text.
"""

from __future__ import annotations

import functools
import math
import re
import string
from collections import Counter
from typing import NamedTuple

from core.govern.ds_patterns import KEYWORDS as _DS_KEYWORDS
from core.govern.ds_patterns import PRIVATE_KEY_HEADERS, PROVIDERS as _DS_PROVIDERS

__all__ = ["Finding", "Redacted", "redact", "redact_text", "redact_value", "redact_episode", "redact_episodes",
           "placeholder", "KINDS", "PLACEHOLDER_RE"]


class Finding(NamedTuple):
    kind: str  # "openai-key", "password", "private", ...
    start: int  # span in the input text
    end: int


class Redacted:
    """The text as it may be stored, and what was taken out of it (kinds and spans, never the values)."""

    __slots__ = ("text", "findings")

    def __init__(self, text: str, findings: list[Finding] | None = None):
        self.text = text
        self.findings = findings or []

    def __repr__(self) -> str:  # the redacted text only: a repr in a failure message shows no secret
        return f"Redacted(text={self.text!r}, findings={self.findings!r})"

    @property
    def changed(self) -> bool:
        return bool(self.findings)

    @property
    def kinds(self) -> list[str]:
        return sorted({f.kind for f in self.findings})


def placeholder(kind: str) -> str:
    return "[private]" if kind == "private" else f"[secret:{kind}]"


# What a placeholder looks like: redacting redacted text changes nothing.
PLACEHOLDER_RE = re.compile(r"\[secret:[a-z0-9-]+\]|\[private\]")

# -- 1. private spans ------------------------------------------------------------------------------
_PRIVATE = re.compile(r"<private>.*?(?:</private>|\Z)", re.S | re.I)

# -- 2. private keys -------------------------------------------------------------------------------
_KEY_HEADERS = "|".join(PRIVATE_KEY_HEADERS)
_PRIVATE_KEY = re.compile(
    r"(?:-----\s*)?(?:" + _KEY_HEADERS + r")[^\n]*"  # the BEGIN line (its dashes, PuTTY's header line)
    r"(?:"
    r"[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"  # to its END line
    r"|(?:\n?(?:\\n)?[A-Za-z0-9+/=:\- ]{16,})*"  # or, cut off, as far as its base64 goes
    r")")

# -- 3. provider keys ------------------------------------------------------------------------------
# (kind, regex): detect-secrets' own patterns first, then the shapes it lacks.
_PROVIDERS: list[tuple[str, str]] = [  # (kind, pattern); compiled together in _provider()
    *[(kind, f"(?i:{p})" if icase else p) for kind, shapes in _DS_PROVIDERS.items()
      if kind not in ("jwt", "npm-token") for p, icase in shapes],
    # detect-secrets' JWT shape, its signature taken whole (its pattern stops lazily after the second dot)
    ("jwt", _DS_PROVIDERS["jwt"][0][0].replace("*?", "*")),
    # its npm shape without the registry before the token nor the line after it (the registry stays readable)
    ("npm-token", r"(?<=:_authToken=)\s*(?:npm_[A-Za-z0-9]{36}|[A-Fa-f0-9-]{36})"),
    # not in detect-secrets 1.5 (its OpenAI pattern is the legacy T3BlbkFJ shape only)
    ("anthropic-key", r"sk-ant-[A-Za-z0-9_\-]{20,}"),
    ("openai-key", r"sk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}"),
    ("google-api-key", r"AIza[0-9A-Za-z_\-]{35}"),
    ("github-token", r"github_pat_[A-Za-z0-9_]{22,}"),
    ("huggingface-token", r"hf_[A-Za-z0-9]{30,}"),
    ("stripe-key", r"(?:sk|rk)_(?:live|test)_[0-9a-zA-Z]{16,}"),
    ("npm-token", r"npm_[A-Za-z0-9]{36}"),
    ("digitalocean-token", r"do[pro]_v1_[a-f0-9]{64}"),
]
_BEARER = re.compile(r"\b[Bb](?i:earer)\s+([A-Za-z0-9._~+/\-]{16,}=*)")
# Every provider key is a run of these characters: the providers' regexes run on
# such runs only (of 16+), not at every position of a long text.
_RUN = re.compile(r"[A-Za-z0-9+/_\-.:=@]{16,}")
_RUN_CHAR = re.compile(r"[A-Za-z0-9+/_\-.:=@]")
# The heads of the providers' shapes, case-sensitive and mostly literal (fast to
# scan): only a run holding one is given to the providers' alternation.
_HEADS = [re.compile(p) for p in (  # a few small scans beat one alternation of them all (sre tries each branch)
    r"sk-|[sr]k_|A3T|AKIA|ASIA|ABIA|ACCA|gh[pousr]_|github_pat_|GR1348941|eyJ|SG\.|AIza|hf_|npm_|pypi-|_authToken|"
    r"AccountKey=|sq0csp-|do[pro]_v1_|-us\d|[Xx][Oo][Xx]",
    r"(?:AC|SK)[a-z0-9]{32}", r":(?=[0-9A-Za-z_-]{35})", r"\.[A-Za-z\d_-]{6}\.", r"gl[a-z]{2,6}-",
    r"hooks\.slack")]
# A provider match needs a boundary before it (``xsk-...`` in a word is no key).
_PROVIDER_SOURCE = "|".join(f"(?P<p{i}>{p})" for i, (_, p) in enumerate(_PROVIDERS))


@functools.cache
def _provider() -> re.Pattern:
    """The providers' alternation, compiled when first needed (~12 ms: most texts never need it)."""
    return re.compile(_PROVIDER_SOURCE)
_PROVIDER_KIND = {f"p{i}": kind for i, (kind, _) in enumerate(_PROVIDERS)}

# -- 4. URLs with a password -----------------------------------------------------------------------
# detect-secrets' basic-auth shape ``://user:password@``, with the user and the
# password kept to one URL authority (no ``/``, no spaces) so only the password goes.
_URL_PASSWORD = re.compile(r"://[^\s/:@{}'\"]*:(?P<pw>[^\s/@{}'\"]+)@(?=[^\s/@]+)")

# -- 5. keyword assignments ------------------------------------------------------------------------
_KEYWORDS = "|".join((*_DS_KEYWORDS, "token", "credentials?", "access_?key", "auth_?token", "authorization"))
# keys that name something about a secret, not the secret: counts, names, paths, types
_NOT_A_KEY = re.compile(r"tokens|tokeniz|(?:name|file|path|dir|url|uri|id|ids|ref|type|length|len|count|limit|"
                        r"size|env|arn|hash|policy|manager|store|provider|field|header|prompt|rotation|"
                        r"version|expiry|expires|ttl|mode)s?$|^max_|^num_", re.I)
_KEYWORD = re.compile(_KEYWORDS)  # run on the lowered text: a case-blind alternation is 4x slower
_KEYWORD_ANY_CASE = re.compile(r"(?i:" + _KEYWORDS + r")")
# after a keyword: the rest of the key, its closing quote/bracket, the separator, the value
_ASSIGN_TAIL = re.compile(
    r"(?P<rest>[A-Za-z0-9_\-]*)[\]'\"]{0,2}"
    r"(?P<sep>\s*(?::=|==?|:)\s*|\s+(?=['\"]))"
    r"(?:(?P<q>['\"`])(?P<qval>[^'\"`\n]{4,200})(?P=q)|(?P<val>[^\s'\"`,;)}\]]{4,200}))")
# Passwords on command lines and in plain words (not detect-secrets'): a flag's value,
# mysql's attached -pSECRET, sshpass -p, redis-cli -a, "the password is X"
_CLI_PASSWORD = re.compile(
    r"--(?:password|passwd|pass|token|api-key|apikey|secret|auth-token)(?:=|\s+)(?P<q1>['\"]?)(?P<v1>[^\s'\"]{4,})(?P=q1)"
    r"|\b(?:mysql|mysqldump|mariadb|mysqladmin)\b[^\n|;&]*?\s-p(?P<q2>['\"]?)(?P<v2>[^\s'\"]{3,})(?P=q2)"
    r"|\bsshpass\s+-p\s*(?P<q3>['\"]?)(?P<v3>[^\s'\"]+)(?P=q3)"
    r"|\bredis-cli\b[^\n|;&]*?\s-a\s+(?P<q4>['\"]?)(?P<v4>[^\s'\"]+)(?P=q4)"
    r"|\b(?i:password|passphrase|passwd|pwd)\s+(?:is|was)\s+(?P<q5>['\"`]?)(?P<v5>[^\s'\"`]{6,})(?P=q5)")
_CLI_HINT = re.compile(r"--|\s-[pa]|(?i:password|passphrase|passwd|pwd)\s+(?:is|was)\s")
_KEY_CHARS = frozenset(string.ascii_letters + string.digits + "_.-")
# what an assignment's value is when it is not a secret: code, types, placeholders, env lookups
_NOT_A_VALUE_SOURCE = (
    r"^(?:true|false|null|none|nil|undefined|required|optional|str|string|bytes|int|bool|secret|bearer|basic|"
    r"password|token|redacted|changeme|example|xxx+|\*+|\.\.\.|…|<[^>]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|"
    r"%\(?[a-z_]*\)?s?|\{\{.*\}\}|\{[a-z_]*\}|os\.environ.*|getenv.*|env\(.*|process\.env.*|"
    r"(?:self|this|cls|config|settings|args|opts|options|params|request|req|user|cfg|ctx|os)\.[\w.\[\]'\"]+|"
    r"[a-z_][a-z0-9_]*\(.*|[A-Za-z_][A-Za-z0-9_]*\[.*|"
    r"(?:Optional|List|Dict|Union|SecretStr|Field)\b.*|"
    r"\[secret:[a-z0-9-]+\]|\[private\])$")


@functools.cache
def _not_a_value() -> re.Pattern:
    return re.compile(_NOT_A_VALUE_SOURCE, re.I)  # ~15 ms to compile: only once a keyword assignment is seen

# -- 6. high entropy -------------------------------------------------------------------------------
_TOKEN = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{20,}={0,2}(?![A-Za-z0-9+/_\-])")
_HEX_LIKE = re.compile(r"^(?:[0-9a-fA-F]+|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                       r"[0-9a-fA-F]{12}|[0-9a-fA-F\-]+)$")
# ids agents and tools print that are not secrets (Anthropic/OpenAI message, tool and request ids...)
_SAFE_PREFIX = re.compile(r"^(?:toolu_|srvtoolu_|msg_|req_|call_|chatcmpl-|run_|thread_|asst_|file-|"
                          r"resp_|batch_|ses_|evt_|sha256-|sha512-|sha1-)")
_HASH_BEFORE = re.compile(r"(?:\bh1:|sha\d+[-:=]|md5[-:=]|--hash=)\Z")
_AWS_SECRET = re.compile(r"^(?=.*[A-Z])(?=.*[a-z])(?=.*[0-9/+])[A-Za-z0-9/+]{40}$")
_WORD = re.compile(r"[A-Z]?[a-z]{3,}|[A-Z]{3,}(?![a-z])")

# What every rule needs somewhere in the text: a run of 16 token characters, a keyword,
# a private span, a URL's authority or a bearer. Checked first on short strings only: on
# long ones it is nearly always there and would cost a scan for nothing.
_QUICK = re.compile(r"[A-Za-z0-9+/_\-.:=@]{16}|://|\s-p\S|\s-a\s|(?i:<private|pass|pwd|secret|key|token|auth|credential|"
                    r"contrase|bearer)")


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def _high_entropy(tok: str) -> bool:
    """A random-looking token (unquoted too), not one of the hard false positives."""
    core = tok.rstrip("=")
    if len(core) < 20 or _HEX_LIKE.match(core) or _SAFE_PREFIX.match(core) or PLACEHOLDER_RE.search(tok):
        return False
    has_upper = any(c.isupper() for c in core)
    has_lower = any(c.islower() for c in core)
    digits = sum(c.isdigit() for c in core)
    if not (has_upper and has_lower) and not (digits and (has_upper or has_lower) and len(core) >= 32):
        return False  # one case only: identifiers, paths, constants (hex was taken above)
    if "/" in core and all(_wordish(seg) for seg in core.split("/")):
        return False  # a path: src/core/ingest/formats/claude_code, //bucket/2025/03/dump-1a2b3c4d
    words = sum(len(w) for w in _WORD.findall(core))
    if words >= 0.7 * len(core):
        return False  # an identifier of words: TestRedactAwsSecretKeyHandler
    if not digits and len(core) < 32:
        return False  # random 20-31 character keys mix in digits; word salads do not
    # detect-secrets' base64 limit is 4.5; a random string shorter than ~64
    # characters cannot reach it often, so the bar is set below its length's maximum
    if _entropy(core) < min(4.3, math.log2(len(core)) - 1.0):
        return False
    return not _base64_of_text(core)


_LOWER_SEGMENT = re.compile(r"^[a-z0-9_\-]*$")


def _wordish(seg: str) -> bool:
    """A path segment a person named: lowercase with digits, or words in CamelCase."""
    return len(seg) <= 3 or bool(_LOWER_SEGMENT.match(seg)) or sum(len(w) for w in _WORD.findall(seg)) >= 0.7 * len(seg)


def _base64_of_text(tok: str) -> bool:
    """Base64 of readable text (``aGVsbG8gd29ybGQ=``) is data, not a key; random
    bytes decode to binary. Text holding ``:`` may be ``user:password``: kept a secret."""
    import base64
    import binascii

    try:
        raw = base64.b64decode(tok + "=" * (-len(tok) % 4), altchars=b"-_" if ("-" in tok or "_" in tok) else None,
                               validate=True)
    except (binascii.Error, ValueError):
        return False
    if not raw:
        return False
    printable = sum(32 <= b < 127 or b in (9, 10, 13) for b in raw)
    return printable >= 0.95 * len(raw) and b":" not in raw


def _candidates(text: str) -> list[tuple[int, int, int, str]]:
    """(priority, start, end, kind) of everything that looks secret."""
    out: list[tuple[int, int, int, str]] = []
    for m in _PRIVATE.finditer(text):
        out.append((0, m.start(), m.end(), "private"))
    if "PRIVATE KEY" in text or "PuTTY-User" in text:
        for m in _PRIVATE_KEY.finditer(text):
            out.append((1, m.start(), m.end(), "private-key"))
    done = -1
    for at in sorted({m.start() for h in _HEADS for m in h.finditer(text)}):
        if at < done:
            continue
        run = _run_around(text, at)
        if run is None:
            continue
        base, done = run.start(), run.end()
        for m in _provider().finditer(run.group()):
            s = base + m.start()
            if s and text[s - 1].isalnum():
                continue  # inside a longer word
            out.append((2, s, base + m.end(), _PROVIDER_KIND[m.lastgroup or ""]))
    for m in _BEARER.finditer(text):  # after the providers: a JWT in a header is a jwt
        out.append((2.5, m.start(1), m.end(1), "bearer-token"))
    if "://" in text:
        for m in _URL_PASSWORD.finditer(text):
            if not PLACEHOLDER_RE.fullmatch(m.group("pw")) and not m.group("pw").startswith("$"):
                out.append((3, m.start("pw"), m.end("pw"), "password"))
    last = -1
    lowered = text.lower()
    keywords = _KEYWORD if len(lowered) == len(text) else _KEYWORD_ANY_CASE  # lower() may change lengths
    for k in keywords.finditer(lowered if keywords is _KEYWORD else text):
        if k.start() < last:
            continue
        m = _ASSIGN_TAIL.match(text, k.end())
        if m is None:
            continue
        last = m.end()
        start = k.start()
        while start and text[start - 1] in _KEY_CHARS:
            start -= 1
        key = text[start:m.end("rest")]
        g = "qval" if m.group("qval") is not None else "val"
        value = m.group(g)
        if _not_a_value().match(value.strip()) or value.strip().startswith(("[secret:", "[private]")):
            continue
        if g == "val" and (not _plausible_unquoted(value) or (":" in m.group("sep") and value.isalpha()
                                                              and value.islower())):
            continue  # "password: reset flow" is prose; "password=reset" is not
        if _NOT_A_KEY.search(key):
            continue
        out.append((4, m.start(g), m.end(g), _keyword_kind(key)))
    if _CLI_HINT.search(text):
        for m in _CLI_PASSWORD.finditer(text):
            g = m.lastgroup or ""
            value = m.group(g).rstrip(".,;:!?)")
            if value.startswith(("$", "<", "[secret:", "[private]", "-")) or _not_a_value().match(value):
                continue
            if g == "v5" and (value.isalpha() and value.islower()):
                continue  # "the password is incorrect"
            out.append((4, m.start(g), m.start(g) + len(value), "password"))
    akia = [c[1] for c in out if c[3] == "aws-access-key"]
    for m in _TOKEN.finditer(text):
        tok = m.group()
        if _HASH_BEFORE.search(text, max(0, m.start() - 12), m.start()):
            continue  # a lockfile's or a checksum's hash: go.sum h1:, --hash=sha256:, integrity sha512-
        # an AWS access key's secret half: 40 characters of base64 just after it
        if len(tok) == 40 and any(0 < m.start() - a < 400 for a in akia) and _AWS_SECRET.match(tok):
            out.append((5, m.start(), m.end(), "aws-secret"))
        elif _high_entropy(tok):
            out.append((5, m.start(), m.end(), "high-entropy"))
    return out


def _run_around(text: str, at: int):
    """The run of token characters (16+) that holds position ``at``, or None."""
    start = at
    while start and _RUN_CHAR.match(text, start - 1):
        start -= 1
    return _RUN.match(text, start)


def _plausible_unquoted(value: str) -> bool:
    """An unquoted value after ``password=`` is a secret unless it reads as prose or code."""
    v = value.rstrip(".")
    if len(v) < 4 or v.lower() in ("this", "that", "here", "there", "from", "with", "when", "which", "file",
                                   "field", "fields", "prompt", "manager", "reset", "hash", "hashes", "stdin"):
        return False
    if v.startswith(("-", "/", "./", "~", "http", "$")) or v.endswith((":", "(")):
        return False  # a flag, a path, a URL (its password is step 4's), an env var, code
    return True


def _keyword_kind(key: str) -> str:
    k = key.lower()
    if "aws" in k and ("secret" in k or "key" in k):
        return "aws-secret"
    if any(w in k for w in ("pass", "pwd", "contrase")):
        return "password"
    if "token" in k or "auth" in k:
        return "token"
    if "key" in k:
        return "api-key"
    return "secret"


KINDS = ("private", "private-key", *dict.fromkeys(k for k, _ in _PROVIDERS), "bearer-token", "password",
         "aws-secret", "token", "api-key", "secret", "high-entropy", "redacted")


def redact(text: str) -> Redacted:
    """``text`` with each secret replaced by its placeholder and private spans
    dropped; ``findings`` give each one's kind and span in ``text``."""
    if len(text) < 8 or (len(text) < 256 and not _QUICK.search(text)):
        return Redacted(text)  # short strings (topics, names, paths) with no anchor of any rule
    # placeholders already in the text are kept as they are: redacting twice changes nothing
    chosen: list[tuple[int, int, str]] = []
    kept = [(m.start(), m.end()) for m in PLACEHOLDER_RE.finditer(text)] if "[" in text else []
    # an earlier detector wins an overlap; within one, the longer span
    for _, start, end, kind in sorted(_candidates(text), key=lambda c: (c[0], c[1] - c[2])):
        if start >= end or any(start < e and s < end for s, e, _ in chosen) or \
                any(start < e and s < end for s, e in kept):
            continue
        chosen.append((start, end, kind))
    if not chosen:
        return Redacted(text)
    chosen.sort()
    parts, at = [], 0
    for start, end, kind in chosen:
        parts.append(text[at:start])
        parts.append(placeholder(kind))
        at = end
    parts.append(text[at:])
    return Redacted("".join(parts), [Finding(kind, s, e) for s, e, kind in chosen])


def redact_text(text: str) -> str:
    """Just the redacted text."""
    return redact(text).text


# -- episodes --------------------------------------------------------------------------------------
def redact_value(value, found: set[str] | None = None):
    """Strings in a JSON-like value (dicts, lists) redacted; ``found`` collects
    the secrets' own text, so the caller can take them out of other fields."""
    if isinstance(value, str):
        r = redact(value)
        if found is not None:
            found.update(value[f.start:f.end] for f in r.findings if f.end - f.start >= 6)
        return r.text
    if isinstance(value, dict):
        return {k: redact_value(v, found) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v, found) for v in value]
    return value


def _scrub(text: str, found: set[str]) -> str:
    """``text`` redacted, then without any secret found elsewhere in the episode
    (a summary or an entity cut from the text may hold a secret without the
    context that told it was one: ``password=`` stayed in the text)."""
    r = redact(text)
    out = r.text
    for secret in found:
        if secret in out:
            out = out.replace(secret, "[secret:redacted]")
    return out


def redact_episode(ep):
    """The episode with no secret in any field that is stored: text, summary,
    topics, entity names, relations, meta's strings. Unchanged (the same
    object) when nothing was found."""
    found: set[str] = set()
    text = redact_value(ep.text, found)
    meta = redact_value(ep.meta, found) if ep.meta else ep.meta
    summary = _scrub(ep.summary, found) if ep.summary else ep.summary
    topics = [_scrub(t, found) for t in ep.topics]
    entities = [e if (n := _scrub(e.name, found)) == e.name else e.model_copy(update={"name": n})
                for e in ep.entities]
    relations = [r if (r.src, r.dst) == (s := _scrub(r.src, found), d := _scrub(r.dst, found))
                 else r.model_copy(update={"src": s, "dst": d}) for r in ep.relations]
    update = {}
    if text != ep.text:
        update["text"] = text
    if meta != ep.meta:
        update["meta"] = meta
    if summary != ep.summary:
        update["summary"] = summary
    if topics != ep.topics:
        update["topics"] = topics
    if any(a is not b for a, b in zip(entities, ep.entities)):
        update["entities"] = [e for e in entities if not PLACEHOLDER_RE.fullmatch(e.name)]
    if any(a is not b for a, b in zip(relations, ep.relations)):
        update["relations"] = relations
    return ep.model_copy(update=update) if update else ep


def redact_episodes(episodes):
    return [redact_episode(ep) for ep in episodes]

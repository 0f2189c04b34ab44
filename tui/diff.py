"""What changed between two history entries: a flat, readable diff of the states.

Plain Python (no textual). Nested fields become dotted paths
(``pending_approval.action.tool``), lists are indexed (``premises.0.text``),
long values are shortened; bookkeeping fields that change on every
transition (seq, elapsed_s, ledger_mark...) are left out: ``bookkeeping``
counts them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

# fields that change on every transition (clocks, offsets, counters, the script cursor): not what a person
# changed or the loop decided; the diff leaves them out and only counts them
BOOKKEEPING = ("seq", "updated_at", "ledger_mark", "elapsed_s", "cursor", "tokens_used")
SKIP = ("goal",)  # the goal frame never changes inside a loop
MAX_VALUE = 120
MAX_LIST = 50


@dataclass
class Change:
    path: str
    op: str  # "+" added, "-" removed, "~" changed
    old: str
    new: str

    @property
    def bookkeeping(self) -> bool:
        return self.path.split(".")[0] in BOOKKEEPING


def short(value: Any, limit: int = MAX_VALUE) -> str:
    if isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def flatten(value: Any, prefix: str = "", out: dict[str, Any] | None = None) -> dict[str, Any]:
    out = {} if out is None else out
    if isinstance(value, dict):
        if not value and prefix:
            out[prefix] = {}
        for k, v in value.items():
            if not prefix and k in SKIP:
                continue
            flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list):
        if not value and prefix:
            out[prefix] = []
        for i, v in enumerate(value[:MAX_LIST]):
            flatten(v, f"{prefix}.{i}", out)
        if len(value) > MAX_LIST:
            out[f"{prefix}.…"] = f"{len(value) - MAX_LIST} more"
    else:
        out[prefix] = value
    return out


def _check_line(c: Any) -> Any:
    """A first-principles check in one line: what was checked and which rules failed."""
    try:
        r = c["result"]
        failed = [v["rule"] for v in r["verdicts"] if v["verdict"] != "pass"]
        verdict = "pass" if r["passed"] else "FAIL " + ", ".join(failed)
        rev = " (revised)" if c.get("revision") else ""
        return f"{c['step']} · {r['subject']}{rev}: {verdict}"
    except (KeyError, TypeError):
        return c


def summarize(state: dict[str, Any]) -> dict[str, Any]:
    """Shorten the parts of a state that would drown a diff (check records)."""
    out = dict(state)
    if isinstance(out.get("checks"), list):
        out["checks"] = [_check_line(c) for c in out["checks"]]
    return out


def bookkeeping(old: dict[str, Any] | None, new: dict[str, Any]) -> list[str]:
    """The bookkeeping fields that changed from ``old`` to ``new`` (left out of ``diff``)."""
    return [k for k in BOOKKEEPING if (old or {}).get(k) != new.get(k)]


def diff(old: dict[str, Any] | None, new: dict[str, Any], *, with_bookkeeping: bool = False) -> list[Change]:
    """Changes from ``old`` to ``new`` (both ``model_dump(mode="json")`` of a state), bookkeeping left out
    unless ``with_bookkeeping``."""
    a = flatten(summarize(old or {}))
    b = flatten(summarize(new))
    changes: list[Change] = []
    for path in b:
        if path not in a:
            if b[path] in ([], {}, None, ""):
                continue
            changes.append(Change(path, "+", "", short(b[path])))
        elif a[path] != b[path]:
            changes.append(Change(path, "~", short(a[path]), short(b[path])))
    for path in a:
        if path not in b and a[path] not in ([], {}, None, ""):
            changes.append(Change(path, "-", short(a[path]), ""))
    order = {p: i for i, p in enumerate(b)}
    changes.sort(key=lambda c: (c.bookkeeping, order.get(c.path, len(order))))
    return changes if with_bookkeeping else [c for c in changes if not c.bookkeeping]

"""OpenClaw's transcript tree: which entries are on the active branch.

Source: openclaw@2026.9.6 ``src/config/sessions/transcript-tree.ts`` (built as
``dist/transcript-tree-*.mjs``). Entries link by ``id``/``parentId``; a ``leaf``
entry is a navigation control that makes ``targetId`` the active leaf (a branch:
the user went back and continued from an earlier entry); an entry appended with
``appendMode: "side"`` never moves the leaf. The active branch is the path from
the final leaf back to the root; everything off it was abandoned.

Simplified on purpose: a transcript with no branch at all (no ``leaf`` control,
no entry with two children) is taken whole in file order, so an entry with a
stale or missing ``parentId`` in a straight transcript is never dropped.
"""

from __future__ import annotations

from typing import Any, Iterable


def _text_id(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


class TreeScan:
    """Feed entries in order (``add``); then ``active()``: the ids on the active
    branch, or None when there is no branch (keep everything)."""

    def __init__(self) -> None:
        self.parent: dict[str, str | None] = {}
        self.leaf_controls: set[str] = set()
        self.children: dict[str | None, int] = {}
        self.leaf: str | None = None
        self.branched = False

    def add(self, obj: Any) -> None:
        if not isinstance(obj, dict) or obj.get("type") == "session":
            return
        eid = _text_id(obj.get("id"))
        if eid is None:
            return
        if obj.get("type") == "leaf":
            target = obj.get("targetId")
            target = None if target is None else _text_id(target)
            self.branched = True
            self.leaf_controls.add(eid)
            if target is None or target in self.parent:
                self.parent[eid] = target
                self.leaf = target
            return
        raw_parent = obj.get("parentId")
        parent = _text_id(raw_parent)
        if parent is not None and parent in self.leaf_controls:
            parent = self.parent.get(parent)  # a child of a leaf control continues from its target
        elif parent is not None and parent not in self.parent:
            parent = self.leaf  # a stale parent continues the current branch
        elif raw_parent is None and "parentId" not in obj:
            parent = self.leaf  # a parentless entry appends to the current leaf
        self.parent[eid] = parent
        if parent is not None:
            count = self.children.get(parent, 0) + 1
            self.children[parent] = count
            if count > 1:
                self.branched = True
        if obj.get("appendMode") != "side":
            self.leaf = eid

    def active(self) -> set[str] | None:
        if not self.branched:
            return None
        keep: set[str] = set()
        cur = self.leaf
        while cur is not None and cur not in keep:
            keep.add(cur)
            cur = self.parent.get(cur)
        return keep


def active_ids(entries: Iterable[Any]) -> set[str] | None:
    scan = TreeScan()
    for obj in entries:
        scan.add(obj)
    return scan.active()


def on_branch(obj: dict, keep: set[str] | None) -> bool:
    """The entry is read: no branch in the transcript, it has no id, or it is on the active branch."""
    if keep is None or obj.get("type") == "session":
        return True
    eid = _text_id(obj.get("id"))
    return eid is None or eid in keep

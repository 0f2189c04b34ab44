"""tree-sitter-bash, loaded once per process (its C bindings without their
packages' imports, on the hook's path), and the tree of one line under a deadline."""

from __future__ import annotations

import os

from core.inbox.shell.model import CLOCK, OutOfTime


_PARSER = None


def parser():
    global _PARSER
    if _PARSER is None:
        import sys

        if "tree_sitter" not in sys.modules:
            try:
                ts, tsb = _binding("tree_sitter"), _binding("tree_sitter_bash")
                _PARSER = ts.Parser(ts.Language(tsb.language()))
                return _PARSER
            except Exception:  # noqa: BLE001 - another layout: the packages' own imports below
                pass
        import tree_sitter
        import tree_sitter_bash

        _PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    return _PARSER


def _binding(package: str):
    """``<package>._binding``, the C extension, loaded without the package's
    ``__init__``: tree_sitter's imports ``typing`` and tree_sitter_bash's
    ``importlib.resources`` (~40 ms together), on a path the hook takes for
    every Bash call."""
    from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader, ModuleSpec, PathFinder

    spec = PathFinder.find_spec(package)
    folder = spec.submodule_search_locations[0]
    path = next(os.path.join(folder, f) for f in sorted(os.listdir(folder))
                if f.startswith("_binding.") and f.endswith(tuple(EXTENSION_SUFFIXES)))
    name = f"{package}._binding"
    loader = ExtensionFileLoader(name, path)
    mod = loader.create_module(ModuleSpec(name, loader, origin=path))
    loader.exec_module(mod)
    return mod


def parse_tree(data: bytes, deadline: float | None = None):
    """The tree-sitter tree of ``data``; OutOfTime when ``deadline``
    (a ``CLOCK()`` value: CPU seconds) passes first."""
    p = parser()
    if deadline is None:
        return p.parse(data)
    view = memoryview(data)

    def progress(_offset: int, _has_error: bool) -> bool:
        return CLOCK() > deadline  # True cancels the parse

    try:
        return p.parse(lambda off, _pt: view[off:off + 65536], progress_callback=progress)
    except ValueError:  # "Parsing failed": cancelled
        p.reset()
        raise OutOfTime("parsing ran out of time") from None


def first_error(node):
    """The first ERROR or MISSING node under ``node`` (iteratively)."""
    cursor = node.walk()
    while True:
        n = cursor.node
        if n.is_error or n.is_missing:
            return n
        if n.has_error and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return None

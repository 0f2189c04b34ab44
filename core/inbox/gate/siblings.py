"""Sibling modules of core/inbox (the shell parser, the allow-list, the
address checks), loaded by their files when a Bash call or a URL first needs
them: a hook that loads only the gate pays for nothing else, and a caller that
loaded the gate by its file still finds them."""

from __future__ import annotations

import os
import sys

_SIBLINGS: dict[str, object] = {}
_INBOX = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # core/inbox


def sibling(name: str):
    """core/inbox/<name>.py, or the package core/inbox/<name>/, without
    importing the core.inbox package's other names."""
    full = f"core.inbox.{name}"
    mod = sys.modules.get(full) or _SIBLINGS.get(name)
    if mod is not None:
        return mod
    from importlib.machinery import ModuleSpec, SourceFileLoader

    package = os.path.join(_INBOX, name)
    path = os.path.join(package, "__init__.py")
    if not os.path.isfile(path):
        path = os.path.join(_INBOX, f"{name}.py")
        loader = SourceFileLoader(full, path)
        mod = type(sys)(full)
        mod.__spec__ = ModuleSpec(full, loader, origin=path)
        mod.__file__, mod.__loader__, mod.__package__ = path, loader, "core.inbox"
        loader.exec_module(mod)
        _SIBLINGS[name] = mod
        return mod
    # a package: its modules import each other by their full names, which find it in sys.modules
    loader = SourceFileLoader(full, path)
    mod = type(sys)(full)
    mod.__spec__ = ModuleSpec(full, loader, origin=path, is_package=True)
    mod.__spec__.submodule_search_locations = [package]
    mod.__file__, mod.__loader__, mod.__package__, mod.__path__ = path, loader, full, [package]
    sys.modules[full] = mod
    try:
        loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(full, None)
        raise
    _SIBLINGS[name] = mod
    return mod

"""Names a facade re-exports without importing their modules until first use (PEP 562).

``core.api`` and ``core.hook_api`` hand the front ends names that live deep in core; a fresh
`ars recall`, or a hook run once per tool call, must not pay for loading the modules behind
names it never touches. The edges are made by importlib, so import-linter and grimp do not see
them: tests/core/api/test_import_contracts.py checks that no module in a table imports its facade.
"""

from __future__ import annotations

from typing import Any, Callable

# name -> (the core module that owns it, its attribute there; None: the module itself)
Table = dict[str, tuple[str, "str | None"]]


def each(module: str, *names: str) -> Table:
    """Rows for names a module holds under the same name."""
    return {n: (module, n) for n in names}


def module_getattr(table: Table, namespace: dict[str, Any], facade: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` that loads ``table``'s names on first use and keeps them."""

    def __getattr__(name: str) -> Any:
        if name not in table:
            raise AttributeError(f"module {facade!r} has no attribute {name!r}")
        from importlib import import_module

        module, attr = table[name]
        value = import_module(module)
        value = value if attr is None else getattr(value, attr)
        namespace[name] = value
        return value

    return __getattr__

"""What a line carries from command to command: the working directory and the
variables set to a literal, and what two branches agree on."""

from __future__ import annotations

from core.inbox.shell.model import Word


# -- the state a line carries from command to command ---------------------------------------
class _State:
    __slots__ = ("cwd", "vars")

    def __init__(self, cwd: str | None, vars_: dict[str, str]):
        self.cwd = cwd
        self.vars = vars_

    def copy(self) -> "_State":
        return _State(self.cwd, dict(self.vars))


def _join(a: _State, b: _State) -> _State:
    """What is known after either a or b: only what both agree on."""
    if a is b:
        return a
    cwd = a.cwd if a.cwd == b.cwd else None
    if a.vars == b.vars:
        return _State(cwd, a.vars)
    return _State(cwd, {k: v for k, v in a.vars.items() if b.vars.get(k) == v})


def _cd_state(st: _State, cwd: str | None) -> _State:
    out = st.copy()
    out.cwd = cwd
    if cwd is None:
        out.vars.pop("PWD", None)
    else:
        out.vars["PWD"] = cwd
    return out


def _set_var(st: _State, name: str, value: Word) -> None:
    if value.value is not None and not value.glob:
        st.vars[name] = value.value
    else:
        st.vars.pop(name, None)

"""What a line carries from command to command: the working directory and the
variables set to a literal, and what two branches agree on."""

from __future__ import annotations

from core.inbox.shell.model import Word


class State:
    __slots__ = ("cwd", "vars")

    def __init__(self, cwd: str | None, vars_: dict[str, str]):
        self.cwd = cwd
        self.vars = vars_

    def copy(self) -> "State":
        return State(self.cwd, dict(self.vars))


def join_states(a: State, b: State) -> State:
    """What is known after either a or b: only what both agree on."""
    if a is b:
        return a
    cwd = a.cwd if a.cwd == b.cwd else None
    if a.vars == b.vars:
        return State(cwd, a.vars)
    return State(cwd, {k: v for k, v in a.vars.items() if b.vars.get(k) == v})


def cd_state(st: State, cwd: str | None) -> State:
    out = st.copy()
    out.cwd = cwd
    if cwd is None:
        out.vars.pop("PWD", None)
    else:
        out.vars["PWD"] = cwd
    return out


def set_var(st: State, name: str, value: Word) -> None:
    if value.value is not None and not value.glob:
        st.vars[name] = value.value
    else:
        st.vars.pop(name, None)

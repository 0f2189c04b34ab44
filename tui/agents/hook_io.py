"""What every agent's hook (``ars hook claude-code|hermes|openclaw``) does the same
way: its command line, its state directory, its one-line messages and answers.

Standard library only: each hook is a fresh process on every tool call.
"""

from __future__ import annotations

import json
import os
import sys
TYPE_CHECKING = False  # typing's own flag without importing typing: a hook is a fresh process per event
if TYPE_CHECKING:
    from typing import Callable


def sayer(agent: str) -> Callable[[str], None]:
    """One line on stderr, ``ars hook <agent>: ...``; never raises (a closed stderr is not the agent's problem)."""
    def say(message: str) -> None:
        try:
            sys.stderr.write(f"ars hook {agent}: {' '.join(str(message).split())}\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
    return say


def answer(payload: dict) -> int:
    """One JSON line on stdout (what the agent reads), unless the watchdog answered first; exit code 0."""
    from tui.agents import watchdog

    watchdog.answer(encode(payload))
    return 0


def encode(payload: dict) -> bytes:
    return (json.dumps(payload, ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass")


# A hook's waits on ARS's locks give up after this long (core/infra/timed_flock.py): a lock held
# on purpose costs the agent seconds, then a refusal, never its own timeout (which lets the call run).
HOOK_LOCK_WAIT = "4"


def guard(seconds: float, fail_closed: dict | None, say: Callable[[str], None]) -> None:
    """Arm the hook's watchdog (tui/agents/watchdog.py): ``fail_closed`` is answered and the
    process ends ``seconds`` after it started, whatever blocks it; and time every lock wait."""
    from tui.agents import watchdog

    os.environ["ARS_LOCK_WAIT"] = HOOK_LOCK_WAIT
    watchdog.arm(seconds, None if fail_closed is None else encode(fail_closed), say)


def parse(argv: list[str], usage: str, *, values: dict[str, Callable[[str], object]] | None = None,
          switches: tuple[str, ...] = ()) -> tuple[dict, str | None]:
    """``--state DIR``, ``--supervisor SHA256:…`` (checked), ``--policy-version N``, the hook's own ``values``
    (name -> parser raising ValueError with the line to show) and ``switches``;
    ``--name=value`` or ``--name value``. Returns (options by name without dashes, problem)."""
    values = {"--state": str, "--supervisor": _pin, "--policy-version": _version, **(values or {})}
    opts: dict = {name[2:]: None for name in values} | {name[2:]: False for name in switches}
    i = 0
    while i < len(argv):
        name, eq, value = argv[i].partition("=")
        if name in switches and not eq:
            opts[name[2:]] = True
            i += 1
            continue
        if name not in values:
            return opts, f"unknown argument {argv[i]!r}; {usage}"
        if not eq:
            if i + 1 >= len(argv) or not argv[i + 1]:
                return opts, f"{name} needs a value"
            value = argv[i + 1]
            i += 1
        i += 1
        try:
            opts[name[2:]] = values[name](value)
        except ValueError as exc:
            return opts, str(exc)
    return opts, None


def _version(value: str) -> int:
    """``--policy-version N``: the gate policy version in force at install (older ones are refused)."""
    try:
        n = int(value)
    except ValueError:
        n = -1
    if n < 0:
        raise ValueError(f"--policy-version {value[:40]!r} is not a policy version (0, 1, 2 ...: `ars gate show`)")
    return n


def _pin(value: str) -> str:
    from core.hook_api import pin_problem  # not core.api: a call per process (core/hook_api.py)

    problem = pin_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def state_dir(explicit: str | None) -> str:
    """--state, else $ARS_STATE_DIR (any case, as core.config reads it), else ./state."""
    if explicit:
        return explicit
    for key, value in os.environ.items():
        if key.upper() == "ARS_STATE_DIR" and value:
            return value
    return "state"

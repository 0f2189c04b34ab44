"""``ars hook AGENT`` and ``ars install AGENT``: ARS inside an agent's own loop.

``ars hook claude-code`` is what Claude Code runs on its hook events (the
console script reaches it without this module: see tui/entry.py); it is
registered here too so ``ars --help`` lists it and ``python -m tui.cli.main hook
claude-code`` works. ``ars install claude-code`` writes the hooks and the MCP
server into Claude Code's settings (tui/agents/install.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

AGENTS = ("claude-code", "hermes", "openclaw")
OTHERS = ("other agents reach ARS over MCP: `ars mcp` (README, Agents over MCP)")

AgentArg = Annotated[str, typer.Argument(help="the agent: claude-code, hermes or openclaw")]
StateOpt = Annotated[Optional[Path], typer.Option("--state", help="state directory (else $ARS_STATE_DIR, else ./state)")]


def _fail(message: str, code: int = 2) -> None:
    sys.stderr.write(f"error: {' '.join(message.split())}\n")
    raise typer.Exit(code)


def _agent(agent: str) -> None:
    if agent not in AGENTS:
        _fail(f"unknown agent {agent!r}: {', '.join(AGENTS)} has hooks; {OTHERS}")


def hook_command(agent: AgentArg, state: StateOpt = None,
                 supervisor: Annotated[Optional[str], typer.Option(
                     "--supervisor", help="the supervisor key's fingerprint this hook trusts (SHA256:...; "
                                          "written by `ars install`)")] = None,
                 timeout: Annotated[Optional[float], typer.Option(
                     "--timeout", help="hermes: Hermes' timeout for this hook (s); the hook answers before it")] = None,
                 policy_version: Annotated[Optional[str], typer.Option(
                     "--policy-version", help="the gate policy version in force at install: an older one is "
                                              "refused as a rollback (written by `ars install`)")] = None
                 ) -> None:
    """Answer one hook event (JSON on stdin) as the agent expects: PreToolUse runs the gate
    (a held call waits in the ARS inbox for a signed decision), UserPromptSubmit adds what memory
    holds about the prompt, PostToolUse records what a held call did, SessionStart prints the
    startup context, Stop/PreCompact/SessionEnd capture the turn. `ars install` sets it up."""
    _agent(agent)
    if agent == "hermes":
        from tui.agents.hermes import run
    elif agent == "openclaw":
        from tui.agents.openclaw import run
    else:
        from tui.agents.claude_code import run

    raise typer.Exit(run((["--state", str(state)] if state is not None else [])
                         + (["--supervisor", supervisor] if supervisor is not None else [])
                         + (["--timeout", f"{timeout:g}"] if timeout is not None and agent == "hermes" else [])
                         + (["--policy-version", policy_version] if policy_version is not None else [])))


def install_command(
    agent: AgentArg,
    project: Annotated[Optional[Path], typer.Option("--project", help="install into this project's .claude/settings.json and .mcp.json (default: the current directory)")] = None,
    user: Annotated[bool, typer.Option("--user", help="install into ~/.claude/settings.json and ~/.claude.json instead")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="print the diff of each file and write nothing")] = False,
    state: StateOpt = None,
    hermes_home: Annotated[Optional[Path], typer.Option("--hermes-home", help="hermes: Hermes' home (default: $HERMES_HOME, else ~/.hermes); its config.yaml gets the hooks")] = None,
    memory_slot: Annotated[bool, typer.Option("--memory-slot", help="openclaw: ARS takes OpenClaw's memory slot (memory_search/memory_get backed by ARS); by default ARS adds to OpenClaw's own memory")] = False,
) -> None:
    """Connect an agent to ARS in one step: its gate (pinned to the supervisor key), its startup
    context, its ingest and ARS's MCP server. claude-code: hooks in .claude/settings.json and .mcp.json
    (--user: ~/.claude); openclaw: the ars-gate plugin and mcp.servers in openclaw.json; hermes:
    pre_tool_call/post_tool_call/on_session_end hooks and mcp_servers in $HERMES_HOME/config.yaml.
    Other entries are kept, changed files are backed up (*.bak-<timestamp>), a second run changes
    nothing, --dry-run prints the diff."""
    _agent(agent)
    if memory_slot and agent != "openclaw":
        _fail("--memory-slot is for openclaw (OpenClaw's plugins.slots.memory)")
    if agent == "hermes":
        from tui.agents.install_hermes import install_cli

        raise typer.Exit(install_cli(home=hermes_home, state=_state(state), dry_run=dry_run))
    if agent == "openclaw":  # --project: the project the gate allows writes in (default: the agent's workspace)
        if user or hermes_home is not None:
            _fail("--user and --hermes-home are not for openclaw: OpenClaw has one config "
                  "($OPENCLAW_CONFIG_PATH, else ~/.openclaw/openclaw.json)")
        from tui.agents.openclaw_install import cli

        raise typer.Exit(cli(state=_state(state), project=project, dry_run=dry_run, write=sys.stdout.write,
                             memory_slot=memory_slot))
    from tui.agents.install import InstallError, plan

    if user and project is not None:
        _fail("--project and --user name different places: give one of them")
    state_dir = _state(state)
    try:
        changes = plan(state=state_dir, project=None if user else (project or Path.cwd()), user=user)
    except InstallError as exc:
        _fail(str(exc))
    from tui.agents.install import pinned_key, report

    report(changes, pin=pinned_key(state_dir), unpinned="only Claude Code's own prompt", dry_run=dry_run,
           done=f"Claude Code now asks ARS ({state_dir}) before risky tool calls, hears what ARS remembers "
                "at every prompt and is remembered turn by turn: `ars inbox list` shows what waits for you.")


def _state(state: Path | None) -> Path:
    if state is None:
        for key, value in os.environ.items():
            if key.upper() == "ARS_STATE_DIR" and value:
                state = Path(value)
                break
    return Path(os.path.abspath(os.path.expanduser(str(state or "state"))))


def register(app: typer.Typer) -> None:
    app.command("hook")(hook_command)
    app.command("install")(install_command)

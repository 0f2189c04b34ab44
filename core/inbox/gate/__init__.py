"""The Claude Code gate: which tool calls pass at once and which wait for a person.

An allow-list over a real parse. A call passes only when everything it does
is known to be harmless; everything else is held (an inbox request, then
Claude Code's own prompt), never refused outright and never passed on a guess.

* **Bash**: the command is parsed with tree-sitter-bash (``core/inbox/shell/``)
  into every simple command that can run -- through pipelines, lists,
  ``$(...)``, backticks, ``<(...)``, subshells, ``{ }``, if/for/while/case and
  function bodies -- with quotes removed (``\\rm``, ``r''m``, ``"rm"`` are all
  ``rm``). Each must be on the allow-list with arguments it allows
  (``core/inbox/commands/``): read-only and everyday development commands;
  writes (``cp``, ``mv``, ``rm`` never recursive, ``sed -i``, ``tee``,
  redirections...) only inside the project or ``/dev/null``; git without
  force-pushes, ``reset --hard``, ``clean -f``, discarding checkouts, config
  writes...; interpreters running a script file, never ``-c``/``-e`` or a
  program on standard input (``curl … | sh``, ``base64 -d | sh``, here-documents
  into a shell); network clients fetching public URLs without uploading;
  clouds' and databases' read commands. Held: a command word that expands
  (``$X``, ``$(...)``, a glob), ``eval``, ``exec``, ``sudo``, unknown commands,
  environment overrides that change what runs (``PATH=``, ``LD_PRELOAD=``...),
  a ``cd`` the gate cannot follow before a relative write, and anything that
  does not parse. Quoted text only mentioning a trigger word passes
  (``git commit -m "… rm -rf …"``, ``grep "DROP TABLE" schema.sql``).
* **Sensitive paths** are held whatever the tool, read or write (symlinks
  resolved): the ARS state directory, the policy file, ``.claude/settings*.json``
  (any project and ``~``), ``~/.claude.json``, ``.mcp.json``, ``.git/hooks/``,
  ``.envrc``, shell rc and profile files, ``~/.ssh``, ``~/.aws``, ``~/.gnupg``,
  ``~/.netrc``, ``~/.kube``, ``~/.docker/config.json``, ``~/.hermes/config.yaml``,
  ``~/.openclaw/openclaw.json`` and a few more credential files; writes to
  ``.git/config`` and ``~/.gitconfig``.
* **Write/Edit/MultiEdit/NotebookEdit** pass inside the project (or an extra
  write root); **Read/Glob/Grep/LS** pass unless they touch a sensitive path;
  **WebFetch** is held for private, loopback, link-local, unspecified and
  metadata addresses in every literal spelling (``core/inbox/netaddr.py``; no DNS
  lookups: a public name that resolves to a private address passes);
  **mcp__server__tool** is held unless allow-listed; Claude Code's harmless tools
  (Task, TodoWrite, WebSearch...) pass; unknown tools are held.

The project root is ``project_dir`` (the hook passes ``$CLAUDE_PROJECT_DIR``),
never the event's ``cwd``; ``cwd`` only resolves relative paths, and only when
it lies inside the project (elsewhere relative paths are unknown: held).

Checking is linear in the input and runs under a deadline (``deadline_s``,
0.8 s by default, so every decision comes within a second): tree-sitter's
error recovery is superlinear on some hostile inputs, so commands over
``INLINE_BYTES`` are checked in a forked child that is killed at the deadline.
Running out of time, a line of more than ``shell.MAX_TREE`` syntax nodes, or an
input over ``MAX_SUBJECT`` characters holds the call with a Match that says so
(the hook answers ``ask``; it is never killed by Claude Code's 60 s hook
timeout). A normal command is decided in a few milliseconds.

What stays outside any gate: a command the allow-list passes runs code the
agent may have written (``make``, ``pytest``, ``npm test``, ``python
script.py``, a sourced project file); that code can do whatever the user can.
The user's own shell start-up (aliases, functions) is trusted as it is.

The policy (``<state>/gate.toml``; ``Gate.parse(text, path)``) can widen the
allow-list and add holds::

    timeout = 50                       # seconds the hook waits for a person (below the hook's 60 s)

    [allow]
    commands = ["terraform", "ansible-lint"]   # more commands, any arguments (sensitive paths still held)
    mcp = ["mcp__github__get_*", "mcp__db__query"]   # MCP tools; '*' only at the end
    tools = ["MyCustomTool"]           # more Claude Code tools
    write_roots = ["/tmp", "~/scratch"]   # where writes may go besides the project

    [[rule]]                           # an extra hold: a regex searched in the tool input
    name = "no-prod"
    tool = "Bash"                      # "Bash", "Write|Edit", "mcp__*" (a prefix) or "*"
    pattern = '''\\bprod\\b'''          # linear-time only: no repeat inside a repeat
    field = "command"                  # optional: the input field searched ("*": every string)
    risk = "high"                      # low | medium | high
    reason = "mentions prod"

Nothing in the policy can pass a sensitive path. (Loading a signed policy is
not this module's job: ``Gate.load`` reads the file as it is.)

This runs on every tool call in a fresh process: the package imports only the
standard library; tree_sitter is imported for Bash calls only, and
``tomllib`` only when the policy differs from the default text.
"""


from __future__ import annotations

from core.inbox.gate.defaults import (DEFAULT_DEADLINE, DEFAULT_DOC, DEFAULT_TIMEOUT, DEFAULT_TOML, GATE_FILE,
                                      INLINE_BYTES, MAX_SUBJECT, MAX_TIMEOUT)
from core.inbox.gate.rules import GateError, Match, Rule, nested_repeat
from core.inbox.gate.verdict import Gate, write_defaults

__all__ = ["DEFAULT_DEADLINE", "DEFAULT_DOC", "DEFAULT_TIMEOUT", "DEFAULT_TOML", "GATE_FILE", "INLINE_BYTES",
           "MAX_SUBJECT", "MAX_TIMEOUT", "Gate", "GateError", "Match", "Rule", "nested_repeat", "write_defaults"]

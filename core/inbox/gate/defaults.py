"""What the gate holds by default: its limits, the tools it knows, and the text
of the default ``gate.toml`` (with what tomllib reads from it, so an unedited
file is never parsed)."""

from __future__ import annotations


GATE_FILE = "gate.toml"
DEFAULT_TIMEOUT = 50.0  # below Claude Code's 60 s hook timeout
MAX_TIMEOUT = 3600.0
DEFAULT_DEADLINE = 0.8  # seconds to decide (Claude Code waits 60 s for the hook); then the call is held
MAX_SUBJECT = 1 << 20  # characters checked per input; longer inputs are held unchecked
INLINE_BYTES = 4096  # longer commands are parsed in a child process that can be killed at the deadline
MAX_MATCHES = 40  # reasons collected per call; past that the call is held anyway
RISKS = ("low", "medium", "high")
WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
MAIN_FIELD = {"Bash": "command", "Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
              "NotebookEdit": "notebook_path", "Read": "file_path", "WebFetch": "url"}
RULE_KEYS = {"name", "tool", "pattern", "field", "risk", "reason", "outside_project", "allow_under"}
TOP_KEYS = {"timeout", "rule", "allow", "notify"}
ALLOW_KEYS = {"commands", "mcp", "tools", "write_roots"}
HARMLESS_TOOLS = frozenset({"Task", "Agent", "TodoWrite", "TodoRead", "WebSearch", "BashOutput", "KillShell",
                            "KillBash", "ExitPlanMode", "EnterPlanMode", "AskUserQuestion", "Skill", "SlashCommand",
                            "ListMcpResourcesTool", "ReadMcpResourceTool", "TaskOutput", "TaskStop", "Think"})
READ_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead"})
# ARS's own MCP tools (tui/agents/mcp_server.py; a test holds this list to what the server offers): ARS never
# holds its own memory, and its approval and forget tools are requests in its inbox already
DEFAULT_MCP = ("mcp__ars__recall", "mcp__ars__explain", "mcp__ars__get", "mcp__ars__check_approval",
               "mcp__ars__loops", "mcp__ars__startup_context", "mcp__ars__remember", "mcp__ars__request_approval",
               "mcp__ars__request_forget", "mcp__ars__list_resources", "mcp__ars__read_resource",
               "mcp__ars__list_prompts", "mcp__ars__get_prompt")
# (the last four: Hermes' own tools over an MCP server's resources and prompts: ARS's startup context)

DEFAULT_TIMEOUT_TEXT = f"{DEFAULT_TIMEOUT:g}"
DEFAULT_TOML = f"""\
# ARS gate for Claude Code (`ars hook claude-code`). Tool calls pass at once only
# when the built-in allow-list knows them to be harmless (read-only and everyday
# development commands, writes inside the project); everything else waits in the
# ARS inbox (`ars inbox list`, `ars inbox approve ID`, `ars inbox reject ID
# --reason R`) until a person decides. With no decision within `timeout` seconds
# the hook answers "ask" and Claude Code's own prompt takes over.
# Keep `timeout` below the hook's timeout in Claude Code's settings (60 s).
#
# Widen the allow-list (sensitive paths stay held whatever this file says):
#   [allow]
#   commands = ["terraform"]            # more commands, any arguments
#   mcp = ["mcp__github__get_*"]        # more MCP tools ('*' only at the end)
#   tools = ["MyTool"]                  # more Claude Code tools
#   write_roots = ["/tmp"]              # more places writes may go
# Be told of each new request where you are (JSON POST; ntfy and Slack-style URLs as they are):
#   [notify]
#   url = "https://ntfy.sh/my-ars-topic"    # format = "json" | "ntfy" | "slack" (else from the URL)
# Add holds: [[rule]] with name, tool ("Bash", "Write|Edit", "mcp__*", "*"),
# pattern (a Python regex, searched; no repeat inside a repeat unless possessive),
# field (default: the tool's main field; "*" = every string), risk, reason.

timeout = {DEFAULT_TIMEOUT_TEXT}
"""
# What tomllib reads from DEFAULT_TOML (a test holds the two equal): an unedited
# gate.toml is taken from here, so the hook's usual path never imports tomllib (~10 ms).
DEFAULT_DOC = {"timeout": int(DEFAULT_TIMEOUT) if DEFAULT_TIMEOUT.is_integer() else DEFAULT_TIMEOUT}
# Earlier ARS versions wrote regex deny-rules as the default file. Those rules
# (matched by a hash of name and pattern) are now the built-in parser's job and
# are dropped when such a file is read: kept, they would hold harmless quoted
# mentions again (git commit -m "... rm -rf ...").
OLD_DEFAULT_RULES = frozenset({"151ce23ae01237a9", "dd835cc366d5a2e9", "fde69a8e2bb8046a", "f12dfe7a5ec0ed3f",
                                "4d53cded7ddc9d4c", "a0cdc296ba3a189f", "b386ef731a0e0ec6"})

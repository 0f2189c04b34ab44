"""Shell lines: where a text writes them (fenced ``bash``/``sh`` blocks, ``$ ``
prompts) and the canonical names of the programs they run (``git push``,
``python3 publish.py``, ``pytest``)."""

from __future__ import annotations

import os
import re

_FENCE_RE = re.compile(r"```(?:bash|sh|shell|zsh|console|terminal)[^\n]*\n(.*?)```", re.S | re.I)
_PROMPT_RE = re.compile(r"^\s*\$ (.+)$", re.M)


# Program names that say little without their sub-command, and interpreters
# whose script is the interesting part.
_MULTI = {
    "git", "docker", "docker-compose", "npm", "pnpm", "yarn", "pip", "pip3", "cargo", "kubectl", "make",
    "uv", "go", "systemctl", "openclaw", "hermes", "ars", "brew", "apt", "apt-get", "gh", "poetry", "conda",
    "helm", "terraform", "gcloud", "aws", "az", "claude", "ollama", "just", "bundle", "rails", "dotnet",
}
_INTERP = {"python", "python3", "node", "bash", "sh", "zsh", "ruby", "perl", "deno", "bun", "npx", "uvx"}
_WRAPPERS = {"sudo", "env", "time", "nohup", "exec", "command", "nice"}
_TRIVIAL = {"cd", "echo", "printf", "export", "true", "false", "set", "source", ".", "exit", "sleep",
            "unset", "pwd", "clear", "then", "fi", "do", "done", "else", "for", "while", "if", "{", "}"}
_PROG_RE = re.compile(r"^[\w.+-]+$")
_ASSIGN_RE = re.compile(r"^[A-Za-z_]\w*=")
_CMD_SPLIT_RE = re.compile(r"&&|\|\||[;|\n]")


def command_names(cmdline: str, limit: int = 5) -> list[str]:
    """Canonical names of the programs a shell line runs: ``git push``,
    ``python3 publish.py``, ``pytest``; trivial builtins are left out."""
    out: list[str] = []
    for segment in _CMD_SPLIT_RE.split(cmdline[:4000]):
        tokens = segment.strip().split()
        while tokens and (tokens[0] in _WRAPPERS or _ASSIGN_RE.match(tokens[0])):
            tokens.pop(0)
        if not tokens:
            continue
        prog = os.path.basename(tokens[0].strip("'\"()"))
        if not prog or prog in _TRIVIAL or prog.startswith("-") or not _PROG_RE.match(prog) or prog.isdigit():
            continue
        rest = [t for t in tokens[1:] if not t.startswith("-")]
        name = prog
        if prog in _MULTI and rest and _PROG_RE.match(rest[0]):
            name = f"{prog} {rest[0]}"
        elif prog in _INTERP:
            if len(tokens) > 2 and tokens[1] == "-m":
                name = f"{prog} -m {tokens[2]}"
            elif len(tokens) > 1 and not tokens[1].startswith("-"):
                script = os.path.basename(tokens[1].strip("'\""))
                if _PROG_RE.match(script):
                    name = f"{prog} {script}"
        if name not in out:
            out.append(name)
        if len(out) >= limit:
            break
    return out


def shell_lines(text: str) -> list[str]:
    """Shell lines written in the text: fenced bash/sh blocks and ``$ `` prompts."""
    lines: list[str] = []
    if "```" in text:
        for block in _FENCE_RE.findall(text):
            lines.extend(ln.strip() for ln in block.splitlines() if ln.strip() and not ln.lstrip().startswith("#"))
    if "$ " in text:
        lines.extend(m.strip() for m in _PROMPT_RE.findall(text))
    return lines[:50]

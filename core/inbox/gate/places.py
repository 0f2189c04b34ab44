"""The places that matter to one check (project, state directory, home) and
how a path is resolved and judged sensitive there."""

from __future__ import annotations

import os

from core.inbox.cpu_clock import CLOCK  # a check's deadline: CPU seconds of the checking thread
from core.inbox.gate.rules import Match
from core.inbox.gate.sensitive import HOME_SECRET_DIRS, HOME_SECRET_FILES, HOME_WRITE_ONLY, RC_NAMES


class OutOfTime(Exception):
    pass


class ToolWord:
    """A path or URL from a non-shell tool, shaped like shell.Word."""

    __slots__ = ("value", "text", "glob")

    def __init__(self, value: str | None, text: str | None = None, glob: bool = False):
        self.value = value
        self.text = value if text is None else text
        self.glob = glob


class Places:
    """Where one check stands: the project, the state directory, home and the
    extra write roots, with their real paths, and the reasons to hold found so far."""

    def __init__(self, gate, project_dir, state_dir, home, cwd, deadline: float):
        self.gate = gate
        self.deadline = deadline
        self.matches: list[Match] = []
        self.excerpt = ""  # what a non-shell tool's hold quotes (its path, URL or name)
        self.functions: dict[str, str] = {}
        self.extra_commands = gate.commands
        self._real: dict[str, str] = {}
        self._sensitive: dict[tuple[str, bool], str | None] = {}
        self.home = os.path.normpath(os.path.abspath(os.path.expanduser(home or "~")))
        self.project = clean_dir(project_dir)
        # a relative state directory (the default ./state) is where this process runs it from
        self.state = clean_dir(os.path.abspath(os.fspath(state_dir))) if state_dir else None
        roots = [self.project] if self.project else []
        roots += [r for r in gate.write_roots if r]
        self.roots = [(r, self.realpath(r)) for r in roots]
        event_cwd = clean_dir(cwd)
        # the event's cwd resolves relative paths only when it lies inside the project
        self.cwd = event_cwd if event_cwd and self.project and self._inside_roots(event_cwd, [self.roots[0]]) else None
        h = self.home
        secret_dirs = [os.path.join(h, d) for d in HOME_SECRET_DIRS]
        self.secrets = [(p, self.realpath(p)) for p in secret_dirs + [os.path.join(h, f) for f in HOME_SECRET_FILES]]
        guarded = list(secret_dirs)
        if self.state:
            guarded.append(self.state)
        if gate.path and os.path.isabs(gate.path):
            guarded.append(os.path.normpath(gate.path))
        self.guarded = [(p, self.realpath(p)) for p in guarded]  # the path or anything under it
        self.files = {os.path.join(h, f) for f in HOME_SECRET_FILES}
        self.files |= {self.realpath(f) for f in self.files}
        wo = {os.path.join(h, f) for f in HOME_WRITE_ONLY}
        self.write_only = wo | {self.realpath(f) for f in wo}
        self._glob_targets = None

    # -- bookkeeping --------------------------------------------------------------
    def tick(self) -> None:
        if CLOCK() > self.deadline:
            raise OutOfTime()

    def hold(self, rule: str, risk: str, reason: str, cmd, excerpt: str | None = None) -> None:
        if excerpt is None:
            excerpt = self.excerpt
            if cmd is not None:
                excerpt = cmd.text
                if cmd.context:
                    excerpt = f"{excerpt} (in {cmd.context})"
        self.matches.append(Match(rule, risk, " ".join(reason.split()), excerpt[:240]))

    def realpath(self, path: str) -> str:
        r = self._real.get(path)
        if r is None:
            try:
                r = os.path.realpath(path)
            except (OSError, ValueError):
                r = path
            self._real[path] = r
        return r

    # -- paths -------------------------------------------------------------------------
    def path_of(self, word, cwd: str | None) -> str | None:
        """The absolute, normalised path a word names (for a glob: the
        directory before its first pattern component), or None when unknown."""
        v = word.value if not isinstance(word, str) else word
        if v is None or "\0" in v or v == "":
            return None
        if getattr(word, "glob", False):
            parts = v.split("/")
            keep = []
            for part in parts:
                if any(ch in part for ch in "*?["):
                    if part.startswith(".") and not part.startswith(("./", "../")) and could_be_dotdot(part):
                        return None
                    break
                keep.append(part)
            v = "/".join(keep) or ("/" if v.startswith("/") else ".")
        if not os.path.isabs(v):
            if cwd is None:
                return None
            v = os.path.join(cwd, v)
        return os.path.normpath(v)

    def sensitive(self, path: str, write: bool = False) -> str | None:
        """Why ``path`` is never touched without a person (the path and a
        phrase), or None."""
        key = (path, write)
        if key in self._sensitive:
            return self._sensitive[key]
        why = self._sensitive[key] = self._why_sensitive(path, write)
        return why

    def _why_sensitive(self, path: str, write: bool) -> str | None:
        for p in {path, self.realpath(path)}:
            shown = tilde(p, self.home)
            for plain, real in self.guarded:
                for g in (plain, real):
                    if p == g or p.startswith(g.rstrip("/") + "/"):
                        what = "ARS's state directory" if self.state and g in (self.state, self.realpath(self.state)) \
                            else tilde(g, self.home)
                        return f"{shown} (in {what})"
            if p in self.files:
                return f"{shown} (credentials or agent configuration)"
            base = os.path.basename(p)
            if base in RC_NAMES:
                return f"{shown} (a shell or agent start-up file)"
            if base.startswith("settings") and base.endswith(".json") and \
                    os.path.basename(os.path.dirname(p)) == ".claude":
                return f"{shown} (Claude Code's settings: hooks and permissions)"
            if "/.git/hooks/" in p + "/":
                return f"{shown} (a git hook: it runs on the next git command)"
            if write and (p.endswith("/.git/config") or p in self.write_only):
                return f"{shown} (git or shell configuration that can run commands)"
        return None

    def _glob_hits(self, pattern: str) -> str | None:
        """A sensitive path that an absolute glob ``pattern`` could match (bash
        semantics: a leading * or ? does not match a leading dot)."""
        if self._glob_targets is None:
            targets = [(p, True) for p, _r in self.guarded] + [(p, False) for p in self.files]
            if self.project:
                for rel, is_dir in ((".claude/settings.json", False), (".claude/settings.local.json", False),
                                    (".git/hooks", True), (".envrc", False), (".mcp.json", False),
                                    (".git/config", False)):
                    targets.append((os.path.join(self.project, rel), is_dir))
            targets += [(os.path.join(self.home, n), False) for n in RC_NAMES]
            targets += [(os.path.join(self.home, ".claude", "settings.json"), False)]
            self._glob_targets = targets
        from fnmatch import fnmatchcase

        pc = pattern.split("/")
        for target, is_dir in self._glob_targets:
            tc = target.split("/")
            if len(pc) < len(tc) or (len(pc) > len(tc) and not is_dir):
                continue
            ok = True
            for a, b in zip(pc, tc):
                if a == b:
                    continue
                if b.startswith(".") and a[:1] in ("*", "?", "["):
                    ok = False
                    break
                if not fnmatchcase(b, a):
                    ok = False
                    break
            if ok:
                return f"{tilde(pattern, self.home)} (a pattern that can match {tilde(target, self.home)})"
        return None

    def _inside_roots(self, path: str, roots=None) -> bool:
        roots = self.roots if roots is None else roots
        real = self.realpath(path)
        for plain, rroot in roots:
            if under(path, plain) and under(real, rroot):
                return True
        return False

    def _secret_below(self, path: str) -> str | None:
        """A credentials file or directory that reading all of ``path`` would include."""
        for p in (path, self.realpath(path)):
            base = p.rstrip("/") + "/"
            for plain, real in self.secrets:
                if plain.startswith(base) or real.startswith(base):
                    return f"it includes {tilde(plain, self.home)}"
        return None


def clean_dir(path) -> str | None:
    if path is None:
        return None
    path = os.fspath(path)
    if not isinstance(path, str) or not path or "\0" in path or not os.path.isabs(os.path.expanduser(path)):
        return None
    return os.path.normpath(os.path.expanduser(path))


def under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def could_be_dotdot(part: str) -> bool:
    from fnmatch import fnmatchcase

    return fnmatchcase("..", part)


def tilde(path: str, home: str) -> str:
    if path == home:
        return "~"
    if path.startswith(home.rstrip("/") + "/"):
        return "~" + path[len(home.rstrip("/")):]
    return path

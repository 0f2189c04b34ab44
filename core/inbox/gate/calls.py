"""What the allow-list (core/inbox/commands) calls back for each command it
reads: a read, a write, a URL, an assignment, a program run by path."""

from __future__ import annotations

import os

from core.inbox.gate.places import Places, tilde, under
from core.inbox.gate.sensitive import (DEVICES, HELD_PREFIXES, HELD_VARS, HOME_BIN, PROTECTED_NAMES, RC_NAMES,
                                       SAFE_GIT_VARS, SAFE_VALUES, SYSTEM_BIN)
from core.inbox.gate.siblings import sibling


class Calls(Places):
    """The checks ``commands`` calls on one command: each adds a reason to hold or passes."""

    # -- what core/inbox/commands calls -------------------------------------------------------
    def read(self, word, cmd, *, recursive: bool = False, listing: bool = False, tool: str = "") -> None:
        self.tick()
        cwd = cmd.cwd if cmd is not None else self.cwd
        what = tool or "it"
        if word.value is None:
            self.hold("unknown-path", "medium", f"{what} reads a path only known when it runs ({word.text[:60]})", cmd)
            return
        path = self.path_of(word, cwd)
        if path is None:
            self.hold("unknown-path", "medium", f"{what} reads {word.value[:80]}, relative to a directory the gate "
                                                "cannot know" if not word.glob else
                      f"{what} reads {word.value[:80]}, a pattern that can reach outside its directory", cmd)
            return
        why = self.sensitive(path)
        if why is None and word.glob:
            full = word.value if os.path.isabs(word.value) else os.path.join(cwd or "/", word.value)
            why = self._glob_hits(os.path.normpath(full))
        if why:
            self.hold("sensitive-path", "high", f"reads {why}", cmd)
            return
        if recursive and not listing:
            below = self._secret_below(path)
            if below:
                self.hold("sensitive-path", "high", f"reads everything under {tilde(path, self.home)}: {below}", cmd)

    def write(self, word, cmd, *, tool: str = "") -> None:
        self.tick()
        cwd = cmd.cwd if cmd is not None else self.cwd
        if word.value is None:
            self.hold("unknown-path", "medium", f"writes a path only known when it runs ({word.text[:60]})", cmd)
            return
        v = word.value
        if v in DEVICES or v.startswith(("/dev/fd/", "/proc/self/fd/")):
            return
        path = self.path_of(word, cwd)
        if path is None:
            self.hold("unknown-path" if cmd is not None else "write-outside-project", "medium",
                      f"writes {v[:80]}, relative to a directory the gate cannot know" if not word.glob else
                      f"writes {v[:80]}, a pattern that can reach outside its directory", cmd,
                      None if cmd is not None else v[:200])
            return
        why = self.sensitive(path, write=True)
        if why is None and word.glob:
            why = self._glob_hits(os.path.normpath(word.value if os.path.isabs(word.value)
                                                   else os.path.join(cwd or "/", word.value)))
        if why:
            self.hold("sensitive-path", "high", f"writes {why}", cmd, None if cmd is not None else path)
            return
        if not self.roots:
            self.hold("write-outside-project", "medium", "writes with no project directory known "
                                                         "(CLAUDE_PROJECT_DIR is not set)", cmd,
                      None if cmd is not None else path)
            return
        if not self._inside_roots(path):
            real = self.realpath(path)
            where = tilde(path, self.home) + (f" (really {tilde(real, self.home)})" if real != path else "")
            self.hold("write-outside-project", "medium", f"writes outside the project directory: {where}", cmd,
                      None if cmd is not None else real)

    def write_into(self, sources, dest, cmd, *, recursive: bool, move: bool) -> None:
        """cp/mv/ln/install destinations: what lands where, including what a
        directory carries along (``cp -r template/. .`` brings template's
        .claude/settings.json; ``mv staging .claude`` makes staging's files
        Claude Code's settings). Directories are looked at as they are now,
        two levels deep."""
        if dest.value is None:
            self.write(dest, cmd)
            return
        dest_path = self.path_of(dest, cmd.cwd)
        into_dir = len(sources) > 1 or dest.value.endswith("/") or (dest_path is not None and os.path.isdir(dest_path))
        for src in sources:
            if src.value is None or dest_path is None:
                self.write(dest, cmd)
                continue
            base = os.path.basename(src.value.rstrip("/")) or src.value
            final = os.path.join(dest.value, base) if into_dir else dest.value
            self.write(type(dest)(final, dest.text), cmd)
            src_path = self.path_of(src, cmd.cwd)
            if (recursive or move) and src_path is not None and not src.glob and os.path.isdir(src_path):
                self._carried(src_path, final, dest, cmd, 2)

    def _carried(self, src_path: str, final: str, dest, cmd, depth: int) -> None:
        try:
            names = os.listdir(src_path)[:2000]
        except OSError:
            return
        protected_here = os.path.basename(os.path.normpath(final)) in PROTECTED_NAMES
        for name in names:
            if protected_here or name in PROTECTED_NAMES:
                target = os.path.join(final, name)
                self.write(type(dest)(target, dest.text), cmd)
                if depth > 1 and os.path.isdir(os.path.join(src_path, name)):
                    self._carried(os.path.join(src_path, name), target, dest, cmd, depth - 1)

    def inside(self, word, cmd, reason: str) -> None:
        path = self.path_of(word, cmd.cwd) if word.value is not None else None
        if path is None or not self._inside_roots(path):
            self.hold("outside-project", "medium", reason, cmd)

    def exists(self, word, cmd) -> bool:
        path = self.path_of(word, cmd.cwd)
        return path is not None and os.path.lexists(path)

    def in_project(self, cmd, why: str = "") -> None:
        name = cmd.name.value if cmd.name is not None and cmd.name.value else "it"
        what = why or f"{name} runs the project's tooling, which writes where it runs"
        if cmd.cwd is None:
            self.hold("unknown-cwd", "medium", f"{what}: in a directory the gate cannot know", cmd)
        elif not self.roots or not self._inside_roots(cmd.cwd):
            self.hold("outside-project", "medium", f"{what}: in {tilde(cmd.cwd, self.home)}, outside the project",
                      cmd)
        else:
            why_s = self.sensitive(cmd.cwd)
            if why_s:
                self.hold("sensitive-path", "high", f"runs inside {why_s}", cmd)

    # -- a file this command line downloads, then runs (curl -o i.sh URL && sh i.sh) -----------
    def fetched(self, word, cmd) -> None:
        """``word`` names a file a network client writes: running it later in the same
        command line runs what the network sent (the ``curl | sh`` hold, in two steps)."""
        path = self.path_of(word, cmd.cwd) if word.value is not None else None
        if path is not None:
            self._fetched().add(path)
            self._fetched().add(self.realpath(path))

    def fetched_name(self, url: str | None, cmd) -> None:
        """``curl -O URL`` / ``wget URL``: the file is named after the URL's last part, where it runs."""
        if not url or cmd.cwd is None:
            return
        name = url.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
        if name and "://" not in name and name not in (".", ".."):
            self._fetched().add(os.path.join(cmd.cwd, name))

    def runs_fetched(self, word, cmd, name: str) -> None:
        """Hold running a file this same command line fetched from the network."""
        if word.value is not None and self._was_fetched(self.path_of(word, cmd.cwd)):
            self.hold("runs-fetched", "high", f"{name} runs {word.value[:80]}, which this same command line "
                                              "downloads from the network (what the network sends is what runs)", cmd)

    def _was_fetched(self, path: str | None) -> bool:
        seen = getattr(self, "_fetched_paths", None)
        return bool(seen) and path is not None and (path in seen or self.realpath(path) in seen)

    def _fetched(self) -> set:
        if getattr(self, "_fetched_paths", None) is None:
            self._fetched_paths: set = set()
        return self._fetched_paths

    def url(self, word, cmd) -> None:
        if word.value is None:
            self.hold("dynamic-url", "high", f"a URL only known when it runs ({word.text[:60]})", cmd)
            return
        why = sibling("netaddr").url_problem(word.value)
        if why:
            self.hold("private-address", "high", f"a request to {why}", cmd, None if cmd is not None else word.value)

    def net(self, words, cmd) -> None:
        """Any literal argument that names a sensitive path (a value of an
        option the gate does not model, an argument to a tool)."""
        for w in words:
            v = w.value
            if v is None or w.glob or len(v) > 4096 or "\n" in v or "://" in v:
                continue
            cands = [v]
            if v.startswith("-") and "=" in v:
                cands = [v.split("=", 1)[1]]
            elif v.startswith("-"):
                continue
            for c in cands:
                if "/" not in c and not c.startswith(".") and c not in RC_NAMES:
                    continue
                path = self.path_of(c, cmd.cwd)
                if path is None:
                    continue
                why = self.sensitive(path)
                if why:
                    self.hold("sensitive-path", "high", f"names {why}", cmd)

    def assignment(self, name: str, value, cmd) -> None:
        held = name in HELD_VARS or name.startswith(HELD_PREFIXES) or name.upper().endswith("_PROXY")
        if not held or name in SAFE_GIT_VARS or name.upper() == "NO_PROXY":
            return
        ok_values = SAFE_VALUES.get(name)
        if ok_values is not None and value.value is not None and value.value in ok_values:
            return
        self.hold("env-override", "high", f"sets {name}, which changes what later commands run or where they "
                                          "connect", cmd)

    def program(self, cmd, name: str) -> str | None:
        """A command word with a slash: the command it is (``/bin/rm`` is rm,
        ``.venv/bin/pytest`` is pytest), or None after holding it or passing
        it as a script of the project."""
        commands = sibling("commands")
        path = self.path_of(name, cmd.cwd)
        if path is None:
            self.hold("unknown-path", "medium", f"runs {name[:80]}, relative to a directory the gate cannot know", cmd)
            return None
        why = self.sensitive(path)
        if why:
            self.hold("sensitive-path", "high", f"runs {why}", cmd)
            return None
        base = commands.normalize(os.path.basename(name))
        real = self.realpath(path)
        known = base in commands.TABLE or base in self.extra_commands
        system = os.path.dirname(path) in SYSTEM_BIN or os.path.dirname(real) in SYSTEM_BIN or \
            any(under(path, os.path.join(self.home, d)) for d in HOME_BIN)
        if known and (system or self._inside_roots(path)):
            return base
        if self._was_fetched(path):
            self.hold("runs-fetched", "high", f"runs {name[:80]}, which this same command line downloads from the "
                                              "network (what the network sends is what runs)", cmd)
            return None
        if self._inside_roots(path) and self._inside_roots(real):
            self.net(cmd.args, cmd)  # the project's own script: like `python script.py`
            return None
        self.hold("unknown-command", "medium", f"runs {tilde(path, self.home)}, a program outside the project and "
                                               "the system's bin directories", cmd)
        return None

    def run(self, sub) -> None:
        """A command another one runs (env X, xargs X, npx X, timeout X)."""
        sibling("commands").check(sub, self)

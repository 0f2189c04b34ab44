"""One check of a tool call: a whole Bash line (parsed in-process, or in a
forked child killed at the deadline when long) and the read tools' paths."""

from __future__ import annotations

import json
import os
import time

from core.inbox.gate.calls import Calls
from core.inbox.gate.child_clock import WALL_LIMIT, ChildClock
from core.inbox.gate.defaults import INLINE_BYTES, MAX_MATCHES
from core.inbox.gate.places import CLOCK, OutOfTime, ToolWord
from core.inbox.gate.rules import Match
from core.inbox.gate.siblings import sibling


class Check(Calls):
    """One check: the places that matter (project, state, home), the paths
    seen, and the reasons to hold found so far. ``commands`` calls its
    read/write/in_project/url/net/hold."""

    # -- a whole Bash command line ------------------------------------------------------------
    def bash(self, command: str) -> None:
        shell = sibling("shell")
        shell.parser()  # tree_sitter, imported here and not before: only Bash calls pay for it
        if len(command.encode("utf-8", "surrogateescape")) > INLINE_BYTES and hasattr(os, "fork"):
            self.matches.extend(self._bash_in_child(command))
        else:
            self._bash(command)

    def _bash(self, command: str) -> None:
        shell = sibling("shell")
        commands = sibling("commands")
        try:
            script = shell.parse(command, cwd=self.cwd, home=self.home, project=self.project,
                                 deadline=self.deadline)
        except shell.DoesNotParse as exc:
            self.hold("does-not-parse", "medium", str(exc), None, command[:200])
            return
        except shell.OutOfTime:
            raise OutOfTime() from None
        except shell.TooLarge as exc:
            self.hold("too-large", "medium", str(exc), None, command[:200])
            return
        self.functions = script.functions
        for rule, reason, excerpt in script.problems:
            self.hold(rule, "high" if rule in ("line-continuation",) else "medium", reason, None, excerpt)
        for fname in script.functions:
            if fname in commands.TABLE or fname in ("cd", "pushd", "popd", "builtin", "command") or \
                    fname in self.extra_commands:
                self.hold("function-shadows", "high", f"defines a function named {fname}, which replaces the "
                                                      "command the gate checks", None, script.functions[fname])
        for cmd in script.commands:
            if len(self.matches) >= MAX_MATCHES:
                break  # held already; a person needs the first reasons, not every one of a hostile line's
            self.tick()
            for name, value in cmd.assigns:
                self.assignment(name, value, cmd)
            for r in cmd.redirects:
                if r.target is None:
                    continue
                if r.op in ("<", "<&") and not (r.target.value or "x").isdigit():
                    if r.op == "<":
                        self.read(r.target, cmd)
                elif r.writes:
                    self.write(r.target, cmd)
            commands.check(cmd, self)

    def _bash_in_child(self, command: str) -> list[Match]:
        """Check in a forked child, killed at the deadline: tree-sitter's error
        recovery can run for minutes on a hostile line, and the C parser does
        not stop for a Python signal."""
        import select
        import signal

        budget = self.deadline - CLOCK()  # CPU seconds left; the child's own clock starts near 0
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: check, report, leave without running any of the parent's exit handlers
            code = 0
            try:
                os.close(r)
                self.deadline = CLOCK() + budget
                try:
                    self._bash(command)
                except OutOfTime:
                    self.matches.append(Match("out-of-time", "medium", "the gate ran out of time checking this call"))
                data = json.dumps([[m.rule, m.risk, m.reason, m.excerpt] for m in self.matches]).encode()
                view = memoryview(data)
                while view:
                    view = view[os.write(w, view):]
            except BaseException:  # noqa: BLE001 - the parent holds the call when nothing comes back
                code = 1
            finally:
                os._exit(code)
        os.close(w)
        chunks, done = [], False
        child = ChildClock(pid)
        wall_limit = time.monotonic() + max(WALL_LIMIT, budget + 0.05)
        try:
            while True:
                # the child is killed once it has used its CPU budget (or past the wall limit,
                # where the machine is so busy the agent would rather hear "held")
                if child.spent() > budget + 0.05 or time.monotonic() > wall_limit:
                    break
                ready, _, _ = select.select([r], [], [], child.poll)
                if not ready:
                    continue
                chunk = os.read(r, 1 << 16)
                if not chunk:
                    done = True
                    break
                chunks.append(chunk)
        finally:
            if not done:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            os.waitpid(pid, 0)
            os.close(r)
        if not done:
            return [Match("out-of-time", "medium", "the gate ran out of time checking this call", command[:200])]
        try:
            rows = json.loads(b"".join(chunks) or b"null")
        except ValueError:
            rows = None
        if not isinstance(rows, list):
            return [Match("gate-error", "medium", "the gate's checker failed on this command", command[:200])]
        return [Match(*row) for row in rows]

    # -- Read, Glob, Grep, LS -----------------------------------------------------------------------
    def read_tool(self, tool: str, tool_input: dict) -> None:
        if tool in ("Read", "NotebookRead"):
            field = "file_path" if tool == "Read" else "notebook_path"
            target = tool_input.get(field)
            if not isinstance(target, str) or not target:
                self.hold("unknown-path", "medium", f"{tool} without a {field}", None)
                return
            self.read(ToolWord(target), None, tool=tool)
            return
        where = tool_input.get("path")
        base = where if isinstance(where, str) and where else (self.cwd or ".")
        if tool == "Glob":
            pattern = tool_input.get("pattern")
            if isinstance(pattern, str) and pattern:
                full = pattern if os.path.isabs(os.path.expanduser(pattern)) else os.path.join(base, pattern)
                self.read(ToolWord(os.path.expanduser(full), glob=any(c in full for c in "*?[")), None, listing=True,
                          tool=tool)
            self.read(ToolWord(os.path.expanduser(base)), None, listing=True, tool=tool)
            return
        self.read(ToolWord(os.path.expanduser(base)), None, recursive=(tool == "Grep"), listing=(tool == "LS"),
                  tool=tool)

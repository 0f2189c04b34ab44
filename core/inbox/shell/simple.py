"""Walking one simple command: its words, assignments and redirections, a
``cd`` followed, declarations (export, local...)."""

from __future__ import annotations

import os

from core.inbox.shell.model import Command, Feed, Word
from core.inbox.shell.state import State, cd_state, join_states, set_var


class SimpleCommands:
    """The walker's simple commands (mixed into ``walker._Walker``)."""

    # -- a simple command -----------------------------------------------------------------
    def command(self, node, st, ctx, d, feed, redirects) -> tuple[State, State]:
        cmd = Command(None, self.lazy(node), st.cwd, ctx)
        cmd.redirects = list(redirects)
        if self.tail:
            cmd.redirects.extend(self.tail.pop((node.start_byte, node.end_byte), ()))
        prev_end = None
        for i, c in enumerate(node.children):
            if not c.is_named:
                if c.type == "$":  # a `$` the grammar left on its own ($"..."): the shell sees something else
                    cmd.args.append(Word(None, "$"))
                continue
            field = node.field_name_for_child(i)
            t = c.type
            if prev_end is not None and c.start_byte - prev_end == 2 and self.src[prev_end:c.start_byte] == b"\\\n":
                self.problem("line-continuation", "a backslash-newline joins two words into one for bash, "
                                                  "which the parser reads as two", node)
            prev_end = c.end_byte
            if t == "variable_assignment":
                name, value = self.assignment(c, st, ctx, d)
                cmd.assigns.append((name, value))
            elif field == "name" or t == "command_name":
                inner = c.named_children
                cmd.name = self.word(inner[0], st, ctx, d, literal=True) if inner else Word(None, self.s(c))
                if len(inner) > 1:
                    cmd.name = Word(None, self.s(c))
            elif t in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                r, f, rest = self.redirect(c, st, ctx, d)
                cmd.redirects.extend(r)
                if f is not None:
                    feed = f
                for _kind, n in rest:
                    self.stmt(n, st, ctx, d)
            elif t == "comment":
                continue
            else:
                cmd.args.append(self.word(c, st, ctx, d))
        for r in cmd.redirects:
            if r.op == "<" and r.target is not None:
                feed = Feed("file", None, r.text)
            elif r.op in ("<<", "<<-"):
                feed = Feed("heredoc", r.body, r.text)
            elif r.op == "<<<":
                feed = Feed("herestring", r.body, r.text)
        cmd.stdin = feed
        self.script.commands.append(cmd)
        name = cmd.name.value if cmd.name is not None else None
        if name in ("builtin", "command") and cmd.args and cmd.args[0].value in ("cd", "pushd", "popd"):
            inner = Command(cmd.args[0], cmd._text, cmd.cwd, cmd.context)
            inner.args = cmd.args[1:]
            return self.cd(inner, st)
        if name in ("cd", "pushd", "popd", "chdir"):
            return self.cd(cmd, st)
        if name in self.cd_functions:  # a function of this line that changes directory: where the rest runs is unknown
            unknown = cd_state(st, None)
            return unknown, unknown
        return st, st

    def cd(self, cmd: Command, st: State) -> tuple[State, State]:
        name = cmd.name.value
        if cmd.context.startswith("function "):
            self.cd_functions.add(cmd.context[len("function "):])
        args = [a for a in cmd.args]
        while args and args[0].value is not None and args[0].value.startswith("-") and args[0].value not in ("-",):
            if args[0].value == "--":
                args.pop(0)
                break
            if name in ("pushd", "popd") and args[0].value[1:].isdigit():
                break
            args.pop(0)
        if name == "popd" or (name == "pushd" and not args):
            unknown = cd_state(st, None)
            return unknown, unknown
        if not args:
            target = self.home
        else:
            w = args[0]
            if w.value is None or w.glob or w.value == "-" or (name == "pushd" and w.value[:1] in "+-"):
                unknown = cd_state(st, None)
                return unknown, unknown
            target = w.value
        if not os.path.isabs(target):
            if st.cwd is None:
                unknown = cd_state(st, None)
                return unknown, unknown
            target = os.path.join(st.cwd, target)
        target = os.path.normpath(target)
        ok = cd_state(st, target)
        # a cd into a directory that exists now succeeds; one that does not may fail and leave us where we were
        return ok, (ok if os.path.isdir(target) else join_states(st, ok))

    def assignment(self, node, st, ctx, d) -> tuple[str, Word]:
        name = ""
        value = Word("", "")
        seen_eq = False
        for c in node.children:
            if not c.is_named:
                if c.type in ("=", "+="):
                    seen_eq = True
                    if c.type == "+=":
                        value = Word(None, "+=")
                continue
            if not seen_eq:
                if c.type == "variable_name":
                    name = self.s(c)
                else:  # a subscript: arr[$(cmd)]=x
                    name = self.s(c)
                    self.scan(c, st, ctx, d)
                continue
            if c.type == "array":
                for e in c.named_children:
                    self.word(e, st, ctx, d)
                value = Word(None, self.s(c))
            elif value.text == "+=":
                self.word(c, st, ctx, d)
            else:
                value = self.word(c, st, ctx, d, assignment=True)
        return name, value

    def declaration(self, node, st, ctx, d):
        keyword = ""
        for c in node.children:
            if not c.is_named:
                keyword = c.type
                break
        cmd = Command(Word(keyword, keyword), self.lazy(node), st.cwd, ctx)
        cmd.declaration = True
        out = st.copy()
        for c in node.named_children:
            if c.type == "variable_assignment":
                name, value = self.assignment(c, st, ctx, d)
                cmd.assigns.append((name, value))
                set_var(out, name, value)
            else:
                cmd.args.append(self.word(c, st, ctx, d))
        self.script.commands.append(cmd)
        return out, out

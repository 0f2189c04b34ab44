"""Walking statements: sequences, lists, pipelines, redirections and
here-documents, and control flow (if, loops, case, function bodies)."""

from __future__ import annotations

from core.inbox.shell.model import MAX_DEPTH, Command, Feed, Redirect, Word
from core.inbox.shell.quoting import short_text
from core.inbox.shell.state import State, cd_state, join_states, set_var

# nodes whose children are statements run one after another
_SEQUENCE = frozenset({"program", "compound_statement", "do_group", "else_clause", "subshell"})


class Statements:
    """The walker's statements (mixed into ``walker._Walker``)."""

    # -- statements ---------------------------------------------------------------------
    def seq(self, nodes, st: State, ctx: str, depth: int, feed: Feed | None = None) -> tuple[State, State]:
        """Statements one after another; returns (state if the last succeeded, state whatever happened)."""
        ok = any_ = st
        background = False
        items = [n for n in nodes]
        for i, node in enumerate(items):
            if not node.is_named:
                continue
            t = node.type
            if t == "comment" or t in ("heredoc_body", "heredoc_end", "heredoc_start"):
                continue
            nxt = items[i + 1] if i + 1 < len(items) else None
            background = nxt is not None and not nxt.is_named and nxt.type == "&"
            if background:  # runs in a subshell: nothing it changes reaches the rest
                self.stmt(node, any_.copy(), ctx, depth, feed)
                ok = any_
                continue
            ok, any_ = self.stmt(node, any_, ctx, depth, feed)
        return ok, any_

    def stmt(self, node, st: State, ctx: str, depth: int, feed: Feed | None = None) -> tuple[State, State]:
        self.tick()
        if depth > MAX_DEPTH:
            self.problem("too-deep", f"nested more than {MAX_DEPTH} levels deep, too deep to check", node)
            return st, State(None, {})
        t = node.type
        d = depth + 1
        if self.tail and t != "command":
            extra = self.tail.pop((node.start_byte, node.end_byte), None)
            if extra:
                if t == "redirected_statement":  # its own redirections and these: one statement
                    self.tail[(node.start_byte, node.end_byte)] = extra  # picked up by its body below
                else:
                    cmd = Command(None, self.lazy(node), st.cwd, ctx)
                    cmd.redirects = extra
                    self.script.commands.append(cmd)
        if t == "command":
            return self.command(node, st, ctx, d, feed, ())
        if t == "redirected_statement":
            return self.redirected(node, st, ctx, d, feed)
        if t == "pipeline":
            self.pipeline(list(node.children), st, ctx, d, feed)
            return st, st
        if t == "list":
            return self.list_(node, st, ctx, d, feed)
        if t in _SEQUENCE:
            inner = [c for c in node.children]
            if t == "subshell":
                self.seq(inner, st.copy(), ctx, d, feed)
                return st, st
            if t == "compound_statement" and inner and not inner[0].is_named and inner[0].type == "((":
                self.scan(node, st, ctx, d)  # (( arithmetic )): only its substitutions run
                return st, st
            return self.seq(inner, st, ctx, d, feed)
        if t == "negated_command":
            ok, any_ = self.seq(node.children, st, ctx, d, feed)
            return any_, any_
        if t == "variable_assignment" or t == "variable_assignments":
            cmd = Command(None, self.lazy(node), st.cwd, ctx)
            pairs = [node] if t == "variable_assignment" else [c for c in node.named_children]
            out = st.copy()
            for a in pairs:
                if a.type != "variable_assignment":
                    self.scan(a, st, ctx, d)
                    continue
                name, value = self.assignment(a, st, ctx, d)
                cmd.assigns.append((name, value))
                set_var(out, name, value)
            self.script.commands.append(cmd)
            return out, out
        if t == "declaration_command":
            return self.declaration(node, st, ctx, d)
        if t == "unset_command":
            cmd = Command(Word("unset", "unset"), self.lazy(node), st.cwd, ctx)
            out = st.copy()
            for c in node.named_children:
                w = self.word(c, st, ctx, d)
                cmd.args.append(w)
                if w.value is not None:
                    out.vars.pop(w.value, None)
            self.script.commands.append(cmd)
            return out, out
        if t == "test_command":
            cmd = Command(Word("[[", "[["), self.lazy(node), st.cwd, ctx)
            self.scan(node, st, ctx, d)
            self.script.commands.append(cmd)
            return st, st
        if t == "if_statement":
            return self.if_(node, st, ctx, d)
        if t in ("while_statement", "for_statement", "c_style_for_statement"):
            return self.loop(node, st, ctx, d)
        if t == "case_statement":
            return self.case(node, st, ctx, d)
        if t == "function_definition":
            self.function(node, st, d)
            return st, st
        self.problem("unsupported", f"a shell construct the gate does not read ({t})", node)
        return st, State(None, {})

    def list_(self, node, st, ctx, d, feed):
        kids = node.children
        left = right = None
        op = ""
        for c in kids:
            if c.is_named and left is None:
                left = c
            elif not c.is_named and left is not None and right is None and c.type in ("&&", "||"):
                op = c.type
            elif c.is_named and left is not None:
                right = c
        if left is None:
            return st, st
        ok_l, any_l = self.stmt(left, st, ctx, d, feed)
        if right is None:
            return ok_l, any_l
        if op == "||":  # the right side runs when the left failed, somewhere between st and its end
            ok_r, any_r = self.stmt(right, any_l, ctx, d, feed)
            return join_states(ok_l, ok_r), join_states(any_l, any_r)
        ok_r, any_r = self.stmt(right, ok_l, ctx, d, feed)
        return ok_r, join_states(any_l, any_r)

    def pipeline(self, kids, st, ctx, d, feed, first_feed_by: str | None = None):
        """Each stage runs in a subshell; a stage is fed by the one before."""
        prev_text = first_feed_by
        for c in kids:
            if not c.is_named:
                continue
            if c.type == "comment":
                continue
            stage_feed = Feed("pipe", None, prev_text) if prev_text is not None else feed
            self.stmt(c, st.copy(), ctx, d, stage_feed)
            prev_text = self.lazy(c)

    def redirected(self, node, st, ctx, d, feed):
        body = node.child_by_field_name("body")
        if body is not None and body.type in ("list", "pipeline"):
            return self.redirected_list(node, body, st, ctx, d, feed)
        redirects: list[Redirect] = []
        own_feed: Feed | None = None
        after: list = []  # what a here-document's line continues with (| cmd, && cmd)
        for c in node.children:
            if c is body or not c.is_named:
                continue
            if c.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                r, f, rest = self.redirect(c, st, ctx, d)
                redirects.extend(r)
                if f is not None:
                    own_feed = f
                after.extend(rest)
            else:
                self.scan(c, st, ctx, d)
        if self.tail:
            redirects.extend(self.tail.pop((node.start_byte, node.end_byte), ()))
        feed_in = own_feed or feed
        if body is None:  # `> file` alone
            cmd = Command(None, self.lazy(node), st.cwd, ctx)
            cmd.redirects = redirects
            self.script.commands.append(cmd)
            ok = any_ = st
        elif body.type == "command":
            ok, any_ = self.command(body, st, ctx, d, feed_in, redirects)
        else:
            if redirects:  # redirections of a compound statement: checked on their own
                cmd = Command(None, self.lazy(node), st.cwd, ctx)
                cmd.redirects = redirects
                self.script.commands.append(cmd)
            ok, any_ = self.stmt(body, st, ctx, d, feed_in)
        for kind, n in after:
            if kind == "pipe":  # `cat <<EOF | sh`: the stages after it are fed by it
                self.pipeline(n.children, st, ctx, d, None, first_feed_by=short_text(self.s(body) if body else ""))
            else:
                ok, any_ = self.stmt(n, any_, ctx, d)
        return ok, any_

    def redirected_list(self, node, body, st, ctx, d, feed):
        """Redirections the grammar hung on a list or pipeline: they are the last command's."""
        last = body
        while last.type in ("list", "pipeline"):
            named = [c for c in last.children if c.is_named and c.type != "comment"]
            if not named:
                break
            last = named[-1]
        redirects: list[Redirect] = []
        after: list = []
        for c in node.children:
            if c is body or not c.is_named:
                continue
            if c.type in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                r, _f, rest = self.redirect(c, st, ctx, d)
                redirects.extend(r)
                after.extend(rest)
            else:
                self.scan(c, st, ctx, d)
        self.tail.setdefault((last.start_byte, last.end_byte), []).extend(redirects)
        ok, any_ = self.stmt(body, st, ctx, d, feed)
        for kind, n in after:  # `a && cat <<EOF | sh`: what follows the here-document is fed by the last command
            if kind == "pipe":
                self.pipeline(n.children, ok, ctx, d, None, first_feed_by=short_text(self.s(last)))
            else:
                ok, any_ = self.stmt(n, any_, ctx, d)
        return ok, any_

    def redirect(self, node, st, ctx, d) -> tuple[list[Redirect], Feed | None, list]:
        t = node.type
        text = self.lazy(node)
        if t == "file_redirect":
            fd = None
            op = ""
            targets = []
            for c in node.children:
                if not c.is_named:
                    op += c.type
                elif c.type == "file_descriptor":
                    fd = self.s(c)
                else:
                    targets.append(self.word(c, st, ctx, d))
            if not targets:
                return [Redirect(op, fd, None, None, text)], None, []
            out = [Redirect(op, fd, w, None, text) for w in targets]
            feed = Feed("file", None, text) if op == "<" else None
            return out, feed, []
        if t == "herestring_redirect":
            w = None
            for c in node.named_children:
                w = self.word(c, st, ctx, d)
            return [Redirect("<<<", None, w, w.value if w else None, text)], \
                Feed("herestring", w.value if w else None, text), []
        # heredoc_redirect: its body, the redirections after its start word, and what the line goes on with
        op = "<<"
        quoted = False
        body: str | None = ""
        strip_tabs = False
        redirects: list[Redirect] = []
        rest: list = []
        for c in node.children:
            ct = c.type
            if not c.is_named:
                if ct in ("<<", "<<-"):
                    op = ct
                    strip_tabs = ct == "<<-"
                continue
            if ct == "heredoc_start":
                raw = self.s(c)
                quoted = any(q in raw for q in ("'", '"', "\\"))
            elif ct == "heredoc_body":
                body = self.heredoc_body(c, quoted, strip_tabs, st, ctx, d)
            elif ct in ("heredoc_end", "heredoc_content"):
                continue
            elif ct in ("file_redirect", "herestring_redirect"):
                r, _f, more = self.redirect(c, st, ctx, d)
                redirects.extend(r)
                rest.extend(more)
            elif ct == "pipeline" and c.children and not c.children[0].is_named and c.children[0].type in ("|", "|&"):
                rest.append(("pipe", c))
            else:
                rest.append(("stmt", c))
        redirects.insert(0, Redirect(op, None, None, body, text))
        return redirects, Feed("heredoc", body, text), rest

    def heredoc_body(self, node, quoted, strip_tabs, st, ctx, d) -> str | None:
        dynamic = False
        if not quoted:
            for c in node.named_children:
                if c.type != "heredoc_content":
                    self.scan(c, st, ctx, d)
                    dynamic = True
        raw = self.s(node)
        if strip_tabs:
            raw = "\n".join(line.lstrip("\t") for line in raw.split("\n"))
        return None if dynamic else raw

    # -- control flow ------------------------------------------------------------------------
    def if_(self, node, st, ctx, d):
        cond_nodes, body_nodes, clauses = [], [], []
        part = "cond"
        for i, c in enumerate(node.children):
            if not c.is_named:
                if c.type == "then":
                    part = "body"
                continue
            if c.type in ("elif_clause", "else_clause"):
                clauses.append(c)
            elif part == "cond":
                cond_nodes.append(c)
            else:
                body_nodes.append(c)
        ok_c, any_c = self.seq(cond_nodes, st, ctx, d)
        _ok_b, end = self.seq(body_nodes, ok_c, ctx, d)
        result = end
        has_else = False
        for cl in clauses:
            if cl.type == "else_clause":
                has_else = True
                _ok, e = self.seq(cl.children, any_c, ctx, d)
            else:
                _ok, e = self.if_(cl, any_c, ctx, d)
            result = join_states(result, e)
        if not has_else:
            result = join_states(result, any_c)
        return result, result

    def loop(self, node, st, ctx, d):
        entry = st.copy()
        body = node.child_by_field_name("body")
        for c in node.children:
            if not c.is_named or c is body:
                continue
            if c.type == "variable_name":
                entry.vars.pop(self.s(c), None)
            elif node.type == "while_statement":
                _ok, entry = self.stmt(c, entry, ctx, d)
            else:
                self.scan(c, entry, ctx, d)
        entry = entry.copy()
        for name in list(entry.vars):  # what the body assigns differs from one pass to the next
            if name not in ("HOME", "CLAUDE_PROJECT_DIR", "PWD"):
                entry.vars.pop(name, None)
        end = entry
        if body is not None:
            _ok, end = self.stmt(body, entry, ctx, d)
        if end.cwd != entry.cwd:
            self.problem("cd-in-loop", "changes directory inside a loop: the gate cannot tell where later "
                                       "passes run", node)
            end = cd_state(end, None)
        result = join_states(st, end)
        return result, result

    def case(self, node, st, ctx, d):
        value = node.child_by_field_name("value")
        if value is not None:
            self.word(value, st, ctx, d)
        result = st
        for item in node.named_children:
            if item.type != "case_item":
                continue
            stmts = []
            for i, c in enumerate(item.children):
                if not c.is_named:
                    continue
                if item.field_name_for_child(i) == "value":
                    self.word(c, st, ctx, d)
                else:
                    stmts.append(c)
            _ok, e = self.seq(stmts, st, ctx, d)
            result = join_states(result, e)
        return result, result

    def function(self, node, st, d):
        name_node = node.child_by_field_name("name")
        name = self.s(name_node) if name_node is not None else ""
        body = node.child_by_field_name("body")
        self.script.functions[name] = short_text(self.s(body)) if body is not None else ""
        # a function may be called from anywhere later: its body runs in a directory the gate cannot know
        inner = State(None, {k: v for k, v in st.vars.items() if k in ("HOME", "CLAUDE_PROJECT_DIR")})
        if body is not None:
            self.stmt(body, inner, f"function {name}", d)

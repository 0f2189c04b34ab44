"""What a shell command line runs, read with a real parser (tree-sitter-bash).

``parse(text, cwd=..., home=..., project=...)`` returns a :class:`Script`: every
simple command that can run, in the order it runs, whatever encloses it
(pipelines, ``&&``/``||`` lists, ``$(...)``, backticks, ``<(...)``, ``>(...)``,
subshells, ``{ }``, if/while/until/for/select/case, function bodies), each as
a :class:`Command`:

* ``name``: the command word as the shell sees it after quote removal
  (``\\rm``, ``r''m``, ``"rm"``, ``$'rm'`` are all ``rm``), or *dynamic*
  (``Word.value is None``) when anything in it expands: ``$X``, ``$(...)``,
  backticks, ``${...}``, ``$((...))``, brace expansion, a glob;
* ``args``: the arguments the same way (``Word.glob`` marks an unquoted glob,
  whose ``value`` is the pattern);
* ``redirects``: operator, fd and target (or the here-document's text);
* ``assigns``: ``NAME=value`` words before the command (or alone);
* ``stdin``: what feeds it, when something does: a pipe (and the text of the
  stage before), a here-document, a here-string, a file;
* ``cwd``: the directory it runs in, following ``cd``/``pushd`` through the
  line (``None``: the gate cannot know, e.g. after ``cd "$X"`` or a ``cd`` that
  may have failed), and ``context``: what encloses it (``$(...)``, a function...).

Variables resolve only when the line itself set them to a literal earlier
(``D=build; mkdir $D``), or they are ``HOME``, ``PWD`` or
``CLAUDE_PROJECT_DIR``; everything else is dynamic. The caller decides what a
dynamic word means (the gate holds it where it matters).

A line the parser cannot read without errors (``has_error``, a missing node)
raises :class:`DoesNotParse`; the gate holds it. Where tree-sitter's grammar
and bash disagree in a way that matters, the line is held too: a backslash-
newline inside a word (bash joins the halves, the grammar splits them) is a
``Script.problems`` entry. Parsing runs under a deadline
(:class:`OutOfTime`); the walk is iterative over statements and bounded in
depth (:data:`MAX_DEPTH`), linear in the input.

Only the standard library and ``tree_sitter``/``tree_sitter_bash`` (MIT) are
imported, and those on first use.
"""

from __future__ import annotations

import os
import time

MAX_DEPTH = 200  # nested constructs; deeper lines are held, not walked (Python's stack stays small)
MAX_TREE = 60_000  # syntax nodes (counted by tree-sitter, free); a line with more is held as too large to check
MAX_NODES = 60_000  # statements and words walked; the same, for what the count lets through
_CHECK_EVERY = 512  # nodes between deadline checks


class DoesNotParse(ValueError):
    """The line does not parse as bash: where, in one line."""


class OutOfTime(RuntimeError):
    """The deadline passed while parsing or walking."""


class TooLarge(ValueError):
    """More statements and words than MAX_NODES: held without reading the rest."""


class Word:
    """One shell word: ``value`` after quote removal (``None`` when it expands
    to something the gate cannot know), the source ``text``, ``glob`` when an
    unquoted ``*``, ``?`` or ``[`` makes it a pattern."""

    __slots__ = ("value", "text", "glob")

    def __init__(self, value: str | None, text: str, glob: bool = False):
        self.value = value
        self.text = text
        self.glob = glob

    @property
    def dynamic(self) -> bool:
        return self.value is None

    def __repr__(self) -> str:
        return f"Word({self.value!r}{', glob' if self.glob else ''})" if self.value is not None \
            else f"Word(<dynamic {self.text[:40]!r}>)"


class Redirect:
    """``op`` is the operator as written (``>``, ``>>``, ``<``, ``&>``, ``>&``,
    ``<<``, ``<<-``, ``<<<``...), ``fd`` the descriptor before it (or None),
    ``target`` the word after it (None for a here-document), ``body`` a
    here-document's or here-string's text (None when it expands)."""

    __slots__ = ("op", "fd", "target", "body", "_text")

    def __init__(self, op: str, fd: str | None, target: Word | None, body: str | None, text):
        self.op = op
        self.fd = fd
        self.target = target
        self.body = body
        self._text = text

    @property
    def text(self) -> str:
        return _text_of(self)

    @property
    def writes(self) -> bool:
        """Opens its target for writing: ``>``, ``>>``, ``>|``, ``&>``, ``&>>``,
        ``<>``, and ``>&`` to a file (``>&2``, ``>&-`` copy or close a descriptor)."""
        if self.op in ("<", "<<", "<<-", "<<<", "<&"):
            return False
        if self.op == ">&" and self.target is not None and self.target.value is not None \
                and (self.target.value.isdigit() or self.target.value == "-"):
            return False
        return True

    def __repr__(self) -> str:
        return f"Redirect({self.fd or ''}{self.op} {self.target!r})"


class Feed:
    """What feeds a command's standard input: ``kind`` is ``pipe``,
    ``heredoc``, ``herestring`` or ``file``; ``text`` the here-document or
    here-string (None when it expands), or an excerpt of the stage before."""

    __slots__ = ("kind", "text", "_by")

    def __init__(self, kind: str, text: str | None, by=""):
        self.kind = kind
        self.text = text
        self._by = by

    @property
    def by(self) -> str:
        if not isinstance(self._by, str):
            self._by = str(self._by)
        return self._by

    def __repr__(self) -> str:
        return f"Feed({self.kind}, {self.by[:40]!r})"


class Command:
    """One simple command that may run (or a bare assignment / redirection,
    ``name`` None)."""

    __slots__ = ("name", "args", "redirects", "assigns", "stdin", "cwd", "context", "_text", "declaration")

    def __init__(self, name: Word | None, text, cwd: str | None, context: str):
        self.name = name
        self.args: list[Word] = []
        self.redirects: list[Redirect] = []
        self.assigns: list[tuple[str, Word]] = []
        self.stdin: Feed | None = None
        self.cwd = cwd
        self.context = context
        self._text = text  # a str, or a _Span turned into one when first read (most commands never are)
        self.declaration = False  # export/declare/local/readonly/typeset: its assigns persist

    @property
    def text(self) -> str:
        """The command's source, whitespace folded, cut to 200 characters."""
        return _text_of(self)

    def __repr__(self) -> str:
        name = self.name.value if self.name is not None and self.name.value is not None else \
            (None if self.name is None else "<dynamic>")
        return f"Command({name!r}, {[a.value for a in self.args]!r}, cwd={self.cwd!r})"


class Script:
    """Everything a line runs: ``commands`` in order, ``functions`` it defines
    (name -> the first command word of the body's text), ``problems`` found
    while reading it (``(rule, reason, excerpt)``)."""

    __slots__ = ("commands", "functions", "problems", "text")

    def __init__(self, text: str):
        self.commands: list[Command] = []
        self.functions: dict[str, str] = {}
        self.problems: list[tuple[str, str, str]] = []
        self.text = text


class _Span:
    """Source text not cut out until someone reads it (an excerpt for a hold)."""

    __slots__ = ("walker", "start", "end")

    def __init__(self, walker, start: int, end: int):
        self.walker = walker
        self.start = start
        self.end = end

    def __str__(self) -> str:
        return _short(self.walker.span(self.start, self.end))


def _text_of(obj) -> str:
    t = obj._text
    if not isinstance(t, str):
        t = obj._text = str(t)
    return t


# -- the parser, loaded once per process -------------------------------------------------
_PARSER = None


def parser():
    global _PARSER
    if _PARSER is None:
        import sys

        if "tree_sitter" not in sys.modules:
            try:
                ts, tsb = _binding("tree_sitter"), _binding("tree_sitter_bash")
                _PARSER = ts.Parser(ts.Language(tsb.language()))
                return _PARSER
            except Exception:  # noqa: BLE001 - another layout: the packages' own imports below
                pass
        import tree_sitter
        import tree_sitter_bash

        _PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    return _PARSER


def _binding(package: str):
    """``<package>._binding``, the C extension, loaded without the package's
    ``__init__``: tree_sitter's imports ``typing`` and tree_sitter_bash's
    ``importlib.resources`` (~40 ms together), on a path the hook takes for
    every Bash call."""
    from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader, ModuleSpec, PathFinder

    spec = PathFinder.find_spec(package)
    folder = spec.submodule_search_locations[0]
    path = next(os.path.join(folder, f) for f in sorted(os.listdir(folder))
                if f.startswith("_binding.") and f.endswith(tuple(EXTENSION_SUFFIXES)))
    name = f"{package}._binding"
    loader = ExtensionFileLoader(name, path)
    mod = loader.create_module(ModuleSpec(name, loader, origin=path))
    loader.exec_module(mod)
    return mod


def parse_tree(data: bytes, deadline: float | None = None):
    """The tree-sitter tree of ``data``; OutOfTime when ``deadline``
    (time.monotonic()) passes first."""
    p = parser()
    if deadline is None:
        return p.parse(data)
    view = memoryview(data)

    def progress(_offset: int, _has_error: bool) -> bool:
        return time.monotonic() > deadline  # True cancels the parse

    try:
        return p.parse(lambda off, _pt: view[off:off + 65536], progress_callback=progress)
    except ValueError:  # "Parsing failed": cancelled
        p.reset()
        raise OutOfTime("parsing ran out of time") from None


# -- the state a line carries from command to command ---------------------------------------
class _State:
    __slots__ = ("cwd", "vars")

    def __init__(self, cwd: str | None, vars_: dict[str, str]):
        self.cwd = cwd
        self.vars = vars_

    def copy(self) -> "_State":
        return _State(self.cwd, dict(self.vars))


def _join(a: _State, b: _State) -> _State:
    """What is known after either a or b: only what both agree on."""
    if a is b:
        return a
    cwd = a.cwd if a.cwd == b.cwd else None
    if a.vars == b.vars:
        return _State(cwd, a.vars)
    return _State(cwd, {k: v for k, v in a.vars.items() if b.vars.get(k) == v})


def _cd_state(st: _State, cwd: str | None) -> _State:
    out = st.copy()
    out.cwd = cwd
    if cwd is None:
        out.vars.pop("PWD", None)
    else:
        out.vars["PWD"] = cwd
    return out


_SEQUENCE = frozenset({"program", "compound_statement", "do_group", "else_clause", "subshell"})
_GLOB = frozenset("*?[")
_ANSI = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
         "\\": "\\", "'": "'", '"': '"', "?": "?"}


class _Walker:
    def __init__(self, src: bytes, text: str, script: Script, home: str, deadline: float | None):
        self.src = src
        self.text = text
        self.script = script
        self.home = home
        self.deadline = deadline
        self.count = 0
        # byte offsets -> text: the source is decoded once; ASCII lines map 1:1, others through a table
        self.ascii = len(src) == len(text)
        # the grammar hangs `a && b > f` and `a | b > f` on the whole list or pipeline; bash gives the
        # redirections to the last command (b). Keyed by that command's span, taken when it is reached.
        self.tail: dict[tuple[int, int], list[Redirect]] = {}
        self.cd_functions: set[str] = set()  # functions whose body changes directory (a sourced file is code
        # the agent runs, beyond any gate: its cd is not followed)

    # -- helpers ------------------------------------------------------------------
    def tick(self) -> None:
        self.count += 1
        if self.count % _CHECK_EVERY == 0:
            if self.deadline is not None and time.monotonic() > self.deadline:
                raise OutOfTime("walking the command ran out of time")
            if self.count > MAX_NODES:
                raise TooLarge(f"more than {MAX_NODES:,} commands and words: too large to check")

    def s(self, node) -> str:
        if self.ascii:
            return self.text[node.start_byte:node.end_byte]
        return self.src[node.start_byte:node.end_byte].decode("utf-8", "surrogateescape")

    def span(self, a: int, b: int) -> str:
        if self.ascii:
            return self.text[a:b]
        return self.src[a:b].decode("utf-8", "surrogateescape")

    def lazy(self, node) -> _Span:
        return _Span(self, node.start_byte, node.end_byte)

    def problem(self, rule: str, reason: str, node) -> None:
        self.script.problems.append((rule, reason, _short(self.s(node))))

    # -- statements ---------------------------------------------------------------------
    def seq(self, nodes, st: _State, ctx: str, depth: int, feed: Feed | None = None) -> tuple[_State, _State]:
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

    def stmt(self, node, st: _State, ctx: str, depth: int, feed: Feed | None = None) -> tuple[_State, _State]:
        self.tick()
        if depth > MAX_DEPTH:
            self.problem("too-deep", f"nested more than {MAX_DEPTH} levels deep, too deep to check", node)
            return st, _State(None, {})
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
                _set_var(out, name, value)
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
        return st, _State(None, {})

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
            return _join(ok_l, ok_r), _join(any_l, any_r)
        ok_r, any_r = self.stmt(right, ok_l, ctx, d, feed)
        return ok_r, _join(any_l, any_r)

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
                self.pipeline(n.children, st, ctx, d, None, first_feed_by=_short(self.s(body) if body else ""))
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
                self.pipeline(n.children, ok, ctx, d, None, first_feed_by=_short(self.s(last)))
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

    # -- a simple command -----------------------------------------------------------------
    def command(self, node, st, ctx, d, feed, redirects) -> tuple[_State, _State]:
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
            unknown = _cd_state(st, None)
            return unknown, unknown
        return st, st

    def cd(self, cmd: Command, st: _State) -> tuple[_State, _State]:
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
            unknown = _cd_state(st, None)
            return unknown, unknown
        if not args:
            target = self.home
        else:
            w = args[0]
            if w.value is None or w.glob or w.value == "-" or (name == "pushd" and w.value[:1] in "+-"):
                unknown = _cd_state(st, None)
                return unknown, unknown
            target = w.value
        if not os.path.isabs(target):
            if st.cwd is None:
                unknown = _cd_state(st, None)
                return unknown, unknown
            target = os.path.join(st.cwd, target)
        target = os.path.normpath(target)
        ok = _cd_state(st, target)
        # a cd into a directory that exists now succeeds; one that does not may fail and leave us where we were
        return ok, (ok if os.path.isdir(target) else _join(st, ok))

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
                _set_var(out, name, value)
            else:
                cmd.args.append(self.word(c, st, ctx, d))
        self.script.commands.append(cmd)
        return out, out

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
            result = _join(result, e)
        if not has_else:
            result = _join(result, any_c)
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
            end = _cd_state(end, None)
        result = _join(st, end)
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
            result = _join(result, e)
        return result, result

    def function(self, node, st, d):
        name_node = node.child_by_field_name("name")
        name = self.s(name_node) if name_node is not None else ""
        body = node.child_by_field_name("body")
        self.script.functions[name] = _short(self.s(body)) if body is not None else ""
        # a function may be called from anywhere later: its body runs in a directory the gate cannot know
        inner = _State(None, {k: v for k, v in st.vars.items() if k in ("HOME", "CLAUDE_PROJECT_DIR")})
        if body is not None:
            self.stmt(body, inner, f"function {name}", d)

    # -- words -----------------------------------------------------------------------------------
    def scan(self, node, st, ctx, d) -> None:
        """Walk ``node`` for what runs inside it (substitutions), ignoring its value."""
        stack = [node]
        while stack:
            n = stack.pop()
            self.tick()
            t = n.type
            if t in ("command_substitution", "process_substitution"):
                self.substitution(n, st, ctx, d)
                continue
            stack.extend(reversed(n.named_children))

    def substitution(self, node, st, ctx, d) -> None:
        inner = [c for c in node.children]
        where = "<(…)" if node.type == "process_substitution" else "$(…)"
        self.seq(inner, st.copy(), where if ctx == "" else f"{ctx} {where}", d + 1)

    def word(self, node, st, ctx, d, assignment: bool = False, literal: bool = False) -> Word:
        """The value of a word node (None when it expands), walking what runs
        inside it. ``literal``: a command word, where even a variable the line
        set itself counts as an expansion."""
        self.tick()
        text = self.s(node)
        parts: list[tuple[str, bool, bool, str | None]] = []  # (value, quoted, unquoted glob, raw if unquoted)
        dynamic = self.word_parts(node, st, ctx, d, parts, literal)
        if dynamic:
            return Word(None, text)
        if len(parts) > 1 or (parts and parts[0][3] is not None):
            shape = "".join(raw if raw is not None else "Q" for _v, _q, _g, raw in parts)
            if _braces(shape):  # {a,b} and {1..3} make several words
                return Word(None, text)
        glob = False
        value_parts = []
        for i, (piece, quoted, globbed, _raw) in enumerate(parts):
            if not quoted:
                if i == 0 and "~" in piece:
                    head, value = "", piece
                    eq = piece.find("=")
                    if not assignment and eq > 0 and piece[:eq].isidentifier():  # dd if=~/x: bash expands it
                        head, value = piece[:eq + 1], piece[eq + 1:]
                    if assignment or head:
                        value = ":".join(self.tilde(p, st) or p if p.startswith("~") else p for p in value.split(":"))
                    elif value.startswith("~"):
                        value = self.tilde(value, st)
                        if value is None:
                            return Word(None, text)
                    piece = head + value
                glob = glob or globbed
            value_parts.append(piece)
        return Word("".join(value_parts), text, glob)

    def tilde(self, piece: str, st: _State) -> str | None:
        head, sep, tail = piece.partition("/")
        if head == "~":
            base = st.vars.get("HOME", self.home)
        elif head == "~+":
            base = st.cwd
        else:  # ~user, ~-: not known here
            return None
        if base is None:
            return None
        return base + sep + tail

    def word_parts(self, node, st, ctx, d, parts: list, literal: bool = False) -> bool:
        """Append (value, quoted, glob, raw) pieces of ``node``; True when it expands."""
        t = node.type
        if t == "word":
            parts.append(_piece(self.s(node)))
            return False
        if t == "number":
            raw = self.s(node)
            parts.append((raw, False, False, raw))
            return False
        if t == "raw_string":
            parts.append((self.s(node)[1:-1], True, False, None))
            return False
        if t == "string":
            return self.dq(node, st, ctx, d, parts, literal)
        if t == "ansi_c_string":
            parts.append((_ansi_c(self.s(node)[2:-1]), True, False, None))
            return False
        if t == "translated_string":
            dyn = False
            for c in node.named_children:
                dyn = self.word_parts(c, st, ctx, d, parts, literal) or dyn
            return dyn
        if t == "concatenation":
            dyn = False
            pos = node.start_byte
            for c in node.children:
                if c.start_byte > pos:  # text the grammar left between parts
                    parts.append(_piece(self.span(pos, c.start_byte)))
                pos = c.end_byte
                if not c.is_named:
                    if c.type == "$":
                        dyn = True
                    else:
                        parts.append(_piece(self.s(c)))
                    continue
                dyn = self.word_parts(c, st, ctx, d, parts, literal) or dyn
            return dyn
        if t == "simple_expansion" or t == "expansion":
            value = None if literal else self.variable(node, st)
            if value is not None:
                parts.append((value, True, False, None))
                return False
            self.scan(node, st, ctx, d)
            return True
        if t == "command_substitution":
            if not literal and self.is_pwd(node) and st.cwd is not None:
                parts.append((st.cwd, True, False, None))
                return False
            self.substitution(node, st, ctx, d)
            return True
        if t == "process_substitution":
            self.substitution(node, st, ctx, d)
            return True
        self.scan(node, st, ctx, d)  # arithmetic, brace expressions, extglobs...: unknown value
        return True

    def dq(self, node, st, ctx, d, parts, literal: bool = False) -> bool:
        dyn = False
        pos = node.start_byte + 1
        end = node.end_byte - 1
        for c in node.children:
            if not c.is_named:
                continue
            if c.start_byte > pos:
                parts.append((_dq_unescape(self.span(pos, c.start_byte)), True, False, None))
            pos = max(pos, c.end_byte)
            ct = c.type
            if ct == "string_content":
                parts.append((_dq_unescape(self.s(c)), True, False, None))
            elif ct in ("simple_expansion", "expansion"):
                value = None if literal else self.variable(c, st)
                if value is None:
                    self.scan(c, st, ctx, d)
                    dyn = True
                else:
                    parts.append((value, True, False, None))
            elif ct == "command_substitution" and not literal and self.is_pwd(c) and st.cwd is not None:
                parts.append((st.cwd, True, False, None))
            else:
                self.scan(c, st, ctx, d)
                dyn = True
        if end > pos:
            parts.append((_dq_unescape(self.span(pos, end)), True, False, None))
        return dyn

    def variable(self, node, st: _State) -> str | None:
        """$NAME / ${NAME} with a value the line set to a literal (or HOME, PWD...)."""
        named = node.named_children
        if len(named) != 1 or named[0].type != "variable_name":
            return None
        if node.type == "expansion":
            if sum(1 for c in node.children if not c.is_named) != 2:  # ${ and }: nothing else
                return None
        return st.vars.get(self.s(named[0]))

    def is_pwd(self, node) -> bool:
        named = node.named_children
        if len(named) != 1 or named[0].type != "command":
            return False
        return self.s(named[0]).strip() == "pwd"


def _set_var(st: _State, name: str, value: Word) -> None:
    if value.value is not None and not value.glob:
        st.vars[name] = value.value
    else:
        st.vars.pop(name, None)


def _short(text: str, width: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _piece(raw: str) -> tuple[str, bool, bool, str]:
    value, glob = _unquoted(raw)
    return value, False, glob, raw


def _unquoted(raw: str) -> tuple[str, bool]:
    """An unquoted word's value (backslashes removed), and whether an
    unescaped glob character makes it a pattern."""
    if "\\" not in raw:
        return raw, not _GLOB.isdisjoint(raw)
    out = []
    glob = False
    i = 0
    n = len(raw)
    while i < n:
        ch = raw[i]
        if ch == "\\":
            if i + 1 < n:
                if raw[i + 1] != "\n":
                    out.append(raw[i + 1])
                i += 2
                continue
            out.append(ch)
        else:
            if ch in _GLOB:
                glob = True
            out.append(ch)
        i += 1
    return "".join(out), glob


def _braces(raw: str) -> bool:
    """An unquoted ``{a,b}`` or ``{1..3}`` expands to several words."""
    if "{" not in raw or ("," not in raw and ".." not in raw):
        return False
    i = raw.find("{")
    while i != -1:
        if i == 0 or raw[i - 1] != "\\":
            close = raw.find("}", i)
            if close != -1:
                inner = raw[i + 1:close]
                if "," in inner or ".." in inner:
                    return True
        i = raw.find("{", i + 1)
    return False


def _dq_unescape(raw: str) -> str:
    """Inside double quotes a backslash escapes only $ ` \" \\ and newline."""
    if "\\" not in raw:
        return raw
    out = []
    i = 0
    n = len(raw)
    while i < n:
        ch = raw[i]
        if ch == "\\" and i + 1 < n and raw[i + 1] in '$`"\\\n':
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _ansi_c(raw: str) -> str:
    r"""$'...': \n, \t, \xHH, \uHHHH, \NNN (octal), \cX and the rest."""
    if "\\" not in raw:
        return raw
    out = []
    i = 0
    n = len(raw)
    while i < n:
        ch = raw[i]
        if ch != "\\" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        e = raw[i + 1]
        i += 2
        if e in _ANSI:
            out.append(_ANSI[e])
        elif e in "01234567":
            j = i - 1
            k = j
            while k < n and k < j + 3 and raw[k] in "01234567":
                k += 1
            out.append(chr(int(raw[j:k], 8) & 0xFF))
            i = k
        elif e in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[e]
            k = i
            while k < n and k < i + width and raw[k] in "0123456789abcdefABCDEF":
                k += 1
            if k == i:
                out.append("\\" + e)
            else:
                try:
                    out.append(chr(int(raw[i:k], 16)))
                except (ValueError, OverflowError):
                    out.append("\ufffd")
                i = k
        elif e == "c" and i < n:
            out.append(chr(ord(raw[i]) & 0x1F))
            i += 1
        else:
            out.append("\\" + e)
    return "".join(out)


def _first_error(node):
    """The first ERROR or MISSING node under ``node`` (iteratively)."""
    cursor = node.walk()
    while True:
        n = cursor.node
        if n.is_error or n.is_missing:
            return n
        if n.has_error and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return None


def parse(text: str, *, cwd: str | None = None, home: str | None = None, project: str | None = None,
          deadline: float | None = None) -> Script:
    """What ``text`` runs (see the module docstring). ``cwd``: where it starts
    (None: unknown); ``home``: what ``~`` and ``$HOME`` are; ``project``: the
    value of ``$CLAUDE_PROJECT_DIR``. ``deadline`` is a ``time.monotonic()``."""
    src = text.encode("utf-8", "surrogateescape")
    tree = parse_tree(src, deadline)
    root = tree.root_node
    if root.descendant_count > MAX_TREE:
        raise TooLarge(f"{root.descendant_count:,} syntax nodes (more than {MAX_TREE:,}): too large to check")
    if root.has_error:
        bad = _first_error(root)
        if bad is None:
            where = "somewhere"
        else:
            line, col = bad.start_point
            piece = src[bad.start_byte:bad.start_byte + 40].decode("utf-8", "replace")
            what = f"missing {bad.type!r}" if bad.is_missing else f"unexpected {' '.join(piece.split())[:40]!r}"
            where = f"line {line + 1}, column {col + 1}: {what}"
        raise DoesNotParse(f"does not parse as a shell command ({where})")
    home = home or os.path.expanduser("~")
    script = Script(text)
    vars_ = {"HOME": home}
    if cwd is not None:
        vars_["PWD"] = cwd
    if project:
        vars_["CLAUDE_PROJECT_DIR"] = project
    walker = _Walker(src, text, script, home, deadline)
    walker.seq(root.children, _State(cwd, vars_), "", 0)
    return script

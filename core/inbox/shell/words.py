"""Walking words: their literal value when known, the substitutions that run
inside them, tildes and variables set earlier on the line."""

from __future__ import annotations

from core.inbox.shell.model import Word
from core.inbox.shell.quoting import ansi_c, dq_unescape, has_braces, plain_piece
from core.inbox.shell.state import State


class Words:
    """The walker's words (mixed into ``walker._Walker``)."""

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
            if has_braces(shape):  # {a,b} and {1..3} make several words
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

    def tilde(self, piece: str, st: State) -> str | None:
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
            parts.append(plain_piece(self.s(node)))
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
            parts.append((ansi_c(self.s(node)[2:-1]), True, False, None))
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
                    parts.append(plain_piece(self.span(pos, c.start_byte)))
                pos = c.end_byte
                if not c.is_named:
                    if c.type == "$":
                        dyn = True
                    else:
                        parts.append(plain_piece(self.s(c)))
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
                parts.append((dq_unescape(self.span(pos, c.start_byte)), True, False, None))
            pos = max(pos, c.end_byte)
            ct = c.type
            if ct == "string_content":
                parts.append((dq_unescape(self.s(c)), True, False, None))
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
            parts.append((dq_unescape(self.span(pos, end)), True, False, None))
        return dyn

    def variable(self, node, st: State) -> str | None:
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

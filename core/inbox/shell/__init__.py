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

from core.inbox.shell.model import (MAX_DEPTH, MAX_NODES, MAX_TREE, Command, DoesNotParse, Feed, OutOfTime, Redirect,
                                    Script, TooLarge, Word)
from core.inbox.shell.treesitter import parse_tree, parser
from core.inbox.shell.walker import parse

__all__ = ["MAX_DEPTH", "MAX_NODES", "MAX_TREE", "Command", "DoesNotParse", "Feed", "OutOfTime", "Redirect", "Script",
           "TooLarge", "Word", "parse", "parse_tree", "parser"]

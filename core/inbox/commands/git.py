"""git: reading and everyday writing pass; history rewrites, force-pushes,
discarding work, config writes and hooks are held (one checker per subcommand)."""

from __future__ import annotations

import re

from core.inbox.commands.options import HIGH, MEDIUM, has, opts, values, word_like
from core.inbox.commands.writers import join_word


GIT_SAFE_CONFIG = ("color.", "user.name", "user.email", "advice.", "init.defaultbranch", "commit.gpgsign",
                   "core.quotepath", "core.autocrlf", "pull.rebase", "push.autosetupremote", "merge.conflictstyle",
                   "log.", "format.pretty", "safe.directory", "gc.auto", "fetch.prune", "rebase.autostash",
                   "diff.noprefix", "diff.renames", "column.ui", "tag.sort", "branch.sort", "i18n.")
GIT_READ = {"status", "diff", "log", "show", "blame", "annotate", "shortlog", "describe", "rev-parse", "rev-list",
            "ls-files", "ls-tree", "ls-remote", "cat-file", "grep", "show-ref", "for-each-ref", "merge-base", "name-rev",
            "whatchanged", "range-diff", "cherry", "count-objects", "fsck", "verify-commit", "verify-tag",
            "check-ignore", "check-attr", "check-ref-format", "var", "help", "version", "diff-tree", "diff-files",
            "diff-index", "show-branch", "reflog", "config", "remote", "branch", "tag", "stash", "worktree",
            "submodule", "notes", "archive", "bundle", "symbolic-ref", "hash-object", "get-tar-commit-id",
            "verify-pack", "show-index", "lfs"}
GIT_WRITE = {"add", "commit", "mv", "rm", "checkout", "switch", "restore", "reset", "merge", "rebase", "cherry-pick",
             "revert", "pull", "fetch", "init", "clone", "am", "apply", "format-patch", "bisect", "gc", "commit-tree",
             "update-index", "sparse-checkout", "push", "clean", "mergetool", "maintenance", "stage", "prune",
             "repack", "pack-refs", "read-tree", "write-tree", "mktree", "mktag", "rerere", "citool", "replace",
             "filter-branch", "filter-repo", "update-ref", "send-email", "daemon", "credential", "difftool",
             "instaweb", "fast-import", "fast-export", "request-pull", "svn", "p4", "cvsimport", "archimport",
             "quiltimport", "http-backend", "upload-pack", "receive-pack", "shell", "imap-send", "credential-store",
             "credential-cache", "range-diff"}
GIT_HELD = {"filter-branch": "rewrites the whole history", "filter-repo": "rewrites the whole history",
            "update-ref": "moves or deletes refs directly", "send-email": "sends patches by mail",
            "daemon": "serves the repository", "credential": "reads stored credentials",
            "credential-store": "reads stored credentials", "credential-cache": "reads stored credentials",
            "mergetool": "runs a merge tool", "difftool": "runs a diff tool", "instaweb": "starts a web server",
            "replace": "replaces objects", "prune": "deletes unreachable objects",
            "fast-import": "writes objects and refs directly", "http-backend": "serves the repository",
            "upload-pack": "serves the repository", "receive-pack": "serves the repository", "shell": "a git shell",
            "imap-send": "sends mail", "svn": "talks to another VCS", "p4": "talks to another VCS",
            "cvsimport": "talks to another VCS", "archimport": "talks to another VCS", "citool": "a GUI",
            "maintenance": "registers background jobs", "request-pull": "sends a request",
            "quiltimport": "applies a patch series"}
GIT_GLOBAL_TAKES = ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env",
                    "--exec-path", "--list-cmds", "--attr-source")


def c_git(cmd, name, ctx):
    args = list(cmd.args)
    cwd_word = None
    while args and args[0].value is not None and args[0].value.startswith("-"):
        v = args.pop(0).value
        key, eq, val = v.partition("=")
        if key in ("--version", "--help", "-v", "-h"):
            return
        if key in GIT_GLOBAL_TAKES:
            value = val if eq else (args.pop(0).value if args else None)
            if value is None:
                ctx.hold("git-dynamic", HIGH, f"git {key} with a value only known when it runs", cmd)
                return
            if key == "-C":
                here = word_like(cmd.name, value)
                cwd_word = here if cwd_word is None else join_word(cwd_word, here)
            elif key == "-c":
                if not value.lower().startswith(GIT_SAFE_CONFIG):
                    ctx.hold("git-config", HIGH, f"git -c {value.split('=')[0]} can make git run a command", cmd)
            elif key in ("--git-dir", "--work-tree"):
                ctx.write(word_like(cmd.name, value), cmd)
            elif key in ("--config-env", "--exec-path", "--super-prefix", "--list-cmds"):
                ctx.hold("git-config", HIGH, f"git {key} changes what git runs", cmd)
    if cwd_word is not None:
        cmd = with_cwd(cmd, cwd_word, ctx)
        if cmd is None:
            return
    if not args:
        return
    sub = args[0].value
    rest = args[1:]
    if sub is None:
        ctx.hold("dynamic-command", HIGH, "git's subcommand is only known when it runs", cmd)
        return
    if sub in GIT_HELD:
        ctx.hold(f"git-{sub}", HIGH, f"git {sub} {GIT_HELD[sub]}", cmd)
        return
    if sub not in GIT_READ and sub not in GIT_WRITE:
        ctx.hold("unknown-command", MEDIUM, f"git {sub} is not on the gate's allow-list (an alias may run anything)",
                 cmd)
        return
    if cmd.cwd is not None:
        ctx.read(word_like(cmd.name, "."), cmd, listing=True)  # the repository itself must not be a sensitive place
    check = GIT_SUB.get(sub)
    if check is not None:
        check(cmd, sub, rest, ctx)
    if sub in GIT_WRITE:
        ctx.in_project(cmd, f"git {sub} writes the repository in the current directory")
    ctx.net(rest, cmd)  # git commit -F ~/.ssh/id_rsa, git diff --no-index ~/.aws/credentials ...


def with_cwd(cmd, where, ctx):
    """The command as if run in ``where`` (git -C, make -C)."""
    if where.value is None:
        ctx.hold("unknown-path", MEDIUM, f"-C {where.text[:60]}: a directory only known when it runs", cmd)
        return None
    path = ctx.path_of(where, cmd.cwd)
    sub = type(cmd)(cmd.name, cmd.text, path, cmd.context)
    sub.args = cmd.args
    sub.stdin = cmd.stdin
    return sub


def _git_push(cmd, sub, rest, ctx):
    options, pos = opts(rest, "oc", ("--repo", "--receive-pack", "--exec", "--push-option", "--recurse-submodules",
                                     "--signed", "--force-with-lease"))
    for o, v in options:
        if o in ("-f", "--force", "--force-with-lease", "--force-if-includes"):
            ctx.hold("git-push-force", HIGH, "git push --force rewrites the remote's history", cmd)
        elif o == "--mirror":
            ctx.hold("git-push-force", HIGH, "git push --mirror overwrites and deletes every ref on the remote", cmd)
        elif o in ("-d", "--delete"):
            ctx.hold("git-push-delete", HIGH, "git push --delete deletes refs on the remote", cmd)
        elif o == "--prune":
            ctx.hold("git-push-delete", HIGH, "git push --prune deletes refs on the remote", cmd)
        elif o in ("--receive-pack", "--exec"):
            ctx.hold("git-config", HIGH, f"git push {o} runs a command on the remote", cmd)
        elif o == "--repo" and v is not None:
            pos.insert(0, v)
    if pos:
        remote = pos[0]
        if remote.value is None:
            ctx.hold("git-push-dynamic", HIGH, "git push to a remote only known when it runs", cmd)
        elif not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", remote.value):
            ctx.hold("git-push-url", HIGH, f"git push to {remote.value[:80]} (a URL or path, not a named remote): "
                                           "the code leaves for a place the gate cannot vet", cmd)
    for ref in pos[1:]:
        v = ref.value
        if v is None:
            ctx.hold("git-push-dynamic", HIGH, "git push of a refspec only known when it runs", cmd)
        elif v.startswith("+"):
            ctx.hold("git-push-force", HIGH, f"git push {v}: a + refspec forces the update", cmd)
        elif v.startswith(":") or v.endswith(":"):
            ctx.hold("git-push-delete", HIGH, f"git push {v}: an empty source deletes the remote ref", cmd)


def _git_reset(cmd, sub, rest, ctx):
    for w in rest:
        if w.value in ("--hard", "--merge", "--keep"):
            ctx.hold("git-reset-hard", HIGH, f"git reset {w.value} throws away uncommitted work", cmd)


def _git_clean(cmd, sub, rest, ctx):
    options, _pos = opts(rest, "eX", ("--exclude",))
    if not has(options, "-n", "--dry-run"):
        ctx.hold("git-clean", HIGH, "git clean deletes untracked files (only -n, a dry run, passes)", cmd)


def _git_checkout(cmd, sub, rest, ctx):
    options, pos = opts(rest, "bB", ("--orphan", "--conflict", "--pathspec-from-file"))
    if any(w.value == "--" for w in rest):
        ctx.hold("git-discard", HIGH, "git checkout -- <paths> throws away uncommitted changes to them", cmd)
        return
    for o, _v in options:
        if o in ("-f", "--force", "--ours", "--theirs", "-p", "--patch", "-m", "--merge", "--pathspec-from-file",
                 "--overwrite-ignore"):
            ctx.hold("git-discard", HIGH, f"git checkout {o} can throw away uncommitted work", cmd)
            return
        if o == "-B":
            ctx.hold("git-discard", HIGH, "git checkout -B resets an existing branch", cmd)
            return
    creating = has(options, "-b", "--orphan")
    if creating:
        return
    if len(pos) > 1:
        ctx.hold("git-discard", HIGH, "git checkout <commit> <paths> overwrites uncommitted changes to those paths",
                 cmd)
        return
    for w in pos:
        if w.value is None:
            ctx.hold("git-discard", HIGH, "git checkout of something only known when it runs (a path would lose "
                                          "its changes)", cmd)
        elif w.value == "." or w.glob or ctx.exists(w, cmd):
            ctx.hold("git-discard", HIGH, f"git checkout {w.value} restores files, throwing away uncommitted changes",
                     cmd)


def _git_switch(cmd, sub, rest, ctx):
    for w in rest:
        if w.value in ("-f", "--force", "--discard-changes", "-C", "--force-create"):
            ctx.hold("git-discard", HIGH, f"git switch {w.value} can throw away work", cmd)


def _git_restore(cmd, sub, rest, ctx):
    options, _pos = opts(rest, "sS", ("--source", "--pathspec-from-file"))
    staged = has(options, "-S", "--staged")
    worktree = has(options, "-W", "--worktree")
    if not staged or worktree:
        ctx.hold("git-discard", HIGH, "git restore throws away uncommitted changes (only --staged passes)", cmd)


def _git_stash(cmd, sub, rest, ctx):
    pos = [w for w in rest if w.value is None or not w.value.startswith("-")]
    if pos and pos[0].value in ("drop", "clear"):
        ctx.hold("git-stash-drop", HIGH, f"git stash {pos[0].value} deletes stashed work", cmd)
    elif pos and pos[0].value is None:
        ctx.hold("git-stash-drop", HIGH, "git stash with a subcommand only known when it runs", cmd)


def _git_branch(cmd, sub, rest, ctx):
    options, _pos = opts(rest, "ut", ("--set-upstream-to", "--track", "--contains", "--no-contains", "--merged",
                                      "--no-merged", "--points-at", "--format", "--sort", "--column"))
    forced = has(options, "-f", "--force")
    if has(options, "-D") or (has(options, "-d", "--delete") and forced):
        ctx.hold("git-branch-delete", HIGH, "git branch -D deletes a branch even if it is not merged", cmd)
    elif has(options, "-M", "-C") or (forced and not has(options, "-d", "--delete")):
        ctx.hold("git-branch-delete", HIGH, "git branch -f/-M/-C overwrites an existing branch", cmd)


def _git_tag(cmd, sub, rest, ctx):
    options, _pos = opts(rest, "mFun", ("--message", "--file", "--local-user", "--sort", "--contains", "--points-at",
                                        "--format", "--merged", "--no-merged", "--cleanup", "--column"))
    if has(options, "-d", "--delete"):
        ctx.hold("git-tag-delete", HIGH, "git tag -d deletes a tag", cmd)
    if has(options, "-f", "--force"):
        ctx.hold("git-tag-delete", HIGH, "git tag -f moves an existing tag", cmd)
    for v in values(options, "-F", "--file"):
        ctx.read(v, cmd)


def _git_reflog(cmd, sub, rest, ctx):
    if rest and rest[0].value in ("expire", "delete"):
        ctx.hold("git-reflog-expire", HIGH, f"git reflog {rest[0].value} deletes the record that recovers lost work",
                 cmd)


GIT_CONFIG_READ = ("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--get-color",
                   "--get-colorbool", "--show-origin", "--show-scope", "--name-only")


def _git_config(cmd, sub, rest, ctx):
    options, pos = opts(rest, "f", ("--file", "--blob", "--type", "--default", "--comment", "--value"))
    for v in values(options, "-f", "--file"):
        ctx.read(v, cmd)
    if pos and pos[0].value in ("get", "list"):
        return
    if any(o in GIT_CONFIG_READ for o, _v in options):
        return
    if len(pos) == 1 and not any(o in ("--unset", "--unset-all", "--add", "--replace-all", "--rename-section",
                                         "--remove-section", "-e", "--edit") for o, _v in options):
        return  # git config KEY: a read
    ctx.hold("git-config", HIGH, "git config writes the repository's or the user's configuration "
                                 "(aliases, hooksPath, sshCommand... run commands)", cmd)


def _git_remote(cmd, sub, rest, ctx):
    pos = [w for w in rest if w.value is None or not w.value.startswith("-")]
    if not pos or pos[0].value in ("show", "get-url", "update"):
        return
    ctx.hold("git-remote", HIGH, f"git remote {pos[0].value or '...'} changes where the code is pushed and fetched",
             cmd)


def _git_worktree(cmd, sub, rest, ctx):
    pos = [w for w in rest if w.value is None or not w.value.startswith("-")]
    if not pos or pos[0].value in ("list", "lock", "unlock", "repair"):
        return
    if pos[0].value == "add":
        if len(pos) > 1:
            ctx.write(pos[1], cmd)
        return
    ctx.hold("git-worktree", HIGH, f"git worktree {pos[0].value or '...'} deletes or moves a working tree", cmd)


def _git_submodule(cmd, sub, rest, ctx):
    pos = [w for w in rest if w.value is None or not w.value.startswith("-")]
    if pos and pos[0].value in ("foreach", "deinit"):
        ctx.hold("git-submodule", HIGH, f"git submodule {pos[0].value} "
                                        f"{'runs a command in each' if pos[0].value == 'foreach' else 'deletes a working tree'}",
                 cmd)


def _git_bisect(cmd, sub, rest, ctx):
    if rest and rest[0].value == "run":
        ctx.hold("git-bisect-run", HIGH, "git bisect run runs a command", cmd)


def _git_rebase(cmd, sub, rest, ctx):
    for w in rest:
        if w.value is not None and (w.value in ("-x", "--exec") or w.value.startswith("--exec=")):
            ctx.hold("git-rebase-exec", HIGH, "git rebase --exec runs a command", cmd)


def _git_rm(cmd, sub, rest, ctx):
    options, _pos = opts(rest, "", ("--pathspec-from-file",))
    if has(options, "-f", "--force"):
        ctx.hold("git-rm-force", HIGH, "git rm -f deletes files with uncommitted changes", cmd)


def _git_fetch(cmd, sub, rest, ctx):
    for w in rest:
        v = w.value or ""
        if v.startswith(("--upload-pack", "-u")) and sub in ("fetch", "pull", "clone", "ls-remote"):
            ctx.hold("git-config", HIGH, f"git {sub} --upload-pack runs a command", cmd)
        elif v.startswith(("--config", "-c", "--template", "--recurse-submodules-default")) and sub == "clone":
            ctx.hold("git-config", HIGH, f"git clone {v.split('=')[0]} can make git run a command", cmd)
    urls = [w for w in rest if w.value is not None and ("://" in w.value or "::" in w.value)]
    for w in urls:
        if w.value.startswith("ext::") or "::" in w.value.split("://")[0]:
            ctx.hold("git-ext-url", HIGH, f"git {sub} {w.value[:60]}: a transport that runs a command", cmd)
        else:
            ctx.url(w, cmd)
    if sub == "clone":
        _options, pos = opts(rest, "obujc", ("--origin", "--branch", "--upload-pack", "--reference", "--depth",
                                             "--separate-git-dir", "--config", "--template", "--jobs", "--filter",
                                             "--shallow-since", "--shallow-exclude", "--bundle-uri"))
        if len(pos) > 1:
            ctx.write(pos[1], cmd)


def _git_output(cmd, sub, rest, ctx):
    options, _pos = opts(rest, "oO", ("--output", "--output-directory"))
    for o, v in options:
        if v is None:
            continue
        if o in ("--output", "--output-directory") or (o == "-o" and sub in ("format-patch", "archive")):
            ctx.write(v, cmd)
        elif o == "-O" and sub == "grep":
            ctx.hold("git-grep-pager", HIGH, "git grep -O opens files with a command", cmd)
    if sub == "bundle" and rest and rest[0].value == "create" and len(rest) > 1:
        ctx.write(rest[1], cmd)
    if sub == "grep":
        for w in rest:
            if w.value is not None and w.value.startswith("--open-files-in-pager"):
                ctx.hold("git-grep-pager", HIGH, "git grep -O opens files with a command", cmd)


def _git_init(cmd, sub, rest, ctx):
    options, pos = opts(rest, "", ("--template", "--separate-git-dir", "--object-format", "--initial-branch",
                                   "--shared", "-b"))
    if has(options, "--template"):
        ctx.hold("git-config", HIGH, "git init --template copies hooks that then run", cmd)
    for w in pos:
        ctx.write(w, cmd)


GIT_SUB = {"push": _git_push, "reset": _git_reset, "clean": _git_clean, "checkout": _git_checkout,
           "switch": _git_switch, "restore": _git_restore, "stash": _git_stash, "branch": _git_branch,
           "tag": _git_tag, "reflog": _git_reflog, "config": _git_config, "remote": _git_remote,
           "worktree": _git_worktree, "submodule": _git_submodule, "bisect": _git_bisect, "rebase": _git_rebase,
           "rm": _git_rm, "fetch": _git_fetch, "pull": _git_fetch, "clone": _git_fetch, "ls-remote": _git_fetch,
           "diff": _git_output, "log": _git_output, "show": _git_output, "format-patch": _git_output,
           "archive": _git_output, "bundle": _git_output, "grep": _git_output, "init": _git_init}

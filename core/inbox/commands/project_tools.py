"""Package managers and build tools (npm, pip, uv, cargo, go, make, formatters,
compilers...) and their subcommand tables: publishing and global installs held."""

from __future__ import annotations

from core.inbox.commands.git import with_cwd
from core.inbox.commands.interpreters import script_file
from core.inbox.commands.kinds import subcommands
from core.inbox.commands.options import HIGH, MEDIUM, has, opts, sub_command, values, word_like
from core.inbox.commands.wrappers import c_runner


PUBLISH = "publishes a package (data leaves for a registry)"


def _global_install(cmd, name, ctx):
    for w in cmd.args:
        if w.value in ("-g", "--global", "--location=global") or (w.value or "").startswith("--prefix"):
            ctx.hold("global-install", MEDIUM, f"{name} {w.value} installs outside the project", cmd)


def c_npm(cmd, name, ctx):
    held = {"publish": PUBLISH, "unpublish": "removes a published package", "deprecate": "changes a published package",
            "dist-tag": "changes a published package's tags", "owner": "changes who owns a package",
            "access": "changes a package's access", "team": "changes an organisation", "token": "manages auth tokens",
            "adduser": "logs in", "login": "logs in", "logout": "logs out", "profile": "changes the account",
            "hook": "manages registry hooks", "org": "changes an organisation", "star": "changes the registry",
            "unstar": "changes the registry", "link": "links into the global install", "ln": "links globally",
            "edit": "opens an editor", "set-script": "edits package.json scripts"}
    allowed = {"install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal", "add", "ci",
               "clean-install", "install-clean", "uninstall", "remove", "rm", "r", "un", "unlink", "update", "up",
               "upgrade", "udpate", "test", "t", "tst", "run", "run-script", "rum", "urn", "start", "stop", "restart",
               "ls", "list", "ll", "la", "outdated", "audit", "view", "info", "show", "v", "search", "s", "se",
               "find", "init", "create", "innit", "pack", "explain", "why", "doctor", "prefix", "root", "bin",
               "version", "exec", "x", "fund", "help", "dedupe", "ddp", "prune", "rebuild", "rb", "cache",
               "pkg", "query", "sbom", "install-test", "it", "install-ci-test", "cit", "config", "c", "get",
               "completion", "diff", "ping", "whoami", "repo", "docs", "bugs", "home", "shrinkwrap", "fix"}
    options, pos = opts(cmd.args, "wC", ("--workspace", "--prefix", "--registry", "--cache", "--userconfig",
                                        "--globalconfig", "--loglevel", "--tag", "--access", "--otp", "--omit",
                                        "--include", "--before", "--script-shell"))
    for o, _v in options:
        if o in ("--script-shell", "--userconfig", "--globalconfig", "--node-options"):
            ctx.hold("npm-config", HIGH, f"npm {o} changes what npm runs", cmd)
    if not pos:
        return
    sub = pos[0].value
    if sub is None:
        ctx.hold("dynamic-command", HIGH, "npm's subcommand is only known when it runs", cmd)
        return
    if sub in held:
        ctx.hold(f"npm-{sub}", HIGH, f"npm {sub} {held[sub]}", cmd)
        return
    if sub not in allowed:
        ctx.hold("unknown-command", MEDIUM, f"npm {sub} is not on the gate's allow-list", cmd)
        return
    if sub in ("config", "c") and len(pos) > 1 and pos[1].value not in ("get", "list", "ls"):
        ctx.hold("npm-config", HIGH, "npm config set/delete/edit changes npm's configuration", cmd)
        return
    if sub in ("exec", "x"):
        return c_runner(2)(cmd, name, ctx)
    _global_install(cmd, name, ctx)
    ctx.in_project(cmd)
    ctx.net(cmd.args, cmd)


def c_js_pm(cmd, name, ctx):
    """pnpm, yarn, bun: the same rules as npm, their own words."""
    held = {"publish": PUBLISH, "unpublish": "removes a published package", "login": "logs in", "logout": "logs out",
            "owner": "changes who owns a package", "deprecate": "changes a published package", "global":
                "installs outside the project", "link": "links into the global install", "npm": "",
            "dist-tag": "changes a published package's tags", "token": "manages tokens"}
    options, pos = opts(cmd.args, "C", ("--filter", "--dir", "--cwd", "--workspace"))
    if name == "bun":
        for o, _v in options:
            if o in ("-e", "--eval", "-p", "--print"):
                ctx.hold("interpreter-c", HIGH, f"bun {o} runs the program given on the command line", cmd)
                return
    if not pos:
        if name == "bun" and not options:
            ctx.hold("interpreter-stdin", HIGH, "bun with no script", cmd)
            return
        ctx.in_project(cmd)
        return
    sub = pos[0].value
    if sub is None:
        ctx.hold("dynamic-command", HIGH, f"{name}'s subcommand is only known when it runs", cmd)
        return
    if sub == "npm" and len(pos) > 1 and pos[1].value in ("publish", "login", "logout"):
        ctx.hold(f"{name}-publish", HIGH, f"{name} npm {pos[1].value} {PUBLISH}", cmd)
        return
    if sub in held and held[sub]:
        ctx.hold(f"{name}-{sub}", HIGH, f"{name} {sub} {held[sub]}", cmd)
        return
    if sub in ("dlx", "x", "exec"):
        return c_runner(2)(cmd, name, ctx)
    if sub == "config" and len(pos) > 1 and pos[1].value not in ("get", "list"):
        ctx.hold(f"{name}-config", HIGH, f"{name} config set changes its configuration", cmd)
        return
    if name == "bun" and sub not in BUN_SUBS:
        script_file(cmd, name, pos[0], ctx)  # bun FILE runs it
    _global_install(cmd, name, ctx)
    ctx.in_project(cmd)
    ctx.net(cmd.args, cmd)


BUN_SUBS = {"install", "i", "add", "a", "remove", "rm", "update", "run", "test", "build", "create", "init", "pm",
            "outdated", "upgrade", "patch", "why", "audit", "info", "c"}


def c_pip(cmd, name, ctx):
    options, pos = opts(cmd.args, "rcetid", ("--requirement", "--constraint", "--editable", "--target", "--index-url",
                                             "--extra-index-url", "--find-links", "--prefix", "--root", "--src",
                                             "--python", "--cache-dir", "--log", "--dest", "--report"))
    if not pos:
        return
    sub = pos[0].value
    allowed = {"install", "uninstall", "download", "list", "show", "freeze", "check", "wheel", "hash", "cache",
               "index", "inspect", "debug", "search", "help", "config", "completion", "lock"}
    if sub is None or sub not in allowed:
        ctx.hold("unknown-command", MEDIUM, f"{name} {sub or '...'} is not on the gate's allow-list", cmd)
        return
    if sub == "config" and (len(pos) < 2 or pos[1].value not in ("get", "list", "debug")):
        ctx.hold("pip-config", HIGH, "pip config set/edit changes where packages come from", cmd)
        return
    for v in values(options, "-r", "--requirement", "-c", "--constraint"):
        ctx.read(v, cmd)
    for v in values(options, "-t", "--target", "--prefix", "--root", "-d", "--dest", "--log", "--report"):
        if v.value != "-":
            ctx.write(v, cmd)
    ctx.net(cmd.args, cmd)


def c_uv(cmd, name, ctx):
    options, pos = opts(cmd.args, "p", ("--directory", "--project", "--python", "--cache-dir", "--config-file",
                                        "--color"))
    if not pos:
        return
    sub = pos[0].value
    if sub == "run":
        return c_runner(2)(cmd, name, ctx)
    if sub == "pip":
        rest = cmd.args[cmd.args.index(pos[0]) + 1:]
        return c_pip(sub_command(cmd, [word_like(cmd.name, "pip")] + rest), "uv pip", ctx)
    if sub == "tool":
        if len(pos) > 1 and pos[1].value == "run":
            return c_runner(3)(cmd, name, ctx)
        if len(pos) > 1 and pos[1].value in ("list", "dir"):
            return
        ctx.hold("global-install", MEDIUM, "uv tool install puts programs outside the project", cmd)
        return
    if sub == "publish":
        ctx.hold("uv-publish", HIGH, f"uv publish {PUBLISH}", cmd)
        return
    if sub == "self":
        ctx.hold("global-install", MEDIUM, "uv self update replaces uv", cmd)
        return
    if sub not in ("sync", "lock", "add", "remove", "venv", "python", "init", "build", "tree", "export", "cache",
                   "version", "help", "generate-shell-completion", "format"):
        ctx.hold("unknown-command", MEDIUM, f"uv {sub or '...'} is not on the gate's allow-list", cmd)
        return
    if sub != "python" and sub != "cache":
        ctx.in_project(cmd)
    ctx.net(cmd.args, cmd)


def c_uvx(cmd, name, ctx):
    c_runner()(cmd, name, ctx)


def c_cargo(cmd, name, ctx):
    held = {"publish": PUBLISH, "yank": "changes a published crate", "owner": "changes who owns a crate",
            "login": "logs in", "logout": "logs out", "install": "puts programs on your PATH, outside the project",
            "uninstall": "removes installed programs"}
    allowed = {"build", "b", "check", "c", "test", "t", "run", "r", "bench", "doc", "d", "fmt", "clippy", "new",
               "init", "add", "remove", "rm", "update", "tree", "metadata", "search", "clean", "fix", "vendor",
               "generate-lockfile", "locate-project", "pkgid", "verify-project", "version", "help", "rustc",
               "rustdoc", "report", "info", "nextest", "llvm-cov", "tarpaulin", "audit", "deny", "outdated", "expand",
               "machete", "watch", "make", "insta", "package"}
    subcommands(allowed, held, takes="Z", long_takes=("--manifest-path", "--config", "--color", "-C"))(cmd, name, ctx)
    for w in cmd.args:
        if w.value is not None and w.value.startswith(("--target-dir", "--config")):
            if w.value.startswith("--config"):
                ctx.hold("cargo-config", HIGH, "cargo --config can set a wrapper that runs any command", cmd)


def c_go(cmd, name, ctx):
    held = {"install": "puts programs on your PATH, outside the project"}
    allowed = {"build", "test", "run", "vet", "fmt", "mod", "get", "list", "env", "version", "doc", "generate",
               "work", "clean", "tool", "help", "bug", "fix"}
    options, pos = opts(cmd.args)
    if pos and pos[0].value == "env" and any(w.value in ("-w", "-u") for w in cmd.args):
        ctx.hold("go-env", HIGH, "go env -w changes go's configuration (GOFLAGS, GOPROXY, toolexec...)", cmd)
        return
    for w in cmd.args:
        if w.value is not None and w.value.startswith(("-toolexec", "--toolexec", "-exec", "--exec", "-overlay")):
            ctx.hold("go-exec", HIGH, f"go {w.value.split('=')[0]} runs a command of its own", cmd)
    subcommands(allowed, held)(cmd, name, ctx)
    options, pos = opts(cmd.args, "o", ())
    for v in values(options, "-o"):
        ctx.write(v, cmd)


def c_mvn(cmd, name, ctx):
    for w in cmd.args:
        v = (w.value or "").lower()
        if w.value is None:
            continue
        if v in ("deploy", "release:perform", "release:prepare", "site-deploy", "site:deploy", "deploy:deploy",
                 "deploy:deploy-file", "gpg:sign-and-deploy-file") or v.startswith(("wagon:", "scm:")):
            ctx.hold("mvn-deploy", HIGH, f"mvn {w.value} {PUBLISH}", cmd)
    ctx.in_project(cmd)
    ctx.net(cmd.args, cmd)


def c_gradle(cmd, name, ctx):
    for w in cmd.args:
        v = (w.value or "").lower()
        if w.value is not None and not v.startswith("-") and ("publish" in v or "upload" in v or "release" in v):
            ctx.hold("gradle-publish", HIGH, f"gradle {w.value} {PUBLISH}", cmd)
    ctx.in_project(cmd)
    ctx.net(cmd.args, cmd)


def c_make(cmd, name, ctx):
    args = list(cmd.args)
    for i, w in enumerate(args):
        v = w.value or ""
        if v in ("-C", "--directory") and i + 1 < len(args):
            sub = with_cwd(cmd, args[i + 1], ctx)
            if sub is None:
                return
            cmd = sub
        elif v.startswith("--directory=") or (v.startswith("-C") and len(v) > 2):
            sub = with_cwd(cmd, word_like(w, v.split("=", 1)[1] if "=" in v else v[2:]), ctx)
            if sub is None:
                return
            cmd = sub
        elif "=" in v and not v.startswith("-"):
            key, _eq, val = v.partition("=")
            ctx.assignment(key, word_like(w, val), cmd)
        elif v.startswith("--eval") or v == "-E":
            ctx.hold("make-eval", HIGH, "make --eval runs text the gate cannot read as commands", cmd)
    ctx.in_project(cmd)
    ctx.net(cmd.args, cmd)


def c_formatter(write_flags: tuple[str, ...] | None = None, takes: str = "", long_takes: tuple[str, ...] = ()):
    """black/isort/prettier --write/gofmt -w: the paths they are given are rewritten in place."""

    def check(cmd, name, ctx):
        options, pos = opts(cmd.args, takes, long_takes)
        ctx.in_project(cmd)
        if pos and name == "ruff" and pos[0].value in ("check", "format", "clean", "rule", "config", "linter",
                                                        "server", "version", "analyze"):
            pos = pos[1:]
        writes = write_flags is None or has(options, *write_flags)
        for w in pos:
            if writes:
                ctx.write(w, cmd)
            else:
                ctx.read(w, cmd)
        ctx.net([v for _o, v in options if v is not None], cmd)

    return check


def c_compiler(cmd, name, ctx):
    options, pos = opts(cmd.args, "oIDLlUdx", ("--output",))
    for v in values(options, "-o", "--output"):
        ctx.write(v, cmd)
    for w in cmd.args:
        if w.value is not None and w.value.startswith(("-fplugin", "-wrapper", "-B", "--plugin", "-specs")):
            ctx.hold("compiler-plugin", HIGH, f"{name} {w.value.split('=')[0]} loads or runs another program", cmd)
    ctx.in_project(cmd)
    ctx.net(pos, cmd)


def c_rake(cmd, name, ctx):
    for w in cmd.args:
        v = w.value or ""
        if v.startswith(("db:drop", "db:reset", "db:purge", "db:truncate", "db:schema:load", "db:setup")) or \
                v in ("console", "c", "runner", "r", "dbconsole", "db", "credentials:edit", "credentials:show"):
            ctx.hold("rails-" + v.split(":")[-1], HIGH, f"{name} {v} drops data, shows secrets or runs code it is "
                                                        "given", cmd)
    ctx.in_project(cmd)
    ctx.net(cmd.args, cmd)


def c_pre_commit(cmd, name, ctx):
    pos = [w.value for w in cmd.args if w.value is None or not w.value.startswith("-")]
    if pos and pos[0] in ("install", "uninstall", "install-hooks", "init-templatedir", "try-repo", "sample-config"):
        if pos[0] in ("install", "uninstall", "init-templatedir"):
            ctx.hold("git-hooks", HIGH, f"pre-commit {pos[0]} writes .git/hooks", cmd)
            return
    ctx.in_project(cmd)
    ctx.net(cmd.args, cmd)

"""The allow-list itself: a command's name (normalised: python3.11 is python)
mapped to its checker, and ``check``, which holds what is not on it."""

from __future__ import annotations

import re

from core.inbox.commands.clouds import c_aws, c_cloud_cli, c_docker, c_helm, c_kubectl, c_terraform
from core.inbox.commands.databases import c_sql
from core.inbox.commands.git import c_git
from core.inbox.commands.interpreters import SHELLS, c_deno, c_interpreter, c_pipx, c_python, c_shell, c_source
from core.inbox.commands.kinds import held, pure, reads, subcommands, tool
from core.inbox.commands.network import c_curl, c_dns, c_gh, c_gh_api, c_wget
from core.inbox.commands.options import HIGH, MEDIUM
from core.inbox.commands.project_tools import (PUBLISH, c_cargo, c_compiler, c_formatter, c_go, c_gradle, c_js_pm,
                                               c_make, c_mvn, c_npm, c_pip, c_pre_commit, c_rake, c_uv, c_uvx)
from core.inbox.commands.readers import c_fd, c_find, c_grep, c_jq, c_ls, c_rg, c_sort, c_uniq, c_yq
from core.inbox.commands.sed_awk import c_awk, c_sed
from core.inbox.commands.shell_builtins import c_date, c_hash, c_hostname, c_set
from core.inbox.commands.wrappers import c_command, c_env, c_npx, c_wrapper, c_xargs
from core.inbox.commands.writers import (c_base64, c_chmod, c_compress, c_cp, c_dd, c_iconv, c_install, c_ln, c_mv,
                                         c_patch, c_paths_written, c_rm, c_tar, c_tee, c_truncate, c_unzip, c_xxd,
                                         c_zip)


READ_SIMPLE = reads()
TABLE = {
    # touch nothing through their arguments
    **{n: pure for n in ("echo", "printf", "true", "false", ":", "test", "[", "[[", "sleep", "seq", "yes", "pwd",
                          "whoami", "id", "uname", "basename", "dirname", "printenv", "which", "type", "shift",
                          "exit", "return", "break", "continue", "wait", "read", "getopts", "umask", "ulimit",
                          "jobs", "expr", "let", "nproc", "arch", "locale", "uptime", "free", "groups", "logname",
                          "tty", "clear", "export", "declare", "local", "readonly", "typeset", "unset", "tput",
                          "mapfile", "readarray", "whereis", "cal", "factor", "numfmt", "tr", "lsb_release",
                          "sw_vers", "getconf", "dirs", "disown", "fg", "bg", "times", "history", "caller", "compgen",
                          "df", "lsof", "pgrep", "ps", "pstree", "vmstat", "iostat", "w", "who", "users", "lscpu",
                          "lsblk", "uuidgen", "man", "apropos", "whatis", "nvidia-smi", "mktemp", "cd", "pushd",
                          "popd", "chdir")},
    "date": c_date, "hostname": c_hostname, "hash": c_hash, "set": c_set,
    # read the files they are given
    **{n: READ_SIMPLE for n in ("cat", "tac", "nl", "rev", "fold", "fmt", "paste", "comm", "expand", "unexpand",
                                 "strings", "file", "stat", "md5sum", "sha1sum", "sha224sum", "sha256sum",
                                 "sha384sum", "sha512sum", "shasum", "cksum", "b2sum", "sum", "readlink",
                                 "realpath", "zcat", "bzcat", "xzcat", "zstdcat", "lzcat", "less", "more", "look",
                                 "wc", "cmp", "hexdump", "od", "tsort", "ldd", "nm", "objdump", "readelf", "size",
                                 "lsattr", "getfacl", "otool", "shellcheck", "yamllint", "jsonlint", "xmllint",
                                 "markdownlint", "hadolint", "cloc", "tokei", "scc", "bat", "batcat", "delta",
                                 "difft", "colordiff", "zless", "zmore", "csvlook", "pygmentize", "identify",
                                 "exiftool", "pdfinfo", "bc", "dc", "md5", "sha256", "column")},
    "cut": reads("dfcb", ("--delimiter", "--fields", "--characters", "--bytes", "--output-delimiter")),
    "head": reads("nc", ("--lines", "--bytes")), "tail": reads("ncsF", ("--lines", "--bytes", "--sleep-interval",
                                                                          "--pid", "--max-unchanged-stats")),
    "du": reads("dBt", ("--max-depth", "--block-size", "--threshold", "--exclude", "--time-style", "--files0-from"),
                default_here=True, recursive="-a --all -s --summarize -d --max-depth -h -c"),
    "tree": reads("LIPoH", ("--filelimit", "--timefmt", "--sort", "--charset"), default_here=True,
                  writes_opts=("-o",)),
    "diff": reads("UCIxXSFL", ("--unified", "--context", "--ignore-matching-lines", "--exclude", "--exclude-from",
                               "--starting-file", "--show-function-line", "--label", "--from-file", "--to-file",
                               "--line-format", "--color", "--palette", "--width", "--tabsize", "--horizon-lines"),
                  recursive="-r --recursive"),
    "join": reads("12ajotev", ()), "split": held("unknown-command", "{name} writes files named by a prefix", MEDIUM),
    "ls": c_ls, "dir": c_ls, "vdir": c_ls, "exa": c_ls, "eza": c_ls, "lsd": c_ls,
    "find": c_find, "fd": c_fd, "fdfind": c_fd,
    "grep": c_grep, "egrep": c_grep, "fgrep": c_grep, "zgrep": c_grep, "rg": c_rg, "ag": c_rg, "ack": c_rg,
    "git-grep": c_grep,
    "sort": c_sort, "uniq": c_uniq, "jq": c_jq, "yq": c_yq, "gojq": c_jq, "xxd": c_xxd, "iconv": c_iconv,
    "base64": c_base64, "base32": c_base64, "basenc": c_base64,
    # write inside the project
    "cp": c_cp, "mv": c_mv, "rm": c_rm, "ln": c_ln, "tee": c_tee, "dd": c_dd, "truncate": c_truncate,
    "install": c_install,
    "mkdir": c_paths_written("m", ("--mode", "--context")), "rmdir": c_paths_written(),
    "touch": c_paths_written("drt", ("--date", "--reference"), ref_opts=("-r", "--reference")),
    "chmod": c_chmod, "chown": c_paths_written("", ("--reference", "--from"), skip_first=True),
    "chgrp": c_paths_written("", ("--reference",), skip_first=True),
    "unlink": c_paths_written(), "shred": held("shred", "{name} destroys file contents beyond recovery"),
    "tar": c_tar, "unzip": c_unzip, "zip": c_zip, "patch": c_patch,
    **{n: c_compress for n in ("gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "pigz",
                                "brotli", "compress", "uncompress")},
    "sed": c_sed, "gsed": c_sed, "awk": c_awk, "gawk": c_awk, "mawk": c_awk, "nawk": c_awk,
    # run another command
    "env": c_env, "nice": c_wrapper("n", ("--adjustment",)), "nohup": c_wrapper(),
    "timeout": c_wrapper("sk", ("--signal", "--kill-after"), positional_before=1),
    "gtimeout": c_wrapper("sk", ("--signal", "--kill-after"), positional_before=1),
    "time": c_wrapper("fo", ("--format", "--output")), "stdbuf": c_wrapper("ioe", ("--input", "--output", "--error")),
    "ionice": c_wrapper("cnp", ("--class", "--classdata", "--pid")), "command": c_command, "builtin": c_command,
    "xargs": c_xargs, "npx": c_npx, "bunx": c_npx, "pnpx": c_npx, "uvx": c_uvx,
    "pipx": c_pipx,
    # interpreters
    **{n: c_shell for n in SHELLS},
    "python": c_python, "pypy": c_python, "pypy3": c_python,
    "node": c_interpreter("ep", ("--eval", "--print"), "rC", ("--require", "--import", "--loader",
                                                                "--experimental-loader", "--input-type",
                                                                "--env-file", "--conditions", "--inspect-port")),
    "nodejs": c_interpreter("ep", ("--eval", "--print"), "rC", ("--require", "--import", "--loader")),
    "tsx": c_interpreter("ep", ("--eval", "--print"), "r", ("--require", "--import", "--tsconfig")),
    "ts-node": c_interpreter("ep", ("--eval", "--print"), "rP", ("--require", "--project")),
    "deno": c_deno,
    "perl": c_interpreter("eE", (), "IMmxCd", ()),
    "ruby": c_interpreter("e", (), "IrCxE", ("--encoding",)),
    "php": c_interpreter("raBRFEs", (), "cdzt", ()),
    "lua": c_interpreter("e", (), "l", ()), "luajit": c_interpreter("e", (), "l", ()),
    "Rscript": c_interpreter("e", ("--expr",), "", ()), "R": held("interpreter-stdin", "{name} is interactive"),
    "elixir": c_interpreter("e", ("--eval",), "r", ("--require",)),
    "java": c_interpreter("", (), "", ("-cp", "-classpath", "--class-path", "--module-path", "-p", "--add-modules",
                                        "-jar"), no_script_ok=("--version", "-version", "--help", "-help")),
    "source": c_source, ".": c_source,
    # version control and the network
    "git": c_git, "curl": c_curl, "wget": c_wget, "dig": c_dns, "nslookup": c_dns, "host": c_dns, "gh": c_gh,
    # package managers and build tools
    "npm": c_npm, "pnpm": c_js_pm, "yarn": c_js_pm, "bun": c_js_pm,
    "pip": c_pip, "uv": c_uv,
    "poetry": subcommands({"install", "add", "remove", "update", "lock", "show", "build", "check", "version", "init",
                           "new", "export", "env", "about", "list", "search", "sync", "help"},
                          {"publish": PUBLISH, "shell": "an interactive shell", "config": "changes poetry's "
                           "configuration", "self": "changes poetry itself", "source": "changes where packages "
                           "come from"}, runners=("run",)),
    "pipenv": subcommands({"install", "lock", "graph", "check", "sync", "update", "uninstall", "clean", "requirements",
                           "verify", "scripts", "--venv", "--where", "--py"}, {"shell": "an interactive shell"},
                          runners=("run",)),
    "pdm": subcommands({"install", "add", "remove", "update", "lock", "sync", "list", "show", "build", "init", "info",
                        "venv", "export", "outdated", "search"}, {"publish": PUBLISH, "self": "changes pdm itself",
                                                                  "config": "changes pdm's configuration"},
                       runners=("run",)),
    "hatch": subcommands({"build", "env", "version", "status", "new", "fmt", "test", "dep", "project"},
                         {"publish": PUBLISH, "shell": "an interactive shell", "self": "changes hatch itself",
                          "config": "changes hatch's configuration"}, runners=("run",)),
    "cargo": c_cargo, "go": c_go, "gofmt": c_formatter(("-w",)), "rustfmt": c_formatter(),
    "rustc": c_compiler, "gcc": c_compiler, "g++": c_compiler, "cc": c_compiler, "c++": c_compiler,
    "clang": c_compiler, "clang++": c_compiler, "javac": tool(), "kotlinc": tool(), "scalac": tool(),
    "mvn": c_mvn, "mvnw": c_mvn, "gradle": c_gradle, "gradlew": c_gradle, "make": c_make, "gmake": c_make,
    "cmake": tool(), "ninja": tool(), "meson": tool(), "ctest": tool(), "bazel": tool(), "bazelisk": tool(),
    "dotnet": subcommands({"build", "test", "run", "restore", "format", "clean", "new", "add", "remove", "list", "sln",
                           "pack", "watch", "--info", "--version", "--list-sdks", "help", "msbuild"},
                          {"nuget": "pushes or changes packages", "tool": "installs tools outside the project",
                           "ef": "can drop or change the database", "publish": "publishes the app"}),
    "swift": subcommands({"build", "test", "run", "package", "--version"}),
    "gem": subcommands({"list", "search", "info", "env", "contents", "which", "specification", "spec", "install",
                        "outdated", "dependency", "help", "query", "build"},
                       {"push": PUBLISH, "yank": "changes a published gem", "owner": "changes who owns a gem",
                        "signin": "logs in", "signout": "logs out"}, cwd=False),
    "bundle": subcommands({"install", "update", "check", "list", "show", "outdated", "lock", "init", "add",
                           "package", "info", "doctor", "binstubs", "platform"},
                          {"config": "changes bundler's configuration", "console": "an interactive console",
                           "open": "opens an editor"}, runners=("exec",)),
    "bundler": subcommands({"install", "update", "check", "list", "show", "outdated", "lock", "init", "add"},
                           runners=("exec",)),
    "composer": subcommands({"install", "update", "require", "remove", "dump-autoload", "dumpautoload", "show",
                             "outdated", "validate", "run-script", "run", "test", "init", "why", "depends", "audit",
                             "check-platform-reqs", "diagnose", "licenses", "fund", "status", "search", "suggests"},
                            {"exec": "runs a vendored program", "global": "installs outside the project",
                             "config": "changes composer's configuration"}),
    "rake": c_rake, "rails": c_rake, "rspec": tool(), "mix": tool(), "rebar3": tool(), "stack": tool(),
    "cabal": tool(), "zig": tool(), "elm": tool(), "sbt": tool(), "lein": tool(), "clojure": tool(), "dune": tool(),
    "opam": subcommands({"install", "list", "show", "switch", "env", "update", "upgrade", "exec", "pin", "search",
                         "config"}),
    # test runners, linters, type checkers (they run and write inside the project)
    **{n: tool() for n in ("pytest", "py.test", "tox", "nox", "mypy", "pyright", "basedpyright", "flake8", "pylint",
                            "pyflakes", "pycodestyle", "pydocstyle", "bandit", "vulture", "coverage", "hypothesis",
                            "tsc", "jest", "vitest", "mocha", "ava", "tap", "eslint", "tslint", "stylelint", "next",
                            "vite", "webpack", "rollup", "esbuild", "swc", "turbo", "nx", "lerna", "parcel", "astro",
                            "nuxt", "ng", "playwright", "cypress", "storybook", "sphinx-build", "hugo", "jekyll",
                            "golangci-lint", "staticcheck", "govulncheck", "ginkgo", "gotestsum", "rubocop",
                            "phpunit", "phpstan", "psalm", "pint", "ktlint", "detekt", "swiftlint", "swiftformat",
                            "clang-tidy", "cppcheck", "cpplint", "semgrep", "actionlint", "flit",
                            "maturin", "buf", "protoc", "sqlc", "wasm-pack", "trunk", "biome", "oxlint", "knip",
                            "depcheck", "madge", "tsup", "unbuild", "nodemon", "typos", "codespell")},
    "mkdocs": subcommands({"build", "serve", "new", "get-deps", "--version"}, {"gh-deploy": PUBLISH}),
    "pre-commit": c_pre_commit,
    "black": c_formatter(), "isort": c_formatter(), "autopep8": c_formatter(("-i", "--in-place")),
    "yapf": c_formatter(("-i", "--in-place")), "ruff": c_formatter(), "prettier": c_formatter(("--write", "-w")),
    "clang-format": c_formatter(("-i",)), "shfmt": c_formatter(("-w", "--write")),
    "dprint": c_formatter(), "stylua": c_formatter(), "taplo": c_formatter(),
    # containers and clouds: their read commands
    "docker": c_docker, "podman": c_docker, "kubectl": c_kubectl, "oc": c_kubectl, "helm": c_helm,
    "terraform": c_terraform, "tofu": c_terraform, "terragrunt": c_terraform,
    "aws": c_aws, "gcloud": c_cloud_cli, "gsutil": c_cloud_cli, "az": c_cloud_cli,
    # databases: SQL that drops, truncates, deletes or escapes to a shell is held
    "psql": c_sql, "mysql": c_sql, "mariadb": c_sql, "sqlite3": c_sql, "duckdb": c_sql,
    # always held, whatever the arguments
    "sudo": held("sudo", "{name} runs a command as another user"), "su": held("sudo", "{name} switches user"),
    "doas": held("sudo", "{name} runs a command as another user"), "pkexec": held("sudo", "{name} runs as root"),
    "runuser": held("sudo", "{name} runs as another user"), "chroot": held("sudo", "{name} needs root"),
    "eval": held("eval", "eval runs a string as shell commands the gate cannot read"),
    "exec": held("exec", "exec replaces the shell (or rewires its descriptors for everything after)"),
    "trap": held("trap", "trap runs a string as commands later"),
    "alias": held("alias", "alias changes what a command name runs"),
    "enable": held("alias", "enable loads or hides shell built-ins"),
    "shopt": held("alias", "shopt changes how the shell expands what follows"),
    "watch": held("shell-c", "watch runs its arguments through sh -c"),
    "parallel": held("shell-c", "parallel runs its arguments as shell commands"),
    "kill": held("kill", "kill stops processes the gate cannot tell apart", MEDIUM),
    "pkill": held("kill", "pkill stops processes by name", MEDIUM),
    "killall": held("kill", "killall stops processes by name", MEDIUM),
    "ssh": held("remote", "ssh runs commands on another machine"),
    "scp": held("data-upload", "scp copies files to or from another machine"),
    "sftp": held("data-upload", "sftp copies files to or from another machine"),
    "rsync": held("data-upload", "rsync copies files, possibly to another machine or outside the project"),
    "nc": held("data-upload", "nc opens raw network connections"), "ncat": held("data-upload", "ncat opens raw "
                                                                                 "network connections"),
    "socat": held("data-upload", "socat relays data anywhere"), "telnet": held("data-upload", "telnet"),
    "crontab": held("persistence", "crontab schedules commands to run later"),
    "at": held("persistence", "at schedules commands to run later"),
    "systemctl": held("persistence", "systemctl starts and changes services"),
    "launchctl": held("persistence", "launchctl starts and changes services"),
    "mkfs": held("disk", "mkfs erases a file system"), "fdisk": held("disk", "fdisk changes partitions"),
    "mount": held("disk", "mount changes the file system tree"), "umount": held("disk", "umount"),
    "shutdown": held("power", "shutdown"), "reboot": held("power", "reboot"), "halt": held("power", "halt"),
    "osascript": held("interpreter-c", "osascript runs AppleScript"),
    "open": held("open", "open hands a file or URL to another program", MEDIUM),
    "xdg-open": held("open", "xdg-open hands a file or URL to another program", MEDIUM),
    "ars": held("ars", "ars commands decide and configure supervision: a person runs them"),
}


_NORMAL: dict[str, str] = {}


def normalize(name: str) -> str:
    """python3.11 -> python, pip3 -> pip, g++-12 -> g++; the table's spelling."""
    found = _NORMAL.get(name)
    if found is None:
        found = _NORMAL[name] = _normalize(name) if len(_NORMAL) < 4096 else name
    return found


def _normalize(name: str) -> str:
    base = name
    m = re.fullmatch(r"(python|pip|pypy|ruby|perl|php|node|lua|gcc|g\+\+|clang|clang\+\+|cc)[0-9][0-9.]*(?:-[0-9.]+)?",
                     base)
    if m:
        return m.group(1)
    m = re.fullmatch(r"(gcc|g\+\+|clang|clang\+\+|cpp)-[0-9.]+", base)
    if m:
        return m.group(1)
    return base


def check(cmd, ctx) -> None:
    """Hold ``cmd`` (through ``ctx.hold``) unless it is on the allow-list with arguments it allows."""
    w = cmd.name
    if w is None:
        return
    if w.value is None:
        ctx.hold("dynamic-command", HIGH, f"the command itself is only known when it runs ({w.text[:80]})", cmd)
        return
    name = w.value
    if w.glob:
        ctx.hold("dynamic-command", HIGH, f"the command name is a pattern ({name[:80]})", cmd)
        return
    if "/" in name:
        name = ctx.program(cmd, name)
        if name is None:
            return
    if name in ctx.functions:
        return  # its body was checked where it was defined
    name = normalize(name)
    if name in ctx.extra_commands:
        ctx.net(cmd.args, cmd)
        return
    if name == "gh" and cmd.args and cmd.args[0].value == "api":
        return c_gh_api(cmd, name, ctx)
    checker = TABLE.get(name)
    if checker is None:
        ctx.hold("unknown-command", MEDIUM, f"{name[:80]} is not on the gate's allow-list", cmd)
        return
    checker(cmd, name, ctx)

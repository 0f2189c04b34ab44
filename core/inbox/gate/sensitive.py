"""What is sensitive: credential and start-up files, the directories commands
run from, and the environment variables that change what later commands run."""

from __future__ import annotations


RC_NAMES = frozenset({".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv",
                      ".zprofile", ".zlogin", ".zlogout", ".envrc", ".mcp.json", ".claude.json", ".kshrc", ".cshrc",
                      ".tcshrc", ".mkshrc", ".inputrc"})
HOME_SECRET_DIRS = (".ssh", ".aws", ".gnupg", ".kube", ".config/gcloud", ".azure", ".config/gh")
HOME_SECRET_FILES = (".netrc", ".claude.json", ".docker/config.json", ".hermes/config.yaml", ".openclaw/openclaw.json",
                     ".git-credentials", ".npmrc", ".pypirc", ".claude/.credentials.json", ".config/fish/config.fish",
                     ".config/git/credentials", ".config/hub", ".terraformrc", ".vault-token")
HOME_WRITE_ONLY = (".gitconfig", ".config/git/config", ".config/fish", ".config/direnv")
# names that, copied or moved into place, bring a sensitive file with them
PROTECTED_NAMES = frozenset({".claude", ".git", ".envrc", ".mcp.json", "hooks", ".ssh", ".aws", ".gnupg", ".kube",
                             ".netrc", ".docker", ".hermes", ".openclaw", ".config", ".claude.json"}) | RC_NAMES
DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero")
SYSTEM_BIN = ("/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin", "/opt/homebrew/bin",
              "/opt/local/bin", "/snap/bin", "/home/linuxbrew/.linuxbrew/bin")
HOME_BIN = (".local/bin", ".cargo/bin", "go/bin", ".npm-global/bin", ".bun/bin", ".deno/bin", ".pyenv/shims",
            ".nvm/versions", ".volta/bin", ".asdf/shims", ".rbenv/shims")

# environment variables whose value changes what later commands run
HELD_VARS = frozenset({"PATH", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "IFS", "PS4", "PROMPT_COMMAND", "CDPATH",
                       "GLOBIGNORE", "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "ZDOTDIR", "NODE_OPTIONS",
                       "PYTHONSTARTUP", "PYTHONHOME", "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB",
                       "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "LESSOPEN", "LESSCLOSE", "BROWSER",
                       "SHELL", "EDITOR", "VISUAL", "PAGER", "MANPAGER", "SYSTEMD_PAGER", "SUDO_ASKPASS",
                       "SSH_ASKPASS", "CURL_HOME", "WGETRC", "RUSTC_WRAPPER", "RUSTC", "RUSTDOC", "CC", "CXX", "LD",
                       "AR", "GOFLAGS", "MAKEFLAGS", "MFLAGS", "EXINIT", "VIMINIT", "GNUPGHOME", "KUBECONFIG",
                       "DOCKER_HOST", "DOCKER_CONFIG", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "FTP_PROXY",
                       "CLAUDE_PROJECT_DIR", "TERMINFO", "HISTFILE", "INPUTRC", "MAKE", "PROMPT_COMMANDS",
                       "LOCPATH", "GCONV_PATH", "NLSPATH", "MALLOC_CHECK_", "TZDIR", "HOSTALIASES", "RES_OPTIONS",
                       "LOCALDOMAIN", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
                       "NODE_EXTRA_CA_CERTS", "PYTHONUSERBASE"})
HELD_PREFIXES = ("LD_", "DYLD_", "BASH_FUNC_", "GIT_", "NPM_CONFIG_", "ARS_", "PIP_", "UV_INDEX", "CARGO_BUILD_")
SAFE_GIT_VARS = frozenset({"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME",
                           "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE", "GIT_TERMINAL_PROMPT", "GIT_TRACE",
                           "GIT_TRACE2", "GIT_CURL_VERBOSE", "GIT_MERGE_AUTOEDIT", "GIT_CEILING_DIRECTORIES",
                           "GIT_OPTIONAL_LOCKS", "GIT_FLUSH", "GIT_PROGRESS_DELAY", "GIT_LFS_SKIP_SMUDGE",
                           "PIP_DISABLE_PIP_VERSION_CHECK", "PIP_NO_CACHE_DIR", "PIP_QUIET", "PIP_NO_INPUT",
                           "PIP_REQUIRE_VIRTUALENV", "PIP_PROGRESS_BAR", "PIP_ROOT_USER_ACTION"})
SAFE_VALUES = {"EDITOR": {"true", ":", "cat"}, "VISUAL": {"true", ":", "cat"}, "GIT_EDITOR": {"true", ":", "cat"},
               "GIT_SEQUENCE_EDITOR": {"true", ":", "cat"}, "PAGER": {"cat", "less", "more", ""},
               "GIT_PAGER": {"cat", "less", "more", ""}, "MANPAGER": {"cat", "less", "more", ""},
               "SYSTEMD_PAGER": {"cat", "less", ""},
               "SHELL": {"/bin/sh", "/bin/bash", "/usr/bin/bash", "/bin/zsh", "/usr/bin/zsh", "sh", "bash", "zsh"},
               "CC": {"gcc", "clang", "cc", "tcc", "musl-gcc"}, "CXX": {"g++", "clang++", "c++"}}


CONTROL_CHARS = frozenset("\r\v\f\0\x1b") | frozenset(chr(c) for c in range(1, 32) if chr(c) not in "\t\n")

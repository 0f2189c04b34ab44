"""Network clients (curl, wget, dig, gh): public URLs fetched, never uploads,
proxies or writes outside the project."""

from __future__ import annotations

from core.inbox.commands.options import HIGH, MEDIUM, opts, word_like


CURL_TAKES = "oDdFTXHAeubcKxwmrCEYyzPUQtiqhK"
CURL_LONG = ("--output", "--dump-header", "--data", "--data-ascii", "--data-binary", "--data-raw",
             "--data-urlencode", "--json", "--form", "--form-string", "--upload-file", "--request", "--header",
             "--user-agent", "--referer", "--user", "--cookie", "--cookie-jar", "--config", "--proxy", "--resolve",
             "--connect-to", "--write-out", "--unix-socket", "--abstract-unix-socket", "--max-time",
             "--connect-timeout", "--retry", "--range", "--continue-at", "--trace", "--trace-ascii", "--stderr",
             "--output-dir", "--cert", "--key", "--cacert", "--capath", "--interface", "--dns-servers", "--doh-url",
             "--url", "--local-port", "--proxy-user", "--limit-rate", "--max-filesize", "--retry-delay",
             "--retry-max-time", "--etag-save", "--etag-compare", "--hsts", "--alt-svc", "--preproxy",
             "--proxy-header", "--mail-from", "--mail-rcpt", "--quote", "--oauth2-bearer", "--variable",
             "--expand-url", "--header-file", "--url-query", "--aws-sigv4", "--netrc-file", "--socks5",
             "--socks5-hostname", "--socks4", "--socks4a", "--max-redirs", "--tls-max", "--ciphers")
CURL_UPLOAD = {"-d", "--data", "--data-ascii", "--data-binary", "--data-raw", "--data-urlencode", "--json", "-F",
               "--form", "--form-string", "-T", "--upload-file", "--mail-rcpt", "--mail-from", "-Q", "--quote",
               "--url-query"}
CURL_REDIRECT = {"-x", "--proxy", "--preproxy", "--resolve", "--connect-to", "--unix-socket", "--abstract-unix-socket",
                 "--socks5", "--socks5-hostname", "--socks4", "--socks4a", "--dns-servers", "--interface"}
CURL_WRITES = {"-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--stderr",
               "--output-dir", "--etag-save", "--hsts", "--alt-svc"}


def c_curl(cmd, name, ctx):
    options, pos = opts(cmd.args, CURL_TAKES, CURL_LONG)
    urls = list(pos)
    for o, v in options:
        if o in CURL_UPLOAD:
            ctx.hold("data-upload", HIGH, f"curl {o} sends data{' from a file' if v is not None and v.value is not None and v.value.startswith('@') else ''}"
                                          " to the network", cmd)
        elif o in ("-X", "--request"):
            if v is None or v.value is None or v.value.upper() not in ("GET", "HEAD", "OPTIONS"):
                ctx.hold("data-upload", HIGH, f"curl -X {v.value if v is not None and v.value else '...'} "
                                              "changes or sends data on a server", cmd)
        elif o in ("-K", "--config", "--netrc-file", "--variable", "--expand-url"):
            ctx.hold("curl-config", HIGH, f"curl {o} reads options or secrets from a file the gate cannot see", cmd)
        elif o in CURL_REDIRECT:
            ctx.hold("private-address", HIGH, f"curl {o} sends the request somewhere else than its URL says", cmd)
        elif o in CURL_WRITES and v is not None:
            if v.value != "-":
                ctx.write(v, cmd)
                if o in ("-o", "--output"):
                    ctx.fetched(v, cmd)
        elif o in ("-H", "--header", "--proxy-header", "-b", "--cookie", "--header-file") and v is not None:
            if v.value is None or v.value.startswith("@") or o == "--header-file":
                ctx.hold("curl-config", HIGH, f"curl {o} reads from a file or a value the gate cannot see", cmd)
        elif o in ("--url", "--doh-url") and v is not None:
            urls.append(v)
        elif o in ("-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name"):
            ctx.in_project(cmd, "curl -O writes into the current directory")
            for w in pos:
                ctx.fetched_name(w.value, cmd)
        elif o in ("-E", "--cert", "--key", "--cacert", "--capath") and v is not None:
            ctx.read(v, cmd)
    if not urls:
        return
    for w in urls:
        if w.value is None:
            ctx.hold("dynamic-url", HIGH, f"a URL only known when it runs ({w.text[:60]}): it can carry data out", cmd)
            continue
        if w.value.lower().startswith("file:"):
            rest = w.value[5:]
            if rest.startswith("//"):  # file://host/path: the host part is dropped (curl reads local files only)
                rest = "/" + rest[2:].partition("/")[2]
            from urllib.parse import unquote

            ctx.read(word_like(w, unquote(rest) or "/"), cmd)
            continue
        if not any(ch in w.value for ch in "{}[]") or ("://[" in w.value and "]" in w.value and "{" not in w.value):
            ctx.url(w, cmd)
        else:
            ctx.hold("dynamic-url", HIGH, "curl expands {a,b} and [1-9] in URLs: hosts the gate cannot list", cmd)


WGET_LONG = ("--output-document", "--output-file", "--append-output", "--directory-prefix", "--input-file", "--base",
             "--execute", "--post-data", "--post-file", "--body-data", "--body-file", "--method", "--header",
             "--user-agent", "--user", "--password", "--http-user", "--http-password", "--load-cookies",
             "--save-cookies", "--tries", "--timeout", "--wait", "--level", "--accept", "--reject", "--domains",
             "--quota", "--limit-rate", "--restrict-file-names", "--config", "--ca-certificate", "--certificate",
             "--private-key", "--bind-address", "--referer", "--exclude-directories", "--include-directories",
             "--waitretry", "--read-timeout", "--dns-timeout", "--connect-timeout", "--progress", "--max-redirect",
             "--use-askpass", "--ftp-user", "--ftp-password", "--proxy-user", "--proxy-password", "--warc-file")
WGET_TAKES = "OoaPiBeUtTwlARDQ"


def c_wget(cmd, name, ctx):
    options, pos = opts(cmd.args, WGET_TAKES, WGET_LONG)
    wrote = False
    for o, v in options:
        if o in ("--post-data", "--post-file", "--body-data", "--body-file"):
            ctx.hold("data-upload", HIGH, f"wget {o} sends data to the network", cmd)
        elif o == "--method" and (v is None or v.value is None or v.value.upper() not in ("GET", "HEAD")):
            ctx.hold("data-upload", HIGH, "wget --method changes or sends data on a server", cmd)
        elif o in ("-e", "--execute", "--config", "-i", "--input-file", "--use-askpass", "-B", "--base"):
            ctx.hold("curl-config", HIGH, f"wget {o} takes commands or URLs the gate cannot see", cmd)
        elif o in ("-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "--save-cookies",
                   "--warc-file") and v is not None:
            if o in ("-O", "--output-document"):
                wrote = True
            if v.value != "-":
                ctx.write(v, cmd)
                if o in ("-O", "--output-document"):
                    ctx.fetched(v, cmd)
        elif o in ("-P", "--directory-prefix") and v is not None:
            wrote = True
            ctx.write(v, cmd)
        elif o in ("--spider",):
            wrote = True
        elif o in ("--load-cookies", "--certificate", "--private-key", "--ca-certificate") and v is not None:
            ctx.read(v, cmd)
        elif o in ("--header",) and (v is None or v.value is None):
            ctx.hold("dynamic-url", HIGH, "wget --header with a value only known when it runs", cmd)
    if not wrote:
        ctx.in_project(cmd, "wget saves into the current directory")
        for w in pos:
            ctx.fetched_name(w.value, cmd)
    for w in pos:
        if w.value is None:
            ctx.hold("dynamic-url", HIGH, f"a URL only known when it runs ({w.text[:60]}): it can carry data out", cmd)
        else:
            ctx.url(w, cmd)


def c_dns(cmd, name, ctx):
    for w in cmd.args:
        if w.value is None:
            ctx.hold("dynamic-url", HIGH, f"{name} of a name only known when it runs: DNS can carry data out", cmd)


def c_gh(cmd, name, ctx):
    args = [w for w in cmd.args]
    pos = [w.value for w in args if w.value is None or not w.value.startswith("-")]
    if not pos:
        return
    group = pos[0]
    verb = pos[1] if len(pos) > 1 else None
    allowed = {"pr": {"create", "view", "list", "status", "checkout", "diff", "checks", "comment", "edit", "ready"},
               "issue": {"create", "view", "list", "status", "comment", "edit"},
               "run": {"list", "view", "watch"}, "workflow": {"list", "view"}, "repo": {"view", "clone"},
               "auth": {"status"}, "search": None, "release": {"list", "view"}, "label": {"list"},
               "status": None, "browse": set(), "cache": {"list"}}
    if group is None or group not in allowed:
        ctx.hold("unknown-command", MEDIUM, f"gh {group or '...'} is not on the gate's allow-list", cmd)
        return
    if group == "api":
        return
    verbs = allowed[group]
    if verbs is not None and verb not in verbs:
        ctx.hold(f"gh-{group}", MEDIUM if verb in ("merge", "close", "reopen") else HIGH,
                 f"gh {group} {verb or ''} is not on the gate's allow-list", cmd)
        return
    for w in args:
        if w.value is not None and w.value.startswith(("--body-file", "-F")):
            ctx.hold("data-upload", MEDIUM, "gh with a body read from a file", cmd)
    ctx.in_project(cmd, "gh works on the repository in the current directory")


def c_gh_api(cmd, name, ctx):
    options, _pos = opts(cmd.args[1:], "XfFHtpq", ("--method", "--field", "--raw-field", "--header", "--input",
                                                   "--jq", "--template", "--preview", "--hostname", "--cache"))
    for o, v in options:
        if o in ("-f", "-F", "--field", "--raw-field", "--input"):
            ctx.hold("data-upload", HIGH, f"gh api {o} sends data", cmd)
        elif o in ("-X", "--method") and (v is None or v.value is None or v.value.upper() not in ("GET", "HEAD")):
            ctx.hold("data-upload", HIGH, "gh api -X changes data on GitHub", cmd)
        elif o == "--hostname":
            ctx.hold("data-upload", HIGH, "gh api --hostname sends the token to another host", cmd)

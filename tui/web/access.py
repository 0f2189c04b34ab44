"""Who may reach ``ars serve``: the access token, and the Host and Origin a request names.

* The token is 32 random bytes (URL-safe base64), made once and kept in
  ``<state>/serve/token`` (0600, in a 0700 directory) so a restart keeps the
  browsers that hold it; ``--new-token`` replaces it. It comes once in the URL
  ``ars serve`` prints, then lives in an HttpOnly, SameSite=Strict cookie
  (the URL is redirected to one without it, so it leaves the address bar and
  the history). Every request is compared with it in constant time.
* The token only lets a browser *see* the inbox: any decision also needs the
  supervisor's passphrase (unlock.py). The agent runs as the same user and can
  read the token file; it cannot sign.
* The Host header must name the bound address (or, for a loopback bind, a
  loopback name on any port: an SSH forward may use another local port), so a
  page on some other domain that resolves to 127.0.0.1 (DNS rebinding) is
  refused. IP literals can never be rebinding, so a wildcard bind accepts them.
  A POST or websocket whose Origin is not this very host is refused too.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
from pathlib import Path

SERVE_DIR = "serve"
TOKEN_FILE = "token"
COOKIE = "ars_serve_token"
LOOPBACK_NAMES = ("localhost",)


def token_path(state_dir: str | os.PathLike) -> Path:
    return Path(state_dir) / SERVE_DIR / TOKEN_FILE


def load_token(state_dir: str | os.PathLike, *, renew: bool = False) -> str:
    """The access token of this state directory, made (0600) when missing or ``renew``."""
    from core.api import atomic_write, private_dir

    path = token_path(state_dir)
    if not renew:
        try:
            text = path.read_text(encoding="ascii").strip()
        except (FileNotFoundError, UnicodeDecodeError):
            text = ""
        if len(text) >= 32:
            return text
    token = secrets.token_urlsafe(32)
    private_dir(path.parent)
    atomic_write(path, token + "\n")  # mkstemp: 0600 whatever the umask
    return token


def token_ok(given: str | None, token: str) -> bool:
    """``given`` is the token; the comparison takes the same time wherever they differ."""
    if not given:
        return False
    return hmac.compare_digest(given.encode("utf-8", "replace"), token.encode("utf-8"))


# -- addresses --------------------------------------------------------------------------------
def split_host(value: str) -> tuple[str, str]:
    """``host[:port]`` (``[v6]:port`` too) as (host lower-cased without brackets, port or "")."""
    value = value.strip().lower()
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        return host, rest[1:] if rest.startswith(":") else ""
    if value.count(":") > 1:  # a bare IPv6 literal
        return value, ""
    host, _, port = value.partition(":")
    return host, port


def _ip(host: str):
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 or localhost: reachable from this machine only."""
    host = host.strip().strip("[]").lower()
    if host in LOOPBACK_NAMES:
        return True
    ip = _ip(host)
    return ip is not None and ip.is_loopback


def is_wildcard(host: str) -> bool:
    ip = _ip(host.strip().strip("[]"))
    return ip is not None and ip.is_unspecified


def host_allowed(header: str | None, bound_host: str, port: int) -> bool:
    """The Host header names this server (see the module's docstring)."""
    if not header:
        return False
    name, given_port = split_host(header)
    if given_port and not given_port.isdigit():
        return False
    bound = bound_host.strip().strip("[]").lower()
    if is_loopback(bound):
        return is_loopback(name)
    ip = _ip(name)
    if is_wildcard(bound):
        return ip is not None or name in LOOPBACK_NAMES
    if name == bound or (ip is not None and _ip(bound) == ip):
        return given_port in ("", str(port))
    return is_loopback(name)  # a browser on this machine, through a loopback name


def origin_ok(origin: str | None, host_header: str | None) -> bool:
    """A browser's Origin is this very host (scheme http or https). Requests without an
    Origin (curl, the approvals form without script in an old browser) pass: the
    cookie and the page's token still have to be right."""
    if origin is None:
        return True
    if not host_header:
        return False
    for scheme in ("http://", "https://"):
        if origin.lower() == scheme + host_header.lower():
            return True
    return False

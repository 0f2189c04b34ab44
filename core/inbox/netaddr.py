"""Is a URL's host private? Literal addresses only, no DNS.

The gate holds requests (WebFetch, curl, wget, git over http) to loopback,
private, link-local, shared (CGNAT), unspecified, multicast or reserved
addresses and to the cloud metadata services, whatever the spelling of the
address: dotted, decimal (``2130706433``), hex (``0x7f000001``,
``0x7f.0.0.1``), octal (``0177.0.0.1``), short (``127.1``), IPv6 (``[::1]``,
``[::ffff:127.0.0.1]``, ``[::ffff:7f00:1]``, NAT64 and 6to4 forms with an
IPv4 inside), and the names ``localhost``, ``*.localhost``,
``metadata.google.internal``, ``metadata``, ``instance-data``.

It does NOT look names up: a public name that resolves to a private address
(``127.0.0.1.nip.io``, a DNS rebinding host) passes. Holding every name would
hold every fetch; resolving here would let the agent's DNS answer decide, and
the answer may change between this check and the request.
"""

from __future__ import annotations

_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback", "metadata",
                    "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal",
                    "metadata.azure.internal", "kubernetes.default", "kubernetes.default.svc"})
_SUFFIXES = (".localhost", ".local", ".internal", ".localdomain", ".home.arpa", ".svc.cluster.local")


def split_url(url: str) -> tuple[str, str]:
    """(scheme in lower case or "", host as written: brackets kept for IPv6)."""
    url = url.strip()
    scheme = ""
    rest = url
    head, sep, tail = url.partition("://")
    if sep and head and all(c.isalnum() or c in "+-." for c in head):
        scheme, rest = head.lower(), tail
    elif url.lower().startswith(("mailto:", "data:", "javascript:", "file:")):
        return url.split(":", 1)[0].lower(), ""
    # the authority ends at the first / ? # (or a backslash, which some clients read as /)
    end = len(rest)
    for ch in "/?#\\":
        i = rest.find(ch)
        if i != -1:
            end = min(end, i)
    authority = rest[:end]
    host = authority.rpartition("@")[2]  # userinfo@host: the last @ counts (curl's and browsers' reading)
    if host.startswith("["):
        close = host.find("]")
        return scheme, host[: close + 1] if close != -1 else host
    return scheme, host.partition(":")[0]


def private_host(host: str) -> str | None:
    """Why ``host`` is not a public address (one phrase), or None."""
    h = host.strip().lower().rstrip(".")
    if not h:
        return "no host"
    if "%" in h and not h.startswith("["):
        return "a percent-encoded host"
    if h in _NAMES or h.endswith(_SUFFIXES):
        return f"{h} is a local or metadata name"
    if h.startswith("["):
        inner = h[1:-1] if h.endswith("]") else h[1:]
        inner = inner.split("%", 1)[0]  # a zone id
        return _private_ip(inner, v6=True)
    if all(c in "0123456789abcdefx." for c in h):
        v4 = _inet_aton(h)
        if v4 is not None:
            return _private_ip(v4, v6=False)
    if ":" in h:
        return _private_ip(h, v6=True)
    return None


def _inet_aton(text: str) -> str | None:
    """inet_aton's reading (1 to 4 parts; decimal, 0-octal, 0x-hex; the last
    part fills the remaining bytes) as a dotted quad, or None."""
    parts = text.split(".")
    if not 1 <= len(parts) <= 4 or any(p == "" for p in parts):
        return None
    nums = []
    for p in parts:
        try:
            if p.startswith(("0x", "0X")):
                n = int(p[2:] or "0", 16)
            elif len(p) > 1 and p.startswith("0"):
                n = int(p, 8)
            else:
                n = int(p, 10)
        except ValueError:
            return None
        nums.append(n)
    last_bytes = 5 - len(nums)
    if any(n > 255 for n in nums[:-1]) or nums[-1] >= 256 ** last_bytes:
        return None
    value = 0
    for n in nums[:-1]:
        value = value * 256 + n
    value = value * 256 ** last_bytes + nums[-1]
    return ".".join(str((value >> s) & 255) for s in (24, 16, 8, 0))


def _private_ip(text: str, v6: bool) -> str | None:
    import ipaddress  # only when a literal address is fetched

    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return f"an address that does not read as IPv{'6' if v6 else '4'} ({text[:60]})" if v6 else None
    if ip.version == 6:
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is None and ip.packed[:12] == bytes(12) and int(ip) > 1:  # ::a.b.c.d (IPv4-compatible)
            embedded = ipaddress.IPv4Address(ip.packed[12:])
        if embedded is None and ip in ipaddress.ip_network("64:ff9b::/96"):  # NAT64
            embedded = ipaddress.IPv4Address(ip.packed[12:])
        if embedded is not None:
            why = _private_ip(str(embedded), v6=False)
            if why:
                return f"{why} (inside {text})"
        if ip in ipaddress.ip_network("fd00:ec2::/32"):
            return f"{text} is the AWS metadata service"
    if ip.version == 4 and ip in ipaddress.ip_network("100.64.0.0/10"):
        return f"{ip} is a shared (carrier-grade NAT) address"
    if ip.is_loopback:
        return f"{ip} is a loopback address"
    if ip.is_link_local:
        return f"{ip} is link-local (the cloud metadata service lives at 169.254.169.254)"
    if ip.is_unspecified:
        return f"{ip} is the unspecified address (it reaches this machine)"
    if ip.is_private:
        return f"{ip} is a private address"
    if ip.is_multicast or ip.is_reserved:
        return f"{ip} is a reserved or multicast address"
    return None


def url_problem(url: str) -> str | None:
    """Why fetching ``url`` is held (private host, odd scheme), or None."""
    scheme, host = split_url(url)
    if scheme in ("mailto", "data", "javascript"):
        return f"a {scheme}: URL"
    if scheme and scheme not in ("http", "https", "ftp", "ftps"):
        return f"a {scheme}:// URL"
    return private_host(host)

"""What a notify URL is: ``[notify]`` of a policy file read as (url, format), and the
format a URL implies. Its own module, standard library only, so that parsing
``gate.toml`` (core/inbox/gate) need not import the sender (core/inbox/notify),
which loads the signed policy and so the gate."""

from __future__ import annotations

from urllib.parse import urlsplit

FORMATS = ("json", "ntfy", "slack")


def parse_target(raw: object, path: str, error: type[Exception]) -> tuple[str, str] | None:
    """``[notify]`` of a policy file as (url, format), or None; ``error`` (one line) when it is wrong."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise error(f"{path}: `notify` must be a table: write it as [notify] with url = \"https://…\"")
    bad = sorted(set(raw) - {"url", "format"})
    if bad:
        raise error(f"{path}: [notify] has an unknown key {bad[0]!r} (keys: url, format)")
    url, fmt = raw.get("url"), raw.get("format")
    problem = url_problem(url) if isinstance(url, str) else "it must be text"
    if problem:
        raise error(f"{path}: [notify] url {url!r}: {problem}")
    if fmt is not None and fmt not in FORMATS:
        raise error(f"{path}: [notify] format {fmt!r}: use one of {', '.join(FORMATS)}")
    return url, fmt or format_of(url)


def url_problem(url: str) -> str:
    """"" for an http(s) URL with a host, else what is wrong with it."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        return f"not a URL ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "write an http:// or https:// URL with a host"
    return ""


def format_of(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower()
    if host == "hooks.slack.com":
        return "slack"
    if host.startswith("ntfy.") or host.split(".")[0] == "ntfy":
        return "ntfy"
    return "json"

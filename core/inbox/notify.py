"""Tell the supervisor of each new request where they are: an HTTP POST.

Where: ``ARS_NOTIFY_URL`` (with ``ARS_NOTIFY_FORMAT``), else ``[notify]`` in
the signed ``gate.toml`` (``url``, ``format``). What is sent depends on the
format, taken from the URL unless given:

* ``json`` (any other URL): the request as JSON: ``id``, ``source``, ``kind``,
  ``summary``, ``runs`` (exactly what will run, as the inbox shows it: secrets
  already replaced by ``[secret:…]`` when the request was made), ``risk``,
  ``deadline`` (when its agent stops waiting, or null), ``created_at``,
  ``host``, ``decide`` (the command), and ``text`` (one readable line, so a
  Slack-compatible receiver shows it too);
* ``ntfy`` (a host named ``ntfy…``): the text as the body of a POST to the
  topic URL, with ``Title``, ``Priority`` and ``Tags`` headers, as ntfy takes it;
* ``slack`` (``hooks.slack.com``): ``{"text": …}``, as an incoming webhook takes it.

Whichever process makes the request (the hook, the MCP server, a loop) only
starts a detached sender (a new session: it outlives a hook that Claude Code
ends, and nobody waits for it) and hands it the message on a pipe: a dead or
slow receiver never delays the agent. The sender tries four times over about
ten seconds and appends what failed to ``notify.log`` in the state directory.

Standard library only in the creating process (the hook imports this on its
held-call path); the sender redacts once more (``redacted``) before anything leaves.
"""

from __future__ import annotations

import shlex

import json
import os
import socket
import subprocess
import sys
import time
from urllib.parse import urlsplit

from core.inbox.notify_url import FORMATS, format_of, url_problem

LOG_FILE = "notify.log"
LOG_MAX = 256 * 1024
TRIES = (0.0, 0.5, 2.0, 6.0)  # seconds before each attempt
ATTEMPT_TIMEOUT = 4.0


def _env(name: str) -> str | None:
    """``ARS_<NAME>`` in any case, as core/config.py reads the environment."""
    want = f"ARS_{name}".lower()
    for key, value in os.environ.items():
        if key.lower() == want:
            return value
    return None


def target(state_dir: str | os.PathLike, gate=None) -> tuple[str, str] | None:
    """(url, format) new requests go to, or None. ``gate``: the policy in force when
    the caller has it loaded; else the state directory's, signed by its key."""
    url = _env("NOTIFY_URL")
    if url:
        fmt = _env("NOTIFY_FORMAT")
        if url_problem(url) or (fmt and fmt not in FORMATS):
            _log(state_dir, f"ARS_NOTIFY_URL/ARS_NOTIFY_FORMAT not used: {url_problem(url) or f'format {fmt!r}'}")
            return None
        return url, fmt or format_of(url)
    if gate is None:
        from core.inbox.policy import load
        from core.inbox.signing import public_fingerprint

        if not os.path.exists(os.path.join(os.fspath(state_dir), "gate.toml")):
            return None
        gate, _why = load(state_dir, public_fingerprint(state_dir))
    return getattr(gate, "notify", None)


def message(req, host: str | None = None) -> dict:
    """What is said of a new request (its stored fields: secrets are already placeholders)."""
    deadline = getattr(req, "expires_at", None)
    created = req.created_at
    runs = req.detail or ""
    verb = "approve" if req.kind == "approval" else "respond"
    text = (f"ARS: {req.kind} from {req.source} ({req.risk} risk): {req.summary}"
            + (f" | runs: {' '.join(runs.split())[:300]}" if runs else "")
            + (f" | decide before {deadline.isoformat(timespec='seconds')}" if deadline else "")
            + f" | ars inbox show {req.id}")
    return {"event": "inbox.request", "id": req.id, "source": req.source, "kind": req.kind,
            "summary": req.summary, "runs": runs, "risk": req.risk,
            "deadline": deadline.isoformat() if deadline else None,
            "created_at": created.isoformat() if created else None,
            "host": host or socket.gethostname(), "decide": f"ars inbox {verb} {shlex.quote(req.id)}", "text": text}


def ending(req, host: str | None = None) -> dict:
    """What is said when a request ends with nobody deciding it (expired): nothing ran."""
    msg = message(req, host)
    d = getattr(req, "decision", None)
    why = f" ({d.note})" if d is not None and d.note else ""
    when = (d.decided_at if d is not None else req.expires_at or req.created_at).isoformat(timespec="seconds")
    msg.update(event="inbox.expired", decide="", text=(
        f"ARS: expired, nobody decided: {req.kind} from {req.source}: {req.summary} | its agent stopped waiting "
        f"at {when}{why}; nothing ran | ars inbox show {shlex.quote(req.id)}"))
    return msg


def announce(state_dir: str | os.PathLike, req, gate=None, *, ended: bool = False) -> bool:
    """Start a detached sender for ``req`` (``ended``: its expiry) when a target is set; never
    raises, never waits."""
    try:
        where = target(state_dir, gate)
        if where is None:
            return False
        msg = ending(req) if ended else message(req)
        page = page_url(state_dir)
        if page:  # where to decide: the approvals page (ars serve), its card
            msg["page"] = f"{page}#card-{req.id}"
            msg["text"] += f" | {msg['page']}"
        payload = json.dumps({"url": where[0], "format": where[1], "state": os.fspath(state_dir),
                              "message": msg}).encode()
        proc = subprocess.Popen([sys.executable, "-m", "core.inbox.notify"], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                                close_fds=True, cwd=_root(), env=_child_env())
        try:
            proc.stdin.write(payload)  # a few KB: the pipe takes it without waiting for the child
        finally:
            proc.stdin.close()
        return True
    except Exception as exc:  # noqa: BLE001 - telling the supervisor must never break the agent's call
        _log(state_dir, f"could not start the sender: {' '.join(str(exc).split())[:200]}")
        return False


def page_url(state_dir: str | os.PathLike) -> str:
    """The approvals page's address, without its token (a browser that opened the page once holds
    it as a cookie; a notification never carries it): ``ARS_NOTIFY_PAGE_URL``, else the one the
    running ``ars serve`` wrote (``serve/url``); "" when neither is there."""
    url = _env("NOTIFY_PAGE_URL")
    if not url:
        try:
            with open(os.path.join(os.fspath(state_dir), "serve", "url"), encoding="utf-8") as fh:
                url = fh.read(400).strip()
        except OSError:
            return ""
    if url_problem(url) or "token=" in url:
        return ""
    return url.rstrip("/") + "/"


def _root() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _child_env() -> dict:
    env = dict(os.environ)
    root = _root()
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


# -- the sender (a process of its own) ------------------------------------------------------
def request_of(url: str, fmt: str, msg: dict):
    from urllib.request import Request

    if fmt == "ntfy":
        title = f"ARS: {msg['kind']} from {msg['source']}" + (" expired" if msg.get("event") == "inbox.expired" else "")
        headers = {"Title": title[:200],
                   "Priority": "high" if msg.get("risk") == "high" else "default", "Tags": "warning",
                   "Content-Type": "text/plain; charset=utf-8"}
        if msg.get("page"):
            headers["Click"] = msg["page"]  # ntfy opens it when the notification is tapped
        body = msg["text"].encode("utf-8")
    elif fmt == "slack":
        headers, body = {"Content-Type": "application/json"}, json.dumps({"text": msg["text"]}).encode()
    else:
        headers, body = {"Content-Type": "application/json"}, json.dumps(msg, ensure_ascii=False).encode()
    headers["User-Agent"] = "ars-notify/1"
    # latin-1 only in headers: a title with other characters goes as ntfy's RFC 2047 form would, cut instead
    headers = {k: v.encode("latin-1", "replace").decode("latin-1") for k, v in headers.items()}
    return Request(url, data=body, headers=headers, method="POST")


def send(url: str, fmt: str, msg: dict, state_dir: str | None = None) -> bool:
    from urllib.error import HTTPError, URLError
    from urllib.request import urlopen

    last = ""
    for pause in TRIES:
        time.sleep(pause)
        try:
            with urlopen(request_of(url, fmt, msg), timeout=ATTEMPT_TIMEOUT) as resp:  # noqa: S310 - http(s) checked
                if 200 <= resp.status < 300:
                    return True
                last = f"HTTP {resp.status}"
        except HTTPError as exc:
            last = f"HTTP {exc.code}"
            if 400 <= exc.code < 500 and exc.code not in (408, 429):
                break  # the receiver refuses it: asking again changes nothing
        except (URLError, OSError, ValueError) as exc:
            last = " ".join(str(getattr(exc, "reason", exc)).split())[:200]
    if state_dir:
        _log(state_dir, f"{msg.get('id')}: not delivered to {urlsplit(url).hostname} after {len(TRIES)} tries: {last}")
    return False


def _log(state_dir, line: str) -> None:
    try:
        path = os.path.join(os.fspath(state_dir), LOG_FILE)
        if os.path.exists(path) and os.path.getsize(path) > LOG_MAX:
            os.replace(path, path + ".1")
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, f"{time.strftime('%Y-%m-%dT%H:%M:%S%z')} {line}\n".encode())
        finally:
            os.close(fd)
    except OSError:
        pass


def redacted(msg: dict) -> dict:
    """``msg`` with secrets replaced again: an inbox request's fields are redacted when it is
    made, a loop's are not (its action is the loop's own); done here, off the agent's path."""
    from core.govern.redact import redact_text

    return {k: redact_text(v) if isinstance(v, str) and k in ("summary", "runs", "text") else v
            for k, v in msg.items()}


def main() -> int:
    try:
        job = json.loads(sys.stdin.buffer.read())
        return 0 if send(job["url"], job["format"], redacted(job["message"]), job.get("state")) else 1
    except (ValueError, KeyError, OSError):
        return 2


if __name__ == "__main__":
    sys.exit(main())

"""``ars mcp``: serve ARS to agents over MCP (tui/agents/mcp_server.py).

stdio by default (the agent starts ``ars mcp`` and talks over its stdin and
stdout); ``--http`` serves streamable HTTP at ``http://HOST:PORT/mcp``, on
loopback unless told otherwise, and every HTTP request must carry a bearer
token: ``ARS_MCP_TOKEN``, else the one in ``<state>/mcp-token`` (generated
0600 on first use and printed once). A non-loopback ``--host`` is refused
without a token.

The MCP SDK, uvicorn and the server are imported inside the command, so
registering it costs ``ars recall`` nothing.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import socket
import stat
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Optional

import typer

TOKEN_ENV = "ARS_MCP_TOKEN"
TOKEN_FILE = "mcp-token"
MIN_TOKEN_CHARS = 16
DEFAULT_PORT = 8765
MAKE_TOKEN = "python -c 'import secrets; print(secrets.token_urlsafe(32))'"


def _say(message: str) -> None:
    sys.stderr.write(f"ars mcp: {message}\n")
    sys.stderr.flush()


def _fail(message: str, code: int = 2) -> None:
    sys.stderr.write(f"error: {message}\n")
    raise typer.Exit(code)


def _fail_on(exc: BaseException, said: tuple[int, str] | None) -> None:
    """``exc``'s line and exit code (tui/cli/error_map.py); an error ARS does not say rises."""
    if said is None:
        raise exc
    _fail(said[1], said[0])


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve anywhere


def read_token_file(path: Path) -> str | None:
    """The token in ``path``, or None when there is none yet. A file others
    could read is made private again (it holds a secret)."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        _fail(f"{path} is not a regular file: move it aside; ars mcp --http writes a new token there", 2)
    if stat.S_IMODE(st.st_mode) & 0o077 and st.st_uid == os.getuid():
        os.chmod(path, 0o600)
    token = path.read_text(encoding="utf-8").strip()
    if len(token) < MIN_TOKEN_CHARS:
        _fail(f"{path} holds no usable token (under {MIN_TOKEN_CHARS} characters): delete it and "
              "start ars mcp --http again to generate one", 2)
    return token


def create_token_file(path: Path) -> tuple[str, bool]:
    """A new random token written 0600 to ``path`` whole (linked in from a complete
    temp file, so two servers starting at once agree on one). (token, created)."""
    from core.api import fsync_dir, private_dir

    private_dir(path.parent)
    token = secrets.token_urlsafe(32)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")  # 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(token + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:  # another server made one first: use it
            return read_token_file(path) or token, False
        fsync_dir(path.parent)
        return token, True
    finally:
        os.unlink(tmp)


def resolve_token(state_dir: Path, host: str, create: bool = True) -> tuple[str, str, bool] | None:
    """(token, where it comes from, whether it was just generated); None when one
    would have to be generated and ``create`` is false."""
    env = os.environ.get(TOKEN_ENV)
    if env is not None and env.strip():
        token = env.strip()
        if len(token) < MIN_TOKEN_CHARS:
            _fail(f"{TOKEN_ENV} is {len(token)} characters, under {MIN_TOKEN_CHARS}: use a long random one, "
                  f"e.g. {MAKE_TOKEN}")
        return token, TOKEN_ENV, False
    path = state_dir / TOKEN_FILE
    token = read_token_file(path)
    if token is not None:
        return token, str(path), False
    if not is_loopback(host):
        _fail(f"refusing to serve MCP on {host} (not loopback) without a token: set {TOKEN_ENV} to a long "
              f"random string (e.g. {MAKE_TOKEN}); clients send it as 'Authorization: Bearer <token>'")
    if not create:
        return None
    token, created = create_token_file(path)
    return token, str(path), created


def check_port(host: str, port: int) -> None:
    """Fail with one line now rather than after start-up when HOST:PORT cannot be bound."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        _fail(f"cannot resolve --host {host!r} ({exc.strerror}): give an address such as 127.0.0.1")
    family, kind, proto, _, addr = infos[0]
    with socket.socket(family, kind, proto) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(addr)
        except OSError as exc:
            _fail(f"cannot listen on {host}:{port} ({exc.strerror}): pick another --port", 1)


def mcp_command(
    state: Annotated[Optional[Path], typer.Option("--state", help="state directory (else $ARS_STATE_DIR, else ./state)")] = None,
    http: Annotated[bool, typer.Option("--http", help="serve streamable HTTP (bearer token required) instead of stdio")] = False,
    host: Annotated[str, typer.Option("--host", help="--http: address to listen on (loopback by default)")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="--http: port to listen on")] = DEFAULT_PORT,
    supervisor: Annotated[Optional[str], typer.Option(
        "--supervisor", help="the supervisor key's fingerprint (SHA256:..., written by `ars install`): "
                             "request_approval reports approved only for decisions that key signed")] = None,
) -> None:
    """Serve ARS to agents over MCP: recall, explain, remember, request_approval, check_approval,
    loops, startup_context. stdio by default; --http for streamable HTTP at http://HOST:PORT/mcp
    with a bearer token ($ARS_MCP_TOKEN, else one generated into <state>/mcp-token)."""
    from tui.agents import mcp_front

    if not 0 < port < 65536:
        _fail(f"--port must be 1-65535, got {port}")
    if not http:
        if host != "127.0.0.1" or port != DEFAULT_PORT:
            _fail("--host and --port are for --http: add --http to serve streamable HTTP (stdio needs neither)")
        # the handshake is answered at once; ARS and the SDK load meanwhile (tui/agents/mcp_front.py)
        raise typer.Exit(mcp_front.serve(lambda: mcp_front.load_stdio(state, supervisor)))
    from core.api import load_settings, pin_problem
    from tui.cli import error_map

    if supervisor is not None and pin_problem(supervisor):
        _fail(pin_problem(supervisor))
    try:
        settings = load_settings(state_dir=state)
    except Exception as exc:  # noqa: BLE001 - a malformed ARS_* variable: one line (else it rises)
        _fail_on(exc, error_map.opening(exc))
    state_dir = Path(settings.state_dir)
    # a short ARS_MCP_TOKEN, an unusable token file or a non-loopback bind without
    # a token is refused before anything is created
    token = resolve_token(state_dir, host, create=False)
    check_port(host, port)
    try:
        ars = mcp_front.open_ars(state, supervisor)
    except mcp_front.Refused as exc:
        _fail(str(exc), exc.code)
    with ars:
        token, where, created = token or resolve_token(state_dir, host)
        if created:
            _say(f"generated a bearer token into {where} (0600; printed only this once); "
                 f"clients send 'Authorization: Bearer <token>':")
            sys.stderr.write(token + "\n")
        else:
            _say(f"bearer token from {where}")
        _serve_http(ars, token, host, port)


def _serve_http(ars, token: str, host: str, port: int) -> None:
    import uvicorn

    from tui.agents.mcp_server import build_server

    netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    server = build_server(ars, token=token, issuer_url=f"http://{netloc}")
    app = server.streamable_http_app(host=host)
    _say(f"serving streamable HTTP at http://{netloc}/mcp (bearer token required)")
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)).run()

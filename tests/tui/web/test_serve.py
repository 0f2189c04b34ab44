"""`ars serve` (tui/web/): a real server process on a free port, its token and
Host checks, CSRF, decisions signed with the supervisor's key from the
approvals page in a real headless Chromium (Debian's, driven over CDP), and
the dashboard served through textual-serve starting the app.

Under CI=true a missing chromium fails the browser tests; elsewhere they skip.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from core.api import ARS
from core.config import Settings
from core.inbox import signing

from cdp import Browser, chromium_path
from conftest import env_without_ars, passphrase_pipe

ROOT = Path(__file__).resolve().parents[3]
ARS_BIN = Path(sys.executable).with_name("ars")
PASS = "correct horse battery"
URL_LINE = re.compile(r"open (http://\S+/\?token=(\S+))")


def need_chromium() -> None:
    if chromium_path() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
        pytest.skip("chromium is not installed (apt-get install -y chromium)")


def _env() -> dict:
    return {**env_without_ars(), "ARS_RECALL_DAEMON": "off"}


@pytest.fixture
def supervised(tmp_path) -> tuple[Path, str]:
    state = tmp_path / "state"
    with ARS(Settings(state_dir=state)) as a:
        fp = a.supervisor_init(PASS.encode())
    return state, fp


def _request(state: Path, detail: str = "git push --force origin main", **kw) -> str:
    with ARS(Settings(state_dir=state)) as a:
        kw.setdefault("risk", "high")
        kw.setdefault("binds", "Bash")
        return a.request_approval("claude-code:s1", kw.pop("summary", "force-push main"), detail, **kw).id


def _get(state: Path, rid: str):
    with ARS(Settings(state_dir=state)) as a:
        return a.inbox_get(rid)


class Served:
    def __init__(self, state: Path, *extra: str) -> None:
        self.proc = subprocess.Popen([str(ARS_BIN), "serve", "--state", str(state), "--port", "0", *extra],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                                     env=_env())
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        m = URL_LINE.search(line)
        if m is None:
            self.proc.kill()
            raise AssertionError(f"ars serve printed no URL: {line!r} {self.proc.stderr.read()!r}")
        self.url, self.token = m.group(1), m.group(2)
        self.base = self.url.split("/?token=")[0]
        self.port = int(self.base.rsplit(":", 1)[1])

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def served(supervised):
    state, fp = supervised
    s = Served(state)
    yield s, state, fp
    s.stop()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **k):
        return None


def http(url: str, *, data: bytes | None = None, headers: dict | None = None) -> tuple[int, dict, str]:
    req = urllib.request.Request(url, data=data, headers=headers or {})
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(req, timeout=30) as resp:
            return resp.status, dict(resp.headers), resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read().decode()


def _one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


# -- the token, the host, the flag -------------------------------------------------------------
def test_every_request_needs_the_token_which_moves_into_a_cookie(served):
    s, state, _ = served
    code, _, body = http(s.base + "/")
    assert code == 401 and "no access token" in _one_line(body)
    code, _, body = http(s.base + "/?token=" + "x" * len(s.token))
    assert code == 401 and "not this server's" in _one_line(body)
    code, _, body = http(s.base + "/api/requests", headers={"Cookie": "ars_serve_token=wrong"})
    assert code == 401
    code, headers, _ = http(s.url)
    assert code == 303 and headers["Location"] == "/"  # the token leaves the address bar and the history
    cookie = headers["Set-Cookie"]
    assert f"ars_serve_token={s.token}" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    code, _, body = http(s.base + "/", headers={"Cookie": f"ars_serve_token={s.token}"})
    assert code == 200 and "git push" not in body and "Nothing is waiting" in body
    # the token file: 0600 in a 0700 directory, the token the URL carried
    path = state / "serve" / "token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert path.read_text().strip() == s.token


def test_a_host_header_naming_another_site_is_refused(served):
    s, _, _ = served
    cookie = {"Cookie": f"ars_serve_token={s.token}"}
    code, _, body = http(s.base + "/", headers={**cookie, "Host": f"attacker.example:{s.port}"})
    assert code == 421 and "Host header" in _one_line(body)
    code, _, _ = http(s.base + "/", headers={**cookie, "Host": f"localhost:{s.port + 1}"})  # an SSH forward's port
    assert code == 200
    # another site's page opening the dashboard's websocket with the browser's cookie
    upgrade = {**cookie, "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
               "Sec-WebSocket-Key": base64.b64encode(b"0123456789abcdef").decode()}
    code, _, body = http(s.base + "/ws", headers={**upgrade, "Origin": "http://attacker.example"})
    assert code == 403 and "another site" in _one_line(body)


def test_a_non_loopback_host_is_refused_without_the_flag(supervised):
    state, _ = supervised
    p = subprocess.run([str(ARS_BIN), "serve", "--state", str(state), "--host", "0.0.0.0", "--port", "0"],
                       capture_output=True, text=True, cwd=ROOT, env=_env(), timeout=60)
    assert p.returncode == 2 and p.stdout == ""
    line = _one_line(p.stderr)
    assert "not a loopback address" in line and "ssh -L" in line and "--i-know-this-is-exposed" in line
    assert not (state / "serve" / "token").exists()


# -- CSRF, passphrase, decided elsewhere (HTTP) -------------------------------------------------
def _page(s) -> tuple[str, str, str]:
    """(cookie header for a fresh page session, its CSRF token, the page)."""
    code, headers, body = http(s.base + "/", headers={"Cookie": f"ars_serve_token={s.token}"})
    assert code == 200
    session = re.search(r"ars_serve_session=([^;]+)", headers["Set-Cookie"]).group(1)
    csrf = re.search(r'<meta name="csrf" content="([^"]+)"', body).group(1)
    return f"ars_serve_token={s.token}; ars_serve_session={session}", csrf, body


def _decide(s, cookie: str, form: dict, **headers) -> tuple[int, dict]:
    code, _, body = http(s.base + "/decide", data=json.dumps(form).encode(),
                         headers={"Cookie": cookie, "Content-Type": "application/json",
                                  "Accept": "application/json", **headers})
    return code, json.loads(body)


def test_csrf_origin_and_passphrase_guard_every_decision(served):
    s, state, _ = served
    rid = _request(state)
    cookie, csrf, page = _page(s)
    shown = re.search(r'name="shown" value="([^"]+)"', page).group(1)
    form = {"id": rid, "shown": shown, "verdict": "approve", "passphrase": PASS}
    code, body = _decide(s, cookie, form)  # no page token
    assert code == 403 and "CSRF" in body["error"]
    _, other_csrf, _ = _page(s)
    code, body = _decide(s, cookie, {**form, "csrf": other_csrf})  # another page's token
    assert code == 403
    code, body = _decide(s, cookie, {**form, "csrf": csrf}, Origin="http://attacker.example")
    assert code == 403 and "another site" in body["error"]
    code, body = _decide(s, cookie, {**form, "csrf": csrf, "passphrase": ""})
    assert code == 401 and "passphrase" in body["error"]
    code, body = _decide(s, cookie, {**form, "csrf": csrf, "passphrase": "not the passphrase"})
    assert code == 403 and body["error"] == "wrong supervisor passphrase: nothing was decided"
    assert _get(state, rid).status == "pending"
    code, body = _decide(s, cookie, {**form, "csrf": csrf})  # right away: the wrong one backs off this page
    assert code == 429 and "try again" in body["error"]
    assert _get(state, rid).status == "pending"
    time.sleep(1.2)
    code, body = _decide(s, cookie, {**form, "csrf": csrf, "shown": "sha256:" + "0" * 64})
    assert code == 409 and "changed since this page showed it" in body["error"]
    code, body = _decide(s, cookie, {**form, "csrf": csrf, "verdict": "reject"})  # a rejection needs its reason
    assert code == 400 and "reason" in body["error"]
    assert _get(state, rid).status == "pending"


def test_a_request_decided_elsewhere_cannot_be_decided_again(served):
    s, state, fp = served
    rid = _request(state)
    cookie, csrf, page = _page(s)
    shown = re.search(r'name="shown" value="([^"]+)"', page).group(1)
    with passphrase_pipe(PASS) as pp:
        p = subprocess.run([str(ARS_BIN), "inbox", "reject", rid, "--reason", "not today", "--state", str(state),
                            *pp.args], capture_output=True, text=True, env=_env(), pass_fds=pp.fds, timeout=60)
    assert p.returncode == 0, p.stderr
    code, body = _decide(s, cookie, {"csrf": csrf, "id": rid, "shown": shown, "verdict": "approve",
                                     "passphrase": PASS})
    assert code == 409 and "already rejected" in body["error"] and "not today" in body["error"]
    assert body["status_now"] == "rejected" and "<form" not in body["html"]
    assert _get(state, rid).decision.verdict == "reject"


# -- in a real browser ---------------------------------------------------------------------------
async def test_approve_in_the_browser_signs_with_the_pinned_key(served, tmp_path):
    need_chromium()
    s, state, fp = served
    later = _request(state, "make deploy", summary="deploy", risk="medium")  # no deadline: after the urgent one
    rid = _request(state, expires_in=300)
    async with Browser() as b:
        page = await b.new_page()
        await page.goto(s.url)
        assert await page.eval("location.href") == s.base + "/"  # the token left the URL
        order = await page.eval("Array.from(document.querySelectorAll('article.card')).map(c => c.dataset.id)")
        assert order == [rid, later]  # the one whose agent waits on a deadline comes first
        card = f'article[data-id="{rid}"]'
        assert await page.eval(f"document.querySelector('{card} pre.runs').textContent") == \
            "git push --force origin main"
        countdown = await page.wait_for(f"document.querySelector('{card} .countdown').textContent")
        assert re.fullmatch(r"agent waits [45]:\d\d", countdown), countdown
        # a wrong passphrase decides nothing
        await page.type("#passphrase", "wrong passphrase!")
        await page.click(f'{card} button[value="approve"]')
        said = await page.wait_for(f"document.querySelector('{card} .result').textContent.includes('wrong')")
        assert said and _get(state, rid).status == "pending"
        await asyncio.sleep(1.2)  # the back-off after a wrong passphrase
        await page.type("#passphrase", PASS)
        await page.type(f"{card} input[name=note]", "ship it")
        await page.click(f'{card} button[value="approve"]')
        await page.wait_for(f"document.querySelector('{card}').dataset.status === 'approved'")
        shown = await page.eval(f"document.querySelector('{card} .decided').textContent")
        assert shown.startswith("approved at") and "ship it" in shown
        assert await page.eval("document.getElementById('passphrase').value") == ""  # not kept in the page
        await page.screenshot(str(tmp_path / "approved.png"))
        # the key stays unlocked for this page: the next decision needs no passphrase ...
        await page.type(f'article[data-id="{later}"] input[name=note]', "not now")
        await page.click(f'article[data-id="{later}"] button[value="reject"]')
        await page.wait_for(f"document.querySelector('article[data-id=\"{later}\"]').dataset.status === 'rejected'")
        # ... and a fresh page from the same token (what an agent that read the token file gets) has nothing unlocked
        cookie, csrf, _ = _page(s)
        third = _request(state, "rm -rf build", summary="clean")
        code, body = _decide(s, cookie, {"csrf": csrf, "id": third, "verdict": "approve",
                                         "shown": _get(state, third).shown_hash()})
        assert code == 401 and _get(state, third).status == "pending"
    r = _get(state, rid)
    assert r.status == "approved" and r.decision.note == "ship it"
    payload, why = signing.verify_decision(r.decision.model_dump(mode="json"), pin=fp, request_id=rid,
                                           input_hash=r.exact_hash(), shown_hash=r.shown_hash())
    assert payload is not None and payload["verdict"] == "approve", why
    assert base64.b64decode(r.decision.key) and r.decision.decided_by.startswith("supervisor")
    assert _get(state, later).decision.is_signed


async def test_the_page_shows_a_decision_made_elsewhere(served):
    need_chromium()
    s, state, _ = served
    rid = _request(state)
    async with Browser() as b:
        page = await b.new_page()
        await page.goto(s.url)
        card = f'article[data-id="{rid}"]'
        assert await page.eval(f"document.querySelector('{card}').dataset.status") == "pending"
        with passphrase_pipe(PASS) as pp:
            p = subprocess.run([str(ARS_BIN), "inbox", "reject", rid, "--reason", "too risky", "--state", str(state),
                                *pp.args], capture_output=True, text=True, env=_env(), pass_fds=pp.fds, timeout=60)
        assert p.returncode == 0, p.stderr
        await page.wait_for(f"document.querySelector('{card}').dataset.status === 'rejected'", timeout=15)
        text = await page.eval(f"document.querySelector('{card} .decided').textContent")
        assert "rejected at" in text and "too risky" in text
        assert await page.eval(f"document.querySelectorAll('{card} button').length") == 0
        newer = _request(state, "make release", summary="release")  # and a new request appears by itself
        await page.wait_for(f"document.querySelector('article[data-id=\"{newer}\"]') !== null", timeout=15)
        assert await page.eval("document.getElementById('count').textContent") == "1 waiting"


async def test_the_dashboard_is_served_and_its_session_starts_the_app(served, tmp_path):
    need_chromium()
    s, state, _ = served
    _request(state)
    async with Browser(1200, 800) as b:
        page = await b.new_page()
        await page.send("Network.enable")
        await page.goto(s.base + "/dashboard?token=" + s.token)
        assert await page.eval("location.pathname + location.search") == "/dashboard"
        assert await page.eval("document.querySelector('#terminal').dataset.sessionWebsocketUrl") == \
            f"ws://127.0.0.1:{s.port}/ws"
        await page.wait_for("document.body.classList.contains('-first-byte')", timeout=60)

        def screen() -> str:  # what the app wrote to the browser's terminal so far
            out = []
            for _, method, params in page.events:
                if method == "Network.webSocketFrameReceived":
                    r = params["response"]
                    data = r["payloadData"]
                    out.append(base64.b64decode(data).decode("utf-8", "replace") if r.get("opcode") == 2 else data)
            return "".join(out)

        deadline = time.monotonic() + 60
        while not ("Inbox" in screen() and "1 waiting" in screen()) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        assert "Inbox" in screen() and "1 waiting" in screen(), screen()[-500:]  # the app, on this state directory
        await page.screenshot(str(tmp_path / "dashboard.png"))


def test_without_a_supervisor_key_the_page_decides_nothing(tmp_path):
    state = tmp_path / "state"
    ARS(Settings(state_dir=state)).close()
    rid = _request(state)
    s = Served(state)
    try:
        cookie, csrf, page = _page(s)
        assert "ars supervisor init" in page and 'id="passphrase"' not in page
        code, body = _decide(s, cookie, {"csrf": csrf, "id": rid, "verdict": "approve",
                                         "shown": _get(state, rid).shown_hash(), "passphrase": PASS})
        assert code == 409 and "ars supervisor init" in body["error"]
        assert _get(state, rid).status == "pending"
    finally:
        s.stop()


def test_a_loops_request_is_decided_from_the_page_and_the_loop_goes_on(served, tmp_path):
    from loophelp import engine, goal

    s, state, fp = served
    out = tmp_path / "restarted.txt"
    eng = engine(state)
    g = goal([{"action": "restart the backup daemon", "tool": "shell", "args": {"cmd": f"echo restarted >> {out}"},
               "needs_approval": True}])
    loop = eng.run(eng.create(g).loop_id)
    eng.memory.close()
    assert loop.status == "waiting_human"
    rid = f"loop:{loop.loop_id}:{loop.pending_approval.request_id}"
    cookie, csrf, page = _page(s)
    assert f'data-id="{rid}"' in page and f"echo restarted &gt;&gt; {out}" in page  # exactly what will run, escaped
    code, body = _decide(s, cookie, {"csrf": csrf, "id": rid, "verdict": "approve", "passphrase": PASS,
                                     "shown": _get(state, rid).shown_hash()})
    assert code == 200, body
    assert _get(state, rid).status == "approved"
    deadline = time.monotonic() + 60
    while not out.exists() and time.monotonic() < deadline:  # the loop resumed in ars serve and ran it
        time.sleep(0.1)
    assert out.read_text().strip() == "restarted"
    with ARS(Settings(state_dir=state)) as a:
        assert a.loop_show(loop.loop_id).status != "waiting_human"


def test_an_exposed_host_needs_the_flag_and_still_checks_the_host(supervised):
    state, _ = supervised
    s = Served(state, "--host", "0.0.0.0", "--i-know-this-is-exposed")
    try:
        base = f"http://127.0.0.1:{s.port}"  # only ever reached over loopback here
        cookie = {"Cookie": f"ars_serve_token={s.token}"}
        assert http(base + "/", headers=cookie)[0] == 200
        assert http(base + "/", headers={**cookie, "Host": f"rebound.example:{s.port}"})[0] == 421
        assert http(base + "/")[0] == 401
    finally:
        s.stop()
    assert "not loopback" in s.proc.stderr.read()

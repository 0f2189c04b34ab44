"""`ars serve` against a client that holds the token (an agent can read the token file):
wrong passphrases back off only the page that typed them, never the supervisor's; new
pages are rationed; every approval needs the passphrase typed; the dashboard processes
(one per websocket) are capped and reaped, on SIGTERM even when one is hung, and die
with ars serve when it is killed. A real server process, real websockets (aiohttp's
client speaking textual-serve's protocol), real dashboard processes seen in /proc."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import aiohttp
import pytest

from test_serve import PASS, Served, _decide, _get, _page, _request, http, supervised  # noqa: F401 - fixture


def _until(cond, what: str, limit: float = 60.0):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        value = cond()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {limit:.0f} s waiting for {what}")


SEEN: set[int] = set()  # dashboards these tests started (only those are cleaned up after a failure)


def dashboards_of(pid: int) -> set[int]:
    """Live `tui.web.dashboard` processes whose parent is ``pid`` (zombies excluded)."""
    out = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if b"tui.web.dashboard" in cmd and int(fields[1]) == pid and fields[0] != "Z":
            out.add(int(entry))
    SEEN.update(out)
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _shown(page: str, rid: str) -> str:
    return re.search(rf'data-id="{re.escape(rid)}".*?name="shown" value="([^"]+)"', page, re.S).group(1)


# -- wrong passphrases, per page ------------------------------------------------------------------
def test_an_agents_wrong_passphrases_never_make_the_supervisors_page_wait(supervised):
    state, _ = supervised
    s = Served(state)
    try:
        rid = _request(state)
        supervisor, sup_csrf, page = _page(s)
        agent, agent_csrf, _ = _page(s)
        form = {"id": rid, "shown": _shown(page, rid), "verdict": "approve"}
        for _ in range(3):  # the agent guesses; its own page backs off
            code, body = _decide(s, agent, {**form, "csrf": agent_csrf, "passphrase": "a guess at it"})
            assert code in (403, 429), body
        code, body = _decide(s, agent, {**form, "csrf": agent_csrf, "passphrase": PASS})
        assert code == 429 and "on this page" in body["error"]  # even the right one waits on the agent's page
        assert _get(state, rid).status == "pending"
        # the supervisor's page is not slowed by any of it: one typo backs off only itself ...
        code, body = _decide(s, supervisor, {**form, "csrf": sup_csrf, "passphrase": "a typo in it"})
        assert code == 403
        time.sleep(1.2)
        code, body = _decide(s, supervisor, {**form, "csrf": sup_csrf, "passphrase": PASS})
        assert code == 200 and _get(state, rid).status == "approved", body
        # ... and ever-new pages (fresh sessions to spread guesses over) are rationed; open pages keep working
        refused = None
        for _ in range(20):
            code, _, text = http(s.base + "/", headers={"Cookie": f"ars_serve_token={s.token}"})
            if code == 429:
                refused = text
                break
        assert refused is not None and "pages already open keep working" in refused
        second = _request(state, "make deploy")
        code, body = _decide(s, supervisor, {"csrf": sup_csrf, "id": second, "verdict": "approve",
                                             "shown": _get(state, second).shown_hash(), "passphrase": PASS})
        assert code == 200, body
    finally:
        s.stop()


def test_every_approval_needs_the_passphrase_even_with_the_key_kept(supervised):
    state, _ = supervised
    s = Served(state)
    try:
        one, two, three = _request(state, "make a"), _request(state, "make b"), _request(state, "make c")
        cookie, csrf, _ = _page(s)
        code, body = _decide(s, cookie, {"csrf": csrf, "id": one, "verdict": "reject", "note": "no",
                                         "shown": _get(state, one).shown_hash(), "passphrase": PASS, "keep": "1"})
        assert code == 200 and body["key"]["left"] > 0, body
        code, body = _decide(s, cookie, {"csrf": csrf, "id": two, "verdict": "approve",
                                         "shown": _get(state, two).shown_hash()})
        assert code == 401 and "every approval needs the supervisor passphrase" in body["error"]
        assert _get(state, two).status == "pending"
        code, body = _decide(s, cookie, {"csrf": csrf, "id": three, "verdict": "reject", "note": "not now",
                                         "shown": _get(state, three).shown_hash()})
        assert code == 200 and _get(state, three).decision.is_signed  # a rejection uses the kept key
    finally:
        s.stop()


# -- the dashboard processes ----------------------------------------------------------------------
async def _open_dashboard(s, cookie: str, http_session: aiohttp.ClientSession):
    """A dashboard websocket for the page session in ``cookie`` (the browser's /ws), or the refusal status."""
    try:
        ws = await http_session.ws_connect(f"ws://127.0.0.1:{s.port}/ws?width=100&height=30",
                                           headers={"Cookie": cookie})
    except aiohttp.WSServerHandshakeError as exc:
        return exc.status
    await ws.send_json(["resize", {"width": 100, "height": 30}])
    return ws


def _dashboard_cookie(s) -> str:
    code, headers, _ = http(s.base + "/dashboard", headers={"Cookie": f"ars_serve_token={s.token}"})
    assert code == 200
    session = re.search(r"ars_serve_session=([^;]+)", headers["Set-Cookie"]).group(1)
    return f"ars_serve_token={s.token}; ars_serve_session={session}"


async def test_dashboards_are_capped_one_per_page_and_the_supervisors_page_gets_one(supervised):
    state, _ = supervised
    s = Served(state)
    try:
        async with aiohttp.ClientSession() as hs:
            strangers = [_dashboard_cookie(s) for _ in range(4)]  # the agent's four pages take every slot
            sockets = [await _open_dashboard(s, c, hs) for c in strangers]
            assert all(not isinstance(w, int) for w in sockets)
            pids = _until(lambda: len(dashboards_of(s.proc.pid)) == 4 and dashboards_of(s.proc.pid),
                          "four dashboard processes")
            assert await _open_dashboard(s, _dashboard_cookie(s), hs) == 503  # a fifth page: one line, no process
            again = await _open_dashboard(s, strangers[0], hs)  # a reload of a tab replaces its own
            assert not isinstance(again, int)
            _until(lambda: len(dashboards_of(s.proc.pid)) == 4 and dashboards_of(s.proc.pid) != pids,
                   "the reloaded tab's dashboard to replace its old one")
            assert len(dashboards_of(s.proc.pid)) == 4
            # the supervisor types the passphrase once on the approvals page: their page takes a stranger's slot
            rid = _request(state)
            cookie, csrf, page = _page(s)
            code, body = _decide(s, cookie, {"csrf": csrf, "id": rid, "verdict": "reject", "note": "no",
                                             "shown": _shown(page, rid), "passphrase": PASS})
            assert code == 200, body
            before = dashboards_of(s.proc.pid)
            mine = await _open_dashboard(s, cookie, hs)
            assert not isinstance(mine, int)
            _until(lambda: len(dashboards_of(s.proc.pid)) == 4 and dashboards_of(s.proc.pid) != before,
                   "a stranger's dashboard to give its slot up")
            for w in sockets + [again, mine]:
                await w.close()
        _until(lambda: not dashboards_of(s.proc.pid), "every dashboard to end with its websocket")
    finally:
        s.stop()


async def test_sigterm_reaps_every_dashboard_even_a_hung_one(supervised):
    state, _ = supervised
    s = Served(state)
    async with aiohttp.ClientSession() as hs:
        sockets = [await _open_dashboard(s, _dashboard_cookie(s), hs) for _ in range(2)]
        pids = _until(lambda: len(dashboards_of(s.proc.pid)) == 2 and dashboards_of(s.proc.pid),
                      "two dashboard processes")
        hung = min(pids)
        os.kill(hung, signal.SIGSTOP)  # a dashboard that answers neither "quit" nor SIGTERM
        s.proc.send_signal(signal.SIGTERM)
        assert s.proc.wait(60) == 0
        for w in sockets:
            await w.close()
    _until(lambda: not any(alive(p) for p in pids), "every dashboard, the hung one too, to be gone")


async def test_a_killed_ars_serve_takes_its_dashboards_with_it(supervised):
    state, _ = supervised
    s = Served(state)
    async with aiohttp.ClientSession() as hs:
        sockets = [await _open_dashboard(s, _dashboard_cookie(s), hs) for _ in range(2)]
        pids = _until(lambda: len(dashboards_of(s.proc.pid)) == 2 and dashboards_of(s.proc.pid),
                      "two dashboard processes")
        s.proc.kill()  # SIGKILL: nothing in ars serve runs; the kernel tells the children (PR_SET_PDEATHSIG)
        s.proc.wait(30)
        _until(lambda: not any(alive(p) for p in pids), "the dashboards to die with ars serve")
        for w in sockets:
            await w.close()


@pytest.fixture(autouse=True)
def _no_leftovers():
    yield
    for pid in list(SEEN):  # a failed test must not leave its dashboards behind for the next
        try:
            if b"tui.web.dashboard" in Path(f"/proc/{pid}/cmdline").read_bytes():
                os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        SEEN.discard(pid)

// ars serve's approvals page: decide through fetch, keep the list fresh, count down deadlines.
// The server renders every card (tui/web/cards.py); this script only swaps them in.
"use strict";
(function () {
  const csrf = document.querySelector('meta[name="csrf"]').content;
  const offset = Number(document.querySelector('meta[name="server-now"]').content) - Date.now();
  const cards = document.getElementById("cards");
  const pass = document.getElementById("passphrase");
  const keep = document.getElementById("keep");
  const keystate = document.getElementById("keystate");
  const POLL_MS = 3000;
  let unlockedUntil = 0;

  const lockButton = document.getElementById("lock");

  function setKey(key) {
    if (!key || !keystate) return;
    keystate.textContent = key.line;
    unlockedUntil = key.left ? Date.now() + key.left * 1000 : 0;
    keystate.dataset.left = String(key.left || 0);
    if (lockButton) lockButton.hidden = !unlockedUntil;  // "lock now" only while the key is unlocked
  }
  if (keystate) setKey({ line: keystate.textContent, left: Number(keystate.dataset.left || 0) });

  function mmss(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  }

  function tick() {
    const now = Date.now() + offset;
    for (const el of document.querySelectorAll(".countdown[data-deadline]")) {
      const left = Number(el.dataset.deadline) - now;
      el.textContent = left > 0 ? "agent waits " + mmss(left) : "deadline passed";
      el.classList.toggle("urgent", left < 60000);
    }
    if (keystate && unlockedUntil) {
      if (Date.now() >= unlockedUntil) {
        unlockedUntil = 0;
        if (lockButton) lockButton.hidden = true;
        keystate.textContent = keystate.textContent.replace(/unlocked.*$/, "locked: type its passphrase to decide");
      } else {
        keystate.textContent = keystate.textContent.replace(/for \d+:\d\d$/, "for " + mmss(unlockedUntil - Date.now()));
      }
    }
  }

  function cardOf(id) {
    for (const el of cards.querySelectorAll("article.card")) if (el.dataset.id === id) return el;
    return null;
  }

  function swap(old, html) {
    const t = document.createElement("template");
    t.innerHTML = html;
    const fresh = t.content.firstElementChild;
    if (old) old.replaceWith(fresh); else cards.appendChild(fresh);
    return fresh;
  }

  function say(el, text, bad) {
    if (!el) return;
    el.textContent = text;
    el.classList.toggle("bad", !!bad);
  }

  function setCount(n) {
    document.getElementById("count").textContent = n + " waiting";
    document.getElementById("empty").hidden = n > 0 || cards.querySelector("article.card") !== null;
  }

  async function post(path, body) {
    const resp = await fetch(path, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(Object.assign({ csrf: csrf }, body)),
    });
    let data = {};
    try { data = await resp.json(); } catch (e) { data = { error: "the server answered " + resp.status }; }
    return [resp, data];
  }

  cards.addEventListener("submit", async function (ev) {
    const form = ev.target.closest("form.decide");
    if (!form) return;
    ev.preventDefault();
    const verdict = ev.submitter ? ev.submitter.value : "approve";
    const card = form.closest("article.card");
    const result = form.querySelector(".result");
    const buttons = form.querySelectorAll("button");
    buttons.forEach((b) => (b.disabled = true));
    say(result, "signing…", false);
    const body = {
      id: form.elements.id.value, shown: form.elements.shown.value, verdict: verdict,
      note: form.elements.note.value, passphrase: pass ? pass.value : "", keep: keep && keep.checked ? "1" : "",
    };
    let resp, data;
    try {
      [resp, data] = await post("/decide", body);
    } catch (e) {
      buttons.forEach((b) => (b.disabled = false));
      say(result, "the server cannot be reached: nothing was decided", true);
      return;
    }
    if (pass && (resp.ok || resp.status === 403)) pass.value = "";
    if (data.key) setKey(data.key);
    if (resp.ok || resp.status === 409) poll();  // the count and any card that changed meanwhile
    if (data.html) {
      const fresh = swap(card, data.html);
      const line = fresh.querySelector(".result") || fresh.appendChild(document.createElement("p"));
      line.className = line.className || "result";
      say(line, data.line || data.error, !resp.ok);
    } else {
      buttons.forEach((b) => (b.disabled = false));
      say(result, data.line || data.error || ("the server answered " + resp.status), !resp.ok);
    }
  });

  if (lockButton) lockButton.addEventListener("click", async function () {
    const [, data] = await post("/lock", {});
    if (data.key) setKey(data.key);
  });

  async function poll() {
    const known = Array.from(cards.querySelectorAll("article.card")).map((el) => el.dataset.id);
    let data;
    try {
      const resp = await fetch("/api/requests?known=" + encodeURIComponent(known.join(",")),
                               { credentials: "same-origin", headers: { "Accept": "application/json" } });
      if (resp.status === 401 || resp.status === 403) {  // ars serve restarted, or the token was replaced
        document.getElementById("count").textContent = "this page is out of date: reload it";
        return;
      }
      if (!resp.ok) return;
      data = await resp.json();
    } catch (e) { return; }
    const seen = new Set();
    for (const c of data.cards) {
      seen.add(c.id);
      const el = cardOf(c.id);
      const busy = el && el.contains(document.activeElement);
      if (!el || (el.dataset.status !== c.status && !busy)) swap(el, c.html);
    }
    for (const el of cards.querySelectorAll("article.card")) {
      if (!seen.has(el.dataset.id) && el.dataset.status === "pending") {
        el.dataset.status = "gone";
        el.querySelectorAll("button").forEach((b) => (b.disabled = true));
        say(el.querySelector(".result"), "this request is gone (its file was removed)", true);
      }
    }
    setCount(data.count);
    if (data.key && !(keystate && unlockedUntil && data.key.left)) setKey(data.key);
  }

  tick();
  setInterval(tick, 1000);
  setInterval(poll, POLL_MS);
})();

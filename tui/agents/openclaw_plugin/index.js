// ARS's gate inside OpenClaw (written into openclaw.json by `ars install openclaw`).
//
// before_tool_call: every tool call is checked by ARS's gate (core/inbox/gate/) in a
// long-lived checker (`ars hook openclaw --serve`, one JSON line each way), so a call that
// passes costs milliseconds, not a Python start. A held call goes to a fresh
// `ars hook openclaw` that re-checks it, puts a request bound to its exact input in the ARS
// inbox and waits for the supervisor's decision, signed with the key pinned at install
// time (`--supervisor`). Only that makes the call run; everything else is a block with a
// reason the model reads: a reject, no decision in time, a forged approval, ARS missing,
// failing or too slow (fail closed, never a silent allow).
//
// With an approval route (a message channel: Control UI, Telegram, Slack, /approve) and
// `mirror` not "never", the held request is mirrored into OpenClaw's own plugin approvals
// (requireApproval): whichever side decides first settles both (see mirror.js).
//
// before_prompt_build, once per session: the startup context (`ars rehydrate`'s loops and
// memories, what waits in the inbox), like Claude Code's SessionStart.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import os from "node:os";
import path from "node:path";
import { mirrorHeld } from "./mirror.js";

const ID = "ars-gate";
const CHECK_BUDGET_MS = 5_000;   // one check by the running checker; longer: block, restart it
const HOLD_GRACE_S = 20;         // the hook's own start and its last answer, beyond the wait itself
const DEFAULT_WAIT_S = 50;       // the gate's default timeout (gate.toml `timeout`)

function block(reason) {
  return { block: true, blockReason: String(reason).slice(0, 2000) };
}

function oneLine(text) {
  return String(text ?? "").split(/\s+/).join(" ").trim().slice(0, 300);
}

// The checker: `ars hook openclaw --serve`, started on first use, restarted after a failure.
class Checker {
  constructor(argv, log) {
    this.argv = argv;
    this.log = log;
    this.child = null;
    this.pending = new Map();
    this.next = 1;
  }

  start() {
    const child = spawn(this.argv[0], this.argv.slice(1), { stdio: ["pipe", "pipe", "pipe"] });
    this.child = child;
    const lines = createInterface({ input: child.stdout });
    lines.on("line", (line) => {
      let answer;
      try { answer = JSON.parse(line); } catch { return; }
      const waiter = this.pending.get(answer?.id);
      if (waiter) { this.pending.delete(answer.id); waiter.resolve(answer); }
    });
    let stderr = "";
    child.stderr.on("data", (d) => { stderr = (stderr + d).slice(-2000); });
    const fail = (why) => {
      if (this.child === child) this.child = null;
      for (const [, waiter] of this.pending) waiter.reject(new Error(why));
      this.pending.clear();
    };
    child.on("error", (err) => fail(`cannot start ${this.argv[0]}: ${err.message}`));
    child.on("exit", (code, signal) => fail(`the ARS checker exited (${signal ?? code}): ${oneLine(stderr)}`));
    child.stdin.on("error", () => {});
    // never keep OpenClaw alive for the checker: it ends with the process (its stdin closes)
    child.unref();
    child.stdin.unref?.();
    child.stdout.unref?.();
    child.stderr.unref?.();
  }

  check(request) {
    if (!this.child) this.start();
    const id = this.next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        this.stop();
        reject(new Error(`ARS did not answer within ${CHECK_BUDGET_MS / 1000} s`));
      }, CHECK_BUDGET_MS);
      this.pending.set(id, {
        resolve: (a) => { clearTimeout(timer); resolve(a); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      });
      this.child.stdin.write(JSON.stringify({ id, ...request }) + "\n");
    });
  }

  stop() {
    const child = this.child;
    this.child = null;
    if (child) try { child.kill("SIGTERM"); } catch {}
  }
}

// A one-shot `ars hook openclaw`: one event in, JSON lines out. `onLine` sees each answer line
// as it comes (the mirror needs the request id before the wait ends); resolves with the last.
export function runHook(argv, event, { timeoutMs, signal, onLine, keepStdin } = {}) {
  return new Promise((resolve, reject) => {
    let child;
    try {
      child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "pipe"] });
    } catch (err) {
      reject(err);
      return;
    }
    let last = null;
    let stderr = "";
    const lines = createInterface({ input: child.stdout });
    lines.on("line", (line) => {
      let answer;
      try { answer = JSON.parse(line); } catch { return; }
      last = answer;
      onLine?.(answer, child);
    });
    child.stderr.on("data", (d) => { stderr = (stderr + d).slice(-2000); });
    const timer = timeoutMs ? setTimeout(() => { child.kill("SIGTERM"); }, timeoutMs) : null;
    const abort = () => child.kill("SIGTERM");
    signal?.addEventListener("abort", abort, { once: true });
    child.on("error", (err) => { clearTimeout(timer); reject(new Error(`cannot start ${argv[0]}: ${err.message}`)); });
    child.on("close", (code, sig) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", abort);
      if (last && !(sig && last.held)) resolve(last);
      else reject(new Error(`ars hook openclaw ended (${sig ?? code}) without an answer: ${oneLine(stderr)}`));
    });
    child.stdin.on("error", () => {});
    child.stdin.write(JSON.stringify(event) + "\n");
    if (!keepStdin) child.stdin.end();
  });
}

function settings(api) {
  const cfg = api.pluginConfig ?? {};
  const ars = Array.isArray(cfg.ars) && cfg.ars.length ? cfg.ars.map(String) : null;
  const base = ars ? [...ars, "hook", "openclaw", "--state", String(cfg.state)] : null;
  if (base && cfg.supervisor) base.push("--supervisor", String(cfg.supervisor));
  const wait = typeof cfg.waitSeconds === "number" && cfg.waitSeconds > 0 ? cfg.waitSeconds : DEFAULT_WAIT_S;
  // the project the gate allows writes in: the plugin's config, else the agent's workspace as
  // OpenClaw resolves it (agents.defaults.workspace, $OPENCLAW_WORKSPACE_DIR, <state dir>/workspace)
  const stateDir = process.env.OPENCLAW_STATE_DIR || path.join(os.homedir(), ".openclaw");
  let project = cfg.project || api.config?.agents?.defaults?.workspace || process.env.OPENCLAW_WORKSPACE_DIR
    || path.join(stateDir, "workspace");
  project = String(project);
  if (project === "~" || project.startsWith("~/")) project = path.join(os.homedir(), project.slice(1));
  return { base, wait, project, mirror: cfg.mirror ?? "auto", context: cfg.context !== false };
}

function hasApprovalRoute(ctx) {
  // a message channel can show OpenClaw's approval prompt; a CLI or cron run has none
  return Boolean(ctx?.channelId || ctx?.requester?.channel);
}

const plugin = {
  id: ID,
  name: "ARS gate",
  description: "Holds risky tool calls in the ARS inbox until the supervisor decides; fails closed.",
  register(api) {
    const log = api.logger ?? console;
    const s = settings(api);
    const checker = s.base ? new Checker([...s.base, "--serve"], log) : null;
    // start it now: the first tool call should not pay for a Python start (~200 ms)
    try { checker?.start(); } catch (err) { log.warn?.(`ars-gate: the ARS checker did not start: ${err.message}`); }
    const budgetMs = (s.wait + HOLD_GRACE_S) * 1000;
    const heldSessions = new Set();

    api.on("before_tool_call", async (event, ctx) => {
      if (!checker) return block("ARS gate: the plugin has no `ars` command configured (run `ars install openclaw`)");
      const session = String(ctx?.sessionKey ?? ctx?.sessionId ?? event.runId ?? "unknown");
      const request = {
        tool: event.toolName, params: event.params ?? {}, cwd: s.project, project: s.project,
        paths: Array.isArray(event.derivedPaths) ? [...event.derivedPaths] : undefined,
      };
      let verdict;
      try {
        verdict = await checker.check(request);
      } catch (err) {
        return block(`ARS gate could not check this call, so it is blocked: ${oneLine(err.message)}`);
      }
      if (verdict?.verdict === "pass") return undefined;
      heldSessions.add(session);
      const held = {
        event: "before_tool_call", ...request, session, call_id: event.toolCallId ?? ctx?.toolCallId ?? "",
        agent_id: ctx?.agentId, run_id: event.runId ?? ctx?.runId, wait: s.wait,
        session_id: ctx?.sessionId,  // where the supervisor's context is read from (the agent's store)
      };
      const mirror = s.mirror === "always" || (s.mirror === "auto" && hasApprovalRoute(ctx));
      if (mirror) return mirrorHeld({ argv: s.base, held, ctx, wait: s.wait, budgetMs, log, api });
      let answer;
      try {
        answer = await runHook(s.base, held, { timeoutMs: budgetMs, signal: ctx?.abortSignal });
      } catch (err) {
        if (ctx?.abortSignal?.aborted) {
          runHook(s.base, { event: "cancelled", session, call_id: held.call_id }, { timeoutMs: 30_000 }).catch(() => {});
        }
        return block(`ARS gate: the held call could not be decided, so it is blocked: ${oneLine(err.message)}`);
      }
      if (answer?.verdict === "allow") {
        log.info?.(`ars-gate: ${event.toolName} allowed: ${oneLine(answer.reason)}`);
        return undefined;
      }
      return block(answer?.reason ?? "ARS gate: blocked");
    }, { timeoutMs: budgetMs });

    if (s.context && s.base) {
      const seen = new Set();
      api.on("before_prompt_build", async (_event, ctx) => {
        const key = String(ctx?.sessionKey ?? ctx?.sessionId ?? "");
        if (seen.has(key)) return undefined;
        seen.add(key);
        try {
          const answer = await runHook(s.base, { event: "session_start", cwd: s.project }, { timeoutMs: 12_000 });
          return answer?.context ? { prependContext: answer.context } : undefined;
        } catch (err) {
          log.warn?.(`ars-gate: no startup context: ${oneLine(err.message)}`);
          return undefined;
        }
      });
    }

    api.on("session_end", async (_event, ctx) => {
      const session = String(ctx?.sessionKey ?? ctx?.sessionId ?? "");
      if (!s.base || !heldSessions.has(session)) return;
      heldSessions.delete(session);
      await runHook(s.base, { event: "session_end", session }, { timeoutMs: 20_000 }).catch(() => {});
    });
  },
};

export default plugin;

// ARS inside OpenClaw (written into openclaw.json by `ars install openclaw`): its gate on
// every tool call, and its memory in every turn.
//
// before_tool_call: every tool call is checked by ARS's gate (core/inbox/gate/) in the
// long-lived `ars hook openclaw --serve` (serve.js; one JSON line each way), so a call that
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
// Memory (turns.js), through the same process: before_prompt_build recalls into every
// turn (prependContext), agent_end captures every turn, after_tool_call records how a
// call the supervisor decided on ran. ARS's own memory tools are never held (the gate
// passes them, and Tool Search's tool_search/tool_describe; tool_call is checked as the
// call it makes, and an approved tool_call lets its one inner call through).
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import os from "node:os";
import path from "node:path";
import { mirrorHeld } from "./mirror.js";
import { arsArgv, oneLine, shared } from "./serve.js";
import { CAPTURE_MS, RECALL_MS, WARMUP_MS, registerTurns } from "./turns.js";

const ID = "ars-gate";
const CHECK_BUDGET_MS = 5_000;   // one check by the running checker; longer: block, restart it
const HOLD_GRACE_S = 20;         // the hook's own start and its last answer, beyond the wait itself
const DEFAULT_WAIT_S = 50;       // the gate's default timeout (gate.toml `timeout`)

function block(reason) {
  return { block: true, blockReason: String(reason).slice(0, 2000) };
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

function positive(value, fallback) {
  return typeof value === "number" && value > 0 ? value : fallback;
}

function settings(api) {
  const cfg = api.pluginConfig ?? {};
  const base = arsArgv(cfg);
  const wait = positive(cfg.waitSeconds, DEFAULT_WAIT_S);
  // the project the gate allows writes in: the plugin's config, else the agent's workspace as
  // OpenClaw resolves it (agents.defaults.workspace, $OPENCLAW_WORKSPACE_DIR, <state dir>/workspace)
  const stateDir = process.env.OPENCLAW_STATE_DIR || path.join(os.homedir(), ".openclaw");
  let project = cfg.project || api.config?.agents?.defaults?.workspace || process.env.OPENCLAW_WORKSPACE_DIR
    || path.join(stateDir, "workspace");
  project = String(project);
  if (project === "~" || project.startsWith("~/")) project = path.join(os.homedir(), project.slice(1));
  const memory = cfg.memory ?? {};
  return {
    base, wait, project, mirror: cfg.mirror ?? "auto",
    // memory in every turn: on unless the config says `"memory": {"recall": false}` (or the older `"context": false`)
    recall: cfg.context !== false && memory.recall !== false, capture: memory.capture !== false,
    startup: cfg.context !== false, budget: Number.isInteger(memory.budget) && memory.budget > 0 ? memory.budget : undefined,
    recallMs: positive(memory.recallMs, RECALL_MS), warmupMs: positive(memory.warmupMs, WARMUP_MS),
    captureMs: positive(memory.captureMs, CAPTURE_MS),
  };
}

// A tool_call approved by the supervisor runs one inner call, which OpenClaw hooks again
// (its id "tool_search_code:<parent>:<name>:<n>"): that call, with exactly the approved
// input, passes once instead of being held a second time.
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

function catalogTarget(params) {
  const ident = typeof params?.id === "string" ? params.id : params?.name;
  if (typeof ident !== "string" || !ident.trim()) return null;
  const name = (ident.match(/:/g) ?? []).length >= 2 ? ident.trim().split(":").pop() : ident.trim();
  let args = params.args;
  if (!args || typeof args !== "object" || Array.isArray(args)) {
    args = Object.fromEntries(Object.entries(params).filter(([k]) => !["id", "name", "args"].includes(k)));
  }
  return `${name}\n${canonical(args)}`;
}

function hasApprovalRoute(ctx) {
  // a message channel can show OpenClaw's approval prompt; a CLI or cron run has none
  return Boolean(ctx?.channelId || ctx?.requester?.channel);
}

const plugin = {
  id: ID,
  name: "ARS gate",
  description: "Holds risky tool calls in the ARS inbox until the supervisor decides (fails closed); "
    + "recalls ARS memory into every turn and captures every turn.",
  register(api) {
    const log = api.logger ?? console;
    const s = settings(api);
    const serve = s.base ? shared([...s.base, "--serve"]) : null;
    // start it now: the first tool call should not pay for a Python start (~200 ms), nor the
    // first turn for opening ARS
    try { if (serve && !serve.child) serve.start(); } catch (err) {
      log.warn?.(`ars-gate: the ARS process did not start: ${err.message}`);
    }
    const budgetMs = (s.wait + HOLD_GRACE_S) * 1000;
    const heldSessions = new Set();
    const decided = new Map();   // toolCallId -> the inbox request the supervisor approved (its outcome follows)
    const approvedInner = new Map();  // an approved tool_call's inner call -> when the approval lapses

    api.on("before_tool_call", async (event, ctx) => {
      if (!serve) return block("ARS gate: the plugin has no `ars` command configured (run `ars install openclaw`)");
      const session = String(ctx?.sessionKey ?? ctx?.sessionId ?? event.runId ?? "unknown");
      const request = {
        tool: event.toolName, params: event.params ?? {}, cwd: s.project, project: s.project,
        paths: Array.isArray(event.derivedPaths) ? [...event.derivedPaths] : undefined,
      };
      let verdict;
      try {
        verdict = await serve.request(request, CHECK_BUDGET_MS, { stopOnTimeout: true });
      } catch (err) {
        return block(`ARS gate could not check this call, so it is blocked: ${oneLine(err.message)}`);
      }
      if (verdict?.verdict === "pass") return undefined;
      const callId = event.toolCallId ?? ctx?.toolCallId ?? "";
      const inner = `${event.toolName}\n${canonical(event.params ?? {})}`;
      if (String(callId).startsWith("tool_search_code:") && (approvedInner.get(inner) ?? 0) > Date.now()) {
        approvedInner.delete(inner);  // once: the call the supervisor approved through tool_call
        return undefined;
      }
      heldSessions.add(session);
      const held = {
        event: "before_tool_call", ...request, session, call_id: callId,
        agent_id: ctx?.agentId, run_id: event.runId ?? ctx?.runId, wait: s.wait,
        session_id: ctx?.sessionId,  // where the supervisor's context is read from (the agent's store)
      };
      const approved = (requestId) => {
        if (requestId) decided.set(callId, requestId);
        const target = event.toolName === "tool_call" ? catalogTarget(event.params) : null;
        if (target) approvedInner.set(target, Date.now() + 60_000);
      };
      const mirror = s.mirror === "always" || (s.mirror === "auto" && hasApprovalRoute(ctx));
      if (mirror) {
        return mirrorHeld({ argv: s.base, held, ctx, wait: s.wait, budgetMs, log, api,
                            onAllowed: (requestId) => approved(requestId) });
      }
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
        approved(answer.request_id);
        return undefined;
      }
      return block(answer?.reason ?? "ARS gate: blocked");
    }, { timeoutMs: budgetMs });

    if (serve) registerTurns(api, serve, s, log, decided);

    api.on("session_end", async (_event, ctx) => {
      const session = String(ctx?.sessionKey ?? ctx?.sessionId ?? "");
      if (!s.base || !heldSessions.has(session)) return;
      heldSessions.delete(session);
      await runHook(s.base, { event: "session_end", session }, { timeoutMs: 20_000 }).catch(() => {});
    });
  },
};

export default plugin;

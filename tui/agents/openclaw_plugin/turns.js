// ARS's memory in every OpenClaw turn, through the long-lived `ars hook openclaw --serve`
// (serve.js; tui/agents/openclaw_memory.py answers):
//
// - before_prompt_build, every turn: the user's message (and the assistant's turn before
//   it) asks ARS.context what this turn should know; its block goes in as prependContext.
//   A session's first turn also gets what waits for the supervisor (the startup context),
//   when there is any. Within a deadline (recallMs; warmupMs while the process is still
//   opening ARS): no answer in time injects nothing, logs one line, and the turn goes on.
// - agent_end, every turn: the user's message, the answer, each tool call with its exit
//   status and the head of its output go to ARS.capture_turn, durable when it answers.
// - after_tool_call: a call the supervisor decided on (its inbox request) records how it
//   ran, so the decision and its outcome are one memory.
import { oneLine } from "./serve.js";

export const RECALL_MS = 1_000;     // a turn's recall, the process warm
export const WARMUP_MS = 6_000;     // the first turns, while the process opens ARS
export const CAPTURE_MS = 5_000;    // a turn's capture (agent_end waits for it on one-shot runs)
const OUTPUT_HEAD = 4_000;          // characters of a tool's output kept with the turn
const MAX_TURN_TOOLS = 200;

export function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.filter((b) => b?.type === "text" && typeof b.text === "string").map((b) => b.text).join("\n");
}

// The user's request this turn: the host's own record of it when it gives one (`prompt` can
// hold reconstructed history and channel envelopes), else the prompt.
export function userPrompt(event) {
  if (typeof event?.currentUserMessage === "string") return event.currentUserMessage;
  return typeof event?.prompt === "string" ? event.prompt : "";
}

export function lastAssistantText(messages) {
  if (!Array.isArray(messages)) return "";
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === "assistant") {
      const text = textOf(m.content).trim();
      if (text) return text;
    }
  }
  return "";
}

function isUserTurn(m) {
  return m?.role === "user" && !m.runtimeContextCarrier;
}

// The turn that just ended, from the session's messages: the last user message, the
// answer after it, and each tool call after it with its result.
export function turnOf(messages) {
  if (!Array.isArray(messages) || !messages.length) return null;
  let start = -1;
  for (let i = messages.length - 1; i >= 0; i--) if (isUserTurn(messages[i])) { start = i; break; }
  const after = messages.slice(start + 1);
  const calls = new Map();
  const answers = [];
  for (const m of after) {
    if (m?.role === "assistant" && Array.isArray(m.content)) {
      const text = textOf(m.content).trim();
      if (text) answers.push(text);
      for (const b of m.content) {
        if (b?.type === "toolCall" && calls.size < MAX_TURN_TOOLS) {
          calls.set(b.id, { id: b.id, name: String(b.name ?? "tool"), input: b.arguments ?? {}, exit: null, output: "" });
        }
      }
    } else if (m?.role === "toolResult") {
      const call = calls.get(m.toolCallId) ?? { id: m.toolCallId, name: String(m.toolName ?? "tool"), input: {} };
      call.output = textOf(m.content).slice(0, OUTPUT_HEAD);
      const code = m.details?.exitCode;
      call.exit = Number.isInteger(code) ? code : (m.isError ? 1 : 0);
      calls.set(m.toolCallId, call);
    }
  }
  const user = start >= 0 ? textOf(messages[start].content) : "";
  const ts = start >= 0 && Number.isFinite(messages[start].timestamp) ? new Date(messages[start].timestamp).toISOString() : undefined;
  return { user, assistant: answers.join("\n\n"), tools: [...calls.values()], ts };
}

function sessionOf(ctx) {
  return String(ctx?.sessionId ?? ctx?.sessionKey ?? "");
}

// `held`: toolCallId -> the inbox request the supervisor decided (index.js fills it).
export function registerTurns(api, serve, s, log, held) {
  const startupSeen = new Set();
  const injected = new Map();  // session -> the last block given (kept out of what is captured)

  if (s.recall || s.startup) api.on("before_prompt_build", async (event, ctx) => {
    const session = sessionOf(ctx);
    const prompt = userPrompt(event);
    const first = !startupSeen.has(session);
    startupSeen.add(session);
    const deadline = serve.ready ? s.recallMs : s.warmupMs;
    const started = Date.now();
    const [recall, startup] = await Promise.allSettled([
      s.recall ? serve.request({
        op: "context", prompt, previous: lastAssistantText(event?.messages), session, turn: ctx?.runId,
        timeout_ms: deadline, ...(s.budget ? { budget: s.budget } : {}),
      }, deadline) : Promise.resolve({}),
      first && s.startup ? serve.request({ op: "startup", cwd: s.project }, deadline) : Promise.resolve({}),
    ]);
    const parts = [];
    const a = recall.status === "fulfilled" ? recall.value : null;
    if (!a) {
      log.warn?.(`ars-gate: no recall for this turn (${Date.now() - started} ms): ${oneLine(recall.reason?.message)}`);
    } else if (a.late || a.error || a.warn) {
      log.warn?.(`ars-gate: recall: ${a.late ? `late (past ${deadline} ms)` : oneLine(a.error ?? a.warn)}`);
    }
    if (a?.text) parts.push(a.text);
    if (startup?.status === "fulfilled" && startup.value?.context) parts.push(startup.value.context);
    if (!parts.length) return undefined;
    const text = parts.join("\n\n");
    injected.set(session, text);
    return { prependContext: text };
  });

  if (s.capture) api.on("agent_end", async (event, ctx) => {
    const turn = turnOf(event?.messages);
    if (!turn) return;
    const session = sessionOf(ctx);
    const given = injected.get(session);
    if (given && turn.user.startsWith(given)) turn.user = turn.user.slice(given.length).trimStart();
    for (const t of turn.tools) if (held.has(t.id)) t.request_id = held.get(t.id);
    if (event?.success === false && event?.error) {
      turn.assistant = `${turn.assistant}\n\n(the turn failed: ${oneLine(event.error)})`.trim();
    }
    try {
      const a = await serve.request({ op: "capture", session, turn: event?.runId ?? ctx?.runId, ...turn,
                                      agent_id: ctx?.agentId, session_key: ctx?.sessionKey }, s.captureMs);
      if (a?.error || a?.warn) log.warn?.(`ars-gate: capture: ${oneLine(a.error ?? a.warn)}`);
    } catch (err) {
      log.warn?.(`ars-gate: this turn was not captured: ${oneLine(err.message)}`);
    }
  });

  api.on("after_tool_call", async (event, ctx) => {
    const requestId = held.get(event?.toolCallId ?? ctx?.toolCallId);
    if (!requestId) return;
    const result = event.result ?? {};
    const code = result?.details?.exitCode;
    try {
      const a = await serve.request({
        op: "outcome", request_id: requestId, session: sessionOf(ctx), tool: event.toolName,
        exit: Number.isInteger(code) ? code : (event.error ? 1 : 0),
        output: textOf(result?.content).slice(0, OUTPUT_HEAD), error: event.error,
      }, s.captureMs);
      if (a?.error || (a?.ok === false && a?.note)) log.warn?.(`ars-gate: outcome: ${oneLine(a.error ?? a.note)}`);
    } catch (err) {
      log.warn?.(`ars-gate: the outcome of ${requestId} was not recorded: ${oneLine(err.message)}`);
    }
  });
}

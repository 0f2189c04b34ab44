// A minimal host for ARS's OpenClaw plugin (tui/agents/openclaw_plugin/index.js): it calls
// the plugin's register(api) as OpenClaw does and runs its before_tool_call handler on
// request, so tests and bench/openclaw_gate.py can time and drive the plugin's own code
// (its checker, its hold, its fail-closed answers) without a whole OpenClaw turn
// (tests/tui/agents/test_openclaw_e2e.py runs the real OpenClaw).
//
//   node openclaw_plugin_host.mjs PLUGIN_DIR 'PLUGIN_CONFIG_JSON'
//
// stdin, one JSON object a line:
//   {"n": 1, "tool": "exec", "params": {...}, "toolCallId": "c1", "ctx": {...}}  -> runs the handler
//     (with "abortAfterMs": N, its ctx.abortSignal aborts after N ms)
//   {"resolve": "deny"}   -> calls the last requireApproval's onResolution (OpenClaw decided)
//   {"n": 2, "hook": "before_prompt_build", "event": {...}, "ctx": {...}}  -> runs that hook's handler
//     with the event and context as given (agent_end, after_tool_call, ... the same way)
// stdout, one line per handler result: {"n", "ms", "result"} (onResolution left out of it).
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [pluginDir, configJson] = process.argv.slice(2);
const { default: plugin } = await import(pathToFileURL(path.join(pluginDir, "index.js")).href);
const handlers = new Map();
const logs = [];
const api = {
  pluginConfig: JSON.parse(configJson),
  config: {},
  logger: { info: (m) => logs.push(m), warn: (m) => logs.push(m), error: (m) => logs.push(m) },
  on(name, handler, opts) { handlers.set(name, { handler, opts }); },
};
plugin.register(api);
let lastApproval = null;
const out = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");
out({ ready: true, hooks: [...handlers.keys()], budgetMs: handlers.get("before_tool_call")?.opts?.timeoutMs });

const pending = [];
const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const cmd = JSON.parse(line);
  if (cmd.resolve) {
    lastApproval?.onResolution?.(cmd.resolve);
    out({ resolved: cmd.resolve });
    return;
  }
  const started = performance.now();
  if (cmd.hook) {  // any other hook, with the event and context as the test gives them
    const registered = handlers.get(cmd.hook);
    if (!registered) { out({ n: cmd.n, error: `no handler for ${cmd.hook}` }); return; }
    const p = Promise.resolve(registered.handler(cmd.event ?? {}, cmd.ctx ?? {})).then(
      (result) => out({ n: cmd.n, ms: performance.now() - started, result: result ?? null }),
      (err) => out({ n: cmd.n, error: String(err?.message ?? err) }));
    pending.push(p);
    return;
  }
  const { handler } = handlers.get("before_tool_call");
  const event = { toolName: cmd.tool, params: cmd.params ?? {}, toolCallId: cmd.toolCallId, runId: "run-host" };
  const ctx = { sessionKey: cmd.session ?? "agent:main:host", toolCallId: cmd.toolCallId, ...(cmd.ctx ?? {}) };
  if (cmd.abortAfterMs) {  // the run is cancelled while the call waits (OpenClaw's ctx.abortSignal)
    const controller = new AbortController();
    ctx.abortSignal = controller.signal;
    setTimeout(() => controller.abort(new Error("run aborted")), cmd.abortAfterMs);
  }
  const p = Promise.resolve(handler(event, ctx)).then((result) => {
    const ms = performance.now() - started;
    if (result?.requireApproval) {
      lastApproval = result.requireApproval;
      const { onResolution, ...shown } = result.requireApproval;
      result = { requireApproval: shown };
    }
    out({ n: cmd.n, ms, result: result ?? null });
  }, (err) => out({ n: cmd.n, error: String(err?.message ?? err) }));
  pending.push(p);
});
lines.on("close", async () => {
  await Promise.allSettled(pending);
  out({ done: true, logs });
  process.exit(0);
});

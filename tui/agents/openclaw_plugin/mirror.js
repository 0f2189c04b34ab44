// A held call mirrored into OpenClaw's own plugin approvals (requireApproval), for runs
// with an approval route (a message channel, the Control UI): one decision settles both.
//
// `ars hook openclaw` with `mirror: true` creates the ARS request, prints
// {"held": ID, "title", "description"} and keeps waiting for the supervisor, reading
// stdin. This returns requireApproval with the request's id in its text, then:
// - decided in OpenClaw first (allow-once / deny / timeout, from /approve, a button, the
//   Control UI): onResolution writes it to the hook, which withdraws the ARS request
//   saying "decided in OpenClaw (allow-once)"; OpenClaw's own decision is what runs.
// - decided in ARS first (the supervisor's signed approval, or a reject): the hook prints
//   its verdict and this resolves OpenClaw's pending approval through the Gateway
//   (`plugin.approval.list` for this toolCallId, then `plugin.approval.resolve` with
//   allow-once or deny), so the prompt in every channel shows it as decided.
// Anything failing on the way blocks (a deny), never a silent allow.
import { spawn } from "node:child_process";
import { runHook } from "./index.js";

function gatewayCall(method, params, timeoutMs = 15_000) {
  // the CLI this process runs from: `openclaw gateway call METHOD --params JSON --json`
  const cli = process.argv[1];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, "gateway", "call", method, "--params", JSON.stringify(params), "--json"],
      { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => { out += d; });
    child.stderr.on("data", (d) => { err = (err + d).slice(-1000); });
    const timer = setTimeout(() => child.kill("SIGTERM"), timeoutMs);
    child.on("error", (e) => { clearTimeout(timer); reject(e); });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code !== 0) { reject(new Error(`gateway call ${method} exited ${code}: ${err.trim().slice(0, 300)}`)); return; }
      try { resolve(JSON.parse(out)); } catch { resolve({}); }
    });
  });
}

async function resolveInOpenClaw(toolCallId, decision, log) {
  const listed = await gatewayCall("plugin.approval.list", {});
  const items = Array.isArray(listed) ? listed : (listed?.approvals ?? listed?.items ?? []);
  const mine = items.find((a) => (a?.request?.toolCallId ?? a?.toolCallId) === toolCallId);
  if (!mine?.id) {
    log.warn?.(`ars-gate: no pending OpenClaw approval for ${toolCallId} to settle`);
    return;
  }
  await gatewayCall("plugin.approval.resolve", { id: mine.id, decision });
}

export function mirrorHeld({ argv, held, wait, budgetMs, log }) {
  return new Promise((resolveHook) => {
    let hookChild = null;
    let answered = false;   // the hook's result went back to OpenClaw (requireApproval or a block)
    let settledHere = false; // OpenClaw's approval was decided in OpenClaw
    const done = runHook(argv, { ...held, mirror: true }, {
      timeoutMs: budgetMs,
      keepStdin: true,
      onLine: (line, child) => {
        hookChild = child;
        if (!line.held || answered) return;
        answered = true;
        resolveHook({
          requireApproval: {
            title: String(line.title ?? "ARS: a held tool call").slice(0, 80),
            description: String(line.description ?? "").slice(0, 512),
            severity: line.risk === "high" ? "critical" : "warning",
            allowedDecisions: ["allow-once", "deny"],
            timeoutMs: Math.round(wait * 1000),
            onResolution: (decision) => {
              if (settledHere) return;
              settledHere = true;
              try { hookChild?.stdin.end(JSON.stringify({ openclaw: String(decision) }) + "\n"); } catch {}
            },
          },
        });
      },
    });
    done.then((final) => {
      if (!answered) {
        answered = true;
        resolveHook(final?.verdict === "allow" ? undefined : { block: true, blockReason: String(final?.reason ?? "ARS gate: blocked") });
        return;
      }
      if (settledHere || !final?.verdict) return;
      // decided in ARS first: settle OpenClaw's pending approval the same way
      const decision = final.verdict === "allow" ? "allow-once" : "deny";
      resolveInOpenClaw(held.call_id, decision, log).catch((err) => {
        log.warn?.(`ars-gate: could not settle OpenClaw's approval for ${held.call_id}: ${err.message}`);
      });
    }, (err) => {
      if (!answered) {
        answered = true;
        resolveHook({ block: true, blockReason: `ARS gate: the held call could not be decided, so it is blocked: ${err.message}` });
      }
    });
  });
}

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
//   allow-once or deny, over the Gateway's WebSocket), so the prompt in every channel
//   shows it as decided.
// Anything failing on the way blocks (a deny), never a silent allow.
import { runHook } from "./index.js";

// One short operator connection to the Gateway (WebSocket, its token; `operator.admin`, the
// scope that sees approvals another connection requested): `plugin.approval.list` for this
// toolCallId, then `plugin.approval.resolve`. Where: `gateway` in the plugin's config
// ({url, token}), else ws://127.0.0.1:$OPENCLAW_GATEWAY_PORT (or gateway.port, 18789) with
// $OPENCLAW_GATEWAY_TOKEN (or gateway.auth.token).
export function gatewayTarget(config, pluginConfig) {
  const g = pluginConfig?.gateway ?? {};
  const port = process.env.OPENCLAW_GATEWAY_PORT || config?.gateway?.port || 18789;
  return {
    url: g.url || `ws://127.0.0.1:${port}`,
    token: g.token || process.env.OPENCLAW_GATEWAY_TOKEN || config?.gateway?.auth?.token || "",
  };
}

export function gatewayRpc(target, calls, timeoutMs = 15_000) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(target.url);
    const results = [];
    let step = -1;
    const timer = setTimeout(() => { try { ws.close(); } catch {} reject(new Error(`the Gateway at ${target.url} did not answer within ${timeoutMs / 1000} s`)); }, timeoutMs);
    const finish = (err) => { clearTimeout(timer); try { ws.close(); } catch {} err ? reject(err) : resolve(results); };
    const next = () => {
      step += 1;
      if (step >= calls.length) { finish(); return; }
      let method, params;
      try {
        [method, params] = typeof calls[step] === "function" ? calls[step](results) : calls[step];
      } catch (err) {
        finish(err);  // a step that finds nothing to do ends the call with its reason
        return;
      }
      ws.send(JSON.stringify({ type: "req", id: `ars-${step}`, method, params }));
    };
    ws.onerror = () => finish(new Error(`cannot reach the Gateway at ${target.url}`));
    ws.onmessage = (m) => {
      let f;
      try { f = JSON.parse(m.data); } catch { return; }
      if (f.type === "event" && f.event === "connect.challenge") {
        ws.send(JSON.stringify({ type: "req", id: "ars-connect", method: "connect", params: {
          minProtocol: 4, maxProtocol: 4, client: { id: "cli", version: "1.0.0", platform: process.platform, mode: "cli" },
          role: "operator", scopes: ["operator.admin"], caps: [], commands: [], permissions: {},
          auth: { token: target.token }, locale: "en-US", userAgent: "ars-gate" } }));
        return;
      }
      if (f.type !== "res") return;
      if (!f.ok) { finish(new Error(`${f.id === "ars-connect" ? "connect" : calls[step]?.[0] ?? "call"}: ${f.error?.message ?? "refused"}`)); return; }
      if (f.id !== "ars-connect") results.push(f.payload);
      next();
    };
  });
}

export async function resolveInOpenClaw(target, toolCallId, decision) {
  let approvalId = null;
  await gatewayRpc(target, [
    ["plugin.approval.list", {}],
    (results) => {
      const items = Array.isArray(results[0]) ? results[0] : (results[0]?.approvals ?? []);
      const mine = items.find((a) => (a?.request?.toolCallId ?? a?.toolCallId) === toolCallId);
      if (!mine?.id) throw new Error(`no pending OpenClaw approval for the call ${toolCallId}`);
      approvalId = mine.id;
      return ["plugin.approval.resolve", { id: mine.id, decision }];
    },
  ]);
  return approvalId;
}

export function mirrorHeld({ argv, held, wait, budgetMs, log, api, onAllowed }) {
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
        if (final?.verdict === "allow") onAllowed?.(final.request_id);
        resolveHook(final?.verdict === "allow" ? undefined : { block: true, blockReason: String(final?.reason ?? "ARS gate: blocked") });
        return;
      }
      if (settledHere || !final?.verdict) return;
      // decided in ARS first: settle OpenClaw's pending approval the same way
      const decision = final.verdict === "allow" ? "allow-once" : "deny";
      if (final.verdict === "allow") onAllowed?.(final.request_id);
      resolveInOpenClaw(gatewayTarget(api?.config, api?.pluginConfig), held.call_id, decision).then(
        (id) => log.info?.(`ars-gate: OpenClaw's approval ${id} settled as ${decision}, decided in ARS`),
        (err) => log.warn?.(`ars-gate: could not settle OpenClaw's approval for ${held.call_id}: ${err.message}`));
    }, (err) => {
      if (!answered) {
        answered = true;
        resolveHook({ block: true, blockReason: `ARS gate: the held call could not be decided, so it is blocked: ${err.message}` });
      }
    });
  });
}

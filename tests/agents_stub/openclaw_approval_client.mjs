// An approval client on a real OpenClaw Gateway (what the Control UI is to it): connects
// over the WebSocket with the Gateway's token, the operator scope that sees every approval
// and the `approvals` capability (so plugin approvals have a route and stay pending), then
// prints each plugin.approval.* event as one JSON line until killed.
//
//   node openclaw_approval_client.mjs ws://127.0.0.1:PORT TOKEN
const [url, token] = process.argv.slice(2);
const ws = new WebSocket(url);
const out = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");
ws.onmessage = (m) => {
  const f = JSON.parse(m.data);
  if (f.type === "event" && f.event === "connect.challenge") {
    ws.send(JSON.stringify({ type: "req", id: "connect", method: "connect", params: {
      minProtocol: 4, maxProtocol: 4, client: { id: "cli", version: "1.0.0", platform: process.platform, mode: "cli" },
      role: "operator", scopes: ["operator.admin"], caps: ["approvals"], commands: [], permissions: {},
      auth: { token }, locale: "en-US", userAgent: "ars-test-approval-client" } }));
  } else if (f.type === "res" && f.id === "connect") {
    out(f.ok ? { connected: true, scopes: f.payload?.auth?.scopes } : { connected: false, error: f.error });
  } else if (f.type === "event" && String(f.event).startsWith("plugin.approval.")) {
    out({ event: f.event, payload: f.payload });
  }
};
ws.onclose = (e) => { out({ closed: e.code, reason: e.reason }); process.exit(0); };

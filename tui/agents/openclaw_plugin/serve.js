// The long-lived `ars hook openclaw --serve` (tui/agents/openclaw_serve.py): one JSON line
// each way, matched by id. The gate's checks and the memory requests (a turn's context, its
// capture, a decided call's outcome, the memory tools) all go to this one process, started
// once per OpenClaw process and restarted after a failure.
//
// One process per command line in the whole OpenClaw process: the gate plugin (ars-gate)
// and the memory plugin (ars-memory) share it through `shared(argv)`, even when OpenClaw
// loads each plugin's copy of this module apart.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

export function oneLine(text) {
  return String(text ?? "").split(/\s+/).join(" ").trim().slice(0, 300);
}

export class Serve {
  constructor(argv) {
    this.argv = argv;
    this.child = null;
    this.pending = new Map();
    this.next = 1;
    this.ready = false;     // the process has opened ARS and paid a first recall
  }

  start() {
    const child = spawn(this.argv[0], this.argv.slice(1), { stdio: ["pipe", "pipe", "pipe"] });
    this.child = child;
    this.ready = false;
    const lines = createInterface({ input: child.stdout });
    lines.on("line", (line) => {
      let answer;
      try { answer = JSON.parse(line); } catch { return; }
      if (answer?.ready === true && answer.id === undefined) {
        this.ready = true;
        return;
      }
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
    child.on("exit", (code, signal) => fail(`the ARS process exited (${signal ?? code}): ${oneLine(stderr)}`));
    child.stdin.on("error", () => {});
    // never keep OpenClaw alive for it: it ends with the process (its stdin closes), after
    // finishing the captures already asked for
    child.unref();
    child.stdin.unref?.();
    child.stdout.unref?.();
    child.stderr.unref?.();
  }

  // One request; rejects after `timeoutMs`. `stopOnTimeout`: a check that does not answer
  // means the process is stuck (restart it); a slow recall only means this turn goes without.
  request(payload, timeoutMs, { stopOnTimeout = false } = {}) {
    if (!this.child) this.start();
    const id = this.next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        if (stopOnTimeout) this.stop();
        reject(new Error(`ARS did not answer within ${timeoutMs / 1000} s`));
      }, timeoutMs);  // not unref'd: an answer awaited keeps OpenClaw's event loop alive until it comes
      this.pending.set(id, {
        resolve: (a) => { clearTimeout(timer); resolve(a); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      });
      this.child.stdin.write(JSON.stringify({ ...payload, id }) + "\n");
    });
  }

  stop() {
    const child = this.child;
    this.child = null;
    if (child) try { child.kill("SIGTERM"); } catch {}
  }
}

const REGISTRY = Symbol.for("ars.openclaw.serve");

export function shared(argv) {
  const all = (globalThis[REGISTRY] ??= new Map());
  const key = JSON.stringify(argv);
  let serve = all.get(key);
  if (!serve) {
    serve = new Serve(argv);
    all.set(key, serve);
  }
  return serve;
}

// The plugin's settings as `ars install openclaw` wrote them (plugins.entries.<id>.config).
export function arsArgv(cfg) {
  const ars = Array.isArray(cfg?.ars) && cfg.ars.length ? cfg.ars.map(String) : null;
  const base = ars ? [...ars, "hook", "openclaw", "--state", String(cfg.state)] : null;
  if (base && cfg.supervisor) base.push("--supervisor", String(cfg.supervisor));
  if (base && cfg.policyVersion) base.push("--policy-version", String(cfg.policyVersion));
  return base;
}

"""Team sync: several hosts (state directories, separate processes) ingesting
and syncing concurrently into one Neo4j.

    python bench/team_sync.py [--hosts 4] [--episodes 25000] [--trials 10] [--trial-episodes 5000]
                              [--queries 200] [--neo4j-uri URI] [--json]

The defaults are the issue's size: 4 hosts x 25,000 episodes, 10 kill trials.
The kill trials run 5,000 episodes per host each (a trial at 25,000 takes
about as long as run 1: ten of them would be most of an hour); the table says
which size each row ran, and a run without a kill at the trials' size is
their baseline in the same run.

Run 1 (steady): every host ingests its own synthetic corpus (bench/synthetic.py,
one seed per host) in batches while it runs ``sync run`` (push its ledger, pull
the others') in a loop; an intruder host in another namespace does the same
beside them. Measured: episodes/s into the graph (the team's episodes over the
time from the first start to the last host's push done), convergence (from the
last ingest anywhere until every host holds every team episode in its SQLite),
then checked: drift 0 on every host, duplicates 0 (graph and each SQLite), lost
0, isolation violations 0 (no team host holds or recalls an intruder episode,
nor the intruder a team one).

Run 2 (kill trials): the same, with one host picked at random SIGKILLed at a
random moment while it has a push backlog, then restarted (its ingest re-runs
and skips what it had stored); same checks after each trial.

Every row carries the 1-minute load average at its start and end: the CPU is
shared, and a figure measured beside other work is a floor.

Recall p95: Neo4j and SQLite tiers, queried from one host after run 1, with
the graph holding the team's (hosts x episodes) from several hosts, vs the same
corpora ingested by one host into its namespace (the graph cleared between).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "bench"))

from core.config import Settings  # noqa: E402
from core.memory.memory import Memory  # noqa: E402

BATCH = 500  # episodes per ingest batch (one ledger fsync each)
PUSH_ONLY_ENV = "BENCH_PUSH_ONLY"


def settings(state: Path, uri: str, ns: str, host: str, **kw) -> Settings:
    return Settings(state_dir=state, neo4j_uri=uri, namespace=ns, host_id=host, embedder="off",
                    recall_daemon="off", **kw)


# -- a host: one process ----------------------------------------------------------------
def child(state: str, ns: str, host: str, corpora: str, uri: str, expected: int) -> None:
    """Ingest this host's corpus in a thread while syncing in a loop; print
    ``EVENT <wall time>`` lines: START, INGESTED, PUSHED, CONVERGED."""
    from core.ingest.pipeline import ingest

    mem = Memory(settings(Path(state), uri, ns, host))
    mem.recover()
    if os.environ.get(PUSH_ONLY_ENV) == "1":
        # a host that only writes (--pullers): its sync pushes and reads nothing back, so that
        # ten hosts x 100,000 do not need ten local copies of the whole million (~8 GB each)
        from core.consumers.team_pull import PullReport

        mem.sync.pull.run = lambda **_kw: PullReport(caught_up=True)

    def say(what: str) -> None:
        sys.stdout.write(f"{what} {time.time():.3f}\n" if " " not in what else what + "\n")
        sys.stdout.flush()

    done = threading.Event()

    def ingester() -> None:
        # ACKED: a batch acknowledged (durable); a re-ingest after a restart acknowledges nothing new
        ingest(mem, corpora.split(","), fmt="episodes", batch=BATCH, on_ack=lambda ids: ids and say("ACKED"))
        say("INGESTED")
        done.set()

    say("START")
    threading.Thread(target=ingester, daemon=True).start()
    pushed = False
    # where this host's sync loop spent its time (printed as PHASES at the end;
    # with ARS_BENCH_TIMELINE, one line per sync run in that folder, for a plot)
    phases = {"runs": 0, "push_s": 0.0, "pull_s": 0.0, "pushed": 0, "pulled": 0, "idle_s": 0.0}
    timeline = os.environ.get("ARS_BENCH_TIMELINE")
    tl = open(Path(timeline) / f"{host}-{os.getpid()}.jsonl", "w") if timeline else None
    while True:
        r = mem.sync.run(max_seconds=30, retries=1)
        phases["runs"] += 1
        phases["push_s"] += r.push_seconds
        phases["pull_s"] += r.pull_seconds
        phases["pushed"] += r.applied
        phases["pulled"] += r.pulled
        if tl is not None:
            tl.write(json.dumps({"t": time.time(), "push_s": r.push_seconds, "pull_s": r.pull_seconds,
                                 "pushed": r.applied, "pulled": r.pulled, "pending": r.pending,
                                 "ingesting": not done.is_set(), "error": r.error}) + "\n")
            tl.flush()
        if done.is_set() and r.ok and r.pending == 0 and not pushed:
            pushed = True
            say("PUSHED")
        if pushed and mem.sqlite.count() >= expected:
            say("CONVERGED")
            break
        if not r.applied and not r.pulled:
            time.sleep(0.2)
            phases["idle_s"] += 0.2
    say("PHASES " + json.dumps(phases, separators=(",", ":")))
    mem.close()


class Host:
    def __init__(self, base: Path, ns: str, name: str, corpora: list[Path], uri: str, expected: int,
                 pulls: bool = True):
        self.state = base / name
        self.pulls = pulls  # False: pushes only, holds only its own episodes (--pullers)
        self.ns, self.name, self.corpora, self.uri, self.expected = ns, name, corpora, uri, expected
        self.events: dict[str, float] = {}
        self.phases: dict | None = None  # the child's PHASES line: where its sync loop spent its time
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--child", str(self.state), self.ns, self.name,
             ",".join(map(str, self.corpora)), self.uri, str(self.expected)],
            stdout=subprocess.PIPE, text=True, cwd=ROOT, env={**os.environ, PUSH_ONLY_ENV: "0" if self.pulls else "1"})
        proc = self.proc

        def read() -> None:
            for line in proc.stdout:  # type: ignore[union-attr]
                what, _, t = line.strip().partition(" ")
                if what == "PHASES":
                    self.phases = json.loads(t)
                elif what == "ACKED":
                    self.events["ACKED"] = float(t)  # the latest
                elif what in ("START", "INGESTED", "PUSHED", "CONVERGED"):
                    self.events.setdefault(what, float(t))

        threading.Thread(target=read, daemon=True).start()

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def backlog(self) -> tuple[int, int]:
        """(push cursor, ledger size) from the files (the process may be busy)."""
        try:
            cur = json.loads((self.state / "sync.json").read_text())["neo4j"]["offset"]
        except (OSError, ValueError, KeyError):
            cur = 0
        try:
            size = (self.state / "ledger.jsonl").stat().st_size
        except OSError:
            size = 0
        return cur, size


def corpus(cache: Path, n: int, seed: int) -> Path:
    from synthetic import write_corpus

    path = cache / f"team-{n}-{seed}.jsonl"
    if not path.exists():
        write_corpus(path, n, seed=seed)
    return path


def ids_of(path: Path) -> set[str]:
    with open(path, encoding="utf-8") as fh:
        return {json.loads(line)["id"] for line in fh}


def run_team(base: Path, uri: str, hosts: int, n: int, cache: Path, ns: str, kill: bool,
             rng: random.Random, timeout: float, pullers: int | None = None) -> dict:
    """One run of ``hosts`` hosts in namespace ``ns`` plus an intruder; returns measurements and checks."""
    corpora = [corpus(cache, n, seed=100 + i) for i in range(hosts)]
    intruder_corpus = corpus(cache, max(n // 10, 50), seed=999)
    load_start = os.getloadavg()[0]
    pullers = hosts if pullers is None else pullers
    team = [Host(base, ns, f"{ns}-h{i + 1}", [c], uri, hosts * n if i < pullers else n, pulls=i < pullers)
            for i, c in enumerate(corpora)]
    intruder = Host(base, f"{ns}-other", f"{ns}-x", [intruder_corpus], uri, max(n // 10, 50))
    everyone = [*team, intruder]
    for h in everyone:
        h.start()
    killed = None
    t_end = time.monotonic() + timeout
    if kill:
        victim = rng.choice(team)
        # a random moment of its ingest-and-sync, at which it has a push backlog
        # (a push in flight or about to start: its loop pushes whenever there is
        # one): once its ledger holds a random share of its corpus (the ledger
        # is a little larger than the corpus file). A random delay in seconds
        # missed the push altogether when the push kept up.
        share = rng.uniform(0.05, 0.8) * victim.corpora[0].stat().st_size
        while time.monotonic() < t_end and victim.proc.poll() is None:
            cur, size = victim.backlog()
            if size >= share and cur < size:
                victim.kill()
                killed = {"host": victim.name, "cursor": cur, "ledger": size, "at": time.time()}
                break
            time.sleep(0.01)
        if killed is not None:
            victim.events.pop("START", None)
            victim.events.pop("INGESTED", None)
            killed["restarted"] = time.time()
            victim.start()  # restarted: recovers, re-ingests (skipping what it stored), resumes its push
    for h in everyone:
        left = t_end - time.monotonic()
        try:
            h.proc.wait(max(left, 1))
        except subprocess.TimeoutExpired:
            h.proc.kill()
            h.proc.wait()
    ev = lambda what, hs: [h.events.get(what) for h in hs]  # noqa: E731
    starts, ingested, pushed, converged = (ev(w, team) for w in ("START", "INGESTED", "PUSHED", "CONVERGED"))
    complete = all(t is not None for t in converged)
    out = {
        "hosts": hosts, "pullers": pullers, "episodes_per_host": n, "team_episodes": hosts * n, "killed": killed,
        "complete": complete, "load": (load_start, os.getloadavg()[0]),
        "phases": {h.name: h.phases for h in team if h.phases},
    }
    if complete:
        t0 = min(t for t in starts if t is not None)
        out["graph_eps_per_s"] = hosts * n / (max(pushed) - t0)
        out["ingest_s"] = max(ingested) - t0
        # from the last episode acknowledged anywhere (and the victim's restart), until
        # every host holds every team episode
        last = max([h.events.get("ACKED") or 0.0 for h in team] + [(killed or {}).get("restarted", 0.0)])
        out["convergence_s"] = max(converged) - last
        out["first_push_done_s"] = min(pushed) - t0
        out["all_pushed_s"] = max(pushed) - t0
    out.update(check(team, intruder, uri, hosts * n, [ids_of(c) for c in corpora], ids_of(intruder_corpus)))
    return out


def check(team: list[Host], intruder: Host, uri: str, total: int, team_ids: list[set[str]],
          intruder_ids: set[str]) -> dict:
    from synthetic import make_queries

    all_team = set().union(*team_ids)
    drift, dup, lost, leaks = [], 0, 0, 0
    for i, h in enumerate([*team, intruder]):
        mem = Memory(settings(h.state, uri, h.ns, h.name, neo4j_deadline=10.0, sqlite_deadline=10.0))
        try:
            st = mem.sync.status()
            if h.pulls:  # a push-only host holds its own episodes, not the namespace's
                drift.append(st["drift"])
            conn = mem.sqlite.team()
            dup += conn.execute("SELECT count(*) - count(DISTINCT id) FROM episodes").fetchone()[0]
            held = {r[0] for r in conn.execute("SELECT id FROM episodes")}
            if h is intruder:
                leaks += len(held & all_team)
                lost += len(intruder_ids - held)
            else:
                leaks += len(held & intruder_ids)
                lost += len((all_team if h.pulls else team_ids[i]) - held)
                g = mem.neo4j._run("MATCH (e:Episode {namespace: $ns}) RETURN count(e) AS c, count(DISTINCT e.id) AS d")[0]
                dup += g["c"] - g["d"]
            # recall across the boundary: queries made from the other side's corpus
            other = all_team if h is intruder else intruder_ids
            src = team[0].corpora[0] if h is intruder else intruder.corpora[0]
            for q in make_queries(10, seed=5, corpus=src):
                r = mem.recall(q, k=10, tiers="neo4j")
                leaks += sum(1 for x in r.hits if x.episode_id in other)
        finally:
            mem.close()
    return {"drift": drift, "duplicates": dup, "lost": lost, "isolation_violations": leaks}


def recall_p95(state: Path, uri: str, ns: str, host: str, queries: list[str]) -> dict:
    mem = Memory(settings(state, uri, ns, host, neo4j_deadline=10.0, sqlite_deadline=10.0))
    out = {}
    try:
        for tier in ("neo4j", "sqlite"):
            for q in queries[:10]:
                mem.recall(q, k=10, tiers=tier)  # warm: plans, caches
            lat = []
            for q in queries:
                t = time.perf_counter()
                r = mem.recall(q, k=10, tiers=tier)
                lat.append((time.perf_counter() - t) * 1000)
                assert r.tier(tier).status in ("ok", "empty"), r.tier(tier).error
            lat.sort()
            out[tier] = {"p50": statistics.median(lat), "p95": lat[int(0.95 * (len(lat) - 1))]}
        out["graph_episodes"] = mem.neo4j.count()
        out["local_episodes"] = mem.sqlite.count()
    finally:
        mem.close()
    return out


def backfill_pull(state: Path, uri: str) -> dict:
    """A host added to the team: its first pull reads the whole namespace."""
    from core.consumers.team_pull import pull

    mem = Memory(settings(state, uri, "team", "team-new"))
    try:
        t = time.perf_counter()
        r = pull(mem, max_seconds=3600)
        seconds = time.perf_counter() - t
        assert r.ok, r.error
        return {"episodes": r.pulled, "seconds": seconds, "eps_per_s": r.pulled / seconds}
    finally:
        mem.close()


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


def solo(base: Path, uri: str, corpora: list[Path], timeout: float) -> Host:
    """One host ingesting every corpus (the single-host baseline)."""
    total = sum(len(ids_of(c)) for c in corpora)
    h = Host(base, "solo", "solo-h1", corpora, uri, total)
    h.start()
    h.proc.wait(timeout)
    return h


def steady(args, base: Path, cache: Path, uri: str, rng, server, admin, results: dict) -> None:
    """Run 1, the recall p95 after it, and the one-host baseline."""
    results["steady"] = run_team(base / "steady", uri, args.hosts, args.episodes, cache, "team",
                                 False, rng, args.timeout, pullers=args.pullers)
    from synthetic import make_queries

    c1 = corpus(cache, args.episodes, seed=100)
    queries = make_queries(args.queries, seed=3, corpus=c1)
    if server is not None:
        results["store_bytes"] = du(server.data_dir / "data" / "databases")  # store and indexes, not the tx logs
        results["store_episodes"] = args.hosts * args.episodes + max(args.episodes // 10, 50)
    results["recall_team"] = recall_p95(base / "steady" / "team-h1", uri, "team", "team-h1", queries)
    results["backfill_pull"] = backfill_pull(base / "steady" / "team-new", uri)
    results["recall_small_ns"] = recall_p95(base / "steady" / "team-x", uri, "team-other", "team-x",
                                            make_queries(args.queries, seed=3, corpus=corpus(
                                                cache, max(args.episodes // 10, 50), seed=999)))
    if not args.skip_solo:
        admin.clear()
        corpora = [corpus(cache, args.episodes, seed=100 + i) for i in range(args.hosts)]
        t0, load_start = time.time(), os.getloadavg()[0]
        h = solo(base / "solo", uri, corpora, args.timeout)
        results["solo_push_s"] = (h.events.get("PUSHED") or time.time()) - t0
        results["solo_load"] = (load_start, os.getloadavg()[0])
        results["recall_solo"] = recall_p95(h.state, uri, "solo", "solo-h1", queries)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", nargs=6, metavar=("STATE", "NS", "HOST", "CORPORA", "URI", "EXPECTED"))
    ap.add_argument("--hosts", type=int, default=4)
    ap.add_argument("--episodes", type=int, default=25_000, help="per host, run 1")
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--trial-episodes", type=int, default=5_000, help="per host, each kill trial")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--neo4j-uri", default=None)
    ap.add_argument("--timeout", type=float, default=3600.0, help="per run, seconds")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--skip-solo", action="store_true")
    ap.add_argument("--pullers", type=int, default=None,
                    help="run 1: only the first N hosts pull (the others push only: no local copy of the whole "
                         "namespace; a team at a million needs ~8 GB a full copy); default: every host")
    ap.add_argument("--only-trials", action="store_true", help="skip run 1, the recall and the solo baseline")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.child:
        state, ns, host, corpora, uri, expected = args.child
        child(state, ns, host, corpora, uri, int(expected))
        return

    rng = random.Random(args.seed)
    server = None
    uri = args.neo4j_uri
    if uri is None:
        from neo4j_server import Neo4jServer

        server = Neo4jServer()
        uri = server.start()
    from core.memory.tiers.neo4j import Neo4jStore

    admin = Neo4jStore(uri)
    results: dict = {"machine": f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} at start"}
    try:
        with tempfile.TemporaryDirectory(prefix="ars-team-") as tmp:
            base, cache = Path(tmp), Path(tmp) / "corpora"
            cache.mkdir()
            admin.clear()
            if not args.only_trials:
                steady(args, base, cache, uri, rng, server, admin, results)
            trials = []
            tn = args.trial_episodes or args.episodes
            if args.trials and tn != args.episodes:
                # the trials' baseline: their size, nobody killed
                admin.clear()
                results["trial_baseline"] = run_team(base / "trial-base", uri, args.hosts, tn, cache,
                                                     "trialbase", False, rng, args.timeout)
            for i in range(args.trials):
                admin.clear()
                trials.append(run_team(base / f"trial{i}", uri, args.hosts, tn, cache, f"trial{i}",
                                       True, rng, args.timeout))
                print(f"trial {i}: {json.dumps(trials[-1])}", file=sys.stderr, flush=True)
            results["trials"] = trials
    finally:
        admin.close()
        if server is not None:
            server.close()
    if args.json:
        print(json.dumps(results, indent=1))
    print_tables(results, args)


def print_tables(r: dict, args) -> None:
    s = r.get("steady")
    tn = args.trial_episodes or args.episodes
    print(f"\n## team_sync ({r['machine']})\n")
    print(f"{args.hosts} hosts (separate processes) ingesting and syncing concurrently into one Neo4j, beside an "
          "intruder namespace of a tenth of a host's size; convergence: from the last episode acknowledged "
          "anywhere (or a killed host's restart) until every host holds every team episode\n")
    print("| run | episodes/host | episodes into the graph | graph episodes/s | ingest s | convergence s after last "
          "ingest | drift (per host) | duplicates | lost | isolation violations | load start→end |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")

    def row(name: str, x: dict) -> str:
        f = lambda k, fmt="{:.0f}": fmt.format(x[k]) if k in x else "-"  # noqa: E731
        load = "{:.1f}→{:.1f}".format(*x["load"]) if "load" in x else "-"
        done = "" if x.get("complete", True) else " (did not converge before --timeout)"
        return (f"| {name}{done} | {x['episodes_per_host']:,} | {x['team_episodes']:,} | {f('graph_eps_per_s')} | "
                f"{f('ingest_s', '{:.1f}')} | {f('convergence_s', '{:.1f}')} | {x['drift']} | {x['duplicates']} | "
                f"{x['lost']} | {x['isolation_violations']} | {load} |")

    if s:
        pulling = s.get("pullers", s["hosts"])
        print(row("steady (run 1)" if pulling == s["hosts"] else
                  f"steady (run 1): {pulling} of {s['hosts']} hosts pull, the others push only", s))
        if "all_pushed_s" in s:
            print(f"\nrun 1: the first host's push was done {s['first_push_done_s']:.0f} s after the start, the "
                  f"last's {s['all_pushed_s']:.0f} s (every team episode in the graph)")
    if s and s.get("phases"):
        print("\nwhere each host's sync loop spent run 1 (`sync run` in a loop: push and pull in turns; the pulls "
              "missing here ran in the sync that `ingest` runs when it is done)\n")
        print("| host | sync runs | push s | episodes pushed | pull s | episodes pulled | pulled/s while pulling | idle s |")
        print("|---|---|---|---|---|---|---|---|")
        for name, p in s["phases"].items():
            rate = p["pulled"] / p["pull_s"] if p["pull_s"] else 0.0
            print(f"| {name} | {p['runs']} | {p['push_s']:.1f} | {p['pushed']:,} | {p['pull_s']:.1f} | "
                  f"{p['pulled']:,} | {rate:.0f} | {p['idle_s']:.1f} |")
        print()
    if r.get("trial_baseline"):
        print(row("kill trials' baseline: their size, no kill", r["trial_baseline"]))
    for i, t in enumerate(r.get("trials", [])):
        k = t.get("killed") or {}
        name = f"kill trial {i + 1} ({k.get('host', 'no kill')}" + (f" at {k['cursor']}/{k['ledger']} B" if k else "") + ")"
        print(row(name, t))
    trials = r.get("trials", [])
    if trials:
        conv = [t["convergence_s"] for t in trials if "convergence_s" in t]
        print(f"\nkill trials: {len(trials)} x {tn:,} episodes/host"
              + (f" (not {args.episodes:,}: see --trial-episodes)" if tn != args.episodes else "")
              + f", {sum(1 for t in trials if t.get('killed'))} killed mid-push; convergence max "
              f"{max(conv) if conv else float('nan'):.1f} s, median {statistics.median(conv) if conv else float('nan'):.1f} s; "
              f"lost {sum(t['lost'] for t in trials)}, duplicates {sum(t['duplicates'] for t in trials)}, "
              f"leaks {sum(t['isolation_violations'] for t in trials)}, "
              f"non-zero drifts {sum(1 for t in trials for d in t['drift'] if d)}, "
              f"not converged {sum(1 for t in trials if not t.get('complete'))}")
    if "solo_push_s" in r and s and "graph_eps_per_s" in s:
        n = args.hosts * args.episodes
        print("\n| writers | episodes | from start to all pushed s | graph episodes/s | load start→end |")
        print("|---|---|---|---|---|")
        print(f"| {args.hosts} hosts at once (run 1; each also pulls the others') | {n:,} | "
              f"{n / s['graph_eps_per_s']:.1f} | {s['graph_eps_per_s']:.0f} | " + "{:.1f}→{:.1f}".format(*s["load"]) + " |")
        print(f"| one host, the same {args.hosts} corpora (baseline) | {n:,} | {r['solo_push_s']:.1f} | "
              f"{n / r['solo_push_s']:.0f} | " + "{:.1f}→{:.1f}".format(*r["solo_load"]) + " |")
    if any(k in r for k in ("recall_team", "recall_solo", "recall_small_ns")):
        print("\n| recall (k=10, one host querying) | graph episodes | local episodes | neo4j p50 ms | neo4j p95 ms "
              "| sqlite p50 ms | sqlite p95 ms |")
        print("|---|---|---|---|---|---|---|")
    for key, name in (("recall_team", f"team namespace: {args.hosts} hosts' data (h1, after pull)"),
                      ("recall_solo", "one host's data, same corpora (baseline)"),
                      ("recall_small_ns", "a small namespace beside the team's (filter cost)")):
        x = r.get(key)
        if x:
            print(f"| {name} | {x['graph_episodes']:,} | {x['local_episodes']:,} | {x['neo4j']['p50']:.1f} | "
                  f"{x['neo4j']['p95']:.1f} | {x['sqlite']['p50']:.1f} | {x['sqlite']['p95']:.1f} |")
    if "backfill_pull" in r:
        b = r["backfill_pull"]
        print(f"\na new host's first pull (backfill) of the team namespace: {b['episodes']:,} episodes in "
              f"{b['seconds']:.1f} s ({b['eps_per_s']:.0f} episodes/s into its SQLite)")
    if "store_bytes" in r:
        per = r["store_bytes"] / r["store_episodes"]
        print(f"\nNeo4j store after run 1: {r['store_bytes'] / 2**20:.0f} MiB for {r['store_episodes']:,} episodes "
              f"({per / 1024:.1f} KiB/episode, indexes included)")
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

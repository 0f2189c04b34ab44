"""Secret redaction: detection on a corpus, and what it costs the ingest.

    python bench/redaction.py [--messages 20000] [--repeats 3]

Tables:
1. Detection on ``bench/redaction_corpus/`` (``make_corpus.py`` builds it):
   per kind, the secrets redacted (none of the secret's text left: no window
   of 10 of its characters survives) and the placeholder given; then the
   false positives on the secret-free technical lines. Misses and false
   positives are listed (a miss is shown by its line with the secret masked
   by position, so this output holds no secret either).
2. Durable ingest (ledger + SQLite, one fsync per batch: ``core.ingest``) of
   the same synthetic messages with redaction on and off, in this run; the
   messages carry the corpus' secrets in 1 of 20 of them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from core.govern.redact import redact  # noqa: E402

CORPUS = ROOT / "bench" / "redaction_corpus"
WINDOW = 10


def leaked(secret: str, text: str) -> bool:
    """Any ``WINDOW`` characters of the secret left in the text."""
    if len(secret) <= WINDOW:
        return secret in text
    return any(secret[i:i + WINDOW] in text for i in range(0, len(secret) - WINDOW + 1))


def masked(line: str, secret: str) -> str:
    at = line.find(secret)
    shown = line if at < 0 else line[:at] + f"<{len(secret)} chars>" + line[at + len(secret):]
    return " ".join(shown.split())[:150]


def load() -> tuple[list[dict], list[str]]:
    if not (CORPUS / "secrets.jsonl").exists():
        sys.exit(f"no corpus in {CORPUS}: run python bench/redaction_corpus/make_corpus.py")
    secrets = [json.loads(x) for x in open(CORPUS / "secrets.jsonl", encoding="utf-8")]
    clean = [json.loads(x)["line"] for x in open(CORPUS / "clean.jsonl", encoding="utf-8")]
    return secrets, clean


def everyday_commands() -> list[str]:
    """The gate's corpus of everyday development calls (bench/gate_corpus, built for the gate,
    not for this): their commands and inputs, a false-positive set this detector was not tuned on."""
    path = ROOT / "bench" / "gate_corpus" / "everyday.txt"
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            row = json.loads(line)
            out.append(row["tool_input"].get("command") or json.dumps(row["tool_input"], ensure_ascii=False))
    return out


def detection(secrets: list[dict], clean: list[str]) -> None:
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    given: dict[str, Counter] = defaultdict(Counter)
    misses = []
    for row in secrets:
        r = redact(row["line"])
        ok = not leaked(row["secret"], r.text)
        per[row["kind"]][0] += ok
        per[row["kind"]][1] += 1
        given[row["kind"]].update(f.kind for f in r.findings)
        if not ok:
            misses.append((row["kind"], masked(row["line"], row["secret"]), r.text.count("[secret:")))
    total = sum(v[1] for v in per.values())
    hit = sum(v[0] for v in per.values())
    print(f"\n## Detection: {total} secrets of {len(per)} kinds in transcript lines\n")
    print(f"| kind | secrets | redacted | placeholders given |\n|---|---:|---:|---|")
    for kind, (ok, n) in per.items():
        print(f"| {kind} | {n} | {ok} | {', '.join(f'{k}×{c}' for k, c in given[kind].most_common())} |")
    print(f"| **all** | **{total}** | **{hit} ({100 * hit / total:.1f} %)** | |")
    print(f"\nmisses ({len(misses)}):" if misses else "\nmisses: none")
    for kind, line, n in misses:
        print(f"  - {kind}: {line}")

    fps = []
    sets = [("secret-free technical lines (redaction_corpus/clean.jsonl)", clean),
            ("everyday development calls (gate_corpus/everyday.txt)", everyday_commands())]
    print("\n## False positives\n")
    print("| set | lines | changed | false positive % |\n|---|---:|---:|---:|")
    for name, lines in sets:
        before = len(fps)
        for line in lines:
            r = redact(line)
            if r.changed:
                fps.append((r.kinds, " ".join(r.text.split())[:150]))
        if lines:
            print(f"| {name} | {len(lines)} | {len(fps) - before} | {100 * (len(fps) - before) / len(lines):.2f} % |")
    print(f"\nfalse positives ({len(fps)}):" if fps else "\nfalse positives: none")
    for kinds, text in fps:
        print(f"  - {','.join(kinds)}: {text}")


def messages(path: Path, n: int, secrets: list[dict]) -> int:
    """Synthetic generic-JSONL messages (4 per session), 1 in 20 holding a corpus secret line."""
    from synthetic import generate

    out = 0
    with open(path, "w", encoding="utf-8") as fh:
        for ep in generate(max(1, n // 4), seed=11):
            text = ep["text"]
            step = max(1, len(text) // 4)
            for j, part in enumerate([text[i:i + step] for i in range(0, len(text), step)][:4]):
                if out % 20 == 7:
                    part = part + "\n" + secrets[out % len(secrets)]["line"]
                fh.write(json.dumps({"role": "user" if j % 2 == 0 else "assistant", "content": part,
                                     "session_id": ep["id"].replace(":", "-")}, ensure_ascii=False) + "\n")
                out += 1
                if out >= n:
                    return out
    return out


def throughput(n: int, repeats: int, secrets: list[dict]) -> None:
    import core.ingest.pipeline as pipeline
    from core.config import Settings
    from core.memory.memory import Memory

    real = pipeline.redact_episodes
    with tempfile.TemporaryDirectory(prefix="ars-redact-bench-") as tmp:
        src = Path(tmp) / "messages.jsonl"
        count = messages(src, n, secrets)
        rates: dict[str, list[float]] = {"on": [], "off": []}
        for i in range(repeats):
            for mode in ("off", "on"):  # alternate: the disk's and the CPU's drift fall on both
                pipeline.redact_episodes = real if mode == "on" else (lambda eps: eps)
                state = Path(tmp) / f"state-{mode}-{i}"
                mem = Memory(Settings(state_dir=state))  # as bench/ingest_throughput.py: no Neo4j
                try:
                    t = time.perf_counter()
                    pipeline.ingest(mem, [src], fmt="jsonl", sync=False)
                    rates[mode].append(count / (time.perf_counter() - t))
                finally:
                    mem.close()
                if mode == "on":
                    ledger = (state / "ledger.jsonl").read_text(encoding="utf-8")
                    left = sum(leaked(s["secret"], ledger) for s in secrets if s["secret"] in src.read_text())
                    assert left == 0, f"{left} corpus secrets reached the ledger with redaction on"
        pipeline.redact_episodes = real
        # redaction alone, in CPU time (the ingest's wall-clock rates move with the machine's load)
        from core.ingest.parsers import PARSERS

        episodes = PARSERS["jsonl"](src).episodes
        cpu = []
        for _ in range(repeats):
            t = time.process_time()
            real(episodes)
            cpu.append(count / (time.process_time() - t))
    print(f"\n## Durable ingest, {count:,} messages (generic JSONL; 1 in 20 holds a secret), "
          f"median of {repeats}\n")
    print("| redaction | messages/s | runs |\n|---|---:|---|")
    for mode in ("off", "on"):
        print(f"| {mode} | {statistics.median(rates[mode]):,.0f} | "
              f"{', '.join(f'{r:,.0f}' for r in rates[mode])} |")
    alone = statistics.median(cpu)
    print(f"| redaction alone (CPU time) | {alone:,.0f} | {', '.join(f'{r:,.0f}' for r in cpu)} |")
    print(f"\n(at the 12,298 messages/s measured without redaction on a quiet machine, redaction's CPU cost "
          f"would leave {1 / (1 / 12_298 + 1 / alone):,.0f} messages/s)")
    print(f"redaction costs {100 * (1 - statistics.median(rates['on']) / statistics.median(rates['off'])):.0f} % "
          f"of the ingest rate (target: >= 2,000 messages/s with it on)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=20_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-ingest", action="store_true", help="detection tables only")
    a = ap.parse_args()
    if a.messages < 100 or a.repeats < 1:
        sys.exit("--messages must be at least 100 and --repeats at least 1")
    secrets, clean = load()
    detection(secrets, clean)
    if not a.no_ingest:
        throughput(a.messages, a.repeats, secrets)


if __name__ == "__main__":
    main()

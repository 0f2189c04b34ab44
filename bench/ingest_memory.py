"""Peak memory of `ars ingest` against transcript size.

    python bench/ingest_memory.py [--mb 25 100] [--formats openclaw jsonl] [--keep DIR]

Writes a synthetic OpenClaw session (one session, ``message`` entries with
text, tool calls and tool results, a timestamp a minute apart) and a generic
message JSONL of each size, then runs ``ars ingest`` on each in a fresh
process with a fresh state directory and reports its peak RSS (the child's
``ru_maxrss``). Ingestion streams a file, so the peak should stay roughly
flat as the file grows (bounded by a batch of episodes, not by the file).
Prints a markdown table; nothing is asserted.

On the 2-core development machine (peak RSS in MB):

| file MB | openclaw before | openclaw streamed | jsonl before | jsonl streamed |
|---:|---:|---:|---:|---:|
| 5 | 85 | 74 | 88 | 70 |
| 25 | 198 | 109 | 197 | 110 |
| 100 | 579 | 126 | 627 | 115 |
| 300 | (1,430 at 315 MB) | 134 | | 128 |

What is left is the interpreter and libraries (~70 MB) and one batch of
1,000 episodes waiting for its ledger append (~40 MB).
"""

from __future__ import annotations

import argparse
import json
import random
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MB = 1024 * 1024
WORDS = ("deploy rollback neo4j sqlite ledger backfill outage alice bob plan weekly dashboard approval "
         "checkpoint recall episode transcript session memory index query latency budget verify "
         "部署 回滚 总结 用户 偏好 第一性原理 检查").split()


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _openclaw_lines(rng: random.Random):
    start = datetime(2026, 3, 1, tzinfo=timezone.utc)
    yield {"type": "session", "version": 3, "id": "bench-session", "timestamp": start.isoformat(), "cwd": "/tmp"}
    i = 0
    while True:
        i += 1
        ts = (start + timedelta(minutes=i)).isoformat().replace("+00:00", "Z")
        base = {"id": f"m{i}", "parentId": f"m{i - 1}", "timestamp": ts}
        if i % 3 == 1:
            msg = {"role": "user", "content": [{"type": "text", "text": _sentence(rng, rng.randint(8, 60))}]}
        elif i % 3 == 2:
            msg = {"role": "assistant", "content": [
                {"type": "text", "text": _sentence(rng, rng.randint(20, 120))},
                {"type": "toolCall", "id": f"t{i}", "name": "bash", "arguments": {"command": f"ls /srv/{i}"}}]}
        else:
            msg = {"role": "toolResult", "toolName": "bash", "content": [{"type": "text",
                                                                          "text": _sentence(rng, 300)}]}
        yield {"type": "message", **base, "message": msg}


def _jsonl_lines(rng: random.Random):
    start = datetime(2026, 3, 1, tzinfo=timezone.utc)
    i = 0
    while True:
        i += 1
        yield {"role": "user" if i % 2 else "assistant", "content": _sentence(rng, rng.randint(20, 200)),
               "timestamp": (start + timedelta(minutes=i)).isoformat(), "session_id": f"s{i // 5000}"}


GENERATORS = {"openclaw": _openclaw_lines, "jsonl": _jsonl_lines}


def write_transcript(path: Path, fmt: str, mb: float, seed: int = 7) -> int:
    """A transcript of about ``mb`` megabytes; returns its size in bytes."""
    rng = random.Random(seed)
    size = 0
    with open(path, "w", encoding="utf-8") as fh:
        for obj in GENERATORS[fmt](rng):
            line = json.dumps(obj, ensure_ascii=False) + "\n"
            fh.write(line)
            size += len(line.encode("utf-8"))
            if size >= mb * MB:
                return size
    return size


def peak_rss_of_ingest(path: Path, state: Path) -> tuple[float, float, int]:
    """(peak RSS in MB, seconds, exit code) of one `ars ingest` child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "tui.cli.main", "ingest", str(path), "--state", str(state), "--json"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    stderr = proc.stderr.read().decode("utf-8", "replace")
    # wait4 gives this child's own rusage (RUSAGE_CHILDREN would be the max over all children)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - t0
    if proc.returncode:
        print(stderr.strip().splitlines()[-1:] or "", file=sys.stderr)
    return usage.ru_maxrss / 1024, elapsed, proc.returncode


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, nargs="+", default=[25.0, 100.0])
    ap.add_argument("--formats", nargs="+", default=["openclaw", "jsonl"], choices=sorted(GENERATORS))
    ap.add_argument("--keep", type=Path, help="write the transcripts here (and keep them)")
    args = ap.parse_args()
    print("| format | file MB | peak RSS MB | seconds | exit |")
    print("|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        where = args.keep or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        for fmt in args.formats:
            for mb in sorted(args.mb):
                path = where / f"{fmt}-{mb:g}mb.jsonl"
                size = path.stat().st_size if path.exists() else write_transcript(path, fmt, mb)
                rss, secs, rc = peak_rss_of_ingest(path, Path(tmp) / f"state-{fmt}-{mb:g}")
                print(f"| {fmt} | {size / MB:.0f} | {rss:.0f} | {secs:.1f} | {rc} |", flush=True)


if __name__ == "__main__":
    main()

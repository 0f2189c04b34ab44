"""Parsing + deterministic extraction throughput on real transcripts.

    python bench/parse_throughput.py [--mb 50] [--source ../shared/data/transcripts/claude-code]

Copies the real Claude Code transcripts (main and subagent files) into a
temporary directory until about ``--mb`` megabytes, then times
``detect_format`` + the parser (which runs the deterministic extractor on
every episode) over all copies, single-threaded. Prints a markdown table;
the target (well over 2,000 messages/s) is printed, never asserted.

A "message" is a ``user`` or ``assistant`` line of the transcript (what a
person would call a message; progress, snapshots and queue lines are not
counted, though they are read and skipped).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.ingest.parsers import PARSERS, detect_format  # noqa: E402

TARGET = 2000


def count_messages(path: Path) -> tuple[int, int]:
    lines = msgs = 0
    with open(path, "rb") as fh:
        for raw in fh:
            lines += 1
            try:
                if json.loads(raw).get("type") in ("user", "assistant"):
                    msgs += 1
            except ValueError:
                pass
    return lines, msgs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=50.0)
    ap.add_argument("--source", type=Path, default=ROOT.parent / "shared" / "data" / "transcripts" / "claude-code")
    args = ap.parse_args()
    sources = sorted(p for p in args.source.rglob("*.jsonl"))
    if not sources:
        sys.exit(f"no transcripts under {args.source}")
    per_copy = sum(p.stat().st_size for p in sources)
    copies = max(1, int(args.mb * 1024 * 1024 / per_copy))
    lines1 = msgs1 = 0
    for p in sources:
        a, b = count_messages(p)
        lines1 += a
        msgs1 += b
    with tempfile.TemporaryDirectory() as tmp:
        files: list[Path] = []
        for i in range(copies):
            for p in sources:
                dst = Path(tmp) / f"copy{i:04d}" / p.relative_to(args.source)
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(p, dst)
                files.append(dst)
        total_bytes = sum(f.stat().st_size for f in files)
        episodes = entities = 0
        t0 = time.perf_counter()
        c0 = time.process_time()
        for f in files:
            parsed = PARSERS[detect_format(f)](f)
            episodes += len(parsed.episodes)
            entities += sum(len(e.entities) for e in parsed.episodes)
        dt = time.perf_counter() - t0
        cpu = time.process_time() - c0
    msgs = msgs1 * copies
    # wall time depends on what else the machine runs; CPU time is this process alone
    print("| corpus | files | MB | lines | messages | episodes | entities | wall s | CPU s | messages/s (wall) "
          "| messages/s (CPU) | MB/s (wall) | target |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    print(f"| claude-code x{copies} | {len(files)} | {total_bytes / 1048576:.1f} | {lines1 * copies} | {msgs} | "
          f"{episodes} | {entities} | {dt:.2f} | {cpu:.2f} | {msgs / dt:,.0f} | {msgs / cpu:,.0f} | "
          f"{total_bytes / 1048576 / dt:.1f} | > {TARGET:,} messages/s |")


if __name__ == "__main__":
    main()

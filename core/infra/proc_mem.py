"""This process's memory, as the kernel counts it (``ars doctor`` and the
recall daemon's status report it; the scale bench reads the same numbers)."""

from __future__ import annotations

import resource
import sys


def rss_mb() -> dict[str, float]:
    """{"rss_mb": resident now, "rss_peak_mb": the most it has been}. Resident
    counts the pages of mapped files this process touched (the dense index's
    segments): the kernel shares those with every other process mapping them."""
    got: dict[str, float] = {}
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):  # now, and the high-water mark (the same count)
                    got[line[:5]] = int(line.split()[1]) / 1024
    except OSError:  # not Linux
        pass
    if "VmHWM" not in got:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        got["VmHWM"] = peak / 2**20 if sys.platform == "darwin" else peak / 1024  # macOS counts bytes
    return {"rss_mb": round(got.get("VmRSS", float("nan")), 1), "rss_peak_mb": round(got["VmHWM"], 1)}

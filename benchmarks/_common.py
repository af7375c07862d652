"""Shared helpers for the benchmarks: timing, optional frameworks, tables, JSON results."""
from __future__ import annotations

import json
import os
import pathlib
import platform
import time

RESULTS = pathlib.Path(__file__).parent / "results"


def best_of(fn, number: int, repeat: int = 5) -> float:
    """Seconds per call: the best of ``repeat`` runs of ``number`` calls (the least disturbed)."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def optional(name: str):
    """Import a framework to compare against, or None when it is not installed."""
    try:
        if name == "tensorflow":
            os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        return __import__(name)
    except Exception:
        return None


def table(title: str, header: list, rows: list) -> str:
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = "  ".join("-" * w for w in widths)
    out = [f"\n{title}", line, "  ".join(str(h).ljust(w) for h, w in zip(header, widths)), line]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)) for r in rows]
    out.append(line)
    return "\n".join(out)


def save(name: str, data: dict) -> None:
    RESULTS.mkdir(exist_ok=True)
    data = {"machine": platform.machine(), "cpus": os.cpu_count(), **data}
    tmp = RESULTS / f"{name}.json.tmp"
    tmp.write_text(json.dumps(data, indent=2))
    os.replace(tmp, RESULTS / f"{name}.json")

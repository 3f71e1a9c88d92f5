"""Stream a generated >= 1 GB TOON table through rows() and parse(); report
throughput and peak RSS (each run in its own subprocess, so the RSS is its own).

    python benchmarks/stream_memory.py            # 1 GiB table (generated once into benchmarks/work/)
    python benchmarks/stream_memory.py --size-mb 64   # a quick run

Writes benchmarks/results/stream_memory_<size>mb.json and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / "work"
RESULTS = HERE / "results"

ROW = '  {i},user_{i},{f},{b},2024-01-{d:02d},"note, with comma {i}",{j}\n'


def generate(path: Path, size_mb: int) -> int:
    """Write a tabular TOON file of at least ``size_mb`` MiB; return the row count."""
    target = size_mb * 1024 * 1024
    # The declared N must be right, so count rows first with a dry estimate.
    sample = "".join(ROW.format(i=i, f=i * 0.5, b="true" if i % 2 else "false", d=i % 28 + 1, j=i * 7) for i in range(1000))
    per_row = len(sample.encode()) / 1000
    n = int(target / per_row) + 1
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"data[{n}]{{id,name,score,ok,day,note,qty}}:\n")
        buf = []
        for i in range(n):
            buf.append(ROW.format(i=i, f=i * 0.5, b="true" if i % 2 else "false", d=i % 28 + 1, j=i * 7))
            if len(buf) == 10_000:
                f.write("".join(buf))
                buf = []
        f.write("".join(buf))
    return n


CHILD = r"""
import resource, sys, time
import toonstream
path, mode = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
count = 0
with open(path, "rb") as f:
    if mode == "rows":
        for _ in toonstream.rows(f, "data"):
            count += 1
    elif mode == "parse":
        for _ in toonstream.parse(f):
            count += 1
    elif mode == "decoder":
        d = toonstream.Decoder()
        while chunk := f.read(1 << 16):
            count += len(d.feed(chunk))
        d.close()
dt = time.perf_counter() - t0
print(count, dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def run(path: Path, mode: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), mode], check=True, capture_output=True, text=True)
    count, dt, rss_kb = out.stdout.split()
    size = path.stat().st_size
    return {
        "mode": mode,
        "items": int(count),
        "seconds": float(dt),
        "mb_per_s": size / 1e6 / float(dt),
        "peak_rss_mb": int(rss_kb) / 1024,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--modes", default="rows,parse,decoder")
    args = ap.parse_args()
    WORK.mkdir(exist_ok=True)
    RESULTS.mkdir(exist_ok=True)
    path = WORK / f"table_{args.size_mb}mb.toon"
    if not path.exists():
        t0 = time.perf_counter()
        n = generate(path, args.size_mb)
        print(f"generated {path} ({n} rows) in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    size = path.stat().st_size
    results = [run(path, m) for m in args.modes.split(",")]
    print(f"input: {size / 1e9:.2f} GB TOON table, {platform.python_version()}, {os.cpu_count()} cores\n")
    print("| driver | items | seconds | MB/s | rows/s | peak RSS (MB) |")
    print("|---|---:|---:|---:|---:|---:|")
    rows_n = None
    for r in results:
        if r["mode"] == "rows":
            rows_n = r["items"]
    for r in results:
        rps = (rows_n or 0) / r["seconds"]
        print(f"| {r['mode']} | {r['items']:,} | {r['seconds']:.1f} | {r['mb_per_s']:.1f} | {rps:,.0f} | {r['peak_rss_mb']:.1f} |")
    (RESULTS / f"stream_memory_{args.size_mb}mb.json").write_text(
        json.dumps({"date": time.strftime("%Y-%m-%d"), "input_bytes": size, "results": results}, indent=2)
    )


if __name__ == "__main__":
    main()

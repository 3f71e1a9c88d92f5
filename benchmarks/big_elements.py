"""Peak RSS of the streaming encoders when each element is big (1 MiB by default).

    python benchmarks/big_elements.py                      # 1 MiB elements, 100 and 400 of them
    python benchmarks/big_elements.py --size-kb 256 --counts 50,200 --only jsonl

The streaming encoders hold a batch of elements at a time (formatted
column-wise, spooled in one piece).  A batch is bounded by its bytes as well
as its count, so memory should stay flat as the number of elements grows,
whatever their size.  Each case runs in its own process (peak RSS from
``_measure.py``) on both engines:

* ``jsonl``: ``toonstream encode x.jsonl`` (flat records: one big string cell);
* ``jsonl-nested``: the same with each record's text inside a nested object
  and keys that vary (list items, not a table);
* ``json``: ``toonstream encode x.json`` (a JSON document, read as ijson events);
* ``records``: ``encode_records`` of a generator (spooled).

Writes benchmarks/results/big_elements_<size>kb.json and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORK = HERE / "work"
RESULTS = HERE / "results"
CASES = ("jsonl", "jsonl-nested", "json", "records")


def record(i: int, size: int, nested: bool) -> dict[str, Any]:
    text = (f"{i:08d} " * (size // 9 + 1))[:size]
    if not nested:
        return {"id": i, "blob": text}
    return {"id": i, f"k{i % 3}": {"text": text, "parts": [1, 2]}}


RECORDS = r"""
import io, os, sys
import toonstream
size, n, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def gen():
    for i in range(n):
        yield {"id": i, "blob": (f"{i:08d} " * (size // 9 + 1))[:size]}
with open(out, "wb") as f:
    toonstream.encode_records(gen(), f)
"""


def inputs(size: int, n: int) -> dict[str, Path]:
    """The input files of each case for ``n`` elements of ``size`` bytes (made once)."""
    WORK.mkdir(exist_ok=True)
    paths = {}
    for case in ("jsonl", "jsonl-nested", "json"):
        path = WORK / f"big_{case}_{size // 1024}k_{n}.{'json' if case == 'json' else 'jsonl'}"
        paths[case] = path
        if path.exists():
            continue
        tmp = path.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            if case == "json":
                f.write("[")
            for i in range(n):
                text = json.dumps(record(i, size, case == "jsonl-nested"))
                f.write(("," if i else "") + text if case == "json" else text + "\n")
            if case == "json":
                f.write("]")
        os.replace(tmp, path)
    return paths


def measure(cmd: list[str], engine: str) -> dict[str, Any]:
    env = dict(os.environ, TOONSTREAM_ENGINE=engine)
    out = subprocess.run([sys.executable, str(HERE / "_measure.py"), *cmd], env=env, check=True,
                         capture_output=True, text=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if result["returncode"] != 0:
        raise SystemExit(f"failed ({engine}): {' '.join(cmd)}")
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-kb", type=int, default=1024, help="bytes of each element's text, in KiB")
    ap.add_argument("--counts", default="100,400", help="numbers of elements, comma-separated")
    ap.add_argument("--only", default=",".join(CASES), help="cases, comma-separated: " + ", ".join(CASES))
    ap.add_argument("--engines", default="native,python")
    args = ap.parse_args()
    size = args.size_kb * 1024
    counts = [int(c) for c in args.counts.split(",")]
    cases = args.only.split(",")
    dst = WORK / "big_out.toon"
    rows = []
    for n in counts:
        paths = inputs(size, n)
        for case in cases:
            for engine in args.engines.split(","):
                if case == "records":
                    cmd = [sys.executable, "-c", RECORDS, str(size), str(n), str(dst)]
                else:
                    cmd = [sys.executable, "-m", "toonstream", "encode", str(paths[case]), "-o", str(dst),
                           "--no-progress", "--jobs", "1"]
                r = measure(cmd, engine)
                rows.append({"case": case, "engine": engine, "elements": n, "element_kb": args.size_kb,
                             "input_mb": n * size / 2**20, "seconds": r["seconds"], "peak_rss_mb": r["peak_rss_mb"]})
                print(f"{case:13} {engine:7} n={n:5} {r['seconds']:7.2f} s {r['peak_rss_mb']:8.1f} MB", flush=True)
    dst.unlink(missing_ok=True)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"big_elements_{args.size_kb}kb.json"
    out.write_text(json.dumps({"machine": platform.platform(), "python": sys.version.split()[0], "rows": rows}, indent=1))
    print(f"\n| case | engine | elements of {args.size_kb} KiB | input MB | seconds | peak RSS (MB) |")
    print("|---|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['case']} | {r['engine']} | {r['elements']} | {r['input_mb']:.0f} | {r['seconds']:.2f} | {r['peak_rss_mb']:.0f} |")
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()

"""TOON -> JSON Lines: `toonstream decode` (one process) vs toons.loads + orjson.dumps (same run).

    python benchmarks/toon_to_jsonl.py                 # 1M rows (~90 MB of TOON)
    python benchmarks/toon_to_jsonl.py --rows 100000   # a smaller run

The TOON input is the uniform table of benchmarks/jsonl_to_toon.py, written by
`toonstream encode`.  Each converter runs in its own process (time and peak RSS from
benchmarks/_measure.py); every output must have the same records as toonstream's
(compared as parsed JSON: the peer writes floats by orjson's repr).  `toonstream-python`
is the same command on the reference engine (TOONSTREAM_ENGINE=python).  The peers need
the `bench` extra.  Writes benchmarks/results/toon_to_jsonl_<rows>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from jsonl_to_toon import RESULTS, WORK, generate, measure  # noqa: E402

PEER = (
    "import orjson, toons, sys\n"
    "rows = toons.loads(open(sys.argv[1], encoding='utf-8').read())\n"
    "with open(sys.argv[2], 'wb') as f:\n"
    "    f.write(b''.join(orjson.dumps(r) + b'\\n' for r in rows))\n"
)


def same_records(a: Path, b: Path) -> bool:
    with open(a, "rb") as fa, open(b, "rb") as fb:
        for la, lb in zip(fa, fb, strict=True):
            if la != lb and json.loads(la) != json.loads(lb):
                return False
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    WORK.mkdir(exist_ok=True)
    src_jsonl = WORK / f"uniform_{args.rows}.jsonl"
    src = WORK / f"uniform_{args.rows}.toon"
    if not src.exists():
        if not src_jsonl.exists():
            generate(src_jsonl, args.rows)
        subprocess.run([sys.executable, "-m", "toonstream", "encode", str(src_jsonl), "-o", str(src), "--no-progress"], check=True)
    size = src.stat().st_size
    runs: dict[str, list[dict[str, float]]] = {}
    outputs: dict[str, Path] = {}
    for name in ("toonstream", "toonstream-python", "toons+orjson"):
        dst = WORK / f"out_{name}.jsonl"
        outputs[name] = dst
        if name == "toons+orjson":
            cmd = [sys.executable, "-c", PEER, str(src), str(dst)]
            env = None
        else:
            cmd = [sys.executable, "-m", "toonstream", "decode", str(src), "-o", str(dst), "--to", "jsonl", "--no-progress"]
            env = "python" if name == "toonstream-python" else "native"
        os.environ["TOONSTREAM_ENGINE"] = env or ""
        try:
            runs[name] = [measure(cmd) for _ in range(args.repeat)]
        except subprocess.CalledProcessError as e:
            print(f"{name}: failed ({e.stderr.strip()[-300:]})", file=sys.stderr)
        finally:
            os.environ.pop("TOONSTREAM_ENGINE", None)
    for name in runs:
        if name != "toonstream":
            assert same_records(outputs["toonstream"], outputs[name]), f"{name} wrote other records"
    base = statistics.median(r["seconds"] for r in runs["toons+orjson"]) if "toons+orjson" in runs else None
    rows: list[dict[str, Any]] = []
    print(f"TOON -> JSON Lines, {args.rows:,} rows, {size / 1e6:.0f} MB of TOON, median of {args.repeat}")
    print("| converter | seconds | MB/s | peak RSS MB | × toons+orjson |")
    print("|---|---:|---:|---:|---:|")
    for name, rs in runs.items():
        t = statistics.median(r["seconds"] for r in rs)
        rss = max(r["peak_rss_mb"] for r in rs)
        ratio = round(t / base, 2) if base else None
        rows.append({"name": name, "seconds": round(t, 3), "MB/s": round(size / t / 1e6, 1), "peak_rss_mb": round(rss), "x_peer": ratio})
        print(f"| {name} | {t:.2f} | {size / t / 1e6:.0f} | {rss:.0f} | {ratio} |")
    RESULTS.mkdir(exist_ok=True)
    meta = {"python": platform.python_version(), "date": time.strftime("%Y-%m-%d"), "rows": args.rows, "toon_bytes": size}
    (RESULTS / f"toon_to_jsonl_{args.rows}.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()

"""JSONL -> TOON: `toonstream encode` vs orjson+toons and json+toon_format (same run).

    python benchmarks/jsonl_to_toon.py                  # 1M rows (~160 MB), all converters
    python benchmarks/jsonl_to_toon.py --rows 14000000 --only toonstream   # >= 2 GB memory check
    python benchmarks/jsonl_to_toon.py --data orders --rows 100000        # nested records (list items)

Each converter runs in its own process.  `toonstream` is the default command:
on the native engine it writes a table on two threads (`toonstream-1proc`: the
same with --jobs 1, one thread); `toonstream-python` is the reference engine
(TOONSTREAM_ENGINE=python), which forks a worker per CPU for a big file;
peak RSS is given for the largest process and for all of them together.  Peers need
the `bench` extra (pip install -e '.[bench]').  `toonstream` parses with orjson
when it is installed (the bench extra installs it); `toonstream-stdlib` is the
same command with orjson hidden, i.e. with the runtime dependencies only.
Writes benchmarks/results/jsonl_to_toon_<rows>.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import statistics
import functools
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORK = HERE / "work"
RESULTS = HERE / "results"

CITIES = ["Berlin", "Oslo", "Lisbon", "Kraków", "Zürich", "São Paulo", "Tokyo", "Austin"]


def generate(path: Path, rows: int) -> None:
    rnd = random.Random(7)
    with open(path, "w", encoding="utf-8") as f:
        buf = []
        for i in range(rows):
            rec = {
                "id": i,
                "name": f"user {rnd.randint(1, 10**6)}",
                "email": f"u{i}@example.com",
                "age": rnd.randint(18, 90),
                "score": round(rnd.random() * 1000, 3),
                "active": rnd.random() < 0.7,
                "created": f"2024-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d}",
                "city": rnd.choice(CITIES) if rnd.random() > 0.01 else "Washington, D.C.",
            }
            buf.append(json.dumps(rec, ensure_ascii=False))
            if len(buf) == 10_000:
                f.write("\n".join(buf) + "\n")
                buf = []
        if buf:
            f.write("\n".join(buf) + "\n")


def generate_nested(path: Path, name: str, rows: int) -> None:
    """``rows`` records of ``datasets.orders`` or ``datasets.events``, one per line."""
    sys.path.insert(0, str(HERE))
    import datasets

    with open(path, "w", encoding="utf-8") as f:
        for at in range(0, rows, 10_000):
            part = getattr(datasets, name)(min(10_000, rows - at), seed=at)
            f.write("".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in part))


PEERS = {
    "orjson+toons": (
        "import orjson, toons, sys\n"
        "rows = [orjson.loads(l) for l in open(sys.argv[1], 'rb') if l.strip()]\n"
        "open(sys.argv[2], 'w').write(toons.dumps(rows))\n"
    ),
    "json+toon_format": (
        "import json, toon_format, sys\n"
        "rows = [json.loads(l) for l in open(sys.argv[1], encoding='utf-8') if l.strip()]\n"
        "open(sys.argv[2], 'w').write(toon_format.encode(rows))\n"
    ),
}


# `toonstream` with orjson unimportable: the stdlib json path.
NO_ORJSON = (
    "import sys\n"
    "sys.modules['orjson'] = None\n"
    "sys.argv[0] = 'toonstream'\n"
    "from toonstream.cli import run\n"
    "run()\n"
)


@functools.cache
def compiled_env() -> dict[str, str]:
    """The environment every converter runs in: modules' bytecode cached (under
    work/pycache), as an installed package has it.  (Some machines set
    PYTHONDONTWRITEBYTECODE=1, which made every run compile toonstream's modules
    again, ~40 ms.)  The cache is filled once here, before anything is timed."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(WORK / "pycache")
    subprocess.run([sys.executable, "-c", "import toonstream.cli, toonstream.streaming, toonstream.stats"], env=env,
                   check=True)
    return env


def measure(cmd: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    out = subprocess.run([sys.executable, str(HERE / "_measure.py"), *cmd], capture_output=True, text=True, check=True,
                         env=env or dict(compiled_env()))
    return json.loads(out.stdout.strip().splitlines()[-1])


def digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()[:12]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument(
        "--only", help="comma-separated subset: toonstream,toonstream-1proc,toonstream-python,toonstream-stdlib,orjson+toons,json+toon_format"
    )
    ap.add_argument("--data", choices=["flat", "orders", "events"], default="flat",
                    help="flat records (a table, the default) or the nested datasets of datasets.py "
                         "(written as list items)")
    ap.add_argument("--keep", action="store_true", help="keep the generated input")
    ap.add_argument("--rounds", type=int, default=3, help="runs per converter (median time, max RSS)")
    args = ap.parse_args()
    WORK.mkdir(exist_ok=True)
    RESULTS.mkdir(exist_ok=True)
    tag = "" if args.data == "flat" else f"{args.data}_"
    src = WORK / f"{tag}rows_{args.rows}.jsonl"
    if not src.exists():
        t0 = time.perf_counter()
        if args.data == "flat":
            generate(src, args.rows)
        else:
            generate_nested(src, args.data, args.rows)
        print(f"generated {src} in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    size = src.stat().st_size
    names = ["toonstream", "toonstream-1proc", "toonstream-python", "toonstream-stdlib", *PEERS] if not args.only else args.only.split(",")
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for _ in range(args.rounds):  # alternate the converters, so load drifts hit all alike
        for name in names:
            dst = WORK / f"out_{name}.toon"
            env = None
            if name == "toonstream":
                cmd = [sys.executable, "-m", "toonstream", "encode", str(src), "-o", str(dst), "--no-progress"]
            elif name == "toonstream-1proc":
                cmd = [sys.executable, "-m", "toonstream", "encode", str(src), "-o", str(dst), "--no-progress", "--jobs", "1"]
            elif name == "toonstream-python":
                cmd = [sys.executable, "-m", "toonstream", "encode", str(src), "-o", str(dst), "--no-progress"]
                env = {**compiled_env(), "TOONSTREAM_ENGINE": "python"}
            elif name == "toonstream-stdlib":
                cmd = [sys.executable, "-c", NO_ORJSON, "encode", str(src), "-o", str(dst), "--no-progress"]
            else:
                cmd = [sys.executable, "-c", PEERS[name], str(src), str(dst)]
            r = measure(cmd, env)
            r.update(output_bytes=dst.stat().st_size if dst.exists() else 0, sha=digest(dst) if dst.exists() else "")
            runs[name].append(r)
            dst.unlink(missing_ok=True)
    results = []
    for name, rs in runs.items():
        seconds = statistics.median(r["seconds"] for r in rs)
        results.append({
            "name": name, "seconds": seconds, "runs": [r["seconds"] for r in rs],
            "peak_rss_mb": max(r["peak_rss_mb"] for r in rs), "peak_tree_rss_mb": max(r["peak_tree_rss_mb"] for r in rs),
            "returncode": max(r["returncode"] for r in rs), "mb_per_s": size / 1e6 / seconds,
            "rows_per_s": args.rows / seconds, "output_bytes": rs[-1]["output_bytes"], "sha": rs[-1]["sha"],
        })
    base = next((r for r in results if r["name"] == "toonstream"), None)
    peer = next((r for r in results if r["name"] == "orjson+toons"), None)
    print(f"\ninput: {args.rows:,} JSONL rows ({args.data}), {size / 1e6:.0f} MB; Python {platform.python_version()}\n")
    print("| converter | seconds | MB/s | rows/s | peak RSS, largest process (MB) | peak RSS, all processes (MB) "
          "| time vs toonstream | time vs orjson+toons | output sha256[:12] |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in results:
        ratio = r["seconds"] / base["seconds"] if base else float("nan")
        vs_peer = r["seconds"] / peer["seconds"] if peer else float("nan")
        print(f"| {r['name']} | {r['seconds']:.2f} | {r['mb_per_s']:.1f} | {r['rows_per_s']:,.0f} | {r['peak_rss_mb']:.0f} "
              f"| {r['peak_tree_rss_mb']:.0f} | {ratio:.2f}x | {vs_peer:.2f}x | {r['sha']} |")
    (RESULTS / f"jsonl_to_toon_{tag}{args.rows}.json").write_text(json.dumps(
        {"date": time.strftime("%Y-%m-%d"), "data": args.data, "rows": args.rows, "rounds": args.rounds, "cpus": os.cpu_count(), "input_bytes": size, "results": results}, indent=2))
    if not args.keep:
        src.unlink()


if __name__ == "__main__":
    main()

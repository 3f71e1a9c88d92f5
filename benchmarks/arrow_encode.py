"""Parquet -> TOON: encode_arrow (the engine in use: native rows where built), encode_arrow on the
reference engine (TOONSTREAM_ENGINE=python: pyarrow.compute only) and table.to_pylist() +
toons.dumps / toonstream.dumps (same run), and
the peak RSS of `toonstream encode x.parquet -o y.toon` at two input sizes.

    python benchmarks/arrow_encode.py                       # 1M rows speed; RSS at 1M and 4M rows
    python benchmarks/arrow_encode.py --rows 200000 --rss-rows 200000,800000   # quick

Input: the `uniform` dataset of benchmarks/datasets.py (8 columns: int, string, float,
bool, string, ISO-date string, int, long string; ~1% strings that need quotes), written
as Parquet (pyarrow defaults: snappy, dictionary pages, 1Mi-row row groups); the
larger RSS inputs repeat the 1M-row table with shifted ids.  Every contender runs in
its own process; the time is the conversion inside that process (Parquet file to TOON
file, imports excluded).  The contenders run in alternation, --repeat rounds (the slow
pure-Python reference once), and the best and the median are reported: the machine is
shared, so compare ratios.  Output files are compared byte for byte.
Writes benchmarks/results/arrow_encode_<rows>.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / "work"
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE))

from jsonl_to_toon import digest  # noqa: E402  (one sha256-of-a-file helper for the benchmarks)


def generate(path: Path, rows: int) -> None:
    """``rows`` rows of datasets.uniform as Parquet (built 1M rows at a time)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from datasets import uniform

    block = min(rows, 1_000_000)
    base = pa.Table.from_pylist(uniform(block))
    with pq.ParquetWriter(path, base.schema) as w:
        done = 0
        while done < rows:
            n = min(block, rows - done)
            part = base.slice(0, n)
            ids = pa.array(range(done, done + n), pa.int64())
            w.write_table(part.set_column(0, "id", ids))
            done += n


CONTENDERS = {
    "encode_arrow": (
        "import pyarrow, pyarrow.compute, pyarrow.parquet  # imported by the first call otherwise\n"
        "from toonstream._arrow_encode import encode_arrow\n"
        "def convert(src, dst):\n"
        "    with open(dst, 'wb') as out:\n"
        "        encode_arrow(src, out)\n"
    ),
    "encode_arrow[python engine]": (
        "import os; os.environ['TOONSTREAM_ENGINE'] = 'python'  # the reference: pyarrow.compute only\n"
        "import pyarrow, pyarrow.compute, pyarrow.parquet\n"
        "from toonstream._arrow_encode import encode_arrow\n"
        "def convert(src, dst):\n"
        "    with open(dst, 'wb') as out:\n"
        "        encode_arrow(src, out)\n"
    ),
    "to_pylist+toons.dumps": (
        "import pyarrow.parquet as pq, toons\n"
        "def convert(src, dst):\n"
        "    rows = pq.read_table(src).to_pylist()\n"
        "    with open(dst, 'w', encoding='utf-8') as out:\n"
        "        out.write(toons.dumps(rows))\n"
    ),
    "to_pylist+toonstream.dumps": (
        "import pyarrow.parquet as pq, toonstream\n"
        "def convert(src, dst):\n"
        "    rows = pq.read_table(src).to_pylist()\n"
        "    with open(dst, 'w', encoding='utf-8') as out:\n"
        "        out.write(toonstream.dumps(rows))\n"
    ),
}

_RUNNER = (
    "import json, resource, sys, time, gc\n"
    "{body}\n"
    "best = float('inf')\n"
    "for _ in range(int(sys.argv[3])):\n"
    "    gc.collect()\n"
    "    t0 = time.perf_counter(); convert(sys.argv[1], sys.argv[2]); best = min(best, time.perf_counter() - t0)\n"
    "print(json.dumps({{'seconds': best, 'peak_rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))\n"
)


def run_contender(name: str, src: Path, dst: Path, repeat: int) -> dict[str, float]:
    code = _RUNNER.format(body=CONTENDERS[name])
    out = subprocess.run([sys.executable, "-c", code, str(src), str(dst), str(repeat)], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{name} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure_cli(src: Path, dst: Path) -> dict[str, float]:
    cmd = [sys.executable, "-m", "toonstream", "encode", str(src), "-o", str(dst), "--no-progress"]
    out = subprocess.run([sys.executable, str(HERE / "_measure.py"), *cmd], capture_output=True, text=True, check=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    if r["returncode"] != 0:
        raise SystemExit(f"toonstream encode failed on {src}")
    return r


def source(rows: int) -> Path:
    WORK.mkdir(exist_ok=True)
    path = WORK / f"uniform_{rows}.parquet"
    if not path.exists():
        t0 = time.perf_counter()
        # In a child process: this process stays small, so the contenders it
        # starts do not inherit a large peak RSS (Linux keeps ru_maxrss across exec).
        subprocess.run([sys.executable, __file__, "--generate", str(path), str(rows)], check=True)
        print(f"generated {path} ({path.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    return path


def main() -> None:
    if sys.argv[1:2] == ["--generate"]:
        generate(Path(sys.argv[2]), int(sys.argv[3]))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows for the speed comparison")
    ap.add_argument("--rss-rows", default="1000000,4000000", help="comma-separated input sizes for the RSS check")
    ap.add_argument("--repeat", type=int, default=5, help="rounds (each contender once per round)")
    ap.add_argument("--only", help="comma-separated subset of: " + ",".join(CONTENDERS))
    ap.add_argument("--keep", action="store_true", help="keep the generated Parquet files")
    args = ap.parse_args()
    RESULTS.mkdir(exist_ok=True)
    src = source(args.rows)
    size = src.stat().st_size
    names = list(CONTENDERS) if not args.only else args.only.split(",")
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    shas: dict[str, str] = {}
    out_bytes: dict[str, int] = {}
    for round_ in range(args.repeat):
        for name in names:
            if name == "to_pylist+toonstream.dumps" and round_:
                continue  # the slow reference: once
            dst = WORK / f"arrow_out_{name.replace('+', '_')}.toon"
            r = run_contender(name, src, dst, 1)
            runs[name].append(r)
            shas[name], out_bytes[name] = digest(dst), dst.stat().st_size
            dst.unlink()
            print(f"round {round_ + 1}: {name}: {r['seconds']:.2f}s", file=sys.stderr)
    speed = []
    for name in names:
        times = sorted(r["seconds"] for r in runs[name])
        speed.append(
            {"name": name, "seconds": times[0], "median_seconds": times[len(times) // 2], "runs": times,
             "peak_rss_mb": max(r["peak_rss_mb"] for r in runs[name]), "rows_per_s": args.rows / times[0],
             "output_bytes": out_bytes[name], "sha": shas[name]}
        )
    base = speed[0]
    print(f"\ninput: {args.rows:,} rows x 8 columns, Parquet {size / 1e6:.0f} MB; Python {platform.python_version()}\n")
    print("| contender | best s | median s | rows/s (best) | peak RSS (MB) | time vs encode_arrow (best / median) | output sha256[:12] |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for r in speed:
        print(
            f"| {r['name']} | {r['seconds']:.2f} | {r['median_seconds']:.2f} | {r['rows_per_s']:,.0f} | {r['peak_rss_mb']:.0f} "
            f"| {r['seconds'] / base['seconds']:.2f}x / {r['median_seconds'] / base['median_seconds']:.2f}x | {r['sha']} |"
        )
    same = len({r["sha"] for r in speed}) == 1
    print(f"\noutputs byte-identical: {same}")
    rss = []
    for n in [int(x) for x in args.rss_rows.split(",") if x]:
        path = source(n)
        dst = WORK / "arrow_rss_out.toon"
        r = measure_cli(path, dst)
        r.update(rows=n, input_bytes=path.stat().st_size, output_bytes=dst.stat().st_size)
        rss.append(r)
        dst.unlink()
        if not args.keep and n != args.rows:
            path.unlink()
    print("\n| `toonstream encode x.parquet -o y.toon` | Parquet MB | TOON MB | seconds | peak RSS (MB) |")
    print("|---|---:|---:|---:|---:|")
    for r in rss:
        print(f"| {r['rows']:,} rows | {r['input_bytes'] / 1e6:.0f} | {r['output_bytes'] / 1e6:.0f} | {r['seconds']:.1f} | {r['peak_rss_mb']:.0f} |")
    (RESULTS / f"arrow_encode_{args.rows}.json").write_text(
        json.dumps(
            {"date": time.strftime("%Y-%m-%d"), "rows": args.rows, "input_bytes": size, "speed": speed,
             "identical": same, "rss": rss},
            indent=2,
        )
    )
    if not args.keep:
        src.unlink(missing_ok=True)


if __name__ == "__main__":
    main()

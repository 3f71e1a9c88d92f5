"""TOON table -> Polars DataFrame: toonstream.polars.read_toon vs the peers (same run).

    python benchmarks/toon_to_polars.py                 # 1M rows x 8 columns (datasets.uniform)
    python benchmarks/toon_to_polars.py --rows 100000 --repeat 2
    python benchmarks/toon_to_polars.py --floor         # what any polars-based reader must at least do
    python benchmarks/toon_to_polars.py --fresh 9       # one read per process (no allocator reuse)
    python benchmarks/toon_to_polars.py --warm 5        # best of 5 reads per process, glibc keeping freed pages or not

Contenders, all producing a DataFrame of the same table:
- toonstream.polars.read_toon(path)
- polars.read_csv(path) on the same table written as CSV (the yardstick)
- toons.loads(text) + pl.DataFrame(...)   (Rust TOON decoder; `bench` extra)
- toonstream.loads(text) + pl.DataFrame(...)
Each is timed in this process, best of --repeat runs; results are checked equal
(read_toon vs pl.DataFrame(toonstream.loads)).  Writes
benchmarks/results/toon_to_polars_<rows>.json.

``--floor``: the least a reader built on polars' kernels must do for this
table, each step timed alone (best of --repeat), against ``read_csv``: split
the rows into string columns with polars' CSV tokenizer (rows with a quoted
cell are left out of its input, so no quoting is handled at all), then, with
the column types already known, run the cheapest §4 check per column that
toonstream has found (polars' parsers are looser than §4: "05", "+5", "1." are
strings in TOON) and convert.  No indentation, width, count or special-line
checks, no error locations.  Writes
benchmarks/results/toon_to_polars_floor_<rows>.json.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
WORK = HERE / "work"
RESULTS = HERE / "results"


def save(name: str, **fields: Any) -> None:
    """Write ``results/<name>.json``: ``fields``, the machine and the Polars version."""
    import polars as pl

    out = {**fields, "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
           "polars": pl.__version__}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(out, indent=2))


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times = []
    out = None
    for _ in range(repeat):
        out = None
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


_CHILD = """
import sys, resource, time
import toonstream.arrow as ta
t0 = time.perf_counter()
n = sum(b.num_rows for b in ta.iter_batches(sys.argv[1]))
print(n, time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def rss(sizes: list[int]) -> None:
    """Peak RSS of iterating Arrow batches over generated tables (memory flat in input size)."""
    import subprocess

    WORK.mkdir(exist_ok=True)
    print("| rows | TOON MB | seconds | peak RSS (MB) |")
    print("|---:|---:|---:|---:|")
    out = []
    for n in sizes:
        path = WORK / f"rss_{n}.toon"
        if not path.exists():
            cities = ["Oslo", '"São Paulo, BR"']  # every other row has a quoted cell
            with open(path, "w", encoding="utf-8") as f:
                f.write(f"[{n}]{{id,name,score,active,city,visits}}:\n")
                for i in range(n):
                    active = "true" if i % 3 else "false"
                    f.write(f"  {i},user_{i * 7919 % 1000003},{i % 1000}.{i % 7},{active},{cities[i % 2]},{i % 5000}\n")
        p = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, check=True)
        rows, seconds, peak = p.stdout.split()
        mb = path.stat().st_size / 1e6
        out.append({"rows": int(rows), "toon_mb": mb, "seconds": float(seconds), "peak_rss_mb": float(peak)})
        print(f"| {int(rows):,} | {mb:.0f} | {float(seconds):.2f} | {float(peak):.0f} |")
    (RESULTS / "toon_to_arrow_rss.json").write_text(json.dumps(out, indent=2))


_ONE_READ = """
import io, sys, time
import polars as pl
import toonstream.polars as tp
# (the imports and each reader's lazily loaded parts warmed on a tiny table)
tp.read_toon(io.BytesIO(b"[2]{a,b}:\\n  1,x\\n  2,y\\n"))
pl.read_csv(io.BytesIO(b"a,b\\n1,x\\n"))
t0 = time.perf_counter()
df = tp.read_toon(sys.argv[2]) if sys.argv[1] == "toon" else pl.read_csv(sys.argv[2])
print(time.perf_counter() - t0, df.height)
"""


def fresh(toon: Path, csv: Path, rows: int, rounds: int) -> None:
    """One read per process, read_toon and read_csv alternating: the
    one-shot case (a CLI or ETL stage), where neither reader's allocator has
    memory to reuse from an earlier read (best-of-N in one process favours
    polars' jemalloc, which keeps freed pages; glibc returns ours)."""
    import statistics
    import subprocess

    times: dict[str, list[float]] = {"toon": [], "csv": []}
    for _ in range(rounds):
        for which, path in (("toon", toon), ("csv", csv)):
            p = subprocess.run([sys.executable, "-c", _ONE_READ, which, str(path)], capture_output=True, text=True, check=True)
            seconds, height = p.stdout.split()
            assert int(height) == rows, (which, height)
            times[which].append(float(seconds))
    med = {k: statistics.median(v) for k, v in times.items()}
    low = {k: min(v) for k, v in times.items()}
    print(f"\n{rows:,} rows, one read per process, {rounds} rounds alternating\n")
    print("| reader | best | median | median vs read_csv |")
    print("|---|---:|---:|---:|")
    for k, name in (("toon", "toonstream read_toon"), ("csv", "polars read_csv (same table as CSV)")):
        print(f"| {name} | {low[k]:.3f} | {med[k]:.3f} | {med[k] / med['csv']:.2f}x |")
    out = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
        "rows": rows,
        "rounds": rounds,
        "seconds": times,
        "median_vs_read_csv": med["toon"] / med["csv"],
    }
    (RESULTS / f"toon_to_polars_fresh_{rows}.json").write_text(json.dumps(out, indent=2))


_WARM_READS = """
import resource, sys, time
import polars as pl
import toonstream.polars as tp
read = (lambda: tp.read_toon(sys.argv[2])) if sys.argv[1] == "toon" else (lambda: pl.read_csv(sys.argv[2]))
read()  # (warm: the imports, lazily loaded parts, and the allocators' first growth)
best, before = float("inf"), resource.getrusage(resource.RUSAGE_SELF)
for _ in range(int(sys.argv[3])):
    t0 = time.perf_counter()
    df = read()
    best = min(best, time.perf_counter() - t0)
    del df
after = resource.getrusage(resource.RUSAGE_SELF)
n = int(sys.argv[3])
print(best, (after.ru_minflt - before.ru_minflt) / n, (after.ru_stime - before.ru_stime) / n)
"""

#: glibc told to keep the memory a process frees (no trimming of the heap's
#: top, no separate mapping per big block), as polars' jemalloc keeps its own
#: (the variable is read when a process starts; jemalloc ignores it)
GLIBC_KEEP = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967296"


def warm(toon: Path, csv: Path, rows: int, rounds: int, repeat: int) -> None:
    """Best of ``repeat`` reads in one process, as the main table measures,
    but each reader in processes of its own, alternating, ``rounds`` each;
    and again with glibc keeping the pages a process frees
    (:data:`GLIBC_KEEP`).  Shows how much of read_toon's time beyond
    read_csv is the allocator's: polars allocates with jemalloc, which keeps
    freed pages for the next read; toonstream's buffers (the file's blocks,
    the columns) come from glibc, which returns them to the kernel, so each
    read faults fresh, zeroed pages in again."""
    import os
    import statistics
    import subprocess

    cases = [("toon", ""), ("csv", ""), ("toon", GLIBC_KEEP), ("csv", GLIBC_KEEP)]
    got: dict[tuple[str, str], list[tuple[float, float, float]]] = {c: [] for c in cases}
    for _ in range(rounds):
        for which, tunables in cases:
            env = dict(os.environ, GLIBC_TUNABLES=tunables) if tunables else dict(os.environ)
            path = toon if which == "toon" else csv
            p = subprocess.run([sys.executable, "-c", _WARM_READS, which, str(path), str(repeat)],
                               capture_output=True, text=True, check=True, env=env)
            seconds, faults, system = map(float, p.stdout.split())
            got[(which, tunables)].append((seconds, faults, system))
    med = {c: [statistics.median(x[i] for x in v) for i in range(3)] for c, v in got.items()}
    print(f"\n{rows:,} rows, best of {repeat} reads per process, {rounds} processes each, alternating (medians)\n")
    print("| reader | glibc | seconds | page faults / read | system s / read | vs read_csv, same glibc |")
    print("|---|---|---:|---:|---:|---:|")
    for which, tunables in cases:
        m = med[(which, tunables)]
        name = "toonstream read_toon" if which == "toon" else "polars read_csv (same table as CSV)"
        ratio = m[0] / med[("csv", tunables)][0]
        print(f"| {name} | {'keeps freed pages' if tunables else 'default'} | {m[0]:.3f} | {m[1]:,.0f} | {m[2]:.3f} | {ratio:.2f}x |")
    out = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
        "rows": rows,
        "rounds": rounds,
        "repeat": repeat,
        "glibc_keep": GLIBC_KEEP,
        "runs": [{"reader": w, "glibc_tunables": t, "seconds": [x[0] for x in v], "faults_per_read": [x[1] for x in v],
                  "system_s_per_read": [x[2] for x in v]} for (w, t), v in got.items()],
    }
    (RESULTS / f"toon_to_polars_warm_{rows}.json").write_text(json.dumps(out, indent=2))


def floor(toon: Path, csv: Path, rows: int, repeat: int) -> None:
    """The polars floor (see the module docstring)."""
    import polars as pl

    from toonstream._reference.grammar import NUMBER, NUMBER_INTEGER

    raw = toon.read_bytes()
    header, _, body = raw.partition(b"\n")
    width = header.count(b",") + 1
    plain = b"\n".join(line for line in body.split(b"\n") if line and b'"' not in line) + b"\n"
    names = [f"c{i}" for i in range(width)]

    def tokenize() -> pl.DataFrame:
        return pl.read_csv(
            plain, has_header=False, separator=",", quote_char=None, schema={c: pl.String for c in names}
        ).with_columns(pl.col("c0").str.slice(2))

    tokens = tokenize()
    # The column types, known (read_csv's on the CSV form), and per type the
    # cheapest §4 test and conversion found with Polars' kernels (these were
    # read_toon's own until the reference typed columns with the grammar's
    # column converter: see benchmarks/README.md).
    dtypes = list(pl.read_csv(csv, n_rows=100).schema.values())
    num, integer = "^" + NUMBER.pattern + "$", "^" + NUMBER_INTEGER + "$"
    checks: list[pl.Expr] = []
    casts: list[pl.Expr] = []
    for n, dtype in zip(names, dtypes):
        c = pl.col(n)
        if dtype == pl.Int64:
            checks.append((~c.str.contains(integer) | (c.str.len_bytes() > 18)).sum().alias(n))
            casts.append(c.cast(pl.Int64).alias(n))
        elif dtype == pl.Float64:
            checks.append((~c.str.contains(num)).sum().alias(n))
            casts.append(c.cast(pl.Float64).alias(n))
        elif dtype == pl.Boolean:
            checks.append((~c.is_in(["true", "false"])).sum().alias(n))
            casts.append((c == "true").alias(n))
        else:  # strings: count the tokens that start like a number
            checks.append((((c >= "0") & (c < ":")) | ((c >= "-") & (c < "."))).sum().alias(n))
    steps: list[tuple[str, Callable[[], Any]]] = [
        ("polars read_csv (CSV, types inferred)", lambda: pl.read_csv(csv)),
        ("tokenize: read_csv of the TOON rows as strings", tokenize),
        ("check: cheapest §4 test per column (types known)", lambda: tokens.select(checks)),
        ("convert: cast the checked columns", lambda: tokens.select(casts)),
        ("toonstream read_toon", lambda: __import__("toonstream.polars").polars.read_toon(str(toon))),
    ]
    times = {}
    for name, fn in steps:
        times[name], _ = best(fn, repeat)
    csv_s = times[steps[0][0]]
    total = sum(times[name] for name, _ in steps[1:4])
    print(f"\n{rows:,} rows x {width} columns, best of {repeat}\n")
    print("| step | seconds | vs read_csv |")
    print("|---|---:|---:|")
    for name, _ in steps:
        print(f"| {name} | {times[name]:.3f} | {times[name] / csv_s:.2f}x |")
    print(f"| **floor** (tokenize + check + convert) | **{total:.3f}** | **{total / csv_s:.2f}x** |")
    out = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
        "rows": rows,
        "repeat": repeat,
        "seconds": times,
        "floor_seconds": total,
        "floor_vs_read_csv": total / csv_s,
    }
    (RESULTS / f"toon_to_polars_floor_{rows}.json").write_text(json.dumps(out, indent=2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--floor", action="store_true", help="instead: the polars floor (see above)")
    ap.add_argument("--fresh", type=int, metavar="ROUNDS",
                    help="instead: one read per process, read_toon and read_csv alternating, ROUNDS each")
    ap.add_argument("--warm", type=int, metavar="ROUNDS",
                    help="instead: best of --repeat reads per process, each reader in ROUNDS processes, "
                    "alternating, with glibc's defaults and with glibc keeping freed pages")
    ap.add_argument("--rss", type=int, nargs="*", metavar="ROWS",
                    help="instead: peak RSS of streaming iter_batches over tables of these sizes (subprocesses)")
    args = ap.parse_args()
    if args.rss is not None:
        rss(args.rss or [1_000_000, 4_000_000])
        return

    import polars as pl
    from polars.testing import assert_frame_equal

    import datasets
    import toonstream
    import toonstream.polars as tp

    WORK.mkdir(exist_ok=True)
    RESULTS.mkdir(exist_ok=True)
    toon = WORK / f"uniform_{args.rows}.toon"
    csv = WORK / f"uniform_{args.rows}.csv"
    if not toon.exists() or not csv.exists():
        data = datasets.uniform(args.rows)
        toon.write_text(toonstream.dumps(data), encoding="utf-8")
        pl.DataFrame(data).write_csv(csv)
        del data
    if args.floor:
        floor(toon, csv, args.rows, args.repeat)
        return
    if args.fresh:
        fresh(toon, csv, args.rows, args.fresh)
        return
    if args.warm:
        warm(toon, csv, args.rows, args.warm, args.repeat)
        return
    text = toon.read_text(encoding="utf-8")
    mb = toon.stat().st_size / 1e6

    contenders: list[tuple[str, Callable[[], Any]]] = [
        ("toonstream read_toon", lambda: tp.read_toon(str(toon))),
        ("polars read_csv (same table as CSV)", lambda: pl.read_csv(csv)),
    ]
    try:
        import toons

        contenders.append(("toons.loads + pl.DataFrame", lambda: pl.DataFrame(toons.loads(text))))
    except ImportError:
        print("toons not installed (pip install -e '.[bench]'): skipped", file=sys.stderr)
    contenders.append(("toonstream.loads + pl.DataFrame", lambda: pl.DataFrame(toonstream.loads(text))))

    results = []
    frames = {}
    for name, fn in contenders:
        seconds, df = best(fn, args.repeat)
        frames[name] = df
        results.append({"name": name, "seconds": seconds, "mb_per_s": mb / seconds, "rows_per_s": args.rows / seconds})
        print(f"{name:40s} {seconds:7.3f} s", file=sys.stderr)
    assert_frame_equal(frames["toonstream read_toon"], frames["toonstream.loads + pl.DataFrame"])

    base = results[0]["seconds"]
    by = {r["name"]: r["seconds"] for r in results}
    print(f"\n{args.rows:,} rows x 8 columns, TOON {mb:.0f} MB, best of {args.repeat}\n")
    print("| reader | seconds | MB/s | rows/s | time vs read_toon |")
    print("|---|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['name']} | {r['seconds']:.3f} | {r['mb_per_s']:.0f} | {r['rows_per_s']:,.0f} | {r['seconds'] / base:.2f}x |")
    csv_ratio = base / by["polars read_csv (same table as CSV)"]
    print(f"\nread_toon / read_csv: {csv_ratio:.2f}x (target <= 1x: issue 16; <= 2x for the python engine)")
    if "toons.loads + pl.DataFrame" in by:
        print(f"toons+DataFrame / read_toon: {by['toons.loads + pl.DataFrame'] / base:.2f}x faster (target >= 3x)")
    out = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
        "rows": args.rows,
        "toon_mb": mb,
        "repeat": args.repeat,
        "results": results,
    }
    (RESULTS / f"toon_to_polars_{args.rows}.json").write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

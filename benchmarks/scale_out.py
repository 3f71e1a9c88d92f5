"""Scale-out throughput: one big one-table TOON file read by byte ranges.

    python benchmarks/scale_out.py               # ~200 MB table (datasets.uniform rows)
    python benchmarks/scale_out.py --mb 50 --blocksize 16MiB

Measured, in MB/s of the file's bytes (best of --repeat runs, wall clock):
- ``read_table``: toonstream.arrow.read_table on the whole file, one process
  (the baseline);
- ``range_reader``: toonstream.ranges.RangeReader, the ranges of --blocksize
  read one after the other in this process (what one worker does);
- ``dask_1_worker`` / ``dask_2_workers``: toonstream.dask.read_toon on a
  distributed.LocalCluster of 1 or 2 single-threaded worker processes, the
  partitions reduced to their lengths on the workers (so that the result
  sent back is small, as a real job's aggregation would be).  Cluster
  start-up is not timed; the client-side planning (header, type inference)
  is.  Both again with the workers' MALLOC_TRIM_THRESHOLD_ raised from
  Dask's 64 KiB to 256 MiB (``*_trim_256mib``; see the comment in main).

Polars (which types the columns) runs on one thread per process by default
here (--polars-threads 1), so that one reader is one core: the dask numbers
then say what each added worker core brings.  The reader also types a batch
on a second thread while it scans the next (most of that is Polars work).

The rows are datasets.uniform's (8 columns: ints, floats, bools, short and
long strings, dates, ~1% cells that need quotes), a block of them repeated
up to the size (the byte mix of the whole is the block's).  Writes
benchmarks/results/scale_out.json.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
WORK = HERE / "work"


def make_file(path: Path, mb: int, block_rows: int = 50_000) -> int:
    """A one-table TOON file of about ``mb`` MB; returns its row count."""
    import pyarrow as pa

    import datasets
    import toonstream.arrow as ta

    buf = io.BytesIO()
    ta.encode_arrow(pa.Table.from_pylist(datasets.uniform(block_rows)), buf)
    head, _, body = buf.getvalue().partition(b"\n")
    body += b"\n"
    copies = max(1, round(mb * 1_000_000 / len(body)))
    rows = copies * block_rows
    with open(path, "wb") as f:
        f.write(head.replace(f"[{block_rows}]".encode(), f"[{rows}]".encode(), 1) + b"\n")
        for _ in range(copies):
            f.write(body)
    return rows


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--blocksize", default="32MiB")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument(
        "--polars-threads", type=int, default=1,
        help="POLARS_MAX_THREADS for this process and the workers (1: each reader on one core, "
        "so that the numbers are per core; 0: polars' default, every core)",
    )
    args = ap.parse_args()
    if args.polars_threads:
        # (read by polars at import; the workers inherit the environment)
        os.environ["POLARS_MAX_THREADS"] = str(args.polars_threads)

    import distributed

    import toonstream
    import toonstream.arrow as ta
    from toonstream.dask import read_toon
    from toonstream.ranges import RangeReader, parse_size

    WORK.mkdir(exist_ok=True)
    path = WORK / f"scale_out_{args.mb}mb.toon"
    rows = make_file(path, args.mb)
    size = path.stat().st_size
    mb = size / 1e6
    results: dict[str, Any] = {}

    def record(name: str, seconds: float, **extra: Any) -> None:
        results[name] = {"seconds": round(seconds, 3), "mb_per_s": round(mb / seconds, 2), **extra}
        print(f"{name:>16}: {seconds:7.2f} s  {mb / seconds:7.1f} MB/s", flush=True)

    t, table = best(lambda: ta.read_table(str(path)), args.repeat)
    assert table.num_rows == rows
    record("read_table", t)
    del table

    def ranges() -> int:
        reader = RangeReader(str(path))
        n = sum(reader.read(s, e).num_rows for s, e in reader.ranges(parse_size(args.blocksize)))
        reader.check_count(n)
        return n

    t, n = best(ranges, args.repeat)
    assert n == rows
    record("range_reader", t, blocksize=args.blocksize)

    # Distributed's nanny starts workers with MALLOC_TRIM_THRESHOLD_=65536
    # (memory handed back to the OS eagerly), which makes the reader's
    # large, short-lived buffers cost page faults: measured with Dask's
    # default and with the threshold raised.
    for trim, suffix in ((None, ""), (str(256 << 20), "_trim_256mib")):
        for workers in (1, 2):
            with distributed.LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None, memory_limit=None,
                env={"MALLOC_TRIM_THRESHOLD_": trim} if trim else None,  # (the nanny's env wins over its default)
            ) as cluster, distributed.Client(cluster):
                read_toon(str(path), blocksize=args.blocksize).map_partitions(len).compute()  # (warm the workers)

                def run() -> int:
                    ddf = read_toon(str(path), blocksize=args.blocksize)
                    return int(ddf.map_partitions(len).compute().sum())

                t, n = best(run, args.repeat)
                assert n == rows
                name = f"dask_{workers}_worker{'s' if workers > 1 else ''}{suffix}"
                record(name, t, blocksize=args.blocksize, workers=workers, malloc_trim_threshold=trim or "dask default (65536)")

    out = {
        "file_mb": round(mb, 1),
        "rows": rows,
        "columns": 8,
        "engine": str(toonstream.engine),
        "cpus": os.cpu_count(),
        "polars_max_threads": args.polars_threads or "default",
        "load_average_at_end": os.getloadavg(),
        "python": platform.python_version(),
        "results": results,
        "speedup_2_over_1_worker": round(results["dask_1_worker"]["seconds"] / results["dask_2_workers"]["seconds"], 2),
        "speedup_2_over_1_worker_trim_256mib": round(
            results["dask_1_worker_trim_256mib"]["seconds"] / results["dask_2_workers_trim_256mib"]["seconds"], 2
        ),
    }
    (HERE / "results" / "scale_out.json").write_text(json.dumps(out, indent=2) + "\n")
    path.unlink()


if __name__ == "__main__":
    main()

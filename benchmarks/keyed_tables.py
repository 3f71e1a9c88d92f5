"""A keyed table (§9.5) -> Polars DataFrame: read_toon on it, against the same
rows as a plain table, as CSV (polars.read_csv) and on the reference engine.

    python benchmarks/keyed_tables.py                 # 300k entries of datasets.uniform
    python benchmarks/keyed_tables.py --rows 50000 --repeat 2

The keyed table is ``toonstream.dumps({"users": {f"u{i}": row}})`` (the
encoder must write such an object keyed: ``users[N:]{...}:`` and rows
``u0: 0,...``); the plain table is the same rows with the key as a first
field, and the CSV the plain table's.  All four give the same frame (checked).
Best of --repeat runs in this process; writes
benchmarks/results/keyed_tables_<rows>.json.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from toon_to_polars import WORK, best, save  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=300_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    import polars as pl
    from polars.testing import assert_frame_equal

    import datasets
    import toonstream
    import toonstream.polars as tp
    from toonstream import _engine

    n = args.rows
    WORK.mkdir(exist_ok=True)
    keyed, plain, csv = (WORK / f"keyed_{n}.toon", WORK / f"keyed_plain_{n}.toon", WORK / f"keyed_{n}.csv")
    if not keyed.exists() or not csv.exists():
        rows = datasets.uniform(n)
        keyed.write_text(toonstream.dumps({"users": {f"u{i}": r for i, r in enumerate(rows)}}))
        flat = [{"key": f"u{i}", **r} for i, r in enumerate(rows)]
        plain.write_text(toonstream.dumps({"users": flat}))
        pl.DataFrame(flat).write_csv(csv)
        del rows, flat
    first = keyed.read_text().split("\n", 2)[:2]
    assert first[0].startswith(f"users[{n}:]") and first[1].startswith("  u0: "), first

    engine = toonstream.engine
    cases: list[tuple[str, Callable[[], Any]]] = [
        (f"read_toon, keyed table ({engine})", lambda: tp.read_toon(keyed, path="users")),
        (f"read_toon, the rows as a plain table ({engine})", lambda: tp.read_toon(plain, path="users")),
        ("polars.read_csv, the rows as CSV", lambda: pl.read_csv(csv, try_parse_dates=False)),
    ]
    reference = _engine.select("python")

    def on_reference() -> Any:
        previous = _engine.use(reference)
        try:
            return tp.read_toon(keyed, path="users")
        finally:
            _engine.use(previous)

    cases.append(("read_toon, keyed table (python)", on_reference))
    results = []
    frames = []
    for name, fn in cases:
        seconds, frame = best(fn, args.repeat if "python" not in name else max(1, args.repeat // 3))
        results.append({"name": name, "seconds": round(seconds, 4)})
        frames.append(frame)
        frame = None
    for other in frames[1:]:
        assert_frame_equal(frames[0], other, check_exact=True)
    csv_s = results[2]["seconds"]
    print(f"| {n:,} entries | seconds | x read_csv |")
    print("|---|---:|---:|")
    for r in results:
        r["x_read_csv"] = round(r["seconds"] / csv_s, 2)
        print(f"| {r['name']} | {r['seconds']:.3f} | {r['x_read_csv']:.2f} |")
    save(f"keyed_tables_{n}", rows=n, repeat=args.repeat, results=results)


if __name__ == "__main__":
    main()

"""An array of records that is not a table (list items with nested objects and
arrays) -> Polars DataFrame: read_toon against polars.read_ndjson on the same
records as JSON Lines, and read_toon on the reference engine.

    python benchmarks/nested_frames.py                  # 60k orders and 120k events (datasets.py)
    python benchmarks/nested_frames.py --rows 20000 --repeat 2

``datasets.orders``: a customer object and 1-5 line items per record;
``datasets.events``: semi-uniform log records, half with a nested error
object.  The TOON is ``toonstream.dumps({"records": records})`` (list items,
§9.4).  read_toon and read_ndjson give the same columns (checked: equal
frames, but for the columns read_ndjson types otherwise, see the README).
Best of --repeat runs in this process; writes
benchmarks/results/nested_frames_<rows>.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from toon_to_polars import WORK, best, save  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=60_000, help="orders (events: twice as many)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    import polars as pl

    import datasets
    import toonstream
    import toonstream.polars as tp
    from toonstream import _engine

    reference = _engine.select("python")
    WORK.mkdir(exist_ok=True)
    results = []
    print("| dataset | reader | seconds | x read_ndjson |")
    print("|---|---|---:|---:|")
    for name, n in (("orders", args.rows), ("events", 2 * args.rows)):
        toon, ndjson = WORK / f"nested_{name}_{n}.toon", WORK / f"nested_{name}_{n}.jsonl"
        if not toon.exists() or not ndjson.exists():
            records = getattr(datasets, name)(n)
            toon.write_text(toonstream.dumps({"records": records}))
            ndjson.write_text("".join(json.dumps(r) + "\n" for r in records))
            del records

        def on_reference(path: Path = toon) -> Any:
            previous = _engine.use(reference)
            try:
                return tp.read_toon(path)
            finally:
                _engine.use(previous)

        cases: list[tuple[str, Callable[[], Any]]] = [
            (f"read_toon ({toonstream.engine})", lambda path=toon: tp.read_toon(path)),
            ("polars.read_ndjson", lambda path=ndjson: pl.read_ndjson(path)),
            ("read_toon (python)", on_reference),
        ]
        frames = []
        rows = []
        for reader, fn in cases:
            seconds, frame = best(fn, args.repeat if "python" not in reader else max(1, args.repeat // 3))
            rows.append({"dataset": f"{name} {n:,} ({toon.stat().st_size >> 20} MB)", "reader": reader,
                         "seconds": round(seconds, 4)})
            frames.append(frame)
        assert frames[0].equals(frames[2]), "the engines' frames differ"
        assert frames[0].shape == frames[1].shape, (frames[0].shape, frames[1].shape)
        base = rows[1]["seconds"]
        for r in rows:
            r["x_read_ndjson"] = round(r["seconds"] / base, 2)
            print(f"| {r['dataset']} | {r['reader']} | {r['seconds']:.3f} | {r['x_read_ndjson']:.2f} |")
        results += rows
    save(f"nested_frames_{args.rows}", rows=args.rows, repeat=args.repeat, results=results)


if __name__ == "__main__":
    main()

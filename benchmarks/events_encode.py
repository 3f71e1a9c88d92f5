"""ijson events -> TOON: `encode_events` on both engines, against the cost of making the events.

    python benchmarks/events_encode.py            # uniform 200k rows, orders 40k, events 80k; best of 3
    python benchmarks/events_encode.py --quick    # a tenth of that

For each dataset (written as JSON, read back with `ijson.parse`, yajl2_c), in one process:
- `ijson.parse` alone: the events listed (the source every event encoder pays for);
- `encode_events` of that list on the python engine (one `Encoder.send` per event) and on the
  native engine (`Encoder.send_all`: the events inside the elements taken by
  `_native.fill_elements`, rows or list items written in batches);
- `encode_events(ijson.parse(file))`, the streaming pipeline as used, native engine.
The outputs are checked equal to `toonstream.dumps` of the same data first.  Best of `--repeat`.
Writes benchmarks/results/events_encode.json.
"""

from __future__ import annotations

import argparse
import io
import json
import platform
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ijson  # noqa: E402

import datasets  # noqa: E402
from engines import on  # noqa: E402  (a call on one engine)
import toonstream  # noqa: E402
from toonstream import _engine  # noqa: E402
from toonstream.streaming import encode_events  # noqa: E402

RESULTS = HERE / "results"


def best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    scale = 10 if args.quick else 1
    sizes = {"uniform": 200_000 // scale, "orders": 40_000 // scale, "events": 80_000 // scale}
    python, native = _engine.select("python"), _engine.select("native")
    rows = []
    for name, n in sizes.items():
        data = getattr(datasets, name)(n)
        text = json.dumps(data).encode()
        events = list(ijson.parse(io.BytesIO(text)))
        want = toonstream.dumps(json.loads(text, parse_float=Decimal))

        def encode(evs: Any) -> str:
            out = io.StringIO()
            encode_events(evs, out)
            return out.getvalue()

        for engine in (python, native):
            assert on(engine, lambda: encode(iter(events)))() == want, (name, engine.name)
        t_parse = best(lambda: list(ijson.parse(io.BytesIO(text))), args.repeat)
        t_py = best(on(python, lambda: encode(iter(events))), args.repeat)
        t_nat = best(on(native, lambda: encode(iter(events))), args.repeat)
        t_pipe = best(on(native, lambda: encode(ijson.parse(io.BytesIO(text)))), args.repeat)
        rows.append({
            "dataset": f"{name} ({n:,})", "events": len(events), "json_mb": round(len(text) / 1e6, 1),
            "ijson_parse_s": round(t_parse, 3), "python_s": round(t_py, 3), "native_s": round(t_nat, 3),
            "native_pipeline_s": round(t_pipe, 3),
        })
    print(f"best of {args.repeat}; times in seconds\n")
    print("| dataset | events | ijson.parse | encode_events python | native | native × python | ijson.parse + encode (native) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['dataset']} | {r['events']:,} | {r['ijson_parse_s']:.3f} | {r['python_s']:.3f} | "
              f"{r['native_s']:.3f} | {r['native_s'] / r['python_s']:.2f} | {r['native_pipeline_s']:.3f} |")
    RESULTS.mkdir(exist_ok=True)
    out = {"python": platform.python_version(), "ijson_backend": ijson.backend, "repeat": args.repeat,
           "quick": args.quick, "rows": rows}
    (RESULTS / ("events_encode_quick.json" if args.quick else "events_encode.json")).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()

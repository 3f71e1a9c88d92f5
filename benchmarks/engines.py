"""The two engines side by side, against the compiled peers, in one run.

For each dataset: the same data as TOON (``toonstream.dumps``) and as compact JSON
(``orjson.dumps``), then ``loads`` and ``dumps`` on the python engine, the native
engine and the peers (orjson on the JSON form; toons, the fastest TOON peer, from
the ``bench`` extra), and ``parse``/``items`` against ijson's C backend (yajl2_c) on
the JSON form, best of ``--repeat`` runs.  Ratios are taken within this run
(the machine is shared and noisy): "x orjson", "x toons" and "x ijson" are time
relative to that peer's same operation, each timed as the call plus the young
collection it leaves behind (see ``best``; the call alone is shown too).  For
``parse`` the event counts are equal (the same data gives the same triples), so a
time ratio is an events-per-second ratio.  The native engine's results are
checked against the python engine's (same values, same text) before anything is
timed.

    python benchmarks/engines.py              # 1M uniform rows, 100k orders, 200k events
    python benchmarks/engines.py --quick      # small sizes, a smoke run
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import platform
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datasets  # noqa: E402

import toonstream  # noqa: E402
from toonstream import _engine  # noqa: E402

SIZES = {"uniform": 1_000_000, "orders": 100_000, "events": 200_000}
QUICK = {"uniform": 20_000, "orders": 5_000, "events": 10_000}
RESULTS = Path(__file__).resolve().parent / "results"


def _maybe(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


orjson = _maybe("orjson")
toons = _maybe("toons")
ijson = _maybe("ijson")
yajl2_c = None
if ijson is not None:
    try:
        yajl2_c = ijson.get_backend("yajl2_c")
    except ImportError:
        pass


def drain(it: Any) -> None:
    deque(it, maxlen=0)


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """The best call time and the best time of the call plus the collection it leaves behind.

    The result is kept while the clock runs, as a caller keeps it.  The native ``loads``
    pauses the cyclic collector while it builds (README: implementation choices), so the
    containers it made are all still young when it returns and the next collection
    traverses them once; the others paid their young collections during the call.  The
    second figure charges that deferred pass, ``gc.collect(0)`` right after the call, to
    the call, so the ratios compare equal work.
    """
    calls, totals = [], []
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        result = fn()
        t1 = time.perf_counter()
        gc.collect(0)
        t2 = time.perf_counter()
        del result
        calls.append(t1 - t)
        totals.append(t2 - t)
    return min(calls), min(totals)


def on(engine: _engine.Engine, fn: Callable[[], Any]) -> Callable[[], Any]:
    def run() -> Any:
        previous = _engine.use(engine)
        try:
            return fn()
        finally:
            _engine.use(previous)

    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", choices=sorted(SIZES), action="append")
    ap.add_argument("--ops", default="loads,dumps,parse,items", help="comma-separated operations to time")
    args = ap.parse_args()
    sizes = QUICK if args.quick else SIZES
    python = _engine.select("python")
    try:
        native: _engine.Engine | None = _engine.select("native")
    except ImportError as e:
        native = None
        print(f"native engine unavailable: {e}", file=sys.stderr)
    rows: list[dict[str, Any]] = []
    for name, n in sizes.items():
        if args.only and name not in args.only:
            continue
        value: Any = getattr(datasets, name)(n)
        toon_text = on(python, lambda: toonstream.dumps(value))()
        json_text = orjson.dumps(value) if orjson else json.dumps(value, separators=(",", ":")).encode()
        want = on(python, lambda: toonstream.loads(toon_text))()
        ops: list[tuple[str, str, Callable[[], Any]]] = [
            ("loads", "toonstream (python)", on(python, lambda: toonstream.loads(toon_text))),
        ]
        if native is not None:
            got = on(native, lambda: toonstream.loads(toon_text))()
            assert got == want, f"native loads differs on {name}"
            ops.append(("loads", "toonstream (native)", on(native, lambda: toonstream.loads(toon_text))))
        if orjson is not None:
            ops.append(("loads", "orjson (JSON)", lambda: orjson.loads(json_text)))
        ops.append(("loads", "json (JSON)", lambda: json.loads(json_text)))
        if toons is not None:
            ops.append(("loads", "toons", lambda: toons.loads(toon_text)))
        ops.append(("dumps", "toonstream (python)", on(python, lambda: toonstream.dumps(value))))
        if native is not None:
            assert on(native, lambda: toonstream.dumps(value))() == toon_text, f"native dumps differs on {name}"
            ops.append(("dumps", "toonstream (native)", on(native, lambda: toonstream.dumps(value))))
        if orjson is not None:
            ops.append(("dumps", "orjson (JSON)", lambda: orjson.dumps(value)))
        ops.append(("dumps", "json (JSON)", lambda: json.dumps(value, separators=(",", ":"))))
        if toons is not None:
            ops.append(("dumps", "toons", lambda: toons.dumps(value)))
        for op, engine_name, engine in (("parse", "python", python), ("parse", "native", native),
                                        ("items", "python", python), ("items", "native", native)):
            if engine is None:
                continue
            if op == "parse":
                fn = on(engine, lambda: drain(toonstream.parse(toon_text)))
            else:
                fn = on(engine, lambda: drain(toonstream.items(toon_text, "item")))
            ops.append((op, f"toonstream ({engine_name})", fn))
        if native is not None:
            assert on(native, lambda: list(toonstream.parse(toon_text)))() == on(
                python, lambda: list(toonstream.parse(toon_text))
            )(), f"native parse differs on {name}"
        if yajl2_c is not None:
            ops.append(("parse", "ijson yajl2_c (JSON)", lambda: drain(yajl2_c.parse(json_text))))
            ops.append(("items", "ijson yajl2_c (JSON)", lambda: drain(yajl2_c.items(json_text, "item"))))
        wanted = set(args.ops.split(","))
        ops = [o for o in ops if o[0] in wanted]
        timed = {(op, impl): best(fn, args.repeat) for op, impl, fn in ops}
        for op, impl, _ in ops:
            call, t = timed[op, impl]
            base = timed.get((op, "orjson (JSON)"), (0, 0))[1]
            peer = timed.get((op, "toons"), (0, 0))[1]
            ij = timed.get((op, "ijson yajl2_c (JSON)"), (0, 0))[1]
            rows.append(
                {
                    "dataset": f"{name} ({n:,})",
                    "op": op,
                    "impl": impl,
                    "call": round(call, 4),
                    "seconds": round(t, 4),
                    "MB/s": round(len(toon_text if "JSON" not in impl else json_text) / t / 1e6, 1),
                    "x orjson": round(t / base, 2) if base else None,
                    "x toons": round(t / peer, 2) if peer else None,
                    "x ijson": round(t / ij, 2) if ij else None,
                }
            )
        del value, want
    print("| dataset | op | implementation | call s | +gc(0) s | MB/s | × orjson | × toons | × ijson |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['dataset']} | {r['op']} | {r['impl']} | {r['call']:.3f} | {r['seconds']:.3f} | {r['MB/s']} "
            f"| {r['x orjson']} "
            f"| {r['x toons']} | {r['x ijson']} |"
        )
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / ("engines_quick.json" if args.quick else "engines.json")
    meta = {"python": platform.python_version(), "machine": platform.machine(), "date": time.strftime("%Y-%m-%d")}
    out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    print(f"\nwrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()

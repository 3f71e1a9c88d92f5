"""toonstream vs the other TOON codecs and the JSON baselines, side by side.

    pip install -e '.[bench]'
    python benchmarks/run.py            # full sizes (uniform table: 1M rows)
    python benchmarks/run.py --quick    # small sizes, a smoke run (seconds)
    python benchmarks/run.py --datasets uniform --ops loads dumps   # a part (saved as bench_partial.*)

For every dataset (benchmarks/datasets.py) and implementation: time (median of the runs),
MB/s (of the TOON or JSON text), rows/s (top-level records), and the peak memory increase of
the operation (tracemalloc: Python-level allocations only, so it undercounts the Rust/C peers).
Every peer's output is checked: its TOON must decode (toonstream, strict) to the same data, and
its decoded value must equal toonstream's.  Also prints a token-efficiency table.
Writes benchmarks/results/bench[_quick].{json,md} and a PNG chart of MB/s.
"""

from __future__ import annotations

import argparse
import csv
import gc
import importlib
import io
import json
import os
import platform
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import datasets  # noqa: E402

import toonstream  # noqa: E402
from toonstream.stats import measure, value_events  # noqa: E402

SIZES = {"uniform": 1_000_000, "orders": 100_000, "events": 200_000, "config": 5_000}
QUICK = {"uniform": 20_000, "orders": 5_000, "events": 10_000, "config": 500}


def _maybe(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


toons = _maybe("toons")
toon_format = _maybe("toon_format")
etoon = _maybe("etoon")
orjson = _maybe("orjson")
ijson = _maybe("ijson")


def _count_rows(v: Any) -> int:
    return len(v) if isinstance(v, (list, dict)) else 1


def _drain(it: Any) -> int:
    n = 0
    for _ in it:
        n += 1
    return n


def once(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds of one call (after a collection), and its result."""
    gc.collect()
    t = time.perf_counter()
    result = fn()
    return time.perf_counter() - t, result


def traced_peak(fn: Callable[[], Any]) -> int:
    """Peak traced memory of one call."""
    gc.collect()
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def operations(value: Any, toon_text: str, json_text: str) -> list[tuple[str, str, Callable[[], Any], str]]:
    """(implementation, operation, callable, which text's size counts for MB/s)."""
    ops: list[tuple[str, str, Callable[[], Any], str]] = [
        ("toonstream", "dumps", lambda: toonstream.dumps(value), "toon"),
        ("toonstream", "loads", lambda: toonstream.loads(toon_text), "toon"),
        ("toonstream", "parse", lambda: _drain(toonstream.parse(toon_text)), "toon"),
    ]
    if "{" in toon_text.split("\n", 1)[0]:  # a tabular root: rows() applies
        ops.append(("toonstream", "rows", lambda: _drain(toonstream.rows(toon_text)), "toon"))
    if toons is not None:
        ops += [("toons", "dumps", lambda: toons.dumps(value), "toon"), ("toons", "loads", lambda: toons.loads(toon_text), "toon")]
    if etoon is not None:
        ops.append(("etoon", "dumps", lambda: etoon.dumps(value), "toon"))
    if toon_format is not None:
        ops += [
            ("toon-format", "dumps", lambda: toon_format.encode(value), "toon"),
            ("toon-format", "loads", lambda: toon_format.decode(toon_text), "toon"),
        ]
    ops += [
        ("json", "dumps", lambda: json.dumps(value), "json"),
        ("json", "loads", lambda: json.loads(json_text), "json"),
    ]
    if orjson is not None:
        ops += [("orjson", "dumps", lambda: orjson.dumps(value), "json"), ("orjson", "loads", lambda: orjson.loads(json_text), "json")]
    if ijson is not None:
        data = json_text.encode()
        ops.append(("ijson", "parse", lambda: _drain(ijson.parse(data)), "json"))
    return ops


def verify(impl: str, op: str, result: Any, value: Any) -> str:
    """'ok', or why the peer's result is not the same data."""
    from conftest import json_equal

    try:
        if op == "dumps" and impl not in ("json", "orjson"):
            back = toonstream.loads(result)
            return "ok" if json_equal(back, value, ordered=False) else "different data"
        if op == "loads":
            return "ok" if json_equal(result, value, ordered=False) else "different data"
    except toonstream.ToonDecodeError as e:
        return f"not valid TOON: {e}"
    return "ok"


def token_table(name: str, value: Any) -> list[dict[str, Any]]:
    stats = measure(value_events(value))
    rows = [{"dataset": name, "format": f.format, "bytes": f.bytes, "tokens": f.tokens} for f in stats.formats if f.lossless]
    if isinstance(value, list) and value and all(isinstance(r, dict) for r in value):
        flat = all(not isinstance(x, (dict, list)) for r in value for x in r.values())
        if flat:
            buf = io.StringIO()
            keys = list(dict.fromkeys(k for r in value for k in r))
            w = csv.DictWriter(buf, fieldnames=keys)
            w.writeheader()
            w.writerows(value)
            text = buf.getvalue()
            rows.append({"dataset": name, "format": "csv", "bytes": len(text.encode()), "tokens": toonstream.tokens.estimate_tokens(text)})
    yaml = _maybe("yaml")
    if yaml is not None:
        text = yaml.safe_dump(value, allow_unicode=True, sort_keys=False)
        rows.append({"dataset": name, "format": "yaml", "bytes": len(text.encode()), "tokens": toonstream.tokens.estimate_tokens(text)})
    return sorted(rows, key=lambda r: r["tokens"])


def chart(results: list[dict[str, Any]], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    uniform = [r for r in results if r["dataset"] == "uniform" and r["op"] in ("dumps", "loads")]
    labels = [f"{r['impl']}\n{r['op']}" for r in uniform]
    fig, ax = plt.subplots(figsize=(max(6, len(labels) * 0.9), 4))
    ax.bar(labels, [r["mb_per_s"] for r in uniform], color=["#d62728" if r["impl"] == "toonstream" else "#1f77b4" for r in uniform])
    ax.set_ylabel("MB/s (higher is better)")
    ax.set_title("uniform table: dumps / loads throughput")
    plt.xticks(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--datasets", nargs="+", choices=list(datasets.DATASETS), help="only these datasets")
    ap.add_argument("--ops", nargs="+", choices=["dumps", "loads", "parse", "rows"], help="only these operations")
    args = ap.parse_args()
    sizes = QUICK if args.quick else SIZES
    runs = args.runs or (3 if args.quick else 5)
    results: list[dict[str, Any]] = []
    tokens: list[dict[str, Any]] = []
    for name, make in datasets.DATASETS.items():
        if args.datasets and name not in args.datasets:
            continue
        value = make(sizes[name])
        toon_text = toonstream.dumps(value)
        json_text = json.dumps(value)
        sizes_mb = {"toon": len(toon_text.encode()) / 1e6, "json": len(json_text.encode()) / 1e6}
        n_rows = _count_rows(value)
        ops = [o for o in operations(value, toon_text, json_text) if not args.ops or o[1] in args.ops]
        # Rounds alternate the implementations (a, b, c, a, b, c, ...), so a
        # busy moment of a shared machine hits all of them, not one.
        times: list[list[float]] = [[] for _ in ops]
        checks: list[str] = [""] * len(ops)
        for r in range(runs):
            for k, (impl, op, fn, _) in enumerate(ops):
                slow_peer = impl == "toon-format" and name == "uniform" and not args.quick
                if r and slow_peer:
                    continue  # one run is enough to see it is slow
                seconds, result = once(fn)
                times[k].append(seconds)
                if r == 0:
                    checks[k] = verify(impl, op, result, value)
                del result
        for k, (impl, op, fn, basis) in enumerate(ops):
            seconds = statistics.median(times[k])
            results.append({
                "dataset": name, "impl": impl, "op": op, "seconds": seconds, "mb_per_s": sizes_mb[basis] / seconds,
                "rows_per_s": n_rows / seconds, "peak_mb": traced_peak(fn) / 1e6, "check": checks[k],
            })
            print(f"{name:8} {impl:12} {op:6} {seconds:8.3f}s  {checks[k]}", file=sys.stderr)
        # the token table is about shape, not size: a sample is enough (and fast)
        tokens += token_table(name, make(min(sizes[name], 20_000)))
    suffix = "_quick" if args.quick else ""
    if args.datasets or args.ops:  # a partial run does not replace the full tables
        suffix += "_partial"
    lines = [f"{time.strftime('%Y-%m-%d')}, {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores, "
             f"median of {runs} alternating runs; command: `{' '.join(['python benchmarks/run.py', *sys.argv[1:]])}`", ""]
    lines += ["| dataset | impl | op | seconds | MB/s | rows/s | peak MB (traced) | vs toons | check |",
              "|---|---|---|---:|---:|---:|---:|---:|---|"]
    for r in results:
        ref = next((x for x in results if x["dataset"] == r["dataset"] and x["impl"] == "toons" and x["op"] == r["op"]), None)
        ratio = f"{r['seconds'] / ref['seconds']:.2f}x" if ref else ""
        lines.append(f"| {r['dataset']} | {r['impl']} | {r['op']} | {r['seconds']:.3f} | {r['mb_per_s']:.1f} | "
                     f"{r['rows_per_s']:,.0f} | {r['peak_mb']:.1f} | {ratio} | {r['check']} |")
    lines += ["", "Token efficiency (estimated o200k tokens; lossless formats; CSV only for flat tables):", "",
              "| dataset | format | bytes | tokens |", "|---|---|---:|---:|"]
    lines += [f"| {t['dataset']} | {t['format']} | {t['bytes']:,} | {t['tokens']:,} |" for t in tokens]
    table = "\n".join(lines)
    print(table)
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / f"bench{suffix}.md").write_text(table + "\n")
    (out / f"bench{suffix}.json").write_text(json.dumps({"results": results, "tokens": tokens}, indent=1))
    if chart(results, out / f"bench{suffix}.png"):
        print(f"\nchart: {out / f'bench{suffix}.png'}", file=sys.stderr)


if __name__ == "__main__":
    main()

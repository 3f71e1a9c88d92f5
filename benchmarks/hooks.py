"""``loads`` with ``object_hook`` / ``object_pairs_hook`` on each engine, against
``json.loads`` with the same hook on the same data as JSON.

What it measures: best of ``--repeat`` wall times, in one process, on nested
datasets (every object reaches the hook: the identity ``lambda d: d`` for
``object_hook``, ``dict`` for ``object_pairs_hook``).

    python benchmarks/hooks.py            # --quick for a smoke run
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import datasets  # noqa: E402

import toonstream  # noqa: E402
from toonstream import _engine  # noqa: E402


def best(f: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "hooks.json")
    args = ap.parse_args()
    scale = 10 if args.quick else 1
    data = {"orders": datasets.orders(20_000 // scale), "events": datasets.events(40_000 // scale)}

    def identity(d: Any) -> Any:
        return d

    hooks: dict[str, dict[str, Any]] = {"object_hook": {"object_hook": identity}, "object_pairs_hook": {"object_pairs_hook": dict}}
    results: list[dict[str, Any]] = []
    print(f"{'dataset':8} {'hook':18} {'native':>8} {'python':>8} {'json':>8} {'native/json':>11} {'python/native':>13}")
    for name, value in data.items():
        text, as_json = toonstream.dumps(value), json.dumps(value)
        for hook, kw in hooks.items():
            row: dict[str, Any] = {"dataset": f"{name} ({len(value):,})", "hook": hook}
            for engine in ("native", "python"):
                previous = _engine.use(_engine.select(engine))
                try:
                    assert toonstream.loads(text, **kw) == json.loads(as_json, **kw)
                    row[engine] = best(lambda: toonstream.loads(text, **kw), args.repeat)
                finally:
                    _engine.use(previous)
            row["json"] = best(lambda: json.loads(as_json, **kw), args.repeat)
            results.append(row)
            print(
                f"{name:8} {hook:18} {row['native']:8.3f} {row['python']:8.3f} {row['json']:8.3f} "
                f"{row['native'] / row['json']:11.2f} {row['python'] / row['native']:13.1f}",
                flush=True,
            )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()

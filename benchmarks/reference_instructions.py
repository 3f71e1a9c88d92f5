"""Instructions of the reference engine's encoders, old tree against new.

What it measures: one call of ``dumps`` and of ``streaming.encode_records`` on
the python engine (``TOONSTREAM_ENGINE=python``), counted by callgrind, for
each package tree given.  A call's count is (3 calls - 1 call) / 2 of the
whole process, so the interpreter's start, the imports and the data
generation cancel out.  For restructures that must not change speed, on a
machine whose wall times are too noisy to tell (``PYTHONHASHSEED=0``; the
counts still move by a few tenths of a percent between runs).

    python benchmarks/reference_instructions.py --tree /path/to/old/checkout --tree .

Each ``--tree`` is a directory holding the ``toonstream`` package (a git
worktree of an older commit, say).  Needs valgrind.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = """
import io, os, sys
sys.path.insert(0, {bench!r})
import datasets, toonstream
from toonstream import streaming
assert toonstream.engine == "python", toonstream.engine
value = {{"uniform": lambda: datasets.uniform(5000), "orders": lambda: datasets.orders(1000),
          "events": lambda: datasets.events(2000)}}[sys.argv[1]]()
op = sys.argv[2]
for _ in range(int(sys.argv[3])):
    if op == "dumps":
        toonstream.dumps(value)
    else:
        streaming.encode_records(iter(value), io.StringIO())
"""

DATASETS = ("uniform", "orders", "events")
OPS = ("dumps", "encode_records")


def count(tree: Path, dataset: str, op: str, calls: int, script: Path) -> int:
    env = {**os.environ, "TOONSTREAM_ENGINE": "python", "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, str(script), dataset, op, str(calls)],
        env=env, capture_output=True, text=True, check=True,
    )
    m = re.search(r"Collected : (\d+)", out.stderr)
    if m is None:
        raise RuntimeError(f"no callgrind total in: {out.stderr[-500:]}")
    return int(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", action="append", required=True, type=Path, help="a directory holding toonstream/")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "reference_instructions.json")
    args = ap.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "child.py"
        script.write_text(CHILD.format(bench=str(HERE)))
        results: dict[str, dict[str, int]] = {}
        for dataset in DATASETS:
            for op in OPS:
                row = results.setdefault(f"{dataset} {op}", {})
                for tree in args.tree:
                    one = count(tree, dataset, op, 1, script)
                    three = count(tree, dataset, op, 3, script)
                    row[str(tree)] = (three - one) // 2
                cells = "  ".join(f"{v / 1e6:9.2f}M" for v in row.values())
                first = next(iter(row.values()))
                change = "  ".join(f"{(v - first) / first:+.2%}" for v in list(row.values())[1:])
                print(f"{dataset:8} {op:15} {cells}  {change}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()

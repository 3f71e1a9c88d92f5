"""How fast can pure Python decode and encode the uniform table at best?

    python benchmarks/floor.py                  # 1M rows x 8 fields (datasets.uniform)
    python benchmarks/floor.py --rows 200000 --repeat 2

The pure-Python engine's targets were `loads` no slower than toons (Rust) and
`dumps` within 1.5x of it.  This script measures what any pure-Python codec must at least do
for this table, with the cheapest C-level idioms and none of TOON's checks
(no quoting, no §4 number grammar, no shape check, no error locations):

- loads floor: split the rows into cells (one `str.replace` + `str.split`),
  slice the columns, convert them (`map(int)`, `map(float)`, a dict lookup
  for booleans), build the row dicts (a generated dict display mapped over
  the columns, the fastest idiom found);
- dumps floor: take the columns out of the dicts (`map(itemgetter)`), format
  them (`map(int.__repr__)`, `map(float.__repr__)`, a lookup for booleans),
  join cells and rows.

Each step runs in a fresh subprocess (a process full of live objects makes
every allocation slower, so one process for all would inflate the later
steps), best of --repeat.  toons and toonstream run the same way.  Rows
with quoted cells are left out of the floor's input (about 1%), so the
floor is a little lower than the real work.  Writes
benchmarks/results/floor_<rows>.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
WORK = HERE / "work"
RESULTS = HERE / "results"

_PRELUDE = """
import sys, time, pickle
from operator import itemgetter
path, repeat = sys.argv[1], int(sys.argv[2])
text = open(path, encoding="utf-8").read()
header, _, body = text.partition("\\n")
fields = tuple(header[header.index("{") + 1 : header.index("}")].split(","))
plain = "\\n" + "\\n".join(line for line in body.split("\\n") if '"' not in line)
BOOL = {"true": True, "false": False}
TEXT = {True: "true", False: "false"}
width = len(fields)

def cells():
    return plain.replace("\\n  ", ",\\n").split(",")[1:]

def columns(flat):
    cols = [flat[k::width] for k in range(width)]
    cols[0] = [c[1:] for c in cols[0]]  # (the "\\n" before each row's first cell)
    return cols

def convert(cols):
    return [
        list(map(int, cols[0])), cols[1], list(map(float, cols[2])), list(map(BOOL.__getitem__, cols[3])),
        cols[4], cols[5], list(map(int, cols[6])), cols[7],
    ]

# (the fastest idiom found: a dict display with constant keys, one argument
# per column; dict(zip(fields, row)) takes about 1.4x as long)
make = eval("lambda " + ", ".join(f"v{i}" for i in range(width)) + ": {"
            + ", ".join(f"{f!r}: v{i}" for i, f in enumerate(fields)) + "}")

def dicts(values):
    return list(map(make, *values))

def timed(fn):
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
        del out
    print(best)
"""

STEPS: dict[str, str] = {
    "split cells": "timed(cells)",
    "slice columns": "flat = cells(); timed(lambda: columns(flat))",
    "convert columns": "cols = columns(cells()); timed(lambda: convert(cols))",
    "build dicts": "values = convert(columns(cells())); timed(lambda: dicts(values))",
    "take columns": "rows = dicts(convert(columns(cells()))); timed(lambda: [list(map(itemgetter(f), rows)) for f in fields])",
    "format columns": (
        "v = convert(columns(cells()))\n"
        "timed(lambda: [list(map(int.__repr__, v[0])), v[1], list(map(float.__repr__, v[2])),"
        " list(map(TEXT.__getitem__, v[3])), v[4], v[5], list(map(int.__repr__, v[6])), v[7]])"
    ),
    "join cells and rows": "t = columns(cells()); timed(lambda: '\\n  '.join(map(','.join, zip(*t))))",
    "toons.loads": "import toons; timed(lambda: toons.loads(text))",
    "toonstream.loads": "import toonstream; timed(lambda: toonstream.loads(text))",
    "toons.dumps": "import toons; value = toons.loads(text); timed(lambda: toons.dumps(value))",
    "toonstream.dumps": "import toonstream; value = toonstream.loads(text); timed(lambda: toonstream.dumps(value))",
}
LOADS_FLOOR = ["split cells", "slice columns", "convert columns", "build dicts"]
DUMPS_FLOOR = ["take columns", "format columns", "join cells and rows"]


def run_step(code: str, path: Path, repeat: int) -> float:
    out = subprocess.run(
        [sys.executable, "-c", _PRELUDE + code, str(path), str(repeat)], capture_output=True, text=True, check=True
    )
    return float(out.stdout.split()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    path = WORK / f"uniform_{args.rows}.toon"
    if not path.exists():
        import datasets
        import toonstream

        WORK.mkdir(exist_ok=True)
        path.write_text(toonstream.dumps(datasets.uniform(args.rows)), encoding="utf-8")
    times = {name: run_step(code, path, args.repeat) for name, code in STEPS.items()}
    loads_floor = sum(times[s] for s in LOADS_FLOOR)
    dumps_floor = sum(times[s] for s in DUMPS_FLOOR)
    print(f"uniform table, {args.rows:,} rows, best of {args.repeat}, each step in its own process\n")
    print("| step | seconds |")
    print("|---|---:|")
    for name, t in times.items():
        print(f"| {name} | {t:.3f} |")
    print(f"| **loads floor** (sum of: {', '.join(LOADS_FLOOR)}) | **{loads_floor:.3f}** |")
    print(f"| **dumps floor** (sum of: {', '.join(DUMPS_FLOOR)}) | **{dumps_floor:.3f}** |")
    print()
    print(f"loads: floor / toons = {loads_floor / times['toons.loads']:.2f}x, "
          f"toonstream / toons = {times['toonstream.loads'] / times['toons.loads']:.2f}x, "
          f"toonstream / floor = {times['toonstream.loads'] / loads_floor:.2f}x")
    print(f"dumps: floor / toons = {dumps_floor / times['toons.dumps']:.2f}x, "
          f"toonstream / toons = {times['toonstream.dumps'] / times['toons.dumps']:.2f}x, "
          f"toonstream / floor = {times['toonstream.dumps'] / dumps_floor:.2f}x")
    RESULTS.mkdir(exist_ok=True)
    result = {
        "rows": args.rows,
        "repeat": args.repeat,
        "python": platform.python_version(),
        "seconds": times,
        "loads_floor": loads_floor,
        "dumps_floor": dumps_floor,
    }
    (RESULTS / f"floor_{args.rows}.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

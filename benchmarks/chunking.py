"""Streaming Decoder under different chunkings vs whole-input decode (the target: within 10%).

    python benchmarks/chunking.py                 # uniform 200k rows and events 50k
    python benchmarks/chunking.py --repeat 5

For each dataset, the TOON text is decoded to a value (Decoder + ValueBuilder, as ``loads``
does) fed whole (one chunk), in 1 MiB, 64 KiB, 4 KiB, 512-byte and 64-byte chunks; best of --repeat,
same process.  Writes benchmarks/results/chunking.json.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

CHUNKS = [None, 1 << 20, 64 << 10, 4 << 10, 512, 64]


def decode(data: bytes, chunk: int | None) -> Any:
    from toonstream import Decoder
    from toonstream._build import ValueBuilder

    d = Decoder(fields=True)
    b = ValueBuilder()
    if chunk is None:
        b.push(d.feed(data))
    else:
        for i in range(0, len(data), chunk):
            b.push(d.feed(data[i : i + chunk]))
    b.push(d.close())
    return b.value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    import datasets
    import toonstream

    out = []
    print("| dataset | chunk | seconds | vs whole |")
    print("|---|---:|---:|---:|")
    for name, n in (("uniform", 200_000), ("events", 50_000)):
        value = getattr(datasets, name)(n)
        data = toonstream.dumps(value).encode()
        whole = None
        for chunk in CHUNKS:
            best = float("inf")
            for _ in range(args.repeat):
                gc.collect()
                t0 = time.perf_counter()
                got = decode(data, chunk)
                best = min(best, time.perf_counter() - t0)
            assert got == value
            whole = whole or best
            label = "whole" if chunk is None else f"{chunk:,} B"
            print(f"| {name} | {label} | {best:.3f} | {best / whole:.2f}x |")
            out.append({"dataset": name, "chunk": chunk, "seconds": best, "vs_whole": best / whole})
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "chunking.json").write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

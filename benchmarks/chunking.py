"""Streaming decode under different chunkings vs whole-input decode (the target: within 10%).

    python benchmarks/chunking.py                 # uniform 200k rows and events 50k, both engines
    python benchmarks/chunking.py --repeat 5

For each dataset and engine, the TOON text is decoded to a value fed whole (one chunk), in 1 MiB,
64 KiB, 4 KiB, 512-byte and 64-byte chunks; best of --repeat, same process.  The python engine:
its push ``Decoder`` + ``ValueBuilder`` (as ``loads`` does); the native engine: its push
``ValueDecoder`` (what ``load`` of a file uses), fed whole or in chunks.
Writes benchmarks/results/chunking.json.
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


def decode_native(data: bytes, chunk: int | None) -> Any:
    from toonstream import _native  # type: ignore[attr-defined]

    d = _native.ValueDecoder()
    if chunk is None:
        d.feed(data)
    else:
        for i in range(0, len(data), chunk):
            d.feed(data[i : i + chunk])
    return d.close()


def decode(data: bytes, chunk: int | None) -> Any:
    from toonstream import Decoder
    from toonstream._reference.build import ValueBuilder

    d = Decoder(batches=True)
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
    engines: list[tuple[str, Any]] = [("python", decode)]
    try:
        from toonstream import _native  # type: ignore[attr-defined]  # noqa: F401

        engines.append(("native", decode_native))
    except ImportError:
        print("(the native engine is not built: python only)", file=sys.stderr)
    print("| dataset | engine | chunk | seconds | vs whole |")
    print("|---|---|---:|---:|---:|")
    for name, n in (("uniform", 200_000), ("events", 50_000)):
        value = getattr(datasets, name)(n)
        data = toonstream.dumps(value).encode()
        for engine, fn in engines:
            whole = None
            for chunk in CHUNKS:
                best = float("inf")
                for _ in range(args.repeat):
                    gc.collect()
                    t0 = time.perf_counter()
                    got = fn(data, chunk)
                    best = min(best, time.perf_counter() - t0)
                assert got == value
                whole = whole or best
                label = "whole" if chunk is None else f"{chunk:,} B"
                print(f"| {name} | {engine} | {label} | {best:.3f} | {best / whole:.2f}x |")
                out.append({"dataset": name, "engine": engine, "chunk": chunk, "seconds": best, "vs_whole": best / whole})
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "chunking.json").write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

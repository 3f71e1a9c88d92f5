"""The native ``ValueDecoder`` under different chunkings, in instructions (the target: any chunk
size at least 0.9x the speed of whole input, i.e. at most 1.11x its work).

    python benchmarks/chunking_instructions.py          # needs valgrind; native engine built

Wall times on a shared 2-core machine drift by more than the 10% this target allows, so each
(dataset, chunk size) is one child process under ``valgrind --tool=callgrind``, counting only the
instructions inside ``ValueDecoder.feed`` (``--toggle-collect``; PyO3's argument handling included,
the caller's loop and slicing not, since any decoder pays those the same) and the final ``close``.
``PYTHONHASHSEED=0`` keeps the dict work identical across runs. Datasets: ``uniform`` 20k rows and
``events`` 5k (nested). Writes benchmarks/results/chunking_instructions.json.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHUNKS: list[int | None] = [None, 1 << 20, 64 << 10, 4 << 10, 512, 64]
DATASETS = (("uniform", 20_000), ("events", 5_000))

CHILD = """
from pathlib import Path
from toonstream import _native
data = Path({path!r}).read_bytes()
n = {chunk}
chunks = [data] if n is None else [data[i : i + n] for i in range(0, len(data), n)]
d = _native.ValueDecoder()
feed = d.feed
for c in chunks:
    feed(c)
d.close()
"""


def instructions(path: Path, chunk: int | None) -> int:
    """Instructions inside the decoder's methods for one decode of the file at `path`, in a
    child under callgrind (the document is made here: under valgrind that takes minutes)."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp, "child.py")
        script.write_text(CHILD.format(path=str(path), chunk=chunk))
        out = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={tmp}/cg.out",
                "--toggle-collect=*ValueDecoder*feed*",
                "--toggle-collect=*ValueDecoder*close*",
                sys.executable,
                str(script),
            ],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
            check=True,
        )
    m = re.search(r"Collected : (\d+)", out.stderr)
    if m is None:
        raise RuntimeError(f"no callgrind total in:\n{out.stderr[-2000:]}")
    return int(m.group(1))


def main() -> None:
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed: this benchmark counts instructions with callgrind")
    try:
        from toonstream import _native  # type: ignore[attr-defined]  # noqa: F401
    except ImportError:
        sys.exit("the native engine is not built")
    sys.path.insert(0, str(HERE))
    import datasets
    import toonstream

    rows = []
    print("| dataset | chunk | instructions | vs whole |")
    print("|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, n in DATASETS:
            path = Path(tmp, f"{name}.toon")
            path.write_bytes(toonstream.dumps(getattr(datasets, name)(n)).encode())
            whole = None
            for chunk in CHUNKS:
                count = instructions(path, chunk)
                whole = whole or count
                label = "whole" if chunk is None else f"{chunk:,} B"
                print(f"| {name} {n:,} | {label} | {count / 1e6:.1f}M | {count / whole:.3f}x |", flush=True)
                rows.append({"dataset": name, "n": n, "chunk": chunk, "instructions": count,
                             "vs_whole": count / whole})
    out = HERE / "results" / "chunking_instructions.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()

"""Calibrate and check the offline token estimate against a real o200k_base tokenizer.

    pip install -e '.[bench]'          # bpe-openai (ships the o200k vocabulary), numpy
    python benchmarks/token_calibration.py          # table: exact vs estimate, every dataset x format
    python benchmarks/token_calibration.py --fit    # also print least-squares weights for tokens._WEIGHTS

Fit set: the four benchmark datasets at 2,000 records; check set: the same generators at 300
records with another seed, plus data/sample.jsonl (the +-10% promise covers these two sets).
"extra" rows, outside the promise and the worst error: the TOON spec fixtures' inputs (many tiny
objects with one-letter keys), with --spec-dir.  Writes benchmarks/results/token_calibration.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import datasets  # noqa: E402

import toonstream  # noqa: E402
from toonstream.tokens import _WEIGHTS, FEATURES, _exact_pieces, _features, estimate_tokens  # noqa: E402


def exact_counter():  # type: ignore[no-untyped-def]
    import bpe_openai

    enc = bpe_openai.get_encoding("o200k_base")

    def count(text: str) -> int:
        # the tokenizer caps one call: count in pieces cut where o200k cannot merge across
        return sum(len(enc.encode_ordinary(piece)) for piece in _exact_pieces(text))

    return count


def formats(value: object) -> dict[str, str]:
    return {
        "toon": toonstream.dumps(value),
        "toon-tab": toonstream.dumps(value, delimiter="\t"),
        "toon-pipe": toonstream.dumps(value, delimiter="|"),
        "json-compact": json.dumps(value, separators=(",", ":"), ensure_ascii=False),
        "json-pretty": json.dumps(value, indent=2, ensure_ascii=False),
    }


def features(text: str) -> list[int]:
    return _features(text.encode("utf-8"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--fit", action="store_true")
    ap.add_argument("--spec-dir", type=Path, default=HERE.parent.parent / "shared" / "toon-spec",
                    help="the TOON spec checkout (its tests/fixtures inputs are the 'extra' rows, if present)")
    args = ap.parse_args()
    count = exact_counter()
    cases: list[tuple[str, str, str, str]] = []
    for name, make in datasets.DATASETS.items():
        for fmt, text in formats(make(2000)).items():
            cases.append(("fit", name, fmt, text))
        for fmt, text in formats(make(300, seed=99)).items():
            cases.append(("check", name + "-300", fmt, text))
    sample = (HERE.parent / "data" / "sample.jsonl").read_text(encoding="utf-8")
    cases.append(("check", "sample.jsonl", "jsonl", sample))
    cases.append(("check", "sample.jsonl", "toon", toonstream.dumps([json.loads(x) for x in sample.splitlines()])))
    inputs = [
        t["input"]
        for f in sorted((args.spec_dir / "tests" / "fixtures").glob("**/*.json"))
        for t in json.loads(f.read_text(encoding="utf-8")).get("tests", [])
        if isinstance(t.get("input"), (dict, list))
    ]
    if inputs:
        for fmt, text in formats(inputs).items():
            cases.append(("extra", "spec-fixtures", fmt, text))
    rows = []
    for kind, name, fmt, text in cases:
        rows.append({"set": kind, "dataset": name, "format": fmt, "exact": count(text), "estimate": estimate_tokens(text),
                     "features": features(text)})
    if args.fit:
        import numpy as np

        fit = [r for r in rows if r["set"] == "fit"]
        x = np.array([r["features"] for r in fit], dtype=float)
        y = np.array([r["exact"] for r in fit], dtype=float)
        w, *_ = np.linalg.lstsq(x / y[:, None], np.ones(len(y)), rcond=None)
        print("least-squares weights:", tuple(round(float(v), 3) for v in w), " (current:", _WEIGHTS, ")")
        print("features:", ", ".join(FEATURES), "\n")
    print("| set | dataset | format | o200k tokens | estimate | error |")
    print("|---|---|---|---:|---:|---:|")
    worst = 0.0
    for r in rows:
        err = (r["estimate"] - r["exact"]) / r["exact"]
        if r["set"] != "extra":
            worst = max(worst, abs(err))
        r["error"] = err
        print(f"| {r['set']} | {r['dataset']} | {r['format']} | {r['exact']:,} | {r['estimate']:,} | {100 * err:+.1f}% |")
    print(f"\nworst error: {100 * worst:.1f}%")
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "token_calibration.json").write_text(
        json.dumps({"date": time.strftime("%Y-%m-%d"), "weights": _WEIGHTS, "worst_error": worst,
                    "rows": [{k: v for k, v in r.items() if k != "features"} for r in rows]}, indent=1))


if __name__ == "__main__":
    main()

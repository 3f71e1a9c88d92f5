"""toonstream stats, the token estimate and its calibration."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import toonstream
from toonstream.stats import measure, value_events
from toonstream.tokens import _WEIGHTS, TokenCounter, estimate_tokens

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
import datasets  # noqa: E402

UNIFORM = [{"id": i, "name": f"n{i}", "ok": i % 2 == 0} for i in range(5)]
NEAR = [{"id": i, "name": f"user{i}", "city": "Oslo"} for i in range(30)]
del NEAR[7]["city"]


def _costs(stats: object) -> dict[str, tuple[int, int]]:
    return {f.format: (f.bytes, f.tokens) for f in stats.formats}  # type: ignore[attr-defined]


def test_stats_match_the_real_conversions() -> None:
    s = measure(value_events(UNIFORM))
    assert (s.elements, s.tabular_elements, s.tabular_elements_missing_as_null) == (5, 5, 5)
    costs = _costs(s)
    for label, delim in (("toon", ","), ("toon-tab", "\t"), ("toon-pipe", "|")):
        text = toonstream.dumps(UNIFORM, delimiter=delim)
        assert costs[label] == (len(text.encode()), estimate_tokens(text))
    compact = json.dumps(UNIFORM, separators=(",", ":"))
    pretty = json.dumps(UNIFORM, indent=2)
    assert costs["json-compact"] == (len(compact), estimate_tokens(compact))
    assert costs["json-pretty"] == (len(pretty), estimate_tokens(pretty))
    assert "--missing-as-null" not in " ".join(costs)  # the option changes nothing: not listed
    assert s.cheapest().format == "toon"


def test_stats_near_uniform_and_recommendation() -> None:
    s = measure(value_events(NEAR))
    assert (s.elements, s.tabular_elements, s.tabular_elements_missing_as_null) == (30, 0, 30)
    costs = _costs(s)
    lossy = toonstream.dumps(NEAR, missing_as_null=True)
    assert costs["toon --missing-as-null"] == (len(lossy.encode()), estimate_tokens(lossy))
    assert s.cheapest(allow_lossy=True).lossless is False
    assert "missing keys read back as null" in s.recommendation()


def test_token_counter_is_chunking_independent() -> None:
    text = toonstream.dumps(datasets.orders(50)).encode()
    whole = TokenCounter()
    whole.feed(text)
    pieces = TokenCounter()
    for i in range(0, len(text), 97):
        pieces.feed(text[i : i + 97])
    assert pieces.total == whole.total == estimate_tokens(text.decode()) and pieces.bytes == len(text)


def test_estimate_within_ten_percent_of_o200k() -> None:
    bpe = pytest.importorskip("bpe_openai", reason="the exact o200k tokenizer is a test/bench extra")
    enc = bpe.get_encoding("o200k_base")
    for name, make in datasets.DATASETS.items():
        value = make(200, seed=5)
        for text in (
            toonstream.dumps(value),
            toonstream.dumps(value, delimiter="\t"),
            toonstream.dumps(value, delimiter="|"),
            json.dumps(value, separators=(",", ":"), ensure_ascii=False),
            json.dumps(value, indent=2, ensure_ascii=False),
        ):
            exact = len(enc.encode(text))
            assert abs(estimate_tokens(text) - exact) / exact <= 0.10, (name, text[:40])


def test_recorded_calibration_is_current() -> None:
    record = json.loads((REPO / "benchmarks" / "results" / "token_calibration.json").read_text())
    assert tuple(record["weights"]) == _WEIGHTS
    assert record["worst_error"] <= 0.10


def test_stats_cli(tmp_path: Path) -> None:
    src = tmp_path / "near.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in NEAR))
    r = subprocess.run([sys.executable, "-m", "toonstream", "stats", str(src), "--json"], capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["elements"] == 30 and out["tabular_share"] == 0 and out["tabular_share_missing_as_null"] == 1
    assert out["recommendation"]["with_missing_as_null"].endswith("--missing-as-null")
    human = subprocess.run([sys.executable, "-m", "toonstream", "stats", str(src)], capture_output=True, timeout=60)
    assert b"cheapest lossless" in human.stdout
    enc = subprocess.run([sys.executable, "-m", "toonstream", "encode", str(src), "--missing-as-null"], capture_output=True, timeout=60)
    assert enc.stdout.decode() == toonstream.dumps(NEAR, missing_as_null=True)


def test_stats_hand_counted() -> None:
    s = measure(value_events([{"a": 1}, {"a": 2}]))
    costs = {f.format: f.bytes for f in s.formats}
    assert costs["toon"] == 15  # "[2]{a}:\n  1\n  2"
    assert costs["json-compact"] == 17  # '[{"a":1},{"a":2}]'
    assert costs["json-pretty"] == 42  # json.dumps(..., indent=2): 35 characters + 7 newlines
    assert estimate_tokens("[2]{a}:\n  1\n  2") == 11

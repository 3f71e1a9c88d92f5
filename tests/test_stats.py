"""toonstream stats, the token estimate and its calibration."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import toonstream
from toonstream.stats import measure, value_events
from toonstream.tokens import _WEIGHTS, ERROR_BOUND, TokenCounter, estimate_tokens

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


def test_host_values_are_measured_as_dumps_writes_them() -> None:
    """Tuples, sets, datetimes, Decimals, NaN and infinities: the TOON sizes are dumps', the JSON
    sizes those of the same JSON data model (NaN and infinities are null, as dumps writes them)."""
    import datetime
    from decimal import Decimal

    value = {"t": (1, 2), "s": {3, 1}, "d": datetime.date(2024, 1, 2), "n": [float("nan"), float("-inf"), Decimal("NaN")],
             "rows": [{"x": (i,), "y": Decimal("1.50")} for i in range(3)]}
    as_json = {"t": [1, 2], "s": [1, 3], "d": "2024-01-02", "n": [None, None, None],
               "rows": [{"x": [i], "y": 1.5} for i in range(3)]}
    costs = _costs(measure(value_events(value)))
    assert costs["toon"][0] == len(toonstream.dumps(value).encode())
    assert costs["json-compact"][0] == len(json.dumps(as_json, separators=(",", ":")))
    with pytest.raises(toonstream.ToonEncodeError, match="object keys must be strings"):
        measure(value_events({1: 2}))


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


def test_stats_of_a_table_file_is_a_usage_error(tmp_path: Path) -> None:
    # (its bytes were read as JSON: "invalid JSON: invalid literal 'PAR1'", exit 1)
    src = tmp_path / "t.parquet"
    src.write_bytes(b"PAR1")
    r = subprocess.run([sys.executable, "-m", "toonstream", "stats", str(src)], capture_output=True, timeout=60)
    assert r.returncode == 2 and b"stats reads JSON or JSON Lines, not parquet" in r.stderr, r.stderr
    with pytest.raises(TypeError, match="takes a str, not bytes"):
        estimate_tokens(b"users[2]{id,name}:")  # type: ignore[arg-type]


def test_stats_hand_counted() -> None:
    s = measure(value_events([{"a": 1}, {"a": 2}]))
    costs = {f.format: f.bytes for f in s.formats}
    assert costs["toon"] == 15  # "[2]{a}:\n  1\n  2"
    assert costs["json-compact"] == 17  # '[{"a":1},{"a":2}]'
    assert costs["json-pretty"] == 42  # json.dumps(..., indent=2): 35 characters + 7 newlines
    assert estimate_tokens("[2]{a}:\n  1\n  2") == 11


# ---------------------------------------------------------------------- fast path, exact counts, close calls

JSONL_CASES = {
    "near-uniform": "".join(json.dumps(r) + "\n" for r in NEAR),
    "primitives": '1\n2\n"x"\nnull\n',
    "mixed": '{"a":1}\n[1,2]\n3\n',
    "empty": "",
    "blank lines": "\n\n",
    "numbers": '{"a": 1.0e5, "b": 0.10, "c": 123456789012345678901234567890, "d": 1e-7, "e": 0.00001}\n'
    '{"a": 2, "b": 1, "c": 1, "d": 1, "e": 1}\n',
    "unicode": '{"s": "Krak\\u00f3w, \\u2028 x\\ty|z"}\n{"s": "\\u65e5\\u672c"}\n',
    "nested": '{"a": {"b": [1, {"c": []}]}, "d": {}}\n{"a": {"b": []}, "d": {}}\n',
    "no final newline": '{"a": 1}\n{"a": 2}',
    "quoting per delimiter": '{"a": "x,y", "b": "p|q", "c": "t\\tu"}\n{"a": "-1", "b": "true", "c": " "}\n',
    "table that breaks late": "".join(json.dumps({"a": i}) + "\n" for i in range(3000)) + '{"b": 1}\n',
    "nested table that breaks late": "".join(json.dumps({"a": i, "o": {"x": i}}) + "\n" for i in range(3000))
    + '{"a": 1, "o": {"y": 1}}\n',
    "nested table": "".join(json.dumps({"a": i, "o": {"x": i, "y": "s"}}) + "\n" for i in range(3000)),
    "blank lines between": '{"a": 1}\n\n\n{"a": 2}\n' * 700,
}


@pytest.mark.parametrize("name", sorted(JSONL_CASES))
def test_measure_jsonl_is_the_event_path(name: str) -> None:
    # The batched path (one parse, plans per delimiter, C-level JSON dumps)
    # gives exactly the numbers of the per-event path over the same lines.
    from toonstream.stats import jsonl_events, measure_jsonl

    data = JSONL_CASES[name].encode()
    fast = measure_jsonl(io.BytesIO(data)).to_dict()
    assert fast == measure(jsonl_events(io.BytesIO(data))).to_dict()
    with_nulls = toonstream.dumps([json.loads(x) for x in data.splitlines() if x.strip()], missing_as_null=True)
    lossy = {f["format"]: f["bytes"] for f in fast["formats"]}.get("toon --missing-as-null")
    assert lossy in (None, len(with_nulls.encode()))


def test_measure_jsonl_reports_the_bad_line() -> None:
    from toonstream.stats import measure_jsonl

    with pytest.raises(toonstream.ToonEncodeError) as e:
        measure_jsonl(io.BytesIO(b'{"a": 1}\n{"a": 2}\n{"a": \n'))
    assert e.value.line == 3


def test_estimate_is_chunking_independent_across_pieces() -> None:
    # Over 1 MiB the counter counts in pieces cut after a newline: the total
    # is the whole text's, however the bytes are fed.
    text = toonstream.dumps(datasets.uniform(25000)).encode()
    assert len(text) > 2 << 20
    whole = TokenCounter()
    whole.feed(text)
    pieces = TokenCounter()
    for i in range(0, len(text), 65_519):
        pieces.feed(text[i : i + 65_519])
    assert whole.total == pieces.total and pieces.bytes == len(text)


def test_exact_pieces_cut_where_o200k_cannot_merge() -> None:
    bpe = pytest.importorskip("bpe_openai", reason="the exact o200k tokenizer is a test/bench extra")
    from toonstream.tokens import _exact_pieces

    enc = bpe.get_encoding("o200k_base")
    value = datasets.orders(300)
    for text in (toonstream.dumps(value), json.dumps(value, indent=2), json.dumps(value), "a  \n\n  b\n/x " * 3000):
        pieces = list(_exact_pieces(text, 4000))
        assert "".join(pieces) == text and max(map(len, pieces)) <= 4000 and len(pieces) > 1
        whole = len(enc.encode_ordinary(text))
        # cut at a safe newline or before a space: the same count (a hard cut
        # inside a long run without either may differ by a token or two)
        assert sum(len(enc.encode_ordinary(p)) for p in pieces) == whole


def test_exact_count_of_a_multi_megabyte_input() -> None:
    # bpe-openai refuses a text of 1,000,000 characters: the counter gives it
    # bounded pieces, also for one long line (a JSON document on one line).
    pytest.importorskip("bpe_openai", reason="the exact o200k tokenizer is a test/bench extra")
    one_line = json.dumps(datasets.uniform(16000)).encode()
    lines = toonstream.dumps(datasets.uniform(30000)).encode()
    for data in (one_line, lines):
        assert len(data) > 2_900_000
        counter = TokenCounter(exact=True)
        for i in range(0, len(data), 1 << 16):
            counter.feed(data[i : i + (1 << 16)])
        assert counter.method == "o200k_base (exact, bpe-openai)"
        estimate = estimate_tokens(data.decode())
        assert abs(counter.total - estimate) / counter.total <= 0.10


@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_stats_exact_cli_on_a_multi_megabyte_line(tmp_path: Path) -> None:
    pytest.importorskip("bpe_openai", reason="the exact o200k tokenizer is a test/bench extra")
    src = tmp_path / "long.jsonl"
    # two records of 1.5 MB each: every format has lines far over the tokenizer's limit
    src.write_text("".join(json.dumps({"id": i, "text": "lorem ipsum " * 125_000}) + "\n" for i in range(2)))
    r = subprocess.run([sys.executable, "-m", "toonstream", "stats", str(src), "--exact", "--json"],
                       capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["token_method"] == "o200k_base (exact, bpe-openai)" and out["error_bound"] is None
    assert out["recommendation"]["lossless_within_error"] == []


def test_stats_progress_bar(tmp_path: Path) -> None:
    pytest.importorskip("tqdm")
    src = tmp_path / "rows.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in UNIFORM * 200))
    on = subprocess.run([sys.executable, "-m", "toonstream", "stats", str(src), "--progress"], capture_output=True, timeout=60)
    assert on.returncode == 0, on.stderr
    assert b"stats" in on.stderr and b"B" in on.stderr  # tqdm's bar, byte-based, labelled
    off = subprocess.run([sys.executable, "-m", "toonstream", "stats", str(src), "--no-progress"], capture_output=True, timeout=60)
    assert off.returncode == 0 and off.stderr == b"" and off.stdout == on.stdout
    # default: off when stderr is not a terminal
    default = subprocess.run([sys.executable, "-m", "toonstream", "stats", str(src)], capture_output=True, timeout=60)
    assert default.stderr == b""


def test_close_candidates_are_called_a_tie() -> None:
    # toon, toon-tab and toon-pipe of a uniform table are a few percent apart:
    # closer than the estimate's error, so the report does not pretend to know.
    s = measure(value_events(datasets.uniform(300)))
    best = s.cheapest()
    close = s.close_calls()
    assert best.format.startswith("toon") and close
    assert all(f.tokens <= best.tokens * (1 + ERROR_BOUND) for f in s.formats if f.format in close)
    text = s.recommendation()
    assert f"within the estimate's error (\u00b1{round(100 * ERROR_BOUND)}%): use --exact to decide" in text
    assert all(name in text.splitlines()[-1] for name in [best.format, *close])
    d = s.to_dict()
    assert d["recommendation"]["lossless_within_error"] == close and d["error_bound"] == ERROR_BOUND


def test_clear_winner_is_not_a_tie() -> None:
    # near-uniform records: compact JSON beats the list-item TOON by far, so
    # the lossless choice is clear; the lossy candidates are close again.
    s = measure(value_events(NEAR))
    assert s.cheapest().format == "json-compact" and s.close_calls() == []
    lossy = s.close_calls(allow_lossy=True)
    assert lossy and all("--missing-as-null" in name for name in lossy)
    first = s.recommendation().splitlines()
    assert "within" not in first[0] and len(first) == 2 and "--missing-as-null" in first[1]
    assert s.to_dict()["recommendation"]["lossless_within_error"] == []


def test_exact_counts_are_never_a_tie() -> None:
    s = measure(value_events(datasets.uniform(50)))
    s.token_method = "o200k_base (exact, tiktoken)"
    assert s.error_bound is None and s.close_calls() == [] and "within" not in s.recommendation()


def test_a_json_document_is_measured_as_its_json_lines_are() -> None:
    # The JSON formats' numbers as JSON Lines' records hold them (a float where Python
    # writes it back as written: 255.0; else the exact Decimal: 1E2, 0.1000...1, 1e400),
    # from a JSON document too (ijson's Decimals were written in TOON's form: 255.0 as 255).
    import ijson

    from toonstream.stats import measure_jsonl

    records = '{"p":255.0,"q":1E2,"r":0.10000000000000000001,"s":12345678901234567890123,"t":1e400,"u":-0.0}'

    def json_formats(stats: Any) -> dict[str, tuple[int, int]]:
        return {f["format"]: (f["bytes"], f["tokens"]) for f in stats.to_dict()["formats"] if f["format"].startswith("json")}

    doc = measure(ijson.parse(io.BytesIO(f"[{records},{records}]".encode())))
    lines = measure_jsonl(io.BytesIO(f"{records}\n{records}\n".encode()))
    assert json_formats(doc) == json_formats(lines)
    assert json_formats(doc)["json-compact"][0] == len(f"[{records},{records}]".replace("1E2", "100").replace("1e400", "1e+400"))


def test_exact_without_a_tokenizer_says_so(tmp_path: Path) -> None:
    # --exact with no o200k tokenizer loadable: the counts are estimates (the report says
    # "tokens: estimated"), and a warning on stderr says it too; the exit status stays 0.
    import os

    shim = tmp_path / "shim"
    for name in ("bpe_openai", "tiktoken"):
        (shim / name).mkdir(parents=True)
        (shim / name / "__init__.py").write_text("raise ImportError('not here (test)')\n")
    src = tmp_path / "one.jsonl"
    src.write_text('{"a": 1}\n')
    env = dict(os.environ, PYTHONPATH=str(shim))
    for args in (["stats", str(src), "--exact", "--json"], ["encode", str(src), "--stats", "--exact"]):
        r = subprocess.run([sys.executable, "-m", "toonstream", *args], capture_output=True, timeout=60, env=env)
        assert r.returncode == 0, r.stderr
        assert b"warning: --exact: no o200k tokenizer could be loaded" in r.stderr
    assert json.loads(subprocess.run([sys.executable, "-m", "toonstream", "stats", str(src), "--exact", "--json"],
                                     capture_output=True, timeout=60, env=env).stdout)["token_method"] == "estimated"

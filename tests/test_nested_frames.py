"""Arrays of records that are not tabular (list items with nested objects and
arrays) read into Struct and List columns, checked against the library they
imitate: ``pl.read_ndjson`` on the same records written as JSON Lines
(``json.dumps`` per line).  Where the two must differ, the test says why."""

from __future__ import annotations

import datetime as dt
import io
import json
import random
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")
from polars.testing import assert_frame_equal  # noqa: E402

import toonstream  # noqa: E402
import toonstream.arrow as ta  # noqa: E402
import toonstream.polars as tp  # noqa: E402
from toonstream import ToonDecodeError  # noqa: E402
from toonstream import _frames, _nested  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
import datasets  # noqa: E402


def ndjson(records: list[Any], **kw: Any) -> Any:
    """What pl.read_ndjson makes of the records as JSON Lines."""
    data = "\n".join(json.dumps(r) for r in records).encode()
    return pl.read_ndjson(io.BytesIO(data), **kw)


def same_as_ndjson(text: str, **kw: Any) -> Any:
    """read_toon of ``text`` equals pl.read_ndjson of its records (as loads gives them)."""
    records = toonstream.loads(text)
    df = tp.read_toon(text.encode(), **kw)
    assert_frame_equal(df, ndjson(records, **kw))
    return df


def _fields_sorted(dtype: Any) -> Any:
    if isinstance(dtype, pl.Struct):
        return pl.Struct(sorted((pl.Field(f.name, _fields_sorted(f.dtype)) for f in dtype.fields), key=lambda f: f.name))
    if isinstance(dtype, pl.List):
        return pl.List(_fields_sorted(dtype.inner))
    return dtype


def equal_but_inner_field_order(df: Any, expected: Any) -> None:
    """Equal frames, but for the order of struct fields inside arrays'
    items, which pl.read_ndjson varies from run to run (Polars 2.1: the
    same input gives {q, r, t} or {r, t, q}); read_toon's is first seen."""
    assert df.columns == expected.columns
    assert [_fields_sorted(d) for d in df.dtypes] == [_fields_sorted(d) for d in expected.dtypes]
    assert df.to_dicts() == expected.to_dicts()  # (dicts compare regardless of key order)


def test_struct_fields_inside_arrays_in_order_of_first_appearance() -> None:
    records = [{"s": [{"b": 1, "x": {"q": 1}}, {"x": {"r": 1, "t": 2}}]}]
    df = tp.read_toon(toonstream.dumps(records).encode())
    assert df.schema["s"] == pl.List(pl.Struct({"b": pl.Int64, "x": pl.Struct({"q": pl.Int64, "r": pl.Int64, "t": pl.Int64})}))
    equal_but_inner_field_order(df, ndjson(records))


@pytest.fixture(params=[(None, None), (7, 3), (64, 1000)], ids=["whole", "tiny", "small"])
def chunking(request: Any, monkeypatch: Any) -> None:
    """Source chunks and decoder feeds of several sizes (None: the defaults)."""
    chunk, feed = request.param
    if chunk is not None:
        monkeypatch.setattr(_frames, "CHUNK", chunk)
        monkeypatch.setattr(_nested, "_FEED", feed)


# ---------------------------------------------------------------- as read_ndjson


@pytest.mark.parametrize("name", ["orders", "events"])
def test_benchmark_datasets_as_read_ndjson(name: str, chunking: None) -> None:
    records = datasets.DATASETS[name](150)
    text = toonstream.dumps(records)
    assert not text.startswith("[150]{")  # list items, not a table
    df = same_as_ndjson(text, infer_schema_length=None)
    assert df.height == 150
    if name == "orders":
        assert df.schema["items"] == pl.List(pl.Struct({"sku": pl.String, "qty": pl.Int64, "price": pl.Float64}))
        assert df.schema["customer"] == pl.Struct({"name": pl.String, "city": pl.String, "vip": pl.Boolean})


def test_orders_in_batches_and_through_arrow() -> None:
    text = toonstream.dumps({"meta": {"n": 40}, "orders": datasets.orders(40)}).encode()
    expected = ndjson(toonstream.loads(text)["orders"])
    frames = list(tp.iter_frames(text, batch_size=16))
    assert [f.height for f in frames] == [16, 16, 8]
    assert_frame_equal(pl.concat(frames), expected)
    reader = ta.iter_batches(text, batch_size=16)
    assert isinstance(reader, pa.RecordBatchReader)
    batches = list(reader)
    assert [b.num_rows for b in batches] == [16, 16, 8]
    table = pa.Table.from_batches(batches)
    assert table.schema.field("items").type == pa.large_list(
        pa.struct([("sku", pa.large_string()), ("qty", pa.int64()), ("price", pa.float64())])
    )
    assert_frame_equal(pl.from_arrow(table), expected)  # type: ignore[arg-type]
    assert_frame_equal(pl.from_arrow(ta.read_table(text, path="orders")), expected)  # type: ignore[arg-type]
    schema = expected.to_arrow(compat_level=pl.CompatLevel.oldest()).schema
    assert ta.read_table(text, schema=schema).schema == schema


# Cases where Polars' JSON inference has a rule of its own: both must agree.
CASES = {
    "key order": [{"b": 1, "a": 2}, {"c": 3, "a": 1}],
    "more fields first": [{"s": {"b": 1}}, {"s": {"c": 1, "a": 2}}],
    "struct ties keep order": [{"s": {"b": 1, "z": 1}}, {"s": {"c": 1, "a": 2}}],
    "within one array: first seen": [{"s": [{"b": 1}, {"c": 1, "a": 2}, {"d": 1, "e": 1, "f": 1}]}],
    "arrays across records by size": [{"s": [{"b": 1}]}, {"s": [{"c": 1, "a": 2}]}],
    "nested arrays": [{"a": [[1], [2, 3]], "b": [[{"x": 1}], [{"y": "s"}]]}],
    "int and float": [{"a": 1, "l": [1]}, {"a": 1.5, "l": [2.5]}],
    "string takes numbers": [{"a": 1, "b": [1, "x"]}, {"a": "x", "b": []}],
    "string takes booleans": [{"a": True}, {"a": "x"}],
    "string takes objects and arrays as JSON": [{"a": "x", "b": ["s"]}, {"a": {"x": [1, "é"]}, "b": [{"k": None}]}],
    "null struct and null items": [{"a": None, "l": [None, {"x": 1}]}, {"a": {"x": 1}, "l": None}],
    "empty arrays and objects": [{"a": [], "o": {}}, {"a": [], "o": {}}],
    "missing keys": [{"a": 1, "s": {"x": 1}}, {}, {"s": {}}],
    "nulls only": [{"a": None, "l": [None]}, {"a": None, "l": []}],
    "empty and odd names": [{"": 1, "a.b": {"": "x"}, "é": [1]}],
}


@pytest.mark.parametrize("name", list(CASES))
def test_inference_rules_as_read_ndjson(name: str) -> None:
    records = CASES[name]
    same_as_ndjson(toonstream.dumps(records))


def _random_records(rnd: random.Random, n: int) -> list[dict[str, Any]]:
    """Records whose keys each keep one kind of value (with nulls and
    missing keys), nested objects and arrays: the data JSON Lines holds."""
    words = ["x", "a,b", "true", "12", "-3", "", " pad", "é ü", 'q"uote', "a: b", "[1]", "- dash", "#c"]

    def shape(depth: int) -> Any:
        r = rnd.random()
        if depth > 2 or r < 0.45:
            return rnd.choice(["int", "float", "str", "bool", "date"])
        if r < 0.7:
            return {f"k{i}": shape(depth + 1) for i in range(rnd.randint(1, 3))}
        return [shape(depth + 1)]

    def value(s: Any) -> Any:
        if rnd.random() < 0.1:
            return None
        if isinstance(s, dict):
            return {k: value(v) for k, v in s.items() if rnd.random() < 0.9}
        if isinstance(s, list):
            return [value(s[0]) for _ in range(rnd.randint(0, 3))]
        if s == "int":
            return rnd.randint(-(10**12), 10**12)
        if s == "float":
            return rnd.choice([rnd.randint(-5, 5), round(rnd.uniform(-1e6, 1e6), rnd.randint(0, 6)), 0.1, 1e-7])
        if s == "bool":
            return rnd.random() < 0.5
        if s == "date":
            return f"20{rnd.randint(10, 30)}-0{rnd.randint(1, 9)}-1{rnd.randint(0, 9)}"
        return rnd.choice(words)

    shapes = {f"c{i}": shape(0) for i in range(rnd.randint(1, 6))}
    return [{k: value(s) for k, s in shapes.items() if rnd.random() < 0.85} for _ in range(n)]


def _random_case(seed: int) -> None:
    rnd = random.Random(seed)
    records = _random_records(rnd, rnd.randint(1, 60))
    text = toonstream.dumps(records)
    if text.startswith("[") and "]{" in text.split("\n", 1)[0]:
        return  # uniform flat records: a table (tests/test_frames.py)
    records = toonstream.loads(text)
    df = tp.read_toon(text.encode(), infer_schema_length=None)
    equal_but_inner_field_order(df, ndjson(records, infer_schema_length=None))
    # What write_toon makes of the frame reads back equal (values and dtypes).
    assert_frame_equal(tp.read_toon(tp.write_toon(df).encode(), schema=df.schema), df)


@pytest.mark.parametrize("seed", range(25))
def test_random_records_as_read_ndjson(seed: int) -> None:
    _random_case(seed)


@pytest.mark.slow
def test_random_records_as_read_ndjson_sweep() -> None:
    for seed in range(25, 1025):
        _random_case(seed)


# ---------------------------------------------------------------- where read_toon differs, and why


def test_big_integers_are_decimal_not_int128() -> None:
    # read_ndjson makes Int128, which has no Arrow type (iter_batches could
    # not carry it); as in flat tables, integers beyond int64 are
    # Decimal(38, 0), beyond 38 digits String, exact either way.
    records = [{"a": 2**64, "l": [1, 2**70]}, {"a": 1, "l": []}]
    text = toonstream.dumps(records)
    assert ndjson(records).schema["a"] == pl.Int128
    df = tp.read_toon(text.encode())
    assert df.schema == pl.Schema({"a": pl.Decimal(38, 0), "l": pl.List(pl.Decimal(38, 0))})
    assert df.to_dicts() == [{"a": Decimal(2**64), "l": [Decimal(1), Decimal(2**70)]}, {"a": Decimal(1), "l": []}]
    huge = tp.read_toon(toonstream.dumps([{"a": 10**40}, {"a": {}}]).encode(), schema_overrides={"a": pl.String})
    assert huge["a"].to_list() == [str(10**40), "{}"]
    assert ta.read_table(text.encode()).schema.field("a").type == pa.decimal128(38, 0)


def test_booleans_with_numbers_are_strings() -> None:
    # read_ndjson refuses them ("cannot parse 'true' (bool) as Int64"); as in
    # flat tables, a column of mixed kinds is String.
    records = [{"a": True, "s": {"x": 1}}, {"a": 1, "s": {"x": False}}]
    with pytest.raises(pl.exceptions.ComputeError):
        ndjson(records)
    df = tp.read_toon(toonstream.dumps(records).encode())
    assert df.to_dicts() == [{"a": "true", "s": {"x": "1"}}, {"a": "1", "s": {"x": "false"}}]


def test_a_null_column_in_a_partial_window_is_string() -> None:
    # read_ndjson makes it Null and then fails (or panics) on a later value;
    # as in flat tables, a column with only nulls in a window that is not
    # the whole input is String, which takes what comes later.
    records = [{"a": None, "s": {"x": None}}] * 3 + [{"a": "x", "s": {"x": 1.5}}]
    text = toonstream.dumps(records).encode()
    df = tp.read_toon(text, infer_schema_length=3)
    assert df.schema == pl.Schema({"a": pl.String, "s": pl.Struct({"x": pl.String})})
    assert df["s"].to_list()[-1] == {"x": "1.5"}
    whole = tp.read_toon(toonstream.dumps(records[:3]).encode())  # the window is the whole input
    assert whole.schema == pl.Schema({"a": pl.Null, "s": pl.Struct({"x": pl.Null})})


def test_a_key_after_the_window_is_an_error_not_dropped() -> None:
    # read_ndjson drops keys its window did not see, silently.
    records = [{"a": 1, "s": {"x": 1}}] * 3 + [{"a": 2, "s": {"x": 2, "y": 3}}]
    assert ndjson(records, infer_schema_length=3)["s"].to_list()[-1] == {"x": 2}
    text = toonstream.dumps(records)
    with pytest.raises(ToonDecodeError) as e:
        tp.read_toon(text.encode(), infer_schema_length=3)
    assert e.value.code == "unexpected_fields"
    assert "'s' has key 'y'" in e.value.msg and "infer_schema_length" in e.value.msg
    lines = text.split("\n")
    assert (e.value.line, e.value.line_text, e.value.column) == (lines.index("      y: 3") + 1, "      y: 3", 7)
    top = [{"a": 1, "o": [{"x": 1}]}] * 2 + [{"a": 1, "b": 2, "o": []}]
    with pytest.raises(ToonDecodeError, match="record 2 has key 'b'") as e:
        tp.read_toon(toonstream.dumps(top).encode(), infer_schema_length=2)
    assert e.value.line == 9 and e.value.line_text == "    b: 2"
    assert_frame_equal(tp.read_toon(text.encode()), ndjson(records))  # the whole window: no error


def test_numbers_in_string_columns_are_canonical_text() -> None:
    # As in flat tables (polars writes a number's JSON text, e.g. 1e+300).
    df = tp.read_toon(toonstream.dumps([{"a": "x"}, {"a": 1e300}, {"a": [1e300]}]).encode())
    assert df["a"].to_list() == ["x", _frames.text_of(1e300), "[1e+300]"]


def test_string_columns_keep_numbers_exact(engine: str) -> None:
    # A number in a String leaf, or inside an object or array written there as JSON text, keeps
    # the digits written (as decode_to_json writes them), also beyond float range and beside a
    # Decimal column with a scale (which once made the JSON writer raise TypeError on Decimals).
    text = (
        "x[3]:\n  - a:\n      b: 123456789012345678.99\n      c: 1e400\n    d: 1.25\n"
        "  - a: s\n    d: 2\n  - a: 1.00000000000000000000001\n    d: -0.0\n"
    ).encode()
    want = ['{"b": 123456789012345678.99, "c": 1e+400}', "s", "1.00000000000000000000001"]
    df = tp.read_toon(text)
    assert df["a"].to_list() == want and df["d"].to_list() == [1.25, 2.0, 0.0]
    df = tp.read_toon(text, schema_overrides={"d": pl.Decimal(10, 2)})
    assert df["a"].to_list() == want and df["d"].to_list() == [Decimal("1.25"), Decimal("2"), Decimal("0")]


# ---------------------------------------------------------------- round trips


def test_write_toon_reads_back_equal() -> None:
    df = pl.DataFrame(
        {
            "id": [1, 2, 3],
            "customer": [{"name": "Ada", "tags": ["x", "y"]}, None, {"name": "Bob, Jr.", "tags": []}],
            "items": [[{"sku": "A", "qty": 2, "price": 1.5}], [], None],
            "grid": [[[1, 2], [3]], [], [[]]],
        }
    )
    text = tp.write_toon(df)
    assert not text.startswith("[3]{")
    assert_frame_equal(tp.read_toon(text.encode()), df)
    assert_frame_equal(tp.read_toon(text.encode(), schema=df.schema), df)
    assert_frame_equal(tp.scan_toon(text.encode()).collect(), df)


def test_dates_round_trip_as_dates() -> None:
    # As in flat tables: Date/Datetime are written as ISO text and read back
    # as such with try_parse_dates (or a schema naming them), at any depth.
    df = pl.DataFrame(
        {
            "d": [dt.date(2024, 1, 2), None],
            "s": [{"t": dt.datetime(2024, 1, 2, 3, 4, 5), "n": 1}, {"t": None, "n": 2}],
            "l": [[dt.date(2020, 1, 1), dt.date(2021, 2, 3)], []],
            "z": [[{"at": dt.datetime(2024, 5, 6, 7, 8, tzinfo=dt.timezone.utc)}], []],
        },
        schema_overrides={"z": pl.List(pl.Struct({"at": pl.Datetime("us", "UTC")}))},
    )
    text = tp.write_toon(df).encode()
    assert_frame_equal(tp.read_toon(text, try_parse_dates=True), df)
    assert_frame_equal(tp.read_toon(text, schema=df.schema), df)
    assert tp.read_toon(text).schema["l"] == pl.List(pl.String)  # without: ISO strings, as read_ndjson
    # A later value that is not an ISO date: an error, not a null.
    bad = tp.write_toon(pl.DataFrame({"l": [["2020-01-01"], ["2020-01-02"], ["soon"]], "o": [{}, {}, {}]}))
    with pytest.raises(ToonDecodeError, match="'l\\[\\]' holds 'soon'") as e:
        tp.read_toon(bad.encode(), try_parse_dates=True, infer_schema_length=2)
    assert e.value.code == "type_mismatch"


# ---------------------------------------------------------------- options


def test_columns_rows_index_and_file_paths(tmp_path: Path) -> None:
    records = datasets.orders(10)
    text = toonstream.dumps(records)
    path = tmp_path / "o.toon"
    path.write_text(text)
    expected = ndjson(records, n_rows=4, row_index_name="i", row_index_offset=3)
    df = tp.read_toon(path, n_rows=4, row_index_name="i", row_index_offset=3, include_file_paths="f")
    assert_frame_equal(df.drop("f"), expected)
    assert df["f"].to_list() == [str(path)] * 4
    assert tp.read_toon(path, columns=["items", "order_id"]).columns == ["items", "order_id"]
    assert_frame_equal(tp.read_toon(path, columns=[2, 0]), ndjson(records).select("customer", "order_id"))
    with pytest.raises(pl.exceptions.ColumnNotFoundError):
        tp.read_toon(path, columns=["nope"])
    two = tp.read_toon([path, text.encode()], row_index_name="i")
    assert two["i"].to_list() == list(range(20)) and two.height == 20


def test_schema_and_overrides() -> None:
    records = [{"a": 1, "s": {"x": 1, "y": "2024-01-02"}, "l": [1, 2]}, {"a": 2, "s": None, "l": []}]
    text = toonstream.dumps(records).encode()
    schema = {"a": pl.Int8, "s": pl.Struct({"x": pl.Float32, "y": pl.Date}), "l": pl.List(pl.UInt16)}
    df = tp.read_toon(text, schema=schema)
    assert df.schema == pl.Schema(schema)
    assert df.to_dicts()[0] == {"a": 1, "s": {"x": 1.0, "y": dt.date(2024, 1, 2)}, "l": [1, 2]}
    over = tp.read_toon(text, schema_overrides={"s.y": pl.Date, "l": pl.List(pl.Float64), "nope": pl.Int8})
    assert over.schema == pl.Schema(
        {"a": pl.Int64, "s": pl.Struct({"x": pl.Int64, "y": pl.Date}), "l": pl.List(pl.Float64)}
    )
    assert tp.read_toon(text, schema_overrides={"s": pl.Struct({"x": pl.Int16})}).schema["s"] == pl.Struct(
        {"x": pl.Int16, "y": pl.String}
    )
    with pytest.raises(ToonDecodeError, match="does not convert to Int8") as e:
        tp.read_toon(toonstream.dumps([{"a": 300, "o": {}}]).encode(), schema_overrides={"a": pl.Int8})
    assert e.value.code == "type_mismatch"
    with pytest.raises(ToonDecodeError, match="'s' has key 'y'"):
        tp.read_toon(text, schema={"a": pl.Int64, "s": pl.Struct({"x": pl.Int64}), "l": pl.List(pl.Int64)})
    assert tp.read_toon(text, infer_schema_length=0).schema == pl.Schema({"a": pl.String, "s": pl.String, "l": pl.String})
    assert tp.read_toon(text, infer_schema_length=0)["s"].to_list() == ['{"x": 1, "y": "2024-01-02"}', None]


def test_scan_toon_over_records() -> None:
    records = datasets.orders(30)
    text = toonstream.dumps(records).encode()
    expected = ndjson(records)
    lf = tp.scan_toon(text)
    assert lf.collect_schema() == expected.schema
    assert_frame_equal(
        lf.filter(pl.col("total") > 100).select("order_id", "items").collect(),
        expected.filter(pl.col("total") > 100).select("order_id", "items"),
    )
    assert_frame_equal(lf.head(3).collect(), expected.head(3))


class _Pipe(io.RawIOBase):
    """A file that cannot seek (stdin from a pipe), counting what was read."""

    def __init__(self, data: bytes) -> None:
        self.data = io.BytesIO(data)
        self.taken = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        n = self.data.readinto(b)
        self.taken += n
        return n


def test_file_objects_pipes_and_bounded_reads(monkeypatch: Any) -> None:
    records = datasets.events(400)
    text = toonstream.dumps(records).encode()
    expected = ndjson(records)
    assert_frame_equal(tp.read_toon(io.BytesIO(text)), expected)
    assert_frame_equal(tp.read_toon(io.StringIO(text.decode())), expected)
    assert_frame_equal(tp.read_toon(_Pipe(text)), expected)
    # Streaming: the first frame comes before the input is read to its end.
    monkeypatch.setattr(_frames, "CHUNK", 4096)
    pipe = _Pipe(text)
    frames = tp.iter_frames(pipe, batch_size=20, infer_schema_length=20)
    first = next(frames)
    assert first.height == 20 and pipe.taken < len(text) // 4
    assert_frame_equal(pl.concat([first, *frames]), expected)
    # A pipe's bytes are kept up to a bound for the second read.
    monkeypatch.setattr(_nested, "KEEP", 100)
    with pytest.raises(ToonDecodeError, match="cannot be read twice") as e:
        tp.read_toon(_Pipe(text))
    assert e.value.code == "not_tabular"
    assert_frame_equal(tp.read_toon(io.BytesIO(text)), expected)
    monkeypatch.setattr(_nested, "KEEP", 64 << 20)
    # n_rows stops the read.
    pipe = _Pipe(text)
    assert_frame_equal(tp.read_toon(pipe, n_rows=5), expected.head(5))
    assert pipe.taken < len(text) // 4


def test_the_root_object_s_first_array_of_records() -> None:
    doc = {"name": "x", "tags": ["a", "b"], "empty": [], "rows": [{"a": 1, "s": {"b": [1]}}], "more": [{"z": 1, "y": [2]}]}
    text = toonstream.dumps(doc).encode()
    assert tp.read_toon(text).columns == ["a", "s"]
    assert tp.read_toon(text, path="more").columns == ["z", "y"]
    # The first array of records, tabular or not.
    assert tp.read_toon(toonstream.dumps({**doc, "t": [{"k": 1}, {"k": 2}]}).encode()).columns == ["a", "s"]
    assert tp.read_toon(toonstream.dumps({"t": [{"k": 1}, {"k": 2}], **doc}).encode()).columns == ["k"]
    with pytest.raises(ToonDecodeError, match="no tabular array, keyed table or array of records at path 'nope'"):
        tp.read_toon(text, path="nope")
    # Arrays at a prefix that matches several places are read one after the other.
    groups = {"g": [{"m": [{"a": 1, "b": [1]}]}, {"m": [{"a": 2, "b": []}, {"a": 3, "b": None}]}]}
    assert tp.read_toon(toonstream.dumps(groups).encode(), path="g.item.m")["a"].to_list() == [1, 2, 3]


def test_empty_arrays() -> None:
    assert tp.read_toon(b"[0]:\n").shape == (0, 0)
    assert tp.read_toon(b"rows[0]:\n", path="rows").shape == (0, 0)
    df = tp.read_toon(b"[0]:\n", schema={"a": pl.Int64, "s": pl.Struct({"x": pl.String})})
    assert df.schema == pl.Schema({"a": pl.Int64, "s": pl.Struct({"x": pl.String})}) and df.height == 0


# ---------------------------------------------------------------- errors


def test_a_value_that_does_not_fit_is_located() -> None:
    records = [{"a": 1, "o": {"l": [1, 2]}}] * 3 + [{"a": 2, "o": {"l": [3, 4.5]}}]
    text = toonstream.dumps(records)
    with pytest.raises(ToonDecodeError) as e:
        tp.read_toon(text.encode(), infer_schema_length=3)
    err = e.value
    assert err.code == "type_mismatch" and isinstance(err, ValueError)
    assert "record 3" in err.msg and "'o.l[]' holds a number with a fraction or an exponent" in err.msg and "Int64" in err.msg
    assert err.line == text.split("\n").index("      l[2]: 3,4.5") + 1 and err.line_text == "      l[2]: 3,4.5"
    # A pipe cannot be read again to find the line: where the read stands.
    with pytest.raises(ToonDecodeError, match="record 3") as e2:
        tp.read_toon(_Pipe(text.encode()), infer_schema_length=3)
    assert e2.value.line >= 1
    # read_ndjson fails too (without a place).
    with pytest.raises(pl.exceptions.ComputeError):
        ndjson(records, infer_schema_length=3)


def test_values_no_dtype_takes() -> None:
    records = [{"a": {"x": 1}}, {"a": 1}]
    with pytest.raises(pl.exceptions.SchemaError):
        ndjson(records)
    with pytest.raises(ToonDecodeError, match="'a' holds an integer and an object") as e:
        tp.read_toon(toonstream.dumps(records).encode())
    assert e.value.code == "type_mismatch" and e.value.line == 4 and e.value.line_text == "  - a: 1"
    with pytest.raises(ToonDecodeError, match="an object and an array"):
        tp.read_toon(toonstream.dumps([{"a": {"x": 1}}, {"a": [1]}]).encode())


@pytest.mark.parametrize(
    "text, message",
    [
        (b"[2]:\n  - a: 1\n    b[1]: 2\n  - 5\n", "item 1 of the array at prefix '' is a number, not a record"),
        (b"[2]: 1,2\n", "item 0 of the array at prefix '' is a number"),
        (b"a: 1\nb: 2\n", "no tabular array"),
        (b"a[2]: 1,2\n", "no tabular array"),
    ],
)
def test_arrays_that_are_not_records(text: bytes, message: str) -> None:
    with pytest.raises(ToonDecodeError, match=message) as e:
        tp.read_toon(text)
    assert e.value.code == "not_tabular"
    with pytest.raises(ToonDecodeError, match=message):
        ta.read_table(text)


def test_not_an_array_at_the_path() -> None:
    text = toonstream.dumps({"o": {"a": [{"x": [1]}]}}).encode()
    with pytest.raises(ToonDecodeError, match="'o' is not a tabular array, keyed table or array of records") as e:
        tp.read_toon(text, path="o")
    assert e.value.code == "not_tabular"
    assert tp.read_toon(text, path="o.a").columns == ["x"]


def test_decode_errors_and_limits(monkeypatch: Any) -> None:
    bad = b"[2]:\n  - a: 1\n    b[1]: 2\n  - a: 2\n    b[1]: 2,3\n"
    with pytest.raises(ToonDecodeError) as e:
        tp.read_toon(bad)
    assert e.value.line == 5 and e.value.code == "count_mismatch"
    monkeypatch.setattr(_frames, "FEED", 16)  # (the table reader gives up before the error)
    frames = tp.iter_frames(bad, batch_size=1)
    assert next(frames).to_dicts() == [{"a": 1, "b": [2]}]  # the records before the error first
    with pytest.raises(ToonDecodeError):
        next(frames)
    deep: Any = 1
    for _ in range(_nested.MAX_NESTING + 5):
        deep = {"k": deep}
    with pytest.raises(ToonDecodeError) as e:
        tp.read_toon(toonstream.dumps([{"a": deep}, {"b": [1]}]).encode())
    assert e.value.code == "max_depth"
    # Deep values in a String column: their JSON text, or an error where json cannot write them.
    df = tp.read_toon(toonstream.dumps([{"a": "x"}, {"a": deep}]).encode(), infer_schema_length=1)
    assert df["a"][1] == json.dumps(deep, ensure_ascii=False)


def test_both_engines_agree(engine: str) -> None:
    records = datasets.orders(20)
    same_as_ndjson(toonstream.dumps(records))


@pytest.mark.slow  # (subprocesses: CI runs it)
def test_cli_decode_records_to_parquet_and_arrow(tmp_path: Path) -> None:
    import subprocess

    import pyarrow.parquet as pq

    records = datasets.orders(30)
    text = toonstream.dumps({"orders": records}).encode()
    expected = ndjson(records)

    def cli(*args: str) -> Any:
        return subprocess.run([sys.executable, "-m", "toonstream", *args], input=text, capture_output=True, timeout=120)

    p = cli("decode", "--to", "parquet", "-o", str(tmp_path / "o.parquet"))  # (stdin: a pipe, read twice)
    assert p.returncode == 0, p.stderr
    assert_frame_equal(pl.read_parquet(tmp_path / "o.parquet"), expected)
    assert pq.read_schema(tmp_path / "o.parquet").field("items").type.value_type.num_fields == 3
    p = cli("decode", "--to", "arrow", "-o", str(tmp_path / "o.arrow"))
    assert p.returncode == 0, p.stderr
    assert_frame_equal(pl.read_ipc(tmp_path / "o.arrow"), expected)
    p = cli("decode", "--to", "csv")  # CSV has no arrays: a usage error, not a traceback
    assert p.returncode == 2 and b"'items' holds arrays" in p.stderr and b"Traceback" not in p.stderr


# ---------------------------------------------------------------- the DataFrame namespace (df.toon)


def test_frame_namespace_writes_as_write_toon(tmp_path: Path) -> None:
    df = pl.DataFrame({"id": [1, 2], "o": [{"tags": ["x"]}, {"tags": []}], "d": [dt.date(2024, 1, 2), None]})
    assert df.toon.write() == tp.write_toon(df)
    assert df.toon.write(delimiter="|", indent_size=4) == tp.write_toon(df, delimiter="|", indent_size=4)
    assert df.lazy().toon.write(batch_size=1) == tp.write_toon(df)
    df.toon.write(tmp_path / "a.toon")
    buf = io.StringIO()
    assert df.toon.write(buf) is None
    assert (tmp_path / "a.toon").read_text() == buf.getvalue() == tp.write_toon(df)
    assert_frame_equal(tp.read_toon(tmp_path / "a.toon", try_parse_dates=True), df)
    keyed = pl.DataFrame({"k": ["a", "b"], "v": [1, 2]})
    assert keyed.toon.write(key="k") == tp.write_toon(keyed, key="k")
    with pytest.raises(TypeError, match=r"^toon\.write\(\) got an unexpected keyword argument 'nope'"):
        df.toon.write(nope=1)


@pytest.mark.slow  # (a subprocess: CI runs it)
def test_frame_namespace_comes_with_toonstream_polars_only() -> None:
    import subprocess

    code = (
        "import polars as pl, toonstream, toonstream.arrow\n"
        "df = pl.DataFrame({'a': [1]})\n"
        "assert not hasattr(df, 'toon') and not hasattr(df.lazy(), 'toon')\n"
        "import toonstream.polars\n"
        "print(df.toon.write(), df.lazy().toon.write() == df.toon.write())\n"
    )
    p = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.decode() == "[1]{a}:\n  1 True\n"


def test_array_columns_read_back_with_their_schema() -> None:
    """A pl.Array column written by write_toon reads back with schema=df.schema (it was
    "casting from Utf8View to FixedSizeList not supported"); an array of another width is a
    type_mismatch at its line."""
    df = pl.DataFrame({
        "a": pl.Series([[1, 2], [3, 4], None], dtype=pl.Array(pl.Int32, 2)),
        "b": pl.Series([[[1, 2], [3, 4]], [[5, 6], [7, 8]], None], dtype=pl.Array(pl.Int64, (2, 2))),
    })
    assert_frame_equal(tp.read_toon(tp.write_toon(df).encode(), schema=df.schema), df)
    with pytest.raises(ToonDecodeError) as e:
        tp.read_toon(b"[2]:\n  - a[2]: 1,2\n  - a[3]: 3,4,5\n", schema_overrides={"a": pl.Array(pl.Int64, 2)})
    assert e.value.code == "type_mismatch" and e.value.line == 3 and "array of 3 items" in str(e.value)


def test_records_with_no_keys_keep_their_rows(engine: str) -> None:
    """A frame of no columns (write_toon writes its rows as empty list items) reads back with its
    height, as read_ndjson reads lines of {} (it read back with none)."""
    frame = pl.DataFrame(height=3)
    text = tp.write_toon(frame).encode()
    assert text == b"[3]:\n  -\n  -\n  -"
    assert tp.read_toon(text).shape == (3, 0)
    assert tp.read_toon(text, batch_size=2, n_rows=2).shape == (2, 0)
    assert tp.scan_toon(text).collect().shape == (3, 0)
    assert tp.scan_toon(text, row_index_name="i").collect()["i"].to_list() == [0, 1, 2]
    assert tp.scan_toon(text).select(pl.len()).collect().item() == 3
    assert ta.read_table(text).num_rows == 3


def test_tables_and_arrays_of_records_at_one_path(engine: str) -> None:
    """dumps writes each array of uniform records as a table and the others as list items: several
    of them at one path are one frame, in either order (the second kind was refused)."""
    groups = [[{"a": 1, "b": 2}, {"a": 3, "b": 4}], [{"a": 5}, {"a": 6, "b": 7}], [], [{"a": 8, "b": 9}]]
    want = [{"a": r["a"], "b": r.get("b")} for g in groups for r in g]
    for order in (groups, groups[1:] + groups[:1]):
        doc = toonstream.dumps({"g": [{"m": g} for g in order]}).encode()
        assert b"m[2]{a,b}:" in doc and b"m[2]:" in doc
        rows = [{"a": r["a"], "b": r.get("b")} for g in order for r in g]
        assert tp.read_toon(doc, path="g.item.m").to_dicts() == rows
        assert tp.read_toon(io.BytesIO(doc), path="g.item.m", batch_size=1).to_dicts() == rows
        assert tp.scan_toon(doc, path="g.item.m").select("b").collect()["b"].to_list() == [r["b"] for r in rows]
        assert sorted(rows, key=lambda r: r["a"]) == want
    with pytest.raises(ToonDecodeError, match="not a tabular array, keyed table or array of records") as e:
        tp.read_toon(b"g[2]:\n  - m[1]{a}:\n      1\n  - m: 5\n", path="g.item.m")
    assert e.value.line == 4


def test_a_list_form_array_after_a_batch_of_table_rows_says_why(engine: str) -> None:
    doc = toonstream.dumps({"g": [{"m": [{"a": i, "b": 2} for i in range(3000)]}, {"m": [{"a": 5}, {"a": 6, "b": 7}]}]})
    with pytest.raises(ToonDecodeError, match="after tables at this path whose rows were already given") as e:
        tp.read_toon(doc.encode(), path="g.item.m", batch_size=1000)
    assert (e.value.line, e.value.line_text) == (3003, "  - m[2]:")


def _frames_and_error(text: bytes, source: Any, **kw: Any) -> tuple[list[Any], Any]:
    frames: list[Any] = []
    try:
        for b in ta.iter_batches(source, **kw):
            frames.append(b.to_pylist())
    except ToonDecodeError as e:
        return frames, (e.code, e.line, e.column, e.line_text)
    return frames, None


@pytest.mark.parametrize(
    "text",
    [
        "x[4]:\n  - a: 1\n    b[2]: 1,2\n  - a: 2.5\n  - 5\n  - a: 3\n",  # an item that is no record
        "x[3]:\n  - a: 1\n    b: {}\n  - [2]: 1,2\n  - a: 2\n",  # (an array item)
        "x[4]:\n  - a: 1\n    o:\n      p: 1\n  - a: 2\n  - a: 3\n   - a: 4\n",  # a bad indentation
        "x[3]:\n  - a: 1\n    o: x\n  - a: 2\n",  # a count mismatch
        "x[0]:\ny: 1\n",  # an empty array
        "x: 5\n",  # no array at the path
        "y[2]:\n  - a: 1\n    o:\n      p: 1\n  - a: 2\n",  # nothing at the path
        "[2]:\n  - a: 1.50\n    s: 123456789012345678.99\n  - a: 2\n    s: x\n",  # the root
        # an item that is no record, ended by a count mismatch (the fuzzer's: the reference
        # names the item, the engine's decoder met the mismatch first)
        "x[2]:\n  - a: 1\n  - [3]:\n    - 1\n",
        "a[1]:\n  - [1444444444441]:\n44?(\x00    1",
        # values at the records' prefix that are objects' members (the engine's items decoder
        # matched them by their prefix: a member named item, a key with dots)
        "x:\n  item:\n    a: 1\n    b:\n      c: 2\n",
        "x.item:\n  a: 1\n",
        "x.item: 5\n",
        "x[1]:\n  - a: 1\n    b:\n      c: 2\nx.item:\n  a: 5\n",
        "x[300]:\n" + "".join(f"  - a: {i}\n    b:\n      c: {i}\n" for i in range(300)) + 'x.item:\n  a: 5\n"x.item"[1]: 7\n',
        "x[300]:\n" + "".join(f"  - a: {i}\n    b:\n      c: {i}\n" for i in range(300)) + "y:\n  x.item: 1\n",
    ],
)
def test_records_read_by_each_engine_agree(text: str, tmp_path: Path) -> None:
    """The native engine builds the records of an array of records with its items decoder; the
    reference's decoder reads them on the python engine, from a pipe (which cannot be read
    again to name a bad item's line), and names what the engine's way meets: the frames given
    before an error and the error itself are the same, from bytes, a path and a pipe."""
    from toonstream import _engine

    path = tmp_path / "t.toon"
    path.write_bytes(text.encode())
    kw = {"path": "x"} if text.startswith(("x", "y")) else {}
    got = []
    for name in ("python", "native"):
        previous = _engine.use(_engine.select(name))
        try:
            for source in (text.encode(), str(path)):
                got.append(_frames_and_error(text.encode(), source, batch_size=1, **kw))
            with open(path, "rb") as f:
                pipe = io.BufferedReader(io.BytesIO(f.read()))
                pipe.seekable = lambda: False  # type: ignore[method-assign]
                got.append(_frames_and_error(text.encode(), pipe, batch_size=1, **kw))
        finally:
            _engine.use(previous)
    assert all(g == got[0] for g in got), got


@pytest.mark.parametrize(
    ("text", "kw", "where"),
    [
        ("[3]:\n  - a: 1\n  - 5\n  - a: 2\n", {}, (3, 3, "  - 5")),
        ("[2]:\n  - a: 1\n  - [2]: 1,2\n", {}, (3, 3, "  - [2]: 1,2")),
        ("x: 1\na: 5\n", {"path": "a"}, (2, 1, "a: 5")),
    ],
)
def test_an_item_that_is_no_record_is_named_with_its_line(engine: str, text: str, kw: Any, where: Any) -> None:
    with pytest.raises(ToonDecodeError) as e:
        tp.read_toon(text.encode(), **kw)
    assert e.value.code == "not_tabular" and (e.value.line, e.value.column, e.value.line_text) == where


@pytest.mark.parametrize(
    ("text", "kw"),
    [
        # a value that does not fit the type of the first record's: its record's line, from a
        # pipe as from a file (a pipe's bytes are kept for it)
        ("data[3]:\n  - a: 1\n    b:\n      c: 2\n  - a: 2\n    b:\n      c: hello\n  - a: 3\n", {"infer_schema_length": 1}),
        ("data[3]:\n  - a: 1\n  - a: 2\n    z: 1\n  - a: 3\n", {"infer_schema_length": 1}),
        # n_rows=0: the first record's columns, and an error in it, as a table's header
        ("d[1]:\n  - a:\n      b: 1\n     c: 2\n", {"n_rows": 0}),
        ("d[2]:\n  - a: 1\n    b:\n      c: 2\n  - a: x\n", {"n_rows": 0}),
    ],
)
def test_record_errors_and_limits_from_a_pipe_agree(text: str, kw: Any) -> None:
    from toonstream import _engine

    got = []
    for name in ("python", "native"):
        previous = _engine.use(_engine.select(name))
        try:
            for pipe in (False, True):
                src: Any = io.BufferedReader(io.BytesIO(text.encode()))
                if pipe:
                    src.seekable = lambda: False
                try:
                    df = tp.read_toon(src, **kw)
                    got.append((df.columns, df.rows()))
                except ToonDecodeError as e:
                    got.append((e.code, e.line, e.column, e.line_text))
        finally:
            _engine.use(previous)
    assert all(g == got[0] for g in got), got
    if "n_rows" in kw and not isinstance(got[0][0], str):
        assert got[0][0] and got[0][1] == []  # (the columns, no rows)

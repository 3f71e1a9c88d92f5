"""encode_arrow: Arrow/Parquet -> TOON, byte-identical to dumps(table.to_pylist())."""

from __future__ import annotations

import datetime as dt
import io
import math
import re
import struct
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toonstream
from toonstream import ToonEncodeError
from toonstream._arrow_encode import encode_arrow
from toonstream._reference.quoting import NEEDS_QUOTE, needs_quote_re2
from toonstream._reference.numbers import encode_float

DELIMS = [",", "\t", "|"]
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def expected(table: pa.Table, key: str | None = None, **kw: Any) -> str:
    rows = table.to_pylist()
    if not rows and table.num_columns:
        # No rows: a table's header with [0] (its columns kept), where dumps([]) writes [];
        # the header is the one a row of nulls would have, if that row makes a table.
        def nulls(t: pa.DataType) -> Any:
            return {f.name: nulls(f.type) for f in t} if pa.types.is_struct(t) else None

        row = {f.name: nulls(f.type) for f in table.schema}
        one = toonstream.dumps([row] if key is None else {key: [row]}, **kw)
        head, _, _ = one.partition("\n")
        empty, found = re.subn(r"\[1([\t|]?)\]\{", r"[0\1]{", head, count=1)
        if found and head.endswith(":"):
            return empty
    return toonstream.dumps(rows if key is None else {key: rows}, **kw)


def encoded(data: Any, *, binary: bool = False, **kw: Any) -> str:
    if binary:
        bout = io.BytesIO()
        encode_arrow(data, bout, **kw)
        return bout.getvalue().decode("utf-8")
    out = io.StringIO()
    encode_arrow(data, out, **kw)
    return out.getvalue()


def check(table: pa.Table, **kw: Any) -> None:
    """Every delimiter, key or not, text and binary output, small batches too."""
    for d in DELIMS:
        for key in (None, "rows"):
            want = expected(table, key, delimiter=d, indent_size=kw.get("indent_size", 2))
            assert encoded(table, key=key, delimiter=d, **kw) == want
        assert encoded(table, delimiter=d, binary=True, batch_size=3, **kw) == expected(
            table, delimiter=d, indent_size=kw.get("indent_size", 2)
        )


# ---------------------------------------------------------------- column types

NASTY_STRINGS = [
    "plain", "", " lead", "trail ", "\ttab", "-dash", "#hash", "a:b", 'q"uote', "back\\slash", "new\nline",
    "cr\rx", "ctl\x01x", "\x1f", "[x]", "{y}", "a,b", "a|b", "a\tb", "true", "false", "null", "True", "1", "-1",
    "+1", "05", "1.5", "1e5", "1E+5", "1.5e-3", ".5", "5.", "0x10", "Kraków", "日本語", "emoji 😀", "nul\x00x",
    "trailing\t", "- x", "--", "#", "1 2",
]


def test_strings_every_quoting_rule() -> None:
    values = NASTY_STRINGS + [None]
    check(pa.table({"s": pa.array(values, pa.string()), "n": list(range(len(values)))}))


@pytest.mark.parametrize("typ", [pa.string(), pa.large_string(), pa.string_view()])
def test_string_types(typ: pa.DataType) -> None:
    check(pa.table({"s": pa.array(NASTY_STRINGS + [None], typ)}))


def test_dictionary_columns() -> None:
    s = pa.array(["a", "b,c", None, "a", "true"]).dictionary_encode()
    i = pa.array([1, 2, 1, None, 2]).dictionary_encode()
    check(pa.table({"s": s, "i": i}))


def test_needs_quote_pattern_matches_python() -> None:
    for d in DELIMS:
        arr = pa.array(NASTY_STRINGS, pa.large_string())
        got = pc.match_substring_regex(arr, needs_quote_re2(d)).to_pylist()
        assert got == [NEEDS_QUOTE[d].search(s) is not None for s in NASTY_STRINGS]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=12), min_size=1, max_size=30), st.sampled_from(DELIMS))
def test_strings_property(values: list[str], d: str) -> None:
    values = [v for v in values if not any(0xD800 <= ord(c) <= 0xDFFF for c in v)] or ["x"]
    table = pa.table({"s": values, "t": values[::-1]})
    assert encoded(table, delimiter=d, batch_size=7) == expected(table, delimiter=d)
    got = pc.match_substring_regex(pa.array(values), needs_quote_re2(d)).to_pylist()
    assert got == [NEEDS_QUOTE[d].search(s) is not None for s in values]


INTS = {
    pa.int8(): [-128, 0, 127], pa.int16(): [-32768, 5], pa.int32(): [-(2**31), 2**31 - 1],
    pa.int64(): [-(2**63), 2**63 - 1, 0], pa.uint8(): [0, 255], pa.uint16(): [65535], pa.uint32(): [2**32 - 1],
    pa.uint64(): [0, 2**64 - 1, 10**19],
}


@pytest.mark.parametrize("typ", list(INTS), ids=str)
def test_ints(typ: pa.DataType) -> None:
    check(pa.table({"i": pa.array(INTS[typ] + [None], typ)}))


def test_bools_and_nulls() -> None:
    check(pa.table({"b": [True, False, None], "z": pa.nulls(3), "x": [None, None, None]}))


SPECIAL_FLOATS = [
    0.0, -0.0, 1.0, -1.0, 0.1, 1.5, 3.0, 1e-7, 1e-6, 1.5e-6, 9.99e-6, 1e-5, 1e-4, 0.001, 123456789.123, 1e9, 1e10,
    1.5e10, 12345678901.5, 2.0**52 + 0.5, 2.0**53, 2.0**53 + 2, 1e15, 1e16, 6.517366420032157e16, 2.0**63, 2.0**64,
    9.99e20, 1e21, 1.5e21, 1e22, 1e300, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
    float("nan"), float("inf"), float("-inf"), -1e-7, -1.5e10, -2.0**63, None,
]


@pytest.mark.parametrize("typ", [pa.float64(), pa.float32(), pa.float16()], ids=str)
def test_floats_canonical(typ: pa.DataType) -> None:
    values = SPECIAL_FLOATS
    if typ != pa.float64():
        values = [v for v in values if v is None or not math.isfinite(v) or abs(v) < 6e4 or typ == pa.float32()]
    check(pa.table({"f": pa.array(values, pa.float64()).cast(typ, safe=False)}))


@SETTINGS
@given(st.lists(st.one_of(st.none(), st.floats(), st.integers(0, 2**64 - 1).map(lambda b: struct.unpack("<d", struct.pack("<Q", b))[0])), min_size=1, max_size=40))
def test_floats_property(values: list[float | None]) -> None:
    table = pa.table({"f": pa.array(values, pa.float64())})
    assert encoded(table, batch_size=16) == expected(table)


def test_floats_vectorized_match_encode_float() -> None:
    """Arrow's cast text, where kept, is exactly encode_float's (a wide sweep)."""
    import random

    rnd = random.Random(7)
    values = [rnd.uniform(-1, 1) * 10 ** rnd.randint(-12, 24) for _ in range(20_000)]
    values += [round(rnd.uniform(0, 1000), rnd.randint(0, 6)) for _ in range(5_000)]
    values += [struct.unpack("<d", struct.pack("<Q", rnd.getrandbits(64)))[0] for _ in range(20_000)]
    table = pa.table({"f": values})
    lines = encoded(table).split("\n")[1:]
    assert [line.strip() for line in lines] == [encode_float(v) for v in values]


def test_decimals() -> None:
    d = [Decimal("1.50"), Decimal("0.00"), Decimal("-2.10"), Decimal("100.00"), Decimal("12345678.90"), None]
    check(pa.table({"d": pa.array(d, pa.decimal128(10, 2))}))
    tiny = [Decimal("0.0000001"), Decimal("0.000001"), Decimal("-0.00000050"), Decimal("1.23456789"), Decimal("0")]
    check(pa.table({"d": pa.array(tiny, pa.decimal128(12, 8))}))
    huge = [Decimal(10**21), Decimal(10**21 - 1), Decimal("-123456789012345678901234.5"), Decimal(1)]
    check(pa.table({"d": pa.array(huge, pa.decimal128(30, 1))}))
    check(pa.table({"d": pa.array([Decimal("1.5E+3"), None], pa.decimal128(10, -2))}))
    check(pa.table({"d": pa.array([Decimal(10**40), Decimal("-1.5")], pa.decimal256(50, 1))}))
    check(pa.table({"d": pa.array([Decimal(10**40), Decimal("-1.5")], pa.decimal256(50, 1))}))


def test_dates() -> None:
    values = [dt.date(2024, 1, 2), dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(999, 5, 6), dt.date(1969, 12, 31), None]
    check(pa.table({"d32": pa.array(values, pa.date32()), "d64": pa.array(values, pa.date64())}))


@pytest.mark.parametrize(
    "column",
    [
        pa.array([1, 3_000_000], pa.date32()),  # past 9999-12-31
        pa.array([1, -719_163], pa.date32()),  # before 0001-01-01
        pa.array([0, 253_402_300_800], pa.timestamp("s")),
        pa.array([0, 253_402_300_800], pa.timestamp("s", tz="UTC")),
        pa.array([0, -62_135_596_801_000], pa.timestamp("ms")),
        pa.array([[1], [3_000_000]], pa.list_(pa.date32())),  # (the per-row path)
    ],
    ids=["date-after", "date-before", "ts", "ts-utc", "ts-ms-before", "list"],
)
def test_times_out_of_python_range_are_encode_errors(engine: str, column: pa.Array) -> None:
    # A date or time Python cannot hold (to_pylist raises OverflowError): a ToonEncodeError at
    # its row and field, not a bare OverflowError (found by a differential review).
    table = pa.table({"d": column})
    for default in (None, str):
        with pytest.raises(ToonEncodeError) as e:
            encode_arrow(table, io.StringIO(), default=default)
        assert e.value.path[:1] == (1,) and "out of Python's range" in str(e.value)
        assert not isinstance(e.value, OverflowError)


TIMES = [
    dt.datetime(2024, 1, 2, 3, 4, 5), dt.datetime(2024, 1, 2, 3, 4, 5, 6), dt.datetime(1, 1, 1),
    dt.datetime(9999, 12, 31, 23, 59, 59, 999999), dt.datetime(999, 1, 1, 0, 0, 0, 120000), dt.datetime(1969, 12, 31, 23, 59, 59, 500000),
]


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_timestamps_naive(unit: str) -> None:
    values = [v for v in TIMES if unit != "ns" or 1700 < v.year < 2200] + [None]
    arr = pa.array(values, pa.timestamp("us")).cast(pa.timestamp(unit), safe=False)
    check(pa.table({"t": arr}))


@pytest.mark.parametrize("tz", ["UTC", "+05:30", "-08:00", "America/New_York", "Europe/London", "Asia/Kolkata", "Australia/Lord_Howe"])
@pytest.mark.parametrize("unit", ["s", "ms", "us"])
def test_timestamps_zoned(tz: str, unit: str) -> None:
    base = [dt.datetime(2024, 1, 2, 3, 4, 5), dt.datetime(2024, 7, 2, 3, 4, 5, 600000), dt.datetime(1990, 3, 25, 1, 30)]
    early = [dt.datetime(1850, 1, 1), dt.datetime(1901, 6, 1, 12)]  # local mean time offsets in seconds
    late = [dt.datetime(2038, 7, 1, 12), dt.datetime(2040, 7, 1, 12), dt.datetime(2322, 1, 1)]  # past Arrow's zone data
    for values in (base + [None], base + early + [None], base + late + [None]):  # vectorized; per value
        arr = pa.array(values, pa.timestamp("us")).cast(pa.timestamp(unit), safe=False)
        check(pa.table({"t": pc.assume_timezone(arr, "UTC").cast(pa.timestamp(unit, tz))}))


def test_timestamps_nanoseconds_follow_to_pylist() -> None:
    arr = pa.array([1_700_000_000_123_456_000, 5], pa.timestamp("ns"))
    table = pa.table({"t": arr})
    try:
        want = expected(table)
    except ValueError:  # without pandas, pyarrow refuses to drop nanoseconds
        with pytest.raises(ValueError):
            encoded(table)
    else:
        assert encoded(table) == want


@pytest.mark.parametrize(
    "typ", [pa.time32("s"), pa.time32("ms"), pa.time64("us"), pa.time64("ns")], ids=str
)
def test_times(typ: pa.DataType) -> None:
    values = [dt.time(0, 0), dt.time(12, 34, 56), dt.time(23, 59, 59, 999000), dt.time(1, 2, 3, 4000), None]
    if typ.unit == "s":
        values = [v if v is None else v.replace(microsecond=0) for v in values]
    check(pa.table({"t": pa.array(values, pa.time64("us")).cast(typ)}))


def test_binary_and_duration_are_errors_like_dumps() -> None:
    for arr in (pa.array([b"x"]), pa.array([b"x"], pa.large_binary()), pa.array([dt.timedelta(seconds=1)])):
        table = pa.table({"a": [1], "b": arr})
        with pytest.raises(ToonEncodeError, match="not TOON serializable"):
            expected(table)
        with pytest.raises(ToonEncodeError, match="not TOON serializable") as e:
            encoded(table)
        assert e.value.path == (0, "b")
    # all null: just nulls
    check(pa.table({"b": pa.array([None, None], pa.binary())}))


def test_default_hook_takes_the_row_path() -> None:
    table = pa.table({"a": [1, 2], "b": [b"x", None], "c": [dt.timedelta(seconds=3), None]})
    hook = lambda v: v.hex() if isinstance(v, bytes) else {"seconds": v.total_seconds()}  # noqa: E731
    assert encoded(table, default=hook) == toonstream.dumps(table.to_pylist(), default=hook)


# ---------------------------------------------------------------- structure


def test_struct_columns_nested_headers() -> None:
    inner = pa.array([{"x": 1, "y": "a,b"}, {"x": None, "y": "c"}, {"x": 3, "y": None}])
    outer = pa.StructArray.from_arrays([inner, pa.array([1.5, 2.0, None])], names=["in", "w"])
    check(pa.table({"id": [1, 2, 3], "o": outer, "s": inner}))


def _outcome(f: Any) -> Any:
    """The text ``f`` gives, or its ToonEncodeError's message and path."""
    try:
        return f()
    except ToonEncodeError as e:
        return ("error", str(e), e.path)


def _nested_struct(levels: int) -> pa.Array:
    """Three rows of a struct nested ``levels`` deep: {"s": {"s": ... {"x": i, "y": "a,b"}}}."""
    arr: pa.Array = pa.StructArray.from_arrays([pa.array([1, 2, 3]), pa.array(["a,b", "c", None])], names=["x", "y"])
    for _ in range(levels - 1):
        arr = pa.StructArray.from_arrays([arr, pa.array([True, False, None])], names=["s", "f"])
    return arr


@pytest.mark.parametrize("levels", [1, 2, 3, 4, 5])
def test_struct_depth_decided_as_dumps_decides(levels: int) -> None:
    # The Arrow encoder's table decision is the shape plan's, asked about a row standing for the
    # schema: at every max_depth it gives dumps' text of the rows (or dumps' error), and it decides
    # tabular exactly where the plan does on the rows themselves.
    from toonstream._arrow_encode import schema_shape
    from toonstream._reference.shape import ShapePlan

    table = pa.table({"id": [1, 2, 3], "s": _nested_struct(levels)})
    rows = table.to_pylist()
    for max_depth in range(0, levels + 4):  # (-1 is an option error: test_encode_edges)
        shape = schema_shape(table.schema, has_default=False, max_depth=max_depth)
        assert (shape is None) == (ShapePlan(lambda v: v, max_depth).uniform_fields(rows, 1) is None), max_depth
        if max_depth < 2:  # (the array under a key is at level 2)
            assert schema_shape(table.schema, has_default=False, max_depth=max_depth, under_key=True) is None
        for key in (None, "rows"):
            want = _outcome(lambda: expected(table, key, max_depth=max_depth))
            assert _outcome(lambda: encoded(table, key=key, max_depth=max_depth)) == want, (max_depth, key)
    # (the array at level 1, its rows at 2, the deepest struct at levels + 2)
    assert schema_shape(table.schema, has_default=False, max_depth=levels + 2) is not None
    assert schema_shape(table.schema, has_default=False, max_depth=levels + 1) is None


@pytest.mark.parametrize("max_depth", [0, 1, 2])
def test_flat_tables_at_the_smallest_max_depths_as_dumps(max_depth: int) -> None:
    table = pa.table({"a": [1, 2], "b": ["x", "y, z"]})
    for key in (None, "k"):
        want = _outcome(lambda: expected(table, key, max_depth=max_depth))
        assert _outcome(lambda: encoded(table, key=key, max_depth=max_depth)) == want, key


def test_repeated_struct_field_names_are_refused() -> None:
    # no table of them (a Python row holds each key once), and no row either: a TOON object
    # holds each key once (to_pylist raises its own error here)
    from toonstream._arrow_encode import schema_shape

    inner = pa.StructArray.from_arrays([pa.array([1, 2]), pa.array([3, 4])], names=["x", "x"])
    table = pa.table({"id": [1, 2], "s": inner})
    assert schema_shape(table.schema, has_default=False, max_depth=10) is None
    with pytest.raises(ToonEncodeError, match="column 'x' appears twice") as e:
        encoded(table)
    assert e.value.path == ("s",)


def test_null_struct_makes_it_non_tabular() -> None:
    s = pa.array([{"x": 1}, None, {"x": 3}], pa.struct([("x", pa.int64())]))
    table = pa.table({"id": [1, 2, 3], "s": s})
    assert "{id,s{x}}" not in expected(table)
    check(table)
    # a null struct inside a struct
    inner = pa.array([{"x": 1}, None], pa.struct([("x", pa.int64())]))
    outer = pa.StructArray.from_arrays([inner], names=["in"])
    check(pa.table({"o": outer}))


def test_null_struct_in_later_batch_and_one_shot_sources() -> None:
    s = pa.array([{"x": i} for i in range(10)] + [None], pa.struct([("x", pa.int64())]))
    table = pa.table({"id": range(11), "s": s})
    want = expected(table)
    assert encoded(table, batch_size=4) == want
    assert encoded(pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=3))) == want
    assert encoded(iter(table.to_batches(max_chunksize=5))) == want
    ok = table.slice(0, 10)
    assert encoded(pa.RecordBatchReader.from_batches(ok.schema, ok.to_batches(max_chunksize=3))) == expected(ok)


@pytest.mark.parametrize(
    "arr",
    [
        pa.array([[1, 2], [], None]),
        pa.array([[1], [2], [3]], pa.large_list(pa.int64())),
        pa.array([[1, 2]] * 3, pa.list_(pa.int64(), 2)),
        pa.array([[("a", 1)], [], None], pa.map_(pa.string(), pa.int64())),
        pa.array([{}, {}, {}], pa.struct([])),
    ],
    ids=["list", "large_list", "fixed_list", "map", "empty_struct"],
)
def test_non_tabular_columns_fall_back(arr: pa.Array) -> None:
    check(pa.table({"id": [1, 2, 3], "v": arr}))


def test_zero_columns_and_empty_tables() -> None:
    check(pa.table({"a": [1, 2]}).drop_columns(["a"]))
    # No rows: the header keeps the columns (read back as an empty frame of them), where
    # dumps([]) writes []; no columns, or no schema at all: an empty array.
    assert encoded(pa.table({"a": pa.array([], pa.int64()), "s": pa.array([], pa.string())})) == "[0]{a,s}:"
    assert encoded(pa.table({})) == "[]"
    assert encoded(pa.table({"a": pa.array([], pa.int64())}), key="k") == "k[0]{a}:"
    assert toonstream.loads("k[0]{a}:") == {"k": []}
    assert encoded([]) == "[]"
    assert encoded(pa.RecordBatchReader.from_batches(pa.schema([("a", pa.int64())]), [])) == "[0]{a}:"


def test_duplicate_and_odd_names() -> None:
    t = pa.Table.from_arrays([pa.array([1, 2]), pa.array([3, 4])], names=["a", "a"])
    with pytest.raises(ToonEncodeError, match="column 'a' appears twice"):  # (to_pylist keeps the last, silently)
        encoded(t)
    check(pa.table({"": [1], "a b": [2], "x:y": [3], "1": [4], "ok_name.x": [5], 'q"': [6]}))
    check(pa.table({"s": [1]}), indent_size=4)
    assert encoded(pa.table({"a": [1]}), key="a key") == toonstream.dumps({"a key": [{"a": 1}]})


def test_chunked_arrays_and_many_batches() -> None:
    a = pa.chunked_array([[1, 2], [3], [], [4, 5, 6]])
    b = pa.chunked_array([["x"], ["y,", "z", "w"], ["v", "u"]])
    table = pa.table({"a": a, "b": b})
    check(table)
    assert encoded(table, batch_size=1) == expected(table)


@SETTINGS
@given(st.data())
def test_random_tables(data: st.DataObject) -> None:
    n = data.draw(st.integers(0, 25))
    cols = {}
    kinds = data.draw(st.lists(st.sampled_from(["i", "f", "s", "b", "n", "d", "t"]), min_size=1, max_size=5))
    for j, kind in enumerate(kinds):
        opt = lambda s: st.one_of(st.none(), s)  # noqa: E731
        if kind == "i":
            arr = pa.array(data.draw(st.lists(opt(st.integers(-(2**63), 2**63 - 1)), min_size=n, max_size=n)), pa.int64())
        elif kind == "f":
            arr = pa.array(data.draw(st.lists(opt(st.floats()), min_size=n, max_size=n)), pa.float64())
        elif kind == "s":
            alphabet = st.sampled_from(list('ab ,:|\t"\\\n-#01e.+') + ["é", "\x01"])
            arr = pa.array(data.draw(st.lists(opt(st.text(alphabet, max_size=6)), min_size=n, max_size=n)), pa.string())
        elif kind == "b":
            arr = pa.array(data.draw(st.lists(opt(st.booleans()), min_size=n, max_size=n)), pa.bool_())
        elif kind == "n":
            arr = pa.nulls(n)
        elif kind == "d":
            arr = pa.array(data.draw(st.lists(opt(st.dates()), min_size=n, max_size=n)), pa.date32())
        else:
            arr = pa.array(data.draw(st.lists(opt(st.datetimes()), min_size=n, max_size=n)), pa.timestamp("us"))
        cols[f"c{j}"] = arr
    table = pa.table(cols)
    d = data.draw(st.sampled_from(DELIMS))
    key = data.draw(st.sampled_from([None, "k"]))
    bs = data.draw(st.integers(1, 30))
    assert encoded(table, key=key, delimiter=d, batch_size=bs) == expected(table, key, delimiter=d)


# ---------------------------------------------------------------- sources


def mixed_table(n: int = 50) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "name": [f"user {i}" if i % 7 else f"odd, {i}" for i in range(n)],
            "score": [i / 3 for i in range(n)],
            "ok": [i % 2 == 0 for i in range(n)],
            "when": pa.array([dt.datetime(2024, 1, 1) + dt.timedelta(hours=i) for i in range(n)], pa.timestamp("ms")),
            "nested": pa.array([{"a": i, "b": str(i)} for i in range(n)]),
        }
    )


def test_record_batch_reader_iterable_and_record_batch() -> None:
    table = mixed_table()
    want = expected(table, "k")
    assert encoded(table.to_batches(max_chunksize=7)[0], key="k") == expected(pa.Table.from_batches([table.to_batches(max_chunksize=7)[0]]), "k")
    assert encoded(pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=7)), key="k") == want
    assert encoded(iter(table.to_batches(max_chunksize=9)), key="k") == want
    assert encoded(table.to_batches(max_chunksize=9), key="k") == want
    flat = table.drop_columns(["nested"])
    assert encoded(pa.RecordBatchReader.from_batches(flat.schema, flat.to_batches(max_chunksize=7)), key="k") == expected(flat, "k")


def test_mismatched_batches_are_rejected() -> None:
    a = pa.record_batch({"x": [1]})
    b = pa.record_batch({"y": [1]})
    with pytest.raises(ValueError, match="different schemas"):
        encoded([a, b])
    with pytest.raises(TypeError):
        encoded([1, 2])
    with pytest.raises(TypeError):
        encoded(42)


def test_parquet_file_and_dataset(tmp_path: Path) -> None:
    table = mixed_table(200)
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=64)
    want = expected(table, "rows", delimiter="|")
    assert encoded(str(path), key="rows", delimiter="|", batch_size=50) == want
    assert encoded(path, key="rows", delimiter="|", binary=True) == want
    assert encoded(pads.dataset(path), key="rows", delimiter="|", batch_size=30) == want
    noext = tmp_path / "t.data"
    noext.write_bytes(path.read_bytes())
    assert encoded(noext, key="rows", delimiter="|") == want


def test_ipc_file_and_stream(tmp_path: Path) -> None:
    table = mixed_table(120)
    for name, opener in (("t.arrow", pa.ipc.new_file), ("t.arrows", pa.ipc.new_stream), ("t.feather", pa.ipc.new_file), ("t.ipc", pa.ipc.new_stream)):
        path = tmp_path / name
        with pa.OSFile(str(path), "wb") as sink, opener(sink, table.schema) as w:
            for b in table.to_batches(max_chunksize=50):
                w.write_batch(b)
        assert encoded(path, batch_size=17) == expected(table), name


def test_csv_path(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text('id,name,x\n1,"a,b",1.5\n2,plain,\n')
    assert encoded(path) == toonstream.dumps([{"id": 1, "name": "a,b", "x": 1.5}, {"id": 2, "name": "plain", "x": None}])


def test_arrow_c_stream_objects() -> None:
    import polars as pl

    df = pl.DataFrame({"a": [1, 2], "b": ["x", "y,z"]})
    assert encoded(df) == toonstream.dumps(df.to_dicts())


def test_spooled_path_uses_bounded_memory(tmp_path: Path) -> None:
    """Unknown length: rows spool to a file beyond spool_memory; same output."""
    table = mixed_table(3000).drop_columns(["nested"])
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=100))
    assert encoded(reader, spool_memory=1024) == expected(table)


def test_options_are_checked() -> None:
    t = pa.table({"a": [1]})
    with pytest.raises(TypeError, match="unexpected"):
        encoded(t, bogus=1)
    with pytest.raises(ValueError):
        encoded(t, delimiter=";")
    with pytest.raises(ValueError):
        encoded(t, batch_size=0)
    with pytest.raises(ValueError):
        encoded(t, indent_size=0)
    assert encoded(t, delimiter="pipe") == "[1|]{a}:\n  1"


def test_error_before_any_output() -> None:
    """A failure in the first batch leaves ``out`` empty."""
    out = io.StringIO()
    with pytest.raises(ToonEncodeError):
        encode_arrow(pa.table({"b": [b"x"]}), out)
    assert out.getvalue() == ""


def test_import_is_lazy() -> None:
    """pyarrow is loaded by the Arrow paths only (``_arrow_encode`` itself
    imports it, through the helper that names the extra when it is missing:
    see test_optional_deps), never by the package, its codec or the CLI."""
    import subprocess
    import sys

    code = "import sys, toonstream, toonstream.encoder, toonstream.decoder, toonstream.cli; print('pyarrow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False"


def test_dictionary_values_formatted_once_and_reused(tmp_path: Path) -> None:
    """Parquet string columns with a small dictionary are read as dictionaries;
    the result is the same as for plain strings (nulls, quoting, row groups)."""
    from toonstream._arrow_encode import _small_dictionaries

    n = 5000
    table = pa.table(
        {
            "city": [["Oslo", "São Paulo", "Smith, J", None, "true", ""][i % 6] for i in range(n)],
            "id": range(n),
            "uniq": [f"u{i}" for i in range(n)],
        }
    )
    path = tmp_path / "d.parquet"
    pq.write_table(table, path, row_group_size=1200)
    assert "city" in _small_dictionaries(pq.ParquetFile(path))
    for d in DELIMS:
        assert encoded(path, delimiter=d, batch_size=500) == expected(table, delimiter=d)
    # a dictionary with unused and null values, and null indices
    arr = pa.DictionaryArray.from_arrays(pa.array([0, None, 2, 0, 3]), pa.array(["a,b", "unused", "x", None]))
    check(pa.table({"s": arr}))
    floats = pa.DictionaryArray.from_arrays(pa.array([0, 1, None, 1]), pa.array([1e22, -0.0]))
    check(pa.table({"f": floats}))
    dates = pa.DictionaryArray.from_arrays(pa.array([0, 0]), pa.array([dt.date(2024, 1, 1), dt.date(2, 1, 1)]))
    check(pa.table({"d": dates}))


def test_common_case_has_no_per_value_formatting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Typical columns never reach the per-value formatter (no Python loop per cell)."""
    import random

    from toonstream import _arrow_encode

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("per-value path used")

    monkeypatch.setattr(_arrow_encode._Formatter, "per_value", boom)
    rnd = random.Random(3)
    n = 2000
    table = pa.table(
        {
            "id": range(n),
            "score": [round(rnd.uniform(-1e6, 1e6), rnd.randint(0, 4)) for _ in range(n)],
            "big": [float(rnd.randint(-(2**62), 2**62)) for _ in range(n)],
            "name": [rnd.choice(["Ada", 'say "hi"', "a,b", "-x", "1.5", "", "Zoë"]) for _ in range(n)],
            "ok": [rnd.random() < 0.5 for _ in range(n)],
            "day": pa.array([dt.date(2000, 1, 1) + dt.timedelta(days=rnd.randint(0, 9000)) for _ in range(n)]),
            "at": pa.array([dt.datetime(2020, 1, 1) + dt.timedelta(seconds=rnd.randint(0, 10**8)) for _ in range(n)], pa.timestamp("ms", "UTC")),
            "clock": pa.array([dt.time(rnd.randint(0, 23), rnd.randint(0, 59)) for _ in range(n)]),
            "price": pa.array([Decimal(rnd.randint(0, 10**6)) / 100 for _ in range(n)], pa.decimal128(12, 2)),
            "geo": pa.array([{"lat": rnd.uniform(-90, 90), "tag": rnd.choice(["x", "y z"])} for _ in range(n)]),
            "none": [None] * n,
        }
    )
    assert encoded(table, batch_size=512) == expected(table)


def test_spooled_text_output_with_multibyte_characters() -> None:
    """The spool is copied in 1 MiB pieces: a character split between pieces stays whole."""
    n = 60_000
    table = pa.table({"s": ["é日😀x" * (i % 7 + 1) for i in range(n)], "i": range(n)})
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=10_000))
    assert encoded(reader) == expected(table)


def test_leading_empty_batches_write_one_header() -> None:
    b = pa.record_batch({"a": [1, 2], "b": ["x", "y"]})
    for batches in ([b.slice(0, 0), b], [b.slice(0, 0), b.slice(0, 0), b.slice(0, 1), b.slice(0, 0), b.slice(1)]):
        table = pa.Table.from_batches(batches)
        assert encoded(table) == expected(table) == "[2]{a,b}:\n  1,x\n  2,y"
        assert encoded(iter(batches)) == expected(table)  # spooled: the count is not known first


@pytest.mark.parametrize("zone", ["Mars/Olympus", "utc"])
def test_an_unknown_time_zone_is_a_toon_encode_error(zone: str) -> None:
    """pyarrow's ArrowInvalid ("the zoneinfo module or pytz package must be installed", which
    they are) leaked; it is dumps' kind of error, naming the zone, at the column."""
    table = pa.table({"t": pa.array([0], pa.timestamp("s", zone))})
    with pytest.raises(ToonEncodeError, match=f"unknown time zone '{zone}'") as e:
        encode_arrow(table, io.StringIO())
    assert e.value.path == (0, "t")


NANOS = [1704416523000000001, -1, 1704416523123456789, 1704416523000001000, None, 1704416523000000000, -1000001]


@pytest.mark.parametrize("tz", [None, "UTC", "America/New_York", "+05:30"])
def test_nanosecond_timestamps_keep_every_digit_as_pandas_writes_them(engine: str, tz: str | None) -> None:
    t = pa.table({"ts": pa.array(NANOS, pa.timestamp("ns", tz))})
    out = toonstream.loads(encoded(t))
    want = [None if v is None else v.isoformat() for v in pa.array(NANOS, pa.timestamp("ns", tz)).to_pylist()] \
        if _has_pandas() else None
    naive = ["2024-01-05T01:02:03.000000001", "1969-12-31T23:59:59.999999999", "2024-01-05T01:02:03.123456789",
             "2024-01-05T01:02:03.000001", None, "2024-01-05T01:02:03", "1969-12-31T23:59:59.998999999"]
    if tz is None:
        assert [r["ts"] for r in out] == naive
    if want is not None:
        assert [r["ts"] for r in out] == want


def _has_pandas() -> bool:
    try:
        import pandas  # noqa: F401
    except ImportError:
        return False
    return True


def test_nanosecond_times_are_not_cut_to_microseconds(engine: str) -> None:
    t = pa.table({"t": pa.array([3723000000001, 3723123456789, 3723000001000, None, 0, 86399999999999], pa.time64("ns"))})
    assert [r["t"] for r in toonstream.loads(encoded(t))] == [
        "01:02:03.000000001", "01:02:03.123456789", "01:02:03.000001", None, "00:00:00", "23:59:59.999999999"]


_NO_PANDAS = """
import io, sys
import pyarrow as pa
class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("blocked for the test")
sys.meta_path.insert(0, Blocked())
import toonstream, toonstream.arrow as ta
from toonstream import ToonEncodeError
out = io.BytesIO()
ta.encode_arrow(pa.table({"ts": pa.array([1704416523000000001], pa.timestamp("ns"))}), out)
print(out.getvalue().decode())
try:
    ta.encode_arrow(pa.table({"l": pa.array([[1704416523000000001]], pa.list_(pa.timestamp("ns")))}), io.BytesIO())
except ToonEncodeError as e:
    print("ToonEncodeError", e.path)
"""


def test_nanosecond_timestamps_without_pandas() -> None:
    # A table's own columns are formatted without pandas; inside a list (the per-row
    # path, to_pylist) a clear ToonEncodeError, not pyarrow's ValueError.
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", _NO_PANDAS], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout == '[1]{ts}:\n  "2024-01-05T01:02:03.000000001"\nToonEncodeError (0,)\n'


def test_a_file_that_cannot_be_read_as_its_format_is_a_toon_encode_error(tmp_path: Path) -> None:
    t = pa.table({"a": [1, 2]})
    good = tmp_path / "good.parquet"
    pq.write_table(t, good)
    cases = {
        "trunc.parquet": good.read_bytes()[:-20],
        "empty.parquet": b"",
        "ragged.csv": b"a,b\n1,2\n3,4,5\n",
        "notes.arrow": b"not an arrow file at all\n",
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ToonEncodeError, match="^cannot read (Parquet|CSV|Arrow IPC) input: "):
            encode_arrow(str(tmp_path / name), io.StringIO())
    with pytest.raises(FileNotFoundError):  # (an I/O error stays one)
        encode_arrow(str(tmp_path / "missing.parquet"), io.StringIO())


def test_input_format_reads_the_file_as_that_format(tmp_path: Path) -> None:
    csv = tmp_path / "t.parquet"  # (a CSV file with a Parquet name)
    csv.write_bytes(b"a,b\n1,x\n")
    with pytest.raises(ToonEncodeError, match="cannot read Parquet input"):
        encode_arrow(str(csv), io.StringIO())
    out = io.StringIO()
    encode_arrow(str(csv), out, input_format="csv")
    assert out.getvalue() == "[1]{a,b}:\n  1,x"
    pq.write_table(pa.table({"a": [1]}), tmp_path / "p.csv")
    with pytest.raises(ToonEncodeError, match="cannot read Arrow IPC input"):
        encode_arrow(str(tmp_path / "p.csv"), io.StringIO(), input_format="arrow")
    with pytest.raises(ValueError, match="input_format must be one of"):
        encode_arrow(str(csv), io.StringIO(), input_format="json")
    with pytest.raises(TypeError, match="path only"):
        encode_arrow(pa.table({"a": [1]}), io.StringIO(), input_format="csv")


def test_nanoseconds_on_the_per_row_path(engine: str) -> None:
    # Beside a list column the table goes row by row (to_pylist): its own and its structs'
    # nanosecond columns keep their digits there too; inside the list, to_pylist's (cut).
    t = pa.table({
        "t": pa.array([1, 3723000001000, None], pa.time64("ns")),
        "s": pa.array([{"ts": 1704416523000000001}, None, {"ts": -1}], pa.struct([("ts", pa.timestamp("ns", "UTC"))])),
        "l": pa.array([[1], [], None], pa.list_(pa.time64("ns"))),
    })
    assert toonstream.loads(encoded(t)) == [
        {"t": "00:00:00.000000001", "s": {"ts": "2024-01-05T01:02:03.000000001+00:00"}, "l": ["00:00:00"]},
        {"t": "01:02:03.000001", "s": None, "l": []},
        {"t": None, "s": {"ts": "1969-12-31T23:59:59.999999999+00:00"}, "l": None},
    ]

"""TOON tables -> Polars / Arrow (toonstream.polars, toonstream.arrow).

The reference for every value is the exact decoder (``rows()``); the column
types follow the README's table, re-stated here in ``ref_dtype``.  The fast
path's chunk sizes are patched small so that every boundary case (a run of
plain rows split across chunks, special lines at chunk edges) is exercised.
"""

from __future__ import annotations

import io
import math
from decimal import Decimal
from typing import Any, Callable

import pytest

import polars as pl  # runtime dependencies: no skip
import pyarrow as pa
from hypothesis import HealthCheck, given, settings  # noqa: E402
from polars.testing import assert_frame_equal  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import toonstream  # noqa: E402
import toonstream.arrow as ta  # noqa: E402
import toonstream.polars as tp  # noqa: E402
from toonstream import ToonDecodeError  # noqa: E402
from toonstream import _frames  # noqa: E402
from toonstream._reference.runs import TokenRun, table_columns  # noqa: E402

CHUNKINGS = [(4 << 20, 64 << 10), (64, 16), (200, 7), (1 << 12, 1 << 10)]


@pytest.fixture(params=CHUNKINGS, ids=lambda c: f"chunk{c[0]}-feed{c[1]}")
def chunking(request: Any, monkeypatch: Any) -> tuple[int, int]:
    chunk, feed = request.param
    monkeypatch.setattr(_frames, "CHUNK", chunk)
    monkeypatch.setattr(_frames, "FEED", feed)
    return chunk, feed


# ---------------------------------------------------------------- reference typing


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        if -(1 << 63) <= v < (1 << 63):
            return "int"
        return "big" if len(str(abs(v))) <= 38 else "huge"
    if isinstance(v, float):
        return "float"
    if isinstance(v, Decimal):  # (rows' use_float=False: a non-integer, exact)
        return "huge" if math.isinf(float(v)) else "float"
    return "str"


def ref_dtype(values: list[Any]) -> Any:
    kinds = {_kind(v) for v in values} - {"null"}
    wide = any(isinstance(v, int) and not isinstance(v, bool) and len(str(abs(v))) > 15 for v in values)
    if not kinds:
        return pl.Null
    if kinds == {"bool"}:
        return pl.Boolean
    if kinds == {"int"}:
        return pl.Int64
    if kinds <= {"int", "big"}:
        return pl.Decimal(38, 0)
    if kinds <= {"int", "float"} and not wide:
        return pl.Float64
    return pl.String


def ref_value(v: Any, dtype: Any) -> Any:
    if v is None:
        return None
    if dtype == pl.String:
        return _frames.text_of(v)
    if dtype == pl.Float64:
        return float(v) or 0.0  # (-0.0 as 0.0, as loads reads it)
    if isinstance(dtype, pl.Decimal):
        return Decimal(v)
    return v


def reference(text: str, prefix: str = "", **kw: Any) -> tuple[list[str], list[Any], list[tuple[Any, ...]]]:
    # (numbers exact: a String column holds the digits written, not their float's)
    r = toonstream.rows(text, prefix, use_float=False, **kw)
    got = list(r)
    cols = list(zip(*got)) if got else [() for _ in r.columns or []]
    dtypes = [ref_dtype(list(c)) for c in cols]
    rows = [tuple(ref_value(v, d) for v, d in zip(row, dtypes)) for row in got]
    return list(r.columns or []), dtypes, rows


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b) or (a != a and b != b)
    return type(a) is type(b) and a == b


def check_frame(text: str, prefix: str = "", **kw: Any) -> Any:
    names, dtypes, rows = reference(text, prefix)
    df = tp.read_toon(text.encode(), path=prefix if prefix else None, infer_schema_length=None, **kw)
    assert df.columns == names
    assert [df.schema[n] for n in names] == dtypes
    got = df.rows()
    assert len(got) == len(rows)
    for g, r in zip(got, rows):
        assert all(same(x, y) for x, y in zip(g, r)), (g, r)
    return df


# ---------------------------------------------------------------- basics


def test_types_per_column(chunking: Any) -> None:
    text = (
        "t[6]{i,f,b,s,n,mix,q,big,huge,wide}:\n"
        "  1,1.5,true,a,null,1,\"42\",1,1,1\n"
        "  -2,2,false,b c,null,x,\"05\",99999999999999999999,1e400,1.5\n"
        "  0,-0.0,null,,null,true,7,3,2,1234567890123456\n"
        "  -0,1e5,true,05,null,1.50,\"true\",-99999999999999999999,3,2\n"
        "  9223372036854775807,1E-7,false,-x,null,-0,x,5,"
        + "9" * 40
        + ",3\n"
        "  5,0.1,true,\"q,r\",null,null,\"\",6,1,4\n"
    )
    df = check_frame("\n".join(text.splitlines()), "t")
    assert df.schema["i"] == pl.Int64
    assert df.schema["f"] == pl.Float64
    assert df.schema["b"] == pl.Boolean
    assert df.schema["s"] == pl.String
    assert df.schema["n"] == pl.Null
    assert df.schema["big"] == pl.Decimal(38, 0)
    assert df["q"].to_list() == ["42", "05", "7", "true", "x", ""]  # quoted stays string, 7 -> "7"
    assert df["mix"].to_list() == ["1", "x", "true", "1.5", "0", None]  # canonical number text
    assert df["f"].to_list()[2] == 0.0 and math.copysign(1, df["f"][2]) == 1.0  # -0.0 -> 0.0
    assert df["huge"].dtype == pl.String  # 1e400 and a 40-digit integer: beyond float / decimal
    assert df["wide"].dtype == pl.String  # 16-digit integer with floats: a float would round it


def test_auto_path_and_explicit_path(chunking: Any) -> None:
    text = "name: x\nusers[2]{id,name}:\n  1,Ada\n  2,Bob\nother[1]{a}:\n  5\n"
    assert tp.read_toon(text.encode()).rows() == [(1, "Ada"), (2, "Bob")]
    assert tp.read_toon(text.encode(), path="other").rows() == [(5,)]
    with pytest.raises(ToonDecodeError, match="not a tabular"):
        tp.read_toon(text.encode(), path="name")
    with pytest.raises(ToonDecodeError, match="no tabular array"):
        tp.read_toon(b"a: 1\nb: 2\n")


def test_keyed_table_and_structs(chunking: Any) -> None:
    text = "[3:]{age,addr{city,zip}}:\n  ada: 36,Oslo,\"0150\"\n  bob: 41,Lima,15001\n  \"c d\": null,null,null\n"
    df = tp.read_toon(text.encode(), infer_schema_length=None)
    assert df.columns == ["key", "age", "addr"]
    assert df.schema["addr"] == pl.Struct({"city": pl.String, "zip": pl.String})
    assert df.to_dicts() == [
        {"key": "ada", "age": 36, "addr": {"city": "Oslo", "zip": "0150"}},
        {"key": "bob", "age": 41, "addr": {"city": "Lima", "zip": "15001"}},
        {"key": "c d", "age": None, "addr": {"city": None, "zip": None}},
    ]
    assert tp.read_toon(text.encode(), key_field="name", columns=["name"]).to_dicts()[0] == {"name": "ada"}


def test_tables_in_list_items_concatenate(chunking: Any) -> None:
    text = "groups[2]:\n  - rows[2]{a,b}:\n      1,x\n      2,y\n  - rows[1]{a,b}:\n      3,z\n"
    assert tp.read_toon(text.encode(), path="groups.item.rows").rows() == [(1, "x"), (2, "y"), (3, "z")]
    bad = "groups[2]:\n  - rows[1]{a,b}:\n      1,x\n  - rows[1]{a,c}:\n      3,z\n"
    with pytest.raises(ToonDecodeError, match="later table"):
        tp.read_toon(bad.encode(), path="groups.item.rows")


def test_empty_and_projection(chunking: Any) -> None:
    df = tp.read_toon(b"t[0]{a,b}:\n")
    assert df.columns == ["a", "b"] and df.height == 0
    text = b"[3]{a,b,c}:\n  1,x,true\n  2,y,false\n  3,z,null\n"
    assert tp.read_toon(text, columns=["c", "a"]).rows() == [(True, 1), (False, 2), (None, 3)]
    with pytest.raises(pl.exceptions.ColumnNotFoundError):
        tp.read_toon(text, columns=["nope"])
    assert tp.read_toon(text, n_rows=2).rows() == [(1, "x", True), (2, "y", False)]


def test_sources_file_objects_and_paths(tmp_path: Any) -> None:
    text = "[2]{a}:\n  1\n  2\n"
    p = tmp_path / "t.toon"
    p.write_text(text)
    for src in (str(p), p, text.encode(), io.BytesIO(text.encode()), io.StringIO(text)):
        assert tp.read_toon(src).rows() == [(1,), (2,)]


def test_comments_spaces_and_crlf(chunking: Any) -> None:
    rows = "".join(f"  {i} , x{i} ,{i}.5 \n" if i % 3 == 0 else f"  {i},x{i},{i}.5\n" for i in range(40))
    text = "[41]{a,b,c}:\n" + rows[:200] + "  # a comment\n" + rows[200:] + "  \"q\",\"r\",1\n"
    df = check_frame(text.replace("[41]", "[41]"))
    assert df.height == 41
    crlf = "[3]{a,b}:\r\n  1,x\r\n  2,y\r\n  3,z\r\n"
    check_frame(crlf)


def test_type_mismatch_after_inference_window(chunking: Any) -> None:
    lines = [f"  {i},v" for i in range(300)]
    lines[250] = "  oops,v"
    text = f"[300]{{a,b}}:\n" + "\n".join(lines) + "\n"
    with pytest.raises(ToonDecodeError) as e:
        tp.read_toon(text.encode(), infer_schema_length=100, batch_size=64)
    assert e.value.code == "type_mismatch" and e.value.line == 252
    assert "a" in str(e.value) and "infer_schema_length" in str(e.value)
    # With the whole table looked at, the column is a String column.
    assert tp.read_toon(text.encode(), infer_schema_length=None)["a"].dtype == pl.String
    # An override decides instead.
    df = tp.read_toon(text.encode(), schema_overrides={"a": pl.String})
    assert df["a"][250] == "oops" and df["a"][0] == "0"


def test_schema_and_overrides() -> None:
    text = b"[2]{a,d,f}:\n  1,2024-01-02,1\n  2,2024-02-03,2.5\n"
    df = tp.read_toon(text, schema_overrides={"d": pl.Date, "a": pl.Int8})
    assert df.schema["d"] == pl.Date and df.schema["a"] == pl.Int8 and df.schema["f"] == pl.Float64
    with pytest.raises(ValueError, match="schema does not give"):
        tp.read_toon(text, schema={"a": pl.Int64})
    with pytest.raises(ToonDecodeError, match="does not convert"):
        tp.read_toon(b"[2]{a}:\n  1\n  300\n", schema={"a": pl.Int8})
    with pytest.raises(ToonDecodeError, match="does not fit"):
        tp.read_toon(b"[2]{a}:\n  1\n  x\n", schema={"a": pl.Int64})


# ---------------------------------------------------------------- errors match the decoder's


def _bad_tables() -> list[str]:
    good = ["[6]{a,b}:"] + [f"  {i},x{i}" for i in range(6)]
    out = []
    for i, bad in [
        (3, "  1,2,3"),  # too wide
        (3, "  1"),  # too narrow
        (3, "   1,2"),  # over-indented
        (3, ""),  # blank line inside the table
        (3, "  1,\"x"),  # unterminated quote
        (3, "  a: 1"),  # key-value line at row depth
        (3, "  1,\xff"),  # (becomes invalid UTF-8 below)
        (6, "  1,2\n  2,3"),  # more rows than declared
    ]:
        lines = list(good)
        lines[i] = bad
        out.append("\n".join(lines) + "\n")
    out.append("\n".join(good[:-2]) + "\n")  # fewer rows than declared
    out.append("[2]{a,b}:\n  1,\"a\\qb\"\n  2,x\n")  # bad escape
    out.append("[2]{a,b}:\n  1,1" + "0" * 20000 + "\n  2,x\n")  # number too long
    return out


@pytest.mark.parametrize("text", _bad_tables())
def test_errors_match_decoder(text: str, chunking: Any) -> None:
    data = text.encode("utf-8").replace("\xff".encode(), b"\xff")
    with pytest.raises(ToonDecodeError) as ref:
        toonstream.loads(data)
    with pytest.raises(ToonDecodeError) as got:
        tp.read_toon(data)
    assert (got.value.code, got.value.line) == (ref.value.code, ref.value.line)


# ---------------------------------------------------------------- property: equal to rows()

_cell = st.one_of(
    st.integers(min_value=-(10**20), max_value=10**20),
    st.integers(min_value=-5, max_value=5),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
    st.text(max_size=6),
    st.sampled_from(["42", "05", "1e5", "-", "a,b", "a b", " x", "true", "null", "#x", "a:b", "\\", "é"]),
)


@st.composite
def tables(draw: Any) -> tuple[list[dict[str, Any]], str]:
    width = draw(st.integers(min_value=1, max_value=4))
    kinds = [draw(st.sampled_from(["int", "float", "str", "bool", "any"])) for _ in range(width)]
    strat = {
        "int": st.one_of(st.integers(min_value=-(10**6), max_value=10**6), st.none()),
        "float": st.one_of(st.floats(allow_nan=False, allow_infinity=False, width=64), st.none()),
        "str": st.one_of(st.text(max_size=5), st.none()),
        "bool": st.one_of(st.booleans(), st.none()),
        "any": _cell,
    }
    n = draw(st.integers(min_value=0, max_value=30))
    rows = [{f"c{j}": draw(strat[kinds[j]]) for j in range(width)} for _ in range(n)]
    delim = draw(st.sampled_from([",", "\t", "|"]))
    return rows, delim


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(tables())
@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_property_equals_rows(chunking: Any, table: Any) -> None:
    rows, delim = table
    if not rows:
        return
    text = toonstream.dumps({"t": rows}, delimiter=delim)
    check_frame(text, "t")


# ---------------------------------------------------------------- pushdown, scan


def _big(n: int) -> bytes:
    return b"[%d]{id,name,score}:\n" % n + b"".join(b"  %d,user_%d,%d.5\n" % (i, i, i) for i in range(n))


class CountingReader(io.BytesIO):
    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.read_bytes = 0

    def read(self, n: int | None = -1) -> bytes:
        out = super().read(n)
        self.read_bytes += len(out)
        return out


def test_head_reads_a_tiny_fraction(monkeypatch: Any) -> None:
    data = _big(1_000_000)
    src = CountingReader(data)
    df = tp.read_toon(src, n_rows=5)
    assert df.rows() == [(i, f"user_{i}", i + 0.5) for i in range(5)]
    assert src.read_bytes <= _frames.CHUNK * 2 < len(data) / 3

    seen: list[int] = []
    real = _frames.byte_chunks

    def counting(source: Any) -> Any:
        for chunk in real(source):
            seen.append(len(chunk))
            yield chunk

    monkeypatch.setattr(_frames, "byte_chunks", counting)
    lf = tp.scan_toon(data)
    seen.clear()
    assert lf.head(5).collect().rows() == [(i, f"user_{i}", i + 0.5) for i in range(5)]
    assert sum(seen) <= _frames.CHUNK * 2 < len(data) / 3


def test_scan_projection_filter_and_slices() -> None:
    data = _big(5000)
    lf = tp.scan_toon(data, batch_size=1000)
    assert lf.collect_schema() == pl.Schema({"id": pl.Int64, "name": pl.String, "score": pl.Float64})
    out = lf.filter(pl.col("id") % 1000 == 7).select("name").collect()
    assert out["name"].to_list() == [f"user_{i}" for i in range(7, 5000, 1000)]
    assert lf.slice(10, 3).collect()["id"].to_list() == [10, 11, 12]
    assert lf.select(pl.col("score").sum()).collect().item() == sum(i + 0.5 for i in range(5000))
    assert_frame_equal(lf.collect(), tp.read_toon(data))


def test_scan_projection_converts_only_selected(monkeypatch: Any) -> None:
    data = _big(2000)
    asked: list[Any] = []
    real = _frames.FrameReader.__init__

    def spy(self: Any, source: Any, **kw: Any) -> None:
        asked.append(kw.get("columns"))
        real(self, source, **kw)

    monkeypatch.setattr(_frames.FrameReader, "__init__", spy)
    tp.scan_toon(data).select("name").collect()
    assert asked[-1] == ["name"]


# ---------------------------------------------------------------- arrow


def test_arrow_batches_and_schema(chunking: Any) -> None:
    data = _big(1000)
    batches = list(ta.iter_batches(data, batch_size=300))
    assert [b.num_rows for b in batches] == [300, 300, 300, 100]
    assert batches[0].schema == pa.schema([("id", pa.int64()), ("name", pa.large_string()), ("score", pa.float64())])
    t = ta.read_table(data, schema=pa.schema([("id", pa.int32()), ("name", pa.string()), ("score", pa.float32())]))
    assert t.schema.types == [pa.int32(), pa.string(), pa.float32()]
    assert t.num_rows == 1000 and t.column("id")[999].as_py() == 999
    assert ta.read_table(data, schema_overrides={"id": pa.string()}).column("id")[3].as_py() == "3"


def test_arrow_equals_rows_dicts(chunking: Any) -> None:
    text = "t[4]{a,g{x,y},s}:\n  1,2,true,\"a,b\"\n  2,3,false,c\n  3,null,null,d\n  4,5,true,\"\"\n"
    t = ta.read_table(text.encode())
    assert t.to_pylist() == list(toonstream.rows(text, "t", as_dict=True))


# ---------------------------------------------------------------- round trips


def test_round_trip_dataframe(chunking: Any) -> None:
    df = pl.DataFrame(
        {
            "i": [1, None, -3, 2**62],
            "f": [1.5, 1e-7, None, 1e300],
            "b": [True, False, None, True],
            "s": ["x", "a,b", None, "42"],
            "n": [None, None, None, None],
            "st": [{"p": 1, "q": "u"}, {"p": 2, "q": "v"}, {"p": None, "q": None}, {"p": 4, "q": "w"}],
        }
    )
    buf = io.StringIO()
    tp.write_toon(df, buf)
    back = tp.read_toon(buf.getvalue().encode())
    assert_frame_equal(back, df)
    assert buf.getvalue() == toonstream.dumps(df.to_dicts())


def test_round_trip_dates_with_overrides() -> None:
    import datetime as dt

    df = pl.DataFrame({"d": [dt.date(2024, 1, 2), dt.date(1999, 12, 31)], "t": [dt.datetime(2024, 1, 2, 3, 4, 5)] * 2})
    buf = io.StringIO()
    tp.write_toon(df, buf)
    back = tp.read_toon(buf.getvalue().encode(), schema_overrides={"d": pl.Date, "t": pl.Datetime("us")})
    assert_frame_equal(back, df)


def test_equals_dataframe_of_loads_for_uniform_tables() -> None:
    rows = [{"id": i, "name": f"n{i}", "x": i / 4, "ok": i % 2 == 0} for i in range(500)]
    text = toonstream.dumps(rows)
    assert_frame_equal(tp.read_toon(text.encode()), pl.DataFrame(toonstream.loads(text)))


# ---------------------------------------------------------------- CLI: decode --to parquet|arrow|csv


def _cli(*args: str, input: bytes | None = None) -> Any:
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "toonstream", *args], input=input, capture_output=True, timeout=120)


@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_cli_decode_to_table_formats(tmp_path: Any) -> None:
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    src = tmp_path / "t.toon"
    src.write_text('meta: x\nusers[3]{id,name,addr{city}}:\n  1,Ada,Oslo\n  2,"B, b",Lima\n  3,Cy,null\n')
    expected = list(toonstream.rows(src.read_bytes(), "users", as_dict=True))
    p = _cli("decode", str(src), "--to", "parquet", "-o", str(tmp_path / "t.parquet"))
    assert p.returncode == 0, p.stderr
    assert pq.read_table(tmp_path / "t.parquet").to_pylist() == expected
    p = _cli("decode", str(src), "--to", "arrow", "-o", str(tmp_path / "t.arrow"))
    assert p.returncode == 0, p.stderr
    assert pa.ipc.open_file(str(tmp_path / "t.arrow")).read_all().to_pylist() == expected
    p = _cli("decode", "--to", "csv", "--path", "users", input=src.read_bytes())
    assert p.returncode == 0, p.stderr
    t = pcsv.read_csv(io.BytesIO(p.stdout))
    assert t.column_names == ["id", "name", "addr.city"]
    assert t.to_pylist()[1] == {"id": 2, "name": "B, b", "addr.city": "Lima"}


def test_cli_decode_table_errors_leave_no_file(tmp_path: Any) -> None:
    out = tmp_path / "t.parquet"
    p = _cli("decode", "--to", "parquet", "-o", str(out), input=b"a: 1\n")
    assert p.returncode == 1 and not out.exists()
    assert b"no tabular array" in p.stderr and b"Traceback" not in p.stderr
    bad = b"[3]{a}:\n  1\n  2\n  x,y\n"
    p = _cli("decode", "--to", "arrow", "-o", str(out), input=bad)
    assert p.returncode == 1 and not out.exists()
    assert p.stderr.decode().startswith("<stdin>:4:")
    assert list(tmp_path.iterdir()) == []


def test_scan_predicate_with_limit_and_unselected_columns() -> None:
    data = _big(5000)
    lf = tp.scan_toon(data, batch_size=700)
    assert lf.filter(pl.col("id") > 4000).head(3).collect()["id"].to_list() == [4001, 4002, 4003]
    got = lf.filter(pl.col("score") > 4990).select("name").collect()["name"].to_list()
    assert got == [f"user_{i}" for i in range(4990, 5000)]
    got = lf.filter(pl.col("score") > 10).select("id").head(2).collect()["id"].to_list()
    assert got == [10, 11]


def test_scan_plans_as_eager_polars_gives_them(engine: str) -> None:
    """Each plan equals read_toon followed by the same operations: a slice pushed with a predicate
    comes first (head(n).filter(p) gave the filter's first n rows), a plan that asks the scan for
    no column still has the rows (a row index or a count made by Polars gave 0 rows), and a schema
    orders the columns as read_csv does."""
    data = _big(5000)
    lf, df = tp.scan_toon(data, batch_size=700), tp.read_toon(data)
    plans: list[Callable[[Any], Any]] = [
        lambda f: f.head(20).filter(pl.col("id") % 3 == 0),
        lambda f: f.slice(0, 100).filter(pl.col("score") > 50).select("name"),
        lambda f: f.head(300).filter(pl.col("id") > 100).head(5),
        lambda f: f.filter(pl.col("id") % 7 == 0).head(4),
        lambda f: f.with_row_index("r").select("r"),
        lambda f: f.select(pl.int_range(pl.len()).alias("i")),
        lambda f: f.with_row_index("r").select(pl.col("r").sum()),
        lambda f: f.head(30).with_row_index("r").filter(pl.col("id") > 25).select("r"),
    ]
    for plan in plans:
        assert_frame_equal(plan(lf).collect(), plan(df.lazy()).collect())
    assert tp.scan_toon(data, n_rows=40).head(30).filter(pl.col("id") > 25).collect().height == 4
    doc, schema = b"[2]{x,s}:\n  1,a\n  2,b\n", {"s": pl.String, "x": pl.Int64}
    want = pl.read_csv(b"x,s\n1,a\n2,b\n", schema=schema)
    assert_frame_equal(tp.read_toon(doc, schema=schema), want)
    assert_frame_equal(tp.scan_toon(doc, schema=schema).collect(), want)


def test_an_empty_array_among_tables_is_a_table_of_no_rows(engine: str) -> None:
    """``key: []`` (how dumps writes an empty list) at the path has no rows, as ``[0]{...}:`` has."""
    doc = toonstream.dumps({"g": [{"rows": [{"a": 1}]}, {"rows": []}, {"rows": [{"a": 2}]}]}).encode()
    assert b"rows: []" in doc
    assert tp.read_toon(doc, path="g.item.rows")["a"].to_list() == [1, 2]
    assert list(toonstream.rows(doc, "g.item.rows")) == [(1,), (2,)]
    for empty in (b"rows: []", b"rows[0]:"):
        reader = toonstream.rows(empty, "rows")
        assert list(reader) == [] and reader.columns is None
    with pytest.raises(ToonDecodeError, match="not a tabular array"):
        list(toonstream.rows(b"rows[1]: 5", "rows"))
    # non-strict, items past a declared 0: not empty after all (they were dropped silently)
    for doc, line in [(b"rows[0]:\n  - id: 1\n  - id: 2\n", 2), (b"rows[0]: 1,2", 1), (b"rows[0]:\n  - 1\n", 2)]:
        with pytest.raises(ToonDecodeError, match="not a tabular array") as e:
            list(toonstream.rows(doc, "rows", strict=False))
        assert (e.value.line, e.value.line_text) == (line, doc.decode().splitlines()[line - 1])
    # the refusal quotes its line, under any chunking
    doc = b"a: 1\r\nb:\n  c: 2\nrows: 5\ntail: 1\n"
    for size in (1, 2, 7, len(doc)):
        with pytest.raises(ToonDecodeError) as e:
            list(toonstream.rows([doc[i : i + size] for i in range(0, len(doc), size)], "rows"))
        assert (e.value.code, e.value.line, e.value.line_text) == ("not_tabular", 4, "rows: 5")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(tables(), st.integers(min_value=1, max_value=7))
@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_property_fixed_schema_batches_equal_rows(chunking: Any, table: Any, batch_size: int) -> None:
    # With the types given, every batch goes through the quick per-type
    # checks (not the full classification): same values as rows().
    rows, delim = table
    if not rows:
        return
    text = toonstream.dumps({"t": rows}, delimiter=delim)
    names, dtypes, expected = reference(text, "t")
    df = tp.read_toon(text.encode(), path="t", schema=dict(zip(names, dtypes)), batch_size=batch_size)
    assert [df.schema[n] for n in names] == dtypes
    got = df.rows()
    assert len(got) == len(expected)
    for g, r in zip(got, expected):
        assert all(same(x, y) for x, y in zip(g, r)), (g, r)


@pytest.mark.parametrize(
    "token,code",
    [("+5", "type_mismatch"), ("05", "type_mismatch"), ("-05", "type_mismatch"), ("1.5", "type_mismatch"),
     ("\"7\"", "type_mismatch"), ("99999999999999999999", "type_mismatch"), ("1_000", "type_mismatch")],
)
def test_int_column_rejects_loose_tokens_after_inference(token: str, code: str, chunking: Any) -> None:
    lines = [f"  {i},x" for i in range(50)] + [f"  {token},x"] + [f"  {i},x" for i in range(9)]
    text = "[60]{a,b}:\n" + "\n".join(lines) + "\n"
    with pytest.raises(ToonDecodeError) as e:
        tp.read_toon(text.encode(), infer_schema_length=10, batch_size=16)
    assert e.value.code == code and e.value.line == 52
    # Looked at whole, the column gets a type that holds every value.
    check_frame(text)


def test_string_column_numbers_after_inference_are_canonical(chunking: Any) -> None:
    lines = [f"  w{i}" for i in range(30)] + ["  1e5", "  1.50", "  -0", "  007", "  \"1e5\""]
    text = "[35]{a}:\n" + "\n".join(lines) + "\n"
    col = tp.read_toon(text.encode(), infer_schema_length=10, batch_size=8)["a"]
    assert col.dtype == pl.String
    assert col.to_list()[30:] == ["100000", "1.5", "0", "007", "1e5"]


def test_string_column_numbers_keep_their_digits(engine: str, chunking: Any) -> None:
    # A number in a String column is its exact canonical text (as decode_to_json writes it),
    # not its float's: in the decoder's rows (a short table, a row with an escape) and the split runs.
    numbers = ["123456789012345678.99", "1.00000000000000000000001", "-0.0", "1.50", "1e5", "1E-7",
               "12345678901234567890123e-3", "-1e-400", "1e400", "0.1"]
    want = ["123456789012345678.99", "1.00000000000000000000001", "0", "1.5", "100000", "1e-7",
            "12345678901234567890.123", "-1e-400", "1e+400", "0.1"]
    for lines in (["  w"] + [f"  {n}" for n in numbers],  # (few rows: the decoder's)
                  [f'  "w\\\\{k}"' if k % 3 else f"  {numbers[k % len(numbers)]}" for k in range(3000)]):
        text = f"[{len(lines)}]{{a}}:\n" + "\n".join(lines) + "\n"
        col = tp.read_toon(text.encode(), batch_size=512)["a"]
        assert col.dtype == pl.String
        got = [t for t in col.to_list() if not t.startswith("w")]
        assert got == [want[numbers.index(line.strip())] for line in lines if not line.strip().startswith(('w', '"'))]
    check_frame("[3]{a}:\n  x\n  123456789012345678.99\n  1e5\n")


@pytest.mark.parametrize("column", [0, 1])


def test_number_limit_holds_in_every_column_type(column: int, engine: str, chunking: Any) -> None:
    # A number token longer than max_number_length is the decoder's
    # number_too_long wherever it sits: a String column decided from the
    # first rows (which once took it as text) as well as an Int64 one.
    lines = [f"  a{i},{i}" for i in range(60)]
    cells = ["a60", "60"]
    cells[column] = "9" * 25
    lines.append("  " + ",".join(cells))
    text = "[61]{s,n}:\n" + "\n".join(lines) + "\n"
    with pytest.raises(ToonDecodeError) as want:
        toonstream.loads(text, max_number_length=20)
    with pytest.raises(ToonDecodeError) as got:
        tp.read_toon(text.encode(), infer_schema_length=10, batch_size=16, max_number_length=20)
    assert (got.value.code, got.value.line, got.value.column) == (want.value.code, want.value.line, want.value.column)
    assert got.value.code == "number_too_long"


def _same_error_as_loads(text: str, read: dict[str, Any], **options: Any) -> ToonDecodeError:
    with pytest.raises(ToonDecodeError) as want:
        toonstream.loads(text, **options)
    with pytest.raises(ToonDecodeError) as got:
        tp.read_toon(text.encode(), **read, **options)
    assert (got.value.code, got.value.line, got.value.column) == (want.value.code, want.value.line, want.value.column)
    return got.value


@pytest.mark.parametrize("read", [{}, {"infer_schema_length": 10}, {"infer_schema_length": 10, "batch_size": 16}])
@pytest.mark.parametrize("late_first", [False, True])
def test_the_documents_first_bad_number_wins_across_columns(
    late_first: bool, read: dict[str, Any], engine: str, chunking: Any
) -> None:
    # Two columns with a bad number each: the earlier line's error, whichever column (the
    # converter's errors were once raised column by column).
    lines = [f"  {i},{i}" for i in range(60)]
    early, late = (10, 50)
    lines[early] = f"  {early},1e111111111111111111" if not late_first else f"  {'1' * 30},{early}"
    lines[late] = f"  {'1' * 30},{late}" if not late_first else f"  {late},1e111111111111111111"
    text = "[60]{a,b}:\n" + "\n".join(lines) + "\n"
    assert _same_error_as_loads(text, read, max_number_length=20).line == early + 2


@pytest.mark.parametrize("token", ["123456", "1.23456", "-12345"])
def test_number_limit_holds_in_int_and_float_columns(token: str, engine: str, chunking: Any) -> None:
    # (the native splitter types numbers of up to 40 characters itself: a smaller limit
    # leaves the table to the reference's splitter, which applies it)
    lines = [f"  {i % 7}" for i in range(40)] + [f"  {token}"]
    text = "[41]{a}:\n" + "\n".join(lines) + "\n"
    read = {"infer_schema_length": 10, "batch_size": 16}
    assert _same_error_as_loads(text, read, max_number_length=5).code == "number_too_long"


def test_decimal_columns_equal_the_values() -> None:
    values = [10**20 + i for i in range(300)] + [None, -(10**37), 10**38 - 1]
    text = toonstream.dumps([{"id": i, "big": v} for i, v in enumerate(values)])
    col = tp.read_toon(text.encode())["big"]
    assert col.dtype == pl.Decimal(38, 0)
    assert col.to_list() == [None if v is None else Decimal(v) for v in values]


def test_round_trip_more_types_with_overrides() -> None:
    df = pl.DataFrame(
        {
            "i8": pl.Series([1, -2, None], dtype=pl.Int8),
            "u64": pl.Series([0, 2**63 - 1, 5], dtype=pl.UInt64),
            "f32": pl.Series([1.5, None, -0.25], dtype=pl.Float32),
            "cat": pl.Series(["a", "b", "a"], dtype=pl.Categorical),
            "big": pl.Series([10**20, -(10**20) + 7, None], dtype=pl.Decimal(38, 0)),  # < 1e21: plain digits
        }
    )
    buf = io.StringIO()
    tp.write_toon(df, buf)
    text = buf.getvalue()
    assert text == toonstream.dumps(df.to_dicts())
    back = tp.read_toon(text.encode())
    assert back.schema == pl.Schema(
        {"i8": pl.Int64, "u64": pl.Int64, "f32": pl.Float64, "cat": pl.String, "big": pl.Decimal(38, 0)}
    )
    back = tp.read_toon(text.encode(), schema=dict(df.schema))
    assert_frame_equal(back, df)


def test_list_columns_are_not_tables() -> None:
    # A List column makes the rows list items, not a table: they are read
    # back as an array of records (tests/test_nested_frames.py).
    df = pl.DataFrame({"a": [1, 2], "tags": [["x"], ["y", "z"]]})
    buf = io.StringIO()
    tp.write_toon(df, buf)
    assert not buf.getvalue().startswith("[2]{")
    assert_frame_equal(tp.read_toon(buf.getvalue().encode(), path=""), df)


@pytest.mark.parametrize("first", ["type", "width", "quoted"])
@pytest.mark.parametrize("options", [
    {"infer_schema_length": 10, "batch_size": 16},
    {"schema_overrides": {"a": pl.Int64}},  # one batch, one decoder feed: the bad row's feed
    {"infer_schema_length": 10_000},  # errors before types are decided: typed with what is known
])
def test_errors_come_in_document_order(first: str, options: dict[str, Any], chunking: Any) -> None:
    # Batches are typed in a worker thread while the next ones are scanned,
    # and a decoder feed (64 KiB) is read whole: whichever error stands first
    # in the input is the one raised all the same.
    n = 600
    lines = [f"  {i},x" for i in range(n)]
    type_at, width_at = (150, 400) if first != "width" else (400, 150)
    lines[type_at] = "  oops,x"
    lines[width_at] = "  1,2,3" if first != "quoted" else '  1,"x'  # (a quoted line: the fast path's replay)
    text = f"[{n}]" + "{a,b}:\n" + "\n".join(lines) + "\n"
    for read in (tp.read_toon, ta.read_table):
        kw = dict(options)
        if read is ta.read_table and "schema_overrides" in kw:
            kw = {"schema": {"a": pa.int64(), "b": pa.string()}}
        if "infer_schema_length" in kw and first != "width" and kw.get("batch_size") is None:
            # every row read before the types are decided: "oops" is a fine
            # string, and the later error is the only one
            want = ("unterminated_string" if first == "quoted" else "width_mismatch", width_at + 2)
        else:
            want = ("type_mismatch", type_at + 2) if first != "width" else ("width_mismatch", width_at + 2)
        with pytest.raises(ToonDecodeError) as e:
            read(text.encode(), **kw)
        assert (e.value.code, e.value.line) == want, read


def test_stopping_early_leaves_no_thread_behind() -> None:
    import threading

    before = threading.active_count()
    frames = tp.iter_frames(_big(100_000), batch_size=1000)
    next(frames)
    frames.close()
    assert threading.active_count() == before


def test_integer_beyond_str_limit_reads_as_string() -> None:
    # 5,000 digits: more than str() converts by default; beyond 38 digits, so String.
    big = "7" * 5000
    df = tp.read_toon(f"[2]{{a}}:\n  1\n  {big}\n".encode(), infer_schema_length=None)
    assert df["a"].dtype == pl.String and df["a"].to_list() == ["1", big]


@pytest.mark.slow
def test_crlf_tables_take_the_column_path(chunking: Any, monkeypatch: Any) -> None:
    # Either engine's splitter (the CRs are line terminators, not cell bytes).
    splits: list[int] = []
    splitter = _frames._splitter()

    def counting(*args: Any) -> Any:
        got = splitter(*args)
        if not isinstance(got, tuple):  # (a tuple is a verdict)
            splits.append(got.rows)
        return got

    monkeypatch.setattr(_frames, "_splitter", lambda *_: counting)
    body = "".join(f"  {i},x{i},{i}.5\r\n" if i % 50 else f'  {i},"a,b{i}",{i}.5\r\n' for i in range(20000))
    crlf = "t[20000]{a,b,c}:\r\n" + body + "u: 1\r\n"
    df = check_frame(crlf, "t")
    assert df.height == 20000 and sum(splits) > 15000  # most rows went column-wise
    # mixed line endings: the exact path, same result
    mixed = crlf.replace("\r\n", "\n", 700)
    check_frame(mixed, "t")


_RUN_LINE = st.lists(
    st.sampled_from(["a", "1", " ", ",", "#", "\t", '"', ":", "\\", "é", "-"]), min_size=1, max_size=6
).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(_RUN_LINE, min_size=1, max_size=12), st.sampled_from([0, 2]), st.integers(1, 12))
def test_reference_runs_split_plain_lines_and_leave_the_rest(bodies: list[str], plen: int, cap: int) -> None:
    # The reference's table_columns against a line-by-line reading of its rule.
    lines = [" " * plen + b for b in bodies]
    data = ("\n".join(lines) + "\n").encode()
    got = table_columns(data, 0, len(data), plen, ",", 2, cap)
    lines = lines[:cap]
    if any(ln[plen : plen + 1] in ("", " ") for ln in lines):
        assert got == ("not_indented", False)
        return

    def special(ln: str) -> bool:
        return any(c in ln for c in '":\\\r\x00') or ln[plen] in "#\t"

    plain = [ln for ln in lines if not special(ln)]
    if any(ln.count(",") != 1 for ln in plain):
        assert got == ("unhandled", False)
        return
    assert isinstance(got, TokenRun)
    want_specials = []
    offset = 0
    for k, ln in enumerate(lines):
        size = len(ln.encode()) + 1
        if special(ln):
            want_specials.append((k, offset, offset + size))
        offset += size
    assert (got.lines, got.end, got.rows, got.specials) == (len(lines), offset, len(plain), want_specials)
    cells = [ln.split(",") for ln in plain]
    assert got.columns == ([[c[0] for c in cells], [c[1] for c in cells]] if plain else None)


# ---------------------------------------------------------------- inference: exactly the first rows


def _outcome(fn: Any) -> Any:
    try:
        return "ok", fn()
    except ToonDecodeError as e:
        return "error", (e.code, e.line)


def test_a_decimal_column_takes_integers_only() -> None:
    # Beyond int64 -> Decimal(38, 0); a later fraction, exponent or quoted
    # string is a type mismatch at its line, never rounded into the column.
    for later, line in (("1.5", 4), ('"42"', 4), ("1e3", 4), ("abc", 4)):
        doc = f"[3]{{a}}:\n  9223372036854775808\n  5\n  {later}".encode()
        for batch_size in (1, 2, 65_536):
            with pytest.raises(ToonDecodeError) as e:
                tp.read_toon(doc, infer_schema_length=2, batch_size=batch_size)
            assert (e.value.code, e.value.line) == ("type_mismatch", line)
    df = tp.read_toon(b"[3]{a}:\n  9223372036854775808\n  5\n  null", infer_schema_length=2, batch_size=1)
    assert df.to_series().to_list() == [Decimal(9223372036854775808), Decimal(5), None]


@pytest.mark.parametrize("infer", [0, 1, 2, 3, 99, 100, 101, None])
@pytest.mark.parametrize("batch_size", [1, 7, 65_536])
@pytest.mark.parametrize("dates", [False, True])
def test_types_come_from_exactly_infer_schema_length_rows(infer: int | None, batch_size: int, dates: bool) -> None:
    # Rows 0-99 are floats; then a 17-digit int (not exact as a float) and an
    # int beyond 38 digits: String only if inference saw them; otherwise a
    # type mismatch at the first of them -- the same for scan_toon.  With
    # try_parse_dates, ISO dates are Date, and a later non-date (row 110) is
    # a type mismatch in the same way.
    rows: list[dict[str, Any]] = [
        {"a": i + 0.5, "n": None, "s": i, "d": f"2024-01-{i % 28 + 1:02d}", "t": f"2024-02-{i % 28 + 1:02d}"}
        for i in range(150)
    ]
    rows[120]["a"] = 12345678901234567
    rows[130]["a"] = 10**40
    rows[140]["s"] = "x"
    rows[110]["d"] = "soon"
    doc = toonstream.dumps(rows).encode()
    kw: dict[str, Any] = dict(infer_schema_length=infer, batch_size=batch_size, try_parse_dates=dates)
    read = _outcome(lambda: tp.read_toon(doc, **kw))
    scan = _outcome(lambda: tp.scan_toon(doc, **kw).collect())
    if read[0] == "ok":
        assert scan[0] == "ok"
        assert_frame_equal(read[1], scan[1])
        df = read[1]
        if infer is None:
            t = pl.Date if dates else pl.String
            assert df.schema == pl.Schema({"a": pl.String, "n": pl.Null, "s": pl.String, "d": pl.String, "t": t})
        else:
            assert infer == 0 and df.schema == pl.Schema({c: pl.String for c in "ansdt"})
        assert df["a"][120] == "12345678901234567" and df["a"][130] == "1" + "0" * 40
    else:
        line = 2 + 110 if dates else 2 + 120
        assert read == scan == ("error", ("type_mismatch", line if infer is None or infer < 141 else 0))


def test_a_null_column_is_null_when_inference_saw_the_whole_table() -> None:
    doc = b"[3]{a,b}:\n  null,1\n  null,2\n  null,3"
    for infer in (3, 4, None):
        assert tp.read_toon(doc, infer_schema_length=infer).schema["a"] == pl.Null
        assert tp.scan_toon(doc, infer_schema_length=infer).collect().schema["a"] == pl.Null
    assert tp.read_toon(doc, infer_schema_length=2).schema["a"] == pl.String
    assert tp.scan_toon(doc, infer_schema_length=2).collect().schema["a"] == pl.String


def test_scan_does_not_round_into_inferred_types() -> None:
    # The probe's types are checked as inferred ones in the full read: a wide
    # int after 100 floats is an error (as in read_toon), not a rounded float.
    rows = [{"a": i + 0.5} for i in range(150)]
    rows[120]["a"] = 12345678901234567
    doc = toonstream.dumps(rows).encode()
    with pytest.raises(ToonDecodeError) as e:
        tp.scan_toon(doc).collect()
    assert (e.value.code, e.value.line) == ("type_mismatch", 122)
    assert "inferred from the first 100 rows" in str(e.value)
    # a user's schema may round (it was asked for)
    assert tp.scan_toon(doc, schema={"a": pl.Float64}).collect()["a"][120] == 12345678901234567.0


@pytest.mark.parametrize("batch_size", [1, 7, 65_536])
def test_the_first_misfit_in_the_document_is_reported_whatever_its_column(batch_size: int) -> None:
    rows: list[dict[str, Any]] = [{"a": i + 0.5, "s": i} for i in range(150)]
    rows[130]["a"] = "x"  # column a, later
    rows[120]["s"] = "y"  # column s, first
    with pytest.raises(ToonDecodeError) as e:
        tp.read_toon(toonstream.dumps(rows).encode(), batch_size=batch_size)
    assert (e.value.code, e.value.line) == ("type_mismatch", 122) and "'s'" in str(e.value)


def test_an_override_polars_cannot_cast_to_is_a_type_mismatch() -> None:
    # (polars raises InvalidOperationError for Int64 -> List even with strict=False)
    doc = b"t[2]{a,b}:\n  1,x\n  2,y\n"
    with pytest.raises(ToonDecodeError) as info:
        tp.read_toon(doc, schema_overrides={"a": pl.List(pl.Int64)})
    assert info.value.code == "type_mismatch" and info.value.line == 2
    assert "does not convert to List(Int64)" in str(info.value)


class _Reads(io.RawIOBase):
    """A binary file whose reads return pieces of the sizes ``sizes`` (cycled)."""

    def __init__(self, data: bytes, sizes: list[int]) -> None:
        self.data, self.sizes, self.pos, self.k = data, sizes, 0, 0

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        size = self.sizes[self.k % len(self.sizes)]
        self.k += 1
        out = self.data[self.pos : self.pos + size]
        self.pos += len(out)
        return out


def _read_outcome(source: Any) -> Any:
    try:
        return tp.read_toon(source).to_dicts()
    except ToonDecodeError as e:
        return e.code, e.line, e.column


@pytest.mark.parametrize(
    "doc",
    [
        # a table across many blocks, quoted and null cells, then trailing lines
        b"rows[300]{id,name,x}:\n"
        + b"".join(b'  %d,"n,%d",%s\n' % (i, i, b"null" if i % 7 == 0 else b"%d.5" % i) for i in range(300)),
        # an error further on: which one is raised must not depend on the reads
        b"[3]:\n  - summary\n  - id: 1\n]}   name: Ada\n  - [2]:\n    - id:2\n" * 20,
        b"rows[50]{a,b}:\n" + b"".join(b"  %d,%s\n" % (i, b"x" * (i * 7)) for i in range(50)) + b"  1,2\n",
    ],
)
def test_the_reads_of_a_source_do_not_change_the_outcome(doc: bytes, monkeypatch: Any) -> None:
    # The reader cuts its input into blocks of CHUNK bytes however the source
    # is read, so the decoder is fed at the same places: rows, errors and
    # their locations are those of the whole input.
    monkeypatch.setattr(_frames, "CHUNK", 128)
    monkeypatch.setattr(_frames, "FEED", 4096)  # (a block fed at once)
    expected = _read_outcome(doc)
    for sizes in ([1], [7], [128], [127, 129], [3, 300, 64], [len(doc)]):
        assert _read_outcome(_Reads(doc, sizes)) == expected, sizes



def test_bad_number_in_inferred_rows_comes_before_any_batch(engine: str, chunking: Any) -> None:
    # The types are decided as soon as the first batch holds the inferred
    # rows (so that the splitter types the runs after them); a bad number
    # among those rows is still raised where the whole batch is decided:
    # no frame comes before it.  (Rows the decoder reads itself, as all of
    # them are when they fit in its first feed, raise their error as the
    # decoder meets it, the rows before it typed first.)
    lines = [f"  {i},{i}" for i in range(400)]
    lines[250] = "  250,1e111111111111111111"
    text = "[400]{a,b}:\n" + "\n".join(lines) + "\n"
    with pytest.raises(ToonDecodeError) as want:
        toonstream.loads(text)
    heights = []
    with pytest.raises(ToonDecodeError) as got:
        for frame in tp.iter_frames(text.encode(), infer_schema_length=300, batch_size=1000):
            heights.append(frame.height)
    assert (got.value.code, got.value.line, got.value.column) == (want.value.code, want.value.line, want.value.column)
    _, feed = chunking
    assert heights == ([] if feed < len(text) else [250])


@pytest.mark.parametrize("every", [2, 3, 50, 997])
def test_fast_and_decoder_rows_back_in_order(engine: str, every: int, monkeypatch: Any) -> None:
    """Rows the decoder reads (here: a quoted cell followed by a space, which no splitter takes)
    among plain rows, every ``every``-th row: a batch puts the two kinds back in row order by
    slices when they interleave in a few runs, by a gather when in many (both counted here);
    each column as ``loads`` gives it, whatever its type."""
    runs_seen: list[int] = []
    runs = _frames._Batch.runs

    def counting(self: Any) -> Any:
        got = runs(self)
        runs_seen.append(0 if got is None else len(got))
        return got

    monkeypatch.setattr(_frames._Batch, "runs", counting)
    n = 3000
    lines = [f"[{n}]{{i,f,s,b,z}}:"]
    for i in range(n):
        s = '"odd" ' if i % every == 0 else f"s{i}"
        lines.append(f"  {i},{i / 4},{s},{'true' if i % 2 else 'false'},{'null' if i % 5 else i}")
    doc = "\n".join(lines) + "\n"
    want = pl.DataFrame(toonstream.loads(doc), schema={"i": pl.Int64, "f": pl.Float64, "s": pl.String, "b": pl.Boolean, "z": pl.Int64})
    for batch_size in (None, 700):
        runs_seen.clear()
        got = tp.read_toon(doc.encode(), **({} if batch_size is None else {"batch_size": batch_size}))
        assert_frame_equal(got, want)
        assert max(runs_seen) > 1
    if every <= 3:
        assert max(runs_seen) > _frames._SLICED_RUNS  # (the gather's way, too)


@pytest.mark.parametrize("doc", [b"[]", b"[0]:", b"[1]:\n  - a: 1", b"[2]{a}:\n  1\n  2", b"t[1]{a}:\n  1", b"x[0]:"])
def test_the_last_line_with_or_without_its_line_end(engine: str, doc: bytes) -> None:
    """A document read the same whether its last line ends in LF or not (the reader took an
    empty root array that the last line opens for no table); an empty frame round trips."""
    def read(data: bytes, **kw: Any) -> Any:
        try:
            return tp.read_toon(data, **kw)
        except ToonDecodeError as e:
            return (e.code, e.line)

    for kw in ({}, {"schema": {"a": pl.Int64}}):
        assert _same(read(doc, **kw), read(doc + b"\n", **kw)), (doc, kw)
    empty = pl.DataFrame({"id": pl.Series([], dtype=pl.Int64)})
    assert_frame_equal(tp.read_toon(tp.write_toon(empty).encode(), schema=empty.schema), empty)


def _same(a: Any, b: Any) -> bool:
    return a.equals(b) if isinstance(a, pl.DataFrame) and isinstance(b, pl.DataFrame) else a == b


@pytest.mark.parametrize(
    ("doc", "options", "named"),
    [
        (b"t[2]{a,b}:\n  1,x\n  2.5,y\n", {"schema_overrides": {"a": pl.Int64}}, "(the dtype given in schema_overrides)"),
        (b"t[2]{a,b}:\n  1,x\n  2.5,y\n", {"schema_overrides": [pl.Int64, pl.String]}, "(the dtype given in schema_overrides)"),
        (b"t[2]{a,b}:\n  1,x\n  2.5,y\n", {"schema": {"a": pl.Int64, "b": pl.String}}, "(the schema's dtype)"),
        (b"t[2]:\n  - a: 1\n    b: x\n  - a: 2.5\n    b: y\n", {"schema_overrides": {"a": pl.Int64}},
         "(the dtype given in schema_overrides)"),
    ],
)
def test_a_misfit_names_the_argument_that_gave_its_dtype(engine: str, doc: bytes, options: dict[str, Any], named: str) -> None:
    with pytest.raises(ToonDecodeError) as e:
        tp.read_toon(doc, **options)
    assert named in e.value.msg and e.value.line in (3, 4)

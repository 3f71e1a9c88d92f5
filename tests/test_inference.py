"""Table readers' column names and type inference, the same in every entry
point: read_toon, scan_toon, iter_batches, read_table and the CLI's
``decode --to parquet|arrow|csv``.

- column names: a keyed table's key_field colliding with a field, repeated
  fields of a non-strict header, the empty name, a struct leaf "a"."b" next
  to a field named "a.b";
- infer_schema_length: one default and one meaning everywhere (N rows,
  0 = every column String, None / ``all`` = every row);
- type_mismatch errors locate the cell: its line, its column, the line text;
- ``--schema-overrides`` type names; ``try_parse_dates`` against polars'
  own ``read_csv(try_parse_dates=True)``.
"""

from __future__ import annotations

import datetime as dt
import inspect
import io
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from polars.testing import assert_frame_equal

import toonstream
import toonstream.arrow as ta
import toonstream.polars as tp
from toonstream import ToonDecodeError, _frames
from toonstream import cli

from test_frames import chunking  # noqa: E402,F401  (the fixture: the frame reader's chunk and feed sizes)


def _scan(doc: Any, **kw: Any) -> pl.DataFrame:
    return tp.scan_toon(doc, **kw).collect()


def _batches(doc: Any, **kw: Any) -> pa.Table:
    return pa.Table.from_batches(list(ta.iter_batches(doc, **kw)))


READERS: list[Callable[..., Any]] = [tp.read_toon, _scan, ta.read_table, _batches]
READER_IDS = ["read_toon", "scan_toon", "read_table", "iter_batches"]


def _cli(*args: str, input: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "toonstream", *args], input=input, capture_output=True, timeout=120, cwd=cwd
    )


# ---------------------------------------------------------------- column names


@pytest.mark.parametrize("read", READERS, ids=READER_IDS)
def test_key_field_named_like_a_field_is_a_name_collision(read: Callable[..., Any]) -> None:
    doc = b"n: 1\nt[2:]{key,v}:\n  a: 1,2\n  b: 3,4\n"
    with pytest.raises(ToonDecodeError) as e:
        read(doc)
    assert (e.value.code, e.value.line, e.value.column) == ("name_collision", 2, 1)
    assert e.value.line_text == "t[2:]{key,v}:" and "key_field" in e.value.msg
    # the fix the message names
    got = read(doc, key_field="id")
    assert got.column_names if isinstance(got, pa.Table) else got.columns == ["id", "key", "v"]
    assert list(got.to_pydict()["key"] if isinstance(got, pa.Table) else got["key"]) == [1, 3]


@pytest.mark.parametrize("read", READERS, ids=READER_IDS)
@pytest.mark.parametrize("header", ["[1]{a,a}:", "[1]{g{b,b}}:", "[1:]{key,key}:"])
def test_repeated_fields_of_a_lenient_header_are_a_name_collision(read: Callable[..., Any], header: str) -> None:
    doc = f"{header}\n  {'k: ' if ':]' in header else ''}1,2\n".encode()
    with pytest.raises(ToonDecodeError) as e:
        read(doc, strict=False)
    assert (e.value.code, e.value.line, e.value.line_text) == ("name_collision", 1, header)


@pytest.mark.parametrize("chunk", [False, True])
def test_the_empty_name_is_kept(chunk: bool, monkeypatch: Any) -> None:
    if chunk:
        monkeypatch.setattr(_frames, "CHUNK", 64)
        monkeypatch.setattr(_frames, "FEED", 16)
    doc = b'[3]{"",g{"",x}}:\n' + b"".join(b"  %d,%d,y\n" % (i, i * 2) for i in range(3))
    df = tp.read_toon(doc)
    assert df.columns == ["", "g"] and df.schema["g"] == pl.Struct({"": pl.Int64, "x": pl.String})
    assert df.to_dicts() == toonstream.loads(doc.decode())
    assert_frame_equal(_scan(doc), df)
    t = ta.read_table(doc)
    assert t.column_names == ["", "g"] and t.to_pylist() == df.to_dicts()
    # an Arrow schema naming the empty column
    schema = pa.schema([("", pa.int8()), ("g", pa.struct([("", pa.int16()), ("x", pa.large_string())]))])
    assert ta.read_table(doc, schema=schema).schema == schema
    assert tp.read_toon(doc, schema_overrides={"": pl.Int8}).schema[""] == pl.Int8


def test_a_struct_leaf_and_a_field_with_a_dotted_name_are_two_columns() -> None:
    # "a.b" (a field) and a{b} (a group): types are kept apart, in read_toon
    # and in scan_toon (whose probe hands its types to the full read).
    doc = b'[2]{"a.b",a{b}}:\n  1,x\n  2,y\n'
    df = tp.read_toon(doc)
    assert df.schema == pl.Schema({"a.b": pl.Int64, "a": pl.Struct({"b": pl.String})})
    assert_frame_equal(_scan(doc), df)
    assert df.to_dicts() == toonstream.loads(doc.decode())
    # a name is a top-level column first, else a dotted struct leaf
    assert tp.read_toon(doc, schema_overrides={"a.b": pl.Float64}).schema["a.b"] == pl.Float64
    assert tp.read_toon(doc, schema_overrides={"a.b": pl.Float64}).schema["a"] == pl.Struct({"b": pl.String})
    doc2 = b"[2]{a{b}}:\n  1\n  2\n"
    assert tp.read_toon(doc2, schema_overrides={"a.b": pl.Int8}).schema["a"] == pl.Struct({"b": pl.Int8})


@pytest.mark.slow
def test_cli_name_collisions_are_one_line_errors(tmp_path: Path) -> None:
    keyed = tmp_path / "keyed.toon"
    keyed.write_text("[2:]{key,v}:\n  a: 1,2\n  b: 3,4\n")
    for to in ("parquet", "arrow", "csv"):
        out = tmp_path / f"o.{to}"
        p = _cli("decode", str(keyed), "--to", to, "-o", str(out))
        err = p.stderr.decode()
        assert p.returncode == 1 and not out.exists(), err
        assert err.count("\n") == 1 and err.startswith(f"{keyed}:1:1: column name collision")
        assert "--key-field" in err and "Traceback" not in err
        assert _cli("decode", str(keyed), "--to", to, "-o", str(out), "--key-field", "id").returncode == 0
    # CSV names struct leaves group.field: a field named "a.b" collides with a{b}
    dots = tmp_path / "dots.toon"
    dots.write_text('[1]{"a.b",a{b}}:\n  1,2\n')
    p = _cli("decode", str(dots), "--to", "csv")
    assert p.returncode == 1 and p.stdout == b""
    assert p.stderr.decode().startswith(f"{dots}:1:1: column name collision") and p.stderr.count(b"\n") == 1
    p = _cli("decode", str(dots), "--to", "parquet", "-o", str(tmp_path / "d.parquet"))
    assert p.returncode == 0, p.stderr
    assert pq.read_table(tmp_path / "d.parquet").to_pylist() == [{"a.b": 1, "a": {"b": 2}}]


# ---------------------------------------------------------------- infer_schema_length


@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_one_default_and_one_meaning_of_infer_schema_length(tmp_path: Path) -> None:
    defaults = {
        f.__name__: inspect.signature(f).parameters["infer_schema_length"].default
        for f in (tp.read_toon, tp.scan_toon, tp.iter_frames, ta.iter_batches)
    }
    assert set(defaults.values()) == {cli._INFER_DEFAULT}, defaults
    rows: list[dict[str, Any]] = [{"a": i} for i in range(150)]
    rows[120]["a"] = "x"
    src = tmp_path / "t.toon"
    src.write_text(toonstream.dumps(rows))
    out = tmp_path / "t.parquet"
    # default: the CLI fails where read_toon fails, at the same place
    with pytest.raises(ToonDecodeError) as e:
        tp.read_toon(src)
    p = _cli("decode", str(src), "--to", "parquet", "-o", str(out))
    assert p.returncode == 1 and not out.exists()
    assert p.stderr.decode().startswith(f"{src}:{e.value.line}:{e.value.column}: column 'a' holds a string")
    assert "--schema-overrides" in p.stderr.decode() and "--infer-schema-length" in p.stderr.decode()
    # all rows: None in the library, "all" in the CLI
    p = _cli("decode", str(src), "--to", "parquet", "-o", str(out), "--infer-schema-length", "all")
    assert p.returncode == 0, p.stderr
    assert pl.read_parquet(out).equals(tp.read_toon(src, infer_schema_length=None))
    # 0: every column String, in both
    p = _cli("decode", str(src), "--to", "parquet", "-o", str(out), "--infer-schema-length", "0")
    assert p.returncode == 0, p.stderr
    assert pl.read_parquet(out).schema == tp.read_toon(src, infer_schema_length=0).schema == {"a": pl.String}
    for bad in ("-1", "some"):
        p = _cli("decode", str(src), "--to", "parquet", "-o", str(out), "--infer-schema-length", bad)
        assert p.returncode == 2 and b"--infer-schema-length" in p.stderr


# ---------------------------------------------------------------- --schema-overrides


@pytest.mark.parametrize(
    "text, dtype",
    [
        ("Int64", pl.Int64()), ("int8", pl.Int8()), ("UInt32", pl.UInt32()), ("Float64", pl.Float64()),
        ("double", pl.Float64()), ("Float32", pl.Float32()), ("String", pl.String()), ("Utf8", pl.String()),
        ("large_string", pl.String()), ("Boolean", pl.Boolean()), ("bool", pl.Boolean()), ("Date", pl.Date()),
        ("date32", pl.Date()), ("Time", pl.Time()), ("Datetime", pl.Datetime("us")),
        ("Datetime(ms)", pl.Datetime("ms")), ("Datetime(us, UTC)", pl.Datetime("us", "UTC")),
        ("datetime(time_unit=ns, time_zone=Europe/Oslo)", pl.Datetime("ns", "Europe/Oslo")),
        ("timestamp[us, tz=UTC]", pl.Datetime("us", "UTC")), ("Decimal(38,0)", pl.Decimal(38, 0)),
        ("Decimal(10, 2)", pl.Decimal(10, 2)), ("decimal128(20, 4)", pl.Decimal(20, 4)),
    ],
)
def test_type_names(text: str, dtype: pl.DataType) -> None:
    assert _frames.parse_dtype(text) == dtype


@pytest.mark.parametrize("text", ["Foo", "Int64(3)", "Decimal(50, 0)", "Decimal(x)", "Datetime(s)", "Datetime(us, Nowhere/X)", ""])
def test_unknown_type_names(text: str) -> None:
    with pytest.raises(ValueError):
        _frames.parse_dtype(text)


def test_schema_overrides_lists() -> None:
    got = _frames.parse_schema_overrides('id=Int32, t=Datetime(us, UTC),"a,b=c"=Decimal(38,2), g.x = Date,')
    assert got == {"id": pl.Int32, "t": pl.Datetime("us", "UTC"), "a,b=c": pl.Decimal(38, 2), "g.x": pl.Date}
    for bad in ("id", "=Int64", '"a=Int64', "a=Int64,b"):
        with pytest.raises(ValueError):
            _frames.parse_schema_overrides(bad)


@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_cli_schema_overrides(tmp_path: Path) -> None:
    src = tmp_path / "t.toon"
    src.write_text('[2]{id,price,t,g{x}}:\n  1,1.25,"2024-01-05T10:00:00Z",5\n  2,3.5,"2024-01-06T11:30:00+01:00",6\n')
    out = tmp_path / "t.parquet"
    p = _cli(
        "decode", str(src), "--to", "parquet", "-o", str(out),
        "--schema-overrides", "id=Int8,price=Decimal(10,2)", "--schema-overrides", "t=Datetime(us, UTC),g.x=UInt16",
    )
    assert p.returncode == 0, p.stderr
    t = pq.read_table(out)
    assert t.schema.types == [pa.int8(), pa.decimal128(10, 2), pa.timestamp("us", tz="UTC"), pa.struct([("x", pa.uint16())])]
    assert t.column("t").to_pylist()[1] == dt.datetime(2024, 1, 6, 10, 30, tzinfo=dt.timezone.utc)
    # the library call it stands for gives the same table
    lib = tp.read_toon(src, schema_overrides=_frames.parse_schema_overrides("id=Int8,price=Decimal(10,2),t=Datetime(us, UTC),g.x=UInt16"))
    assert pl.read_parquet(out).equals(lib)
    # usage errors (exit 2, nothing written): an unknown type, an unknown column
    for spec, words in (("id=Integer", b"unknown type 'Integer'"), ("idd=Int8", b"no column 'idd'"), ("id", b"NAME=TYPE")):
        p = _cli("decode", str(src), "--to", "parquet", "-o", str(out.with_suffix(".x")), "--schema-overrides", spec)
        assert p.returncode == 2 and words in p.stderr, p.stderr
        assert not out.with_suffix(".x").exists()


# ---------------------------------------------------------------- where a misfit is


DOCS = {
    # name: (document, row line of the misfit, bad token)
    "plain": (b"[3]{a,b}:\n  1,2\n  3,4\n  5,x\n", 4, "x"),
    "spaced": (b"[3]{a,b}:\n  1 , 2\n  3,4\n  5,   x\n", 4, "x"),
    "quoted": (b'[3]{a,b}:\n  1,"q\\""\n  3,4\n  "z\\t",5\n', 4, '"z\\t"'),
    "simple quoted": (b'[3]{a,b}:\n  1,2\n  3,4\n  5,"x"\n', 4, '"x"'),
    "keyed": (b"[3:]{a,b}:\n  k: 1,2\n  j: 3,4\n  i: 5,x\n", 4, "x"),
    "keyed quoted key": (b'[3:]{a,b}:\n  k: 1,2\n  "j:,": 3,4\n  "i:": x,5\n', 4, "x"),
    "comments": (b"[3]{a,b}:\n  1,2\n  # c\n  3,4\n  # d\n  5,x\n", 6, "x"),
    "more after": (b"t[3]{a,b}:\n  1,2\n  3,4\n  5,x\nm: 1\n", 4, "x"),
    "list items": (b"g[2]:\n  - rows[1]{a,b}:\n      1,2\n  - rows[2]{a,b}:\n      3,4\n      5,x\n", 6, "x"),
    "no final newline": (b"[3]{a,b}:\n  1,2\n  3,4\n  x,5", 4, "x"),
    "tabs": (b"[3\t]{a\tb}:\n  1\t2\n  3\t4\n  5\tx\n", 4, "x"),
}


@pytest.mark.parametrize("name", list(DOCS))
@pytest.mark.parametrize("read", READERS, ids=READER_IDS)
def test_a_misfit_is_located_at_its_cell(name: str, read: Callable[..., Any], chunking: Any) -> None:
    doc, line, token = DOCS[name]
    path = "g.item.rows" if name == "list items" else None
    with pytest.raises(ToonDecodeError) as e:
        read(doc, infer_schema_length=2, path=path)
    lines = doc.decode().splitlines()
    assert (e.value.code, e.value.line) == ("type_mismatch", line)
    assert e.value.line_text == lines[line - 1]
    assert e.value.line_text[e.value.column - 1 :].startswith(token), (e.value.column, e.value.line_text)


@pytest.mark.parametrize("columns", [["b"], ["b", "a"], ["c", "b"]])
def test_a_misfit_is_located_with_a_projection(columns: list[str], chunking: Any) -> None:
    doc = b"[4]{a,b,c}:\n  1,2,3\n  4 ,5,6\n  7,8,9\n  xx, y,z\n"
    with pytest.raises(ToonDecodeError) as e:
        tp.read_toon(doc, infer_schema_length=3, columns=columns)
    assert (e.value.line, e.value.line_text) == (5, "  xx, y,z")
    assert e.value.line_text[e.value.column - 1] == {"b": "y", "c": "z"}[columns[0]]
    with pytest.raises(ToonDecodeError) as e2:
        tp.scan_toon(doc, infer_schema_length=3).select(columns).collect()
    # (the cell of whichever column it names: with or without the projection pushed down)
    assert e2.value.line == 5
    assert e2.value.column == {"'a'": 3, "'b'": 7, "'c'": 9}[e2.value.msg.split()[1]]


def test_a_misfit_deep_in_a_big_table_is_located(chunking: Any) -> None:
    rows: list[dict[str, Any]] = [{"a": i, "b": f"s{i}", "c": i / 2} for i in range(3000)]
    rows[2500]["c"] = "oops"
    rows[2000]["b"] = 'q "x"'  # a quoted row on the way
    doc = toonstream.dumps({"t": rows}, indent_size=4).encode() + b"\n"
    with pytest.raises(ToonDecodeError) as e:
        tp.read_toon(doc, batch_size=700, indent_size=4)
    assert e.value.line == 2502 and e.value.line_text == doc.decode().splitlines()[2501]
    assert e.value.line_text[e.value.column - 1 :] == "oops"


def test_a_user_dtype_that_does_not_convert_is_located() -> None:
    doc = b"[3]{a,d}:\n  1,2024-01-05\n  2, 2024-13-01\n  3,2024-01-07\n"
    with pytest.raises(ToonDecodeError) as e:
        tp.read_toon(doc, schema_overrides={"d": pl.Date})
    assert (e.value.code, e.value.line, e.value.column) == ("type_mismatch", 3, 6)


# ---------------------------------------------------------------- try_parse_dates


DATE_CASES = [
    ["2024-01-05", "1999-12-31", "0001-01-01", "9999-12-31"],
    ["2024-01-05T10:00:00", "2024-01-05 23:59:59"],
    ["2024-01-05T10:00", "2024-01-05T10:00:00.5", "2024-01-05T10:00:00.123456"],
    ["2024-01-05T10:00:00Z", "2024-01-05T10:00:00+01:00", "2024-01-05T10:00:00-0230"],
    ["2024-01-05", "2024-01-05T10:00:00"],  # mixed: String
    ["2024-01-05T10:00:00Z", "2024-01-05T10:00:00"],  # offset and none: String
    ["2024-02-30", "2024-01-05"],  # not a date: String
    ["2024-01-05T24:00:00"],
    ["2024-01-05", "x"],
]


@pytest.mark.parametrize("values", DATE_CASES, ids=lambda v: ",".join(v)[:40])
def test_try_parse_dates_agrees_with_polars_read_csv(values: list[str], chunking: Any) -> None:
    rows = [{"i": k, "d": v} for k, v in enumerate(values)] + [{"i": len(values), "d": None}]
    doc = toonstream.dumps(rows).encode()
    csv = "i,d\n" + "".join(f"{k},{v}\n" for k, v in enumerate(values)) + f"{len(values)},\n"
    want = pl.read_csv(io.BytesIO(csv.encode()), try_parse_dates=True)
    got = tp.read_toon(doc, try_parse_dates=True)
    assert_frame_equal(got, want)
    assert_frame_equal(_scan(doc, try_parse_dates=True), got)
    assert ta.read_table(doc, try_parse_dates=True).to_pylist() == got.to_dicts()
    assert tp.read_toon(doc).schema["d"] == pl.String  # off by default


def test_try_parse_dates_exact_forms() -> None:
    def dtype(*values: str) -> Any:
        return tp.read_toon(toonstream.dumps([{"d": v} for v in values]).encode(), try_parse_dates=True).schema["d"]

    assert dtype("2024-01-05T10:00:00.123456789") == pl.Datetime("ns")  # no digit lost
    assert tp.read_toon(b'[1]{d}:\n  "2024-01-05T10:00:00.123456789"\n', try_parse_dates=True)["d"].dt.nanosecond()[0] == 123456789
    # not ISO: strings (polars' read_csv reads some of these as dates)
    for other in ("2024/01/05", "05-01-2024", "2024-1-5", "20240105x", "2024-01-05T10:00:60", "2024-01-05T10:00:00+01"):
        assert dtype(other, "2024-01-06") == pl.String, other
    assert dtype("10:00:00") == pl.String  # times: not inferred (schema_overrides={"t": pl.Time})
    # a number or a quoted "null" is not a date
    assert tp.read_toon(b"[2]{d}:\n  2024-01-05\n  5\n", try_parse_dates=True).schema["d"] == pl.String
    assert tp.read_toon(b'[2]{d}:\n  2024-01-05\n  "null"\n', try_parse_dates=True).schema["d"] == pl.String


@pytest.mark.parametrize(
    "later, message",
    [("x", "not an ISO date"), ("5", "not an ISO date"), ('"2024-01-05T10:00:00"', "not an ISO date"), ("2024-02-30", "not an ISO date")],
)
@pytest.mark.parametrize("read", READERS, ids=READER_IDS)
def test_a_later_non_date_is_a_type_mismatch(later: str, message: str, read: Callable[..., Any], chunking: Any) -> None:
    doc = ("[4]{i,d}:\n  1,2024-01-05\n  2,2024-01-06\n  3,  " + later + "\n  4,2024-01-07\n").encode()
    with pytest.raises(ToonDecodeError) as e:
        read(doc, try_parse_dates=True, infer_schema_length=2)
    assert (e.value.code, e.value.line, e.value.column) == ("type_mismatch", 4, 7)
    assert message in e.value.msg and "inferred from the first 2 rows" in e.value.msg  # (scan_toon: "... by the scan's probe")
    assert len(read(doc, try_parse_dates=True, infer_schema_length=None)) == 4  # all rows: String, no error


def test_a_later_datetime_of_another_form_is_a_type_mismatch() -> None:
    head = '[3]{d}:\n  "2024-01-05T10:00:00Z"\n  "2024-01-05T11:00:00+02:00"\n'
    with pytest.raises(ToonDecodeError) as e:
        tp.read_toon((head + '  "2024-01-05T12:00:00"\n').encode(), try_parse_dates=True, infer_schema_length=2)
    assert (e.value.line, e.value.column) == (4, 3) and "with Z or a UTC offset" in e.value.msg
    with pytest.raises(ToonDecodeError) as e:  # more digits than the inferred unit holds
        tp.read_toon((head + '  "2024-01-05T12:00:00.1234567Z"\n').encode(), try_parse_dates=True, infer_schema_length=2)
    assert e.value.line == 4
    df = tp.read_toon((head + '  "2024-01-05T12:00:00.5-01:00"\n').encode(), try_parse_dates=True, infer_schema_length=2)
    assert df.schema["d"] == pl.Datetime("us", "UTC")
    assert df["d"].to_list()[1:] == [
        dt.datetime(2024, 1, 5, 9, tzinfo=dt.timezone.utc), dt.datetime(2024, 1, 5, 13, 0, 0, 500000, tzinfo=dt.timezone.utc)
    ]


def test_cli_try_parse_dates(tmp_path: Path) -> None:
    src = tmp_path / "t.toon"
    src.write_text('[2]{d,t,s}:\n  2024-01-05,"2024-01-05T10:00:00",x\n  2024-01-06,"2024-01-06T10:00:00.25",y\n')
    out = tmp_path / "t.arrow"
    p = _cli("decode", str(src), "--to", "arrow", "-o", str(out), "--try-parse-dates")
    assert p.returncode == 0, p.stderr
    t = pa.ipc.open_file(str(out)).read_all()
    assert t.schema.types == [pa.date32(), pa.timestamp("us"), pa.large_string()]
    assert t.equals(ta.read_table(src, try_parse_dates=True))
    p = _cli("decode", str(src), "--to", "arrow", "-o", str(out))
    assert p.returncode == 0 and pa.ipc.open_file(str(out)).read_all().schema.types[0] == pa.large_string()


@pytest.mark.parametrize("seed", range(12))
def test_misfit_locations_in_random_tables(seed: int, chunking: Any) -> None:
    # Plain, spaced, quoted (with and without escapes) cells and comment
    # lines, keyed or not, one misfit somewhere after the inference window:
    # the error names its line, its cell's column and the line's text.
    import random

    rnd = random.Random(seed)
    keyed = seed % 3 == 0
    n = rnd.randrange(5, 60)
    bad_row = rnd.randrange(3, n)
    bad_col = rnd.randrange(3)
    cells = {0: ["7", "8 ", "-3"], 1: ["x", '"a,b"', '"q\\"q"', " y", '"7"'], 2: ["1.5", "2", " 3.25", "-0.5"]}
    bad = {0: ["z", '"1"', "1.5"], 1: [], 2: ["w", "true"]}
    if not bad[bad_col]:
        bad_col = 0
    lines = [f"[{n}{':' if keyed else ''}]{{a,b,c}}:"]
    want: tuple[int, str] | None = None
    for r in range(n):
        if rnd.random() < 0.1:
            lines.append("  # note")
        row = [rnd.choice(cells[c]) for c in range(3)] if r else ["7", "x", "1.5"]  # (the types: Int64, String, Float64)
        if r == bad_row:
            row[bad_col] = rnd.choice(bad[bad_col])
        text = "  " + (f'"k{r}:": ' if keyed and r % 2 else f"k{r}: " if keyed else "") + ",".join(row)
        lines.append(text)
        if r == bad_row:
            want = (len(lines), row[bad_col].strip())
    doc = ("\n".join(lines) + "\n").encode()
    assert want is not None
    for read in READERS:
        with pytest.raises(ToonDecodeError) as e:
            read(doc, infer_schema_length=3, batch_size=rnd.choice([1, 4, 1000]))
        assert (e.value.code, e.value.line) == ("type_mismatch", want[0]), read
        assert e.value.line_text == lines[want[0] - 1]
        assert e.value.line_text[e.value.column - 1 :].startswith(want[1]), (e.value.column, e.value.line_text)

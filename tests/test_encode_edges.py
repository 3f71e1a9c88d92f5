"""Encoding defects a black-box review found (2026-12-06), on both engines:
table cells past the decoders' number length, error paths inside tables and
keyed tables, the command line's JSON documents (ints of more than 4,300
digits, a byte-order mark), encoder option types, and Arrow columns whose
names repeat or whose strings are not UTF-8."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

import toonstream
from toonstream import ToonEncodeError

CLI = [sys.executable, "-m", "toonstream"]
BIG = 10**10_001  # (10,002 digits: one past the decoders' max_number_length)


@pytest.fixture
def no_digit_limit() -> Iterator[None]:
    # A process that lifted CPython's int digit limit: str() then writes any int.
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(before)


@pytest.mark.parametrize(
    "value, path",
    [
        ([{"a": BIG}], (0, "a")),
        ([{"a": 1}, {"a": BIG}], (1, "a")),
        ({"k": [{"a": {"b": BIG}}]}, ("k", 0, "a", "b")),
        ({"k1": {"x": 1}, "k2": {"x": BIG}}, ("k2", "x")),
        ({"a": BIG}, ("a",)),
    ],
)
def test_table_cells_refuse_numbers_loads_could_not_read(engine: str, no_digit_limit: None, value: Any, path: tuple[Any, ...]) -> None:
    # (table cells were written by str() unchecked: loads then failed with number_too_long)
    for options in ({}, {"missing_as_null": True}):
        with pytest.raises(ToonEncodeError, match="number too long") as e:
            toonstream.dumps(value, **options)
        assert e.value.path == path
    ok = [{"a": 10**9_999}, {"a": 1}]  # 10,000 digits: the longest a decoder reads by default
    assert toonstream.loads(toonstream.dumps(ok)) == ok


def test_jsonl_cells_refuse_numbers_loads_could_not_read(engine: str, no_digit_limit: None) -> None:
    out = io.BytesIO()
    with pytest.raises(ToonEncodeError, match="number too long") as e:
        toonstream.encode_jsonl(io.BytesIO(b'{"a": 1}\n{"a": 1' + b"0" * 10_001 + b"}\n"), out)
    assert e.value.path == (1, "a")


def test_a_decimals_trailing_zeros_do_not_count_toward_its_length(engine: str) -> None:
    """The token is what is written: 1.000... is 1 (the coefficient's 10,001 digits were counted)."""
    from decimal import Decimal

    cases = {
        Decimal("1." + "0" * 10_000): "1",
        Decimal("1" + "0" * 12_000 + "E-11995"): "100000",
        Decimal("1.5" + "0" * 20_000 + "E+20"): "150000000000000000000",
        Decimal("-2" + "0" * 11_000 + "E-11000"): "-2",
    }
    for value, text in cases.items():
        assert toonstream.dumps({"a": value}) == f"a: {text}"
        assert toonstream.dumps([{"a": value}, {"a": 1}]) == f"[2]{{a}}:\n  {text}\n  1"
    line = b'{"a": 1.' + b"0" * 10_000 + b"}\n"
    out = io.StringIO()
    toonstream.encode_jsonl(io.BytesIO(line * 2), out)
    assert out.getvalue() == "[2]{a}:\n  1\n  1"
    with pytest.raises(ToonEncodeError, match="number too long"):
        toonstream.dumps({"a": Decimal("1." + "1" * 10_000)})


@pytest.mark.parametrize(
    "value, path",
    [
        ([{"a": 1}, {"a": object()}], (1, "a")),
        ({"t": [{"a": 1}, {"a": object()}]}, ("t", 1, "a")),
        ([{"g": {"x": 1}}, {"g": {"x": object()}}], (1, "g", "x")),
        ({"k1": {"x": 1}, "k2": {"x": object()}}, ("k2", "x")),
        ({"o": {"k1": {"x": 1}, "k2": {"x": object()}}}, ("o", "k2", "x")),
        ([{"a": 1}, {"a": "\ud800"}], (1, "a")),
        ({"k1": {"x": 1}, "k2": {"x": "\ud800"}}, ("k2", "x")),
        ([{"g": {"x": 1}}, {"g": {"x": "\ud800"}}], (1, "g", "x")),
    ],
)
def test_errors_inside_tables_name_the_cell(engine: str, value: Any, path: tuple[Any, ...]) -> None:
    with pytest.raises(ToonEncodeError) as e:
        toonstream.dumps(value)
    assert e.value.path == path


@pytest.mark.parametrize("bad", [True, 2.5, "2"])
def test_indent_size_must_be_an_int(engine: str, bad: Any) -> None:
    with pytest.raises(TypeError, match="indent_size must be an int"):
        toonstream.dumps({"a": {"b": 1}}, indent_size=bad)
    with pytest.raises(ValueError, match="indent_size must be >= 1"):
        toonstream.dumps({"a": {"b": 1}}, indent_size=0)
    for huge in (2**26 + 1, 10**18):  # (10**18 was a MemoryError)
        with pytest.raises(ValueError, match="indent_size must be <= 67108864"):
            toonstream.dumps({"a": {"b": 1}}, indent_size=huge)


@pytest.mark.parametrize("bad", [None, True, 2.5, "2"])
def test_max_depth_must_be_an_int_on_every_encoder(engine: str, bad: Any) -> None:
    """Checked as indent_size is (None was a TypeError about '<', a float or -1 a depth error)."""
    import io

    import pyarrow as pa

    from toonstream.arrow import encode_arrow

    value = [{"a": 1}]
    calls = [
        lambda **kw: toonstream.dumps(value, **kw),
        lambda **kw: toonstream.dumps(value, sort_keys=True, **kw),
        lambda **kw: toonstream.dump(value, io.StringIO(), **kw),
        lambda **kw: list(toonstream.encode_lines(value, **kw)),
        lambda **kw: toonstream.encode_jsonl(io.BytesIO(b'{"a": 1}\n'), io.BytesIO(), **kw),
        lambda **kw: encode_arrow(pa.table({"a": [1]}), io.BytesIO(), **kw),
    ]
    for call in calls:
        with pytest.raises(TypeError, match="max_depth must be an int, got"):
            call(max_depth=bad)
        with pytest.raises(ValueError, match="max_depth must be >= 0"):
            call(max_depth=-1)


def _cli(*args: str, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*CLI, *args], input=input, capture_output=True, timeout=120)


@pytest.mark.parametrize("digits", [4_300, 4_301, 10_000])
def test_cli_json_documents_take_ints_the_decoders_read(tmp_path: Path, digits: int) -> None:
    # ijson's C backend failed past CPython's 4,300-digit limit with a SystemError traceback
    doc = tmp_path / "i.json"
    doc.write_text('{"a": [1, 1' + "0" * (digits - 1) + "]}")
    for args in (["encode", str(doc)], ["stats", str(doc)]):
        r = _cli(*args)
        assert r.returncode == 0 and r.stderr == b"", r.stderr.decode()
    r = _cli("encode", str(doc))
    assert r.stdout == b"a[2]: 1,1" + b"0" * (digits - 1)


def test_cli_json_documents_refuse_longer_ints_in_one_line(tmp_path: Path) -> None:
    doc = tmp_path / "i.json"
    doc.write_text("[1" + "0" * 10_001 + "]")
    out = tmp_path / "out.toon"
    for args, name in ((["encode", str(doc), "-o", str(out)], str(doc)), (["stats", str(doc)], str(doc)),
                       (["encode", "--from", "json"], "<stdin>")):
        r = _cli(*args, input=doc.read_bytes() if name == "<stdin>" else None)
        assert r.returncode == 1
        assert b"Traceback" not in r.stderr
        assert r.stderr.decode().startswith(f"{name}: number too long"), r.stderr.decode()
    assert not out.exists()


def test_cli_json_documents_skip_a_byte_order_mark(tmp_path: Path) -> None:
    bom = b"\xef\xbb\xbf"
    doc = tmp_path / "b.json"
    doc.write_bytes(bom + b'{"a": [1, 2]}')
    assert _cli("encode", str(doc)).stdout == b"a[2]: 1,2"
    assert _cli("encode", "--from", "json", input=doc.read_bytes()).stdout == b"a[2]: 1,2"
    assert _cli("encode", input=doc.read_bytes()).stdout == b"a[2]: 1,2"  # (sniffed)
    doc.write_bytes(bom + b'{"a": [1, 2}')  # an error is located in the text after the mark
    r = _cli("encode", str(doc))
    assert r.returncode == 1 and r.stderr.decode().startswith(f"{doc}:1:12: invalid JSON")
    r = _cli("encode", "--from", "json", input=bom + bom + b"{}")  # one mark only
    assert r.returncode == 1 and "1:1: invalid JSON" in r.stderr.decode()


def test_arrow_columns_named_twice_are_refused(engine: str) -> None:
    pa = pytest.importorskip("pyarrow")
    from toonstream.arrow import encode_arrow

    table = pa.table([pa.array([1]), pa.array([2])], names=["a", "a"])
    with pytest.raises(ToonEncodeError, match="column 'a' appears twice") as e:
        encode_arrow(table, io.StringIO())
    assert e.value.path == ()
    nested = pa.table({"s": pa.StructArray.from_arrays([pa.array([1]), pa.array([2])], ["x", "x"])})
    with pytest.raises(ToonEncodeError, match="column 'x' appears twice") as e:
        encode_arrow(nested, io.StringIO())
    assert e.value.path == ("s",)
    r = _cli("encode", "--from", "csv", input=b"a,a\n1,2\n")  # (to_pylist kept the last one, silently)
    assert r.returncode == 1 and b"column 'a' appears twice" in r.stderr


def test_arrow_strings_that_are_not_utf8(engine: str) -> None:
    pa = pytest.importorskip("pyarrow")
    from toonstream.arrow import encode_arrow

    bad = pa.array([b"ok", b"\xff\xfe"], pa.binary()).view(pa.string())  # (an unchecked array)
    with pytest.raises(ToonEncodeError, match="not UTF-8"):
        encode_arrow(pa.table({"s": bad, "l": pa.array([[1], [2]])}), io.StringIO())
    # Every path names the cell: the table paths (flat, struct children, a column after
    # another: Arrow's kernels passed those bytes through), dictionary strings, under a key.
    n = pa.array([1, 2])
    struct = pa.StructArray.from_arrays([n, bad], names=["x", "s"])
    cases = [
        (pa.table({"s": bad, "n": n}), None, (1, "s")),
        (pa.table({"n": n, "s": bad}), None, (1, "s")),
        (pa.table({"n": n, "st": struct}), None, (1, "st", "s")),
        (pa.table({"n": n, "st": struct}), "k", ("k", 1, "st", "s")),
        (pa.table({"s": pa.array([b"a", b"\xc3"], pa.large_binary()).view(pa.large_string())}), None, (1, "s")),
        (pa.table({"s": pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int32()), bad)}), None, (1, "s")),
        (pa.table({"s": bad, "l": pa.array([[1], [2]])}), None, (1, "s")),  # (the per-row path)
        (pa.table({"n": n, "l": pa.ListArray.from_arrays(pa.array([0, 1, 2], pa.int32()), bad)}), None, (1, "l", 0)),
        (pa.table({"n": n, "l": pa.ListArray.from_arrays(pa.array([0, 1, 2], pa.int32()), struct)}), "k", ("k", 1, "l", 0, "s")),
        (pa.table({"n": n, "s": bad}), "k", ("k", 1, "s")),  # (max_depth=2 below: per row)
    ]
    for i, (table, key, path) in enumerate(cases):
        for binary in (False, True):
            for batch_size in (1, 1024):
                out: Any = io.BytesIO() if binary else io.StringIO()
                depth = {"max_depth": 2} if i == len(cases) - 1 else {}
                with pytest.raises(ToonEncodeError, match="not UTF-8") as e:
                    encode_arrow(table, out, key=key, batch_size=batch_size, **depth)
                assert e.value.path == path, (table.schema, key)
                if batch_size > 1:  # (the first batch is formatted before anything is written)
                    assert out.getvalue() in ("", b"")
    # a dictionary's bad value that no cell uses is no error
    unused = pa.table({"n": n, "s": pa.DictionaryArray.from_arrays(pa.array([0, 0], pa.int32()), bad)})
    for batch_size in (1, 1024):
        out = io.StringIO()
        encode_arrow(unused, out, batch_size=batch_size)
        assert out.getvalue() == toonstream.dumps(unused.to_pylist())


@pytest.mark.parametrize(
    "value, path",
    [
        ({"\ud800": 1}, ()),
        ([{"\ud800": 1}], (0,)),
        ([{"\ud800": 1}, {"\ud800": 2}], (0,)),
        ({"k": [{"a": 1, "b\udc00": 2}, {"a": 1, "b\udc00": 2}]}, ("k", 0)),
        ({"k1": {"\ud800": 1}, "k2": {"\ud800": 2}}, ("k1",)),
        ([{"a": {"\ud800": 1}}, {"a": {"\ud800": 2}}], (0, "a")),
        ([{"x": {"y": 1, "z": {"\udc01": 1}}}] * 2, (0, "x", "z")),
    ],
)
def test_a_header_key_that_is_no_text_is_named_at_its_object(engine: str, value: Any, path: tuple[Any, ...]) -> None:
    # A table's field name belongs to its rows' objects: reported at the first row (a keyed
    # table's first entry), then the groups down to the object holding it, as the same key in
    # an object outside a table is; the streaming encoders name it as dumps does.
    from test_streaming import _events_of
    from toonstream.streaming import Encoder, encode_records

    with pytest.raises(ToonEncodeError, match="lone surrogate") as e:
        toonstream.dumps(value)
    assert e.value.path == path
    if type(value) is list:
        for records in (value, iter(value)):
            with pytest.raises(ToonEncodeError, match="lone surrogate") as e:
                encode_records(records, io.StringIO(), key="r")
            assert e.value.path == ("r", *path)
    if type(value) is dict and path:  # (ijson-style events of the value, through the event encoder)
        enc = Encoder(io.StringIO())
        with pytest.raises(ToonEncodeError, match="lone surrogate") as e:
            for ev in _events_of(value):
                enc.send(ev)
            enc.close()
        assert e.value.path == path


def test_a_missing_as_null_header_key_names_the_first_row_having_it(engine: str) -> None:
    from toonstream.streaming import encode_records

    rows = [{"a": 1}, {"a": 2, "b\ud800": 3}, {"b\ud800": 4}]
    with pytest.raises(ToonEncodeError, match="lone surrogate") as e:
        toonstream.dumps(rows, missing_as_null=True)
    assert e.value.path == (1,)
    for records in (rows, iter(rows)):
        with pytest.raises(ToonEncodeError, match="lone surrogate") as e:
            encode_records(records, io.StringIO(), missing_as_null=True, key="k")
        assert e.value.path == ("k", 1)



def test_csv_parse_errors_escape_the_row_they_quote(tmp_path: Path) -> None:
    # pyarrow's message quotes the bad row as it is: escaped, as every other message is.
    src = tmp_path / "ctl.csv"
    src.write_bytes(b"a,b\n1,2\n\x1b[31mRED\x00,y,z\n")
    r = _cli("encode", str(src))
    assert r.returncode == 1
    assert b"\x1b" not in r.stderr and b"\x00" not in r.stderr and b"\\x1b[31mRED\\x00" in r.stderr


def test_stats_line_says_more_tokens_when_there_are_more(tmp_path: Path) -> None:
    src = tmp_path / "m.jsonl"
    src.write_bytes(b"[1]\n[2]\n")  # (lists of one number: TOON's list items cost more)
    r = _cli("encode", str(src), "--stats")
    assert r.returncode == 0 and b"% more tokens" in r.stderr and b"-" not in r.stderr.split(b";")[-1]
    r = _cli("encode", str(src), "--jobs", "abc")
    assert r.returncode == 2 and b"expected a whole number >= 1, got 'abc'" in r.stderr
    r = _cli("encode", str(src), "-o", "")
    assert r.returncode == 2 and b"-o/--output needs a file name" in r.stderr
    r = _cli("encode", str(src), "--exact")
    assert r.returncode == 2 and b"--exact applies to --stats" in r.stderr

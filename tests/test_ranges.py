"""The byte-range reader (toonstream.ranges): every split of a file into
ranges reads back as the whole file does, in values and types, on both
engines; errors name the file and give the file's line numbers."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("polars")

import toonstream.arrow as ta  # noqa: E402
from toonstream import ToonDecodeError  # noqa: E402
from toonstream.ranges import RangeReader, read_header, split_ranges  # noqa: E402

# Small files covering what a cut can land on: quoted cells holding the
# delimiter (and a colon, an escaped newline), comment and blank lines
# before the first row, comments between and after rows, CRLF, other
# delimiters, keyed and nested tables, a table as the root object's member.
FILES = {
    "quoted": b'[5]{id,name,score}:\n  1,"a,b",1.5\n  2,"x:y",2\n  3,plain,-3e2\n  4,"q\\"\\n,z",null\n  5,",",7\n',
    "comments": b"# top\n\n[4]{a,b}:\n\n# before the rows\n  1,x\n# between\n  # indented comment\n  2,y\n  3,z\n  4,w\n# after\n\n",
    "crlf": b"[3]{a,b}:\r\n  1,\"p,q\"\r\n# c\r\n  2,r\r\n  3,s\r\n",
    "no_final_newline": b"[3]{a,b}:\n  1,x\n  2,y\n  3,z",
    "tab": b"[3\t]{a\tb}:\n  1\tx,y\n  2\t\"t\tu\"\n  3\tz\n",
    "pipe": b"[3|]{a|b}:\n  1|x,y\n  2|\"p|q\"\n  3|z\n",
    "keyed": b"[3:]{a,b}:\n  ada: 1,x\n  \"b:o,b\": 2,\"y,z\"\n  cy: 3,w\n",
    "nested": b"[3]{id,u{a,b}}:\n  1,10,x\n  2,20,\"y,z\"\n  3,30,w\n",
    "member": b"items[3]{a,b}:\n  1,true\n  2,false\n  3,null\n",
    "empty": b"[0]{a,b}:\n",
    # a byte-order mark before a comment, a blank line or the header (skipped as the decoder does)
    "bom_comment": b"\xef\xbb\xbf# top\r\n[2]{x}:\r\n  1\r\n  2\r\n",
    "bom_blank": b"\xef\xbb\xbf\n[2]{x}:\n  1\n  2\n",
    "bom_header": b"\xef\xbb\xbf[2]{x}:\n  1\n  2\n",
    "mixed_types": b"[4]{a,b,c}:\n  1,x,null\n  2.5,3,null\n  3,true,null\n  4,\"5\",null\n",
}


def _write(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / f"{name}.toon"
    path.write_bytes(data)
    return str(path)


def _concat(reader: RangeReader, cuts: list[int]) -> Any:
    """The ranges between consecutive cuts, read one by one, as one table;
    the summed count checked."""
    tables = [reader.read(s, e) for s, e in zip(cuts, cuts[1:])]
    reader.check_count(sum(t.num_rows for t in tables))
    assert all(t.schema == reader.schema for t in tables)
    return pa.concat_tables(tables)


def _same(got: Any, want: Any) -> None:
    assert got.schema == want.schema
    assert got.to_pylist() == want.to_pylist()


@pytest.mark.parametrize("name", sorted(FILES))
def test_every_cut_in_two_and_one_byte_ranges(tmp_path: Path, name: str, engine: str) -> None:
    data = FILES[name]
    path = _write(tmp_path, name, data)
    want = ta.read_table(path)
    reader = RangeReader(path)
    assert reader.schema == want.schema
    # (pickled: as sent to a worker)
    reader = pickle.loads(pickle.dumps(reader))
    for cut in range(len(data) + 1):
        _same(_concat(reader, [0, cut, len(data)]), want)
    _same(_concat(reader, list(range(len(data) + 1))), want)
    # Ranges past the end and empty ranges hold nothing.
    assert reader.read(len(data), len(data) + 10).num_rows == 0
    assert reader.read(5, 5).num_rows == 0


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FILES))
def test_every_cut_in_three(tmp_path: Path, name: str, engine: str) -> None:
    data = FILES[name]
    path = _write(tmp_path, name, data)
    want = ta.read_table(path)
    reader = RangeReader(path)
    for a in range(len(data) + 1):
        for b in range(a, len(data) + 1):
            _same(_concat(reader, [0, a, b, len(data)]), want)


@pytest.mark.parametrize(
    "options",
    [
        {"columns": ["score", "id"]},
        {"schema_overrides": {"id": pa.float64()}},
        {"schema": pa.schema([("id", pa.int32()), ("name", pa.string()), ("score", pa.float64())])},
        {"infer_schema_length": 0},
        {"infer_schema_length": None},
        {"batch_size": 2},
    ],
    ids=repr,
)
def test_options_as_iter_batches(tmp_path: Path, options: dict[str, Any], engine: str) -> None:
    data = FILES["quoted"]
    path = _write(tmp_path, "quoted", data)
    want = ta.read_table(path, **options)
    reader = RangeReader(path, **options)
    for cut in range(0, len(data) + 1, 3):
        _same(_concat(reader, [0, cut, len(data)]), want)


def test_types_decided_once_from_the_first_rows(tmp_path: Path, engine: str) -> None:
    """A range of later rows alone would infer other types: it gets the
    whole file's (a null-only column of a longer table is String, as in
    the whole read)."""
    rows = "".join(f"  {i},{'null' if i < 6 else i}\n" for i in range(10))
    data = f"[10]{{a,b}}:\n{rows}".encode()
    path = _write(tmp_path, "t", data)
    want = ta.read_table(path, infer_schema_length=3)
    assert want.schema.field("b").type == pa.large_string()
    reader = RangeReader(path, infer_schema_length=3)
    late = data.index(b"  7,")
    _same(_concat(reader, [0, late, len(data)]), want)
    assert reader.read(late, len(data)).column("b").to_pylist() == ["7", "8", "9"]


def test_a_value_that_does_not_fit_the_decided_type(tmp_path: Path, engine: str) -> None:
    data = b"[4]{a}:\n  1\n  2\n  3\n  x\n"
    path = _write(tmp_path, "t", data)
    with pytest.raises(ToonDecodeError) as whole:
        ta.read_table(path, infer_schema_length=2)
    reader = RangeReader(path, infer_schema_length=2)
    cut = data.index(b"  3")
    with pytest.raises(ToonDecodeError) as part:
        reader.read(cut, len(data))
    assert (part.value.code, part.value.line) == (whole.value.code, whole.value.line) == ("type_mismatch", 5)
    assert path in str(part.value)


def test_wrong_declared_count_names_the_file(tmp_path: Path, engine: str) -> None:
    for declared in (3, 5):
        data = f"[{declared}]{{a}}:\n  1\n  2\n  3\n  4\n".encode()
        path = _write(tmp_path, f"n{declared}", data)
        with pytest.raises(ToonDecodeError):
            ta.read_table(path)
        reader = RangeReader(path)
        total = sum(reader.read(s, e).num_rows for s, e in reader.ranges(5))
        assert total == 4
        with pytest.raises(ToonDecodeError) as e:
            reader.check_count(total)
        assert e.value.code == "count_mismatch" and e.value.line == 1
        assert path in str(e.value) and f"declared {declared} rows, found 4" in str(e.value)
        # The count needs no decoding, and agrees with the rows read.
        assert sum(reader.count_rows(s, e) for s, e in reader.ranges(7)) == 4
    # Non-strict: counts are not checked (§14.1).
    RangeReader(path, strict=False).check_count(4)


@pytest.mark.parametrize(
    "data",
    [
        b"[4]{a,b}:\n  1,x\n  2,y\n\n  3,z\n  4,w\n",  # a blank line inside the table
        b"[4]{a,b}:\n  1,x\n  2,y\n   \n# c\n\n  3,z\n  4,w\n",  # blank, comment, blank
        b"[3]{a,b}:\n  1,x\n  2,y,extra\n  3,z\n",  # a row of the wrong width
        b"[3]{a,b}:\n  1,x\n    2,y\n  3,z\n",  # a deeper line
        b"[3]{a,b}:\n  1,x\n  2,\"y\n  3,z\n",  # an unterminated quote
        b"[3]{a,b}:\n  1,x\n  2,y\n  3,z\nafter: 1\n",  # content after a root table
    ],
    ids=["blank", "blank_comment_blank", "width", "deeper", "quote", "trailing"],
)
def test_errors_as_the_whole_file_read(tmp_path: Path, data: bytes, engine: str) -> None:
    """Every split reports an error (the first one in the file among the
    failing ranges: the same code and file line as the whole read)."""
    path = _write(tmp_path, "bad", data)
    with pytest.raises(ToonDecodeError) as whole:
        ta.read_table(path)
    reader = RangeReader(path)
    for cut in range(len(data) + 1):
        with pytest.raises(ToonDecodeError) as part:
            _concat(reader, [0, cut, len(data)])
        assert path in str(part.value)
        assert part.value.line == whole.value.line, cut
        if whole.value.code == "blank_line":  # (the blank line's own text: spaces, or nothing)
            assert part.value.line_text == whole.value.line_text == data.splitlines()[whole.value.line - 1].decode()
        # A range whose first line is the deeper one has no row before it:
        # the decoder calls that a depth jump (one error, another name).
        codes = {whole.value.code} | ({"depth_jump"} if whole.value.code == "over_indented" else set())
        assert part.value.code in codes, cut


def test_header(tmp_path: Path) -> None:
    data = b'# c\n"k[1]"[2|]{a|b}:\r\n\n  1|2\n  3|4\n'
    path = _write(tmp_path, "h", data)
    h = read_header(path)
    assert (h.line, h.length, h.delimiter, h.keyed, h.indent) == (2, 2, "|", False, 2)
    assert data[h.rows_offset :].startswith(b"\n  1|2")
    assert data[h.first_row :].startswith(b"  1|2")
    assert h.with_length(17) == b'"k[1]"[17|]{a|b}:\r\n'
    assert RangeReader(path, header=h).read(0, len(data)).to_pydict() == {"a": [1, 3], "b": [2, 4]}


def test_header_after_a_byte_order_mark(tmp_path: Path) -> None:
    for data in (b"\xef\xbb\xbf[2]{x}:\n  1\n  2\n", b"\xef\xbb\xbf# c\n[2]{x}:\n  1\n  2\n"):
        h = read_header(_write(tmp_path, "b", data))
        assert h.text == b"[2]{x}:\n" and h.with_length(3) == b"[3]{x}:\n"
        assert data[h.rows_offset :] == b"  1\n  2\n"


@pytest.mark.parametrize(
    "data",
    [b"", b"# only a comment\n", b"a: 1\n", b"[2]: 1,2\n", b"[]\n", b"x:\n  t[1]{a}:\n    1\n"],
)
def test_not_a_one_table_file(tmp_path: Path, data: bytes) -> None:
    path = _write(tmp_path, "x", data)
    with pytest.raises(ToonDecodeError) as e:
        read_header(path)
    assert e.value.code == "not_tabular" and path in str(e.value)


def test_split_ranges() -> None:
    assert split_ranges(0, 5) == [(0, 0)]
    assert split_ranges(12, 5, start=3) == [(3, 8), (8, 12)]
    with pytest.raises(ValueError):
        split_ranges(10, 0)


def test_header_errors_name_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "x", b"# c\n[2]{a,a}:\n  1,2\n")
    with pytest.raises(ToonDecodeError) as e:
        RangeReader(path)
    assert path in str(e.value) and e.value.line == 2


def test_the_dask_extra_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without dask, toonstream.dask says which extra installs it."""
    import importlib
    import sys

    from toonstream._optional import MissingExtraError

    monkeypatch.delitem(sys.modules, "toonstream.dask", raising=False)
    for name in [m for m in sys.modules if m == "dask" or m.startswith("dask.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "dask", None)
    with pytest.raises(MissingExtraError) as e:
        importlib.import_module("toonstream.dask")
    assert e.value.extra == "dask" and "pip install 'toonstream[dask]'" in str(e.value)


def test_blank_and_comment_lines_found_as_by_a_full_scan() -> None:
    """The hint-driven search for blank and comment lines finds exactly
    what classifying every line finds (random lines, CRLF or not, short
    and long enough to take the hint path)."""
    import random

    from toonstream.ranges import _NOT_ROW, _not_rows

    rnd = random.Random(18)
    pieces = [b"\n", b" ", b"#", b"\t", b"\r", b"a", b",", b"\r\n", b"  1,2\n", b"  1,2\r\n", b'  "#",x\n']
    for _ in range(3000):
        data = b"".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 30))) * rnd.choice([1, 40])
        every = [(m.start(), not m.group().endswith(b"#")) for m in _NOT_ROW.finditer(data) if m.start() < len(data)]
        assert _not_rows(data) == every, data


def test_dates_parsed_in_every_range(tmp_path: Path, engine: str) -> None:
    data = b"[4]{d,at,s}:\n  2024-01-02,2024-01-02T03:04:05,x\n  2024-02-03,2024-02-03T04:05:06,y\n  2023-12-31,2023-12-31T23:59:59,z\n  2020-02-29,2020-02-29T00:00:00,w\n"
    path = _write(tmp_path, "dates", data)
    want = ta.read_table(path, try_parse_dates=True)
    assert want.schema.field("d").type == pa.date32()
    reader = RangeReader(path, try_parse_dates=True)
    for cut in range(0, len(data) + 1, 5):
        _same(_concat(reader, [0, cut, len(data)]), want)


@pytest.mark.parametrize("name", ["comments", "crlf", "quoted", "no_final_newline", "keyed"])
def test_count_rows_agrees_with_the_rows_read(tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """count_rows (no decoding; in steps of a few bytes here, so that lines
    cross steps and outgrow them) gives each range's row count."""
    import toonstream.ranges as tr

    monkeypatch.setattr(tr, "_COUNT_STEP", 7)
    data = FILES[name]
    path = _write(tmp_path, name, data)
    reader = RangeReader(path)
    for start in range(0, len(data) + 1, 3):
        for end in range(start, len(data) + 1, 4):
            assert reader.count_rows(start, end) == reader.read(start, end).num_rows, (start, end)


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (b"u[4]{id}:\n  1\n  2\nz: 1\n  3\n  4\n", 4),
        (b"u[2]{id}:\n  1\n  2\nz: 1\n", 4),
        (b'u[2]{id}:\n  1\n  2\n"z"[1]: x\n', 4),
        (b"u[3:]{a}:\n  k: 1\nz: 1\n  j: 2\n  m: 3\n", 3),
        (b"[2]{id}:\n  1\n  2\nz: 1\n", 4),
    ],
)
def test_content_after_the_table_is_an_error_at_every_cut(tmp_path: Path, data: bytes, line: int, engine: str) -> None:
    """A one-table file holds its table only: another member of the root object after a named
    table was left out of it without a word (a range's document reads it as such), or made a
    count error that depended on the block size."""
    path = _write(tmp_path, "x", data)
    reader = RangeReader(path)
    for blocksize in (1, 3, 5, 8, 1 << 20):
        with pytest.raises(ToonDecodeError) as e:
            reader.check_count(sum(reader.read(s, e).num_rows for s, e in reader.ranges(blocksize)))
        assert (e.value.code, e.value.line, e.value.line_text) == ("trailing_content", line, data.decode().splitlines()[line - 1])

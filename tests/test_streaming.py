"""Streaming encoders: byte-identical to dumps(), bounded memory, clear errors."""

from __future__ import annotations

import io
import json
import os
import tempfile
import tracemalloc
from decimal import Decimal
from typing import Any, Iterator

import ijson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toonstream
from toonstream import ToonEncodeError
from toonstream.streaming import Encoder, encode_events, encode_jsonl, encode_records

from test_host_types import _events_of as _host_events
from test_properties import JSON, KEYS, PRIMS

DELIMS = st.sampled_from([",", "\t", "|"])
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _exact(value: Any) -> Any:
    """The value as ijson/our JSONL reader sees it (floats as exact Decimal text)."""
    return json.loads(json.dumps(value), parse_float=Decimal)


@SETTINGS
@given(JSON, DELIMS)
@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_events_encoder_matches_dumps(value: Any, delimiter: str) -> None:
    raw = json.dumps(value).encode()
    for events in (ijson.parse(raw), ijson.basic_parse(raw)):
        out = io.StringIO()
        encode_events(events, out, delimiter=delimiter, spool_memory=64)
        assert out.getvalue() == toonstream.dumps(_exact(value), delimiter=delimiter)


RECORDS = st.lists(st.one_of(JSON, st.fixed_dictionaries({"id": st.integers(), "name": PRIMS})), max_size=8)


@SETTINGS
@given(RECORDS, DELIMS, st.one_of(st.none(), KEYS), st.booleans())
@pytest.mark.slow
def test_jsonl_and_records_match_dumps(records: list[Any], delimiter: str, key: str | None, seekable: bool) -> None:
    data = b"".join(json.dumps(r).encode() + b"\n" for r in records)
    exact = [json.loads(json.dumps(r)) for r in records]
    want = toonstream.dumps(exact if key is None else {key: exact}, delimiter=delimiter)
    out = io.BytesIO()
    src: Any = io.BytesIO(data) if seekable else iter(data.splitlines(keepends=True))
    n = encode_jsonl(src, out, key=key, delimiter=delimiter, spool_memory=64)
    assert n == len(records)
    assert out.getvalue().decode() == want
    out2 = io.StringIO()
    encode_records(iter(exact), out2, key=key, delimiter=delimiter, spool_memory=64)
    assert out2.getvalue() == want


def test_jsonl_keeps_numbers_exact() -> None:
    src = io.BytesIO(b'{"a": 0.1, "b": 1e400, "c": 1.10, "d": ' + b"9" * 5000 + b"}\n")
    out = io.StringIO()
    encode_jsonl(src, out)
    back = toonstream.loads(out.getvalue(), parse_float=Decimal)
    assert back[0]["a"] == Decimal("0.1") and back[0]["b"] == Decimal("1e400") and back[0]["c"] == Decimal("1.1")
    assert back[0]["d"] == int(Decimal("9" * 5000))


def test_jsonl_blank_lines_bom_and_text_files() -> None:
    out = io.StringIO()
    assert encode_jsonl(io.StringIO('\ufeff{"a": 1}\n\n   \n{"a": 2}'), out) == 2
    assert out.getvalue() == "[2]{a}:\n  1\n  2"


def test_jsonl_a_line_of_other_white_space_is_not_blank(engine: str) -> None:
    # json.loads' white space is space, tab, CR and LF: a line of a form feed, a vertical tab or
    # a no-break space is a bad line (it was skipped as blank), from bytes and from text
    for bad in (b"\x0c", b" \x0b ", "\u00a0".encode()):
        for src in (io.BytesIO(b'{"a": 1}\n' + bad + b'\n{"a": 2}\n'),
                    io.StringIO('{"a": 1}\n' + bad.decode() + '\n{"a": 2}\n')):
            with pytest.raises(ToonEncodeError, match="invalid JSON") as info:
                encode_jsonl(src, io.StringIO())
            assert info.value.line == 2, bad


def test_jsonl_exponents_with_leading_zeros(engine: str) -> None:
    # the decoders' rule: an exponent's sign and leading zeros are no digits (1e0...01 is 10.0,
    # as json.loads reads it; it was "number exponent out of range")
    for token, text in [("1e0000000000000000001", "10"), ("1.5e-0000000000000000000007", "1.5e-7"),
                        ("-0e00000000000000000000000", "0")]:
        out = io.StringIO()
        encode_jsonl(io.BytesIO(f'{{"a": {token}}}\n'.encode() * 2), out)
        assert out.getvalue() == f"[2]{{a}}:\n  {text}\n  {text}"
    with pytest.raises(ToonEncodeError, match="exponent out of range"):
        encode_jsonl(io.BytesIO(b'{"a": 1e100000000000000000}\n'), io.StringIO())


def test_jsonl_malformed_line_names_its_number() -> None:
    with pytest.raises(ToonEncodeError) as info:
        encode_jsonl(io.BytesIO(b'{"a": 1}\n\n{"a": }\n'), io.StringIO())
    assert info.value.line == 3 and info.value.column is not None
    with pytest.raises(ToonEncodeError) as info:
        encode_jsonl(iter([b'{"a": 1}\n', b'\xff\n']), io.StringIO())
    assert info.value.line == 2


def test_jsonl_lone_surrogate_after_what_only_json_lines_take() -> None:
    # NaN and Infinity are read in JSON Lines (as json.loads reads them) but are errors in a
    # JSON document: a lone surrogate escape after them on the line is still found, at its column.
    for line, column in [(b'{"a": NaN, "b": "\\ud800"}', 18), (b'[Infinity, "\\udc00"]', 13),
                         (b'{"a": -Infinity, "\xc3\xa9\\ud800": 1}', 20)]:
        with pytest.raises(ToonEncodeError, match="invalid JSON: lone surrogate") as e:
            encode_jsonl(io.BytesIO(b'{"a": 1}\n' + line + b"\n"), io.StringIO())
        assert (e.value.line, e.value.column, e.value.path) == (2, column, ()), line


def test_jsonl_lines_nested_deeper_than_the_stdlib_reader_recurses() -> None:
    # json.loads stops at about 1,000 levels; such a line is read iteratively, to the same
    # max_depth as a JSON document, and its syntax errors are named as the stdlib path names them.
    for depth in (1_100, 2_500):  # (the text grows with the square of the depth: indentation)
        value: Any = [1.5, 2, "x"]
        for _ in range(depth):
            value = {"a": value}
        line = '{"a": ' * depth + '[1.5, 2, "x"]' + "}" * depth
        out = io.StringIO()
        assert encode_jsonl(io.BytesIO(b'{"a": 1}\n' + line.encode() + b"\n"), out) == 2
        assert out.getvalue() == toonstream.dumps([{"a": 1}, value])
    line = '{"a": ' * 10_000 + "1" + "}" * 10_000  # (10,001 containers with the root array)
    with pytest.raises(ToonEncodeError, match="nested deeper than max_depth") as e:
        encode_jsonl(io.BytesIO(line.encode()), io.StringIO())
    assert len(e.value.path) == 10_000
    bad = "[" * 1_500 + "1," + "]" * 1_500
    with pytest.raises(ToonEncodeError, match="invalid JSON: expected a value") as e:
        encode_jsonl(io.BytesIO(b"1\n" + bad.encode()), io.StringIO())
    assert (e.value.line, e.value.column) == (2, 1_503)


def test_sort_keys_records_are_checked_where_dumps_checks_them() -> None:
    # Each record is sorted as dumps sorts it inside the array: the same error (depth or
    # cycle) at the same path, with the record's index (and the key).
    r: dict[str, Any] = {"b": 1}
    r["a"] = r
    for max_depth in (2, 3, 5):
        for key in (None, "k"):
            with pytest.raises(ToonEncodeError) as want:
                toonstream.dumps([r] if key is None else {key: [r]}, max_depth=max_depth, sort_keys=True)
            for records in ([r], iter([r])):
                with pytest.raises(ToonEncodeError) as got:
                    encode_records(records, io.StringIO(), key=key, max_depth=max_depth, sort_keys=True)
                assert (str(got.value), got.value.path) == (str(want.value), want.value.path), (max_depth, key)


@pytest.mark.parametrize("seekable", [True, False])
@pytest.mark.parametrize("key", [None, "rows"])
def test_jsonl_encode_errors_name_the_line(seekable: bool, key: str | None) -> None:
    # Valid JSON that TOON cannot hold (an int past the decoders' number
    # length): the error names the element's path and its input line (blank
    # lines and a BOM counted).  A lone surrogate escape is invalid JSON
    # here, as in a JSON document: its line and column, no path.
    bad = "1" * 10_001
    cases = {
        "table row": (['{"a": 1}', "", '{"a": ' + bad + "}"], (1, "a"), 3),
        "nested": (['{"a": 1}', "", '{"b": [1, {"a": ' + bad + "}]}"], (1, "b", 1, "a"), 3),
        "primitive array": (["\ufeff", "1", "", bad], (1,), 4),
        "far into a table": ([*('{"a": %d}' % i for i in range(5000)), '{"a": ' + bad + "}", '{"a": 1}'], (5000, "a"), 5001),
    }
    for name, (lines, path, line) in cases.items():
        data = ("\n".join(lines) + "\n").encode()
        src: Any = io.BytesIO(data) if seekable else iter(data.splitlines(keepends=True))
        with pytest.raises(ToonEncodeError) as e:
            encode_jsonl(src, io.StringIO(), key=key)
        want = path if key is None else (key, *path)  # as dumps({key: records}) names it
        assert (e.value.path, e.value.line, e.value.column) == (want, line, 1), name
        data = data.replace(bad.encode(), b'"x\\ud800"')
        src = io.BytesIO(data) if seekable else iter(data.splitlines(keepends=True))
        with pytest.raises(ToonEncodeError, match=r"invalid JSON: lone surrogate '\\ud800'") as e:
            encode_jsonl(src, io.StringIO(), key=key)
        column = data.splitlines()[line - 1].decode().index("\\ud800") + 1
        assert (e.value.path, e.value.line, e.value.column) == ((), line, column), name
    recs = [{"id": 1, "n": "a"}, {"id": 2, "n": "b\ud800"}]
    with pytest.raises(ToonEncodeError) as d:
        toonstream.dumps(recs if key is None else {key: recs})
    for records in (recs, iter(recs)):
        with pytest.raises(ToonEncodeError) as e:
            encode_records(records, io.StringIO(), key=key)
        assert (str(e.value), e.value.path) == (str(d.value), d.value.path)


def test_jsonl_from_path(tmp_path: Any) -> None:
    p = tmp_path / "x.jsonl"
    p.write_text('{"id": 1}\n{"id": 2}\n')
    out = io.StringIO()
    encode_jsonl(p, out, key="rows")
    assert out.getvalue() == "rows[2]{id}:\n  1\n  2"


def test_encoder_rejects_broken_streams() -> None:
    enc = Encoder(io.StringIO())
    enc.send(("start_array", None))
    with pytest.raises(ToonEncodeError):
        enc.close()
    enc = Encoder(io.StringIO())
    with pytest.raises(ToonEncodeError):
        enc.send(("end_map", None))


def _records(n: int) -> Iterator[bytes]:
    for i in range(n):
        yield json.dumps({"id": i, "name": f"user{i}", "score": i * 0.5, "tags": {"a": i % 3, "b": "x"}}).encode() + b"\n"


@pytest.mark.parametrize("seekable", [True, False])
@pytest.mark.slow
def test_jsonl_memory_is_flat(seekable: bool) -> None:
    def peak(n: int) -> int:
        with tempfile.TemporaryFile() as src, open(os.devnull, "w") as sink:
            if seekable:
                src.writelines(_records(n))
                src.seek(0)
            tracemalloc.start()
            try:
                encode_jsonl(src if seekable else _records(n), sink, spool_memory=1 << 16)
                return tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()

    small, large = peak(5_000), peak(100_000)
    assert large < small * 1.1 + 64 * 1024, (small, large)


# ---------------------------------------------------------------- missing_as_null (opt-in, lossy)

OPTIONAL = st.lists(
    st.dictionaries(st.sampled_from(["id", "name", "email", "n"]), PRIMS, min_size=1, max_size=4), min_size=1, max_size=8
)


@SETTINGS
@given(OPTIONAL, DELIMS, st.booleans())
def test_missing_as_null_streaming_matches_dumps(records: list[Any], delimiter: str, seekable: bool) -> None:
    exact = [json.loads(json.dumps(r)) for r in records]
    want = toonstream.dumps(exact, delimiter=delimiter, missing_as_null=True)
    data = b"".join(json.dumps(r).encode() + b"\n" for r in records)
    out = io.StringIO()
    src: Any = io.BytesIO(data) if seekable else iter(data.splitlines(keepends=True))
    encode_jsonl(src, out, delimiter=delimiter, missing_as_null=True, spool_memory=64)
    assert out.getvalue() == want
    out2 = io.StringIO()
    encode_events(ijson.parse(json.dumps(exact).encode()), out2, delimiter=delimiter, missing_as_null=True)
    assert out2.getvalue() == toonstream.dumps(_exact(exact), delimiter=delimiter, missing_as_null=True)
    # the round trip gives the null-filled records
    back = toonstream.loads(want)
    keys = list(dict.fromkeys(k for r in exact for k in r))
    if want.startswith("[") and "{" in want.split("\n")[0]:
        assert back == [{k: r.get(k) for k in keys} for r in exact]
    # and the default output is the spec's, unaffected by the option's existence
    assert toonstream.dumps(exact, delimiter=delimiter) == toonstream.dumps(exact, delimiter=delimiter, missing_as_null=False)


def test_missing_as_null_shapes() -> None:
    recs = [{"id": 1, "c": {"x": 1}}, {"id": 2, "c": {"x": 2}, "note": "n"}]
    assert toonstream.dumps(recs, missing_as_null=True) == "[2]{id,c{x},note}:\n  1,1,null\n  2,2,n"
    # a nested object missing somewhere cannot be a column (null and objects do not mix)
    assert toonstream.dumps([{"c": {"x": 1}}, {"d": 1}], missing_as_null=True).startswith("[2]:\n  - c:")
    # uniform arrays give the same table either way; empty objects never make a table
    uniform = [{"a": 1}, {"a": 2}]
    assert toonstream.dumps(uniform, missing_as_null=True) == toonstream.dumps(uniform)
    assert toonstream.dumps([{"a": 1}, {}], missing_as_null=True) == "[2]:\n  - a: 1\n  -"


# ---------------------------------------------------------------- orjson fast path vs the stdlib path


@pytest.mark.parametrize(
    ("records", "row"),
    [
        ([{"a": "\ud800"}, {"a": 1, "b": 2}], 0),  # the bad row lacks a key
        ([{"a": 1, "b": 2}, {"a": 1}, {"a": 10**10000}], 2),  # a row before it does
        ([{"a": 1, "b": 2}, {"a": Decimal("1E+999999999999999999")}], 1),
    ],
)
def test_missing_as_null_error_names_the_row(engine: str, records: list[Any], row: int) -> None:
    # An unencodable value in a null-filled table: a ToonEncodeError at its row, never a
    # KeyError from locating the row (found by a differential fuzz run: the row search
    # used the strict cells, so a row lacking a key raised KeyError first).
    with pytest.raises(ToonEncodeError) as e:
        toonstream.dumps(records, missing_as_null=True)
    assert e.value.path[0] == row
    with pytest.raises(ToonEncodeError) as e:
        encode_records(records, io.StringIO(), missing_as_null=True)
    assert e.value.path[0] == row
    if isinstance(records[0]["a"], str):
        lines = b'{"a":1}\n{"a":' + b"1" * 10_001 + b'}\n{"a":1,"b":2}\n'
        with pytest.raises(ToonEncodeError) as e:
            encode_jsonl(io.BytesIO(lines), io.BytesIO(), missing_as_null=True)
        assert e.value.path[0] == 1
#
# encode_jsonl parses with orjson when it is installed and falls back line by
# line to the stdlib reader wherever the two could differ.  Both must give the
# same bytes, or the same error (message, line, column, path).

from toonstream import streaming  # noqa: E402
from toonstream.streaming import _parse_json  # noqa: E402

# Without orjson both "paths" are the stdlib one and these tests still pass;
# the test extra installs orjson so that CI compares the two for real.


def _run(data: bytes, *, orjson: bool, seekable: bool = True, **kw: Any) -> Any:
    """(output, None) or (None, error summary) for encode_jsonl on ``data``."""
    saved = streaming._orjson
    if not orjson:
        streaming._orjson = None
    try:
        out = io.BytesIO()
        src: Any = io.BytesIO(data) if seekable else iter(data.splitlines(keepends=True))
        try:
            encode_jsonl(src, out, spool_memory=256, **kw)
        except ToonEncodeError as e:
            return None, (str(e), e.line, e.column, e.path)
        return out.getvalue(), None
    finally:
        streaming._orjson = saved


def _both(data: bytes, **kw: Any) -> Any:
    assert streaming._orjson is not None, "orjson is part of the test extra"
    fast = _run(data, orjson=True, **kw)
    assert fast == _run(data, orjson=False, **kw)
    assert fast == _run(data, orjson=True, seekable=False, **kw)
    return fast


def _expected(data: bytes, **kw: Any) -> str:
    """dumps() of the values the exact (stdlib) reader gives, line by line."""
    data = data.removeprefix(b"\xef\xbb\xbf")
    values = [_parse_json(line, i) for i, line in enumerate(data.split(b"\n"), 1) if line.strip()]
    return toonstream.dumps(values, **kw)


NUMBER_TEXTS = [
    "0", "-0", "-0.0", "0.0", "0.00", "1.0", "1.10", "0.1", "1e400", "-1e400", "1e-400", "5e-324", "4.9e-324",
    "2.2250738585072014e-308", "1E5", "1e5", "1.0e5", "1e+16", "1e16", "1.5e-07", "0.00001", "0.0000001",
    "123456789012345.5", "12345678901234.5", "0.10000000000000000001", "0.1000000000000000055511151231257827",
    "9007199254740993", "18446744073709551615", "18446744073709551616", "-9223372036854775808",
    "-9223372036854775809", "123456789012345678", "1234567890123456789", "9" * 30, "9" * 5000,
    "0.8444218515250481", "1.7976931348623157e308", "1.7976931348623159e308", "3.0", "100.0", "1e21", "1e-7",
]


@pytest.mark.parametrize("text", NUMBER_TEXTS)
def test_fast_path_numbers_match_stdlib(text: str) -> None:
    # in a table, in a list, as a root scalar, and among many plain lines (one batch)
    lines = [f'{{"id": 1, "x": {text}}}', f'{{"id": 2, "x": [{text}, "a"]}}', text]
    for line in lines:
        data = (line + "\n").encode()
        assert _both(data) == (_expected(data).encode(), None)
    data = "".join(f'{{"id": {i}, "x": {text if i == 700 else i / 4}}}\n' for i in range(1500)).encode()
    assert _both(data) == (_expected(data).encode(), None)


def test_fast_path_lines_orjson_rejects_or_reads_differently() -> None:
    cases = [
        b'{"a": NaN}\n{"a": Infinity}\n{"a": -Infinity}\n',  # stdlib-only literals: null
        b'{"a": 1, "b": 2, "a": 3}\n{"b": 5, "a": 6}\n',  # duplicate key: last value, first place
        b'{"a": "\\ud800"}\n',  # lone surrogate escape: the stdlib reads it, dumps rejects it
        b'{"a": "\\ud83d\\ude00 \\u00e9 \\/"}\n{"a": "x"}\n',
        b'[' * 1500 + b']' * 1500 + b"\n",  # deeper than orjson's limit
        b'\xef\xbb\xbf{"a": 1}\r\n\r\n  \n{"a": 2}',  # BOM, CRLF, blank lines, no final newline
        b'{"a": 1}\n{"a": "1e5 3e4 and 12345678901234567890"}\n{"a": "0x1e3"}\n',  # numbers in strings
    ]
    for data in cases:
        fast = _both(data)
        if fast[1] is None:
            assert fast[0] == _expected(data).encode()


@pytest.mark.parametrize(
    "bad, line",
    [
        (b'{"a": }', 3), (b'\xff', 3), (b'{"a": 1} x', 3), (b'{"a": 01}', 3), (b'{"a": 1,}', 3),
        (b'"abc', 3), (b'\xef\xbb\xbf{"a": 1}', 3), (b'{"a": "\xed\xa0\x80"}', 3), (b'{"a": 1e}', 3),
    ],
)
def test_fast_path_bad_lines_name_their_number(bad: bytes, line: int) -> None:
    data = b'{"a": 1}\n\n' + bad + b'\n{"a": 2}\n'
    out, err = _both(data)
    assert out is None and err[1] == line
    # the same bad line deep inside a long run of good ones
    data = b'{"a": 1}\n' * 2500 + bad + b"\n" + b'{"a": 2}\n' * 10
    out, err = _both(data)
    assert out is None and err[1] == 2501


def test_lines_of_mixed_types_and_without_newlines() -> None:
    lines: list[Any] = [b'{"a": 1}\n', '{"a": 2}\n', b'{"a": 3}', '{"a": 1e400}', b'{"a": [1]}\n']
    want = toonstream.dumps([{"a": 1}, {"a": 2}, {"a": 3}, {"a": Decimal("1e400")}, {"a": [1]}])
    for orjson in (True, False):
        saved = streaming._orjson
        if not orjson:
            streaming._orjson = None
        try:
            out = io.StringIO()
            assert encode_jsonl(iter(lines), out, spool_memory=16) == 5
            assert out.getvalue() == want
        finally:
            streaming._orjson = saved


@pytest.mark.slow
def test_fast_path_table_breaks_mid_batch_and_errors_name_the_row() -> None:
    rows = [{"id": i, "name": f"n{i}", "s": i / 3} for i in range(3000)]
    variants = {
        "nested": {"id": 1, "name": {"x": 1}, "s": 0.5},
        "extra key": {"id": 1, "name": "x", "s": 0.5, "t": 1},
        "missing key": {"id": 1, "name": "x"},
        "other order": {"s": 0.5, "name": "x", "id": 1},
        "scalar": 7,
        "list": [1, 2],
        "quoted cells": {"id": -1, "name": "a, b: [c]", "s": -0.0},
    }
    for at in (0, 1, 1023, 1024, 2999):
        for name, odd in variants.items():
            recs = rows[:at] + [odd] + rows[at:]
            data = b"".join(json.dumps(r).encode() + b"\n" for r in recs)
            for kw in ({}, {"delimiter": "\t"}, {"missing_as_null": True}, {"key": "rows"}):
                got = _both(data, **kw)
                want = toonstream.dumps(recs if "key" not in kw else {"rows": recs}, **{k: v for k, v in kw.items() if k != "key"})
                assert got == (want.encode(), None), (name, at, kw)
    # a value TOON cannot hold (an int past the decoders' number length), far into a table:
    # the row index as dumps() names it, and the input line
    line = b'{"id": 1, "name": ' + b"9" * 10_001 + b', "s": 1.5}\n'
    data = b"".join(json.dumps(r).encode() + b"\n" for r in rows[:2000]) + line
    data += b"".join(json.dumps(r).encode() + b"\n" for r in rows[2000:])
    out, err = _both(data)
    assert out is None and err[3] == (2000, "name") and err[1:3] == (2001, 1)
    assert err[0].startswith("number too long") and err[0].endswith("(at [2000].name) (input line 2001)")


FLAT = st.lists(
    st.fixed_dictionaries(
        {"id": st.integers(min_value=-(2**70), max_value=2**70), "x": PRIMS, "y": st.one_of(PRIMS, st.floats())}
    ),
    min_size=1,
    max_size=30,
)
NUMBER_TEXT = st.one_of(
    st.sampled_from(NUMBER_TEXTS),
    st.from_regex(r"\A-?(0|[1-9][0-9]{0,25})(\.[0-9]{1,25})?([eE][-+]?[0-9]{1,3})?\Z"),
)


@SETTINGS
@given(FLAT, DELIMS, st.booleans())
def test_fast_path_matches_stdlib_path(records: list[Any], delimiter: str, spaced: bool) -> None:
    sep = ", " if spaced else ","
    data = b"".join(json.dumps(r, separators=(sep, ":")).encode() + b"\n" for r in records)
    got = _both(data, delimiter=delimiter)
    assert got == (_expected(data, delimiter=delimiter).encode(), None)


@SETTINGS
@given(st.lists(st.tuples(NUMBER_TEXT, NUMBER_TEXT), min_size=1, max_size=20))
@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_fast_path_number_texts(pairs: list[tuple[str, str]]) -> None:
    data = "".join(f'{{"a": {a}, "b": [{b}]}}\n{{"a": {b}, "b": "{a}"}}\n' for a, b in pairs).encode()
    assert _both(data) == (_expected(data).encode(), None)


JSONISH = st.text(alphabet='{}[]":,0123456789.eE+-truefalsn \t\\u\x00\xe9', max_size=30)


@SETTINGS
@given(st.lists(JSONISH, min_size=1, max_size=6))
def test_fast_path_accepts_and_rejects_like_stdlib(lines: list[str]) -> None:
    data = "\n".join(lines).encode()
    _both(data)


# ---------------------------------------------------------------- kinds from the batches, byte spool

def test_flat_batches_of_mixed_kinds_across_boundaries() -> None:
    from toonstream.encoder import ROW_BATCH as FLAT_BATCH

    cells = [1, 2.5, -0.0, 0, True, None, "x", "é😀", 1e21, 1e-7, 10**20, "true", "a,b", "", " pad", 3.0, False, -7]
    rows = [{"id": i, "v": cells[i % len(cells)], "w": cells[(i * 7) % len(cells)], "s": f"u{i}"} for i in range(2 * FLAT_BATCH + 50)]
    odd_rows = {"nested": {"id": 1, "v": {"x": 1}, "w": 0, "s": "x"}, "list": {"id": 1, "v": [1], "w": 0, "s": "x"}, "none": None}
    for at in (FLAT_BATCH - 1, FLAT_BATCH, 2 * FLAT_BATCH + 3):
        for name, odd in [("plain", None), *odd_rows.items()]:
            recs = rows if name == "plain" else rows[:at] + [odd] + rows[at:]
            data = b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in recs)
            for kw in ({}, {"delimiter": "|"}):
                got = _both(data, **kw)
                assert got == (toonstream.dumps(recs, **kw).encode(), None), (name, at, kw)
            if name == "plain":
                break


def test_row_spool_copied_to_text_and_binary_sinks() -> None:
    # multi-byte characters across the 64 KiB copy chunks, a spool that moves to disk
    recs = [{"id": i, "city": ["Kraków", "São Paulo", "東京", "😀x"][i % 4] * (1 + i % 5)} for i in range(20_000)]
    data = b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in recs)
    want = toonstream.dumps(recs)
    text = io.StringIO()
    encode_jsonl(io.BytesIO(data), text, spool_memory=1 << 12)
    assert text.getvalue() == want
    binary = io.BytesIO()
    encode_jsonl(io.BytesIO(data), binary, spool_memory=1 << 12, key="rows")
    assert binary.getvalue() == toonstream.dumps({"rows": recs}).encode()


def _random_value(rnd: Any, depth: int, scalars: list[Any], keys: Any, width: int, leaf: float) -> Any:
    """A random JSON-model value, at most 4 levels below ``depth`` 0."""
    r = rnd.random()
    if depth > 3 or r < leaf:
        return rnd.choice(scalars)
    if r < 0.75:
        return {rnd.choice(keys): _random_value(rnd, depth + 1, scalars, keys, width, leaf) for _ in range(rnd.randint(0, width))}
    return [_random_value(rnd, depth + 1, scalars, keys, width, leaf) for _ in range(rnd.randint(0, width))]


def _outcome(write: Any, *, nothing_on_error: bool = False) -> Any:
    """("ok", text) or ("error", message, path) of ``write(out)``."""
    out = io.StringIO()
    try:
        write(out)
    except ToonEncodeError as e:
        if nothing_on_error:
            assert out.getvalue() == ""
        return "error", e.msg, e.path
    return "ok", out.getvalue()


def test_max_depth_counts_the_key_like_dumps() -> None:
    # Records under key= sit one level deeper, as in dumps({key: records}):
    # the same output, or the same error (message and path), at every limit.
    import random

    rnd = random.Random(3)

    def value(depth: int) -> Any:
        return _random_value(rnd, depth, [1, "x", None, 2.5, True], "abc", 2, 0.5)

    outcome = _outcome

    for _ in range(400):
        if rnd.random() < 0.5:
            recs = [value(1) for _ in range(rnd.randint(0, 4))]
        else:  # tables, some with a nested field group
            recs = [{"a": rnd.choice([1, {"x": 1}, [1, 2]]), "b": 2} for _ in range(rnd.randint(0, 4))]
        md = rnd.randint(0, 4)
        key = rnd.choice([None, "k"])
        want = outcome(lambda o: o.write(toonstream.dumps(recs if key is None else {key: recs}, max_depth=md)))
        data = b"".join(json.dumps(r).encode() + b"\n" for r in recs)
        assert outcome(lambda o: encode_records(recs, o, key=key, max_depth=md)) == want, (recs, md, key)
        assert outcome(lambda o: encode_records(iter(recs), o, key=key, max_depth=md)) == want, (recs, md, key)
        assert outcome(lambda o: encode_jsonl(io.BytesIO(data), o, key=key, max_depth=md)) == want, (recs, md, key)


def _events_of(value: Any) -> list[tuple[str, str, Any]]:
    """The ijson events of ``value``, built by hand (ijson cannot carry "\ud800")."""
    events: list[tuple[str, str, Any]] = []
    todo: list[Any] = [("v", value)]
    while todo:
        tag, v = todo.pop()
        if tag == "e":
            events.append(("", v, None))
        elif tag == "k":
            events.append(("", "map_key", v))
        elif type(v) is dict:
            todo.append(("e", "end_map"))
            for k, x in reversed(list(v.items())):
                todo += [("v", x), ("k", k)]
            events.append(("", "start_map", None))
        elif type(v) is list:
            todo.append(("e", "end_array"))
            todo += [("v", x) for x in reversed(v)]
            events.append(("", "start_array", None))
        else:
            kind = {str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}[type(v)]
            events.append(("", kind, v))
    return events


def _send_events(out: Any, value: Any, **options: Any) -> None:
    """``value`` through the event Encoder into ``out``."""
    enc = Encoder(out, **options)
    for ev in _events_of(value):
        enc.send(ev)
    enc.close()


def test_event_encoder_max_depth_is_dumps_max_depth() -> None:
    # The limit follows dumps' rules (every container is a level, empty ones
    # and a table's rows too): the same output or the same error (message,
    # path), and nothing written on error.
    import random

    rnd = random.Random(11)

    def value(depth: int) -> Any:
        return _random_value(rnd, depth, [1, "x", None, True, "b|c"], ["a", "b", "0"], 3, 0.45)

    def outcome(write: Any) -> Any:
        return _outcome(write, nothing_on_error=True)

    for _ in range(1500):
        if rnd.random() < 0.5:
            v = value(0)
        else:  # an array member of the root object (streamed) beside another member
            v = {"t": [{"id": rnd.choice(["a|b", "x"]), "n": 1} for _ in range(rnd.randint(1, 3))], "z": value(1)}
        md = rnd.choice([0, 1, 2, 3, 4])
        want = outcome(lambda o: o.write(toonstream.dumps(v, max_depth=md)))
        assert outcome(lambda o: _send_events(o, v, max_depth=md)) == want, (v, md)
    assert outcome(lambda o: _send_events(o, {"z": {"a": {}}}, max_depth=3)) == ("ok", "z:\n  a:")  # was refused at send time
    assert outcome(lambda o: _send_events(o, {"z": {"a": {}}}, max_depth=2))[2] == ("z", "a")  # (an empty object is a level)


@pytest.mark.parametrize("depth", [3000, 12000])
@pytest.mark.slow
def test_event_encoder_takes_values_deeper_than_pickle_follows(depth: int) -> None:
    # Spooled elements deeper than pickle's recursion are spooled flat: the
    # output (or the max_depth error) is dumps', never a RecursionError.
    for root in ("array", "member"):
        inner: Any = 1
        for _ in range(depth):
            inner = {"a": inner}
        value: Any = [inner] if root == "array" else {"k": [inner]}
        want = _outcome(lambda o: o.write(toonstream.dumps(value)))
        got = _outcome(lambda o: _send_events(o, value), nothing_on_error=True)
        assert got == want, (root, depth)


def test_flat_spool_records_round_trip() -> None:
    import random

    from toonstream.streaming import _flatten, _unflatten

    rnd = random.Random(5)

    def value(depth: int) -> Any:
        r = rnd.random()
        if depth > 4 or r < 0.4:
            return rnd.choice([1, "x", None, True, 2.5, "", 0, Decimal("1.5")])
        if r < 0.6:
            return {rnd.choice(["a", "b", "", "k"]): value(depth + 1) for _ in range(rnd.randint(0, 3))}
        if r < 0.8:
            return [value(depth + 1) for _ in range(rnd.randint(0, 3))]
        return tuple(value(depth + 1) for _ in range(rnd.randint(0, 3)))

    for _ in range(3000):
        v = value(0)
        back = _unflatten(_flatten(v))
        assert back == v and repr(back) == repr(v)  # (repr: tuples stay tuples, key order kept)


def test_event_encoder_error_paths_name_the_member_and_the_element() -> None:
    # A value TOON cannot hold in an array member of the root object: the
    # member's key first; a max_depth error: the path to the deep container.
    def send_all(value: Any, **kw: Any) -> ToonEncodeError:
        out = io.StringIO()
        enc = Encoder(out, **kw)
        with pytest.raises(ToonEncodeError) as e:
            for ev in _events_of(value):
                enc.send(ev)
            enc.close()
        assert out.getvalue() == ""
        return e.value

    doc = {"a1": [{"id": "x", "name": "n"}, {"id": "a|b", "name": "a\ud800"}], "z": 1}
    with pytest.raises(ToonEncodeError) as want:
        toonstream.dumps(doc)
    assert send_all(doc).path == want.value.path == ("a1", 1, "name")
    assert send_all([[], [[1]]], max_depth=2).path == (1, 0)  # (an empty array is a level too)
    assert send_all([[], [[1]]], max_depth=1).path == (0,)


class _CountingBytes(bytes):
    """A screened batch that counts the bytes its searches pass over."""

    scanned = 0

    def find(self, sub: Any, start: Any = 0, *args: Any) -> int:
        hit = super().find(sub, start, *args)
        type(self).scanned += (len(self) if hit == -1 else hit + len(sub)) - (start or 0)
        return hit


@pytest.mark.parametrize("line", [b'{"a":1e5}\n', b'{"a":0.3333333333333333}\n'])
def test_number_recheck_scans_a_batch_once(line: bytes) -> None:
    # Lines whose numbers orjson may read differently are found by searching the screened batch
    # for two patterns; when only one of them occurs, searching both again from every hit rescanned
    # the rest of the batch each time (JSONL of floats like i/3 was quadratic in the batch size).
    lines = [line] * 4000
    values = [json.loads(x) for x in lines]
    screened = _CountingBytes(b"".join(lines).translate(streaming._SCREEN))
    _CountingBytes.scanned = 0
    streaming._recheck(lines, values, screened, 1)
    assert _CountingBytes.scanned <= 3 * len(screened)
    assert values == [json.loads(x) for x in lines]


@pytest.mark.parametrize("records", [[{"o": object()}], [{"a": {"o": object()}}], [[object()]], [{"a": 1}, {"o": object()}]],
                         ids=["first-row", "nested", "list", "second-row"])
def test_encode_records_error_path_is_dumps(records: list[Any]) -> None:
    """The first element's error path was doubled ([0][0].o) by the plan's look at its shape."""
    with pytest.raises(ToonEncodeError) as want:
        toonstream.dumps(records)
    for given in (records, iter(records)):
        with pytest.raises(ToonEncodeError) as got:
            encode_records(given, io.StringIO())
        assert got.value.path == want.value.path and str(got.value) == str(want.value)


@pytest.mark.parametrize(
    "value",
    [
        [{"a": 1}, {"a": b"x"}],
        [{"a": {"x": b"x"}}],
        [{"a": {"x": b"b", "y": 1}}, {"a": 5}],
        {"m": {"x": b"x"}},
        {"m": [1, {"x": b"x"}]},
        {"m": {"x": "\ud800"}, "n": {"x": 1}},
        {"m": {"c": {"x": b"b", "y": 1}}, "n": {"c": 5}},
        [1] * 50 + [{"a": b"x"}],
    ],
)
def test_streaming_errors_name_the_path_dumps_names(value: Any) -> None:
    """The streaming encoders' errors carry ``dumps``' path (they lost the
    field, the row or the member key before)."""
    from toonstream.streaming import Encoder, encode_events

    def one_by_one() -> None:
        enc = Encoder(io.StringIO())
        for ev in _host_events(value):
            enc.send(ev)
        enc.close()

    with pytest.raises(toonstream.ToonEncodeError) as want:
        toonstream.dumps(value)
    assert want.value.path
    calls = [lambda: encode_events(_host_events(value), io.StringIO()), one_by_one]
    if isinstance(value, list):
        calls += [lambda: encode_records(value, io.StringIO()), lambda: encode_records(iter(value), io.StringIO())]
    for call in calls:
        with pytest.raises(toonstream.ToonEncodeError) as got:
            call()
        assert got.value.path == want.value.path


def test_a_line_the_native_engine_finds_not_json_skips_the_workers(tmp_path: Any, monkeypatch: Any) -> None:
    """The native engine declines a malformed line (syntax): the one process
    that reports it runs at once, not forked workers that stop at it and then
    hand over to that process (three passes over a big file before)."""
    import pathlib

    from toonstream import _engine
    from toonstream import streaming as st_mod

    if _engine.current().jsonl_table is None:
        pytest.skip("the python engine has no native table encoder to decline")
    src = pathlib.Path(tmp_path) / "late.jsonl"
    src.write_text("".join(json.dumps({"id": i}) + "\n" for i in range(1000)) + '{"id": \n{"id": 1}\n')

    def no_workers(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the workers ran")

    monkeypatch.setattr(st_mod, "_ranged_batches", no_workers)
    monkeypatch.setattr(st_mod._parallel, "workers_for", lambda size, requested: 2)
    with pytest.raises(ToonEncodeError, match="invalid JSON") as e:
        encode_jsonl(src, io.StringIO(), workers=2)
    assert e.value.line == 1001
    # a shape the engine leaves to the reference still goes to the workers
    src.write_text("".join(json.dumps({"id": i, "n": [i]}) + "\n" for i in range(1000)))
    with pytest.raises(AssertionError, match="the workers ran"):
        encode_jsonl(src, io.StringIO(), workers=2)


@pytest.mark.parametrize("sort_keys", [False, True])
@pytest.mark.parametrize("as_list", [False, True])
def test_default_is_called_once_per_value_in_dumps(engine: str, sort_keys: bool, as_list: bool) -> None:
    # As json.dumps: dumps calls default once for each value it converts, although it looks at
    # an array's elements twice (its shape, then its rows); so does encode_records with
    # sort_keys (its copies), and without it once in each of its two passes.
    class Host:
        def __init__(self, n: int) -> None:
            self.n = n

    calls: list[int] = []

    def default(o: Any) -> Any:
        calls.append(o.n)
        return {"n": o.n, "d": Decimal("1.50")}

    records = [{"b": Host(i), "a": [Host(-i)]} for i in range(50)]
    once = sorted([i for i in range(50)] + [-i for i in range(50)])
    out = io.StringIO()
    assert encode_records(records if as_list else iter(records), out, default=default, sort_keys=sort_keys,
                          spool_memory=1 << 12) == 50
    if sort_keys:
        assert sorted(calls) == once
    else:  # (at most once a pass: once where pass one writes the rows ahead)
        assert set(calls) == set(once) and all(calls.count(c) <= 2 * once.count(c) for c in set(once))
    calls.clear()
    assert out.getvalue() == toonstream.dumps(records, default=default, sort_keys=sort_keys)
    assert sorted(calls) == once
    calls.clear()
    text = "\n".join(toonstream.encode_lines({"r": records}, default=default, sort_keys=sort_keys))
    assert text == toonstream.dumps({"r": records}, default=default, sort_keys=sort_keys) and len(calls) == 200


def test_encoder_as_a_context_manager(engine: str) -> None:
    # The block's end closes the encoder (the document is written); an exception in the block
    # discards the events: nothing written, and close() afterwards says why.
    out = io.StringIO()
    with Encoder(out) as enc:
        enc.send_all(ijson.parse(b'[{"id": 1}, {"id": 2}]'))
    assert out.getvalue() == "[2]{id}:\n  1\n  2"
    out = io.StringIO()
    with pytest.raises(KeyError), Encoder(out) as enc:
        enc.send(("start_array", None))
        enc.send(("integer", 1))
        raise KeyError("the producer failed")
    assert out.getvalue() == ""
    with pytest.raises(ToonEncodeError, match="the with block raised KeyError"):
        enc.close()
    with pytest.raises(ToonEncodeError, match="event after close"):
        enc.send(("integer", 2))
    out = io.StringIO()
    with pytest.raises(ToonEncodeError, match="incomplete event stream"), Encoder(out) as enc:
        enc.send(("start_array", None))  # (ended without its end_array: close() refuses it)
    assert out.getvalue() == ""


def test_a_default_that_changes_between_the_passes_is_an_encode_error(engine: str) -> None:
    # encode_records calls default in each of its two passes: one whose value for an object
    # changes (a dict, then an int) made a row that no longer fits the planned table, which
    # raised a bare TypeError.
    import itertools

    class Host:
        pass

    count = itertools.count()
    with pytest.raises(ToonEncodeError, match="a row changed after the table was planned"):
        encode_records([{"a": Host()}, {"a": Host()}], io.StringIO(),
                       default=lambda o: {"x": 1} if next(count) < 2 else 5)

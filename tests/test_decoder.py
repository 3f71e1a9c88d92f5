"""Decoder behaviour beyond the fixtures: locations, limits, policies, streaming."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, Iterator

import pytest

import toonstream
from toonstream import Decoder, Rows, ToonDecodeError

from conftest import chunkings


def _err(doc: str | bytes, **opts: object) -> ToonDecodeError:
    with pytest.raises(ToonDecodeError) as info:
        toonstream.loads(doc, **opts)  # type: ignore[arg-type]
    return info.value


# ---------------------------------------------------------------- error locations


@pytest.mark.parametrize(
    "doc, code, line, column",
    [
        ("tags[3]: a,b", "count_mismatch", 1, 1),
        ("a: 1\nb:\n  c: \"x\\q\"", "invalid_escape", 3, 8),
        ("items[2]{id,name}:\n  1,Ada\n  2", "width_mismatch", 3, 3),
        ("a: 1\n   b: 2", "bad_indent", 2, 4),
        ("a:\n\tb: 1", "tab_indent", 2, 1),
        ("a: 1\na: 2", "duplicate_key", 2, 1),
        ("x:\n  y: 1\n  oops", "missing_colon", 3, 3),
        ("[2]: a,b\nmore: 1", "trailing_content", 2, 1),
        ("items[2]:\n  - a\n\n  - b", "blank_line", 3, 1),
        ("items[2]:\n  - a\nz: 1", "count_mismatch", 1, 1),
        ("k: \"abc", "unterminated_string", 1, 4),
        ("k[2]: 1,\"x\\uD800\"", "invalid_escape", 1, 11),
    ],
)
def test_error_code_and_location(doc: str, code: str, line: int, column: int) -> None:
    e = _err(doc)
    assert (e.code, e.line, e.column) == (code, line, column), str(e)
    assert e.line_text == (doc.split("\n")[line - 1] if code != "blank_line" else "")
    assert isinstance(e, ValueError) and isinstance(e, toonstream.ToonError)
    assert f"line {line}" in str(e)


def test_count_error_reported_at_scope_end_names_both_lines() -> None:
    e = _err("a:\n  items[3]{x}:\n    1\n    2\n  b: 1")
    assert e.code == "count_mismatch" and e.line == 2 and "line 5" in str(e)


def test_too_many_rows_fails_at_the_extra_row() -> None:
    events: list[object] = []
    d = Decoder()
    events += d.feed("t[1]{a}:\n  1\n")
    with pytest.raises(ToonDecodeError) as info:
        d.feed("  2\n")
    assert info.value.line == 3
    with pytest.raises(ToonDecodeError):  # a failed decoder stays failed
        d.feed("x")


# ---------------------------------------------------------------- bytes and lines


def test_invalid_utf8_is_a_decode_error_with_location() -> None:
    for bad in (b"a: 1\nb: \xff", b"a: \xe2\x82", b"a: \xed\xa0\x80", b"a: \xc0\xaf"):
        e = _err(bad)
        assert e.code == "invalid_utf8"
        assert e.line == bad.count(b"\n") + 1


def test_utf8_split_across_chunks_and_crlf_split() -> None:
    doc = "name: Zoë 👋\r\nlist[2]: é,ü\r\n".encode()
    for name, chunks in chunkings(doc):
        d = Decoder()
        events = []
        for c in chunks:
            events += d.feed(c)
        events += d.close()
        assert toonstream.Scalar("Zoë 👋") in events, name


def test_str_after_bytes_cut_in_a_utf8_sequence_is_read_as_its_utf8() -> None:
    """Chunks may be str or bytes, mixed: a str chunk reads on as its UTF-8.  So bytes that end
    inside a UTF-8 sequence (or a BOM) followed by str are invalid UTF-8 where the sequence began,
    as in the joined bytes, with nothing of the failing line yielded, on every driver and engine
    (the bytes were dropped and the error came at close, on a line past the end)."""
    text = "x: 1\nname: Zoë 👋 ©\nb: 2\n"
    for data in ("\ufeff" + text).encode(), text.encode():
        for cut in range(1, len(data)):
            if not 0x80 <= data[cut] < 0xC0:  # (a cut between characters is no error)
                continue
            chunks: list[Any] = [data[:cut], data[cut:].decode("utf-8", "ignore"), "z: 3\n"]
            joined = b"".join(c if isinstance(c, bytes) else c.encode() for c in chunks)
            want = _err(joined)
            assert want.code == "invalid_utf8"
            d = Decoder()
            with pytest.raises(ToonDecodeError) as info:
                for c in chunks:
                    d.feed(c)
                d.close()
            got = info.value
            assert (got.code, got.line, got.column, got.msg, got.line_text) == (want.code, want.line, want.column, want.msg, want.line_text), cut
            events: list[Any] = []
            with pytest.raises(ToonDecodeError) as info:
                events.extend(toonstream.parse(iter(chunks)))
            got = info.value
            assert (got.code, got.line, got.column, got.msg) == (want.code, want.line, want.column, want.msg), cut
            before: list[Any] = []
            with pytest.raises(ToonDecodeError):
                before.extend(toonstream.parse([joined]))
            assert events == before, cut


def test_bom_skipped_once_and_only_at_start() -> None:
    assert toonstream.loads("\ufeffa: 1") == {"a": 1}
    assert toonstream.loads(b"\xef\xbb\xbfa: 1") == {"a": 1}
    assert toonstream.loads("a: \ufeffx") == {"a": "\ufeffx"}


@pytest.mark.parametrize("length, code, column", [(40, "invalid_utf8", 44), (60, "line_too_long", 51), (500, "line_too_long", 51)])
def test_too_long_and_invalid_utf8_in_one_line_report_the_first(length: int, code: str, column: int) -> None:
    # The limit is crossed at column 51; the bad byte sits at length + 4.
    # Whichever comes first in the line is reported, however the bytes are fed.
    data = b"k: " + b"a" * length + b"\xff"
    for chunk in (1, 7, 64, 4096, len(data)):
        d = Decoder(max_line_length=50)
        with pytest.raises(ToonDecodeError) as info:
            for k in range(0, len(data), chunk):
                d.feed(data[k : k + chunk])
            d.close()
        assert (info.value.code, info.value.line, info.value.column) == (code, 1, column), chunk


def test_unicode_line_separators_are_content() -> None:
    assert toonstream.loads("a: x\u2028y\x85z\x0cw\rv") == {"a": "x\u2028y\x85z\x0cw\rv"}


def test_line_length_limit() -> None:
    e = _err("a: " + "x" * 100, max_line_length=50)
    assert e.code == "line_too_long"
    d = Decoder(max_line_length=50)
    with pytest.raises(ToonDecodeError):
        for _ in range(20):
            d.feed("xxxxxxxx")  # no newline yet: the partial line is bounded too


# ---------------------------------------------------------------- numbers


def test_number_policies() -> None:
    assert toonstream.loads("[4]: 1.0,-0.0,1e400,-1e400") == [1.0, 0.0, Decimal("1e400"), Decimal("-1e400")]
    assert math.copysign(1, toonstream.loads("-0.0")) == 1.0
    big = "9" * 5000
    assert toonstream.loads(f"n: {big}") == {"n": int(Decimal(big))}
    assert toonstream.loads("x: 0.1", parse_float=Decimal) == {"x": Decimal("0.1")}
    assert toonstream.loads(f"n: {2**64 + 1}")["n"] == 2**64 + 1
    e = _err("n: " + "1" * 10_001)
    assert e.code == "number_too_long"
    assert toonstream.loads("n: " + "1" * 10_001, max_number_length=20_000)["n"] == int(Decimal("1" * 10_001))


# ---------------------------------------------------------------- limits and depth


def _deep_lists(levels: int) -> Iterator[str]:
    # "- [1]:" opens a nested list whose item is one level deeper (indent 1 keeps it small)
    yield "[1]:\n"
    for i in range(1, levels):
        yield " " * i + "- [1]:\n"
    yield " " * levels + "- x\n"


def test_deep_nesting_is_iterative() -> None:
    v = toonstream.load(_deep_lists(3000), indent_size=1)
    depth = 0
    while isinstance(v, list):
        v = v[0]
        depth += 1
    assert v == "x" and depth == 3000


@pytest.mark.parametrize(
    "doc, line, column",
    [
        ("a:\n  b[2]:\n    - x", 2, 3),
        ("a:\n  b[2]{x}:\n    1", 2, 3),
        ("a:\n  u[2:]{x}:\n    k: 1", 2, 3),
        ("a:\n  b[2]: x", 2, 3),  # (an inline array: the same place)
        ("l[1]:\n  - b[2]:\n      - 1", 2, 5),
        ("l[1]:\n  - [2]:\n    - 1", 2, 5),
        ("l[1]:\n  - [2]: 1", 2, 5),
        ("[3]:\n  - 1", 1, 1),
    ],
)
def test_count_errors_point_at_the_header(engine: str, doc: str, line: int, column: int) -> None:
    for chunking in (None, 1):
        with pytest.raises(toonstream.ToonDecodeError) as e:
            if chunking is None:
                toonstream.loads(doc)
            else:
                dec = toonstream.Decoder()
                for ch in doc:
                    dec.feed(ch)
                dec.close()
        assert (e.value.code, e.value.line, e.value.column) == ("count_mismatch", line, column)
        assert e.value.line_text == doc.splitlines()[line - 1]


@pytest.mark.parametrize("blank", ["", "   ", "\t ", "  \t"])
def test_a_blank_line_error_shows_the_blank_line(engine: str, blank: str) -> None:
    doc = f"a[2]{{x}}:\n  1\n{blank}\n\n  2"
    with pytest.raises(toonstream.ToonDecodeError) as e:
        toonstream.loads(doc)
    assert (e.value.code, e.value.line, e.value.column, e.value.line_text) == ("blank_line", 3, 1, blank)


def test_depth_limit_is_a_decode_error() -> None:
    with pytest.raises(ToonDecodeError) as info:
        toonstream.load(_deep_lists(20_000), indent_size=1)
    assert info.value.code == "too_deep"


def test_deep_nested_field_groups() -> None:
    n = 5000
    doc = "a[1]{" + "x{" * n + "y" + "}" * n + "}:\n  7"
    v = toonstream.loads(doc)["a"][0]
    for _ in range(n):
        v = v["x"]
    assert v == {"y": 7}
    e = _err("a[1]{" + "x{" * 100_000 + "y" + "}" * 100_000 + "}:\n  7")
    assert e.code == "too_deep"


def test_huge_declared_length_is_not_allocated() -> None:
    e = _err("a[999999999999]: x")
    assert e.code == "count_mismatch"
    assert toonstream.loads("a[999999999999]: x", strict=False) == {"a": ["x"]}
    assert _err("a[99999999999999999999999]: x").code == "bad_length"


# ---------------------------------------------------------------- policies


def test_non_strict_never_drops_lines() -> None:
    # over-indented content is an error in both modes (the spec allows skipping it; we do not)
    for doc in ("a: 1\n    b: 2", "t[1]{a}:\n  1\n    junk: 9"):
        assert _err(doc, strict=False).code in ("over_indented", "depth_jump")
    # tabs in indentation are rejected in both modes
    assert _err("a:\n\tb: 1", strict=False).code == "tab_indent"
    # row width mismatches too: there is no value to give the missing cells
    assert _err("t[2]{a,b}:\n  1\n  2,3", strict=False).code == "width_mismatch"


def test_non_strict_relaxes_counts_blank_lines_and_duplicates() -> None:
    assert toonstream.loads("t[5]: a,b", strict=False) == {"t": ["a", "b"]}
    assert toonstream.loads("t[1]:\n  - a\n\n  - b", strict=False) == {"t": ["a", "b"]}
    assert toonstream.loads("a: 1\nb: 2\na: 3", strict=False) == {"a": 3, "b": 2}


def test_raw_control_characters_inside_quotes_are_accepted() -> None:
    assert toonstream.loads('a: "x\x01y"') == {"a": "x\x01y"}


def test_prototype_keys_are_plain_keys() -> None:
    assert toonstream.loads("__proto__:\n  x: 1\nconstructor: 2") == {"__proto__": {"x": 1}, "constructor": 2}


def test_decoder_events_shape() -> None:
    d = Decoder()
    events = d.feed("t[2]{a,b{c}}:\n  1,x\n  2,y\n") + d.close()
    assert events[0] == toonstream.StartObject()
    table = events[2]
    assert isinstance(table, toonstream.StartTable) and table.width == 2 and table.length == 2
    assert events[3] == toonstream.Rows([(1, "x"), (2, "y")])


# ---------------------------------------------------------------- held rows


def test_small_feeds_hold_rows_until_the_next_feed_flush_or_close() -> None:
    d = Decoder()
    assert [type(e).__name__ for e in d.feed("t[40]{a,b}:\n")] == ["StartObject", "Key", "StartTable"]
    assert d.feed("  1,x\n  2,y\n") == []  # held: more rows are due
    assert d.line == 1  # held lines are not processed yet
    assert d.flush() == [Rows([(1, "x"), (2, "y")])]
    assert d.line == 3
    events: list[object] = []
    for i in range(3, 41):
        events += d.feed(f"  {i},z\n")
    events += d.close()
    rows = [r for e in events if isinstance(e, Rows) for r in e.rows]
    assert rows == [(i, "z") for i in range(3, 41)]


def test_an_error_in_held_rows_has_its_own_line() -> None:
    d = Decoder()
    d.feed("t[9]{a,b}:\n  1,x\n")
    d.feed("  2\n")  # wrong width, held
    with pytest.raises(ToonDecodeError) as info:
        d.feed("  3,z\n" * 40)
    assert (info.value.line, info.value.code, info.value.line_text) == (3, "width_mismatch", "  2")


def test_hold_rows_false_returns_every_complete_line() -> None:
    d = Decoder(hold_rows=False)
    d.feed("t[40]{a}:\n")
    assert d.feed("  1\n") == [Rows([(1,)])]
    assert d.line == 2


def test_repeated_headers_decode_alike_and_fail_alike() -> None:
    # Field lists are cached by their text: a repeat must give the same
    # fields, and a bad one must fail every time (nothing bad is cached).
    doc = "\n".join(f"- t[1{d.strip(',')}]{{a{d}b}}:\n    1{d}2" for d in [",", "|", ",", "\t", "|"])
    value = toonstream.loads("[5]:\n" + "\n".join("  " + line for line in doc.split("\n")))
    assert value == [{"t": [{"a": 1, "b": 2}]}] * 5
    bad = "[2]:\n  - t[1]{a,a}:\n      1,2\n  - t[1]{a,a}:\n      1,2"
    with pytest.raises(ToonDecodeError) as info:
        toonstream.loads(bad)
    assert (info.value.code, info.value.line) == ("duplicate_key", 2)
    assert toonstream.loads(bad, strict=False) == [{"t": [{"a": 2}]}] * 2


def test_tiny_chunks_inside_a_table_are_buffered_then_decoded_alike() -> None:
    rows = "".join(f"  {i},é{i}\n" for i in range(300))
    doc = ("t[300]{a,b}:\n" + rows + "u: 1\n").encode()
    whole = Decoder()
    want = whole.feed(doc) + whole.close()
    for size in (1, 3, 64, 700):
        d = Decoder()
        got: list[object] = []
        buf = bytearray()
        for k in range(0, len(doc), size):
            buf[:] = doc[k : k + size]  # the caller reuses its buffer: we must have copied
            got += d.feed(buf)
        got += d.close()
        assert flat(got) == flat(want), size


def test_buffered_chunks_keep_errors_and_types_in_order() -> None:
    d = Decoder()
    d.feed(b"t[50]{a}:\n")
    d.feed(b"  1\n")
    assert d.table_context() is None  # bytes still buffered: no context to act on
    d.feed("  2\n")  # a str after bytes: the buffered bytes go first
    assert [r for e in d.flush() if isinstance(e, Rows) for r in e.rows] == [(1,), (2,)]
    d.feed(b"  3\n  \xff\n")  # invalid UTF-8, buffered: reported when decoded, at its line
    with pytest.raises(ToonDecodeError) as info:
        d.flush()
    assert (info.value.code, info.value.line) == ("invalid_utf8", 5)


def flat(events: list[object]) -> list[object]:
    """Events with Rows batches split into single rows (batching may differ)."""
    out: list[object] = []
    for e in events:
        if isinstance(e, Rows):
            out += [("row", r) for r in e.rows]
        else:
            out.append(e)
    return out


def test_rows_held_at_the_end_come_before_an_error_at_close() -> None:
    # Held-back rows are not lost when close() finds the input short: the
    # drivers flush them first, and close() keeps them for the frames reader.
    data = b"t[3]{a}:\n  1\n  2\n"
    d = Decoder()
    d.feed(data[:9])
    assert d.feed(data[9:13]) == [] and d.feed(data[13:]) == []  # held
    with pytest.raises(ToonDecodeError) as e:
        d.close()
    assert e.value.code == "count_mismatch"
    assert d.events_before_error() == [Rows(rows=[(1,), (2,)])]
    for chunk in (1, 4, 9, None):
        got: list[Any] = []
        with pytest.raises(ToonDecodeError):
            for row in toonstream.rows(_chunked(data, chunk), "t"):
                got.append(row)
        assert got == [(1,), (2,)], chunk
        events: list[Any] = []
        with pytest.raises(ToonDecodeError):
            for ev in toonstream.parse(_chunked(data, chunk)):
                events.append(ev)
        assert ("t.item.a", "number", 2) in events, chunk


def _chunked(data: bytes, size: int | None) -> Any:
    import io

    class Reader(io.RawIOBase):  # returns at most `size` bytes per read
        def __init__(self) -> None:
            self.pos = 0

        def readable(self) -> bool:
            return True

        def readinto(self, b: Any) -> int:
            n = min(len(b), size or len(data), len(data) - self.pos)
            b[:n] = data[self.pos : self.pos + n]
            self.pos += n
            return n

    return Reader()

"""Decoder core: deep field groups, memory of a line fed in small chunks,
and the number rules shared by the encoders and the decoders."""

from __future__ import annotations

import io
import tracemalloc
from decimal import Decimal
from typing import Any, Callable

import pytest

import toonstream
from toonstream import ToonDecodeError, ToonEncodeError
from toonstream.decoder import Decoder

# ------------------------------------------------- deep field groups, every driver

# Field groups may nest up to max_depth levels counting the outer braces.
MAX_GROUPS = toonstream.decoder.DEFAULT_MAX_DEPTH - 1


def _group(depth: int, space: str = "") -> str:
    # Two spellings of one field tree ("{ a{" vs "{a{"): equal Fields from different header texts.
    return "{" + space + "a{" * depth + "x" + "}" * depth + "}"


def _dig(value: Any, depth: int) -> Any:
    """The leaf of a row object nested ``depth`` groups deep (iteratively: == would recurse)."""
    for _ in range(depth):
        assert list(value) == ["a"]
        value = value["a"]
    return value["x"]


def _docs(depth: int) -> dict[str, tuple[str, str, str]]:
    """kind -> (document, items prefix of the rows, rows prefix)."""
    f, f2 = _group(depth), _group(depth, " ")
    items = "".join(f"  - id: {i}\n    t[1]{f if i % 2 else f2}:\n      {i}\n" for i in range(10))
    return {
        "table": (f"t[1]{f}:\n  1\nu[1]{f2}:\n  2\n", "t.item", "t"),
        "keyed": (f"t[1:]{f}:\n  k: 1\nu[1:]{f2}:\n  k: 2\n", "t.k", "t"),
        "list_items": (f"l[10]:\n{items}", "l.item.t.item", "l.item.t"),
    }


@pytest.mark.parametrize("depth", [500, 5_000, MAX_GROUPS])
@pytest.mark.parametrize("kind", ["table", "keyed", "list_items"])
@pytest.mark.slow
def test_equal_deep_field_groups_every_driver(depth: int, kind: str) -> None:
    doc, item_prefix, rows_prefix = _docs(depth)[kind]
    value = toonstream.loads(doc)
    if kind == "table":
        assert _dig(value["t"][0], depth) == 1 and _dig(value["u"][0], depth) == 2
    elif kind == "keyed":
        assert _dig(value["t"]["k"], depth) == 1 and _dig(value["u"]["k"], depth) == 2
    else:
        assert [_dig(item["t"][0], depth) for item in value["l"]] == list(range(10))
    found = list(toonstream.items(doc, item_prefix))
    assert [_dig(v, depth) for v in found] == ([1] if kind != "list_items" else list(range(10)))
    rows = list(toonstream.rows(doc, rows_prefix, as_dict=True))
    if kind == "keyed":
        assert [r.pop("key") for r in rows] == ["k"]
    assert [_dig(r, depth) for r in rows] == ([1] if kind != "list_items" else list(range(10)))
    if depth < MAX_GROUPS or kind != "list_items":  # (ijson prefixes grow with depth: quadratic text)
        triples = list(toonstream.parse(doc))
        numbers = [v for _, event, v in triples if event == "number"]
        assert numbers == ([1, 2] if kind != "list_items" else [n for i in range(10) for n in (i, i)])


def test_field_groups_beyond_max_depth_are_an_error() -> None:
    with pytest.raises(ToonDecodeError) as info:
        toonstream.loads(f"t[1]{_group(MAX_GROUPS + 1)}:\n  1\n")
    assert info.value.code == "too_deep"


# ------------------------------------------------- memory of a partial line


def _peak_per_byte(pieces: list[Any], newline: Any) -> tuple[float, float]:
    """Peak traced memory per byte of the line: while its pieces are fed,
    and overall (the line decoded too)."""
    size = sum(len(p.encode() if isinstance(p, str) else p) for p in pieces)
    tracemalloc.start()
    try:
        d = Decoder()
        for p in pieces:
            d.feed(p)
        feeding = tracemalloc.get_traced_memory()[1]
        events = d.feed(newline) + d.close()
        overall = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(events[2].value.encode()) == size - 3  # StartObject, Key, Scalar
    return feeding / size, overall / size


@pytest.mark.parametrize(
    ("chunk", "n"), [(1, 30_000), (2, 100_000), (7, 300_000), (64, 2_000_000), (None, 4_000_000)]
)
@pytest.mark.parametrize("kind", ["bytes", "str"])
def test_partial_line_memory_is_a_small_multiple_of_the_line(chunk: int | None, n: int, kind: str) -> None:
    line = "a: " + "x" * n
    data: Any = line.encode() if kind == "bytes" else line
    step = chunk or len(data)
    # (the pieces exist before tracing starts: only the decoder's memory is measured)
    pieces = [data[i : i + step] for i in range(0, len(data), step)]
    feeding, overall = _peak_per_byte(pieces, b"\n" if kind == "bytes" else "\n")
    # A str (or bytes) object per chunk cost about 30 bytes per byte fed 2 at a time.
    assert feeding <= 2.5, feeding
    assert overall <= 4, overall


@pytest.mark.parametrize("char", ["é", "€", "\U0001f600"])
def test_partial_line_memory_multibyte(char: str) -> None:
    data = ("a: " + char * 20_000).encode()
    # chunks of 3 bytes cut most characters: the carry path
    feeding, _ = _peak_per_byte([data[i : i + 3] for i in range(0, len(data), 3)], b"\n")
    assert feeding <= 2.5, feeding


def test_partial_line_memory_inside_a_table() -> None:
    # Inside a table with rows due, tiny chunks are gathered before being split into lines.
    head = b"t[3]{a,b}:\n  1,2\n  "
    row = b"3," + b"y" * 300_000
    d = Decoder()
    d.feed(head)
    tracemalloc.start()
    try:
        for i in range(0, len(row), 2):
            d.feed(row[i : i + 2])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= 2.5 * len(row), peak / len(row)


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 64])
def test_small_chunks_same_lines_and_errors(chunk: int) -> None:
    text = "\ufeffa: héllo \U0001f600\nb[2]: 1,2\r\nc: \"q\"\r\n"
    data = text.encode()
    whole = toonstream.loads(data)
    assert toonstream.load([data[i : i + chunk] for i in range(0, len(data), chunk)]) == whole
    assert toonstream.load([text[i : i + chunk] for i in range(0, len(text), chunk)]) == whole
    # str chunks that split a surrogate pair keep both halves, as joining them would
    d = Decoder()
    for c in ["a: x\ud83d", "\ude00y"]:
        d.feed(c)
    events = d.feed("\n") + d.close()
    assert events[2].value == "x\ud83d\ude00y"
    # invalid UTF-8 after a partial line: located at the bad byte
    bad = "a: ab".encode() + b"\xff" + b"cd\n"
    with pytest.raises(ToonDecodeError) as info:
        toonstream.load([bad[i : i + chunk] for i in range(0, len(bad), chunk)])
    assert (info.value.code, info.value.line, info.value.column, info.value.line_text) == ("invalid_utf8", 1, 6, "a: ab")
    long = b"k: 1\nk2: " + b"x" * 50
    with pytest.raises(ToonDecodeError) as info:
        toonstream.load([long[i : i + chunk] for i in range(0, len(long), chunk)], max_line_length=10)
    assert (info.value.code, info.value.line) == ("line_too_long", 2)


# ------------------------------------------------- numbers: what dumps writes, loads reads

LIMIT = toonstream.decoder.DEFAULT_MAX_NUMBER_LENGTH


@pytest.mark.parametrize(
    "value",
    [
        10**100_000,
        10**LIMIT,  # 10,001 digits
        -(10 ** (LIMIT - 1)),  # 10,000 digits and a sign
        Decimal("1E+999999999999999999"),
        Decimal("-1E-999999999999999999"),
        Decimal("1." + "1" * 20_000),
        Decimal("1" * (LIMIT + 1)),
    ],
    ids=["int_100001_digits", "int_10001_digits", "neg_int_10001_chars", "dec_exp_18_digits", "dec_neg_exp_18_digits",
         "dec_20002_chars", "dec_10001_digits"],
)
def test_encoders_refuse_numbers_the_decoders_refuse(value: Any) -> None:
    encoders: list[Callable[[], Any]] = [
        lambda: toonstream.dumps({"a": value}),
        lambda: toonstream.dumps({"t": [{"x": value}, {"x": 1}]}),
        lambda: toonstream.dumps([1, value]),
        lambda: toonstream.encode_records([{"x": value}], io.StringIO()),
        lambda: toonstream.encode_records(iter([{"x": 1}, {"x": value}]), io.StringIO()),
        lambda: toonstream.encode_events(
            iter([("", "start_map", None), ("", "map_key", "a"), ("a", "number", value), ("", "end_map", None)]),
            io.StringIO(),
        ),
    ]
    for encode in encoders:
        with pytest.raises(ToonEncodeError) as info:
            encode()
        assert "max_number_length" in str(info.value) or "exponent" in str(info.value)
        assert info.value.path  # where the number is


def test_jsonl_numbers_the_decoders_refuse() -> None:
    for text in ["1" * (LIMIT + 1), "1e999999999999999999", "1." + "1" * LIMIT]:
        with pytest.raises(ToonEncodeError):
            toonstream.encode_jsonl(io.StringIO('{"x": 1}\n{"x": %s}\n' % text), io.StringIO())


@pytest.mark.parametrize(
    "value",
    [
        10 ** (LIMIT - 1),  # 10,000 digits
        -(10 ** (LIMIT - 2)),
        Decimal("1E+99999999999999999"),  # 17 exponent digits
        Decimal("-1.5E-99999999999999999"),
        Decimal("1." + "1" * (LIMIT - 2)),  # 10,000 characters
        Decimal("1" * (LIMIT - 10)),  # written 1.11...e+9989: 9,997 characters
    ],
    ids=["int_10000_digits", "neg_int_9999_digits", "dec_exp_17", "dec_neg_exp_17", "dec_10000_chars", "dec_10000_digits"],
)
def test_numbers_at_the_limits_round_trip(value: Any) -> None:
    text = toonstream.dumps({"a": value, "t": [{"x": value}, {"x": 1}]})
    back = toonstream.loads(text, parse_float=Decimal)
    assert back["a"] == value and back["t"][0]["x"] == value


# The exponent counts significant digits: leading zeros and the sign are not digits.
EXPONENTS_OK = {
    "1e00000000000000000001": Decimal(10),
    "1e+00000000000000000001": Decimal(10),
    "1e-0000000000000000000000002": Decimal("0.01"),
    "1e99999999999999999": Decimal("1E+99999999999999999"),
    "-2.5e-99999999999999999": Decimal("-2.5E-99999999999999999"),
    "1e+099999999999999999": Decimal("1E+99999999999999999"),
}
EXPONENTS_OUT = ["1e999999999999999999", "1e+999999999999999999", "1e-999999999999999999", "12.5e999999999999999999",
                 "1e0100000000000000000"]


def _all_paths(token: str) -> dict[str, Callable[[], Any]]:
    """The decode paths a number token can take, each giving the decoded value."""
    rows = "".join(f"  {i},{token}\n" for i in range(40))  # enough rows for the column-wise path
    items = "".join(f"  - {token}\n" for i in range(40))
    records = "".join(f"  - id: {i}\n    v: {token}\n" for i in range(40))  # the list-item runs
    return {
        "field": lambda: toonstream.loads(f"a: {token}", parse_float=Decimal)["a"],
        "inline": lambda: toonstream.loads(f"a[2]: 1,{token}", parse_float=Decimal)["a"][1],
        "table_loads": lambda: toonstream.loads(f"t[40]{{i,v}}:\n{rows}", parse_float=Decimal)["t"][39]["v"],
        "list_items": lambda: toonstream.loads(f"l[40]:\n{items}", parse_float=Decimal)["l"][39],
        "item_runs": lambda: toonstream.loads(f"l[40]:\n{records}", parse_float=Decimal)["l"][39]["v"],
        "rows": lambda: list(toonstream.rows(f"t[40]{{i,v}}:\n{rows}", "t", use_float=False))[39][1],
        "parse": lambda: [v for p, e, v in toonstream.parse(f"t[40]{{i,v}}:\n{rows}") if p == "t.item.v"][39],
        "items": lambda: list(toonstream.items(f"l[40]:\n{records}", "l.item.v"))[39],
        "read_toon": lambda: _read_toon_cell(f"[40]{{i,v}}:\n{rows}"),
    }


def _read_toon_cell(doc: str) -> Any:
    pl = pytest.importorskip("polars")
    from toonstream.polars import read_toon

    frame = read_toon(io.BytesIO(doc.encode()), schema_overrides={"v": pl.String})
    return Decimal(frame["v"][39]) if frame["v"][39] is not None else None


@pytest.mark.parametrize("token", sorted(EXPONENTS_OK))
def test_exponent_counts_significant_digits(token: str) -> None:
    for name, decode in _all_paths(token).items():
        if name == "read_toon":
            continue  # (a String override keeps the token: see the out-of-range test)
        got = decode()
        assert Decimal(got) == EXPONENTS_OK[token], (name, got)


@pytest.mark.parametrize("token", EXPONENTS_OUT)
def test_exponent_out_of_range_on_every_path(token: str) -> None:
    for name, decode in _all_paths(token).items():
        if name == "read_toon":
            decode = lambda: _read_toon_frame(token)  # noqa: E731
        with pytest.raises(ToonDecodeError) as info:
            decode()
        assert info.value.code == "number_out_of_range", name
        assert info.value.line is not None and info.value.column is not None


def _read_toon_frame(token: str) -> Any:
    pytest.importorskip("polars")
    from toonstream.polars import read_toon

    rows = "".join(f"  {i},{token}\n" for i in range(40))
    return read_toon(io.BytesIO(f"[40]{{i,v}}:\n{rows}".encode()))


def test_number_length_counts_every_character_of_the_token() -> None:
    # max_number_length counts the whole token: sign, digits, point, exponent marker, sign and digits
    for token in ["-" + "1" * (LIMIT - 1), "1." + "0" * (LIMIT - 2), "1e+" + "0" * (LIMIT - 4) + "1"]:
        assert len(token) == LIMIT
        toonstream.loads(f"a: {token}")
        with pytest.raises(ToonDecodeError) as info:
            toonstream.loads(f"a: -1{token[1:]}" if token[0] == "-" else f"a: 1{token}")
        assert info.value.code == "number_too_long"


# ------------------------------------------------- runs of primitive list items

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from toonstream._reference.build import ValueBuilder  # noqa: E402

ITEM_TOKENS = [
    "1", "-1", "0", "-0", "05", "1.5", "-0.0", "1e400", "1e5", "2.5E-3", "1.", ".5", "+1", "٥", "12345678901234567890",
    "true", "false", "null", "True", "abc", "a b", "x-y", "é", "#x", "-", "- x", "1e", '"q"', '"a,b"', '"\\n"',
    "pad  ", "1" * 10_001, "1e999999999999999999", "1e00000000000000000001", '"a" x', '"open', '"\\q"',
]
ODD_LINES = ["  # c", "", "   1", "    x", "  - a: 1", "  -", "  - ", "  - []", "  - [2]: 1,2", "  -  x", "x: 1",
             "  - \"k\": v", "  - \"a:b\"", "  -\tx", "\t- 1", "  - [x"]


def _decode_items(doc: str, *, fast: bool, chunk: int | None, strict: bool) -> tuple[str, Any]:
    # fast: the value drivers' Decoder; else the per-line path only
    d = Decoder(strict=strict, _value_runs=True) if fast else Decoder(strict=strict, _block_paths=False)
    builder = ValueBuilder()
    data = doc.encode()
    try:
        step = chunk or len(data) or 1
        for k in range(0, len(data), step):
            builder.push(d.feed(data[k : k + step]))
        builder.push(d.flush())
        builder.push(d.close())
    except ToonDecodeError as e:
        return "error", (e.line, e.code, e.column, e.line_text)
    return "ok", repr(builder.value)


@st.composite
def primitive_lists(draw: Any) -> tuple[str, bool]:
    n = draw(st.integers(8, 60))
    pool = draw(st.lists(st.sampled_from(ITEM_TOKENS), min_size=1, max_size=4))
    lines = ["  - " + draw(st.sampled_from(pool)) for _ in range(n)]
    for _ in range(draw(st.integers(0, 3))):
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(ODD_LINES)))
    declared = draw(st.sampled_from([n, n - 1, n + 1]))
    head = draw(st.sampled_from([f"items[{declared}]:", f"[{declared}]:"]))
    doc = head + "\n" + "\n".join(lines)
    if head.startswith("items"):
        doc = "meta: 1\n" + doc + draw(st.sampled_from(["", "\nz: 2"]))
    return doc, draw(st.booleans())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(primitive_lists(), st.sampled_from([None, 1, 7, 64]))
@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_primitive_item_runs_equal_the_per_line_path(case: tuple[str, bool], chunk: int | None) -> None:
    doc, strict = case
    assert _decode_items(doc, fast=True, chunk=chunk, strict=strict) == _decode_items(
        doc, fast=False, chunk=None, strict=strict
    )


def test_primitive_item_runs_take_values_events() -> None:
    # The run is one Values event (not a Scalar per item) for the value drivers.
    doc = "items[40]:\n" + "".join(f"  - {i}\n" for i in range(40))
    d = Decoder(_value_runs=True)
    events = d.feed(doc) + d.close()
    assert sum(type(e).__name__ == "Scalar" for e in events) == 0
    assert toonstream.loads(doc) == {"items": list(range(40))}
    assert list(toonstream.items(doc, "items.item")) == list(range(40))
    assert [v for p, e, v in toonstream.parse(doc) if e == "number"] == list(range(40))
    root = "[40]:\n" + "".join(f'  - "s,{i}"\n' for i in range(40))
    assert toonstream.loads(root) == [f"s,{i}" for i in range(40)]


def test_crlf_line_at_the_length_limit_fits_under_every_chunking() -> None:
    # A trailing CR in the partial line may be half of a CRLF: it is not counted until the next
    # character shows it is content, so the verdict does not depend on where a feed ends.
    doc = b"a: 1234\r\nb: 5\r\n"
    for size in range(1, len(doc) + 1):
        chunks = [doc[i : i + size] for i in range(0, len(doc), size)]
        assert toonstream.loads(chunks, max_line_length=7) == {"a": 1234, "b": 5}, size
    assert toonstream.loads(b"a: 1234\r", max_line_length=7) == {"a": 1234}
    for size in range(1, 11):
        bad = b"a: 1234\rx\n"
        with pytest.raises(ToonDecodeError) as info:
            toonstream.loads([bad[i : i + size] for i in range(0, len(bad), size)], max_line_length=7)
        assert (info.value.code, info.value.line, info.value.column) == ("line_too_long", 1, 8), size


def test_internal_decoder_options_pick_the_paths() -> None:
    # _block_paths=False sends every line the per-line way (Rows, Scalars: the
    # reference the block paths are compared with); _value_runs needs the block paths.
    table = "rows[40]{a,b}:\n" + "".join(f"  {i},x{i}\n" for i in range(40))
    items = "items[40]:\n" + "".join(f"  - {i}\n" for i in range(40))

    def kinds(doc: str, **options: Any) -> set[str]:
        d = Decoder(**options)
        return {type(e).__name__ for e in d.feed(doc) + d.close()}

    assert "Columns" in kinds(table, batches=True)
    assert "Columns" not in kinds(table, batches=True, _block_paths=False)
    assert "Rows" in kinds(table, batches=True, _block_paths=False)
    assert "Values" not in kinds(items)
    assert "Values" in kinds(items, _value_runs=True)
    assert "Values" not in kinds(items, _value_runs=True, _block_paths=False)
    for doc in (table, items):
        for options in ({}, {"_block_paths": False}, {"_value_runs": True}):
            assert toonstream.loads(doc) == _value(doc, **options)


def _value(doc: str, **options: Any) -> Any:
    from toonstream._reference.build import ValueBuilder

    d = Decoder(batches=True, **options)
    builder = ValueBuilder()
    builder.push(d.feed(doc))
    builder.push(d.close())
    return builder.value


@pytest.mark.parametrize("limit", [1, 2, 4, 17, 18, 19])
def test_max_number_length_applies_to_short_ints(engine: str, limit: int) -> None:
    # The reference's fast int path (ASCII digits, up to 18 characters) skipped the limit, so with
    # a limit below 18, `12345` passed while `-1234` failed; both engines now apply it to every
    # number token, in values, rows and table columns.
    for n in range(1, 21):
        for tok in ("7" * n, "-" + "7" * (n - 1) if n > 1 else "7", "1" + "0" * (n - 1)):
            for doc in (f"a: {tok}", f"t[1]{{x}}:\n  {tok}", "t[10]{x}:\n" + "\n".join(["  " + tok] * 10)):
                if len(tok) > limit:
                    with pytest.raises(toonstream.ToonDecodeError) as e:
                        toonstream.loads(doc, max_number_length=limit)
                    assert e.value.code == "number_too_long", (doc, limit)
                else:
                    assert toonstream.loads(doc, max_number_length=limit) is not None

"""The row-block fast path decodes exactly like the per-line path.

Tables of many rows built from awkward tokens are decoded twice, with the
column-wise fast path on and off; events (or the error's line and code) must
be identical, fed whole and in chunks.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toonstream import Decoder, ToonDecodeError, loads
import toonstream

from conftest import flat_events

TOKENS = [
    "1", "-1", "0", "-0", "42", "05", "-05", "1.5", "-0.0", "0.0", "1e400", "-1e400", "1e5", "2.5E-3", "1.",
    ".5", "+1", "1_000", "٥", "12345678901234567890", "true", "false", "null", "True", "", "abc", "a b",
    "2024-01-02", "x-y", "é", "#x", "-", "1e", "e5", '"q"', '"a,b"', '"\\n"', "a:b", " pad", "pad ", "0x10",
]


def decode(doc: str, fast: bool, chunk: int | None, strict: bool) -> tuple[str, Any]:
    d = Decoder(strict=strict, _block_paths=fast)
    data = doc.encode()
    events: list[Any] = []
    try:
        if chunk is None:
            events += d.feed(data)
        else:
            for k in range(0, len(data), chunk):
                events += d.feed(data[k : k + chunk])
        events += d.close()
    except ToonDecodeError as e:
        return "error", (e.line, e.code, e.column)
    return "ok", flat_events(events)


@st.composite
def tables(draw: Any) -> tuple[str, bool]:
    width = draw(st.integers(1, 4))
    n = draw(st.integers(8, 40))
    delim = draw(st.sampled_from([",", "|", "\t"]))
    sym = "" if delim == "," else delim
    column_pools = [draw(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=3)) for _ in range(width)]
    lines = []
    for _ in range(n):
        cells = [draw(st.sampled_from(pool)) for pool in column_pools]
        line = "  " + delim.join(cells)
        lines.append(line)
    # occasional structure around/inside the rows
    for _ in range(draw(st.integers(0, 3))):
        pos = draw(st.integers(0, len(lines)))
        lines.insert(pos, draw(st.sampled_from(["  # c", "", "   1", "    x", "  a: 1", "x: 1", "  " + delim * width])))
    declared = draw(st.sampled_from([n, n - 1, n + 1]))
    fields = delim.join(f"f{i}" for i in range(width))
    doc = f"meta: 1\nt[{declared}{sym}]{{{fields}}}:\n" + "\n".join(lines) + draw(st.sampled_from(["", "\nz: 2"]))
    if draw(st.integers(0, 4)) == 0:
        doc = doc.replace("\n", "\r\n")  # CRLF: the terminator, not content (§12)
    return doc, draw(st.booleans())


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), st.sampled_from([None, 1, 7, 64]))
@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_fast_path_equals_per_line_path(case: tuple[str, bool], chunk: int | None) -> None:
    doc, strict = case
    assert decode(doc, True, chunk, strict) == decode(doc, False, None, strict)
    # the value builders' batches (Columns, Members) build the same value, or fail alike
    assert build(doc, True, chunk, strict) == build(doc, False, None, strict)


def test_fast_path_is_taken_and_right_for_a_big_table() -> None:
    rows = [f"  {i},u{i},{i / 4},{'true' if i % 3 else 'false'},2024-01-0{i % 9 + 1},-{i}" for i in range(5000)]
    doc = "t[5000]{a,b,c,d,e,f}:\n" + "\n".join(rows)
    assert decode(doc, True, None, True) == decode(doc, False, None, True)
    assert decode(doc, True, 100, True) == decode(doc, False, None, True)


QUOTED_CELLS = ['"a,b"', '"true"', '"42"', '"  padded "', '"x\\"y"', '"tab\\there"', '"#tag"', '""', '"a:b"', '"é,ü"']


@pytest.mark.parametrize("delim", [",", "|", "\t"])
@pytest.mark.parametrize("width", [1, 3])
def test_quoted_rows_inside_a_block(delim: str, width: int) -> None:
    # Rows with quoted cells among plain ones: split one by one inside the
    # block, the rest column-wise; same events as the per-line path.
    sym = "" if delim == "," else delim
    rows = []
    for i in range(300):
        cells = [str(i), f"s{i}", f"{i}.5"][:width]
        if i % 7 == 3:
            cells[-1] = QUOTED_CELLS[i % len(QUOTED_CELLS)].replace(",", delim)
        rows.append("  " + delim.join(cells))
    fields = delim.join(f"f{k}" for k in range(width))
    doc = f"t[300{sym}]{{{fields}}}:\n" + "\n".join(rows)
    for chunk in (None, 64, 4096):
        assert decode(doc, True, chunk, True) == decode(doc, False, None, True)


@pytest.mark.parametrize("delim", [",", "|"])
def test_padded_cells_inside_a_block(delim: str) -> None:
    # Spaces around a delimiter in some rows, in every kind of column:
    # trimmed as the per-line path trims them, numbers stay numbers.
    import random

    rnd = random.Random(7)
    sym = "" if delim == "," else delim
    rows = []
    for i in range(400):
        quoted = '"q,x"'.replace(",", delim) if i % 7 == 3 else "qx"  # (rows with quotes are split apart)
        cells = [str(i), f"{i}.25", "true" if i % 2 else "false", f"s {i}", quoted, "null"]
        if i % 5 == 2:
            k = rnd.randrange(len(cells))
            left = rnd.choice([" ", "", "  "]) if k else ""  # (a row's first cell: more indentation)
            cells[k] = left + cells[k] + rnd.choice([" ", "  "])
        rows.append("  " + delim.join(cells))
    doc = f"t[400{sym}]{{a{delim}b{delim}c{delim}d{delim}e{delim}f}}:\n" + "\n".join(rows)
    expected = decode(doc, False, None, True)
    assert expected[0] == "ok"
    for chunk in (None, 100, 4096):
        assert decode(doc, True, chunk, True) == expected
    values = loads(doc)["t"]
    assert values[2] == {"a": 2, "b": 2.25, "c": False, "d": "s 2", "e": "qx", "f": None}
    assert values[3]["e"] == "q" + delim + "x"
    assert all(type(v["a"]) is int and type(v["b"]) is float for v in values)


@pytest.mark.parametrize(
    "bad", ['  1,"x,y"', '  1,"unterminated', '  1,"bad \\q escape"', '  1,"x"y', '  "a","b","c"']
)
def test_bad_quoted_row_inside_a_block_reports_like_the_per_line_path(bad: str) -> None:
    rows = [f"  {i},v{i}" for i in range(100)]
    rows[57] = bad
    doc = "t[100]{a,b}:\n" + "\n".join(rows)
    assert decode(doc, True, None, True) == decode(doc, False, None, True)
    assert decode(doc, True, None, True)[0] == ("ok" if bad == '  1,"x,y"' else "error")


# ---------------------------------------------------------------- whole-column conversion

from decimal import Decimal  # noqa: E402

from toonstream._reference.numbers import decimal_float, make_column_converter, make_converter  # noqa: E402


def tagged(text: str) -> tuple[str, str]:
    """A parse_float whose results show which tokens it was given."""
    return ("float", text)

NUMBERS = st.one_of(
    st.integers(-(10**25), 10**25).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.decimals(allow_nan=False, allow_infinity=False, places=3).map(str),
    st.from_regex(r"-?[0-9]{1,4}(\.[0-9]{0,3})?([eE][+-]?[0-9]{0,3})?", fullmatch=True),
)


# Numeric-looking tokens that are not §4 numbers (dates, times, ranges): the
# column converter rules them out by their non-digit skeletons.
DATEISH = st.from_regex(r"-?[0-9]{1,4}([-:/.eE+][0-9]{0,2}){1,3}", fullmatch=True)


# A cell padded with spaces around the delimiters (trimmed by the decoder).
PADDED = st.builds(
    lambda token, left, right: left + token + right,
    st.one_of(NUMBERS, st.sampled_from(TOKENS)),
    st.sampled_from(["", " ", "  "]),
    st.sampled_from(["", " ", "  "]),
)


def typed(values: Any) -> list[tuple[type, Any]]:
    return [(type(v), repr(v)) for v in values]  # repr: -0.0 is not 0.0


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.one_of(NUMBERS, st.sampled_from(TOKENS), DATEISH, PADDED), min_size=1, max_size=150),
    st.sampled_from(
        [{}, {"parse_float": Decimal}, {"parse_float": decimal_float}, {"parse_float": tagged}, {"max_number_length": 6}]
    ),
)
@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_column_converter_equals_token_converter(col: list[str], options: dict[str, Any]) -> None:
    # Cells may be padded with spaces: the column converter trims them, as
    # the per-line path trims a token before converting it.
    convert = make_converter(**options)
    column = make_column_converter(convert, **options)

    def one_by_one() -> Any:
        try:
            return "ok", typed(convert(t.strip(" ")) for t in col)
        except ToonDecodeError as e:
            return "error", e.code

    def whole() -> Any:
        try:
            return "ok", typed(column(col))
        except ToonDecodeError as e:
            return "error", e.code

    assert whole() == one_by_one()


def test_column_converter_bulk_paths() -> None:
    convert = make_converter()
    column = make_column_converter(convert)
    cases = [
        [str(i) for i in range(100)],  # ints
        [f"{i}.5" if i % 7 else str(i) for i in range(100)],  # floats with some ints
        ["null" if i % 5 == 0 else f"{i}.25" for i in range(200)],  # nullable floats (bulk)
        ["-0", "-0.0", "0.0", "0"] * 30,
        ["1" + "0" * 400 + ".5"] + ["1.5"] * 99,  # overflows a float: Decimal
        ["05"] + [str(i) for i in range(99)],  # a leading zero: a string
        ["2024-01-02"] * 80 + ["7"],  # dates and one number
    ]
    for col in cases:
        assert typed(column(col)) == typed(map(convert, col)), col[:3]


# ---------------------------------------------------------------- Members batches (loads)

import glob  # noqa: E402
import os  # noqa: E402

from toonstream._reference.build import ValueBuilder  # noqa: E402

KEYS = ["a", "b", "a", "_x", "k.y", '"q k"', "c1"]
VALUES = TOKENS + ["[]", "", '"x:y"', "[2]: 1,2", "a: b"]


def build(doc: str, members: bool, chunk: int | None, strict: bool) -> tuple[str, Any]:
    return built(Decoder(strict=strict, batches=members), doc, chunk)


def built(d: Decoder, doc: str, chunk: int | None) -> tuple[str, Any]:
    """The value ``d`` builds from ``doc`` fed in ``chunk``-byte pieces, or its error."""
    b = ValueBuilder()
    data = doc.encode()
    try:
        pieces = [data] if chunk is None else [data[k : k + chunk] for k in range(0, len(data), chunk)]
        for piece in pieces:
            b.push(d.feed(piece))
        b.push(d.close())
    except ToonDecodeError as e:
        return "error", (e.line, e.code, e.column, e.line_text)
    return "ok", b.value


@st.composite
def objects(draw: Any) -> tuple[str, bool]:
    lines = []
    depth = 0
    for _ in range(draw(st.integers(min_value=1, max_value=40))):
        key = draw(st.sampled_from(KEYS))
        value = draw(st.sampled_from(VALUES))
        pad = draw(st.sampled_from(["", " ", "  "]))
        lines.append("  " * depth + f"{key}:{pad}{value}".rstrip(" ") + draw(st.sampled_from(["", "", " "])))
        if value == "" and depth < 4:
            depth += 1
        elif depth and draw(st.booleans()):
            depth -= 1
        if draw(st.integers(min_value=0, max_value=20)) == 0:
            lines.append(draw(st.sampled_from(["", "  # note", "\t", "   "])))
    return "\n".join(lines) + "\n", draw(st.booleans())


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(objects(), st.sampled_from([None, 1, 5, 64]))
@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_members_batches_build_the_same_values(case: tuple[str, bool], chunk: int | None) -> None:
    doc, strict = case
    assert build(doc, True, chunk, strict) == build(doc, False, None, strict)


def test_members_batches_on_fixtures_and_corpus() -> None:
    from conftest import SPEC_DIR

    docs = []
    for path in glob.glob(os.path.join(os.path.dirname(__file__), "corpus", "*.toon")):
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            docs.append(f.read())
    import json

    for path in glob.glob(os.path.join(str(SPEC_DIR), "tests", "fixtures", "decode", "*.json")):
        with open(path, encoding="utf-8") as f:
            docs += [t["input"] for t in json.load(f)["tests"] if isinstance(t.get("input"), str)]
    assert docs
    for doc in docs:
        for strict in (True, False):
            try:
                doc.encode()
            except UnicodeEncodeError:
                continue
            assert build(doc, True, None, strict) == build(doc, False, None, strict), doc


# ---------------------------------------------------------------- row objects

from toonstream._reference.build import BatchMaker, _interpreted, _program, batch_maker, row_maker  # noqa: E402
from toonstream._reference.events import Field  # noqa: E402

NAMES = st.sampled_from(["id", "a", "", "it's", 'q"', "\\", "\x00", "\ud800", "{", "é", "lambda", "r", "v0"])


@st.composite
def headers(draw: Any, depth: int = 0) -> tuple[Field, ...]:
    out = []
    for _ in range(draw(st.integers(0 if depth else 1, 4))):
        name = draw(NAMES)
        if depth < 3 and draw(st.integers(0, 3)) == 0:
            out.append(Field(name, draw(headers(depth + 1))))
        else:
            out.append(Field(name))
    return tuple(out)


def as_pairs(value: Any) -> Any:
    """A value with every dict as its list of items: key order counts."""
    if isinstance(value, dict):
        return [(k, as_pairs(v)) for k, v in value.items()]
    return value


@settings(max_examples=300, deadline=None)
@given(headers(), st.integers(1, 5))
def test_generated_row_objects_equal_the_step_interpreter(fields: tuple[Field, ...], n: int) -> None:
    # Generated dict displays (names as repr literals, duplicates last-wins
    # in the first position, empty groups) build what the steps build.
    program = _program(fields)
    width = sum(op == 0 for op, _ in program)
    rows = [tuple(range(k * 100, k * 100 + width)) for k in range(n)]
    expected = [as_pairs(_interpreted(program)(row)) for row in rows]
    assert [as_pairs(row_maker(fields)(row)) for row in rows] == expected
    columns = [list(col) for col in zip(*rows)]
    for compile_after in (0, 10**9):  # compiled at once, never compiled
        maker = BatchMaker(fields, compile_after=compile_after)
        assert [as_pairs(v) for v in maker.rows(rows)] == expected
        if width:
            assert [as_pairs(v) for v in maker.columns(columns)] == expected


def test_a_header_compiles_once_it_made_enough_rows() -> None:
    # Compiling costs tens of microseconds: only a header with many rows
    # (counted over all its tables) gets a generated display.
    fields = (Field("id"), Field("name"))
    maker = BatchMaker(fields, compile_after=100)
    for k in range(3):
        assert list(maker.rows([(k, "a")] * 40)) == [{"id": k, "name": "a"}] * 40
    assert maker._by_row is not None and maker._by_cells is None
    assert list(maker.columns([[1, 2], ["x", "y"]])) == [{"id": 1, "name": "x"}, {"id": 2, "name": "y"}]
    assert maker._by_cells is not None
    assert batch_maker(fields) is batch_maker((Field("id"), Field("name")))  # shared by equal headers


@pytest.mark.parametrize("width, depth", [(300, 0), (3, 20)])
def test_big_headers_use_the_fallbacks(width: int, depth: int) -> None:
    leaves = tuple(Field(f"f{i}") for i in range(width))
    fields = leaves
    for level in range(depth):
        fields = (Field(f"g{level}", fields),)
    row = tuple(range(width))
    value = row_maker(fields)(row)
    for level in reversed(range(depth)):
        value = value[f"g{level}"]
    assert value == {f"f{i}": i for i in range(width)}
    maker = BatchMaker(fields, compile_after=0)
    assert list(maker.columns([[i] for i in range(width)])) == [row_maker(fields)(row)]
    assert list(maker.rows([row])) == [row_maker(fields)(row)]


# ------------------------------------------- lists of records: the value drivers' events vs per line


def build_lists(doc: str, items: bool, chunk: int | None, strict: bool, **options: Any) -> tuple[str, Any]:
    """``loads``' way (Members, Columns and, if ``items``, runs of primitive
    list items) or the per-line way (none of them); the value as key/value
    pairs, so that key order counts, or the error."""
    d = Decoder(strict=strict, batches=items, _value_runs=items, _block_paths=items, **options)
    outcome, value = built(d, doc, chunk)
    return outcome, as_pairs_deep(value) if outcome == "ok" else value


def as_pairs_deep(value: Any) -> Any:
    """``as_pairs`` through lists too (items are objects inside lists)."""
    todo: list[Any] = [value]
    out: dict[int, Any] = {}
    order: list[Any] = []
    while todo:  # (iterative: the deep cases are deep)
        v = todo.pop()
        if isinstance(v, (dict, list)) and id(v) not in out:
            out[id(v)] = None
            order.append(v)
            todo.extend(v.values() if isinstance(v, dict) else v)
    for v in reversed(order):
        if isinstance(v, dict):
            out[id(v)] = [(k, out.get(id(x), x) if isinstance(x, (dict, list)) else x) for k, x in v.items()]
        else:
            out[id(v)] = [out.get(id(x), x) if isinstance(x, (dict, list)) else x for x in v]
    return out.get(id(value), value) if isinstance(value, (dict, list)) else value


ITEM_KEYS = ["a", "b", "c", "k.y", "_x", '"q"', "a b"]
ITEM_VALUES = ["1", "-2.5", "x", "true", "null", '"q:x"', '"a,b"', "05", "1e400", "", "[]", " 7", "8 ", "[2]: 1,2", "a: b"]
ODD_LINES = ["", "    # c", "\t", "     x: 1", "    extra: 1", "      deeper: 1", "  - ", "  -", "  - [2]: 1,2", "  # c", "   - a: 1"]


@st.composite
def item_lists(draw: Any) -> tuple[str, bool]:
    # Mostly well-formed lists (so that runs are taken), each with a few
    # rare departures: odd values, a wrong count or width, an odd line.
    delim = draw(st.sampled_from([",", "|"]))
    sym = "" if delim == "," else delim
    shapes = []
    for _ in range(draw(st.sampled_from([1, 1, 2, 3]))):  # items of one shape, or mixed
        kinds = [draw(st.sampled_from(["scalar", "scalar", "object", "table"])) for _ in range(draw(st.integers(1, 4)))]
        keys = draw(st.permutations(ITEM_KEYS))[: len(kinds)] if draw(st.integers(0, 9)) else [draw(st.sampled_from(ITEM_KEYS)) for _ in kinds]
        if draw(st.integers(0, 4)):  # usually a first line that a template takes
            kinds[0] = "scalar"
            keys = [k for k in keys if k not in ("_x", "a b", '"q"')]
            keys = ["_x", *keys][: len(kinds)]
        shapes.append(list(zip(kinds, keys)))
    width = draw(st.integers(1, 3))
    fields = delim.join(f"f{i}" for i in range(width))
    usual = [draw(st.sampled_from(ITEM_VALUES[:5])) for _ in range(4)]  # mostly the same few values
    n = draw(st.integers(1, 24))  # (lists of fewer than 8 items are read line by line)
    rare = draw(st.sampled_from([0, 0, 30, 8]))  # 1 in `rare` values is odd (0: none)

    def odd() -> bool:
        return bool(rare) and draw(st.integers(0, rare)) == 0

    def value() -> str:
        return draw(st.sampled_from(ITEM_VALUES)) if odd() else draw(st.sampled_from(usual))

    lines: list[str] = []
    for _ in range(n):
        for k, (kind, key) in enumerate(draw(st.sampled_from(shapes))):
            lead = "  - " if k == 0 else "    "
            if kind == "scalar":
                lines.append(f"{lead}{key}: {value()}")
            elif kind == "object":
                lines.append(f"{lead}{key}:")
                lines += [f"      {inner}: {value()}" for inner in ITEM_KEYS[: draw(st.integers(0, 2))]]
            else:
                rows = draw(st.integers(0, 3))
                declared = draw(st.integers(0, 4)) if odd() else rows
                lines.append(f"{lead}{key}[{declared}{sym}]{{{fields}}}:")
                for _ in range(rows):
                    cells = [draw(st.sampled_from(TOKENS)) if odd() else draw(st.sampled_from(TOKENS[:5])) for _ in range(width)]
                    if odd():
                        cells = cells[:-1] or ["1", "2"]  # a row of the wrong width
                    lines.append("      " + delim.join(cells))
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(ODD_LINES)))
    declared_n = draw(st.integers(max(0, n - 1), n + 1)) if odd() else n
    if draw(st.booleans()):
        doc = f"[{declared_n}]:\n" + "\n".join(lines)
    else:  # inside an object, one level deeper, with something after it
        doc = "m: 1\nlist[%d]:\n" % declared_n + "\n".join(lines) + draw(st.sampled_from(["", "\nz: 2", "\n  - a: 1"]))
        if draw(st.booleans()):
            doc = "outer:\n" + "\n".join("  " + line if line else line for line in doc.split("\n"))
    return doc, draw(st.integers(0, 4)) > 0


@settings(max_examples=700, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(item_lists(), st.sampled_from([None, 1, 9, 64, 300]))
@pytest.mark.slow
def test_item_runs_build_the_same_values(case: tuple[str, bool], chunk: int | None) -> None:
    # Whatever the items hold (odd lines, bad counts and widths, quotes,
    # colons, duplicates, items split across feeds), the value drivers'
    # events give the per-line path's value or its error (line, code, column, text).
    doc, strict = case
    assert build_lists(doc, True, chunk, strict) == build_lists(doc, False, None, strict)


def _orders(n: int) -> str:
    out = [f"[{n}]:"]
    for i in range(n):
        out += [f"  - id: {i}", f'    at: "2024-01-0{i % 9 + 1}T10:00:00Z"', "    customer:", f"      name: C {i % 7}", f"      vip: {'true' if i % 3 else 'false'}"]
        k = i % 4 + 1
        out.append(f"    items[{k}]{{sku,qty,price}}:")
        out += [f"      S-{i}-{r},{r + 1},{i / 8 + r}" for r in range(k)]
        out.append(f"    total: {i * 2.5}")
    return "\n".join(out) + "\n"


def test_records_with_nested_parts() -> None:
    doc = _orders(3000)
    assert build_lists(doc, True, None, True) == build_lists(doc, False, None, True)
    assert as_pairs_deep(loads(doc)) == build_lists(doc, False, None, True)[1]


@pytest.mark.parametrize("max_depth", [1, 2, 3, 4, 5])
def test_item_runs_respect_max_depth(max_depth: int) -> None:
    doc = "a:\n  l[10]:\n" + "".join(f"    - k: {i}\n      o:\n        p: 1\n      t[1]{{x}}:\n        {i}\n" for i in range(10)) + "z: 1\n"
    assert build_lists(doc, True, None, True, max_depth=max_depth) == build_lists(doc, False, None, True, max_depth=max_depth)


def test_a_bad_item_in_a_run_is_reported_like_the_per_line_path() -> None:
    good = "  - a: 1\n    t[2]{x,y}:\n      1,2\n      3,4\n    b: x\n"
    for bad in ("      1,2,3\n", "      1:2\n", '      "1,2\n', "      1e99999999999999999999\n"):
        items = [good] * 20
        items[13] = good.replace("      3,4\n", bad)
        doc = "[20]:\n" + "".join(items)
        for chunk in (None, 5, 64):
            assert build_lists(doc, True, chunk, True) == build_lists(doc, False, None, True)


from toonstream._consumers import _ItemsAdapter  # noqa: E402
from toonstream.decoder import _drive, driver_decoder  # noqa: E402


def streamed(doc: str, prefix: str, kv: bool, items: bool, buf_size: int, strict: bool) -> tuple[list[Any], Any]:
    """``items``/``kvitems`` with the list-item runs on or off: what they
    yield, and their error (if any)."""
    out: list[Any] = []
    it = _drive(doc.encode(), driver_decoder(False, {"strict": strict}, value_runs=items), _ItemsAdapter(prefix, kv=kv).push, buf_size)
    try:
        for v in it:
            out.append(as_pairs_deep(v))
    except ToonDecodeError as e:
        return out, (e.line, e.code, e.column)
    return out, None


PREFIXES = ["item", "item.b", "item.c", "item.c.item", "item.c.item.f0", "item.k.y", "list.item", "list.item.b", "list.item.c.item", "outer.list.item", "outer.list.item.c.item", "outer.list", "", "list"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(item_lists(), st.sampled_from([7, 64, 4096]), st.sampled_from(PREFIXES), st.booleans())
@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_item_runs_stream_the_same_items(case: tuple[str, bool], buf_size: int, prefix: str, kv: bool) -> None:
    # items()/kvitems() take list items in runs too: the same values (at the
    # list's items or inside them), in order, and the same error.
    doc, strict = case
    assert streamed(doc, prefix, kv, True, buf_size, strict) == streamed(doc, prefix, kv, False, buf_size, strict)


def test_items_of_nested_records_come_in_runs() -> None:
    doc = _orders(500)
    records = list(toonstream.items(doc, "item"))
    assert records == loads(doc) and len(records) == 500
    assert list(toonstream.items(doc, "item.items.item")) == [it for r in records for it in r["items"]]
    assert list(toonstream.kvitems(doc, "item.customer")) == [kv for r in records for kv in r["customer"].items()]
    assert list(toonstream.items(doc, "item.total")) == [r["total"] for r in records]


def parsed(doc: str, items: bool, buf_size: int, strict: bool) -> tuple[list[Any], Any]:
    """``parse``'s triples with the list-item runs on or off, and its error."""
    from toonstream._consumers import ParseAdapter

    out: list[Any] = []
    it = _drive(doc.encode(), driver_decoder(False, {"strict": strict}, batches=True, value_runs=items), ParseAdapter().push, buf_size)
    try:
        out.extend(it)
    except ToonDecodeError as e:
        return out, (e.line, e.code, e.column)
    return out, None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(item_lists(), st.sampled_from([7, 64, 4096]))
@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_item_runs_parse_to_the_same_events(case: tuple[str, bool], buf_size: int) -> None:
    doc, strict = case
    assert parsed(doc, True, buf_size, strict) == parsed(doc, False, buf_size, strict)


def test_item_runs_parse_like_ijson_on_nested_records() -> None:
    import json

    import ijson

    doc = _orders(300)
    expected = list(ijson.parse(json.dumps(loads(doc)).encode()))
    assert list(toonstream.parse(doc)) == [(p, e, v) for p, e, v in expected]


def test_json_output_of_nested_records() -> None:
    import io
    import json

    from toonstream.tojson import decode_to_json, decode_to_jsonl

    doc = _orders(300)
    out = io.StringIO()
    decode_to_jsonl(doc, out)
    assert [json.loads(line) for line in out.getvalue().splitlines()] == loads(doc)
    out = io.StringIO()
    decode_to_json(doc, out, indent=2)
    assert json.loads(out.getvalue()) == loads(doc)
    assert out.getvalue().startswith('[\n  {\n    "id": 0,\n    "at": "2024-01-01T10:00:00Z",\n    "customer": {\n')


def test_rows_with_quoted_cells_in_list_items() -> None:
    # Quoted cells (delimiters, escapes, spaces inside) are split one by one
    # within the run, as the per-line path splits them.
    cells = ['"a,b"', '"x\\"y"', '" pad "', '"42"', "plain", '"q"']
    doc = "[60]:\n" + "".join(f"  - id: {i}\n    t[2]{{a,b}}:\n      {cells[i % 6]},{i}\n      u,{cells[(i + 1) % 6]}\n" for i in range(60))
    for chunk in (None, 7, 64):
        assert build_lists(doc, True, chunk, True) == build_lists(doc, False, None, True)
    value = loads(doc)
    assert value[0]["t"] == [{"a": "a,b", "b": 0}, {"a": "u", "b": 'x"y'}]
    assert value[3]["t"][0] == {"a": "42", "b": 3}


@pytest.mark.parametrize("delim", [",", "|", "\t"])
def test_a_quoted_row_does_not_hide_rows_of_the_wrong_width(delim: str) -> None:
    # One row too wide, a quoted row, rows too narrow: the total number of
    # cells is right, but each row's is not.  The width is checked before
    # the quoted rows' cells go back in place (which used to hide the shift).
    sym = "" if delim == "," else delim
    rows = ["c00", "c01", "c02", "c03"], ['"q,1"', "v10"], ["c20"], ["c30"]
    body = "".join("  " + delim.join(r) + "\n" for r in rows) + "".join(f"  {k}{delim}{k}\n" for k in range(6))
    table = f"t[10{sym}]{{a{delim}b}}:\n" + body
    item = "  - k: 1\n    t[4%s]{a%sb}:\n" % (sym, delim) + "".join("      " + delim.join(r) + "\n" for r in rows)
    listed = "[12]:\n" + "  - k: 0\n    t[0%s]{a%sb}:\n" % (sym, delim) + item + "".join(f"  - k: {i}\n    t[0{sym}]{{a{delim}b}}:\n" for i in range(10))
    for doc in (table, listed):
        expected = build_lists(doc, False, None, True)
        assert expected[0] == "error" and expected[1][1] == "width_mismatch"
        for chunk in (None, 64):
            assert build_lists(doc, True, chunk, True) == expected
        with pytest.raises(ToonDecodeError):
            loads(doc)



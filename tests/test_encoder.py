"""Encoder behaviour beyond the fixtures: numbers, host types, hostile values."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import io
import uuid
from decimal import Decimal
from types import MappingProxyType
from typing import Any

import pytest

import toonstream
from toonstream import ToonEncodeError
from toonstream.streaming import encode_records

from conftest import json_equal


@pytest.mark.parametrize(
    "value, text",
    [
        (1e-7, "1e-7"),
        (1e21, "1e+21"),
        (1.5e300, "1.5e+300"),
        (5e-324, "5e-324"),
        (1e20, "100000000000000000000"),
        (1.2345678901234568e20, "123456789012345683968"),
        (6.517366420032157e16, "65173664200321568"),
        (1e-6, "0.000001"),
        (0.1, "0.1"),
        (-0.0, "0"),
        (3.0, "3"),
        (float("nan"), "null"),
        (float("inf"), "null"),
        (-float("inf"), "null"),
        (2**200, str(2**200)),
        (Decimal("0.10"), "0.1"),
        (Decimal("-0.000"), "0"),
        (Decimal("1e1000"), "1e+1000"),
        (Decimal("-1.50e-9"), "-1.5e-9"),
        (Decimal("123456789.123456789123456789"), "123456789.123456789123456789"),
        (Decimal("NaN"), "null"),
        (True, "true"),
        (None, "null"),
    ],
)
def test_number_and_literal_forms(value: Any, text: str) -> None:
    assert toonstream.dumps(value) == text


def test_numbers_round_trip_exactly() -> None:
    big = 10**9999  # 10,000 digits: the longest token the decoders read by default
    out = toonstream.dumps({"n": big})
    assert toonstream.loads(out) == {"n": big}
    with pytest.raises(toonstream.ToonEncodeError, match="max_number_length"):  # loads could not read it back
        toonstream.dumps({"n": big * 10})
    for d in (Decimal("1e1000"), Decimal("3.14159265358979323846264338327950288"), Decimal("-2.5e-30")):
        assert toonstream.loads(toonstream.dumps([d]), parse_float=Decimal) == [d]
    for f in (0.1, 1 / 3, 1e-7, 1.7976931348623157e308, 5e-324, 123456.789e3):
        assert toonstream.loads(toonstream.dumps(f)) == f


class Color(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


@dataclasses.dataclass
class Point:
    x: int
    y: float


def test_host_types() -> None:
    u = uuid.UUID("12345678-1234-5678-1234-567812345678")
    value = {
        "when": datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc),
        "day": datetime.date(2024, 1, 2),
        "at": datetime.time(3, 4),
        "id": u,
        "color": Color.RED,
        "level": Level.HIGH,
        "pair": (1, 2),
        "tags": {"b", "a", "c"},
        "frozen": frozenset({3, 1, 2}),
        "pt": Point(1, 2.5),
        "view": MappingProxyType({"k": "v"}),
    }
    assert toonstream.loads(toonstream.dumps(value)) == {
        "when": "2024-01-02T03:04:05+00:00",
        "day": "2024-01-02",
        "at": "03:04:00",
        "id": str(u),
        "color": "red",
        "level": 3,
        "pair": [1, 2],
        "tags": ["a", "b", "c"],
        "frozen": [1, 2, 3],
        "pt": {"x": 1, "y": 2.5},
        "view": {"k": "v"},
    }


def test_dataclass_rows_are_tabular() -> None:
    assert toonstream.dumps([Point(1, 2.0), Point(3, 4.5)]) == "[2]{x,y}:\n  1,2\n  3,4.5"


def test_default_hook_and_unknown_types() -> None:
    class Money:
        def __init__(self, cents: int) -> None:
            self.cents = cents

    with pytest.raises(ToonEncodeError) as info:
        toonstream.dumps({"a": [1, Money(5)]})
    assert info.value.path == ("a", 1)
    assert toonstream.dumps({"a": Money(5)}, default=lambda m: {"cents": m.cents}) == "a:\n  cents: 5"
    with pytest.raises(ToonEncodeError):
        toonstream.dumps(b"bytes")
    with pytest.raises(ToonEncodeError):
        toonstream.dumps(object(), default=lambda o: o)  # a hook that never converges


def test_non_string_keys_are_errors_not_collisions() -> None:
    with pytest.raises(ToonEncodeError) as info:
        toonstream.dumps({"x": {1: "a", "1": "b"}})
    assert info.value.path == ("x",)
    with pytest.raises(ToonEncodeError):
        toonstream.dumps([{1: "a"}, {1: "b"}])


def test_cycles_and_depth() -> None:
    a: list[Any] = []
    a.append(a)
    with pytest.raises(ToonEncodeError, match="circular"):
        toonstream.dumps(a)
    d: dict[str, Any] = {}
    d["self"] = d
    with pytest.raises(ToonEncodeError):
        toonstream.dumps([d, d])
    deep: Any = "x"
    for _ in range(100_000):
        deep = [deep, 1]
    with pytest.raises(ToonEncodeError, match="max_depth"):
        toonstream.dumps(deep)
    ok: Any = "x"
    for _ in range(3000):
        ok = {"k": ok}
    out = toonstream.dumps(ok)
    assert json_equal(toonstream.loads(out), ok)  # == itself would recurse


def _containers(value: Any) -> int:
    """The nesting of ``value`` in containers: the root container is 1, a scalar 0."""
    deepest = 0
    todo = [(value, 1)]
    while todo:
        v, level = todo.pop()
        if type(v) in (dict, list):
            deepest = max(deepest, level)
            todo += [(c, level + 1) for c in (v.values() if type(v) is dict else v)]
    return deepest


def _shaped_value(rnd: Any, room: int) -> Any:
    """A random value at most ``room`` containers deep, weighted towards what
    the encoder lays out differently: tables (with field groups), keyed
    tables, list items, inline arrays, empty containers at the bottom."""
    if room <= 0 or rnd.random() < 0.15:
        return rnd.choice([1, "x", None, True])
    pick = rnd.random()
    if pick < 0.1:
        return rnd.choice([{}, []])
    if pick < 0.3:  # a table, rows at the next level, maybe a field group below
        inner = room - 2
        def row(i: int) -> Any:
            cell: Any = i
            for _ in range(rnd.randint(0, max(0, inner))):
                cell = {"g": cell}
            # (a row without "b": a table only with missing_as_null)
            return {"a": cell, "b": "y"} if rnd.random() < 0.8 else {"a": cell}
        if room < 2:
            return [rnd.choice([1, 2])]
        first = row(0)
        return [first] + [row(i) if type(first["a"]) is not dict else first for i in range(rnd.randint(0, 2))]
    if pick < 0.45:  # maybe a keyed table: an object of uniform objects
        sub = _shaped_value(rnd, room - 2) if room >= 2 else 1
        return {"k1": {"v": sub}, "k2": {"v": sub}} if room >= 2 else {"k": 1}
    if pick < 0.75:
        return {key: _shaped_value(rnd, room - 1) for key in rnd.sample(["a", "b", "c"], rnd.randint(1, 2))}
    return [_shaped_value(rnd, room - 1) for _ in range(rnd.randint(1, 3))]


@pytest.mark.parametrize("missing_as_null", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_max_depth_counts_containers_and_what_dumps_writes_loads_reads(seed: int, missing_as_null: bool) -> None:
    # One depth rule: the root container is level 1 and no container (empty
    # ones, a table's rows and field groups too) may sit deeper than
    # max_depth.  dumps takes exactly the values that fit, and loads reads
    # its text back under the same max_depth; a refusal names the first
    # container too deep (its path is max_depth keys long).
    import random

    rnd = random.Random(seed)
    for _ in range(300):
        value = _shaped_value(rnd, rnd.randint(1, 7))
        depth = _containers(value)
        for max_depth in range(0, depth + 2):
            if depth <= max_depth:
                text = toonstream.dumps(value, max_depth=max_depth, missing_as_null=missing_as_null)
                back = toonstream.loads(text, max_depth=max_depth)  # (missing_as_null: a missing key reads as null)
                assert missing_as_null or json_equal(back, value), (value, max_depth)
                assert json_equal(toonstream.loads(text, max_depth=max_depth, strict=False), back)
                continue
            with pytest.raises(ToonEncodeError, match=r"nested deeper than max_depth") as info:
                toonstream.dumps(value, max_depth=max_depth, missing_as_null=missing_as_null)
            path = info.value.path
            assert len(path) == max_depth, (value, max_depth, path)
            at = value
            for step in path:
                at = at[step]
            assert type(at) in (dict, list), (value, max_depth, path)


@pytest.mark.parametrize("bottom", [{}, [], [1, 2], [{"a": 1}, {"a": 2}], {"k1": {"a": 1}, "k2": {"a": 2}}, 1])
def test_the_default_max_depth_round_trips(bottom: Any) -> None:
    # At the defaults: 10,000 containers are written and read back, 10,001 are refused.
    for wrap in ("dict", "list"):
        value: Any = bottom
        need = 10_000 - _containers(bottom)
        for _ in range(need):
            value = {"k": value} if wrap == "dict" else [value]
        assert _containers(value) == 10_000
        assert json_equal(toonstream.loads(toonstream.dumps(value)), value)
        with pytest.raises(ToonEncodeError, match=r"nested deeper than max_depth \(10000\)"):
            toonstream.dumps([value])


def test_strings_that_must_be_quoted() -> None:
    weird = ["", " x", "x ", "true", "-1", "05", "1e5", "+1", "a:b", "#x", "-", "[1]", "{a}", 'q"', "back\\slash",
             "tab\tx", "nl\nx", "\x00", "\u2028", "a,b", "a|b", "ü", "__proto__"]
    for delim in (",", "\t", "|"):
        out = toonstream.dumps({"v": weird, "o": {w: w for w in weird}}, delimiter=delim)
        assert toonstream.loads(out) == {"v": weird, "o": {w: w for w in weird}}


def test_lone_surrogates_are_rejected() -> None:
    with pytest.raises(ToonEncodeError):
        toonstream.dumps("a\ud800b")
    with pytest.raises(ToonEncodeError):
        toonstream.dumps({"k\udfff": 1})


def test_keys_starting_with_hash_or_dash_survive() -> None:
    value = {"#note": 1, "-x": 2, "rows": [{"#a": 1}, {"#a": 2}]}
    assert toonstream.loads(toonstream.dumps(value)) == value


def test_delimiter_names_and_errors() -> None:
    assert toonstream.dumps([1, 2], delimiter="pipe") == "[2|]: 1|2"
    with pytest.raises(ValueError):
        toonstream.dumps([1], delimiter=";")


def test_dump_to_text_and_binary_files() -> None:
    value = {"rows": [{"a": i, "b": "x" * (i % 7)} for i in range(5000)]}
    text = toonstream.dumps(value)
    s = io.StringIO()
    toonstream.dump(value, s)
    assert s.getvalue() == text
    b = io.BytesIO()
    toonstream.dump(value, b)
    assert b.getvalue() == text.encode()


# ---------------------------------------------------------------- column-wise fast path

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from toonstream._reference.columns import format_column  # noqa: E402
from toonstream._reference.normalize import normalize  # noqa: E402
from toonstream._reference.writer import primitive_formatter  # noqa: E402


def _plain_norm(v: Any) -> Any:
    return normalize(v, None)  # (the encoders' host types, no default)

_CELL_TEXT = st.one_of(
    st.text(st.sampled_from(list("ab 09-+.eE#:,|\t\"\\[]{}\x01\né")), max_size=6),
    st.sampled_from(["true", "null", "false", "", "-", "05", "1e5", "+1", "-3.5", "2024-01-02", " x"]),
)


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        st.lists(_CELL_TEXT, min_size=1, max_size=30),
        st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=30),
        st.lists(st.integers(), min_size=1, max_size=30),
        st.lists(st.one_of(st.booleans(), st.none(), st.integers(), _CELL_TEXT), min_size=1, max_size=30),
    ),
    st.sampled_from([",", "\t", "|"]),
)
def test_column_formatting_equals_per_value(col: list[Any], delimiter: str) -> None:
    prim = primitive_formatter(delimiter, _plain_norm)
    assert format_column(col, delimiter, prim) == [prim(v) for v in col]


# ---------------------------------------------------------------- dumps: the native engine against the walk


import decimal  # noqa: E402

from hypothesis import HealthCheck  # noqa: E402

from toonstream import encoder as _encoder  # noqa: E402
from toonstream._reference.quoting import NEEDS_QUOTE, flag_strings  # noqa: E402


def _both(value: Any, **kw: Any) -> tuple[Any, Any]:
    """dumps on the native engine (where it is built), and on the reference's walk (text, or the
    error's type and path)."""
    from toonstream import _engine

    results: list[Any] = []
    for name in ("native", "python"):
        try:
            engine = _engine.select(name)
        except ImportError:
            engine = _engine.select("python")
        previous = _engine.use(engine)
        try:
            results.append(toonstream.dumps(value, **kw))
        except ToonEncodeError as e:
            results.append(("error", str(e), e.path))
        finally:
            _engine.use(previous)
    return results[0], results[1]


_ODD = st.sampled_from([
    "", " ", "-", "#", "true", "false", "null", "True", "1e5", "05", "+1", "-3.5", "1.", ".5", "1e", "e5", "+", "+.",
    "1.5e+3", "1E5", "-0", "0", "2024-01-02", "2024-05-08T18:34:08Z", " x", "x ", "a,b", "a|b", "a\tb", "a\nb",
    "a:b", "[1]", "{}", 'q"', "b\\s", "\x01", "\x7f", "é", "Kraków", "\u2028", "😀", "1_000", "٥", "- x", "x: y",
])
_TEXT = st.one_of(_ODD, st.text(st.sampled_from(list("ab 09-+.eE#:,|\t\"\\[]{}\x01\né")), max_size=6))
_FLOAT = st.one_of(st.floats(), st.sampled_from(
    [1e-7, 1e21, 1e20, -0.0, 0.0, 5e-324, 1e16, 1e-6, -1e-6, 2.0**53, 2.0**53 + 2, 123456789012345678.0, 0.1, 100.0]
))
_INT = st.one_of(st.integers(), st.integers(-(2**80), 2**80), st.sampled_from([10**18, -(10**18), 10**18 - 1, 10**4000]))
_DEC = st.sampled_from([decimal.Decimal(x) for x in ["1.50", "-0", "1e30", "NaN", "0.000001", "123456789012345678901234567890.5"]])
_PRIM = st.one_of(st.none(), st.booleans(), _INT, _FLOAT, _TEXT, _DEC)
_KEY = st.one_of(st.sampled_from(["a", "b", "id", "x.y", "#k", "-k", "", "k:v", "true", "1"]), _TEXT)


@st.composite
def _tables(draw: Any) -> list[dict[str, Any]]:
    keys = draw(st.lists(_KEY, min_size=1, max_size=5, unique=True))
    pools = {k: draw(st.lists(_PRIM, min_size=1, max_size=4)) for k in keys}
    return [{k: draw(st.sampled_from(pools[k])) for k in keys} for _ in range(draw(st.integers(1, 40)))]


@st.composite
def _records(draw: Any) -> list[dict[str, Any]]:
    """8+ objects of a few shapes (not a table): the column-wise list-item path."""
    keys = draw(st.lists(_KEY, min_size=1, max_size=5, unique=True))
    leaf = st.one_of(_PRIM, _tables().map(lambda rows: rows[0]), st.just({}), st.lists(_PRIM, max_size=3), _tables())
    pools = {k: draw(st.lists(leaf, min_size=1, max_size=3)) for k in keys}
    out = []
    for _ in range(draw(st.integers(8, 30))):
        present = [k for k in keys if draw(st.booleans())] or keys[:1]
        out.append({k: draw(st.sampled_from(pools[k])) for k in present})
    return out


_VALUE = st.recursive(
    _PRIM,
    lambda children: st.one_of(
        st.lists(children, max_size=6),
        st.lists(_TEXT, min_size=17, max_size=30),  # long inline arrays: column-wise
        st.dictionaries(_KEY, children, max_size=6),
        _tables(),
        _tables().map(lambda rs: {f"k{i}": r for i, r in enumerate(rs)}),  # keyed tables
        st.lists(_tables(), max_size=3),
        _records(),
        _records().map(lambda rs: {"k": rs, "n": {"inner": rs}}),
    ),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    _VALUE,
    st.sampled_from([",", "\t", "|"]),
    st.sampled_from([1, 2]),
    st.booleans(),
    st.sampled_from([0, 1, 2, 3, 10_000]),
)
@pytest.mark.slow
def test_fast_path_equals_walk(value: Any, delimiter: str, indent: int, missing_as_null: bool, max_depth: int) -> None:
    fast, walk = _both(value, delimiter=delimiter, indent_size=indent, missing_as_null=missing_as_null, max_depth=max_depth)
    assert fast == walk


@settings(max_examples=300, deadline=None)
@given(st.lists(_TEXT, min_size=1, max_size=40), st.sampled_from([",", "\t", "|"]))
def test_flag_strings_flags_every_string_that_needs_quotes(col: list[str], delimiter: str) -> None:
    flags = flag_strings(col, delimiter)
    needs = {i for i, s in enumerate(col) if NEEDS_QUOTE[delimiter].search(s) is not None}
    if flags is not None:
        must, maybe = flags
        assert must <= needs <= must | maybe  # "must" is certain, together they cover every one


def test_native_dumps_declines_exactly() -> None:
    rows = [{"a": i, "b": "x"} for i in range(3)]
    cyclic: dict[str, Any] = {"a": 1}
    cyclic["self"] = cyclic
    deep: Any = 1
    for _ in range(200):  # 400 levels
        deep = {"k": [deep]}
    cases = [
        {"t": datetime.date(2024, 1, 2), "s": (1, 2), "f": frozenset({"b", "a"}), "rows": rows},
        {"x": {"y": "bad\ud800"}},
        {"x": [{"k": object()}]},
        cyclic,
        deep,
        {"a": [1, 2, 3] * 10, "b": {"c": "true", "d": "1e5"}, "e": []},
        [[1, 2], [], {}, "x", {"a": {}}, [{"a": 1}, {"a": 2}]],
    ]
    for value in cases:
        for max_depth in (0, 1, 2, 3, 10, 10_000):
            fast, walk = _both(value, max_depth=max_depth)
            assert fast == walk


def test_big_tables_equal_walk_across_chunks() -> None:
    n = _encoder.TABLE_BATCH * 2 + 7
    rows = [
        {"id": i, "name": ["Smith, John", "-x", "true", "user", "12", " pad"][i % 6], "f": [0.5, 1e-7, 3.0, -0.0][i % 4]}
        for i in range(n)
    ]
    for d in (",", "\t", "|"):
        fast, walk = _both({"rows": rows, "tags": ["a", "b"] * 40}, delimiter=d)
        assert fast == walk


def test_huge_ints_past_the_str_limit() -> None:
    big = 10**5000  # str() refuses it (CPython's 4300-digit limit): encode_int writes it
    for value in (big, [big, 1], [big] * 20, {"a": big}, [{"a": big}, {"a": -big}], {"k": {"a": big}, "j": {"a": 1}}):
        fast, walk = _both(value)
        assert fast == walk
        assert toonstream.loads(fast) == value


def test_records_with_tables_and_arrays_equal_walk() -> None:
    # list items that are objects: column-wise per key sequence; their arrays
    # (inline, or tables) formatted together unless something differs
    orders = [
        {"id": i, "c": {"name": f"C {i}", "vip": i % 3 == 0}, "items": [{"sku": f"S-{j}", "qty": j, "p": j / 4} for j in range(1 + i % 4)],
         "tags": ["a", "true", "b,c"][: 1 + i % 3], "total": i * 1.5}
        for i in range(40)
    ]
    variants = [
        orders,
        orders + [{"id": 99, "c": {}, "items": [], "tags": [], "total": None}],
        orders + [{"id": 98, "c": {"name": "x"}, "items": [{"qty": 1, "sku": "s", "p": 0.5}], "tags": [1, "x"], "total": 1}],
        orders + [{"id": 97, "c": {"a": {"b": 1}, "z": {"b": 2}}, "items": [{"sku": "s", "qty": [1]}], "tags": [[1]], "total": 2}],
        orders + [{"total": 1.0, "id": 96}],
        [{"e": {"code": "E:1", "retry": True}} if i % 2 else {"e": {"code": "x"}} for i in range(30)],
        [{"a": "\ud800"}] * 10,
    ]
    for value in variants:
        for d in (",", "|"):
            fast, walk = _both({"orders": value}, delimiter=d)
            assert fast == walk


# ---------------------------------------------------------------- mixed-kind columns

from toonstream._reference.columns import format_strings  # noqa: E402

_NUMBERS = st.one_of(
    st.integers(-(2**60), 2**60),
    st.sampled_from([0, -1, 2**53, 2**53 + 1, -(2**53) - 1, 10**16, 10**16 + 1, 10**20, 10**21, 10**22, 10**308, 10**309,
                     10**5000, -(10**5000), 123456789012345678]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([-0.0, 0.0, 1e16, 1e21, 1e-7, 5e-324, 3.0, -3.0, 2.0**53, 1e308, 0.1, 802.265]),
)
_ANY_CELL = st.one_of(_NUMBERS, st.booleans(), st.none(), _TEXT, _DEC)


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(
        st.lists(_NUMBERS, min_size=1, max_size=40),  # ints and floats: formatted as floats when exact
        st.lists(st.one_of(_NUMBERS, st.booleans()), min_size=1, max_size=40),  # True is an int subclass
        st.lists(_ANY_CELL, min_size=1, max_size=40),
        st.lists(st.one_of(st.none(), _TEXT), min_size=1, max_size=40),
    ),
    st.sampled_from([",", "\t", "|"]),
)
def test_mixed_columns_equal_per_value(col: list[Any], delimiter: str) -> None:
    prim = primitive_formatter(delimiter, _plain_norm)
    assert format_column(col, delimiter, prim) == [prim(v) for v in col]
    assert format_column(tuple(col), delimiter, prim) == [prim(v) for v in col]


def test_mixed_columns_fixed_cases() -> None:
    cases: list[list[Any]] = [
        [1, 2.5, -0.0, 0, 3.0, 1e21, 10**21, 10**16, 1e16, float("nan"), float("inf"), -float("inf"), 7],
        [True, 1, 1.0, False, 0, 0.0, None, "1", "true", decimal.Decimal("1.50"), decimal.Decimal("-0")],
        [2**53 + 1, 0.5],  # an int no float equals: per kind
        [10**400, 0.5],  # beyond the float range
        [10**5000, 1.5, 2],  # beyond str()'s digit limit
        [1e-7, 5, "a,b", "x|y", "t\tb", None, "", " pad", "-", "05", "é", "Kraków"],
        ["a", 1, "b\ud800"],  # the lone surrogate is reported, as per value
        [object(), 1, 2.5],
    ]
    for col in cases:
        for d in (",", "\t", "|"):
            prim = primitive_formatter(d, _plain_norm)
            want = _outcome(lambda: [prim(v) for v in col])
            assert _outcome(lambda: format_column(col, d, prim)) == want, (col, d)


def _outcome(fn: Any) -> Any:
    """What ``fn()`` returns, or the encode error it raises."""
    try:
        return fn()
    except ToonEncodeError as e:
        return ("error", str(e))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(_TEXT, st.sampled_from(["true", "false", "null", "Zeta", "zz", ":x", "9a", "+5", "alpha beta"])),
             min_size=1, max_size=60),
    st.sampled_from([",", "\t", "|"]),
)
def test_string_columns_equal_per_value(col: list[str], delimiter: str) -> None:
    prim = primitive_formatter(delimiter, _plain_norm)
    assert _outcome(lambda: format_strings(col, delimiter, prim)) == _outcome(lambda: [prim(v) for v in col])


def test_string_columns_lead_and_keyword_checks() -> None:
    # no string below ":" (the lead-character checks are skipped): keywords and trailing spaces still found
    base = ["alpha", "beta gamma", "Zürich", "x:y"[:1]] * 50
    for extra in (["true"], ["false"], ["null"], ["trail "], ["trail\t"], ["a,b"], ["a|b"], ["a\tb"], ["ok"], ["{x}"]):
        for pos in (0, 37, len(base)):
            col = base[:pos] + extra + base[pos:]
            for d in (",", "\t", "|"):
                prim = primitive_formatter(d, _plain_norm)
                assert format_strings(col, d, prim) == [prim(v) for v in col]


def test_long_string_columns() -> None:
    # long strings (the per-string keyword lookup), with and without a bad first character
    base = ["delta omega alpha sigma tau alpha upsilon", "kappa alpha tau delta zeta kappa", "Zürich the long way round"] * 40
    extras = [["true"], ["false"], ["null"], ["trail "], ["a,b"], ["a|b"], ["a\tb"], ["1e5"], ["-x"], ["#x"], [" x"], [""],
              ["x\ny"], ["q\"uote"], ["05"], ["+1"], ["2024-01-02 and more text here"]]
    for extra in extras:
        for pos in (0, 61, len(base)):
            col = base[:pos] + extra + base[pos:]
            for d in (",", "\t", "|"):
                prim = primitive_formatter(d, _plain_norm)
                assert format_strings(col, d, prim) == [prim(v) for v in col], (extra, d)
                flags = flag_strings(col, d)
                needs = {i for i, s in enumerate(col) if NEEDS_QUOTE[d].search(s) is not None}
                if flags is not None:
                    assert flags[0] <= needs <= flags[0] | flags[1]


def test_flat_tables_native_equals_walk() -> None:
    n = _encoder.TABLE_BATCH + 5
    rows = [
        {"id": i, "s": [1.5, 2, -0.0, 10**20, 1e21, True, None, "x", decimal.Decimal("1.5")][i % 9], "t": f"u{i}"}
        for i in range(n)
    ]
    variants = [
        rows,
        rows + [{"id": 1, "s": 2, "u": 3}],  # keys differ in the last chunk
        rows + [{"s": 2, "id": 1, "t": "x"}],  # same keys, another order: the header's order
        rows + [{"id": 1, "s": {"a": 1}, "t": "x"}],  # a nested object: not flat
        rows + [{"id": 1, "s": datetime.date(2024, 1, 2), "t": "x"}],  # a host value
        rows + [{"id": 1, "s": "bad\ud800", "t": "x"}],  # an error: the walk reports it
        [{"a": i} for i in range(40)],
        [{"a": i, 1: 2} for i in range(40)],
    ]
    for value in variants:
        for d in (",", "\t", "|"):
            fast, walk = _both({"rows": value}, delimiter=d)
            assert fast == walk


def test_cycle_through_repeated_values_is_found_at_once(engine: str) -> None:
    # d = {"x": d, "y": d}: a table check that followed both columns would double its work at every
    # level down to max_depth before the walk saw the cycle; it must stop at the first repeat
    import cProfile

    d: dict[str, Any] = {}
    d["x"] = d
    d["y"] = d
    for max_depth in (16, 10_000):
        profile = cProfile.Profile()
        with pytest.raises(ToonEncodeError, match="circular reference") as info:
            profile.runcall(toonstream.dumps, [d, d], max_depth=max_depth)
        assert info.value.path == (0, "x")
        assert sum(e.callcount for e in profile.getstats()) < 5_000
    shared = {"k": 1}  # a shared value that is no cycle is still a table
    assert toonstream.dumps([{"a": shared, "b": shared}] * 2) == "[2]{a{k},b{k}}:\n  1,1\n  1,1"


def test_dump_writes_what_dumps_returns(engine: str) -> None:
    # over a MiB of text, so a text made at once is written in several pieces; both file kinds
    value = {"rows": [{"id": i, "name": f"nämé {i}", "ok": i % 3 == 0} for i in range(60_000)], "tail": [1.5, None]}
    text = toonstream.dumps(value)
    assert len(text) > 1 << 20
    binary, textual = io.BytesIO(), io.StringIO()
    toonstream.dump(value, binary)
    toonstream.dump(value, textual)
    assert binary.getvalue() == text.encode() and textual.getvalue() == text


BOM_VALUES: list[Any] = [
    "\ufeff",
    "\ufeffx",
    {"k": "\ufeffv"},
    ["\ufeff", "a"],
    {"\ufeffk": 1},
    # a column long enough for the column-wise formatter, the BOM in one row
    {"t": [{"a": "\ufeffq" if i == 70 else f"v{i}", "b": i} for i in range(200)]},
]


@pytest.mark.parametrize("value", BOM_VALUES, ids=range(len(BOM_VALUES)))
def test_a_leading_bom_in_a_string_is_quoted(value: Any, engine: str) -> None:
    # decoders skip one leading U+FEFF of a document: a root string that began with one would lose it
    text = toonstream.dumps(value)
    assert toonstream.loads(text) == value
    assert "\ufeff" not in text.replace('"\ufeff', "")  # every U+FEFF opens a quoted string
    out = io.StringIO()
    encode_records([value], out)
    assert toonstream.loads(out.getvalue()) == [value]

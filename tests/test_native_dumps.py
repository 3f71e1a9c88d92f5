"""The native encoder (``toonstream._native.dumps``) against the reference engine.

For every value it takes, ``_native.dumps(v, **options)`` must be exactly the
text the Python engine's ``dumps(v, **options)`` gives, byte for byte: the
spec encode fixtures, the benchmark datasets, and random JSON values (deep,
wide, unicode, strings that look like numbers or keywords or hold a
delimiter, floats across the whole range, huge ints) under every delimiter,
indent and ``missing_as_null``.  For everything else (host types, subclasses,
non-str keys, cycles, values deeper than ``max_depth``, lone surrogates,
options the reference rejects or spells by name) it returns
``NotImplemented``, and the public ``dumps`` then gives the reference's result.
"""

from __future__ import annotations

import datetime
import enum
import io
import math
import random
import signal
import struct
import sys
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toonstream
from toonstream import _engine
from toonstream.streaming import encode_records
from toonstream._errors import ToonEncodeError

from conftest import REPO, import_native, json_equal, load_fixtures

_native = import_native()

sys.path.insert(0, str(REPO / "benchmarks"))
import datasets  # noqa: E402

ENCODE = load_fixtures("encode")
DELIMITERS = (",", "\t", "|")
OPTION_GRID = [
    {"delimiter": d, "indent_size": i, "missing_as_null": m} for d in DELIMITERS for i in (1, 2, 4) for m in (False, True)
]


def native_dumps(value: Any, **options: Any) -> Any:
    # A build of the extension without dumps is a failure, not a skip.
    assert hasattr(_native, "dumps"), "toonstream._native has no dumps (stale build?)"
    return _native.dumps(value, **options)


@contextmanager
def engine(name: str) -> Iterator[None]:
    previous = _engine.use(_engine.select(name))
    try:
        yield
    finally:
        _engine.use(previous)


def reference(value: Any, **options: Any) -> str:
    with engine("python"):
        return toonstream.dumps(value, **options)


def same(value: Any, **options: Any) -> str:
    """Assert the native text is the reference's; returns it."""
    ours = native_dumps(value, **options)
    theirs = reference(value, **options)
    assert ours is not NotImplemented, f"declined a plain value: {value!r:.300}"
    assert ours == theirs
    return ours  # type: ignore[no-any-return]


def finite(value: Any) -> bool:
    """No NaN or infinity in ``value`` (and no Decimal: loads gives a float or an int for it,
    which need not compare equal), so a round trip gives ``value`` back."""
    todo = [value]
    while todo:
        v = todo.pop()
        if (type(v) is float and not math.isfinite(v)) or isinstance(v, Decimal):
            return False
        if isinstance(v, dict):
            todo.extend(v.values())
        elif isinstance(v, (list, tuple)):
            todo.extend(v)
    return True


def as_lists(value: Any) -> Any:
    """``value`` with tuples as lists (what a round trip gives back)."""
    if isinstance(value, dict):
        return {k: as_lists(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_lists(v) for v in value]
    return value


# ---------------------------------------------------------------- fixtures


@pytest.mark.parametrize("case", [c for _, c in ENCODE], ids=[i for i, _ in ENCODE])
def test_spec_fixture(case: dict[str, Any]) -> None:
    o = case.get("options", {})
    options = {"indent_size": o.get("indentSize", 2), "delimiter": o.get("delimiter", ",")}
    out = same(case["input"], **options)
    assert out == case["expected"]


@pytest.mark.parametrize("case", [c for _, c in ENCODE], ids=[i for i, _ in ENCODE])
def test_spec_fixture_inputs_every_option(case: dict[str, Any]) -> None:
    # (one test per case, the option grid inside: 3,000 test items cost more than the encodes)
    for options in OPTION_GRID:
        same(case["input"], **options)


@pytest.mark.parametrize("name", sorted(datasets.DATASETS))
@pytest.mark.parametrize("options", OPTION_GRID[::3], ids=lambda o: f"{o['delimiter']!r}-{o['indent_size']}-{o['missing_as_null']}")
def test_datasets(name: str, options: dict[str, Any]) -> None:
    value = datasets.DATASETS[name](300)
    out = same(value, **options)
    if not options["missing_as_null"]:
        back = toonstream.loads(out, indent_size=options["indent_size"])
        assert json_equal(back, value, ordered=False)


# ------------------------------------------------------------- hand-picked

TRICKY_STRINGS = [
    "", " ", "a ", " a", "\ta", "a\t", "-", "-a", "- a", "#", "#a", "a#", "true", "false", "null", "True", "nullx",
    "1", "-1", "+1", "01", "1.5", "1.", ".5", "1e5", "1E+5", "1e", "1e+", "1.5e-3", "+1.5E3", "0x10", "1_000", "١٢",
    "a:b", "a,b", "a|b", "a\tb", "[", "]", "{", "}", '"', "\\", "a\nb", "\r", "\x00", "\x01", "\x1f", "\x7f", "é",
    "日本語", "😀", "a b", "a  b", "[1]", "{a}", "key: value", "\u2028", "\ufeff", "a\u0085b",
]

FLOATS = [
    0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 3.0, 100.0, 1e15, 1e16, 1e17, 123456789012345678.0, 1e20, 1e21, 1e22, 9.999e20,
    2.0**53, 2.0**53 + 2, 2.0**63, 2.0**64, 6.517366420032157e16, 0.1, 0.2, 1 / 3, 1e-4, 1e-5, 1.5e-5, 1e-6, 9.99e-7,
    1e-7, 1.5e-7, 5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308,
    -1.7976931348623157e308, 1e300, 1e-300, math.pi, -math.e, 4.35, 0.1 + 0.2, 1e23, 9007199254740993.0,
    float("nan"), float("inf"), float("-inf"),
]

INTS = [0, 1, -1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64, 10**20, -(10**30), 10**100, 2**12999, 10**4299]


@pytest.mark.parametrize("delimiter", DELIMITERS)
def test_tricky_strings(delimiter: str) -> None:
    for s in TRICKY_STRINGS:
        same(s, delimiter=delimiter)
        same({s: s}, delimiter=delimiter)
        same({"k": [s, s]}, delimiter=delimiter)
        same([{s: s, "b": s}, {s: 1, "b": s}], delimiter=delimiter)
        same([[s], {"x": s}], delimiter=delimiter)
    same(TRICKY_STRINGS, delimiter=delimiter)
    same({"t": [{"a": s, "b": i} for i, s in enumerate(TRICKY_STRINGS)]}, delimiter=delimiter)


@pytest.mark.parametrize("delimiter", DELIMITERS)
def test_every_character_everywhere(delimiter: str) -> None:
    # Each ASCII character (and a few others) at every place of strings of
    # 1 to 20 characters: the quoting scan works 8 bytes at a time.
    chars = [chr(c) for c in range(128)] + ["\x80", "\xff", "é", "\u2028", "😀"]
    base = "abcdefghijklmnopqrst"
    cells = [base[:n][:p] + c + base[:n][p + 1 :] for c in chars for n in range(1, 21) for p in range(n)]
    same(cells, delimiter=delimiter)
    same({c: 1 for c in cells}, delimiter=delimiter)


def test_numbers() -> None:
    for x in FLOATS + INTS:
        same(x)
        same([x, x])
        same({"x": x})
    same({"rows": [{"f": x, "i": i} for x, i in zip(FLOATS, INTS * 4)]})
    same(FLOATS)
    same(INTS)


def test_random_float_bits() -> None:
    # Every exponent, including subnormals: the shortest digits must be repr's.
    rnd = random.Random(5)
    values = [struct.unpack("<d", rnd.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(20_000)]
    values += [rnd.uniform(-1e22, 1e22) for _ in range(2000)] + [rnd.uniform(-1e-3, 1e-3) for _ in range(2000)]
    values += [float(rnd.randint(-(10**21), 10**21)) for _ in range(2000)]
    values += [float(f"{rnd.randint(1, 10**17)}e{rnd.randint(-340, 292)}") for _ in range(5000)]
    same(values)
    same([{"x": v} for v in values])


def test_shapes() -> None:
    cases: list[Any] = [
        {},
        [],
        (),
        {"a": {}},
        {"a": []},
        {"a": ()},
        [[]],
        [{}],
        [{}, {}],
        [{}, {"a": 1}],
        [[], [1], [[]], [{}]],
        {"a": [[1, 2], [3]]},
        {"a": [{"b": [1, 2]}, {"b": [1]}]},
        [{"a": 1, "b": 2}, {"b": 3, "a": 4}],
        [{"a": 1, "b": 2}, {"a": 1}],
        [{"a": 1}, {"a": {"b": 1}}],
        [{"a": {"b": 1, "c": {"d": 2}}}, {"a": {"c": {"d": 3}, "b": 4}}],
        [{"a": {"b": 1}}, {"a": {"b": 1, "c": 2}}],
        [{"a": {}}, {"a": {}}],
        [{"a": [1]}, {"a": [2]}],
        {"x": {"a": {"p": 1}, "b": {"p": 2}}},
        {"x": {"a": {"p": 1}, "b": {"q": 2}}},
        {"x": {"a": {"p": 1}}},
        {"x": {"a": {"p": 1}, "b": 2}},
        {"a": {"p": {"q": 1}}, "b": {"p": {"q": 2}}},
        [{"x": {"a": {"p": 1}, "b": {"p": 2}}}],
        [{"a": 1, "b": [1, 2], "c": {"d": 1}}, {"a": 2}],
        [{"a": [{"b": 1}, {"b": 2}], "c": 1}],
        [{"a": {"b": {"c": 1}}, "d": 2}],
        [1, {"a": 1}, [2], "x"],
        ([1, 2], (3, (4,))),
        {"t": ({"a": 1}, {"a": 2})},
        [({"a": 1},), ()],
        [{"a": 1, "b": None}, {"a": None, "b": True}],
        {"": 1, "a b": {"c d": [1]}, "x.y": 2, "_": 3, "1a": 4},
        [{"": 1, "a,b": 2}, {"": 3, "a,b": 4}],
        [{"a|b": 1}, {"a|b": 2, "c\td": 3}],
    ]
    for v in cases:
        for options in OPTION_GRID:
            same(v, **options)


def test_missing_as_null_unions() -> None:
    cases: list[Any] = [
        [{"a": 1}, {"b": 2}],
        [{"a": 1, "b": 2}, {"b": 3}, {"c": 4, "a": 5}],
        [{"a": 1}, {"a": {"b": 1}}],
        [{"a": {"b": 1}}, {"a": {"b": 2}, "c": 1}],
        [{"a": {"b": 1}}, {"c": 1}],
        [{"a": {"b": 1}}, {"a": {"c": 1}}],
        [{"a": {"b": {"c": 1}}, "x": 1}, {"a": {"b": {"c": 2}}}],
        [{"a": 1}, {}],
        [{"a": 1}, 2],
        [{"a": [1]}, {"b": 1}],
        [{"a": {}}, {"b": 1}],
        [{"a": 1, "b": None}, {"b": 2}],
    ]
    for v in cases:
        for d in DELIMITERS:
            same(v, delimiter=d, missing_as_null=True)
            same({"k": v}, delimiter=d, missing_as_null=True)
            same([v], delimiter=d, missing_as_null=True)


@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_deep() -> None:
    # (indentation makes the text quadratic in the depth: 10,000 levels of
    # one-space indents are 50 MB)
    for depth in (100, 2000, 10_000):
        v: Any = [1]
        w: Any = {"a": 1}
        for _ in range(min(depth, 2000) - 1):
            w = {"a": w, "b": [1, {"c": 2}]}
        for _ in range(depth - 1):
            v = [v]
        same(v, indent_size=1)
        same({"x": v if depth < 10_000 else v[0]}, indent_size=1)  # (10,000 containers at most)
        same(w)
    # a table whose rows nest deeply (one frame for the whole table)
    row: Any = 1
    for _ in range(3000):
        row = {"a": row}
    same([row, row])


def test_wide() -> None:
    wide = {f"k{i}": i for i in range(5000)}
    same(wide)
    same([wide, wide])
    same(list(range(100_000)))
    same([{"id": i, "s": str(i)} for i in range(50_000)])


@pytest.mark.parametrize("max_depth", [0, 1, 2, 3, 5])
def test_max_depth_within(max_depth: int) -> None:
    # Whatever the native engine takes matches the reference; what it
    # declines the reference encodes or refuses.
    values: list[Any] = [1, {"a": 1}, [1, 2], {"a": {"b": 1}}, {"a": [1]}, [[1]], [{"a": 1}, {"a": 2}],
                         {"a": {"b": {"c": {"d": 1}}}}, {"x": {"a": {"p": 1}, "b": {"p": 2}}}, {"a": {}}, [[]]]
    for v in values:
        ours = native_dumps(v, max_depth=max_depth)
        if ours is NotImplemented:
            continue
        assert ours == reference(v, max_depth=max_depth)


# ------------------------------------------------------------- properties

KEYS = st.one_of(
    st.sampled_from(["a", "b", "c", "id", "name", "x.y", "_k", "", "a b", "1", "true", "-x", "a,b", "a|b", "a\tb", "é", "k:"]),
    st.text(max_size=6),
)
STRINGS = st.one_of(st.sampled_from(TRICKY_STRINGS), st.text(max_size=12), st.from_regex(r"[+-]?[0-9]{1,3}(\.[0-9]{1,2})?([eE][+-]?[0-9]{1,2})?", fullmatch=True))
FLOAT_VALUES = st.one_of(st.floats(), st.floats(min_value=1e15, max_value=1e22), st.floats(min_value=-1e-3, max_value=1e-3), st.sampled_from(FLOATS))
INT_VALUES = st.one_of(st.integers(), st.integers(min_value=-(10**40), max_value=10**40), st.sampled_from(INTS))
DECIMAL_VALUES = st.one_of(
    st.decimals(allow_nan=True, allow_infinity=True),
    st.decimals(places=3, min_value=-(10**25), max_value=10**25),
    st.builds(lambda digits, exp: Decimal(f"{digits}E{exp}"), st.integers(-(10**30), 10**30), st.integers(-40, 40)),
)
PRIMITIVES = st.one_of(st.none(), st.booleans(), INT_VALUES, FLOAT_VALUES, STRINGS, DECIMAL_VALUES)


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(KEYS, children, max_size=5),
        st.lists(children, max_size=3).map(tuple),
    )


VALUES = st.recursive(PRIMITIVES, _containers, max_leaves=40)


@st.composite
def record_lists(draw: st.DrawFn) -> Any:
    """Lists of objects over a few keys: tables, unions, keyed tables, list items."""
    names = draw(st.lists(KEYS, min_size=1, max_size=4, unique=True))
    sub = draw(st.lists(KEYS, min_size=1, max_size=2, unique=True))
    cell = st.one_of(PRIMITIVES, st.fixed_dictionaries({k: PRIMITIVES for k in sub}), st.lists(PRIMITIVES, max_size=2))
    rows = []
    for _ in range(draw(st.integers(1, 5))):
        keys = draw(st.permutations(names))
        keep = draw(st.lists(st.booleans(), min_size=len(keys), max_size=len(keys)))
        rows.append({k: draw(cell) for k, kept in zip(keys, keep) if kept or draw(st.integers(0, 3)) > 0})
    shape = draw(st.integers(0, 3))
    if shape == 1:
        return {"rows": rows}
    if shape == 2:
        return {f"e{i}": r for i, r in enumerate(rows)}  # a keyed-table candidate
    if shape == 3:
        return [rows, {"k": rows}]
    return rows


OPTIONS = st.fixed_dictionaries(
    {"delimiter": st.sampled_from(DELIMITERS), "indent_size": st.sampled_from([1, 2, 4]), "missing_as_null": st.booleans()}
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(VALUES, OPTIONS)
def test_random_values(value: Any, options: dict[str, Any]) -> None:
    out = same(value, **options)
    if finite(value) and not options["missing_as_null"]:
        back = toonstream.loads(out, indent_size=options["indent_size"])
        assert json_equal(back, as_lists(value), ordered=False)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(record_lists(), OPTIONS)
def test_random_records(value: Any, options: dict[str, Any]) -> None:
    out = same(value, **options)
    if finite(value) and not options["missing_as_null"]:
        back = toonstream.loads(out, indent_size=options["indent_size"])
        assert json_equal(back, as_lists(value), ordered=False)


# ---------------------------------------------------------------- declined


class Color(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    LOW = 1


class Name(str, enum.Enum):
    ADA = "ada"


class MyStr(str):
    pass


class MyInt(int):
    pass


class MyFloat(float):
    pass


class MyDecimal(Decimal):
    pass


class MyDate(datetime.date):
    pass


class MyDict(dict):  # type: ignore[type-arg]
    pass


class MyList(list):  # type: ignore[type-arg]
    pass


def _cycle_list() -> Any:
    a: list[Any] = [1]
    a.append(a)
    return a


def _cycle_dict() -> Any:
    d: dict[str, Any] = {"x": 1}
    d["self"] = d
    return d


def _cycle_table() -> Any:
    d: dict[str, Any] = {}
    d["x"] = d
    d["y"] = d
    return [d, d]


def _deep(n: int) -> Any:
    v: Any = 1
    for _ in range(n):
        v = [v]
    return v


DECIMALS = [
    "0", "-0", "0E-8", "0E+5", "-0.000", "1", "-1", "1.10", "1.5E+10", "1E-7", "1E-6", "9.99E-7", "1E+21", "9.99E+20",
    "123456789012345678901234567890.123456789", "1E+999", "-2.5E-999", "NaN", "-NaN", "sNaN", "NaN123", "Infinity",
    "-Infinity", "1" * 200, "0." + "0" * 50 + "1",
]


@pytest.mark.parametrize("delimiter", DELIMITERS)
def test_decimals(delimiter: str) -> None:
    values = [Decimal(t) for t in DECIMALS]
    same(values, delimiter=delimiter)
    same({"d": values[3], "rows": [{"a": v, "b": 1} for v in values]}, delimiter=delimiter)
    same([{"a": v, "b": float(i)} if i % 2 else {"a": 1.5, "b": v} for i, v in enumerate(values)], delimiter=delimiter)


HOST_VALUES = [
    datetime.date(2024, 1, 2), datetime.datetime(2024, 1, 2, 3, 4, 5), datetime.datetime(2024, 1, 2, 3, 4, 5, 6),
    datetime.datetime(2024, 1, 2, tzinfo=datetime.timezone.utc),
    datetime.datetime(2024, 1, 2, tzinfo=datetime.timezone(datetime.timedelta(hours=-5, minutes=-30))),
    datetime.time(1, 2), datetime.time(1, 2, 3, 4), datetime.date.min, datetime.datetime.max,
    uuid.UUID(int=0), uuid.UUID("12345678-1234-5678-1234-567812345678"),
]


@pytest.mark.parametrize("delimiter", DELIMITERS)
def test_dates_and_uuids(delimiter: str) -> None:
    same(HOST_VALUES, delimiter=delimiter)
    same({"when": HOST_VALUES[1], "rows": [{"t": v, "i": i} for i, v in enumerate(HOST_VALUES)]}, delimiter=delimiter)
    same([{"t": v} if i % 2 else {"t": str(v)} for i, v in enumerate(HOST_VALUES)], delimiter=delimiter)


DECLINED: list[tuple[str, Callable[[], Any]]] = [
    ("enum", lambda: {"c": Color.RED}),
    ("intenum", lambda: [Level.LOW]),
    ("str-enum", lambda: {"n": Name.ADA}),
    ("str-subclass", lambda: MyStr("x")),
    ("str-subclass-key", lambda: {MyStr("k"): 1}),
    ("int-subclass", lambda: {"i": MyInt(3)}),
    ("float-subclass", lambda: [MyFloat(1.5)]),
    ("dict-subclass", lambda: [MyDict(a=1)]),
    ("ordered-dict", lambda: OrderedDict(a=1)),
    ("list-subclass", lambda: {"l": MyList([1])}),
    ("decimal-subclass", lambda: {"d": MyDecimal("1.10")}),
    ("decimal-too-long", lambda: [Decimal("1" * 10_001)]),
    ("decimal-exponent-too-long", lambda: {"d": Decimal("1E+999999999999999999")}),
    ("date-subclass", lambda: [MyDate(2024, 1, 2)]),
    ("set", lambda: {"s": {1, 2}}),
    ("frozenset", lambda: frozenset(["a"])),
    ("bytes", lambda: b"x"),
    ("object", lambda: [object()]),
    ("int-key", lambda: {1: "a"}),
    ("none-key", lambda: {"a": {None: 1}}),
    ("tuple-key", lambda: [{(1,): 1}]),
    ("int-key-in-table", lambda: [{"a": 1}, {"a": 2, 3: 4}]),
    ("lone-surrogate", lambda: {"s": "a\ud800b"}),
    ("lone-surrogate-key", lambda: {"\udfff": 1}),
    ("lone-surrogate-header", lambda: [{"\ud800": 1}, {"\ud800": 2}]),
    ("cycle-list", _cycle_list),
    ("cycle-dict", _cycle_dict),
    # (max_depth: the reference's table check walks a cycle to that depth first)
    ("cycle-table", lambda: (_cycle_table(), {"max_depth": 100})),
    ("too-deep", lambda: (_deep(60), {"max_depth": 50})),
    ("huge-int", lambda: [10**10001]),
    ("huge-int-bits", lambda: {"i": -(2**40000)}),
]


@pytest.mark.parametrize("make", [m for _, m in DECLINED], ids=[i for i, _ in DECLINED])
def test_declined(make: Callable[[], Any]) -> None:
    value = make()
    options: dict[str, Any] = {}
    if type(value) is tuple:
        value, options = value
    assert native_dumps(value, **options) is NotImplemented
    # ... and the public dumps on the native engine is the reference's
    try:
        theirs: Any = reference(value, **options)
    except ToonEncodeError as e:
        theirs = (type(e), str(e), e.path)
    with engine("native"):
        try:
            ours: Any = toonstream.dumps(value, **options)
        except ToonEncodeError as e:
            ours = (type(e), str(e), e.path)
    assert ours == theirs


@pytest.mark.parametrize(
    "options",
    [
        {"delimiter": "comma"},
        {"delimiter": "tab"},
        {"delimiter": "pipe"},
        {"delimiter": ";"},
        {"delimiter": MyStr(",")},
        {"delimiter": None},
        {"indent_size": 0},
        {"indent_size": -1},
        {"indent_size": True},
        {"indent_size": 2.0},
        {"indent_size": None},
        {"max_depth": None},
        {"max_depth": 1.5},
        {"max_depth": True},
        {"missing_as_null": 1},
        {"missing_as_null": None},
    ],
    ids=repr,
)
def test_declined_options(options: dict[str, Any]) -> None:
    assert native_dumps({"a": [1, 2]}, **options) is NotImplemented


def test_max_depth_declined_where_reference_refuses() -> None:
    v = _deep(20)
    assert native_dumps(v, max_depth=5) is NotImplemented
    with pytest.raises(ToonEncodeError):
        reference(v, max_depth=5)
    assert same(v, max_depth=20) == reference(v)
    with pytest.raises(ToonEncodeError):
        reference(v, max_depth=19)
    assert native_dumps(_deep(10_000)) is not NotImplemented  # the default limit: 10,000 containers
    assert native_dumps(_deep(10_001)) is NotImplemented


def test_unknown_option_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        native_dumps(1, indent=2)
    with pytest.raises(TypeError):
        _native.dumps(1, 2)


def test_public_dumps_uses_native() -> None:
    # The seam: with the native engine in use, dumps gives the native text.
    value = datasets.orders(20)
    with engine("native"):
        assert toonstream.dumps(value, delimiter="|") == native_dumps(value, delimiter="|")


class _Interrupted(Exception):
    pass


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer")
def test_signal_interrupts_a_long_dumps() -> None:
    # A handler's exception (Ctrl-C's KeyboardInterrupt alike) ends the call:
    # the walk checks for signals every so many cells.
    def handler(signum: int, frame: Any) -> None:
        raise _Interrupted

    value = [list(range(1000)) for _ in range(5000)]
    previous = signal.signal(signal.SIGALRM, handler)
    try:
        # (the timer is started inside the block: on a loaded machine it can fire before the next line)
        with pytest.raises(_Interrupted):
            signal.setitimer(signal.ITIMER_REAL, 0.001)
            for _ in range(200):  # (each call takes longer than the timer)
                native_dumps(value)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("where", ["nowhere", "first", "after", "last"])
def test_big_documents_written_in_pieces(where: str) -> None:
    # The walk hands its text to the str being built every 256 KiB (between
    # fields and items): a document of several MiB crosses that many times,
    # with a non-ASCII string before the first piece, after it, or last (the
    # str's kind is ASCII until then), inside tables and list items.
    rnd = random.Random(7)
    events = [
        {"id": i, "msg": "word " * rnd.randint(1, 12), "tags": ["a", "b"][: i % 3], **({"err": {"code": i}} if i % 2 else {})}
        for i in range(40_000)
    ]
    doc = {"head": "x", "events": events, "table": [{"a": i, "b": f"s{i}"} for i in range(20_000)]}
    if where == "first":
        doc["head"] = "é"
    elif where == "after":
        events[30_000]["msg"] = "日本語 😀"
    elif where == "last":
        doc["tail"] = "\u2028"
    out = same(doc)
    assert len(out.encode()) > 3 << 20
    assert out.isascii() == (where == "nowhere")
    same(events, indent_size=4, delimiter="|")
    items = _native.list_items(events)
    assert items == reference(events).split("\n", 1)[1]


def test_a_value_declined_after_the_first_pieces() -> None:
    # Text already handed to the str being built is dropped with it: the
    # reference then encodes the whole document (a host type at the end).
    docs: list[Any] = [{"id": i, "msg": "words " * 8, **({"e": {"c": i}} if i % 2 else {})} for i in range(30_000)]
    docs.append({"id": -1, "when": datetime.timezone.utc})
    assert len(reference(docs[:-1])) > 1 << 20
    assert native_dumps(docs) is NotImplemented
    with pytest.raises(ToonEncodeError):
        toonstream.dumps(docs)


_ONE_COPY = """
from toonstream import _native
def status(name):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(name))
docs = [{"id": i, "msg": "a few words here", **({"err": {"code": i}} if i % 2 else {})} for i in range(400_000)]
before = status("VmRSS")
out = _native.dumps(docs)
print(len(out), (status("VmHWM") - before) * 1024)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_a_nested_document_is_built_once() -> None:
    # Peak memory (VmHWM of a subprocess: ru_maxrss would count the forked
    # parent's pages too): the text goes into the str as it is
    # written, so a big nested document costs about one copy of its text,
    # not a Rust buffer and then the str copied from it (twice the text).
    import subprocess

    done = subprocess.run([sys.executable, "-c", _ONE_COPY], capture_output=True, text=True, check=True)
    size, rise = map(int, done.stdout.split())
    assert size > 20 << 20
    assert rise < 1.4 * size, (size, rise)


def test_many_keys_and_quoted_keys() -> None:
    # More distinct keys than the walk's key cache has slots, some quoted,
    # repeated across records and nested objects: the same text as the reference.
    keys = [f"k{i}" for i in range(300)] + ["a b", "1x", "-k", "", "k:v", 'q"', "é", "x.y", "_z"]
    records = [{k: i for k in keys[i % 7 :: 7]} | {"n": {k: k for k in keys[i % 5 :: 11]}} for i in range(200)]
    same(records)
    same({k: {"v": k} for k in keys})


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer")
def test_a_handler_that_changes_the_value_does_not_crash() -> None:
    # The walk reads dict items as borrowed references and checks for signals
    # only between items, so a handler that empties the containers mid-walk
    # leaves the walk reading what is there (whatever text, or the
    # reference's), never a freed object.
    value = [{"id": i, "s": f"v{i}", "n": {"a": [i, i + 1], "b": {"c": str(i)}}} for i in range(20_000)]

    def handler(signum: int, frame: Any) -> None:
        for row in value[::3]:
            row.clear()
        del value[1::5]

    previous = signal.signal(signal.SIGALRM, handler)
    try:
        for _ in range(20):
            signal.setitimer(signal.ITIMER_REAL, 0.0005)
            out = native_dumps(value)
            assert out is NotImplemented or isinstance(out, str)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class _CountingKey(str):
    """A str subclass key whose ``__eq__`` counts its calls (Python code)."""

    calls = 0

    def __eq__(self, other: object) -> bool:
        _CountingKey.calls += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


@pytest.mark.parametrize(
    "make",
    [
        lambda k: [{"a": 1, "b": 2}, {k: 2, "a": 1}],
        lambda k: [{"a": 1, "b": 2}, {"a": 1, k: 2}],
        lambda k: [{"x": {"a": 1, "b": [1]}}, {"x": {"a": 2, k: 3}}],
        lambda k: {"e1": {"a": 1, "b": 1}, "e2": {"a": 1, k: 2}},
        lambda k: [{"a": {"b": 1}, "c": 1}, {"c": 2, "a": {k: 1}}],
    ],
)
@pytest.mark.parametrize("missing_as_null", [False, True])
def test_no_python_code_runs(make: Callable[[Any], Any], missing_as_null: bool) -> None:
    # Rows are matched to the header by lookup; a key of another type could
    # run its __eq__ there: the walk declines first, calling nothing.
    _CountingKey.calls = 0
    value = make(_CountingKey("b"))
    assert native_dumps(value, missing_as_null=missing_as_null) is NotImplemented
    assert _CountingKey.calls == 0


# ---------------------------------------------------------------- records to rows (table_rows)


def encoded_records(name: str, records: Any, *, generator: bool, **options: Any) -> Any:
    """``encode_records`` on one engine: (count, text) or the error's (class, message, path)."""
    with engine(name):
        out = io.StringIO()
        try:
            n = encode_records(iter(records) if generator else records, out, **options)
        except ToonEncodeError as e:
            return type(e), str(e), e.path
        return n, out.getvalue()


def test_table_rows_is_dumps_rows() -> None:
    records = [{"id": i, "s": TRICKY_STRINGS[i % len(TRICKY_STRINGS)], "x": i / 3, "d": Decimal(i) / 7} for i in range(50)]
    text = _native.table_rows(records, ("id", "s", "x", "d"), delimiter="|", indent_size=3)
    whole = toonstream.dumps(records, delimiter="|", indent_size=3)
    assert whole.startswith("[50|]{id|s|x|d}:") and text == whole[whole.index("\n"):]
    # keys in another order are the same record; any other shape declines the whole batch
    assert _native.table_rows([{"b": 2, "a": 1}], ("a", "b")) == "\n  1,2"
    for bad in ([{"a": 1}], [{"a": 1, "b": 2, "c": 3}], [{"a": 1, "c": 2}], [{"a": [1], "b": 2}], [[1, 2]],
                [MyDict(a=1, b=2)], [{"a": Color.RED, "b": 1}], [{"a": "\ud800", "b": 1}]):
        assert _native.table_rows(bad, ("a", "b")) is NotImplemented, bad


@pytest.mark.parametrize("generator", [False, True])
@pytest.mark.parametrize("options", [{}, {"delimiter": "\t", "indent_size": 4}, {"key": "rows"}, {"missing_as_null": True},
                                     {"sort_keys": True}, {"max_depth": 1}])
def test_encode_records_on_both_engines(generator: bool, options: dict[str, Any]) -> None:
    rng = random.Random(5)
    flat = [{"id": i, "v": rng.choice([1, 2.5, "x", None, True, Decimal("1.10"), datetime.date(2024, 1, 2)]), "s": str(i)}
            for i in range(5000)]
    mixed = flat[:3000] + [{"id": 1, "v": [1, 2], "s": "x"}] + flat[3000:]
    other_keys = flat[:2500] + [{"id": 1, "s": "x"}] + flat[2500:]
    host = flat[:1500] + [{"id": Color.RED, "v": 1, "s": "x"}] + flat[1500:]
    bad = flat[:2000] + [{"id": object(), "v": 1, "s": "x"}] + flat[2000:]
    for records in (flat, mixed, other_keys, host, bad):
        want = encoded_records("python", records, generator=generator, **options)
        assert encoded_records("native", records, generator=generator, **options) == want


def test_encode_records_uses_table_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []

    def spy(*args: Any, **kw: Any) -> Any:
        got = _native.table_rows(*args, **kw)
        calls.append(got is not NotImplemented)
        return got

    records = [{"a": i, "b": str(i)} for i in range(5000)]
    native = _engine.select("native")
    native.table_rows = spy
    previous = _engine.use(native)
    try:
        out = io.StringIO()
        encode_records(iter(records), out)
    finally:
        _engine.use(previous)
    assert calls and all(calls)  # every batch after the first one, natively
    assert out.getvalue() == reference(records)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(record_lists(), OPTIONS, st.booleans())
def test_random_record_streams(value: Any, options: dict[str, Any], generator: bool) -> None:
    records = value if isinstance(value, list) else [value]
    records = [r for r in records for _ in range(700)]  # (more than one batch)
    want = encoded_records("python", records, generator=generator, **options)
    assert encoded_records("native", records, generator=generator, **options) == want


# ------------------------------------------------------ list items (list_items)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(VALUES, max_size=4), OPTIONS)
def test_list_items_are_dumps_items(values: list[Any], options: dict[str, Any]) -> None:
    # an empty list among the elements makes dumps write them all as list items (§9.4), each
    # independently of its siblings: list_items must be the lines after the array's header
    elements = [*values, []]
    text = _native.list_items(elements, **options)
    whole = reference(elements, **options)
    assert text is not NotImplemented
    assert whole.startswith(f"[{len(elements)}") and text == whole[whole.index("\n") + 1 :]


def test_list_items_decline_what_dumps_declines() -> None:
    assert _native.list_items([{"a": 1}, [1, {"b": 2}]]) == "  - a: 1\n  - [2]:\n    - 1\n    - b: 2"
    for bad in ([{"a": 1}, {"b": Color.RED}], [MyDict(a=1)], [{1: 2}], [{"a": "\ud800"}]):
        assert _native.list_items(bad) is NotImplemented, bad
    deep = [{"a": [[[1]]]}]
    # (five containers: the array, the object, three arrays)
    assert _native.list_items(deep, max_depth=5) == reference([*deep, []], max_depth=5).split("\n", 1)[1].rsplit("\n", 1)[0]
    assert _native.list_items(deep, max_depth=4) is NotImplemented  # the reference raises
    with pytest.raises(ToonEncodeError):
        reference(deep, max_depth=4)
    assert _native.list_items([{"a": 1}], max_depth=-1) is NotImplemented
    assert _native.list_items([]) == ""


def nested_records(n: int) -> list[Any]:
    rng = random.Random(11)
    out: list[Any] = []
    for i in range(n):
        kind = rng.randrange(4)
        if kind == 0:
            out.append({"id": i, "tags": [rng.choice(["a", "b,c", "1"]) for _ in range(rng.randrange(3))]})
        elif kind == 1:
            out.append({"id": i, "sub": {"x": i / 7, "y": [{"k": 1, "v": "w"}, {"k": 2, "v": None}]}})
        elif kind == 2:
            out.append({"id": i, "big": 10**30 + i, "d": Decimal("1.10"), "s": "- not an item"})
        else:
            out.append([i, {"a": [1, [2, {}]]}, []])
    return out


@pytest.mark.parametrize("generator", [False, True])
@pytest.mark.parametrize("options", [{}, {"delimiter": "|", "indent_size": 3}, {"key": "rows"},
                                     {"missing_as_null": True}, {"max_depth": 3}, {"max_depth": 4, "key": "k"},
                                     {"default": repr}])
def test_nested_record_streams_on_both_engines(generator: bool, options: dict[str, Any]) -> None:
    records = nested_records(3000)
    host = records[:1500] + [{"id": 1, "when": datetime.date(2024, 1, 2), "e": Color.RED}] + records[1500:]
    # (not a bare object(): a stream is spooled by pickling, so its repr would change)
    bad = records[:2500] + [{"id": 1, "sub": {"x": b"bytes"}}] + records[2500:]
    for stream in (records, host, bad):
        want = encoded_records("python", stream, generator=generator, **options)
        assert encoded_records("native", stream, generator=generator, **options) == want


def test_nested_jsonl_on_both_engines_and_through_list_items(monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    calls: dict[str, list[bool]] = {"list_items": [], "jsonl_items": []}

    def spy(name: str) -> Any:
        def call(*args: Any, **kw: Any) -> Any:
            got = getattr(_native, name)(*args, **kw)
            calls[name].append(got is not NotImplemented)
            return got
        return call

    lines = b"".join(json.dumps(r, default=str).encode() + b"\n" for r in nested_records(2500))
    lines += b'{"f": 1.10, "e": 1e400, "n": -0.0}\n'
    outs = {}
    # the native engine from the bytes (jsonl_items), and from parsed values (list_items)
    for name in ("python", "native", "native-values"):
        eng = _engine.select(name.split("-")[0])
        if name == "native":
            eng.jsonl_items = spy("jsonl_items")
            eng.list_items = spy("list_items")
        elif name == "native-values":
            eng.jsonl_items = None
            eng.list_items = spy("list_items")
        previous = _engine.use(eng)
        try:
            out = io.BytesIO()
            n = toonstream.encode_jsonl(io.BytesIO(lines), out)
        finally:
            _engine.use(previous)
        outs[name] = (n, out.getvalue())
    assert outs["native"] == outs["python"] == outs["native-values"]
    # 2,501 elements in a few batches, all native, from the bytes first
    assert calls["jsonl_items"] and all(calls["jsonl_items"])
    assert len(calls["list_items"]) > 1 and all(calls["list_items"])


def test_a_keyed_table_that_grows_while_written_is_the_references_text() -> None:
    """Python code run inside the walk (here a tzinfo) that adds an entry to a keyed table's
    dict: the native walk indexed its collected columns past their end (a Rust panic, a
    RuntimeError); it now leaves the value to the reference, whose text both engines give."""
    import datetime

    def make() -> dict[str, Any]:
        class TZ(datetime.tzinfo):
            def utcoffset(self, dt: Any) -> datetime.timedelta:
                d["k2"] = {"a": 2}
                return datetime.timedelta(0)

        d: dict[str, Any] = {"k0": {"a": datetime.datetime(2020, 1, 1, tzinfo=TZ())}, "k1": {"a": 1}}
        return {"o": d}

    assert toonstream.dumps(make()) == 'o[3:]{a}:\n  k0: "2020-01-01T00:00:00+00:00"\n  k1: 1\n  k2: 2'

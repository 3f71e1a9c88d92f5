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
    big = 10**10000
    out = toonstream.dumps({"n": big})
    assert toonstream.loads(out, max_number_length=20_000) == {"n": big}
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

from toonstream._columns import format_column  # noqa: E402
from toonstream._writer import primitive_formatter  # noqa: E402

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
    prim = primitive_formatter(delimiter, None)
    assert format_column(col, delimiter, prim) == [prim(v) for v in col]

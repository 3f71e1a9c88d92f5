"""Host types in every encoder: subclasses of str/int/float/Decimal (enums
mixed with them included) are written as their contents, whatever their
__str__/__repr__/__format__/... say; keys with the same contents are an
error; and every encoder path writes the same bytes for the same value."""

from __future__ import annotations

import enum
import io
import json
from decimal import Decimal
from typing import Any, Callable, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toonstream
from toonstream import ToonEncodeError
from toonstream.streaming import Encoder, encode_records

from test_properties import JSON


# ------------------------------------------------------------------ host types


class LyingStr(str):
    """Every text-producing or text-inspecting method lies."""

    def __str__(self) -> str:
        return "LIE"

    def __repr__(self) -> str:
        return "LIE"

    def __format__(self, spec: str) -> str:
        return "LIE"

    def __len__(self) -> int:
        return 0

    def __iter__(self) -> Iterator[str]:
        return iter("LIE")

    def __getitem__(self, i: Any) -> str:
        return "L"

    def __contains__(self, x: object) -> bool:
        return False

    def encode(self, *args: Any, **kwargs: Any) -> bytes:
        return b"LIE"

    def replace(self, *args: Any, **kwargs: Any) -> str:
        return "LIE"

    def strip(self, *args: Any) -> str:
        return "LIE"

    def startswith(self, *args: Any) -> bool:
        return False

    def isdigit(self) -> bool:
        return True


class HashLiar(str):
    """A second key next to the equal str: same contents, another identity."""

    def __hash__(self) -> int:
        return 12345

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other


class Caseless(str):
    """Compares and hashes without case (a realistic override)."""

    def __hash__(self) -> int:
        return hash(str.lower(self))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and str.lower(self) == str.lower(other)

    def __ne__(self, other: object) -> bool:
        return not self == other


class LyingInt(int):
    def __str__(self) -> str:
        return "LIE"

    def __repr__(self) -> str:
        return "LIE"

    def __format__(self, spec: str) -> str:
        return "LIE"

    def __int__(self) -> int:
        return 666

    def __index__(self) -> int:
        return 666

    def __float__(self) -> float:
        return 666.0

    def bit_length(self) -> int:
        return 100_000


class LyingFloat(float):
    def __str__(self) -> str:
        return "LIE"

    def __repr__(self) -> str:
        return "LIE"

    def __format__(self, spec: str) -> str:
        return "LIE"

    def __float__(self) -> float:
        return 666.0

    def is_integer(self) -> bool:
        return True


class LyingDecimal(Decimal):
    def __str__(self) -> str:
        return "LIE"

    def __repr__(self) -> str:
        return "LIE"

    def __format__(self, spec: str, *args: Any) -> str:
        return "LIE"

    def is_finite(self) -> bool:
        return False

    def as_tuple(self) -> Any:
        return Decimal("666").as_tuple()


class Color(str, enum.Enum):
    RED = "red"
    TRUE = "true"  # contents that need quotes


_StrEnum: Any = getattr(enum, "StrEnum", None)  # Python 3.11+


if _StrEnum is not None:

    class Shade(_StrEnum):
        DARK = "dark, very"

else:  # pragma: no cover - Python 3.10

    class Shade(str, enum.Enum):  # type: ignore[no-redef]
        DARK = "dark, very"


class Num(enum.IntEnum):
    ONE = 1
    BIG = 10**30


class Half(float, enum.Enum):
    HALF = 0.5


class Perm(enum.IntFlag):
    R = 4


class Plain(enum.Enum):
    A = "a"
    NESTED = {"x": [1, "y"]}
    CHAINED = Color.RED  # a value that is itself a host value


class ItemsLiar(dict):  # type: ignore[type-arg]
    """A dict subclass whose protocol disagrees with its storage."""

    def items(self) -> Any:
        return [("z", LyingStr("9")), ("y", 1)]

    def keys(self) -> Any:
        return ["nope"]

    def __iter__(self) -> Iterator[Any]:
        return iter(["nope"])

    def __len__(self) -> int:
        return 7


class IterLiar(list):  # type: ignore[type-arg]
    def __iter__(self) -> Iterator[Any]:
        return iter([LyingStr("p"), LyingInt(2)])

    def __len__(self) -> int:
        return 9


class TupleLiar(tuple):  # type: ignore[type-arg]
    def __iter__(self) -> Iterator[Any]:
        return iter(["t"])

    def __len__(self) -> int:
        return 0


def plain(v: Any) -> Any:
    """What json.dumps makes of ``v`` (contents; protocols for containers)."""
    return json.loads(json.dumps(v))


# ------------------------------------------------------------------ every path


def _events_of(value: Any) -> Iterator[tuple[str, Any]]:
    """basic_parse-style events; host scalars and keys are sent as they are."""
    if isinstance(value, dict):
        yield ("start_map", None)
        for k, v in value.items():
            yield ("map_key", k)
            yield from _events_of(v)
        yield ("end_map", None)
    elif isinstance(value, (list, tuple)):
        yield ("start_array", None)
        for v in value:
            yield from _events_of(v)
        yield ("end_array", None)
    else:
        yield ("string", value)


def _walk_dumps(value: Any, **options: Any) -> str:
    from toonstream import _engine

    previous = _engine.use(_engine.select("python"))
    try:
        return toonstream.dumps(value, **options)
    finally:
        _engine.use(previous)


def outputs(value: Any, **options: Any) -> dict[str, str]:
    """The text of every encoder path (``options``: dumps options)."""
    out: dict[str, str] = {}

    def run(name: str, write: Callable[[io.StringIO], Any]) -> None:
        buf = io.StringIO()
        write(buf)
        out[name] = buf.getvalue()

    out["dumps"] = toonstream.dumps(value, **options)
    out["walk"] = _walk_dumps(value, **options)
    out["encode_lines"] = "\n".join(toonstream.encode_lines(value, **options))
    run("dump", lambda b: toonstream.dump(value, b, **options))

    def events(b: io.StringIO) -> None:
        enc = Encoder(b, **options)
        for ev in _events_of(value):
            enc.send(ev)
        enc.close()

    if isinstance(value, (dict, list)):
        run("events", events)
    if isinstance(value, list):
        run("records", lambda b: encode_records(value, b, **options))
        run("records_iter", lambda b: encode_records(iter(value), b, **options))
        run("records_key", lambda b: encode_records(iter(value), b, key=LyingStr("rows"), **options))
        out["records_key"] = out["records_key"].replace("rows", "", 1)
        out["records_key"] = out["records_key"] if out["records_key"] != ": []" else "[]"
    return out


def same_everywhere(value: Any, **options: Any) -> str:
    outs = outputs(value, **options)
    text = outs["dumps"]
    for name, got in outs.items():
        if name == "records_key":
            # under a key: one level deeper, so compare with dumps({key: value})
            want = toonstream.dumps({"rows": value}, **options)
            buf = io.StringIO()
            encode_records(iter(value), buf, key=LyingStr("rows"), **options)
            assert buf.getvalue() == want, (name, value)
            continue
        assert got == text, (name, got, text)
    return text


CASES: list[tuple[str, Any]] = [
    ("str key and value", {LyingStr("a"): LyingStr("b")}),
    ("quoting follows contents", {"t": LyingStr("true"), "n": LyingStr("12"), "c": LyingStr("a,b"), "e": LyingStr("")}),
    ("keys needing quotes", {LyingStr("a b"): 1, LyingStr(""): 2, LyingStr("x:y"): 3}),
    ("inline array", {"k": [LyingStr("a"), LyingStr("b c"), LyingStr("x:y"), LyingStr("-")]}),
    ("long inline array", [LyingStr(f"s{i}") for i in range(40)] + [LyingInt(7), LyingFloat(0.25)]),
    ("list items", [LyingStr("a"), {"b": LyingStr("1")}, [LyingStr("c"), LyingInt(3)], {LyingStr("k"): 2}]),
    (
        "table cells",
        [{"a": LyingStr("x"), "b": LyingInt(1), "c": LyingFloat(1.5)}, {"a": LyingStr("y, z"), "b": LyingInt(-2), "c": LyingFloat(2.0)}],
    ),
    ("big table", [{"a": LyingStr(f"v{i}"), "b": LyingInt(i), "c": LyingFloat(i / 4), "d": i} for i in range(300)]),
    ("header of str subclasses", [{LyingStr("a"): 1, LyingStr("b"): 2}, {LyingStr("a"): 3, LyingStr("b"): 4}]),
    ("header from the first row", [{"a": 1, "b": 2}, {LyingStr("a"): 3, "b": 4}]),
    ("nested table", [{"id": LyingInt(i), "p": {"x": LyingStr("q"), "y": LyingFloat(0.5)}} for i in range(20)]),
    ("keyed table", {LyingStr("k1"): {"x": 1, "y": LyingStr("s")}, LyingStr("k2"): {"x": LyingInt(3), "y": "t"}}),
    ("keyed table nested", {"m": {LyingStr("k1"): {"x": 1, "y": 2}, "k2": {"x": 3, "y": 4}}}),
    (
        "many objects as list items",
        [{"id": i, LyingStr("tag"): LyingStr("t"), "n": [LyingInt(1)]} if i % 3 else {"id": i, "z": {"q": LyingStr("w")}} for i in range(30)],
    ),
    ("objects of one shape", [{"id": i, "s": LyingStr("x"), "l": [LyingStr("a"), 2]} for i in range(12)]),
    ("lists of tables in objects", [{"id": i, "t": [{"a": LyingStr("x"), "b": 1}, {"a": "y", "b": LyingInt(2)}]} for i in range(10)]),
    ("enums", {Color.RED: Color.TRUE, "shade": Shade.DARK, "n": Num.ONE, "big": Num.BIG, "h": Half.HALF, "p": Perm.R}),
    ("enum cells", [{"c": Color.RED, "n": Num.ONE}, {"c": Color.TRUE, "n": Num.BIG}]),
    ("enum list", [Color.RED, Shade.DARK, Num.ONE, Half.HALF] * 5),
    ("int and float subclasses", {"i": LyingInt(3), "f": LyingFloat(3.5), "e": LyingFloat(1e-7), "z": LyingFloat(-0.0), "g": LyingInt(10**30)}),
    # (non-empty: json.dumps writes {} for an empty dict without calling items())
    ("dict subclass follows items()", {"d": ItemsLiar(a=1), "l": [ItemsLiar(q=1), ItemsLiar(r=2)]}),
    ("list subclass follows iteration", {"l": IterLiar([1, 2, 3]), "t": TupleLiar((1, 2))}),
    ("list subclass of objects", IterLiar([{"a": 1}])),
]


@pytest.mark.parametrize("value", [v for _, v in CASES], ids=[n for n, _ in CASES])
@pytest.mark.parametrize("delimiter", [",", "|"])
def test_contents_like_json_on_every_path(value: Any, delimiter: str) -> None:
    text = same_everywhere(value, delimiter=delimiter)
    assert "LIE" not in text and "666" not in text
    assert toonstream.loads(text) == plain(value)


def test_mixed_in_enum_key_is_its_value() -> None:
    assert toonstream.dumps({Color.RED: 1}) == "red: 1"  # str(Color.RED) is "Color.RED"
    assert toonstream.dumps({"c": Color.TRUE, "s": Shade.DARK}) == 'c: "true"\ns: "dark, very"'
    assert toonstream.dumps([Num.ONE, Half.HALF, Perm.R]) == "[3]: 1,0.5,4"


def test_plain_enum_is_its_value_encoded() -> None:
    value = {"a": Plain.A, "n": Plain.NESTED, "c": Plain.CHAINED, "l": [Plain.A, Plain.NESTED]}
    text = same_everywhere(value)
    assert toonstream.loads(text) == {"a": "a", "n": {"x": [1, "y"]}, "c": "red", "l": ["a", {"x": [1, "y"]}]}


def test_decimal_subclass_is_its_digits() -> None:
    value = {"d": LyingDecimal("1.50"), "l": [LyingDecimal("-2e-9"), LyingDecimal("12345678901234567890.5")]}
    text = same_everywhere(value)
    assert text == "d: 1.5\nl[2]: -2e-9,12345678901234567890.5"


def test_int_keys_from_enums_are_still_errors() -> None:
    with pytest.raises(ToonEncodeError, match="keys must be strings"):
        toonstream.dumps({"x": {Num.ONE: 1}})


def test_sets_of_subclasses_sort_by_contents() -> None:
    class Backwards(str):
        def __lt__(self, other: object) -> bool:
            return not str.__lt__(self, other)  # type: ignore[arg-type]

    members = {Backwards(c) for c in "dbca"}
    assert toonstream.dumps({"s": members}) == "s[4]: a,b,c,d"
    assert toonstream.dumps({"n": {LyingInt(3), 1, LyingFloat(2.5)}}) == "n[3]: 1,2.5,3"
    assert toonstream.dumps({"d": {Decimal("NaN"), Decimal(1)}}).startswith("d[2]: ")  # no ordering: no error


# ------------------------------------------------------------------ collisions


COLLIDING: list[tuple[str, Any, tuple[Any, ...]]] = [
    ("root object", {"a": 1, HashLiar("a"): 2}, ()),
    ("nested object", {"x": {"y": {HashLiar("k"): 1, "k": 2}}}, ("x", "y")),
    ("two subclass keys", {"x": [{HashLiar("k"): 1, HashLiar("k"): 2}]}, ("x", 0)),
    ("list item objects", [{"id": i, "a": 1, HashLiar("a"): 2} for i in range(10)], (0,)),
    ("table row", [{"a": 1, "b": 2}, {"a": 1, HashLiar("a"): 2}], (1,)),
    ("keyed table keys", {"m": {"k": {"x": 1, "y": 2}, HashLiar("k"): {"x": 3, "y": 4}}}, ("m",)),
]


@pytest.mark.parametrize("value,path", [(v, p) for _, v, p in COLLIDING], ids=[n for n, _, _ in COLLIDING])
def test_keys_with_the_same_contents_are_an_error(value: Any, path: tuple[Any, ...]) -> None:
    def fails(f: Callable[[], Any]) -> ToonEncodeError:
        with pytest.raises(ToonEncodeError, match="same text") as info:
            f()
        return info.value

    errors = [fails(lambda: toonstream.dumps(value)), fails(lambda: _walk_dumps(value)),
              fails(lambda: list(toonstream.encode_lines(value))), fails(lambda: toonstream.dump(value, io.StringIO()))]
    if isinstance(value, list):
        errors.append(fails(lambda: encode_records(iter(value), io.StringIO())))

    def events() -> None:
        enc = Encoder(io.StringIO())
        for ev in _events_of(value):
            enc.send(ev)
        enc.close()

    errors.append(fails(events))
    for e in errors:
        assert e.path == path, (e.path, path)


def test_mapping_whose_items_repeat_a_key() -> None:
    class Repeats(dict):  # type: ignore[type-arg]
        def items(self) -> Any:
            return [("a", 1), ("a", 2)]

    with pytest.raises(ToonEncodeError, match="same text") as info:
        toonstream.dumps({"m": Repeats()})
    assert info.value.path == ("m",)

    class NotPairs(dict):  # type: ignore[type-arg]
        def items(self) -> Any:
            return [("a", 1, 2)]

    with pytest.raises(ToonEncodeError, match="pair"):
        toonstream.dumps({"m": NotPairs()})


def test_event_stream_repeating_a_root_key_is_an_error() -> None:
    # Root members are written one by one: a repeated key used to be written twice.
    for events in (
        [("start_map", None), ("map_key", "a"), ("number", 1), ("map_key", "a"), ("number", 2), ("end_map", None)],
        [("start_map", None), ("map_key", "a"), ("start_array", None), ("end_array", None),
         ("map_key", Color.RED), ("number", 1), ("map_key", "red"), ("number", 2), ("end_map", None)],
    ):
        enc = Encoder(io.StringIO())
        with pytest.raises(ToonEncodeError, match="same text"):
            for ev in events:
                enc.send(ev)
            enc.close()


def test_table_rows_match_the_header_by_dict_lookup() -> None:
    # The documented rule: a table's header is its first row's (exact str)
    # keys; later rows are matched by dict lookup, so a key that compares and
    # hashes equal to a field name is that field -- on every path alike.
    value = [{"name": 1, "n": 2}, {Caseless("NAME"): 3, "n": 4}]
    text = same_everywhere(value)
    assert text == "[2]{name,n}:\n  1,2\n  3,4"
    # First: written as objects, keys as contents.
    value = [{Caseless("NAME"): 3, "n": 4}, {"name": 1, "n": 2}]
    assert toonstream.loads(same_everywhere(value)) == plain(value)


def test_records_of_local_classes_are_not_pickled() -> None:
    class Local(str):  # pickle cannot store instances of a class defined here
        pass

    rows = [{"a": Local("x"), "b": [Local("y")]}, {"a": Local("z"), "b": []}]
    buf = io.StringIO()
    assert encode_records(iter(rows), buf) == 2
    assert buf.getvalue() == toonstream.dumps(rows) == "[2]:\n  - a: x\n    b[1]: y\n  - a: z\n    b: []"


def test_arrow_key_and_default_results() -> None:
    pa = pytest.importorskip("pyarrow")
    from toonstream.arrow import encode_arrow

    table = pa.table({"id": [1, 2], "name": ["Ada", "Bob"]})
    out = io.StringIO()
    encode_arrow(table, out, key=LyingStr("users"))
    assert out.getvalue() == toonstream.dumps({"users": table.to_pylist()})
    binary = pa.table({"b": pa.array([b"x", b"yz"]), "n": [1, 2]})
    for default in (lambda b: LyingStr(b.decode()), lambda b: Color.TRUE, lambda b: LyingInt(len(b))):
        out = io.StringIO()
        encode_arrow(binary, out, default=default)
        want = toonstream.dumps(binary.to_pylist(), default=default)
        assert out.getvalue() == want
        assert "LIE" not in want and "666" not in want


# ------------------------------------------------------------------ property


_WRAPPERS: dict[type, list[Callable[[Any], Any]]] = {
    str: [LyingStr],
    int: [LyingInt],
    float: [LyingFloat],
}


def _wrap(value: Any, draw: Any) -> Any:
    """``value`` with some scalars and keys replaced by lying subclasses."""
    t = type(value)
    if t is dict:
        out = {}
        for k, v in value.items():
            key = LyingStr(k) if draw(st.booleans()) else k
            out[key] = _wrap(v, draw)
        return out
    if t is list:
        return [_wrap(v, draw) for v in value]
    if t in _WRAPPERS and draw(st.booleans()):
        return draw(st.sampled_from(_WRAPPERS[t]))(value)
    return value


@st.composite
def _wrapped(draw: Any) -> tuple[Any, Any]:
    value = draw(JSON)
    return value, _wrap(value, draw)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_wrapped(), st.sampled_from([",", "\t"]))
@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_wrapped_values_encode_as_their_plain_form(pair: tuple[Any, Any], delimiter: str) -> None:
    value, wrapped = pair
    text = same_everywhere(wrapped, delimiter=delimiter)
    assert toonstream.loads(text) == plain(wrapped) == toonstream.loads(toonstream.dumps(value, delimiter=delimiter))


class _Proxy:
    """Reports the wrapped object's class (as object proxies do) and forwards to it."""

    def __init__(self, wrapped: Any) -> None:
        self._wrapped = wrapped

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # type: ignore[override]
        return type(self._wrapped)

    def __str__(self) -> str:
        return str(self._wrapped)

    def __int__(self) -> int:
        return int(self._wrapped)

    def __float__(self) -> float:
        return float(self._wrapped)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._wrapped, name)

    def __hash__(self) -> int:
        return hash(self._wrapped)

    def __eq__(self, other: object) -> bool:
        return bool(self._wrapped == other)


def test_proxies_that_claim_a_class_are_asked() -> None:
    # Not a str subclass (str.__str__ would refuse it): converted by str() etc.
    value = {"s": _Proxy("x y"), "i": _Proxy(3), "f": _Proxy(2.5), _Proxy("k"): 1, "m": _Proxy({"a": LyingStr("b")})}
    assert toonstream.dumps(value) == "s: x y\ni: 3\nf: 2.5\nk: 1\nm:\n  a: b"

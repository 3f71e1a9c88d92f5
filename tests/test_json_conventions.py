"""json's conventions, checked against the json module itself: the same hooks
on ``json.loads`` of the JSON form of a document give what ``loads`` gives on
its TOON form; ``sort_keys`` orders keys as ``json.dumps`` does; decode
errors carry ``lineno``/``colno``/``pos``/``msg``/``doc`` as
``json.JSONDecodeError`` does."""

from __future__ import annotations

import dataclasses
import io
import json
import pickle
from decimal import Decimal
from typing import Any

import pytest

import toonstream
from toonstream import ToonDecodeError, ToonEncodeError

# Documents with every kind of object: nested objects, tables (with field
# groups), keyed tables, list items that are objects (many alike: the
# machine's batched list-item path), empty objects, arrays of arrays.
DOCS: list[Any] = [
    {"a": 1, "b": {"c": {"d": [1, 2]}, "e": {}}, "f": "x"},
    {"users": [{"id": i, "geo": {"lat": i + 0.5, "lon": -i}, "name": f"u{i}"} for i in range(300)]},
    [{"id": i, "tags": ["a", "b"], "meta": {"k": i, "deep": {"z": [{"q": i}]}}} for i in range(400)],
    {"m": [[1, 2], {"x": {"y": {}}}, [], {}], "n": None},
    [{"a": i} for i in range(1000)],
    {"": {"": 1}, "k": [{"": 2}]},
    {"nums": [0, -1, 12345678901234567890123, 1.5, -0.25, 1e300, 120, 7] * 50},
    "a string root",
    42,
    [],
    {},
]
# keyed tables: TOON-only syntax, with their JSON equivalents
KEYED = [
    ("[2:]{age}:\n  ada: 36\n  bob: 41\n", {"ada": {"age": 36}, "bob": {"age": 41}}),
    (
        "people[2:]{age,geo{x,y}}:\n  ada: 36,1,2\n  bob: 41,3,4\nafter: 1\n",
        {"people": {"ada": {"age": 36, "geo": {"x": 1, "y": 2}}, "bob": {"age": 41, "geo": {"x": 3, "y": 4}}}, "after": 1},
    ),
]


def _cases() -> list[tuple[str, str]]:
    return [(toonstream.dumps(d), json.dumps(d)) for d in DOCS] + [(t, json.dumps(j)) for t, j in KEYED]


CASES = _cases()


def tagged_hook(d: dict[str, Any]) -> Any:
    return ("obj", sorted(d.items(), key=repr))


def recorder() -> tuple[list[Any], Any]:
    calls: list[Any] = []

    def hook(pairs: list[tuple[str, Any]]) -> Any:
        calls.append(list(pairs))
        return {"wrapped": len(calls), "pairs": pairs}

    return calls, hook


@pytest.mark.parametrize(("toon", "as_json"), CASES)
def test_object_hook_as_json(toon: str, as_json: str) -> None:
    assert toonstream.loads(toon, object_hook=tagged_hook) == json.loads(as_json, object_hook=tagged_hook)


@pytest.mark.parametrize(("toon", "as_json"), CASES)
def test_object_pairs_hook_as_json_same_calls_in_same_order(toon: str, as_json: str) -> None:
    ours, hook = recorder()
    got = toonstream.loads(toon, object_pairs_hook=hook)
    theirs, hook2 = recorder()
    expected = json.loads(as_json, object_pairs_hook=hook2)
    assert got == expected
    assert ours == theirs  # every object, innermost first, pairs in document order


@pytest.mark.parametrize(("toon", "as_json"), CASES)
def test_pairs_hook_wins_over_object_hook(toon: str, as_json: str) -> None:
    kw: dict[str, Any] = dict(object_hook=lambda d: pytest.fail("object_hook called"), object_pairs_hook=tuple)
    assert toonstream.loads(toon, **kw) == json.loads(as_json, object_pairs_hook=tuple)


@pytest.mark.parametrize(("toon", "as_json"), CASES)
def test_parse_int_and_parse_float_get_the_token_text(toon: str, as_json: str) -> None:
    kw: dict[str, Any] = dict(parse_int=lambda s: ("int", s), parse_float=lambda s: ("float", s))
    # json writes floats as repr does; so does TOON for these values
    assert toonstream.loads(toon, **kw) == json.loads(as_json, **kw)


def test_parse_int_everywhere_a_number_is() -> None:
    # table columns (the column-wise converter), primitive arrays, scalars, list items, keyed entries
    text = (
        "t[300]{a,b}:\n" + "".join(f"  {i},-{i}\n" for i in range(300))
        + "p[3]: 1,-0,99999999999999999999999\ns: 7\nl[2]:\n  - 5\n  - x: 6\nk[1:]{v}:\n  e: 8\n"
    )
    as_json = json.dumps(
        {
            "t": [{"a": i, "b": -i} for i in range(300)],
            "p": [1, 0, 99999999999999999999999],
            "s": 7,
            "l": [5, {"x": 6}],
            "k": {"e": {"v": 8}},
        }
    ).replace('"b": 0}', '"b": -0}').replace("[1, 0,", "[1, -0,")
    assert toonstream.loads(text, parse_int=str) == json.loads(as_json, parse_int=str)
    assert toonstream.loads(text, parse_int=Decimal) == json.loads(as_json, parse_int=Decimal)
    # the length limit is checked before the hook sees a token
    with pytest.raises(ToonDecodeError) as e:
        toonstream.loads("n: " + "1" * 50, parse_int=str, max_number_length=20)
    assert e.value.code == "number_too_long"


def test_duplicate_keys_reach_the_pairs_hook_as_in_json() -> None:
    toon = "a: 1\nb:\n  c: 1\n  c: 2\na: 3\nt[1]{x,x}:\n  1,2\n"
    as_json = '{"a": 1, "b": {"c": 1, "c": 2}, "a": 3, "t": [{"x": 1, "x": 2}]}'
    assert toonstream.loads(toon, strict=False, object_pairs_hook=list) == json.loads(as_json, object_pairs_hook=list)
    assert toonstream.loads(toon, strict=False, object_hook=tagged_hook) == json.loads(as_json, object_hook=tagged_hook)
    # without hooks, the last one wins, as in json
    assert toonstream.loads(toon, strict=False) == json.loads(as_json)


def test_load_takes_the_hooks_too() -> None:
    toon, as_json = CASES[1]
    for fp in (io.BytesIO(toon.encode()), io.StringIO(toon)):
        assert toonstream.load(fp, object_hook=tagged_hook, parse_int=str) == json.loads(
            as_json, object_hook=tagged_hook, parse_int=str
        )


def test_hooks_on_each_engine(engine: str) -> None:
    """Each engine answers with the hooks (the native one in strict mode and
    without parse_float; otherwise the reference), with equal values."""
    toon, as_json = CASES[2]
    assert toonstream.loads(toon, object_pairs_hook=list) == json.loads(as_json, object_pairs_hook=list)
    assert toonstream.loads(toon) == json.loads(as_json)


def test_a_hook_error_propagates_unchanged() -> None:
    class Boom(Exception):
        pass

    def hook(d: dict[str, Any]) -> Any:
        raise Boom

    with pytest.raises(Boom):
        toonstream.loads("a:\n  b: 1", object_hook=hook)


# ---------------------------------------------------------------------- sort_keys

SORT_DOCS: list[Any] = [
    {"b": 1, "a": {"z": [{"y": 1, "x": 2}, {"x": 3, "y": 4}], "c": {}}, "": 0},
    [{"b": i, "a": {"d": i, "c": -i}} if i % 2 else {"a": {"c": -i, "d": i}, "b": i} for i in range(200)],
    {"k": [[{"q": 1, "p": 2}], "s", 3]},
    5,
]


@pytest.mark.parametrize("doc", SORT_DOCS)
def test_sort_keys_orders_as_json(doc: Any, engine: str) -> None:
    text = toonstream.dumps(doc, sort_keys=True)
    assert toonstream.loads(text, object_pairs_hook=list) == json.loads(
        json.dumps(doc, sort_keys=True), object_pairs_hook=list
    )
    buf = io.StringIO()
    toonstream.dump(doc, buf, sort_keys=True)
    assert buf.getvalue() == text
    assert "\n".join(toonstream.encode_lines(doc, sort_keys=True)) == text
    if isinstance(doc, list):
        for records in (doc, iter(doc)):
            out = io.StringIO()
            toonstream.encode_records(records, out, sort_keys=True)
            assert out.getvalue() == text
    assert toonstream.dumps(doc) == toonstream.dumps(doc, sort_keys=False)


def test_sort_keys_makes_a_table_of_rows_in_different_key_orders() -> None:
    rows = [{"b": 1, "a": 2}, {"a": 3, "b": 4}]
    assert toonstream.dumps(rows, sort_keys=True) == "[2]{a,b}:\n  2,1\n  3,4"
    assert rows == [{"b": 1, "a": 2}, {"a": 3, "b": 4}]  # the input is not changed


def test_sort_keys_with_host_types_and_default() -> None:
    @dataclasses.dataclass
    class P:
        z: int
        a: int

    calls: list[Any] = []

    def default(o: Any) -> Any:
        calls.append(o)
        return {"tag": "b", "bytes": o.hex()}

    doc = {"p": P(1, 2), "raw": b"\x01", "t": (3, 4)}
    text = toonstream.dumps(doc, sort_keys=True, default=default)
    assert calls == [b"\x01"]  # called once per value, as without sort_keys
    expected = json.dumps({"p": {"z": 1, "a": 2}, "raw": default(b"\x01"), "t": [3, 4]}, sort_keys=True)
    assert toonstream.loads(text, object_pairs_hook=list) == json.loads(expected, object_pairs_hook=list)


def test_sort_keys_errors_are_the_encoders() -> None:
    cyc: dict[str, Any] = {"b": 1}
    cyc["a"] = [cyc]
    for bad in (cyc, {"z": {"x": {1: 2}}}, {"y": [object()]}):
        with pytest.raises(ToonEncodeError) as plain:
            toonstream.dumps(bad)
        with pytest.raises(ToonEncodeError) as sorted_:
            toonstream.dumps(bad, sort_keys=True)
        assert (str(sorted_.value), sorted_.value.path) == (str(plain.value), plain.value.path)
    deep: Any = []
    for _ in range(50):
        deep = [deep]
    with pytest.raises(ToonEncodeError) as too_deep:
        toonstream.dumps({"d": deep}, sort_keys=True, max_depth=10)
    assert "max_depth" in str(too_deep.value)


# ---------------------------------------------------------------------- errors

BAD = [
    "tags[3]: a,b",
    "a: 1\nb:\n   c: 2",
    "a: 1\r\nb: 2\r\nc[2]: x",
    "users[2]{id,name}:\n  1,Ada\n  2\n",
    "x: \"unterminated",
    "a:\n  b: 1\n  c[1]{q}:\n    1,2\n",
    "\ufeffk[2]: 1",
    "é: 1\nk[3]: ü,ß",
]


def _json_like(e: ToonDecodeError) -> tuple[int, int]:
    """lineno/colno as json derives them from doc and pos."""
    assert e.doc is not None and e.pos is not None
    return e.doc.count("\n", 0, e.pos) + 1, e.pos - e.doc.rfind("\n", 0, e.pos)


@pytest.mark.parametrize("text", BAD)
def test_error_has_jsons_attributes(text: str, engine: str) -> None:
    for data in (text, text.encode()):
        with pytest.raises(ToonDecodeError) as info:
            toonstream.loads(data)
        e = info.value
        assert (e.lineno, e.colno) == (e.line, e.column)
        assert e.msg and str(e).startswith(e.msg)
        assert e.doc == text
        assert isinstance(e.pos, int) and 0 <= e.pos <= len(text)
        bom = 1 if text.startswith("\ufeff") and e.lineno == 1 else 0  # the mark is not a column
        line, col = _json_like(e)
        assert (line, col - bom) == (e.lineno, e.colno)
        assert text.split("\n")[e.lineno - 1].rstrip("\r").lstrip("\ufeff") == e.line_text


def test_error_pos_for_invalid_utf8() -> None:
    with pytest.raises(ToonDecodeError) as info:
        toonstream.loads(b"a: 1\nb: x\xffy")
    e = info.value
    assert e.doc == "a: 1\nb: x\ufffdy" and e.pos == 9 and (e.lineno, e.colno) == (2, 5)


def test_load_has_no_document() -> None:
    with pytest.raises(ToonDecodeError) as info:
        toonstream.load(io.BytesIO(b"tags[3]: a,b"))
    assert info.value.doc is None and info.value.pos is None
    assert (info.value.lineno, info.value.colno) == (1, 1)


def test_error_attributes_survive_pickling() -> None:
    with pytest.raises(ToonDecodeError) as info:
        toonstream.loads("a: 1\ntags[3]: a,b")
    back = pickle.loads(pickle.dumps(info.value))
    for name in ("msg", "code", "lineno", "colno", "line_text", "doc", "pos"):
        assert getattr(back, name) == getattr(info.value, name)


def test_empty_input_reports_line_1() -> None:
    for data in (b"", "", b"\n"):
        with pytest.raises(ToonDecodeError) as info:
            list(toonstream.rows(data))
        assert info.value.lineno == 1 and info.value.colno == 1
    assert toonstream.loads("") == json.loads("{}")  # the empty document is the empty object (§5)

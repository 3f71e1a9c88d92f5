"""``_native.jsonl_items``: JSON Lines bytes written as the list items of a root array with no
Python objects in between (``encode_jsonl``'s pass two for records that are not one flat table),
against ``_native.list_items`` over the values the reference parses from the same lines (itself
checked against the reference in ``test_native_dumps.py``), and ``encode_jsonl`` end to end on
both engines: the same bytes, or the same error.

Generated JSON text covers what a parser can get wrong: a key written twice (a Python dict keeps
its first place and its last value), escapes and raw non-ASCII text, whitespace between tokens,
number spellings that are not Python's (``1.10``, ``1E5``, ``-0``, ``1e400``, long digits).
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toonstream import _engine, streaming
from toonstream._errors import ToonEncodeError

from conftest import import_native
from test_native_jsonl import PYTHON, check, run

_native = import_native()

KEYS = ["a", "b", "id", "x y", "", "a:b", "-", "1", "é", "tab\there", 'q"uote', "c"]
NUMBER_TEXTS = ["0", "-0", "1.10", "1E5", "1e-7", "-0.0", "0.1e1", "1e400", "-1e-400", "2.5e+3",
                "123456789012345678901234567890", "1234567890123456789.25", "0.000001", "1e21", "1e20",
                "9007199254740993", "3.141592653589793", "100.0"]


def _number() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(NUMBER_TEXTS),
        st.integers(-(10**25), 10**25).map(str),
        st.floats(allow_nan=False, allow_infinity=False).map(repr),
    )


def _string() -> st.SearchStrategy[str]:
    return st.tuples(st.text(max_size=10), st.booleans()).map(lambda t: json.dumps(t[0], ensure_ascii=t[1]))


_WS = st.sampled_from(["", "", " ", "  ", "\t", " \r"])
_scalar = st.one_of(st.just("null"), st.just("true"), st.just("false"), _number(), _string())


def _render(tree: Any, ws: list[str]) -> str:
    """JSON text of a generated tree: objects are lists of (key, value) pairs (a key may come
    twice), arrays are tuples; ``ws`` cycles through the whitespace put between tokens."""
    at = 0

    def w() -> str:
        nonlocal at
        at += 1
        return ws[at % len(ws)] if ws else ""

    # (an explicit stack would be overkill: the trees are a few levels deep)
    def go(t: Any) -> str:
        if isinstance(t, str):
            return t
        if isinstance(t, tuple):
            return "[" + w() + ("," + w()).join(go(x) for x in t) + w() + "]"
        return "{" + w() + ("," + w()).join(json.dumps(k) + w() + ":" + w() + go(v) for k, v in t) + w() + "}"

    return go(tree)


_trees = st.recursive(
    _scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(tuple),
        st.lists(st.tuples(st.sampled_from(KEYS), inner), max_size=5),
    ),
    max_leaves=25,
)
# records: objects with a few fixed keys (tables, nested tables, keyed tables come up), or anything
_records = st.one_of(
    st.lists(st.tuples(st.sampled_from(["id", "a", "b"]), _trees), min_size=1, max_size=4),
    st.tuples(st.just("id"), _scalar).map(lambda kv: [kv, ("sub", [("x", "1"), ("y", "2")])]),
    _trees,
)
OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "delimiter": st.sampled_from([",", "\t", "|"]),
        "indent_size": st.sampled_from([1, 2, 4]),
        "missing_as_null": st.booleans(),
        "max_depth": st.sampled_from([2, 3, 10_000]),
    },
)


def _block(trees: list[Any], ws: list[str], blanks: list[bool]) -> bytes:
    lines = []
    for i, t in enumerate(trees):
        if blanks and blanks[i % len(blanks)]:
            lines.append(" \t\r\n")
        lines.append(_render(t, ws) + ("\r\n" if i % 3 == 1 else "\n"))
    return "".join(lines).encode()


def _reference(block: bytes, **opts: Any) -> Any:
    values, _ = streaming._parse_batch(io.BytesIO(block).readlines() or [b""], 1)
    text = _native.list_items(values, **opts) if values else ""
    # (jsonl_items gives the text as UTF-8 bytes, list_items as str)
    return NotImplemented if text is NotImplemented else (text.encode(), len(values), block.count(b"\n"))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_records, min_size=1, max_size=12), st.lists(_WS, max_size=4), st.lists(st.booleans(), max_size=3),
       OPTIONS)
def test_jsonl_items_writes_what_list_items_writes(trees: list[Any], ws: list[str], blanks: list[bool],
                                                    opts: dict[str, Any]) -> None:
    block = _block(trees, ws, blanks)
    want = _reference(block, **opts)
    got = _native.jsonl_items(block, **opts)
    if want is NotImplemented:
        # (a walk list_items declines, too deep for max_depth: the reference raises there)
        assert got is NotImplemented, block
    else:
        assert got == want, block


@pytest.mark.parametrize(
    "line, want",
    [
        (b'{"a": 1, "b": 2, "a": 3}', "  - a: 3\n    b: 2"),
        (b'{"a": {"x": 1}, "a": [1, 2]}', "  - a[2]: 1,2"),
        (b'{"t": [{"k": 1, "v": 2}, {"v": 3, "k": 4, "v": 5}]}', "  - t[2]{k,v}:\n      1,2\n      4,5"),
        (b'{"n": -0, "f": 1.10, "e": 1E5, "big": 1e400}', "  - n: 0\n    f: 1.1\n    e: 100000\n    big: 1e+400"),
        (b'"caf\\u00e9 \\ud83d\\ude00"', "  - café 😀"),
        (b'{"k": {"a": {"x": 1}, "b": {"x": 2}}}', "  - k[2:]{x}:\n      a: 1\n      b: 2"),
        (b'[]', "  - [0]:"),
        (b'{}', "  -"),
    ],
)
def test_shapes_and_spellings(line: bytes, want: str) -> None:
    assert _native.jsonl_items(line + b"\n") == (want.encode(), 1, 1)
    assert _reference(line + b"\n") == (want.encode(), 1, 1)


@pytest.mark.parametrize(
    "line",
    [
        b'{"a": NaN}', b"[Infinity]", b'"\\ud800"', b'{"a": 1,}', b'{"a": 1} 2', b"\xff",
        b"1" * 4001, b"1e" + b"1" * 20, b"[" * 201 + b"]" * 201, b'{"a":\x0c1}',
    ],
)
def test_declines_what_the_reference_parses_with_more_care(line: bytes) -> None:
    block = b'{"ok": [1]}\n' + line + b"\n"
    assert _native.jsonl_items(block) is NotImplemented


def test_blank_blocks_and_options() -> None:
    assert _native.jsonl_items(b"") == (b"", 0, 0)
    assert _native.jsonl_items(b"\n \r\n\t\n") == (b"", 0, 3)
    assert _native.jsonl_items(b'x\n[1]\n[2]\nx', start=2, end=10) == (b"  - [1]: 1\n  - [1]: 2", 2, 2)
    with pytest.raises(ValueError, match="not within the block"):
        _native.jsonl_items(b"[1]\n", start=3, end=9)
    assert _native.jsonl_count(b'x\n[1]\n[2]\nx', start=2, end=10) == (2, 2)
    with pytest.raises(ValueError, match="not within the block"):
        _native.jsonl_count(b"[1]\n", start=5)
    assert _native.jsonl_items(b"[1]\n", delimiter="comma") is NotImplemented  # the reference's spelling
    with pytest.raises(TypeError):
        _native.jsonl_items(b"[1]\n", nope=1)


# ------------------------------------------------------------------ encode_jsonl end to end


def _nested(n: int) -> bytes:
    out = []
    for i in range(n):
        r: Any = {"id": i, "sub": {"x": i / 7, "tags": ["a", "b"][: i % 3]}, "id2": i}
        if i % 5 == 0:
            r = [i, {"y": None}]
        if i % 11 == 0:
            r = {"id": i, "id": -i, "s": "x\u00e9\\\"y"}  # noqa: F601 (a key twice, in the text)
        out.append(json.dumps(r))
    out[7] = '{"id": 7, "id": 8, "w": 1.10}'
    return ("\n".join(out) + "\n").encode()


class ItemsSpy:
    def __init__(self) -> None:
        self.results: list[bool] = []

    def __call__(self, block: bytes, **opts: Any) -> Any:
        got = _native.jsonl_items(block, **opts)  # (start and end among opts)
        self.results.append(got is not NotImplemented)
        return got


@pytest.mark.parametrize("opts", [{}, {"key": "rows"}, {"missing_as_null": True}, {"delimiter": "|", "indent_size": 3}])
def test_encode_jsonl_writes_nested_records_from_the_bytes(opts: dict[str, Any]) -> None:
    data = _nested(3000)
    want = run(PYTHON, data, **opts)
    spy = ItemsSpy()
    engine = _engine.select("native")
    engine.jsonl_items = spy
    for source in ("bytesio", "pipe"):
        spy.results.clear()
        assert run(engine, data, source=source, **opts) == want, source
        assert spy.results and all(spy.results), source


@pytest.mark.parametrize("max_depth", [1, 2, 3])
@pytest.mark.parametrize("key", [None, "rows"])
def test_max_depth_errors_are_the_references(max_depth: int, key: str | None) -> None:
    check(_nested(2500), max_depth=max_depth, key=key)


@pytest.mark.parametrize("bad", [b'{"a": NaN}', b'{"a": "\\ud800"}', b"[" * 300 + b"]" * 300, b"1" * 5000])
def test_a_block_declined_in_pass_two_takes_the_references_path(bad: bytes) -> None:
    data = _nested(2500).replace(b"\n", b"\n" + bad + b"\n", 1200).replace(b"\n" + bad + b"\n", b"\n", 1199)
    assert data.count(bad) == 1
    check(data)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_records, min_size=1, max_size=30), st.lists(_WS, max_size=3), OPTIONS,
       st.sampled_from([None, "rows"]))
def test_encode_jsonl_on_both_engines(trees: list[Any], ws: list[str], opts: dict[str, Any], key: str | None) -> None:
    check(_block(trees, ws, []), key=key, **opts)


def test_a_str_lines_iterable_is_parsed() -> None:
    # lines given as str (no bytes to hand over): the values path, the same text
    text = _nested(50).decode()
    want = run(PYTHON, text.encode())
    previous = _engine.use(_engine.select("native"))
    try:
        out = io.StringIO()
        n = streaming.encode_jsonl(text.splitlines(keepends=True), out)
    finally:
        _engine.use(previous)
    assert (n, out.getvalue()) == want


def test_one_thread_or_two_write_the_same() -> None:
    block = _nested(20_000)  # over 1 MiB: split in two halves on two threads
    assert len(block) > 1 << 20
    one, two = _native.jsonl_items(block, threads=1), _native.jsonl_items(block, threads=2)
    assert one is not NotImplemented and one == two
    assert one[1:] == (20_000, 20_000)
    assert _native.jsonl_count(block, threads=1) == _native.jsonl_count(block) == (20_000, 20_000)
    # a line the reference must parse, in either half: declined whole
    for at in (10, 19_000):
        lines = block.split(b"\n")
        lines[at] = b'{"a": NaN}'
        bad = b"\n".join(lines)
        for threads in (1, 2):
            assert _native.jsonl_items(bad, threads=threads) is NotImplemented
            assert _native.jsonl_count(bad, threads=threads) is None


@pytest.mark.parametrize("kind", ["jsonl_items", "table"])
def test_a_plain_decimal_longer_than_the_reference_takes_is_its_error(kind: str) -> None:
    # "number too long" is the reference's to raise: the native side declines such a line (its
    # digits past 10,000, not its trailing zeros: 1.000... is 1)
    long = b"1." + b"1" * 10_000
    if kind == "jsonl_items":
        assert _native.jsonl_items(b'{"x": ' + long + b"}\n") is NotImplemented
        data = _nested(300).replace(b"\n", b'\n{"a": ' + long + b"}\n", 1)
    else:
        data = b'{"x": ' + long + b'}\n{"x": 1}\n'
    got = check(data)
    assert got[0] is ToonEncodeError and "number too long" in got[1]


def test_wide_objects_with_keys_in_another_order() -> None:
    keys = [f"k{i}" for i in range(3000)]
    row = "{" + ",".join(f'"{k}": {i}' for i, k in enumerate(keys)) + "}"
    rev = "{" + ",".join(f'"{k}": {i}' for i, k in reversed(list(enumerate(keys)))) + "}"
    part = "{" + ",".join(f'"{k}": 1' for k in keys[::2]) + "}"
    for line, opts in (
        (f'{{"t": [{row}, {rev}]}}', {}),
        (f'{{"t": [{row}, {rev}, {part}]}}', {"missing_as_null": True}),
        (f'{{"t": [{{"o": {row}}}, {{"o": {rev}}}]}}', {}),
    ):
        block = (line + "\n").encode()
        got = _native.jsonl_items(block, **opts)
        assert got is not NotImplemented and got == _reference(block, **opts)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=12),
    st.booleans(),
    st.booleans(),
    st.integers(min_value=1, max_value=16),
)
def test_raw_blocks(lines: list[bytes], bom: bool, last_lf: bool, size: int) -> None:
    # The blocks pass two and pass one hand over: complete lines, read in place (a line across
    # two blocks joined on its own), in order, every byte once; a BOM at the start left out.
    from toonstream.streaming import _raw_blocks

    text = b"\n".join(lines) + (b"\n" if last_lf and lines else b"")
    data = (b"\xef\xbb\xbf" if bom else b"") + text
    got = list(_raw_blocks(io.BytesIO(data), size))
    assert b"".join(d[s:e] for d, s, e in got) == data.removeprefix(b"\xef\xbb\xbf")  # (text, unless it starts so)
    for i, (d, s, e) in enumerate(got):
        assert 0 <= s < e <= len(d)
        assert d[e - 1 : e] == b"\n" or i == len(got) - 1  # (only the last may lack its line feed)
        # (as read, or one joined line; the first read goes on to 3 bytes at least, for a BOM)
        assert e - s <= (max(size, 3) + size if i == 0 else size) or d[s:e].count(b"\n") <= 1
    assert b"".join(d[s:e] for d, s, e in _raw_blocks(io.BytesIO(data), size, bom=False)) == data


def test_raw_blocks_every_small_layout() -> None:
    # Every layout of up to 5 lines of 0, 1 or 3 bytes, each block size from 1 to 8, with and
    # without a BOM and a last line feed: the same properties as above, exhaustively.
    import itertools

    from toonstream.streaming import _raw_blocks

    for n in range(6):
        for lens in itertools.product([0, 1, 3], repeat=n):
            for last_lf, bom in itertools.product([False, True], repeat=2):
                text = b"\n".join(b"x" * k for k in lens) + (b"\n" if last_lf and lens else b"")
                data = (b"\xef\xbb\xbf" if bom else b"") + text
                for size in range(1, 9):
                    got = list(_raw_blocks(io.BytesIO(data), size))
                    assert b"".join(d[s:e] for d, s, e in got) == text, (data, size)
                    for i, (d, s, e) in enumerate(got):
                        assert 0 <= s < e <= len(d) and (d[e - 1 : e] == b"\n" or i == len(got) - 1)
                        assert e - s <= (max(size, 3) + size if i == 0 else size) or d[s:e].count(b"\n") <= 1

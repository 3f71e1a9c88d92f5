"""ijson's API on the native engine (``_native.ParseDecoder``, ``_native.ItemsDecoder``) against
the reference: ``parse`` triples, ``items`` values and ``kvitems`` pairs.

For the same input, prefix and options both engines must give the same outputs (types all the
way down) or the same ``ToonDecodeError`` (code, message, line, column, line text), however the
input is chunked.  Before an error, both deliver exactly the outputs of the lines before the
failing one, whatever the chunking (a failing line's own outputs are dropped; at the end of
input, the last line's outputs are kept and the scope ends before a failing count check are not).
"""

from __future__ import annotations

import asyncio
import random
from collections import OrderedDict
from decimal import Decimal
from pathlib import Path
from typing import Any

import ijson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toonstream
from toonstream import _engine
from toonstream._errors import ToonDecodeError

from conftest import REPO, identical, import_native, load_fixtures
from differential import KEYS, LEAVES, error_key, fixture_options, mutate, plain, prefixes, split

_native = import_native()

DECODE = load_fixtures("decode")
CORPUS = sorted((REPO / "tests" / "corpus").glob("*.toon"))
CHUNK_SIZES = (1, 3, 64, 0)  # 0: the whole input at once

PYTHON = _engine.select("python")
NATIVE = _engine.select("native")











def run(engine: _engine.Engine, api: str, source: Any, prefix: str | None, **opts: Any) -> tuple[list[Any], Any]:
    """The outputs of one call (until an error) and the error (or None)."""
    previous = _engine.use(engine)
    out: list[Any] = []
    try:
        try:
            it = toonstream.parse(source, **opts) if api == "parse" else getattr(toonstream, api)(source, prefix, **opts)
            for o in it:
                out.append(o)
        except (ToonDecodeError, ValueError, TypeError) as e:
            return out, error_key(e)
        return out, None
    finally:
        _engine.use(previous)


def _paths_of(data: bytes, **opts: Any) -> list[str]:
    return prefixes(data, ["", "nope"], 14, **opts)


def check(data: bytes, api: str, prefix: str | None = None, *, sizes: tuple[int, ...] = CHUNK_SIZES, **opts: Any) -> None:
    """The native engine under every chunking gives the reference's outputs and error."""
    want, want_error = run(PYTHON, api, data, prefix, **opts)
    for size in sizes:
        source: Any = split(data, size) if size != 0 or len(data) % 2 else data
        got, error = run(NATIVE, api, source, prefix, **opts)
        where = (data, api, prefix, opts, size)
        assert error == want_error, (*where, error, want_error)
        assert identical(plain(got), plain(want)), (*where, got, want)
    # the reference, chunked, gives what it gives whole (before an error too)
    for size in sizes[:2]:
        got, error = run(PYTHON, api, split(data, size), prefix, **opts)
        assert error == want_error, (data, api, prefix, opts, size)
        assert identical(plain(got), plain(want)), (data, api, prefix, opts, size)








# ----------------------------------------------------------------- spec fixtures


@pytest.mark.parametrize("case", [c for _, c in DECODE], ids=[i for i, _ in DECODE])
def test_spec_fixture(case: dict[str, Any]) -> None:
    data = case["input"].encode("utf-8")
    opts = fixture_options(case)
    check(data, "parse", **opts)
    check(data, "parse", use_float=True, sizes=(0,), **opts)
    for prefix in _paths_of(data, **opts):
        check(data, "items", prefix, sizes=(1, 0), **opts)
        check(data, "kvitems", prefix, sizes=(1, 0), **opts)


# ------------------------------------------------------------------------ corpus


@pytest.mark.skipif(not CORPUS, reason="tests/corpus is not present")
@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_corpus(path: Path) -> None:
    data = path.read_bytes()
    sizes = CHUNK_SIZES if len(data) < 4096 else (7, 4096, 0)
    for strict in (True, False):
        check(data, "parse", sizes=sizes, strict=strict)
        for prefix in _paths_of(data, strict=strict)[:8]:
            check(data, "items", prefix, sizes=sizes[-2:], strict=strict)
            check(data, "kvitems", prefix, sizes=sizes[-2:], strict=strict, use_float=True)





def test_mutated_documents() -> None:
    """Random mutations (most of them errors): outputs before the error and the error agree."""
    rng = random.Random(23)
    seeds = [c["input"].encode() for _, c in DECODE[::3]] + [p.read_bytes() for p in CORPUS if p.stat().st_size < 8000]
    n = 0
    for data in seeds:
        for _ in range(3):
            doc = mutate(rng, data)
            strict = rng.random() < 0.7
            size = rng.randint(1, 40)
            check(doc, "parse", sizes=(size, 0), strict=strict)
            api = rng.choice(("items", "kvitems"))
            check(doc, api, rng.choice(_paths_of(doc, strict=strict)), sizes=(size, 0), strict=strict)
            n += 1
    assert n > 100


# --------------------------------------------------------------------- generated

_keys = KEYS
_leaves = LEAVES | st.decimals(allow_nan=False, allow_infinity=False, places=3)
_values = st.recursive(
    _leaves,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(_keys, kids, max_size=4)
    | st.lists(st.fixed_dictionaries({"a": _leaves, "b": _leaves}), min_size=1, max_size=3),
    max_leaves=25,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=_values, size=st.integers(min_value=1, max_value=30), use_float=st.booleans())
def test_generated_documents(value: Any, size: int, use_float: bool) -> None:
    data = toonstream.dumps(value).encode()
    check(data, "parse", sizes=(size,), use_float=use_float)
    for prefix in _paths_of(data)[:6]:
        check(data, "items", prefix, sizes=(size,), use_float=use_float)
        check(data, "kvitems", prefix, sizes=(size,), use_float=use_float)


# ------------------------------------------------------------------ conventions


def test_same_as_ijson_on_the_json_of_a_document() -> None:
    """The native triples are ijson's on the same data as JSON."""
    value = {"a": [1, 2.5, "x", None, True], "t": [{"id": 1, "g": {"x": "y"}}, {"id": 2, "g": {"x": "z"}}], "": {"": [1]}}
    data = toonstream.dumps(value)
    import json

    as_json = json.dumps(value).encode()
    got, error = run(NATIVE, "parse", data, None)
    assert error is None
    assert got == list(ijson.parse(as_json))
    got, error = run(NATIVE, "items", data, "t.item.g")
    assert got == list(ijson.items(as_json, "t.item.g"))
    got, error = run(NATIVE, "kvitems", data, "t.item")
    assert got == list(ijson.kvitems(as_json, "t.item"))


def test_keyed_tables_and_groups() -> None:
    doc = b"k[2:]{v,g{x,y}}:\n  q: 7,1,2\n  r.s: 8,3,4\nt[2]{a.b,c}:\n  1,2\n  3,4\n"
    for api, targets in (("parse", [None]), ("items", ["k", "k.q", "k.q.g", "k.r.s.g.x", "t.item.a.b"]),
                         ("kvitems", ["k", "k.q", "k.q.g", "t.item"])):
        for p in targets:
            check(doc, api, p, strict=True)
            check(doc, api, p, strict=False)


def test_numbers_and_parse_float() -> None:
    doc = b"a[6]: 1,2.5,1e999,-0.0,123456789012345678901234567890,1e2\n"
    check(doc, "parse")
    check(doc, "parse", use_float=True)
    check(doc, "items", "a.item", parse_float=str)  # (a str from parse_float is a "string" event)
    check(doc, "parse", parse_float=str)
    check(doc, "parse", parse_float=lambda t: None)
    got, _ = run(NATIVE, "items", doc, "a.item")
    assert [type(v) for v in got] == [int, Decimal, Decimal, Decimal, int, Decimal]


def test_map_type() -> None:
    doc = b"l[2]:\n  - a: 1\n    b:\n      c: 2\n  - d: 3\n"
    for api, prefix in (("items", "l.item"), ("kvitems", "l.item")):
        want, _ = run(PYTHON, api, doc, prefix, map_type=OrderedDict)
        got, _ = run(NATIVE, api, doc, prefix, map_type=OrderedDict)
        assert got == want and repr(got) == repr(want)


def test_async_and_coroutines() -> None:
    doc = b"t[3]{id}:\n  1\n  2\n  x,y\n"  # (an error on the last row)

    class Chunks:
        def __init__(self) -> None:
            self.parts = list(split(doc, 5))

        async def read(self, n: int) -> bytes:
            return self.parts.pop(0) if self.parts else b""

    async def collect(engine: _engine.Engine) -> tuple[list[Any], Any]:
        previous = _engine.use(engine)
        out: list[Any] = []
        try:
            async for v in toonstream.items(Chunks(), "t.item"):
                out.append(v)
        except ToonDecodeError as e:
            return out, error_key(e)
        finally:
            _engine.use(previous)
        return out, None

    assert asyncio.run(collect(NATIVE)) == asyncio.run(collect(PYTHON))
    assert asyncio.run(collect(NATIVE))[0] == [{"id": 1}, {"id": 2}]

    def push(engine: _engine.Engine, api: str) -> tuple[list[Any], Any, int]:
        previous = _engine.use(engine)
        got = ijson.sendable_list()
        sent = 0
        try:
            coro = toonstream.parse_coro(got) if api == "parse" else toonstream.items_coro(got, "t.item")
            try:
                for part in split(doc, 4):
                    coro.send(part)
                    sent += 1
                coro.close()
            except ToonDecodeError as e:
                return list(got), error_key(e), sent
        finally:
            _engine.use(previous)
        return list(got), None, sent

    for api in ("parse", "items"):
        assert push(NATIVE, api) == push(PYTHON, api)  # (the same send raises, after the same outputs)


def test_options_and_fallback() -> None:
    """Options the native decoders do not take run the reference; bad values raise as it does."""
    doc = b"a: 1\n"
    got, _ = run(NATIVE, "parse", doc, None, hold_rows=False)
    assert got == [("", "start_map", None), ("", "map_key", "a"), ("a", "number", 1), ("", "end_map", None)]
    for bad in ({"max_depth": -1}, {"indent_size": 0}, {"bogus": 1}):
        assert run(NATIVE, "parse", doc, None, **bad)[1] == run(PYTHON, "parse", doc, None, **bad)[1]
        assert run(NATIVE, "items", doc, "a", **bad)[1] == run(PYTHON, "items", doc, "a", **bad)[1]
    text = "a: \udc80\n"  # (lone surrogate: not UTF-8; the reference reads such a str)
    assert run(NATIVE, "parse", text, None) == run(PYTHON, "parse", text, None)
    assert run(NATIVE, "items", text, "a") == run(PYTHON, "items", text, "a")


def test_lazy() -> None:
    """Nothing is read before the first next(); outputs come a chunk at a time."""
    reads: list[int] = []

    class Source:
        def __init__(self) -> None:
            self.parts = [b"t[3]{id}:\n", b"  1\n", b"  2\n", b"  3\n"]

        def read(self, n: int) -> bytes:
            reads.append(n)
            return self.parts.pop(0) if self.parts else b""

    previous = _engine.use(NATIVE)
    try:
        it = toonstream.items(Source(), "t.item")
        assert reads == []
        assert next(it) == {"id": 1}
        assert len(reads) == 2
    finally:
        _engine.use(previous)


class _Holder:
    """Holds a push decoder that holds the holder's methods: a reference cycle."""

    def header(self, table: Any) -> None:
        return None

    def parse_float(self, text: str) -> float:
        return float(text)


@pytest.mark.parametrize("kind", ["rows", "parse", "items"])
def test_a_cycle_through_a_decoders_callable_is_collected(kind: str) -> None:
    # The push decoders hold Python callables (rows' header callback, parse_float) and values
    # not yet returned; a cycle through them must be visible to the garbage collector (they once
    # showed it their kept error only, so such a cycle was never freed).
    import gc
    import weakref

    def make() -> weakref.ref[_Holder]:
        h = _Holder()
        if kind == "rows":
            d = _native.RowDecoder("t", header=h.header)
        elif kind == "parse":
            d = _native.ParseDecoder(parse_float=h.parse_float)
        else:
            d = _native.ItemsDecoder("t.item", kv=False, parse_float=h.parse_float)
        h.d = d  # type: ignore[attr-defined]
        d.feed(b"t[2]{a,b}:\n  1.5,x\n")  # (a row still open: values held, outputs pending)
        return weakref.ref(h)

    ref = make()
    gc.collect()
    assert ref() is None

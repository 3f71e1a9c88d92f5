"""``decode_to_json``/``decode_to_jsonl`` (the CLI's ``decode``) on the native engine
(``_native.JsonWriter``) against the reference: the same bytes, or the same error.

Errors: a decode error is the same (code, message, line, column, line text) under any
chunking.  The writer's own path errors (``not_array``, ``ambiguous_path``, ``not_found``) name
the line where the value at the path was read on the native engine; the reference names the
last line it had split when it saw that value, which depends on its chunking: fed one byte at a
time without holding rows back it is the same line, and that is what these tests compare with.
"""

from __future__ import annotations

import io
import json
import random
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toonstream
from toonstream import _engine
from toonstream._errors import ToonDecodeError, ToonEncodeError
from toonstream.tojson import decode_to_json, decode_to_jsonl

from conftest import REPO, import_native, load_fixtures
from differential import KEYS, LEAVES, error_key, fixture_options, mutate, prefixes, split

_native = import_native()

DECODE = load_fixtures("decode")
CORPUS = sorted((REPO / "tests" / "corpus").glob("*.toon"))

PYTHON = _engine.select("python")
NATIVE = _engine.select("native")
PATH_ERRORS = ("not_array", "ambiguous_path", "not_found")








def run(engine: _engine.Engine, source: Any, jsonl: bool, **opts: Any) -> tuple[bytes, Any]:
    previous = _engine.use(engine)
    out = io.BytesIO()
    try:
        (decode_to_jsonl if jsonl else decode_to_json)(source, out, **opts)
        return out.getvalue(), None
    except (ToonDecodeError, ToonEncodeError, ValueError, TypeError) as e:
        return b"", error_key(e)
    finally:
        _engine.use(previous)


def _paths_of(data: bytes, **opts: Any) -> list[str | None]:
    return prefixes(data, [None, "", "nope"], 12, **opts)


def check(data: bytes, jsonl: bool, *, sizes: tuple[int, ...] = (1, 7, 0), **opts: Any) -> tuple[bytes, Any]:
    want, want_error = run(PYTHON, data, jsonl, **opts)
    if want_error is not None and want_error[0] is ToonDecodeError and want_error[1] in PATH_ERRORS:
        # (see the module docstring: the reference's line for its own errors, fed line by line)
        want, want_error = run(PYTHON, split(data, 1), jsonl, hold_rows=False, **opts)
    for size in sizes:
        source: Any = split(data, size) if size else data
        got, error = run(NATIVE, source, jsonl, **opts)
        where = (data, jsonl, opts, size)
        assert error == want_error, (*where, error, want_error)
        if want_error is None:
            assert got == want, (*where, got, want)
    return want, want_error








@pytest.mark.parametrize("case", [c for _, c in DECODE], ids=[i for i, _ in DECODE])
def test_spec_fixture(case: dict[str, Any]) -> None:
    data = case["input"].encode("utf-8")
    opts = fixture_options(case)
    check(data, False, **opts)
    check(data, False, indent=2, sizes=(0,), **opts)
    for path in _paths_of(data, **opts):
        check(data, True, path=path, sizes=(1, 0), **opts)
        check(data, False, path=path, sizes=(0,), **opts)


@pytest.mark.skipif(not CORPUS, reason="tests/corpus is not present")
@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_corpus(path: Path) -> None:
    data = path.read_bytes()
    sizes = (1, 7, 0) if len(data) < 4096 else (4096, 0)
    for strict in (True, False):
        check(data, False, sizes=sizes, strict=strict)
        check(data, False, indent=4, sizes=(0,), strict=strict)
        for p in _paths_of(data, strict=strict)[:8]:
            check(data, True, path=p, sizes=sizes[-2:], strict=strict)


def test_the_json_is_json_dumps_of_loads() -> None:
    """Checked against the json module itself, not only the reference."""
    value = {"a": [1, 2.5, "x\u0001\"\\é\u2028", None, True], "t": [{"id": 1, "g": {"x": "y"}}], "e": {}, "l": []}
    text = toonstream.dumps(value).encode()
    got, error = run(NATIVE, text, False)
    assert error is None and got.decode() == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    got, error = run(NATIVE, text, False, indent=2)
    assert error is None and got.decode() == json.dumps(value, ensure_ascii=False, indent=2)
    got, error = run(NATIVE, text, True, path="t")
    assert got.decode() == "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in value["t"])  # type: ignore[union-attr]


def test_numbers_are_exact() -> None:
    doc = b"a[9]: 1,-0.0,0.10,1e5,1E-7,12.5e20,123456789012345678901234567890,1e999,-1.2300e-8\n"
    got, error = check(doc, False)
    assert got == b'{"a":[1,0,0.1,100000,1e-7,1.25e+21,123456789012345678901234567890,1e+999,-1.23e-8]}'
    # numbers the reference cannot write (ToonEncodeError) are refused alike
    check(b"a: 1" + b"0" * 10_000 + b"\n", False, max_number_length=20_000)
    check(b"a: -9" + b"9" * 9_999 + b"\n", False, max_number_length=20_000)
    check(b"a: 0.000001e-99999999999999999\n", False)


def test_mutated_documents() -> None:
    rng = random.Random(31)
    seeds = [c["input"].encode() for _, c in DECODE[::3]] + [p.read_bytes() for p in CORPUS if p.stat().st_size < 8000]
    n = 0
    for data in seeds:
        for _ in range(3):
            doc = mutate(rng, data)
            strict = rng.random() < 0.7
            check(doc, False, sizes=(rng.randint(1, 40), 0), strict=strict)
            check(doc, True, path=rng.choice(_paths_of(doc, strict=strict)), sizes=(0,), strict=strict)
            n += 1
    assert n > 100


_keys = KEYS
_leaves = LEAVES
_values = st.recursive(
    _leaves,
    lambda kids: st.lists(kids, max_size=4)
    | st.dictionaries(_keys, kids, max_size=4)
    | st.lists(st.fixed_dictionaries({"a": _leaves, "b": st.fixed_dictionaries({"c": _leaves})}), min_size=1, max_size=3),
    max_leaves=25,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=_values, size=st.integers(min_value=1, max_value=30), indent=st.sampled_from([None, 0, 2]))
def test_generated_documents(value: Any, size: int, indent: int | None) -> None:
    data = toonstream.dumps(value).encode()
    check(data, False, indent=indent, sizes=(size,))
    for p in _paths_of(data)[:5]:
        check(data, True, path=p, sizes=(size,))


def test_options_and_fallback() -> None:
    doc = b"a: 1.5\n"
    assert run(NATIVE, doc, False, parse_float=float) == run(PYTHON, doc, False, parse_float=float)
    for bad in ({"max_depth": -1}, {"indent_size": 0}, {"bogus": 1}):
        assert run(NATIVE, doc, False, **bad)[1] == run(PYTHON, doc, False, **bad)[1]
    text = "a: \udc80\n"
    assert run(NATIVE, text, False) == run(PYTHON, text, False)
    out = io.StringIO()  # a text file gets str
    previous = _engine.use(NATIVE)
    try:
        decode_to_jsonl("[2]: é,2", out)
    finally:
        _engine.use(previous)
    assert out.getvalue() == '"é"\n2\n'


def test_the_gil_is_released() -> None:
    """Another Python thread runs while a large chunk is decoded."""
    doc = toonstream.dumps([{"id": i, "name": f"user {i}", "score": i / 3} for i in range(200_000)]).encode()
    ticks = 0
    done = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0)

    writer = _native.JsonWriter(jsonl=True)
    t = threading.Thread(target=count)
    t.start()
    try:
        before = ticks
        out = writer.feed(doc)
        during = ticks - before
    finally:
        done.set()
        t.join()
    assert out.count(b"\n") == 200_000 - 1  # (the last line waits for close)
    assert during > 10


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer")
def test_ctrl_c_between_chunks() -> None:
    doc = toonstream.dumps([{"id": i} for i in range(1000)]).encode()

    def chunks() -> Iterator[bytes]:
        for part in split(doc, 64):
            yield part
            signal.raise_signal(signal.SIGINT)

    previous = _engine.use(NATIVE)
    try:
        with pytest.raises(KeyboardInterrupt):
            decode_to_jsonl(chunks(), io.BytesIO())
    finally:
        _engine.use(previous)

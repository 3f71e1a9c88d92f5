"""``decode_to_json``/``decode_to_jsonl`` (the CLI's ``decode``) on the native engine
(``_native.JsonWriter``) against the reference: the same bytes, or the same error.

Errors: a decode error, and the writer's own path errors (``not_array``, ``ambiguous_path``,
``not_found``, which name the line where the value at the path was read, a table row's among
them), are the same (code, message, line, column, line text) under any chunking.
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


# ---------------------------------------------------------------- two threads
# A chunk with a megabyte or more of a table's rows is cut in two and the second half read on
# another thread (native/src/split.rs); the outcome must be the single-threaded one: the same
# bytes, the same error, the same outputs before it, wherever the chunks end.

_CELLS = ('"a,{i}"', '"q\\"{i}"', "null", "n{i} x", "é{i}", '""', "-{i}.50", "1e{e}", "true")


def _big_table(rows: int, *, declared: int | None = None, bad: dict[int, str] | None = None, indent: str = "") -> str:
    """A table of ``rows`` rows (~36 bytes each) under ``data.rows``, some rows replaced by ``bad``."""
    bad = bad or {}
    head = f"meta:\n  n: {rows}\ndata:\n  rows[{rows if declared is None else declared}]{{id,name,score,ok}}:\n"
    lines = [head]
    for i in range(rows):
        if i in bad:
            lines.append(bad[i])
            continue
        cell = _CELLS[i % len(_CELLS)].format(i=i, e=i % 30)
        lines.append(f"    {i},{cell},{i % 97}.25,{'true' if i % 3 else 'false'}\n")
    lines.append("tail: end\n")
    return indent.join(lines) if indent else "".join(lines)


def _writer_outputs(chunks: list[bytes], *, pieces: int = 0, **kw: Any) -> tuple[list[bytes], Any, int]:
    """Each chunk's output from ``_native.JsonWriter`` (``pieces``: each chunk fed in pieces of
    that many bytes, too small for two threads), then the error, and the rows forked."""
    w = _native.JsonWriter(**kw)
    outs: list[bytes] = []
    try:
        for c in chunks:
            outs.append(b"".join(w.feed(p) for p in split(c, pieces)) if pieces else w.feed(c))
        outs.append(b"".join(iter(w.close, b"")))
    except (ToonDecodeError, ToonEncodeError) as e:
        return outs, error_key(e), w.forked_rows
    return outs, None, w.forked_rows


def _two_threads_agree(data: bytes, cuts: list[list[int]], **kw: Any) -> int:
    """For each list of chunk boundaries: the same outputs per chunk and error as fed in pieces
    of 64 KiB (one thread); returns the rows forked."""
    forked = 0
    for bounds in cuts:
        edges = [0, *bounds, len(data)]
        chunks = [data[a:b] for a, b in zip(edges, edges[1:])]
        got = _writer_outputs(chunks, **kw)
        want = _writer_outputs(chunks, pieces=1 << 16, **kw)
        assert want[2] == 0
        assert got[:2] == want[:2], (bounds, kw, got[1], want[1])
        forked += got[2]
    return forked


def _near_the_cuts(data: bytes) -> list[list[int]]:
    """Chunk boundaries: none, at every byte around the middle (where a whole feed is cut) and
    around the first cut of the second half, and chunks of 1.5 MiB."""
    mid = len(data) // 2
    cuts: list[list[int]] = [[]]
    cuts += [[k] for k in range(mid - 48, mid + 48, 3)]
    cuts += [[1 << 20, k] for k in range((1 << 20) + (len(data) - (1 << 20)) // 2 - 20, (1 << 20) + (len(data) - (1 << 20)) // 2 + 20, 7)]
    cuts.append(list(range(3 << 19, len(data), 3 << 19)))
    return cuts


def test_two_threads_write_the_bytes_of_one() -> None:
    text = _big_table(70_000)
    data = text.encode()
    assert len(data) > 3 << 19
    want, want_error = run(PYTHON, data, True, path="data.rows")
    assert want_error is None and want.count(b"\n") == 70_000
    got, error = run(NATIVE, data, True, path="data.rows")  # (decode_to_jsonl: chunks of 4 MiB)
    assert error is None and got == want
    assert _two_threads_agree(data, _near_the_cuts(data), jsonl=True, path="data.rows") > 0
    # JSON output, compact and pretty, the whole document or the table
    for kw in ({}, {"indent": 2}, {"path": "data"}):
        want, want_error = run(PYTHON, data, False, **kw)
        got, error = run(NATIVE, data, False, **kw)
        assert error is None and want_error is None and got == want, kw
        assert _two_threads_agree(data, [[], [len(data) // 2 + 5]], jsonl=False, **kw) > 0
    # CRLF line ends, non-strict
    crlf = text.replace("\n", "\r\n").encode()
    for strict in (True, False):
        want, want_error = run(PYTHON, crlf, True, path="data.rows", strict=strict)
        got, error = run(NATIVE, crlf, True, path="data.rows", strict=strict)
        assert error is None and got == want
        assert _two_threads_agree(crlf, [[], [len(crlf) // 2 - 1], [len(crlf) // 2]], jsonl=True, path="data.rows", strict=strict) > 0


_BAD_ROWS = {
    "width": "    1,2\n",
    "quote": '    1,"open,2,true\n',
    "indent": "     1,x,2,true\n",
    "deeper": "      1,x,2,true\n",
    "tab": "    \t1,x,2,true\n",
    "colon": "    k: v\n",
    "blank": "\n    1,x,2,true\n",
}


def _error_case(data: bytes, sizes: tuple[int, ...] = (0,), **kw: Any) -> None:
    want, want_error = run(PYTHON, data, True, path="data.rows", **kw)
    for size in sizes:
        source = list(split(data, size)) if size else data
        got, error = run(NATIVE, source, True, path="data.rows", **kw)
        assert error == want_error and got == want, (size, kw, error, want_error)


@pytest.mark.parametrize("kind", sorted(_BAD_ROWS))
def test_two_threads_raise_the_error_of_one(kind: str) -> None:
    rows = 60_000
    forked = 0
    for at in (rows // 2 + 3, 3 * rows // 5, rows - 40):  # (the first cut is near row 31,000)
        data = _big_table(rows, bad={at: _BAD_ROWS[kind]}).encode()
        _error_case(data, sizes=(0, 3 << 19))
        _error_case(data, strict=False)
        forked += _two_threads_agree(data, [[], [len(data) // 2]], jsonl=True, path="data.rows")
    assert forked > 0


def test_two_threads_count_checks() -> None:
    rows = 60_000
    forked = 0
    for declared in (rows - 1, rows + 1, rows // 2):
        data = _big_table(rows, declared=declared).encode()
        _error_case(data)
        _error_case(data, strict=False)
        for strict in (True, False):
            forked += _two_threads_agree(data, [[], [len(data) // 2 + 11]], jsonl=True, path="data.rows", strict=strict)
    assert forked > 0  # (more rows than declared: the fork's rows are dropped, the decoder reads them)


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(_BAD_ROWS))
def test_two_threads_errors_at_many_rows(kind: str) -> None:
    rows = 60_000
    for at in (3, 1800, rows // 4, rows // 2 - 1, rows // 2, rows // 2 + 1, 3 * rows // 4, rows - 1):
        data = _big_table(rows, bad={at: _BAD_ROWS[kind]}).encode()
        for strict in (True, False):
            _error_case(data, sizes=(0, 1 << 20, 3 << 19), strict=strict)
        _two_threads_agree(data, _near_the_cuts(data)[::4], jsonl=True, path="data.rows")


def test_small_chunks_are_held_for_two_threads() -> None:
    """The drivers' 16 KiB chunks: held while a big table's rows come, the batch's output handed
    out over the next calls in pieces that are each text on their own (after a line)."""
    data = _big_table(60_000).encode()
    want, _ = run(PYTHON, data, True, path="data.rows")
    for size in (1 << 14, 5000, 40_000):
        w = _native.JsonWriter(jsonl=True, path="data.rows")
        outs = [w.feed(c) for c in split(data, size)] + list(iter(w.close, b""))
        assert b"".join(outs) == want
        assert w.forked_rows > 0, size
        assert all(o.decode() is not None and (not o or o.endswith(b"\n")) for o in outs)
        assert max(map(len, outs)) < 1 << 20  # (no megabyte objects)
    # an error in a held batch: the same error, at the call that decodes the batch or at close
    bad = _big_table(60_000, bad={45_000: _BAD_ROWS["width"]}).encode()
    _, want_error = run(PYTHON, bad, True, path="data.rows")
    w = _native.JsonWriter(jsonl=True, path="data.rows")
    with pytest.raises(ToonDecodeError) as e:
        for c in split(bad, 1 << 14):
            w.feed(c)
        w.close()
    assert error_key(e.value) == want_error
    with pytest.raises(ToonDecodeError):  # (and again at every later call)
        w.close()

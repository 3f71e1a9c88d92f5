"""``encode_jsonl`` on the native engine (``_native.JsonlTable``, the CLI's JSONL to TOON) against
the reference: the same bytes, or the same error (message, line, column, path).

The native engine writes the rows of a file of flat records with one set of keys and declines
anything else; a declined input is encoded by the reference from the start.  So every test here
checks two things: the output (or error) equals the reference's, and for the inputs that are such
a table the native encoder really wrote it (``Spy``), so an agreement cannot come from declining
everything.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toonstream import _engine, streaming
from toonstream._errors import ToonEncodeError
from toonstream.streaming import encode_jsonl

from conftest import import_native

_native = import_native()

PYTHON = _engine.select("python")
NATIVE = _engine.select("native")


class Spy:
    """The native engine's ``jsonl_table`` capability, recording whether each encoder it made
    declined its input."""

    def __init__(self) -> None:
        self.declined: list[bool] = []
        self.made: list[Any] = []

    def __call__(self, **options: Any) -> Any:
        table = _native.JsonlTable(**options)
        self.made.append(table)
        return table

    @property
    def wrote(self) -> bool:
        """Whether the last call was written by the native encoder (it did not decline)."""
        return bool(self.made) and not self.made[-1].declined


class Pipe(io.RawIOBase):
    """A non-seekable binary stream (stdin from a pipe), read in uneven pieces."""

    def __init__(self, data: bytes, piece: int = 5000) -> None:
        self._data = data
        self._at = 0
        self._piece = piece

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        n = min(len(b), self._piece, len(self._data) - self._at)
        b[:n] = self._data[self._at : self._at + n]
        self._at += n
        return n


def _engine_with(spy: Spy) -> _engine.Engine:
    e = _engine.select("native")
    e.jsonl_table = spy
    return e


def run(engine: _engine.Engine, data: bytes, *, source: str = "bytesio", **opts: Any) -> tuple[Any, ...]:
    """(count, text) or (error class, message, line, column, path) of ``encode_jsonl``."""
    previous = _engine.use(engine)
    out = io.StringIO()
    try:
        if source == "bytesio":
            src: Any = io.BytesIO(data)
        elif source == "pipe":
            src = io.BufferedReader(Pipe(data))
        else:
            raise AssertionError(source)
        n = encode_jsonl(src, out, **opts)
        return n, out.getvalue()
    except (ToonEncodeError, ValueError) as e:
        return type(e), str(e), getattr(e, "line", None), getattr(e, "column", None), getattr(e, "path", None)
    finally:
        _engine.use(previous)


def check(data: bytes, *, table: bool | None = None, **opts: Any) -> Any:
    """The native result equals the reference's, from a seekable file and from a pipe; with
    ``table`` given, whether the native encoder wrote it."""
    want = run(PYTHON, data, **opts)
    for source in ("bytesio", "pipe"):
        spy = Spy()
        got = run(_engine_with(spy), data, source=source, **opts)
        assert got == want, (source, data[:300], opts)
        if table is not None:
            assert spy.wrote == table, (source, data[:300], opts)
    return want


def lines(records: list[Any]) -> bytes:
    return b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in records)


# ------------------------------------------------------------------ tables written natively


def test_a_table_of_records() -> None:
    records = [{"id": i, "name": f"user {i}", "score": i / 7, "ok": i % 2 == 0, "tag": None} for i in range(500)]
    n, text = check(lines(records), table=True)
    assert n == 500
    assert text.startswith("[500]{id,name,score,ok,tag}:\n  0,user 0,0,true,null\n")


@pytest.mark.parametrize("delimiter", [",", "\t", "|"])
@pytest.mark.parametrize("indent_size", [1, 2, 4])
@pytest.mark.parametrize("key", [None, "items", "a b"])
def test_options(delimiter: str, indent_size: int, key: str | None) -> None:
    records = [{"a": "x,y", "b": "p|q", "c": "t\tu", "d": 1.5, "e": "", "f": " lead"} for _ in range(3)]
    check(lines(records), table=True, delimiter=delimiter, indent_size=indent_size, key=key)


@pytest.mark.parametrize("max_depth", [0, 1, 2])
@pytest.mark.parametrize("key", [None, "k"])
def test_max_depth(max_depth: int, key: str | None) -> None:
    check(lines([{"a": 1}, {"a": 2}]), max_depth=max_depth, key=key)


@pytest.mark.parametrize("missing_as_null", [False, True])
def test_missing_as_null(missing_as_null: bool) -> None:
    check(lines([{"a": 1, "b": 2}, {"b": 3, "a": 4}]), table=True, missing_as_null=missing_as_null)
    check(lines([{"a": 1, "b": 2}, {"a": 4}]), table=False, missing_as_null=missing_as_null)


def test_keys_in_another_order_or_spelling() -> None:
    data = b'{"a": 1, "b": 2}\n{"b": 3, "a": 4}\n{"\\u0061": 5, "b": 6}\n{"b":7,"\\u0061":8}\n'
    assert check(data, table=True) == (4, "[4]{a,b}:\n  1,2\n  4,3\n  5,6\n  8,7")


def test_blank_lines_crlf_and_bom() -> None:
    data = b'\xef\xbb\xbf{"a": 1}\r\n\r\n   \n \t\n{"a": 2}\r\n{"a": 3}'
    assert check(data, table=True) == (3, "[3]{a}:\n  1\n  2\n  3")


def test_keys_that_need_quotes() -> None:
    check(lines([{"": 1, "a b": 2, "x:y": 3, "é": 4, "1": 5, "-": 6}] * 2), table=True)


STRINGS = [
    "", " ", "a ", " a", "-", "-a", "#", "#a", "true", "false", "null", "True", "1", "01", "+1", "1e5", "1.5",
    "-1", ".5", "1.", "a:b", 'say "hi"', "back\\slash", "[x]", "{y}", "tab\there", "nl\nhere", "cr\rhere",
    "\x00\x01\x1f", "\ufeffbom", "mid\ufeffbom", "é", "日本語", "😀", "a,b", "a|b", "\u2028", "ok", "x y z",
]


@pytest.mark.parametrize("delimiter", [",", "\t", "|"])
def test_strings(delimiter: str) -> None:
    records = [{"s": s, "t": 1} for s in STRINGS]
    check(lines(records), table=True, delimiter=delimiter)
    # the same strings with every character escaped
    escaped = b"".join(
        b'{"s": "' + "".join(f"\\u{ord(c):04x}" if ord(c) < 0x10000 else c for c in s).encode() + b'", "t": 1}\n'
        for s in STRINGS
    )
    check(escaped, table=True, delimiter=delimiter)


NUMBERS = [
    "0", "-0", "1", "-1", "123456789012345678901234567890", "9" * 4000, "0.0", "-0.0", "1.0", "1.5", "2.50",
    "0.1", "0.10000000000000001", "0.30000000000000004", "1e5", "1E5", "1e+5", "1e-5", "1e-05", "1e-7", "1e-07",
    "1.5e300", "1.5e+300", "1e400", "-1e400", "1e-400", "5e-324", "4.9e-324", "1.7976931348623157e+308",
    "1e+16", "1e16", "1e15", "1e21", "1e+21", "1e20", "123456789012345678.0", "9007199254740993.0",
    "6.517366420032157e+16", "0.000001", "0.0000001", "1e-6", "1.0e-6", "100e-2", "0e5", "0.000e-3",
    "-2.5E-3", "3.141592653589793", "3.1415926535897932384626433832795028841971", "1" + "0" * 30 + ".5",
    "1e999999999999999", "1e-00000000000000001", "12345678901234567890e-10",
]


def test_numbers() -> None:
    # (the texts are spliced in as written, not made by json.dumps)
    data = b"".join(b'{"n": ' + t.encode() + b', "i": ' + str(i).encode() + b"}\n" for i, t in enumerate(NUMBERS))
    check(data)  # a number the native encoder leaves to the reference declines the whole file
    for t in NUMBERS:
        check(b'{"n": ' + t.encode() + b"}\n{\"n\": 1}\n")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=20))
def test_float_texts(xs: list[float]) -> None:
    # repr texts (how Python writes them), JavaScript-like texts, and some with more digits
    texts = [repr(x) for x in xs] + [f"{x:.17g}" for x in xs] + [f"{x:e}" for x in xs] + [f"{x:.3E}" for x in xs]
    data = b"".join(b'{"x": ' + json_number(t).encode() + b"}\n" for t in texts)
    check(data)


def json_number(text: str) -> str:
    """A float's text as a valid JSON number token."""
    if "e" not in text.lower() and "." not in text:
        return text
    mant, _, exp = text.lower().partition("e")
    if mant.endswith("."):
        mant += "0"
    if mant.startswith("-."):
        mant = "-0" + mant[1:]
    elif mant.startswith("."):
        mant = "0" + mant
    return mant + ("e" + exp if exp else "")


# ------------------------------------------------------------------ declined: the reference writes it


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\n\n",
        b"[1, 2]\n",
        b"1\n2\n3\n",
        b'"a"\n',
        b"{}\n{}\n",
        b'{"a": {"b": 1}}\n{"a": {"b": 2}}\n',
        b'{"a": [1, 2]}\n{"a": [3]}\n',
        b'{"a": 1}\n{"b": 2}\n',
        b'{"a": 1}\n{"a": 1, "b": 2}\n',
        b'{"a": 1, "b": 2}\n{"a": 1}\n',
        b'{"a": 1, "a": 2}\n{"a": 3}\n',
        b'{"a": 1}\n{"a": 2, "a": 3}\n',
        b'{"a": NaN}\n',
        b'{"a": Infinity}\n{"a": -Infinity}\n',
        b'{"a": "\\ud800"}\n',
        b'{"a": "\\udc00x"}\n',
        b'{"a": "\\ud83dx"}\n',
        b'{"\\ud800": 1}\n',
    ],
)
def test_other_shapes_and_special_values(data: bytes) -> None:
    check(data, table=False)


@pytest.mark.parametrize(
    "bad",
    [
        b'{"a": 01}', b'{"a": 1.}', b'{"a": .5}', b'{"a": -}', b'{"a": +1}', b'{"a": 1e}', b'{"a": 1} x',
        b'{"a": 1}{"a": 2}', b'{"a" 1}', b'{"a": 1,}', b'{a: 1}', b"{'a': 1}", b'{"a": "x\x01"}',
        b'{"a": "\\x"}', b'{"a": "\\u12"}', b'{"a": "\xff"}', b'{"a": "\xc3"}', b'{"a": tru}', b'{"a": nul}',
        b'{"a": 1', b'{"a": "unterminated}', b"\x00", b'{"a": 1}\x00', b'{"a": 1e-100000000000000000}',
        b'\xef\xbb\xbf\xef\xbb\xbf{"a": 1}',
    ],
)
@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_malformed_lines_are_the_references_errors(bad: bytes, where: str) -> None:
    good = [b'{"a": 1}'] * 5
    at = {"first": 0, "middle": 2, "last": 5}[where]
    data = b"\n".join(good[:at] + [bad] + good[at:]) + b"\n"
    assert check(data, table=False)[0] is ToonEncodeError


# ------------------------------------------------------------------ chunking, threads, sources


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64, 1000])
def test_any_chunk_size(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streaming, "NATIVE_CHUNK", chunk)
    data = b'\xef\xbb\xbf{"a": 1, "s": "\\u00e9t\xc3\xa9"}\r\n\n{"s": "x,y", "a": 2.50}\n{"a": -0, "s": "\xf0\x9f\x98\x80"}'
    assert check(data, table=True) == (3, '[3]{a,s}:\n  1,été\n  2.5,"x,y"\n  0,😀')
    check(data + b"\n[1]\n", table=False)
    check(data + b"\n{bad\n", table=False)


@pytest.mark.parametrize("workers", [1, 2, None])
def test_threads_give_the_same_bytes(workers: int | None, tmp_path: Path) -> None:
    rng = random.Random(7)
    records = [{"id": i, "v": rng.random(), "s": rng.choice(STRINGS), "b": rng.random() < 0.5} for i in range(60_000)]
    data = lines(records)
    assert len(data) > 2 * 4 * (1 << 20) // 4  # (several chunks, each split over two threads)
    path = tmp_path / "in.jsonl"
    path.write_bytes(data)
    want = run(PYTHON, data)
    spy = Spy()
    previous = _engine.use(_engine_with(spy))
    try:
        out = io.StringIO()
        assert encode_jsonl(path, out, workers=workers) == len(records)
    finally:
        _engine.use(previous)
    assert spy.wrote
    assert (len(records), out.getvalue()) == want


def test_a_text_file_goes_to_the_reference(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(lines([{"a": 1}, {"a": 2}]))
    spy = Spy()
    previous = _engine.use(_engine_with(spy))
    try:
        out = io.StringIO()
        with open(path, encoding="utf-8") as f:
            assert encode_jsonl(f, out) == 2
    finally:
        _engine.use(previous)
    assert out.getvalue() == "[2]{a}:\n  1\n  2"
    assert not spy.made


def test_an_iterable_of_lines_goes_to_the_reference() -> None:
    spy = Spy()
    previous = _engine.use(_engine_with(spy))
    try:
        out = io.StringIO()
        assert encode_jsonl([b'{"a": 1}\n', b'{"a": 2}\n'], out) == 2
    finally:
        _engine.use(previous)
    assert out.getvalue() == "[2]{a}:\n  1\n  2"
    assert not spy.made


def test_a_file_read_from_its_position() -> None:
    f = io.BytesIO(b'[1]\n{"a": 1}\n{"a": 2}\n')
    f.readline()
    check_pos = run(PYTHON, b'{"a": 1}\n{"a": 2}\n')
    previous = _engine.use(NATIVE)
    try:
        out = io.StringIO()
        assert encode_jsonl(f, out) == 2
    finally:
        _engine.use(previous)
    assert (2, out.getvalue()) == check_pos


def test_binary_output_is_the_same_bytes() -> None:
    data = lines([{"s": "é,😀", "n": 1.25}] * 10)
    outs = []
    for engine in (PYTHON, NATIVE):
        previous = _engine.use(engine)
        try:
            out = io.BytesIO()
            encode_jsonl(io.BytesIO(data), out)
            outs.append(out.getvalue())
        finally:
            _engine.use(previous)
    assert outs[0] == outs[1]


# ------------------------------------------------------------------ property test


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(st.characters(exclude_categories=["Cs"]), max_size=8),
    st.sampled_from(STRINGS),
)
KEY = st.text(st.sampled_from("ab_-. :,|\"#[]{}\\é\t1"), min_size=0, max_size=4)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(KEY, min_size=1, max_size=5, unique=True),
    st.lists(st.tuples(st.lists(SCALARS, min_size=5, max_size=5), st.randoms()), min_size=1, max_size=12),
    st.sampled_from([",", "\t", "|"]),
    st.sampled_from([None, "rows"]),
    st.booleans(),
)
def test_random_tables(keys: list[str], rows: list[tuple[list[Any], Any]], delimiter: str, key: str | None,
                       ascii_only: bool) -> None:
    out = []
    for values, rnd in rows:
        items = list(zip(keys, values))
        rnd.shuffle(items)  # any key order
        out.append(json.dumps(dict(items), ensure_ascii=ascii_only).encode() + b"\n")
    check(b"".join(out), table=True, delimiter=delimiter, key=key)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=60), st.integers(min_value=0, max_value=3))
def test_random_bytes_in_a_table(junk: bytes, at: int) -> None:
    good = [b'{"a": 1, "b": "x"}'] * 3
    check(b"\n".join(good[:at] + [junk] + good[at:]) + b"\n")


# ------------------------------------------------- nested records: pass one counts (jsonl_count)

BAD_LINES = [
    b'{"a": 01}', b'{"a": 1.}', b'{"a": .5}', b'{"a": -}', b'{"a": +1}', b'{"a": 1e}', b'{"a": 1} x',
    b'{"a": 1}{"a": 2}', b'{"a" 1}', b'{"a": 1,}', b'{a: 1}', b"{'a': 1}", b'{"a": "x\x01"}',
    b'{"a": "\\x"}', b'{"a": "\\u12"}', b'{"a": "\xff"}', b'{"a": "\xc3"}', b'{"a": tru}', b'{"a": nul}',
    b'{"a": 1', b'{"a": "unterminated}', b"\x00", b'{"a": 1}\x00', b'[1, 2', b'[1, 2]]', b'{"a": [1, {]}',
    b'{"a": [}', b'{"a": {"b": 1]}', b'[,]', b'[1,]', b'{"a":}', b'{,}', b'\x0c{"a": 1}',
]
# valid JSON the reference reads with care of its own: the counter leaves the block to it
CAREFUL_LINES = [b'{"a": NaN}', b'[Infinity]', b'{"a": "\\ud800"}', b'{"a": 1' + b"0" * 200 + b"}",
                 b'{"a": 1e-00000000000000000001}', b"[" * 300 + b"]" * 300]


def test_jsonl_count() -> None:
    assert _native.jsonl_count(b'{"a": [1, {"b": null}]}\n\n  \t\n[]\n"x"\ntrue\n-0.5e3') == (5, 6)
    assert _native.jsonl_count(b'{"a": 1}\n  \x0b\n') is None  # (no JSON white space: a bad line)
    assert _native.jsonl_count(b"") == (0, 0)
    assert _native.jsonl_count(b'{"k\\u00e9": "\\ud83d\\ude00 \\n"}\r\n') == (1, 1)
    for bad in BAD_LINES + CAREFUL_LINES:
        assert _native.jsonl_count(b'{"a": 1}\n' + bad + b"\n") is None, bad


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                             lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
                             max_leaves=12), min_size=1, max_size=5),
       st.data())
def test_jsonl_count_takes_only_what_the_reference_parses(values: list[Any], data: st.DataObject) -> None:
    # every line json.dumps makes (some mutated): a count is the number of lines the reference
    # parses without an error, or None
    raw = [json.dumps(v, ensure_ascii=data.draw(st.booleans())).encode() for v in values]
    if data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(raw) - 1))
        line = raw[i]
        at = data.draw(st.integers(0, len(line)))
        raw[i] = line[:at] + data.draw(st.sampled_from([b"", b",", b"]", b"}", b'"', b"\\", b"x", b"0"])) + line[at + 1:]
    block = b"".join(r + b"\n" for r in raw)
    got = _native.jsonl_count(block)
    try:
        want = len(streaming._parse_batch(block.splitlines(keepends=True), 1)[0])
    except ToonEncodeError:
        want = None
    if got is not None:
        assert got == (want, len(raw))


def nested_lines(n: int, bad: bytes | None = None, at: int = -1) -> bytes:
    rng = random.Random(3)
    out = []
    for i in range(n):
        if i == at and bad is not None:
            out.append(bad)
            continue
        r: Any = {"id": i, "sub": {"x": rng.random(), "tags": ["a", "b"][: rng.randrange(3)]}}
        if i % 5 == 0:
            r = [i, {"y": None}]
        out.append(json.dumps(r).encode())
    return b"\n".join(out) + b"\n"


@pytest.mark.parametrize("bad", BAD_LINES[:8] + CAREFUL_LINES)
def test_nested_records_with_a_bad_line_late(bad: bytes) -> None:
    # the line is in a block pass one counts natively: the reference's error (or value) all the same
    check(nested_lines(6000, bad, 4500), table=False)


@pytest.mark.parametrize("opts", [{}, {"key": "rows"}, {"missing_as_null": True}, {"delimiter": "|"}])
def test_nested_records_are_counted_natively(opts: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []

    def spy(block: bytes, **kw: Any) -> Any:
        calls.append(_native.jsonl_count(block, **kw))
        return calls[-1]

    data = nested_lines(6000)
    engine = _engine.select("native")
    engine.jsonl_count = spy
    want = run(PYTHON, data, **opts)
    for source in ("bytesio", "pipe"):
        calls.clear()
        assert run(engine, data, source=source, **opts) == want
        if opts.get("missing_as_null"):
            assert not calls  # (a table of the union of keys may still come: every value is looked at)
        else:
            assert calls and all(c is not None for c in calls), source

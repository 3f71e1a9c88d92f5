"""``toonstream.rows()`` on the native engine (``_native.RowDecoder``) against the reference.

For the same input, prefix and options both engines must give the same rows (tuples or dicts,
types all the way down), the same ``columns`` and ``fields``, or the same ``ToonDecodeError``
(code, message, line, column, line text), however the input is chunked.  Rows delivered before
an error: the native engine delivers every row of the lines before the failing one (the same
under any chunking); the reference delivers a chunking-dependent prefix of those.

Errors are compared with the reference fed one byte at a time with ``hold_rows=False``: fed
larger chunks, or holding row lines back (its default), the reference sees its rows driver's own
errors (``not_tabular``, ``unexpected_fields``) only after a batch of lines was decoded, so a
later line's decode error wins, and ``not_tabular`` names the batch's last line; the native
engine raises them once their own line is done, as the reference fed line by line does.
"""

from __future__ import annotations

import random
import signal
from decimal import Decimal
from pathlib import Path
from typing import Any

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
CHUNK_SIZES = (1, 2, 3, 7, 64, 0)  # 0: the whole input at once

PYTHON = _engine.select("python")
NATIVE = _engine.select("native")











class Run:
    """One rows() run: the rows got, the error (or None), columns and fields at the end."""

    def __init__(self, engine: _engine.Engine, data: Any, prefix: Any, **opts: Any) -> None:
        previous = _engine.use(engine)
        self.rows: list[Any] = []
        self.error: tuple[Any, ...] | None = None
        try:
            reader = toonstream.rows(data, prefix, **opts)
            try:
                for row in reader:
                    self.rows.append(row)
            except (ToonDecodeError, ValueError, TypeError) as e:
                self.error = error_key(e)
            self.columns = reader.columns
            self.fields = reader.fields
        finally:
            _engine.use(previous)


def _paths_of(data: bytes, **opts: Any) -> list[Any]:
    """Prefixes worth asking for: every container's (tables and others), the root, auto (None)."""
    return prefixes(data, ["", None, "nope"], 12, **opts)


def check(data: bytes, prefix: Any, *, sizes: tuple[int, ...] = CHUNK_SIZES, **opts: Any) -> Run:
    """Native rows() under every chunking agrees with the reference; returns the reference's run."""
    want = Run(PYTHON, data, prefix, **opts)
    by_byte: Run | None = None
    if want.error is not None:
        # (fed whole, or holding row lines back, the reference sees the driver's own errors,
        # not_tabular and unexpected_fields, only after a batch of lines: a later line's decode
        # error then wins)
        by_byte = Run(PYTHON, split(data, 1), prefix, hold_rows=False, **opts)
        assert by_byte.error is not None
    first: list[Any] | None = None
    for size in sizes:
        got = Run(NATIVE, split(data, size) if size != 0 or len(data) % 2 else data, prefix, **opts)
        where = (data, prefix, opts, size)
        assert got.error == (by_byte or want).error, (*where, got.error, want.error)
        if want.error is None:
            assert identical(plain(got.rows), plain(want.rows)), (*where, got.rows, want.rows)
            assert got.columns == want.columns, where
            assert got.fields == want.fields, where
        else:
            # the reference's rows before the error (fed line by line: every row line before the
            # failing one, save those that only the end of input checks) are a prefix of these
            assert by_byte is not None
            for ref in (by_byte, want):
                assert identical(plain(got.rows[: len(ref.rows)]), plain(ref.rows)), (*where, got.rows, ref.rows)
            if first is None:
                first = got.rows
            assert identical(plain(got.rows), plain(first)), where  # the same under any chunking
    return want








# ----------------------------------------------------------------- spec fixtures

TABLES = [(i, c) for i, c in DECODE if "{" in c["input"]]


@pytest.mark.parametrize("case", [c for _, c in TABLES], ids=[i for i, _ in TABLES])
def test_spec_fixture(case: dict[str, Any]) -> None:
    data = case["input"].encode("utf-8")
    opts = fixture_options(case)
    for prefix in _paths_of(data, **opts):
        check(data, prefix, **opts)
        check(data, prefix, as_dict=True, **opts)


def test_fixture_str_input() -> None:
    """A str source (and bytes-likes) gives what bytes give."""
    for _, case in TABLES:
        text = case["input"]
        opts = fixture_options(case)
        for prefix in _paths_of(text.encode(), **opts)[:4]:
            want = check(text.encode(), prefix, sizes=(0,), **opts)
            native_bytes = Run(NATIVE, text.encode(), prefix, **opts)
            for source in (text, bytearray(text.encode()), memoryview(text.encode())):
                got = Run(NATIVE, source, prefix, **opts)
                assert got.error == native_bytes.error, (text, prefix)
                assert identical(plain(got.rows), plain(native_bytes.rows)), (text, prefix)
                if want.error is None:
                    assert identical(plain(got.rows), plain(want.rows)), (text, prefix)


# ------------------------------------------------------------------------ corpus


@pytest.mark.skipif(not CORPUS, reason="tests/corpus is not present")
@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_corpus(path: Path) -> None:
    data = path.read_bytes()
    sizes = CHUNK_SIZES if len(data) < 4096 else (7, 64, 4096, 0)
    for strict in (True, False):
        for prefix in _paths_of(data, strict=strict)[:6]:
            check(data, prefix, sizes=sizes, strict=strict)
            check(data, prefix, sizes=(64, 0), strict=strict, as_dict=True, use_float=False)


def test_mutated_documents() -> None:
    """Random mutations of table documents: rows and errors agree, chunked at random."""
    rng = random.Random(17)
    seeds = [c["input"].encode() for _, c in TABLES] + [p.read_bytes() for p in CORPUS if p.stat().st_size < 20000]
    n = 0
    for data in seeds:
        for _ in range(4):
            doc = mutate(rng, data)
            prefix = rng.choice(_paths_of(doc))
            check(doc, prefix, sizes=(rng.randint(1, 40), 0), strict=rng.random() < 0.7)
            n += 1
    assert n > 100


def test_random_splits() -> None:
    """Chunks of random sizes (a split may fall inside a UTF-8 sequence or a CRLF)."""
    rng = random.Random(5)
    doc = toonstream.dumps(
        {"t": [{"id": i, "name": f"é{i}\t,", "x": i / 7, "big": 10**30 + i} for i in range(50)]}
    ).replace("\n", "\r\n").encode()
    want = Run(PYTHON, doc, "t")
    for _ in range(30):
        parts, i = [], 0
        while i < len(doc):
            n = rng.randint(1, 50)
            parts.append(doc[i : i + n])
            i += n
        got = Run(NATIVE, iter(parts), "t")
        assert got.error == want.error
        assert identical(plain(got.rows), plain(want.rows))


# --------------------------------------------------------------------- generated

_keys = KEYS.filter(bool)
_leaves = LEAVES
_records = st.lists(_keys, min_size=1, max_size=4, unique=True).flatmap(
    lambda ks: st.lists(st.fixed_dictionaries({k: _leaves for k in ks}), min_size=1, max_size=6)
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    records=_records,
    indent=st.sampled_from([1, 2, 4]),
    delimiter=st.sampled_from([",", "\t", "|"]),
    shape=st.sampled_from(["root", "member", "nested", "keyed", "list"]),
    as_dict=st.booleans(),
    use_float=st.booleans(),
    size=st.sampled_from([1, 3, 7, 0]),
)
def test_generated_tables(
    records: list[dict[str, Any]], indent: int, delimiter: str, shape: str, as_dict: bool, use_float: bool, size: int
) -> None:
    if shape == "root":
        value: Any = records
        prefix = ""
    elif shape == "member":
        value, prefix = {"meta": {"n": 1}, "rows": records}, "rows"
    elif shape == "nested":
        value, prefix = {"a": {"b": records}}, "a.b"
    elif shape == "keyed":
        value, prefix = {"t": {f"k{i}": r for i, r in enumerate(records)}}, "t"
    else:
        value, prefix = {"l": [records, records]}, "l.item"
    doc = toonstream.dumps(value, indent_size=indent, delimiter=delimiter).encode("utf-8")
    check(doc, prefix, sizes=(size,), indent_size=indent, as_dict=as_dict, use_float=use_float)
    check(doc, None, sizes=(size,), indent_size=indent)


# --------------------------------------------------------------------- the driver's own cases

KEYED = b"t[2:]{age,g{a,b}}:\n  ada: 36,1.5,-0\n  bob: 41,1e400,99999999999999999999999\n"


@pytest.mark.parametrize("as_dict", [False, True])
@pytest.mark.parametrize("use_float", [False, True])
def test_keyed_and_groups(as_dict: bool, use_float: bool) -> None:
    want = check(KEYED, "t", as_dict=as_dict, use_float=use_float, key_field="name")
    assert want.columns == ["name", "age", "g.a", "g.b"]
    assert len(want.rows) == 2


def test_numbers() -> None:
    doc = b"t[1]{a,b,c,d,e,f}:\n  -0,-0.0,1e400,12345678901234567890123,1.5,0.1\n"
    want = check(doc, "t", use_float=False)
    assert type(want.rows[0][4]) is Decimal
    check(doc, "t", use_float=True)
    check(doc, "t", parse_float=str)


@pytest.mark.parametrize(
    "expect",
    [["a", "b"], ["b", "a"], ["b"], ["a", "c"], ["a", "a"], ["g.x", "a", "b"], []],
)
def test_expect_fields(expect: list[str]) -> None:
    for doc in (b"t[2]{a,b}:\n  1,2\n  3,4\n", b"t[2]{b,a}:\n  1,2\n  3,4\n", b"t[1:]{a,b}:\n  k: 1,2\n"):
        for as_dict in (False, True):
            check(doc, "t", expect_fields=expect, as_dict=as_dict)


def test_several_tables_at_one_prefix() -> None:
    """A prefix through list items matches each item's table; a later header that drifts from
    expect_fields fails after the earlier tables' rows."""
    doc = b"l[3]:\n  - t[1]{a,b}:\n      1,2\n  - t[1]{b,a}:\n      3,4\n  - t[1]{a,c}:\n      5,6\n"
    run = check(doc, "l.item.t", expect_fields=["a", "b"])
    assert run.error is not None and run.error[1] == "unexpected_fields"
    assert len(Run(NATIVE, doc, "l.item.t", expect_fields=["a", "b"]).rows) == 2
    assert len(check(doc, "l.item.t").rows) == 3
    check(doc, "l.item.t", as_dict=True)


@pytest.mark.parametrize(
    "doc,prefix",
    [
        (b"a: 1\nb: 2\nc: 3\nd: 4\n", "b"),
        (b"a:\n  x: 1\nb: 2\n", "a"),
        (b"a[2]: 1,2\nb: 2\n", "a"),
        (b"x: 1", ""),
        (b"- 1\n- 2\n", ""),
        (b"t[1]{a}:\n  1\n", "zz"),
        (b"t[1]{a}:\n  1\n  2\n", "t"),
        (b"t[2]{a}:\n  1\n", "t"),
        (b"", ""),
        (b"t[2]{a,b}:\n  1,2\n  3\n", "t"),
    ],
)
def test_errors(doc: bytes, prefix: str) -> None:
    for strict in (True, False):
        check(doc, prefix, strict=strict)


def test_options_and_fallback() -> None:
    doc = b"t[2]{a}:\n  1\n  2\n"
    for opts in ({"max_line_length": 5}, {"max_fields": 0}, {"max_number_length": 0}, {"indent_size": 4}):
        check(doc, "t", **opts)
    floats = b"t[1:]{a}:\n  k: 1.5\n"
    check(floats, "t", use_float=False, parse_float=None)  # an explicit None: floats, as on the reference
    check(floats, "t", parse_int=None, as_dict=1)
    check(floats, "t", key_field=7, as_dict=True)  # (not a str: the reference builds these dicts)
    for bad in ({"bogus": None}, {"indent_size": 0}, {"start_line": 0}, {"max_depth": -1}, {"max_fields": 1.5}):
        previous = _engine.use(NATIVE)
        try:
            with pytest.raises((TypeError, ValueError)) as native_error:
                list(toonstream.rows(floats, "t", **bad))
        finally:
            _engine.use(previous)
        with pytest.raises((TypeError, ValueError)) as reference_error:
            Run(PYTHON, floats, "t", **bad)
        assert error_key(native_error.value) == error_key(reference_error.value)
    # a str with lone surrogates: the reference decodes it (the native side cannot take it)
    text = "t[1]{a}:\n  \ud800\n"
    assert Run(NATIVE, text, "t").error == Run(PYTHON, text, "t").error


def test_lazy() -> None:
    """Nothing is read before the first row is asked for (as on the reference)."""
    previous = _engine.use(NATIVE)
    try:
        reads: list[int] = []

        class File:
            def __init__(self) -> None:
                self.data = [b"t[2]{a}:\n  1\n", b""]

            def read(self, n: int) -> bytes:
                reads.append(n)
                return self.data.pop(0)

        reader = toonstream.rows(File(), "t")
        assert reader.columns is None and reads == []
        with pytest.raises(ToonDecodeError) as e:
            list(reader)
        assert e.value.code == "count_mismatch" and reader.columns == ["a"]
    finally:
        _engine.use(previous)


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer")
def test_a_signal_interrupts_a_long_feed() -> None:
    # rows of a table outside the prefix: nothing is kept, so memory stays flat however long it runs
    n = 4_000_000
    doc = b"other[%d]{a}:\n" % n + b"  1\n" * n

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        d = _native.RowDecoder("t", header=lambda table: None)
        with pytest.raises(KeyboardInterrupt):
            signal.setitimer(signal.ITIMER_REAL, 0.02)  # (inside: on a loaded machine it can fire at once)
            d.feed(doc)
        signal.setitimer(signal.ITIMER_REAL, 0)
        with pytest.raises(KeyboardInterrupt):  # (the decoder stays failed)
            d.close()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_header_callback_error_is_raised_once_its_line_is_done() -> None:
    """An error of the header callback (the driver's schema check) comes after the line's own
    decode errors, and every later call raises it again."""
    def header(table: Any) -> None:
        raise ToonDecodeError("drift", code="unexpected_fields", line=table.line, column=1, line_text=table.line_text)

    d = _native.RowDecoder("t", header=header)
    with pytest.raises(ToonDecodeError) as e:
        d.feed(b"t[1]{a}:\n  1\n")
    assert (e.value.code, e.value.line, e.value.line_text) == ("unexpected_fields", 1, "t[1]{a}:")
    with pytest.raises(ToonDecodeError) as again:
        d.close()
    assert again.value is e.value or again.value.code == "unexpected_fields"


def test_random_tables() -> None:
    """Seeded random tables (root, member, keyed, in list items) under every delimiter and
    indent, some mutated, with random prefixes, expect_fields, as_dict, use_float, strictness."""
    rng = random.Random(99)
    leaves = [None, True, False, 0, -1, 10**30, -(10**25), 1.5, -0.0, 1e300, "x", "", "a,b", "a|b", "a\tb", " s ",
              "-", "1e5", "null", "é", '"q"', "05", "[1]", "k: v"]  # fmt: skip
    for _ in range(400):
        keys = rng.sample(["id", "name", "a b", "x.y", "k", "é", "v", "#"], rng.randint(1, 4))
        recs = [{k: rng.choice(leaves) for k in keys} for _ in range(rng.randint(1, 5))]
        value, prefix = rng.choice(
            [
                (recs, ""),
                ({"m": 1, "r": recs}, "r"),
                ({"t": {f"e{i}": r for i, r in enumerate(recs)}}, "t"),
                ({"l": [{"t": recs}, {"t": recs}]}, "l.item.t"),
            ]
        )
        indent = rng.choice([1, 2, 3])
        doc = toonstream.dumps(value, indent_size=indent, delimiter=rng.choice([",", "\t", "|"])).encode()
        if rng.random() < 0.3:
            b = bytearray(doc)
            i = rng.randrange(len(b))
            b[i : i + 1] = rng.choice([b"", b",", b"\n", b" ", b'"', b"x", b"|", b"\t"])
            doc = bytes(b)
        check(
            doc,
            rng.choice([prefix, prefix, None, "nope", ""]),
            sizes=(rng.randint(1, 20), 0),
            indent_size=indent,
            as_dict=rng.random() < 0.3,
            use_float=rng.random() < 0.5,
            expect_fields=rng.choice([None, None, keys, keys[::-1], keys[:-1], [*keys, "zz"]]),
            strict=rng.random() < 0.8,
        )

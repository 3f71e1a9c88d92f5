"""The native value builder (``toonstream._native``) against the reference engine.

``_native.loads`` and ``_native.ValueDecoder`` must give exactly what the Python
engine's ``loads`` gives for the same input and options: the same value (types
all the way down: int vs float vs Decimal, a float's sign, key order) or the
same ``ToonDecodeError`` (code, message, line, column, line text), however the
input is chunked.  Inputs: the spec decode fixtures, the corpus, random
mutations of both, and documents ``dumps`` makes of random values.
"""

from __future__ import annotations

import importlib.util
import os
import random
import signal
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toonstream
from toonstream import _engine
from toonstream._engine import ENGINE_VARIABLE
from toonstream._errors import ToonDecodeError

from conftest import REPO, identical, import_native, load_fixtures
from differential import KEYS, LEAVES, error_key, fixture_options, mutate

_native = import_native()

DECODE = load_fixtures("decode")
CORPUS = sorted((REPO / "tests" / "corpus").glob("*.toon"))
CHUNK_SIZES = (1, 2, 3, 7, 64)

Outcome = tuple[str, Any]





def reference(data: Any, **opts: Any) -> Outcome:
    """The Python engine's loads: ("value", v) or ("error", fields)."""
    previous = _engine.use(_engine.select("python"))
    try:
        return "value", toonstream.loads(data, **opts)
    except (ToonDecodeError, ValueError, TypeError) as e:
        return "error", error_key(e)
    finally:
        _engine.use(previous)


def native(data: Any, **opts: Any) -> Outcome:
    try:
        return "value", _native.loads(data, **opts)
    except (ToonDecodeError, ValueError, TypeError) as e:
        return "error", error_key(e)


def fed(chunks: list[Any], **opts: Any) -> Outcome:
    """The native push decoder fed these chunks, then closed."""
    try:
        d = _native.ValueDecoder(**opts)
        for c in chunks:
            d.feed(c)
        return "value", d.close()
    except (ToonDecodeError, ValueError, TypeError) as e:
        return "error", error_key(e)


def same(a: Outcome, b: Outcome) -> bool:
    if a[0] != b[0]:
        return False
    return identical(a[1], b[1]) if a[0] == "value" else bool(a[1] == b[1])


def split(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def check(data: bytes, *, chunked: bool = True, **opts: Any) -> Outcome:
    """Native loads (and, if ``chunked``, the push decoder under every chunk size)
    agrees with the reference; returns the outcome."""
    want = reference(data, **opts)
    got = native(data, **opts)
    assert same(got, want), (data, opts, got, want)
    if chunked:
        for size in CHUNK_SIZES if len(data) < 4096 else (7, 64, 4096):
            got = fed(split(data, size), **opts)
            assert same(got, want), (data, opts, size, got, want)
    return want





# ----------------------------------------------------------------- spec fixtures


@pytest.mark.parametrize("case", [c for _, c in DECODE], ids=[i for i, _ in DECODE])
def test_spec_fixture(case: dict[str, Any]) -> None:
    text = case["input"]
    opts = fixture_options(case)
    want = check(text.encode("utf-8"), **opts)
    assert same(native(text, **opts), want)  # str input
    assert same(fed([text], **opts), want)
    assert same(native(bytearray(text.encode()), **opts), want)
    assert same(native(memoryview(text.encode()), **opts), want)
    assert (want[0] == "error") == bool(case.get("shouldError"))


# ------------------------------------------------------------------------ corpus


@pytest.mark.skipif(not CORPUS, reason="tests/corpus is not present")
@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_corpus(path: Path) -> None:
    data = path.read_bytes()
    for strict in (True, False):
        check(data, strict=strict)


def _parity() -> Any:
    spec = importlib.util.spec_from_file_location("_toon_parity", REPO / "native" / "tools" / "parity.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mutated_documents() -> None:
    """Random mutations of every fixture and corpus document (tools/parity.py's mutator):
    values and errors agree, whole and chunked."""
    parity = _parity()
    rng = random.Random(16)
    n = 0
    for data, strict, indent in parity.seeds():
        for _ in range(3):
            doc = parity.mutate(data, rng)
            check(doc, chunked=rng.random() < 0.3, strict=strict, indent_size=indent)
            n += 1
    assert n > 1000


# --------------------------------------------------------------------- generated

_keys = KEYS
_leaves = LEAVES


def _tables(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    # lists of objects of one key set: tables (and keyed tables, nested groups)
    return st.lists(_keys, min_size=1, max_size=4, unique=True).flatmap(
        lambda ks: st.lists(st.fixed_dictionaries({k: _leaves | st.dictionaries(_keys, _leaves, max_size=2) for k in ks}), max_size=4)
    )


_values = st.recursive(
    _leaves,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_keys, children, max_size=4) | _tables(children),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=_values, indent=st.sampled_from([1, 2, 4]), delimiter=st.sampled_from([",", "\t", "|"]), data=st.data())
def test_generated_documents(value: Any, indent: int, delimiter: str, data: st.DataObject) -> None:
    doc = toonstream.dumps(value, indent_size=indent, delimiter=delimiter).encode("utf-8")
    check(doc, indent_size=indent)
    # and a mutation of it, for the error paths
    doc = mutate(random.Random(data.draw(st.integers(0, 2**32))), doc)
    check(doc, indent_size=indent, strict=data.draw(st.booleans()))


# ----------------------------------------------------------------------- options

_OPTION_DOCS = [
    b"a: 1.5\nb: -0.0\nc: 1e400\nd: 1e-400\ne: -0\nf[3]: 2.50,1E2,-1e-7\n",
    b"t[2]{x,y{p,q}}:\n  1.5,2,3e1\n  0.1,x,-0.0\n",
    b"k[2]{#,v}:\n  a: 1.25\n  b: 2\n",
    b"a:\n    b: 1\n    c[2]:\n        - 1.5\n        - x: 2.5\n",
    b"a:\n  b:\n    c:\n      d: 1\n",
    b"x[2]: 1,2\ny[3]: 1,2\n",
    b"a: 1\na: 2\n",
    b"a: 123456\nb: -1234\nc: 12345678901234567890\n",
    b"h[2]{a,b,c,d}:\n  1,2,3,4\n  5,6,7,8\n",
]


@pytest.mark.parametrize(
    "opts",
    [
        {"strict": False},
        {"indent_size": 4},
        {"indent_size": 4, "strict": False},
        {"parse_float": Decimal},
        {"parse_float": str, "strict": False},
        {"parse_int": str},
        {"parse_int": Decimal, "parse_float": Decimal},
        {"parse_int": float, "strict": False},
        {"max_depth": 0},
        {"max_depth": 1},
        {"max_depth": 2},
        {"max_line_length": 10},
        {"max_number_length": 3},
        {"max_fields": 2},
        {"max_fields": 0},
    ],
    ids=str,
)
def test_options(opts: dict[str, Any]) -> None:
    docs = _OPTION_DOCS + [c["input"].encode() for _, c in DECODE[::7]] + [p.read_bytes() for p in CORPUS[::5]]
    for doc in docs:
        check(doc, **opts)


def test_parse_float_gets_the_token_text() -> None:
    seen: list[str] = []

    def hook(text: str) -> str:
        seen.append(text)
        return f"<{text}>"

    v = _native.loads("a: 1.50\nb[2]: -0.0,1E+3\nc[1]{x}:\n  2e-5\nd: 7", parse_float=hook)
    assert v == {"a": "<1.50>", "b": ["<-0.0>", "<1E+3>"], "c": [{"x": "<2e-5>"}], "d": 7}
    assert seen == ["1.50", "-0.0", "1E+3", "2e-5"]


def test_parse_int_gets_the_token_text() -> None:
    # every integer token, -0 and big ones too, as written; not the floats, not the strings
    # that only look like numbers (05), not the counts
    doc = "a: -0\nb[4]: 1,-0,-12,123456789012345678901234\nt[2]{x,y}:\n  5,-0\n  0,2.5\nc: 05\nd: -0.0\n"
    seen: list[str] = []

    def hook(text: str) -> tuple[str, str]:
        seen.append(text)
        return ("int", text)

    want = reference(doc, parse_int=hook)
    ref_seen, seen[:] = list(seen), []
    got = native(doc, parse_int=hook)
    assert same(got, want) and seen == ref_seen
    assert seen == ["-0", "1", "-0", "-12", "123456789012345678901234", "5", "-0", "0"]
    assert got[1]["c"] == "05" and got[1]["d"] == 0.0 and got[1]["t"][1]["y"] == 2.5
    seen[:] = []
    assert same(fed(split(doc.encode(), 3), parse_int=hook), want) and seen == ref_seen
    # without the hook a -0 is the int 0, as before
    assert identical(_native.loads("a: -0\nb[1]: -0"), {"a": 0, "b": [0]})


def test_parse_int_is_for_the_value_builders_only() -> None:
    # (the Python engine takes it in loads/load only: the other native classes refuse it)
    makers = [
        lambda: _native.ParseDecoder(parse_int=int),
        lambda: _native.ItemsDecoder("item", kv=False, parse_int=int),
        lambda: _native.RowDecoder(None, header=None, parse_int=int),
    ]
    for make in makers:
        with pytest.raises(TypeError, match="parse_int"):
            make()


@pytest.mark.parametrize(
    "option, doc, token, row",
    [("parse_float", "a: 1\nb: 2.5", "2.5", b"a: 2.5\n"), ("parse_int", "a: 1.5\nb: -0", "-0", b"t[1]{a}:\n  7\n")],
)
def test_number_hook_error_propagates(option: str, doc: str, token: str, row: bytes) -> None:
    def hook(text: str) -> Any:
        raise ArithmeticError(f"no {text}")

    with pytest.raises(ArithmeticError, match=f"no {token}"):
        _native.loads(doc, **{option: hook})
    d = _native.ValueDecoder(**{option: hook})
    with pytest.raises(ArithmeticError):
        d.feed(row)
    with pytest.raises(ToonDecodeError) as info:  # the decoder cannot go on after its builder failed
        d.close()
    assert info.value.code == "poisoned"


def test_parse_float_is_only_called() -> None:
    for doc in ("a: 1", "a: 1.5"):
        assert same(native(doc, parse_float=5), reference(doc, parse_float=5))


@pytest.mark.parametrize("bad", [0, -1])
def test_indent_size_is_checked_as_the_python_decoder_checks_it(bad: int) -> None:
    want = reference("a: 1", indent_size=bad)
    assert want[0] == "error"
    assert native("a: 1", indent_size=bad) == want
    with pytest.raises(ValueError, match="indent_size must be >= 1"):
        _native.ValueDecoder(indent_size=bad)


@pytest.mark.parametrize("name", ["max_depth", "max_line_length", "max_number_length", "max_fields"])
def test_limits(name: str) -> None:
    # a negative limit is refused (the Python engine takes it; see the README's limits)
    with pytest.raises(ValueError, match=f"{name} must be >= 0"):
        _native.loads("a: 1", **{name: -1})
    # a limit beyond the machine word is no limit, as it is for the Python engine
    assert same(native("a[2]{x}:\n  1\n  2", **{name: 2**80}), reference("a[2]{x}:\n  1\n  2", **{name: 2**80}))


def test_defaults_are_the_python_decoders() -> None:
    outcomes = []
    for n in (9_998, 9_999, 10_000):  # max_depth's default is where nesting stops
        doc = "a[1]{" + "x{" * n + "y" + "}" * n + "}:\n  7"
        outcomes.append(check(doc.encode(), chunked=False)[0])
    assert "value" in outcomes and "error" in outcomes
    assert native("n: " + "1" * 10_000)[0] == "value"
    assert native("n: 1." + "1" * 10_000)[1][1] == "number_too_long"


def test_bad_input_types() -> None:
    for bad in (None, 1, ["a: 1"], object()):
        with pytest.raises(TypeError):
            _native.loads(bad)
        with pytest.raises(TypeError):
            _native.ValueDecoder().feed(bad)


def test_lone_surrogates_are_unsupported() -> None:
    # the Python engine keeps them (it encodes str with 'surrogatepass'); the
    # core decodes UTF-8 only, so the seam sends such a str to the reference
    with pytest.raises(_engine.Unsupported):
        _native.loads("a: \ud800")
    with pytest.raises(_engine.Unsupported):
        _native.ValueDecoder().feed("a: \udcff\n")
    previous = _engine.use(_engine.select("native"))
    try:
        assert toonstream.loads("a: x\ud800") == {"a": "x\ud800"}
    finally:
        _engine.use(previous)


# ------------------------------------------------------------------ chunking


def test_push_decoder_chunkings_equal_loads() -> None:
    parity = _parity()
    rng = random.Random(7)
    for data, strict, indent in parity.seeds():
        want = native(data, strict=strict, indent_size=indent)
        cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, 5))) if len(data) > 1 else []
        parts = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)])]
        for chunks in (parts, [data], [bytearray(p) for p in parts], [memoryview(p) for p in parts]):
            assert same(fed(chunks, strict=strict, indent_size=indent), want), (data, chunks)


def test_push_decoder_str_chunks_and_close_twice() -> None:
    d = _native.ValueDecoder()
    for c in ["a", "b[2", "]: é,", "y\n"]:
        d.feed(c)
    v = d.close()
    assert v == {"ab": ["é", "y"]}
    assert d.close() is v
    with pytest.raises(ToonDecodeError) as info:
        d.feed(b"b: 1")
    assert info.value.code == "closed"


def test_errors_are_sticky() -> None:
    d = _native.ValueDecoder()
    with pytest.raises(ToonDecodeError) as first:
        d.feed(b"a: 1\n  b: 2\n")
    with pytest.raises(ToonDecodeError) as again:
        d.feed(b"c: 3\n")
    assert error_key(first.value) == error_key(again.value)


# ------------------------------------------------------------- numbers, depth


@pytest.mark.parametrize("digits", [19, 20, 40, 3999, 4000, 4001, 4300, 4301, 9_999, 20_000])
def test_big_ints_are_exact(digits: int) -> None:
    for sign in ("", "-"):
        text = sign + "9" + "8" * (digits - 1)
        doc = f"n: {text}\nt[1]: {text}\nr[1]{{x}}:\n  {text}\n"
        got = _native.loads(doc, max_number_length=30_000)
        n = int(Decimal(text))  # (int(text) refuses more than 4300 digits)
        assert got == {"n": n, "t": [n], "r": [{"x": n}]}
        assert type(got["n"]) is int
        assert same(("value", got), reference(doc, max_number_length=30_000))


def test_int_boundaries() -> None:
    for n in (2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 0, -0, 10**18, 10**19):
        v = _native.loads(f"n: {n}")["n"]
        assert v == n and type(v) is int
    assert check(b"a: -0\nb: -0.0\nc: 0.0e0\nd: -0e-5")[1] == {"a": 0, "b": 0.0, "c": 0.0, "d": 0.0}
    d = _native.loads("a: -0.0")["a"]
    assert str(d) == "0.0"


def _deep_lists(levels: int) -> Iterator[str]:
    yield "[1]:\n"
    for i in range(1, levels):
        yield " " * i + "- [1]:\n"
    yield " " * levels + "- x\n"


def test_deep_nesting_builds_and_drops_without_recursion() -> None:
    levels = 9_000
    doc = "".join(_deep_lists(levels)).encode()
    v = _native.loads(doc, indent_size=1)
    depth = 0
    while isinstance(v, list):
        v = v[0]
        depth += 1
    assert v == "x" and depth == levels
    d = _native.ValueDecoder(indent_size=1)
    for c in split(doc, 1 << 16):
        d.feed(c)
    v = d.close()
    del v  # (CPython's trashcan bounds the dealloc recursion)
    groups = "a[1]{" + "x{" * 9_000 + "y" + "}" * 9_000 + "}:\n  7"
    row = _native.loads(groups)["a"][0]
    for _ in range(9_000):
        row = row["x"]
    assert row == {"y": 7}
    objects = "".join(" " * i + "k:\n" for i in range(3_000)) + " " * 3_000 + "k: 1\n"
    check(objects.encode(), chunked=False, indent_size=1)


def test_too_deep_is_the_reference_error() -> None:
    doc = "".join(_deep_lists(10_002)).encode()
    got = native(doc, indent_size=1)
    assert got[0] == "error" and got[1][1] == "too_deep"
    assert same(got, reference(doc, indent_size=1))


# ------------------------------------------------------------------- signals


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer")
def test_a_signal_interrupts_a_long_loads() -> None:
    # 4M duplicate keys (non-strict: last write wins), so memory stays flat however long it runs
    doc = b"a: 1\n" * 4_000_000

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        for run in (lambda: _native.loads(doc, strict=False), lambda: _feed_all(doc)):
            signal.setitimer(signal.ITIMER_REAL, 0.02)
            with pytest.raises(KeyboardInterrupt):
                run()
            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer")
def test_a_signal_interrupts_one_long_inline_array() -> None:
    """One line of 3M values is one call into the binding, which checked for signals once per
    line: parse's Ctrl-C waited until the whole line's 3M events were built (0.61 s of a 0.75 s
    parse here; now 0.14 s).  No clock can tell that apart from a slow machine but the run's own:
    the interrupted parse takes under half of a whole one."""
    doc = b"a[3000000]: " + b",".join([b"7"] * 3_000_000)

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    engine = _engine.use(_engine.select("native"))
    try:
        whole = min(_timed(lambda: sum(1 for _ in toonstream.parse(doc))) for _ in range(2))
        got: list[Any] = []
        start = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, 0.02)
        with pytest.raises(KeyboardInterrupt):
            got.extend(toonstream.parse(doc))
        interrupted = time.perf_counter() - start
        assert got == [] and interrupted < whole / 2, (interrupted, whole)
        for run in (lambda: list(toonstream.items(doc, "a.item")), lambda: toonstream.loads(doc)):
            signal.setitimer(signal.ITIMER_REAL, 0.02)
            with pytest.raises(KeyboardInterrupt):
                run()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        _engine.use(engine)


def _timed(run: Any) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def _feed_all(doc: bytes) -> Any:
    d = _native.ValueDecoder(strict=False)
    d.feed(doc)
    return d.close()


def test_module_interface() -> None:
    assert _native.API_VERSION == _engine.API_VERSION
    assert _native.loads(b"") == {} == _native.loads("")  # §5: an empty document is an empty object
    assert _native.ValueDecoder().close() == {}
    if os.environ.get(ENGINE_VARIABLE, "") in ("", "native"):
        assert _engine.current().loads is _native.loads  # the seam runs this module


_STRINGS = ["", "a", "key", "x" * 70, "x" * 100_000, "caf\u00e9", "\u00e9", "\U0001f600x", "a\u0000b", "\u007f", "tab\there"]


@pytest.mark.parametrize("s", _STRINGS, ids=lambda s: f"{len(s)}-{s[:6]!r}")
def test_strings_are_exact_python_strs(s: str) -> None:
    # ASCII strings are made by the binding's own str constructor (pystr.rs): the same str in
    # every respect (type, length, ASCII-ness, hash, equality), as keys, values, table cells
    # and long uncached keys alike.
    doc = {s: s, "t": [{"a": s, "b": 1}, {"a": s, "b": 2}], "l": [s, s]}
    text = toonstream.dumps(doc)
    got = _native.loads(text.encode())
    assert identical(got, toonstream.loads(text)) and got == doc
    for v in (next(iter(got)), got[s], got["t"][1]["a"], got["l"][0]):
        assert type(v) is str and v == s and len(v) == len(s) and v.isascii() == s.isascii()
        assert hash(v) == hash(s)
    assert _native.dumps(got, indent_size=2, delimiter=",", max_depth=1000, missing_as_null=False) == text


# ------------------------------------------------------------------------- hooks


def _recorder(pairs: bool) -> tuple[list[Any], Any]:
    """A hook that records what it is given (as a list of pairs, copied at the call) and
    returns a new dict holding it, which its parent then holds."""
    calls: list[Any] = []

    def hook(x: Any) -> Any:
        got = list(x) if pairs else list(x.items())
        calls.append(got)
        return {"#": len(calls), "pairs": got}

    return calls, hook


def check_hooks(data: bytes, **opts: Any) -> None:
    """Native loads and the push decoder (whole and chunked) with each object hook give the
    reference's value or error, and make the same hook calls in the same order (none where the
    document fails)."""
    if not opts.get("strict", True):
        return  # (the reference's: see test_hooks_the_native_engine_refuses)
    for kind in ("object_hook", "object_pairs_hook"):
        want_calls, hook = _recorder(kind == "object_pairs_hook")
        want = reference(data, **opts, **{kind: hook})
        runs = [("loads", lambda **o: native(data, **o))]
        runs += [(f"fed {n}", lambda n=n, **o: fed(split(data, n), **o)) for n in (1, 7, 4096)]
        for name, run in runs:
            calls, hook = _recorder(kind == "object_pairs_hook")
            got = run(**opts, **{kind: hook})
            assert same(got, want), (data, opts, kind, name, got, want)
            assert identical(calls, want_calls), (data, opts, kind, name, calls, want_calls)
        if want[0] == "error":
            assert want_calls == []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=_values, indent=st.sampled_from([1, 2, 4]), data=st.data())
def test_hooks_on_generated_documents(value: Any, indent: int, data: st.DataObject) -> None:
    doc = toonstream.dumps(value, indent_size=indent).encode("utf-8")
    check_hooks(doc, indent_size=indent)
    doc = mutate(random.Random(data.draw(st.integers(0, 2**32))), doc)
    check_hooks(doc, indent_size=indent, strict=data.draw(st.booleans()))


def test_hooks_on_fixtures_and_corpus() -> None:
    docs = _OPTION_DOCS + [c["input"].encode() for _, c in DECODE[::3]] + [p.read_bytes() for p in CORPUS]
    for doc in docs:
        check_hooks(doc)
        check_hooks(doc, strict=False)


def test_no_hook_runs_on_a_document_that_fails() -> None:
    # objects over many 16 KiB slices of the reference's loads, then an error: neither engine calls
    # a hook (they run once the document has decoded), whatever the chunking
    body = b"".join(b"o%d:\n  a: %d\n  b:\n    c: x\n" % (i, i) for i in range(3000))
    for tail in (b"o1:\n  a: 1\n", b'z: "open\n', b"t[2]{a}:\n  1\n"):
        check_hooks(body + tail)
        calls, hook = _recorder(False)
        with pytest.raises(ToonDecodeError):
            toonstream.loads(body + tail, object_hook=hook)
        assert calls == []


def test_hooks_the_native_engine_refuses() -> None:
    # with parse_float its pass could enter a parse_float result; a pairs hook outside strict mode
    # would need pairs a dict does not keep (a repeated key): the seam sends these to the reference
    with pytest.raises(TypeError, match="parse_float"):
        _native.loads(b"a: 1", object_hook=dict, parse_float=float)
    with pytest.raises(TypeError, match="parse_int"):
        _native.ValueDecoder(object_pairs_hook=list, parse_int=int)
    with pytest.raises(TypeError, match="strict"):
        _native.ValueDecoder(object_pairs_hook=list, strict=False)
    with pytest.raises(TypeError, match="strict"):
        _native.loads(b"a: 1", object_hook=dict, strict=False)
    engine = _engine.select("native")
    assert engine.values({"object_hook": dict})
    assert engine.values({"object_pairs_hook": list, "strict": True})
    assert not engine.values({"object_pairs_hook": list, "strict": False})
    assert not engine.values({"object_hook": dict, "strict": False})
    assert not engine.values({"object_hook": dict, "parse_float": float})
    assert not engine.values({"object_pairs_hook": list, "parse_int": int})
    assert engine.values({"parse_int": int}) and engine.values({"parse_int": None, "object_hook": dict})
    # and what the seam sends there is still right
    doc = "a: 1\na: 2.5\n"
    assert toonstream.loads(doc, strict=False, object_pairs_hook=list) == [("a", 1), ("a", 2.5)]
    calls: list[Any] = []
    keyed = "m[2:]{v}:\n  a: 1\n  a: 2\n"  # the replaced entry is an object the hook sees too, as in json
    assert toonstream.loads(keyed, strict=False, object_hook=lambda d: calls.append(d) or d) == {"m": {"a": {"v": 2}}}
    assert calls == [{"v": 1}, {"v": 2}, {"a": {"v": 2}}, {"m": {"a": {"v": 2}}}]
    assert toonstream.loads(doc, strict=False, object_hook=dict, parse_float=str) == {"a": "2.5"}


def test_hooks_run_natively(monkeypatch: pytest.MonkeyPatch) -> None:
    # the native engine answers loads and load with a hook: the reference's hooked builder is not used
    from toonstream import decoder

    def refused(*args: Any) -> Any:
        raise AssertionError("the reference's hooked builder was used")

    monkeypatch.setattr(decoder, "HookedValueBuilder", refused)
    previous = _engine.use(_engine.select("native"))
    try:
        doc = "a[2]{x,g{y}}:\n  1,2\n  3,4\nk[1:]{v}:\n  e: 8\n"
        want = {"a": [("x", 1), ("g", ("y", 2))], "k": 0}
        got = toonstream.loads(doc, object_pairs_hook=tuple)
        assert got == ((("a", [(("x", 1), ("g", (("y", 2),))), (("x", 3), ("g", (("y", 4),)))]), ("k", (("e", (("v", 8),)),))))
        import io

        assert toonstream.load(io.BytesIO(doc.encode()), object_pairs_hook=tuple) == got
        assert want  # (shape of the doc, for the reader)
        with pytest.raises(AssertionError, match="hooked builder"):
            toonstream.loads(doc, object_hook=dict, parse_float=str)  # the reference's turn
    finally:
        _engine.use(previous)


def test_a_signal_interrupts_a_long_loads_with_a_hook() -> None:
    # the decode and the pass over the finished value (every object) let Python run its signal
    # handlers, so Ctrl-C ends the call (a C-level hook runs no bytecode that would)
    import gc

    doc = toonstream.dumps([{"a": i, "b": {"c": i}} for i in range(200_000)]).encode()

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    # (no collections: a handler run inside another library's gc callback would be swallowed there)
    enabled = gc.isenabled()
    gc.disable()
    try:
        with pytest.raises(KeyboardInterrupt):
            signal.setitimer(signal.ITIMER_REAL, 0.05)  # (inside: on a loaded machine it can fire at once)
            for _ in range(50):
                _native.loads(doc, object_hook=len)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if enabled:
            gc.enable()


def test_a_hook_error_at_close_is_raised_again() -> None:
    class Boom(Exception):
        pass

    def boom(d: Any) -> Any:
        raise Boom

    d = _native.ValueDecoder(object_hook=boom)
    d.feed(b"a:\n  b: 1")
    for _ in range(2):  # (a later close raises it again, as a decode error is sticky)
        with pytest.raises(Boom):
            d.close()


def test_decoders_with_hooks_are_collected(tmp_path: Path) -> None:
    # a hook's exception kept for a later close holds the caller's frame (and so the file being
    # read); a hook bound to the decoder's owner is a cycle: the garbage collector sees both
    import gc
    import os
    import weakref

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("counts the open files in /proc/self/fd (Linux)")
    path = tmp_path / "d.toon"
    path.write_text("a:\n  b: 1\n")

    def bad(d: Any) -> Any:
        raise ValueError

    previous = _engine.use(_engine.select("native"))
    try:
        gc.collect()
        before = len(os.listdir("/proc/self/fd"))
        for _ in range(20):
            with pytest.raises(ValueError):
                toonstream.load(open(path, "rb"), object_hook=bad)  # noqa: SIM115 (the leak under test)
        gc.collect()
        assert len(os.listdir("/proc/self/fd")) == before
    finally:
        _engine.use(previous)

    class Holder:
        def __init__(self) -> None:
            self.d = _native.ValueDecoder(object_hook=self.hook)

        def hook(self, d: Any) -> Any:
            return d

    h = Holder()
    ref = weakref.ref(h)
    del h
    gc.collect()
    assert ref() is None


# ------------------------------------------------------------ garbage collector


def _gc_seen_by_parse_float(run: Any) -> list[bool]:
    """What ``gc.isenabled()`` says inside a ``parse_float`` hook while ``run(hook)`` builds."""
    import gc

    seen: list[bool] = []

    def hook(text: str) -> Decimal:
        seen.append(gc.isenabled())
        return Decimal(text)

    run(hook)
    return seen


def _value_decoder_run(hook: Any) -> None:
    d = _native.ValueDecoder(parse_float=hook)
    d.feed(b"a: 1.5\nb[2]: 2.5,")
    d.feed(b"3.5\n")
    d.close()


@pytest.mark.parametrize(
    "run",
    [lambda hook: _native.loads("a: 1.5\nb[2]: 2.5,3.5\n", parse_float=hook), _value_decoder_run],
    ids=["loads", "ValueDecoder"],
)
def test_the_collector_is_paused_while_a_value_is_built_and_restored(run: Any) -> None:
    # the containers under construction cannot be garbage; the collector's passes over them were
    # half of loads' time on nested data (README: implementation choices)
    import gc

    assert gc.isenabled()
    seen = _gc_seen_by_parse_float(run)
    assert seen == [False, False, False]
    assert gc.isenabled()
    gc.disable()
    try:
        # a collector the caller turned off stays off
        _gc_seen_by_parse_float(run)
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("bad", [b"a: 1\n  b: 2\n", b"a[3]: 1,2\n", b'a: "x\n'])
def test_the_collector_is_restored_when_a_build_fails(bad: bytes) -> None:
    import gc

    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            with pytest.raises(ToonDecodeError):
                _native.loads(bad)
            assert gc.isenabled() is enabled
            d = _native.ValueDecoder()
            with pytest.raises(ToonDecodeError):
                d.feed(bad)
                d.close()
            assert gc.isenabled() is enabled

            def boom(text: str) -> Any:
                raise ZeroDivisionError

            with pytest.raises(ZeroDivisionError):
                _native.loads(b"a: 1.5\n", parse_float=boom)
            assert gc.isenabled() is enabled
        finally:
            gc.enable()


def test_hooks_run_with_the_collector_on() -> None:
    # object_hook and friends run after the build, as user code that may make cycles
    import gc

    seen: list[bool] = []

    def hook(d: dict[str, Any]) -> dict[str, Any]:
        seen.append(gc.isenabled())
        return d

    assert _native.loads("a:\n  b: 1\n", object_hook=hook) == {"a": {"b": 1}}
    assert seen and all(seen)

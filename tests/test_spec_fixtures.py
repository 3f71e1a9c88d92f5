"""The official TOON 4.0 conformance fixtures, through every entry point.

Decode cases run through ``loads`` and through the streaming ``Decoder`` fed
whole, one byte at a time and in random splits (same events, same value), and
through ``parse`` against ``ijson.parse`` of the expected JSON.  Encode cases
run through ``dumps`` and round-trip through ``loads``.
"""

from __future__ import annotations

import json
from typing import Any

import ijson
import pytest

import toonstream
from toonstream import _engine
from toonstream._reference.build import ValueBuilder

from conftest import chunkings, flat_events, identical, json_equal, load_fixtures, require_fixtures

DECODE = load_fixtures("decode")
ENCODE = load_fixtures("encode")


def _decode_options(case: dict[str, Any]) -> dict[str, Any]:
    o = case.get("options", {})
    return {"indent_size": o.get("indentSize", 2), "strict": o.get("strict", True)}


def _encode_options(case: dict[str, Any]) -> dict[str, Any]:
    o = case.get("options", {})
    return {"indent_size": o.get("indentSize", 2), "delimiter": o.get("delimiter", ",")}


def test_fixture_count() -> None:
    require_fixtures()
    assert len(DECODE) + len(ENCODE) == 516


@pytest.mark.parametrize("case", [c for _, c in DECODE], ids=[i for i, _ in DECODE])
def test_decode_loads(case: dict[str, Any], engine: str) -> None:
    opts = _decode_options(case)
    if case.get("shouldError"):
        with pytest.raises(toonstream.ToonDecodeError) as info:
            toonstream.loads(case["input"], **opts)
        err = info.value
        assert err.line is not None and err.line >= 1 and err.column is not None and err.code
        assert err.line_text is not None
    else:
        got = toonstream.loads(case["input"], **opts)
        assert json_equal(got, case["expected"]), (got, case["expected"])


def _error(e: toonstream.ToonDecodeError) -> tuple[Any, ...]:
    return (e.code, e.line, e.column, e.line_text, str(e))


def _reference_loads(text: str, opts: dict[str, Any]) -> tuple[Any, Any]:
    """(value, None) or (None, error fields) of the reference engine's loads."""
    previous = _engine.use(_engine.select("python"))
    try:
        return toonstream.loads(text, **opts), None
    except toonstream.ToonDecodeError as e:
        return None, _error(e)
    finally:
        _engine.use(previous)


@pytest.mark.parametrize("case", [c for _, c in DECODE], ids=[i for i, _ in DECODE])
def test_decode_load_chunkings(case: dict[str, Any], engine: str) -> None:
    """load() of chunks, cut every way, on each engine: the reference's value or its exact error."""
    opts = _decode_options(case)
    want, want_error = _reference_loads(case["input"], opts)
    data = case["input"].encode("utf-8")
    for name, chunks in [*chunkings(data), ("str", [case["input"]])]:
        try:
            got = toonstream.load(iter(chunks), **opts)
        except toonstream.ToonDecodeError as e:
            assert _error(e) == want_error, name
        else:
            assert want_error is None, (name, want_error)
            assert identical(got, want), name


def _stream(chunks: list[bytes], opts: dict[str, Any]) -> tuple[list[Any], Any, Exception | None]:
    dec = toonstream.Decoder(**opts)
    events: list[Any] = []
    try:
        for c in chunks:
            events += dec.feed(c)
        events += dec.close()
    except toonstream.ToonDecodeError as e:
        return flat_events(events), None, e
    b = ValueBuilder()
    b.push(events)
    return flat_events(events), b.value, None


@pytest.mark.parametrize("case", [c for _, c in DECODE], ids=[i for i, _ in DECODE])
def test_decode_streaming_chunkings(case: dict[str, Any]) -> None:
    opts = _decode_options(case)
    data = case["input"].encode("utf-8")
    ref_events, ref_value, ref_err = _stream([data], opts)
    for name, chunks in chunkings(data):
        events, value, err = _stream(chunks, opts)
        if case.get("shouldError"):
            assert isinstance(err, toonstream.ToonDecodeError), name
            assert ref_err is not None and (err.line, err.code) == (ref_err.line, ref_err.code), name
        else:
            assert err is None, (name, err)
            assert events == ref_events, name
            assert json_equal(value, case["expected"]), name


@pytest.mark.parametrize(
    "case", [c for _, c in DECODE if not c.get("shouldError")], ids=[i for i, c in DECODE if not c.get("shouldError")]
)
def test_parse_matches_ijson(case: dict[str, Any]) -> None:
    opts = _decode_options(case)
    ours = list(toonstream.parse(case["input"], **opts))
    theirs = list(ijson.parse(json.dumps(case["expected"]).encode()))
    if "LWW" in case["name"] or "last-write-wins" in case["name"]:
        # Duplicate keys: parse reports every key as it appears (as ijson does
        # for JSON with duplicate keys); last-write-wins happens when values
        # are built.  ijson's own builder over our events must give the value.
        builder = ijson.ObjectBuilder()
        for _, event, value in ours:
            builder.event(event, value)
        assert json_equal(builder.value, case["expected"])
    else:
        assert ours == theirs


@pytest.mark.parametrize("case", [c for _, c in ENCODE], ids=[i for i, _ in ENCODE])
def test_encode(case: dict[str, Any], engine: str) -> None:
    opts = _encode_options(case)
    out = toonstream.dumps(case["input"], **opts)
    assert out == case["expected"]
    back = toonstream.loads(out, indent_size=opts["indent_size"])
    assert json_equal(back, case["input"], ordered=False)

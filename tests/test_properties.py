"""Property tests (hypothesis): round trips, streaming == whole, only ToonDecodeError."""

from __future__ import annotations

import json
from typing import Any

import ijson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toonstream
from toonstream import Decoder, ToonDecodeError

from conftest import flat_events, json_equal

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
KEYS = st.one_of(TEXT, st.sampled_from(["id", "name", "a.b", "x_1", "#k", "-k", "", "k:v", "[0]", "true"]))
PRIMS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    TEXT,
    st.sampled_from(["", "-", "#", "null", "1e5", "05", " x", "a,b", "a|b", "a\tb", "[]", "- x", "x: y"]),
)


def _records(children: Any) -> Any:
    # Lists of objects over one key set: these exercise tabular and keyed forms.
    return st.lists(KEYS, min_size=1, max_size=4, unique=True).flatmap(
        lambda ks: st.lists(st.fixed_dictionaries({k: st.one_of(PRIMS, children) for k in ks}), min_size=1, max_size=5)
    )


JSON = st.recursive(
    PRIMS,
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(KEYS, children, max_size=5),
        _records(children),
        _records(children).map(lambda rs: {f"k{i}": r for i, r in enumerate(rs)}),
    ),
    max_leaves=30,
)

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(JSON, st.sampled_from([",", "\t", "|"]), st.sampled_from([1, 2, 4]))
@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_round_trip(value: Any, delimiter: str, indent: int) -> None:
    text = toonstream.dumps(value, delimiter=delimiter, indent_size=indent)
    assert not text.endswith("\n") and " \n" not in text
    back = toonstream.loads(text, indent_size=indent)
    assert json_equal(back, value, ordered=False)
    # the streaming path agrees with itself and with ijson on the same data
    assert list(toonstream.parse(text.encode(), indent_size=indent, buf_size=7)) == list(
        ijson.parse(json.dumps(back).encode())
    )


@SETTINGS
@given(JSON, st.data())
@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_streamed_equals_whole(value: Any, data: st.DataObject) -> None:
    raw = toonstream.dumps(value).encode()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=10)))
    d = Decoder()
    events: list[Any] = []
    prev = 0
    for c in cuts + [len(raw)]:
        events += d.feed(raw[prev:c])
        prev = c
    events += d.close()
    whole = Decoder()
    ref = whole.feed(raw) + whole.close()

    assert flat_events(events) == flat_events(ref)


LINEISH = st.lists(
    st.one_of(
        st.sampled_from(["a:", "  b: 1", "- x", "  - y: 2", "t[2]{a,b}:", "  1,2", "[1]: x", "k[2|]: a|b", "#c", "",
                         "  ", "m[2:]{v}:", "  e: 1", '"q": "x\\n"', "-", "x[0]:", "\t", "   c: 3", '  "a,b",c']),
        st.text(st.sampled_from(list(' -:[]{},|"\\#x0\t')), max_size=12),
    ),
    max_size=12,
)


@settings(max_examples=500, deadline=None)
@given(LINEISH, st.booleans())
def test_grammar_aware_only_decode_errors(lines: list[str], strict: bool) -> None:
    doc = "\n".join(lines)
    try:
        whole = toonstream.loads(doc, strict=strict)
    except ToonDecodeError as e:
        assert e.line is not None and e.column is not None
        whole = e
    # byte-at-a-time gives the same answer
    d = Decoder(strict=strict)
    b: Any
    try:
        evs: list[Any] = []
        for ch in doc.encode():
            evs += d.feed(bytes([ch]))
        evs += d.close()
        from toonstream._reference.build import ValueBuilder

        vb = ValueBuilder()
        vb.push(evs)
        b = vb.value
    except ToonDecodeError as e:
        b = e
    if isinstance(whole, ToonDecodeError):
        assert isinstance(b, ToonDecodeError) and (b.line, b.code) == (whole.line, whole.code)
    else:
        assert json_equal(b, whole)


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_only_decode_errors(data: bytes) -> None:
    try:
        toonstream.loads(data)
    except ToonDecodeError:
        pass


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_only_decode_errors(data: str) -> None:
    for strict in (True, False):
        try:
            toonstream.loads(data, strict=strict)
        except ToonDecodeError:
            pass

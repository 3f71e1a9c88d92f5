"""Streaming encoders: byte-identical to dumps(), bounded memory, clear errors."""

from __future__ import annotations

import io
import json
import os
import tempfile
import tracemalloc
from decimal import Decimal
from typing import Any, Iterator

import ijson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toonstream
from toonstream import ToonEncodeError
from toonstream.streaming import Encoder, encode_events, encode_jsonl, encode_records

from test_properties import JSON, KEYS, PRIMS

DELIMS = st.sampled_from([",", "\t", "|"])
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _exact(value: Any) -> Any:
    """The value as ijson/our JSONL reader sees it (floats as exact Decimal text)."""
    return json.loads(json.dumps(value), parse_float=Decimal)


@SETTINGS
@given(JSON, DELIMS)
def test_events_encoder_matches_dumps(value: Any, delimiter: str) -> None:
    raw = json.dumps(value).encode()
    for events in (ijson.parse(raw), ijson.basic_parse(raw)):
        out = io.StringIO()
        encode_events(events, out, delimiter=delimiter, spool_memory=64)
        assert out.getvalue() == toonstream.dumps(_exact(value), delimiter=delimiter)


RECORDS = st.lists(st.one_of(JSON, st.fixed_dictionaries({"id": st.integers(), "name": PRIMS})), max_size=8)


@SETTINGS
@given(RECORDS, DELIMS, st.one_of(st.none(), KEYS), st.booleans())
def test_jsonl_and_records_match_dumps(records: list[Any], delimiter: str, key: str | None, seekable: bool) -> None:
    data = b"".join(json.dumps(r).encode() + b"\n" for r in records)
    exact = [json.loads(json.dumps(r)) for r in records]
    want = toonstream.dumps(exact if key is None else {key: exact}, delimiter=delimiter)
    out = io.BytesIO()
    src: Any = io.BytesIO(data) if seekable else iter(data.splitlines(keepends=True))
    n = encode_jsonl(src, out, key=key, delimiter=delimiter, spool_memory=64)
    assert n == len(records)
    assert out.getvalue().decode() == want
    out2 = io.StringIO()
    encode_records(iter(exact), out2, key=key, delimiter=delimiter, spool_memory=64)
    assert out2.getvalue() == want


def test_jsonl_keeps_numbers_exact() -> None:
    src = io.BytesIO(b'{"a": 0.1, "b": 1e400, "c": 1.10, "d": ' + b"9" * 5000 + b"}\n")
    out = io.StringIO()
    encode_jsonl(src, out)
    back = toonstream.loads(out.getvalue(), parse_float=Decimal)
    assert back[0]["a"] == Decimal("0.1") and back[0]["b"] == Decimal("1e400") and back[0]["c"] == Decimal("1.1")
    assert back[0]["d"] == int(Decimal("9" * 5000))


def test_jsonl_blank_lines_bom_and_text_files() -> None:
    out = io.StringIO()
    assert encode_jsonl(io.StringIO('\ufeff{"a": 1}\n\n   \n{"a": 2}'), out) == 2
    assert out.getvalue() == "[2]{a}:\n  1\n  2"


def test_jsonl_malformed_line_names_its_number() -> None:
    with pytest.raises(ToonEncodeError) as info:
        encode_jsonl(io.BytesIO(b'{"a": 1}\n\n{"a": }\n'), io.StringIO())
    assert info.value.line == 3 and info.value.column is not None
    with pytest.raises(ToonEncodeError) as info:
        encode_jsonl(iter([b'{"a": 1}\n', b'\xff\n']), io.StringIO())
    assert info.value.line == 2


def test_jsonl_from_path(tmp_path: Any) -> None:
    p = tmp_path / "x.jsonl"
    p.write_text('{"id": 1}\n{"id": 2}\n')
    out = io.StringIO()
    encode_jsonl(p, out, key="rows")
    assert out.getvalue() == "rows[2]{id}:\n  1\n  2"


def test_encoder_rejects_broken_streams() -> None:
    enc = Encoder(io.StringIO())
    enc.send(("start_array", None))
    with pytest.raises(ToonEncodeError):
        enc.close()
    enc = Encoder(io.StringIO())
    with pytest.raises(ToonEncodeError):
        enc.send(("end_map", None))


def _records(n: int) -> Iterator[bytes]:
    for i in range(n):
        yield json.dumps({"id": i, "name": f"user{i}", "score": i * 0.5, "tags": {"a": i % 3, "b": "x"}}).encode() + b"\n"


@pytest.mark.parametrize("seekable", [True, False])
def test_jsonl_memory_is_flat(seekable: bool) -> None:
    def peak(n: int) -> int:
        with tempfile.TemporaryFile() as src, open(os.devnull, "w") as sink:
            if seekable:
                src.writelines(_records(n))
                src.seek(0)
            tracemalloc.start()
            try:
                encode_jsonl(src if seekable else _records(n), sink, spool_memory=1 << 16)
                return tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()

    small, large = peak(5_000), peak(100_000)
    assert large < small * 1.1 + 64 * 1024, (small, large)


# ---------------------------------------------------------------- missing_as_null (opt-in, lossy)

OPTIONAL = st.lists(
    st.dictionaries(st.sampled_from(["id", "name", "email", "n"]), PRIMS, min_size=1, max_size=4), min_size=1, max_size=8
)


@SETTINGS
@given(OPTIONAL, DELIMS, st.booleans())
def test_missing_as_null_streaming_matches_dumps(records: list[Any], delimiter: str, seekable: bool) -> None:
    exact = [json.loads(json.dumps(r)) for r in records]
    want = toonstream.dumps(exact, delimiter=delimiter, missing_as_null=True)
    data = b"".join(json.dumps(r).encode() + b"\n" for r in records)
    out = io.StringIO()
    src: Any = io.BytesIO(data) if seekable else iter(data.splitlines(keepends=True))
    encode_jsonl(src, out, delimiter=delimiter, missing_as_null=True, spool_memory=64)
    assert out.getvalue() == want
    out2 = io.StringIO()
    encode_events(ijson.parse(json.dumps(exact).encode()), out2, delimiter=delimiter, missing_as_null=True)
    assert out2.getvalue() == toonstream.dumps(_exact(exact), delimiter=delimiter, missing_as_null=True)
    # the round trip gives the null-filled records
    back = toonstream.loads(want)
    keys = list(dict.fromkeys(k for r in exact for k in r))
    if want.startswith("[") and "{" in want.split("\n")[0]:
        assert back == [{k: r.get(k) for k in keys} for r in exact]
    # and the default output is the spec's, unaffected by the option's existence
    assert toonstream.dumps(exact, delimiter=delimiter) == toonstream.dumps(exact, delimiter=delimiter, missing_as_null=False)


def test_missing_as_null_shapes() -> None:
    recs = [{"id": 1, "c": {"x": 1}}, {"id": 2, "c": {"x": 2}, "note": "n"}]
    assert toonstream.dumps(recs, missing_as_null=True) == "[2]{id,c{x},note}:\n  1,1,null\n  2,2,n"
    # a nested object missing somewhere cannot be a column (null and objects do not mix)
    assert toonstream.dumps([{"c": {"x": 1}}, {"d": 1}], missing_as_null=True).startswith("[2]:\n  - c:")
    # uniform arrays give the same table either way; empty objects never make a table
    uniform = [{"a": 1}, {"a": 2}]
    assert toonstream.dumps(uniform, missing_as_null=True) == toonstream.dumps(uniform)
    assert toonstream.dumps([{"a": 1}, {}], missing_as_null=True) == "[2]:\n  - a: 1\n  -"

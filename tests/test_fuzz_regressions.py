"""Inputs the fuzzer (tests/fuzz/fuzz_decode.py) found, kept as regression tests.

Each entry: the fuzzer's input in base64 (byte 0: strict flag in bit 0; byte 1:
where to cut the document in two; the rest: the document) and what went wrong.
"""

from __future__ import annotations

import base64
from decimal import Decimal

import pytest

from toonstream import Decoder, ToonDecodeError

FINDINGS = [
    # A UTF-8 BOM split across chunks, with invalid UTF-8 later in the second chunk: the
    # bytes before the bad one were re-decoded without the carried first BOM byte, so the
    # BOM was not skipped and line 1 read differently.  Fix: our own carry of incomplete
    # sequences, so the good prefix decodes exactly.
    "IwHvu79NaXRlbXNbMl1+AQBpdGVtc1syXXtpZCxub3RlfToKICBpZGEsYiIKICAyLCJjLG5vLHQlfTo9INNi",
    # Invalid UTF-8 on line 2 was reported before line 1's malformed header when the whole
    # document came in one chunk; split in two, line 1's error came first.  Fix: lines before
    # the bad bytes are processed first, so errors come in document order for every chunking.
    "ARYiIlsye2ldAAAAJG1lfToKICAsMQFBUzBkYf/f383TvZCd",
]

# A decoded Decimal with more than 28 significant digits came back rounded from dumps():
# encode_decimal called Decimal.normalize(), which rounds to the context precision.
# Fix: no Decimal arithmetic in the encoder (as_tuple/copy_abs/format are exact).
ROUND_TRIPS = ["AABpdGVtc1sxXToKICAtIGlkOiAxCiAgICBpZDogMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzNFMzMzMw=="]


def _outcome(chunks: list[bytes], strict: bool) -> object:
    d = Decoder(strict=strict)
    events: list[object] = []
    try:
        for c in chunks:
            events += d.feed(c)
        events += d.close()
    except ToonDecodeError as e:
        return ("error", e.line, e.code)
    return events


@pytest.mark.parametrize("b64", FINDINGS)
def test_finding(b64: str) -> None:
    data = base64.b64decode(b64)
    strict = bool(data[0] & 1)
    doc = data[2:]
    whole = _outcome([doc], strict)
    for cut in range(len(doc) + 1):
        assert _outcome([doc[:cut], doc[cut:]], strict) == whole, cut
    assert whole[0] == "error"


def test_long_line_reported_after_earlier_errors() -> None:
    doc = b"a[03]: x\nb: " + b"y" * 100 + b"\n"
    whole = _outcome([doc], True)
    assert whole[0] == "error"
    d = Decoder(max_line_length=50)
    with pytest.raises(ToonDecodeError) as info:
        d.feed(b"ok: 1\n" + b"z" * 60 + b"\n")
    assert info.value.code == "line_too_long" and info.value.line == 2


@pytest.mark.parametrize("b64", ROUND_TRIPS)
def test_round_trip_finding(b64: str) -> None:
    import toonstream

    doc = base64.b64decode(b64)[2:]
    value = toonstream.loads(doc, strict=False, parse_float=Decimal)
    assert toonstream.loads(toonstream.dumps(value), parse_float=Decimal) == value


@pytest.mark.parametrize(
    "text",
    ["33333333333333333333333333333E3333", "-1.2345678901234567890123456789012345e-40", "1.000e25",
     "12345678901234567890123456789012345678901234567890.5", "0.100000000000000000000000000000000001"],
)
def test_decimals_beyond_context_precision_are_exact(text: str) -> None:
    import toonstream

    d = Decimal(text)
    assert toonstream.loads(toonstream.dumps([d]), parse_float=Decimal) == [d]


def test_exponent_beyond_decimal_range() -> None:
    # Found by the fuzzer: "2.5e25000777...7" (a 100-digit exponent) overflowed float and then
    # Decimal raised InvalidOperation.  Now a ToonDecodeError, in every number mode.
    import toonstream

    for opts in ({}, {"parse_float": Decimal}):
        with pytest.raises(ToonDecodeError) as info:
            toonstream.loads("n: 2.5e" + "7" * 100, **opts)
        assert info.value.code == "number_out_of_range"
        with pytest.raises(ToonDecodeError):
            list(toonstream.rows("t[1]{a}:\n  1e" + "9" * 30, "t"))
    assert toonstream.loads("n: 1e99999999999999999", parse_float=Decimal)["n"] == Decimal("1e99999999999999999")
    import io

    from toonstream import ToonEncodeError, encode_jsonl

    with pytest.raises(ToonEncodeError):
        encode_jsonl(io.BytesIO(b'{"a": 1.5e' + b"9" * 30 + b"}\n"), io.StringIO())

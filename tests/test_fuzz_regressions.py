"""Inputs the fuzzer (tests/fuzz/fuzz_decode.py) found, kept as regression tests.

Each entry: the fuzzer's input in base64 (byte 0: strict flag in bit 0; byte 1:
where to cut the document in two; the rest: the document) and what went wrong.
"""

from __future__ import annotations

import base64

import pytest

from toonstream import Decoder, ToonDecodeError

FINDINGS = [
    # Invalid UTF-8 on line 2 was reported before line 1's malformed header when the whole
    # document came in one chunk; split in two, line 1's error came first.  Fix: lines before
    # the bad bytes are processed first, so errors come in document order for every chunking.
    "ARYiIlsye2ldAAAAJG1lfToKICAsMQFBUzBkYf/f383TvZCd",
]


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
    assert whole == ("error", 1, "bad_length")


def test_long_line_reported_after_earlier_errors() -> None:
    doc = b"a[03]: x\nb: " + b"y" * 100 + b"\n"
    whole = _outcome([doc], True)
    assert whole == ("error", 1, "bad_length")
    d = Decoder(max_line_length=50)
    with pytest.raises(ToonDecodeError) as info:
        d.feed(b"ok: 1\n" + b"z" * 60 + b"\n")
    assert info.value.code == "line_too_long" and info.value.line == 2

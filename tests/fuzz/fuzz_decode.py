"""Coverage-guided fuzzing of the decoder (and a round trip through the encoder).

Run (not part of CI; needs `pip install atheris`):

    python tests/fuzz/fuzz_decode.py -max_total_time=600 /tmp/toon-fuzz tests/fuzz/seeds tests/corpus

Invariants checked for every input:
1. decoding succeeds or raises ToonDecodeError, nothing else (strict and non-strict);
2. the same bytes fed in two chunks (cut where the input says) give the same value or the same
   error (line and code);
3. a decoded value re-encodes (dumps) to text that decodes back, strictly, to an equal value.
A crash is a finding: it becomes a regression test in tests/test_fuzz_regressions.py.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import atheris

with atheris.instrument_imports():
    import toonstream
    from toonstream import Decoder, ToonDecodeError
    from toonstream._reference.build import ValueBuilder

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import json_equal  # noqa: E402


def decode(chunks: list[bytes], strict: bool) -> tuple[str, Any]:
    d = Decoder(strict=strict)
    b = ValueBuilder()
    try:
        for c in chunks:
            b.push(d.feed(c))
        b.push(d.close())
    except ToonDecodeError as e:
        assert e.line is not None and e.column is not None and e.code, e
        return "error", (e.line, e.code)
    return "ok", b.value


def test_one_input(data: bytes) -> None:
    if len(data) < 2:
        return
    strict = bool(data[0] & 1)
    doc = data[2:]
    cut = data[1] % (len(doc) + 1)
    whole = decode([doc], strict)
    split = decode([doc[:cut], doc[cut:]], strict)
    if whole[0] == "error" or split[0] == "error":
        assert whole == split, (whole, split)
        return
    assert json_equal(whole[1], split[1]), (whole, split)
    try:
        text = toonstream.dumps(whole[1])
    except toonstream.ToonEncodeError:
        return  # e.g. a lone surrogate decoded from a str input (not possible from bytes)
    back = toonstream.loads(text)
    assert json_equal(back, whole[1], ordered=False), (whole[1], text, back)


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()

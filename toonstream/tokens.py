"""Token counts for ``--stats``: a fast offline estimate, or exact o200k counts.

The estimate needs no network and no model files: it splits the text the way
the o200k pre-tokenizer roughly does and weighs each class of piece by a
factor fitted to real o200k_base counts (within +-10% on every benchmark
dataset and format: see benchmarks/README.md, "Token estimate calibration").
``exact=True`` uses a real o200k_base tokenizer when one works offline:
``bpe-openai`` (ships its vocabulary) or ``tiktoken`` (if its vocabulary is
cached).  ``method`` says which one produced the numbers.
"""

from __future__ import annotations

import codecs
import re
from typing import Any

__all__ = ["TokenCounter", "estimate_tokens"]

# An approximation of the o200k pre-tokenizer: one match per pre-token, in
# five classes (one capturing group each): a letter run led by punctuation or
# a tab (",Berlin"), a letter run with an optional leading space (" Berlin"),
# a group of up to three digits, a punctuation run, a whitespace run.
_PRE = re.compile(
    r"([^\r\n\w ][^\W\d_]+)"
    r"|( ?[^\W\d_]+)"
    r"|([0-9]{1,3})"
    r"|( ?[^\s\w]+[\r\n/]*|_+)"
    r"|(\s*[\r\n]+|\s+(?!\S)|\s+)"
)
# Tokens per pre-token of each class: a least-squares fit of the real o200k_base
# counts on the benchmark datasets (benchmarks/token_calibration.py, which
# prints the table recorded in benchmarks/README.md).
_WEIGHTS = (2.412, 1.09, 0.957, 1.063, 0.861)


def estimate_tokens(text: str) -> int:
    """Estimated o200k_base token count of ``text`` (see the module docstring).

    >>> estimate_tokens("users[2]{id,name}:")
    9
    """
    return round(_weighted(text))


def _weighted(text: str) -> float:
    # Unrounded, so that counts over pieces of a text add up to the whole's.
    # Long texts are taken in ~64 KiB pieces cut after a newline (no piece
    # spans a cut), so the match list stays small.
    total = 0.0
    start = 0
    n = len(text)
    while start < n:
        end = n if n - start <= _PIECE else text.find("\n", start + _PIECE) + 1 or n
        found = _PRE.findall(text, start, end)
        for weight, column in zip(_WEIGHTS, zip(*found)):
            total += weight * (len(column) - column.count(""))
        start = end
    return total


_PIECE = 1 << 16


def _exact_encoder() -> Any:
    """A real o200k_base tokenizer that works offline, or None (optional packages)."""
    try:
        import bpe_openai  # ships its vocabularies

        return bpe_openai.get_encoding("o200k_base")
    except Exception:  # not installed, or unusable here: try the next one
        pass
    try:
        import tiktoken

        return tiktoken.get_encoding("o200k_base")
    except Exception:  # not installed, or no cached vocabulary and no network
        return None


class TokenCounter:
    """Counts bytes and tokens of a byte stream fed in arbitrary chunks."""

    def __init__(self, *, exact: bool = False) -> None:
        self.bytes = 0
        self._tokens = 0.0
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._carry = ""
        self._encoder = _exact_encoder() if exact else None
        self.method = "o200k_base (exact)" if self._encoder is not None else "estimated"

    def feed(self, data: bytes) -> None:
        self.bytes += len(data)
        text = self._carry + self._decoder.decode(data)
        cut = text.rfind("\n")  # count whole lines only, so no word is split
        if cut < 0:
            self._carry = text
            if len(text) < 1 << 20:
                return
            cut = len(text) - 1
        self._carry = text[cut + 1 :]
        self._count(text[: cut + 1])

    def _count(self, text: str) -> None:
        if self._encoder is not None:
            self._tokens += len(self._encoder.encode(text))
        else:
            self._tokens += _weighted(text)

    @property
    def total(self) -> int:
        """Tokens including the unterminated last line (call when the stream ended)."""
        if self._carry:
            self._count(self._carry + self._decoder.decode(b"", True))
            self._carry = ""
        return round(self._tokens)

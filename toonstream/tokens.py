"""Token counts for ``--stats``: a fast offline estimate, or exact o200k counts.

The estimate needs no network and no model files.  It models the o200k
pre-tokenizer with counts of byte patterns: every byte is mapped to a class
(letter, digit, space, tab, newline, punctuation; a byte >= 0x80, part of a
non-ASCII character, counts as a letter), and C-level ``bytes.translate`` /
``bytes.count`` passes count the pieces the pre-tokenizer makes: words by
what precedes them (" word", "\\tword", ",word", a bare word), their letters,
digit runs (and runs of 4+: o200k groups digits by three), punctuation runs,
newlines, indentations and blanks before a digit, and "|" (a delimiter that
o200k seldom merges).  Each count is weighed by a factor fitted to real
o200k_base counts (benchmarks/token_calibration.py; within +-10% on every
benchmark dataset and format, see benchmarks/README.md, "Token estimate
calibration").  No Python code runs per token or per line: about twenty
C-level passes per 1 MiB piece (some 30 MB/s on one core).  The text is
counted in pieces cut after a newline, which gives
exactly the count of the whole text (every pattern that spans a newline is
seen with the newline as context); only a run of over ``_PIECE`` bytes
without a newline is cut elsewhere (before a space), which can move the
estimate by a token at such a cut.

``exact=True`` uses a real o200k_base tokenizer when one works offline:
``bpe-openai`` (ships its vocabulary) or ``tiktoken`` (if its vocabulary is
cached).  ``method`` says which one produced the numbers.  The text is
tokenized in pieces of at most ``_EXACT_PIECE`` characters (a tokenizer
refuses or slows down on long inputs), cut where o200k cannot merge across:
after a newline whose next line starts (after any indentation) with a
character other than a line break or "/", else before a space that follows
a non-blank character; the sum over such pieces is the whole text's count.
Only text with neither within ``_EXACT_PIECE`` characters is cut anywhere,
which can change the count by a token or two at each such cut.  Text that
looks like a special token ("<|endoftext|>") is counted as ordinary text.
"""

from __future__ import annotations

import codecs
import functools
import re
from typing import Any, Callable, Iterator

__all__ = ["ERROR_BOUND", "TokenCounter", "estimate_tokens"]

#: The estimate's promised relative error against o200k_base (the README's
#: +-10%; benchmarks/token_calibration.py checks every benchmark dataset and
#: format against it).  ``stats`` calls candidates closer than this a tie.
ERROR_BOUND = 0.10


def _class_of(b: int) -> int:
    c = chr(b)
    if b >= 0x80 or c.isalpha():
        return ord("a")
    if c.isdigit():
        return ord("0")
    if c in " \n\t":
        return b
    if c == "\r":
        return ord("\n")
    if c in "\v\f":
        return ord("\t")
    return ord(".")


_CLASSES = bytes(_class_of(b) for b in range(256))


def _marking(members: bytes) -> bytes:
    """A translation of class bytes: those in ``members`` to b"y", the rest to b"x"."""
    return bytes(ord("y") if b in members else ord("x") for b in range(256))


_LETTERS, _DIGITS, _PUNCT = _marking(b"a"), _marking(b"0"), _marking(b".")

#: What ``_features`` counts, in order (the names benchmarks/token_calibration.py prints).
FEATURES = (
    "word after space", "word after tab", "word after one punctuation", "bare word", "letters",
    "digit runs", "4 digits", "punctuation runs", "newlines", "indentation", "blank before digit", "pipes",
)
# Tokens per counted piece: a least-squares fit of the real o200k_base counts
# on the benchmark datasets (benchmarks/token_calibration.py --fit, which
# prints the table recorded in benchmarks/README.md).
_WEIGHTS = (0.408, 1.109, 1.019, 0.404, 0.155, 0.869, 1.29, 1.086, 1.161, 0.777, 1.063, 0.329)


def _features(data: bytes) -> list[int]:
    """Pattern counts of UTF-8 ``data`` (see ``FEATURES``), read as if a newline
    preceded it.  (``bytes.count`` is fastest for needles whose bytes are rare
    in the class string: it skips over bytes that are not in the needle.)"""
    c = (b"\n" + data).translate(_CLASSES)
    after_space = c.count(b" a")
    after_tab = c.count(b"\ta")
    # ",word": one punctuation byte that starts a piece (o200k gives a word
    # one leading non-letter; a longer punctuation run, or one led by a
    # space, is a piece of its own and the word stands bare)
    after_punct = c.count(b".a") - c.count(b"..a") - c.count(b" .a")
    bare = c.translate(_LETTERS).count(b"xy") - after_space - after_tab - after_punct
    # a run of n digits is ceil(n / 3) pieces: mostly 1, or 2 from 4 digits on
    digits = c.translate(_DIGITS)
    punct = c.translate(_PUNCT).count(b"xy") - after_punct
    return [
        after_space, after_tab, after_punct, bare, c.count(b"a"), digits.count(b"xy"), digits.count(b"yyyy"), punct,
        # (punctuation takes the newlines after it)
        c.count(b"\n") - 1 - c.count(b".\n"),
        # an indentation leaves its last blank to the next piece and is one
        # more piece; a blank before a digit is a piece of its own
        c.count(b"\n  "), c.count(b" 0") + c.count(b"\t0"), data.count(b"|"),
    ]


def _weighted(counts: list[int]) -> float:
    return sum(w * n for w, n in zip(_WEIGHTS, counts))


def estimate_tokens(text: str) -> int:
    """Estimated o200k_base token count of ``text`` (see the module docstring).

    >>> estimate_tokens("users[2]{id,name}:")
    8
    """
    if not isinstance(text, str):
        raise TypeError(f"estimate_tokens takes a str, not {type(text).__name__}")
    counter = TokenCounter()
    counter.feed(text.encode("utf-8", "surrogatepass"))
    return counter.total


#: Bytes counted at a time by the estimate (a cut comes after the last newline in them).
_PIECE = 1 << 20
#: Characters given to an exact tokenizer at a time (bpe-openai refuses 1,000,000).
_EXACT_PIECE = 1 << 17

# A newline after which o200k starts a new piece: the whitespace that
# follows (if any) holds no other line break, and the next character is not
# "/" (a punctuation piece takes the newlines and slashes after it).
_SAFE_NEWLINE = re.compile(r"\n(?![\r\n])(?=[^\S\r\n]*[^\s/]|[^\S\r\n]*\Z)")


def _exact_pieces(text: str, limit: int = _EXACT_PIECE) -> Iterator[str]:
    """``text`` in pieces of at most ``limit`` characters, cut where o200k
    cannot merge across (see the module docstring)."""
    start, n = 0, len(text)
    while n - start > limit:
        end = start + limit
        cut = -1
        i = text.rfind("\n", start, end)
        while i > start:
            if _SAFE_NEWLINE.match(text, i):
                cut = i + 1
                break
            i = text.rfind("\n", start, i)
        if cut < 0:
            i = text.rfind(" ", start + 1, end)
            while i > start and text[i - 1].isspace():
                i = text.rfind(" ", start + 1, i)
            cut = i if i > start else end
        yield text[start:cut]
        start = cut
    if start < n:
        yield text[start:]


@functools.lru_cache(maxsize=1)  # (a vocabulary loads once: the CLI asks before its counters do)
def _exact_encoder() -> tuple[str, Callable[[str], list[int]]] | None:
    """The package name and ``encode_ordinary`` of a real o200k_base
    tokenizer that works offline, or None (optional packages).  Ordinary:
    text such as "<|endoftext|>" in the data is counted as text, not refused
    as a special token."""
    encoding: Any
    try:
        import bpe_openai  # ships its vocabularies

        encoding = bpe_openai.get_encoding("o200k_base")
        return "bpe-openai", encoding.encode_ordinary
    except Exception:  # not installed, or unusable here: try the next one
        pass
    try:
        import tiktoken

        encoding = tiktoken.get_encoding("o200k_base")
        return "tiktoken", encoding.encode_ordinary
    except Exception:  # not installed, or no cached vocabulary and no network
        return None


class TokenCounter:
    """Counts bytes and tokens of a UTF-8 byte stream fed in arbitrary chunks
    (the total does not depend on the chunking).

    >>> c = TokenCounter()
    >>> for chunk in (b"users[2]{id,na", b"me}:\\n  1,Ada\\n  2,Bob"):
    ...     c.feed(chunk)
    >>> c.bytes, c.total == estimate_tokens("users[2]{id,name}:\\n  1,Ada\\n  2,Bob")
    (34, True)
    """

    def __init__(self, *, exact: bool = False) -> None:
        self.bytes = 0
        self._counts = [0] * len(_WEIGHTS)
        self._exact_tokens = 0
        self._pending: list[bytes] = []  # bytes not counted yet
        self._size = 0
        found = _exact_encoder() if exact else None
        self._encode = None if found is None else found[1]
        self._decode = codecs.getincrementaldecoder("utf-8")("replace").decode
        self._text = ""  # exact: the text after the last cut, not tokenized yet
        #: "estimated", or "o200k_base (exact, bpe-openai)" / "... tiktoken)": the tokenizer used
        self.method = "estimated" if found is None else f"o200k_base (exact, {found[0]})"

    def feed(self, data: bytes) -> None:
        self.bytes += len(data)
        self._pending.append(data)
        self._size += len(data)
        if self._size >= _PIECE:
            self._drain(final=False)

    def _drain(self, *, final: bool) -> None:
        buf = b"".join(self._pending)
        self._pending, self._size = [], 0
        if self._encode is not None:
            pieces = list(_exact_pieces(self._text + self._decode(buf, final)))
            self._text = "" if final or not pieces else pieces.pop()
            for piece in pieces:
                self._exact_tokens += len(self._encode(piece))
            return
        if not final:
            cut = buf.rfind(b"\n") + 1
            if cut == 0:  # one very long line: cut before a space, else anywhere
                cut = max(buf.rfind(b" "), 0) or len(buf)
            if cut < len(buf):
                self._pending, self._size = [buf[cut:]], len(buf) - cut
            buf = buf[:cut]
        for k, n in enumerate(_features(buf)):
            self._counts[k] += n

    def merge(self, other: TokenCounter) -> None:
        """Add the bytes and tokens of ``other`` (same method), a text that
        follows this one after a newline (o200k cannot merge across it when
        the next line starts with a non-blank after its indentation)."""
        other.total  # (count its unterminated last line)
        self.bytes += other.bytes
        self._exact_tokens += other._exact_tokens
        for k, n in enumerate(other._counts):
            self._counts[k] += n

    @property
    def total(self) -> int:
        """Tokens so far, the unterminated last line included (read it when the stream ended)."""
        if self._pending or self._text:
            self._drain(final=True)
        if self._encode is not None:
            return self._exact_tokens
        return round(_weighted(self._counts))

"""Column-wise formatting of table rows (encode side).

A table's cells are formatted a column at a time: one ``set(map(type, col))``
(or the kinds the shape check already found) decides the column's kind, then
C-level work does the rest: ``map(str, ...)`` for ints, ``repr`` and two
``str.replace`` passes over the joined column for floats, and for strings a
few byte-level scans over the joined, UTF-8 encoded column (``bytes.translate``
deletes the characters that force quotes; ``in`` looks for line starts and
ends that do).  Only when a scan finds something do the regexes run, to find
the lines; only cells that need it (a string to quote, a float in exponent
form, a huge int, a host type) go through the per-value formatter.  Rows are
then assembled with ``map(delimiter.join, zip(*columns))``.  The output is
exactly what the per-value formatter gives (``tests/test_encoder.py`` checks
both paths).
"""

from __future__ import annotations

import re
from collections import deque
from bisect import bisect_right
from itertools import accumulate, compress, count, repeat
from typing import Any, Callable, Collection, Sequence

from ._grammar import DELIMITERS

_LITERAL = {True: "true", False: "false"}


def _bad_chars(delimiter: str) -> re.Pattern[str]:
    return re.compile(r"[:\"\\\[\]{}\x00-\x09\x0b-\x1f\ud800-\udfff" + re.escape(delimiter) + "]")


def _bad_bytes(delimiter: str) -> bytes:
    # The characters of _bad_chars as UTF-8 bytes: all ASCII, and a multi-byte
    # sequence never contains an ASCII byte.  Lone surrogates cannot be encoded
    # at all, so the encode step catches them.
    return bytes(range(0x0A)) + bytes(range(0x0B, 0x20)) + b':"\\[]{}' + delimiter.encode()


# The §7.2 conditions, split so that each scan over a whole joined column is
# fast: a character class, and patterns that begin with a literal "\n" (the
# regex engine skips ahead to it).  Together they flag a superset of the
# strings that need quoting; flagged strings go through the exact per-value
# formatter, so the result is exact.
_BAD = {d: _bad_chars(d) for d in DELIMITERS}
_BAD_BYTES = {d: _bad_bytes(d) for d in DELIMITERS}
_TO_NUL = {d: bytes.maketrans(_BAD_BYTES[d], bytes(len(_BAD_BYTES[d]))) for d in DELIMITERS}
_LINE_START = re.compile(r"\n(?=[ \t\-#\n]|(?:true|false|null)\n)")  # lead char, empty, keyword
_LINE_END = re.compile(r"[ \t](?=\n)")  # trailing whitespace
# _LINE_START over the encoded column (one pass; the engine skips to each
# "\n"); with a search for b" \n" it shows whether _LINE_START or _LINE_END
# flag anything (a tab is in _BAD_BYTES anyway).
_LINE_MARK = re.compile(rb"\n(?:[ \-#\n]|(?:true|false|null)\n)")
# A numeric-like string (§7.2) starts with a digit or a sign ("-" is a line
# mark already): after this translation such a line starts with "0".
_NUMBER_LEAD = bytes.maketrans(b"+123456789", b"0000000000")
_DIGITS = b"0123456789"
# The skeletons (digits removed) of the numeric-like strings: a superset test.
_NUMBER_SKELETONS = frozenset(
    s + p + e for s in (b"", b"+", b"-") for p in (b"", b".") for e in (b"", b"e", b"e+", b"e-", b"E", b"E+", b"E-")
)


def _line_starts(col: Sequence[str]) -> list[int]:
    """Where each line of ``"\n" + "\n".join(col)`` starts (C-level accumulate)."""
    return list(accumulate(map(_PLUS_ONE, map(len, col)), initial=1))


_PLUS_ONE = (1).__add__


def _line_index(starts: list[int], positions: list[int]) -> set[int]:
    """Indexes of the lines (starting at ``starts``) that contain each position."""
    return {bisect_right(starts, p) - 1 for p in positions}


def format_column(
    col: Sequence[Any], delimiter: str, prim: Callable[[Any], str], kinds: Collection[type] | None = None
) -> list[str]:
    """The cell texts of one column (``prim`` formats a single value; ``kinds``,
    if given, is ``set(map(type, col))``)."""
    if kinds is None:
        kinds = set(map(type, col))
    if len(kinds) == 1:
        (kind,) = kinds
        if kind is str:
            return format_strings(col, delimiter, prim)
        if kind is int:
            try:
                # str(i) is encode_int(i) whenever str() accepts i (CPython's
                # digit limit raises ValueError for the huge ones).
                return list(map(str, col))
            except ValueError:
                pass
        elif kind is float:
            return _floats(col, prim)
        elif kind is bool:
            return list(map(_LITERAL.__getitem__, col))
        elif kind is type(None):
            return ["null"] * len(col)
    return [prim(v) for v in col]


def format_strings(col: Sequence[str], delimiter: str, prim: Callable[[Any], str]) -> list[str]:
    flags = flag_strings(col, delimiter)
    if flags is None:
        return [prim(v) for v in col]
    must, maybe = flags
    if not must and not maybe:
        return col if type(col) is list else list(col)
    out = list(col)
    if must:
        idx = list(must)
        cells = list(map(col.__getitem__, idx))
        if _ESCAPED.search("".join(cells)) is None:  # quote() with nothing to escape
            quoted = list(map(_QUOTED.__mod__, cells))
        else:
            quoted = list(map(prim, cells))
        deque(map(out.__setitem__, idx, quoted), maxlen=0)
    for i in maybe - must:
        out[i] = prim(col[i])
    return out


_ESCAPED = re.compile(r"[\\\"\x00-\x1f]")  # what quote() escapes
_QUOTED = '"%s"'


def flag_strings(col: Sequence[str], delimiter: str) -> tuple[set[int], set[int]] | None:
    """Which strings of ``col`` need quotes: ``(must, maybe)``, the indexes of
    strings that hold a character that forces quotes, and of strings that
    may need them for another reason (a superset of those that do); or None
    when every string must be checked one by one (a string holds a newline
    or a lone surrogate)."""
    framed = "\n" + "\n".join(col) + "\n"
    try:
        raw = framed.encode()
    except UnicodeEncodeError:  # a lone surrogate: the exact formatter reports it
        return None
    if raw.count(b"\n") != len(col) + 1:  # some string holds a newline
        return None
    must: set[int] = set()
    starts: list[int] | None = None
    bad = len(raw) - len(raw.translate(None, _BAD_BYTES[delimiter]))
    if bad > len(col) >> 4:
        # many: every forcing byte becomes NUL, then one C-level test per line
        lines = raw.translate(_TO_NUL[delimiter])[1:-1].split(b"\n")
        must = set(compress(count(), map(bytes.__contains__, lines, repeat(b"\x00"))))
    elif bad:
        starts = _line_starts(col)
        must = _line_index(starts, [m.start() for m in _BAD[delimiter].finditer(framed)])
    maybe: set[int] = set()
    if _LINE_MARK.search(raw) is not None or b" \n" in raw:
        positions = [m.start() + 1 for m in _LINE_START.finditer(framed)]
        positions += [m.start() for m in _LINE_END.finditer(framed)]
        maybe = _line_index(_line_starts(col) if starts is None else starts, positions)
    if b"\n0" in raw.translate(_NUMBER_LEAD):
        lines = raw.translate(None, _DIGITS)[1:-1].split(b"\n")
        if not _NUMBER_SKELETONS.isdisjoint(lines):
            maybe.update(compress(count(), map(_NUMBER_SKELETONS.__contains__, lines)))
    return must, maybe


def _floats(col: Sequence[float], prim: Callable[[Any], str]) -> list[str]:
    framed = "\n" + "\n".join(map(repr, col)) + "\n"
    # repr is encode_float's text except: "3.0" -> "3", "-0.0" -> "0", and the
    # exponent forms, inf and nan (the only reprs with an "e" or an "n").
    framed = framed.replace(".0\n", "\n")
    if "\n-0\n" in framed:  # twice: adjacent matches share their "\n"
        framed = framed.replace("\n-0\n", "\n0\n").replace("\n-0\n", "\n0\n")
    out = framed[1:-1].split("\n")
    if "e" in framed or "n" in framed:
        for i, text in enumerate(out):
            if "e" in text or "n" in text:
                out[i] = prim(col[i])
    return out


def format_columns(
    cols: Sequence[Sequence[Any]],
    delimiter: str,
    prim: Callable[[Any], str],
    indent: str,
    kinds: Sequence[Collection[type] | None] | None = None,
) -> str:
    """Row lines (joined by LF, each starting with ``indent``) for the leaf
    columns of a table (all of one length, at least one row); ``kinds[i]`` is
    ``set(map(type, cols[i]))`` when known."""
    if kinds is None:
        texts = [format_column(col, delimiter, prim) for col in cols]
    else:
        texts = [format_column(col, delimiter, prim, k) for col, k in zip(cols, kinds)]
    sep = "\n" + indent
    if len(texts) == 1:
        return indent + sep.join(texts[0])
    return indent + sep.join(map(delimiter.join, zip(*texts)))


def format_rows(
    tuples: Sequence[tuple[Any, ...]], width: int, delimiter: str, prim: Callable[[Any], str], indent: str
) -> str:
    """Row lines (joined by LF, each starting with ``indent``) for leaf-value tuples."""
    if not tuples:
        return ""
    if not width:
        return indent
    return format_columns(list(zip(*tuples)), delimiter, prim, indent)

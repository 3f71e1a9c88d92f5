"""Column-wise formatting of table rows (encode side).

A table's cells are formatted a column at a time: one ``set(map(type, col))``
(or the kinds the shape check already found) decides the column's kind, then
C-level work does the rest: ``map(str, ...)`` for ints, ``repr`` and two
``str.replace`` passes over the joined column for floats, and for strings a
few byte-level scans over the joined, UTF-8 encoded column (``bytes.translate``
deletes the characters that force quotes; ``in`` and ``min`` look for line
starts and ends that do).  Only when a scan finds something do the regexes
run, to find the lines; only cells that need it (a string to quote, a float in
exponent form, a huge int, a host type) go through the per-value formatter.
A column of ints and floats is formatted as floats when every int is exactly
one (the same texts); any other mix is split by type, each part formatted as a
column of its own and put back in place.  Rows are then assembled with
``map(delimiter.join, zip(*columns))``.  The output is exactly what the
per-value formatter gives (``tests/test_encoder.py`` checks both paths).
"""

from __future__ import annotations

import re
from collections import deque
from itertools import chain, compress, count, repeat
from operator import is_
from typing import Any, Callable, Collection, Iterable, Sequence

from ._errors import ToonEncodeError
from ._grammar import DELIMITERS

_LITERAL = {True: "true", False: "false"}


def _bad_bytes(delimiter: str) -> bytes:
    # The characters that force quotes (§7.2) as UTF-8 bytes: all ASCII, and a
    # multi-byte sequence never contains an ASCII byte.  Lone surrogates cannot
    # be encoded at all, so the encode step catches them.
    return bytes(range(0x0A)) + bytes(range(0x0B, 0x20)) + b':"\\[]{}' + delimiter.encode()


# The §7.2 conditions, checked over a whole column's strings joined by "\n"
# and encoded: a byte class, patterns that begin with a literal "\n" (the
# regex engine skips ahead to it), and per-string C-level work where that is
# cheaper than a scan.  Together they flag a superset of the strings that need
# quoting; flagged strings go through the exact per-value formatter, so the
# result is exact.
_BAD_BYTES = {d: _bad_bytes(d) for d in DELIMITERS}
_BAD_NL = {d: _BAD_BYTES[d] + b"\n" for d in DELIMITERS}
_TO_NUL = {d: bytes.maketrans(_BAD_BYTES[d], bytes(len(_BAD_BYTES[d]))) for d in DELIMITERS}
_LINE_START = re.compile(rb"\n(?=[ \t\-#\n]|\xef\xbb\xbf|(?:true|false|null)\n)")  # lead char, BOM, empty, keyword
_LINE_END = re.compile(rb"[ \t](?=\n)")  # trailing whitespace
# Whether _LINE_START finds anything (a tab is a forcing byte anyway).
_LINE_MARK = re.compile(rb"\n(?:[ \-#\n]|\xef\xbb\xbf|(?:true|false|null)\n)")
# A numeric-like string (§7.2) holds these characters only: with them deleted
# its line is empty.
_NUMBER_CHARS = b"0123456789+-.eE"
_KEYWORDS = frozenset({"true", "false", "null"})
#: Bytes per string (with its "\n") below which a column's strings count as short.
_SHORT = 12
_DIGITS = b"0123456789"
# The skeletons (digits removed) of the numeric-like strings: a superset test.
_NUMBER_SKELETONS = frozenset(
    s + p + e for s in (b"", b"+", b"-") for p in (b"", b".") for e in (b"", b"e", b"e+", b"e-", b"E", b"E+", b"E-")
)


def _line_index(raw: bytes, positions: list[int]) -> set[int]:
    """Indexes of the lines of ``raw`` (``b"\\n" + b"\\n".join(lines) + b"\\n"``)
    that hold each position (the line feed that ends a line belongs to it)."""
    out: set[int] = set()
    line = -1
    prev = 0
    nl = raw.count
    for p in sorted(positions):
        line += nl(b"\n", prev, p)
        prev = p
        out.add(line)
    return out


def _nul_positions(data: bytes) -> list[int]:
    out = []
    find = data.find
    p = find(0)
    while p != -1:
        out.append(p)
        p = find(0, p + 1)
    return out


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
                return list(map(int.__repr__, col))
            except ValueError:
                pass
        elif kind is float:
            return _floats(col, prim, col)
        elif kind is bool:
            return list(map(_LITERAL.__getitem__, col))
        elif kind is type(None):
            return ["null"] * len(col)
        return [prim(v) for v in col]
    if len(kinds) == 2 and int in kinds and float in kinds:
        texts = _ints_as_floats(col, prim)
        if texts is not None:
            return texts
    return _mixed(col, delimiter, prim, kinds)


def _ints_as_floats(col: Sequence[Any], prim: Callable[[Any], str]) -> list[str] | None:
    """A column of ints and floats, formatted as floats when every int is
    exactly a float (else None).  Then ``float(i)``'s text is ``str(i)``:
    ``repr`` gives the exact digits and ".0" below 1e16, and an exponent form
    at or above it, which ``_floats`` sends (with inf and nan) to the
    per-value formatter -- with the original value, so the int's own text."""
    try:
        floats = list(map(float, col))  # float(x) is x for a float
    except OverflowError:  # an int beyond the float range
        return None
    # List equality: identity for the floats (so NaN too), an exact
    # comparison for the ints.
    if floats != (col if type(col) is list else list(col)):
        return None
    return _floats(floats, prim, col)


def _mixed(col: Sequence[Any], delimiter: str, prim: Callable[[Any], str], kinds: Collection[type]) -> list[str]:
    """A column of several kinds: each kind's cells formatted together (as a
    column of that kind), then put back in place."""
    n = len(col)
    types = list(map(type, col))
    out: list[Any] = [None] * n
    try:
        for kind in kinds:
            idx = list(compress(range(n), map(is_, types, repeat(kind))))
            texts = format_column(list(map(col.__getitem__, idx)), delimiter, prim, (kind,))
            deque(map(out.__setitem__, idx, texts), maxlen=0)
    except ToonEncodeError:
        return [prim(v) for v in col]  # the error of the first bad cell, as the per-value path gives it
    return out


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
    n = len(col)
    try:
        raw = ("\n" + "\n".join(col) + "\n").encode()
    except UnicodeEncodeError:  # a lone surrogate: the exact formatter reports it
        return None
    must: set[int] = set()
    # One pass counts the forcing bytes and the line feeds (n + 1 are ours).
    bad = len(raw) - len(raw.translate(None, _BAD_NL[delimiter])) - (n + 1)
    if bad:
        if raw.count(b"\n") != n + 1:  # some string holds a newline
            return None
        marked = raw.translate(_TO_NUL[delimiter])  # every forcing byte becomes NUL
        if bad > n >> 4:  # many: one C-level test per line
            lines = marked[1:-1].split(b"\n")
            must = set(compress(count(), map(bytes.__contains__, lines, repeat(b"\x00"))))
        else:
            must = _line_index(raw, _nul_positions(marked))
    # Every other §7.2 condition is on a whole line or its first or last
    # character.  Per-string C-level work is cheaper than more scans here:
    # every bad first character (empty, " ", "-", "#", a digit or "+") is
    # below ":", so when the smallest string is not, only the keywords and a
    # leading U+FEFF remain: searched for in the text when the strings are
    # short, looked up one by one when they are long.
    if min(col) < ":" or b"\n\xef\xbb\xbf" in raw:
        starts_badly = _LINE_MARK.search(raw) is not None
        numeric = b"\n\n" in raw.translate(None, _NUMBER_CHARS)
    else:
        if len(raw) < _SHORT * n:
            # (rfind: CPython's backward search is faster than ``in`` here)
            starts_badly = -1 != raw.rfind(b"\ntrue\n") or -1 != raw.rfind(b"\nfalse\n") or -1 != raw.rfind(b"\nnull\n")
        else:
            starts_badly = not _KEYWORDS.isdisjoint(col)
        numeric = False
    positions: list[int] = []
    if starts_badly:
        positions = [m.start() + 1 for m in _LINE_START.finditer(raw)]
    if (raw.rfind(b" \n") != -1) if len(raw) < 2 * _SHORT * n else (b" \n" in raw):  # (faster each way)
        positions += [m.start() for m in _LINE_END.finditer(raw)]
    maybe = _line_index(raw, positions) if positions else set()
    if numeric:
        # A numeric-like string holds nothing but "0-9+-.eE": the skeletons
        # of those left when the digits are deleted are a superset test.
        lines = raw.translate(None, _DIGITS)[1:-1].split(b"\n")
        if not _NUMBER_SKELETONS.isdisjoint(lines):
            maybe.update(compress(count(), map(_NUMBER_SKELETONS.__contains__, lines)))
    return must, maybe


def _floats(col: Sequence[float], prim: Callable[[Any], str], orig: Sequence[Any]) -> list[str]:
    """The texts of floats; a text that is not simply ``repr``'s is the
    per-value formatter's for ``orig[i]`` (``col`` is ``orig`` or its values
    as floats, see ``_ints_as_floats``)."""
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
                out[i] = prim(orig[i])
    return out


def format_columns(
    cols: Sequence[Sequence[Any]],
    delimiter: str,
    prim: Callable[[Any], str],
    indent: str,
    kinds: Sequence[Collection[type] | None] | None = None,
    *,
    lead: bool = False,
) -> str:
    """Row lines (joined by LF, each starting with ``indent``) for the leaf
    columns of a table (all of one length, at least one row); ``kinds[i]`` is
    ``set(map(type, cols[i]))`` when known.  ``lead``: an LF before the first
    row too (saves the caller a copy of the text to add it)."""
    if kinds is None:
        texts = [format_column(col, delimiter, prim) for col in cols]
    else:
        texts = [format_column(col, delimiter, prim, k) for col, k in zip(cols, kinds)]
    sep = "\n" + indent
    rows: Iterable[str] = texts[0] if len(texts) == 1 else map(delimiter.join, zip(*texts))
    if lead:
        return sep.join(chain(("",), rows))
    return indent + sep.join(rows)


def format_rows(
    tuples: Sequence[tuple[Any, ...]], width: int, delimiter: str, prim: Callable[[Any], str], indent: str
) -> str:
    """Row lines (joined by LF, each starting with ``indent``) for leaf-value tuples."""
    if not tuples:
        return ""
    if not width:
        return indent
    return format_columns(list(zip(*tuples)), delimiter, prim, indent)

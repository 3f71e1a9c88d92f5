"""Column-wise formatting of table rows (encode side).

A table's cells are formatted a column at a time: one ``set(map(type, col))``
decides the column's kind, then C-level work does the rest (``map(str, ...)``
for ints, ``repr`` plus two regex passes for floats, one multiline regex
search over the joined column for strings).  Only cells that need it (a
string to quote, a float in exponent form, a huge int, a host type) go
through the per-value formatter.  Rows are then assembled with
``map(delimiter.join, zip(*columns))``.  The output is exactly what the
per-value formatter gives (``tests/test_encoder.py`` checks both paths).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate
from typing import Any, Callable, Sequence

from ._grammar import DELIMITERS

_SMALL_INT = 10**18
_LITERAL = {True: "true", False: "false"}


def _bad_chars(delimiter: str) -> re.Pattern[str]:
    return re.compile(r"[:\"\\\[\]{}\x00-\x09\x0b-\x1f\ud800-\udfff" + re.escape(delimiter) + "]")


# The §7.2 conditions, split so that each scan over a whole joined column is
# fast: a character class, and patterns that begin with a literal "\n" (the
# regex engine skips ahead to it).  Together they flag a superset of the
# strings that need quoting; flagged strings go through the exact per-value
# formatter, so the result is exact.
_BAD = {d: _bad_chars(d) for d in DELIMITERS}
_LINE_START = re.compile(r"\n(?=[ \t\-#\n]|(?:true|false|null)\n)")  # lead char, empty, keyword
_LINE_END = re.compile(r"[ \t](?=\n)")  # trailing whitespace
_NUMBER_SKELETON = re.compile(r"\n(?=[+-]?\.?(?:[eE][+-]?)?\n)")  # numeric-like, once digits are removed
_NO_DIGITS = str.maketrans("", "", "0123456789")
_POINT_ZERO = re.compile(r"\.0$", re.M)
_MINUS_ZERO = re.compile(r"^-0$", re.M)


def _line_index(lengths: Sequence[int], positions: list[int]) -> set[int]:
    """Indexes of the lines (of the given lengths, joined by LF after a leading LF)
    that contain each position."""
    starts = list(accumulate(lengths, lambda a, n: a + n + 1, initial=1))
    return {bisect_right(starts, p) - 1 for p in positions}


def format_column(col: Sequence[Any], delimiter: str, prim: Callable[[Any], str]) -> list[str]:
    """The cell texts of one column (``prim`` formats a single value)."""
    kinds = set(map(type, col))
    if len(kinds) == 1:
        kind = kinds.pop()
        if kind is str:
            return _strings(col, delimiter, prim)
        if kind is int:
            if -_SMALL_INT < min(col) and max(col) < _SMALL_INT:
                return list(map(str, col))
        elif kind is float:
            return _floats(col, prim)
        elif kind is bool:
            return list(map(_LITERAL.__getitem__, col))
        elif kind is type(None):
            return ["null"] * len(col)
    return [prim(v) for v in col]


def _strings(col: Sequence[str], delimiter: str, prim: Callable[[Any], str]) -> list[str]:
    framed = "\n" + "\n".join(col) + "\n"
    if framed.count("\n") != len(col) + 1:  # some string holds a newline
        return [prim(v) for v in col]
    positions = [m.start() for m in _BAD[delimiter].finditer(framed)]
    positions += [m.start() + 1 for m in _LINE_START.finditer(framed)]
    if " \n" in framed or "\t\n" in framed:
        positions += [m.start() for m in _LINE_END.finditer(framed)]
    flagged = _line_index(list(map(len, col)), positions) if positions else set()
    skeleton = framed.translate(_NO_DIGITS)
    if _NUMBER_SKELETON.search(skeleton) is not None:
        lines = skeleton[1:-1].split("\n")
        flagged |= _line_index(list(map(len, lines)), [m.start() + 1 for m in _NUMBER_SKELETON.finditer(skeleton)])
    if not flagged:
        return list(col)
    out = list(col)
    for i in flagged:
        out[i] = prim(col[i])
    return out


def _floats(col: Sequence[float], prim: Callable[[Any], str]) -> list[str]:
    joined = "\n".join(map(repr, col))
    if "e" in joined or "n" in joined:  # exponent form, inf or nan somewhere
        return [prim(v) for v in col]
    joined = _POINT_ZERO.sub("", joined)  # 3.0 -> 3
    if "-0" in joined:
        joined = _MINUS_ZERO.sub("0", joined)  # -0.0 -> 0
    return joined.split("\n")


def format_rows(
    tuples: Sequence[tuple[Any, ...]], width: int, delimiter: str, prim: Callable[[Any], str], indent: str
) -> str:
    """Row lines (joined by LF, each starting with ``indent``) for leaf-value tuples."""
    if not tuples:
        return ""
    columns = [format_column(col, delimiter, prim) for col in zip(*tuples)] if width else []
    lines = map(delimiter.join, zip(*columns))
    return indent + ("\n" + indent).join(lines)

"""Column-wise formatting of table rows (encode side).

A table's cells are formatted a column at a time: one ``set(map(type, col))``
(or the kinds the shape check already found) decides the column's kind, then
C-level work does the rest: ``map(str, ...)`` for ints, ``repr`` and two
``str.replace`` passes over the joined column for floats, and for strings
the byte-level scans of ``_quoting.flag_strings`` over the joined column.
Only cells that need it (a string to quote, a float in exponent form, a huge
int, a host type) go through the per-value formatter.
A column of ints and floats is formatted as floats when every int is exactly
one (the same texts); any other mix is split by type, each part formatted as a
column of its own and put back in place.  Rows are then assembled with
``map(delimiter.join, zip(*columns))``.  The output is exactly what the
per-value formatter gives (``tests/test_encoder.py`` checks both paths).
"""

from __future__ import annotations

import sys
from collections import deque
from itertools import chain, compress, repeat
from operator import is_
from typing import Any, Callable, Collection, Iterable, Sequence

from .._errors import ToonEncodeError
from .quoting import ESCAPE_CHARS, flag_strings
from .numbers import MAX_NUMBER_LENGTH

_LITERAL = {True: "true", False: "false"}


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
                # digit limit raises ValueError for the huge ones) and the
                # text is within the decoders' number length: the default
                # limit sees to that; a process that lifted it has the
                # lengths checked (encode_int then refuses the long ones).
                ints = list(map(int.__repr__, col))
                if 0 < sys.get_int_max_str_digits() < MAX_NUMBER_LENGTH or max(map(len, ints), default=0) <= MAX_NUMBER_LENGTH:
                    return ints
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
        if ESCAPE_CHARS.search("".join(cells)) is None:  # quote() with nothing to escape
            quoted = list(map(_QUOTED.__mod__, cells))
        else:
            quoted = list(map(prim, cells))
        deque(map(out.__setitem__, idx, quoted), maxlen=0)
    for i in maybe - must:
        out[i] = prim(col[i])
    return out


_QUOTED = '"%s"'


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

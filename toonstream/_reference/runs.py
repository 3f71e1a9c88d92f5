"""Runs of table row lines split into token columns, for the frame readers.

The reference engine's ``table_columns`` (see ``toonstream._engine``): the
frame readers (``toonstream._frames``) hand it a run of a table's row lines
as bytes and get back the *plain* rows' cells as one list of raw tokens per
column, split by :func:`~.scalars.split_columns` (the same splitter the
machine's block path uses), and the lines the decoder must read itself.

A plain row line sits exactly at the row indentation and holds no quote,
colon, backslash, CR or NUL, and no comment marker or tab right after the
indentation: for such a line the per-line path splits on the delimiter and
converts each trimmed cell, nothing else, so its tokens are all a reader
needs.  Every other line at the row indentation is a *special* line, left
to the decoder (which reads it exactly, or reports it).  Tokens are not
trimmed (the first column keeps the indentation; the readers trim whole
columns) nor converted (they type whole columns).  No polars or pyarrow
here: lists of ``str``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .scalars import split_columns

# Bytes that make a line special wherever they are, and those that do only
# right after the indentation (a comment line, a tab-indented line).
_ANYWHERE = (b'"', b":", b"\\", b"\r", b"\x00")
_LEADING = (b"#", b"\t")

_NOT_INDENTED: dict[int, re.Pattern[bytes]] = {}


def _not_indented(plen: int) -> re.Pattern[bytes]:
    """Matches the LF before a line that is not ``plen`` spaces then a
    character other than a space (shallower, deeper, blank)."""
    pattern = _NOT_INDENTED.get(plen)
    if pattern is None:
        pattern = _NOT_INDENTED[plen] = re.compile(b"\n(?! {%d}[^ \n])" % plen)
    return pattern


@dataclass(frozen=True, slots=True)
class TokenRun:
    """A run split by :func:`table_columns`: ``lines`` lines (``end`` bytes
    from the run's start), ``rows`` of them plain, whose cells are
    ``columns`` (one list of raw tokens per column, in line order; None when
    ``rows`` is 0); ``specials`` the others, as (line index, start, end
    after the LF), byte offsets from the run's start.  ``quoted`` is always
    False (no quoted cell is ever a token here).  Not a tuple: a tuple is a
    verdict."""

    lines: int
    end: int
    rows: int
    columns: list[list[str]] | None
    specials: list[tuple[int, int, int]]
    quoted: bool = False


def table_columns(
    data: bytes, start: int, end: int, plen: int, delim: str, width: int, cap: int
) -> TokenRun | tuple[str, bool]:
    """The first ``cap`` lines of ``data[start:end]`` (complete lines, row
    indentation ``plen``, ``width`` cells each) as a :class:`TokenRun`, or a
    verdict ``(name, False)``: ``"not_indented"`` (some line is not at the
    row indentation: the caller cuts the run before it), ``"not_plain"``
    (the plain lines are not UTF-8) or ``"unhandled"`` (some plain line has
    another width, or the run holds a byte 0x01 or 0x02, which the readers'
    tokens use as marks): the decoder then reads the whole run.

    >>> run = table_columns(b"  1,a\\n  # note\\n  2,b\\n", 0, 21, 2, ",", 2, 10)
    >>> run.columns, run.specials
    ([['  1', '  2'], ['a', 'b']], [(1, 6, 15)])
    """
    data = data[start:end]
    n_lines = data.count(b"\n")
    if n_lines > cap:
        data = data[: len(data) - len(data.split(b"\n", cap)[-1])]
        n_lines = cap
    if b"\x01" in data or b"\x02" in data:
        # (the bytes that mark quoted tokens in the readers' token frames:
        # the decoder reads these rows, as on the native engine)
        return ("unhandled", False)
    if _not_indented(plen).search(b"\n" + data[:-1]) is not None:
        return ("not_indented", False)
    # Only the special lines are located (C-level byte searches); the
    # others are counted.
    starts: set[int] = set()
    for pat in _ANYWHERE:
        i = data.find(pat)
        while i != -1:
            line = data.rfind(b"\n", 0, i) + 1
            starts.add(line)
            i = data.find(pat, data.find(b"\n", line))  # from this line's LF on
    line_start = b"\n" + b" " * plen
    for pat in _LEADING:
        if data[plen : plen + 1] == pat:
            starts.add(0)
        needle = line_start + pat
        i = data.find(needle)
        while i != -1:
            starts.add(i + 1)
            i = data.find(needle, i + len(needle))
    specials: list[tuple[int, int, int]] = []
    pieces: list[bytes] = []
    k = prev = 0  # k: the index of the line starting at prev
    for s in sorted(starts):
        k += data.count(b"\n", prev, s)
        stop = data.find(b"\n", s) + 1
        specials.append((k, s, stop))
        pieces.append(data[prev:s])
        k += 1
        prev = stop
    rows = n_lines - len(specials)
    if not rows:
        return TokenRun(n_lines, len(data), 0, None, specials)
    plain = data if not specials else b"".join(pieces) + data[prev:]
    try:
        text = "\n" + plain[:-1].decode("utf-8")
    except UnicodeDecodeError:
        return ("not_plain", False)
    # (LF alone as the row start: the first column keeps the indentation, as
    # the native engine's tokens do; the readers cut it with the trimming)
    columns = split_columns(text, "\n", delim, width, rows, [])
    if columns is None:
        return ("unhandled", False)
    return TokenRun(n_lines, len(data), rows, columns, specials)

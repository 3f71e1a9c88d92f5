"""The machine's block paths: runs of lines decoded at once, for speed.

Each is an exact shortcut of the per-line path of :mod:`.machine` over the
same lines, and declines (returns the index it was given) wherever it is not
sure, so the per-line path stays the one definition of what a line means
(and the only place an error is raised):

- ``_row_block``: a run of plain table rows, split and typed column by column
  (``Rows`` or, for a value builder, ``Columns``);
- ``_primitive_block``: a run of primitive list items (``- value``), one
  ``Values`` event (opt-in: ``value_runs``);
- ``_member_block``: a run of plain ``key: value`` lines of an object, one
  ``Members`` event (opt-in: ``batches``).

Cool-downs keep a failed attempt from being retried line after line.  The
tests compare each with the per-line path (``Decoder(_block_paths=False)``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable, Sequence

from .._errors import ToonDecodeError
from .events import Columns, Event, Members, Rows, Values
from .grammar import UNQUOTED_KEY
from .numbers import TokenConverter
from .scalars import Fail, quoted_rows, split_columns

if TYPE_CHECKING:
    from .machine import _Frame

_new = tuple.__new__


class Blocks:
    """The block paths, a base of :class:`~toonstream._reference.machine.Machine` (whose
    state they read and advance exactly as its per-line path would)."""

    # (the machine's state these use; set by Machine.__init__)
    strict: bool
    indent_size: int
    max_depth: int
    batches: bool
    convert: TokenConverter
    convert_column: Callable[[Sequence[str]], Any] | None
    out: list[Event]
    started_arrays: int
    _lineno: int
    _rows_end: int
    marks: list[int] | None
    _text: str
    _keys_ok: set[str]

    # Fewer consecutive simple rows than this go through the per-line path;
    # one attempt looks at no more than _MAX_BLOCK lines.
    _MIN_BLOCK = 8
    _MAX_BLOCK = 4096
    _fast_cooldown = 0

    def _row_block(self, frame: _Frame, lines: list[str], i: int, first_lineno: int) -> int:
        """Decode a run of simple row lines at once, column by column.

        A line qualifies when it sits exactly at row depth and holds no colon,
        comment marker or space next to a delimiter: then the per-line path
        would split it on the delimiter and convert each cell, which is what
        this does with C-level ``str.split``/``zip``/``map``.  Lines with
        quotes are split one by one (see ``quoted_rows``).  Anything else,
        including every line that would be an error, is left to the per-line
        path (which reports it precisely).  Returns the index after
        the run (``i`` when there is none worth taking).
        """
        if self._fast_cooldown:
            self._fast_cooldown -= 1
            return i
        limit = min(len(lines), i + self._MAX_BLOCK)  # bounded work per attempt
        if self.strict and frame.length is not None:
            limit = min(limit, i + frame.length - frame.count)  # an extra row takes the slow path
        if limit - i < self._MIN_BLOCK:
            # (a small table: its rows go the per-line way without another look)
            self._fast_cooldown = limit - i
            return i
        plen = frame.depth * self.indent_size
        prefix = " " * plen
        for k, line in enumerate(lines[i : i + self._MIN_BLOCK]):  # cheap look before joining a window
            if not line.startswith(prefix) or line[plen : plen + 1] in (" ", "#", "", "\t") or ":" in line:
                # No run of simple rows starts here: this line and the k after it
                # (up to and including the one that is not simple) go the per-line way.
                self._fast_cooldown = k
                return i
        # (a colon ends the run: a key-value line, or a colon in a quoted cell)
        text, end = self._run_text(lines, i, limit, _not_row_start(plen))
        nrows = text.count("\n", 0, end)  # lines wholly before `end`
        d = frame.delim
        width = frame.width
        text = text[:end]
        patches: list[tuple[int, list[str]]] = []
        if '"' in text:
            text, patches, nrows = quoted_rows(text, plen, d, width, nrows)
        if nrows < self._MIN_BLOCK:
            self._fast_cooldown = nrows
            return i
        j = i + nrows
        columns = split_columns(text, "\n" + prefix, d, width, nrows, patches)
        if columns is None:
            self._fast_cooldown = nrows  # some line has the wrong number of cells
            return i
        # (cells padded with spaces are trimmed by convert_column)
        assert self.convert_column is not None
        try:
            columns = [self.convert_column(col) for col in columns]
        except ToonDecodeError:
            # e.g. an over-long number or a bad escape: the per-line path
            # locates it (and the block is not tried again line after line)
            self._fast_cooldown = nrows
            return i
        if frame.count == 0:
            self.started_arrays += 1
        frame.count += nrows
        self._lineno = first_lineno + j - 1
        self._text = lines[j - 1]
        out = self.out
        if self.batches:  # a value builder: no tuple per row
            out.append(_new(Columns, (columns,)))
        elif out and type(out[-1]) is Rows and (self.marks is None or self._rows_end == first_lineno + i):
            out[-1].rows.extend(zip(*columns))
        else:
            if self.marks is not None:
                self.marks += (len(out), first_lineno + i)
            out.append(Rows(list(zip(*columns))))
        self._rows_end = first_lineno + j
        return j

    _primitive_cooldown = 0
    _primitive_misses = 0  # attempts in a row that took nothing

    def _primitive_miss(self, k: int) -> int:
        # The next k lines go the per-line way; after a few fruitless
        # attempts in a row (a list of objects, say) the pause grows, up to
        # _MAX_BLOCK lines, so that such lists pay for few looks.
        self._primitive_misses += 1
        misses = self._primitive_misses
        self._primitive_cooldown = max(k, 0 if misses < 4 else min(self._MAX_BLOCK, 1 << misses))
        return 0

    @staticmethod
    def _run_text(lines: list[str], i: int, limit: int, not_start: re.Pattern[str]) -> tuple[str, int]:
        """The lines from ``i`` joined ("\\n" before each) and where the run in them ends: before
        the first line ``not_start`` finds, or the line holding the first colon.

        C-level searches over the joined lines, not a Python loop per line; the window grows
        4x while the run fills it, so a short run costs a short join."""
        window = 64
        while True:
            hi = min(limit, i + window)
            text = "\n" + "\n".join(lines[i:hi])
            end = len(text)
            m = not_start.search(text)
            if m is not None:
                end = m.start()
            k = text.find(":", 0, end)
            if k != -1:
                end = text.rfind("\n", 0, k)
            if end < len(text) or hi == limit:
                return text, end
            window *= 4

    def _primitive_block(self, frame: _Frame, lines: list[str], i: int, first_lineno: int) -> int:
        """Decode a run of primitive list items (``- value``) at once, as one
        Values event, the values typed column-wise like table rows.

        A line qualifies when it is exactly the list's indentation, ``- ``
        and a token that starts with neither a space nor ``[`` and holds no
        colon: then the per-line path would convert that token (trailing
        spaces trimmed) as a primitive item, which the column converter does
        for the whole run.  Anything else (an object item, a nested array,
        ``-`` alone, a comment, another indentation) ends the run; a token
        the converter refuses sends the run to the per-line path, which
        reports the error at its line and column.  Returns the index after
        the run (``i`` when there is none worth taking).
        """
        limit = min(len(lines), i + self._MAX_BLOCK)  # bounded work per attempt
        if self.strict:
            assert frame.length is not None
            limit = min(limit, i + frame.length - frame.count)  # an extra item takes the slow path
        if limit - i < self._MIN_BLOCK or frame.depth > self.max_depth:
            self._primitive_cooldown = max(0, limit - i)  # (a short list: its items go the per-line way)
            return i
        plen = frame.depth * self.indent_size
        head = " " * plen + "- "
        hlen = plen + 2
        for k, line in enumerate(lines[i : i + self._MIN_BLOCK]):  # cheap look before joining a window
            if not line.startswith(head) or line[hlen : hlen + 1] in (" ", "[", "") or ":" in line:
                return i + self._primitive_miss(k)
        # (a colon ends the run: an object item, a header, or a colon in a quoted string)
        text, end = self._run_text(lines, i, limit, _not_item_start(plen))
        n = text.count("\n", 0, end)  # lines wholly before `end`
        if n < self._MIN_BLOCK:
            return i + self._primitive_miss(n)
        # (trailing spaces are trimmed by convert_column, as the per-line path trims them)
        tokens = text[:end].replace("\n" + head, "\n")[1:].split("\n")
        assert self.convert_column is not None
        try:
            values = list(self.convert_column(tokens))
        except ToonDecodeError:
            return i + self._primitive_miss(n)  # the per-line path locates the error
        self._primitive_misses = 0
        if frame.count == 0:
            self.started_arrays += 1
        frame.count += n
        j = i + n
        self._lineno = first_lineno + j - 1
        self._text = lines[j - 1]
        out = self.out
        if out and type(out[-1]) is Values:
            out[-1].values.extend(values)
        else:
            out.append(_new(Values, (values,)))
        return j

    def _member_block(self, frame: _Frame, lines: list[str], i: int, first_lineno: int) -> int:
        """A run of plain field lines of the innermost object as one Members event.

        A line qualifies when it is exactly the object's indentation, an
        unquoted key, a colon and a non-empty value other than ``[]`` that
        converts without error, and (strict) the key is new: then the
        per-line path would emit Key + Scalar, which this does in one event.
        Anything else ends the run and takes the per-line path.
        """
        plen = frame.depth * self.indent_size
        prefix = " " * plen
        key_ok = self._keys_ok
        convert = self.convert
        keys = frame.keys
        pairs: list[tuple[str, Any]] = []
        j = i
        n = len(lines)
        while j < n:  # (no lines[i:] copy: a feed's lines may be many, runs short)
            # String methods, not a regex per line: keys repeat, so a key is
            # checked against the unquoted-key grammar once (then remembered).
            line = lines[j]
            if not line.startswith(prefix):
                break
            key, colon, value = line.partition(":")  # an unquoted key holds no colon
            if not colon:
                break
            key = key[plen:].rstrip(" ")  # (a space before the key fails the check)
            if key not in key_ok:
                if UNQUOTED_KEY.fullmatch(key) is None:
                    break
                if len(key_ok) >= _KEYS_OK_SIZE:
                    key_ok.clear()
                key_ok.add(key)
            value = value.strip(" ")
            if not value or value == "[]" or (keys is not None and key in keys):
                break
            try:
                v = convert(value)
            except Fail:
                break
            if keys is not None:
                keys.add(key)
            pairs.append((key, v))
            j += 1
        if j > i:
            frame.count += j - i
            self._lineno = first_lineno + j - 1
            self._text = lines[j - 1]
            self.out.append(_new(Members, (pairs,)))
        return j


_KEYS_OK_SIZE = 4096  # distinct plain keys remembered per decoder


_ROW_START: dict[int, re.Pattern[str]] = {}


def _not_row_start(plen: int) -> re.Pattern[str]:
    """Matches the "\\n" before a line that is not ``plen`` spaces followed by
    row content (deeper, shallower, blank, comment or tab-indented)."""
    pattern = _ROW_START.get(plen)
    if pattern is None:
        pattern = _ROW_START[plen] = re.compile("\n(?! {%d}[^ #\t\n])" % plen)
    return pattern


_ITEM_START: dict[int, re.Pattern[str]] = {}


def _not_item_start(plen: int) -> re.Pattern[str]:
    """Matches the "\\n" before a line that is not ``plen`` spaces, ``- `` and
    a character other than a space or ``[`` (see ``_primitive_block``)."""
    pattern = _ITEM_START.get(plen)
    if pattern is None:
        pattern = _ITEM_START[plen] = re.compile("\n(?! {%d}- [^ \n\\[])" % plen)
    return pattern

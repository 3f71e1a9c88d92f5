"""TOON tables to Polars frames, column by column: the engine behind
``toonstream.polars`` and ``toonstream.arrow``.  Imports polars (an error
naming the ``polars`` extra without it); only those adapters import this
module.

Who owns what:
- the :class:`~toonstream.decoder.Decoder` finds the table, checks every line
  that is not a plain row, and keeps the books (row count, line numbers);
- the engine's ``table_columns`` takes over runs of *plain* row lines
  (exactly the row indentation, no colon, backslash, CR, comment marker or
  escape) and splits them.  The reference's
  (:mod:`toonstream._reference.runs`, with the machine's splitter) gives
  the cells as string tokens, decoded here a column at a time by the
  grammar's column converter (``_reference.numbers``: the one §4 typing of
  the python engine) and classified by the values' kinds (``value_kind``).
  The native one takes quoted cells right against the delimiters too
  (§7.1's escapes unescaped there) and
  classifies each cell as ``value_kind`` classifies its value
  (:class:`NativeRows`): a batch's columns come from its Arrow buffers
  wherever ``convert_values`` would give the same column
  (``FrameReader._typed_native``); what it does not decide (an odd
  number, a Decimal column, a value that does not fit) is
  typed from the same cells' tokens as the reference's are;
- every other row comes from the decoder as a tuple, its non-integers as
  exact ``Decimal``s (made floats once the column's type is known: a
  String column keeps the digits written); both kinds of pieces are
  typed the same way and put back in order.

Typing (one dtype per column; see the README table): null-only -> Null,
true/false -> Boolean, integers -> Int64 (beyond int64: Decimal(38, 0), beyond
38 digits: String), numbers with a fraction or exponent (and integers that a
float holds exactly) -> Float64, anything mixed with strings -> String (numbers
written in their canonical TOON form, exact: ``1.50`` is ``"1.5"``, a number
with more digits than a float holds keeps them).  Quoted tokens are always strings.
With ``try_parse_dates``, a String column of ISO dates or datetimes is Date
or Datetime (see ``iso_dtype``).
"""

from __future__ import annotations

import contextlib
import math
import re
import threading
from bisect import bisect_left
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from operator import itemgetter
from decimal import Decimal
from typing import Any, Callable, Iterator, Literal, Mapping, Sequence, TypeAlias

from ._optional import requires

with requires("reading TOON tables (toonstream.polars, toonstream.arrow.iter_batches/read_table)"):
    import polars as pl

from ._reference.build import leaf_names
from ._errors import SCHEMA_HINT, ToonDecodeError
from ._reference.events import Fields, StartTable
from ._reference.numbers import (
    MAX_NUMBER_LENGTH,
    decimal_float,
    decimal_value_text,
    encode_float,
    int_value_text,
    make_column_converter,
    make_converter,
)
from ._reference.runs import TokenRun, table_columns
from ._reference.scalars import Fail, _unescape, find_unquoted, split_cells
from ._consumers import RowsAdapter, check_names
from .decoder import DEFAULT_MAX_LINE_LENGTH, Decoder, TableContext

# Bytes taken over per fast step (bounded memory: a step holds one chunk and
# its string columns).  Also the longest line the fast path can meet, so it
# is only used when max_line_length allows lines this long.
CHUNK = 4 << 20
# Bytes fed to the decoder per step outside plain-row runs: small, so that
# the fast path takes over soon after a table header.
FEED = 64 << 10
FIRST_FEED = 4 << 10

_FLOAT_EXACT = 15  # digits of an integer that a float always holds exactly

# ------------------------------------------------------------------ pieces of a table


class DtypeNameError(pl.exceptions.SchemaError, ValueError):
    """A ``schema``/``schema_overrides`` name that does not say which columns
    it is for, or a ``schema`` without a table's column (a Polars
    ``SchemaError``, as ``read_csv`` raises for the latter; the CLI reports it
    as a usage error)."""


# The native splitter types number tokens of up to this many characters
# itself and leaves longer ones to the reference (native/src/columns.rs
# ODD_LEN); it does not apply max_number_length, so a smaller limit takes
# the reference's splitter, whose converter applies it.
NATIVE_NUMBER_LEN = 40


def _splitter(max_number_length: int = MAX_NUMBER_LENGTH) -> Callable[[bytes, int, int, int, str, int, int], Any]:
    """The engine's ``table_columns``, when it has one and the number limit
    is not below ``NATIVE_NUMBER_LEN``; else the reference's
    (:func:`toonstream._reference.runs.table_columns`: token lists, typed
    here).  The native columns reach Polars through the Arrow PyCapsule
    interface: no pyarrow needed."""
    from . import _engine

    splitter = _engine.current().table_columns
    if max_number_length < NATIVE_NUMBER_LEN:
        splitter = None
    return splitter if splitter is not None else table_columns


def _key_set(splitter: Any) -> Callable[[], Any] | None:
    """The engine's set of entry keys, for a reader with the engine's
    ``splitter`` (None: the reference's ``set``)."""
    from . import _engine

    engine = _engine.current()
    return engine.key_set if splitter is not None and splitter is engine.table_columns else None


class NativeRows:
    """Plain rows split by the native engine (``_engine.table_columns``):
    rows ``lo..hi`` of its columns object, leaf columns ``sel`` of it.  The
    cells are typed there (kind bits per cell, values as Arrow buffers);
    :meth:`tokens` gives the same rows as string tokens (quoted cells
    marked, see ``QUOTED``) wherever the reference's typing takes over.

    >>> from toonstream import _engine
    >>> split = _engine.current().table_columns
    >>> data = b"  1,a\\n  2,b\\n"
    >>> rows = NativeRows(split(data, 0, len(data), 2, ",", 2, 10), 0, 2, [0, 1]) if split else None
    >>> rows is None or rows.series(0, "int64").to_list() == [1, 2]
    True
    """

    __slots__ = ("cols", "lo", "hi", "sel")

    def __init__(self, cols: Any, lo: int, hi: int, sel: list[int]) -> None:
        self.cols, self.lo, self.hi, self.sel = cols, lo, hi, sel

    @property
    def height(self) -> int:
        return self.hi - self.lo

    @property
    def columns(self) -> list[str]:
        """The token frame's column names (``c`` + the leaf index)."""
        return [f"c{j}" for j in self.sel]

    def slice(self, offset: int, length: int | None = None) -> NativeRows:
        lo = min(self.lo + offset, self.hi)
        hi = self.hi if length is None else min(lo + length, self.hi)
        return NativeRows(self.cols, lo, hi, self.sel)

    def select(self, names: list[str]) -> NativeRows:
        index = {n: j for n, j in zip(self.columns, self.sel)}
        return NativeRows(self.cols, self.lo, self.hi, [index[n] for n in names])

    def bits(self, i: int) -> int:
        """Kind bits of selected column ``i``'s cells, or-ed (of a run typed as
        split: the whole run's, each cell checked against the plan; only
        ``_typed_native`` asks then, inference having read runs split before)."""
        return int(self.cols.bits(self.sel[i], self.lo, self.hi))

    def series(self, i: int, kind: str) -> pl.Series:
        """Selected column ``i`` as a Series: ``int64``, ``float64``,
        ``decimal128`` (Decimal(38, 0)), ``bool``, ``utf8`` (the values; the
        caller checked that the cells' kinds fit), ``raw`` (as ``utf8``, but
        numbers as their tokens, not their canonical text) or ``tokens`` (the
        raw tokens, quoted cells marked).  The column comes as an Arrow array through the PyCapsule
        interface (no copy); strings as string views, Polars' own layout:
        short ones sit in their views, only longer ones are copied (into a
        buffer of their own, so that a frame does not hold on to the whole
        run)."""
        native = "views" if kind == "utf8" else kind
        column = self.cols.arrow(self.sel[i], self.lo, self.hi, native)
        return pl.Series(column).alias(f"c{self.sel[i]}")

    def tokens(self) -> pl.DataFrame:
        """These rows as string tokens, one column per leaf (before FrameReader._clean)."""
        return pl.DataFrame([self.series(i, "tokens") for i in range(len(self.sel))])

    def row(self, k: int) -> tuple[Any, ...]:
        return self.slice(k, 1).tokens().row(0)

    def line(self, k: int) -> str | None:
        """Row ``k``'s line as written, for an entry row (a keyed table's);
        None for a table's row (``row`` rebuilds it)."""
        if not self.cols.keyed:
            return None
        return str(self.cols.row_line(self.lo + k).decode("utf-8")).rstrip("\n")


#: plain rows: the reference's string frame (token columns), or the native engine's columns
Plain: TypeAlias = "pl.DataFrame | NativeRows"


class Piece:
    """A run of consecutive rows: the plain rows' string columns (``frame``,
    fast path) and the decoder's tuples (``rows``) for the others, which sit
    at row positions ``pos`` (sorted) of the run.

    Where the rows stand (error locations only): ``line`` is the first row's
    line (0 if unknown); ``gaps`` the offsets from it of lines between rows
    that are not rows (comment lines); ``texts`` the decoder rows' lines
    (None: not kept); ``full`` the frame before a projection (the cells of
    a plain row's line); ``src``/``skip`` for rows the decoder read from a
    fed chunk: the chunk, searched for the row lines only when an error
    needs them (see :func:`_locate_rows`), and how many of them belong to
    earlier pieces."""

    __slots__ = ("frame", "rows", "pos", "line", "n", "gaps", "texts", "full", "src", "skip")

    def __init__(
        self,
        frame: Plain | None,
        rows: list[tuple[Any, ...]],
        pos: list[int] | None,
        line: int,
        *,
        gaps: list[int] | None = None,
        texts: list[bytes] | None = None,
        full: Plain | None = None,
        src: _Src | None = None,
        skip: int = 0,
    ) -> None:
        self.frame = frame
        self.rows = rows
        # None: all rows are decoder rows (no frame), in order.
        self.pos = pos
        self.line = line
        self.n = (frame.height if frame is not None else 0) + len(rows)
        self.gaps = gaps or []
        self.texts = texts
        self.full = full if full is not None else frame
        self.src = src
        self.skip = skip

    def offset(self, r: int) -> int:
        """Line offset (from ``line``) of row ``r`` of the piece."""
        for g in self.gaps:
            if g > r:
                break
            r += 1
        return r

    def split(self, k: int) -> tuple[Piece, Piece]:
        """The first k rows and the rest."""
        off = self.offset(k)
        line2 = self.line + off if self.line else 0
        gaps1 = [g for g in self.gaps if g < off]
        gaps2 = [g - off for g in self.gaps if g > off]
        if self.frame is None:
            t1, t2 = (self.texts[:k], self.texts[k:]) if self.texts is not None else (None, None)
            return (
                Piece(None, self.rows[:k], None, self.line, gaps=gaps1, texts=t1, src=self.src, skip=self.skip),
                Piece(None, self.rows[k:], None, line2, gaps=gaps2, texts=t2, src=self.src, skip=self.skip + k),
            )
        pos = self.pos or []
        e = bisect_left(pos, k)  # decoder rows among the first k
        f = k - e
        t1, t2 = (self.texts[:e], self.texts[e:]) if self.texts is not None else (None, None)
        full = self.full
        assert full is not None
        return (
            Piece(self.frame.slice(0, f), self.rows[:e], pos[:e], self.line, gaps=gaps1, texts=t1, full=full.slice(0, f)),
            Piece(
                self.frame.slice(f), self.rows[e:], [p - k for p in pos[e:]], line2, gaps=gaps2, texts=t2, full=full.slice(f)
            ),
        )


# A fed chunk's rows, located on demand: (the text: an unfinished line before
# the chunk, then the chunk; its first line's number; the matching table
# headers that start in it, as (line, indentation); whether a matching table
# is open at its start, and that table's row indentation if known).
_Src = tuple[bytes, int, tuple[tuple[int, int], ...], bool, "int | None"]


def _locate_rows(src: _Src) -> list[tuple[int, bytes]]:
    """(line number, line) of each row line of the matching tables in a fed
    chunk, in order: lines at the row indentation after a header (or from
    the start, if a table is open there) up to a shallower line; comment and
    blank lines skipped.  The decoder read the same rows from it."""
    text, first, headers, in_table, indent = src
    starts = dict(headers)
    parts = text.split(b"\n")
    if not text.endswith(b"\n"):
        parts.pop()  # an unfinished line: its row comes later
    out: list[tuple[int, bytes]] = []
    header_indent = -1
    for k, raw in enumerate(parts):
        number = first + k
        if number in starts:
            in_table, indent, header_indent = True, None, starts[number]
            continue
        line = raw[:-1] if raw.endswith(b"\r") else raw
        content = line.lstrip(b" ")
        if not in_table or not content.strip(b" \t") or content[:1] == b"#":
            continue
        ind = len(line) - len(content)
        if indent is None:
            if ind <= header_indent:
                in_table = False
                continue
            indent = ind
        if ind == indent:
            out.append((number, line))
        elif ind < indent:
            in_table = False
    return out


def _blocks(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """The input in blocks of exactly :data:`CHUNK` bytes (the last
    shorter), whatever sizes the reads had: a read of that size is its own
    block (no copy); smaller or larger ones are cut and joined."""
    parts: list[bytes | memoryview] = []
    size = 0
    for more in chunks:
        if not parts and len(more) == CHUNK:
            yield more  # (a file read: the block as read)
            continue
        view = memoryview(more)
        while len(view):
            take = view[: CHUNK - size]
            parts.append(take)
            size += len(take)
            view = view[len(take) :]
            if size == CHUNK:
                yield b"".join(parts)
                parts, size = [], 0
    if parts:
        yield b"".join(parts)


def _regions(chunks: Iterator[bytes]) -> Iterator[tuple[bytes, int, int]]:
    """The input as ``(data, start, end)``: ``data[start:end]`` is whole
    lines, in order; the last may lack its line end.  A block's lines are
    read in place: only the line that runs across two blocks is copied
    (joined), so no byte of a big input is copied twice (a join of the rest
    with each next chunk was a full copy of the input).  The regions end at
    the lines around each multiple of :data:`CHUNK` (:func:`_blocks`), so
    where the decoder is fed does not depend on how the source was read."""
    carry: list[bytes | memoryview] = []  # the unfinished line, in pieces
    for more in _blocks(chunks):
        first = more.find(b"\n")
        if first < 0:  # (a line longer than a block)
            carry.append(more)
            continue
        start = 0
        if carry:
            head = b"".join((*carry, memoryview(more)[: first + 1]))
            yield head, 0, len(head)
            start = first + 1
        last = more.rfind(b"\n") + 1
        if last > start:
            yield more, start, last
        carry = [memoryview(more)[last:]] if last < len(more) else []
    if carry:
        tail = b"".join(carry)
        yield tail, 0, len(tail)


class TableScan:
    """Drive a Decoder over ``chunks`` (bytes) and produce the rows of the
    table(s) at ``path`` as :class:`Piece` objects.

    ``path``: the table's ijson prefix; None picks the root table, else the
    root object's first tabular member (an array of records that is not a
    table, coming first, ends the scan with ``not_tabular``: ``ahead.path``
    then says where it is, for :mod:`toonstream._nested`).
    """

    def __init__(
        self,
        chunks: Iterator[bytes],
        path: str | None,
        *,
        key_field: str = "key",
        limit: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        options = dict(options or {})
        options.setdefault("parse_float", None)  # floats
        # (no held rows: this reader pairs lines and rows itself, feed by feed)
        # Runs of plain rows are split column-wise by the engine (a very
        # small line limit leaves every row to the decoder, which checks it).
        numbers = _option(options, "max_number_length", MAX_NUMBER_LENGTH)
        self.splitter = _splitter(numbers) if _option(options, "max_line_length", DEFAULT_MAX_LINE_LENGTH) >= CHUNK else None
        self.fast = self.splitter is not None
        # A keyed table's entry keys: in the engine's set, which takes a
        # split run's keys as they are (no str each), if it has one.
        self.key_set = _key_set(self.splitter)
        self.decoder = Decoder(hold_rows=False, _line_marks=True, _key_set=self.key_set, **options)
        self.adapter = RowsAdapter(
            path, as_dict=False, key_field=key_field, where=self.decoder.event_line, where_text=self.decoder.event_line_text
        )
        self.adapter.on_table = self._table
        self.path = path
        from ._nested import RecordsAhead

        # The automatic target is an array of records (tabular or not): one
        # that is not a table, first, ends this reader (see _nested).
        self.ahead = RecordsAhead() if path is None else None
        self.chunks = chunks
        self.limit = limit
        #: per leaf column, how the native splitter types its cells once the
        #: types are known (FrameReader._plan); None: cells, typed later
        self.plan: list[tuple[str, int]] | None = None
        #: while set (and no plan): a fast run takes at most this many bytes
        #: (FrameReader: the types are decided after the first rows)
        self.run_cap: int | None = None
        self.names: list[str] | None = None  # the leaf column names (entry key first if keyed)
        self.fields: Fields | None = None
        self.keyed = False
        self.header: StartTable | None = None  # the first matching table's header
        self._headers: list[tuple[int, int]] = []  # (line, indentation) of headers in the chunk being fed
        self._tail: bytes | None = b""  # the unfinished last line fed (None: too long, not kept)
        self.done = 0
        self.plen, self.delim = 0, ","  # of the latest fast step (for error texts)
        self.quoted = False  # some plain rows carry marked quoted tokens

    # -- the loop

    def pieces(self) -> Iterator[Piece]:
        for data, pos, size in _regions(self.chunks):
            yield from self._region(data, pos, size)
            if self._full():
                return
        decoder, adapter = self.decoder, self.adapter
        src = self._before_feed(b"")
        events = decoder.close()
        if self.ahead is not None and self.ahead.push(events):
            raise self._not_found()  # (as in _region: the last line, without its line end, opens it)
        rows = adapter.push(events)
        if rows:
            src = self._after_feed(src, b"")
            if src is not None:  # the last line had no line end
                src = (src[0] + b"\n", *src[1:])
            yield from self._emit(Piece(None, rows, None, 0, src=src))
        if not adapter.found:
            raise self._not_found()

    def _region(self, buf: bytes, pos: int, size: int) -> Iterator[Piece]:
        """The pieces of the whole lines ``buf[pos:size]``: runs of plain rows
        by the fast path, the rest fed to the decoder in small pieces; it
        stops once the row limit is reached."""
        decoder, adapter = self.decoder, self.adapter
        slow_to = 0  # entry rows before this offset are the decoder's (see below)
        first_feed, feed = pos, FIRST_FEED // 2
        while pos < size:
            if self.fast and pos >= slow_to and adapter.in_target():
                ctx = decoder.table_context()
                if ctx is not None:
                    end = 0
                    if self.run_cap is not None and self.plan is None:
                        # (the reader is yet to decide the types: a short run,
                        # after which the rest may be typed as split)
                        end = buf.rfind(b"\n", pos, min(size, pos + self.run_cap)) + 1
                    if end <= pos:
                        end = buf.rfind(b"\n", pos, min(size, pos + CHUNK)) + 1
                    if end > pos and ctx.keyed and self.splitter is table_columns:
                        slow_to = end  # (the reference splits no entry rows)
                    elif end > pos:
                        try:
                            piece = self._fast(buf, pos, end, ctx)
                        except ToonDecodeError:
                            # The rows before the bad line first: a type error
                            # among them comes before this one in the document.
                            if self._partial is not None:
                                yield from self._emit(self._partial)
                            if self._full():
                                return  # (the row limit came first: the rest is not read)
                            raise
                        if piece is not None:
                            pos += self._consumed
                            yield from self._emit(piece)
                            if self._full():
                                return
                            continue
                        if self._declined:
                            # Entry rows the engine left to the decoder: it
                            # reads them all, not a piece of them at each
                            # try (a try splits up to CHUNK bytes).
                            slow_to = end
            # The decoder's way: a small piece, ending at a line end if it can;
            # before the target, smaller ones first (a table's header is then
            # found without the reference reading many rows after it: entry
            # rows cost it some 30 us each), growing to FEED.
            if adapter.in_target():
                feed = FEED
            else:
                feed = min(FEED, feed * 2 if pos > first_feed else FIRST_FEED)
            stop = min(size, pos + feed)
            if stop < size:
                nl = buf.rfind(b"\n", pos, stop)
                if nl >= pos:
                    stop = nl + 1
            chunk = buf[pos:stop]
            src = self._before_feed(chunk)
            try:
                events = decoder.feed(chunk)
                if self.ahead is not None and self.ahead.push(events):
                    raise self._not_found()  # an array of records comes first (read by _nested)
                rows = adapter.push(events)
            except ToonDecodeError as e:  # the rows before the bad line first (as above)
                before = decoder.events_before_error()
                if self.ahead is not None and self.ahead.push(before):
                    # (an array of records came first: _nested reads it, and meets this
                    # error after the records before it, or not at all past n_rows)
                    raise self._not_found() from None
                rows = adapter.push(before)
                if rows:
                    first = max(1, e.line - len(rows)) if adapter.in_target() and e.line else 0
                    yield from self._emit(Piece(None, rows, None, first, src=self._after_feed(src, chunk)))
                if self._full():
                    return  # (as above: an error after the row limit is not met)
                raise
            src = self._after_feed(src, chunk)
            pos = stop
            if rows:
                # Row lines are known when the table is still open: its rows
                # then end on the last line fed (comment lines aside; exact
                # lines come from src when an error needs them).
                first = decoder.line - len(rows) + 1 if adapter.in_target() else 0
                yield from self._emit(Piece(None, rows, None, first, src=src))
                if self._full():
                    return

    def _not_found(self) -> ToonDecodeError:
        where = f"at path {self.path!r}" if self.path is not None else "at the root or as a member of the root object"
        # (the record reader, which reads arrays of records that are not tables, looked too)
        what = "tabular array or keyed table" if self.path is not None else "tabular array, keyed table or array of records"
        return ToonDecodeError(
            f"no {what} {where}",
            code="not_tabular",
            line=max(self.decoder.line, 1),  # (an empty input ends on line 1)
            column=1,
            line_text="",
        )

    def _full(self) -> bool:
        # (a limit of 0 still reads up to the table's header: its columns,
        # and any error before them, as with a limit of 1)
        return self.limit is not None and self.done >= self.limit and (self.limit > 0 or self.names is not None)

    # An unfinished line longer than this is not kept for error locations
    # (its text would be copied at each feed).
    _TAIL_LIMIT = 1 << 20

    def _before_feed(self, chunk: bytes) -> _Src | None:
        """What locates the rows of ``chunk`` (see _locate_rows), but the
        headers, which feeding it records (_table)."""
        self._headers = []
        if self._tail is None:
            return None
        scopes = self.adapter.scopes
        open_ = bool(scopes) and scopes[-1].mark is not None
        ctx = self.decoder.table_context() if open_ else None
        return (self._tail + chunk, self.decoder.line + 1, (), open_, ctx.indent if ctx is not None else None)

    def _after_feed(self, src: _Src | None, chunk: bytes) -> _Src | None:
        nl = chunk.rfind(b"\n")
        tail = chunk[nl + 1 :] if nl >= 0 else None if self._tail is None else self._tail + chunk
        self._tail = tail if tail is not None and len(tail) <= self._TAIL_LIMIT else None
        if src is None:
            return None
        return (src[0], src[1], tuple(self._headers), src[3], src[4])

    def _emit(self, piece: Piece) -> Iterator[Piece]:
        if self.limit is not None:
            left = self.limit - self.done
            if piece.n > left:
                piece = piece.split(left)[0]
        self.done += piece.n
        if piece.n:
            yield piece

    def _table(self, header: StartTable, columns: list[str]) -> None:
        """A matching table starts: the first fixes the columns, later ones must agree."""
        self._headers.append((header.line, _indent_of(header.line_text)))
        if self.names is None:
            self.names = list(columns)
            self.fields = header.fields
            self.keyed = header.keyed
            self.header = header
        elif list(columns) != self.names:
            raise ToonDecodeError(
                f"a later table at this path has columns {columns}, the first had {self.names}",
                code="unexpected_fields",
                line=header.line,
                column=1,
                line_text=header.line_text,
            )

    _consumed = 0
    _partial: Piece | None = None  # after _fast raised: the rows before the bad line
    _declined = False  # after _fast gave None: the engine left entry rows to the decoder

    def _fast(self, data: bytes, base: int, end: int, ctx: TableContext) -> Piece | None:
        """The rows at the start of ``data[base:end]`` (complete lines), as
        one Piece, if they begin with a run of plain rows; None to let the
        decoder go.  Sets ``_consumed`` to the bytes taken."""
        self._consumed = 0
        self._partial = None
        self._declined = False
        plen, delim, width, left, keyed = ctx
        self.plen, self.delim = plen, delim
        if left <= 0:
            return None
        prefix = b" " * plen
        # CRLF text (every line ends so, and no other CR): the CRs belong to
        # the line terminators (§12), so the rows are read without them.
        crlf = False
        # (every line CRLF: the last one too, so no scan of a run whose last line ends in LF alone)
        if end - base >= 2 and data[end - 2] == 0x0D:
            run = data[base:end]
            lf = run.count(b"\n")
            if run.count(b"\r") == lf == run.count(b"\r\n"):
                data = run.replace(b"\r\n", b"\n")
                base, end = 0, len(data)
                crlf = True
        # Never past the declared length (the next line may be an error),
        # nor much past a row limit.
        cap = left
        if self.limit is not None:
            cap = min(cap, self.limit - self.done + 1)
        piece = self._plain_run(data, base, end, cap, plen, prefix, delim, width, keyed, check=False)
        if piece is False:
            # Some line is not `prefix` + a non-space: the run ends at the
            # first such line (a shallower one ends the table; a deeper or
            # blank one is the decoder's to report or skip).
            m = _run_end(prefix).search(data, base, end)
            end = m.start() if m is not None else end
            piece = self._plain_run(data, base, end, cap, plen, prefix, delim, width, keyed, check=True) if end > base else None
        if not isinstance(piece, Piece):
            return None
        if crlf:  # bytes taken from the input: one CR more per line
            self._consumed += data.count(b"\n", 0, self._consumed)
        return piece

    def _plain_run(
        self,
        data: bytes,
        base: int,
        end: int,
        cap: int,
        plen: int,
        prefix: bytes,
        delim: str,
        width: int,
        keyed: bool,
        *,
        check: bool,
    ) -> Piece | None | bool:
        """Rows of ``data[base:end]`` (at most ``cap`` lines of it): the plain
        ones split column-wise by the engine, the others fed to the
        decoder.  None: the decoder reads them all; False: a line is not at
        row indentation (only when ``check`` is False: the caller then cuts
        the run and calls again).  ``keyed``: entry rows, which only the
        native engine splits (their keys a column before the cells).  Sets
        ``_consumed``."""
        assert self.splitter is not None
        # (the engine takes the first ``cap`` lines itself; the native one
        # reads the run in place: no copy of it)
        plan = self.plan
        cols = width + 1 if keyed else width
        native: Any = self.splitter  # (the native engine's, when a plan or keyed is passed)
        if plan is not None and len(plan) == cols:
            got = native(data, base, end, plen, delim, width, min(cap, end - base), plan=plan, keyed=keyed)
            if not isinstance(got, tuple) and not got.typed:
                self.plan = None  # a cell the plan does not take: cells from now on
        elif keyed:
            got = native(data, base, end, plen, delim, width, min(cap, end - base), keyed=True)
        else:
            got = self.splitter(data, base, end, plen, delim, width, min(cap, end - base))
        if isinstance(got, tuple) and keyed:
            if got[1]:
                self.quoted = True
            if got[0] == "not_indented" and not check:
                return False
            self._declined = True
            return None
        if isinstance(got, tuple) and got[0] == "unhandled" and self.splitter is not table_columns:
            # What only the reference can tell (an "odd" number token, say):
            # its splitter then, as on the python engine, so that the rows
            # come the same way (typed, or the decoder's) on both engines.
            got = table_columns(data, base, end, plen, delim, width, min(cap, end - base))
        if isinstance(got, tuple):
            verdict, quoted = got
            if quoted:
                self.quoted = True
            if verdict == "not_indented":
                return None if check else False
            return None  # "not_plain", "unhandled": the decoder reads them
        if got.quoted:
            self.quoted = True
        fed = {k: (base + start, base + stop) for k, start, stop in got.specials}
        split_rows: Plain | None = None
        if isinstance(got, TokenRun):
            if got.columns is not None:
                split_rows = pl.DataFrame(
                    [pl.Series(f"c{i}", col, dtype=pl.String) for i, col in enumerate(got.columns)]
                )
        elif got.rows:
            split_rows = NativeRows(got, 0, got.rows, list(range(cols)))
        return self._replay(data, got.lines, fed, split_rows, got.end, got if keyed else None)

    def _replay(
        self,
        data: bytes,
        n_lines: int,
        spans_of: dict[int, tuple[int, int]],
        frame: Plain | None,
        size: int,
        entries: Any = None,
    ) -> Piece:
        """The run's Piece: its ``n_lines`` lines (``data[:size]``) replayed
        to the decoder in order, plain rows (``frame``) counted, the lines it
        must read (``spans_of``: line index -> (start, end after the LF), in
        order) fed.  ``entries``: a keyed run's split, whose plain rows'
        keys the decoder checks for duplicates as it counts them (the first
        duplicate's line is fed to it, which reports it).  Sets
        ``_consumed``, or ``_partial`` before a decode error."""
        specials = list(spans_of)
        # (a line's text without its CR, as the decoder and _locate_rows give it)
        lines = {k: data[start : end - 1].removesuffix(b"\r") for k, (start, end) in spans_of.items()}
        decoder, adapter = self.decoder, self.adapter
        first = decoder.line + 1
        rows: list[tuple[Any, ...]] = []
        pos: list[int] = []
        gaps: list[int] = []  # special lines that gave no row (comments)
        texts: list[bytes] = []  # the special lines that gave a row
        prev_k = 0  # the next line not yet accounted for
        r = 0  # rows so far

        def skip(n: int) -> None:
            """Count the next ``n`` plain rows."""
            nonlocal r
            if entries is None:
                decoder.skip_rows(n)
                r += n
                return
            p = r - len(rows)  # (plain rows so far)
            keys = (entries, p, p + n) if self.key_set is not None else entries.keys(p, p + n)
            took = decoder.skip_rows(n, keys)
            r += took
            if took < n:
                feed(entries.row_line(p + took))  # (a duplicate key: the decoder reports it)
                raise RuntimeError("toonstream: internal error: a duplicate entry key the decoder accepted")

        def feed(line: bytes) -> list[Any]:
            try:
                return adapter.push(decoder.feed(line))
            except ToonDecodeError:  # the rows before this line, for pieces()
                if frame is None:
                    self._partial = Piece(None, rows, None, first, gaps=gaps, texts=texts) if rows else None
                else:  # (the plain rows before: r rows so far, less the decoder's)
                    self._partial = (
                        Piece(frame.slice(0, r - len(rows)), rows, pos, first, gaps=gaps, texts=texts) if r else None
                    )
                raise

        for k in specials:
            skip(k - prev_k)
            start, end = spans_of[k]
            got = feed(data[start:end])
            if not got:
                gaps.append(k)
            for row in got:
                pos.append(r)
                rows.append(row)
                texts.append(lines[k])
                r += 1
            prev_k = k + 1
        skip(n_lines - prev_k)
        self._consumed = size
        return Piece(frame, rows, pos if frame is not None else None, first, gaps=gaps, texts=texts)


# In the native splitter's tokens: marks a token that was a quoted string
# (always a string, whatever it looks like) and stands in for the delimiter
# inside it; neither byte occurs in a run where the splitter uses them.
QUOTED, DELIM_IN_QUOTES = "\x01", "\x02"


def untoken(tok: str, delim: str) -> str | None:
    """A marked quoted token's string (unescaped), or None for a plain token."""
    body = _quoted_body(tok, delim)
    if body is None or "\\" not in body:
        return body
    return _unescape(body, 0)  # (escapes checked by the splitter: the native one's rows)


def _quoted_body(tok: str, delim: str) -> str | None:
    """A marked quoted token's content as written (escapes and all), or None."""
    if tok[:1] == QUOTED:
        return tok[1:].replace(DELIM_IN_QUOTES, delim)
    return None


_RUN_END: dict[bytes, re.Pattern[bytes]] = {}
_END: Any = object()  # (the end of an iterator of jobs, where None is one)


def _run_end(prefix: bytes) -> re.Pattern[bytes]:
    pattern = _RUN_END.get(prefix)
    if pattern is None:
        pattern = _RUN_END[prefix] = re.compile(rb"^(?!" + prefix + rb"[^ \n])", re.M)
    return pattern


# ------------------------------------------------------------------ typing


def text_of(value: Any) -> str | None:
    """A decoded primitive as the text a String column holds (numbers canonical;
    a non-integer is exact where it is the decoder's ``Decimal``)."""
    t = type(value)
    if value is None or t is str:
        return value  # type: ignore[no-any-return]
    if t is bool:
        return "true" if value else "false"
    if t is int:
        return int_value_text(value)
    if t is float:
        return encode_float(value)
    if t is Decimal:
        return decimal_value_text(value)
    return str(value)


# Kinds of values, as bits.  WIDE marks an integer of more than 15 digits
# (a float may not hold it exactly); it is a flag on INT/BIG, not a kind.
K_NULL, K_BOOL, K_INT, K_BIG, K_FLOAT, K_HUGE, K_STR, K_WIDE = 1, 2, 4, 8, 16, 32, 64, 128
_KIND_NAMES = [
    (K_STR, "a string"),
    (K_HUGE, "a number beyond float/decimal range"),
    (K_FLOAT, "a number with a fraction or an exponent"),
    (K_BIG, "an integer beyond int64"),
    (K_WIDE, "an integer of more than 15 digits"),
    (K_INT, "an integer"),
    (K_BOOL, "a boolean"),
    (K_NULL, "null"),
]
_I64 = 1 << 63


def value_kind(v: Any) -> int:
    """Kind bits of one decoded primitive (the exact path's values)."""
    t = type(v)
    if t is str:
        return K_STR
    if v is None:
        return K_NULL
    if t is bool:
        return K_BOOL
    if t is int:
        # (int_value_text: str() refuses integers of more than 4,300 digits)
        digits = len(int_value_text(abs(v))) if not -(10**15) < v < 10**15 else 0
        wide = K_WIDE if digits > _FLOAT_EXACT else 0
        if -_I64 <= v < _I64:
            return K_INT | wide
        return (K_HUGE if digits > 38 else K_BIG) | wide
    if t is float:
        return K_FLOAT
    # A Decimal: a non-integer read exactly (parse_float=Decimal), or one
    # beyond float range (the decoder's value for 1e400 either way).
    return K_HUGE if math.isinf(float(v)) else K_FLOAT


def values_kinds(values: Sequence[Any]) -> int:
    """Kind bits of decoded primitives, or-ed: ``value_kind`` of each, with
    one call per type but ``int``.  Integers: the widest is the smallest or
    the largest, so ``value_kind`` of both gives WIDE and HUGE, and BIG
    unless beyond 38 digits (then each is looked at); int64 is between them
    when one of them is in it, else looked for."""
    bits = 0
    types = set(map(type, values))
    for t in types:
        if t is int:
            ints = values if len(types) == 1 else [v for v in values if type(v) is int]
            lo, hi = min(ints), max(ints)
            k = value_kind(lo) | value_kind(hi)
            if k & K_HUGE:  # beyond 38 digits: each one (the others may be big or int64)
                for v in ints:
                    k |= value_kind(v)
            elif not k & K_INT and any(-_I64 <= v < _I64 for v in ints):
                k |= K_INT  # (both extremes beyond int64, so wide: WIDE is set)
            bits |= k
        elif t is Decimal:
            # (a float's range ends below 1e309: only those beyond 1e308 are looked at)
            decimals = values if len(types) == 1 else [v for v in values if type(v) is Decimal]
            huge = [v for v in decimals if v.adjusted() >= 308]
            bits |= K_FLOAT if len(huge) < len(decimals) else 0
            for v in huge:
                bits |= value_kind(v)
        else:
            bits |= value_kind(next(v for v in values if type(v) is t))
    return bits


def infer_dtype(bits: int, *, complete: bool) -> pl.DataType:
    """The column dtype for the kinds seen (the README's table)."""
    b = bits & ~(K_NULL | K_WIDE)
    if b == 0:
        # Only nulls: Null if that was the whole table, else String (which
        # takes whatever comes later).
        return pl.Null() if complete else pl.String()
    if b == K_BOOL:
        return pl.Boolean()
    if b == K_INT:
        return pl.Int64()
    if b & ~(K_INT | K_BIG) == 0:
        return pl.Decimal(38, 0)
    if b & ~(K_INT | K_FLOAT) == 0 and not bits & K_WIDE:
        return pl.Float64()
    return pl.String()


def base_dtype(dtype: pl.DataType) -> pl.DataType:
    """What the tokens are first decoded to before a cast to ``dtype``."""
    if dtype.is_integer():
        # (UInt64 and the 128-bit types hold integers beyond int64: decoded
        # exactly as Decimal(38, 0), then cast, as read_csv reads them)
        return pl.Decimal(38, 0) if dtype in (pl.UInt64, pl.Int128, pl.UInt128) else pl.Int64()
    if dtype.is_float():
        return pl.Float64()
    if dtype == pl.Boolean or dtype == pl.Null:
        return dtype
    if isinstance(dtype, pl.Decimal) and not dtype.scale:
        # Integers only, checked as such: a fraction, an exponent or a
        # quoted "42" is a type mismatch, not text for the cast to round.
        return pl.Decimal(38, 0)
    return pl.String()


def allowed_kinds(dtype: pl.DataType, forced: bool) -> int:
    """Kinds a column of dtype ``dtype`` takes without losing anything.
    ``forced``: the user chose the dtype (a float column then takes any
    integer, rounding it as asked)."""
    if is_scaled_decimal(dtype):
        # Numbers only, cast from their digits (its base is String): a string is not one, even
        # where the cast would read it ("007" quoted, or +5 and .5, which §4 makes strings).
        return K_NULL | K_INT | K_BIG | K_WIDE | K_FLOAT | K_HUGE
    base = base_dtype(dtype)
    if base == pl.String:
        return ~0
    ok = K_NULL
    if base == pl.Boolean:
        ok |= K_BOOL
    elif base == pl.Int64:
        ok |= K_INT | K_WIDE
    elif base == pl.Float64:
        # (a float type given takes any number, as read_csv: 1e400 is inf)
        ok |= K_INT | K_FLOAT | (K_WIDE | K_BIG | K_HUGE if forced else 0)
    elif isinstance(base, pl.Decimal):
        ok |= K_INT | K_BIG | K_WIDE
    return ok


_TEXTS = frozenset((str, type(None)))
_FLOATS = frozenset((float, type(None)))
_INTS = frozenset((int, type(None)))


def convert_values(name: str, values: Sequence[Any], base: pl.DataType) -> pl.Series:
    """Decoded values (already checked to fit ``base``) -> a Series."""
    if base == pl.String:
        if set(map(type, values)) <= _TEXTS:
            return pl.Series(name, values, dtype=pl.String)  # (text_of would give each as it is)
        return pl.Series(name, [text_of(v) for v in values], dtype=pl.String)
    if base == pl.Float64:
        if set(map(type, values)) <= _FLOATS:
            return pl.Series(name, values, dtype=pl.Float64)
        return pl.Series(name, [None if v is None else _float(v) for v in values], dtype=pl.Float64)
    if isinstance(base, pl.Decimal):
        if set(map(type, values)) <= _INTS:
            # (integers of at most 38 digits, checked: Int128 holds them exactly)
            wide: pl.Series = pl.Series(name, values, dtype=pl.Int128)
            return wide.cast(pl.Decimal(38, 0))  # type: ignore[no-any-return]
        return pl.Series(name, [None if v is None else Decimal(v) for v in values], dtype=pl.Decimal(38, 0))
    return pl.Series(name, values, dtype=base)


def _float(v: Any) -> float:
    """A number as a float; an int beyond float range is ±inf, as a Decimal is (and as read_csv
    reads it in a float column; ``float(int)`` raises OverflowError); a Decimal as the decoder's
    float of it (-0.0 as 0.0, see ``as_float``)."""
    try:
        f = float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf
    return f if f else 0.0


def _native_kind(base: pl.DataType) -> str | None:
    """The native column buffers that give a column of dtype ``base`` (its
    cells' kinds already checked to fit), as ``convert_values`` would give
    them; None where only the reference converts."""
    if base == pl.Int64:
        return "int64"
    if base == pl.Float64:
        return "float64"
    if base == pl.Decimal(38, 0):
        return "decimal128"  # (integers of at most 38 digits, checked: the kinds allowed)
    if base == pl.Boolean:
        return "bool"
    if base == pl.Null:
        return "null"
    if base == pl.String:
        return "utf8"  # (numbers as their canonical text, the engine's text_of: encode_decimal's beyond float range)
    return None


#: the native splitter's layout (``table_columns(plan=...)``) for each of ``_native_kind``'s buffers
_LAYOUTS = {"int64": "l", "float64": "g", "decimal128": "d", "bool": "b", "utf8": "v", "null": "-"}


def kind_name(bits: int) -> str:
    for bit, name in _KIND_NAMES:
        if bits & bit:
            return name
    return "nothing"


# ------------------------------------------------------------------ batches


def _option(options: Mapping[str, Any], name: str, default: int) -> int:
    """A decoder limit given to a reader (None, as absent: the default)."""
    value = options.get(name)
    return default if value is None else int(value)


def byte_chunks(source: Any) -> Iterator[bytes]:
    """Bytes of ``source``: a path (str or os.PathLike), bytes, or a binary or
    text file object (text is encoded as UTF-8)."""
    import os

    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            yield from iter(lambda: f.read(CHUNK), b"")
        return
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        for i in range(0, len(data), CHUNK):
            yield data[i : i + CHUNK]
        return
    read = getattr(source, "read", None)
    if read is None:
        raise TypeError(f"expected a path, bytes or a file object, got {type(source).__name__}")
    while True:
        chunk = read(CHUNK)
        if not chunk:
            return
        yield chunk.encode("utf-8", "surrogatepass") if isinstance(chunk, str) else bytes(chunk)


#: a batch's fast and decoder rows are put in row order by slicing (no copy)
#: when they interleave in at most this many runs, else by one gather
_SLICED_RUNS = 64


class _Batch:
    """Rows of one output batch before typing: the plain tokens of its
    pieces (one frame), the decoder's tuples, and how they interleave."""

    def __init__(self, pieces: list[Piece]) -> None:
        frames = [p.frame for p in pieces if p.frame is not None and p.frame.height]
        self.n_fast = sum(f.height for f in frames)
        # The native engine's columns, while every plain row is one of
        # theirs; their string tokens (``fast``) are made only where the
        # reference's typing takes over.
        self.native: list[NativeRows] | None = None
        self._fast: pl.DataFrame | None = None
        if frames and all(isinstance(f, NativeRows) for f in frames):
            self.native = [f for f in frames if isinstance(f, NativeRows)]
        elif frames:
            tokens = [f.tokens() if isinstance(f, NativeRows) else f for f in frames]
            self._fast = pl.concat(tokens, rechunk=False) if len(tokens) > 1 else tokens[0]
        self.rows: list[tuple[Any, ...]] = [r for p in pieces for r in p.rows]
        self.n = sum(p.n for p in pieces)
        self.pieces = pieces
        # The fast rows' tokens decoded, per column (FrameReader._fast_values)
        self.values: dict[int, list[Any]] = {}
        self.clean = False  # the fast path's deferred clean-up done (FrameReader._clean)
        self._order: pl.Series | None = None  # (see order)

    @property
    def fast(self) -> pl.DataFrame | None:
        """The plain rows' string tokens, one column per leaf."""
        if self._fast is None and self.native is not None:
            parts = [v.tokens() for v in self.native]
            self._fast = pl.concat(parts, rechunk=False) if len(parts) > 1 else parts[0]
        return self._fast

    @fast.setter
    def fast(self, frame: pl.DataFrame | None) -> None:
        self._fast = frame

    def materialize(self) -> None:
        """Make the string tokens of the native columns (still to be
        cleaned: FrameReader._clean)."""
        self.native = None if self.fast is not None else self.native

    @property
    def columnar(self) -> bool:
        """The plain rows are the native engine's, not yet made into tokens."""
        return self.native is not None and self._fast is None

    def runs(self) -> list[tuple[bool, int]] | None:
        """Row order as alternating runs of (decoder rows?, how many); None
        when one kind only."""
        if not self.n_fast or not self.rows:
            return None
        runs: list[tuple[bool, int]] = []

        def put(exact: bool, n: int) -> None:
            if n <= 0:
                return
            if runs and runs[-1][0] == exact:
                runs[-1] = (exact, runs[-1][1] + n)
            else:
                runs.append((exact, n))

        for p in self.pieces:
            if p.frame is None:
                put(True, p.n)
                continue
            at = 0
            for k in p.pos or ():  # (sorted)
                put(False, k - at)
                put(True, 1)
                at = k + 1
            put(False, p.n - at)
        return runs

    def exact_mask(self) -> list[bool] | None:
        """Per row: is it a decoder row?  None when one kind only."""
        runs = self.runs()
        return None if runs is None else [e for e, n in runs for _ in range(n)]

    def order(self) -> pl.Series | None:
        """Row order as indices into (fast rows, then decoder rows); None if one kind only."""
        if self._order is None:
            self._order = self._make_order()
        return self._order

    def _make_order(self) -> pl.Series | None:
        mask = self.exact_mask()
        if mask is None:
            return None
        nf = self.n_fast
        m = pl.Series("m", mask)
        return (  # type: ignore[no-any-return]
            pl.select(
                pl.when(m)
                .then(m.cast(pl.UInt32).cum_sum() - 1 + nf)
                .otherwise((~m).cast(pl.UInt32).cum_sum() - 1)
            )
            .to_series()
            .cast(pl.UInt32)
        )

    def where(self, fast_row: int | None, exact_row: int | None) -> tuple[int, str | None, list[Any] | None]:
        """Where a row stands, given its index among the fast or the decoder
        rows: its line (0: unknown), its line's text (None: not kept) and,
        for a plain row, its cells as split (a table row's text is rebuilt
        from them; an entry row's is kept)."""
        f = e = 0
        for p in self.pieces:
            nf = p.frame.height if p.frame is not None else 0
            pos = p.pos or []
            if fast_row is not None and f <= fast_row < f + nf:
                k = fast_row - f  # the k-th plain row of this piece: skip decoder rows before it
                r = k
                for q in pos:
                    if q <= r:
                        r += 1
                cells = list(p.full.row(k)) if p.full is not None else None
                entry = p.full.line(k) if isinstance(p.full, NativeRows) else None
                return (p.line + p.offset(r) if p.line else 0), entry, cells
            if exact_row is not None and e <= exact_row < e + len(p.rows):
                j = exact_row - e
                r = pos[j] if p.frame is not None else j
                line = p.line + p.offset(r) if p.line else 0
                text = p.texts[j] if p.texts is not None and j < len(p.texts) else None
                if text is None and p.src is not None:
                    located = _locate_rows(p.src)
                    if p.skip + j < len(located):
                        line, text = located[p.skip + j]
                return line, (text.decode("utf-8", "replace") if text is not None else None), None
            f += nf
            e += len(p.rows)
        return 0, None, None

    def split_row(self, row: int) -> tuple[int | None, int | None]:
        """A row of the batch (in order) as (fast row, decoder row) indexes."""
        mask = self.exact_mask()
        if mask is None:
            return (row, None) if self.n_fast else (None, row)
        before = sum(mask[:row])
        return (None, before) if mask[row] else (row - before, None)


def _cell_text(cell: str | None, delim: str) -> str:
    """A plain row's cell as split (None: empty) as it stood in the line: a
    marked quoted token back in quotes (its content as written), after
    the indentation that the first cell still carries."""
    if cell is None:
        return ""
    body = cell.lstrip(" ")
    if body[:1] != QUOTED:
        return cell
    return cell[: len(cell) - len(body)] + '"' + (_quoted_body(body, delim) or "") + '"'


def _cell_column(text: str, leaf: int, keyed: bool, delim: str) -> int:
    """1-based column of cell ``leaf`` (the entry key being cell 0 of a keyed
    table's row) in a row line; the row's first column if it cannot tell."""
    indent = _indent_of(text)
    base = indent
    if keyed:
        if leaf == 0:
            return indent + 1
        colon = find_unquoted(text, ":", indent)
        if colon < 0:
            return indent + 1
        base, leaf = colon + 1, leaf - 1
    cells = split_cells(text[base:], delim)
    if leaf >= len(cells):
        return indent + 1
    return base + sum(len(c) + 1 for c in cells[:leaf]) + _indent_of(cells[leaf]) + 1


class FrameReader:
    """Typed polars DataFrames, ``batch_size`` rows each, from a TOON table."""

    def __init__(
        self,
        source: Any,
        *,
        path: str | None = None,
        batch_size: int = 65_536,
        columns: Sequence[str] | None = None,
        n_rows: int | None = None,
        schema: Mapping[str, Any] | None = None,
        schema_overrides: Mapping[str, Any] | Sequence[Any] | None = None,
        infer_schema_length: int | None = 100,
        try_parse_dates: bool = False,
        key_field: str = "key",
        options: Mapping[str, Any] | None = None,
        inferred: Mapping[str, Any] | None = None,
        inferred_how: str | None = None,
        inferred_here: bool = False,
        on_header: Callable[[FrameReader], None] | None = None,
        more_sources: bool = False,
        arrow_check: Callable[[str, pl.Series], tuple[int, str, Any] | None] | None = None,
    ) -> None:
        """``inferred``: column dtypes an earlier read inferred (scan_toon's
        probe, or the first of several sources): used as this read's
        inference, checked as inferred types are (not a user's ``schema``,
        which may round); ``inferred_how`` says where from, for error
        messages; ``inferred_here``: they are this source's own, read from
        more of its rows (a scan's probe), so the keys of an array of records
        they name are columns even where the rows read now lack them (null
        there).  ``on_header``: called once the table's header is
        known, before the columns are selected (it may set ``columns``).
        ``more_sources``: the table goes on in other sources (its end here
        is not the end of the table: a column of nulls only is String)."""
        check_frame_args(batch_size, infer_schema_length, schema_overrides)
        from ._nested import replayable

        # (kept for a second read: an array of records is read by _nested
        # once this reader finds no table)
        chunks, self.reopen, self.rereadable = replayable(source, lambda: not self.scan.adapter.found)
        # A Decimal type with a scale takes a number's exact digits, as read_csv does (a float
        # would round 12345678901234567.891), and a String column the number written
        # (12345678901234567.891, not 12345678901234568): the decoder makes every
        # non-integer a Decimal, which convert_values makes a float in a float column.
        self.decimal_rows = _scaled_decimal(schema, schema_overrides)
        self.exact: frozenset[int] = frozenset()  # selected leaves of such a type (_layout)
        scan_options = {**(options or {}), "parse_float": Decimal}
        self.scan = TableScan(chunks, path, key_field=key_field, limit=n_rows, options=scan_options)
        self.batch_size = batch_size
        self.columns = list(columns) if columns is not None else None
        self.schema = dict(schema) if schema is not None else None
        # Overrides by name, or (as read_csv takes them) a dtype per column
        # of the table in order, named once the header is known (_layout).
        self.in_order: list[Any] | None = None
        if schema_overrides is not None and not isinstance(schema_overrides, Mapping):
            self.in_order = list(schema_overrides)
            schema_overrides = None
        self.overrides = dict(schema_overrides or {})
        self.inferred = dict(inferred or {})
        self.inferred_how = inferred_how or "inferred by an earlier read"
        self.inferred_here = inferred_here
        self.infer = infer_schema_length
        if infer_schema_length is not None:
            # The first infer_schema_length rows decide the types (_batches):
            # the runs split before that are short, so that the native
            # splitter types the rest of the block as it splits it (a 4 MiB
            # run split into cells first and typed after took 10x as long).
            self.scan.run_cap = FEED
        self.try_parse_dates = try_parse_dates
        self.key_field = key_field
        self.options = dict(options or {})
        # §4 typing of plain tokens: the grammar's converters (one token; a column at once)
        limit = _option(self.options, "max_number_length", MAX_NUMBER_LENGTH)
        self._convert = make_converter(max_number_length=limit)
        self._convert_column = make_column_converter(self._convert, max_number_length=limit)
        # (and the exact Decimal columns' non-integers as Decimals, see ``exact``: made only
        # for a read that has such a column)
        self._convert_exact = self._convert_column
        if self.decimal_rows:
            exact = make_converter(parse_float=Decimal, max_number_length=limit)
            self._convert_exact = make_column_converter(exact, parse_float=Decimal, max_number_length=limit)
        self.dtypes: list[pl.DataType] | None = None  # per selected leaf
        self.forced: list[bool] = []
        self.inferred_from = 0
        self.selected: list[int] | None = None  # leaf indices kept
        self.tops: list[tuple[str, Any]] = []  # output layout: (name, Fields or None) per top-level column
        self.on_header = on_header
        self.more_sources = more_sources
        # (the Arrow readers: the first row of a column that its Arrow type would not take,
        # found where its line is known; see toonstream.arrow.arrow_check)
        self.arrow_check = arrow_check

    # -- layout

    def _layout(self) -> None:
        """Top-level columns and selected leaves, once the header is known."""
        scan = self.scan
        assert scan.names is not None
        fields: Fields = scan.fields or ()
        self._check_names(fields)
        if self.on_header is not None:
            self.on_header(self)
        tops: list[tuple[str, Any, int]] = []  # (name, children, leaf count)
        if scan.keyed:
            tops.append((self.key_field, None, 1))
        for f in fields:
            tops.append((f.name, f.children, len(leaf_names((f,))) if f.children is not None else 1))
        if self.in_order is not None:
            names = [t[0] for t in tops]
            if len(self.in_order) != len(names):
                raise pl.exceptions.SchemaError(  # (Polars' own words)
                    "The number of dtypes in schema override must be equal to the number of fields in the file "
                    f"({len(self.in_order)} != {len(names)})"
                )
            self.overrides = dict(zip(names, self.in_order))
        if self.columns is not None:
            names = [t[0] for t in tops]
            missing = [c for c in self.columns if c not in names]
            if missing:
                raise pl.exceptions.ColumnNotFoundError(
                    f"column(s) {missing} not found; the table has {names}"
                )
        all_paths = [p for name, children, _ in tops for p in _leaf_paths(name, children)]
        selected: list[int] = []
        leaf = 0
        self.tops = []
        for name, children, count in tops:
            if self.columns is None or name in self.columns:
                selected.extend(range(leaf, leaf + count))
                self.tops.append((name, children))
            leaf += count
        ask = self.columns
        if ask is None and self.schema is not None and set(self.schema) == {t[0] for t in tops}:
            ask = list(self.schema)  # (read_csv's order: the schema's, its columns found by name)
        if ask is not None:  # in the order asked
            order = {name: i for i, name in enumerate(ask)}
            spans = []
            leaf = 0
            for name, children, count in tops:
                if name in order:
                    spans.append((order[name], list(range(leaf, leaf + count)), (name, children)))
                leaf += count
            spans.sort(key=lambda s: s[0])
            selected = [i for _, idx, _ in spans for i in idx]
            self.tops = [t for _, _, t in spans]
        self.selected = selected
        self.leaf_names = [scan.names[i] for i in selected]
        # User dtypes per selected leaf, found by leaf path (not by dotted
        # name: a struct "a" with field "b" and a column named "a.b" are two
        # leaves).  A name is a top-level column (a struct dtype then gives
        # its fields' dtypes), else a dotted leaf name "group.field".  Names
        # of no column are ignored, as in polars.read_csv.
        paths = [all_paths[i] for i in selected]
        index = {p: k for k, p in enumerate(paths)}
        top_names = {t[0] for t in tops}
        dotted: dict[str, list[int]] = {}
        for k, p in enumerate(paths):
            dotted.setdefault(".".join(p), []).append(k)
        given: dict[int, Any] = {}
        by: dict[int, str] = {}  # (which argument gave it: error messages name it)
        for mapping, argument in ((self.schema or {}, "schema"), (self.overrides, "schema_overrides")):
            for name, dtype in mapping.items():
                for rel, leaf_dtype in _dtype_leaves(dtype):
                    if name in top_names:
                        at = index.get((name, *rel))
                        hits = [] if at is None else [at]
                    else:
                        hits = dotted.get(".".join((name, *rel)), [])
                    if len(hits) > 1:
                        raise DtypeNameError(
                            f"dtype for {'.'.join((name, *rel))!r}: several columns have that dotted name; "
                            "give the struct column's dtype (a polars Struct) instead"
                        )
                    for k in hits:
                        given[k] = leaf_dtype
                        by[k] = argument
        if self.schema is not None:
            absent = [n for k, n in enumerate(self.leaf_names) if k not in given]
            if absent:
                raise DtypeNameError(f"schema does not give a dtype for column(s) {absent}")
        self.given = [given.get(k) for k in range(len(paths))]
        self.given_by = [by.get(k, "") for k in range(len(paths))]
        self.exact = frozenset(k for k, d in enumerate(self.given) if is_scaled_decimal(d))
        known: dict[int, Any] = {}
        for name, dtype in self.inferred.items():
            for rel, leaf_dtype in _dtype_leaves(dtype):
                at = index.get((name, *rel))
                if at is not None:
                    known[at] = leaf_dtype
        self.known = [known.get(k) for k in range(len(paths))]

    def _check_names(self, fields: Fields) -> None:
        """Column names must be unique (a frame cannot hold two columns of
        one name): see :func:`check_names`.  (The empty name is kept: Polars
        and Arrow take it.)"""
        header = self.scan.header
        check_names(
            fields,
            self.key_field if self.scan.keyed else None,
            header.line if header is not None else None,
            header.line_text if header is not None else "",
        )

    # -- batches

    def __iter__(self) -> Iterator[pl.DataFrame]:
        frames = self._table_frames()
        try:
            first = next(frames, None)
        except ToonDecodeError as e:
            # No table at the path: an array of records there is read by _nested.
            ahead = self.scan.ahead
            path = self.scan.path if ahead is None else ahead.path
            if e.code != "not_tabular" or path is None:
                raise
            from ._nested import RecordReader

            locate = self.reopen
            if self.scan.adapter.found:
                # Tables at the path, then an array that is none (dumps writes arrays of uniform
                # records as tables, the others as list items), before the first batch was
                # given: all of them are read again as records, if the source can be read again.
                again = self.reopen()
                if again is None:
                    raise
                given = [again]

                def locate() -> Iterator[bytes] | None:
                    return given.pop() if given else self.reopen()

            yield from RecordReader(self, path=path, locate=locate, first_error=e)
            return
        if first is not None:
            yield first
            try:
                yield from frames
            except ToonDecodeError as e:
                if e.code != "not_tabular" or self.scan.path is None:
                    raise
                # (a value at the path that is no table, after batches of table rows were given)
                raise ToonDecodeError(
                    f"{e.msg}, after tables at this path whose rows were already given as a table "
                    "(an array of records in list form is read with them only before the first "
                    "batch: see Nested frames in the README; toonstream.items reads any)",
                    code=e.code, line=e.line, column=e.column, line_text=e.line_text,
                ) from None

    def _table_frames(self) -> Iterator[pl.DataFrame]:
        # Typing a batch of native columns is Arrow and Polars work (the GIL
        # is released); scanning the next chunk is mostly Python.  A worker
        # thread types such a batch k while this thread scans for batch k+1.
        # The reference's typing is Python work: on a worker it would only
        # contend for the GIL, so it is done here.  Either way results and
        # errors come out in order, as if it were all done here.
        pool = ThreadPoolExecutor(max_workers=1)
        queue: deque[Future[pl.DataFrame]] = deque()
        try:
            jobs = self._jobs()
            while True:
                try:
                    job = next(jobs, _END)
                except ToonDecodeError:
                    # An error further on in the input: the batches before it
                    # first (one of them may hold an earlier error: that one
                    # is raised).  Not around .result() below: an error of
                    # batch k must not let batch k+1 be typed and raise first.
                    while queue:
                        yield queue.popleft().result()
                    raise
                if job is _END:
                    break
                queue.append(self._submit(pool, job))
                while len(queue) > 1 or queue[0].done():
                    yield queue.popleft().result()
                    if not queue:
                        break
            while queue:
                yield queue.popleft().result()
        finally:
            for f in queue:
                f.cancel()
            # A read abandoned early (a scan's slice or head) may be finalized by the garbage
            # collector on the pool's own worker, whose last job held the reader: it cannot
            # wait for itself (RuntimeError: cannot join current thread).
            own = threading.current_thread() in getattr(pool, "_threads", ())
            pool.shutdown(wait=not own, cancel_futures=True)

    def _submit(self, pool: ThreadPoolExecutor, batch: _Batch | None) -> Future[pl.DataFrame]:
        """Type ``batch`` on the worker (native columns) or here (see _table_frames)."""
        if batch is not None and batch.columnar:
            return pool.submit(self._typed, batch)
        done: Future[pl.DataFrame] = Future()
        try:
            done.set_result(self._typed(batch) if batch is not None else self._empty())
        except Exception as e:  # (raised in order, by the caller's .result())
            done.set_exception(e)
        return done

    def _jobs(self) -> Iterator[_Batch | None]:
        """The output batches, in order, to be typed (types decided here;
        None: the empty frame of a table without rows)."""
        pending: list[_Batch] = []
        seen = 0
        try:
            for batch in self._batches():
                if self.dtypes is None:
                    pending.append(batch)
                    seen += batch.n
                    # Past the first infer_schema_length rows (one more row
                    # tells that the table goes on): the types, from those.
                    if self.infer is not None and seen > self.infer:
                        self._decide(_head(pending, self.infer), complete=False)
                    if self.dtypes is not None:
                        for b in pending:
                            yield b
                        pending = []
                else:
                    yield batch
        except ToonDecodeError:
            # An error further on: the rows before it are typed first (with
            # the types they give so far), so a bad value among them is
            # reported, not the later error.
            if pending and self.selected is not None:
                self._decide(pending, complete=False)
                for b in pending:
                    yield b
            raise
        if self.dtypes is None:
            if self.selected is None:  # the table had no rows
                if self.scan.names is None:
                    return
                self._layout()
            self._decide(pending, complete=not self.more_sources)
            for b in pending:
                yield b
            if not pending:
                yield None

    def _batches(self) -> Iterator[_Batch]:
        pieces: list[Piece] = []
        n = 0
        size = self.batch_size
        first = True  # (no batch made yet)
        try:
            for piece in self.scan.pieces():
                if self.selected is None:
                    self._layout()
                piece = self._project(piece)
                if first and self.dtypes is None and self.infer is not None and n + piece.n > self.infer:
                    # The types are those of the first infer_schema_length
                    # rows (and one more tells the table goes on): decided
                    # as soon as the first batch holds them, so that the
                    # native splitter types the next run as it splits it
                    # (FrameReader._plan), not only once the batch is whole
                    # (_jobs decides when the rows span batches).  A bad
                    # number among those rows leaves the decision, and its
                    # error, to the whole batch, so errors come in the same
                    # order as without this shortcut.
                    with contextlib.suppress(ToonDecodeError):
                        self._decide(_head([self._batch([*pieces, piece])], self.infer), complete=False)
                while n + piece.n >= size:
                    head, piece = piece.split(size - n)
                    pieces.append(head)
                    first = False
                    yield self._batch(pieces)
                    pieces, n = [], 0
                if piece.n:
                    pieces.append(piece)
                    n += piece.n
        except ToonDecodeError:
            if pieces:  # the rows before the error, for _jobs to check
                yield self._batch(pieces)
            raise
        if self.selected is None and self.scan.names is not None:
            self._layout()
        if pieces:
            yield self._batch(pieces)

    def _project(self, piece: Piece) -> Piece:
        """The piece's selected columns."""
        sel = self.selected
        assert sel is not None and self.scan.names is not None
        if len(sel) != len(self.scan.names) or sel != list(range(len(sel))):
            frame = piece.frame.select([piece.frame.columns[i] for i in sel]) if piece.frame is not None else None
            pick = itemgetter(*sel) if sel else (lambda r: ())
            rows = [pick(r) for r in piece.rows] if len(sel) != 1 else [(pick(r),) for r in piece.rows]
            piece = Piece(
                frame, rows, piece.pos, piece.line,
                gaps=piece.gaps, texts=piece.texts, full=piece.full, src=piece.src, skip=piece.skip,
            )
        return piece

    def _batch(self, pieces: list[Piece]) -> _Batch:
        # The clean-up is polars work: done where the batch is typed, or for
        # inference here.
        return _Batch(pieces)

    def _clean(self, batch: _Batch) -> None:
        if batch.clean or batch.columnar:
            return  # (native columns are trimmed as split; their tokens, once made, are not)
        batch.clean = True
        fast = batch.fast
        if fast is not None:
            # The fast path's deferred clean-up, one pass: the first column
            # still carries the row indentation; spaced cells are trimmed;
            # empty cells came back null.
            first = [pl.col(n).str.slice(self.scan.plen) if n == "c0" else pl.col(n) for n in fast.columns]
            padded = fast.select(
                [
                    (c.str.ends_with(" ") | c.str.starts_with(" ")).any().alias(n)
                    for c, n in zip(first, fast.columns)
                ]
            ).row(0, named=True)
            fixes = []
            for name in fast.columns:
                c = pl.col(name)
                changed = False
                if name == "c0":
                    c, changed = c.str.slice(self.scan.plen), True
                if padded[name]:
                    # (A marked quoted token keeps its spaces: they are inside the quotes.)
                    c = pl.when(c.str.starts_with(QUOTED)).then(c).otherwise(c.str.strip_chars(" ")) if self.scan.quoted else c.str.strip_chars(" ")
                    changed = True
                if fast.get_column(name).null_count():
                    c, changed = c.fill_null(""), True
                if changed:
                    fixes.append(c.alias(name))
            if fixes:
                batch.fast = fast.with_columns(fixes)

    def _decide(self, batches: list[_Batch], *, complete: bool) -> None:
        width = len(self.leaf_names)
        dtypes: list[pl.DataType] = []
        errors: list[tuple[tuple[int, int], ToonDecodeError]] = []
        self.forced = []
        for i in range(width):
            given = self.given[i]
            if given is not None:
                dtypes.append(given)
                self.forced.append(True)
                continue
            known = self.known[i]
            if known is not None:
                dtypes.append(known)
                self.forced.append(False)
                continue
            bits = 0
            try:
                for b in batches:
                    bits |= self._column_bits(b, i)
            except ToonDecodeError as e:
                # A bad number token: the document's first such error is raised, whichever column
                errors.append(((e.line or 0, i), e))
                dtypes.append(pl.String())
                self.forced.append(False)
                continue
            dtype = infer_dtype(bits, complete=complete)
            if self.try_parse_dates and bits & ~K_NULL == K_STR:
                # Strings only: ISO dates or datetimes, all of one form?
                dtype = iso_dtype(self._window_strings(batches, i)) or dtype
            dtypes.append(dtype)
            self.forced.append(False)
        if errors:
            raise min(errors, key=itemgetter(0))[1]
        self.dtypes = dtypes
        self.inferred_from = sum(b.n for b in batches)
        self.scan.plan = self._plan()
        self.scan.run_cap = None

    def _plan(self) -> list[tuple[str, int]] | None:
        """Per leaf column of the scan, how the native splitter types its
        cells as it splits them (layout, kinds allowed): the layout
        ``_typed_native`` asks for, and the kinds it lets through, so a
        typed run gives the same frame.  Unselected columns are only split.
        None (cells, typed later) on the reference's splitter, or where a
        column's dtype is typed by the reference (the whole batch goes its
        way anyway)."""
        from . import _engine

        scan = self.scan
        native = _engine.current().table_columns
        if native is None or scan.splitter is not native or scan.names is None or self.dtypes is None:
            return None
        plan: list[tuple[str, int]] = [("-", 0xFF)] * len(scan.names)
        assert self.selected is not None
        for i, leaf in enumerate(self.selected):
            base = base_dtype(self.dtypes[i])
            layout = _LAYOUTS.get(_native_kind(base) or "")
            if layout is None:
                return None
            if i in self.exact:
                # (a Decimal type with a scale, cast from the String column: a number's
                # token keeps its digits, where its canonical text is its float's)
                layout = "t"
            allowed = allowed_kinds(self.dtypes[i], self.forced[i]) & 0xFF
            plan[leaf] = (layout, allowed)
        return plan

    def _window_strings(self, batches: list[_Batch], i: int) -> pl.Series:
        """Column i of ``batches`` (strings and nulls only) as a String series."""
        parts: list[pl.Series] = []
        for b in batches:
            self._clean(b)
            if b.columnar:
                assert b.native is not None
                parts.extend(v.series(i, "utf8").alias("s") for v in b.native)
            elif b.fast is not None:
                parts.append(pl.Series("s", self._fast_values(b, i), dtype=pl.String))
            if b.rows:
                parts.append(pl.Series("s", [r[i] for r in b.rows], dtype=pl.String))
        return pl.concat(parts) if parts else pl.Series("s", [], dtype=pl.String)

    def _how(self, i: int) -> str:
        """Where column i's dtype came from, and the fix (error messages)."""
        if self.forced[i]:
            return "the dtype given in schema_overrides" if self.given_by[i] == "schema_overrides" else "the schema's dtype"
        how = f"inferred from the first {self.inferred_from} rows"
        if self.known[i] is not None:
            how = self.inferred_how
        return f"{how}; {SCHEMA_HINT}"

    def _fast_values(self, batch: _Batch, i: int) -> list[Any]:
        """The fast rows' tokens of column i, decoded by the grammar's
        column converter (kept: inference and typing both ask)."""
        values = batch.values.get(i)
        if values is not None:
            return values
        assert batch.fast is not None
        tokens = batch.fast.to_series(i).to_list()
        quoted = [r for r, t in enumerate(tokens) if t[:1] == QUOTED] if self.scan.quoted else []
        # A marked quoted token is a string whatever it holds: the converter
        # sees "null" in its place (any token would do), then it is put back.
        plain = tokens
        if quoted:
            plain = list(tokens)
            for r in quoted:
                plain[r] = "null"
        try:
            values = list((self._convert_exact if i in self.exact else self._convert_column)(plain))
        except Fail:
            # Error path: the first failing token, and its row.
            for r, tok in enumerate(plain):
                try:
                    self._convert(tok)
                except Fail as e:
                    raise self._error(batch, r, None, i, e.msg, e.code) from None
            raise
        delim = self.scan.delim
        for r in quoted:
            values[r] = untoken(tokens[r], delim)
        batch.values[i] = values
        return values

    def _exact_floats(self, batch: _Batch, i: int, values: list[Any]) -> list[Any]:
        """Column i's fast values, its floats as the exact Decimals of their
        tokens (a String column holds the number written, as the decoder
        rows' Decimals give it; the fast path's converter makes floats)."""
        assert batch.fast is not None
        tokens = batch.fast.to_series(i).to_list()
        return [decimal_float(t) if type(v) is float else v for v, t in zip(values, tokens)]

    def _column_bits(self, batch: _Batch, i: int) -> int:
        self._clean(batch)
        bits = 0
        if batch.columnar:
            assert batch.native is not None
            for v in batch.native:
                bits |= v.bits(i)
        elif batch.fast is not None:
            bits |= values_kinds(self._fast_values(batch, i))
        if batch.rows:
            bits |= values_kinds([r[i] for r in batch.rows])
        return bits

    def _typed(self, batch: _Batch) -> pl.DataFrame:
        if batch.columnar:
            frame = self._typed_native(batch)
            if frame is not None:
                return frame
            batch.materialize()  # the reference's way, from the same cells' tokens
        self._clean(batch)
        assert self.dtypes is not None
        runs = batch.runs()
        bases = [base_dtype(d) for d in self.dtypes]
        fast_cols: dict[int, pl.Series] = {}
        # Per column, its first value that does not fit; raised is the first
        # in the document, whichever column (and check: kind or cast) found it.
        misfits: dict[int, ToonDecodeError] = {}
        if batch.fast is not None:
            for i, n in enumerate(batch.fast.columns):
                try:
                    values = self._fast_values(batch, i)
                except ToonDecodeError as e:  # (a bad number: the document's first error wins, below)
                    misfits[i] = e
                    continue
                allowed = allowed_kinds(self.dtypes[i], self.forced[i])
                misfit = self._misfit(batch, i, values_kinds(values), allowed, self.dtypes[i], fast=values)
                if misfit is not None:
                    misfits[i] = misfit
                    continue
                if bases[i] == pl.String and float in set(map(type, values)):
                    values = self._exact_floats(batch, i, values)
                fast_cols[i] = convert_values(n, values, bases[i])
        # The decoder rows' values, a list per column (checked, then converted)
        exact_cols = [list(col) for col in zip(*batch.rows)] if batch.rows else []
        for i, values in enumerate(exact_cols):
            misfit = self._misfit(batch, i, values_kinds(values), allowed_kinds(self.dtypes[i], self.forced[i]), self.dtypes[i], exact=values)
            if misfit is not None and (i not in misfits or (misfit.line or 0) < (misfits[i].line or 0)):
                misfits[i] = misfit
        leaves: list[pl.Series] = []
        for i, dtype in enumerate(self.dtypes):
            if i in misfits:
                continue
            base = bases[i]
            name = f"c{i}"
            parts: list[pl.Series] = []
            if i in fast_cols:
                parts.append(fast_cols[i].alias(name))
            try:
                leaves.append(self._leaf(batch, parts, exact_cols, runs, name, base, dtype, i))
            except ToonDecodeError as e:
                misfits[i] = e
        if misfits:
            # The document's first; on one line, the first column in selection
            # order (not the order the checks above happened to find them in,
            # which differs between the fast and the decoder rows).
            raise min(misfits.items(), key=lambda kv: (kv[1].line or 0, kv[0]))[1]
        return _frame(self._assemble(leaves, batch.n))

    def _typed_native(self, batch: _Batch) -> pl.DataFrame | None:
        """The batch typed from the native engine's columns, exactly as
        :meth:`_typed` types the same rows; None where the token path must
        (a value that does not fit, which it reports)."""
        assert self.dtypes is not None and batch.native is not None
        views = batch.native
        runs = batch.runs()
        exact_cols = [list(col) for col in zip(*batch.rows)] if batch.rows else []
        leaves: list[pl.Series] = []
        for i, dtype in enumerate(self.dtypes):
            base = base_dtype(dtype)
            allowed = allowed_kinds(dtype, self.forced[i])
            bits = 0
            for v in views:
                bits |= v.bits(i)
            kind = _native_kind(base)
            if bits & ~allowed or kind is None:
                return None
            if exact_cols and values_kinds(exact_cols[i]) & ~allowed:
                return None
            name = f"c{i}"
            if kind == "null":
                parts = [pl.Series(name, [None] * batch.n_fast, dtype=pl.Null)]
            else:
                if i in self.exact:
                    kind = "raw"  # (a Decimal type with a scale: cast from the tokens' digits, see _plan)
                parts = [v.series(i, kind).alias(name) for v in views]
            try:
                leaves.append(self._leaf(batch, parts, exact_cols, runs, name, base, dtype, i))
            except ToonDecodeError:
                return None  # (the token path finds the document's first error)
        return _frame(self._assemble(leaves, batch.n))

    def _leaf(
        self,
        batch: _Batch,
        parts: list[pl.Series],
        exact_cols: list[list[Any]],
        runs: list[tuple[bool, int]] | None,
        name: str,
        base: pl.DataType,
        dtype: pl.DataType,
        i: int,
    ) -> pl.Series:
        """Column ``i`` of a batch from its fast pieces ``parts`` and its
        decoder rows' values, in row order, cast to ``dtype`` (a value that
        does not fit raises its ToonDecodeError)."""
        exact = convert_values(name, exact_cols[i], base) if exact_cols else None
        if runs is not None and parts and exact is not None and len(runs) <= _SLICED_RUNS:
            # In order by slices of the two (no copy): the usual interleaving
            # is a few runs (the rows the decoder read before a table's first
            # fast run, a comment line or a misfit row now and then).
            fast = parts[0] if len(parts) == 1 else pl.concat(parts, rechunk=False)
            at = [0, 0]  # (the next fast row, the next decoder row)
            slices = []
            for is_exact, n in runs:
                slices.append((exact if is_exact else fast).slice(at[is_exact], n))
                at[is_exact] += n
            s = pl.concat(slices, rechunk=False)
        else:
            if exact is not None:
                parts.append(exact)
            s = parts[0] if len(parts) == 1 else pl.concat(parts, rechunk=False)
            order = batch.order()
            if order is not None:
                s = s.gather(order)
        if base != dtype:
            s = self._cast(batch, s, dtype, i)
        if self.arrow_check is not None:
            found = self.arrow_check(self.leaf_names[i], s)
            if found is not None:
                row, reason, t = found
                fast_row, exact_row = batch.split_row(row)
                raise self._error(
                    batch, fast_row, exact_row, i,
                    f"column {self.leaf_names[i]!r}: value {s[row]!r} does not convert to {t} ({reason})",
                    "type_mismatch",
                )
        return s

    def _misfit(
        self,
        batch: _Batch,
        i: int,
        bits: int,
        allowed: int,
        dtype: pl.DataType,
        *,
        fast: list[Any] | None = None,
        exact: list[Any] | None = None,
    ) -> ToonDecodeError | None:
        """The error for column ``i``'s first value that does not fit its
        dtype (None if all fit)."""
        bad = bits & ~allowed
        if not bad:
            return None
        # Error path: find the first offending row.
        fast_row = exact_row = None
        if exact is not None:
            exact_row = row = next(r for r, v in enumerate(exact) if value_kind(v) & bad)
            bad &= value_kind(exact[row])  # (that row's own kind, for the message)
        else:
            values = fast if fast is not None else self._fast_values(batch, i)
            fast_row = row = next(r for r, v in enumerate(values) if value_kind(v) & bad)
            bad &= value_kind(values[row])
        how = self._how(i)
        return self._error(
            batch,
            fast_row,
            exact_row,
            i,
            f"column {self.leaf_names[i]!r} holds {kind_name(bad)}, which does not fit its type {dtype} ({how})",
            "type_mismatch",
        )

    def _cast(self, batch: _Batch, s: pl.Series, dtype: pl.DataType, i: int) -> pl.Series:
        """``s`` (of its base dtype, in row order) -> ``dtype``: an inferred
        date/datetime column takes its ISO forms only (try_parse_dates); a
        user's dtype, what polars' cast or str.to_date/to_datetime take."""
        if isinstance(s.dtype, pl.Decimal) and dtype.is_integer():
            s = s.cast(pl.Int128)  # (exact: base_dtype's Decimal(38, 0) holds integers; a misfit shows as one)
        if not self.forced[i] and s.dtype == pl.String and dtype.is_temporal():
            out = pl.DataFrame({"s": s}).select(iso_expr(pl.col("s"), dtype)).to_series().alias(s.name)
            bad = (out.is_null() & s.is_not_null()).arg_true()
            if not len(bad):
                return out
            row = int(bad[0])
            form = _ISO_FORMS[str(dtype.base_type()) if dtype == pl.Date else "tz" if getattr(dtype, "time_zone", None) else "naive"]
            fast_row, exact_row = batch.split_row(row)
            raise self._error(
                batch, fast_row, exact_row, i,
                f"column {self.leaf_names[i]!r} holds {s[row]!r}, not {form}, which does not fit its type {dtype} "
                f"({self._how(i)})",
                "type_mismatch",
            )
        try:
            return _cast(s, dtype, strict=True)
        except Exception:
            try:
                loose = _cast(s, dtype, strict=False)
            except Exception:  # (a cast polars cannot do at all, a List override of a number column say)
                loose = pl.Series(s.name, [None] * len(s), dtype=dtype)
            bad = (loose.is_null() & s.is_not_null()).arg_true()
            row = int(bad[0]) if len(bad) else 0
            fast_row, exact_row = batch.split_row(row)
            raise self._error(
                batch, fast_row, exact_row, i,
                f"column {self.leaf_names[i]!r}: value {s[row]!r} does not convert to {dtype}",
                "type_mismatch",
            ) from None

    def _error(self, batch: _Batch, fast_row: int | None, exact_row: int | None, i: int, message: str, code: str) -> ToonDecodeError:
        """The error at column ``i``'s cell of a row: its line, the cell's
        column and the line's text."""
        line, text, cells = batch.where(fast_row, exact_row)
        scan = self.scan
        delim = scan.header.delimiter if scan.header is not None else scan.delim
        leaf = self.selected[i] if self.selected is not None else i
        column = 1
        if cells is not None and leaf < len(cells) and text is None:
            # A plain row's line from its cells (the first still carries the
            # indentation; a quoted cell's token is its content as written).
            tokens = [_cell_text(c, delim) for c in cells]
            text = delim.join(tokens)
            column = sum(len(t) + 1 for t in tokens[:leaf]) + _indent_of(tokens[leaf]) + 1
        elif text is not None:
            column = _cell_column(text, leaf, scan.keyed, delim)
        return ToonDecodeError(
            message, code=code, line=line or scan.decoder.line, column=column, line_text=text or ""
        )

    def _assemble(self, leaves: list[pl.Series], n: int) -> list[pl.Series]:
        """Leaf series -> top-level series, nested field groups as structs (no recursion)."""
        it = iter(leaves)
        out: list[pl.Series] = []
        for name, children in self.tops:
            if children is None:
                out.append(next(it).alias(name))
                continue
            stack: list[tuple[Iterator[Any], str, list[pl.Series]]] = [(iter(children), name, [])]
            while stack:
                fields_it, group, built = stack[-1]
                f = next(fields_it, None)
                if f is None:
                    stack.pop()
                    s = _frame(built).to_struct(group) if built else pl.Series(group, [None] * n, dtype=pl.Null)
                    if stack:
                        stack[-1][2].append(s)
                    else:
                        out.append(s)
                elif f.children is None:
                    built.append(next(it).alias(f.name))
                else:
                    stack.append((iter(f.children), f.name, []))
        return out

    def _empty(self) -> pl.DataFrame:
        assert self.dtypes is not None
        leaves = [pl.Series(f"c{i}", [], dtype=d) for i, d in enumerate(self.dtypes)]
        return _frame(self._assemble(leaves, 0))


def _head(batches: list[_Batch], k: int) -> list[_Batch]:
    """The first ``k`` rows of ``batches`` (the last one cut: new pieces, the
    same rows)."""
    out: list[_Batch] = []
    for b in batches:
        if k <= 0:
            break
        if b.n <= k:
            out.append(b)
            k -= b.n
            continue
        pieces = []
        for p in b.pieces:
            if k <= 0:
                break
            if p.n > k:
                p = p.split(k)[0]
            pieces.append(p)
            k -= p.n
        out.append(_Batch(pieces))
    return out


def _cast(s: pl.Series, dtype: pl.DataType, *, strict: bool) -> pl.Series:
    """``s`` (decoded to its base dtype) -> ``dtype``; ISO text for temporal types."""
    if s.dtype == pl.String:
        if dtype == pl.Date:
            return s.str.to_date(strict=strict)
        if isinstance(dtype, pl.Datetime):
            return s.str.to_datetime(time_unit=dtype.time_unit, time_zone=dtype.time_zone, strict=strict)
        if dtype == pl.Time:
            return s.str.to_time(strict=strict)
    return s.cast(dtype, strict=strict)  # type: ignore[no-any-return]


def is_scaled_decimal(dtype: Any) -> bool:
    """A Decimal type with a scale: its column takes the numbers' exact digits."""
    return isinstance(dtype, pl.Decimal) and bool(dtype.scale)


def as_float(value: Decimal) -> float | Decimal:
    """A number the decoder made a Decimal (``parse_float=Decimal``) as it
    makes it without: a float, -0.0 as 0.0, an exact Decimal beyond float
    range (see ``make_converter``)."""
    f = float(value)
    return value if math.isinf(f) else f if f else 0.0


def _scaled_decimal(schema: Mapping[str, Any] | None, overrides: Mapping[str, Any] | Sequence[Any] | None) -> bool:
    """Whether the user's types give some column a Decimal type with a scale."""
    try:  # (a schema as (name, type) pairs, as the reader takes it; anything else it refuses)
        given = [*dict(schema or {}).values(), *(overrides.values() if isinstance(overrides, Mapping) else overrides or ())]
    except (TypeError, ValueError):
        return False
    for dtype in given:
        with contextlib.suppress(TypeError):  # (refused with its message by _layout)
            if any(is_scaled_decimal(d) for _, d in _dtype_leaves(dtype)):
                return True
    return False


def _dtype_leaves(dtype: Any) -> list[tuple[tuple[str, ...], Any]]:
    """A dtype's leaves as (path below it, leaf dtype) pairs: ``((), dtype)``
    for a non-struct, the fields' paths for a struct (no recursion)."""
    out: list[tuple[tuple[str, ...], Any]] = []
    todo: list[tuple[tuple[str, ...], Any]] = [((), dtype)]
    while todo:
        path, d = todo.pop()
        if isinstance(d, pl.Struct):
            todo.extend((path + (f.name,), f.dtype) for f in reversed(d.fields))
        elif isinstance(d, pl.DataType):
            out.append((path, d))
        elif isinstance(d, type) and issubclass(d, pl.DataType):
            out.append((path, d()))  # (a class, pl.Int64, as Polars takes it)
        else:
            # Polars' own refusal (type names as text are the CLI's --schema-overrides)
            raise TypeError(f"cannot parse input of type {type(d).__name__!r} into a Polars data type (given: {d!r})")
    return out


def _leaf_paths(name: str, children: Fields | None) -> list[tuple[str, ...]]:
    """Paths of a top-level column's leaves, in row order (no recursion)."""
    if children is None:
        return [(name,)]
    out: list[tuple[str, ...]] = []
    todo: list[tuple[tuple[str, ...], Iterator[Any]]] = [((name,), iter(children))]
    while todo:
        path, it = todo[-1]
        f = next(it, None)
        if f is None:
            todo.pop()
        elif f.children is None:
            out.append(path + (f.name,))
        else:
            todo.append((path + (f.name,), iter(f.children)))
    return out


def _indent_of(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _frame(columns: list[pl.Series]) -> pl.DataFrame:
    """A frame of named series, names kept as they are (unique: see
    FrameReader._check_names).  ``pl.DataFrame(list)`` would rename an empty
    name to ``column_0``."""
    return pl.DataFrame({s.name: s for s in columns})


# ------------------------------------------------------------------ type names (the CLI's --schema-overrides)

_SIMPLE_TYPES: dict[str, Callable[[], pl.DataType]] = {
    **{f"int{b}": getattr(pl, f"Int{b}") for b in (8, 16, 32, 64)},
    **{f"uint{b}": getattr(pl, f"UInt{b}") for b in (8, 16, 32, 64)},
    "float32": pl.Float32, "float": pl.Float32, "float64": pl.Float64, "double": pl.Float64,
    "string": pl.String, "utf8": pl.String, "str": pl.String, "large_string": pl.String, "large_utf8": pl.String,
    "boolean": pl.Boolean, "bool": pl.Boolean,
    "date": pl.Date, "date32": pl.Date,
    "time": pl.Time,
    "null": pl.Null,
}
_TYPE_NAME = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:[(\[](.*)[)\]])?\s*", re.S)
_UNITS = ("ms", "us", "ns")


def parse_dtype(text: str) -> pl.DataType:
    """A Polars or Arrow type name as a Polars dtype, case-insensitively:
    ``Int8``-``Int64``, ``UInt8``-``UInt64``, ``Float32``/``float``,
    ``Float64``/``double``, ``String``/``Utf8``/``large_string``,
    ``Boolean``/``bool``, ``Date``/``date32``, ``Time``, ``Null``,
    ``Datetime``, ``Datetime(us)``, ``Datetime(us, UTC)`` (also
    ``timestamp[us, tz=UTC]``, ``time_unit=``/``time_zone=`` keywords),
    ``Decimal(38, 0)``/``decimal128(38, 0)``.  ValueError otherwise."""
    m = _TYPE_NAME.fullmatch(text)
    if m is None:
        raise ValueError(f"not a type: {text!r}")
    name, inner = m.group(1).lower(), m.group(2)
    args: list[str] = []
    kwargs: dict[str, str] = {}
    if inner is not None and inner.strip():
        for part in inner.split(","):
            part = part.strip()
            key, eq, value = part.partition("=")
            if eq:
                kwargs[key.strip().lower()] = value.strip().strip("'\"")
            else:
                args.append(part.strip("'\""))
    if name in _SIMPLE_TYPES and not args and not kwargs:
        return _SIMPLE_TYPES[name]()
    if name in ("datetime", "timestamp"):
        unit = kwargs.pop("time_unit", None) or (args.pop(0) if args else "us")
        zone = kwargs.pop("time_zone", None) or kwargs.pop("tz", None) or (args.pop(0) if args else None)
        if unit in _UNITS and not args and not kwargs:
            dtype = pl.Datetime(unit, zone if zone not in ("", "None", "none") else None)  # type: ignore[arg-type]
            if dtype.time_zone is not None:
                try:  # polars checks the zone name only when it is used
                    pl.Series([0]).cast(dtype)
                except pl.exceptions.PolarsError:
                    raise ValueError(f"unknown time zone {dtype.time_zone!r} in {text.strip()!r}") from None
            return dtype
    if name in ("decimal", "decimal128"):
        try:
            precision = int(kwargs.pop("precision", "") or (args.pop(0) if args else "38"))
            scale = int(kwargs.pop("scale", "") or (args.pop(0) if args else "0"))
        except ValueError:
            pass
        else:
            if 1 <= precision <= 38 and 0 <= scale <= precision and not args and not kwargs:
                return pl.Decimal(precision, scale)
    raise ValueError(
        f"unknown type {text.strip()!r} (known: Int8-Int64, UInt8-UInt64, Float32, Float64, String, Boolean, "
        "Date, Time, Datetime(us, UTC), Decimal(38, 0), Null)"
    )


def parse_schema_overrides(text: str) -> dict[str, pl.DataType]:
    """``name=Type,name=Type`` (commas inside parentheses or brackets belong
    to the type; a name with ``,``, ``=`` or ``"`` is written as a JSON
    string: ``"a,b"=Int64``) -> {name: dtype}.  ValueError if malformed."""
    import json

    parts: list[str] = []
    depth = 0
    quoted = False
    start = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if quoted:
            if ch == "\\":
                i += 1
            elif ch == '"':
                quoted = False
        elif ch == '"':
            quoted = True
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    out: dict[str, pl.DataType] = {}
    for part in parts:
        item = part.strip()
        if not item:
            continue
        if item.startswith('"'):
            try:
                name, end = json.JSONDecoder().raw_decode(item)
            except ValueError:
                raise ValueError(f"bad quoted column name in {item!r}") from None
            rest = item[end:].lstrip()
            if not rest.startswith("="):
                raise ValueError(f"expected NAME=TYPE, got {item!r}")
            type_text = rest[1:]
        else:
            name, eq, type_text = item.partition("=")
            name = name.strip()
            if not eq or not name:
                raise ValueError(f"expected NAME=TYPE, got {item!r}")
        out[name] = parse_dtype(type_text)
    return out


# ------------------------------------------------------------------ ISO dates (try_parse_dates)

# The forms an inferred Date/Datetime column takes: YYYY-MM-DD; and
# YYYY-MM-DD, "T" or a space, HH:MM, optional :SS, optional fraction of 1-9
# digits, optional "Z" or a UTC offset +HH:MM / +HHMM.  (No leap second, no
# week or ordinal dates, no other orders: those stay strings.)
_ISO_DATE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
_ISO_DATETIME = (
    r"^(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})[T ](?P<hm>[0-9]{2}:[0-9]{2})(?P<sec>:[0-5][0-9])?"
    r"(?P<frac>\.[0-9]{1,9})?(?P<tz>Z|[+-][0-9]{2}:?[0-9]{2})?$"
)
_ISO_FORMS = {
    "Date": "an ISO date (YYYY-MM-DD)",
    "naive": "an ISO datetime without a UTC offset",
    "tz": "an ISO datetime with Z or a UTC offset",
}


def iso_expr(c: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """Strings -> ``dtype`` (Date, or Datetime naive or in UTC) for exactly
    the ISO forms above; null for anything else (a datetime's offset is
    required for a UTC column, refused for a naive one; more fraction digits
    than the time unit holds are refused, not truncated)."""
    if dtype == pl.Date:
        return pl.when(c.str.contains(_ISO_DATE)).then(c.str.to_date("%Y-%m-%d", strict=False))
    assert isinstance(dtype, pl.Datetime)
    unit = dtype.time_unit or "us"
    g = c.str.extract_groups(_ISO_DATETIME)
    frac = g.struct.field("frac")
    text = pl.concat_str(
        [g.struct.field("date"), pl.lit("T"), g.struct.field("hm"), g.struct.field("sec").fill_null(":00"), frac.fill_null("")]
    )
    fits = frac.is_null() | (frac.str.len_chars() <= 1 + {"ms": 3, "us": 6, "ns": 9}[unit])
    tz = g.struct.field("tz")
    if dtype.time_zone is None:
        parsed = text.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f", time_unit=unit, strict=False)
        return pl.when(fits & tz.is_null()).then(parsed)
    offset = pl.when(tz == "Z").then(pl.lit("+00:00")).otherwise(tz.str.slice(0, 3) + ":" + tz.str.slice(-2))
    parsed = (text + offset).str.to_datetime("%Y-%m-%dT%H:%M:%S%.f%:z", time_unit=unit, strict=False)
    return pl.when(fits & tz.is_not_null()).then(parsed.dt.convert_time_zone(dtype.time_zone))


def iso_dtype(s: pl.Series) -> pl.DataType | None:
    """The dtype for a String column's values if all are ISO dates (Date),
    or all ISO datetimes without offsets (Datetime), or all with one
    (Datetime in UTC); time unit "us", "ns" if some fraction has more than 6
    digits.  None otherwise (mixed forms, invalid dates, other text)."""
    v = s.drop_nulls()
    if not len(v):
        return None
    dtype: pl.DataType
    if v.str.contains(_ISO_DATE).all():
        dtype = pl.Date()
    else:
        g = v.str.extract_groups(_ISO_DATETIME).struct
        if g.field("date").null_count():
            return None
        tz = g.field("tz").is_not_null()
        if tz.any() and not tz.all():
            return None
        longest = g.field("frac").str.len_chars().max()
        unit: Literal["ns", "us"] = "ns" if isinstance(longest, int) and longest > 7 else "us"
        dtype = pl.Datetime(unit, "UTC" if tz.any() else None)
    parsed = pl.DataFrame({"s": v}).select(iso_expr(pl.col("s"), dtype)).to_series()
    return dtype if not parsed.null_count() else None


# ------------------------------------------------------------------ options

#: The Decoder options a table reader honours: they shape what is valid
#: TOON, not what a value becomes.
TABLE_OPTIONS = frozenset(("indent_size", "strict", "max_depth", "max_line_length", "max_number_length", "max_fields"))

# Value hooks of loads/items: a table's values are typed column-wise (the
# native engine makes no Python object for most rows), so a per-value hook
# cannot be honoured; refused by name rather than ignored.
_VALUE_HOOKS = frozenset(("parse_float", "parse_int", "parse_constant", "object_hook", "object_pairs_hook", "map_type"))


def check_frame_args(batch_size: int, infer_schema_length: int | None, schema_overrides: Any) -> None:
    """The table readers' checks of these arguments (scan_toon's too, when it is called)."""
    if batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    if infer_schema_length is not None and infer_schema_length < 0:
        raise ValueError("infer_schema_length must be >= 0 or None")
    if schema_overrides is not None and (
        isinstance(schema_overrides, str) or not isinstance(schema_overrides, (Mapping, Sequence))
    ):
        raise TypeError("schema_overrides must be a mapping of column names to dtypes, or a sequence of dtypes")


def check_options(function: str, options: Mapping[str, Any]) -> None:
    """A TypeError naming the public ``function`` for an option that is not
    a table reader's (in :data:`TABLE_OPTIONS`), as Python's own for an
    unknown keyword; a value hook says why it is refused (None, json's
    "not set", passes)."""
    for name, value in options.items():
        if name in _VALUE_HOOKS and value is not None:
            raise TypeError(
                f"{function}() does not take {name}: table columns are typed as a whole "
                "(infer_schema_length, schema, schema_overrides), never value by value "
                "(toonstream.loads and the streaming readers take value hooks)"
            )
    unknown = [n for n in options if n not in TABLE_OPTIONS and n not in _VALUE_HOOKS]
    if unknown:
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}")


# ------------------------------------------------------------------ sources

#: the file path column's value for a source that is not a file (as Polars)
IN_MEMORY = "in-mem"
_GLOB_CHARS = frozenset("*?[")


def expand_sources(source: Any, *, glob: bool = True, hidden: bool = True) -> list[tuple[Any, str]]:
    """``source`` as Polars' readers take it, as (source, label) pairs in
    reading order: a path (``~`` expanded), a glob (``*`` also matches
    hidden names, ``**`` any depth; sorted), a directory (every file below
    it, at any depth, sorted; one file extension), bytes, a file object, or
    a list of these.  The label is the path as Polars writes it in the
    ``include_file_paths`` column (``"in-mem"`` for bytes and file objects).
    ``hidden=False``: a directory's files and subdirectories whose names
    start with ``.`` or ``_`` are left out, as Spark's and Dask's readers
    leave them (a writer's staging and spool directories are such).
    Files are not opened here: a missing one fails when it is read."""
    import os

    items = list(source) if isinstance(source, (list, tuple)) else [source]
    if not items:
        raise ValueError("no source given (an empty list)")
    out: list[tuple[Any, str]] = []
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            out.append((item, IN_MEMORY))
            continue
        path = os.path.expanduser(os.fspath(item))
        if not isinstance(path, str):
            raise TypeError(f"expected a str path, got {type(path).__name__}")
        if glob and _GLOB_CHARS & set(path):
            found = sorted(p for p in _glob(path) if os.path.isfile(p))
            if not found:
                raise FileNotFoundError(2, "no file matches the glob pattern", path)
            out.extend((p, p) for p in found)
        elif os.path.isdir(path):
            found = sorted(os.path.join(d, f) for d, _, files in _walk(path, hidden) for f in files)
            if not found:
                raise FileNotFoundError(2, "no file in the directory", path)
            exts = {os.path.splitext(p)[1] for p in found}
            if len(exts) > 1:
                # As Polars: which files are meant must be said with a glob.
                raise pl.exceptions.InvalidOperationError(
                    f"directory {path!r} holds files of different extensions ({', '.join(sorted(exts))}): "
                    f"give a glob pattern for the files to read (e.g. {os.path.join(path, '**', '*.toon')!r})"
                )
            out.extend((p, p) for p in found)
        else:
            out.append((path, path))
    return out


def _walk(top: str, hidden: bool) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(top)``, without names starting with ``.`` or ``_`` unless ``hidden``."""
    import os

    for d, dirs, files in os.walk(top):
        if not hidden:
            dirs[:] = [x for x in dirs if x[:1] not in "._"]  # (pruned: not walked into)
            files = [f for f in files if f[:1] not in "._"]
        yield d, dirs, files


def _glob(pattern: str) -> Iterator[str]:
    """Paths matching ``pattern`` as Polars matches them: a wildcard also
    matches a name starting with ``.`` (pathlib's rule; ``glob.glob`` hides
    them before Python 3.11), ``**`` any number of directories.  Paths
    start as the pattern does, as Polars writes them: repeated separators
    as one, without a leading ``./``."""
    import os
    from pathlib import Path

    pattern = re.sub(re.escape(os.sep) + "+", lambda _: os.sep, pattern)
    while pattern.startswith("." + os.sep):
        pattern = pattern[2:]
    parts = pattern.split(os.sep)
    first = next(i for i, part in enumerate(parts) if _GLOB_CHARS & set(part))
    base = os.sep.join(parts[:first]) or (os.sep if first else "")  # ("/*": the root)
    root = Path(base or ".")
    for match in root.glob(os.sep.join(parts[first:])):
        yield os.path.join(base, str(match.relative_to(root)))


def check_columns(columns: Sequence[str | int] | str | int | None) -> list[str | int] | None:
    """``columns`` as Polars takes it: all names or all indexes, unique."""
    if columns is None:
        return None
    cols = [columns] if isinstance(columns, (str, int)) else list(columns)  # (one name or index, as read_csv)
    kinds = {type(c) for c in cols}  # (bool, an int subclass, is neither)
    if kinds - {str, int} or len(kinds) > 1:
        raise TypeError("columns must be all column names (str) or all indexes (int)")
    if len(set(cols)) != len(cols):
        raise ValueError(f"columns must be unique, got {cols}")
    return cols


class SourcesReader:
    """Frames of one or more sources read as one table, with Polars'
    multi-file conventions (as ``pl.read_csv`` on a list, glob or
    directory).

    The first source's header fixes the columns: every later one must have
    the same top-level columns (and field groups) in the same order, else a
    ``polars.exceptions.SchemaError``.  The column types are the first
    source's (from its first ``infer_schema_length`` rows, or the given
    ``schema``): a later source's value that does not fit is a
    ``type_mismatch``, as a later row of one file.  ``columns`` (names or
    indexes, negative from the end) pick among the table's columns and the
    ``include_file_paths`` column, in that order; the row index
    (``row_index_name``, dtype ``pl.get_index_type()``) comes first and
    counts rows across sources; ``n_rows`` is the total (later sources are
    not opened).  ``reader``: the :class:`FrameReader` options.
    """

    def __init__(
        self,
        sources: list[tuple[Any, str]],
        *,
        columns: Sequence[str | int] | str | int | None = None,
        n_rows: int | None = None,
        row_index_name: str | None = None,
        row_index_offset: int = 0,
        include_file_paths: str | None = None,
        inferred: Mapping[str, Any] | None = None,
        inferred_how: str | None = None,
        expect: Sequence[str] | None = None,
        **reader: Any,
    ) -> None:
        """``expect``: the table's columns, as a plan promised them (a
        ``schema`` given to scan_toon instead of a probe); ``inferred``: the
        dtypes a scan's probe found in the first source's first rows
        (``inferred_how`` says how many, for error messages)."""
        if n_rows is not None and n_rows < 0:
            raise ValueError("n_rows must be >= 0 or None")
        if row_index_offset < 0:
            raise ValueError(f"row_index_offset must be >= 0, got {row_index_offset}")
        self.sources = sources
        self.columns = check_columns(columns)
        self.n_rows = n_rows
        self.row_index = row_index_name
        self.offset = row_index_offset
        self.paths = include_file_paths
        self.inferred = dict(inferred) if inferred is not None else None
        self.inferred_how = inferred_how
        #: the rows the types were decided from (the first source's), once read
        self.inferred_rows: int | None = None
        self.expect = list(expect) if expect is not None else None
        self.reader = reader
        self.header: tuple[bool, Fields] | None = None  # the first source's (keyed, fields)
        self.first_label = ""
        self.current: tuple[FrameReader, str] | None = None  # the source being read, and its label
        self.picked: list[str] | None = None  # the output columns (before the row index), if chosen
        self.file_columns: list[str] | None = None  # those read from the sources
        if self.columns is not None and all(isinstance(c, str) for c in self.columns):
            self._pick([str(c) for c in self.columns])  # (indexes wait for the header)

    def _on_header(self, reader: FrameReader, label: str) -> None:
        scan = reader.scan
        fields = scan.fields or ()
        names = ([reader.key_field] if scan.keyed else []) + [f.name for f in fields]
        if self.header is None:
            self.header = (scan.keyed, fields)
            self.first_label = label
            if self.expect is not None and set(self.expect) != set(names):
                raise DtypeNameError(
                    f"schema gives the columns {self.expect}, {label}'s table has {names}: "
                    "a scan's schema must name every column of the table"
                )
            for option, name in (("row_index_name", self.row_index), ("include_file_paths", self.paths)):
                if name is not None and name in names:
                    raise pl.exceptions.DuplicateError(
                        f"{option}={name!r} names a column of the table: pass another name"
                    )
            if self.columns is not None:
                every = names + ([self.paths] if self.paths is not None else [])
                picked: list[str] = []
                for c in self.columns:
                    if isinstance(c, int):
                        if not -len(every) <= c < len(every):
                            raise pl.exceptions.ColumnNotFoundError(
                                f"column index {c} is out of range: the table has {len(every)} columns {every}"
                            )
                        picked.append(every[c])
                    else:
                        picked.append(c)
                self._pick(picked)
        elif (scan.keyed, fields) != self.header:
            first = ([reader.key_field] if self.header[0] else []) + [f.name for f in self.header[1]]
            raise pl.exceptions.SchemaError(
                f"{label}: the table's columns {names} differ from those of {self.first_label} {first} "
                "(every source must have the same columns, in the same order)"
            )
        # No column of the sources wanted (only the row index or the file
        # paths, or a row count): the first is read all the same, since a
        # frame without columns has no rows (dropped in _finish).
        reader.columns = self.file_columns if self.file_columns != [] else names[:1]

    def _pick(self, names: list[str]) -> None:
        self.picked = names
        self.file_columns = [c for c in names if c != self.paths]

    def __iter__(self) -> Iterator[pl.DataFrame]:
        left = self.n_rows
        row = self.offset
        fixed = self.inferred
        how = self.inferred_how if fixed is not None else None
        empty: pl.DataFrame | None = None  # a source with no rows: its frame, if no source has rows
        rows = False
        for k, (source, label) in enumerate(self.sources):
            if left is not None and left <= 0 and (rows or empty is not None):
                break
            reader = FrameReader(
                source,
                columns=self.file_columns or None,  # (see _on_header)
                n_rows=left,
                inferred=fixed,
                inferred_how=how,
                inferred_here=k == 0 and fixed is not None,
                on_header=partial(self._on_header, label=label),
                more_sources=k + 1 < len(self.sources),
                **self.reader,
            )
            self.current = (reader, label)
            frames = iter(reader)
            try:
                for frame in frames:
                    if not frame.height:
                        if empty is None:
                            empty = self._finish(frame, label, row)
                        continue
                    if fixed is None:  # the first rows' types hold for the later sources
                        fixed = dict(frame.schema)
                        self.inferred_rows = reader.inferred_from
                        how = f"inferred from the first {reader.inferred_from} rows of {label}"
                    out = self._finish(frame, label, row)
                    row += frame.height
                    if left is not None:
                        left -= frame.height
                    rows = True
                    yield out
            except ToonDecodeError as e:
                note = getattr(e, "add_note", None)  # (Python 3.11+)
                if len(self.sources) > 1 and note is not None:
                    note(f"in {label}")
                raise
            finally:
                frames.close()  # type: ignore[attr-defined]
        if not rows and empty is not None:
            yield empty

    def probe(self) -> pl.Schema:
        """The schema of the first frame (read with ``n_rows`` = the
        inference window plus one, it is the schema of the whole read).

        An error once the columns are known (a bad value among the probed
        rows, after the types were decided from those before it; a name
        collision in the header) leaves the schema those give: reading again
        meets the same error, raised where the read is, as it is.  An error
        before (a missing file, no table, a broken header) is raised.
        """
        frames = iter(self)
        try:
            first = next(frames, None)
        except ToonDecodeError:
            known = self._known_schema()
            if known is None:
                raise
            return known
        finally:
            frames.close()  # type: ignore[attr-defined]
        if first is None:
            if self.n_rows == 0:
                return pl.Schema()  # (nothing read: read_toon's frame has no columns either)
            raise ValueError("the TOON source holds no table")
        return first.schema

    def _known_schema(self) -> pl.Schema | None:
        if self.current is None:
            return None
        reader, label = self.current
        if reader.dtypes is not None:
            frame = reader._empty()
            self.inferred_rows = reader.inferred_from
        elif reader.scan.fields is not None:
            # The header only: its columns, typed String (never produced: the
            # read fails at the same place before any row).
            names = ([reader.key_field] if reader.scan.keyed else []) + [f.name for f in reader.scan.fields]
            frame = pl.DataFrame({n: pl.Series(n, [], dtype=pl.String) for n in names})
            if self.picked is not None and not set(self.picked) <= {*names, self.paths}:
                return None
        else:
            return None
        return self._finish(frame, label, 0).schema

    def _finish(self, frame: pl.DataFrame, label: str, row: int) -> pl.DataFrame:
        if self.paths is not None and (self.picked is None or self.paths in self.picked):
            frame = frame.with_columns(pl.lit(label, dtype=pl.String).alias(self.paths))
        if self.row_index is not None:
            frame = frame.with_row_index(self.row_index, offset=row)
        if self.picked is not None:
            frame = frame.select(([self.row_index] if self.row_index is not None else []) + self.picked)
        return frame

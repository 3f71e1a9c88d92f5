"""Decoding: the sans-I/O ``Decoder`` and the drivers built on it.

Data flow::

    chunks (bytes/str) -> LineSplitter -> Machine -> events -> consumer
                                                        |-> ValueBuilder   (loads, load)
                                                        |-> ParseAdapter  (parse: ijson triples)
                                                        |-> _ItemsAdapter  (items, kvitems)
                                                        `-> RowsAdapter   (rows)

Every consumer is a push object (``push(events) -> outputs``; the builders
are the reference's, the others live in ``_consumers.py``); the sync and
async drivers only move chunks in and outputs out, so they cannot disagree.
Where the engine in use has a capability (``_engine.py``), a driver hands it
the whole path instead.
"""

from __future__ import annotations

import inspect
from itertools import chain
from operator import index
from typing import (
    IO,
    Any,
    AsyncIterable,
    AsyncIterator,
    Callable,
    Generator,
    Iterable,
    Iterator,
    Mapping,
    NamedTuple,
    Protocol,
    Sequence,
    TypeVar,
    Union,
    overload,
)

from . import _engine
from ._reference.build import HookedValueBuilder, ValueBuilder, object_finisher, remap_objects
from ._consumers import AsyncRowReader, ParseAdapter, RowReader, RowsAdapter, _ItemsAdapter
from ._errors import ToonDecodeError
from ._reference.events import Event
from ._reference.lines import LineSplitter
from ._reference.machine import KeySet, Keys, Machine
from ._reference.numbers import decimal_float, make_column_converter, make_converter

_T = TypeVar("_T")

__all__ = [
    "Decoder",
    "loads",
    "load",
    "parse",
    "items",
    "kvitems",
    "rows",
    "RowReader",
    "parse_async",
    "items_async",
    "kvitems_async",
    "rows_async",
    "parse_coro",
    "items_coro",
    "kvitems_coro",
    "rows_coro",
]

Chunk = Union[bytes, bytearray, memoryview, str]
Source = Union[Chunk, IO[bytes], IO[str], Iterable[Chunk]]
AsyncSource = Any  # an async file-like object, an AsyncIterable of chunks, or a sync Source
#: ijson's ``map_type``: makes an empty mapping, filled by item assignment
MapType = Callable[[], Any]


class AsyncReadable(Protocol):
    """An async file: ``await read(n)`` gives bytes or str."""

    async def read(self, size: int = ..., /) -> bytes | str: ...

#: Bytes (or characters) read from a file object per ``read`` call.
DEFAULT_BUF_SIZE = 16 * 1024
# Whole-string inputs are fed in slices so that no event batch grows with the
# input.  Small enough that a slice's events die young: a big batch of event
# tuples (or of parse() triples) outlives collections of the young garbage
# collector generations and so triggers full collections, each walking
# everything built so far.  Measured on 1M-row inputs, 16 KiB against 64 KiB:
# loads of nested orders 14% faster, parse() 6%, flat tables the same (their
# blocks of rows are split column-wise, cheaper per row than any feed).
_SLICE = 16 * 1024

DEFAULT_MAX_LINE_LENGTH = 64 * 1024 * 1024
DEFAULT_MAX_DEPTH = 10_000
DEFAULT_MAX_NUMBER_LENGTH = 10_000
DEFAULT_MAX_FIELDS = 10_000
# A feed that completes fewer table rows than this holds them back for the
# next one (see Decoder.feed): the column-wise row path needs a run of lines.
_HOLD_LINES = 256
_HOLD_CHARS = 16 * 1024
# Chunks smaller than this are not even split into lines while rows are due:
# the fixed cost of a feed (decoding, splitting) is then paid per 16 KiB.
_SMALL_CHUNK = 1024


class TableContext(NamedTuple):
    """See :meth:`Decoder.table_context`."""

    indent: int  # spaces before each row
    delimiter: str
    width: int  # cells per row
    rows_left: int  # rows still to come (declared length minus rows seen)
    keyed: bool = False  # entry rows of a keyed table (§9.5): ``key: cells``


def _limit(name: str, value: int | None, default: int) -> int:
    """A limit option: an int >= 0 (None: the default)."""
    if value is None:
        return default
    n = index(value)  # TypeError for a float, as for any int-only argument
    if n < 0:
        raise ValueError(f"{name} must be >= 0")
    return n


def _start_line(value: int | None) -> int:
    if value is None:
        return 1
    try:
        n = index(value)
    except TypeError:
        n = 0
    if n < 1:
        raise ValueError("start_line must be an int >= 1")
    return n


class Decoder:
    """A push decoder: feed chunks, get events.  Does no I/O of its own.

    Chunks may split anywhere: inside a UTF-8 sequence, between CR and LF,
    inside a quoted string.  Only the current partial line and the stack of
    open scopes are kept.

    Options (keyword-only):
        indent_size: spaces per indentation level (default 2).
        strict: enforce §14 (counts, widths, indentation, blank lines,
            duplicate keys); default True.
        parse_float: called with the text of every non-integer number
            (e.g. ``decimal.Decimal``); default: float (overflow -> Decimal).
        parse_int: called with the text of every integer (as in
            ``json.loads``); default: int.
        max_depth, max_line_length, max_number_length, max_fields: resource
            limits (nesting of scopes and field groups; characters per line;
            characters per number token; leaf fields per header).  A breach is
            a ``ToonDecodeError`` with code ``too_deep``, ``line_too_long``,
            ``number_too_long`` or ``too_many_fields``, in strict and
            non-strict mode alike.
        start_line: the number of the first line (default 1), for a document
            that is part of a larger text.
        batches: emit runs of plain ``key: value`` lines as one
            :class:`~toonstream.Members` event instead of Key + Scalar pairs,
            and blocks of table rows as :class:`~toonstream.Columns` instead
            of ``Rows`` (for consumers that handle batches; ``loads`` and
            ``parse`` use it).
        hold_rows: let a feed hold back a few complete table rows for the
            next one (default True; see :meth:`feed`).  False: every feed
            returns the events of every complete line it got.

    Internal options (for the package's drivers and tests, not part of the API):
        _value_runs: emit a run of primitive list items (``- value`` lines) as
            one :class:`~toonstream.Values` event, for consumers that build
            values rather than follow lines (default False).
        _block_paths: decode blocks of table rows (and item runs) column-wise
            (default True); False: every line goes the per-line way, the
            reference the block paths are tested against.
        _key_set: makes the set of a keyed table's entry keys (strict mode),
            a :class:`~toonstream._reference.machine.KeySet` (default: a
            ``set``); :meth:`skip_rows` takes keys in the form it takes.
        _line_marks: remember the line of each line's first event, for
            :meth:`event_line` and :meth:`line_batches` (default False; it
            turns ``batches`` and ``_value_runs`` off: their events span
            lines).

    Example:
        >>> d = Decoder()
        >>> d.feed(b"a: 1\\nb")
        [StartObject(), Key(key='a'), Scalar(value=1)]
        >>> d.feed(b": [x]\\n")
        [Key(key='b'), Scalar(value='[x]')]
        >>> d.close()
        [EndObject()]
    """

    __slots__ = (
        "_lines", "_machine", "_held", "_held_chars", "_hold",
        "_raw", "_raw_text", "_raw_len", "_raw_lines", "_raw_room", "_raw_chars", "_before_error", "_marks", "_texts",
    )

    def __init__(
        self,
        *,
        indent_size: int | None = 2,
        strict: bool = True,
        parse_float: Callable[[str], Any] | None = None,
        parse_int: Callable[[str], Any] | None = None,
        max_depth: int | None = DEFAULT_MAX_DEPTH,
        max_line_length: int | None = DEFAULT_MAX_LINE_LENGTH,
        max_number_length: int | None = DEFAULT_MAX_NUMBER_LENGTH,
        max_fields: int | None = DEFAULT_MAX_FIELDS,
        start_line: int = 1,
        batches: bool = False,
        hold_rows: bool = True,
        _value_runs: bool = False,
        _block_paths: bool = True,
        _line_marks: bool = False,
        _key_set: Callable[[], KeySet] | None = None,
    ) -> None:
        # None means the default, as on the native engine (the two check options alike)
        indent_size = 2 if indent_size is None else indent_size
        if indent_size < 1:
            raise ValueError("indent_size must be >= 1")
        indent_size = index(indent_size)
        start_line = _start_line(start_line)
        max_depth = _limit("max_depth", max_depth, DEFAULT_MAX_DEPTH)
        max_line_length = _limit("max_line_length", max_line_length, DEFAULT_MAX_LINE_LENGTH)
        max_number_length = _limit("max_number_length", max_number_length, DEFAULT_MAX_NUMBER_LENGTH)
        max_fields = _limit("max_fields", max_fields, DEFAULT_MAX_FIELDS)
        self._lines = LineSplitter(max_line_length=max_line_length)
        # Line numbers in events and errors start here (a document embedded in a larger text).
        self._lines.lines_emitted = start_line - 1
        convert = make_converter(parse_float=parse_float, parse_int=parse_int, max_number_length=max_number_length)
        if _line_marks:  # (the lines of Members and Values events would be their first line's)
            batches = _value_runs = False
        self._machine = Machine(
            convert=convert,
            convert_column=make_column_converter(
                convert, parse_float=parse_float, parse_int=parse_int, max_number_length=max_number_length
            )
            if _block_paths
            else None,
            indent_size=indent_size,
            strict=strict,
            max_depth=max_depth,
            max_fields=max_fields,
            batches=batches,
            value_runs=_value_runs,
            key_set=_key_set if _key_set is not None else Keys,
        )
        # Complete row lines not yet given to the machine, and small chunks
        # not yet split into lines (see feed).
        self._held: list[str] = []
        self._held_chars = 0
        self._hold = hold_rows
        # The small chunks, as one buffer of bytes: a list of chunks would
        # cost an object (some 35-50 bytes) per chunk, many times the chunk
        # itself when a caller feeds a few bytes at a time.  str chunks are
        # held UTF-8 encoded ('surrogatepass': decoded back exactly).
        self._raw = bytearray()
        self._raw_text = False  # the chunks held are str (else bytes)
        self._raw_len = 0
        self._raw_lines = 0  # line feeds in _raw
        # while _raw gathers: the line feeds and chars it may reach
        self._raw_room = self._raw_chars = 0
        self._before_error: list[Event] = []
        # (index of an event, its line) pairs, flat, of the batch last returned (see event_line)
        self._marks: list[int] = []
        # (first line number, the lines' texts) of the lines behind that batch (see event_line_text)
        self._texts: list[tuple[int, list[str]]] = []
        if _line_marks:
            self._machine.marks = []

    def feed(self, data: Chunk) -> list[Event]:
        """Add a chunk of input; return the events it completed.

        Inside a tabular array that expects more rows, a feed that completes
        only a few row lines (fewer than 256, under 16 KiB together) holds
        them, and a chunk under 1 KiB is not even split into lines yet, until
        later feeds bring more: small chunks then still reach the column-wise
        row path, and a tiny chunk costs little.  Events (and errors) may lag
        the input by those few lines; :meth:`flush` (or :meth:`close`)
        returns them at once.
        """
        if self._marks:
            self._marks = []
        if self._texts:
            self._texts = []
        raw = self._raw
        if raw and len(data) < _SMALL_CHUNK:
            # The common case of a run of tiny chunks, kept as cheap as can
            # be: the machine does not change while chunks are only gathered,
            # so the room for lines was computed once, with the first.
            if type(data) is str:
                if self._raw_text:
                    lines = self._raw_lines + data.count("\n")
                    if self._raw_len + len(data) < self._raw_chars and lines < self._raw_room:
                        raw += data.encode("utf-8", "surrogatepass")
                        self._raw_len += len(data)
                        self._raw_lines = lines
                        return []
            elif type(data) is bytes and not self._raw_text:
                lines = self._raw_lines + data.count(b"\n")
                if self._raw_len + len(data) < self._raw_chars and lines < self._raw_room:
                    raw += data
                    self._raw_len += len(data)
                    self._raw_lines = lines
                    return []
        elif not raw and self._hold and len(data) < _SMALL_CHUNK:
            if isinstance(data, str):
                lines = data.count("\n")
            else:
                data = bytes(data)  # (memoryview has no count)
                lines = data.count(b"\n")
            room = self._machine.rows_room() - len(self._held)
            chars = _HOLD_CHARS - self._held_chars
            if len(data) < chars and lines < room:
                raw += data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
                self._raw_text = isinstance(data, str)
                self._raw_len = len(data)
                self._raw_lines = lines
                self._raw_room = room
                self._raw_chars = chars
                return []
        if raw and self._raw_text != isinstance(data, str):
            # (str after bytes, or the reverse: the held chunks first, on their own)
            events = self._step(self._lines.feed, self._take_raw(), hold=self._hold)
            return events + self._step(self._lines.feed, data, hold=self._hold, base=len(events))
        if raw:
            if isinstance(data, str):
                held = self._take_raw()
                assert isinstance(held, str)
                data = held + data
            else:
                raw += data
                data = self._take_raw()
        return self._step(self._lines.feed, data, hold=self._hold)

    def _take_raw(self) -> Chunk:
        """The small chunks held back (see feed), joined; none are left."""
        raw = self._raw
        self._raw = bytearray()
        self._raw_len = self._raw_lines = 0
        if self._raw_text:
            return raw.decode("utf-8", "surrogatepass")
        return raw  # (the line splitter copies what it keeps of it)

    def flush(self) -> list[Event]:
        """Return the events of every complete line fed so far (see :meth:`feed`).

        >>> d = Decoder()
        >>> _ = d.feed(b"t[2]{a}:\\n")
        >>> d.feed(b"  1\\n")
        []
        >>> d.flush()
        [Rows(rows=[(1,)])]
        """
        if self._marks:
            self._marks = []
        if self._texts:
            self._texts = []
        return self._step(self._lines.feed, self._take_raw(), hold=False)

    def close(self) -> list[Event]:
        """Signal end of input; return the remaining events (scope ends, count checks).

        Rows still held back (see :meth:`feed`) come with these events; if
        the end is an error (too few rows, say), they would be lost with the
        raise: call :meth:`flush` first to get them before the error, as
        the drivers (``rows``, ``parse``, ...) do."""
        if self._marks:
            self._marks = []
        if self._texts:
            self._texts = []
        events = self.flush() if self._raw else []
        events += self._step(lambda _: self._lines.close(), b"", hold=False, base=len(events))
        try:
            return events + self._machine.close()
        except ToonDecodeError:
            self._before_error = events
            raise

    def _step(self, split: Callable[[Any], list[str]], data: Any, *, hold: bool, base: int = 0) -> list[Event]:
        machine = self._machine
        if machine.failed is not None:
            raise machine.failed
        try:
            lines = split(data)
        except ToonDecodeError as e:  # data after close(), or an over-long line
            machine.failed = e
            raise
        error = self._lines.error
        held = self._held
        new = lines
        if held:
            if not new and hold and error is None:
                return []  # (a feed within a line: nothing changes)
            held += new  # (in place: what is held is not copied per feed)
            lines = held
            self._held = []
        if hold and error is None and 0 < len(lines) < _HOLD_LINES and machine.wants_rows(len(lines)):
            chars = self._held_chars + sum(map(len, new))
            if chars < _HOLD_CHARS:
                self._held = lines
                self._held_chars = chars
                return []
        self._held_chars = 0
        first = self._lines.lines_emitted - len(lines) + 1
        if machine.marks is not None and lines:
            self._texts.append((first, lines))  # (the texts of this batch's lines: event_line_text)
        try:
            events = machine.lines(first, lines) if lines else []
        except ToonDecodeError:
            self._before_error = machine.out
            machine.out = []
            if machine.marks is not None:  # (the batch events_before_error returns)
                self._marks = [x for i in range(0, len(machine.marks), 2) if machine.marks[i] < len(self._before_error)
                               for x in machine.marks[i : i + 2]]
                machine.marks = []
            raise
        marks = machine.marks
        if marks:
            if base:
                marks[::2] = [i + base for i in marks[::2]]
            self._marks += marks
            machine.marks = []
        if error is not None:  # invalid UTF-8 after these lines (now processed without error)
            machine.failed = error
            self._before_error = events
            raise error
        return events

    def events_before_error(self) -> list[Event]:
        """After :meth:`feed`, :meth:`flush` or :meth:`close` raised: the events of the lines
        before the failing one, which that call did not return (once; then ``[]``).  A consumer
        that pushes them before handling the error sees exactly the events of the lines before
        it, under any chunking, and of two errors reports the earlier line's (the drivers do).

        >>> d = Decoder()
        >>> try:
        ...     d.feed(b'a: 1\\nb: "x\\n')
        ... except ValueError as e:
        ...     print(e.code, d.events_before_error())
        unterminated_string [StartObject(), Key(key='a'), Scalar(value=1)]
        """
        events, self._before_error = self._before_error, []
        return events

    def event_line(self, index: int) -> int:
        """The line of the ``index``-th event of the batch last returned (by :meth:`feed`,
        :meth:`flush`, :meth:`close` or ``events_before_error``): for the drivers whose own
        errors (a value at the prefix that is not a table, say) name the line of an event.
        Needs ``_line_marks=True``; exact for the events of lines taken one at a time (the
        batched ones, rows and runs, count as the line before them); otherwise
        :attr:`line`.

        >>> d = Decoder(_line_marks=True)
        >>> events = d.feed(b"a: 1\\nb:\\n  c: 2\\n")
        >>> [(type(e).__name__, d.event_line(i)) for i, e in enumerate(events)]
        [('StartObject', 1), ('Key', 1), ('Scalar', 1), ('Key', 2), ('StartObject', 2), ('Key', 3), ('Scalar', 3)]
        """
        marks = self._marks
        for k in range(len(marks) - 2, -1, -2):
            if marks[k] <= index:
                return marks[k + 1]
        return max(self.line, 1)

    def event_line_text(self, index: int) -> str:
        """The text of :meth:`event_line`'s line, as errors quote it ("" where the batch did not
        read it: a line of an earlier batch).  Needs ``_line_marks=True``.

        >>> d = Decoder(_line_marks=True)
        >>> d.event_line_text(len(d.feed(b"a: 1\\nb:\\n  c: 2\\n")) - 1)
        '  c: 2'
        """
        return self.line_text(self.event_line(index))

    def line_text(self, line: int) -> str:
        """The text of line ``line`` if the batch last returned read it, else "" (see
        :meth:`event_line_text`)."""
        for first, lines in reversed(self._texts):
            if first <= line < first + len(lines):
                return lines[line - first]
        return ""

    def line_batches(self, events: list[Event]) -> Iterator[tuple[int, list[Event]]]:
        """``events``, the batch last returned, cut into the events of each line, with its number
        (as :meth:`event_line` counts them; needs ``_line_marks=True``).

        >>> d = Decoder(_line_marks=True)
        >>> [(line, len(part)) for line, part in d.line_batches(d.feed(b"a: 1\\nb:\\n  c: 2\\n"))]
        [(1, 3), (2, 2), (3, 2)]
        """
        marks = self._marks
        if not marks or marks[0] > 0:
            yield max(self.line, 1), events[: marks[0] if marks else len(events)]
        for k in range(0, len(marks), 2):
            end = marks[k + 2] if k + 2 < len(marks) else len(events)
            if end > marks[k]:
                yield marks[k + 1], events[marks[k] : end]

    def table_context(self) -> TableContext | None:
        """Where the next row of the innermost tabular array would stand, or None.

        Not None only between complete lines (nothing of a partial line or
        UTF-8 sequence pending), in strict mode, inside a tabular array:
        then a line of exactly ``indent`` spaces followed by cells is the
        next row.  Or inside a keyed table (``keyed``): then such a line
        with an unquoted colon is its next entry row, ``key: cells``
        (§9.5).  With :meth:`skip_rows` this lets a consumer parse long
        runs of rows itself (the Arrow/Polars readers do, column-wise)
        while the decoder keeps the count, the line numbers and everything
        else.

        >>> d = Decoder()
        >>> _ = d.feed(b"t[3]{a,b}:\\n")
        >>> d.table_context()
        TableContext(indent=2, delimiter=',', width=2, rows_left=3, keyed=False)
        >>> d.skip_rows(2)     # the caller consumed two row lines itself
        2
        >>> d.feed(b"  5,6\\n"), d.line
        ([Rows(rows=[(5, 6)])], 4)
        """
        if self._held or self._raw or not self._lines.at_line_boundary():
            return None
        ctx = self._machine.table_context()
        return None if ctx is None else TableContext(*ctx)

    def skip_rows(self, count: int, keys: Any = None) -> int:
        """Account for ``count`` row lines the caller consumed itself; return
        how many it counted.

        Only valid right after :meth:`table_context` returned a context, for
        at most ``rows_left`` lines, each ``indent`` spaces then exactly
        ``width`` cells that the row grammar accepts: the caller vouches for
        them.  Line numbers and the declared-length check stay exact.  In a
        keyed table, ``keys`` are the lines' entry keys (unescaped; a
        sequence of str, or the form the ``_key_set`` option's set takes): the
        decoder keeps them to check later keys against, and counts the lines
        only up to the first duplicate key (§14.3), whose line the caller
        then feeds, for the decoder to report it.

        >>> d = Decoder()
        >>> _ = d.feed(b"[3:]{a}:\\n")
        >>> d.table_context().keyed
        True
        >>> d.skip_rows(3, ["x", "y", "x"])
        2
        >>> d.feed(b"  x: 1\\n")
        Traceback (most recent call last):
          ...
        toonstream._errors.ToonDecodeError: duplicate key 'x' (line 4, column 3)
        """
        if keys is not None:
            count = self._machine.take_keys(keys)
        if count <= 0:
            return 0
        lines = self._lines
        lines.lines_emitted += count
        self._machine.skip_rows(count, lines.lines_emitted)
        return count

    @property
    def line(self) -> int:
        """Number of complete lines processed so far."""
        return self._lines.lines_emitted - len(self._held)


# ---------------------------------------------------------------------- sources


def read_chunks(source: Source, buf_size: int) -> Iterator[Chunk]:
    """The chunks of a sync source (text, bytes, a file or an iterable of
    chunks), of about ``buf_size`` where the driver reads them."""
    if isinstance(source, (str, bytes, bytearray, memoryview)):
        for i in range(0, len(source), _SLICE):
            yield source[i : i + _SLICE]
        return
    read = getattr(source, "read", None)
    if read is not None:
        while True:
            chunk = read(buf_size)
            if not chunk:
                return
            yield chunk
    else:
        yield from source


async def _achunks(source: AsyncSource, buf_size: int) -> AsyncIterator[Chunk]:
    read = getattr(source, "read", None)
    if read is not None:
        while True:
            chunk = read(buf_size)
            if inspect.isawaitable(chunk):
                chunk = await chunk
            if not chunk:
                return
            yield chunk
    elif hasattr(source, "__aiter__"):
        async for chunk in source:
            yield chunk
    else:
        for chunk in read_chunks(source, buf_size):  # a plain (sync) source is accepted too
            yield chunk


def _drive(source: Source, decoder: Decoder, push: Callable[[list[Event]], list[Any]], buf_size: int) -> Iterator[Any]:
    """The outputs of every chunk, lazily.  A chunk's outputs are a list: they
    are flattened by ``chain`` (C), so taking the next item runs no Python
    code; a generator's ``yield from`` costs a frame resumption per item."""

    def batches() -> Iterator[list[Any]]:
        try:
            for chunk in read_chunks(source, buf_size):
                yield push(decoder.feed(chunk))
            yield push(decoder.flush())  # (held rows before a possible error at the end)
            yield push(decoder.close())
        except ToonDecodeError:
            yield _before_error(decoder, push)
            raise

    return _Outputs.from_iterable(_Running(batches()))


def _before_error(decoder: Decoder, push: Callable[[list[Event]], list[Any]]) -> list[Any]:
    """After the decoder raised: the outputs of the lines before the failing one, which the
    failing call did not return, so that a driver yields everything before an error whatever
    the chunking (and an adapter's own error on an earlier line wins)."""
    return push(decoder.events_before_error())


async def _adrive(
    source: AsyncSource, decoder: Decoder, push: Callable[[list[Event]], list[Any]], buf_size: int
) -> AsyncIterator[Any]:
    try:
        async for chunk in _achunks(source, buf_size):
            for item in push(decoder.feed(chunk)):
                yield item
        for item in push(decoder.flush()):  # (held rows before a possible error at the end)
            yield item
        for item in push(decoder.close()):
            yield item
    except ToonDecodeError:
        for item in _before_error(decoder, push):
            yield item
        raise


# ---------------------------------------------------------------------- values


def loads(
    data: str | bytes | bytearray | memoryview,
    *,
    indent_size: int | None = 2,
    strict: bool = True,
    object_hook: Callable[[dict[str, Any]], Any] | None = None,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
    parse_float: Callable[[str], Any] | None = None,
    parse_int: Callable[[str], Any] | None = None,
    max_depth: int | None = DEFAULT_MAX_DEPTH,
    max_line_length: int | None = DEFAULT_MAX_LINE_LENGTH,
    max_number_length: int | None = DEFAULT_MAX_NUMBER_LENGTH,
    max_fields: int | None = DEFAULT_MAX_FIELDS,
) -> Any:
    """Decode a whole TOON document (str, or UTF-8 bytes) to Python values.

    Objects become dicts, arrays lists; numbers are int or float like
    ``json.loads`` (``parse_float=decimal.Decimal`` for exact decimals).
    The hooks are ``json.loads``'s, with its semantics: ``object_hook`` gets
    every decoded object as a dict (table rows, their field groups and keyed
    tables included, inner objects first) and its result replaces it;
    ``object_pairs_hook`` gets the object's ``(key, value)`` pairs in order
    instead, and wins when both are given; ``parse_int``/``parse_float``
    get the text of every integer / other number.  The object hooks run
    once the whole document has decoded (none on a document that fails;
    ``json.loads`` calls them as it goes).  A
    :class:`~toonstream.ToonDecodeError` carries the document (``doc``) and
    the error's character offset in it (``pos``), as ``json``'s does.

    >>> loads("users[2]{id,name}:\\n  1,Ada\\n  2,Bob")
    {'users': [{'id': 1, 'name': 'Ada'}, {'id': 2, 'name': 'Bob'}]}
    >>> loads("a[2]{x,y}:\\n  1,2\\n  3,4", object_pairs_hook=tuple, parse_int=float)
    (('a', [(('x', 1.0), ('y', 2.0)), (('x', 3.0), ('y', 4.0))]),)
    """
    try:
        return _build(
            data,
            indent_size=indent_size,
            strict=strict,
            object_hook=object_hook,
            object_pairs_hook=object_pairs_hook,
            parse_float=parse_float,
            parse_int=parse_int,
            max_depth=max_depth,
            max_line_length=max_line_length,
            max_number_length=max_number_length,
            max_fields=max_fields,
        )
    except ToonDecodeError as e:
        e.attach_document(data)
        raise


def load(
    fp: IO[bytes] | IO[str] | Iterable[Chunk],
    *,
    indent_size: int | None = 2,
    strict: bool = True,
    object_hook: Callable[[dict[str, Any]], Any] | None = None,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
    parse_float: Callable[[str], Any] | None = None,
    parse_int: Callable[[str], Any] | None = None,
    max_depth: int | None = DEFAULT_MAX_DEPTH,
    max_line_length: int | None = DEFAULT_MAX_LINE_LENGTH,
    max_number_length: int | None = DEFAULT_MAX_NUMBER_LENGTH,
    max_fields: int | None = DEFAULT_MAX_FIELDS,
) -> Any:
    """Decode a TOON document from a binary or text file (read in chunks).

    >>> import io
    >>> load(io.BytesIO(b"tags[2]: a,b"))
    {'tags': ['a', 'b']}
    """
    return _build(
        fp,
        indent_size=indent_size,
        strict=strict,
        object_hook=object_hook,
        object_pairs_hook=object_pairs_hook,
        parse_float=parse_float,
        parse_int=parse_int,
        max_depth=max_depth,
        max_line_length=max_line_length,
        max_number_length=max_number_length,
        max_fields=max_fields,
    )


def _rewind_point(source: Source) -> int | None:
    """Where a seekable file source now is (to read it again), else None."""
    seekable = getattr(source, "seekable", None)
    try:
        return source.tell() if seekable is not None and seekable() else None  # type: ignore[union-attr]
    except (OSError, ValueError):
        return None


def _build(source: Source, **options: Any) -> Any:
    """The one value-building loop behind loads and load."""
    engine = _engine.current()
    if engine.values(options):
        # (the rest are unset: the hooks left at None)
        hooks = _engine.HOOK_OPTIONS
        options = {k: v for k, v in options.items() if k in _engine.VALUE_OPTIONS or (k in hooks and v is not None)}
        # the whole document in one native call; a file fed to a native push decoder
        if isinstance(source, (str, bytes, bytearray, memoryview)):
            try:
                return engine.loads(source, **options)  # type: ignore[misc]  # values() checked it is set
            except _engine.Unsupported:
                pass  # a str the native engine cannot take (lone surrogates): the reference decodes it
        elif engine.value_decoder is not None:
            start = _rewind_point(source)
            native = engine.value_decoder(**options)
            try:
                for chunk in read_chunks(source, DEFAULT_BUF_SIZE):
                    native.feed(chunk)
                return native.close()
            except _engine.Unsupported:
                # a str chunk with lone surrogates (a text file opened with 'surrogateescape'):
                # a seekable file is read again by the reference; other sources cannot be
                if start is None:
                    raise
                source.seek(start)  # type: ignore[attr-defined]
    object_hook = options.pop("object_hook", None)
    object_pairs_hook = options.pop("object_pairs_hook", None)
    plain = object_hook is None and object_pairs_hook is None
    # (runs of primitive list items as Values events: the hooked builder takes Scalars)
    decoder = Decoder(batches=True, _value_runs=plain, **options)
    builder: ValueBuilder | HookedValueBuilder
    if plain:
        builder = ValueBuilder()
    else:
        builder = HookedValueBuilder(object_finisher(object_hook, object_pairs_hook))
    for chunk in read_chunks(source, DEFAULT_BUF_SIZE):
        builder.push(decoder.feed(chunk))
    builder.push(decoder.close())
    return builder.value


# ---------------------------------------------------------------------- drivers


#: the Decoder options the streaming drivers take (the rest are the drivers' own to set)
DRIVER_OPTIONS = _engine.VALUE_OPTIONS | {"start_line", "hold_rows"}


def check_driver_args(function: str, options: Mapping[str, Any], buf_size: int = 1) -> None:
    """A driver's arguments, checked when it is called (as Python checks
    keywords): ``buf_size`` an int >= 1 (``read(0)`` would end the input at
    once, an empty document); no option the drivers do not take (ijson's
    ``multiple_values`` and ``allow_comments`` among them: a TOON text is one
    document, and ``#`` is not a comment in it)."""
    if not isinstance(buf_size, int) or isinstance(buf_size, bool):
        raise TypeError(f"{function}() buf_size must be an int, not {type(buf_size).__name__}")
    if buf_size < 1:
        raise ValueError(f"{function}() buf_size must be >= 1, got {buf_size}")
    check_keywords(function, options, DRIVER_OPTIONS)


def check_keywords(function: str, options: Mapping[str, Any], allowed: frozenset[str] | set[str]) -> None:
    """A TypeError naming ``function`` for the first of ``options`` not in
    ``allowed``, as Python's own for an unknown keyword.

    >>> check_keywords("extract", {"strict": True}, {"strict"})
    """
    for name in options:
        if name not in allowed:
            raise TypeError(f"{function}() got an unexpected keyword argument {name!r}")


def driver_decoder(
    use_float: bool, options: dict[str, Any], *, batches: bool = False, value_runs: bool = False, line_marks: bool = False
) -> Decoder:
    """The driver's Decoder; ``batches``: Members and Columns events (see
    :class:`Decoder`); ``value_runs``: runs of primitive list items come as
    one Values event (for consumers that take values, not lines);
    ``line_marks``: :meth:`Decoder.event_line` is exact (for a driver's own errors)."""
    if "parse_float" not in options:
        options["parse_float"] = None if use_float else decimal_float
    # A driver gives each row as soon as its line ends, as ijson and the native engine do:
    # a pipe's rows must not wait for 16 KiB more (hold_rows=True, if given, batches them).
    options.setdefault("hold_rows", False)
    return Decoder(batches=batches, _value_runs=value_runs, _line_marks=line_marks, **options)


def _rows_setup(
    prefix: str,
    as_dict: bool,
    key_field: str,
    expect_fields: Sequence[str] | None,
    use_float: bool,
    options: dict[str, Any],
) -> tuple[Decoder, RowsAdapter]:
    decoder = driver_decoder(use_float, options, line_marks=True)
    adapter = RowsAdapter(
        prefix, as_dict=as_dict, key_field=key_field, where=decoder.event_line, where_text=decoder.event_line_text,
        expect_fields=expect_fields,
    )
    return decoder, adapter


def _is_async_source(source: Any) -> bool:
    """Whether ``source`` is an async file (its ``read`` a coroutine
    function), as ijson 3 tells one for its dispatch, or an async iterable
    of chunks that is not also a sync one (iterating it would only fail)."""
    read = getattr(source, "read", None)
    if read is not None:
        return inspect.iscoroutinefunction(read)
    return hasattr(source, "__aiter__") and not hasattr(source, "__iter__")


def _items_setup(
    prefix: str, kv: bool, map_type: MapType | None, use_float: bool, options: dict[str, Any]
) -> tuple[Decoder, Callable[[list[Event]], list[Any]]]:
    """The decoder and push function of items/kvitems (sync, async, coroutine)."""
    decoder = driver_decoder(use_float, options, value_runs=True)
    push = _ItemsAdapter(prefix, kv=kv).push
    if map_type is None:
        return decoder, push
    make = map_type
    if kv:
        return decoder, lambda events: [(k, remap_objects(v, make)) for k, v in push(events)]
    return decoder, lambda events: [remap_objects(v, make) for v in push(events)]


@overload
def parse(
    source: AsyncReadable, *, use_float: bool = False, buf_size: int = DEFAULT_BUF_SIZE, **options: Any
) -> AsyncIterator[tuple[str, str, Any]]: ...
@overload
def parse(
    source: Source, *, use_float: bool = False, buf_size: int = DEFAULT_BUF_SIZE, **options: Any
) -> Iterator[tuple[str, str, Any]]: ...
def parse(
    source: Any, *, use_float: bool = False, buf_size: int = DEFAULT_BUF_SIZE, **options: Any
) -> Iterator[tuple[str, str, Any]] | AsyncIterator[tuple[str, str, Any]]:
    """Yield ``(prefix, event, value)`` triples exactly like ``ijson.parse``.

    Non-integer numbers are ``Decimal`` (``use_float=True`` for float), as in
    ijson.  ``source``: str/bytes, a binary or text file, or an iterable of
    chunks; an async file or async iterable gives the async iterator of :func:`parse_async`.
    Other keyword options go to :class:`Decoder`.

    >>> list(parse("a[2]: 1,x"))[:4]
    [('', 'start_map', None), ('', 'map_key', 'a'), ('a', 'start_array', None), ('a.item', 'number', 1)]
    """
    check_driver_args("parse", options, buf_size)
    if _is_async_source(source):
        return parse_async(source, use_float=use_float, buf_size=buf_size, **options)
    native = _native_parse(source, use_float, options)
    if native is not None:
        return _native_drive(source, native, buf_size)
    return _drive(source, driver_decoder(use_float, options, batches=True, value_runs=True), ParseAdapter().push, buf_size)


@overload
def items(
    source: AsyncReadable, prefix: str, *, map_type: MapType | None = None, use_float: bool = False,
    buf_size: int = DEFAULT_BUF_SIZE, **options: Any,
) -> AsyncIterator[Any]: ...
@overload
def items(
    source: Source, prefix: str, *, map_type: MapType | None = None, use_float: bool = False,
    buf_size: int = DEFAULT_BUF_SIZE, **options: Any,
) -> Iterator[Any]: ...
def items(
    source: Any, prefix: str, *, map_type: MapType | None = None, use_float: bool = False,
    buf_size: int = DEFAULT_BUF_SIZE, **options: Any,
) -> Iterator[Any] | AsyncIterator[Any]:
    """Yield each complete value found at ``prefix`` (ijson ``items`` semantics).

    ``map_type``: objects are built as ``map_type()`` filled by item
    assignment (e.g. ``collections.OrderedDict``), as in ijson.  An async
    file (one whose ``read`` is a coroutine function) gives the async
    iterator of :func:`items_async`, as ijson 3 dispatches.  An iterable of
    ``(prefix, event, value)`` triples (the output of :func:`parse`, or of
    ``ijson.parse``) gives the values built from those events, as
    ``ijson.items`` takes them (``use_float`` and the options then do nothing).

    >>> list(items("users[2]{id}:\\n  1\\n  2", "users.item"))
    [{'id': 1}, {'id': 2}]
    >>> list(items(parse("a[2]: 1,2"), "a.item"))
    [1, 2]
    """
    check_driver_args("items", options, buf_size)
    if _is_async_source(source):
        return items_async(source, prefix, map_type=map_type, use_float=use_float, buf_size=buf_size, **options)
    return _events_or(source, prefix, False, map_type, lambda src: _items_drive(src, prefix, False, map_type, use_float, buf_size, options))


def _items_drive(
    source: Source, prefix: str, kv: bool, map_type: MapType | None, use_float: bool, buf_size: int, options: dict[str, Any]
) -> Iterator[Any]:
    """items/kvitems over a source of TOON text (sync)."""
    native = _native_items(source, prefix, kv, map_type, use_float, options)
    if native is not None:
        return _native_drive(source, native, buf_size)
    return _drive(source, *_items_setup(prefix, kv, map_type, use_float, options), buf_size)


_NOTHING: Any = object()


def _events_or(
    source: Any, prefix: str, kv: bool, map_type: MapType | None, on_text: Callable[[Any], Iterator[Any]]
) -> Iterator[Any]:
    """``on_text(source)``; but an iterable whose first element is a tuple
    is ``(prefix, event, value)`` triples (the output of ``parse``, from
    toonstream or ijson), whose values are built by ijson itself, as
    ``ijson.items``/``ijson.kvitems`` take such events.  Lazy, as the
    drivers are: the first element is taken at the first ``next``."""
    if isinstance(source, (str, bytes, bytearray, memoryview)) or hasattr(source, "read") or not hasattr(source, "__iter__"):
        return on_text(source)

    inner: list[Iterator[Any]] = []  # (the one part, for close())

    def parts() -> Iterator[Iterator[Any]]:
        it = iter(source)
        first = next(it, _NOTHING)
        if isinstance(first, tuple):
            import ijson

            build = ijson.kvitems if kv else ijson.items
            inner.append(build(chain((first,), it), prefix, map_type=map_type))
        else:
            # (no element: no chunk of an empty document, whatever it was meant as: a
            # document's value does not depend on how it is cut, into no chunks too)
            inner.append(on_text(it if first is _NOTHING else chain((first,), it)))
        yield inner[0]

    return _Outputs.from_iterable(_Running(parts()), inner)


@overload
def kvitems(
    source: AsyncReadable, prefix: str, *, map_type: MapType | None = None, use_float: bool = False,
    buf_size: int = DEFAULT_BUF_SIZE, **options: Any,
) -> AsyncIterator[tuple[str, Any]]: ...
@overload
def kvitems(
    source: Source, prefix: str, *, map_type: MapType | None = None, use_float: bool = False,
    buf_size: int = DEFAULT_BUF_SIZE, **options: Any,
) -> Iterator[tuple[str, Any]]: ...
def kvitems(
    source: Any, prefix: str, *, map_type: MapType | None = None, use_float: bool = False,
    buf_size: int = DEFAULT_BUF_SIZE, **options: Any,
) -> Iterator[tuple[str, Any]] | AsyncIterator[tuple[str, Any]]:
    """Yield ``(key, value)`` for every member of the objects at ``prefix`` (ijson ``kvitems``).

    ``map_type``, an async file and an iterable of events: as for :func:`items`.

    >>> list(kvitems("cfg:\\n  a: 1\\n  b: x", "cfg"))
    [('a', 1), ('b', 'x')]
    """
    check_driver_args("kvitems", options, buf_size)
    if _is_async_source(source):
        return kvitems_async(source, prefix, map_type=map_type, use_float=use_float, buf_size=buf_size, **options)
    return _events_or(source, prefix, True, map_type, lambda src: _items_drive(src, prefix, True, map_type, use_float, buf_size, options))


@overload
def rows(
    source: AsyncReadable, prefix: str = "", *, as_dict: bool = False, key_field: str = "key",
    expect_fields: Sequence[str] | None = None, use_float: bool = True, buf_size: int = DEFAULT_BUF_SIZE,
    **options: Any,
) -> AsyncRowReader: ...
@overload
def rows(
    source: Source, prefix: str = "", *, as_dict: bool = False, key_field: str = "key",
    expect_fields: Sequence[str] | None = None, use_float: bool = True, buf_size: int = DEFAULT_BUF_SIZE,
    **options: Any,
) -> RowReader: ...
def rows(
    source: Any,
    prefix: str = "",
    *,
    as_dict: bool = False,
    key_field: str = "key",
    expect_fields: Sequence[str] | None = None,
    use_float: bool = True,
    buf_size: int = DEFAULT_BUF_SIZE,
    **options: Any,
) -> RowReader | AsyncRowReader:
    """Iterate the rows of the tabular array (or keyed table) at ``prefix``.

    Rows are tuples of leaf values in header order (a keyed table's entry key
    first), or dicts with ``as_dict=True`` (nested field groups as nested dicts,
    the entry key under ``key_field``).  No per-cell events are made.  The
    prefix is the table's own ijson prefix (``""`` for the root, ``"users"``,
    ``"data.items.item.users"``); a non-tabular value there is an error.
    Numbers are floats by default here (``use_float=False`` for Decimal).

    ``expect_fields`` (leaf names, dotted for nested groups) is a schema-drift
    guard: a matching table whose header does not carry exactly these fields
    raises ToonDecodeError (code ``unexpected_fields``) at the header line;
    if only the order differs, tuples come in the ``expect_fields`` order.

    An async file or async iterable gives the :class:`AsyncRowReader` of :func:`rows_async`.

    >>> list(rows("[2:]{age}:\\n  ada: 36\\n  bob: 41", as_dict=True))
    [{'key': 'ada', 'age': 36}, {'key': 'bob', 'age': 41}]
    """
    check_driver_args("rows", options, buf_size)
    if _is_async_source(source):
        return rows_async(
            source, prefix, as_dict=as_dict, key_field=key_field, expect_fields=expect_fields, use_float=use_float,
            buf_size=buf_size, **options,
        )
    native = _native_rows(source, prefix, as_dict, key_field, expect_fields, use_float, buf_size, options)
    if native is not None:
        return native
    decoder, adapter = _rows_setup(prefix, as_dict, key_field, expect_fields, use_float, options)
    return RowReader(adapter, _drive(source, decoder, adapter.push, buf_size))


def engine_options(source: Any, use_float: bool, options: dict[str, Any]) -> dict[str, Any] | None:
    """The options for one of the engine's push decoders (rows, parse, items), or None (decided
    before any input is read) where it cannot run: an option it does not take, or a str source
    with lone surrogates."""
    # (another Decoder option, or an unknown one, which the reference refuses)
    if not all(k in _engine.VALUE_OPTIONS or (k == "parse_int" and v is None) for k, v in options.items()):
        return None
    options = {k: v for k, v in options.items() if k in _engine.VALUE_OPTIONS}
    if "parse_float" not in options:  # (as driver_decoder: an explicit parse_float=None means float)
        options["parse_float"] = None if use_float else decimal_float
    if isinstance(source, str) and not source.isascii():
        try:
            source.encode()
        except UnicodeEncodeError:
            return None  # lone surrogates are not UTF-8: the reference decodes such a str
    elif _lone_surrogates_ahead(source):
        return None  # (a text file holding some, read through and rewound: the reference's)
    return options


def _lone_surrogates_ahead(source: Any) -> bool:
    """Whether a seekable text file holds a lone surrogate (one opened with 'surrogateescape')
    from where it stands: read through once, then rewound.  The native engine reads UTF-8
    only, and a driver that met one after its first outputs could not start again."""
    read = getattr(source, "read", None)
    start = _rewind_point(source) if read is not None else None
    if read is None or start is None:
        return False
    try:
        if not isinstance(read(0), str):  # (a binary file: nothing to look for)
            return False
        while chunk := read(_SCAN_CHUNK):
            try:
                chunk.encode()
            except UnicodeEncodeError:
                return True
        return False
    finally:
        source.seek(start)


_SCAN_CHUNK = 1 << 20


def native_push(make: Callable[..., _T], *args: Any, **options: Any) -> _T | None:
    """``make(*args, **options)``, or None where the native side refuses an option value (a
    negative limit, say): the reference then decides, with its own error."""
    try:
        return make(*args, **options)
    except (ValueError, TypeError, OverflowError):
        return None


class _Running:
    """A generator of batches for ``chain.from_iterable``, kept alive while it runs.

    Threads sharing one driver's iterator (a misuse) crashed CPython 3.11: a
    second thread's ``next`` meets "generator already executing", on which
    ``chain`` drops its source, freeing the generator the first thread is
    running.  Through this object the first thread's call holds it (``self``)."""

    __slots__ = ("_gen",)

    def __init__(self, gen: Iterator[Any]) -> None:
        self._gen = gen

    def close(self) -> None:
        getattr(self._gen, "close")()  # (a generator)

    def __iter__(self) -> _Running:
        return self

    def __next__(self) -> Any:
        return next(self._gen)


class _Outputs(chain):  # type: ignore[type-arg]
    """A driver's outputs: ``chain.from_iterable`` over its batches (C: the
    next item runs no Python code), with a generator's ``close()``."""

    __slots__ = ("_batches", "_parts")
    _batches: _Running
    _parts: list[Iterator[Any]]

    @classmethod
    def from_iterable(cls, batches: _Running, parts: list[Iterator[Any]] | None = None) -> _Outputs:  # type: ignore[override]
        """``parts``: the iterators ``batches`` gave (or will give), when they
        are not lists but read the source themselves: closed first."""
        out: Any = super().from_iterable(batches)
        out._batches = batches
        out._parts = parts if parts is not None else []
        return out  # type: ignore[no-any-return]

    def close(self) -> None:
        """Stop early: the source is not read further (it is not closed)."""
        for part in self._parts:
            close = getattr(part, "close", None)
            if close is not None:
                close()
        self._batches.close()
        for _ in self:  # (the rest of the batch in hand: nothing after close, as with a generator)
            pass


def _native_drive(source: Source, native: _engine.OutputDecoder, buf_size: int) -> Iterator[Any]:
    """The outputs of an engine's push decoder over ``source``, lazily (as :func:`_drive`)."""

    def batches() -> Iterator[list[Any]]:
        for chunk in read_chunks(source, buf_size):
            yield native.feed(chunk)
        while batch := native.close():  # (outputs before an error, then the error on the next call)
            yield batch

    return _Outputs.from_iterable(_Running(batches()))


async def _native_adrive(source: AsyncSource, native: _engine.OutputDecoder, buf_size: int) -> AsyncIterator[Any]:
    async for chunk in _achunks(source, buf_size):
        for item in native.feed(chunk):
            yield item
    while batch := native.close():
        for item in batch:
            yield item


def _native_coro(target: Sendable, native: _engine.OutputDecoder) -> _Feeder:
    send = target.send
    while True:
        chunk = yield
        if chunk is _END:  # (see PushCoroutine)
            while batch := native.close():
                for out in batch:
                    send(out)
            return
        outs = native.feed(chunk)
        for out in outs:
            send(out)
        if outs:
            native.feed(b"")  # (an error after these outputs is raised by this send, as on the reference)


def _native_rows(
    source: Source,
    prefix: str,
    as_dict: bool,
    key_field: str,
    expect_fields: Sequence[str] | None,
    use_float: bool,
    buf_size: int,
    options: dict[str, Any],
) -> RowReader | None:
    """``rows()`` on the engine's row decoder, or None where it cannot run (see :func:`engine_options`)."""
    make = _engine.current().row_decoder
    if make is None or not (prefix is None or type(prefix) is str) or type(key_field) is not str:
        return None
    native_options = engine_options(source, use_float, options)
    if native_options is None:
        return None
    adapter = RowsAdapter(prefix, as_dict=as_dict, key_field=key_field, where=lambda i: 1, expect_fields=expect_fields)
    native = native_push(
        make, prefix, header=adapter.native_header, as_dict=bool(as_dict), key_field=key_field, **native_options
    )
    if native is None:
        return None
    return RowReader(adapter, _native_drive(source, native, buf_size))


def _native_parse(source: Any, use_float: bool, options: dict[str, Any]) -> _engine.OutputDecoder | None:
    """The engine's push decoder of ``parse`` triples, or None: the reference runs."""
    make = _engine.current().parse_decoder
    native_options = None if make is None else engine_options(source, use_float, options)
    return None if make is None or native_options is None else native_push(make, **native_options)


def _native_items(
    source: Any, prefix: Any, kv: bool, map_type: MapType | None, use_float: bool, options: dict[str, Any]
) -> _engine.OutputDecoder | None:
    """The engine's push decoder of ``items`` values or ``kvitems`` pairs (``map_type`` applied
    to what it returns), or None: the reference runs."""
    make = _engine.current().items_decoder
    if make is None or type(prefix) is not str:
        return None
    native_options = engine_options(source, use_float, options)
    native = None if native_options is None else native_push(make, prefix, kv=kv, **native_options)
    if native is None or map_type is None:
        return native
    return _Remapped(native, map_type, kv)


class _Remapped:
    """An items decoder whose objects are rebuilt as ``map_type`` (ijson's option)."""

    __slots__ = ("_native", "_remap")

    def __init__(self, native: _engine.OutputDecoder, map_type: MapType, kv: bool) -> None:
        self._native = native
        make = map_type
        if kv:
            self._remap: Callable[[list[Any]], list[Any]] = lambda out: [(k, remap_objects(v, make)) for k, v in out]
        else:
            self._remap = lambda out: [remap_objects(v, make) for v in out]

    def feed(self, chunk: Chunk) -> list[Any]:
        return self._remap(self._native.feed(chunk))

    def close(self) -> list[Any]:
        return self._remap(self._native.close())


def parse_async(source: AsyncSource, *, use_float: bool = False, buf_size: int = DEFAULT_BUF_SIZE, **options: Any) -> AsyncIterator[tuple[str, str, Any]]:
    """Async :func:`parse`: ``source`` is an async file-like object (``await read(n)``)
    or an async iterable of chunks.

    >>> import asyncio
    >>> async def chunks():
    ...     yield b"a: 1"
    >>> async def main():
    ...     return [ev async for ev in parse_async(chunks())]
    >>> asyncio.run(main())
    [('', 'start_map', None), ('', 'map_key', 'a'), ('a', 'number', 1), ('', 'end_map', None)]
    """
    check_driver_args("parse_async", options, buf_size)
    native = _native_parse(None, use_float, options)
    if native is not None:
        return _native_adrive(source, native, buf_size)
    return _adrive(source, driver_decoder(use_float, options, batches=True, value_runs=True), ParseAdapter().push, buf_size)


def items_async(
    source: AsyncSource, prefix: str, *, map_type: MapType | None = None, use_float: bool = False,
    buf_size: int = DEFAULT_BUF_SIZE, **options: Any,
) -> AsyncIterator[Any]:
    """Async :func:`items`.

    >>> import asyncio
    >>> async def chunks():
    ...     yield b"users[2]{id}:\\n  1\\n  2"
    >>> async def main():
    ...     return [u async for u in items_async(chunks(), "users.item")]
    >>> asyncio.run(main())
    [{'id': 1}, {'id': 2}]
    """
    check_driver_args("items_async", options, buf_size)
    native = _native_items(None, prefix, False, map_type, use_float, options)
    if native is not None:
        return _native_adrive(source, native, buf_size)
    return _adrive(source, *_items_setup(prefix, False, map_type, use_float, options), buf_size)


def kvitems_async(
    source: AsyncSource, prefix: str, *, map_type: MapType | None = None, use_float: bool = False,
    buf_size: int = DEFAULT_BUF_SIZE, **options: Any,
) -> AsyncIterator[tuple[str, Any]]:
    """Async :func:`kvitems`.

    >>> import asyncio
    >>> async def chunks():
    ...     yield b"a: 1\\nb: x"
    >>> async def main():
    ...     return [kv async for kv in kvitems_async(chunks(), "")]
    >>> asyncio.run(main())
    [('a', 1), ('b', 'x')]
    """
    check_driver_args("kvitems_async", options, buf_size)
    native = _native_items(None, prefix, True, map_type, use_float, options)
    if native is not None:
        return _native_adrive(source, native, buf_size)
    return _adrive(source, *_items_setup(prefix, True, map_type, use_float, options), buf_size)


def rows_async(
    source: AsyncSource,
    prefix: str = "",
    *,
    as_dict: bool = False,
    key_field: str = "key",
    expect_fields: Sequence[str] | None = None,
    use_float: bool = True,
    buf_size: int = DEFAULT_BUF_SIZE,
    **options: Any,
) -> AsyncRowReader:
    """Async :func:`rows` (an :class:`AsyncRowReader`).

    >>> import asyncio
    >>> async def chunks():
    ...     yield b"users[2]{id,name}:\\n  1,Ada\\n  2,Bob"
    >>> async def main():
    ...     reader = rows_async(chunks(), "users")
    ...     return [row async for row in reader], reader.columns
    >>> asyncio.run(main())
    ([(1, 'Ada'), (2, 'Bob')], ['id', 'name'])
    """
    check_driver_args("rows_async", options, buf_size)
    decoder, adapter = _rows_setup(prefix, as_dict, key_field, expect_fields, use_float, options)
    return AsyncRowReader(adapter, _adrive(source, decoder, adapter.push, buf_size))



# ---------------------------------------------------------------------- push coroutines


class Sendable(Protocol):
    """What a coroutine sends its outputs to: ``ijson.sendable_list``, a list
    subclass with ``send = list.append``, or another coroutine."""

    def send(self, value: Any, /) -> Any: ...


#: the end of the input, sent by PushCoroutine.close() (a generator's own close(), which the
#: garbage collector calls on one dropped, ends it without a word)
_END: Any = object()


def _coro(target: Sendable, decoder: Decoder, push: Callable[[list[Event]], list[Any]]) -> _Feeder:
    """Feed each chunk ``send()`` brings; :data:`_END` ends the input (its
    errors, a truncated document say, are raised then)."""
    send = target.send
    while True:
        chunk = yield
        if chunk is _END:
            try:
                for out in push(decoder.flush()):  # (held rows before a possible error at the end)
                    send(out)
                for out in push(decoder.close()):
                    send(out)
            except ToonDecodeError:
                for out in _before_error(decoder, push):
                    send(out)
                raise
            return
        try:
            outs = push(decoder.feed(chunk))
        except ToonDecodeError:
            outs = _before_error(decoder, push)
            for out in outs:
                send(out)
            raise
        for out in outs:
            send(out)


_Feeder = Generator[None, Any, None]


class PushCoroutine:
    """What the ``*_coro`` functions return, ready for ``send``, as ijson's
    coroutines (its C backend's): ``send(chunk)`` (bytes or str, split
    anywhere) decodes it and sends what it completes to the target;
    ``close()`` ends the input (a truncated document raises there).  After an
    error, ``send`` and ``close`` raise it again (as ijson's C backend raises
    an error again); after ``close()``, ``send`` is a ``ValueError`` (a
    generator's ``StopIteration`` would become a ``RuntimeError`` inside
    another generator) and ``close()`` does nothing.  One dropped without
    ``close()`` does nothing more (the input was not ended: no last outputs,
    no error), as ijson's C coroutines.

    >>> got = []
    >>> class Target:
    ...     def send(self, value): got.append(value)
    >>> coro = items_coro(Target(), "a.item")
    >>> coro.send(b"a[2]: 1,2\\n")
    >>> coro.close()
    >>> got
    [1, 2]
    """

    __slots__ = ("_feeder", "_error", "_trace", "_closed")

    def __init__(self, feeder: _Feeder) -> None:
        next(feeder)  # (to the first yield: ready for send())
        self._feeder = feeder
        self._error: BaseException | None = None
        self._trace: Any = None
        self._closed = False

    def _failed(self, e: BaseException) -> None:
        self._error, self._trace = e, e.__traceback__

    def _again(self) -> None:
        """The first error again, with its own traceback (not one more frame per call)."""
        if self._error is not None:
            raise self._error.with_traceback(self._trace)

    def send(self, chunk: Chunk) -> None:
        self._again()
        if self._closed:
            raise ValueError("send() after close(): the coroutine's input has ended")
        try:
            self._feeder.send(chunk)
        except StopIteration:  # pragma: no cover - (ends only at _END)
            self._closed = True
        except BaseException as e:
            self._failed(e)
            raise

    def close(self) -> None:
        self._again()
        if self._closed:
            return
        self._closed = True
        try:
            self._feeder.send(_END)
        except StopIteration:
            pass
        except BaseException as e:
            self._failed(e)
            raise



def parse_coro(target: Sendable, *, use_float: bool = False, **options: Any) -> PushCoroutine:
    """Push counterpart of :func:`parse`, as ``ijson.parse_coro``: ``send(chunk)``
    (bytes or str, split anywhere) sends the ``(prefix, event, value)``
    triples it completes to ``target.send``; ``close()`` ends the input.

    >>> import ijson
    >>> events = ijson.sendable_list()
    >>> coro = parse_coro(events)
    >>> coro.send(b"a[2]: 1,")
    >>> coro.send(b"x\\n")
    >>> coro.close()
    >>> events[-3:]
    [('a.item', 'string', 'x'), ('a', 'end_array', None), ('', 'end_map', None)]
    """
    check_driver_args("parse_coro", options)
    native = _native_parse(None, use_float, options)
    if native is not None:
        return PushCoroutine(_native_coro(target, native))
    return PushCoroutine(_coro(target, driver_decoder(use_float, options, batches=True, value_runs=True), ParseAdapter().push))


def items_coro(
    target: Sendable, prefix: str, *, map_type: MapType | None = None, use_float: bool = False, **options: Any
) -> PushCoroutine:
    """Push counterpart of :func:`items`, as ``ijson.items_coro``.

    >>> values = []
    >>> class Sink:
    ...     send = values.append
    >>> coro = items_coro(Sink(), "users.item")
    >>> coro.send("users[2]{id}:\\n  1\\n")
    >>> coro.send("  2\\n")
    >>> coro.close()
    >>> values
    [{'id': 1}, {'id': 2}]
    """
    check_driver_args("items_coro", options)
    native = _native_items(None, prefix, False, map_type, use_float, options)
    if native is not None:
        return PushCoroutine(_native_coro(target, native))
    return PushCoroutine(_coro(target, *_items_setup(prefix, False, map_type, use_float, options)))


def kvitems_coro(
    target: Sendable, prefix: str, *, map_type: MapType | None = None, use_float: bool = False, **options: Any
) -> PushCoroutine:
    """Push counterpart of :func:`kvitems`, as ``ijson.kvitems_coro``.

    >>> import ijson
    >>> pairs = ijson.sendable_list()
    >>> coro = kvitems_coro(pairs, "")
    >>> coro.send(b"a: 1\\nb: ")
    >>> coro.send(b"x")
    >>> coro.close()
    >>> pairs
    [('a', 1), ('b', 'x')]
    """
    check_driver_args("kvitems_coro", options)
    native = _native_items(None, prefix, True, map_type, use_float, options)
    if native is not None:
        return PushCoroutine(_native_coro(target, native))
    return PushCoroutine(_coro(target, *_items_setup(prefix, True, map_type, use_float, options)))


def rows_coro(
    target: Sendable,
    prefix: str = "",
    *,
    as_dict: bool = False,
    key_field: str = "key",
    expect_fields: Sequence[str] | None = None,
    use_float: bool = True,
    **options: Any,
) -> PushCoroutine:
    """Push counterpart of :func:`rows`: each row (a tuple, or a dict with
    ``as_dict``) is sent to ``target`` as its line completes (rows may lag
    by a few lines: see :meth:`Decoder.feed`; ``close()`` sends the rest).

    >>> import ijson
    >>> got = ijson.sendable_list()
    >>> coro = rows_coro(got, "users")
    >>> coro.send(b"users[2]{id,name}:\\n  1,Ada\\n  2,")
    >>> coro.send(b"Bob")
    >>> coro.close()
    >>> got
    [(1, 'Ada'), (2, 'Bob')]
    """
    check_driver_args("rows_coro", options)
    decoder, adapter = _rows_setup(prefix, as_dict, key_field, expect_fields, use_float, options)
    return PushCoroutine(_coro(target, decoder, adapter.push))

"""Decoding: the sans-I/O ``Decoder`` and the drivers built on it.

Data flow::

    chunks (bytes/str) -> LineSplitter -> Machine -> events -> consumer
                                                        |-> ValueBuilder   (loads, load)
                                                        |-> ParseAdapter  (parse: ijson triples)
                                                        |-> _ItemsAdapter  (items, kvitems)
                                                        `-> RowsAdapter   (rows)

Every consumer is a push object (``push(events) -> outputs``); the sync and
async drivers only move chunks in and outputs out, so they cannot disagree.
"""

from __future__ import annotations

import inspect
from itertools import chain, repeat
from operator import index, itemgetter
from typing import (
    IO,
    Any,
    AsyncIterable,
    AsyncIterator,
    Callable,
    Generator,
    Iterable,
    Iterator,
    NamedTuple,
    Protocol,
    Sequence,
    TypeVar,
    Union,
    overload,
)

from . import _engine

_T = TypeVar("_T")
from ._reference.build import HookedValueBuilder, ValueBuilder, leaf_names, object_finisher, remap_objects, row_maker
from ._errors import ToonDecodeError
from ._reference.events import (
    Columns,
    EndArray,
    EndObject,
    EndTable,
    Entries,
    Event,
    Fields,
    Key,
    Members,
    Rows,
    Scalar,
    StartArray,
    StartObject,
    StartTable,
    Values,
)
from ._reference.lines import LineSplitter
from ._reference.machine import Machine
from ._reference.numbers import decimal_float, make_column_converter, make_converter

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
        "_raw", "_raw_text", "_raw_len", "_raw_lines", "_raw_room", "_raw_chars", "_before_error", "_marks",
    )

    def __init__(
        self,
        *,
        indent_size: int = 2,
        strict: bool = True,
        parse_float: Callable[[str], Any] | None = None,
        parse_int: Callable[[str], Any] | None = None,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_line_length: int = DEFAULT_MAX_LINE_LENGTH,
        max_number_length: int = DEFAULT_MAX_NUMBER_LENGTH,
        max_fields: int = DEFAULT_MAX_FIELDS,
        start_line: int = 1,
        batches: bool = False,
        hold_rows: bool = True,
        _value_runs: bool = False,
        _block_paths: bool = True,
        _line_marks: bool = False,
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
        return self._step(self._lines.feed, self._take_raw(), hold=False)

    def close(self) -> list[Event]:
        """Signal end of input; return the remaining events (scope ends, count checks).

        Rows still held back (see :meth:`feed`) come with these events; if
        the end is an error (too few rows, say), they would be lost with the
        raise: call :meth:`flush` first to get them before the error, as
        the drivers (``rows``, ``parse``, ...) do."""
        if self._marks:
            self._marks = []
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
        next row.  With :meth:`skip_rows` this lets a consumer parse long
        runs of rows itself (the Arrow/Polars readers do, column-wise)
        while the decoder keeps the count, the line numbers and everything
        else.

        >>> d = Decoder()
        >>> _ = d.feed(b"t[3]{a,b}:\\n")
        >>> d.table_context()
        TableContext(indent=2, delimiter=',', width=2, rows_left=3)
        >>> d.skip_rows(2)     # the caller consumed two row lines itself
        >>> d.feed(b"  5,6\\n"), d.line
        ([Rows(rows=[(5, 6)])], 4)
        """
        if self._held or self._raw or not self._lines.at_line_boundary():
            return None
        ctx = self._machine.table_context()
        return None if ctx is None else TableContext(*ctx)

    def skip_rows(self, count: int) -> None:
        """Account for ``count`` row lines the caller consumed itself.

        Only valid right after :meth:`table_context` returned a context, for
        at most ``rows_left`` lines, each ``indent`` spaces then exactly
        ``width`` cells that the row grammar accepts: the caller vouches for
        them.  Line numbers and the declared-length check stay exact.
        """
        if count <= 0:
            return
        lines = self._lines
        lines.lines_emitted += count
        self._machine.skip_rows(count, lines.lines_emitted)

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

    return chain.from_iterable(batches())


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
    indent_size: int = 2,
    strict: bool = True,
    object_hook: Callable[[dict[str, Any]], Any] | None = None,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
    parse_float: Callable[[str], Any] | None = None,
    parse_int: Callable[[str], Any] | None = None,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_line_length: int = DEFAULT_MAX_LINE_LENGTH,
    max_number_length: int = DEFAULT_MAX_NUMBER_LENGTH,
    max_fields: int = DEFAULT_MAX_FIELDS,
) -> Any:
    """Decode a whole TOON document (str, or UTF-8 bytes) to Python values.

    Objects become dicts, arrays lists; numbers are int or float like
    ``json.loads`` (``parse_float=decimal.Decimal`` for exact decimals).
    The hooks are ``json.loads``'s, with its semantics: ``object_hook`` gets
    every decoded object as a dict (table rows, their field groups and keyed
    tables included, inner objects first) and its result replaces it;
    ``object_pairs_hook`` gets the object's ``(key, value)`` pairs in order
    instead, and wins when both are given; ``parse_int``/``parse_float``
    get the text of every integer / other number.  A
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
    indent_size: int = 2,
    strict: bool = True,
    object_hook: Callable[[dict[str, Any]], Any] | None = None,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
    parse_float: Callable[[str], Any] | None = None,
    parse_int: Callable[[str], Any] | None = None,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_line_length: int = DEFAULT_MAX_LINE_LENGTH,
    max_number_length: int = DEFAULT_MAX_NUMBER_LENGTH,
    max_fields: int = DEFAULT_MAX_FIELDS,
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
        options = {k: v for k, v in options.items() if k in _engine.VALUE_OPTIONS}  # (the rest are unset hooks)
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


# ---------------------------------------------------------------------- prefixes

_MAP, _ARRAY, _TABLE, _KEYED = 0, 1, 2, 3


class _Scope:
    """An open container as the prefix-tracking adapters see it.

    Prefixes follow ijson's default (yajl2_c) backend, edge cases included: an
    object member's prefix is ``parent.key``, except in the root object where
    it is ``key`` (so ``{"": {"": 1}}`` gives ``"."``); an array element's is
    ``parent.item``, or ``item`` when the parent prefix is the empty string
    (so ``{"": [1]}`` gives ``"item"``).
    """

    __slots__ = ("kind", "prefix", "sep", "child", "fields", "mark")

    def __init__(self, kind: int, prefix: str, root: bool, fields: Fields | None = None) -> None:
        self.kind = kind
        self.prefix = prefix  # ijson prefix of the container itself
        self.sep = "" if root else "."
        # prefix of the next child value (set per key for objects)
        self.child = (prefix + ".item" if prefix else "item") if kind in (_ARRAY, _TABLE) else prefix
        self.fields = fields
        # Adapter-specific: _ItemsAdapter keeps a kvitems flag on maps and a
        # row maker on tables; RowsAdapter marks the tables it reports.
        self.mark: Any = None

    def key(self, name: str) -> str:
        """Prefix of the value under ``name`` in this object."""
        return self.prefix + self.sep + name


def _value_prefix(scopes: list[_Scope]) -> str:
    return scopes[-1].child if scopes else ""


class _KindOf(dict[type, str]):
    """ijson event name of a leaf value's type (a ``parse_float`` result or a
    Decimal is a "number"); ``_KIND_OF[type(v)]`` is one C-level lookup."""

    def __missing__(self, key: type) -> str:
        return "number"


_KIND_OF = _KindOf({str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"})
_kind_of_type = _KIND_OF.__getitem__


def _kind(v: Any) -> str:
    return _kind_of_type(type(v))


def _rows_triples(
    prefix: str, fields: Fields, rows: list[tuple[Any, ...]] | None, columns: list[Any] | None, out: list[tuple[str, str, Any]]
) -> None:
    """ijson triples of table rows (objects at ``prefix``), given as ``rows``
    or as ``columns`` (leaf values per field).

    For flat fields, built without a Python loop per row or cell: one iterator
    per event position in a row (start, key, value, ..., end), zipped and
    flattened, so C code makes the tuples.  Nested field groups go row by row.
    """
    if any(f.children is not None for f in fields):
        for row in rows if rows is not None else zip(*columns or ()):
            _row_triples(prefix, fields, row, out)
        return
    if columns is None:
        assert rows is not None
        if not rows:
            return
        columns = list(zip(*rows))
    n = len(columns[0])  # (a header has at least one field)
    parts: list[Iterable[tuple[str, str, Any]]] = [repeat((prefix, "start_map", None), n)]
    for f, col in zip(fields, columns):
        parts.append(repeat((prefix, "map_key", f.name), n))
        kinds = set(map(type, col))  # (one kind per column is the rule: then no lookup per cell)
        kind = repeat(_kind_of_type(kinds.pop()), n) if len(kinds) == 1 else map(_kind_of_type, map(type, col))
        parts.append(zip(repeat(prefix + "." + f.name, n), kind, col))
    parts.append(repeat((prefix, "end_map", None), n))
    out.extend(chain.from_iterable(zip(*parts)))


def _row_triples(prefix: str, fields: Fields, row: tuple[Any, ...], out: list[tuple[str, str, Any]]) -> None:
    """ijson triples of one table row (an object at ``prefix``), iteratively."""
    app = out.append
    app((prefix, "start_map", None))
    cells = iter(row)
    todo: list[tuple[str, Iterator[Any]]] = [(prefix, iter(fields))]
    while todo:
        p, it = todo[-1]
        f = next(it, None)
        if f is None:
            todo.pop()
            app((p, "end_map", None))
            continue
        app((p, "map_key", f.name))
        vp = p + "." + f.name  # rows are never the root: always dotted
        if f.children is None:
            v = next(cells)
            app((vp, _kind(v), v))
        else:
            app((vp, "start_map", None))
            todo.append((vp, iter(f.children)))


class ParseAdapter:
    """Events -> ``(prefix, event, value)`` triples, as ``ijson.parse`` yields them."""

    def __init__(self) -> None:
        self.scopes: list[_Scope] = []

    def push(self, events: list[Event]) -> list[tuple[str, str, Any]]:
        out: list[tuple[str, str, Any]] = []
        app = out.append
        scopes = self.scopes
        ev: Any
        for ev in events:
            t = type(ev)
            if t is Key:
                top = scopes[-1]
                app((top.prefix, "map_key", ev.key))
                top.child = top.key(ev.key)
            elif t is Scalar:
                v = ev.value
                app((_value_prefix(scopes), _kind(v), v))
            elif t is Rows:
                top = scopes[-1]
                assert top.fields is not None
                _rows_triples(top.child, top.fields, ev.rows, None, out)
            elif t is Columns:
                top = scopes[-1]
                assert top.fields is not None
                _rows_triples(top.child, top.fields, None, ev.columns, out)
            elif t is Members:
                top = scopes[-1]
                for k, v in ev.pairs:
                    app((top.prefix, "map_key", k))
                    app((top.key(k), _kind(v), v))
            elif t is Values:
                p = scopes[-1].child
                for v in ev.values:
                    app((p, _kind(v), v))
            elif t is StartObject:
                vp = _value_prefix(scopes)
                app((vp, "start_map", None))
                scopes.append(_Scope(_MAP, vp, not scopes))
            elif t is StartArray:
                vp = _value_prefix(scopes)
                app((vp, "start_array", None))
                scopes.append(_Scope(_ARRAY, vp, not scopes))
            elif t is StartTable:
                vp = _value_prefix(scopes)
                if ev.keyed:
                    app((vp, "start_map", None))
                    scopes.append(_Scope(_KEYED, vp, not scopes, ev.fields))
                else:
                    app((vp, "start_array", None))
                    scopes.append(_Scope(_TABLE, vp, not scopes, ev.fields))
            elif t is Entries:
                top = scopes[-1]
                assert top.fields is not None
                for k, row in ev.entries:
                    app((top.prefix, "map_key", k))
                    _row_triples(top.key(k), top.fields, row, out)
            elif t is EndObject or t is EndTable and ev.keyed:
                app((scopes.pop().prefix, "end_map", None))
            else:  # EndArray, EndTable (array)
                app((scopes.pop().prefix, "end_array", None))
        return out


def _matches(value: Any, prefix: str, target: str, emit: Callable[[str, Any], None]) -> None:
    """Call ``emit(prefix, v)`` for every value inside a built value (a row,
    a list item) at ``target``.

    The walk compares prefixes (never splits them), so keys that contain
    dots match exactly as in ijson; a list's elements are at ``.item``.
    """
    todo = [(prefix, value)]
    while todo:
        p, v = todo.pop()
        if p == target:
            emit(p, v)
        elif target.startswith(p + "."):
            if type(v) is dict:
                todo.extend((p + "." + k, sub) for k, sub in reversed(list(v.items())))
            elif type(v) is list:
                todo.extend((p + ".item", sub) for sub in reversed(v))


class _ItemsAdapter:
    """ijson ``items`` (values at ``prefix``) and ``kvitems`` (members of objects at ``prefix``)."""

    def __init__(self, prefix: str, *, kv: bool) -> None:
        self.target = prefix
        self.kv = kv
        self.scopes: list[_Scope] = []
        self.builder: ValueBuilder | None = None
        self.key: str | None = None  # kvitems: key of the value being built

    def push(self, events: list[Event]) -> list[Any]:
        out: list[Any] = []
        scopes = self.scopes
        target = self.target
        kv = self.kv
        i = 0
        n = len(events)
        while i < n:
            if self.builder is not None:
                j = self.builder.push(events, i)
                if j < 0:
                    break
                out.append((self.key, self.builder.value) if kv else self.builder.value)
                self.builder = None
                i = j
                continue
            ev: Any = events[i]
            i += 1
            t = type(ev)
            if t is Key:
                top = scopes[-1]
                top.child = top.key(ev.key)
                if kv and top.mark:
                    self.key = ev.key
                continue
            vp = _value_prefix(scopes)
            parent_kv = kv and bool(scopes) and scopes[-1].mark
            if t is Scalar:
                if parent_kv:
                    out.append((self.key, ev.value))
                elif not kv and vp == target:
                    out.append(ev.value)
            elif t is StartObject or t is StartArray or t is StartTable:
                if parent_kv or (not kv and vp == target):
                    self.builder = ValueBuilder()
                    i -= 1  # the builder takes this event too
                    continue
                if t is StartObject:
                    scope = _Scope(_MAP, vp, not scopes)
                    scope.mark = kv and vp == target
                elif t is StartArray:
                    scope = _Scope(_ARRAY, vp, not scopes)
                else:
                    scope = _Scope(_KEYED if ev.keyed else _TABLE, vp, not scopes, ev.fields)
                    scope.mark = row_maker(ev.fields)
                scopes.append(scope)
            elif t is Values:
                if not kv and scopes[-1].child == target:
                    out.extend(ev.values)
            elif t is Rows:
                top = scopes[-1]
                self._values(top.child, map(top.mark, ev.rows), out)
            elif t is Entries:
                top = scopes[-1]
                make = top.mark
                if kv and top.prefix == target:
                    out.extend((k, make(row)) for k, row in ev.entries)
                elif target.startswith(top.prefix):
                    for k, row in ev.entries:
                        self._values(top.key(k), (make(row),), out)
            else:  # EndObject, EndArray, EndTable
                scopes.pop()
        return out

    def _values(self, item_prefix: str, values: Iterable[Any], out: list[Any]) -> None:
        """Finished values at ``item_prefix`` (row objects, list items): what
        of them is at the target."""
        target = self.target
        if item_prefix == target:
            if self.kv:
                for v in values:
                    if type(v) is dict:
                        out.extend(v.items())
            else:
                out.extend(values)
        elif target.startswith(item_prefix + "."):
            if self.kv:
                emit: Callable[[str, Any], None] = lambda p, v: out.extend(v.items()) if type(v) is dict else None
            else:
                emit = lambda p, v: out.append(v)
            for v in values:
                _matches(v, item_prefix, target, emit)


class _Columns:
    """``fields`` and ``columns`` of the table(s) a row reader follows."""

    _adapter: RowsAdapter

    @property
    def fields(self) -> Fields | None:
        """The field tree of the latest matching header (None before one was read)."""
        return self._adapter.fields

    @property
    def columns(self) -> list[str] | None:
        """Leaf column names in tuple order (dotted for nested groups; the entry key first)."""
        return self._adapter.columns


class RowReader(_Columns):
    """Iterator over the rows of the tabular arrays (or keyed tables) at a prefix.

    ``fields`` (the header's field tree) and ``columns`` (leaf names, dotted for
    nested groups; a keyed table's entry key first) are set once a matching
    header has been read; they follow the latest matching table.

    >>> r = rows("users[2]{id,name}:\\n  1,Ada\\n  2,Bob", "users")
    >>> list(r), r.columns
    ([(1, 'Ada'), (2, 'Bob')], ['id', 'name'])
    """

    def __init__(self, adapter: RowsAdapter, it: Iterator[Any]) -> None:
        self._adapter = adapter
        self._it = it

    def __iter__(self) -> Iterator[Any]:
        # The C-level iterator itself (a for loop then runs no Python code
        # per row); next() on the reader advances the same one.
        return self._it

    def __next__(self) -> Any:
        return next(self._it)


class AsyncRowReader(_Columns):
    """Async counterpart of :class:`RowReader` (``async for row in rows_async(...)``)."""

    def __init__(self, adapter: RowsAdapter, it: AsyncIterator[Any]) -> None:
        self._adapter = adapter
        self._it = it

    def __aiter__(self) -> AsyncRowReader:
        return self

    async def __anext__(self) -> Any:
        return await self._it.__anext__()


class RowsAdapter:
    """Rows of tables at ``prefix``: leaf tuples, or dicts with ``as_dict``."""

    def __init__(
        self,
        prefix: str | None,
        *,
        as_dict: bool,
        key_field: str,
        where: Callable[[int], int],
        expect_fields: Sequence[str] | None = None,
    ) -> None:
        self.target = prefix
        self.as_dict = as_dict
        self.key_field = key_field
        self.where = where
        self.expect = list(expect_fields) if expect_fields is not None else None
        self.scopes: list[_Scope] = []
        self.fields: Fields | None = None
        self.columns: list[str] | None = None
        self.found = 0  # matching tables opened so far
        # Called with each matching header and its columns (the Arrow/Polars
        # readers check that later tables agree with the first).
        self.on_table: Callable[[StartTable, list[str]], None] | None = None

    def in_target(self) -> bool:
        """True while the innermost open scope is a matching (non-keyed) tabular array."""
        scopes = self.scopes
        return bool(scopes) and scopes[-1].mark is not None and scopes[-1].kind == _TABLE

    def push(self, events: list[Event]) -> list[Any]:
        out: list[Any] = []
        scopes = self.scopes
        target = self.target
        ev: Any
        for i, ev in enumerate(events):
            t = type(ev)
            if t is Rows:
                top = scopes[-1]
                mark = top.mark
                if mark is not None:
                    if mark is True:
                        out.extend(ev.rows)
                    else:  # a row maker (as_dict) or a reordering itemgetter
                        out.extend(map(mark, ev.rows))
            elif t is Entries:
                top = scopes[-1]
                make = top.mark
                if make is not None:
                    if self.as_dict:
                        kf = self.key_field
                        for k, row in ev.entries:
                            d = {kf: k}
                            d.update(make(row))
                            out.append(d)
                    elif make is True:
                        out.extend((k, *row) for k, row in ev.entries)
                    else:
                        out.extend((k, *make(row)) for k, row in ev.entries)
            elif t is Key:
                top = scopes[-1]
                top.child = top.key(ev.key)
            elif t is StartObject or t is StartArray or t is StartTable:
                vp = _value_prefix(scopes)
                if t is StartTable:
                    keyed = ev.keyed
                    scope = _Scope(_KEYED if keyed else _TABLE, vp, not scopes, ev.fields)
                    if target is None and (not scopes or (len(scopes) == 1 and scopes[0].kind == _MAP)):
                        # Auto target: the root table, else the root object's first tabular member.
                        target = self.target = vp
                    if vp == target:
                        order = self.matched(ev)
                        scope.mark = row_maker(ev.fields) if self.as_dict else True
                        if order is not None and not self.as_dict:
                            scope.mark = order  # reorder tuples to the expected order
                elif vp == target:
                    raise ToonDecodeError(
                        f"the value at prefix {target!r} is not a tabular array or keyed table",
                        code="not_tabular",
                        line=self.where(i),
                        column=1,
                        line_text="",
                    )
                else:
                    scope = _Scope(_MAP if t is StartObject else _ARRAY, vp, not scopes)
                scopes.append(scope)
            elif t is Scalar:
                if _value_prefix(scopes) == target:
                    raise ToonDecodeError(
                        f"the value at prefix {target!r} is not a tabular array or keyed table",
                        code="not_tabular",
                        line=self.where(i),
                        column=1,
                        line_text="",
                    )
            elif t is Values:
                pass
            else:
                scopes.pop()
        return out


    def matched(self, ev: StartTable) -> Callable[[tuple[Any, ...]], tuple[Any, ...]] | None:
        """A header at the target: ``fields``/``columns`` follow it, ``expect_fields`` is checked;
        returns the tuple reordering (None: header order)."""
        self.found += 1
        self.fields = ev.fields
        cols = leaf_names(ev.fields)
        order = None
        if self.expect is not None:
            order = check_fields(ev, self.expect)
            cols = list(self.expect)
        self.columns = [self.key_field, *cols] if ev.keyed else cols
        if self.on_table is not None:
            self.on_table(ev, self.columns)
        return order

    def native_header(self, ev: StartTable) -> list[int] | None:
        """The native row decoder's header callback: :meth:`matched`, and the column order as
        leaf indexes (None: header order, or dicts)."""
        order = self.matched(ev)
        if order is None or self.as_dict or self.expect is None:
            return None
        leaves = leaf_names(ev.fields)
        return [leaves.index(f) for f in self.expect]


def check_fields(table: StartTable, expected: Sequence[str]) -> Callable[[tuple[Any, ...]], tuple[Any, ...]] | None:
    """Schema-drift guard: the table's leaf fields must be exactly ``expected``
    (any order).  Returns a tuple reordering function when only the order
    differs, None when it is identical; raises ToonDecodeError otherwise."""
    cols = leaf_names(table.fields)
    if cols == list(expected):
        return None
    missing = [f for f in expected if f not in cols]
    extra = [c for c in cols if c not in expected]
    if missing or extra or len(cols) != len(expected):
        parts = []
        if missing:
            parts.append("missing " + ", ".join(missing))
        if extra:
            parts.append("unexpected " + ", ".join(extra))
        if not parts:
            parts.append("duplicate fields")
        raise ToonDecodeError(
            f"table header does not carry the expected fields: {'; '.join(parts)}",
            code="unexpected_fields",
            line=table.line,
            column=1,
            line_text=table.line_text,
        )
    pick = itemgetter(*[cols.index(f) for f in expected])
    if len(expected) == 1:
        return lambda row: (pick(row),)
    return pick


# ---------------------------------------------------------------------- drivers


def driver_decoder(
    use_float: bool, options: dict[str, Any], *, batches: bool = False, value_runs: bool = False, line_marks: bool = False
) -> Decoder:
    """The driver's Decoder; ``batches``: Members and Columns events (see
    :class:`Decoder`); ``value_runs``: runs of primitive list items come as
    one Values event (for consumers that take values, not lines);
    ``line_marks``: :meth:`Decoder.event_line` is exact (for a driver's own errors)."""
    if "parse_float" not in options:
        options["parse_float"] = None if use_float else decimal_float
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
    adapter = RowsAdapter(prefix, as_dict=as_dict, key_field=key_field, where=decoder.event_line, expect_fields=expect_fields)
    return decoder, adapter


def _is_async_file(source: Any) -> bool:
    """Whether ``source`` is an async file (its ``read`` a coroutine
    function), as ijson 3 tells one for its dispatch."""
    read = getattr(source, "read", None)
    return read is not None and inspect.iscoroutinefunction(read)


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
    chunks; an async file gives the async iterator of :func:`parse_async`.
    Other keyword options go to :class:`Decoder`.

    >>> list(parse("a[2]: 1,x"))[:4]
    [('', 'start_map', None), ('', 'map_key', 'a'), ('a', 'start_array', None), ('a.item', 'number', 1)]
    """
    if _is_async_file(source):
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
    iterator of :func:`items_async`, as ijson 3 dispatches.

    >>> list(items("users[2]{id}:\\n  1\\n  2", "users.item"))
    [{'id': 1}, {'id': 2}]
    """
    if _is_async_file(source):
        return items_async(source, prefix, map_type=map_type, use_float=use_float, buf_size=buf_size, **options)
    native = _native_items(source, prefix, False, map_type, use_float, options)
    if native is not None:
        return _native_drive(source, native, buf_size)
    return _drive(source, *_items_setup(prefix, False, map_type, use_float, options), buf_size)


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

    ``map_type`` and an async file: as for :func:`items`.

    >>> list(kvitems("cfg:\\n  a: 1\\n  b: x", "cfg"))
    [('a', 1), ('b', 'x')]
    """
    if _is_async_file(source):
        return kvitems_async(source, prefix, map_type=map_type, use_float=use_float, buf_size=buf_size, **options)
    native = _native_items(source, prefix, True, map_type, use_float, options)
    if native is not None:
        return _native_drive(source, native, buf_size)
    return _drive(source, *_items_setup(prefix, True, map_type, use_float, options), buf_size)


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

    An async file gives the :class:`AsyncRowReader` of :func:`rows_async`.

    >>> list(rows("[2:]{age}:\\n  ada: 36\\n  bob: 41", as_dict=True))
    [{'key': 'ada', 'age': 36}, {'key': 'bob', 'age': 41}]
    """
    if _is_async_file(source):
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
    return options


def native_push(make: Callable[..., _T], *args: Any, **options: Any) -> _T | None:
    """``make(*args, **options)``, or None where the native side refuses an option value (a
    negative limit, say): the reference then decides, with its own error."""
    try:
        return make(*args, **options)
    except (ValueError, TypeError, OverflowError):
        return None


def _native_drive(source: Source, native: _engine.OutputDecoder, buf_size: int) -> Iterator[Any]:
    """The outputs of an engine's push decoder over ``source``, lazily (as :func:`_drive`)."""

    def batches() -> Iterator[list[Any]]:
        for chunk in read_chunks(source, buf_size):
            yield native.feed(chunk)
        while batch := native.close():  # (outputs before an error, then the error on the next call)
            yield batch

    return chain.from_iterable(batches())


async def _native_adrive(source: AsyncSource, native: _engine.OutputDecoder, buf_size: int) -> AsyncIterator[Any]:
    async for chunk in _achunks(source, buf_size):
        for item in native.feed(chunk):
            yield item
    while batch := native.close():
        for item in batch:
            yield item


def _native_coro(target: Sendable, native: _engine.OutputDecoder) -> PushCoroutine:
    send = target.send
    while True:
        try:
            chunk = yield
        except GeneratorExit:
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
    prefix: str | None,
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
    or an async iterable of chunks."""
    native = _native_parse(None, use_float, options)
    if native is not None:
        return _native_adrive(source, native, buf_size)
    return _adrive(source, driver_decoder(use_float, options, batches=True, value_runs=True), ParseAdapter().push, buf_size)


def items_async(
    source: AsyncSource, prefix: str, *, map_type: MapType | None = None, use_float: bool = False,
    buf_size: int = DEFAULT_BUF_SIZE, **options: Any,
) -> AsyncIterator[Any]:
    """Async :func:`items`."""
    native = _native_items(None, prefix, False, map_type, use_float, options)
    if native is not None:
        return _native_adrive(source, native, buf_size)
    return _adrive(source, *_items_setup(prefix, False, map_type, use_float, options), buf_size)


def kvitems_async(
    source: AsyncSource, prefix: str, *, map_type: MapType | None = None, use_float: bool = False,
    buf_size: int = DEFAULT_BUF_SIZE, **options: Any,
) -> AsyncIterator[tuple[str, Any]]:
    """Async :func:`kvitems`."""
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
    """Async :func:`rows`."""
    decoder, adapter = _rows_setup(prefix, as_dict, key_field, expect_fields, use_float, options)
    return AsyncRowReader(adapter, _adrive(source, decoder, adapter.push, buf_size))



# ---------------------------------------------------------------------- push coroutines


class Sendable(Protocol):
    """What a coroutine sends its outputs to: ``ijson.sendable_list``, a list
    subclass with ``send = list.append``, or another coroutine."""

    def send(self, value: Any, /) -> Any: ...


#: what the ``*_coro`` functions return: a started generator taking chunks by ``send``
PushCoroutine = Generator[None, Chunk, None]


def _coro(target: Sendable, decoder: Decoder, push: Callable[[list[Event]], list[Any]]) -> PushCoroutine:
    """Feed each chunk ``send()`` brings; ``close()`` ends the input (its
    errors, a truncated document say, are raised by ``close()``)."""
    send = target.send
    while True:
        try:
            chunk = yield
        except GeneratorExit:
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


def _started(coro: PushCoroutine) -> PushCoroutine:
    next(coro)  # (to the first yield: ready for send(), as ijson's coroutines are)
    return coro


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
    native = _native_parse(None, use_float, options)
    if native is not None:
        return _started(_native_coro(target, native))
    return _started(_coro(target, driver_decoder(use_float, options, batches=True, value_runs=True), ParseAdapter().push))


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
    native = _native_items(None, prefix, False, map_type, use_float, options)
    if native is not None:
        return _started(_native_coro(target, native))
    return _started(_coro(target, *_items_setup(prefix, False, map_type, use_float, options)))


def kvitems_coro(
    target: Sendable, prefix: str, *, map_type: MapType | None = None, use_float: bool = False, **options: Any
) -> PushCoroutine:
    """Push counterpart of :func:`kvitems`, as ``ijson.kvitems_coro``."""
    native = _native_items(None, prefix, True, map_type, use_float, options)
    if native is not None:
        return _started(_native_coro(target, native))
    return _started(_coro(target, *_items_setup(prefix, True, map_type, use_float, options)))


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
    by a few lines: see :meth:`Decoder.feed`; ``close()`` sends the rest)."""
    decoder, adapter = _rows_setup(prefix, as_dict, key_field, expect_fields, use_float, options)
    return _started(_coro(target, decoder, adapter.push))

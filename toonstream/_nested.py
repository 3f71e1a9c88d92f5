"""Arrays of records that are not tabular (list items holding nested objects
and arrays) as Polars frames with Struct and List columns: what
``toonstream.polars.read_toon`` and ``toonstream.arrow.iter_batches`` read
where no tabular array stands at the path, as ``polars.read_ndjson`` reads
the same records written as JSON Lines.

Who owns what: :class:`~toonstream._frames.FrameReader` looks for a table
first; when there is none (``not_tabular``) it hands its source and options
to :class:`RecordReader`, which reads the source again (see
:func:`replayable`), a batch of records at a time: built by the native
engine's ``items`` decoder where it can (``_native_feeds``), else by the
reference's decoder and :class:`_Records`, which also name the line of
what only they check (an item that is no record, a value at the path that
is no array).

- Schema: inferred from the first ``infer_schema_length`` records as Polars
  infers JSON: columns in order of first appearance; a key's values merged
  to one dtype (objects to a Struct of all their keys, arrays to a List of
  their elements' dtype; two structs merge their fields with Polars' order:
  the one with more fields first).  A scalar leaf's dtype follows the flat
  tables' rule (``_frames.infer_dtype``), so integers beyond int64 are
  Decimal(38, 0) (Polars: Int128, which has no Arrow type), booleans mixed
  with numbers are String (Polars: an error), and a key that is null in
  every record of a window that is not the whole input is String.
- Columns: built column-wise, bottom-up (leaf values typed and checked as
  the flat tables' columns are; structs and lists assembled as Arrow arrays
  around them), ``batch_size`` records per frame.  Memory: one batch of
  records, and until the schema is decided the batches the inference
  window spans.
- Checks: a key outside the schema, or a value that does not fit its dtype,
  is a ``ToonDecodeError`` at the record's line (never dropped, as
  ``read_ndjson`` drops a key it did not infer).
"""

from __future__ import annotations

import os
import tempfile
from bisect import bisect_right
from collections import deque
from decimal import Decimal
from functools import partial
from itertools import accumulate, chain, repeat
from typing import IO, TYPE_CHECKING, Any, Callable, Iterator, Sequence

from ._optional import requires

with requires("reading TOON tables (toonstream.polars, toonstream.arrow.iter_batches/read_table)"):
    import polars as pl

if TYPE_CHECKING:
    import pyarrow as pa


def _pyarrow() -> Any:
    """pyarrow, imported when an array of records is first read: a table needs only polars, Struct
    and List columns are assembled as Arrow arrays (a polars-only install can read tables)."""
    with requires("reading arrays of records that are not tables (Struct and List columns)"):
        import pyarrow

    return pyarrow

from ._reference.build import ValueBuilder, row_maker
from ._errors import SCHEMA_HINT, ToonDecodeError
from ._reference.events import (
    Columns, EndArray, EndObject, EndTable, Field, Key, Rows, Scalar, StartArray, StartObject, StartTable, Values,
)
from ._frames import (
    K_NULL,
    K_STR,
    _cast,
    _dtype_leaves,
    _frame,
    allowed_kinds,
    as_float,
    base_dtype,
    byte_chunks,
    convert_values,
    infer_dtype,
    is_scaled_decimal,
    iso_dtype,
    iso_expr,
    kind_name,
    value_kind,
    values_kinds,
)
from .decoder import Decoder, driver_decoder
from .tojson import value_json

__all__ = ["RecordReader", "RecordsAhead", "replayable", "KEEP", "MAX_NESTING"]

#: Records nested deeper than this (objects and arrays inside a record) are
#: refused: a frame's dtype this deep is of no use, and the column-wise
#: builders recurse once per level (Python's stack stays far from its limit).
MAX_NESTING = 64

#: Bytes of a pipe kept for a second read (an array of records found after
#: more than this cannot be read from a pipe: a path or a seekable file can).
KEEP = 64 << 20

# Bytes given to the decoder per feed: the records one feed completes are
# held at once, so a feed is kept small (a batch is made of many feeds).
_FEED = 64 << 10

_OLDEST = pl.CompatLevel.oldest()  # large_string, large_list: what Polars reads back as it wrote
_NONE = type(None)
_CONTAINERS = (dict, list)


# ------------------------------------------------------------------ reading a source twice


def replayable(source: Any, wanted: Callable[[], bool]) -> tuple[Iterator[bytes], Callable[[], Iterator[bytes] | None], bool]:
    """The bytes of ``source`` (as :func:`~toonstream._frames.byte_chunks`
    gives them), a function that gives them again from the start (None
    when it cannot), and whether it always can (else: once, at most).

    A path or bytes are read again; a seekable file is rewound to where it
    stood; any other file (a pipe) has the bytes read from it kept while
    ``wanted()`` is true (the table reader says so until it finds its table)
    and they are at most :data:`KEEP`, and they are given back once,
    followed by the rest of the file.
    """
    first = byte_chunks(source)
    if isinstance(source, (str, os.PathLike, bytes, bytearray, memoryview)):

        def reread() -> Iterator[bytes]:
            _close(first)  # (a path's file is closed now, not when collected)
            return byte_chunks(source)

        return first, reread, True
    start: int | None = None
    try:
        if source.seekable():
            start = source.tell()
    except (AttributeError, OSError, ValueError):
        start = None
    if start is not None:
        at = start

        def rewound() -> Iterator[bytes]:
            _close(first)
            source.seek(at)
            return byte_chunks(source)

        return first, rewound, True
    kept: deque[bytes] | None = deque()
    size = 0

    def recorded() -> Iterator[bytes]:
        nonlocal kept, size
        for chunk in first:
            if kept is not None:
                size += len(chunk)
                if wanted() and size <= KEEP:
                    kept.append(chunk)
                else:
                    kept = None  # the table is found (or too far): nothing is read again
            yield chunk

    chunks = recorded()

    def again() -> Iterator[bytes] | None:
        nonlocal kept
        if kept is None:
            return None
        head, kept = kept, None

        def drained() -> Iterator[bytes]:  # (each chunk freed once given)
            while head:
                yield head.popleft()

        return chain(drained(), chunks)

    return chunks, again, False


def _skipped(feeds: Iterator[list[dict[str, Any]]], n: int) -> Iterator[list[dict[str, Any]]]:
    """The records of ``feeds`` after the first ``n``."""
    for records in feeds:
        if n >= len(records):
            n -= len(records)
            continue
        yield records[n:]
        n = 0


def _teed(chunks: Iterator[bytes], spool: IO[bytes]) -> Iterator[bytes]:
    """``chunks``, each written to ``spool`` first (a pipe's bytes, for a second read)."""
    for chunk in chunks:
        spool.seek(0, os.SEEK_END)  # (a read of it for an error's line may have moved it)
        spool.write(chunk)
        yield chunk


# A pipe's bytes kept in memory up to this, then in a temporary file (see _native_feeds).
_SPOOL_MEMORY = 8 << 20


def _close(chunks: Iterator[bytes]) -> None:
    close = getattr(chunks, "close", None)  # (a generator)
    if close is not None:
        close()


# ------------------------------------------------------------------ records out of events


class RecordsAhead:
    """Watches a table reader's events while it looks for its automatic
    target (the root table, else the root object's first tabular member):
    ``push`` is True as soon as an array of records comes first instead,
    i.e. the root is an array that is not a table, or a member of the root
    object is an array whose first item is an object.  ``path`` is then its
    prefix ("" the root).  A table there first ends the watch (False from
    then on)."""

    __slots__ = ("depth", "key", "waiting", "root_object", "path", "over")

    def __init__(self) -> None:
        self.depth = 0
        self.key = ""  # the root object's member being read
        self.waiting: str | None = None  # a member array whose first item is next
        self.root_object = False
        self.path: str | None = None
        self.over = False

    def push(self, events: list[Any]) -> bool:
        if self.over:
            return False
        for ev in events:
            t = type(ev)
            if self.waiting is not None:
                key, self.waiting = self.waiting, None
                if t is StartObject:
                    self.path, self.over = key, True
                    return True
            if t is Key:
                if self.depth == 1:
                    self.key = ev.key
            elif t is StartObject or t is StartArray or t is StartTable:
                if self.depth == 0:
                    if t is StartArray:
                        self.path, self.over = "", True
                        return True
                    self.root_object = t is StartObject
                elif self.depth == 1 and self.root_object:
                    if t is StartTable:
                        self.over = True  # the table reader's target
                        return False
                    if t is StartArray and ev.length:
                        self.waiting = self.key
                if t is StartTable and self.depth == 0:
                    self.over = True
                    return False
                self.depth += 1
            elif t is EndObject or t is EndArray or t is EndTable:
                self.depth -= 1
        return False


class _Records:
    """Push decoder events, get the records (dicts) of the arrays at ``path``
    (an ijson-style prefix; "" the root).  Every array at the path counts (as
    ``items`` at ``path + ".item"``); a value there that is not an array, or
    an item that is not an object, is an error."""

    def __init__(self, path: str, decoder: Decoder | None = None) -> None:
        self.path = path
        # (push_lines: the decoder, made with line_marks, and the line of the events being pushed)
        self.decoder = decoder
        self.line = 0
        self.prefixes: list[str] = []  # prefix of each open container outside the targets (ijson rules)
        self.child: list[str] = []  # prefix of the next child value of each open container
        self.inside = False  # in a target array (at its items' level)
        self.builder: ValueBuilder | None = None
        # (a table at the path: its rows are records too, made by this; None outside one)
        self.table: Callable[[tuple[Any, ...]], dict[str, Any]] | None = None
        self.found = 0  # target arrays opened
        self.count = 0  # records so far
        self.error: ToonDecodeError | None = None  # (see push)

    def _fail(self, message: str) -> ToonDecodeError:
        """The error at the line being pushed (its first character's column)."""
        line = max(self.line, 1)
        text = self.decoder.line_text(line) if self.decoder is not None else ""
        return ToonDecodeError(
            message, code="not_tabular", line=line, column=len(text) - len(text.lstrip(" ")) + 1, line_text=text
        )

    def _not_array(self) -> ToonDecodeError:
        return self._fail(f"the value at prefix {self.path!r} is not a tabular array, keyed table or array of records")

    def _item_error(self, value: Any) -> ToonDecodeError:
        what = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", _NONE: "null"}.get(
            type(value), "a number"
        )
        return self._fail(
            f"item {self.count} of the array at prefix {self.path!r} is {what}, not a record (an object): "
            "read it with toonstream.items"
        )

    def push_lines(self, events: list[Any]) -> list[dict[str, Any]]:
        """:meth:`push` a line at a time (the batch the decoder last returned), so that an error
        names its item's line under any chunking."""
        assert self.decoder is not None
        out: list[dict[str, Any]] = []
        for self.line, part in self.decoder.line_batches(events):
            out += self.push(part)
            if self.error is not None:
                break
        return out

    def _stop(self, out: list[dict[str, Any]], error: ToonDecodeError) -> list[dict[str, Any]]:
        """The records before an error (``out``); the error kept in ``error`` for the
        caller to raise after them."""
        self.error = error
        return out

    def push(self, events: list[Any]) -> list[dict[str, Any]]:
        """The records the events complete; on a value at the path that is no
        array or an item that is no record, those before it, and ``error`` set
        (nothing more is taken)."""
        out: list[dict[str, Any]] = []
        if self.error is not None:
            return out
        i, n = 0, len(events)
        while i < n:
            if self.builder is not None:
                j = self.builder.push(events, i)
                if j < 0:
                    break
                value = self.builder.value
                self.builder = None
                if type(value) is not dict:
                    return self._stop(out, self._item_error(value))
                out.append(value)
                self.count += 1
                i = j
                continue
            ev = events[i]
            i += 1
            t = type(ev)
            if self.table is not None:  # (a table holds rows only)
                if t is Rows:
                    out.extend(map(self.table, ev.rows))
                    self.count += len(ev.rows)
                elif t is Columns:
                    out.extend(map(self.table, zip(*ev.columns)))
                    self.count += len(ev.columns[0]) if ev.columns else 0
                elif t is EndTable:
                    self.table = None
                    self._close()
            elif self.inside:
                if t is StartObject:
                    self.builder = ValueBuilder()
                    i -= 1
                elif t is EndArray:
                    self.inside = False
                    self._close()
                elif t is Scalar:
                    return self._stop(out, self._item_error(ev.value))
                elif t is Values:
                    return self._stop(out, self._item_error(ev.values[0] if ev.values else None))
                else:  # an array or a table as an item
                    return self._stop(out, self._item_error([]))
            elif t is Key:
                self.child[-1] = self.prefixes[-1] + ("." if len(self.prefixes) > 1 else "") + ev.key
            elif t is StartObject or t is StartArray or t is StartTable:
                vp = self.child[-1] if self.child else ""
                if vp == self.path:
                    if t is StartTable and not ev.keyed:
                        # (a tabular array among arrays of records at the path: dumps writes the
                        # arrays of uniform records so, the others as list items)
                        self.table = row_maker(ev.fields)
                    elif t is not StartArray:
                        return self._stop(out, self._not_array())
                    else:
                        self.inside = True
                    self.found += 1
                self._open(t is not StartObject, vp)
            elif t is Scalar:
                if (self.child[-1] if self.child else "") == self.path:
                    return self._stop(out, self._not_array())
            elif t is EndObject or t is EndArray or t is EndTable:
                self._close()
            # (Values, Rows, Entries outside the targets: not records)
        return out

    def _open(self, array: bool, prefix: str) -> None:
        self.prefixes.append(prefix)
        self.child.append((prefix + ".item" if prefix else "item") if array else prefix)

    def _close(self) -> None:
        self.prefixes.pop()
        self.child.pop()


# ------------------------------------------------------------------ inference


class _Type:
    """What the values at one place of the records were: scalar kind bits
    (``_frames.K_*``; missing counts as null), the fields of the objects
    (None: no object), whether arrays were seen and their items' type."""

    __slots__ = ("bits", "fields", "is_list", "item")

    def __init__(
        self, bits: int = 0, fields: dict[str, _Type] | None = None, is_list: bool = False, item: _Type | None = None
    ) -> None:
        self.bits = bits
        self.fields = fields
        self.is_list = is_list
        self.item = item


class _TooDeep(Exception):
    pass


def _type_of(value: Any, depth: int) -> _Type:
    t = type(value)
    if t is dict:
        if depth >= MAX_NESTING:
            raise _TooDeep
        return _Type(0, {k: _type_of(v, depth + 1) for k, v in value.items()})
    if t is list:
        if depth >= MAX_NESTING:
            raise _TooDeep
        item: _Type | None = None
        for v in value:
            # One array's items: objects' keys in order of first appearance,
            # at every depth (Polars' rule within an array, mostly: for
            # objects nested in the items its order varies from run to run).
            item = _merge(item, _type_of(v, depth + 1), first_seen=True)
        return _Type(0, None, True, item)
    return _Type(value_kind(value if type(value) is not Decimal else as_float(value)))


def _merge(a: _Type | None, b: _Type | None, *, first_seen: bool = False) -> _Type | None:
    """The type of values of both types (``a`` updated).  Two objects' fields
    merge as Polars merges two struct dtypes: the one with more fields gives
    the order (ties: ``a``), the other's new fields after it; with
    ``first_seen`` (items of one array, and what they hold), ``a``'s fields
    always come first."""
    if a is None:
        return b
    if b is None:
        return a
    a.bits |= b.bits
    if b.fields is not None:
        if a.fields is None:
            a.fields = b.fields
        else:
            fa, fb = a.fields, b.fields
            if not first_seen and len(fb) > len(fa):
                order = [*fb, *(k for k in fa if k not in fb)]
            else:
                order = [*fa, *(k for k in fb if k not in fa)]
            merged: dict[str, _Type] = {}
            for k in order:
                t = _merge(fa.get(k), fb.get(k), first_seen=first_seen)
                assert t is not None
                merged[k] = t
            a.fields = merged
    if b.is_list:
        a.is_list = True
        a.item = _merge(a.item, b.item, first_seen=first_seen)
    return a


# A place in the records: keys of objects, None for "an item of an array".
_Path = tuple["str | None", ...]


def _describe(path: _Path) -> str:
    """A place as the messages name it: ``items[].price`` (``[]``: any item of an array)."""
    text = ""
    for p in path:
        text += "[]" if p is None else f".{p}" if text else p
    return text or "(the record)"


def _values_at(records: Sequence[dict[str, Any]], path: _Path) -> Iterator[tuple[int, Any]]:
    """(record index, value) for every value at ``path`` (missing keys skipped)."""
    for k, r in enumerate(records):
        level: list[Any] = [r]
        for step in path:
            nxt: list[Any] = []
            for v in level:
                if step is None:
                    if type(v) is list:
                        nxt.extend(v)
                elif type(v) is dict and step in v:
                    nxt.append(v[step])
            level = nxt
        for v in level:
            yield k, v


class _Plan:
    """The frame's dtypes, with which leaves the user chose (``forced``: a
    float leaf then takes any integer, a temporal one polars' cast)."""

    def __init__(self, dtypes: dict[str, pl.DataType], forced: set[_Path]) -> None:
        self.dtypes = dtypes
        self.forced = forced


# ------------------------------------------------------------------ the reader


class RecordReader:
    """Frames of ``batch_size`` records from the array(s) of records at
    ``path`` of ``chunks`` (see the module docstring).  ``owner``: the
    FrameReader handing over: its table attributes are set as a table's
    (``scan.names``/``fields``, ``tops``, ``dtypes``), its ``on_header``
    called once the columns are known, and its ``columns`` read back then.
    ``locate``: gives the source's bytes again, to find a bad record's line."""

    def __init__(
        self,
        owner: Any,
        *,
        path: str,
        locate: Callable[[], Iterator[bytes] | None],
        first_error: ToonDecodeError,
    ) -> None:
        chunks = locate()
        if chunks is None:
            e = first_error
            raise ToonDecodeError(
                f"an array of records at prefix {path!r} cannot be read: the source cannot be read twice "
                f"(a pipe, with more than {KEEP >> 20} MiB before it); pass a path or a seekable file",
                code="not_tabular", line=e.line, column=e.column, line_text=e.line_text,
            )
        self.owner = owner
        self.locate = locate
        self.spool: IO[bytes] | None = None
        if not owner.rereadable:
            # A pipe, read once more here: its bytes kept on the way (memory, then a temporary
            # file), so that an error is named as from a file (the line of a record whose value
            # does not fit, what the reference's way meets where the engine's did not read).
            self.spool = tempfile.SpooledTemporaryFile(max_size=_SPOOL_MEMORY)  # noqa: SIM115
            rest = chunks
            chunks = _teed(chunks, self.spool)
            self.locate = lambda: self._spooled(rest)
        self.chunks = chunks
        self.first: list[dict[str, Any]] = []  # (n_rows=0: the first record, for the columns)
        self.first_error = first_error
        self.path = path
        self.limit: int | None = owner.scan.limit
        self.options = dict(owner.options)
        self.plan: _Plan | None = None
        self.columns: list[str] = []  # the output columns, in order
        self.window = 0  # records the schema came from
        self.done = 0  # records typed so far
        self.adapter: _Records | None = None

    # -- the records, in batches

    def _spooled(self, rest: Iterator[bytes]) -> Iterator[bytes]:
        """A pipe's bytes from the start: those kept, then the rest (not kept: the
        reads that ask for them end the read)."""
        assert self.spool is not None
        self.spool.flush()
        self.spool.seek(0)
        return chain(iter(partial(self.spool.read, 1 << 20), b""), rest)

    def _batches(self) -> Iterator[list[dict[str, Any]]]:
        # (a Decimal type with a scale takes the numbers' exact digits, a String leaf the number
        # written: every non-integer is a Decimal, typed as its float (_type_of) and made one in
        # the other leaves (_leaf))
        options = {**self.options, "parse_float": Decimal}
        feeds = self._native_feeds(options)
        if feeds is None:
            feeds = self._reference_feeds(options)
        size = self.owner.batch_size
        left = self.limit
        batch: list[dict[str, Any]] = []
        if left == 0:
            # As a table's header with a limit of 0: the first record gives the columns, and
            # an error before it is raised, as with a limit of 1.
            for records in feeds:
                if records:
                    self.first = records[:1]
                    break
            return

        def take(records: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
            nonlocal batch, left
            if left is not None:
                records = records[:left]
                left -= len(records)
            while records:
                room = size - len(batch)
                batch.extend(records[:room])
                records = records[room:]
                if len(batch) == size:
                    yield batch
                    batch = []

        try:
            for records in feeds:
                yield from take(records)
                if left is not None and left <= 0:
                    break
        except ToonDecodeError:
            # The records before the bad line first (a bad value among them
            # comes earlier in the document); the error after them.
            if batch:
                yield batch
            raise
        assert self.adapter is not None
        if not self.adapter.found and (left is None or left > 0):
            e = self.first_error  # (nothing at the path: where the table reader said so)
            raise ToonDecodeError(
                f"no tabular array, keyed table or array of records at path {self.path!r}",
                code="not_tabular", line=e.line, column=e.column, line_text=e.line_text,
            )
        if batch:
            yield batch

    def _reference_feeds(self, options: dict[str, Any], chunks: Iterator[bytes] | None = None) -> Iterator[list[dict[str, Any]]]:
        """The records of each feed of ``chunks`` (the source's) by the reference's
        decoder and :class:`_Records`: then an error (the decoder's, or an item that is
        no record) names its line; on one, the records before it come first."""
        decoder = driver_decoder(True, dict(options), line_marks=True)
        adapter = self.adapter = _Records(self.path, decoder)

        def records(events: list[Any]) -> Iterator[list[dict[str, Any]]]:
            yield adapter.push_lines(events)
            if adapter.error is not None:
                raise adapter.error

        try:
            for chunk in self.chunks if chunks is None else chunks:
                for at in range(0, len(chunk), _FEED):
                    yield from records(decoder.feed(chunk[at : at + _FEED]))
            yield from records(decoder.flush())
            yield from records(decoder.close())
        except ToonDecodeError:
            if adapter.error is None:  # (the decoder's: the records of the lines before it first)
                yield from records(decoder.events_before_error())
            raise

    def _native_feeds(self, options: dict[str, Any]) -> Iterator[list[dict[str, Any]]] | None:
        """The records of each feed built by the engine's ``items`` decoder (at
        ``path + ".item"``), or None where the reference's way must read them: no
        such decoder or an option it does not take, or several values at the
        path (an ``item`` in it, or repeated keys in non-strict mode: one of
        them may not be an array, which is an error).  On an error, and with no
        record at all (an empty array, none at the path, or a value there that
        is no array), the reference reads what was read again and says what it
        meets first: from the source, or (a pipe, read once) from a spool of
        it kept on the way (memory, then a temporary file)."""
        from . import _engine
        from .decoder import engine_options, native_push

        make = _engine.current().items_decoder
        if make is None or not options.get("strict", True) or "." in self.path or self.path == "item":
            return None
        native_options = engine_options(self.chunks, True, dict(options))
        native = None if native_options is None else native_push(
            make, f"{self.path}.item" if self.path else "item", kv=False, array_items=True, **native_options
        )
        if native is None:
            return None
        self.adapter = _Records(self.path)
        self.adapter.found = 1
        chunks = self.chunks

        def again() -> Iterator[bytes]:
            """The input from its start (a pipe's: see ``spool``)."""
            chunks = self.locate()
            if chunks is None:  # (not met: a pipe is spooled)
                raise ToonDecodeError("the source cannot be read again", code="not_tabular", line=1, column=1, line_text="")
            return chunks

        def ambiguous() -> bool:  # (the engine's flag: see ItemsDecoder(array_items=True))
            return bool(getattr(native, "ambiguous", False))

        def native_records() -> Iterator[list[dict[str, Any]]]:
            try:
                for chunk in chunks:
                    yield from self._records_only(native.feed(chunk))
                    if ambiguous():
                        return
                while out := native.close():  # (the outputs before an error, then the error)
                    yield from self._records_only(out)
            except ToonDecodeError as e:
                # (the records before it are given; the error is the one the reference's
                # way names, in its order: an item that is no record, which it finds as
                # soon as the item ends, comes before the decoder's error that ends it)
                raise self._reference_error(e, options, again()) from None

        def feeds() -> Iterator[list[dict[str, Any]]]:
            n = 0
            for records in native_records():
                n += len(records)
                yield records
            if ambiguous():
                # A value at the records' prefix that is an object's member (a key "item",
                # or one with dots, say): what the reference's way makes of the input (an
                # error, or nothing), after the n records given.
                yield from _skipped(self._reference_feeds(options, again()), n)
            elif not n:
                # (an empty array, none at the path, or no array there: the reference says)
                yield from self._reference_feeds(options, again())

        return feeds()

    def _records_only(self, out: list[Any]) -> Iterator[list[dict[str, Any]]]:
        """``out``, unless an item in it is no record (an object): then the
        records before it, and that item's error (ToonDecodeError)."""
        if all(type(r) is dict for r in out):
            yield out
            return
        k = next(k for k, r in enumerate(out) if type(r) is not dict)
        yield out[:k]
        assert self.adapter is not None
        raise self.adapter._item_error(out[k])

    def _reference_error(self, found: ToonDecodeError, options: dict[str, Any], chunks: Iterator[bytes]) -> ToonDecodeError:
        """The first error the reference's way meets reading ``chunks`` (the input
        again: its code, message and line), or ``found`` where it meets none (not
        met: the engines agree on the errors)."""
        try:
            for _ in self._reference_feeds(options, chunks):
                pass
        except ToonDecodeError as e:
            return e
        return found

    def __iter__(self) -> Iterator[pl.DataFrame]:
        try:
            yield from self._frames()
        finally:
            if self.spool is not None:
                self.spool.close()

    def _frames(self) -> Iterator[pl.DataFrame]:
        owner = self.owner
        infer = owner.infer
        held: list[list[dict[str, Any]]] = []
        seen = 0
        batches = self._batches()
        try:
            for batch in batches:
                if self.plan is None:
                    held.append(batch)
                    seen += len(batch)
                    if infer is not None and seen > infer:
                        self._decide(self._window(held), complete=False)
                    if self.plan is None:
                        continue
                    for b in held:
                        yield self._typed(b)
                    held = []
                    continue
                yield self._typed(batch)
        except ToonDecodeError:
            if held and self.plan is None:
                self._decide(self._window(held), complete=False)
                for b in held:
                    yield self._typed(b)
            raise
        if self.plan is None:
            self._decide(self._window(held), complete=not owner.more_sources)
            for b in held:
                yield self._typed(b)
            if not held:
                yield self._empty()

    # -- the schema

    def _window(self, held: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
        """The records the schema comes from (with infer_schema_length=0, the
        first one, for its column names only)."""
        infer = self.owner.infer
        records = [r for b in held for r in b] or self.first
        return records[: 1 if infer == 0 else infer]

    def _decide(self, records: list[dict[str, Any]], *, complete: bool) -> None:
        owner = self.owner
        self.window = 0 if owner.infer == 0 else len(records)
        owner.inferred_from = self.window  # (what a later source's messages quote)
        forced: set[_Path] = set()
        if owner.schema is not None:
            dtypes = {n: _dtype(d) for n, d in owner.schema.items()}
            forced = {(n,) for n in dtypes}
        else:
            top: _Type | None = None
            for k, r in enumerate(records):
                try:
                    top = _merge(top, _type_of(r, 0))
                except _TooDeep:
                    raise self._error(
                        k, (), f"record {k} is nested deeper than {MAX_NESTING} levels, too deep for a frame's dtype",
                        "max_depth",
                    ) from None
            fields = dict(top.fields) if top is not None and top.fields is not None else {}
            if owner.inferred_here:
                # (a scan's probe read more of these records: the keys it
                # found are columns, null in the records read now)
                for n in owner.inferred:
                    fields.setdefault(n, _Type())
            # An earlier read's dtypes (the first source's, a scan's probe)
            # hold for the columns they name; the others are inferred.
            # (An override of a whole column stands for its inference, which
            # may have found no dtype for it.)
            known = {**owner.inferred, **{n: d for n, d in owner.overrides.items() if not isinstance(d, pl.Struct)}}
            dtypes = {
                n: _dtype(known[n])
                if n in known
                else pl.String()
                if owner.infer == 0
                else self._resolve(t, (n,), records, complete)
                for n, t in fields.items()
            }
        plan = _Plan(dtypes, forced)
        if owner.schema is None:
            self._override(plan)
        self.plan = plan
        names = list(dtypes)
        # The owner looks like a table reader whose header had these columns.
        scan = owner.scan
        scan.names = names
        scan.fields = tuple(Field(n) for n in names)
        scan.keyed = False
        if owner.on_header is not None:
            owner.on_header(owner)
        if owner.columns is not None:
            missing = [c for c in owner.columns if c not in dtypes]
            if missing:
                raise pl.exceptions.ColumnNotFoundError(f"column(s) {missing} not found; the records have {names}")
            self.columns = list(owner.columns)
        else:
            self.columns = names
        owner.tops = [(n, None) for n in self.columns]
        owner.leaf_names = list(self.columns)
        owner.dtypes = [dtypes[n] for n in self.columns]

    def _resolve(self, t: _Type, path: _Path, records: list[dict[str, Any]], complete: bool) -> pl.DataType:
        """The dtype of the values at ``path`` (recursive, as deep as the
        records: at most MAX_NESTING)."""
        containers = t.fields is not None or t.is_list
        if containers:
            if t.bits & K_STR:
                return pl.String()  # objects and arrays as JSON text (as Polars)
            clash = t.bits & ~K_NULL
            if clash or (t.fields is not None and t.is_list):
                kinds = [kind_name(clash)] if clash else []
                if t.fields is not None:
                    kinds.append("an object")
                if t.is_list:
                    kinds.append("an array")

                def odd(v: Any) -> bool:
                    return v is not None and (type(v) is not dict if t.fields is not None else type(v) is not list)

                k = next((k for k, v in _values_at(records, path) if odd(v)), 0)
                raise self._error(
                    k, path, f"{_describe(path)!r} holds {' and '.join(kinds)} in the first {len(records)} records: "
                    "no one dtype takes both (pass schema_overrides, e.g. pl.String)", "type_mismatch",
                )
            if t.fields is not None:
                return pl.Struct(
                    [pl.Field(n, self._resolve(f, (*path, n), records, complete)) for n, f in t.fields.items()]
                )
            if t.item is None:
                return pl.List(infer_dtype(0, complete=complete))
            return pl.List(self._resolve(t.item, (*path, None), records, complete))
        dtype = infer_dtype(t.bits, complete=complete)
        if self.owner.try_parse_dates and t.bits & ~K_NULL == K_STR:
            values = [v for _, v in _values_at(records, path)]
            dtype = iso_dtype(pl.Series("s", values, dtype=pl.String)) or dtype
        return dtype

    def _override(self, plan: _Plan) -> None:
        """schema_overrides: a top-level column's dtype (a Struct's fields
        give its fields' dtypes, as for tables), or ``"group.field"`` for a
        struct column's field; names of no column are ignored."""
        for name, dtype in self.owner.overrides.items():
            for rel, leaf in _dtype_leaves(dtype):
                if name in plan.dtypes:
                    path: tuple[str, ...] = (name, *rel)
                else:
                    parts = ".".join((name, *rel)).split(".")
                    path = tuple(parts)
                if path[0] in plan.dtypes and _replace(plan, path, _dtype(leaf)):
                    plan.forced.add(path)

    # -- building a batch

    def _typed(self, records: list[dict[str, Any]]) -> pl.DataFrame:
        plan = self.plan
        assert plan is not None
        start = self.done
        self.done += len(records)
        known = plan.dtypes.keys()
        bad = next((k for k, r in enumerate(records) if not known >= r.keys()), None)
        if bad is not None:
            key = next(k for k in records[bad] if k not in plan.dtypes)
            raise self._error(
                start + bad, (key,),
                f"record {start + bad} has key {key!r}, which is not a column ({self._how()}; columns: {list(plan.dtypes)})",
                "unexpected_fields",
            )
        series = []
        for name in self.columns:
            values = list(map(dict.get, records, repeat(name)))
            arr = self._build(values, plan.dtypes[name], (name,), lambda i: i, start)
            series.append(pl.from_arrow(arr).alias(name))  # type: ignore[union-attr]
        if not series:  # (records with no keys: no column, but their rows, as read_ndjson gives them)
            return pl.DataFrame(height=len(records))
        return _frame(series)

    def _forced(self, path: _Path) -> bool:
        """Whether the user chose the dtype at ``path`` (or at a place above it)."""
        plan = self.plan
        return plan is not None and any(path[:i] in plan.forced for i in range(1, len(path) + 1))

    def _how(self, path: _Path = ()) -> str:
        """Where the dtype at ``path`` came from, and the fix (error messages)."""
        owner = self.owner
        if owner.schema is not None:
            return "the schema's"
        if path and self._forced(path):  # (with no schema, only schema_overrides forces one)
            return "the dtype given in schema_overrides"
        how = f"inferred from the first {self.window} records"
        if path and path[0] in owner.inferred and path[0] not in owner.overrides:
            how = owner.inferred_how  # (an earlier read's: the first source's, a scan's probe)
        return f"the schema was {how}; {SCHEMA_HINT}"

    def _build(self, values: list[Any], dtype: pl.DataType, path: _Path, record: Callable[[int], int], start: int) -> pa.Array:
        """``values`` (those at ``path`` of a batch; ``record(i)``: the record
        value i belongs to) as an Arrow array of ``dtype``."""
        pa = _pyarrow()
        if isinstance(dtype, pl.Struct):
            odd = next((i for i, v in enumerate(values) if v is not None and type(v) is not dict), None)
            if odd is not None:
                raise self._misfit(values[odd], dtype, path, start + record(odd))
            names = [f.name for f in dtype.fields]
            allowed = set(names)
            extra = next((i for i, v in enumerate(values) if v is not None and not allowed.issuperset(v)), None)
            if extra is not None:
                key = next(k for k in values[extra] if k not in allowed)
                raise self._error(
                    start + record(extra), (*path, key),
                    f"record {start + record(extra)}: {_describe(path)!r} has key {key!r}, which is not a field of "
                    f"its type {dtype} ({self._how(path)})", "unexpected_fields",
                )
            mask = [v is None for v in values]
            if not names:
                return pa.array([None if m else {} for m in mask], type=pa.struct([]))
            objects = values if not any(mask) else [{} if v is None else v for v in values]
            children = [
                self._build(list(map(dict.get, objects, repeat(f.name))), _dtype(f.dtype), (*path, f.name), record, start)
                for f in dtype.fields
            ]
            return pa.StructArray.from_arrays(
                children,
                fields=[pa.field(n, c.type) for n, c in zip(names, children)],
                mask=pa.array(mask) if any(mask) else None,
            )
        if isinstance(dtype, pl.Array):
            # A list of its width (a fixed-size list in Arrow): built as a List, then cast
            wrong = next((i for i, v in enumerate(values) if type(v) is list and len(v) != dtype.size), None)
            if wrong is not None:
                raise self._error(
                    start + record(wrong), path,
                    f"record {start + record(wrong)}: {_describe(path)!r} holds an array of {len(values[wrong])} "
                    f"items, which does not fit its type {dtype} ({self._how(path)})", "type_mismatch",
                )
            listed = self._build(values, pl.List(dtype.inner), path, record, start)
            return listed.cast(pa.list_(listed.type.value_type, dtype.size))
        if isinstance(dtype, pl.List):
            odd = next((i for i, v in enumerate(values) if v is not None and type(v) is not list), None)
            if odd is not None:
                raise self._misfit(values[odd], dtype, path, start + record(odd))
            mask = [v is None for v in values]
            arrays = values if not any(mask) else [[] if v is None else v for v in values]
            offsets = [0, *accumulate(map(len, arrays))]
            flat = list(chain.from_iterable(arrays))

            def owner_of(j: int) -> int:
                return record(bisect_right(offsets, j) - 1)

            child = self._build(flat, _dtype(dtype.inner), (*path, None), owner_of, start)
            return pa.LargeListArray.from_arrays(
                pa.array(offsets, pa.int64()), child, mask=pa.array(mask) if any(mask) else None
            )
        return self._leaf(values, dtype, path, record, start)

    def _leaf(self, values: list[Any], dtype: pl.DataType, path: _Path, record: Callable[[int], int], start: int) -> pa.Array:
        base = base_dtype(dtype)
        forced = self._forced(path)
        types = set(map(type, values))
        if Decimal in types and base != pl.String:  # (a String base: text, exact; a scaled Decimal's too)
            values = [as_float(v) if type(v) is Decimal else v for v in values]
            types = set(map(type, values))
        if types & {dict, list}:
            if base != pl.String:
                i = next(i for i, v in enumerate(values) if type(v) in _CONTAINERS)
                raise self._misfit(values[i], dtype, path, start + record(i))
            # objects and arrays in a String column: their JSON text (as Polars), numbers exact
            values = [value_json(v) if type(v) in _CONTAINERS else v for v in values]
        s = None if is_scaled_decimal(dtype) else _plain(values, types, base)  # (that one takes numbers only)
        if s is None:
            bits = values_kinds(values)
            bad = bits & ~allowed_kinds(dtype, forced)
            if bad:
                i = next(i for i, v in enumerate(values) if value_kind(v) & bad)
                raise self._misfit(values[i], dtype, path, start + record(i))
            s = convert_values("", values, base)
        if base != dtype:
            s = self._cast(s, dtype, forced, path, record, start)
        return s.to_arrow(compat_level=_OLDEST)

    def _cast(
        self, s: pl.Series, dtype: pl.DataType, forced: bool, path: _Path, record: Callable[[int], int], start: int
    ) -> pl.Series:
        """As the flat tables cast: an inferred date/datetime takes its ISO
        forms only; a user's dtype what polars' cast takes."""
        if not forced and s.dtype == pl.String and dtype.is_temporal():
            out = pl.DataFrame({"s": s}).select(iso_expr(pl.col("s"), dtype)).to_series()
        else:
            try:
                return _cast(s, dtype, strict=True)
            except Exception:
                try:
                    out = _cast(s, dtype, strict=False)
                except Exception as e:  # (a dtype these values never convert to, e.g. pl.Array)
                    raise self._error(
                        start + record(0), path, f"{_describe(path)!r} does not convert to {dtype}: {e}", "type_mismatch"
                    ) from None
        lost = (out.is_null() & s.is_not_null()).arg_true()
        if not len(lost):
            return out
        i = int(lost[0])
        raise self._error(
            start + record(i), path,
            f"record {start + record(i)}: {_describe(path)!r} holds {s[i]!r}, which does not convert to {dtype}"
            + ("" if forced else f" ({self._how(path)})"),
            "type_mismatch",
        )

    def _misfit(self, value: Any, dtype: pl.DataType, path: _Path, k: int) -> ToonDecodeError:
        t = type(value)
        what = "an object" if t is dict else "an array" if t is list else kind_name(value_kind(value))
        return self._error(
            k,
            path,
            f"record {k}: {_describe(path)!r} holds {what}, which does not fit its type {dtype} ({self._how(path)})",
            "type_mismatch",
        )

    def _empty(self) -> pl.DataFrame:
        plan = self.plan
        assert plan is not None
        return _frame([pl.Series(n, [], dtype=plan.dtypes[n]) for n in self.columns])

    # -- where a record stands

    def _error(self, k: int, path: _Path, message: str, code: str) -> ToonDecodeError:
        """The error at record ``k``'s line (the line of the key at ``path``
        in it, as far as objects go), found by reading the source again up
        to it; without a second read, the line where the read stands."""
        found = self._find(k, path)
        if found is None:
            line = self.adapter.line if self.adapter is not None else 0
            return ToonDecodeError(message, code=code, line=max(line, 1), column=1, line_text="")
        line, column, text = found
        return ToonDecodeError(message, code=code, line=line, column=column, line_text=text)

    def _find(self, k: int, path: _Path) -> tuple[int, int, str] | None:
        try:
            chunks = self.locate()
        except OSError:
            return None
        if chunks is None or self.adapter is None:
            return None
        options = dict(self.options)
        options.pop("parse_float", None)
        decoder = Decoder(**options)
        finder = _Finder(self.adapter.path, k, _keys_to_list(path))
        number = 0
        tail = b""
        try:
            for chunk in chunks:
                lines = (tail + chunk).split(b"\n")
                tail = lines.pop()
                for raw in lines:
                    number += 1
                    if finder.push(decoder.feed(raw + b"\n"), number, raw):
                        return finder.result()
            if tail:
                number += 1
                finder.push(decoder.feed(tail), number, tail)
            finder.push(decoder.close(), number, tail)
        except ToonDecodeError:
            pass
        return finder.result() if finder.started else None


# Integers a float holds exactly and int64 holds (value_kind: K_INT, not wide).
_SMALL = 10**15


def _plain(values: list[Any], types: set[type], base: pl.DataType) -> pl.Series | None:
    """The common columns' Series at once, where values_kinds and
    convert_values would find every value fits as it is (strings in a String
    column, floats in a Float64 one, small integers in an Int64 or Float64
    one, booleans); None: the general way."""
    kinds = types - {_NONE}
    if not kinds:
        return None
    if base == pl.String and kinds == {str}:
        return pl.Series("", values, dtype=pl.String)
    if base == pl.Boolean and kinds == {bool}:
        return pl.Series("", values, dtype=pl.Boolean)
    if base == pl.Float64 and kinds == {float}:
        return pl.Series("", values, dtype=pl.Float64)
    if kinds == {int} and (base == pl.Int64 or base == pl.Float64):
        ints = values if _NONE not in types else [v for v in values if v is not None]
        if -_SMALL < min(ints) and max(ints) < _SMALL:
            return pl.Series("", values, dtype=base)
    return None


def _keys_to_list(path: _Path) -> list[str]:
    """The keys of ``path`` down to its first array (the finder follows objects only)."""
    out: list[str] = []
    for p in path:
        if p is None:
            break
        out.append(p)
    return out


class _Finder:
    """Events of a line-by-line read, to find the line of record ``k`` of the
    arrays at ``path`` (and of the key ``keys`` lead to in it)."""

    def __init__(self, path: str, k: int, keys: list[str]) -> None:
        self.records = _Records(path)
        self.k = k
        self.keys = keys
        self.started = False
        self.depth = 0  # inside record k
        self.matched = 0
        self.at: tuple[int, int, str] | None = None

    def push(self, events: list[Any], number: int, raw: bytes) -> bool:
        """True once nothing more can be learnt."""
        text = raw.rstrip(b"\r").decode("utf-8", "replace")
        indent = len(text) - len(text.lstrip(" "))
        if not self.started:
            # Feed the counting adapter up to the event that starts record k.
            records = self.records
            for j, ev in enumerate(events):
                if type(ev) is StartObject and records.inside and records.builder is None and records.count == self.k:
                    self.started = True
                    self.at = (number, indent + 1, text)
                    if not self.keys:
                        return True
                    events = events[j + 1 :]
                    self.depth = 1
                    break
                records.push([ev])
            else:
                return False
        for ev in events:
            t = type(ev)
            if (
                t is Key
                and self.depth == self.matched + 1
                and self.matched < len(self.keys)
                and ev.key == self.keys[self.matched]
            ):
                self.matched += 1
                col = text.find(ev.key, indent)
                self.at = (number, (col if col >= 0 else indent) + 1, text)
                if self.matched == len(self.keys):
                    return True
            elif t is StartObject or t is StartArray or t is StartTable:
                self.depth += 1
            elif t is EndObject or t is EndArray or t is EndTable:
                self.depth -= 1
                if self.depth <= 0:
                    return True
        return False

    def result(self) -> tuple[int, int, str] | None:
        return self.at


def _dtype(d: Any) -> pl.DataType:
    """A dtype given as a class (``pl.Int64``) or an instance."""
    return d if isinstance(d, pl.DataType) else d()


def _replace(plan: _Plan, path: tuple[str, ...], dtype: pl.DataType) -> bool:
    """Set the dtype at ``path`` (through struct fields); False if no such place."""
    top = plan.dtypes.get(path[0])
    if top is None:
        return False
    if len(path) == 1:
        plan.dtypes[path[0]] = dtype
        return True

    def put(d: pl.DataType, rest: tuple[str, ...]) -> pl.DataType | None:
        if not isinstance(d, pl.Struct):
            return None
        fields = list(d.fields)
        for i, f in enumerate(fields):
            if f.name == rest[0]:
                new = dtype if len(rest) == 1 else put(_dtype(f.dtype), rest[1:])
                if new is None:
                    return None
                fields[i] = pl.Field(f.name, new)
                return pl.Struct(fields)
        return None

    new = put(top, path[1:])
    if new is None:
        return False
    plan.dtypes[path[0]] = new
    return True

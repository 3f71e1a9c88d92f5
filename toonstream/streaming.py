"""Streaming encoders: JSONL, record iterables and ijson events to TOON, in
bounded memory.

TOON writes ``[N]`` and a table's field list before the rows, so every
streamed array is handled in two passes:

1. read the elements one at a time, counting them and keeping a small
   ``_ArrayPlan`` (all primitives? tabular, and with which fields?), while the
   elements go to a spool (or, for a seekable file, nowhere: it is re-read);
2. write the header the plan dictates, then the elements again, one at a time.

For a flat table (the common JSONL case), pass one already formats the rows
into a spool of finished lines, a batch at a time, so pass two only copies
that spool (the elements are not read again).

Only one element is in memory at a time, so peak memory is bounded by the
largest element, not the input.  The output is byte-identical to ``dumps`` of
the same data: the plan's decisions are exactly ``dumps``' decisions (both
ask ``_reference/shape.py``'s ``ShapePlan``), and each element is written by the same ``Walk`` code.

Which arrays stream: the root array, and the array-valued members of a root
object (``{"meta": {...}, "items": [...huge...]}``).  Anything deeper is part
of one element (or one root member) and is materialized with it.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import pickle
import re
import shutil
import tempfile
from bisect import bisect_right
from decimal import Decimal
from itertools import accumulate, islice, repeat
from operator import itemgetter
from typing import IO, Any, Callable, Generator, Iterable, Iterator, TypeAlias, Union, cast

from . import _engine, _parallel
from ._reference.columns import format_columns
from ._errors import ToonEncodeError
from ._reference.normalize import PRIMITIVE, key_contents, put_key
from ._reference.numbers import exponent_in_range
from ._reference.writer import Fields, LineSink, header, key_text, table_header
from ._reference.shape import UnionShape
from .encoder import DEFAULT_MAX_DEPTH, ROW_BATCH, Default, Walk, check_spool_memory, sorted_keys

__all__ = ["Encoder", "encode_events", "encode_jsonl", "encode_records"]

#: In-memory part of a spool before it moves to a temporary file.
DEFAULT_SPOOL_MEMORY = 8 * 1024 * 1024

LinesSource = Union[IO[bytes], IO[str], Iterable[Union[bytes, str]], "os.PathLike[str]"]

#: The text (characters of TOON, or bytes of pickle) a batch of elements aims at.
BATCH_TEXT = 1 << 20
#: Elements in a first batch, before their size is known.
FIRST_BATCH = 4


class BatchSize:
    """How many elements the next batch takes: ROW_BATCH, or fewer when
    the elements are big, so a batch's text comes to about BATCH_TEXT.

    The streaming encoders hold a batch of elements at a time (formatted
    column-wise, spooled in one pickle); counted in elements alone, a batch
    of 1 MB elements would hold a GB.  An element's size is only known once
    it is written, so each batch is sized from the ones before it: memory
    stays flat while the elements keep about the same size (a batch that
    follows much smaller elements may still be big, once).

    >>> size = BatchSize()
    >>> size.n
    4
    >>> size.took(4, 4 << 20)  # 1 MiB each: one at a time
    >>> size.n
    1
    >>> size.took(1, 100)  # small ones: ROW_BATCH
    >>> size.n
    1024
    """

    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = FIRST_BATCH

    def took(self, count: int, size: int) -> None:
        """A batch of ``count`` elements came to ``size`` characters (or bytes)."""
        if count > 0 and size > 0:
            self.n = max(1, min(ROW_BATCH, BATCH_TEXT * count // size))


class _ArrayPlan:
    """Pass-one summary of an array: length, all-primitive, tabular shape.

    While the array still looks tabular, each element's row line is also
    written ahead into a text spool: if the array ends up tabular (the common
    case), pass two copies that text instead of reading and formatting every
    element again.  The first element that breaks the shape drops the spool.
    """

    __slots__ = (
        "walk", "n", "primitive", "fields", "tabular", "keyset", "rows", "_pending", "union",
        "_names", "_columns", "_kinds", "_waiting", "_rows_spool", "unencodable", "batch",
    )

    def __init__(
        self, walk: Walk, spool_memory: int = DEFAULT_SPOOL_MEMORY, rows_spool: Callable[[], IO[bytes]] | None = None
    ) -> None:
        self.walk = walk
        check_spool_memory(spool_memory)
        # Where row lines go (a forked worker passes its output file)
        self._rows_spool = rows_spool or (lambda: tempfile.SpooledTemporaryFile(max_size=spool_memory))
        self.n = 0
        self.primitive = True
        self.fields: Fields | None = None
        self.tabular = True
        self.keyset: frozenset[str] | None = None  # set when the shape is flat
        self.rows: Any = None  # spool of "\n<row lines>" pieces, UTF-8
        # Elements waiting to be formatted as one column-wise batch (``batch.n`` or so):
        # for a flat shape their cells, one list per field (``_columns``), else the elements.
        self._pending: list[Any] = []
        self._names: tuple[str, ...] | None = None  # the fields, when the shape is flat
        self._columns: list[list[Any]] = []
        # The types in each of ``_columns`` when all its cells came in batches
        # (``add_batch`` finds them anyway), else None.
        self._kinds: list[set[type]] | None = None
        self._waiting = 0  # elements in _pending or _columns
        self.batch = BatchSize()  # (from the size of the rows written so far)
        # missing_as_null: the union-of-keys shape, for when the exact one fails
        self.union = UnionShape(walk.shape, 1) if walk.missing_as_null else None
        self.unencodable = False  # a row failed to format (see flush_rows)

    def add(self, value: Any) -> None:
        """Account for one element (already normalized to the JSON model)."""
        if self.n == 0:
            # (the array is at level 1 of its walk: a keyed walk's max_depth is one lower)
            try:
                self.fields = self.walk.shape.uniform_fields([value], 1) if type(value) is dict else None
            except ToonEncodeError as e:
                # (its path starts at the one-element list's index 0: the caller puts the element's)
                if e.path[:1] == (0,):
                    e.path = e.path[1:]
                raise
            self.tabular = self.fields is not None
            if self.fields is not None:
                if all(sub is None for _, sub in self.fields):
                    self.keyset = frozenset(value)
                    self._names = tuple(name for name, _ in self.fields)
                    self._columns = [[] for _ in self._names]
                    self._kinds = [set() for _ in self._names]
                self.rows = self._rows_spool()
        elif self.tabular:
            assert self.fields is not None
            keyset = self.keyset
            if not (
                keyset is not None
                and type(value) is dict
                and value.keys() == keyset
                and all(map(_PRIMITIVE_TYPES.__contains__, map(type, value.values())))
            ):
                self.tabular = self.walk.shape.conforms(value, self.fields)
                if not self.tabular:
                    self.drop_rows()
        if self.union is not None:
            self.union.add(value)
        if self.rows is not None:
            if self._names is not None:
                for column, name in zip(self._columns, self._names):
                    column.append(value[name])
                self._kinds = None
            else:
                self._pending.append(value)
            self._waiting += 1
        if self.primitive and type(value) not in PRIMITIVE:
            self.primitive = False
        self.n += 1

    def add_batch(self, values: list[Any]) -> None:
        """Account for a batch of elements parsed from JSON text (so already in
        the JSON model).

        The common case (a flat table that goes on) is checked with C-level
        passes over the batch (the kinds of each column, which the formatting
        uses too); anything else goes element by element.
        """
        names = self._names
        columns = None
        if (
            names is not None
            and self.tabular
            and self.rows is not None
            and self.union is None
            and set(map(type, values)) == {dict}
            and set(map(len, values)) == {len(names)}
        ):
            try:  # same size and every field present: the same keys
                columns = [list(map(itemgetter(name), values)) for name in names]
            except KeyError:
                pass
            else:
                kinds = [set(map(type, column)) for column in columns]
                for k in kinds:
                    if not k <= _PRIMITIVE_TYPES:  # a nested value: element by element
                        columns = None
                        break
        if columns is not None:
            for column, more in zip(self._columns, columns):
                column += more
            if self._kinds is not None:
                for known, k in zip(self._kinds, kinds):
                    known |= k
            self.n += len(values)
            self._waiting += len(values)
        else:
            for value in values:
                try:
                    self.add(value)
                except ToonEncodeError as e:
                    e.path = (self.n,) + e.path
                    raise
        self.maybe_flush()

    def add_rows(self, values: list[Any]) -> bool:
        """Account for a batch of elements as rows of the flat table, formatted
        by the engine's ``table_rows`` (records already normalized, or exact
        dicts); False, with nothing done, where that does not apply (not a
        flat table with its rows spooled, ``missing_as_null``'s union to
        track, no such capability) or the engine declines the batch: then
        the caller adds the elements one by one."""
        make = _engine.current().table_rows
        if make is None or self._names is None or not self.tabular or self.union is not None or self.n == 0:
            return False
        self.flush_rows()  # (the rows before these, in order)
        if self.rows is None:
            return False
        walk = self.walk
        text = make(values, self._names, indent_size=len(walk.unit), delimiter=walk.d, max_depth=walk.max_depth)
        if text is NotImplemented:
            return False
        self.rows.write(text.encode())
        self.batch.took(len(values), len(text))
        self.n += len(values)
        return True

    @property
    def settled(self) -> bool:
        """No later element can change how the array is written: list items
        (§9.4), with no table of the union of keys to look for."""
        return self.n > 0 and not self.tabular and not self.primitive and self.union is None

    def add_count(self, n: int) -> None:
        """Account for ``n`` more elements of a ``settled`` array (what ``add``
        does for each of them then)."""
        assert self.settled
        self.n += n

    def maybe_flush(self) -> None:
        if self._waiting >= self.batch.n:
            self.flush_rows()

    def union_fields(self) -> Fields | None:
        """The missing_as_null table shape, when the exact one does not hold."""
        if self.tabular or self.primitive or self.union is None:
            return None
        return self.union.fields(self.n)

    def disqualify(self) -> None:
        """An element that is itself streamed (not materialized) cannot be a row."""
        self.tabular = False
        self.primitive = False
        self.union = None
        self.drop_rows()
        if self.n == 0:
            self.fields = None
        self.n += 1

    def flush_rows(self) -> None:
        """Format the pending elements into the row spool (column-wise).

        A value that cannot be encoded is not reported here: the spool is
        dropped and ``unencodable`` set, and the array is written by pass two,
        which raises the error exactly as ``dumps`` does (its path depends on
        the final shape, which later elements may still change), and only
        after every element was read (so a malformed JSON line anywhere is
        reported first, whatever the batching)."""
        pending, columns, kinds, waiting = self._pending, self._columns, self._kinds, self._waiting
        self._pending, self._waiting = [], 0
        self._columns = [[] for _ in columns]
        self._kinds = [set() for _ in columns]
        if self.rows is not None and waiting:
            assert self.fields is not None
            try:
                if self._names is not None:
                    text = format_columns(columns, self.walk.d, self.walk.prim, self.walk.unit, kinds, lead=True)
                    self.rows.write(text.encode())
                    size = len(text)
                else:
                    size = 0
                    for chunk in self.walk.rows_text(pending, self.fields, 1):
                        self.rows.write(("\n" + chunk).encode())
                        size += len(chunk)
                self.batch.took(waiting, size)
            except ToonEncodeError:
                self.unencodable = True
                self.drop_rows()

    def drop_rows(self) -> None:
        self._pending, self._waiting = [], 0
        self._columns = [[] for _ in self._columns]
        self._kinds = [set() for _ in self._columns]
        if self.rows is not None:
            self.rows.close()
            self.rows = None

    @property
    def rows_ready(self) -> bool:
        """Pass one wrote every row already (tabular, rows at depth 1)."""
        return self.tabular and self.rows is not None


_PRIMITIVE_TYPES = PRIMITIVE


def _write_array(sink: LineSink, walk: Walk, head: str, plan: _ArrayPlan, elements: Iterable[Any], depth: int) -> None:
    """Pass two for a non-empty array: header, then the elements (as ``Walk._array`` would).

    With ``plan.rows_ready`` the rows are copied from the plan's spool and
    ``elements`` is not read at all.
    """
    d = walk.d
    if plan.primitive:  # §9.1 inline; one long line, written a cell at a time
        prim = walk.prim
        i = 0
        try:
            for e in elements:
                if i:
                    sink.part(d + prim(walk.norm(e)))
                else:
                    sink.line(f"{header(head, plan.n, d)} {prim(walk.norm(e))}")
                i += 1
        except ToonEncodeError as err:
            err.path = (i,) + err.path
            raise
        return
    if plan.tabular:  # §9.3
        assert plan.fields is not None
        sink.line(table_header(head, plan.n, d, plan.fields))
        if plan.rows_ready and depth == 0:
            plan.flush_rows()
            spool = plan.rows
            spool.seek(0)
            sink.copy(spool)
            plan.drop_rows()
            return
        _write_all_rows(sink, walk, elements, plan.fields, depth + 1, lenient=False)
        return
    union = plan.union_fields()
    if union is not None:  # opt-in missing_as_null table
        sink.line(table_header(head, plan.n, d, union, lambda: map(walk.norm, elements)))
        _write_all_rows(sink, walk, elements, union, depth + 1, lenient=True)
        return
    sink.line(header(head, plan.n, d))  # §9.4
    i = 0
    # (JSON Lines at the root: each block of lines written by the engine from
    # its bytes, no values made; a block it declines comes as its values)
    size = BatchSize()
    batches = (elements.item_batches(walk, size) if type(elements) is _JsonLines and depth == 0
               else _item_batches(elements, size))
    for batch in batches:
        if type(batch) is _Items:  # written ahead (see Encoder._elements)
            sink.line(batch.text)
            i += batch.n
            continue
        # (the native walk writes the batch or nothing: then the walk below
        # meets what it declined, and raises its error with its path)
        text = _native_items(walk, batch) if depth == 0 else None
        if text is not None:
            sink.line(text)
            size.took(len(batch), len(text))
            i += len(batch)
            continue
        written = 0
        for e in batch:
            one = [walk.norm(e)]  # _items over a one-element list writes exactly that item
            try:
                for line in walk.run(walk._items(one, depth + 1, 1), one):  # (the array: level 1 of its walk)
                    sink.line(line)
                    written += len(line)
            except ToonEncodeError as err:
                err.path = (i,) + err.path[1:]
                raise
            i += 1
        size.took(len(batch), written)


def _native_items(walk: Walk, values: list[Any]) -> str | None:
    """``values`` as the list items (§9.4) of a root-level array, written by
    the engine's ``list_items``, or None where it has none, the walk has a
    ``default`` hook, or it declines them."""
    native = _engine.current().list_items
    if native is None or walk.default is not None:
        return None
    text = native(values, **_walk_options(walk))
    return None if text is NotImplemented else cast(str, text)


def _walk_options(walk: Walk) -> dict[str, Any]:
    """The options of the engine's walks (``list_items``, ``jsonl_items``) for ``walk``."""
    return {"indent_size": len(walk.unit), "delimiter": walk.d, "max_depth": walk.max_depth,
            "missing_as_null": walk.missing_as_null}


class _JsonLines:
    """Pass two's elements of a JSON Lines input: iterating gives the values
    parsed from ``batches()`` (lists of lines, read again on each call), as
    ``_jsonl_batches`` parses them; ``_write_array`` takes ``item_batches``
    instead for an array written as list items.  ``fp``, ``start``: the
    input as a binary file, read again from ``start`` in raw blocks for the
    engine (no lines made; None: the lines of ``batches()`` are joined);
    ``threads``: the engine's for each block."""

    def __init__(
        self, batches: Callable[[], Iterable[list[Any]]], fp: Any = None, start: int = 0, *, threads: int = 2
    ) -> None:
        self._batches = batches
        self._threads = threads
        self._fp = fp
        self._start = start

    def __iter__(self) -> Iterator[Any]:
        for values, _ in _jsonl_batches(self._batches()):
            yield from values

    def _blocks(self) -> Iterator[_Block | list[Any]]:
        """Blocks of complete lines (about ITEMS_BLOCK bytes each): ``_Block``, or a list of
        lines where they are not all bytes."""
        if self._fp is not None:
            self._fp.seek(self._start)
            yield from _raw_blocks(self._fp, ITEMS_BLOCK)
            return
        for lines in _blocks_of(self._batches(), ITEMS_BLOCK):
            try:
                data = b"".join(lines)
            except TypeError:  # str lines among them
                yield lines
            else:
                yield data, 0, len(data)

    def item_batches(self, walk: Walk, size: BatchSize) -> Iterator[Any]:
        """For each block of lines, ``_Items``: its values written as list items by the
        engine's ``jsonl_items`` straight from the bytes; or, where the engine has none, the
        walk has a ``default`` hook or it declines the block, the block's parsed values (then
        the reference's path meets what it declined, and raises its error, in lists of
        ``size.n`` (see ``_item_batches``))."""
        native = None if walk.default is not None else _engine.current().jsonl_items
        if native is None:
            yield from _item_batches(self, size)
            return
        options = _walk_options(walk)
        lineno = 1
        for block in self._blocks():
            lines: list[Any]
            if type(block) is tuple:
                data, start, end = block
                done = native(data, start=start, end=end, threads=self._threads, **options)
                if done is not NotImplemented:
                    text, n, feeds = done
                    if n:
                        yield _Items(text, n)
                    lineno += feeds
                    continue
                lines = io.BytesIO(data[start:end]).readlines()
            else:
                lines = cast(list[Any], block)
            values, _ = _parse_batch(lines, lineno)
            yield from _item_batches(values, size)
            lineno += len(lines)


#: Complete lines ``data[start:end]`` (the last line of an input maybe without its line feed).
_Block: TypeAlias = "tuple[bytes, int, int]"


def bom_end(data: bytes, fp: Any, size: int) -> tuple[bytes, int]:
    """The first read ``data`` of the binary file ``fp`` (more of it if it may
    be the start of a UTF-8 byte-order mark: a pipe's reads can be short) and
    where its contents start, after the mark if it has one."""
    while data and len(data) < 3 and _BOM.startswith(data) and (more := fp.read(size)):
        data += more
    return data, 3 if data.startswith(_BOM) else 0


_BOM = b"\xef\xbb\xbf"


def _raw_blocks(fp: Any, size: int, *, bom: bool = True) -> Iterator[_Block]:
    """Blocks of complete lines of a binary file from its position, as read (``size`` bytes
    each: no copy of a block is made; the line that runs across two blocks is joined on its
    own, as a block of one line); a BOM at the start left out (with ``bom``: the position is
    the input's start)."""
    pending: list[bytes] = []  # the pieces of a line not yet ended
    first = bom
    while data := fp.read(size):
        start = 0
        if first:
            data, start = bom_end(data, fp, size)
            first = False
        cut = data.rfind(b"\n", start) + 1
        if not cut:  # (inside a line longer than a block)
            pending.append(data[start:])
            continue
        if pending:
            nl = data.find(b"\n", start) + 1
            pending.append(data[start:nl])
            line = b"".join(pending)
            pending = []
            yield line, 0, len(line)
            start = nl
        if cut > start:
            yield data, start, cut
        if cut < len(data):
            pending.append(data[cut:])
    line = b"".join(pending)
    if line:
        yield line, 0, len(line)


#: Bytes of JSON Lines handed to the engine's ``jsonl_items`` at once (big enough for its two
#: threads; the GIL is released meanwhile, and Ctrl-C is seen between blocks).
ITEMS_BLOCK = 1 << 22


def _blocks_of(batches: Iterable[list[Any]], size: int) -> Iterator[list[Any]]:
    """The lines of ``batches`` regrouped in lists of about ``size`` bytes (characters)."""
    group: list[Any] = []
    n = 0
    for lines in batches:
        group.extend(lines)
        n += sum(map(len, lines))
        if n >= size:
            yield group
            group, n = [], 0
    if group:
        yield group


class _Items:
    """In an event encoder's spool: ``n`` elements already written as the
    list items of their array (its pass two copies ``text``: str, or UTF-8
    bytes from ``jsonl_items``)."""

    __slots__ = ("text", "n")

    def __init__(self, text: str | bytes, n: int) -> None:
        self.text, self.n = text, n

    def __reduce__(self) -> tuple[Any, ...]:
        return (_Items, (self.text, self.n))


def _item_batches(elements: Iterable[Any], size: BatchSize) -> Iterator[Any]:
    """Lists of up to ``size.n`` elements (its value when each list starts: the
    consumer reports to ``size`` what it wrote), with each ``_Items`` on its own."""
    batch: list[Any] = []
    for e in elements:
        if type(e) is _Items:
            if batch:
                yield batch
                batch = []
            yield e
            continue
        batch.append(e)
        if len(batch) >= size.n:
            yield batch
            batch = []
    if batch:
        yield batch


def _write_all_rows(sink: LineSink, walk: Walk, elements: Iterable[Any], fields: Fields, depth: int, *, lenient: bool) -> None:
    """Rows for streamed elements, formatted in column-wise batches."""
    size = BatchSize()
    batch: list[Any] = []
    done = 0
    for e in elements:
        batch.append(e)
        if len(batch) >= size.n:
            size.took(len(batch), _write_rows(sink, walk, batch, fields, depth, done, lenient=lenient))
            done += len(batch)
            batch = []
    _write_rows(sink, walk, batch, fields, depth, done, lenient=lenient)


def _write_rows(
    sink: LineSink, walk: Walk, batch: list[Any], fields: Fields, depth: int, offset: int, *, lenient: bool = False
) -> int:
    """The rows of ``batch`` written to ``sink``; returns their characters."""
    written = 0
    try:
        for chunk in walk.rows_text(batch, fields, depth, lenient=lenient):
            sink.line(chunk)
            written += len(chunk)
    except ToonEncodeError as err:
        if err.path and isinstance(err.path[0], int):
            err.path = (err.path[0] + offset,) + err.path[1:]
        raise
    return written


class _Flat:
    """A spooled value as the flat list ``_flatten`` makes of it."""

    __slots__ = ("parts",)

    def __init__(self, parts: list[Any]) -> None:
        self.parts = parts

    def __reduce__(self) -> tuple[Any, ...]:
        return (_Flat, (self.parts,))


_DICT, _LIST, _TUPLE, _KEY = "d", "l", "t", "k"


def _flatten(value: Any) -> list[Any]:
    """A value of dicts, lists and tuples (a spool record) as a flat list in
    prefix order: a container is (kind, size) then its items (a dict's as
    key part, value); a scalar is (None, scalar).  Iterative: depth costs
    list entries, not stack frames."""
    parts: list[Any] = []
    todo: list[tuple[bool, Any]] = [(False, value)]  # (is a dict key, item)
    while todo:
        is_key, v = todo.pop()
        if is_key:
            parts.append((_KEY, v))
        elif type(v) is dict:
            parts.append((_DICT, len(v)))
            for k, x in reversed(list(v.items())):
                todo.append((False, x))
                todo.append((True, k))
        elif type(v) is list or type(v) is tuple:
            parts.append((_LIST if type(v) is list else _TUPLE, len(v)))
            todo.extend((False, x) for x in reversed(v))
        else:
            parts.append((None, v))
    return parts


def _unflatten(parts: list[Any]) -> Any:
    """The value ``_flatten`` made ``parts`` of, rebuilt iteratively (a
    tuple is filled as a list, then frozen when complete)."""
    root: list[Any] = []
    # open containers: [container, items still to come, pending key, is a tuple, slot in its parent]
    stack: list[list[Any]] = [[root, 1, None, False, None]]
    for kind, x in parts:
        top = stack[-1]
        if kind == _KEY:
            top[2] = x
            continue
        new: Any = {} if kind == _DICT else [] if kind == _LIST or kind == _TUPLE else x
        slot: Any
        if type(top[0]) is dict:
            top[0][top[2]] = new
            slot = top[2]
        else:
            top[0].append(new)
            slot = len(top[0]) - 1
        top[1] -= 1
        if kind is not None:
            stack.append([new, x, None, kind == _TUPLE, slot])
        while len(stack) > 1 and stack[-1][1] == 0:
            done, _, _, is_tuple, at = stack.pop()
            if is_tuple:
                stack[-1][0][at] = tuple(done)
    return root[0]


class _Held:
    """In the spool: the value is ``_Spool._held[index]``."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __reduce__(self) -> tuple[Any, ...]:
        return (_Held, (self.index,))


class _Many:
    """In the spool: several values pickled at once (one call for a batch)."""

    __slots__ = ("values",)

    def __init__(self, values: list[Any]) -> None:
        self.values = values

    def __reduce__(self) -> tuple[Any, ...]:
        return (_Many, (self.values,))


class _Spool:
    """Pickled values in a temporary file (in memory up to a limit)."""

    def __init__(self, memory: int) -> None:
        self._file = tempfile.SpooledTemporaryFile(max_size=check_spool_memory(memory))  # noqa: SIM115
        self._count = 0
        # Values pickle cannot store (host objects such as instances of a
        # class defined in a function, which the encoders take): kept as
        # they are, so both passes see the same objects.
        self._held: list[Any] = []

    def put(self, value: Any) -> int:
        """``value`` spooled; returns the bytes written (a held value's: its index's)."""
        try:
            data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except RecursionError:
            # Nested deeper than pickle follows (about a thousand levels;
            # dumps takes such values): spooled flat, rebuilt without recursion.
            try:
                data = pickle.dumps(_Flat(_flatten(value)), protocol=pickle.HIGHEST_PROTOCOL)
            except (pickle.PicklingError, AttributeError, TypeError):
                data = self._hold(value)
        except (pickle.PicklingError, AttributeError, TypeError):
            data = self._hold(value)
        self._file.write(data)
        self._count += 1
        return len(data)

    def put_all(self, values: list[Any]) -> int:
        """``put`` of each of ``values``, in one pickle when it can take them all;
        returns the bytes written."""
        try:
            data = pickle.dumps(_Many(values), protocol=pickle.HIGHEST_PROTOCOL)
        except (RecursionError, pickle.PicklingError, AttributeError, TypeError):
            # (each value the way put stores it)
            return sum(self.put(v) for v in values)
        self._file.write(data)
        self._count += 1
        return len(data)

    def _hold(self, value: Any) -> bytes:
        self._held.append(value)
        return pickle.dumps(_Held(len(self._held) - 1), protocol=pickle.HIGHEST_PROTOCOL)

    def replay(self) -> Iterator[Any]:
        """Every value, in order, once; reading stops after the last one written."""
        self._file.seek(0)
        for _ in range(self._count):
            value = pickle.load(self._file)
            if type(value) is _Many:
                yield from value.values
            elif type(value) is _Held:
                yield self._held[value.index]
            else:
                yield _unflatten(value.parts) if type(value) is _Flat else value

    def close(self) -> None:
        self._file.close()
        self._held = []


# ---------------------------------------------------------------------- events

# (a scalar event's value is taken as it is, whatever the event's name:
# host values such as an Enum or a str subclass are encoded as dumps
# encodes them, and the name only tells a scalar from a container)
_SCALARS = frozenset({"null", "boolean", "integer", "double", "number", "string"})


def _shown(x: Any) -> str:
    """``repr(x)``, cut short (a message quotes it)."""
    r = repr(x)
    return r if len(r) <= 80 else r[:77] + "..."
_ARR, _OBJ, _MEMBER = 1, 2, 3  # kinds of streamed levels


class Encoder:
    """Push encoder for ijson events: ``send(event)`` for each event, then ``close()``.

    Accepts ``ijson.basic_parse`` pairs ``(event, value)`` and ``ijson.parse``
    triples ``(prefix, event, value)`` (the prefix is ignored).  Writes nothing
    until ``close()``: the root array's (or the root object's array members')
    elements are spooled, one element in memory at a time.

    >>> import io, ijson
    >>> out = io.StringIO()
    >>> enc = Encoder(out)
    >>> for ev in ijson.parse(b'[{"id": 1, "x": "a"}, {"id": 2, "x": "b"}]'):
    ...     enc.send(ev)
    >>> enc.close()
    >>> print(out.getvalue())
    [2]{id,x}:
      1,a
      2,b
    """

    def __init__(
        self,
        out: IO[str] | IO[bytes],
        *,
        indent_size: int = 2,
        delimiter: str = ",",
        default: Default | None = None,
        max_depth: int = DEFAULT_MAX_DEPTH,
        spool_memory: int = DEFAULT_SPOOL_MEMORY,
        missing_as_null: bool = False,
    ) -> None:
        self._walk = Walk(
            indent_size=indent_size,
            delimiter=delimiter,
            default=default,
            max_depth=max_depth,
            missing_as_null=missing_as_null,
        )
        # An array member of the root object sits one level deeper than a
        # root array: its elements are checked as dumps({key: [...]}) does.
        self._member_walk = _keyed_walk(
            "", indent_size=indent_size, delimiter=delimiter, default=default, max_depth=max_depth,
            missing_as_null=missing_as_null,
        )
        # max_depth is checked by the walks while writing, with dumps' rules
        # and its error path.  The deepest nesting seen tells whether a dry
        # run must find such an error before anything is written.
        self._deepest = 0
        self._sink = LineSink(out)
        self._spool = _Spool(spool_memory)
        self._batch = BatchSize()  # elements taken at once by ``send_all``
        self._spool_memory = spool_memory
        self._levels: list[int] = []  # streamed containers open now
        self._root_kind = 0
        self._root_value: Any = None
        self._root_plan = _ArrayPlan(self._walk, spool_memory)  # root array, or root object's member values
        self._member_plans: list[_ArrayPlan] = []  # one per array-valued root member, in order
        self._key: Any = None
        # The root object's members are written one by one, so a repeated
        # key (by contents: str subclass keys are written as theirs) would be
        # written twice.  Only the keys' hashes are kept (a root object may
        # have millions of members); a key whose hash was seen is a suspect,
        # checked exactly against the spooled keys before anything is written.
        self._root_hashes: set[int] = set()
        self._suspects: set[str] = set()
        self._stack: list[Any] = []  # the value being materialized
        self._keys: list[Any] = []
        self._done = False
        self._closed = False
        self._failed: str | None = None  # (close()'s error: a second close() says so)

    def send(self, event: tuple[Any, ...]) -> None:
        """Take one ijson event (pair or triple)."""
        if self._closed:
            raise ToonEncodeError("event after close()")
        try:
            if len(event) == 3:
                ev, value = event[1], event[2]
            else:
                ev, value = event
        except (TypeError, ValueError):
            raise ToonEncodeError(
                f"an event is a (prefix, event, value) triple or an (event, value) pair, not {_shown(event)}"
            ) from None
        if self._stack:
            try:
                self._build(ev, value)
            except ToonEncodeError as e:
                if not e.path and self._stack:  # (an event out of place: where, as dumps names paths)
                    e.path = self._open_path()
                raise
            return
        if self._done:
            raise ToonEncodeError(f"event {ev!r} after the end of the document")
        levels = self._levels
        top = levels[-1] if levels else 0
        if ev == "map_key":
            if top != _OBJ:
                raise ToonEncodeError("map_key outside an object")
            self._root_key(value)
            self._key = value
        elif ev == "end_map" or ev == "end_array":
            if not levels or (ev == "end_map") != (top == _OBJ):
                raise ToonEncodeError(f"unbalanced {ev}")
            levels.pop()
            if top == _MEMBER:
                self._spool.put(("Z",))
            if not levels:
                self._done = True
        elif not levels:  # the root value starts
            if ev == "start_map":
                self._root_kind = _OBJ
                levels.append(_OBJ)
            elif ev == "start_array":
                self._root_kind = _ARR
                levels.append(_ARR)
            elif ev in _SCALARS:
                self._root_kind = -1
                self._root_value = value
                self._done = True
            else:
                raise ToonEncodeError(f"unexpected event {ev!r}")
        elif top == _OBJ and ev == "start_array":  # an array member of the root object streams too
            self._root_plan.disqualify()
            self._member_plans.append(_ArrayPlan(self._member_walk, self._spool_memory))
            self._spool.put(("A", self._key))
            levels.append(_MEMBER)
        elif ev in _SCALARS:
            self._element(value)
        elif ev == "start_map" or ev == "start_array":
            new: Any = {} if ev == "start_map" else []
            self._stack.append(new)
            self._keys.append(None)
        else:
            raise ToonEncodeError(f"unexpected event {ev!r}")

    def send_all(self, events: Iterable[tuple[Any, ...]]) -> None:
        """``send`` each of ``events``.  On the native engine the events inside
        each element are taken by ``fill_elements`` (the same containers built
        as ``_build`` builds them, without a Python call per event); the
        events around the elements, and any it leaves, come here.

        >>> import io, ijson
        >>> out = io.StringIO()
        >>> enc = Encoder(out)
        >>> enc.send_all(ijson.parse(b'[{"a": [1, {"b": null}]}]'))
        >>> enc.close()
        >>> print(out.getvalue())
        [1]:
          - a[2]:
              - 1
              - b: null
        """
        fill = _engine.current().fill_elements
        it = iter(events)
        for ev in it:
            self.send(ev)
            while fill is not None and self._stack:
                in_array = self._levels[-1] != _OBJ
                status, elements, got, deepest = fill(it, self._stack, self._keys, in_array, self._batch.n)
                if deepest > self._deepest:
                    self._deepest = deepest
                self._elements(elements)
                if status == 1:  # an event left to send
                    self.send(got)
                elif status == 2:  # the events ended (inside an element: close() says so)
                    return

    def _root_key(self, key: Any) -> None:
        name = key_contents(key)
        h = hash(name)
        if h in self._root_hashes:
            self._suspects.add(name)
        self._root_hashes.add(h)

    def _check_root_keys(self) -> None:
        """ToonEncodeError if a suspect root key (see ``_root_key``) was given twice."""
        if not self._suspects:
            return
        seen: dict[Any, None] = {}
        for rec in self._spool.replay():
            if rec[0] in ("m", "A"):
                name = key_contents(rec[1])
                if name in self._suspects:
                    try:
                        put_key(seen, name, None)
                    except ToonEncodeError as e:
                        # (the error has no path: the key is the root's; the
                        # CLI finds its second occurrence in the input by it)
                        e._repeated_root_key = name  # type: ignore[attr-defined]
                        raise

    def _build(self, ev: str, value: Any) -> None:
        """One event inside an element (``fill_elements`` hands back to here
        whatever these checks refuse, so that the errors are these)."""
        stack = self._stack
        if ev == "map_key":
            if type(stack[-1]) is not dict:
                raise ToonEncodeError("map_key inside an array")
            if value is None:
                raise ToonEncodeError("map_key without a key")
            if self._keys[-1] is not None:
                raise ToonEncodeError(f"map_key {_shown(value)} after a map_key without its value")
            self._keys[-1] = value
            return
        if ev == "start_map" or ev == "start_array":
            new: Any = {} if ev == "start_map" else []
            self._attach(new)
            stack.append(new)
            self._keys.append(None)
            if len(stack) > self._deepest:
                self._deepest = len(stack)
        elif ev == "end_map" or ev == "end_array":
            in_map = type(stack[-1]) is dict
            if (ev == "end_map") != in_map or (in_map and self._keys[-1] is not None):
                raise ToonEncodeError(f"unbalanced {ev}" if self._keys[-1] is None else f"{ev} after a map_key without its value")
            done = stack.pop()
            self._keys.pop()
            if not stack:
                self._element(done)
        elif ev in _SCALARS:
            self._attach(value)
        else:
            raise ToonEncodeError(f"unexpected event {_shown(ev)}")

    def _attach(self, value: Any) -> None:
        top = self._stack[-1]
        if type(top) is list:
            top.append(value)
        else:
            keys = self._keys
            key = keys[-1]
            if key is None:
                raise ToonEncodeError(f"a value in an object without a map_key before it: {_shown(value)}")
            top[key] = value
            keys[-1] = None

    def _elements(self, values: list[Any]) -> None:
        """``_element`` of each of ``values`` (complete children of the same
        streamed level), a batch at once where the plan allows: rows of a
        flat table by the engine's ``table_rows``, a settled array counted,
        the spool written in one piece."""
        top = self._levels[-1] if self._levels else 0
        if len(values) < 2 or top == _OBJ:
            for v in values:
                self._element(v)
            return
        plan = self._root_plan if top != _MEMBER else self._member_plans[-1]
        norm = self._walk.norm
        try:
            normed = [norm(v) for v in values]
        except ToonEncodeError:
            for v in values:  # (the failing one, at its path)
                self._element(v)
            raise
        if plan.settled:
            plan.add_count(len(normed))
            # Written ahead as list items, pass two copies the text (as a
            # table's rows are): the elements need not be spooled and read back.
            text = _native_items(plan.walk, values)
            if text is not None:
                self._spool.put(("e", _Items(text, len(values))))
                self._batch.took(len(values), len(text))
                return
        elif not plan.add_rows(normed):
            for v in normed:
                try:
                    plan.add(v)
                except ToonEncodeError as e:
                    e.path = self._at(top, plan.n) + e.path
                    raise
                plan.maybe_flush()
        self._batch.took(len(values), self._spool.put_all([("e", v) for v in values]))

    def _element(self, value: Any) -> None:
        """A complete child of a streamed level: an array element or a root member."""
        top = self._levels[-1]
        plan = self._root_plan if top != _MEMBER else self._member_plans[-1]
        try:
            plan.add(self._walk.norm(value))
        except ToonEncodeError as e:
            e.path = self._at(top, plan.n) + e.path
            raise
        plan.maybe_flush()
        self._spool.put(("m", self._key, value) if top == _OBJ else ("e", value))

    def _open_path(self) -> tuple[Any, ...]:
        """The path of the innermost container of the element being built."""
        top = self._levels[-1]
        plan = self._root_plan if top != _MEMBER else self._member_plans[-1]
        path = list(self._at(top, plan.n))  # (the element's: it is not in the plan yet)
        stack = self._stack
        for parent, child in zip(stack, stack[1:]):
            # (found by identity, from the end: an open child is its parent's latest, but
            # a repeated key keeps the first one's place in the dict, its value the last)
            if type(parent) is list:
                path.append(next(i for i in range(len(parent) - 1, -1, -1) if parent[i] is child))
            else:
                path.append(next(k for k, v in reversed(parent.items()) if v is child))
        return tuple(path)

    def _at(self, top: int, n: int) -> tuple[Any, ...]:
        """The path of the ``n``-th child of the streamed level ``top``, as ``dumps`` names it."""
        if top == _OBJ:
            return (self._key,)
        return (self._key, n) if top == _MEMBER else (n,)

    def __enter__(self) -> Encoder:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        """``with Encoder(out) as enc:`` closes it at the end of the block
        (writing the document); an exception in the block discards the
        events instead, writing nothing (a later ``close()`` says why).

        >>> import io
        >>> out = io.StringIO()
        >>> with Encoder(out) as enc:
        ...     enc.send_all([("start_array", None), ("integer", 1), ("end_array", None)])
        >>> out.getvalue()
        '[1]: 1'
        """
        if exc_type is None:
            self.close()
        elif not self._closed:
            self._closed = True
            self._failed = f"the with block raised {exc_type.__name__}; nothing was written"
            self._spool.close()
            for plan in (self._root_plan, *self._member_plans):
                plan.drop_rows()

    def close(self) -> None:
        """End of events: write the document (pass two) and flush."""
        if self._closed:
            if self._failed is not None:
                raise ToonEncodeError(f"close() failed before: {self._failed}")
            return
        self._closed = True
        try:
            if not self._done:
                raise ToonEncodeError("incomplete event stream (no complete root value)")
            self._check_root_keys()
            plans = (self._root_plan, *self._member_plans)
            for p in plans:
                p.flush_rows()  # (the last rows: if one fails, rows_ready turns False)
            if any(p.unencodable for p in plans) or self._deepest + 1 >= self._member_walk.max_depth:
                # pass two will fail, or may (too deep): find its error before writing anything
                self._write_document(_dry_run_sink())
            self._write_document(self._sink)
        except BaseException as e:
            self._failed = f"{type(e).__name__}: {e}"  # (not the exception: its frames hold the encoder)
            raise
        finally:
            self._spool.close()
            for plan in (self._root_plan, *self._member_plans):
                plan.drop_rows()

    def _write_document(self, sink: LineSink) -> None:
        """Pass two: the document from the spooled records."""
        walk = self._walk
        records = self._spool.replay()
        if self._root_kind != -1 and walk.max_depth < 1:  # (a streamed root container: level 1)
            raise walk.too_deep()
        if self._root_kind == -1:
            for line in walk.lines(self._root_value):
                sink.line(line)
        elif self._root_kind == _ARR:
            plan = self._root_plan
            if plan.n == 0:
                sink.line("[]")
            else:
                _write_array(sink, walk, "", plan, (r[1] for r in records), 0)
        else:
            self._write_object(records, sink)
        sink.flush()

    def coverage(self) -> tuple[int, int]:
        """After ``close()``: (elements of the streamed arrays, how many of them a
        table covers).  A keyed root object counts its members as elements."""
        total = covered = 0
        plan = self._root_plan
        if self._root_kind == _ARR or (self._root_kind == _OBJ and plan.tabular and plan.n >= 2):
            total += plan.n
            if plan.tabular or plan.union_fields() is not None:
                covered += plan.n
        for member in self._member_plans:
            total += member.n
            if member.tabular or member.union_fields() is not None:
                covered += member.n
        return total, covered

    def _write_object(self, records: Iterator[Any], sink: LineSink) -> None:
        walk = self._walk
        plan = self._root_plan
        if plan.tabular and plan.n >= 2:  # §9.5 keyed root object
            assert plan.fields is not None
            sink.line(table_header("", plan.n, walk.d, plan.fields, lambda: (r[1] for r in self._spool.replay()), keyed=True))
            entry = walk.entry_writer(plan.fields, 1)
            for _, k, v in records:
                try:
                    sink.line(entry(k, v))
                except ToonEncodeError as e:  # (at the cell, as dumps' _keyed says it)
                    e.path = (k, *walk._cell_path(plan.fields, v)) + e.path
                    raise
            return
        members = iter(self._member_plans)
        for rec in records:
            if rec[0] == "m":
                _, k, v = rec
                member = {k: v}
                for line in walk.run(walk._fields(member, 0, None, 1), member):
                    sink.line(line)
            else:  # "A": an array member; its elements follow until "Z"
                k = rec[1]
                mplan = next(members)
                elements = _until_end(records)
                _array_fits(k, self._member_walk)
                if mplan.n == 0:
                    sink.line(f"{key_text(k)}: []")
                else:
                    try:
                        _write_array(sink, self._member_walk, key_text(k), mplan, elements, 0)
                    except ToonEncodeError as err:
                        err.path = (k,) + err.path  # (the member's key first, as dumps names it)
                        raise
                for _ in elements:  # drain to the "Z" marker (nothing left if written)
                    pass


def _until_end(records: Iterator[Any]) -> Iterator[Any]:
    for rec in records:
        if rec[0] == "Z":
            return
        yield rec[1]


def encode_events(
    events: Iterable[tuple[Any, ...]],
    out: IO[str] | IO[bytes],
    *,
    indent_size: int = 2,
    delimiter: str = ",",
    default: Default | None = None,
    max_depth: int = DEFAULT_MAX_DEPTH,
    spool_memory: int = DEFAULT_SPOOL_MEMORY,
    missing_as_null: bool = False,
) -> None:
    """Encode an ijson event stream (e.g. ``ijson.parse(f)``) to ``out``.

    >>> import io, ijson
    >>> out = io.StringIO()
    >>> encode_events(ijson.parse(b'{"a": [1, 2], "b": {"c": null}}'), out)
    >>> print(out.getvalue())
    a[2]: 1,2
    b:
      c: null
    """
    enc = Encoder(
        out,
        indent_size=indent_size,
        delimiter=delimiter,
        default=default,
        max_depth=max_depth,
        spool_memory=spool_memory,
        missing_as_null=missing_as_null,
    )
    enc.send_all(events)
    enc.close()


# ---------------------------------------------------------------------- records


def _encode_array_stream(
    pass_one: Iterator[tuple[list[Any] | int, bool]],
    pass_two: Callable[[], Iterable[Any]],
    out: IO[str] | IO[bytes],
    key: str | None,
    walk: Walk,
    spool_memory: int,
    plan: _ArrayPlan | None = None,
) -> int:
    """Shared body of encode_jsonl / encode_records: plan, then write.

    ``pass_one`` yields batches ``(values, parsed)``: ``parsed`` promises
    values parsed from JSON, so in the JSON model (``_ArrayPlan.add_batch``).
    ``pass_two`` is called only if pass one could not write the rows ahead.
    ``plan``: a fresh plan that ``pass_one`` also sees (parallel JSONL).
    """
    if plan is None:
        plan = _ArrayPlan(walk, spool_memory)
    if key is not None:
        key = key_contents(key)  # a str subclass: its contents, in the header and in error paths
    try:
        _plan_array(pass_one, walk, plan)
        return _write_planned(plan, pass_two, out, key, walk)
    except ToonEncodeError as err:
        _under_key(err, key)
        raise


def _keyed_walk(key: str | None, **options: Any) -> Walk:
    """The walk for records at the root (``key`` None) or under ``key``: there
    each record sits one level deeper, as in ``dumps({key: records})``."""
    walk = Walk(**options)
    if key is not None:
        walk.max_depth -= 1  # (messages still show the caller's limit: depth_shown)
        walk.shape.max_depth -= 1
    return walk


def _copied_records(records: Iterable[Any], walk: Walk, key: str | None) -> Iterator[Any]:
    """``sort_keys`` for records: each as ``sorted_keys`` copies it inside
    ``dumps([...])`` (or ``dumps({key: [...]})``), a record at level 2 of
    ``walk``, and an error at its path there."""
    for i, record in enumerate(records):
        try:
            yield sorted_keys(record, walk.default, walk.max_depth - 1)
        except ToonEncodeError as err:
            err.path = (i, *err.path)
            _under_key(err, key)
            raise


def _array_fits(key: str | None, walk: Walk) -> None:
    """Raise dumps' error for an array at the root (``key`` None) or under
    ``key`` (``walk`` is then the keyed walk, one lower) when ``max_depth``
    leaves it no level: an empty array too is a container."""
    if walk.max_depth < 1:  # (and when max_depth leaves no level for the key's object, dumps names it: ())
        raise walk.too_deep() if key is None or walk.depth_shown < 1 else walk.too_deep(key)


def _under_key(err: ToonEncodeError, key: str | None) -> None:
    """An element's error path under ``key``, as ``dumps({key: [...]})`` gives it."""
    if key is not None and err.path and type(err.path[0]) is int:
        err.path = (key,) + err.path


def _plan_array(pass_one: Iterator[tuple[list[Any] | int, bool]], walk: Walk, plan: _ArrayPlan) -> None:
    """Pass one of ``_encode_array_stream``: every element into ``plan`` (an
    int: that many elements, checked, after the plan's shape settled)."""
    norm = walk.norm
    for values, parsed in pass_one:
        if type(values) is int:
            plan.add_count(values)
            continue
        assert isinstance(values, list)
        if parsed:
            plan.add_batch(values)
            continue
        at = 0
        while at < len(values):
            batch = values[at : at + plan.batch.n]
            at += len(batch)
            if len(batch) > 1 and plan.add_rows(batch):
                continue
            for value in batch:
                try:
                    plan.add(norm(value))
                except ToonEncodeError as e:
                    e.path = (plan.n,) + e.path
                    raise
                plan.maybe_flush()


def _write_planned(
    plan: _ArrayPlan, pass_two: Callable[[], Iterable[Any]], out: IO[str] | IO[bytes], key: str | None, walk: Walk
) -> int:
    """Pass two of ``_encode_array_stream``: write the array ``plan`` describes."""
    head = "" if key is None else key_text(key)
    try:
        _array_fits(key, walk)
        plan.flush_rows()  # (the last rows: if one fails, rows_ready turns False)
        if plan.unencodable:  # pass two will fail: find its error before writing anything
            _write_array(_dry_run_sink(), walk, head, plan, pass_two(), 0)
        sink = LineSink(out)
        if plan.n == 0:
            sink.line("[]" if key is None else f"{head}: []")
        else:
            _write_array(sink, walk, head, plan, iter(()) if plan.rows_ready else pass_two(), 0)
        sink.flush()
    finally:
        plan.drop_rows()
    return plan.n


class _Discard(io.RawIOBase):
    """A binary sink that keeps nothing (a dry run of pass two)."""

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        return len(data)


def _dry_run_sink() -> LineSink:
    return LineSink(cast(IO[bytes], _Discard()))


def encode_records(
    records: Iterable[Any],
    out: IO[str] | IO[bytes],
    *,
    key: str | None = None,
    indent_size: int = 2,
    delimiter: str = ",",
    default: Default | None = None,
    max_depth: int = DEFAULT_MAX_DEPTH,
    spool_memory: int = DEFAULT_SPOOL_MEMORY,
    missing_as_null: bool = False,
    sort_keys: bool = False,
) -> int:
    """Encode an iterable of values as the root array (or the array under ``key``).

    A list (or other re-iterable sequence) is read twice; any other iterable
    is spooled.  Returns the number of records.  Same output as
    ``dumps(list(records))`` (or ``dumps({key: list(records)})``), options
    included (``sort_keys``: each record's objects with sorted keys).

    >>> import io
    >>> out = io.StringIO()
    >>> encode_records(({"id": i} for i in range(2)), out, key="rows")
    2
    >>> out.getvalue()
    'rows[2]{id}:\\n  0\\n  1'
    """
    walk = _keyed_walk(key, indent_size=indent_size, delimiter=delimiter, default=default, max_depth=max_depth,
                       missing_as_null=missing_as_null)
    if sort_keys:
        # Copies with sorted keys (spooled: a list is then not read twice), made once: their
        # host values normalized there, default called once per value.  (Without sort_keys,
        # the two passes each normalize a record's host values: default is called once per
        # value in each, since keeping its results between them would keep every record's.)
        records = _copied_records(records, walk, key)
    if isinstance(records, (list, tuple)):
        seq = records
        return _encode_array_stream(iter([(list(seq), False)]), lambda: iter(seq), out, key, walk, spool_memory)
    spool = _Spool(spool_memory)
    try:

        def first() -> Iterator[tuple[list[Any], bool]]:
            it = iter(records)
            size = BatchSize()
            while batch := list(islice(it, size.n)):
                size.took(len(batch), spool.put_all(batch))
                yield batch, False

        return _encode_array_stream(first(), spool.replay, out, key, walk, spool_memory)
    finally:
        spool.close()


# ---------------------------------------------------------------------- JSONL


def _written_float(text: str) -> float | None:
    """The float of a JSON number's ``text`` when Python writes it back as
    ``text`` (``255.0``), else None (``1E2``, ``0.10000000000000000001``):
    JSON Lines' records hold such a number as that float, the rest exact."""
    f = float(text)
    return f if repr(f) == text else None


def _json_float(text: str) -> float | Decimal:
    # A float when it holds the text exactly as Python would write it (the
    # usual case, and fast); otherwise an exact Decimal, so no digit is lost.
    f = _written_float(text)
    if f is not None:
        return f
    e = max(text.find("e"), text.find("E"))
    if e != -1 and not exponent_in_range(text[e:]):  # (the decoders' limit: sign and leading zeros are no digits)
        raise ValueError("number exponent out of range")
    return Decimal(text)


def _json_int(text: str) -> int:
    if len(text) > 4000:  # beyond CPython's int(str) digit limit
        return int(Decimal(text))
    return int(text)


# One decoder, built once (json.loads with hooks builds a new one per call).
# Integers use the C scanner's own int(); only a line whose int is too long
# for int(str) is parsed again with the slower parse_int hook.
_JSON = json.JSONDecoder(parse_float=_json_float)
_JSON_BIGINT = json.JSONDecoder(parse_float=_json_float, parse_int=_json_int)


def _no_lone_surrogate(text: str, lineno: int) -> None:
    """Refuse a lone surrogate escape in a JSON line as a JSON document's is
    refused (the same reason and column): no UTF-8 text can hold one."""
    from ._jsonscan import LoneSurrogate, SurrogateCheck

    data = text.encode("utf-8", "surrogatepass")
    check = SurrogateCheck()
    try:
        check.feed(data)
        check.close()
    except LoneSurrogate as e:
        column = len(data[: e.args[1]].decode("utf-8", "surrogatepass")) + 1  # (characters, as json counts)
        raise ToonEncodeError(f"invalid JSON: {e.args[0]}", line=lineno, column=column) from None


def _parse_json(data: bytes | str, lineno: int) -> Any:
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as e:
        # Named as for a JSON document: the syntax scanner's reason and
        # character (a column counts characters, not bytes).
        assert isinstance(data, bytes)
        located = _as_json_document(data, lineno)
        if located is not None:
            raise located from None
        column = len(data[: e.start].decode("utf-8", "replace")) + 1
        raise ToonEncodeError(f"invalid UTF-8 in JSON line: {e.reason}", line=lineno, column=column) from None
    if "\\ud" in text or "\\uD" in text:
        _no_lone_surrogate(text, lineno)  # (json takes "\ud800" alone; a JSON document is refused)
    try:
        return _JSON.decode(text)
    except json.JSONDecodeError as e:
        # Named as for a JSON document (an invalid number's start, an
        # unterminated string's quote); json's own words where the scanner
        # finds the syntax valid.
        located = _as_json_document(text.encode("utf-8", "surrogatepass"), lineno)
        if located is not None:
            raise located from None
        column = min(e.pos, len(text.rstrip("\r\n"))) + 1
        raise ToonEncodeError(f"invalid JSON: {e.msg}", line=lineno, column=column) from None
    except ValueError:
        pass  # an integer longer than int(str) accepts
    except RecursionError:
        return _deep_json(text, lineno)
    try:
        return _JSON_BIGINT.decode(text)
    except RecursionError:
        return _deep_json(text, lineno)
    except ValueError as e:
        raise ToonEncodeError(f"invalid JSON line: {e}", line=lineno, column=1) from None


def _deep_json(text: str, lineno: int) -> Any:
    """A line nested deeper than the stdlib reader recurses (about 1,000
    levels), read by ijson, whose builder keeps its open containers in a
    list (deep lines are rare).  Numbers are ints and Decimals (``dumps``
    writes a Decimal as it writes the equal float); ``NaN``/``Infinity`` are
    not taken there, nor ints past CPython's int digit limit.  Its C backend,
    unless a digit run is that long: it crashes on one, where the pure-Python
    backend (given the whole line as one buffer: its tokens must fit) raises.
    Lone surrogate escapes were refused before.  Errors are named by the
    syntax locator, as the stdlib path names them."""
    import ijson

    data = text.rstrip("\r\n").encode("utf-8", "surrogatepass")
    options: dict[str, Any] = {"use_float": False}
    backend: Any = ijson
    if data.translate(_SCREEN).find(b"0" * 4000) != -1:
        backend = ijson.get_backend("python")
        options["buf_size"] = len(data) + 1
    try:
        values = list(backend.items(io.BytesIO(data), "", **options))
        if len(values) == 1:
            return values[0]
        problem = "no JSON value"
    except (ijson.JSONError, ValueError) as e:  # (an int longer than int(str) accepts: ValueError)
        problem = str(e)[:200]
    located = _as_json_document(data, lineno)
    raise located if located is not None else ToonEncodeError(f"invalid JSON line: {problem}", line=lineno, column=1)


def _as_json_document(line: bytes, lineno: int) -> ToonEncodeError | None:
    """The error of a JSON line named as for a JSON document (the syntax
    scanner's reason and character; its line end is not part of it), or
    None where the scanner finds the syntax valid."""
    from ._jsonscan import locate_json_error

    found = locate_json_error(io.BytesIO(line.rstrip(b"\r\n")))
    if found is None or found.line != 1:
        return None
    return ToonEncodeError(f"invalid JSON: {found.msg}", line=lineno, column=found.column)


# orjson, when installed, parses most lines several times faster than the
# stdlib; it is optional, and only trusted where it gives exactly the value
# ``_parse_json`` gives:
# - it rejects what the stdlib also rejects (and NaN/Infinity, lone surrogate
#   escapes, nesting deeper than 1024, which the stdlib accepts): any line it
#   rejects goes to ``_parse_json``, so errors and their line numbers are the
#   stdlib path's;
# - duplicate keys: the last value wins, at the first key's place, like dict();
# - numbers: integers within 64 bits are exact; beyond, orjson gives a float.
#   Floats are correctly rounded, so a float token whose text is Python's
#   repr is the same float; other float tokens become exact Decimals on the
#   stdlib path.  The text is screened for number tokens with an exponent or
#   16+ digits/dots: a token without them has at most 15 significant digits
#   and needs no Decimal (its float prints back as the same decimal number,
#   and dumps writes a float and an equal Decimal alike).  A line with such a
#   token is checked token by token (``_numbers_agree``) and, failing that,
#   parsed by ``_parse_json``.
try:
    _orjson: Any = importlib.import_module("orjson")
except ImportError:  # pragma: no cover - orjson is optional
    _orjson = None

# Digits and "." to "0", "E" to "e": then b"0e" marks an exponent and 16 "0"s
# a long digit run (C-level bytes searches, no regex over the input).
_SCREEN = bytes.maketrans(b"123456789.E", b"0000000000e")
_EXPONENT = b"0e"
_LONG_RUN = b"0" * 16
# A JSON number follows "[", ",", ":" or whitespace (or starts the line);
# digits inside strings mostly do not ("3e5a", "550e8400-...").
_NUMBER_TOKEN = re.compile(rb"(?:(?<=[\[,: \t\r])|^)-?[0-9][0-9.]*(?:[eE][-+]?[0-9]*)?")
#: Lines parsed per batch (pass one and pass two), at most; and the bytes
#: (characters) a batch stops at, so a batch of long lines holds a few.
LINE_BATCH = 1024
LINE_BYTES = 1 << 17


def _numbers_agree(line: bytes) -> bool:
    """Whether orjson's numbers for this line are ``_parse_json``'s: every
    number-like token with an exponent or 16+ characters is an int of at most
    18 digits or a float written exactly as Python's repr writes it.
    Some tokens inside strings are checked too (harmless: a false alarm only
    sends the line to the stdlib parser)."""
    for tok in _NUMBER_TOKEN.findall(line):
        exp = b"e" in tok or b"E" in tok
        if len(tok) < 16 and not exp:
            continue
        if not exp and b"." not in tok:
            if len(tok.lstrip(b"-")) <= 18:
                continue
            return False
        text = tok.decode("ascii")
        try:
            if repr(float(text)) != text:
                return False
        except ValueError:
            return False
    return True


def _risky(line: bytes) -> bool:
    screened = line.translate(_SCREEN)
    return (_EXPONENT in screened or _LONG_RUN in screened) and not _numbers_agree(line)


def _parse_line(raw: bytes | str, lineno: int) -> Any:
    if _orjson is not None and type(raw) is bytes and not _risky(raw):
        try:
            return _orjson.loads(raw)
        except ValueError:  # orjson.JSONDecodeError: the stdlib decides (and names the error)
            pass
    return _parse_json(raw, lineno)


def _parse_batch(lines: list[Any], lineno: int) -> tuple[list[Any], bool]:
    """The values of the non-blank lines (``lineno``: the first line's number),
    and True: they are parsed from JSON (see ``_encode_array_stream``)."""
    if _orjson is not None and type(lines[0]) is bytes:
        try:
            chunk = b"".join(lines)  # TypeError: str lines among them
            values = list(map(_orjson.loads, lines))
        except (TypeError, ValueError):  # a blank or bad line, NaN, ...: line by line below
            pass
        else:
            screened = chunk.translate(_SCREEN)
            # rfind: CPython's backward search is about twice as fast as ``in``
            # on this text (runs of "0", frequent "e")
            if screened.rfind(_EXPONENT) != -1 or screened.rfind(_LONG_RUN) != -1:
                _recheck(lines, values, screened, lineno)
            return values, True
    values = []
    for i, raw in enumerate(lines):
        if not _blank(raw):
            values.append(_parse_line(raw, lineno + i))
    return values, True


def _blank(line: bytes | str) -> bool:
    """A line of JSON white space only (json.loads' four: a form feed or a no-break space is
    not blank, it is a bad line)."""
    return not line.strip(b" \t\r\n" if type(line) is bytes else " \t\r\n")  # type: ignore[arg-type]


def _recheck(lines: list[bytes], values: list[Any], screened: bytes, lineno: int) -> None:
    """Parse again with ``_parse_json`` the lines whose numbers orjson may read
    differently (``screened`` is the batch through ``_SCREEN``)."""
    ends = list(accumulate(map(len, lines)))
    # The next hit of each pattern is searched again only once the scan has passed it: when one
    # pattern is rare, searching both from every hit's line would rescan the rest of the batch
    # each time (quadratic in the batch's length).
    patterns = (_EXPONENT, _LONG_RUN)
    nxt = [screened.find(p) for p in patterns]
    while True:
        hits = [h for h in nxt if h != -1]
        if not hits:
            return
        i = bisect_right(ends, min(hits))
        if not _numbers_agree(lines[i]):
            values[i] = _parse_json(lines[i], lineno + i)
        pos = ends[i]
        for k, h in enumerate(nxt):
            if h != -1 and h < pos:
                nxt[k] = screened.find(patterns[k], pos)


def _line_batches(lines: Iterable[Any], readlines: Callable[[], list[Any]] | None = None) -> Iterator[list[Any]]:
    """Lists of lines (up to LINE_BATCH lines and about LINE_BYTES, or what
    ``readlines`` gives), a BOM on the first line removed."""
    take: Callable[[], list[Any]]
    if readlines is not None:
        take = readlines
    else:
        it = iter(lines)

        def take() -> list[Any]:
            batch = []
            size = 0
            for raw in it:
                batch.append(raw)
                try:
                    size += len(raw)
                except TypeError:  # (not a line: its error comes when it is parsed)
                    pass
                if size >= LINE_BYTES or len(batch) >= LINE_BATCH:
                    break
            return batch

    batch = take()
    if batch:
        raw = batch[0]
        if isinstance(raw, bytes) and raw.startswith(_BOM):
            batch[0] = raw[3:]
        elif isinstance(raw, str) and raw.startswith("\ufeff"):
            batch[0] = raw[1:]
    while batch:
        yield batch
        batch = take()


def _jsonl_batches(batches: Iterable[list[Any]], lineno: int = 1) -> Iterator[tuple[list[Any], bool]]:
    """``(values, True)`` for each batch of lines (see ``_parse_batch``);
    ``lineno``: the first line's number."""
    for lines in batches:
        yield _parse_batch(lines, lineno)
        lineno += len(lines)


def _jsonl_pass_one(
    batches: Iterable[list[Any]],
    plan: _ArrayPlan,
    rest: Callable[[], Iterator[_Block]] | None = None,
    *,
    threads: int = 2,
) -> Iterator[tuple[list[Any] | int, bool]]:
    """``_jsonl_batches`` for pass one, which fills ``plan``: once its shape is
    settled (no later element can change how the array is written),
    ``(count, True)`` for a batch the engine's ``jsonl_count`` checks without
    making its values (pass two makes them, to write them).  ``rest``: the
    input after the lines ``batches`` gave so far, in raw blocks (a binary
    file read on from where its lines stopped), taken instead of more lines
    once the shape is settled: no lines are made for it."""
    count = _engine.current().jsonl_count
    lineno = 1
    for lines in batches:
        if count is not None and plan.settled and type(lines[0]) is bytes:
            try:
                counted = count(b"".join(lines), threads=threads)  # TypeError: str lines among them
            except TypeError:
                counted = None
            if counted is not None:
                yield counted[0], True
                lineno += len(lines)
                if rest is not None:
                    break
                continue
        yield _parse_batch(lines, lineno)
        lineno += len(lines)
    else:
        return
    assert count is not None and rest is not None
    for data, start, end in rest():
        counted = count(data, start=start, end=end, threads=threads)
        if counted is not None:
            yield counted[0], True
            lineno += counted[1]
        else:
            lines = io.BytesIO(data[start:end]).readlines()
            yield _parse_batch(lines, lineno)
            lineno += len(lines)


def _jsonl_values(lines: Iterable[bytes | str]) -> Iterator[Any]:
    """Each non-blank line parsed as one JSON value (a BOM on line 1 is skipped)."""
    for values, _ in _jsonl_batches(_line_batches(lines)):
        yield from values


def _file_batches(fp: Any) -> Iterator[list[Any]]:
    """Batches of lines of a file object, read with ``readlines`` (C-level),
    or of any other iterable of lines."""
    readlines = getattr(fp, "readlines", None)
    if readlines is None or not hasattr(fp, "read"):
        return _line_batches(fp)
    return _line_batches(fp, lambda: readlines(LINE_BYTES))


def _range_job(walk: Walk, spool_memory: int, fd: int, start: int, stop: int) -> Callable[[IO[bytes]], Any]:
    """A worker's part of a parallel ``encode_jsonl``: the row lines of bytes
    [start, stop), written to the worker's output, if they form a table.
    Returns ``(fields, rows)``, or None for anything else (the parent then
    encodes the range itself, errors included)."""

    def job(out: IO[bytes]) -> tuple[Fields, int] | None:
        plan = _ArrayPlan(walk, spool_memory, rows_spool=lambda: out)
        for values, _ in _jsonl_batches(_parallel.range_lines(fd, start, stop)):  # an error gives up
            plan.add_batch(values)
            if not plan.rows_ready:
                return None
        plan.flush_rows()
        if plan.n == 0 or plan.fields is None or not plan.rows_ready:
            return None
        return plan.fields, plan.n

    return job


def _ranged_batches(
    plan: _ArrayPlan, walk: Walk, spool_memory: int, fd: int, points: list[int]
) -> Generator[tuple[list[Any] | int, bool], None, None]:
    """Pass one of a parallel ``encode_jsonl`` over the ranges [points[k],
    points[k+1]) of a regular file: the first range is yielded as batches for
    ``plan``; each other range is encoded by a forked worker, and its rows
    are appended to ``plan``'s spool when both are the same table.  If not
    (another shape, an error in that range), that range and all after it are
    yielded as batches like the first.  (Line numbers are not tracked: the
    caller reruns the one-process path on any error.)"""
    workers: list[_parallel.Worker] = []
    try:
        for a, b in zip(points[1:], points[2:]):
            _parallel.Worker(_range_job(walk, spool_memory, fd, a, b), workers)
        chunks = _parallel.range_lines(fd, points[0], points[1])
        yield from _jsonl_pass_one(_line_batches((), lambda: next(chunks, [])), plan)  # (_line_batches removes a BOM)
        for k, worker in enumerate(workers):
            got = None
            if plan.rows_ready:  # (else no part can be appended: no waiting for the workers)
                got = worker.result()
                plan.flush_rows()  # the rows before the worker's (one that fails turns rows_ready off)
            if got is None or not plan.rows_ready or got[0] != plan.fields:
                for w in workers[k:]:
                    w.close()
                yield from _jsonl_pass_one(_parallel.range_lines(fd, points[k + 1], points[-1]), plan)
                return
            worker.out.seek(0)
            shutil.copyfileobj(worker.out, plan.rows, 1 << 20)
            plan.n += got[1]
            worker.close()
    finally:
        for w in workers:
            w.close()


#: Bytes read per step when the native engine writes a JSON Lines table.
NATIVE_CHUNK = 4 << 20


def _native_threads(workers: int | None) -> int:
    """Threads for the native table encoder: ``workers`` (at most 2), or for
    None two when this process may run on two CPUs."""
    if workers is not None:  # (checked >= 1 by encode_jsonl)
        return min(workers, 2)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return 2 if cpus > 1 else 1


def _native_table(
    read: Callable[[int], Any], walk: Walk, spool_memory: int, workers: int | None, keep: IO[bytes] | None = None,
    why: list[str] | None = None,
) -> _ArrayPlan | None:
    """Pass one of ``encode_jsonl`` on the native engine, for the common case:
    every line a flat record with the first record's keys.  Reads the input
    to its end with ``read`` and returns a plan whose rows are ready (pass
    two only writes the header and copies them), or None where the engine
    has no such encoder or declines the input (anything else: another shape,
    a malformed line, a number it leaves to the reference): the caller then
    runs the reference over the whole input, so errors and other shapes
    stay the reference's.  ``keep``: where every byte read is also written
    (a pipe, read once; on None the caller copies the rest there).  ``why``:
    where the engine's reason for declining is appended (``"syntax"``...)."""
    make = _engine.current().jsonl_table
    if make is None or walk.max_depth < 2:  # (its rows are at level 2: the reference refuses them)
        return None
    chunk = read(NATIVE_CHUNK)
    if type(chunk) is not bytes:  # a text file (seekable: the caller reads it again)
        return None
    try:
        table = make(delimiter=walk.d, indent_size=len(walk.unit), threads=_native_threads(workers))
    except ValueError:  # (an indentation past the engine's limit, 4,096: the reference's)
        if keep is not None:
            keep.write(chunk)
        return None
    plan = _ArrayPlan(walk, spool_memory)
    rows = plan._rows_spool()
    names = None
    try:
        while chunk:
            if keep is not None:
                keep.write(chunk)
            text = table.feed(chunk)
            if text is None:
                break
            rows.write(text)
            chunk = read(NATIVE_CHUNK)
        done = None if table.declined else table.close()
        if done is None:
            if why is not None:
                why.append(table.reason or "")
            return None
        text, names, plan.n = done
        rows.write(text)
    finally:
        if names is None:  # declined, or an exception (Ctrl-C, a read error)
            rows.close()
    plan.fields = [(name, None) for name in names]
    plan.tabular, plan.primitive, plan.rows = True, False, rows
    return plan


def encode_jsonl(
    source: LinesSource,
    out: IO[str] | IO[bytes],
    *,
    key: str | None = None,
    indent_size: int = 2,
    delimiter: str = ",",
    default: Default | None = None,
    max_depth: int = DEFAULT_MAX_DEPTH,
    spool_memory: int = DEFAULT_SPOOL_MEMORY,
    missing_as_null: bool = False,
    workers: int | None = None,
) -> int:
    """Encode JSON Lines: each non-blank line is one element of the root array
    (or of the array under ``key``).  Returns the number of elements.

    ``source``: a path (``os.PathLike``, e.g. ``pathlib.Path``; a ``str``
    is refused, as it could be a document), a binary or text file, or an iterable of lines.  A
    seekable file is read twice; anything else is spooled to a temporary file
    on the first pass.  A malformed line raises ToonEncodeError with ``line``
    set.  Numbers are kept exact (floats whose text is not Python's shortest
    form, and huge ints, go through Decimal).

    ``workers``: processes for a big regular file (a path or a binary file
    with a ``fileno``).  None (the default) takes one per available CPU, each
    for at least 32 MiB of input; 1 never forks.  The file is cut at line
    boundaries; forked workers encode the later parts while this process
    does the first.  The output is the same either way: a part that is not
    the same table is done again here, in order, and on any error the whole
    file is encoded again in this one process (so the error is its error).
    Linux only, never with ``missing_as_null``; None forks only a process
    that runs no other threads (forking one that does may deadlock).

    >>> import io
    >>> out = io.StringIO()
    >>> encode_jsonl(io.BytesIO(b'{"a": 1}\\n\\n{"a": 2}\\n'), out)
    2
    >>> out.getvalue()
    '[2]{a}:\\n  1\\n  2'
    """
    walk = _keyed_walk(key, indent_size=indent_size, delimiter=delimiter, default=default, max_depth=max_depth,
                       missing_as_null=missing_as_null)
    if isinstance(source, (str, bytes)):
        raise TypeError(
            "encode_jsonl takes a path (os.PathLike: pathlib.Path(name)), a file or an iterable of lines, not a "
            "str/bytes (a file name and a document would look alike): open the file, or wrap its name in pathlib.Path"
        )
    if isinstance(source, os.PathLike):
        with open(source, "rb") as f:
            return encode_jsonl(
                f, out, key=key, indent_size=indent_size, delimiter=delimiter, default=default, max_depth=max_depth,
                spool_memory=spool_memory, missing_as_null=missing_as_null, workers=workers,
            )
    if workers is not None and workers < 1:
        raise ValueError("workers must be at least 1")
    return _encode_jsonl(source, out, walk, key=key, spool_memory=spool_memory, missing_as_null=missing_as_null,
                         workers=workers, native=True, threads=_native_threads(workers))


def _encode_jsonl(
    source: Any,
    out: IO[str] | IO[bytes],
    walk: Walk,
    *,
    key: str | None,
    spool_memory: int,
    missing_as_null: bool,
    workers: int | None,
    native: bool,
    threads: int,
) -> int:
    """``encode_jsonl`` of a file or an iterable of lines (``native``: try the
    native engine's table encoder first; ``threads``: the native engine's, 1 or 2)."""
    seekable = getattr(source, "seekable", None)
    if seekable is not None and seekable():
        fp: Any = source
        start = fp.tell()
        # (a binary spool: a pipe's bytes kept by the caller, read again here)
        binary = isinstance(fp, (io.RawIOBase, io.BufferedIOBase)) or (
            isinstance(fp, tempfile.SpooledTemporaryFile) and "b" in fp.mode)

        def reread() -> Iterator[list[Any]]:
            fp.seek(start)
            return _file_batches(fp)

        def again() -> Iterable[Any]:
            return _JsonLines(reread, fp if binary else None, start, threads=threads)

        def one_process() -> int:
            plan = _ArrayPlan(walk, spool_memory)
            rest = (lambda: _raw_blocks(fp, ITEMS_BLOCK, bom=False)) if binary else None
            return _encode_array_stream(_jsonl_pass_one(reread(), plan, rest, threads=threads), again, out, key, walk, spool_memory,
                                        plan=plan)

        ranged = None if missing_as_null else _parallel.file_range(fp)
        try:
            why: list[str] = []
            if native:
                plan = _native_table(fp.read, walk, spool_memory, workers, why=why)
                if plan is not None:
                    return _encode_array_stream(iter(()), lambda: iter(()), out, key, walk, spool_memory, plan=plan)
                fp.seek(start)
            parts = _parallel.workers_for(ranged[2] - ranged[1], workers) if ranged is not None else 1
            # (a line the engine found not JSON, or not UTF-8, is most likely an error: the one
            # process that reports it, rather than workers that would stop there and hand over to it)
            if ranged is None or parts == 1 or why[:1] in (["syntax"], ["utf8"]):
                return one_process()
            fd, begin, end = ranged
            plan = _ArrayPlan(walk, spool_memory)
            pass_one = _ranged_batches(plan, walk, spool_memory, fd, _parallel.split_points(fd, begin, end, parts))
            try:
                try:
                    _plan_array(pass_one, walk, plan)
                finally:
                    pass_one.close()  # kills the workers still running (an error, Ctrl-C)
            except ToonEncodeError:
                # A malformed line, say: the one-process run from the start
                # reports it as it would (message, line, column, and where it
                # leaves the file); nothing was written yet.
                plan.drop_rows()
                return one_process()
            fp.seek(end)  # (where the one-process pass one leaves it)
            try:
                return _write_planned(plan, again, out, key, walk)
            except ToonEncodeError as err:
                _under_key(err, key)
                raise
        except ToonEncodeError as e:
            _name_line(e, reread, key)
            raise
    spool = tempfile.SpooledTemporaryFile(max_size=spool_memory)  # noqa: SIM115
    try:
        if native and isinstance(source, (io.RawIOBase, io.BufferedIOBase)):
            # A pipe: read once, kept in the spool; if the native engine
            # declines, the reference encodes the spool (the same bytes).
            plan = _native_table(source.read, walk, spool_memory, workers, keep=spool)
            if plan is not None:
                return _encode_array_stream(iter(()), lambda: iter(()), out, key, walk, spool_memory, plan=plan)
            shutil.copyfileobj(source, spool, 1 << 20)
            spool.seek(0)
            return _encode_jsonl(spool, out, walk, key=key, spool_memory=spool_memory,
                                 missing_as_null=missing_as_null, workers=1, native=False, threads=threads)

        def first() -> Iterator[list[Any]]:
            for lines in _file_batches(source):
                try:
                    whole = type(lines[0]) is bytes and all(map(bytes.endswith, lines, repeat(b"\n")))
                except TypeError:  # str lines among them
                    whole = False
                if whole:
                    spool.write(b"".join(lines))
                else:
                    for raw in lines:
                        line = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
                        spool.write(line if line.endswith(b"\n") else line + b"\n")
                yield lines

        def reread() -> Iterator[list[Any]]:
            spool.seek(0)
            return _file_batches(spool)

        def replay() -> Iterable[Any]:
            return _JsonLines(reread, spool, threads=threads)

        plan = _ArrayPlan(walk, spool_memory)
        try:
            return _encode_array_stream(_jsonl_pass_one(first(), plan, threads=threads), replay, out, key, walk, spool_memory,
                                        plan=plan)
        except ToonEncodeError as e:
            _name_line(e, reread, key)  # (the spool holds every line read so far)
            raise
    finally:
        spool.close()


def _name_line(err: ToonEncodeError, reread: Callable[[], Iterable[list[Any]]], key: str | None) -> None:
    """Set ``err.line`` (and column 1) to the line of the element its path
    starts with (after ``key``), by reading the input again (only on this
    error path: no line numbers are kept while encoding)."""
    at = 0 if key is None else 1
    index = err.path[at] if len(err.path) > at else None
    if err.line is not None or type(index) is not int:
        return
    lineno = 0
    batches = iter(reread())
    for lines in _line_batches((), lambda: next(batches, [])):  # (the first line's BOM removed, as when parsed)
        for raw in lines:
            lineno += 1
            if not _blank(raw):  # blank lines are not elements
                if index == 0:
                    err.line, err.column = lineno, 1
                    return
                index -= 1

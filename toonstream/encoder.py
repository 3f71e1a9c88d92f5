"""Encoding: Python values to TOON lines (``dumps``, ``dump``, ``encode_lines``).

The walk is a trampoline: each container is encoded by a generator that
yields finished lines (str) or a child request ``(key, container, generator)``;
``Walk.lines`` keeps the generators on an explicit stack.  Depth costs list
entries, not Python frames, so a 100k-deep value ends in a ToonEncodeError
(``max_depth``) or in correct output, never in RecursionError; the same stack
detects cycles.

Depth is counted in containers, as ``json`` nests them: the root container
is level 1, and no container (an empty one, a table's rows and their field
groups included) may sit deeper than ``max_depth``.  Whatever the walk
writes then decodes under the same ``max_depth``: the decoder counts scopes
and field groups, never more than the containers they hold.  Each generator
knows its container's level; it is also the length of the walk's stack
while it runs.

Every encoder of the reference engine takes its table decisions from one
shape plan (``_reference/shape.py``): ``dumps``, ``dump`` and
``encode_lines`` run the walk, which asks it; the streaming encoders
(``streaming.py``) plan their arrays with it one element at a time
(``conforms``, ``UnionShape``), and the Arrow encoder asks it about a
schema.  A column-wise fast path that mirrored the walk decision for
decision was removed once the native engine covered ``dumps`` (the cost on
this engine: benchmarks/README.md).
"""

from __future__ import annotations

import contextlib
from operator import itemgetter
from typing import IO, Any, Callable, Iterator, Sequence, Union

from . import _engine
from ._reference.columns import format_columns, format_rows
from ._errors import ToonEncodeError
from ._reference.grammar import DELIMITERS
from ._reference.normalize import PRIMITIVE, normalize, plain_keys
from ._reference.quoting import NEEDS_QUOTE
from ._reference.shape import NATIVE_TYPES, ShapePlan, leaf_count, leaf_paths
from ._reference.writer import Fields, LineSink, header, key_text, primitive_formatter, table_header

__all__ = ["dumps", "dump", "encode_lines"]

Default = Callable[[Any], Any]
_Request = tuple[Union[str, int], Any, Iterator[Any]]

DEFAULT_MAX_DEPTH = 10_000
#: Rows formatted per column-wise batch (dumps and the streaming encoders).
ROW_BATCH = 1024
#: Rows per chunk when dumps formats a table (smaller chunks stay in the CPU cache: 2048 measured best).
TABLE_BATCH = 2048
_DELIMITER_NAMES = {"comma": ",", "tab": "\t", "pipe": "|"}


#: The widest indentation unit the encoders write: the decoders' default
#: max_line_length (a wider one could not be read back under the defaults).
MAX_INDENT_SIZE = 64 * 1024 * 1024


def check_spool_memory(spool_memory: int) -> int:
    """The streaming encoders' ``spool_memory``: an int (TypeError otherwise),
    0 or more (ValueError), checked before any work.

    >>> check_spool_memory(8 << 20)
    8388608
    """
    if type(spool_memory) is bool or not isinstance(spool_memory, int):
        raise TypeError(f"spool_memory must be an int (bytes), got {type(spool_memory).__name__}")
    if spool_memory < 0:
        raise ValueError("spool_memory must be >= 0")
    return spool_memory


def check_indent_size(indent_size: int) -> int:
    """The encoders' ``indent_size``: an int (TypeError otherwise), from 1 to
    ``MAX_INDENT_SIZE`` (ValueError; 10**18 made a MemoryError).

    >>> check_indent_size(4)
    4
    """
    if type(indent_size) is bool or not isinstance(indent_size, int):
        raise TypeError(f"indent_size must be an int, got {type(indent_size).__name__}")
    if indent_size < 1:
        raise ValueError("indent_size must be >= 1")
    if indent_size > MAX_INDENT_SIZE:
        raise ValueError(f"indent_size must be <= {MAX_INDENT_SIZE} (the decoders' max_line_length default)")
    return indent_size


def check_max_depth(max_depth: int) -> int:
    """The encoders' ``max_depth``, checked as ``indent_size`` is: an int
    (TypeError for anything else, None included), >= 0 (ValueError).

    >>> check_max_depth(3)
    3
    """
    if type(max_depth) is bool or not isinstance(max_depth, int):
        raise TypeError(f"max_depth must be an int, got {type(max_depth).__name__}")
    if max_depth < 0:
        raise ValueError("max_depth must be >= 0")
    return max_depth


def sorted_keys(obj: Any, default: Default | None, max_depth: int) -> Any:
    """``obj`` with every object's keys in sorted order (``sort_keys=True``,
    as ``json.dumps`` sorts them): a copy of its containers, host types
    normalized on the way (``default`` called for them here, once, as the
    encoder would), scalars shared.

    Iterative (depth costs list entries).  What the encoder refuses is left
    as it is for the encoder to report, with the same message and path: a
    value ``normalize`` rejects, an object with a key that is not a str (str
    keys only are sortable).  Too deep a value is copied whole (it ends, being
    finite), then refused by the encoder's ``max_depth`` check; a cycle is
    reported here (a copy would not hold the same object twice), unless it
    closes below ``max_depth`` levels, where the encoder reports the depth.

    >>> sorted_keys({"b": 1, "a": [{"d": 2, "c": 3}]}, None, 10)
    {'a': [{'c': 3, 'd': 2}], 'b': 1}
    """

    def level(v: Any) -> tuple[Any, Iterator[tuple[Any, Any]] | None]:
        """``v`` normalized; for a container its empty copy and children."""
        if type(v) in PRIMITIVE:
            return v, None
        if type(v) not in (dict, list):
            try:
                v = normalize(v, default)
            except ToonEncodeError:
                return v, None
        if type(v) is dict:
            if not all(isinstance(k, str) for k in v):
                return v, None
            return {}, iter(sorted(v.items(), key=itemgetter(0)))
        if type(v) is list:
            return [], enumerate(v)
        return v, None

    root, children = level(obj)
    if children is None:
        return root
    # per open container: its copy, its remaining children, the original's id, its key in its parent
    stack: list[tuple[Any, Iterator[tuple[Any, Any]], int, Any]] = [(root, children, id(obj), None)]
    active = {id(obj)}
    while stack:
        copy, todo, ident, _ = stack[-1]
        nxt = next(todo, None)
        if nxt is None:
            stack.pop()
            active.discard(ident)
            continue
        key, child = nxt
        value, grandchildren = level(child)
        if grandchildren is not None:
            if id(child) in active and len(stack) < max_depth:  # (the child's level: len(stack) + 1)
                path = tuple(frame[3] for frame in stack[1:]) + (key,)
                raise ToonEncodeError("circular reference", path=path)
            if id(child) in active:
                value = child  # (the original: the encoder refuses its depth where this copy would)
            else:
                active.add(id(child))
                stack.append((value, grandchildren, id(child), key))
        if type(copy) is list:
            copy.append(value)
        else:
            copy[key] = value
    return root


def check_delimiter(delimiter: str) -> str:
    """The delimiter character for a ``delimiter`` option (a character or
    its name); ValueError for anything else.

    >>> check_delimiter("tab")
    '\\t'
    """
    delimiter = _DELIMITER_NAMES.get(delimiter, delimiter)
    if delimiter not in DELIMITERS:
        raise ValueError(f"delimiter must be ',', '\\t' or '|' (or comma/tab/pipe), got {delimiter!r}")
    return delimiter


def _changed() -> ToonEncodeError:
    """A row that no longer fits the table planned from it (the plan looked at every row
    first): its values changed between the two looks."""
    return ToonEncodeError(
        "a row changed after the table was planned from it (a default that gives another value "
        "for the same object, records that differ when read again, or a value changed while it was encoded)"
    )


class Walk:
    def __init__(
        self,
        *,
        indent_size: int,
        delimiter: str,
        default: Default | None,
        max_depth: int,
        missing_as_null: bool = False,
        once: bool = False,
    ) -> None:
        """``once``: ``default``'s result for each value is kept for the walk, so
        that it is called once per value (as ``json.dumps`` calls it), though
        the walk looks at an array's elements to plan its shape, then again to
        write them: for one value in memory (``dumps``), not a stream of them."""
        self.missing_as_null = missing_as_null
        self.unit = " " * check_indent_size(indent_size)
        self.d = check_delimiter(delimiter)
        self.default = default
        self.max_depth = check_max_depth(max_depth)
        # The limit as the caller gave it, for messages.  A streaming encoder
        # writing records under a key lowers max_depth by one (the key's
        # object is not on its stack) but not this.
        self.depth_shown = max_depth
        # id -> (the value, held so that its id stays its own; what normalize made of it)
        self._normalized: dict[int, tuple[Any, Any]] | None = {} if once and default is not None else None
        self.prim = primitive_formatter(self.d, self.norm)
        self.shape = ShapePlan(self.norm, max_depth)

    def norm(self, v: Any) -> Any:
        if type(v) in NATIVE_TYPES:
            return v
        kept = self._normalized
        if kept is None:
            return normalize(v, self.default)
        hit = kept.get(id(v))
        if hit is not None:
            return hit[1]
        out = normalize(v, self.default)
        kept[id(v)] = (v, out)
        return out

    def _norm_all(self, arr: list[Any]) -> list[Any]:
        norm = self.norm
        try:
            return [norm(x) for x in arr]
        except ToonEncodeError as e:
            for i, x in enumerate(arr):  # error path only: find the index
                try:
                    norm(x)
                except ToonEncodeError:
                    e.path = (i,) + e.path
                    break
            raise

    # ------------------------------------------------------------------ driver

    def lines(self, value: Any) -> Iterator[str]:
        """All lines of ``value`` as the document root."""
        return self.run(self._root(value), value)

    def run(self, gen: Iterator[Any], container: Any) -> Iterator[str]:
        """Drive a line generator (and the child generators it requests)."""
        stack: list[Iterator[Any]] = [gen]
        path: list[Union[str, int]] = []  # one key per child generator on the stack
        active: list[int] = [id(container)]  # ids of the containers being encoded (cycle check)
        max_depth = self.max_depth
        try:
            while stack:
                item = next(stack[-1], None)
                if item is None:
                    stack.pop()
                    if stack:
                        path.pop()
                        active.pop()
                    continue
                if type(item) is str:
                    yield item
                    continue
                key, container, gen = item
                if len(stack) >= max_depth:  # (the child's level: len(stack) + 1)
                    path.append(key)
                    raise self.too_deep()
                if id(container) in active:
                    path.append(key)
                    raise ToonEncodeError("circular reference")
                path.append(key)
                active.append(id(container))
                stack.append(gen)
        except ToonEncodeError as e:
            e.path = tuple(path) + e.path
            raise

    def too_deep(self, *path: str | int) -> ToonEncodeError:
        """The error for a container past ``max_depth`` (at ``path`` below the
        generator that meets it)."""
        return ToonEncodeError(f"value nested deeper than max_depth ({self.depth_shown})", path=path)

    def _empty(self, key: str | int, level: int) -> None:
        """Check an empty container (``key`` of a container at ``level``): it
        has no generator of its own, but it is a level all the same."""
        if level >= self.max_depth:
            raise self.too_deep(key)

    # ------------------------------------------------------------------ values

    def _root(self, value: Any) -> Iterator[Any]:
        v = self.norm(value)
        t = type(v)
        if t in PRIMITIVE:
            yield self.prim(v)
            return
        if self.max_depth < 1:
            raise self.too_deep()
        if t is dict:
            if not v:
                return  # §8: an empty root object is an empty document
            fields = self.shape.keyed_fields(v, 1)
            if fields is not None:
                yield from self._keyed("", v, fields, 0)
            else:
                yield from self._fields(v, 0, None, 1)
        elif not v:
            yield "[]"
        else:
            yield from self._array("", v, 0, 1, tabular=True)

    def _fields(self, obj: dict[Any, Any], depth: int, first_lead: str | None, level: int) -> Iterator[Any]:
        """The fields of a non-empty object at ``depth`` (§8) and nesting
        ``level``; the first line may carry a list-item hyphen instead of
        indentation (§10)."""
        ind = self.unit * depth
        lead = ind if first_lead is None else first_lead
        checked = False
        for k, raw in obj.items():
            if type(k) is not str and not checked:
                # A str subclass key is written as its contents (key_text);
                # two keys with the same contents are an error, checked over
                # the whole object once its first key that is not an exact
                # str comes (an object of exact str keys needs no check).
                plain_keys(obj)
                checked = True
            ek = key_text(k)  # a bad key is reported at its object's path
            try:
                v = self.norm(raw)
            except ToonEncodeError as e:
                e.path = (k,) + e.path
                raise
            t = type(v)
            if t in PRIMITIVE:
                try:
                    yield f"{lead}{ek}: {self.prim(v)}"
                except ToonEncodeError as e:
                    e.path = (k,) + e.path
                    raise
            elif t is dict:
                if not v:
                    self._empty(k, level)
                    yield f"{lead}{ek}:"
                else:
                    try:
                        fields = self.shape.keyed_fields(v, level + 1)
                    except ToonEncodeError as e:
                        e.path = (k,) + e.path
                        raise
                    if fields is not None:
                        yield (k, v, self._keyed(lead + ek, v, fields, depth))
                    else:
                        yield f"{lead}{ek}:"
                        yield (k, v, self._fields(v, depth + 1, None, level + 1))
            else:  # list
                if not v:
                    self._empty(k, level)
                    yield f"{lead}{ek}: []"
                else:
                    yield (k, v, self._array(lead + ek, v, depth, level + 1, tabular=True))
            lead = ind

    def _array(self, head: str, arr: list[Any], depth: int, level: int, *, tabular: bool) -> Iterator[Any]:
        """A non-empty array at nesting ``level`` whose header line starts with
        ``head`` at ``depth``; its rows or items go at ``depth + 1``."""
        d = self.d
        kinds = set(map(type, arr))
        items = arr if kinds <= NATIVE_TYPES else self._norm_all(arr)
        if items is not arr:
            kinds = set(map(type, items))
        n = len(items)
        if kinds <= PRIMITIVE:  # §9.1 inline
            prim = self.prim
            cells = []
            for i, x in enumerate(items):
                try:
                    cells.append(prim(x))
                except ToonEncodeError as e:
                    e.path = (i,) + e.path
                    raise
            yield f"{header(head, n, d)} {d.join(cells)}"
            return
        if tabular:
            table = self.shape.table(items, level)
            if table is not None:  # §9.3
                fields, leaves = table
                yield table_header(head, n, d, fields)
                yield from self._table_rows(items, fields, leaves, depth + 1)
                return
            if self.missing_as_null:
                union = self.shape.union_fields(items, level)
                if union is not None:  # opt-in: a missing key is written as null
                    yield table_header(head, n, d, union, lambda: items)
                    yield from self.rows_text(items, union, depth + 1, lenient=True)
                    return
        yield header(head, n, d)  # §9.4
        yield from self._items(items, depth + 1, level)

    def _items(self, items: list[Any], depth: int, level: int) -> Iterator[Any]:
        """The list items (§9.4) at ``depth`` of an array at ``level``."""
        lead = self.unit * depth + "- "
        for i, x in enumerate(items):
            t = type(x)
            if t in PRIMITIVE:
                try:
                    yield lead + self.prim(x)
                except ToonEncodeError as e:
                    e.path = (i,) + e.path
                    raise
            elif t is list:
                if not x:
                    self._empty(i, level)
                    yield header(lead, 0, self.d)  # §9.2: "- [0]:", never "- []"
                else:
                    yield (i, x, self._array(lead, x, depth, level + 1, tabular=False))
            elif not x:
                self._empty(i, level)
                yield lead[:-1]  # §10 empty object: a bare "-"
            else:
                yield (i, x, self._fields(x, depth + 1, lead, level + 1))

    # ------------------------------------------------------------------ tables

    def _cells(self, fields: Fields, lenient: bool = False) -> Callable[[dict[str, Any]], tuple[Any, ...]]:
        """A function from a row object to its leaf values, depth-first (§9.3).

        ``lenient``: a top-level key the object lacks gives None (missing_as_null)."""
        if lenient:
            names = [name for name, _ in fields]
            nested = {name: self._cells(sub) for name, sub in fields if sub is not None}
            if not nested:
                return lambda o: tuple(map(o.get, names))

            def lenient_cells(o: dict[str, Any]) -> tuple[Any, ...]:
                out: list[Any] = []
                for name in names:
                    get = nested.get(name)
                    if get is None:
                        out.append(o.get(name))
                    else:
                        out.extend(get(self.norm(o[name])))
                return tuple(out)

            return lenient_cells
        if all(sub is None for _, sub in fields):
            names = [name for name, _ in fields]
            if len(names) == 1:
                only = names[0]
                return lambda o: (o[only],)
            return itemgetter(*names)
        paths = leaf_paths(fields)
        norm = self.norm

        def cells(o: dict[str, Any]) -> tuple[Any, ...]:
            out = []
            for p in paths:
                v: Any = o
                for name in p:
                    v = norm(v)[name]
                out.append(v)
            return tuple(out)

        return cells

    def row_writer(self, fields: Fields, depth: int, *, lenient: bool = False) -> Callable[[Any], str]:
        """A function from one row object to its row line at ``depth`` (§9.3);
        ``lenient`` as in :meth:`_cells`."""
        ind = self.unit * depth
        join = self.d.join
        prim = self.prim
        get = self._cells(fields, lenient)
        norm = self.norm
        plain = NEEDS_QUOTE[self.d].search

        def row(o: Any) -> str:
            if type(o) is not dict:
                o = norm(o)
            try:
                cells = get(o)
            except (TypeError, KeyError, IndexError) as e:
                raise _changed() from e
            # Inline fast paths for the commonest cells (plain strings, small
            # ints); everything else goes through the full formatter.
            return ind + join(
                [
                    v
                    if type(v) is str and plain(v) is None
                    else str(v)
                    if type(v) is int and -_SMALL_INT < v < _SMALL_INT
                    else prim(v)
                    for v in cells
                ]
            )

        return row

    def rows_text(
        self, objs: Sequence[Any], fields: Fields, depth: int, *, batch: int = ROW_BATCH, lenient: bool = False
    ) -> Iterator[str]:
        """Row lines at ``depth`` for row objects, as multi-line chunks of up
        to ``batch`` rows (formatted column-wise, see ``_columns.py``)."""
        get = self._cells(fields, lenient)
        norm = self.norm
        width = leaf_count(fields)
        ind = self.unit * depth
        for start in range(0, len(objs), batch):
            part = objs[start : start + batch]
            try:
                tuples = [get(o if type(o) is dict else norm(o)) for o in part]
                yield format_rows(tuples, width, self.d, self.prim, ind)
            except ToonEncodeError as e:
                self._locate_row(e, fields, depth, part, start, lenient=lenient)
                raise
            except (TypeError, KeyError, IndexError) as e:
                raise _changed() from e

    def _table_rows(
        self, objs: list[Any], fields: Fields, leaves: list[tuple[list[Any], set[type]]], depth: int
    ) -> Iterator[str]:
        """Row lines at ``depth`` from the leaf columns ``ShapePlan.table`` found, as
        multi-line chunks of up to ``TABLE_BATCH`` rows."""
        cols = [col for col, _ in leaves]
        kinds = [k for _, k in leaves]
        ind = self.unit * depth
        d = self.d
        prim = self.prim
        n = len(objs)
        for start in range(0, n, TABLE_BATCH):
            end = start + TABLE_BATCH
            try:
                part = cols if start == 0 and end >= n else [col[start:end] for col in cols]
                yield format_columns(part, d, prim, ind, kinds)
            except ToonEncodeError as e:
                self._locate_row(e, fields, depth, objs[start:end], start)
                raise

    def _locate_row(
        self, e: ToonEncodeError, fields: Fields, depth: int, part: Sequence[Any], start: int, *, lenient: bool = False
    ) -> None:
        """Error path of the batched table writers: put the failing row's
        index (``start`` + its place in ``part``) in front of ``e.path``.
        ``lenient``: as the writer's cells (a missing key is a null: rows
        that lack one must not fail here, before the bad row)."""
        row = self.row_writer(fields, depth, lenient=lenient)
        for i, o in enumerate(part):
            try:
                row(o)
            except ToonEncodeError:
                where: tuple[str | int, ...] = (start + i, *self._cell_path(fields, o, lenient))
                e.path = where + e.path
                return

    def _cell_path(self, fields: Fields, o: Any, lenient: bool = False) -> tuple[str, ...]:
        """The keys of the first cell of row object ``o`` whose value the
        writer refuses (none: the row fails otherwise)."""
        with contextlib.suppress(ToonEncodeError):
            values = self._cells(fields, lenient)(o if type(o) is dict else self.norm(o))
            for path, v in zip(leaf_paths(fields), values):
                try:
                    self.prim(v)
                except ToonEncodeError:
                    return path
        return ()

    def entry_writer(self, fields: Fields, depth: int) -> Callable[[Any, Any], str]:
        """A function from (entry key, entry object) to its entry row at ``depth`` (§9.5)."""
        row = self.row_writer(fields, 0)
        ind = self.unit * depth
        return lambda k, o: f"{ind}{key_text(k)}: {row(o)}"

    def _keyed(self, head: str, obj: dict[str, Any], fields: Fields, depth: int) -> Iterator[str]:
        obj = plain_keys(obj)  # the entry keys, as in ``_fields``
        yield table_header(head, len(obj), self.d, fields, lambda: obj, keyed=True)
        entry = self.entry_writer(fields, depth + 1)
        for k, o in obj.items():
            try:
                yield entry(k, o)
            except ToonEncodeError as e:
                e.path = (k, *self._cell_path(fields, o)) + e.path
                raise


_SMALL_INT = 10**18
_LITERALS = {True: "true", False: "false"}


def encode_lines(
    obj: Any,
    *,
    indent_size: int = 2,
    delimiter: str = ",",
    default: Default | None = None,
    max_depth: int = DEFAULT_MAX_DEPTH,
    missing_as_null: bool = False,
    sort_keys: bool = False,
) -> Iterator[str]:
    """Yield the TOON lines of ``obj`` one at a time (no line terminators).

    >>> list(encode_lines({"tags": ["a", "b"], "n": 1}))
    ['tags[2]: a,b', 'n: 1']
    """
    check_indent_size(indent_size)
    check_max_depth(max_depth)
    if sort_keys:
        obj = sorted_keys(obj, default, max_depth)
    walk = Walk(
        indent_size=indent_size, delimiter=delimiter, default=default, max_depth=max_depth, missing_as_null=missing_as_null,
        once=True,
    )
    for chunk in walk.lines(obj):
        if "\n" in chunk:  # a batch of table rows
            yield from chunk.split("\n")
        else:
            yield chunk


#: characters per write when dump() writes a text made at once
_DUMP_PIECE = 1 << 20


def _engine_text(
    obj: Any, indent_size: int, delimiter: str, default: Default | None, max_depth: int, missing_as_null: bool
) -> str | None:
    """The engine's text of ``obj`` where it has a ``dumps`` that takes it, else None (the walk's turn)."""
    engine = _engine.current()
    # (with a default too: the engine declines a value of a type it has no mapping for, the
    # only ones default is called for, and the walk then calls it, once per value)
    if engine.dumps is None:
        return None
    text = engine.dumps(obj, indent_size=indent_size, delimiter=delimiter, max_depth=max_depth, missing_as_null=missing_as_null)
    return None if text is NotImplemented else text


def dumps(
    obj: Any,
    *,
    indent_size: int = 2,
    delimiter: str = ",",
    default: Default | None = None,
    max_depth: int = DEFAULT_MAX_DEPTH,
    missing_as_null: bool = False,
    sort_keys: bool = False,
) -> str:
    """Encode ``obj`` as a TOON document (LF line ends, no trailing newline).

    ``delimiter``: ``","`` (default), ``"\\t"`` or ``"|"`` (or ``"comma"``,
    ``"tab"``, ``"pipe"``).  ``default``: called for values of types that have no
    built-in mapping (like ``json.dumps``); it returns a serializable value.
    ``missing_as_null`` (off by default, lossy): an array of objects that
    differ only by missing keys becomes a table over the union of keys, a
    missing key written as ``null`` (it reads back as null, not as missing).
    ``sort_keys``: every object's keys in sorted order, as ``json.dumps``
    writes them (objects that then list their keys in one order make tables).

    >>> print(dumps({"users": [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Bob"}]}))
    users[2]{id,name}:
      1,Ada
      2,Bob
    >>> dumps([{"b": 1, "a": 2}, {"a": 3, "b": 4}], sort_keys=True)
    '[2]{a,b}:\\n  2,1\\n  3,4'
    """
    check_indent_size(indent_size)
    check_max_depth(max_depth)
    if sort_keys:
        obj = sorted_keys(obj, default, max_depth)
    text = _engine_text(obj, indent_size, delimiter, default, max_depth, missing_as_null)
    if text is not None:
        return text
    walk = Walk(
        indent_size=indent_size, delimiter=delimiter, default=default, max_depth=max_depth, missing_as_null=missing_as_null,
        once=True,
    )
    return "\n".join(walk.lines(obj))  # pieces are lines or batches of row lines


def dump(
    obj: Any,
    fp: IO[str] | IO[bytes],
    *,
    indent_size: int = 2,
    delimiter: str = ",",
    default: Default | None = None,
    max_depth: int = DEFAULT_MAX_DEPTH,
    missing_as_null: bool = False,
    sort_keys: bool = False,
) -> None:
    """Write ``obj`` as TOON to a text or binary file, in chunks of lines
    (options as for :func:`dumps`).  The lines go out as they are made: a
    value that fails part way (``ToonEncodeError``) leaves the lines before
    it in ``fp`` (write to a temporary file and rename it, as the CLI's
    ``-o`` does, or use ``dumps``).

    >>> import io
    >>> buf = io.StringIO(); dump([1, 2], buf); buf.getvalue()
    '[2]: 1,2'
    """
    check_indent_size(indent_size)
    check_max_depth(max_depth)
    if sort_keys:
        obj = sorted_keys(obj, default, max_depth)
    sink = LineSink(fp)
    text = _engine_text(obj, indent_size, delimiter, default, max_depth, missing_as_null)
    if text is not None:
        # the whole text at once (about the size of the value it came from), written in pieces
        for start in range(0, len(text), _DUMP_PIECE):
            sink.part(text[start : start + _DUMP_PIECE])
        sink.flush()
        return
    walk = Walk(
        indent_size=indent_size, delimiter=delimiter, default=default, max_depth=max_depth, missing_as_null=missing_as_null,
        once=True,
    )
    for piece in walk.lines(obj):
        sink.line(piece)
    sink.flush()

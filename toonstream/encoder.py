"""Encoding: Python values to TOON lines (``dumps``, ``dump``, ``encode_lines``).

The walk is a trampoline: each container is encoded by a generator that
yields finished lines (str) or a child request ``(key, container, generator)``;
``Walk.lines`` keeps the generators on an explicit stack.  Depth costs list
entries, not Python frames, so a 100k-deep value ends in a ToonEncodeError
(``max_depth``) or in correct output, never in RecursionError; the same stack
detects cycles.

Every encoder of the reference engine makes its decisions here: ``dumps``,
``dump`` and ``encode_lines`` run the walk, and the streaming encoders
(``streaming.py``) plan their arrays with its shape checks
(``_uniform_fields``, ``conforms``, :class:`UnionShape`).  A column-wise fast
path that mirrored the walk decision for decision was removed once the native
engine covered ``dumps`` (the cost on this engine: benchmarks/README.md).
"""

from __future__ import annotations

from operator import itemgetter
from typing import IO, Any, Callable, Iterator, Sequence, Union

from . import _engine
from ._reference.columns import format_columns, format_rows
from ._errors import ToonEncodeError
from ._reference.grammar import DELIMITERS
from ._reference.normalize import PRIMITIVE, normalize, plain_keys
from ._reference.quoting import NEEDS_QUOTE
from ._reference.writer import Fields, LineSink, header, key_text, primitive_formatter

__all__ = ["dumps", "dump", "encode_lines"]

Default = Callable[[Any], Any]
_Request = tuple[Union[str, int], Any, Iterator[Any]]

DEFAULT_MAX_DEPTH = 10_000
#: Rows formatted per column-wise batch (dumps and the streaming encoders).
ROW_BATCH = 1024
#: Rows per chunk when dumps formats a table (smaller chunks stay in the CPU cache: 2048 measured best).
TABLE_BATCH = 2048
_DELIMITER_NAMES = {"comma": ",", "tab": "\t", "pipe": "|"}


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
            if id(child) in active and len(stack) <= max_depth:
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


class Walk:
    def __init__(
        self,
        *,
        indent_size: int,
        delimiter: str,
        default: Default | None,
        max_depth: int,
        missing_as_null: bool = False,
    ) -> None:
        if indent_size < 1:
            raise ValueError("indent_size must be >= 1")
        self.missing_as_null = missing_as_null
        self.unit = " " * indent_size
        self.d = check_delimiter(delimiter)
        self.default = default
        self.max_depth = max_depth
        # The limit as the caller gave it: for messages, and for a table's
        # shape (its levels count from the table, wherever it sits).  A
        # streaming encoder writing records under a key lowers max_depth by
        # one (the key's object is not on its stack) but not this.
        self.depth_shown = max_depth
        self.prim = primitive_formatter(self.d, default)

    def norm(self, v: Any) -> Any:
        if type(v) in _FAST_NATIVE:
            return v
        return normalize(v, self.default)

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
                if len(stack) > max_depth:
                    path.append(key)
                    raise ToonEncodeError(f"value nested deeper than max_depth ({self.depth_shown})")
                if id(container) in active:
                    path.append(key)
                    raise ToonEncodeError("circular reference")
                path.append(key)
                active.append(id(container))
                stack.append(gen)
        except ToonEncodeError as e:
            e.path = tuple(path) + e.path
            raise

    # ------------------------------------------------------------------ values

    def _root(self, value: Any) -> Iterator[Any]:
        v = self.norm(value)
        t = type(v)
        if t is dict:
            if not v:
                return  # §8: an empty root object is an empty document
            fields = self._keyed_fields(v)
            if fields is not None:
                yield from self._keyed("", v, fields, 0)
            else:
                yield from self._fields(v, 0, None)
        elif t is list:
            if not v:
                yield "[]"
            else:
                yield from self._array("", v, 0, tabular=True)
        else:
            yield self.prim(v)

    def _fields(self, obj: dict[Any, Any], depth: int, first_lead: str | None) -> Iterator[Any]:
        """The fields of a non-empty object at ``depth`` (§8); the first line may
        carry a list-item hyphen instead of indentation (§10)."""
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
                    yield f"{lead}{ek}:"
                else:
                    fields = self._keyed_fields(v)
                    if fields is not None:
                        yield (k, v, self._keyed(lead + ek, v, fields, depth))
                    else:
                        yield f"{lead}{ek}:"
                        yield (k, v, self._fields(v, depth + 1, None))
            else:  # list
                if not v:
                    yield f"{lead}{ek}: []"
                else:
                    yield (k, v, self._array(lead + ek, v, depth, tabular=True))
            lead = ind

    def _array(self, head: str, arr: list[Any], depth: int, *, tabular: bool) -> Iterator[Any]:
        """A non-empty array whose header line starts with ``head`` at ``depth``;
        its rows or items go at ``depth + 1``."""
        d = self.d
        kinds = set(map(type, arr))
        items = arr if kinds <= _FAST_NATIVE else self._norm_all(arr)
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
            table = self._table(items)
            if table is not None:  # §9.3
                fields, leaves = table
                yield header(head, n, d, fields)
                yield from self._table_rows(items, fields, leaves, depth + 1)
                return
            if self.missing_as_null:
                union = self._union_fields(items)
                if union is not None:  # opt-in: a missing key is written as null
                    yield header(head, n, d, union)
                    yield from self.rows_text(items, union, depth + 1, lenient=True)
                    return
        yield header(head, n, d)  # §9.4
        yield from self._items(items, depth + 1)

    def _items(self, items: list[Any], depth: int) -> Iterator[Any]:
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
                    yield header(lead, 0, self.d)  # §9.2: "- [0]:", never "- []"
                else:
                    yield (i, x, self._array(lead, x, depth, tabular=False))
            elif not x:
                yield lead[:-1]  # §10 empty object: a bare "-"
            else:
                yield (i, x, self._fields(x, depth + 1, lead))

    # ------------------------------------------------------------------ tables

    def _uniform_fields(self, objs: list[Any]) -> Fields | None:
        """The header field tree if ``objs`` qualify for tabular form (§9.3), else None.

        Iterative over nested-uniform columns; gives up (None) past max_depth,
        which also stops self-referencing rows.
        """
        table = self._table(objs)
        return None if table is None else table[0]

    def _table(self, objs: list[Any], dicts: bool = False) -> tuple[Fields, list[tuple[list[Any], set[type]]]] | None:
        """``_uniform_fields`` plus what it saw on the way: the leaf columns
        (normalized values) in header order, each with its set of types.
        ``dicts``: the caller knows that every one of ``objs`` is a dict."""
        root: Fields = []
        # (a group, or None: the end of the subtree below the innermost open group)
        todo: list[tuple[list[Any], Fields, int, tuple[str, ...]] | None] = [(objs, root, 0, ())]
        leaves: dict[tuple[str, ...], tuple[list[Any], set[type]]] = {}
        norm = self.norm
        # The first rows of the groups open above this one.  A first row met again below itself
        # is a cycle (the walk reports it): without this check, a cyclic row whose dict values
        # repeat (d = {"x": d, "y": d}) would double the groups at every level down to max_depth.
        open_firsts: list[int] = []
        open_set: set[int] = set()
        while todo:
            entry = todo.pop()
            if entry is None:
                open_set.discard(open_firsts.pop())
                continue
            group, out, level, path = entry
            if level > self.depth_shown:
                return None
            first = group[0]
            if type(first) is not dict or not first:
                return None
            if id(first) in open_set:
                return None
            open_firsts.append(id(first))
            open_set.add(id(first))
            todo.append(None)
            # C-level checks over the whole group: all dicts, all of one size;
            # then every key of the first is in every one (itemgetter raises
            # KeyError otherwise), so all have the same key set.
            width = len(first)
            if not (dicts and group is objs) and set(map(type, group)) != {dict}:
                return None
            if set(map(len, group)) != {width}:
                return None
            names = list(first)
            # The first row's keys are the header: exact strs only (a row of
            # other keys, str subclasses too, is written as an object, whose
            # keys are their contents).  Other rows are matched to the header
            # by dict lookup (see ``_STR``).
            if any(type(k) is not str for k in names):
                return None
            try:
                columns = _extract(group, names)
            except KeyError:
                return None
            for k, col in zip(names, columns):
                kinds = set(map(type, col))
                if not kinds <= _FAST_NATIVE:  # host types: normalize, then classify
                    col = [norm(v) for v in col]
                    kinds = set(map(type, col))
                if kinds <= PRIMITIVE:
                    out.append((k, None))
                    leaves[path + (k,)] = (col, kinds)
                elif kinds == {dict}:
                    sub: Fields = []
                    out.append((k, sub))
                    todo.append((col, sub, level + 1, path + (k,)))
                else:
                    return None
        return root, [leaves[p] for p in _leaf_paths(root)]

    def _flat_table(self, objs: list[dict[Any, Any]], depth: int) -> tuple[Fields, list[str]] | None:
        """Dicts that make a §9.3 table of primitive columns, as ``_table``
        and ``_table_rows`` write it: the header's fields and the row lines at
        ``depth`` (chunks of ``TABLE_BATCH`` rows).  Each chunk's cells are
        taken out, classified and formatted while its rows are in the CPU
        cache.  None for anything else (keys that differ, nested or host
        values: ``_table`` decides those); ToonEncodeError from a cell.
        Each chunk starts with "\\n" (each of its lines does)."""
        first = objs[0]
        if not first:
            return None
        names = list(first)
        width = len(names)
        if any(type(k) is not str for k in names):
            return None  # (as in ``_table``)
        getters = [itemgetter(k) for k in names]
        ind = self.unit * depth
        d = self.d
        prim = self.prim
        chunks: list[str] = []
        for start in range(0, len(objs), TABLE_BATCH):
            part = objs[start : start + TABLE_BATCH]
            # same size and every field present: the same keys
            if set(map(len, part)) != {width}:
                return None
            try:
                cols = [list(map(g, part)) for g in getters]
            except KeyError:
                return None
            kinds = [set(map(type, col)) for col in cols]
            for k in kinds:
                if not k <= PRIMITIVE:
                    return None
            chunks.append(format_columns(cols, d, prim, ind, kinds, lead=True))
        return [(k, None) for k in names], chunks

    def _union_fields(self, objs: list[Any]) -> Fields | None:
        """``missing_as_null`` tables: non-empty objects that differ only by
        missing keys.  Fields are the union of keys in first-seen order; a key
        missing anywhere must hold primitives wherever present (it becomes
        null), a key present everywhere follows the §9.3 column rules."""
        union = UnionShape(self)
        for o in objs:
            union.add(o)
        return union.fields(len(objs))

    def _keyed_fields(self, obj: dict[Any, Any]) -> Fields | None:
        """§9.5 keyed tabular detection: >= 2 entries, all uniform non-empty objects."""
        if len(obj) < 2:
            return None
        values = [self.norm(v) for v in obj.values()]
        if any(type(v) is not dict for v in values):
            return None
        return self._uniform_fields(values)

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
        paths = _leaf_paths(fields)
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

    def row_writer(self, fields: Fields, depth: int) -> Callable[[Any], str]:
        """A function from one row object to its row line at ``depth`` (§9.3)."""
        ind = self.unit * depth
        join = self.d.join
        prim = self.prim
        get = self._cells(fields)
        norm = self.norm
        plain = NEEDS_QUOTE[self.d].search

        def row(o: Any) -> str:
            if type(o) is not dict:
                o = norm(o)
            # Inline fast paths for the commonest cells (plain strings, small
            # ints); everything else goes through the full formatter.
            return ind + join(
                [
                    v
                    if type(v) is str and plain(v) is None
                    else str(v)
                    if type(v) is int and -_SMALL_INT < v < _SMALL_INT
                    else prim(v)
                    for v in get(o)
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
        width = _leaf_count(fields)
        ind = self.unit * depth
        for start in range(0, len(objs), batch):
            part = objs[start : start + batch]
            try:
                tuples = [get(o if type(o) is dict else norm(o)) for o in part]
                yield format_rows(tuples, width, self.d, self.prim, ind)
            except ToonEncodeError as e:
                self._locate_row(e, fields, depth, part, start)
                raise

    def _table_rows(
        self, objs: list[Any], fields: Fields, leaves: list[tuple[list[Any], set[type]]], depth: int
    ) -> Iterator[str]:
        """Row lines at ``depth`` from the leaf columns ``_table`` found, as
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

    def _locate_row(self, e: ToonEncodeError, fields: Fields, depth: int, part: Sequence[Any], start: int) -> None:
        """Error path of the batched table writers: put the failing row's
        index (``start`` + its place in ``part``) in front of ``e.path``."""
        row = self.row_writer(fields, depth)
        for i, o in enumerate(part):
            try:
                row(o)
            except ToonEncodeError:
                e.path = (start + i,) + e.path
                return

    def entry_writer(self, fields: Fields, depth: int) -> Callable[[Any, Any], str]:
        """A function from (entry key, entry object) to its entry row at ``depth`` (§9.5)."""
        row = self.row_writer(fields, 0)
        ind = self.unit * depth
        return lambda k, o: f"{ind}{key_text(k)}: {row(o)}"

    def _keyed(self, head: str, obj: dict[str, Any], fields: Fields, depth: int) -> Iterator[str]:
        obj = plain_keys(obj)  # the entry keys, as in ``_fields``
        yield header(head, len(obj), self.d, fields, keyed=True)
        entry = self.entry_writer(fields, depth + 1)
        for k, o in obj.items():
            try:
                yield entry(k, o)
            except ToonEncodeError as e:
                e.path = (k,) + e.path
                raise

    def conforms(self, obj: Any, fields: Fields) -> bool:
        """Whether ``obj`` has exactly the shape ``fields`` describes (same keys at
        every level, primitives at leaves, non-empty objects at groups).

        An array qualifies for tabular form iff every element conforms to the
        shape of its first (``_uniform_fields([first])``): the incremental form
        of ``_uniform_fields`` that the streaming encoders use.
        """
        norm = self.norm
        todo = [(obj, fields)]
        while todo:
            o, fl = todo.pop()
            if type(o) is not dict or len(o) != len(fl):
                return False
            for name, sub in fl:
                if name not in o:
                    return False
                v = norm(o[name])
                if sub is None:
                    if type(v) not in PRIMITIVE:
                        return False
                else:
                    todo.append((v, sub))
        return True


class UnionShape:
    """Incremental shape of a ``missing_as_null`` table (see ``Walk._union_fields``):
    add the elements one at a time, then ask for the fields."""

    def __init__(self, walk: Walk) -> None:
        self.walk = walk
        self.ok = True
        # key -> [times present, sub-shape (None: primitives so far), bad]
        self.keys: dict[str, list[Any]] = {}

    def add(self, obj: Any) -> None:
        if not self.ok:
            return
        walk = self.walk
        obj = walk.norm(obj)
        if type(obj) is not dict or not obj:
            self.ok = False
            return
        keys = self.keys
        for k, raw in obj.items():
            if type(k) is not str:
                self.ok = False
                return
            v = walk.norm(raw)
            entry = keys.get(k)
            if entry is None:
                if type(v) in PRIMITIVE:
                    keys[k] = [1, None]
                elif type(v) is dict and (sub := walk._uniform_fields([v])) is not None:
                    keys[k] = [1, sub]
                else:
                    self.ok = False
                    return
                continue
            entry[0] += 1
            sub = entry[1]
            if sub is None:
                if type(v) not in PRIMITIVE:
                    self.ok = False
                    return
            elif not walk.conforms(v, sub):
                self.ok = False
                return

    def fields(self, n: int) -> Fields | None:
        """The fields after ``n`` elements, or None if they do not make a table."""
        if not self.ok or n == 0:
            return None
        out: Fields = []
        for k, (present, sub) in self.keys.items():
            if sub is not None and present != n:
                return None  # a nested object missing somewhere: null and objects do not mix (§9.3)
            out.append((k, sub))
        return out


_FAST_NATIVE = frozenset({str, int, float, bool, type(None), dict, list})
# Keys, for every path (the fast path, the walk, the streaming plans):
# - a key that is a str subclass is written as its contents (``key_text``),
#   and an object with two keys of the same contents is a ToonEncodeError
#   (``plain_keys``): a subclass can override __eq__/__hash__ and so sit next
#   to an equal str.  The fast path leaves such objects to the walk.
# - a table's header is its first row's keys, which must be exact strs; the
#   other rows are matched to it by dict lookup (``row[name]``, ``name in
#   row``), the dict's own notion of its keys: a key that compares and hashes
#   equal to a field name is that field.  (Checking every row's key types
#   would cost about a fifth of a flat table's encoding time.)  So a row
#   either has every field, each value written once, or is no table row.
_STR = {str}

#: Rows per slice when columns are taken out of many objects: all the keys of
#: a slice's objects are read while those are still in the CPU cache.
_EXTRACT_SLICE = 4096


def _extract(objs: list[dict[str, Any]], names: list[str]) -> list[list[Any]]:
    """The value columns of ``names`` (KeyError if an object lacks one)."""
    getters = [itemgetter(k) for k in names]
    if len(objs) <= _EXTRACT_SLICE:
        return [list(map(g, objs)) for g in getters]
    columns: list[list[Any]] = [[] for _ in names]
    for start in range(0, len(objs), _EXTRACT_SLICE):
        part = objs[start : start + _EXTRACT_SLICE]
        for col, g in zip(columns, getters):
            col += map(g, part)
    return columns


def _leaf_paths(fields: Fields) -> list[tuple[str, ...]]:
    """The paths of a field tree's leaves, depth-first in header order (§9.3)."""
    if all(sub is None for _, sub in fields):
        return [(name,) for name, _ in fields]
    paths: list[tuple[str, ...]] = []
    order: list[tuple[tuple[str, ...], Fields, int]] = [((), fields, 0)]
    while order:
        prefix, fl, i = order.pop()
        if i >= len(fl):
            continue
        name, sub = fl[i]
        order.append((prefix, fl, i + 1))
        if sub is None:
            paths.append(prefix + (name,))
        else:
            order.append((prefix + (name,), sub, 0))
    return paths


def _leaf_count(fields: Fields) -> int:
    n = 0
    todo = [fields]
    while todo:
        for _, sub in todo.pop():
            if sub is None:
                n += 1
            else:
                todo.append(sub)
    return n


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
    if sort_keys:
        obj = sorted_keys(obj, default, max_depth)
    walk = Walk(
        indent_size=indent_size, delimiter=delimiter, default=default, max_depth=max_depth, missing_as_null=missing_as_null
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
    if engine.dumps is None or default is not None:  # a hook is called by the walk, once per value
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
    if sort_keys:
        obj = sorted_keys(obj, default, max_depth)
    text = _engine_text(obj, indent_size, delimiter, default, max_depth, missing_as_null)
    if text is not None:
        return text
    walk = Walk(
        indent_size=indent_size, delimiter=delimiter, default=default, max_depth=max_depth, missing_as_null=missing_as_null
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
    (options as for :func:`dumps`).

    >>> import io
    >>> buf = io.StringIO(); dump([1, 2], buf); buf.getvalue()
    '[2]: 1,2'
    """
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
        indent_size=indent_size, delimiter=delimiter, default=default, max_depth=max_depth, missing_as_null=missing_as_null
    )
    for piece in walk.lines(obj):
        sink.line(piece)
    sink.flush()

"""The reference decoder's event consumers: what a driver pushes a
``Decoder``'s events into, one push object per output kind.

- prefix tracking (``_Scope``): ijson's prefixes of the open containers;
- :class:`ParseAdapter`: events to ijson ``(prefix, event, value)`` triples
  (``parse``);
- ``_ItemsAdapter``: events to the values at a prefix (``items``,
  ``kvitems``), built by the reference builders;
- :class:`RowsAdapter`: a table's rows at a prefix as tuples (``rows``,
  :class:`RowReader`), with :func:`check_fields`, the schema-drift guard.

Each is ``push(events) -> outputs``: the sync, async and coroutine drivers
(``decoder.py``) only move chunks in and outputs out, so they cannot
disagree.  Nothing here reads input or knows the engine.
"""

from __future__ import annotations

from itertools import chain, repeat
from operator import itemgetter
from typing import Any, AsyncIterator, Callable, Iterable, Iterator, Sequence

from ._errors import ToonDecodeError
from ._reference.build import ValueBuilder, leaf_names, row_maker
from ._reference.events import (
    Columns,
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

__all__ = ["AsyncRowReader", "ParseAdapter", "RowReader", "RowsAdapter", "check_fields", "check_names"]


_MAP, _ARRAY, _TABLE, _KEYED = 0, 1, 2, 3


#: RowsAdapter's mark of an empty array at its target (a table of no rows while it stays empty)
_EMPTY: Any = object()


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

    >>> from toonstream import rows
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

    def close(self) -> None:
        """Stop early (``contextlib.closing`` calls it): the source is not read further."""
        close = getattr(self._it, "close", None)
        if close is not None:
            close()


class AsyncRowReader(_Columns):
    """Async counterpart of :class:`RowReader` (``async for row in rows_async(...)``).

    >>> import asyncio, contextlib
    >>> from toonstream import rows_async
    >>> async def chunks():
    ...     yield b"u[3]{a}:\\n  1\\n  2\\n  3"
    >>> async def first():
    ...     async with contextlib.aclosing(rows_async(chunks(), "u")) as reader:
    ...         async for row in reader:
    ...             return row
    >>> asyncio.run(first())
    (1,)
    """

    def __init__(self, adapter: RowsAdapter, it: AsyncIterator[Any]) -> None:
        self._adapter = adapter
        self._it = it

    def __aiter__(self) -> AsyncRowReader:
        return self

    async def __anext__(self) -> Any:
        return await self._it.__anext__()

    async def aclose(self) -> None:
        """Stop early (``contextlib.aclosing`` calls it): the source is not read further."""
        close = getattr(self._it, "aclose", None)
        if close is not None:
            await close()


class RowsAdapter:
    """Rows of tables at ``prefix``: leaf tuples, or dicts with ``as_dict``."""

    def __init__(
        self,
        prefix: str | None,
        *,
        as_dict: bool,
        key_field: str,
        where: Callable[[int], int],
        where_text: Callable[[int], str] | None = None,
        expect_fields: Sequence[str] | None = None,
    ) -> None:
        self.target = prefix
        self.as_dict = as_dict
        self.key_field = key_field
        # (the line of the i-th event of a batch, and its text, for the adapter's own errors)
        self.where = where
        self.where_text = where_text
        self.expect = list(expect_fields) if expect_fields is not None else None
        self.scopes: list[_Scope] = []
        self.fields: Fields | None = None
        self.columns: list[str] | None = None
        self.found = 0  # matching tables opened so far
        # Called with each matching header and its columns (the Arrow/Polars
        # readers check that later tables agree with the first).
        self.on_table: Callable[[StartTable, list[str]], None] | None = None

    def _not_tabular(self, i: int) -> ToonDecodeError:
        """The error for a value at the prefix that is no table (the ``i``-th event of a batch)."""
        return ToonDecodeError(
            f"the value at prefix {self.target!r} is not a tabular array or keyed table",
            code="not_tabular",
            line=self.where(i),
            column=1,
            line_text=self.where_text(i) if self.where_text is not None else "",
        )

    def in_target(self) -> bool:
        """True while the innermost open scope is a matching tabular array or keyed table."""
        scopes = self.scopes
        return bool(scopes) and scopes[-1].mark is not None and scopes[-1].kind in (_TABLE, _KEYED)

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
                if scopes and scopes[-1].mark is _EMPTY:
                    raise self._not_tabular(i)  # (an item in it: not empty after all, non-strict)
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
                elif vp == target and not (t is StartArray and ev.length == 0):
                    raise self._not_tabular(i)
                else:
                    scope = _Scope(_MAP if t is StartObject else _ARRAY, vp, not scopes)
                    if vp == target:
                        scope.mark = _EMPTY  # ([] is a table of no rows, while it has no item)
                scopes.append(scope)
            elif t is Scalar:
                if _value_prefix(scopes) == target or (scopes and scopes[-1].mark is _EMPTY):
                    raise self._not_tabular(i)
            elif t is Values:
                if scopes and scopes[-1].mark is _EMPTY and ev.values:
                    raise self._not_tabular(i)
            else:
                scopes.pop()
        return out


    def matched(self, ev: StartTable) -> Callable[[tuple[Any, ...]], tuple[Any, ...]] | None:
        """A header at the target: ``fields``/``columns`` follow it, ``expect_fields`` is checked;
        returns the tuple reordering (None: header order)."""
        self.found += 1
        if self.as_dict:  # (a dict holds each name once: a repeated one would drop a cell)
            check_names(ev.fields, self.key_field if ev.keyed else None, ev.line, ev.line_text)
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


def check_names(fields: Fields, key_field: str | None, line: int | None, line_text: str) -> None:
    """Names must be unique within a table's columns and within each field
    group, where rows become dicts or frame columns: a keyed table's
    ``key_field`` (when given) against its fields, and a non-strict header's
    repeated fields.  A ``name_collision`` error at the header (``line``)
    says how to fix it."""
    todo: list[tuple[str, Fields, set[str]]] = [("", fields, {key_field} if key_field is not None else set())]
    while todo:
        group, group_fields, seen = todo.pop()
        for f in group_fields:
            if f.name in seen:
                where = f" in field group {group!r}" if group else ""
                if not group and f.name == key_field:
                    fix = (
                        f"the entry keys of a keyed table become column {f.name!r} (key_field), "
                        "which is also a field of the header: pass another name as key_field"
                    )
                else:
                    fix = f"field {f.name!r} occurs twice{where} (strict mode rejects such a header)"
                raise ToonDecodeError(
                    f"column name collision: {fix}",
                    code="name_collision",
                    line=line,
                    column=len(line_text) - len(line_text.lstrip(" ")) + 1,
                    line_text=line_text,
                )
            seen.add(f.name)
            if f.children is not None:
                todo.append((f"{group}.{f.name}" if group else f.name, f.children, set()))


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

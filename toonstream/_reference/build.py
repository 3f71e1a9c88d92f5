"""Consumers that turn events into Python values.

``ValueBuilder`` assembles whole values (``loads`` uses it; ``items`` uses one
per matched value).  ``row_maker`` turns a table row's leaf tuple into a dict.
Both are iterative: depth costs list entries, not Python stack frames.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import repeat
from typing import Any, Callable, Iterable, Iterator

from .events import (
    EndArray,
    EndObject,
    EndTable,
    Entries,
    Event,
    Fields,
    Key,
    Columns,
    Members,
    Rows,
    Scalar,
    StartArray,
    StartObject,
    StartTable,
    Values,
)

RowMaker = Callable[[tuple[Any, ...]], dict[str, Any]]

_LEAF, _OPEN, _CLOSE = 0, 1, 2


def row_maker(fields: Fields) -> RowMaker:
    """A function from a row's leaf values (header order) to its object (§9.3).

    Nested field groups become nested dicts.  Duplicate names (non-strict)
    resolve last-write-wins, as plain dict assignment does.

    >>> from toonstream._reference.events import Field
    >>> row_maker((Field("id"), Field("geo", (Field("lat"), Field("lon")))))((1, 2.5, 3.0))
    {'id': 1, 'geo': {'lat': 2.5, 'lon': 3.0}}
    """
    program = _program(fields)
    names = _flat_names(program)
    if names is not None:
        return lambda row: dict(zip(names, row))
    return _interpreted(program)


def _flat_names(program: tuple[tuple[int, str], ...]) -> tuple[str, ...] | None:
    """The names of a header without field groups (else None)."""
    if all(op == _LEAF for op, _ in program):
        return tuple(name for _, name in program)
    return None


class BatchMaker:
    """The objects of one header's rows, a batch at a time: as row tuples
    (``rows``) or as leaf columns (``columns``, one list per leaf).

    Starts with ``row_maker``'s builders mapped over the batch (a C-level
    loop for a header without field groups); once the header has made
    ``compile_after`` rows, it compiles a dict display for it (see
    ``_display_function``), which pays for its compiling (tens of
    microseconds) only over many rows.
    Shared through ``batch_maker``'s cache: a header that repeats (a table in
    every list item) counts all its rows together.
    """

    __slots__ = ("_program", "_plain", "_left", "_by_row", "_by_cells")

    def __init__(
        self, fields: Fields | None = None, *, compile_after: int = 1024, program: tuple[tuple[int, str], ...] | None = None
    ) -> None:
        if program is None:
            assert fields is not None
            program = _program(fields)
        self._program = program
        names = _flat_names(program)
        self._plain: Callable[[Iterable[tuple[Any, ...]]], Iterable[dict[str, Any]]]
        if names is not None:  # (a C-level loop; zip reuses its tuple when dict does not keep it)
            self._plain = lambda rows: map(dict, map(zip, repeat(names), rows))
        else:
            make = _interpreted(program)
            self._plain = lambda rows: map(make, rows)
        self._left = compile_after
        # the batch functions once compiled (the plain one if the header is too big to)
        self._by_row: Callable[[list[tuple[Any, ...]]], Iterable[dict[str, Any]]] | None = None
        self._by_cells: Callable[[list[list[Any]]], Iterable[dict[str, Any]]] | None = None

    def rows(self, rows: list[tuple[Any, ...]]) -> Iterable[dict[str, Any]]:
        if self._by_row is None:
            self._left -= len(rows)
            if self._left > 0:
                return self._plain(rows)
            made = _display_function(self._program, columns=False)
            self._by_row = self._plain if made is None else lambda rows: map(made, rows)
        return self._by_row(rows)

    def columns(self, columns: list[list[Any]]) -> Iterable[dict[str, Any]]:
        if self._by_cells is None:
            self._left -= len(columns[0]) if columns else 0
            if self._left > 0 or not columns:
                return self._plain(zip(*columns))
            made = _display_function(self._program, columns=True)
            plain = self._plain
            self._by_cells = (lambda cols: plain(zip(*cols))) if made is None else lambda cols: map(made, *cols)
        return self._by_cells(columns)


# The shared makers.  Never keyed by the Fields tuple itself: hashing and
# comparing a nested tuple recurse in C, and two equal headers with deep field
# groups (a few hundred levels, well within max_depth) raise RecursionError in
# the comparison.  The flat program is the key (its entries are (op, name)
# pairs, however deep the header), found first by the tuple's identity: the
# machine hands back one Fields object per header text, so a header that
# repeats (a table in every list item) costs a dict lookup.
_CACHE_SIZE = 256
_by_id: dict[int, tuple[Fields, BatchMaker]] = {}  # id(fields) -> (fields, kept alive so the id stays its)


@lru_cache(maxsize=_CACHE_SIZE)
def _program_maker(program: tuple[tuple[int, str], ...]) -> BatchMaker:
    return BatchMaker(program=program)


def batch_maker(fields: Fields) -> BatchMaker:
    """The shared ``BatchMaker`` of a header (one per distinct field tree)."""
    hit = _by_id.get(id(fields))
    if hit is not None and hit[0] is fields:
        return hit[1]
    maker = _program_maker(_program(fields))
    if len(_by_id) >= _CACHE_SIZE:
        _by_id.clear()
    _by_id[id(fields)] = (fields, maker)
    return maker


# A generated dict display ("{'id': v0, 'geo': {'lat': v1}}") builds a row's
# object about 30% faster than dict(zip(names, row)) and far faster than the
# step interpreter: constant keys, no zip tuple, one BUILD_CONST_KEY_MAP per
# level.  The names enter the source only as repr() literals, so any name is
# safe.  Past these sizes compiling costs more than it saves (and CPython's
# parser limits nesting).
_DISPLAY_MAX_LEAVES = 255
_DISPLAY_MAX_DEPTH = 16


def _display_function(program: tuple[tuple[int, str], ...], *, columns: bool) -> Callable[..., Any] | None:
    """A compiled function building one row's object: from one argument per
    leaf (``columns``) or from a row tuple; None when the header is too big
    or has no leaves."""
    leaves = sum(op == _LEAF for op, _ in program)
    if not leaves or leaves > _DISPLAY_MAX_LEAVES:
        return None
    parts = ["{"]
    k = depth = deepest = 0
    for op, name in program:
        if op == _LEAF:
            parts.append(f"{name!r}: {f'v{k}' if columns else f'r[{k}]'}, ")
            k += 1
        elif op == _OPEN:
            parts.append(f"{name!r}: {{")
            depth += 1
            deepest = max(deepest, depth)
        else:
            parts.append("}, ")
            depth -= 1
    if deepest > _DISPLAY_MAX_DEPTH:
        return None
    parts.append("}")
    params = ", ".join(f"v{i}" for i in range(leaves)) if columns else "r"
    return eval(f"lambda {params}: {''.join(parts)}", {"__builtins__": {}})  # type: ignore[no-any-return]


def _program(fields: Fields) -> tuple[tuple[int, str], ...]:
    """The header as a flat list of (leaf | open | close, name) steps."""
    steps: list[tuple[int, str]] = []
    todo: list[Any] = [iter(fields)]
    while todo:
        f = next(todo[-1], None)
        if f is None:
            todo.pop()
            if todo:
                steps.append((_CLOSE, ""))
            continue
        if f.children is None:
            steps.append((_LEAF, f.name))
        else:
            steps.append((_OPEN, f.name))
            todo.append(iter(f.children))
    return tuple(steps)


def _interpreted(program: tuple[tuple[int, str], ...]) -> RowMaker:
    """``row_maker`` for big headers: the steps run one by one."""

    def make(row: tuple[Any, ...]) -> dict[str, Any]:
        cells = iter(row)
        root: dict[str, Any] = {}
        stack = [root]
        top = root
        for op, name in program:
            if op == _LEAF:
                top[name] = next(cells)
            elif op == _OPEN:
                d: dict[str, Any] = {}
                top[name] = d
                stack.append(d)
                top = d
            else:
                stack.pop()
                top = stack[-1]
        return root

    return make


def leaf_names(fields: Fields, *, sep: str = ".") -> list[str]:
    """Leaf field paths in row order: ``["id", "customer.name", ...]``."""
    out: list[str] = []
    todo: list[tuple[str, Iterable[Any]]] = [("", iter(fields))]
    while todo:
        prefix, it = todo[-1]
        f = next(it, None)  # type: ignore[call-overload]
        if f is None:
            todo.pop()
            continue
        name = prefix + f.name
        if f.children is None:
            out.append(name)
        else:
            todo.append((name + sep, iter(f.children)))
    return out


class ValueBuilder:
    """Push events, get the completed value.

    ``push(events, start)`` consumes ``events[start:]`` and returns the index
    just past the event that completed the value (``value`` is then set), or
    -1 if the value is still open.
    """

    __slots__ = ("stack", "keys", "makers", "value", "done")

    def __init__(self) -> None:
        self.stack: list[Any] = []  # open containers
        self.keys: list[Any] = []  # pending key per open container (None for lists)
        self.makers: list[BatchMaker | None] = []  # per open table
        self.value: Any = None
        self.done = False

    def push(self, events: list[Event], start: int = 0) -> int:
        if not events:  # (a tiny feed often completes nothing)
            return -1
        stack = self.stack
        keys = self.keys
        makers = self.makers
        i = start
        n = len(events)
        while i < n:
            ev: Any = events[i]
            i += 1
            t = type(ev)
            if t is Rows or t is Columns:
                maker = makers[-1]
                assert maker is not None
                stack[-1].extend(maker.rows(ev.rows) if t is Rows else maker.columns(ev.columns))
            elif t is Members:
                stack[-1].update(ev.pairs)
            elif t is Key:
                keys[-1] = ev.key
            elif t is Scalar:
                if stack:
                    top = stack[-1]
                    if type(top) is list:
                        top.append(ev.value)
                    else:
                        top[keys[-1]] = ev.value
                else:
                    self.value = ev.value
                    self.done = True
                    return i
            elif t is StartObject or t is StartArray or t is StartTable:
                if t is StartObject:
                    new: Any = {}
                    maker = None
                elif t is StartArray:
                    new = []
                    maker = None
                else:
                    new = {} if ev.keyed else []
                    maker = batch_maker(ev.fields)
                if stack:
                    top = stack[-1]
                    if type(top) is list:
                        top.append(new)
                    else:
                        top[keys[-1]] = new
                stack.append(new)
                keys.append(None)
                makers.append(maker)
            elif t is EndObject or t is EndArray or t is EndTable:
                done = stack.pop()
                keys.pop()
                makers.pop()
                if not stack:
                    self.value = done
                    self.done = True
                    return i
            elif t is Values:
                stack[-1].extend(ev.values)
            elif t is Entries:
                maker = makers[-1]
                assert maker is not None
                entries = ev.entries
                stack[-1].update(zip([k for k, _ in entries], maker.rows([row for _, row in entries])))
        return -1


def object_finisher(
    object_hook: Callable[[dict[str, Any]], Any] | None,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None,
) -> Callable[[list[tuple[str, Any]]], Any]:
    """What an object's ``(key, value)`` pairs become, as ``json.loads``
    decides it: ``object_pairs_hook(pairs)`` (it wins when both are given),
    else ``object_hook(dict(pairs))``, else the dict."""
    if object_pairs_hook is not None:
        return object_pairs_hook
    if object_hook is not None:
        hook = object_hook
        return lambda pairs: hook(dict(pairs))
    return dict


class _Object(list):  # type: ignore[type-arg]
    """An object's ``(key, value)`` pairs, in document order, not yet finished."""

    __slots__ = ()


class _Array(list):  # type: ignore[type-arg]
    """An array's elements, some of them objects not yet finished."""

    __slots__ = ()


def hooked_row_maker(fields: Fields) -> Callable[[tuple[Any, ...]], Any]:
    """``row_maker`` for the hooked builder: a row as an unfinished object
    whose field groups are unfinished objects in it."""
    program = _program(fields)
    names = _flat_names(program)
    if names is not None:
        return lambda row: _Object(zip(names, row))

    def make(row: tuple[Any, ...]) -> Any:
        cells = iter(row)
        top = _Object()
        stack: list[tuple[str, _Object]] = []
        for op, name in program:
            if op == _LEAF:
                top.append((name, next(cells)))
            elif op == _OPEN:
                stack.append((name, top))
                top = _Object()
            else:
                group, parent = stack.pop()
                parent.append((group, top))
                top = parent
        return top

    return make


def finish_objects(value: Any, finish: Callable[[list[tuple[str, Any]]], Any]) -> Any:
    """``value`` with every unfinished object replaced by ``finish(pairs)``,
    inner objects first, in document order (json's order of hook calls:
    each object after the objects inside it).  Only the builder's own
    containers are entered (a ``parse_float`` result is a leaf, whatever it
    is).  Iterative.

    >>> finish_objects(_Object([("a", _Array([_Object([("b", 1)])]))]), dict)
    {'a': [{'b': 1}]}
    """
    if not isinstance(value, (_Object, _Array)):
        return value
    # per open container: its node, the finished children so far, the next child's index
    stack: list[tuple[Any, list[Any], int]] = [(value, [], 0)]
    while True:
        node, done, i = stack[-1]
        if i < len(node):
            stack[-1] = (node, done, i + 1)
            child = node[i][1] if type(node) is _Object else node[i]
            if isinstance(child, (_Object, _Array)):
                stack.append((child, [], 0))
            else:
                done.append(child)
            continue
        stack.pop()
        if type(node) is _Object:
            result = finish([(k, v) for (k, _), v in zip(node, done)])
        else:
            result = done
        if not stack:
            return result
        stack[-1][1].append(result)


class HookedValueBuilder:
    """:class:`ValueBuilder` for ``object_hook``/``object_pairs_hook``: an
    object's pairs are gathered in document order (duplicates included, as
    json gives them to ``object_pairs_hook``); once the document is complete
    (the root value closed) every object is finished by
    :func:`finish_objects`, each after the objects inside it (nested ones,
    table rows and their field groups, keyed tables), in document order.
    So no hook is called on a document that fails to decode, whatever the
    chunking.  Takes the events of a ``batches=True`` decoder.  A separate
    class: the builder without hooks keeps its in-place dicts (no pair
    lists).
    """

    __slots__ = ("finish", "stack", "kinds", "keys", "makers", "value", "done")

    def __init__(self, finish: Callable[[list[tuple[str, Any]]], Any]) -> None:
        self.finish = finish
        self.stack: list[list[Any]] = []  # open containers: pairs of an object, elements of an array
        self.kinds: list[bool] = []  # per open container: True if it is an object
        self.keys: list[Any] = []  # pending key per open object
        self.makers: list[Callable[[tuple[Any, ...]], Any] | None] = []  # per open table
        self.value: Any = None
        self.done = False

    def _add(self, value: Any) -> bool:
        """Put a value in the open container; True if it was the root (then finished)."""
        if not self.stack:
            self.value = finish_objects(value, self.finish)
            self.done = True
            return True
        if self.kinds[-1]:
            self.stack[-1].append((self.keys[-1], value))
        else:
            self.stack[-1].append(value)
        return False

    def push(self, events: list[Event], start: int = 0) -> int:
        stack = self.stack
        i = start
        n = len(events)
        while i < n:
            ev: Any = events[i]
            i += 1
            t = type(ev)
            if t is Rows or t is Columns:
                maker = self.makers[-1]
                assert maker is not None
                stack[-1].extend(map(maker, ev.rows if t is Rows else zip(*ev.columns)))
            elif t is Members:
                stack[-1].extend(ev.pairs)
            elif t is Key:
                self.keys[-1] = ev.key
            elif t is Scalar:
                if self._add(ev.value):
                    return i
            elif t is StartObject or t is StartArray or t is StartTable:
                is_object = t is StartObject or (t is StartTable and ev.keyed)
                stack.append(_Object() if is_object else _Array())
                self.kinds.append(is_object)
                self.keys.append(None)
                self.makers.append(hooked_row_maker(ev.fields) if t is StartTable else None)
            elif t is EndObject or t is EndArray or t is EndTable:
                done = stack.pop()
                self.kinds.pop()
                self.keys.pop()
                self.makers.pop()
                if self._add(done):
                    return i
            elif t is Values:
                stack[-1].extend(ev.values)
            elif t is Entries:
                maker = self.makers[-1]
                assert maker is not None
                stack[-1].extend([(k, maker(row)) for k, row in ev.entries])
            else:  # pragma: no cover - every event kind is handled above
                raise AssertionError(f"unexpected event {t.__name__}")
        return -1


def remap_objects(value: Any, map_type: Callable[[], Any]) -> Any:
    """``value`` with every object (dict) rebuilt as ``map_type()`` filled by
    item assignment, as ijson's ``map_type`` option builds them: each
    mapping is made and put in its parent before its own members are set,
    outer objects first, members in document order.  Lists are copied (they
    hold the new mappings); scalars are shared.  Iterative.

    >>> from collections import OrderedDict
    >>> remap_objects({"a": [{"b": 1}]}, OrderedDict)
    OrderedDict([('a', [OrderedDict([('b', 1)])])])
    """

    def copy(v: Any) -> tuple[Any, Iterator[tuple[Any, Any]] | None]:
        t = type(v)
        if t is dict:
            return map_type(), iter(v.items())
        if t is list:
            return [], enumerate(v)
        return v, None

    root, todo = copy(value)
    if todo is None:
        return root
    stack: list[tuple[Any, Iterator[tuple[Any, Any]]]] = [(root, todo)]
    while stack:
        target, children = stack[-1]
        nxt = next(children, None)
        if nxt is None:
            stack.pop()
            continue
        key, child = nxt
        new, grandchildren = copy(child)
        if type(target) is list:
            target.append(new)
        else:
            target[key] = new
        if grandchildren is not None:
            stack.append((new, grandchildren))
    return root

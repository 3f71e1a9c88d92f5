"""Consumers that turn events into Python values.

``ValueBuilder`` assembles whole values (``loads`` uses it; ``items`` uses one
per matched value).  ``row_maker`` turns a table row's leaf tuple into a dict.
Both are iterative: depth costs list entries, not Python stack frames.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import repeat
from typing import Any, Callable, Iterable

from ._events import (
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
RowsMaker = Callable[[Iterable[tuple[Any, ...]]], Iterable[dict[str, Any]]]

_LEAF, _OPEN, _CLOSE = 0, 1, 2


def row_maker(fields: Fields) -> RowMaker:
    """A function from a row's leaf values (header order) to its object (§9.3).

    Flat headers use ``dict(zip(names, row))``; nested field groups follow a
    precompiled list of open/leaf/close steps.  Duplicate names (non-strict)
    resolve last-write-wins, as plain dict assignment does.

    >>> from toonstream._events import Field
    >>> row_maker((Field("id"), Field("geo", (Field("lat"), Field("lon")))))((1, 2.5, 3.0))
    {'id': 1, 'geo': {'lat': 2.5, 'lon': 3.0}}
    """
    if all(f.children is None for f in fields):
        names = tuple(f.name for f in fields)
        return lambda row: dict(zip(names, row))
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
    program = tuple(steps)

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


@lru_cache(maxsize=256)  # tables repeat (one per list item), and share their field tuples
def rows_maker(fields: Fields) -> RowsMaker:
    """``row_maker`` over a whole batch of rows; for flat headers the loop is
    C-level (``map(dict, map(zip, repeat(names), rows)))``."""
    if all(f.children is None for f in fields):
        names = tuple(f.name for f in fields)
        return lambda rows: map(dict, map(zip, repeat(names), rows))
    make = row_maker(fields)
    return lambda rows: map(make, rows)


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
        self.makers: list[RowsMaker | None] = []  # rows maker per open table
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
                make = makers[-1]
                assert make is not None
                # (zip reuses its tuple when the maker does not keep it)
                stack[-1].extend(make(ev.rows if t is Rows else zip(*ev.columns)))
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
                    maker = rows_maker(ev.fields)
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
                make = makers[-1]
                assert make is not None
                top = stack[-1]
                entries = ev.entries
                top.update(zip([k for k, _ in entries], make([row for _, row in entries])))
        return -1

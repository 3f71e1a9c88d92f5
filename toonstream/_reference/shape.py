"""The shape plan: which values make a table, and with what header fields.

One implementation of the §9.3 and §9.5 decisions, asked by every encoder
of the package: the walk (``dumps``, ``dump``, ``encode_lines``), the
streaming encoders' first pass (``streaming._ArrayPlan``: one element at a
time, with :meth:`ShapePlan.conforms` and :class:`UnionShape`) and the Arrow
encoder (``_arrow_encode.schema_shape``, which asks about one row that
stands for every row of a schema).

The rules (§9.3): an array is tabular when every element is a non-empty
object with the same keys, the first element's keys are exact strs (they are
the header), and each key holds primitives in every row, or non-empty
objects that are themselves uniform (a nested field group, §6); the rows
and their groups are containers too, so they must fit under ``max_depth``
(see :class:`ShapePlan`).  §9.5 (keyed tables): an
object of at least two entries whose values make such a table.
``missing_as_null`` (opt-in): non-empty objects that differ only by missing
keys, a key missing somewhere holding primitives wherever it is present.

Keys: a table's header is its first row's keys; the other rows are matched
to it by dict lookup (``row[name]``, ``name in row``), the dict's own notion
of its keys, so a key that compares and hashes equal to a field name is that
field, and a row either has every field, each value written once, or is no
table row.  (Checking every row's key types would cost about a fifth of a
flat table's encoding time.)

>>> plan = ShapePlan(lambda v: v, 10)
>>> plan.uniform_fields([{"a": 1, "b": {"c": 2}}, {"a": 3, "b": {"c": 4}}], 1)
[('a', None), ('b', [('c', None)])]
>>> plan.uniform_fields([{"a": 1}, {"b": 2}], 1) is None
True
>>> plan.uniform_fields([{"a": {"b": 1}}], 9) is None  # rows at level 10, a group at 11
True
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any, Callable

from .._errors import ToonEncodeError
from .normalize import PRIMITIVE
from .writer import Fields

__all__ = ["NATIVE_TYPES", "ShapePlan", "UnionShape", "leaf_paths", "leaf_count"]

#: The JSON model's own types: a value of one of these needs no normalizing.
NATIVE_TYPES = frozenset({str, int, float, bool, type(None), dict, list})

#: Rows per slice when columns are taken out of many objects: all the keys of
#: a slice's objects are read while those are still in the CPU cache.
_EXTRACT_SLICE = 4096

#: A table's leaf columns in header order: each column's (normalized) values and their types.
Leaves = list[tuple[list[Any], set[type]]]


class ShapePlan:
    """The table decisions for one encoder's options.

    ``norm``: host values to the JSON model (``normalize`` with the
    encoder's ``default``); ``max_depth``: the encoder's limit on nested
    containers (the root container is level 1).  Each method takes the
    ``level`` of the array (or keyed object) it decides about: its rows sit
    at ``level + 1`` and their field groups below them, and a table whose
    deepest group would pass ``max_depth`` is no table (nor is one whose
    row contains itself): the walk then writes list items and reports the
    first container too deep, with its path.
    """

    def __init__(self, norm: Callable[[Any], Any], max_depth: int) -> None:
        self.norm = norm
        self.max_depth = max_depth

    def uniform_fields(self, objs: list[Any], level: int) -> Fields | None:
        """The header field tree if ``objs`` make a table (§9.3) for an array
        at ``level``, else None."""
        table = self.table(objs, level)
        return None if table is None else table[0]

    def table(self, objs: list[Any], level: int) -> tuple[Fields, Leaves] | None:
        """``uniform_fields`` plus what it saw on the way: the leaf columns
        (normalized values) in header order, each with its set of types.

        Iterative over nested groups (their depth costs list entries)."""
        root: Fields = []
        # (a group, or None: the end of the subtree below the innermost open group)
        todo: list[tuple[list[Any], Fields, int, tuple[str, ...]] | None] = [(objs, root, level + 1, ())]
        max_depth = self.max_depth
        leaves: dict[tuple[str, ...], tuple[list[Any], set[type]]] = {}
        norm = self.norm
        # The first rows of the groups open above this one.  A first row met again below itself
        # is a cycle (the walk reports it): without this check, a cyclic row whose dict values
        # repeat (d = {"x": d, "y": d}) would double the groups at every level down to the limit.
        open_firsts: list[int] = []
        open_set: set[int] = set()
        while todo:
            entry = todo.pop()
            if entry is None:
                open_set.discard(open_firsts.pop())
                continue
            group, out, level, path = entry
            if level > max_depth:  # (this group's objects are containers at ``level``)
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
            if set(map(type, group)) != {dict}:
                return None
            if set(map(len, group)) != {width}:
                return None
            names = list(first)
            # The first row's keys are the header: exact strs only (a row of
            # other keys, str subclasses too, is written as an object, whose
            # keys are their contents).
            if any(type(k) is not str for k in names):
                return None
            try:
                columns = _extract(group, names)
            except KeyError:
                return None
            for k, col in zip(names, columns):
                kinds = set(map(type, col))
                if not kinds <= NATIVE_TYPES:  # host types: normalize, then classify
                    col = _normalized(col, norm, path + (k,))
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
        return root, [leaves[p] for p in leaf_paths(root)]

    def keyed_fields(self, obj: dict[Any, Any], level: int) -> Fields | None:
        """§9.5 keyed tables: the entries' field tree if ``obj`` (at
        ``level``) has at least two entries and they make a table, else None."""
        if len(obj) < 2:
            return None
        values = []
        for k, v in obj.items():
            try:
                values.append(self.norm(v))
            except ToonEncodeError as e:
                e.path = (k,) + e.path
                raise
        if any(type(v) is not dict for v in values):
            return None
        try:
            return self.uniform_fields(values, level)
        except ToonEncodeError as e:
            # (a cell's path starts with its row: here the entry's key)
            if e.path and type(e.path[0]) is int and 0 <= e.path[0] < len(obj):
                e.path = (list(obj)[e.path[0]], *e.path[1:])
            raise

    def union_fields(self, objs: list[Any], level: int) -> Fields | None:
        """``missing_as_null`` tables: non-empty objects that differ only by
        missing keys.  Fields are the union of keys in first-seen order; a key
        missing anywhere must hold primitives wherever present (it becomes
        null), a key present everywhere follows the §9.3 column rules."""
        union = UnionShape(self, level)
        for o in objs:
            union.add(o)
        return union.fields(len(objs))

    def conforms(self, obj: Any, fields: Fields) -> bool:
        """Whether ``obj`` has exactly the shape ``fields`` describes (same keys at
        every level, primitives at leaves, non-empty objects at groups).

        An array makes a table iff every element conforms to the shape of its
        first (``uniform_fields([first])``): the incremental form of
        ``uniform_fields`` that the streaming encoders use.
        """
        norm = self.norm
        todo = [(obj, fields)]
        try:
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
        except ToonEncodeError as e:  # (where, as dumps says it: the caller adds the row)
            e.path = self._failing_at(obj, fields) + e.path
            raise
        return True

    def _failing_at(self, obj: Any, fields: Fields) -> tuple[str, ...]:
        """The path in ``obj`` of the first value ``norm`` refuses, walked as
        ``conforms`` walks (found again on the error path only: the walk
        itself keeps no paths)."""
        todo: list[tuple[Any, Fields, tuple[str, ...]]] = [(obj, fields, ())]
        while todo:
            o, fl, at = todo.pop()
            for name, sub in fl:
                if type(o) is not dict or name not in o:  # (conforms returned before such a value)
                    return at
                try:
                    v = self.norm(o[name])
                except ToonEncodeError:
                    return (*at, name)
                if sub is not None and type(v) is dict:
                    todo.append((v, sub, (*at, name)))
        return ()


class UnionShape:
    """Incremental shape of a ``missing_as_null`` table (see
    :meth:`ShapePlan.union_fields`): add the elements one at a time, then ask
    for the fields (``level``: the array's, as in :class:`ShapePlan`)."""

    def __init__(self, plan: ShapePlan, level: int) -> None:
        self.plan = plan
        self.level = level
        self.ok = True
        # key -> [times present, sub-shape (None: primitives so far)]
        self.keys: dict[str, list[Any]] = {}

    def add(self, obj: Any) -> None:
        if not self.ok:
            return
        plan = self.plan
        obj = plan.norm(obj)
        if type(obj) is not dict or not obj:
            self.ok = False
            return
        keys = self.keys
        for k, raw in obj.items():
            if type(k) is not str:
                self.ok = False
                return
            v = plan.norm(raw)
            entry = keys.get(k)
            if entry is None:
                if type(v) in PRIMITIVE:
                    keys[k] = [1, None]
                elif type(v) is dict and (sub := plan.uniform_fields([v], self.level + 1)) is not None:
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
            elif not plan.conforms(v, sub):
                self.ok = False
                return

    def fields(self, n: int) -> Fields | None:
        """The fields after ``n`` elements, or None if they do not make a table."""
        if not self.ok or n == 0 or self.level >= self.plan.max_depth:  # (the rows, at level + 1, are containers)
            return None
        out: Fields = []
        for k, (present, sub) in self.keys.items():
            if sub is not None and present != n:
                return None  # a nested object missing somewhere: null and objects do not mix (§9.3)
            out.append((k, sub))
        return out


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


def leaf_paths(fields: Fields) -> list[tuple[str, ...]]:
    """The paths of a field tree's leaves, depth-first in header order (§9.3).

    >>> leaf_paths([("a", None), ("b", [("c", None), ("d", None)])])
    [('a',), ('b', 'c'), ('b', 'd')]
    """
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


def leaf_count(fields: Fields) -> int:
    """How many cells a row of ``fields`` has."""
    n = 0
    todo = [fields]
    while todo:
        for _, sub in todo.pop():
            if sub is None:
                n += 1
            else:
                todo.append(sub)
    return n


def _normalized(col: list[Any], norm: Callable[[Any], Any], path: tuple[str, ...]) -> list[Any]:
    """``norm`` of each value of a column at ``path`` in the rows; a value
    it refuses is reported at its row and keys."""
    try:
        return [norm(v) for v in col]
    except ToonEncodeError as e:
        for i, v in enumerate(col):
            try:
                norm(v)
            except ToonEncodeError:
                where: tuple[str | int, ...] = (i, *path)
                e.path = where + e.path
                break
        raise

"""TOON to JSON text or JSON Lines, streamed from the event stream.

The writer consumes the ijson-style triples of ``ParseAdapter`` (numbers
as int/Decimal, so nothing is rounded), keeps only a stack of open
containers, and writes as it goes: memory does not grow with the document.
Formatting matches ``json.dumps(value, indent=N, ensure_ascii=False)`` with
``indent``, and ``separators=(",", ":")`` without.

Table rows in what is written (the decoder's ``Rows``/``Columns`` batches,
a keyed table's ``Entries``) skip the triples: each column's values are
formatted at once, and each row's object is one ``%`` of a template made
once per header (keys' JSON text, separators and indentation literal), so a
row costs no Python code per cell.  The bytes are those of the per-triple
path, which stays the one for everything else.

``path`` selects what is written: an ijson prefix (member names joined by
dots, ``item`` for an array's elements; ``""`` the root), as for ``items``,
``rows`` and the Arrow/Polars readers.  JSON output writes the one value at
the path; JSON Lines the elements of the array(s) at it.
"""

from __future__ import annotations

import re
from collections import deque
from decimal import Decimal
from itertools import compress, count, repeat
from json.encoder import encode_basestring
from operator import is_, itemgetter
from typing import IO, Any, Callable, Sequence

from ._errors import ToonDecodeError
from ._reference.events import Columns, Entries, Event, Fields, Rows
from ._reference.numbers import INT_STR_SAFE_BITS, decimal_value_text, int_value_text
from ._reference.writer import LineSink
from . import _engine
from ._consumers import ParseAdapter
from .decoder import DEFAULT_BUF_SIZE, Source, driver_decoder, engine_options, native_push, read_chunks

__all__ = ["decode_to_json", "decode_to_jsonl"]  # (and value_json, for the frame readers)

# The C function behind ``json.JSONEncoder(ensure_ascii=False).encode`` for a str.
_dump_str: Callable[[str], str] = encode_basestring


def _scalar(v: Any) -> str:
    t = type(v)
    if t is str:
        return _dump_str(v)
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    if t is int:
        return int_value_text(v)
    if t is Decimal:
        return decimal_value_text(v)
    return repr(float(v))


def value_json(value: Any) -> str:
    """A decoded value's JSON text, as ``json.dumps(value, ensure_ascii=False)``
    writes it (``", "`` and ``": "`` between members), but with its numbers
    as ``_scalar`` writes them (a ``Decimal``'s exact digits, an int of any
    size) and without recursion (the decoder's ``max_depth`` bounds the
    depth, not Python's stack).

    >>> value_json({"a": [1, Decimal("0.10"), None], "b": {}})
    '{"a": [1, 0.1, null], "b": {}}'
    """
    out: list[str] = []
    stack: list[tuple[Any, bool]] = []  # (the open containers' item iterators, is an object)
    v = value
    while True:
        t = type(v)
        if (t is dict or t is list) and v:
            out.append("{" if t is dict else "[")
            stack.append((iter(v.items()) if t is dict else iter(v), t is dict))
        else:
            out.append(("{}" if t is dict else "[]") if t is dict or t is list else _scalar(v))
        while stack:  # the next member, or the end of containers
            items, is_object = stack[-1]
            item = next(items, _DONE)
            if item is _DONE:
                stack.pop()
                out.append("}" if is_object else "]")
                continue
            if out[-1] not in ("{", "["):  # (only an opening is written as a lone brace)
                out.append(", ")
            if is_object:
                key, v = item
                out.append(_dump_str(key) + ": ")
            else:
                v = item
            break
        else:
            return "".join(out)


_DONE: Any = object()


_BOOL_TEXT = {True: "true", False: "false"}
# Where str() of a Decimal is not encode_decimal's text: an exponent or a
# NaN/Infinity (a character other than digits, point, sign), a fraction
# ending in 0, a negative zero, and 1e21 and up (found by length: str() is
# plain at any size, encode_decimal switches to an exponent there).
_DEC_STR_CHARS = b"0123456789.-\n"
_FRACTION_ENDS_IN_ZERO = re.compile(r"\.[0-9]*0\n")
_DEC_STR_MAX_LEN = 21


def _decimal_texts(col: Sequence[Decimal]) -> list[str]:
    """``encode_decimal`` of each Decimal of ``col``: their ``str`` when that
    is the same text (checked over the column joined, C-level), else per value."""
    texts = list(map(str, col))
    joined = "\n" + "\n".join(texts) + "\n"
    if (
        max(map(len, texts)) <= _DEC_STR_MAX_LEN
        and not joined.encode().translate(None, _DEC_STR_CHARS)  # (bytes.translate: C speed)
        and "\n-0\n" not in joined
        and ("0\n" not in joined or _FRACTION_ENDS_IN_ZERO.search(joined) is None)
    ):
        return texts
    return list(map(decimal_value_text, col))


def _column_texts(col: Sequence[Any]) -> list[str]:
    """The JSON text of each value of a table column, exactly as ``_scalar``
    gives it, with C-level maps over the values of each type (a column of
    floats holds ints where a value is integral, nulls are common)."""
    kinds = set(map(type, col))
    if len(kinds) == 1:
        return _kind_texts(kinds.pop(), col)
    if len(kinds) > _MIXED_KINDS:
        return list(map(_scalar, col))
    out: list[str] = [""] * len(col)
    types = list(map(type, col))
    for kind in kinds:
        where = list(compress(count(), map(is_, types, repeat(kind))))
        texts = _kind_texts(kind, list(map(col.__getitem__, where)))
        deque(map(out.__setitem__, where, texts), maxlen=0)
    return out


# More types than this in one column: per value (each type costs passes over the column).
_MIXED_KINDS = 3


def _kind_texts(kind: type, col: Sequence[Any]) -> list[str]:
    """``_scalar`` of each value of ``col``, all of type ``kind``."""
    if kind is str:
        return list(map(_dump_str, col))
    if kind is int:
        # encode_int's own rule, for the whole column: str() below the bound
        if max(max(col).bit_length(), min(col).bit_length()) < INT_STR_SAFE_BITS:
            return list(map(int.__repr__, col))
    elif kind is bool:
        return list(map(_BOOL_TEXT.__getitem__, col))
    elif kind is type(None):
        return ["null"] * len(col)
    elif kind is Decimal:
        return _decimal_texts(col)
    elif kind is float:
        return list(map(float.__repr__, col))
    return list(map(_scalar, col))


def _row_template(fields: Fields, level: int, unit: str | None) -> str:
    """A ``%`` format for the JSON object of one row of a table with these
    fields, the object standing at nesting ``level`` (open containers around
    it): ``%s`` per leaf value in row order, everything else literal, as the
    per-triple writer would write it.  Iterative: field groups nest as deep
    as the decoder allows."""
    kv = ":" if unit is None else ": "
    parts = ["{"]
    app = parts.append
    # per open group: its fields left, its depth, members written so far
    todo: list[list[Any]] = [[iter(fields), level + 1, 0]]
    while todo:
        top = todo[-1]
        f = next(top[0], None)
        if f is None:
            todo.pop()
            if top[2] and unit is not None:
                app("\n" + unit * (top[1] - 1))
            app("}")
            continue
        if top[2]:
            app(",")
        if unit is not None:
            app("\n" + unit * top[1])
        top[2] += 1
        app(_dump_str(f.name).replace("%", "%%") + kv)
        if f.children is None:
            app("%s")
        else:
            app("{")
            todo.append([iter(f.children), top[1] + 1, 0])
    return "".join(parts)


_NOT_A_VALUE = frozenset(("map_key", "end_map", "end_array"))
_KIND_NAMES = {
    "start_map": "an object",
    "string": "a string",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}


class EventJsonWriter:
    """``(prefix, event, value)`` triples, as ``parse`` yields them (``push``),
    to JSON text on a ``LineSink``: one document, pretty with ``indent``, or
    JSON Lines (``jsonl``: the elements of the array at ``path``, one a line)."""

    def __init__(
        self,
        sink: LineSink,
        *,
        indent: int | None,
        jsonl: bool,
        where: Callable[[], int],
        path: str | None = None,
    ) -> None:
        self.sink = sink
        self.unit = None if indent is None else " " * indent
        self.kv = ": " if indent is not None else ":"
        self.jsonl = jsonl
        self.path = path
        self.target = "" if path is None else path  # (the root's prefix)
        self.where = where
        # Children written so far, per open container of the value being
        # written; empty between values at the path (nothing is written then).
        self.counts: list[int] = []
        self.after_key = False
        self.matches = 0  # values found at the path
        self.row = 0  # the row being written of a table event, whose first row stands on where()
        self._template: tuple[Fields | None, int, str] = (None, 0, "")

    def _error(self, msg: str, code: str) -> ToonDecodeError:
        return ToonDecodeError(msg, code=code, line=self.where() + self.row, column=1, line_text="")

    def _match(self, ev: str) -> None:
        """A value at the path begins (event ``ev``): JSON Lines need an
        array, JSON output one value."""
        self.matches += 1
        if self.jsonl:
            if ev != "start_array":
                what = _KIND_NAMES.get(ev, "a " + ev)
                if self.path is None:
                    raise self._error(
                        f"JSON Lines output needs a root array (the root is {what}; a path can select an array in it)",
                        "not_array",
                    )
                raise self._error(
                    f"the value at path {self.path!r} is {what}, not an array (JSON Lines are an array's elements)",
                    "not_array",
                )
        elif self.matches > 1 and self.path is not None:  # (None: the root, one value)
            raise self._error(
                f"path {self.path!r} matches more than one value (JSON output is one value)",
                "ambiguous_path",
            )

    def finish(self) -> None:
        """End of input: a path that matched nothing is an error."""
        if not self.matches and self.path is not None:
            raise self._error(f"no value at path {self.path!r}", "not_found")

    def push(self, triples: list[tuple[str, str, Any]]) -> None:
        out: list[str] = []
        app = out.append
        counts = self.counts
        unit = self.unit
        jsonl = self.jsonl
        target = self.target
        for prefix, ev, value in triples:
            if not counts:  # between values at the path: look for the next one
                if prefix != target or ev in _NOT_A_VALUE:
                    continue
                self._match(ev)
                if jsonl:  # the array itself is not written: its elements are the lines
                    counts.append(0)
                    continue
            if ev == "map_key":
                self._sep(app)
                app(_dump_str(value))
                app(self.kv)
                self.after_key = True
                continue
            if ev == "end_map" or ev == "end_array":
                n = counts.pop()
                if jsonl and not counts:
                    continue
                if n and unit is not None:
                    app("\n" + unit * (len(counts) - (1 if jsonl else 0)))
                app("}" if ev == "end_map" else "]")
                if jsonl and len(counts) == 1:
                    app("\n")
                continue
            if self.after_key:
                self.after_key = False
            else:
                self._sep(app)
            if ev == "start_map" or ev == "start_array":
                app("{" if ev == "start_map" else "[")
                counts.append(0)
            else:
                app(_scalar(value))
                if jsonl and len(counts) == 1:
                    app("\n")
        if out:
            self.sink.part("".join(out))

    def _sep(self, app: Any) -> None:
        counts = self.counts
        if not counts:
            return
        level = len(counts)
        if self.jsonl:
            if level == 1:  # a new record: records are separated by the newline already written
                counts[-1] += 1
                return
            level -= 1
        if counts[-1]:
            app(",")
        if self.unit is not None:
            app("\n" + self.unit * level)
        counts[-1] += 1

    def rows(self, fields: Fields, columns: Sequence[Sequence[Any]], keys: Sequence[str] | None = None) -> None:
        """Rows of the innermost open container (a table being written),
        given column by column, with their entry keys for a keyed table: one
        template per header, no triple per cell."""
        n = len(columns[0])
        if not n:
            return
        counts = self.counts
        jsonl = self.jsonl
        level = len(counts) - 1 if jsonl else len(counts)  # (JSON Lines: the array at the path is not written)
        tfields, tlevel, tmpl = self._template
        if tfields is not fields or tlevel != level:
            tmpl = _row_template(fields, level, self.unit)
            self._template = (fields, level, tmpl)
        texts = map(tmpl.__mod__, zip(*map(_column_texts, columns)))
        if keys is not None:  # members "key": {row} of the keyed table's object
            texts = map(str.__add__, map(str.__add__, map(_dump_str, keys), repeat(self.kv)), texts)
        if jsonl and level == 0:  # records: one line each
            text = "\n".join(texts) + "\n"
        else:
            sep = "," if self.unit is None else ",\n" + self.unit * level
            first = sep if counts[-1] else sep[1:]
            text = first + sep.join(texts)
        counts[-1] += n
        self.sink.part(text)

    def events(self, adapter: ParseAdapter, events: list[Event], *, table_rows: bool = True) -> None:
        """The decoder's events: table rows in the value being written go
        straight to ``rows``; everything else through the adapter's triples
        (``table_rows=False``: table rows too, the reference the tests compare with)."""
        kinds = list(map(type, events))
        if Columns not in kinds and Rows not in kinds and Entries not in kinds:
            self.push(adapter.push(events))
            return
        start = 0
        target = self.target
        for i, t in enumerate(kinds):
            if t is not Columns and t is not Rows and t is not Entries:
                continue
            if start < i:
                self.push(adapter.push(events[start:i]))
            start = i + 1
            ev: Any = events[i]
            top = adapter.scopes[-1]
            assert top.fields is not None
            if self.counts and table_rows:  # inside the value being written
                if t is Columns:
                    self.rows(top.fields, ev.columns)
                elif t is Rows:
                    self.rows(top.fields, list(zip(*ev.rows)) or [()])
                else:
                    entries = ev.entries
                    columns = list(zip(*map(itemgetter(1), entries))) or [()]
                    self.rows(top.fields, columns, list(map(itemgetter(0), entries)))
            elif not table_rows or (
                (target == top.child or target.startswith(top.child + "."))
                if t is not Entries
                else (top.sep == "" or target.startswith(top.prefix + "."))
            ):
                # The path leads into these rows (or the reference): the triples find it, a row at a
                # time, so that an error names its row's line (an event's rows stand on consecutive
                # lines from its own).
                rows = ev.entries if t is Entries else ev.rows if t is Rows else list(zip(*ev.columns))
                for k, row in enumerate(rows):
                    self.row = k
                    self.push(adapter.push([Entries([row]) if t is Entries else Rows([row])]))
                self.row = 0
            # (else: rows outside the path, skipped)
        if start < len(events):
            self.push(adapter.push(events[start:]))


class _JsonSink(LineSink):
    """A ``LineSink`` for JSON text: a lone surrogate (kept in a value decoded from a str, as
    ``json.loads`` keeps ``"\\ud800"``) has no UTF-8 form, so a binary file gets its escape,
    which is the same value inside a JSON string (the only place input text goes)."""

    __slots__ = ()

    def _encode(self, text: str) -> bytes:
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:  # (only a surrogate has no UTF-8 form)
            return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _run(
    source: Source,
    out: IO[str] | IO[bytes],
    *,
    indent: int | None,
    jsonl: bool,
    path: str | None,
    options: dict[str, Any],
    table_rows: bool = True,
) -> None:
    """The one loop behind both functions; ``table_rows=False`` writes table
    rows through the per-triple path too (the reference the tests compare with)."""
    native = _native_writer(source, indent=indent, jsonl=jsonl, path=path, options=options) if table_rows else None
    if native is not None:  # the engine writes the JSON bytes itself
        out_sink = _JsonSink(out)
        for chunk in read_chunks(source, DEFAULT_BUF_SIZE):
            out_sink.utf8(native.feed(chunk))
        while tail := native.close():  # (the rest comes a piece a call)
            out_sink.utf8(tail)
        out_sink.flush()
        return
    # Where the writer can raise its own errors (a value at the path that is not an array...), the
    # events go to it a line at a time, so that the error names its line under any chunking; else
    # in parse's batches.
    exact = jsonl or path is not None
    decoder = driver_decoder(False, options, batches=not exact, value_runs=not exact, line_marks=exact)
    adapter = ParseAdapter()
    sink = _JsonSink(out)
    line = 1
    writer = EventJsonWriter(sink, indent=indent, jsonl=jsonl, path=path, where=lambda: line)

    def write(events: list[Event]) -> None:
        writer.events(adapter, events, table_rows=table_rows)

    def push(events: list[Event]) -> None:
        nonlocal line
        if not exact:
            line = max(decoder.line, 1)
            write(events)
            return
        for line, part in decoder.line_batches(events):
            write(part)

    try:
        for chunk in read_chunks(source, DEFAULT_BUF_SIZE):
            push(decoder.feed(chunk))
        push(decoder.close())
    except ToonDecodeError:
        # the lines before the failing one are written first: of two errors, the writer's
        # own on an earlier line (a root that is not an array, say) is the one raised
        push(decoder.events_before_error())
        raise
    line = max(decoder.line, 1)  # (a path that matched nothing: the document's last line)
    writer.finish()
    sink.flush()


def _native_writer(
    source: Source, *, indent: int | None, jsonl: bool, path: str | None, options: dict[str, Any]
) -> _engine.JsonWriter | None:
    """The engine's TOON-to-JSON writer, or None where it cannot run: no such capability, a
    ``parse_float`` hook, another option it does not take, an input it cannot read."""
    make = _engine.current().json_writer
    if make is None or "parse_float" in options or not (path is None or type(path) is str):
        return None
    native_options = engine_options(source, True, options)
    if native_options is None:
        return None
    del native_options["parse_float"]
    writer: _engine.JsonWriter | None = native_push(make, path=path, jsonl=jsonl, indent=indent, **native_options)
    return writer


def decode_to_json(
    source: Source, out: IO[str] | IO[bytes], *, indent: int | None = None, path: str | None = None, **options: Any
) -> None:
    """Write the JSON text of a TOON document, or of the value at ``path``,
    streaming (bounded memory).

    Numbers are written exactly as decoded (no float rounding).  ``path`` is
    an ijson prefix (``"data.users"``; ``item`` for array elements, ``""``
    the root): no value there is a ToonDecodeError (code ``not_found``), a
    path through ``item`` that matches several values too
    (``ambiguous_path``).  ``options`` go to :class:`toonstream.Decoder`
    (``strict``, ``indent_size``, limits).

    >>> import io
    >>> out = io.StringIO()
    >>> decode_to_json("a[2]: 1,x\\nb:\\n  c: 0.10", out)
    >>> out.getvalue()
    '{"a":[1,"x"],"b":{"c":0.1}}'
    >>> out = io.StringIO()
    >>> decode_to_json("a[2]: 1,x\\nb:\\n  c: 0.10", out, path="b")
    >>> out.getvalue()
    '{"c":0.1}'
    """
    _run(source, out, indent=indent, jsonl=False, path=path, options=options)


def decode_to_jsonl(source: Source, out: IO[str] | IO[bytes], *, path: str | None = None, **options: Any) -> None:
    """Write each element of a TOON root array, or of the array at ``path``,
    as one line of JSON (JSON Lines), streaming (bounded memory).

    ``path`` is an ijson prefix as for :func:`decode_to_json`; when it
    matches several arrays (``groups.item.rows``) their elements are written
    one after the other.  A value there that is not an array is a
    ToonDecodeError (code ``not_array``), no value at all ``not_found``.

    >>> import io
    >>> out = io.StringIO()
    >>> decode_to_jsonl("[2]{id,tag}:\\n  1,a\\n  2,b", out)
    >>> out.getvalue()
    '{"id":1,"tag":"a"}\\n{"id":2,"tag":"b"}\\n'
    >>> out = io.StringIO()
    >>> decode_to_jsonl("count: 2\\nusers[2]{id}:\\n  1\\n  2", out, path="users")
    >>> out.getvalue()
    '{"id":1}\\n{"id":2}\\n'
    """
    _run(source, out, indent=None, jsonl=True, path=path, options=options)

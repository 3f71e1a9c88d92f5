"""The decoder state machine: lines in, events out.  No I/O.

Rule 1 (after h11): everything that decides what a line means lives in this
module, with two helpers it delegates to: :mod:`.headers` (the grammar of a
§6 header once the machine has found one) and :mod:`.blocks` (runs of lines
decoded at once, each an exact shortcut of this module's per-line path).  The
machine sees one complete line at a time (:mod:`.lines` made it)
and keeps only a stack of open scopes, so its memory does not grow with the
number of lines or rows; duplicate-key detection in strict mode is the one
exception (it must remember the keys of each open object).

Each open scope is a ``_Frame``; the line handler is chosen by the innermost
frame's kind (``_HANDLERS``).  A frame's ``depth`` is the depth at which its
content lines stand (§1.3 "content depth"): a line shallower than that closes
the frame; a deeper one that no frame expects is an error (§8, §14.2).

Nothing here recurses: scopes are a list, field lists are parsed with an
explicit stack, so 100k levels of nesting cost memory, not Python stack.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Protocol, Sequence

from .._errors import ToonDecodeError
from .blocks import Blocks
from .events import (
    END_ARRAY,
    END_KEYED,
    END_OBJECT,
    END_TABLE,
    START_OBJECT,
    Entries,
    Event,
    Key,
    Rows,
    Scalar,
    StartArray,
    StartTable,
    Values,
)
from .grammar import UNQUOTED_KEY
from .headers import Header, HeaderParser, Malformed
from .numbers import TokenConverter
from .scalars import Fail, decode_key, find_unquoted, split_cells

# Events on the per-line path are made with tuple.__new__ (C) rather than the
# NamedTuple constructors (a Python-level function each).
_new = tuple.__new__

# Frame kinds.
OBJECT = 0  # fields at `depth`
LIST = 1  # "- " items at `depth` (§9.4)
TABLE = 2  # rows at `depth` (§9.3)
KEYED = 3  # entry rows at `depth` (§9.5)

# Root states (§5 root form).
ROOT_NEW = 0  # no content line yet
ROOT_OBJECT = 1  # the root object frame is at the bottom of the stack
ROOT_ARRAY = 2  # a root array or keyed root object is open
ROOT_DONE = 3  # the root form is complete: any further content is trailing

class KeySet(Protocol):
    """The entry keys of a keyed table (strict mode, §14.3): the machine asks
    ``key in keys`` and calls ``add`` for each entry row it reads; ``take``
    adds the keys of rows a consumer parsed itself (see ``Machine.take_keys``),
    in the form that key set takes."""

    def __contains__(self, key: object) -> bool: ...

    def add(self, key: str) -> None: ...

    def take(self, keys: Any) -> int: ...


class Keys(set[str]):
    """The reference's :class:`KeySet`: a ``set``; ``take`` takes a sequence of keys."""

    def take(self, keys: Sequence[str]) -> int:
        """Add ``keys`` up to the first duplicate (of a key held, or of an
        earlier one of them); return how many it added."""
        n = len(keys)
        if self.isdisjoint(keys):
            before = len(self)
            self.update(keys)
            if len(self) - before == n:
                return n
            self.difference_update(keys)  # (all of them were new: a repeat among them)
        seen: set[str] = set()  # (an error path: the first duplicate in order)
        for i, key in enumerate(keys):
            if key in self or key in seen:
                self.update(keys[:i])
                return i
            seen.add(key)
        raise AssertionError("a duplicate that is not")  # pragma: no cover


class _Frame:
    __slots__ = ("kind", "depth", "length", "count", "delim", "width", "keys", "line", "text")

    def __init__(self, kind: int, depth: int, line: int, text: str) -> None:
        self.kind = kind
        self.depth = depth
        self.length: int | None = None
        self.count = 0
        self.delim = ","
        self.width = 0
        self.keys: set[str] | KeySet | None = None  # (a keyed table's: a KeySet)
        self.line = line  # where the scope was opened (for count errors)
        self.text = text


def _header_column(text: str) -> int:
    """The column where the header on line ``text`` starts: after the
    indentation and a list item's hyphen (a count error points at it, as an
    inline array's does)."""
    i = len(text) - len(text.lstrip(" "))
    if text.startswith("- ", i):
        i += 2
    return i + 1


def _fail(message: str, code: str, column: int | None = None) -> ToonDecodeError:
    return ToonDecodeError(message, code=code, column=column)


class Machine(Blocks):
    """Turns lines into events.  ``lines(first_lineno, lines)`` then ``close()``;
    both return the events produced since the previous call."""

    def __init__(
        self,
        *,
        convert: TokenConverter,
        convert_column: Callable[[Sequence[str]], Any] | None = None,
        indent_size: int = 2,
        strict: bool = True,
        max_depth: int = 10_000,
        max_fields: int = 10_000,
        batches: bool = False,
        value_runs: bool = False,
        key_set: Callable[[], KeySet] = Keys,
    ) -> None:
        # (the options were checked by the Decoder)
        self.convert = convert
        self.key_set = key_set  # makes a keyed table's KeySet
        # Decodes a whole column of row tokens at once (the row-block fast path);
        # None disables that path.
        self.convert_column = convert_column
        # Runs of plain `key: value` lines become one Members event (opt-in).
        self.batches = batches
        self.indent_size = indent_size
        self.strict = strict
        self.max_depth = max_depth
        self.max_fields = max_fields
        self.stack: list[_Frame] = []
        self.root = ROOT_NEW
        self.out: list[Event] = []
        self.blank_line = 0  # first blank line since the last content line (0: none)
        self.blank_text = ""  # its text (spaces or tabs), for the error's line text
        self.started_arrays = 0  # open array scopes that already hold an item
        self.failed: ToonDecodeError | None = None
        self._lineno = 0
        self._text = ""
        self.headers = HeaderParser(strict=strict, max_depth=max_depth, max_fields=max_fields)
        # Runs of primitive list items (``- value`` lines) as one Values event
        # (needs convert_column): for the drivers whose consumers take values,
        # not lines (loads, items, parse, the JSON writer).
        self.value_runs = value_runs
        self._keys_ok: set[str] = set()  # keys known to be plain unquoted keys
        # Opt-in (the drivers whose own errors name a line): for each line taken the per-line
        # way, the index in ``out`` of its first event and its number, flat pairs; and for a
        # block of rows that starts a Rows event.  The other block paths add none: their
        # events are Columns, Members and Values, which no driver refuses.
        self.marks: list[int] | None = None
        # The line after the last row put in a Rows or Entries event.  Marked, a row joins the
        # last event only from that line, so an event's rows stand on consecutive lines from
        # its mark's (a JSON path can lead into a table's cells, and its error names the row's).
        self._rows_end = 0

    # ------------------------------------------------------------------ driving

    def lines(self, first_lineno: int, lines: list[str]) -> list[Event]:
        """Process complete lines; ``first_lineno`` is the 1-based number of ``lines[0]``."""
        if self.failed is not None:
            raise self.failed
        stack = self.stack
        fast = self.convert_column is not None
        i = 0
        n = len(lines)
        mark = len(self.out)
        try:
            while i < n:
                if stack and not self.blank_line:
                    kind = stack[-1].kind
                    if fast and kind == TABLE:
                        j = self._row_block(stack[-1], lines, i, first_lineno)
                        if j > i:
                            i = j
                            continue
                    elif kind == OBJECT and self.batches:
                        j = self._member_block(stack[-1], lines, i, first_lineno)
                        if j > i:
                            i = j
                            continue
                    if fast and self.value_runs and kind == LIST:
                        if self._primitive_cooldown:  # (counted here: no call per line)
                            self._primitive_cooldown -= 1
                        else:
                            j = self._primitive_block(stack[-1], lines, i, first_lineno)
                            if j > i:
                                i = j
                                continue
                text = lines[i]
                self._lineno = first_lineno + i
                self._text = text
                mark = len(self.out)
                if self.marks is not None:
                    self.marks += (mark, self._lineno)
                self._line(text)
                i += 1
        except ToonDecodeError as e:
            # What a failing line had emitted goes: the events before an error are
            # exactly those of the lines before it, however the input was chunked.
            # (The block paths add a run's events only once it all decoded.)
            del self.out[mark:]
            raise self._located(e) from None
        out = self.out
        self.out = []
        return out

    def close(self) -> list[Event]:
        """End of input: close every open scope (running the count checks)."""
        if self.failed is not None:
            raise self.failed
        try:
            while self.stack:
                self._pop()
            if self.root == ROOT_NEW:  # §5: an empty document is an empty object
                self.out.append(START_OBJECT)
                self.out.append(END_OBJECT)
                self.root = ROOT_DONE
        except ToonDecodeError as e:
            raise self._located(e) from None
        out = self.out
        self.out = []
        return out

    def wants_rows(self, n: int) -> bool:
        """The next line would go to a tabular array's row path (if a row),
        and (strict, declared length) more than ``n`` rows are still due."""
        return n < self.rows_room()

    def rows_room(self) -> int:
        """The ``n`` for which ``wants_rows(n)`` holds are those below this
        (0 outside a tabular array; unbounded as sys.maxsize)."""
        stack = self.stack
        if not stack or self.blank_line or self.failed is not None:
            return 0
        top = stack[-1]
        if top.kind != TABLE:
            return 0
        if not self.strict or top.length is None:
            return sys.maxsize
        return max(0, top.length - top.count)

    def table_context(self) -> tuple[int, str, int, int, bool] | None:
        """``(indent, delimiter, width, rows_left, keyed)`` when the next line,
        if it is a row, belongs to the innermost tabular array (or, ``keyed``,
        is an entry row of the innermost keyed table); None otherwise.

        Only in strict mode and with no blank line pending: those are the
        cases where "a line of ``indent`` spaces then simple cells" means
        exactly "one more row" (the caller's fast path relies on that).
        """
        stack = self.stack
        if self.failed is not None or not stack or not self.strict or self.blank_line:
            return None
        top = stack[-1]
        if top.kind not in (TABLE, KEYED) or top.length is None:
            return None
        return top.depth * self.indent_size, top.delim, top.width, top.length - top.count, top.kind == KEYED

    def take_keys(self, keys: Any) -> int:
        """Add ``keys``, the entry keys of rows the caller parsed itself (in
        order, in the form the innermost keyed table's :class:`KeySet`
        takes: a sequence of str for :class:`Keys`), up to the first
        duplicate (§14.3); return how many it took.  The caller then counts
        that many rows (``skip_rows``) and lets the machine read the
        duplicate's line, which it reports."""
        held = self.stack[-1].keys
        assert held is not None and not type(held) is set
        return held.take(keys)  # type: ignore[union-attr]

    def skip_rows(self, count: int, last_lineno: int) -> None:
        """Count ``count`` rows of the innermost table (or keyed table) that
        the caller parsed itself (see ``table_context``); ``last_lineno`` is
        the last one's line.

        The caller vouches that each line was a plain row of the right width
        and that there were at most ``rows_left`` of them (and, keyed, that
        ``take_keys`` took their keys); the machine only does the
        bookkeeping its own row path would have done.
        """
        if count <= 0:
            return
        frame = self.stack[-1]
        assert frame.kind in (TABLE, KEYED) and frame.length is not None and frame.count + count <= frame.length
        if frame.count == 0:
            self.started_arrays += 1
        frame.count += count
        self._lineno = last_lineno
        self._text = ""

    def _located(self, e: ToonDecodeError) -> ToonDecodeError:
        if isinstance(e, Fail):
            # A helper's offset is relative to the substring it saw; the
            # public error is a plain ToonDecodeError with the line's column.
            column = e.column if e.column is not None else max(1, self._col_base + e.offset + 1)
            e = ToonDecodeError(e.msg, code=e.code, column=column)
        e.locate(self._lineno, None, self._text)
        self.failed = e
        return e

    # ------------------------------------------------------------------ one line

    _col_base = 0  # 0-based column where the substring being parsed starts

    def _line(self, text: str) -> None:
        content = text.lstrip(" ")
        # (content starts with a non-space: it is blank only if it starts with a tab)
        if not content or (content[0] == "\t" and not content.strip(" \t")):
            # §12 blank line: remembered; an error only if the next content
            # line shows it sat inside an array span.
            if not self.blank_line:
                self.blank_line = self._lineno
                self.blank_text = text
            return
        first = content[0]
        if first == "#":
            return  # §5.1 comment line, removed before anything else
        indent = len(text) - len(content)
        if first == "\t":
            raise _fail("tab in indentation", "tab_indent", indent + 1)
        size = self.indent_size
        if indent % size:
            if self.strict:
                raise _fail(
                    f"indentation of {indent} spaces is not a multiple of {size}", "bad_indent", indent + 1
                )
        depth = indent // size
        if depth > self.max_depth:
            raise _fail(f"nesting deeper than max_depth ({self.max_depth})", "too_deep", indent + 1)
        content = content.rstrip(" ")
        stack = self.stack
        while stack and depth < stack[-1].depth:
            self._pop()
        if self.blank_line:
            if self.started_arrays and self.strict:
                blank = self.blank_line
                self.blank_line = 0
                e = _fail("blank line inside an array", "blank_line", 1)
                e.locate(blank, 1, self.blank_text)
                raise e
            self.blank_line = 0
        self._col_base = indent
        if not stack:
            if self.root == ROOT_NEW:
                self._root_line(content, depth)
                return
            raise _fail("content after the end of the root value", "trailing_content", indent + 1)
        top = stack[-1]
        if depth > top.depth:
            if top.count == 0:
                raise _fail("indentation jumps more than one level", "depth_jump", indent + 1)
            raise _fail("line is indented deeper than its scope allows", "over_indented", indent + 1)
        _HANDLERS[top.kind](self, top, content, depth)

    def _root_line(self, c: str, depth: int) -> None:
        if depth != 0:
            raise _fail("the first line must not be indented", "over_indented", self._col_base + 1)
        colon = find_unquoted(c, ":")
        if c[0] == "[":
            if c == "[]":  # §9.1 empty root array
                self.out.append(StartArray(0))
                self.out.append(END_ARRAY)
                self.root = ROOT_DONE
                return
            if colon != -1:
                h = self.headers.parse(c, 0, self._col_base)
                if isinstance(h, Header):
                    self.root = ROOT_ARRAY
                    self._open_header(None, h, 1)
                    if not self.stack:  # inline root array: complete already
                        self.root = ROOT_DONE
                    return
                if self.strict:
                    raise _fail(h.message, h.code, self._col_base + h.offset + 1)
        if colon == -1:  # §5: a single primitive
            self.out.append(Scalar(self._convert(c, 0)))
            self.root = ROOT_DONE
            return
        self.root = ROOT_OBJECT
        frame = _Frame(OBJECT, 0, self._lineno, self._text)
        if self.strict:
            frame.keys = set()
        self.stack.append(frame)
        self.out.append(START_OBJECT)
        self._object_line(frame, c, 0)

    # ------------------------------------------------------------------ scopes

    def _push(self, kind: int, depth: int) -> _Frame:
        if len(self.stack) >= self.max_depth:
            raise _fail(f"nesting deeper than max_depth ({self.max_depth})", "too_deep", self._col_base + 1)
        frame = _Frame(kind, depth, self._lineno, self._text)
        self.stack.append(frame)
        return frame

    def _pop(self) -> None:
        frame = self.stack.pop()
        kind = frame.kind
        if kind == OBJECT:
            self.out.append(END_OBJECT)
            return
        if frame.count:
            self.started_arrays -= 1
        if self.strict and frame.length is not None and frame.count != frame.length:
            what = {LIST: "list items", TABLE: "rows", KEYED: "entry rows"}[kind]
            column = _header_column(frame.text)
            e = _fail(
                f"declared {frame.length} {what}, found {frame.count}"
                + (f" (scope ended at line {self._lineno})" if self._lineno > frame.line else ""),
                "count_mismatch",
                column,
            )
            e.locate(frame.line, column, frame.text)
            raise e
        self.out.append(END_ARRAY if kind == LIST else END_TABLE if kind == TABLE else END_KEYED)
        if not self.stack and self.root == ROOT_ARRAY:
            self.root = ROOT_DONE

    def _count_item(self, frame: _Frame) -> None:
        frame.count += 1
        if frame.count == 1:
            self.started_arrays += 1
        if self.strict and frame.length is not None and frame.count > frame.length:
            what = {LIST: "list items", TABLE: "rows", KEYED: "entry rows"}[frame.kind]
            raise _fail(
                f"more {what} than the {frame.length} declared at line {frame.line}",
                "count_mismatch",
                self._col_base + 1,
            )

    # ------------------------------------------------------------------ objects

    def _object_line(self, frame: _Frame, c: str, depth: int) -> None:
        """A line at an object's field depth: a key-value line or a keyed header (§8)."""
        key = self._field(c, depth, keyless_ok=False)
        keys = frame.keys
        if keys is not None:
            if key in keys:
                raise _fail(f"duplicate key {key!r}", "duplicate_key", self._col_base + 1)
            keys.add(key)
        frame.count += 1

    def _field(self, c: str, depth: int, *, keyless_ok: bool) -> str:
        """Parse a field line at ``depth``; emit its events; open its scope if any.

        Returns the key (for duplicate detection).
        """
        if '"' in c:
            colon = find_unquoted(c, ":")
            br = find_unquoted(c, "[") if colon != -1 else -1
        else:  # the common line: no quotes, plain searches
            colon = c.find(":")
            br = c.find("[", 0, colon)
        if colon == -1:
            raise _fail("missing colon after key", "missing_colon", self._col_base + 1)
        if br != -1 and br < colon:
            key_part = c[:br]
            key: str | None
            if not key_part:
                key = None
            elif key_part[0] == '"':
                key = decode_key(key_part)
            elif UNQUOTED_KEY.fullmatch(key_part):
                key = key_part
            else:
                key = ""  # not a header: falls through to key-value below
                br = -1
            if br != -1:
                h = self.headers.parse(c, br, self._col_base)
                if isinstance(h, Header):
                    if key is None and not (keyless_ok and h.fields is None):
                        h = Malformed(
                            "a header without a key is only valid at the root or as a list item"
                            if h.fields is None
                            else "a tabular header without a key is only valid at the root",
                            "keyless_header",
                            0,
                        )
                    else:
                        out_key = "" if key is None else key
                        if key is not None:
                            self.out.append(Key(key))
                        self._open_header(key, h, depth + 1)
                        return out_key
                if self.strict:
                    raise _fail(h.message, h.code, self._col_base + h.offset + 1)
                # non-strict: §6 fall-through, the text before the colon is a literal key
        raw_key = c[:colon].strip(" ")
        key = decode_key(raw_key) if raw_key[:1] == '"' else raw_key
        value = c[colon + 1 :].strip(" ")
        out = self.out
        out.append(_new(Key, (key,)))
        if not value:
            out.append(START_OBJECT)
            frame = self._push(OBJECT, depth + 1)
            if self.strict:
                frame.keys = set()
        elif value == "[]":
            out.append(StartArray(0))
            out.append(END_ARRAY)
        else:
            try:
                v = self.convert(value)
            except Fail as e:
                e.offset += c.find(value, colon)
                raise
            out.append(_new(Scalar, (v,)))
        return key

    # ------------------------------------------------------------------ headers

    def _open_header(self, key: str | None, h: Header, depth: int) -> None:
        """Emit the start of a header's value and open its scope (content at ``depth``)."""
        out = self.out
        if h.fields is not None:
            if h.rest.strip(" "):
                raise _fail("content after a tabular header's colon", "content_after_header", self._col_base + h.rest_col + 1)
            frame = self._push(KEYED if h.keyed else TABLE, depth)
            frame.length = h.length
            frame.delim = h.delim
            frame.width = h.width
            if h.keyed and self.strict:
                frame.keys = self.key_set()
            out.append(StartTable(h.fields, h.length, h.keyed, h.delim, h.width, self._lineno, self._text))
            return
        rest = h.rest.strip(" ")
        if not rest:
            out.append(StartArray(h.length))
            frame = self._push(LIST, depth)
            frame.length = h.length
            frame.delim = h.delim
            return
        # §9.1 inline primitive array
        cells = split_cells(h.rest, h.delim)
        if self.strict and len(cells) != h.length:
            raise _fail(
                f"declared {h.length} values, found {len(cells)}", "count_mismatch", self._col_base + 1
            )
        base = h.rest_col
        out.append(StartArray(h.length))
        out.append(Values(self._convert_cells(cells, base)))
        out.append(END_ARRAY)

    # ------------------------------------------------------------------ lists

    def _list_line(self, frame: _Frame, c: str, depth: int) -> None:
        """A line at an expanded list's item depth: must be a list item (§9.4, §10)."""
        out = self.out
        if c == "-":  # §10 empty object item
            self._count_item(frame)
            out.append(START_OBJECT)
            out.append(END_OBJECT)
            return
        if not c.startswith("- "):
            raise _fail("expected a list item ('- ...')", "expected_list_item", self._col_base + 1)
        self._count_item(frame)
        rest = c[2:].lstrip(" ")
        offset = len(c) - len(rest)
        self._col_base += offset
        if rest == "[]":  # §9.2 empty inner array
            out.append(StartArray(0))
            out.append(END_ARRAY)
            return
        colon = find_unquoted(rest, ":")
        if colon == -1:  # a primitive item
            out.append(Scalar(self._convert(rest, 0)))
            return
        if rest[0] == "[":
            h = self.headers.parse(rest, 0, self._col_base)
            if isinstance(h, Header):
                if h.fields is None:
                    # §9.2/§9.4 an array item; a nested list's items are one level down
                    self._open_header(None, h, depth + 1)
                    return
                h = Malformed(
                    "a tabular header without a key is only valid at the root", "keyless_header", 0
                )
            if self.strict:
                raise _fail(h.message, h.code, self._col_base + h.offset + 1)
        # §10: an object whose first field sits on the hyphen line, at depth + 1
        out.append(START_OBJECT)
        obj = self._push(OBJECT, depth + 1)
        if self.strict:
            obj.keys = set()
        self._object_line(obj, rest, depth + 1)

    # ------------------------------------------------------------------ tables

    def _table_line(self, frame: _Frame, c: str, depth: int) -> None:
        """A line at a tabular array's row depth (§9.3)."""
        delim = frame.delim
        if ":" in c:
            colon = find_unquoted(c, ":")
            if colon != -1:
                d = find_unquoted(c, delim)
                if d == -1 or colon < d:
                    # §9.3 disambiguation says "key-value line, end of rows"; but
                    # at row depth no enclosing object can hold it.
                    raise _fail(
                        "key-value line at row depth (rows ended, but the line belongs to no object)",
                        "over_indented",
                        self._col_base + 1,
                    )
        cells = split_cells(c, delim)
        if len(cells) != frame.width:
            raise _fail(
                f"row has {len(cells)} cells, header declares {frame.width} fields", "width_mismatch", self._col_base + 1
            )
        self._count_item(frame)
        row = tuple(self._convert_cells(cells, 0))
        out = self.out
        if out and type(out[-1]) is Rows and (self.marks is None or self._rows_end == self._lineno):
            out[-1].rows.append(row)
        else:
            out.append(Rows([row]))
        self._rows_end = self._lineno + 1

    def _keyed_line(self, frame: _Frame, c: str, depth: int) -> None:
        """A line at a keyed table's entry depth: ``entrykey: cells`` (§9.5)."""
        colon = find_unquoted(c, ":")
        if colon == -1:
            raise _fail("entry row without a colon", "missing_colon", self._col_base + 1)
        raw_key = c[:colon].strip(" ")
        key = decode_key(raw_key) if raw_key[:1] == '"' else raw_key
        rest = c[colon + 1 :]
        cells = split_cells(rest, frame.delim) if rest.strip(" ") else []
        if len(cells) != frame.width:
            raise _fail(
                f"entry row has {len(cells)} cells, header declares {frame.width} fields",
                "width_mismatch",
                self._col_base + colon + 2,
            )
        keys = frame.keys
        if keys is not None:
            if key in keys:
                raise _fail(f"duplicate key {key!r}", "duplicate_key", self._col_base + 1)
            keys.add(key)
        self._count_item(frame)
        entry = (key, tuple(self._convert_cells(cells, colon + 1)))
        out = self.out
        if out and type(out[-1]) is Entries and (self.marks is None or self._rows_end == self._lineno):
            out[-1].entries.append(entry)
        else:
            out.append(Entries([entry]))
        self._rows_end = self._lineno + 1

    # ------------------------------------------------------------------ tokens

    def _convert(self, tok: str, offset: int) -> Any:
        try:
            return self.convert(tok)
        except Fail as e:
            e.offset += offset
            raise

    def _convert_cells(self, cells: list[str], base: int) -> list[Any]:
        convert = self.convert
        try:
            return [convert(t.strip(" ")) for t in cells]
        except Fail as e:
            # Error path only: find which cell failed to report its column.
            pos = base
            for t in cells:
                tok = t.strip(" ")
                try:
                    convert(tok)
                except Fail:
                    e.offset += pos + (len(t) - len(t.lstrip(" ")))
                    raise e from None
                pos += len(t) + 1
            raise


_HANDLERS: dict[int, Callable[[Machine, _Frame, str, int], None]] = {
    OBJECT: Machine._object_line,
    LIST: Machine._list_line,
    TABLE: Machine._table_line,
    KEYED: Machine._keyed_line,
}

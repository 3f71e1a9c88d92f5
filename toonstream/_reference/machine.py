"""The decoder state machine: lines in, events out.  No I/O.

Rule 1 (after h11): everything that decides what a line means lives in this
module.  The machine sees one complete line at a time (``_lines.py`` made it)
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

import re
import sys
from typing import Any, Callable, Sequence

from .._errors import ToonDecodeError
from .events import (
    END_ARRAY,
    END_KEYED,
    END_OBJECT,
    END_TABLE,
    START_OBJECT,
    Entries,
    Event,
    Field,
    Fields,
    Key,
    Columns,
    Members,
    Rows,
    Scalar,
    StartArray,
    StartTable,
    Values,
)
from .grammar import LENGTH, UNQUOTED_KEY
from .numbers import TokenConverter
from .scalars import Fail, decode_key, find_unquoted, quoted_rows, scan_quoted, split_cells, split_columns

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

# Longest declared length accepted in a header: larger values cannot be
# satisfied by any real input and would only feed a pathological int().
_MAX_LENGTH_DIGITS = 19


class _Frame:
    __slots__ = ("kind", "depth", "length", "count", "delim", "width", "keys", "line", "text")

    def __init__(self, kind: int, depth: int, line: int, text: str) -> None:
        self.kind = kind
        self.depth = depth
        self.length: int | None = None
        self.count = 0
        self.delim = ","
        self.width = 0
        self.keys: set[str] | None = None
        self.line = line  # where the scope was opened (for count errors)
        self.text = text


class _Header:
    """A parsed §6 header: ``key[N:?delim]{fields}: rest``."""

    __slots__ = ("length", "keyed", "delim", "fields", "width", "rest", "rest_col")

    def __init__(
        self, length: int, keyed: bool, delim: str, fields: Fields | None, width: int, rest: str, rest_col: int
    ) -> None:
        self.length = length
        self.keyed = keyed
        self.delim = delim
        self.fields = fields
        self.width = width
        self.rest = rest
        self.rest_col = rest_col


class _Malformed:
    """Why a line that looked like a header is not one (returned, not raised:
    non-strict decoders fall through to key-value parsing, §6)."""

    __slots__ = ("message", "code", "offset")

    def __init__(self, message: str, code: str, offset: int) -> None:
        self.message = message
        self.code = code
        self.offset = offset


def _fail(message: str, code: str, column: int | None = None) -> ToonDecodeError:
    return ToonDecodeError(message, code=code, column=column)


class Machine:
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
        fields: bool = False,
        item_runs: bool = False,
    ) -> None:
        # (the options were checked by the Decoder)
        self.convert = convert
        # Decodes a whole column of row tokens at once (the row-block fast path);
        # None disables that path.
        self.convert_column = convert_column
        # Runs of plain `key: value` lines become one Members event (opt-in).
        self.fields = fields
        self.indent_size = indent_size
        self.strict = strict
        self.max_depth = max_depth
        self.max_fields = max_fields
        self.stack: list[_Frame] = []
        self.root = ROOT_NEW
        self.out: list[Event] = []
        self.blank_line = 0  # first blank line since the last content line (0: none)
        self.started_arrays = 0  # open array scopes that already hold an item
        self.failed: ToonDecodeError | None = None
        self._lineno = 0
        self._text = ""
        self._fields_cache: dict[tuple[str, str], tuple[Fields, int, int]] = {}
        # Runs of primitive list items (``- value`` lines) as one Values event
        # (needs convert_column): for the drivers whose consumers take values,
        # not lines (loads, items, parse, the JSON writer).
        self.item_runs = item_runs
        self._keys_ok: set[str] = set()  # keys known to be plain unquoted keys
        # Opt-in (the drivers whose own errors name a line): for each line taken the per-line
        # way, the index in ``out`` of its first event and its number, flat pairs.  The block
        # paths add none: their events are Rows, Columns, Members and Values, which no driver
        # refuses.
        self.marks: list[int] | None = None

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
                    elif kind == OBJECT and self.fields:
                        j = self._field_block(stack[-1], lines, i, first_lineno)
                        if j > i:
                            i = j
                            continue
                    if fast and self.item_runs and kind == LIST:
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

    def table_context(self) -> tuple[int, str, int, int] | None:
        """``(indent, delimiter, width, rows_left)`` when the next line, if it is
        a row, belongs to the innermost tabular array; None otherwise.

        Only in strict mode and with no blank line pending: those are the
        cases where "a line of ``indent`` spaces then simple cells" means
        exactly "one more row" (the caller's fast path relies on that).
        """
        stack = self.stack
        if self.failed is not None or not stack or not self.strict or self.blank_line:
            return None
        top = stack[-1]
        if top.kind != TABLE or top.length is None:
            return None
        return top.depth * self.indent_size, top.delim, top.width, top.length - top.count

    def skip_rows(self, count: int, last_lineno: int) -> None:
        """Count ``count`` rows of the innermost table that the caller parsed
        itself (see ``table_context``); ``last_lineno`` is the last one's line.

        The caller vouches that each line was a plain row of the right width
        and that there were at most ``rows_left`` of them; the machine only
        does the bookkeeping its own row path would have done.
        """
        if count <= 0:
            return
        frame = self.stack[-1]
        assert frame.kind == TABLE and frame.length is not None and frame.count + count <= frame.length
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
                e.locate(blank, 1, "")
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
                h = self._parse_header(c, 0)
                if isinstance(h, _Header):
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
            e = _fail(
                f"declared {frame.length} {what}, found {frame.count}"
                + (f" (scope ended at line {self._lineno})" if self._lineno > frame.line else ""),
                "count_mismatch",
                1,
            )
            e.locate(frame.line, 1, frame.text)
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
                h = self._parse_header(c, br)
                if isinstance(h, _Header):
                    if key is None and not (keyless_ok and h.fields is None):
                        h = _Malformed(
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

    def _open_header(self, key: str | None, h: _Header, depth: int) -> None:
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
                frame.keys = set()
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

    def _parse_header(self, c: str, br: int) -> _Header | _Malformed:
        """Parse ``[N:?delim]{fields}:rest`` starting at ``c[br] == '['`` (§6)."""
        close = c.find("]", br)
        if close == -1:
            return _Malformed("unterminated bracket segment", "bad_header", br)
        inner = c[br + 1 : close]
        delim = ","
        if inner[-1:] in ("\t", "|"):
            delim = inner[-1]
            inner = inner[:-1]
        keyed = inner[-1:] == ":"
        if keyed:
            inner = inner[:-1]
        if not LENGTH.fullmatch(inner):
            if not inner:
                return _Malformed("bracket segment without a length", "bad_length", br)
            return _Malformed(f"invalid length [{c[br + 1 : close]}]", "bad_length", br)
        if len(inner) > _MAX_LENGTH_DIGITS:
            return _Malformed("declared length too large", "bad_length", br)
        pos = close + 1
        fields: Fields | None = None
        width = 0
        if c[pos : pos + 1] == "{":
            # Headers repeat (a table in every list item): a parsed field
            # list is kept by its text, from "{" to the end of the line.
            key = (c[pos:], delim)
            cached = self._fields_cache.get(key)
            if cached is None:
                parsed = self._parse_fields(c, pos, delim)
                if isinstance(parsed, _Malformed):
                    return parsed
                cached = parsed[0], parsed[1], parsed[2] - pos
                if len(self._fields_cache) >= _FIELDS_CACHE_SIZE:
                    self._fields_cache.clear()
                self._fields_cache[key] = cached
            fields, width, end = cached
            pos += end
        if c[pos : pos + 1] != ":":
            return _Malformed("unexpected characters in header before ':'", "bad_header", pos)
        if keyed and fields is None:
            return _Malformed("a keyed header needs a field list", "bad_header", pos)
        return _Header(int(inner), keyed, delim, fields, width, c[pos + 1 :], pos + 1)

    def _parse_fields(self, c: str, pos: int, delim: str) -> tuple[Fields, int, int] | _Malformed:
        """Parse a fields segment at ``c[pos] == '{'``, nested groups included (§6, §9.3).

        Returns (field tree, number of leaf fields, index after the closing brace).
        Iterative: a stack of open groups instead of recursion.
        """
        n = len(c)
        others = "".join(d for d in (",", "\t", "|") if d != delim)
        groups: list[list[Any]] = [[]]
        i = pos + 1
        width = 0
        while True:
            # ---- a field entry: a name, then "{" (nested group) or an end of entry
            while i < n and c[i] == " ":
                i += 1
            if i < n and c[i] == '"':
                name, i = scan_quoted(c, i)
                while i < n and c[i] == " ":
                    i += 1
            else:
                start = i
                while i < n and c[i] not in "{}" and c[i] != delim and c[i] != '"':
                    i += 1
                name = c[start:i].strip(" ")
                if not name:
                    if i < n and c[i] == "}" and not groups[-1]:
                        return _Malformed("empty field list", "bad_fields", start)
                    return _Malformed("empty field name", "bad_fields", start)
                for d in others:
                    if d in name:
                        return _Malformed(
                            "field list uses a different delimiter than its bracket segment",
                            "delimiter_mismatch",
                            start,
                        )
                if ":" in name:
                    return _Malformed("unmatched brace in field list", "bad_fields", start)
            if i < n and c[i] == "{":
                if len(groups) >= self.max_depth:  # a limit: an error in every mode
                    raise _fail(
                        f"field groups nested deeper than max_depth ({self.max_depth})", "too_deep", self._col_base + i + 1
                    )
                sub: list[Any] = []
                groups[-1].append([name, sub])
                groups.append(sub)
                i += 1
                continue
            groups[-1].append([name, None])
            width += 1
            if width > self.max_fields:
                raise _fail(f"more than max_fields ({self.max_fields}) fields in a header", "too_many_fields", self._col_base + i + 1)
            # ---- after an entry: delimiter, or closing braces
            while True:
                if i >= n:
                    return _Malformed("unmatched brace in field list", "bad_fields", n)
                ch = c[i]
                if ch == delim:
                    i += 1
                    break
                if ch == "}":
                    i += 1
                    done = groups.pop()
                    if not done:
                        return _Malformed("empty field list", "bad_fields", i - 1)
                    if not groups:
                        return self._freeze_fields(done), width, i
                    continue
                return _Malformed("unexpected character in field list", "bad_fields", i)

    def _freeze_fields(self, tree: list[Any]) -> Fields:
        # Lists -> tuples of Field, bottom-up, without recursion; strict mode
        # rejects duplicate names within one brace group (§9.3, §14.3).
        strict = self.strict
        order: list[list[Any]] = []
        todo = [tree]
        while todo:
            g = todo.pop()
            order.append(g)
            for entry in g:
                if entry[1] is not None:
                    todo.append(entry[1])
        frozen: dict[int, Fields] = {}
        for g in reversed(order):
            if strict:
                seen: set[str] = set()
                for entry in g:
                    if entry[0] in seen:
                        raise _fail(f"duplicate field name {entry[0]!r}", "duplicate_key", self._col_base + 1)
                    seen.add(entry[0])
            frozen[id(g)] = tuple(
                Field(name, None if sub is None else frozen[id(sub)]) for name, sub in g
            )
        return frozen[id(tree)]

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
            h = self._parse_header(rest, 0)
            if isinstance(h, _Header):
                if h.fields is None:
                    # §9.2/§9.4 an array item; a nested list's items are one level down
                    self._open_header(None, h, depth + 1)
                    return
                h = _Malformed(
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
        if out and type(out[-1]) is Rows:
            out[-1].rows.append(row)
        else:
            out.append(Rows([row]))

    # Fewer consecutive simple rows than this go through the per-line path;
    # one attempt looks at no more than _MAX_BLOCK lines.
    _MIN_BLOCK = 8
    _MAX_BLOCK = 4096
    _fast_cooldown = 0

    def _row_block(self, frame: _Frame, lines: list[str], i: int, first_lineno: int) -> int:
        """Decode a run of simple row lines at once, column by column.

        A line qualifies when it sits exactly at row depth and holds no colon,
        comment marker or space next to a delimiter: then the per-line path
        would split it on the delimiter and convert each cell, which is what
        this does with C-level ``str.split``/``zip``/``map``.  Lines with
        quotes are split one by one (see ``quoted_rows``).  Anything else,
        including every line that would be an error, is left to the per-line
        path (which reports it precisely).  Returns the index after
        the run (``i`` when there is none worth taking).
        """
        if self._fast_cooldown:
            self._fast_cooldown -= 1
            return i
        limit = min(len(lines), i + self._MAX_BLOCK)  # bounded work per attempt
        if self.strict and frame.length is not None:
            limit = min(limit, i + frame.length - frame.count)  # an extra row takes the slow path
        if limit - i < self._MIN_BLOCK:
            # (a small table: its rows go the per-line way without another look)
            self._fast_cooldown = limit - i
            return i
        plen = frame.depth * self.indent_size
        prefix = " " * plen
        for k, line in enumerate(lines[i : i + self._MIN_BLOCK]):  # cheap look before joining a window
            if not line.startswith(prefix) or line[plen : plen + 1] in (" ", "#", "", "\t") or ":" in line:
                # No run of simple rows starts here: this line and the k after it
                # (up to and including the one that is not simple) go the per-line way.
                self._fast_cooldown = k
                return i
        # (a colon ends the run: a key-value line, or a colon in a quoted cell)
        text, end = self._run_text(lines, i, limit, _not_row_start(plen))
        nrows = text.count("\n", 0, end)  # lines wholly before `end`
        d = frame.delim
        width = frame.width
        text = text[:end]
        patches: list[tuple[int, list[str]]] = []
        if '"' in text:
            text, patches, nrows = quoted_rows(text, plen, d, width, nrows)
        if nrows < self._MIN_BLOCK:
            self._fast_cooldown = nrows
            return i
        j = i + nrows
        columns = split_columns(text, "\n" + prefix, d, width, nrows, patches)
        if columns is None:
            self._fast_cooldown = nrows  # some line has the wrong number of cells
            return i
        # (cells padded with spaces are trimmed by convert_column)
        assert self.convert_column is not None
        try:
            columns = [self.convert_column(col) for col in columns]
        except ToonDecodeError:
            # e.g. an over-long number or a bad escape: the per-line path
            # locates it (and the block is not tried again line after line)
            self._fast_cooldown = nrows
            return i
        if frame.count == 0:
            self.started_arrays += 1
        frame.count += nrows
        self._lineno = first_lineno + j - 1
        self._text = lines[j - 1]
        out = self.out
        if self.fields:  # a value builder: no tuple per row
            out.append(_new(Columns, (columns,)))
        elif out and type(out[-1]) is Rows:
            out[-1].rows.extend(zip(*columns))
        else:
            out.append(Rows(list(zip(*columns))))
        return j

    _primitive_cooldown = 0
    _primitive_misses = 0  # attempts in a row that took nothing

    def _primitive_miss(self, k: int) -> int:
        # The next k lines go the per-line way; after a few fruitless
        # attempts in a row (a list of objects, say) the pause grows, up to
        # _MAX_BLOCK lines, so that such lists pay for few looks.
        self._primitive_misses += 1
        misses = self._primitive_misses
        self._primitive_cooldown = max(k, 0 if misses < 4 else min(self._MAX_BLOCK, 1 << misses))
        return 0

    @staticmethod
    def _run_text(lines: list[str], i: int, limit: int, not_start: re.Pattern[str]) -> tuple[str, int]:
        """The lines from ``i`` joined ("\\n" before each) and where the run in them ends: before
        the first line ``not_start`` finds, or the line holding the first colon.

        C-level searches over the joined lines, not a Python loop per line; the window grows
        4x while the run fills it, so a short run costs a short join."""
        window = 64
        while True:
            hi = min(limit, i + window)
            text = "\n" + "\n".join(lines[i:hi])
            end = len(text)
            m = not_start.search(text)
            if m is not None:
                end = m.start()
            k = text.find(":", 0, end)
            if k != -1:
                end = text.rfind("\n", 0, k)
            if end < len(text) or hi == limit:
                return text, end
            window *= 4

    def _primitive_block(self, frame: _Frame, lines: list[str], i: int, first_lineno: int) -> int:
        """Decode a run of primitive list items (``- value``) at once, as one
        Values event, the values typed column-wise like table rows.

        A line qualifies when it is exactly the list's indentation, ``- ``
        and a token that starts with neither a space nor ``[`` and holds no
        colon: then the per-line path would convert that token (trailing
        spaces trimmed) as a primitive item, which the column converter does
        for the whole run.  Anything else (an object item, a nested array,
        ``-`` alone, a comment, another indentation) ends the run; a token
        the converter refuses sends the run to the per-line path, which
        reports the error at its line and column.  Returns the index after
        the run (``i`` when there is none worth taking).
        """
        limit = min(len(lines), i + self._MAX_BLOCK)  # bounded work per attempt
        if self.strict:
            assert frame.length is not None
            limit = min(limit, i + frame.length - frame.count)  # an extra item takes the slow path
        if limit - i < self._MIN_BLOCK or frame.depth > self.max_depth:
            self._primitive_cooldown = max(0, limit - i)  # (a short list: its items go the per-line way)
            return i
        plen = frame.depth * self.indent_size
        head = " " * plen + "- "
        hlen = plen + 2
        for k, line in enumerate(lines[i : i + self._MIN_BLOCK]):  # cheap look before joining a window
            if not line.startswith(head) or line[hlen : hlen + 1] in (" ", "[", "") or ":" in line:
                return i + self._primitive_miss(k)
        # (a colon ends the run: an object item, a header, or a colon in a quoted string)
        text, end = self._run_text(lines, i, limit, _not_item_start(plen))
        n = text.count("\n", 0, end)  # lines wholly before `end`
        if n < self._MIN_BLOCK:
            return i + self._primitive_miss(n)
        # (trailing spaces are trimmed by convert_column, as the per-line path trims them)
        tokens = text[:end].replace("\n" + head, "\n")[1:].split("\n")
        assert self.convert_column is not None
        try:
            values = list(self.convert_column(tokens))
        except ToonDecodeError:
            return i + self._primitive_miss(n)  # the per-line path locates the error
        self._primitive_misses = 0
        if frame.count == 0:
            self.started_arrays += 1
        frame.count += n
        j = i + n
        self._lineno = first_lineno + j - 1
        self._text = lines[j - 1]
        out = self.out
        if out and type(out[-1]) is Values:
            out[-1].values.extend(values)
        else:
            out.append(_new(Values, (values,)))
        return j

    def _field_block(self, frame: _Frame, lines: list[str], i: int, first_lineno: int) -> int:
        """A run of plain field lines of the innermost object as one Members event.

        A line qualifies when it is exactly the object's indentation, an
        unquoted key, a colon and a non-empty value other than ``[]`` that
        converts without error, and (strict) the key is new: then the
        per-line path would emit Key + Scalar, which this does in one event.
        Anything else ends the run and takes the per-line path.
        """
        plen = frame.depth * self.indent_size
        prefix = " " * plen
        key_ok = self._keys_ok
        convert = self.convert
        keys = frame.keys
        pairs: list[tuple[str, Any]] = []
        j = i
        n = len(lines)
        while j < n:  # (no lines[i:] copy: a feed's lines may be many, runs short)
            # String methods, not a regex per line: keys repeat, so a key is
            # checked against the unquoted-key grammar once (then remembered).
            line = lines[j]
            if not line.startswith(prefix):
                break
            key, colon, value = line.partition(":")  # an unquoted key holds no colon
            if not colon:
                break
            key = key[plen:].rstrip(" ")  # (a space before the key fails the check)
            if key not in key_ok:
                if UNQUOTED_KEY.fullmatch(key) is None:
                    break
                if len(key_ok) >= _KEYS_OK_SIZE:
                    key_ok.clear()
                key_ok.add(key)
            value = value.strip(" ")
            if not value or value == "[]" or (keys is not None and key in keys):
                break
            try:
                v = convert(value)
            except Fail:
                break
            if keys is not None:
                keys.add(key)
            pairs.append((key, v))
            j += 1
        if j > i:
            frame.count += j - i
            self._lineno = first_lineno + j - 1
            self._text = lines[j - 1]
            self.out.append(_new(Members, (pairs,)))
        return j

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
        if out and type(out[-1]) is Entries:
            out[-1].entries.append(entry)
        else:
            out.append(Entries([entry]))

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


_FIELDS_CACHE_SIZE = 256  # distinct field lists remembered per decoder

_KEYS_OK_SIZE = 4096  # distinct plain keys remembered per decoder


_ROW_START: dict[int, re.Pattern[str]] = {}


def _not_row_start(plen: int) -> re.Pattern[str]:
    """Matches the "\\n" before a line that is not ``plen`` spaces followed by
    row content (deeper, shallower, blank, comment or tab-indented)."""
    pattern = _ROW_START.get(plen)
    if pattern is None:
        pattern = _ROW_START[plen] = re.compile("\n(?! {%d}[^ #\t\n])" % plen)
    return pattern


_ITEM_START: dict[int, re.Pattern[str]] = {}


def _not_item_start(plen: int) -> re.Pattern[str]:
    """Matches the "\\n" before a line that is not ``plen`` spaces, ``- `` and
    a character other than a space or ``[`` (see ``_primitive_block``)."""
    pattern = _ITEM_START.get(plen)
    if pattern is None:
        pattern = _ITEM_START[plen] = re.compile("\n(?! {%d}- [^ \n\\[])" % plen)
    return pattern


_HANDLERS: dict[int, Callable[[Machine, _Frame, str, int], None]] = {
    OBJECT: Machine._object_line,
    LIST: Machine._list_line,
    TABLE: Machine._table_line,
    KEYED: Machine._keyed_line,
}

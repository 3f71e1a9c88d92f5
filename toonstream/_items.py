"""Runs of list items of one shape, decoded at once: the value builders'
fast path for arrays of records that are not tabular.

An array of records with a nested object or a small table in each record
cannot be written as a table, so TOON writes it as a list of ``- `` items,
and every item repeats one skeleton: the same keys at the same indentation,
only the values and the row counts differ.  The per-line path spends a few
microseconds on each of those lines.  Here the first item's lines are
compiled into one regular expression (indentation, keys and headers
literal; a group per value and per block of rows); then a run of items is
matched one C-level regex call per item, the values are converted column by
column (one column per key, across all the items), row blocks are split and
converted as one table, and each item's object is built by a generated dict
display (``_build._display_function``).

Exactness: a template only takes what the per-line path reads without an
error and to the same value:

- item lines are ``key: value`` (an unquoted key, a value that is neither
  empty nor ``[]``), ``key:`` opening a nested object, or a tabular header
  ``key[N]{fields}:`` (not keyed, nothing after the colon) with its rows;
  the first line is ``- key: value``;
- no blank, comment or tab-led line inside an item, no duplicate key in an
  object, nesting within ``max_depth``;
- an item is taken only when the line after it is in the same feed and
  ends it (at most the list's indentation, not blank, a comment or a tab);
- a row block has exactly ``N`` lines, none with a colon, each with the
  header's width of cells (rows with quoted cells are split one by one, as
  the per-line path splits them); the regex itself refuses an item with a
  colon in a row, or an empty or ``[]`` value: such an item ends a run when
  it is matched, before the run is converted;
- values and cells go through the column converter, which equals the
  per-line converter token by token.

Anything else ends the run before that item, which then takes the per-line
path (and gets its precise error there, if it is one).
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import repeat
from typing import Any, Callable, NamedTuple, Sequence

from ._build import _CLOSE, _LEAF, _OPEN, _display_function, _interpreted, batch_maker
from ._errors import ToonDecodeError
from ._events import Fields
from ._grammar import UNQUOTED_KEY
from ._scalars import quoted_rows, split_cells, split_columns

# A value: not empty and not "[]" (spaces around aside): those lines open an
# object or hold an empty array.  Checked by the regex, so that such an item
# ends a run when it is matched, before any of the run is converted.
_VALUE = r"(?! *(?:\[\] *)?\n)([^\n]*)\n"


class Table(NamedTuple):
    """A tabular header in a template: its rows' layout."""

    fields: Fields
    width: int
    delim: str
    row_start: str  # LF + the rows' indentation


class Template(NamedTuple):
    """One item's skeleton: ``pattern`` matches a whole item (and looks at the
    line after it); ``slots`` says what each value slot is (None: a scalar;
    a Table: two groups, the declared length and the row block);
    ``make(*slot_values)`` builds the item's object."""

    pattern: re.Pattern[str]
    slots: tuple[Table | None, ...]
    make: Callable[..., dict[str, Any]]


class _Bad(Exception):
    """The first item of a run that the template must not take (internal)."""

    def __init__(self, index: int) -> None:
        self.index = index


def _scalar_key(content: str) -> str | None:
    """The key of a ``key: value`` line that the per-line path reads as an
    unquoted key and a primitive value (None otherwise)."""
    key, sep, value = content.partition(": ")
    if not sep or UNQUOTED_KEY.fullmatch(key) is None:
        return None
    value = value.strip(" ")
    if not value or value == "[]":
        return None
    return key


def compile_item(
    lines: Sequence[str],
    i: int,
    plen: int,
    size: int,
    parse_header: Callable[[str, int], Any],
    *,
    room: int,
    max_depth: int,
    length_digits: int,
) -> Template | None:
    """The template of the item starting at ``lines[i]`` (``plen`` spaces, then
    ``- ``), or None when its lines are not all of the kinds above.

    ``parse_header`` is the machine's header parser (a ``_Header`` or a
    ``_Malformed``); ``room``: scopes that may still be opened
    (``max_depth`` less the open ones); ``length_digits``: the longest
    declared length accepted.
    """
    n = len(lines)
    head = " " * plen + "- "
    first = lines[i]
    if not first.startswith(head):
        return None
    key = _scalar_key(first[plen + 2 :])
    if key is None:
        return None
    parts = [re.escape(head + key + ": ") + _VALUE]
    program: list[tuple[int, str]] = [(_LEAF, key)]
    slots: list[Table | None] = [None]
    scopes: list[tuple[int, set[str]]] = [(plen + size, {key})]  # (field indentation, keys) per open object
    deepest = 1  # scopes open at once (the item's object is one)
    widest = plen + size
    length = rf"\[(0|[1-9][0-9]{{0,{length_digits - 1}}})"
    j = i + 1
    while True:
        if j >= n:
            return None  # the item may go on in the next feed
        line = lines[j]
        content = line.lstrip(" ")
        indent = len(line) - len(content)
        if not content or content[0] in "#\t":
            return None  # blank, comment or tab: the per-line path's to judge
        if indent <= plen:
            break
        while len(scopes) > 1 and indent < scopes[-1][0]:
            scopes.pop()
            program.append((_CLOSE, ""))
        if indent != scopes[-1][0]:
            return None
        keys = scopes[-1][1]
        widest = max(widest, indent)
        colon = content.find(":")
        br = content.find("[")
        if colon == len(content) - 1 and br == -1:  # key: (a nested object)
            key = content[:-1]
            if UNQUOTED_KEY.fullmatch(key) is None or key in keys:
                return None
            keys.add(key)
            parts.append(re.escape(line) + r"\n")
            program.append((_OPEN, key))
            scopes.append((indent + size, set()))
            deepest = max(deepest, len(scopes))
            j += 1
            continue
        if br != -1 and (colon == -1 or br < colon):  # key[N]{fields}: (a table)
            key = content[:br]
            if UNQUOTED_KEY.fullmatch(key) is None or key in keys:
                return None
            try:
                h = parse_header(content, br)
            except ToonDecodeError:  # a limit: the per-line path reports it
                return None
            if getattr(h, "fields", None) is None or h.keyed or h.rest != "":
                return None
            keys.add(key)
            digits = content.find("]", br)
            while content[digits - 1] not in "0123456789":  # (a delimiter mark before "]")
                digits -= 1
            row_indent = " " * (indent + size)
            parts.append(
                re.escape(" " * indent + key)
                + length
                + re.escape(content[digits:])
                + r"\n((?:"
                + row_indent
                + r"(?![ #\t\n])[^\n:]*\n)*)"  # (a colon: the item is the per-line path's)
            )
            program.append((_LEAF, key))
            slots.append(Table(h.fields, h.width, h.delim, "\n" + row_indent))
            deepest = max(deepest, len(scopes) + 1)
            widest = max(widest, indent + size)
            j += 1
            while j < n and lines[j].startswith(row_indent) and lines[j][indent + size : indent + size + 1] not in ("", " ", "#", "\t"):
                j += 1
            continue
        key = _scalar_key(content)
        if key is None or key in keys:
            return None
        keys.add(key)
        parts.append(re.escape(" " * indent + key + ": ") + _VALUE)
        program.append((_LEAF, key))
        slots.append(None)
        j += 1
    if deepest > room or widest // size > max_depth:
        return None  # the per-line path raises too_deep
    program.extend([(_CLOSE, "")] * (len(scopes) - 1))
    # The line after the item ends it: at most the list's indentation, and
    # content (a blank or comment line may be followed by more of the item).
    parts.append(r"(?= {0,%d}[^ \n#\t])" % plen)
    return Template(re.compile("".join(parts)), tuple(slots), _maker(tuple(program)))


@lru_cache(maxsize=64)  # (a shape seen again compiles nothing: re caches its patterns too)
def _maker(program: tuple[tuple[int, str], ...]) -> Callable[..., dict[str, Any]]:
    """The function building an item's object from its slot values."""
    made = _display_function(program, columns=True)
    if made is None:  # too big to compile: the step interpreter, from a tuple
        interpreted = _interpreted(program)
        return lambda *values: interpreted(values)
    return made


def match_items(
    templates: Sequence[Template], text: str, limit: int
) -> tuple[list[int], list[tuple[str, ...]], list[int]]:
    """The items at the start of ``text`` (at most ``limit``), each matched by
    one of ``templates``: which one, its groups, and where the item ends."""
    which: list[int] = []
    groups: list[tuple[str, ...]] = []
    ends: list[int] = []
    pos = 0
    k = 0
    match = templates[0].pattern.match
    while len(groups) < limit:
        m = match(text, pos)
        if m is None:  # another shape: the other templates, the last one that matched first
            for k2, t in enumerate(templates):
                if k2 != k:
                    m = t.pattern.match(text, pos)
                    if m is not None:
                        k, match = k2, t.pattern.match
                        break
            if m is None:
                break
        which.append(k)
        groups.append(m.groups())
        pos = m.end()
        ends.append(pos)
    return which, groups, ends


def build_run(
    templates: Sequence[Template],
    which: list[int],
    groups: list[tuple[str, ...]],
    column: Callable[[Sequence[str]], Any],
    convert: Callable[[str], Any],
) -> list[dict[str, Any]]:
    """The objects of a run of items (``match_items``' result), built template
    by template, column-wise over all of a template's items.  Raises
    ``_Bad`` with the index of the first item the run must not take."""
    used = set(which)
    if len(used) == 1:
        return _build(templates[which[0]], groups, column, convert)
    out: list[Any] = [None] * len(groups)
    first_bad = len(groups)
    for k in used:
        idx = [i for i, w in enumerate(which) if w == k]
        try:
            values = _build(templates[k], [groups[i] for i in idx], column, convert)
        except _Bad as bad:
            first_bad = min(first_bad, idx[bad.index])
            continue
        for i, v in zip(idx, values):
            out[i] = v
    if first_bad < len(groups):
        raise _Bad(first_bad)
    return out


def _build(
    template: Template, groups: list[tuple[str, ...]], column: Callable[[Sequence[str]], Any], convert: Callable[[str], Any]
) -> list[dict[str, Any]]:
    cols = list(zip(*groups))
    args: list[Any] = []
    g = 0
    for slot in template.slots:
        if slot is None:
            args.append(_scalars(cols[g], column, convert))
            g += 1
        else:
            args.append(_tables(cols[g], cols[g + 1], slot, column, convert))
            g += 2
    return list(map(template.make, *args))


def _scalars(col: Sequence[str], column: Callable[[Sequence[str]], Any], convert: Callable[[str], Any]) -> Any:
    values = list(map(str.strip, col, repeat(" ")))
    for odd in ("", "[]"):  # an object's opening, an empty array: not a primitive
        if odd in values:
            raise _Bad(values.index(odd))
    try:
        return column(values)
    except ToonDecodeError:
        raise _Bad(_first_failing(values, convert)) from None


def _first_failing(tokens: Sequence[str], convert: Callable[[str], Any]) -> int:
    for k, tok in enumerate(tokens):
        try:
            convert(tok)
        except ToonDecodeError:
            return k
    return len(tokens)  # (cannot happen: the column converter agrees with convert)


def _tables(
    lengths: Sequence[str], blocks: Sequence[str], table: Table, column: Callable[[Sequence[str]], Any], convert: Callable[[str], Any]
) -> list[list[dict[str, Any]]]:
    counts = list(map(str.count, blocks, repeat("\n")))
    declared = list(map(int, lengths))
    if counts != declared:
        raise _Bad(next(k for k, (a, b) in enumerate(zip(counts, declared)) if a != b))
    text = "".join(blocks)
    if ":" in text:  # a key-value line at row depth (or a colon in a cell): the per-line path
        raise _Bad(next(k for k, b in enumerate(blocks) if ":" in b))
    nrows = len(text) and sum(counts)
    if not nrows:
        return [[] for _ in counts]
    d = table.delim
    width = table.width
    body = "\n" + text[:-1]
    patches: list[tuple[int, list[str]]] = []
    if '"' in body:  # rows with quoted cells: split one by one, as the per-line path splits them
        body, patches, kept = quoted_rows(body, len(table.row_start) - 1, d, width, nrows)
        if kept < nrows:  # a quoted row of the wrong width
            raise _Bad(_item_of_row(counts, kept))
    cells = split_columns(body, table.row_start, d, width, nrows, patches)
    if cells is None:  # some row has the wrong width
        lead = len(table.row_start) - 1
        raise _Bad(
            next(
                k
                for k, b in enumerate(blocks)
                if any(len(split_cells(row[lead:], d)) != width for row in b[:-1].split("\n") if row)
            )
        )
    leaves: list[Any] = []
    for c in cells:
        try:
            leaves.append(column(c))
        except ToonDecodeError:
            bad_row = _first_failing([t.strip(" ") for t in c], convert)
            raise _Bad(_item_of_row(counts, bad_row)) from None
    rows = list(batch_maker(table.fields).columns(leaves))
    out: list[list[dict[str, Any]]] = []
    pos = 0
    for k in counts:
        out.append(rows[pos : pos + k])
        pos += k
    return out


def _item_of_row(counts: list[int], row: int) -> int:
    """The item that holds the ``row``-th row of the run."""
    total = 0
    for k, c in enumerate(counts):
        total += c
        if row < total:
            return k
    return len(counts) - 1

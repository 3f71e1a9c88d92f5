"""§6 headers: ``key[N<delim?>]{fields}:`` after the key, parsed once per distinct text.

The machine finds where a header starts (the ``[`` after a key, or at the
start of a line) and decides what it opens; this module owns the header's
own grammar: the bracket segment (length, delimiter, the keyed-table colon),
the field list with its nested groups (§9.3), and the limits and strict checks
found on the way.  A malformed header is returned (:class:`Malformed`), not
raised: the machine decides whether it is an error (strict) or the line is a
plain key-value line (non-strict, §6).  Nothing recurses: nested field groups
are an explicit stack.
"""

from __future__ import annotations

from typing import Any

from .._errors import ToonDecodeError
from .events import Field, Fields
from .grammar import LENGTH
from .scalars import scan_quoted

# Longest declared length accepted in a header: larger values cannot be
# satisfied by any real input and would only feed a pathological int().
_MAX_LENGTH_DIGITS = 19


_FIELDS_CACHE_SIZE = 256  # distinct field lists remembered per decoder


class Header:
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


class Malformed:
    """Why a line that looked like a header is not one (returned, not raised:
    non-strict decoders fall through to key-value parsing, §6)."""

    __slots__ = ("message", "code", "offset")

    def __init__(self, message: str, code: str, offset: int) -> None:
        self.message = message
        self.code = code
        self.offset = offset


def _fail(message: str, code: str, column: int | None = None) -> ToonDecodeError:
    return ToonDecodeError(message, code=code, column=column)


class HeaderParser:
    """Parses headers for one decoder (its options, and a cache of field lists: a header
    repeated in every list item is parsed once).

    >>> h = HeaderParser(strict=True, max_depth=10, max_fields=10).parse("[2]{a,b}: x", 0, 0)
    >>> h.length, h.delim, [f.name for f in h.fields], h.rest
    (2, ',', ['a', 'b'], ' x')
    """

    def __init__(self, *, strict: bool, max_depth: int, max_fields: int) -> None:
        self.strict = strict
        self.max_depth = max_depth
        self.max_fields = max_fields
        self._cache: dict[tuple[str, str], tuple[Fields, int, int]] = {}

    def parse(self, c: str, br: int, col_base: int) -> Header | Malformed:
        """Parse ``[N:?delim]{fields}:rest`` starting at ``c[br] == '['`` (§6); ``col_base``:
        the column of ``c[0]`` less one, for the errors raised (the limits, strict duplicates)."""
        close = c.find("]", br)
        if close == -1:
            return Malformed("unterminated bracket segment", "bad_header", br)
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
                return Malformed("bracket segment without a length", "bad_length", br)
            return Malformed(f"invalid length [{c[br + 1 : close]}]", "bad_length", br)
        if len(inner) > _MAX_LENGTH_DIGITS:
            return Malformed("declared length too large", "bad_length", br)
        pos = close + 1
        fields: Fields | None = None
        width = 0
        if c[pos : pos + 1] == "{":
            # Headers repeat (a table in every list item): a parsed field
            # list is kept by its text, from "{" to the end of the line.
            key = (c[pos:], delim)
            cached = self._cache.get(key)
            if cached is None:
                parsed = self._fields(c, pos, delim, col_base)
                if isinstance(parsed, Malformed):
                    return parsed
                cached = parsed[0], parsed[1], parsed[2] - pos
                if len(self._cache) >= _FIELDS_CACHE_SIZE:
                    self._cache.clear()
                self._cache[key] = cached
            fields, width, end = cached
            pos += end
        if c[pos : pos + 1] != ":":
            return Malformed("unexpected characters in header before ':'", "bad_header", pos)
        if keyed and fields is None:
            return Malformed("a keyed header needs a field list", "bad_header", pos)
        return Header(int(inner), keyed, delim, fields, width, c[pos + 1 :], pos + 1)

    def _fields(self, c: str, pos: int, delim: str, col_base: int) -> tuple[Fields, int, int] | Malformed:
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
                        return Malformed("empty field list", "bad_fields", start)
                    return Malformed("empty field name", "bad_fields", start)
                for d in others:
                    if d in name:
                        return Malformed(
                            "field list uses a different delimiter than its bracket segment",
                            "delimiter_mismatch",
                            start,
                        )
                if ":" in name:
                    return Malformed("unmatched brace in field list", "bad_fields", start)
            if i < n and c[i] == "{":
                if len(groups) >= self.max_depth:  # a limit: an error in every mode
                    raise _fail(
                        f"field groups nested deeper than max_depth ({self.max_depth})", "too_deep", col_base + i + 1
                    )
                sub: list[Any] = []
                groups[-1].append([name, sub])
                groups.append(sub)
                i += 1
                continue
            groups[-1].append([name, None])
            width += 1
            if width > self.max_fields:
                raise _fail(f"more than max_fields ({self.max_fields}) fields in a header", "too_many_fields", col_base + i + 1)
            # ---- after an entry: delimiter, or closing braces
            while True:
                if i >= n:
                    return Malformed("unmatched brace in field list", "bad_fields", n)
                ch = c[i]
                if ch == delim:
                    i += 1
                    break
                if ch == "}":
                    i += 1
                    done = groups.pop()
                    if not done:
                        return Malformed("empty field list", "bad_fields", i - 1)
                    if not groups:
                        return self._freeze(done, col_base), width, i
                    continue
                return Malformed("unexpected character in field list", "bad_fields", i)

    def _freeze(self, tree: list[Any], col_base: int) -> Fields:
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
                        raise _fail(f"duplicate field name {entry[0]!r}", "duplicate_key", col_base + 1)
                    seen.add(entry[0])
            frozen[id(g)] = tuple(
                Field(name, None if sub is None else frozen[id(sub)]) for name, sub in g
            )
        return frozen[id(tree)]

"""Lines out: primitive cells, headers and field lists (quoted as ``_quoting`` says).

Pure text formatting shared by every encoder (``dumps`` and the streaming
encoders); it decides nothing about structure.
"""

from __future__ import annotations

import codecs
import io
from decimal import Decimal
from typing import IO, Any, Callable, Iterable

from .._errors import ToonEncodeError
from .grammar import HEADER_SYMBOL
from .normalize import PRIMITIVE, key_contents, normalize
from .quoting import NEEDS_QUOTE, encode_key, quote_checked
from .numbers import encode_decimal, encode_float, encode_int

Fields = list[tuple[str, Any]]  # (name, nested Fields or None), encoder side

_LITERALS = {True: "true", False: "false", None: "null"}


def primitive_formatter(delimiter: str, norm: Callable[[Any], Any]) -> Callable[[Any], str]:
    """A function that writes one primitive with quoting for ``delimiter`` (§7.2, §11.1);
    ``norm`` makes a host value one (``normalize`` with the encoder's ``default``)."""
    needs_quote = NEEDS_QUOTE[delimiter].search

    def fmt(v: Any) -> str:
        t = type(v)
        if t is str:
            if needs_quote(v) is None:
                return str(v)
            return quote_checked(v)
        if t is int:
            return encode_int(v)
        if t is float:
            return encode_float(v)
        if t is bool or v is None:
            return _LITERALS[v]
        if t is Decimal:
            return encode_decimal(v)
        v = norm(v)
        if type(v) not in PRIMITIVE:
            raise ToonEncodeError(f"expected a primitive, got {type(v).__name__}")
        return fmt(v)

    return fmt


def key_text(k: Any) -> str:
    """An object key or field name, quoted if §7.3 requires it."""
    if type(k) is not str:
        # The contents: str() would call an overridden __str__ (an Enum
        # mixed with str writes "Color.RED"; json.dumps writes the text).
        k = key_contents(k)
    try:
        return encode_key(k)
    except ValueError:
        raise ToonEncodeError("key contains a lone surrogate (not encodable as UTF-8)") from None


_FLAT_FIELDS: dict[tuple[str, ...], str] = {}  # field names (+ delimiter) -> text, for flat trees


def fields_text(fields: Fields, delimiter: str) -> str:
    """``{a,b{c,d}}`` for a field tree (§6), without recursion."""
    if all(sub is None for _, sub in fields) and all(type(name) is str for name, _ in fields):
        key = (delimiter, *[name for name, _ in fields])
        text = _FLAT_FIELDS.get(key)
        if text is None:
            text = "{" + delimiter.join([key_text(name) for name, _ in fields]) + "}"
            if len(_FLAT_FIELDS) >= 4096:
                _FLAT_FIELDS.clear()
            _FLAT_FIELDS[key] = text
        return text
    parts: list[str] = ["{"]
    todo: list[Any] = [iter(fields)]
    first = [True]
    while todo:
        entry = next(todo[-1], None)
        if entry is None:
            todo.pop()
            first.pop()
            parts.append("}")
            continue
        if not first[-1]:
            parts.append(delimiter)
        first[-1] = False
        name, sub = entry
        parts.append(key_text(name))
        if sub is not None:
            parts.append("{")
            todo.append(iter(sub))
            first.append(True)
    return "".join(parts)


def header(head: str, n: int, delimiter: str, fields: Fields | None = None, *, keyed: bool = False) -> str:
    """``head[N<sym>]{fields}:`` or the keyed ``head[N:<sym>]{fields}:`` (§6)."""
    bracket = f"[{n}{':' if keyed else ''}{HEADER_SYMBOL[delimiter]}]"
    if fields is None:
        return f"{head}{bracket}:"
    return f"{head}{bracket}{fields_text(fields, delimiter)}:"


def table_header(
    head: str, n: int, delimiter: str, fields: Fields, rows: Callable[[], Iterable[Any]] | None = None,
    *, keyed: bool = False
) -> str:
    """``header`` of a table, a keyed table or a ``missing_as_null`` table:
    a field name no TOON text can hold is reported at the object that holds
    it, as for any other object: its row (the first; a keyed table's first
    entry key, from ``rows()``; for ``missing_as_null``, the first of
    ``rows()`` having its top-level field), then the groups down to it.
    (``rows`` is called on that error path only.)"""
    try:
        return header(head, n, delimiter, fields, keyed=keyed)
    except ToonEncodeError as e:
        names = _bad_field(fields)
        if names:
            where: Any = 0
            if rows is not None and keyed:
                where = next(iter(rows()))
            elif rows is not None:
                where = next((i for i, row in enumerate(rows()) if type(row) is dict and names[0] in row), None)
            if where is not None:
                e.path = (where, *names[:-1]) + e.path
        raise


def _bad_field(fields: Fields) -> tuple[str, ...]:
    """The names down to the first field name (in header order) that
    ``key_text`` refuses; none: no such name.  (Error path only: a group's
    name is met again with each of its leaves.)"""
    from .shape import leaf_paths  # (shape imports this module)

    for path in leaf_paths(fields):
        for j, name in enumerate(path):
            try:
                key_text(name)
            except ToonEncodeError:
                return path[: j + 1]
    return ()


class LineSink:
    """Lines out to a text or binary file: LF between lines, none at the end
    (§12), written in ~64 KiB pieces.  ``part`` continues the current line
    (long inline arrays are written a cell at a time)."""

    __slots__ = ("_fp", "_binary", "_pending", "_size", "_first")

    def __init__(self, fp: IO[str] | IO[bytes]) -> None:
        self._fp = fp
        self._binary = isinstance(fp, (io.RawIOBase, io.BufferedIOBase)) or "b" in getattr(fp, "mode", "")
        self._pending: list[str] = []
        self._size = 0
        self._first = True

    def line(self, text: str | bytes) -> None:
        if self._first:
            self._first = False
        else:
            self._pending.append("\n")
        self.part(text)

    def part(self, text: str | bytes) -> None:
        """``text``: str, or UTF-8 bytes (a native block of list items, say)."""
        if isinstance(text, bytes):
            if self._binary and len(text) >= 1 << 16:  # (as it is: no decoding, no encoding)
                self.flush()
                self._fp.write(text)  # type: ignore[arg-type]
                return
            text = text.decode("utf-8")
        if len(text) >= 1 << 16:
            # (a big piece, a native block of list items say, goes out as it is: joining it
            # with the pending pieces first would copy it once more)
            self.flush()
            self._fp.write(self._encode(text) if self._binary else text)  # type: ignore[arg-type]
            return
        self._pending.append(text)
        self._size += len(text) + 1
        if self._size >= 1 << 16:
            self.flush()

    def utf8(self, data: bytes) -> None:
        """``part`` of text already encoded as UTF-8 (buffered alike: what reaches the file
        before an error does not depend on who made the text)."""
        if data:
            self.part(data.decode("utf-8"))

    def flush(self) -> None:
        if not self._pending:
            return
        text = "".join(self._pending)
        self._pending = []
        self._size = 0
        self._fp.write(self._encode(text) if self._binary else text)  # type: ignore[arg-type]

    def _encode(self, text: str) -> bytes:
        """``text`` as written to a binary file."""
        return text.encode("utf-8")

    def copy(self, src: IO[bytes]) -> None:
        """Continue the current line with the UTF-8 text read from ``src`` to
        its end (a binary sink gets the bytes as they are), like ``part``."""
        self.flush()
        fp: Any = self._fp
        if self._binary:
            while chunk := src.read(1 << 16):
                fp.write(chunk)
            return
        decode = codecs.getincrementaldecoder("utf-8")().decode
        while chunk := src.read(1 << 16):
            fp.write(decode(chunk))
        fp.write(decode(b"", final=True))

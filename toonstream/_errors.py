"""The error classes: one root, one for decoding, one for encoding.

Helpers deep in the decoder raise :class:`ToonDecodeError` without a location;
the state machine, which knows the current line, attaches ``line``, ``column``
and ``line_text`` before the error leaves the library (see ``_reference/machine.py``).
"""

from __future__ import annotations

import re
from itertools import islice

__all__ = ["ToonError", "ToonDecodeError", "ToonEncodeError"]


class ToonError(Exception):
    """Root of every error toonstream raises on purpose (``ToonDecodeError``,
    ``ToonEncodeError``).

    >>> import toonstream
    >>> try:
    ...     toonstream.loads("a[2]: 1")
    ... except toonstream.ToonError as e:
    ...     print(type(e).__name__)
    ToonDecodeError
    """


class ToonDecodeError(ToonError, ValueError):
    """The input is not valid TOON (or breaks a configured limit).

    Attributes:
        code: a short machine-readable reason, e.g. ``"count_mismatch"``.
        line: 1-based line number (``None`` only while the error is still
            inside the library, before the machine attached it).
        column: 1-based column (counted in characters) of the offending spot.
        line_text: the source line, without its line terminator.
        msg: the message without the location.
        lineno, colno: ``line`` and ``column`` by ``json.JSONDecodeError``'s names.
        doc: the whole document, as a str, where the decoder had it at
            hand (``loads``; bytes are decoded, an invalid UTF-8 sequence
            as U+FFFD); else None (``load``, ``Decoder``, the streaming drivers).
        pos: the 0-based character offset of (line, column) in ``doc``
            (None without ``doc``), as ``json.JSONDecodeError.pos``.

    Example:
        >>> import toonstream
        >>> try:
        ...     toonstream.loads("a: 1\\ntags[3]: a,b")
        ... except toonstream.ToonDecodeError as e:
        ...     print(e.code, e.lineno, e.colno, e.pos, repr(e.doc[e.pos:]))
        count_mismatch 2 1 5 'tags[3]: a,b'
    """

    doc: str | None = None
    pos: int | None = None
    # Typed as every error that leaves the library has them (the machine or a
    # driver attaches them; only one made by hand and not located has None).
    line: int
    column: int
    line_text: str

    def __init__(
        self,
        message: str,
        *,
        code: str,
        line: int | None = None,
        column: int | None = None,
        line_text: str | None = None,
    ) -> None:
        super().__init__(message)
        self.msg = message
        self.code = code
        self.line = line  # type: ignore[assignment]
        self.column = column  # type: ignore[assignment]
        self.line_text = line_text  # type: ignore[assignment]

    @property
    def lineno(self) -> int:
        return self.line

    @property
    def colno(self) -> int:
        return self.column

    def attach_document(self, doc: object) -> None:
        """Set ``doc`` and ``pos`` (the decoder failed on this whole document;
        anything but a str or bytes-like object, chunks say, is not one)."""
        if isinstance(doc, str):
            text = doc
        elif isinstance(doc, (bytes, bytearray, memoryview)):
            text = bytes(doc).decode("utf-8", "replace")
        else:
            return
        self.doc = text
        self.pos = None if self.line is None else _offset(text, self.line, self.column or 1)

    def locate(self, line: int, column: int | None, line_text: str) -> ToonDecodeError:
        """Fill in the location unless a deeper layer already did."""
        if self.line is None:
            self.line = line
            self.line_text = line_text
        if self.column is None:
            self.column = column if column is not None else 1
        return self

    def __str__(self) -> str:
        if self.line is None:
            return self.msg
        return f"{self.msg} (line {self.line}, column {self.column})"

    def __reduce__(self):  # type: ignore[no-untyped-def]
        # Keyword-only constructor arguments need an explicit pickle recipe
        # (multiprocessing sends exceptions between processes).
        return (_rebuild_decode_error, (self.msg, self.code, self.line, self.column, self.line_text, self.doc, self.pos))


def _rebuild_decode_error(
    msg: str,
    code: str,
    line: int | None,
    column: int | None,
    line_text: str | None,
    doc: str | None = None,
    pos: int | None = None,
) -> ToonDecodeError:
    e = ToonDecodeError(msg, code=code, line=line, column=column, line_text=line_text)
    e.doc, e.pos = doc, pos
    return e


_LF = re.compile("\n")


def _offset(doc: str, line: int, column: int) -> int | None:
    """The character offset of 1-based (line, column) in ``doc`` (lines end
    at LF, as the decoder splits them; a leading byte-order mark is not part
    of line 1's columns).  A column past its line's end gives the line's
    end; a line the document does not have gives None."""
    if line < 1:
        return None
    start = 0
    if line > 1:
        # (the (line-1)th LF, found in C: an error in a long document costs no Python loop per line)
        lf = next(islice(_LF.finditer(doc), line - 2, None), None)
        if lf is None:
            return None
        start = lf.end()
    elif doc.startswith("\ufeff"):
        start = 1
    end = doc.find("\n", start)
    return min(start + column - 1, len(doc) if end == -1 else end)


class ToonEncodeError(ToonError, ValueError):
    """A value cannot be encoded as TOON.

    Attributes:
        path: where the offending value sits, as a tuple of keys and indexes
            from the root (``("users", 3, "born")``).
        line, column: for the streaming encoders that read line-oriented
            input (JSONL), the input position of the bad record; else None.

    Example:
        >>> import toonstream
        >>> try:
        ...     toonstream.dumps({"x": {1: "a"}})
        ... except toonstream.ToonEncodeError as e:
        ...     print(e.path)
        ('x',)
    """

    def __init__(
        self,
        message: str,
        *,
        path: tuple[str | int, ...] = (),
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        super().__init__(message)
        self.msg = message
        self.path = path
        # Set when the value came from a line-oriented input (JSONL): where it was.
        self.line = line
        self.column = column

    def __str__(self) -> str:
        text = self.msg
        if self.path:
            text = f"{text} (at {_path_text(self.path)})"
        if self.line is not None:
            text = f"{text} (input line {self.line})"
        return text

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (_rebuild_encode_error, (self.msg, self.path, self.line, self.column))


#: a path shown in a message: at most this many steps at each end (the rest
#: counted), keys cut to _KEY_SHOWN characters (the whole path stays in .path)
_PATH_ENDS = 8
_KEY_SHOWN = 60


def _path_text(path: tuple[str | int, ...]) -> str:
    """``path`` as ``a.b[2].c``, a deep one shortened in the middle.

    >>> _path_text(("rows", 2, "x"))
    'rows[2].x'
    >>> _path_text((0,) * 20)
    '[0][0][0][0][0][0][0][0]...(4 more)...[0][0][0][0][0][0][0][0]'
    """

    def step(p: str | int) -> str:
        if isinstance(p, int):
            return f"[{p}]"
        text = f"{p}"  # (a key that is not a str yet: an error about it)
        return f".{text}" if len(text) <= _KEY_SHOWN else f".{text[:_KEY_SHOWN]}..."

    if len(path) > 2 * _PATH_ENDS:
        head = "".join(map(step, path[:_PATH_ENDS]))
        tail = "".join(map(step, path[-_PATH_ENDS:]))
        where = f"{head}...({len(path) - 2 * _PATH_ENDS} more)...{tail}"
    else:
        where = "".join(map(step, path))
    return where.lstrip(".")


def _rebuild_encode_error(
    msg: str, path: tuple[str | int, ...], line: int | None, column: int | None
) -> ToonEncodeError:
    return ToonEncodeError(msg, path=path, line=line, column=column)


#: The fix an error of an inferred column type suggests, in the library's words; the command
#: line and the Spark source say it in theirs (:func:`rehinted`).
SCHEMA_HINT = "pass schema_overrides (or a schema) or a larger infer_schema_length"


def rehinted(e: ToonDecodeError, hint: str) -> ToonDecodeError:
    """``e`` with :data:`SCHEMA_HINT` in its message said as ``hint`` (the options'
    names where the reader was called: ``--schema-overrides``, ``.schema(...)``).

    >>> str(rehinted(ToonDecodeError(f"x ({SCHEMA_HINT})", code="type_mismatch"), "pass -s"))
    'x (pass -s)'
    """
    if SCHEMA_HINT in e.msg:
        e.msg = e.msg.replace(SCHEMA_HINT, hint)
        e.args = (e.msg,)
    return e

"""Byte ranges of a one-table TOON file, each read on its own: the piece
that distributed engines (``toonstream.dask``, Ray Data, ...) split a big
file into.

A row never holds a raw newline (§7.1: a newline in a string is written
``\\n``), so a file holding one table can be cut at any line end after its
header with no quoting ambiguity, as a CSV file without quoted newlines.
A range ``[start, end)`` of bytes owns the lines whose *first byte* lies in
it: its partial first line belongs to the range before, the line that
crosses ``end`` is finished.  The ranges of a split therefore own every line
exactly once, and reading them one by one gives the table
:func:`toonstream.arrow.read_table` gives for the whole file, in values and
types.

What is checked where:

- :class:`RangeReader` (made once, on the driver) reads the header from the
  file's start and decides the column types: from the first
  ``infer_schema_length`` rows as the whole-file reader does, or from
  ``schema``; every range is then read with those types, so ranges never
  disagree (a later value that does not fit is a ``type_mismatch``, as in
  one read).
- :meth:`RangeReader.read` decodes a range's lines through the same decoder
  and column-wise engine as ``iter_batches`` (a document made of the header
  and the range's lines), so each row is checked as in a whole-file read:
  widths, cells, indentation, blank lines inside the table.
- The declared ``[N]`` needs every range: :meth:`RangeReader.check_count`
  compares the summed row counts with it (strict mode), and names the file.
  Errors carry the file's own line numbers, and the file name.

The file's content must be one table: its header is the first line that is
not blank or a comment, and every later line is one of its rows (or blank,
or a comment).

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "t.toon")
>>> with open(path, "wb") as f:
...     _ = f.write(b"[3]{id,tag}:\\n  1,\\"a,b\\"\\n  2,c\\n  3,d\\n")
>>> reader = RangeReader(path)
>>> parts = [reader.read(s, e) for s, e in reader.ranges(blocksize=8)]
>>> [t.num_rows for t in parts], parts[0].schema.types
([1, 1, 1], [DataType(int64), DataType(large_string)])
>>> reader.check_count(sum(t.num_rows for t in parts))
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import partial
from itertools import chain
from typing import IO, Any, Callable, Iterable, Iterator, Mapping, Sequence

from ._errors import ToonDecodeError, ToonEncodeError
from ._reference.events import StartTable
from ._optional import requires
from ._reference.scalars import find_unquoted

with requires("toonstream.ranges"):
    import pyarrow as pa

    from . import arrow as _arrow
    from ._frames import TABLE_OPTIONS, FrameReader, check_options

__all__ = [
    "TableHeader", "RangeReader", "read_header", "plan_files", "split_ranges", "parse_size", "table_header", "write_part",
]

# Bytes read per step when looking for a line end, and when counting rows.
_STEP = 1 << 20
_COUNT_STEP = 16 << 20

# Lines that are not rows: blank (spaces and tabs only, §12; a CR before the
# LF is the line terminator) or a comment (spaces, then '#': §5.1).
_NOT_ROW = re.compile(rb"^(?: *#|[ \t]*\r?$)", re.M)
# A blank line other than the first or last can only be where one of these
# occurs (searched for in C, before the slower line-by-line look): a line
# end right after another, a space or a tab; the same before a CR, if any.
_BLANK_HINTS = (b"\n\n", b" \n", b"\t\n")
_BLANK_HINTS_CR = (b"\n\r", b" \r", b"\t\r")


@dataclass(frozen=True)
class TableHeader:
    """The table's header, read once from the file's start (see :func:`read_header`).

    ``text``: the header line with its terminator; ``line``: its number;
    ``rows_offset``: the byte offset just past it, where the rows begin;
    ``first_row``: the offset of the first line after it that is not blank
    or a comment (the file's size if none); ``length``: the declared
    ``[N]``; ``keyed``: a keyed table (``[N:]``); ``indent``: the rows'
    indentation; ``size``: the file's size when the header was read.
    """

    path: str
    text: bytes
    line: int
    rows_offset: int
    first_row: int
    length: int
    keyed: bool
    delimiter: str
    indent: int
    size: int

    def with_length(self, n: int) -> bytes:
        """The header line declaring ``n`` rows instead of ``length``."""
        text = self.text.decode("utf-8")
        # The bracket segment is the first '[' outside a quoted key (§6).
        i = find_unquoted(text, "[")
        m = re.compile(r"[0-9]+").match(text, i + 1)
        assert i >= 0 and m is not None  # (the decoder read this header)
        return (text[: m.start()] + str(n) + text[m.end() :]).encode("utf-8")


def _open(path: str) -> IO[bytes]:
    return open(path, "rb")


def _size(f: IO[bytes]) -> int:
    return f.seek(0, os.SEEK_END)


def _error(e: ToonDecodeError, path: str, where: Callable[[int | None], int | None] | None = None) -> ToonDecodeError:
    """``e`` with the file's name in its message, and its lines (the
    location, and those the message names) mapped by ``where`` from the
    decoded document's to the file's."""
    msg = e.msg
    line: int | None = e.line
    if where is not None:
        line = where(line)
        msg = re.sub(r"\bline ([0-9]+)", lambda m: f"line {where(int(m.group(1)))}", msg)
    out = ToonDecodeError(f"{path}: {msg}", code=e.code, line=line, column=e.column, line_text=e.line_text)
    out.__cause__ = e.__cause__
    return out


def read_header(path: str | os.PathLike[str], **options: Any) -> TableHeader:
    """Read the table header of the one-table TOON file at ``path`` and
    where its rows begin.  ``options``: the decoder's (``strict``,
    ``indent_size``, ``max_line_length``, ...).

    A file whose first line that is not blank or a comment is not a table
    header (``[N]{...}:``, ``[N:]{...}:`` or ``key[N]{...}:``) is a
    ``ToonDecodeError`` with code ``not_tabular``.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.toon")
    >>> with open(path, "wb") as f:
    ...     _ = f.write(b"# made by hand\\n[2]{a}:\\n  1\\n  2\\n")
    >>> h = read_header(path)
    >>> h.text, h.line, h.rows_offset, h.length
    (b'[2]{a}:\\n', 2, 23, 2)
    """
    from .decoder import Decoder

    check_options("read_header", options)
    name = os.fspath(path)
    decoder = Decoder(hold_rows=False, **options)
    limit = options.get("max_line_length") or (64 << 20)
    with _open(name) as f:
        size = _size(f)
        f.seek(0)
        offset = 0
        line = 0
        text = b""
        while True:
            raw = f.readline(limit + 2)
            if not raw:
                break
            line += 1
            offset += len(raw)
            try:
                events = decoder.feed(raw)
                if not raw.endswith(b"\n"):  # the file's last line: an empty table's header, say
                    events += decoder.close()
            except ToonDecodeError as e:
                raise _error(e, name) from None
            if line == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]  # (a byte-order mark, which the decoder skipped: not the line's text)
            if _is_row(raw):  # the first content line
                text = raw
                break
        table = next((e for e in events if isinstance(e, StartTable)), None) if text else None
        if table is None or text[:1] == b" ":
            raise ToonDecodeError(
                f"{name}: not a one-table file (its first line that is not blank or a comment must be a "
                "table header such as [N]{a,b}:)",
                code="not_tabular",
                line=max(line, 1),
                column=1,
                line_text=text.rstrip(b"\r\n").decode("utf-8", "replace"),
            )
        rows_offset = offset
        first_row = offset
        while True:  # blank and comment lines before the first row
            raw = f.readline(limit + 2)
            if not raw or _is_row(raw):
                break
            first_row += len(raw)
    return TableHeader(
        path=name,
        text=text if text.endswith(b"\n") else text + b"\n",
        line=line,
        rows_offset=rows_offset,
        first_row=min(first_row, size),
        length=table.length,
        keyed=table.keyed,
        delimiter=table.delimiter,
        indent=options.get("indent_size") or 2,  # (the header is at depth 0, its rows at depth 1)
        size=size,
    )


_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30}


def parse_size(size: int | str) -> int:
    """A byte count: an int, or text such as ``"64MiB"``, ``"100 MB"``, ``"1.5GB"``.

    >>> parse_size("64MiB"), parse_size("2.5 kb"), parse_size(7)
    (67108864, 2500, 7)
    """
    if isinstance(size, int):
        return size
    text = str(size).strip().lower().replace(" ", "")
    digits = text.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = text[len(digits) :]
    try:
        value = float(digits)
    except ValueError:
        value = -1.0
    if unit not in _UNITS or value < 0:
        raise ValueError(f"expected a size in bytes such as 64MiB or 100MB, got {size!r}")
    return int(value * _UNITS[unit])


def split_ranges(size: int, blocksize: int, start: int = 0) -> list[tuple[int, int]]:
    """``[start, size)`` cut into ranges of ``blocksize`` bytes (the last
    may be shorter; at least one range).

    >>> split_ranges(10, 4)
    [(0, 4), (4, 8), (8, 10)]
    """
    if blocksize < 1:
        raise ValueError("blocksize must be >= 1")
    cuts = list(range(start, size, blocksize)) or [start]
    return [(s, min(s + blocksize, max(size, s))) for s in cuts]


def plan_files(sources: Sequence[str], **options: Any) -> list[RangeReader]:
    """A :class:`RangeReader` for each file of one table spread over
    several files, in order: the column types are those of the first file
    with rows (as :func:`toonstream.polars.read_toon` on a list of files
    decides them), every file must have its columns (a ``ValueError``
    naming the file otherwise).  ``options``: the RangeReader's.

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> for name, text in (("a.toon", "[2]{x}:\\n  1\\n  2"), ("b.toon", "[1]{x}:\\n  3")):
    ...     with open(os.path.join(d, name), "w") as f:
    ...         _ = f.write(text)
    >>> readers = plan_files([os.path.join(d, n) for n in ("a.toon", "b.toon")])
    >>> [r.read(*r.ranges(1 << 20)[0]).column("x").to_pylist() for r in readers]
    [[1, 2], [3]]
    """
    if not sources:
        raise ValueError("no file to read")
    more = len(sources) > 1
    readers: list[RangeReader] = []
    fixed: Mapping[str, Any] | None = None
    for path in sources:
        reader = RangeReader(path, dtypes=fixed, more_files=more, **options)
        if fixed is None and reader.probed_rows:
            fixed = reader.dtypes
            # (files before it had no rows: their types, now these)
            readers = [RangeReader(r.path, header=r.header, dtypes=fixed, more_files=more, **options) for r in readers]
        readers.append(reader)
    first = readers[0]
    for r in readers[1:]:
        if r.schema != first.schema:
            raise ValueError(
                f"{r.path}: its table's columns and types {r.schema} differ from those of {first.path} "
                f"{first.schema} (every file must have the same columns, in the same order)"
            )
    return readers


def _line_start(f: IO[bytes], pos: int, size: int) -> int:
    """The offset of the first line that starts at or after ``pos``."""
    if pos <= 0:
        return 0
    if pos >= size:
        return size
    at = pos - 1
    f.seek(at)
    while True:
        chunk = f.read(_STEP)
        if not chunk:
            return size
        i = chunk.find(b"\n")
        if i >= 0:
            return at + i + 1
        at += len(chunk)


def _not_rows(data: bytes) -> list[tuple[int, bool]]:
    """(offset, is blank) of each blank or comment line of ``data``, in order.

    Such a line holds a '#' or one of ``_BLANK_HINTS``, or is the first or
    the last line: only the lines around those bytes (found by memchr-speed
    searches) are classified, unless they are many (a '#' in most rows, a
    tab-delimited table with empty last cells): then every line is."""
    end = len(data)
    starts = {0, data.rfind(b"\n") + 1}
    budget = end >> 8
    for needle in (b"#", *_BLANK_HINTS, *(_BLANK_HINTS_CR if b"\r" in data else ())):
        i = data.find(needle)
        while i != -1:
            if len(starts) > budget:
                return [(m.start(), not m.group().endswith(b"#")) for m in _NOT_ROW.finditer(data) if m.start() < end]
            # The line holding the hit, and the one after (an LF in the
            # needle may end the blank line's predecessor).
            starts.add(data.rfind(b"\n", 0, i) + 1)
            nl = data.find(b"\n", i)
            if nl != -1:
                starts.add(nl + 1)
            i = data.find(needle, i + 1)
    out: list[tuple[int, bool]] = []
    match = _NOT_ROW.match
    for at in sorted(starts):
        if at < end:
            m = match(data, at)
            if m is not None:
                out.append((at, not m.group().endswith(b"#")))
    return out


def _classify(data: bytes, indent: int) -> tuple[int, list[tuple[int, bool]]]:
    """The row lines of ``data`` (whole lines), and (offset, is blank) of
    its blank and comment lines.

    Rows are the lines at the row indentation or deeper (a deeper one is an
    error where the rows are decoded) that are neither blank nor comments.
    A shallower line is not counted: after a root table it is content after
    the root value, after a member table another member, as in a whole-file
    read; the decoder sees it all the same."""
    try:
        import numpy as np
    except ImportError:  # (pyarrow and polars run without it)
        return _classify_bytes(data, indent)
    if not data:
        return 0, []
    arr = np.frombuffer(data, dtype=np.uint8)
    starts = np.flatnonzero(arr == 10) + 1
    starts = np.concatenate((np.zeros(1, dtype=starts.dtype), starts[starts < len(arr)]))
    # A line that has the indentation then a byte that cannot begin a
    # blank or comment line's rest is a row; every other line (few) is
    # classified by the pattern.
    inner = starts[starts + indent < len(arr)]
    plain = np.ones(len(inner), dtype=bool)
    for j in range(indent):
        plain &= arr[inner + j] == 32
    after = arr[inner + indent]
    plain &= (after != 32) & (after != 9) & (after != 35) & (after != 13) & (after != 10)
    rows = int(plain.sum())
    prefix = b" " * indent
    blanks: list[tuple[int, bool]] = []
    match = _NOT_ROW.match
    others = np.union1d(inner[~plain], starts[starts + indent >= len(arr)])
    for at in others.tolist():
        m = match(data, at)
        if m is not None:
            blanks.append((at, not m.group().endswith(b"#")))
        elif data.startswith(prefix, at):
            rows += 1
    return rows, blanks


def _classify_bytes(data: bytes, indent: int) -> tuple[int, list[tuple[int, bool]]]:
    """:func:`_classify` with bytes searches only."""
    blanks = _not_rows(data)
    prefix = b" " * indent
    n = data.count(b"\n" + prefix) + data.startswith(prefix)
    return n - sum(1 for at, _ in blanks if data.startswith(prefix, at)), blanks


@dataclass
class _Range:
    """The lines a range owns: ``data`` from byte ``offset`` of the file;
    ``rows``: how many are neither blank nor comments."""

    offset: int
    data: bytes
    rows: int
    blanks: list[tuple[int, bool]]


class _Document:
    """The header line then the range's lines, as a file object (no copy of the range)."""

    def __init__(self, head: bytes, data: bytes) -> None:
        self.parts = [memoryview(head), memoryview(data)]

    def read(self, size: int = -1) -> bytes:
        while self.parts and not len(self.parts[0]):
            self.parts.pop(0)
        if not self.parts:
            return b""
        part = self.parts[0]
        n = len(part) if size < 0 else min(size, len(part))
        self.parts[0] = part[n:]
        return bytes(part[:n])


class RangeReader:
    """The reader of byte ranges of one one-table TOON file: made once (it
    reads the header and decides the column types), then sent wherever
    ranges are read (it pickles: plain data, no open file).

    Options as :func:`toonstream.arrow.iter_batches` takes them
    (``schema``, ``schema_overrides``, ``infer_schema_length``,
    ``try_parse_dates``, ``columns``, ``key_field``, ``batch_size``, and the
    decoder's ``strict``, ``indent_size``, limits).  ``header``: one read
    before (:func:`read_header`), else the file's is read here.
    ``schema`` on the reader is the Arrow schema every range's batches have.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.toon")
    >>> with open(path, "wb") as f:
    ...     _ = f.write(b"[2]{a,b}:\\n  1,x\\n  2,y\\n")
    >>> r = RangeReader(path, columns=["b"])
    >>> r.schema.names, r.read(12, 30).to_pydict()
    (['b'], {'b': ['y']})
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        schema: pa.Schema | Mapping[str, Any] | None = None,
        schema_overrides: Mapping[str, Any] | None = None,
        infer_schema_length: int | None = 100,
        try_parse_dates: bool = False,
        columns: Sequence[str] | None = None,
        key_field: str = "key",
        batch_size: int = 65_536,
        header: TableHeader | None = None,
        dtypes: Mapping[str, Any] | None = None,
        more_files: bool = False,
        **options: Any,
    ) -> None:
        check_options("RangeReader", options)
        if infer_schema_length is not None and infer_schema_length < 0:
            raise ValueError("infer_schema_length must be >= 0 or None")
        self.path = os.fspath(path)
        self.header = header if header is not None else read_header(self.path, **options)
        self.columns = list(columns) if columns is not None else None
        self.target = _arrow.arrow_types(schema, schema_overrides)
        self.user_schema = _arrow.polars_schema(schema)
        self.user_overrides = _arrow.polars_schema(schema_overrides)
        self.try_parse_dates = try_parse_dates
        self.key_field = key_field
        self.batch_size = batch_size
        self.options = {k: v for k, v in options.items() if k in TABLE_OPTIONS}
        self.strict = bool(options.get("strict", True))
        # The types, decided once from the file's first rows (its first
        # frame's are those of the whole read: see SourcesReader.probe).
        probe = FrameReader(
            self.path,
            batch_size=batch_size,
            columns=self.columns,
            n_rows=None if infer_schema_length is None else infer_schema_length + 1,
            schema=self.user_schema,
            schema_overrides=self.user_overrides,
            infer_schema_length=infer_schema_length,
            try_parse_dates=try_parse_dates,
            key_field=key_field,
            options=self.options,
            inferred=dtypes,
            more_sources=more_files,
        )
        frames = iter(probe)
        try:
            first = next(frames)
        except ToonDecodeError as e:
            raise _error(e, self.path) from None
        finally:
            frames.close()  # type: ignore[attr-defined]
        self.dtypes: dict[str, Any] = dict(first.schema)
        self.probed_rows = first.height  # (0: a table without rows, whose types fix nothing)
        self.schema: pa.Schema = next(_arrow.record_batches(iter([first.head(0)]), self.target)).schema

    def __repr__(self) -> str:
        return f"RangeReader({self.path!r}, columns={self.schema.names})"

    # -- ranges

    def ranges(self, blocksize: int) -> list[tuple[int, int]]:
        """The file's rows cut into ranges of about ``blocksize`` bytes
        (the first starts where the rows begin).

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "t.toon")
        >>> with open(path, "wb") as f:
        ...     _ = f.write(b"[2]{a}:\\n  1\\n  2\\n")
        >>> RangeReader(path).ranges(4)
        [(8, 12), (12, 16)]
        """
        return split_ranges(self.header.size, blocksize, self.header.rows_offset)

    def _take(self, f: IO[bytes], start: int, end: int) -> _Range:
        """The lines of the range (those whose first byte is in [start, end))."""
        size = _size(f)
        h = self.header
        s = max(h.rows_offset, _line_start(f, start, size))
        e = _line_start(f, end, size)
        if e <= s:
            return _Range(s, b"", 0, [])
        f.seek(s)
        data = f.read(e - s)
        rows, blanks = _classify(data, self.header.indent)
        return _Range(s, data, rows, blanks)

    def count_rows(self, start: int, end: int) -> int:
        """The rows of the range ``[start, end)``, counted without decoding
        them (lines that are neither blank nor comments; each of them is a
        row, or an error where the range is read)."""
        with _open(self.path) as f:
            size = _size(f)
            s = max(self.header.rows_offset, _line_start(f, start, size))
            e = _line_start(f, end, size)
            n = 0
            at = s
            while at < e:
                f.seek(at)
                chunk = f.read(min(_COUNT_STEP, e - at))
                if not chunk:
                    break
                # (whole lines only: a line is classified once, in full)
                cut = chunk.rfind(b"\n") + 1 if at + len(chunk) < e else len(chunk)
                if cut == 0:  # a line longer than the step: read on
                    cut = len(chunk) if len(chunk) < _COUNT_STEP else _line_start(f, at + len(chunk), e) - at
                    f.seek(at)
                    chunk = f.read(cut)
                n += _classify(chunk[:cut], self.header.indent)[0]
                at += cut
            return n

    def check_count(self, rows: int) -> None:
        """The strict ``[N]`` check of the whole table: ``rows``, the summed
        row counts of every range, must be the declared length (a
        ``ToonDecodeError`` with code ``count_mismatch`` at the header,
        naming the file).  Non-strict: no check (§14.1).

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "t.toon")
        >>> with open(path, "wb") as f:
        ...     _ = f.write(b"[3]{a}:\\n  1\\n  2\\n")
        >>> RangeReader(path).check_count(2)
        Traceback (most recent call last):
        ...
        toonstream._errors.ToonDecodeError: ...t.toon: declared 3 rows, found 2 (line 1, column 1)
        """
        h = self.header
        if self.strict and rows != h.length:
            what = "entry rows" if h.keyed else "rows"
            raise ToonDecodeError(
                f"{self.path}: declared {h.length} {what}, found {rows}",
                code="count_mismatch",
                line=h.line,
                column=1,
                line_text=h.text.rstrip(b"\r\n").decode("utf-8", "replace"),
            )

    # -- reading

    def read(self, start: int, end: int) -> pa.Table:
        """The rows of the range ``[start, end)`` as one ``pyarrow.Table``
        (schema :attr:`schema`; see :meth:`iter_batches`)."""
        return pa.Table.from_batches(list(self.iter_batches(start, end)), schema=self.schema)

    def iter_batches(self, start: int, end: int) -> Iterator[pa.RecordBatch]:
        """The rows of the lines whose first byte lies in ``[start, end)``,
        as RecordBatches of at most ``batch_size`` rows with the schema
        :attr:`schema` (none for a range without rows).  The range's bytes
        are read at once (as a CSV block is)."""
        with _open(self.path) as f:
            part = self._take(f, start, end)
            if _first_content(part.data, part.blanks) is None:
                # Blank and comment lines only: fine unless a row follows.
                if self.strict:
                    self._check_trailing_blanks(f, part)
                return
            self._check_leading_blanks(f, part)
            self._check_shallow_lines(f, part)
            reader = FrameReader(
                _Document(self.header.with_length(part.rows), part.data),
                batch_size=self.batch_size,
                columns=self.columns,
                schema=self.user_schema,
                schema_overrides=self.user_overrides,
                try_parse_dates=self.try_parse_dates,
                key_field=self.key_field,
                options=self.options,
                inferred=self.dtypes,
                more_sources=True,
                arrow_check=_arrow.arrow_check(self.target),
            )
            try:
                for batch in _arrow.record_batches(iter(reader), self.target):
                    if batch.num_rows:
                        yield batch
            except ToonDecodeError as e:
                raise _error(e, self.path, partial(self._file_line, f, part)) from None
            if self.strict:
                self._check_trailing_blanks(f, part)

    def _file_line(self, f: IO[bytes], part: _Range, line: int | None) -> int | None:
        """The file's line number of line ``line`` of the range's document
        (line 1 is the header, the range's lines follow)."""
        if line is None or line < 1:
            return line
        if line == 1:
            return self.header.line
        f.seek(0)
        before = 0
        left = part.offset
        while left:
            chunk = f.read(min(_STEP, left))
            if not chunk:
                break
            before += chunk.count(b"\n")
            left -= len(chunk)
        return before + line - 1

    def _check_shallow_lines(self, f: IO[bytes], part: _Range) -> None:
        """A line at column 0 that is neither blank nor a comment: after a named table that
        is another member of the root object (``z: 1``), which a range's document would
        read, and leave out of the table, without a word.  A one-table file holds its table
        only.  (After a root table the decoder says so itself.)"""
        if self.header.text.startswith(b"["):
            return
        m = _UNINDENTED.search(part.data)
        if m is None:
            return
        line, text = self._line_at(f, part, m.start())
        raise ToonDecodeError(
            f"{self.path}: not a one-table file: a line after the table that is not one of its rows "
            "(another member of the root object, say)",
            code="trailing_content",
            line=line,
            column=1,
            line_text=text,
        )

    def _blank_error(self, f: IO[bytes], part: _Range, at: int) -> ToonDecodeError:
        line, text = self._line_at(f, part, at)
        return ToonDecodeError(
            f"{self.path}: blank line inside an array", code="blank_line", line=line, column=1, line_text=text
        )

    def _line_at(self, f: IO[bytes], part: _Range, at: int) -> tuple[int | None, str]:
        """The file's line number and the text of the range's line that starts at ``at``."""
        end = part.data.find(b"\n", at)
        text = part.data[at : len(part.data) if end == -1 else end].rstrip(b"\r").decode("utf-8", "replace")
        return self._file_line(f, part, 2 + part.data.count(b"\n", 0, at)), text

    def _check_leading_blanks(self, f: IO[bytes], part: _Range) -> None:
        """A blank line before the range's first row, after the table's
        first row: inside the table (§12), as the decoder would say if it
        saw the rows before it (strict)."""
        if not self.strict or not part.blanks or part.offset <= self.header.first_row:
            return
        first = _first_content(part.data, part.blanks)
        if first is None or not part.data.startswith(b" " * self.header.indent, first):
            return  # (a shallower line ends the table before any row)
        for offset, blank in part.blanks:
            if offset > first:
                return
            if blank:
                raise self._blank_error(f, part, offset)

    def _check_trailing_blanks(self, f: IO[bytes], part: _Range) -> None:
        """A blank line after the range's last row (or in a range without
        rows), past the table's first row, is inside the table if a row
        follows in a later range: looked for from the range's end (strict)."""
        blank = _trailing_blank(part)
        if blank is None or part.offset + blank < self.header.first_row:
            return
        f.seek(part.offset + len(part.data))
        prefix = b" " * self.header.indent
        carry = b""
        while True:
            chunk = f.read(_STEP)
            whole = carry + chunk
            if chunk:
                cut = whole.rfind(b"\n") + 1
                whole, carry = whole[:cut], whole[cut:]
            at = _first_content(whole, _classify(whole, self.header.indent)[1])
            if at is not None:
                # A row follows: the blank line was inside the table.  (Not
                # after a shallower line: that ends the table first.)
                if whole.startswith(prefix, at):
                    raise self._blank_error(f, part, blank)
                return
            if not chunk:
                return


#: a line at column 0 that is neither blank nor a comment (a line indented less than the rows
#: is the decoder's to refuse: bad indentation)
_UNINDENTED = re.compile(rb"(?m)^(?=[^ \t\r\n#])")


def _is_row(line: bytes) -> bool:
    """Whether a line (its terminator optional) is neither blank nor a comment."""
    return _NOT_ROW.match(line.rstrip(b"\n")) is None


def _first_content(data: bytes, blanks: list[tuple[int, bool]]) -> int | None:
    """The offset of the first line of ``data`` that is neither blank nor
    a comment (``blanks``: those lines), or None."""
    at = 0
    for offset, _ in blanks:
        if offset != at:
            break
        at = _line_end(data, offset)
    return at if at < len(data) else None


def _line_end(data: bytes, at: int) -> int:
    nl = data.find(b"\n", at)
    return len(data) if nl < 0 else nl + 1


def _trailing_blank(part: _Range) -> int | None:
    """The offset (in the range) of the first blank line after the range's
    last row (among all of its lines if it has no row), or None."""
    end = len(part.data)
    first: int | None = None
    for at, blank in reversed(part.blanks):
        if _line_end(part.data, at) != end:
            break  # a row lies between this line and the ones after it
        end = at
        if blank:
            first = at
    return first


# ------------------------------------------------------------------ writing parts


def table_header(schema: pa.Schema, n: int, **options: Any) -> str:
    """The header line :func:`toonstream.arrow.encode_arrow` writes for
    ``n`` rows of ``schema`` (``options``: its ``key``, ``delimiter``,
    ``default``, ``max_depth``): what joins the parts of one table.  A
    ``ToonEncodeError`` for columns that do not make a table.

    >>> table_header(pa.schema([("a", pa.int64()), ("b", pa.string())]), 7, key="t")
    't[7]{a,b}:'
    """
    from ._arrow_encode import schema_shape
    from ._reference.writer import header, key_text
    from .encoder import DEFAULT_MAX_DEPTH, check_delimiter

    key = options.get("key")
    shape = schema_shape(schema, has_default=options.get("default") is not None, under_key=key is not None,
                         max_depth=options.get("max_depth", DEFAULT_MAX_DEPTH))
    if shape is None:
        raise ToonEncodeError(
            "these columns do not make a TOON table (list, map, union or empty struct columns, a name used twice, "
            f"or nested past max_depth): {schema}"
        )
    return header("" if key is None else key_text(key), n, check_delimiter(options.get("delimiter", ",")), shape.fields)


def write_part(
    data: pa.Table | Iterable[pa.RecordBatch], path: str, *, schema: pa.Schema | None = None, **options: Any
) -> int:
    """Write ``data`` (a Table, or RecordBatches) as one TOON file at
    ``path``, atomically: a temporary file beside it, renamed once complete
    (a failure leaves ``path`` as it was).  Rows are formatted by
    :func:`toonstream.arrow.encode_arrow` (``options`` are its own); no rows
    give the table's header with ``[0]`` (a valid one-table file, which
    reads back as an empty table of these columns: ``schema``, or the
    Table's).  Returns the row count.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "p.toon")
    >>> write_part(pa.table({"a": [1, 2]}), path), open(path).read()
    (2, '[2]{a}:\\n  1\\n  2')
    """
    from ._arrow_encode import encode_arrow
    from ._atomic import AtomicOutput

    if schema is None and isinstance(data, pa.Table):
        schema = data.schema
    batches: Iterator[pa.RecordBatch] = iter(data.to_batches() if isinstance(data, pa.Table) else data)
    first = next((b for b in batches if b.num_rows), None)
    rows = 0

    def counted() -> Iterator[pa.RecordBatch]:
        nonlocal rows
        for b in chain((first,), batches) if first is not None else ():
            rows += b.num_rows
            yield b

    with AtomicOutput(os.fspath(path)) as f:  # (a failed write leaves the file as it was)
        if first is None:
            if schema is None:
                raise ValueError("write_part: no rows, and no schema to write the header from")
            f.write(table_header(schema, 0, **options).encode("utf-8"))
        else:
            encode_arrow(data if isinstance(data, pa.Table) else counted(), f, **options)
            if isinstance(data, pa.Table):
                rows = data.num_rows
            f.flush()
            check_table_written(f.fileno(), first.schema, rows, options)
    return rows


def check_table_written(fd: int, schema: pa.Schema, rows: int, options: Mapping[str, Any]) -> None:
    """Refuses a file (``fd``, written from the start) that ``encode_arrow``
    did not write as the one table of ``rows`` rows of ``schema``: a null
    struct makes its rows list items (``dumps``' form), which no range
    reader, Dask or Spark read takes as a table part."""
    expect = table_header(schema, rows, **options).encode("utf-8") + b"\n"
    at = os.lseek(fd, 0, os.SEEK_CUR)  # (os.pread is not on every system)
    os.lseek(fd, 0, os.SEEK_SET)
    head = os.read(fd, len(expect))
    os.lseek(fd, at, os.SEEK_SET)
    if head != expect:
        raise ToonEncodeError(
            f"these rows did not encode as one table (the text begins {head[:80]!r}, not {expect[:80]!r}): "
            "a table part needs every row in tabular form (e.g. no null structs; a struct's fields may be null)"
        )

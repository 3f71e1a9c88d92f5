"""CSV input for ``encode_arrow`` and the CLI's ``encode x.csv``: each column
typed from its cells' text, and each number written as it was written.

pyarrow's CSV type inference loses data on the way to TOON: a 23-digit int
becomes a float64 (digits lost), ``1e400`` becomes inf (then null), ``007``
becomes the int 7, and a date becomes a timestamp (``2024-01-05T00:00:00``).
So every column is read as text (pyarrow's tokenizer, fast), and typed here:

- a column is decided by its first batch with a non-null cell (the null
  spellings are pyarrow's ``ConvertOptions().null_values``): numbers when
  every such cell is a JSON number, booleans when every one is
  ``true``/``false`` (or ``True``, ``TRUE``...), else text (kept as written,
  dates included, and with ``""`` and ``NA`` as the strings they are; in the
  batches before the deciding one, which held only null spellings, those
  cells are null: a batch is written before the next is read);
- a later cell that does not fit its column's kind is an error at its row
  (``ToonEncodeError``), as with pyarrow's inference;
- each batch of a number column becomes int64 or float64 when that type
  holds every value exactly (a float64's shortest text is the number
  written), else the numbers' TOON text as ``dumps`` writes an int or a
  Decimal (``1.50`` is 1.5, ``1e400`` 1e+400), which the writers copy
  (the batch's schema metadata ``RAW`` names such columns).

The batches of one column may so have different types (int64 in one,
text in another); the TOON text of a number does not depend on it.
"""

from __future__ import annotations

import io
import threading
from decimal import Decimal
from typing import IO, Any, Iterator

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from ._errors import ToonEncodeError
from ._reference.numbers import _checked_length, encode_decimal

_NUMBER = r"^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$"  # RFC 8259's number
_INT = r"^-?(?:0|[1-9][0-9]*)$"
_BOOLS = ["true", "True", "TRUE", "false", "False", "FALSE"]  # pyarrow's, without 1 and 0 (ints)
_NULLS = pcsv.ConvertOptions().null_values


class _Gated(io.RawIOBase):
    """Reads of ``raw`` that can be shut off.  pyarrow's CSV reader reads
    ahead on its own I/O thread, and goes on after its reader is closed or
    dropped: without the gate, a late read of the probe would take bytes from
    under the main reader, and one after the file is closed could read
    another file opened under the same descriptor number.  :meth:`shut`
    waits for a read in flight; after it, reads see the end of the input."""

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw
        self._lock = threading.Lock()
        self._open = True

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        data = self._read(len(b))
        b[: len(data)] = data
        return len(data)

    def _read(self, n: int) -> bytes:
        with self._lock:
            data = self._raw.read(n) if self._open else b""
            self._took(data)
        return data

    def _took(self, data: bytes) -> None:
        """What a read got, while the lock is held (nothing to do here)."""

    def shut(self) -> None:
        with self._lock:
            self._open = False


class _Recorded(_Gated):
    """``raw``, keeping every byte read (the probe's, read again after it)."""

    def __init__(self, raw: IO[bytes]) -> None:
        super().__init__(raw)
        self.seen = bytearray()

    def _took(self, data: bytes) -> None:
        self.seen += data  # (under the lock: stop() has every byte a read took)

    def stop(self) -> bytes:
        """No more reads; every byte read (a probe's read-ahead included)."""
        self.shut()
        return bytes(self.seen)


class _Prefixed(_Gated):
    """``head`` (bytes already read) and then the rest of ``raw``."""

    def __init__(self, head: bytes, raw: IO[bytes]) -> None:
        super().__init__(raw)
        self._head = memoryview(head)

    def readinto(self, b: Any) -> int:
        n = 0
        if self._head:  # (then the raw file: pyarrow takes a short read as its block)
            n = min(len(b), len(self._head))
            b[:n] = self._head[:n]
            self._head = self._head[n:]
            if n == len(b):
                return n
        data = self._read(len(b) - n)
        b[n : n + len(data)] = data
        return n + len(data)


class CsvInput:
    """A CSV file (a path or a binary stream, read once) as record batches
    typed from their text; the first batch is read at once (for ``schema``).

    >>> import io
    >>> src = CsvInput(io.BytesIO(b"id,n,zip\\n1,12345678901234567890123,007\\n"))
    >>> [(f.name, str(f.type)) for f in src.schema]
    [('id', 'int64'), ('n', 'large_string'), ('zip', 'string')]
    """

    def __init__(self, source: str | IO[bytes]) -> None:
        self._own = isinstance(source, str)
        raw: IO[bytes] = open(source, "rb") if isinstance(source, str) else source  # noqa: SIM115 - closed by batches()
        try:
            # The column count, from a probe that pyarrow parses as it will
            # parse the file (its first block, read again after it): every
            # column is then read as text, named f0, f1... (the header is
            # the first row, pyarrow's parse of it).
            seen = _Recorded(raw)
            probe = pcsv.open_csv(
                seen, read_options=pcsv.ReadOptions(autogenerate_column_names=True, use_threads=False),
                parse_options=pcsv.ParseOptions(newlines_in_values=True),
            )
            width = len(probe.schema)
            del probe
            self._stream = _Prefixed(seen.stop(), raw)  # (the probe's read-ahead ends here)
            self._reader = pcsv.open_csv(
                self._stream,
                read_options=pcsv.ReadOptions(autogenerate_column_names=True),
                # Quoted values may hold line ends (as toonstream's own CSV
                # output writes a string's); a blank line is a row when there
                # is one column (its cell empty: null), else an error.
                parse_options=pcsv.ParseOptions(newlines_in_values=True, ignore_empty_lines=width != 1),
                convert_options=pcsv.ConvertOptions(column_types={f"f{i}": pa.string() for i in range(width)}),
            )
            self._raw = raw
            self._names: list[str] = []
            self._kinds: list[str | None] = []
            self._row = 0
            self._as_text: set[int] = set()  # the batch's columns written as their numbers' TOON text
            self._not_ints: set[int] = set()  # number columns that held a non-int (or one beyond int64)
            self._batches = self._typed()
            self._first = next(self._batches, None)
        except BaseException:
            if self._own:
                raw.close()
            raise
        if self._first is None:
            self.schema = pa.schema([(name, pa.null()) for name in self._names])
        else:
            self.schema = self._first.schema

    def batches(self) -> Iterator[Any]:
        """The typed batches (once)."""
        try:
            if self._first is not None:
                first, self._first = self._first, None
                yield first
                yield from self._batches
        finally:
            self.close()

    def close(self) -> None:
        self._stream.shut()  # (pyarrow's read-ahead goes on after its reader is done: see _Gated)
        if self._own:
            self._raw.close()

    def _typed(self) -> Iterator[Any]:
        header = True
        for batch in self._reader:
            if header:
                if batch.num_rows == 0:
                    continue
                self._names = [col[0].as_py() for col in batch.columns]
                self._kinds = [None] * len(self._names)
                batch = batch.slice(1)
                header = False
            if batch.num_rows:
                self._as_text = set()
                arrays = [self._column(i, col) for i, col in enumerate(batch.columns)]
                metadata = {RAW: ",".join(map(str, sorted(self._as_text)))} if self._as_text else None
                yield pa.RecordBatch.from_arrays(arrays, schema=pa.schema(
                    [pa.field(name, a.type) for name, a in zip(self._names, arrays)], metadata=metadata))
                self._row += batch.num_rows

    def _column(self, i: int, arr: Any) -> Any:
        kind = self._kinds[i]
        if kind == "string":
            return arr
        nulls = pc.is_in(arr, value_set=pa.array(_NULLS))
        values = pc.if_else(nulls, pa.scalar(None, pa.string()), arr)
        checked = False
        if kind is None:
            if values.null_count == len(values):
                return pa.nulls(len(arr))
            # (``pc.all`` skips nulls)
            if pc.all(pc.match_substring_regex(values, _NUMBER)).as_py():
                kind = "number"
            elif pc.all(pc.or_(nulls, pc.is_in(values, value_set=pa.array(_BOOLS)))).as_py():
                kind = "bool"
            else:
                self._kinds[i] = "string"
                return arr
            self._kinds[i] = kind
            checked = True
        if kind == "bool":
            if not checked:
                self._fits(i, values, pc.or_(nulls, pc.is_in(values, value_set=pa.array(_BOOLS))), "true or false")
            return pc.equal(pc.utf8_lower(values), "true")
        if i not in self._not_ints:  # (a column with non-ints stays on the float path: same TOON text)
            ints = self._ints(i, values, checked)
            if ints is not None:
                return ints
            self._not_ints.add(i)
        if not checked:
            self._fits(i, values, pc.match_substring_regex(values, _NUMBER), "a number")
        return self._numbers(i, values)

    def _ints(self, i: int, values: Any, checked: bool) -> Any:
        """The column as int64 when every cell is an int of its range, else
        None.  The cast also takes ``007`` and ``0x10``: a cell whose int's
        text is not its own is checked against the grammar (``-0`` passes),
        cheaper than matching every cell."""
        try:
            ints = pc.cast(values, pa.int64())
        except pa.ArrowInvalid:
            return None
        if not checked:
            same = pc.fill_null(pc.equal(pc.cast(ints, pa.string()), values), True)
            if not pc.all(same).as_py():
                at = pc.indices_nonzero(pc.invert(same))
                self._fits(i, pc.take(values, at), pc.match_substring_regex(pc.take(values, at), _INT), "a number", at)
        return ints

    def _fits(self, i: int, values: Any, ok: Any, what: str, rows: Any = None) -> None:
        """Refuses the first cell (not null) where ``ok`` is false (``rows``:
        the cells' rows in the batch, when ``values`` is a selection)."""
        bad = pc.invert(pc.fill_null(ok, True))
        if pc.any(bad).as_py():
            at = pc.index(bad, True).as_py()
            row = at if rows is None else rows[at].as_py()
            self._refuse(i, row, f"holds {values[at].as_py()!r}, which is not {what} as the column's cells before it")

    def _refuse(self, i: int, at: int, what: str) -> None:
        row = self._row + at
        raise ToonEncodeError(  # (a row, not a line: quoted values may hold line ends)
            f"CSV row {row + 1} (after the header), column {self._names[i]!r} {what}",
            path=(row, self._names[i]),
        )

    def _numbers(self, i: int, values: Any) -> Any:
        """A column of number texts (and nulls), not all ints of int64's
        range, as float64 when it holds every value exactly, else as their
        TOON text."""
        exponent = pc.fill_null(pc.match_substring(values, "e", ignore_case=True), False)
        if not pc.any(exponent).as_py() and not pc.any(pc.match_substring(values, ".")).as_py():
            return self._texts(i, values)  # ints beyond int64
        floats = pc.cast(values, pa.float64())
        # A float64 is exact when its shortest text (which the TOON writers
        # give) is the number written: always so for 15 characters or fewer
        # without an exponent (15 significant digits at most, in the normal
        # range); else when the texts are equal (as a float64 writer gives
        # them); the rest are checked one by one.
        short = pc.fill_null(pc.and_(pc.less_equal(pc.utf8_length(values), 15), pc.invert(exponent)), True)
        if not pc.all(short).as_py():
            at = pc.indices_nonzero(pc.invert(short))
            texts = pc.take(values, at)
            left = pc.filter(texts, pc.invert(pc.equal(pc.cast(pc.take(floats, at), pa.string()), texts)))
            if not all(map(_float_exact, left.to_pylist())):
                return self._texts(i, values)
        return floats

    def _texts(self, i: int, values: Any) -> Any:
        """Each number's TOON text, as ``dumps`` writes the int or Decimal
        (``1.50`` is 1.5, ``1e400`` 1e+400), copied by the writers (``RAW``)."""
        out: list[str | None] = []
        for j, t in enumerate(values.to_pylist()):
            try:
                if t is None:
                    out.append(None)
                elif "." in t or "e" in t or "E" in t:
                    out.append(encode_decimal(Decimal(t)))
                else:  # (an int's digits are its text: no leading zeros in the grammar)
                    out.append(_checked_length("0" if t == "-0" else t))
            except (ToonEncodeError, ArithmeticError) as e:  # (an exponent past Decimal's: InvalidOperation)
                reason = e if isinstance(e, ToonEncodeError) else "its exponent is out of range"
                self._refuse(i, j, f"holds {t[:40]!r}{'...' if len(t) > 40 else ''}: {reason}")
        self._as_text.add(i)
        return pa.array(out, pa.large_string())


RAW = "toonstream.raw"  # schema metadata: the columns (indices) whose text is written as it is


def _float_exact(text: str) -> bool:
    """Whether float64's shortest text of ``text`` is the same number (``1e400``: inf, no)."""
    try:
        return Decimal(repr(float(text))) == Decimal(text)
    except ArithmeticError:  # (an exponent past Decimal's)
        return False

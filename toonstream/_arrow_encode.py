"""Arrow / Parquet -> TOON, vectorized with pyarrow.compute (``encode_arrow``).

The output is byte-identical to ``dumps(table.to_pylist())`` (or
``dumps({key: table.to_pylist()})``), but a tabular table is never turned into
Python rows: each column of a batch becomes a string array of cell texts with
compute kernels, the columns are joined with the delimiter
(``binary_join_element_wise``) and the batch's row text is written straight
from the Arrow buffer.

Per column type (the cell text is what ``dumps`` writes for the Python value
``to_pylist`` gives, see ``_normalize.py``):

- bool, integers: ``true``/``false``, decimal digits.
- float16/32/64: Arrow's shortest-round-trip cast, which is already the §2
  canonical text except for ``-0``, NaN/inf and exponent forms for
  1e-6 <= |x| < 1e21; those are fixed (integer-valued floats via int64,
  the rest, rare, per value with ``encode_float``).
- decimals: the exact cast with trailing fraction zeros stripped; values below
  1e-6 or from 1e21 up (exponent form) per value.
- strings (string, large_string, string_view, dictionary): one RE2 match of the
  §7.2 needs-quote pattern; only matching cells are escaped and quoted.
- date, timestamp, time: ISO text as ``isoformat()`` writes it (quoted when it
  holds a ``:``); values outside what the vectorized form covers (nanoseconds,
  years outside 1..9999, named time zones before 1980) per value.
- binary, duration: per value (an error unless ``default`` is given, as in
  ``dumps``; with ``default`` the whole table takes the per-row path).
- struct: a nested field group in the header (§6), its fields are columns.

Data that does not make a table in ``dumps`` (a null struct, an empty struct,
list/map/union columns, zero columns, duplicate names) takes the exact per-row
path instead: ``to_pylist`` a batch at a time through ``encode_records``.

Imports pyarrow (an error naming the ``arrow`` extra without it); only
``toonstream.arrow`` and the paths that encode Arrow data (``write_toon``,
the command line's Parquet/Arrow/CSV input) import this module.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import os
import re
import struct
import sys
import tempfile
from typing import IO, Any, Callable, Iterable, Iterator

from . import _engine
from ._errors import ToonEncodeError
from ._optional import requires
from ._reference.quoting import ESCAPES, NAMED_ESCAPES, char_class, needs_quote_re2, quote_checked
from ._reference.shape import ShapePlan, leaf_paths
from ._reference.writer import Fields, header, key_text, primitive_formatter
from ._reference.normalize import normalize
from .encoder import DEFAULT_MAX_DEPTH, check_delimiter, check_indent_size, check_max_depth, check_spool_memory

with requires("encoding Arrow data (encode_arrow, toonstream.polars.write_toon)"):
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.types as pt

__all__ = ["encode_arrow"]

#: Default rows formatted per vectorized step.
DEFAULT_BATCH_SIZE = 65_536
_DEFAULT_SPOOL_MEMORY = 8 * 1024 * 1024
OPTIONS = frozenset({"default", "max_depth", "spool_memory", "missing_as_null"})
_PARQUET_EXT = (".parquet", ".pq", ".parq")
_IPC_EXT = (".arrow", ".feather", ".ipc", ".arrows")
_CSV_EXT = (".csv",)
_RAW = b"toonstream.raw"  # (``_csv.RAW``: the module is imported only for CSV input)

# Python's datetime range, in microseconds since the epoch / days since the epoch.
_MIN_US = -62_135_596_800_000_000  # 0001-01-01T00:00:00
_MAX_US = 253_402_300_799_999_999  # 9999-12-31T23:59:59.999999
_DAY_US = 86_400_000_000
_MIN_DAY, _MAX_DAY = -719_162, 2_932_896
_US_1980 = 315_532_800_000_000  # named time zones: whole-minute offsets from here on
# ... and up to here: past 2037 Arrow applies a zone's last listed offset, where
# Python's zoneinfo goes on with its rule (daylight saving time).
_US_2037 = 2_114_380_800_000_000
_FIXED_TZ = re.compile(r"[+-][0-9]{2}:[0-9]{2}\Z")


# Arrow's temporal casts to ISO text as isoformat() writes it: "T", no
# all-zero fraction, "+HH:MM" offsets.
_NAIVE_TS = r"^(\S+) ([0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.000000|(\.[0-9]{6}))?$"
_ZONED_TS = r"^(\S+) ([0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.000000|(\.[0-9]{6}))?([+-][0-9]{2})([0-9]{2})$"
_TIME = r"^([0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.000000|(\.[0-9]{6}))?$"
_END = 1 << 62  # utf8_replace_slice at this position appends
# Kinds whose cell text depends on the value alone and never fails: a
# dictionary's values are formatted once.
_DICTIONARY_KINDS = frozenset({"string", "int", "float", "bool", "decimal", "null"})
# The §7.1 escapes: what quote() escapes, the part written as \u00xx (per
# value), and the named ones as replacements in order.
_ESCAPED_RE2 = char_class(ESCAPES, re2=True)
_CONTROL_RE2 = char_class(ESCAPES.keys() - NAMED_ESCAPES.keys(), re2=True)
_ESCAPES = tuple(NAMED_ESCAPES.items())


# ---------------------------------------------------------------------- sources


class _Source:
    """Batches of one schema; ``batches()`` can be called again when ``reiterable``."""

    def __init__(
        self,
        schema: Any,
        num_rows: int | None,
        batches: Callable[[list[str] | None], Iterator[Any]],
        *,
        reiterable: bool,
        table: Any = None,
        cleanup: Callable[[], None] | None = None,
        raw_text: bool = False,
    ) -> None:
        self.schema = schema
        self.raw_text = raw_text  # (_csv.CsvInput's batches: see _RowText)
        self.num_rows = num_rows
        self._batches = batches
        self.reiterable = reiterable
        self.table = table  # an in-memory Table (null counts are free)
        self._cleanup = cleanup
        self._used = False

    def batches(self, columns: list[str] | None = None) -> Iterator[Any]:
        if self._used and not self.reiterable:
            raise RuntimeError("one-shot source read twice")  # pragma: no cover - internal invariant
        self._used = True
        return self._batches(columns)

    def close(self) -> None:
        if self._cleanup is not None:
            self._cleanup()
            self._cleanup = None


def _sliced(batches: Iterable[Any], size: int) -> Iterator[Any]:
    for b in batches:
        n = b.num_rows
        if n <= size:
            yield b
        else:
            for start in range(0, n, size):
                yield b.slice(start, size)


def _project(batch: Any, columns: list[str] | None) -> Any:
    return batch if columns is None else batch.select(columns)


def _open(data: Any, batch_size: int, input_format: str | None = None) -> _Source:
    if input_format is not None and not isinstance(data, (str, os.PathLike)):
        raise TypeError("input_format applies to a path only")
    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    if isinstance(data, pa.Table):
        table = data
        return _Source(
            table.schema,
            table.num_rows,
            lambda cols: iter((table if cols is None else table.select(cols)).to_batches(max_chunksize=batch_size)),
            reiterable=True,
            table=table,
        )
    csv_input = sys.modules.get(f"{__package__}._csv")  # (a CsvInput means the module is loaded)
    if csv_input is not None and isinstance(data, csv_input.CsvInput):
        source = data
        return _Source(source.schema, None, lambda cols: _sliced((_project(b, cols) for b in source.batches()), batch_size),
                       reiterable=False, cleanup=source.close, raw_text=True)
    if isinstance(data, pa.RecordBatchReader):
        reader = data
        return _Source(reader.schema, None, lambda cols: _sliced(reader, batch_size), reiterable=False)
    if isinstance(data, (str, os.PathLike)):
        return _open_path(os.fspath(data), batch_size, input_format)
    dataset = _as_dataset(data, batch_size)
    if dataset is not None:
        return dataset
    lazy = _polars_lazy(data)
    if lazy is not None:
        # (no C stream: collected in streaming batches, as polars.LazyFrame.sink_* would)
        return _open_iterable((df.to_arrow() for df in lazy.collect_batches(chunk_size=batch_size)), batch_size)
    # The Arrow PyCapsule interface: any producer (a Polars DataFrame, DuckDB
    # and nanoarrow results, another library's table), without knowing its type.
    if hasattr(data, "__arrow_c_stream__"):
        return _open(pa.RecordBatchReader.from_stream(data), batch_size)
    if hasattr(data, "__arrow_c_array__"):  # a struct array: one batch
        return _open(pa.record_batch(data), batch_size)
    if isinstance(data, Iterable):
        return _open_iterable(data, batch_size)
    raise TypeError(
        "encode_arrow takes a pyarrow Table, RecordBatch, RecordBatchReader, iterable of RecordBatch, "
        "pyarrow.dataset.Dataset, Polars DataFrame or LazyFrame, an object with __arrow_c_stream__ or "
        f"__arrow_c_array__, or a Parquet/Arrow IPC/CSV path, not {type(data).__name__}"
    )


def _polars_lazy(data: Any) -> Any:
    """``data`` if it is a Polars LazyFrame (which has no C stream), else None."""
    pl = sys.modules.get("polars")  # a LazyFrame means the module is loaded
    return data if pl is not None and isinstance(data, pl.LazyFrame) else None


def _polars_not_arrow(data: Any) -> bool:
    """Whether ``data`` is a Polars frame with a column Arrow does not carry
    (see ``toonstream.polars.not_arrow``)."""
    pl = sys.modules.get("polars")
    if pl is None or not isinstance(data, (pl.DataFrame, pl.LazyFrame)):
        return False
    from .polars import not_arrow

    schema = data.collect_schema() if isinstance(data, pl.LazyFrame) else data.schema
    return any(map(not_arrow, schema.dtypes()))


def _as_dataset(data: Any, batch_size: int) -> _Source | None:
    ds = sys.modules.get("pyarrow.dataset")  # a Dataset object means the module is loaded
    if ds is None or not isinstance(data, ds.Dataset):
        return None
    dataset = data
    n: int | None = None
    fmt = getattr(dataset, "format", None)
    if isinstance(dataset, ds.InMemoryDataset) or isinstance(fmt, (ds.ParquetFileFormat, ds.IpcFileFormat)):
        n = dataset.count_rows()  # from metadata
    return _Source(
        dataset.schema,
        n,
        lambda cols: _sliced(
            dataset.to_batches(columns=cols, batch_size=batch_size, batch_readahead=1, fragment_readahead=1), batch_size
        ),
        reiterable=True,
    )


def _open_iterable(data: Iterable[Any], batch_size: int) -> _Source:
    it = iter(data)
    first = next(it, None)
    if first is None:
        return _Source(pa.schema([]), 0, lambda cols: iter(()), reiterable=True)
    if isinstance(first, pa.Table):
        first_batches: list[Any] = first.to_batches()
    elif isinstance(first, pa.RecordBatch):
        first_batches = [first]
    else:
        raise TypeError(f"expected an iterable of pyarrow RecordBatch, got an element of type {type(first).__name__}")
    schema = first.schema
    shape = [(f.name, f.type) for f in schema]

    def all_batches() -> Iterator[Any]:
        yield from first_batches
        for b in it:
            if isinstance(b, pa.Table):
                parts = b.to_batches()
            elif isinstance(b, pa.RecordBatch):
                parts = [b]
            else:
                raise TypeError(f"expected pyarrow RecordBatch, got {type(b).__name__}")
            if [(f.name, f.type) for f in b.schema] != shape:
                raise ValueError(f"record batches have different schemas: {b.schema} vs {schema}")
            yield from parts

    return _Source(schema, None, lambda cols: _sliced(all_batches(), batch_size), reiterable=False)


def _small_dictionaries(pf: Any) -> list[str]:
    """Top-level string columns whose Parquet chunks are dictionary-encoded with
    a small dictionary (read as Arrow dictionaries: each distinct value is then
    formatted once).  A large dictionary may mean the writer fell back to plain
    pages, which Arrow would have to hash back into a dictionary."""
    meta = pf.metadata
    if meta.num_row_groups == 0:
        return []
    names = []
    leaves = {pf.schema.column(i).path: i for i in range(len(pf.schema))}
    for field in pf.schema_arrow:
        leaf = leaves.get(field.name)
        if leaf is None or not (pt.is_string(field.type) or pt.is_large_string(field.type)):
            continue
        ok = True
        for i in range(meta.num_row_groups):
            c = meta.row_group(i).column(leaf)
            start = c.dictionary_page_offset
            if not c.has_dictionary_page or not start:
                ok = False
                break
            size = c.data_page_offset - start
            if not 0 < size <= 64 * 1024 or size * 2 > c.total_compressed_size:  # mostly distinct values
                ok = False
                break
        if ok:
            names.append(field.name)
    return names


#: what ``input_format`` names, and the words of a read error
INPUT_FORMATS = {"parquet": "Parquet", "arrow": "Arrow IPC", "csv": "CSV"}


@contextlib.contextmanager
def read_errors(what: str) -> Iterator[None]:
    """pyarrow's errors reading an input file as ``ToonEncodeError`` (its
    I/O errors with an errno, a missing file say, stay ``OSError``): a
    truncated Parquet file, a ragged CSV row."""
    try:
        yield
    except pa.ArrowException as e:
        if isinstance(e, OSError) and e.errno is not None:
            raise
        lines = str(e).strip().splitlines()
        reason = lines[0] if lines else type(e).__name__
        if not reason.isprintable():  # (pyarrow quotes the bad row as it is: never raw to a terminal)
            reason = repr(reason)[1:-1]
        if len(reason) > 400:
            reason = reason[:397] + "..."
        raise ToonEncodeError(f"cannot read {what} input: {reason}") from None


def _read_through(what: str, batches: Iterator[Any]) -> Iterator[Any]:
    with read_errors(what):
        yield from batches


def _open_path(path: str, batch_size: int, input_format: str | None = None) -> _Source:
    """A Parquet, Arrow IPC (file or stream) or CSV file, by ``input_format``
    when given, else by its first bytes and its name."""
    if input_format is not None and input_format not in INPUT_FORMATS:
        raise ValueError(f"input_format must be one of {', '.join(INPUT_FORMATS)}, not {input_format!r}")
    with open(path, "rb") as f:
        magic = f.read(8)
    lower = path.lower()
    kind = input_format
    if kind is None:
        if magic[:4] == b"PAR1" or (lower.endswith(_PARQUET_EXT) and not magic.startswith(b"ARROW1")):
            kind = "parquet"
        elif magic[:6] == b"ARROW1" or not lower.endswith(_CSV_EXT):
            kind = "arrow"
        else:
            kind = "csv"
    what = INPUT_FORMATS[kind]
    with read_errors(what):
        source = _open_kind(path, batch_size, kind, magic)
    batches = source._batches
    source._batches = lambda cols: _read_through(what, batches(cols))
    return source


def _open_kind(path: str, batch_size: int, kind: str, magic: bytes) -> _Source:
    if kind == "parquet":
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(path)  # schema and row count from the footer
        dictionary = _small_dictionaries(pf)

        def parquet_batches(cols: list[str] | None) -> Iterator[Any]:
            # One row group at a time: iter_batches over the whole file keeps
            # allocations from every row group read so far (memory grew with
            # the file); per row group it stays flat.
            f = pq.ParquetFile(path, read_dictionary=dictionary or None)
            try:
                for rg in range(f.num_row_groups):
                    yield from f.iter_batches(batch_size=batch_size, row_groups=[rg], columns=cols)
            finally:
                f.close()

        return _Source(pf.schema_arrow, pf.metadata.num_rows, parquet_batches, reiterable=True, cleanup=pf.close)
    if kind == "arrow" and magic[:6] == b"ARROW1":  # (an IPC file; else a stream)
        source = pa.memory_map(path)
        reader = pa.ipc.open_file(source)
        n = reader.count_rows() if hasattr(reader, "count_rows") else sum(
            reader.get_batch(i).num_rows for i in range(reader.num_record_batches)
        )  # batch metadata only

        def file_batches(cols: list[str] | None) -> Iterator[Any]:
            return _sliced((_project(reader.get_batch(i), cols) for i in range(reader.num_record_batches)), batch_size)

        return _Source(reader.schema, n, file_batches, reiterable=True, cleanup=source.close)
    if kind == "csv":
        from ._csv import CsvInput

        opened = [CsvInput(path)]  # (the schema: the first batch's types; its batches serve the first read)

        def csv_batches(cols: list[str] | None) -> Iterator[Any]:
            def typed() -> Iterator[Any]:
                src = opened.pop() if opened else CsvInput(path)
                try:
                    yield from (_project(b, cols) for b in src.batches())
                finally:
                    src.close()

            return _sliced(typed(), batch_size)

        def close() -> None:
            while opened:
                opened.pop().close()

        return _Source(opened[0].schema, None, csv_batches, reiterable=True, cleanup=close, raw_text=True)
    # an IPC stream (no magic number at the start)
    assert kind == "arrow"

    def stream_batches(cols: list[str] | None) -> Iterator[Any]:
        return _sliced((_project(b, cols) for b in pa.ipc.open_stream(pa.memory_map(path))), batch_size)

    return _Source(pa.ipc.open_stream(pa.memory_map(path)).schema, None, stream_batches, reiterable=True)


# ---------------------------------------------------------------------- shape


class _Leaf:
    __slots__ = ("path", "kind", "type")

    def __init__(self, path: tuple[str, ...], kind: str, type_: Any) -> None:
        self.path = path
        self.kind = kind
        self.type = type_


class _Shape:
    """The table's header fields and leaf columns (depth-first), from the schema."""

    def __init__(self, fields: Fields, leaves: list[_Leaf], structs: list[str]) -> None:
        self.fields = fields
        self.leaves = leaves
        self.structs = structs  # top-level struct column names (a null struct breaks the table)


def _leaf_kind(t: Any) -> str | None:
    if pt.is_dictionary(t):
        return _leaf_kind(t.value_type)
    if pt.is_null(t):
        return "null"
    if pt.is_boolean(t):
        return "bool"
    if pt.is_integer(t):
        return "int"
    if pt.is_floating(t):
        return "float"
    if pt.is_decimal(t):
        return "decimal"
    if pt.is_string(t) or pt.is_large_string(t) or pt.is_string_view(t):
        return "string"
    if pt.is_date(t):
        return "date"
    if pt.is_timestamp(t):
        return "timestamp"
    if pt.is_time(t):
        return "time"
    if pt.is_binary(t) or pt.is_large_binary(t) or pt.is_binary_view(t) or pt.is_fixed_size_binary(t) or pt.is_duration(t):
        return "opaque"  # to_pylist gives bytes / timedelta: not JSON, dumps needs ``default``
    return None  # lists, maps, unions, extension types...: the per-row path decides


def schema_shape(schema: Any, *, has_default: bool, max_depth: int, under_key: bool = False) -> _Shape | None:
    """The tabular shape ``dumps`` would find for any rows of this schema (None:
    never tabular, or not certainly; the per-row path is exact).  Null structs
    are data, checked separately.

    The decision is the shape plan's (``_reference/shape.py``), asked about
    one row that stands for every row of the schema: a dict per struct with
    its fields' names, ``None`` at each leaf.  Rows without null structs have
    exactly these keys at every level and a primitive at every leaf (each
    leaf kind's ``to_pylist`` values are primitives, or host values that
    normalize to primitives), so the plan decides the same for all of them
    as for this one.  What a row cannot show is left to the per-row path:
    leaf types without a kind (lists, maps, unions...), opaque leaves with a
    ``default`` (which may turn them into anything), and names repeated
    within one struct or the schema (a Python row holds each key once).
    ``under_key``: the rows are written as the array of a root key, one
    level down (the array at level 2), which ``max_depth`` below 2 refuses
    (the per-row path says so)."""
    if under_key and max_depth < 2:
        return None
    probe: dict[str, Any] = {}
    kinds: dict[tuple[str, ...], tuple[str, Any]] = {}
    # depth-first, in field order: an explicit stack of (fields left, their row, path)
    stack: list[tuple[Iterator[Any], dict[str, Any], tuple[str, ...]]] = [(iter(list(schema)), probe, ())]
    while stack:
        it, row, prefix = stack[-1]
        f = next(it, None)
        if f is None:
            stack.pop()
            continue
        if f.name in row:
            return None
        t = f.type
        path = prefix + (f.name,)
        if pt.is_struct(t):
            sub: dict[str, Any] = {}
            row[f.name] = sub
            stack.append((iter([t.field(i) for i in range(t.num_fields)]), sub, path))
            continue
        kind = _leaf_kind(t)
        if kind is None or (kind == "opaque" and has_default):
            return None
        row[f.name] = None
        kinds[path] = (kind, t)
    fields = ShapePlan(lambda v: v, max_depth).uniform_fields([probe], 2 if under_key else 1)
    if fields is None:
        return None
    leaves = [_Leaf(p, *kinds[p]) for p in leaf_paths(fields)]
    structs = [f.name for f in schema if pt.is_struct(f.type)]
    return _Shape(fields, leaves, structs)


def _struct_has_nulls(arr: Any) -> bool:
    if arr.null_count:
        return True
    return any(_struct_has_nulls(child) for child in arr.flatten() if pt.is_struct(child.type))


def _any_null_struct(source: _Source, shape: _Shape) -> bool:
    """Whether some row holds a null struct (which makes the array non-tabular)."""
    if source.table is not None:
        return any(_struct_has_nulls(chunk) for name in shape.structs for chunk in source.table.column(name).chunks)
    for batch in source.batches(shape.structs):
        if any(_struct_has_nulls(col) for col in batch.columns):
            return True
    return False


# ---------------------------------------------------------------------- cells


class _Formatter:
    """Cell texts of one batch's leaf columns, as large_string arrays without nulls."""

    def __init__(self, delimiter: str, default: Any) -> None:
        self.d = delimiter
        self.prim = primitive_formatter(delimiter, lambda v: normalize(v, default))
        self.L = pa.large_string()
        self.needs_quote = needs_quote_re2(delimiter)
        self.s_null = pa.scalar("null", self.L)
        self.s_true = pa.scalar("true", self.L)
        self.s_false = pa.scalar("false", self.L)
        self.s_zero = pa.scalar("0", self.L)
        self.s_quote = pa.scalar('"', self.L)
        self.s_empty = pa.scalar("", self.L)
        # leaf -> (buffers of the last dictionary seen, its formatted values)
        self._dictionaries: dict[int, tuple[Any, Any]] = {}

    def _dictionary(self, arr: Any, leaf: _Leaf) -> Any:
        """A dictionary column: its values formatted once (and reused while
        batches share the dictionary, as Parquet row groups do), then taken."""
        d = arr.dictionary
        ident = (d.offset, len(d), *(b.address if b is not None else 0 for b in d.buffers()))
        cached = self._dictionaries.get(id(leaf))
        if cached is not None and cached[0][0] == ident:
            texts = cached[1]
        else:
            texts = self.column(d, leaf, 0)  # these kinds never fail per value
            self._dictionaries[id(leaf)] = ((ident, d), texts)  # d kept alive: its addresses stay unique
        return self._no_nulls(pc.take(texts, arr.indices))

    def column(self, arr: Any, leaf: _Leaf, offset: int) -> Any:
        kind = leaf.kind
        if kind == "string":
            arr = _check_utf8(arr, leaf, offset)
        if pa.types.is_dictionary(arr.type):
            if kind in _DICTIONARY_KINDS:
                return self._dictionary(arr, leaf)
            arr = arr.dictionary_decode()  # temporal values: only the used ones may be converted
        try:
            if kind == "string":
                return self._strings(arr if arr.type == self.L else pc.cast(arr, self.L))
            if kind == "raw":
                s = arr  # (text already in TOON form)
            elif kind in ("timestamp", "time"):
                s = self._temporal(arr, leaf, offset, kind)
            elif kind == "int":
                s = pc.cast(arr, self.L)
            elif kind == "float":
                s = self._floats(arr, leaf, offset)
            elif kind == "bool":
                s = pc.if_else(arr, self.s_true, self.s_false)
            elif kind == "null":
                return pa.repeat(self.s_null, len(arr))
            elif kind == "decimal":
                s = self._decimals(arr, leaf, offset)
            elif kind == "date":
                s = self._dates(arr)
            else:
                s = None
        except pa.ArrowInvalid:
            s = None  # a value outside what a lossless cast covers: per value
        if s is None:
            return self.per_value(arr, leaf, offset)
        return self._no_nulls(s)

    def _no_nulls(self, s: Any) -> Any:
        return pc.fill_null(s, self.s_null) if s.null_count else s

    def _iso(self, s: Any, pattern: str, replacement: str) -> Any:
        """Arrow's temporal text rewritten (and quoted: it holds ":") by one
        regex replacement; None if some cell did not have the expected form."""
        r = pc.replace_substring_regex(s, pattern, replacement)
        if not pc.all(pc.starts_with(r, '"')).as_py():
            return None  # pragma: no cover - Arrow's format changed: per value
        return r

    def per_value(self, arr: Any, leaf: _Leaf, offset: int, mask: Any = None) -> Any:
        """Cells formatted one Python value at a time (as ``dumps`` does):
        the whole column, or the cells where ``mask`` is true."""
        if mask is None:
            values = python_values(arr, lambda i: (offset + i,) + leaf.path)
            rows: Iterable[int] = range(len(values))
        else:
            idx = pc.indices_nonzero(mask)
            picked: list[int] = idx.to_pylist()
            values = python_values(pc.take(arr, idx), lambda i: (offset + picked[i],) + leaf.path)
            rows = picked
        prim = self.prim
        texts = []
        for i, v in zip(rows, values):
            try:
                texts.append(prim(v))
            except ToonEncodeError as e:
                e.path = (offset + i,) + leaf.path + e.path
                raise
        return pa.array(texts, self.L)

    def _patch(self, s: Any, mask: Any, arr: Any, leaf: _Leaf, offset: int) -> Any:
        """``s`` with the cells where ``mask`` holds formatted per value from ``arr``."""
        return pc.replace_with_mask(s, mask, self.per_value(arr, leaf, offset, mask))

    def _strings(self, s: Any) -> Any:
        m = pc.match_substring_regex(s, self.needs_quote)
        if not pc.any(m).as_py():
            return self._no_nulls(s)
        m = pc.fill_null(m, False)
        sub = pc.filter(s, m)  # the cells to quote (few, usually)
        if pc.any(pc.match_substring_regex(sub, _ESCAPED_RE2)).as_py():  # some need escapes
            if pc.any(pc.match_substring_regex(sub, _CONTROL_RE2)).as_py():  # \u00xx: per value
                quoted = pa.array([quote_checked(v) for v in sub.to_pylist()], self.L)
                return self._no_nulls(pc.replace_with_mask(s, m, quoted))
            for a, b in _ESCAPES:
                sub = pc.replace_substring(sub, a, b)
        sub = pc.utf8_replace_slice(pc.utf8_replace_slice(sub, 0, 0, '"'), _END, _END, '"')
        return self._no_nulls(pc.replace_with_mask(s, m, sub))

    def _floats(self, arr: Any, leaf: _Leaf, offset: int) -> Any:
        x = arr if arr.type == pa.float64() else pc.cast(arr, pa.float64())
        s = pc.cast(x, self.L)  # shortest round-trip digits; canonical except below
        finite = pc.is_finite(x)
        if not pc.all(finite).as_py():  # NaN, inf -> null (§3)
            s = pc.if_else(finite, s, self.s_null)
        zero = pc.equal(x, 0.0)
        if pc.any(zero).as_py():  # -0 -> 0
            s = pc.if_else(zero, self.s_zero, s)
        has_e = pc.match_substring(s, "e")
        if pc.any(has_e).as_py():
            # Exponent form is canonical only outside [1e-6, 1e21); inside, the
            # canonical text is plain decimal.
            ax = pc.abs(x)
            mid = pc.fill_null(pc.and_(has_e, pc.and_(pc.greater_equal(ax, 1e-6), pc.less(ax, 1e21))), False)
            if pc.any(mid).as_py():
                whole = pc.and_(mid, pc.and_(pc.equal(pc.trunc(x), x), pc.less(ax, 2.0**63)))
                if pc.any(whole).as_py():  # integer-valued: exact int64 digits
                    ints = pc.cast(pc.cast(pc.filter(x, whole), pa.int64()), self.L)
                    s = pc.replace_with_mask(s, whole, ints)
                    mid = pc.and_(mid, pc.invert(whole))
                if pc.any(mid).as_py():
                    s = self._patch(s, mid, x, leaf, offset)
        return s

    def _decimals(self, arr: Any, leaf: _Leaf, offset: int) -> Any:
        t = arr.type
        if not 0 <= t.scale <= 38:
            # (pyarrow's cast writes a placeholder, not digits, past 38: per value,
            # as to_pylist gives them; a negative scale too)
            return None
        s = pc.cast(arr, self.L)  # exact: "-12.3400"
        if t.scale > 0:
            s = pc.replace_substring_regex(s, r"\.?0+$", "")  # "1.50" -> "1.5", "2.00" -> "2", "0.00" -> "0"
        flags = []
        if t.scale > 6:
            # 0 < |d| < 1e-6 (Arrow writes those, and zeros, as "5.0E-7", "0E-8"): exponent form
            flags += [r"E", r"^-?0\.0{6}"]
        # |d| >= 1e21: exponent form (whatever the precision says: an array
        # built from buffers can hold more digits than its type declares)
        flags.append(r"^-?[0-9]{22}")
        if flags:
            m = pc.fill_null(pc.match_substring_regex(s, "|".join(flags)), False)
            if pc.any(m).as_py():
                s = self._patch(s, m, arr, leaf, offset)
        return s

    def _dates(self, arr: Any) -> Any:
        d32 = arr if arr.type == pa.date32() else pc.cast(arr, pa.date32())  # safe: whole days only
        lo, hi = _min_max(pc.cast(d32, pa.int32()))
        if lo is not None and (lo < _MIN_DAY or hi > _MAX_DAY):
            return None
        return pc.cast(d32, self.L)  # "2024-01-02" (never quoted)

    def _temporal(self, arr: Any, leaf: _Leaf, offset: int, kind: str) -> Any:
        """A timestamp or time column.  Nanoseconds: the microseconds' text
        (the column floored to them), then, in the cells with more, the three
        digits after them (:func:`_with_nanos`)."""
        fmt = self._timestamps if kind == "timestamp" else self._times
        if arr.type.unit != "ns":
            return fmt(arr)
        micro, rem = _nano_parts(arr)
        s = fmt(micro)
        s = self.per_value(micro, leaf, offset) if s is None else self._no_nulls(s)
        more = pc.fill_null(pc.not_equal(rem, 0), False)
        if not pc.any(more).as_py():
            return s
        idx = pc.indices_nonzero(more)
        picked: list[int] = idx.to_pylist()
        values = python_values(pc.take(micro, idx), lambda i: (offset + picked[i],) + leaf.path)
        texts = [self.prim(_with_nanos(v, r)) for v, r in zip(values, pc.take(rem, idx).to_pylist())]
        return pc.replace_with_mask(s, more, pa.array(texts, self.L))

    def _timestamps(self, arr: Any) -> Any:
        tz = arr.type.tz
        us = arr if arr.type.unit == "us" else pc.cast(arr, pa.timestamp("us", tz))  # safe: ns must be whole us
        lo, hi = _min_max(pc.cast(us, pa.int64()))
        margin = 0 if tz is None else 2 * _DAY_US  # local time must stay in range too
        if lo is not None and (lo < _MIN_US + margin or hi > _MAX_US - margin):
            return None
        if tz is not None and tz not in ("UTC", "Etc/UTC") and not _FIXED_TZ.match(tz) and lo is not None and (lo < _US_1980 or hi >= _US_2037):
            return None  # early local mean times have offsets in seconds; see _US_2037
        s = pc.cast(us, self.L)  # "2024-01-02 03:04:05.000006" + "Z" / "-0500" when zoned
        if tz is None:
            return self._iso(s, _NAIVE_TS, r'"\1T\2\3"')
        if pc.any(pc.ends_with(s, "Z")).as_py():
            s = pc.replace_substring_regex(s, "Z$", "+0000")
        return self._iso(s, _ZONED_TS, r'"\1T\2\3\4:\5"')

    def _times(self, arr: Any) -> Any:
        us = arr if arr.type == pa.time64("us") else pc.cast(arr, pa.time64("us"))
        lo, hi = _min_max(pc.cast(us, pa.int64()))
        if lo is not None and (lo < 0 or hi >= _DAY_US):
            return None
        return self._iso(pc.cast(us, self.L), _TIME, r'"\1\2"')


def _is_nanos(t: Any) -> bool:
    return bool((pt.is_timestamp(t) or pt.is_time64(t)) and t.unit == "ns")


def _nano_parts(arr: Any) -> tuple[Any, Any]:
    """A nanosecond timestamp or time column as the microseconds (floored,
    in the type of that unit) and the nanoseconds after them (0-999)."""
    ns = pc.cast(arr, pa.int64())
    us = pc.divide(ns, 1000)  # (toward zero: a time before 1970 is floored below)
    rem = pc.subtract(ns, pc.multiply(us, 1000))
    below = pc.fill_null(pc.less(rem, 0), False)
    if pc.any(below).as_py():
        us, rem = pc.if_else(below, pc.subtract(us, 1), us), pc.if_else(below, pc.add(rem, 1000), rem)
    unit = pa.timestamp("us", arr.type.tz) if pt.is_timestamp(arr.type) else pa.time64("us")
    return pc.cast(us, unit), rem


def _with_nanos(v: Any, nanos: int) -> str:
    """``v`` (a datetime or time) and ``nanos`` more as pandas'
    ``Timestamp.isoformat()`` writes them: nine digits of fraction when there
    are nanoseconds, else ``isoformat()`` (``to_pylist`` needs pandas for such a
    timestamp, and cuts a time's to microseconds)."""
    if not nanos:
        return v.isoformat()  # type: ignore[no-any-return]
    t = v.isoformat(timespec="microseconds")
    cut = t.index(".") + 7
    return f"{t[:cut]}{nanos:03d}{t[cut:]}"


def _nanos_as_text(batch: Any, offset: int) -> Any:
    """``batch`` with its nanosecond timestamp and time columns (struct fields
    too) as their text (:func:`_with_nanos`), for the per-row path's
    ``to_pylist``; lists, maps and unions holding them are left to it."""
    def texts(arr: Any, path: tuple[str, ...]) -> Any:
        t = arr.type
        if _is_nanos(t):
            micro, rem = _nano_parts(arr)
            values = python_values(micro, lambda i: (offset + i, *path))
            return pa.array([None if v is None else _with_nanos(v, r) for v, r in zip(values, rem.to_pylist())], pa.string())
        if pt.is_struct(t) and any(_holds_nanos(t.field(i).type) for i in range(t.num_fields)):
            children = [texts(c, (*path, t.field(i).name)) for i, c in enumerate(arr.flatten())]
            fields = [pa.field(t.field(i).name, c.type) for i, c in enumerate(children)]
            return pa.StructArray.from_arrays(children, fields=fields, mask=arr.is_null() if arr.null_count else None)
        return arr

    if not any(_holds_nanos(f.type) for f in batch.schema):
        return batch
    columns = [texts(c, (f.name,)) for c, f in zip(batch.columns, batch.schema)]
    return pa.RecordBatch.from_arrays(columns, names=batch.schema.names)


def _holds_nanos(t: Any) -> bool:
    """A nanosecond timestamp or time, or a struct holding one (not a list's)."""
    return _is_nanos(t) or (pt.is_struct(t) and any(_holds_nanos(t.field(i).type) for i in range(t.num_fields)))


def _min_max(arr: Any) -> tuple[Any, Any]:
    mm = pc.min_max(arr)
    return mm["min"].as_py(), mm["max"].as_py()


def _leaf_arrays(batch: Any, shape: _Shape) -> list[Any]:
    """The leaf columns of a batch, depth-first (struct fields flattened)."""
    out: list[Any] = []
    stack: list[Iterator[Any]] = [iter(batch.columns)]
    while stack:
        arr = next(stack[-1], None)
        if arr is None:
            stack.pop()
            continue
        if pt.is_struct(arr.type):
            stack.append(iter(arr.flatten()))
        else:
            out.append(arr)
    assert len(out) == len(shape.leaves)
    return out


class _RowText:
    """A batch to the bytes of its row lines, each preceded by LF and the indent."""

    def __init__(self, shape: _Shape, fmt: _Formatter, indent: str, *, raw_text: bool = False) -> None:
        self.shape = shape
        self.fmt = fmt
        self.raw_text = raw_text  # (CSV input: columns of TOON text named by the batch's metadata)
        self.lead = "\n" + indent
        self.sep = pa.scalar(fmt.d, fmt.L)
        # The engine's row writer, for a flat table (a batch it declines is formatted here).
        self.native = None if shape.structs else _engine.current().arrow_rows

    def __call__(self, batch: Any, offset: int) -> Any:
        if batch.num_rows == 0:
            return b""
        metadata = batch.schema.metadata if self.raw_text else None
        raw = metadata.get(_RAW) if metadata else None  # (CSV input's numbers no Arrow type holds)
        if self.native is not None and raw is None:
            text = self.native(batch, delimiter=self.fmt.d, indent_size=len(self.lead) - 1)
            if text is not NotImplemented:
                return text
        leaves = self.shape.leaves
        if not self.shape.structs and any(c.type != leaf.type for c, leaf in zip(batch.columns, leaves)):
            # a batch of other column types than the schema's (CSV input's
            # numbers: int64 in one batch, decimal256 in another)
            leaves = [_Leaf(leaf.path, _leaf_kind(c.type) or "opaque", c.type) for c, leaf in zip(batch.columns, leaves)]
        if raw is not None:
            leaves = list(leaves)
            for i in map(int, raw.split(b",")):
                leaves[i] = _Leaf(leaves[i].path, "raw", batch.column(i).type)
        cols = [self.fmt.column(arr, leaf, offset) for arr, leaf in zip(_leaf_arrays(batch, self.shape), leaves)]
        cols[0] = pc.utf8_replace_slice(cols[0], 0, 0, self.lead)
        rows = pc.binary_join_element_wise(*cols, self.sep) if len(cols) > 1 else cols[0]
        return _data_bytes(rows)


def _data_bytes(arr: Any) -> Any:
    """The concatenated values of a large_string array without nulls, as a Buffer."""
    offsets, data = arr.buffers()[1], arr.buffers()[2]
    start = struct.unpack_from("<q", offsets, 8 * arr.offset)[0]
    end = struct.unpack_from("<q", offsets, 8 * (arr.offset + len(arr)))[0]
    return data.slice(start, end - start)


# ---------------------------------------------------------------------- output


class _Out:
    """Text or bytes to a text or binary file (like ``LineSink``)."""

    def __init__(self, fp: IO[str] | IO[bytes]) -> None:
        self.fp: Any = fp
        self.binary = isinstance(fp, (io.RawIOBase, io.BufferedIOBase)) or "b" in getattr(fp, "mode", "")
        self._decoder = codecs.getincrementaldecoder("utf-8")()

    def text(self, s: str) -> None:
        if s:
            self.fp.write(s.encode("utf-8") if self.binary else s)

    def data(self, buf: Any) -> None:
        if not len(buf):
            return
        if self.binary:
            self.fp.write(buf)
        else:
            self.fp.write(self._decoder.decode(memoryview(buf)))


# ---------------------------------------------------------------------- driver


def encode_arrow(
    data: Any,
    out: IO[str] | IO[bytes],
    *,
    key: str | None = None,
    delimiter: str = ",",
    indent_size: int = 2,
    batch_size: int = DEFAULT_BATCH_SIZE,
    input_format: str | None = None,
    **options: Any,
) -> None:
    """Write Arrow data as TOON: the same text as ``dumps(table.to_pylist())``
    (with ``key``: ``dumps({key: table.to_pylist()})``), formatted with
    pyarrow.compute a batch at a time.

    ``data``: a pyarrow Table, RecordBatch, RecordBatchReader, iterable of
    RecordBatch, ``pyarrow.dataset.Dataset``, a Polars DataFrame or
    LazyFrame (collected in streaming batches), any object with
    ``__arrow_c_stream__`` or ``__arrow_c_array__`` (the Arrow PyCapsule
    interface: DuckDB results, nanoarrow, ...), or a path to a Parquet,
    Arrow IPC (file or stream) or CSV file, read as ``input_format``
    (``"parquet"``, ``"arrow"`` or ``"csv"``) when given, else by its first
    bytes and its name.  ``out``: a text or binary file.  The row count comes from
    metadata when the source has it (Table, Parquet, IPC file, Parquet/IPC
    dataset); otherwise the row text is spooled to a temporary file first.
    Memory is bounded by ``batch_size`` rows.  ``options``: ``default``,
    ``max_depth``, ``spool_memory``, ``missing_as_null`` as in
    ``streaming.encode_records`` (they matter only on the per-row path).

    Errors are ``dumps``' (``ToonEncodeError`` with ``.path`` = (row, field...),
    e.g. a binary cell without ``default``); a file that cannot be read as its
    format (a truncated Parquet file, a ragged CSV row) is a ``ToonEncodeError``
    too, and its I/O errors are ``OSError``.  Nothing
    is written before the first batch is formatted, and a spooled or per-row
    conversion writes only at the end; but with a known row count the rows go
    out batch by batch, so a failure in a later batch leaves partial output:
    write to a temporary file and rename it on success (the CLI's ``-o`` does).

    >>> import io, pyarrow as pa
    >>> out = io.StringIO()
    >>> encode_arrow(pa.table({"id": [1, 2], "name": ["Ada", "Bob, Jr."]}), out, key="users")
    >>> print(out.getvalue())
    users[2]{id,name}:
      1,Ada
      2,"Bob, Jr."
    """
    unknown = set(options) - OPTIONS
    if unknown:
        raise TypeError(f"encode_arrow() got unexpected keyword arguments: {', '.join(sorted(unknown))}")
    d = check_delimiter(delimiter)
    check_indent_size(indent_size)
    if batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    default = options.get("default")
    max_depth = check_max_depth(options.get("max_depth", DEFAULT_MAX_DEPTH))
    check_spool_memory(options.get("spool_memory", _DEFAULT_SPOOL_MEMORY))
    if _polars_not_arrow(data):  # (its rows as Python values: write_toon's way)
        from .polars import write_toon

        write_toon(data, out, key=key, delimiter=delimiter, indent_size=indent_size, batch_size=batch_size, **options)
        return
    head = "" if key is None else key_text(key)
    source = _open(data, batch_size, input_format)
    try:
        _unique_names(source.schema)
        shape = schema_shape(source.schema, has_default=default is not None, max_depth=max_depth, under_key=key is not None)
        if shape is not None and shape.structs:
            if not source.reiterable and source.table is None:
                source.close()
                source = _spool_batches(source, batch_size)
            if _any_null_struct(source, shape):
                shape = None
        if shape is None:
            _per_row(source, out, key, d, indent_size, options)
            return
        rows = _RowText(shape, _Formatter(d, default), " " * indent_size, raw_text=source.raw_text)
        sink = _Out(out)
        try:
            if source.num_rows is None:
                _write_spooled(source, sink, head, shape, rows, d, options.get("spool_memory", _DEFAULT_SPOOL_MEMORY))
            else:
                _write_direct(source, sink, head, shape, rows, d)
        except ToonEncodeError as e:
            if key is not None and e.path and type(e.path[0]) is int:  # (a cell's path, as dumps({key: rows}) names it)
                e.path = (key, *e.path)
            raise
    finally:
        source.close()


def _unique_names(schema: Any) -> None:
    """A schema (or a struct's fields) naming a column twice is refused: a
    TOON object holds each key once, and the rows' dicts (``to_pylist``) would
    keep the last column only, dropping the other's data without a word."""
    todo: list[tuple[tuple[str, ...], list[Any]]] = [((), list(schema))]
    while todo:
        path, fields = todo.pop()
        seen: set[str] = set()
        for f in fields:
            if f.name in seen:
                raise ToonEncodeError(
                    f"column {f.name!r} appears twice: a TOON object holds each key once (rename one of them)",
                    path=path,
                )
            seen.add(f.name)
            if pt.is_struct(f.type):
                todo.append((path + (f.name,), [f.type.field(i) for i in range(f.type.num_fields)]))


def _empty(head: str, d: str, shape: _Shape) -> str:
    """No rows: the table's header with ``[0]`` and its fields, so that the
    columns are kept (``read_toon`` reads them back as an empty frame of
    these columns, as from the Spark and Dask writers' empty parts), where
    ``dumps([])`` writes ``[]``; an empty array when there are no fields."""
    if shape.fields:
        return header(head, 0, d, shape.fields)
    return "[]" if not head else f"{head}: []"


def _write_direct(source: _Source, sink: _Out, head: str, shape: _Shape, rows: _RowText, d: str) -> None:
    n = source.num_rows
    assert n is not None
    if n == 0:
        sink.text(_empty(head, d, shape))
        return
    done = 0
    started = False
    for batch in source.batches():
        text = rows(batch, done)  # the first batch is formatted before anything is written
        if not started:  # (once: leading batches may be empty)
            sink.text(header(head, n, d, shape.fields))
            started = True
        done += batch.num_rows
        if done > n:
            break
        sink.data(text)
    if done != n:
        raise ToonEncodeError(f"the source declared {n} rows but held {done}")


def _write_spooled(source: _Source, sink: _Out, head: str, shape: _Shape, rows: _RowText, d: str, memory: int) -> None:
    with tempfile.SpooledTemporaryFile(max_size=memory) as spool:
        done = 0
        for batch in source.batches():
            spool.write(rows(batch, done))
            done += batch.num_rows
        if done == 0:
            sink.text(_empty(head, d, shape))
            return
        sink.text(header(head, done, d, shape.fields))
        spool.seek(0)
        while chunk := spool.read(1 << 20):
            sink.data(chunk)


def _spool_batches(source: _Source, batch_size: int) -> _Source:
    """A one-shot source copied to a temporary IPC file (re-readable, row count known)."""
    tmp = tempfile.TemporaryFile()  # noqa: SIM115 - closed by the returned source
    try:
        n = 0
        with pa.ipc.new_file(tmp, source.schema) as writer:
            for batch in source.batches():
                writer.write_batch(batch)
                n += batch.num_rows
        tmp.seek(0)
        reader = pa.ipc.open_file(tmp)
    except BaseException:
        tmp.close()
        raise

    def batches(cols: list[str] | None) -> Iterator[Any]:
        return _sliced((_project(reader.get_batch(i), cols) for i in range(reader.num_record_batches)), batch_size)

    return _Source(source.schema, n, batches, reiterable=True, cleanup=tmp.close)


def _check_utf8(arr: Any, leaf: _Leaf, offset: int) -> Any:
    """``arr``, a string leaf, once checked for bytes that are not UTF-8 (an
    unchecked ``.view(pa.string())``, a foreign IPC file): refused at the
    first cell holding some, since Arrow's string kernels fail on some and
    pass others through to the output.  A dictionary whose bad values no
    cell uses is decoded (the values in use only).  One validation pass
    (about 8 ms per million short strings)."""
    try:
        arr.validate(full=True)
        return arr
    except pa.ArrowInvalid as e:
        python_values(arr, lambda i: (offset + i, *leaf.path))  # raises at the first bad cell
        if pa.types.is_dictionary(arr.type):
            return arr.dictionary_decode()
        raise ToonEncodeError(f"invalid string column ({e})", path=(offset, *leaf.path)) from None


def python_values(data: Any, path: Callable[[int], tuple[str | int, ...]]) -> list[Any]:
    """``data.to_pylist()`` (an Array or a RecordBatch), or the
    ``ToonEncodeError`` of its first value that has no Python form (a date or
    time outside ``datetime``'s years 1-9999: pyarrow raises OverflowError; a
    decimal of a scale below -38: decimal.InvalidOperation; a string whose
    bytes are not UTF-8: UnicodeDecodeError), at ``path(index)``.

    >>> import pyarrow as pa
    >>> python_values(pa.array([2932897], pa.date32()), lambda i: (i, "d"))
    Traceback (most recent call last):
    ...
    toonstream._errors.ToonEncodeError: date32[day] value out of Python's range (date value out of range) (at [0].d)
    """
    try:
        return data.to_pylist()  # type: ignore[no-any-return]
    except (ArithmeticError, UnicodeDecodeError) as e:  # (OverflowError, decimal.InvalidOperation)
        for i in range(len(data)):
            try:
                data.slice(i, 1).to_pylist()
            except (ArithmeticError, UnicodeDecodeError):
                if isinstance(e, UnicodeDecodeError):
                    message = f"a string holds bytes that are not UTF-8 ({e.reason})"
                    raise ToonEncodeError(message, path=path(i) + _bad_utf8_below(data, i)) from None
                what = data.type if hasattr(data, "type") else "a"
                raise ToonEncodeError(f"{what} value out of Python's range ({e})", path=path(i)) from None
        raise
    except pa.ArrowInvalid as e:
        # (a time zone Python's zoneinfo does not know: pyarrow's message blames a
        # missing zoneinfo module, which is there)
        types = [data.type] if hasattr(data, "type") else list(data.schema.types)
        zone = next((z for z in map(_time_zone, types) if z is not None and not _known_zone(z)), None)
        if zone is None:
            raise
        raise ToonEncodeError(f"unknown time zone {zone!r} (Python's zoneinfo has no such zone)", path=path(0)) from None
    except ValueError as e:
        # (pyarrow's: a timestamp with nanoseconds inside a list, map or union, without
        # pandas; a table's own timestamp columns are formatted without it, see _temporal)
        if "anosecond" not in str(e):
            raise
        for i in range(len(data)):
            try:
                data.slice(i, 1).to_pylist()
            except ValueError:
                raise ToonEncodeError(
                    "a timestamp with nanoseconds inside a list, map or union column has no Python value "
                    "without pandas (install pandas, or cast the column to microseconds)", path=path(i),
                ) from None
        raise


def _time_zone(t: Any) -> str | None:
    """The time zone of a timestamp type, or of the first one inside a nested type."""
    todo = [t]
    while todo:
        t = todo.pop()
        if pa.types.is_timestamp(t) and t.tz is not None:
            return str(t.tz)
        todo.extend(t.field(i).type for i in range(t.num_fields))
    return None


def _known_zone(name: str) -> bool:
    import zoneinfo

    if name in ("UTC", "Z") or _FIXED_TZ.match(name):
        return True
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


def _bad_utf8_below(data: Any, i: int) -> tuple[str | int, ...]:
    """The keys and indexes from row (or element) ``i`` of ``data`` down to
    its first string, in ``dumps``' order, whose bytes are not UTF-8 (error
    path only: one scalar at a time).  A map stops the path: its Python form
    is a list of pairs."""
    todo: list[tuple[tuple[str | int, ...], Any]]
    if isinstance(data, pa.RecordBatch):
        todo = [((name,), col[i]) for name, col in zip(data.schema.names, data.columns)]
    else:
        todo = [((), data[i])]
    todo.reverse()
    while todo:
        path, scalar = todo.pop()
        if not scalar.is_valid:
            continue
        if isinstance(scalar, pa.StructScalar):
            todo += reversed([((*path, name), scalar[j]) for j, name in enumerate(scalar.keys())])
        elif isinstance(scalar, (pa.ListScalar, pa.LargeListScalar, pa.FixedSizeListScalar)) and not isinstance(
            scalar, pa.MapScalar
        ):
            values = scalar.values
            todo += reversed([((*path, j), values[j]) for j in range(len(values))])
        else:
            try:
                scalar.as_py()
            except UnicodeDecodeError:
                return path
    return ()


def _per_row(source: _Source, out: IO[str] | IO[bytes], key: str | None, d: str, indent_size: int, options: dict[str, Any]) -> None:
    """Exact fallback: Python rows (``to_pylist``) through the streaming encoder."""
    from .streaming import encode_records

    def records() -> Iterator[Any]:
        done = 0
        for batch in source.batches():
            yield from python_values(_nanos_as_text(batch, done), lambda i: (done + i,))
            done += batch.num_rows

    encode_records(records(), out, key=key, delimiter=d, indent_size=indent_size, **options)

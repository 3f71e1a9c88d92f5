"""TOON tables as Arrow data: ``iter_batches``, ``read_table``, ``encode_arrow``.

Reading shares its engine with :mod:`toonstream.polars` (runs of plain rows are
split and typed column-wise; every other line goes through the exact decoder),
so both give the same columns and types: see the README's type table.  Strings
come as ``large_string``.  ``source`` is a path, bytes or a file object.

>>> import toonstream.arrow as ta
>>> t = ta.read_table(b"[2]{id,tags}:\\n  1,x\\n  2,y\\n")
>>> t.schema.types, t.to_pylist()
([DataType(int64), DataType(large_string)], [{'id': 1, 'tags': 'x'}, {'id': 2, 'tags': 'y'}])
"""

from __future__ import annotations

import inspect
from itertools import chain
from typing import Any, Iterator, Mapping, Sequence

from ._optional import requires

with requires("toonstream.arrow"):
    import pyarrow as pa

from ._arrow_encode import encode_arrow

__all__ = ["iter_batches", "read_table", "encode_arrow"]

# Reading splits and types the rows with Polars (see ``_frames.py``): it needs
# polars as well as pyarrow, encode_arrow pyarrow only.
_READING = "reading TOON into Arrow (toonstream.arrow.iter_batches/read_table)"


def polars_schema(schema: pa.Schema | Mapping[str, Any] | Sequence[Any] | None) -> Any:
    """Arrow types -> Polars dtypes (the engine types columns in Polars); a
    sequence of types (overrides in column order) gives a list."""
    if schema is None:
        return None
    with requires(_READING):
        import polars as pl

    def dtype(t: Any) -> Any:
        if isinstance(t, pa.DataType) and pa.types.is_decimal(t):
            # (decimal256 made a Polars panic: the column is typed as Polars' Decimal,
            # then cast to the type given, see record_batches)
            if t.precision > 38 or t.scale < 0:
                raise TypeError(f"{t}: the readers take decimals of at most 38 digits and a scale of at least 0")
            return pl.Decimal(t.precision, t.scale)
        if isinstance(t, pa.DataType):
            return pl.from_arrow(pa.array([], type=t)).dtype  # type: ignore[union-attr]
        return t

    # Field by field: polars.from_arrow on a whole table would rename an
    # empty column name to "column_0".
    if isinstance(schema, pa.Schema):
        return {f.name: dtype(f.type) for f in schema}
    if isinstance(schema, Mapping):
        return {name: dtype(t) for name, t in schema.items()}
    if isinstance(schema, str):
        return schema  # (refused by the reader, as a Polars dtype given as text is)
    # dtypes in column order (overrides), or (name, type) pairs (a schema as a list)
    return [(t[0], dtype(t[1])) if isinstance(t, tuple) and len(t) == 2 else dtype(t) for t in schema]


def iter_batches(
    source: Any,
    *,
    path: str | None = None,
    batch_size: int = 65_536,
    schema: pa.Schema | Mapping[str, Any] | None = None,
    schema_overrides: Mapping[str, Any] | Sequence[Any] | None = None,
    infer_schema_length: int | None = 100,
    try_parse_dates: bool = False,
    columns: Sequence[str] | None = None,
    n_rows: int | None = None,
    key_field: str = "key",
    **options: Any,
) -> pa.RecordBatchReader:
    """A ``pyarrow.RecordBatchReader`` over the tabular array at ``path`` (an
    ijson-style prefix; None: the root array of records, else the root
    object's first member that is one) or a keyed table (its entry key as
    column ``key_field``): RecordBatches of at most ``batch_size`` rows, one
    schema.  Nested field groups are struct columns; an array of records
    that is not tabular gives struct and list columns, as
    :func:`toonstream.polars.read_toon` reads it.

    The reader streams (iterating it, or ``read_next_batch``, reads the
    input as far as the next batch) and speaks the Arrow C stream interface
    (``__arrow_c_stream__``): DuckDB can query it,
    ``pyarrow.RecordBatchReader.from_stream`` and ``polars.from_arrow``
    take it.  The first batch is read when the reader is made (its schema is
    the reader's), so an error in the first rows is raised here.

    ``schema`` (a ``pyarrow.Schema`` or a mapping of column -> Arrow or Polars
    type) fixes every column's type; ``schema_overrides`` some of them;
    otherwise types come from the first ``infer_schema_length`` rows (None:
    all rows, held in memory until the table ends; 0: every column String),
    as in :func:`toonstream.polars.read_toon` (``try_parse_dates`` too).  A
    later value that does not fit its column's type is a ``ToonDecodeError``
    (code ``type_mismatch``) at its line and cell, never a silent
    conversion.  Memory is bounded by one batch.  Other options go to
    :class:`toonstream.Decoder`.

    >>> reader = iter_batches(b"[3]{id,tag}:\\n  1,x\\n  2,y\\n  3,z\\n", batch_size=2)
    >>> reader.schema.names, [b.num_rows for b in reader]
    (['id', 'tag'], [2, 1])
    """
    _check_options("iter_batches", options)
    batches = open_batches(
        source,
        path=path,
        batch_size=batch_size,
        schema=schema,
        schema_overrides=schema_overrides,
        infer_schema_length=infer_schema_length,
        try_parse_dates=try_parse_dates,
        columns=columns,
        n_rows=n_rows,
        key_field=key_field,
        **options,
    )[1]
    first = next(batches, None)
    if first is None:  # no table rows and no header: a reader of nothing
        return pa.RecordBatchReader.from_batches(pa.schema([]), iter(()))
    return pa.RecordBatchReader.from_batches(first.schema, chain((first,), batches))


def open_batches(
    source: Any,
    *,
    path: str | None,
    batch_size: int = 65_536,
    schema: pa.Schema | Mapping[str, Any] | None = None,
    schema_overrides: Mapping[str, Any] | Sequence[Any] | None = None,
    infer_schema_length: int | None,
    try_parse_dates: bool,
    columns: Sequence[str] | None = None,
    n_rows: int | None = None,
    key_field: str,
    **options: Any,
) -> tuple[Any, Iterator[pa.RecordBatch]]:
    """:func:`iter_batches`, and the FrameReader behind it (the CLI reads
    the table's header from it, for its own checks)."""
    with requires(_READING):
        from ._frames import FrameReader

    target = arrow_types(schema, schema_overrides)  # (the columns cast to an Arrow type given)
    reader = FrameReader(
        source,
        path=path,
        batch_size=batch_size,
        columns=columns,
        n_rows=n_rows,
        schema=polars_schema(schema),
        schema_overrides=polars_schema(schema_overrides),
        infer_schema_length=infer_schema_length,
        try_parse_dates=try_parse_dates,
        key_field=key_field,
        options=options,
        arrow_check=arrow_check(target),
    )
    return reader, record_batches(reader, target)


def arrow_types(schema: Any, overrides: Any) -> dict[str, pa.DataType]:
    """The columns given an Arrow type, by name: read in the Polars dtype
    that takes its values, their batches are cast to it (a timestamp[s] or
    a decimal256 comes back as asked, not as its Polars form)."""
    types: dict[str, pa.DataType] = {}
    for given in (schema, overrides):
        if isinstance(given, pa.Schema):
            types.update((f.name, f.type) for f in given)
        elif isinstance(given, Mapping):
            types.update((n, t) for n, t in given.items() if isinstance(t, pa.DataType))
    return types


def _cast_to(table: pa.Table, target: Mapping[str, pa.DataType]) -> pa.Table:
    """``table`` with the columns ``target`` names cast to their Arrow type; a
    value the cast would change (a fraction of a second in timestamp[s]) is a
    ToonDecodeError (its row not located: the cast is of a whole batch)."""
    from ._errors import ToonDecodeError

    columns = []
    for name, column in zip(table.column_names, table.columns):
        t = target.get(name)
        if t is not None:
            t = _over(column.type, t)
        if t is not None and column.type != t:
            try:
                column = column.cast(t)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise ToonDecodeError(f"column {name!r} does not convert to {t}: {e}", code="type_mismatch") from None
        columns.append(column)
    return pa.Table.from_arrays(columns, names=table.column_names)


def _over(actual: pa.DataType, given: pa.DataType) -> pa.DataType:
    """The type a column of type ``actual`` is cast to for the override ``given``: a struct
    override names some fields (as the frame readers take a Struct of some fields' dtypes):
    every field of the column stays, those it names take its types; a field it names that the
    column lacks is ignored, as a name of no column is.

    >>> _over(pa.struct([("x", pa.int64()), ("y", pa.string())]), pa.struct([("x", pa.int8())]))
    StructType(struct<x: int8, y: string>)
    """
    if not (pa.types.is_struct(actual) and pa.types.is_struct(given)):
        return given
    named = {given.field(i).name: given.field(i).type for i in range(given.num_fields)}
    fields = []
    for i in range(actual.num_fields):
        f = actual.field(i)
        g = named.get(f.name)
        # (nested structs: as deep as the override's own nesting, which the user wrote)
        fields.append(f if g is None else f.with_type(_over(f.type, g)))
    return pa.struct(fields)


def arrow_check(types: Mapping[str, pa.DataType]) -> Any:
    """For a FrameReader: the first row of a column (a Polars Series, read
    as the Polars type that holds its Arrow type) that the cast to its Arrow
    type in ``types`` would change, with pyarrow's reason and the type; None
    when it takes them all (or the column has no Arrow type given)."""
    if not types:
        return None
    with requires(_READING):
        import polars as pl

    def ok(arr: Any, t: pa.DataType) -> bool:
        try:
            arr.cast(t)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return False
        return True

    def check(name: str, s: Any) -> tuple[int, str, pa.DataType] | None:
        t = types.get(name)
        if t is None:
            return None
        arr = s.to_arrow(compat_level=pl.CompatLevel.oldest())
        t = _over(arr.type, t)  # (the type _cast_to casts the column to)
        try:
            arr.cast(t)
            return None
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            reason = str(e)
        lo, hi = 0, len(arr)  # (the first k rows cast, the first hi do not: hi - 1 is the row)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if ok(arr.slice(0, mid), t):
                lo = mid
            else:
                hi = mid
        return hi - 1, reason, t

    return check


def record_batches(reader: Any, target: Mapping[str, pa.DataType] | None) -> Iterator[pa.RecordBatch]:
    with requires(_READING):
        import polars as pl

    for frame in reader:
        table = frame.to_arrow(compat_level=pl.CompatLevel.oldest())
        if target:
            table = _cast_to(table, target)
        # One batch per frame (to_arrow gives one chunk per column here).
        table = table.combine_chunks()
        batches = table.to_batches()
        if batches:
            yield batches[0]
        else:
            yield pa.RecordBatch.from_pylist([], schema=table.schema)


def read_table(source: Any, **kwargs: Any) -> pa.Table:
    """All batches of :func:`iter_batches` as one ``pyarrow.Table`` (same options).

    >>> read_table(b"[2:]{age}:\\n  ada: 36\\n  bob: 41\\n").to_pydict()
    {'key': ['ada', 'bob'], 'age': [36, 41]}
    """
    _check_options("read_table", {k: v for k, v in kwargs.items() if k not in _NAMED})
    return iter_batches(source, **kwargs).read_all()


def _check_options(function: str, options: Mapping[str, Any]) -> None:
    with requires(_READING):
        from ._frames import check_options

    check_options(function, options)


# iter_batches' own keyword parameters (read_table passes them on).
_NAMED = frozenset(inspect.signature(iter_batches).parameters) - {"source", "options"}

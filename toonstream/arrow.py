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

from typing import Any, Iterator, Mapping, Sequence

import pyarrow as pa

from ._arrow_encode import encode_arrow

__all__ = ["iter_batches", "read_table", "encode_arrow"]


def _polars_schema(schema: pa.Schema | Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Arrow types -> Polars dtypes (the engine types columns in Polars)."""
    if schema is None:
        return None
    import polars as pl

    # Field by field: polars.from_arrow on a whole table would rename an
    # empty column name to "column_0".
    items = [(f.name, f.type) for f in schema] if isinstance(schema, pa.Schema) else list(schema.items())
    out: dict[str, Any] = {}
    for name, t in items:
        if isinstance(t, pa.DataType):
            t = pl.from_arrow(pa.array([], type=t)).dtype  # type: ignore[union-attr]
        out[name] = t
    return out


def iter_batches(
    source: Any,
    *,
    path: str | None = None,
    batch_size: int = 65_536,
    schema: pa.Schema | Mapping[str, Any] | None = None,
    schema_overrides: Mapping[str, Any] | None = None,
    infer_schema_length: int | None = 100,
    try_parse_dates: bool = False,
    columns: Sequence[str] | None = None,
    n_rows: int | None = None,
    key_field: str = "key",
    **options: Any,
) -> Iterator[pa.RecordBatch]:
    """RecordBatches (at most ``batch_size`` rows each, one schema) of the
    tabular array at ``path`` (an ijson-style prefix; None: the root table,
    else the root object's first tabular member) or of a keyed table (its
    entry key as column ``key_field``).  Nested field groups are struct
    columns.

    ``schema`` (a ``pyarrow.Schema`` or a mapping of column -> Arrow or Polars
    type) fixes every column's type; ``schema_overrides`` some of them;
    otherwise types come from the first ``infer_schema_length`` rows (None:
    all rows, held in memory until the table ends; 0: every column String),
    as in :func:`toonstream.polars.read_toon` (``try_parse_dates`` too).  A
    later value that does not fit its column's type is a ``ToonDecodeError``
    (code ``type_mismatch``) at its line and cell, never a silent
    conversion.  Memory is bounded by one batch.  Other options go to
    :class:`toonstream.Decoder`.
    """
    return _open_batches(
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


def _open_batches(
    source: Any,
    *,
    path: str | None,
    batch_size: int = 65_536,
    schema: pa.Schema | Mapping[str, Any] | None = None,
    schema_overrides: Mapping[str, Any] | None = None,
    infer_schema_length: int | None,
    try_parse_dates: bool,
    columns: Sequence[str] | None = None,
    n_rows: int | None = None,
    key_field: str,
    **options: Any,
) -> tuple[Any, Iterator[pa.RecordBatch]]:
    """:func:`iter_batches`, and the FrameReader behind it (the CLI reads
    the table's header from it, for its own checks)."""
    from ._frames import FrameReader

    reader = FrameReader(
        source,
        path=path,
        batch_size=batch_size,
        columns=columns,
        n_rows=n_rows,
        schema=_polars_schema(schema),
        schema_overrides=_polars_schema(schema_overrides),
        infer_schema_length=infer_schema_length,
        try_parse_dates=try_parse_dates,
        key_field=key_field,
        options=options,
    )
    return reader, _record_batches(reader, schema if isinstance(schema, pa.Schema) else None)


def _record_batches(reader: Any, target: pa.Schema | None) -> Iterator[pa.RecordBatch]:
    import polars as pl

    for frame in reader:
        table = frame.to_arrow(compat_level=pl.CompatLevel.oldest())
        if target is not None:
            table = table.cast(pa.schema([target.field(n) for n in table.column_names]))
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
    batches = list(iter_batches(source, **kwargs))
    if not batches:
        return pa.table({})
    return pa.Table.from_batches(batches)

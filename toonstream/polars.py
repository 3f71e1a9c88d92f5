"""TOON tables as Polars DataFrames: ``read_toon``, ``scan_toon``, ``write_toon``.

Follows Polars' reader conventions (``columns``, ``n_rows``, ``schema``,
``schema_overrides``, ``infer_schema_length``).  ``source`` is a path, bytes
or a file object (as for ``polars.read_csv``: a ``str`` is a path).  The table
is the root tabular array, else the root object's first tabular member, or
the one at ``path`` (an ijson-style prefix such as ``"users"`` or
``"data.users"``).  Column types: see the README ("Arrow and Polars").

>>> import io, toonstream.polars as tp
>>> df = tp.read_toon(io.BytesIO(b"users[2]{id,name}:\\n  1,Ada\\n  2,Bob\\n"))
>>> df.rows()
[(1, 'Ada'), (2, 'Bob')]
"""

from __future__ import annotations

import os
from typing import IO, Any, Iterator, Mapping, Sequence

import polars as pl
from polars.io.plugins import register_io_source

from ._frames import FrameReader

__all__ = ["read_toon", "scan_toon", "write_toon", "iter_frames"]


def iter_frames(
    source: Any,
    *,
    path: str | None = None,
    batch_size: int = 65_536,
    columns: Sequence[str] | None = None,
    n_rows: int | None = None,
    schema: Mapping[str, Any] | None = None,
    schema_overrides: Mapping[str, Any] | None = None,
    infer_schema_length: int | None = 100,
    try_parse_dates: bool = False,
    key_field: str = "key",
    **options: Any,
) -> Iterator[pl.DataFrame]:
    """DataFrames of at most ``batch_size`` rows, in order, all with one schema.

    Memory is bounded by a batch (plus the ``infer_schema_length`` rows held
    back while the column types are decided).  Other keyword options go to
    :class:`toonstream.Decoder` (``strict``, ``indent_size``, limits).
    """
    return iter(
        FrameReader(
            source,
            path=path,
            batch_size=batch_size,
            columns=columns,
            n_rows=n_rows,
            schema=schema,
            schema_overrides=schema_overrides,
            infer_schema_length=infer_schema_length,
            try_parse_dates=try_parse_dates,
            key_field=key_field,
            options=options,
        )
    )


def read_toon(
    source: Any,
    *,
    path: str | None = None,
    columns: Sequence[str] | None = None,
    n_rows: int | None = None,
    schema: Mapping[str, Any] | None = None,
    schema_overrides: Mapping[str, Any] | None = None,
    infer_schema_length: int | None = 100,
    try_parse_dates: bool = False,
    key_field: str = "key",
    batch_size: int = 65_536,
    **options: Any,
) -> pl.DataFrame:
    """Read a TOON table into a DataFrame.

    ``columns``: top-level columns to keep (unselected ones are not
    converted); ``n_rows``: stop after this many rows (the rest of the input
    is not read); ``schema``: a dtype for every column (no inference);
    ``schema_overrides``: dtypes for some (a struct column's leaves may be
    named ``"group.field"``; names of no column are ignored, as in
    ``polars.read_csv``); ``infer_schema_length``: rows looked at to choose
    the types (None: all; 0: every column String), the CLI's default too;
    ``try_parse_dates``: a column of ISO dates (``YYYY-MM-DD``) is Date, of
    ISO datetimes Datetime (in UTC if each has ``Z`` or an offset), a later
    value of another form a ``type_mismatch``.  A keyed table's entry key
    becomes the ``key_field`` column (a field of that name too is a
    ``name_collision`` error: pass another ``key_field``).

    >>> read_toon(b"[2]{a,b}:\\n  1,x\\n  2,y\\n").schema
    Schema([('a', Int64), ('b', String)])
    """
    frames = list(
        iter_frames(
            source,
            path=path,
            batch_size=batch_size,
            columns=columns,
            n_rows=n_rows,
            schema=schema,
            schema_overrides=schema_overrides,
            infer_schema_length=infer_schema_length,
            try_parse_dates=try_parse_dates,
            key_field=key_field,
            **options,
        )
    )
    if not frames:
        return pl.DataFrame()
    # Not rechunked (as polars.read_csv in Polars 2): call .rechunk() for contiguous memory.
    return pl.concat(frames, rechunk=False) if len(frames) > 1 else frames[0]


def scan_toon(
    source: str | os.PathLike[str] | bytes,
    *,
    path: str | None = None,
    schema: Mapping[str, Any] | None = None,
    schema_overrides: Mapping[str, Any] | None = None,
    infer_schema_length: int | None = 100,
    try_parse_dates: bool = False,
    key_field: str = "key",
    batch_size: int = 65_536,
    **options: Any,
) -> pl.LazyFrame:
    """A LazyFrame over a TOON table (a Polars IO plugin).

    Projection pushdown: only the selected columns are converted.  Slice
    pushdown: ``head(n)`` stops reading after n rows.  Predicates are applied
    by this source to each batch (so filtered-out rows are never
    concatenated).  The schema is read from the first rows when the plan is
    built (``infer_schema_length`` of them; ``try_parse_dates`` as in
    :func:`read_toon`), so ``source`` must be re-readable: a path or bytes.
    ``collect()`` equals :func:`read_toon` with the same options.

    >>> scan_toon(b"[3]{a,b}:\\n  1,x\\n  2,y\\n  3,z\\n").filter(pl.col("a") > 1).select("b").collect().to_series().to_list()
    ['y', 'z']
    """
    if not isinstance(source, (str, os.PathLike, bytes, bytearray)):
        raise TypeError("scan_toon needs a path or bytes (the source is read more than once)")
    common: dict[str, Any] = dict(
        path=path,
        key_field=key_field,
        infer_schema_length=infer_schema_length,
        try_parse_dates=try_parse_dates,
        options=options,
    )
    # The schema comes from the first rows (all of them with
    # infer_schema_length=None), as read_toon decides it: one row more tells
    # whether the table goes on past them.
    given: dict[str, Any] = dict(schema=schema, schema_overrides=schema_overrides)
    probe = FrameReader(
        source,
        batch_size=batch_size,
        n_rows=None if infer_schema_length is None else infer_schema_length + 1,
        **given,
        **common,
    )
    first = next(iter(probe), None)
    if first is None:
        raise ValueError("the TOON source holds no table")
    # The full read types the columns as the probe did (and checks them as
    # read_toon checks inferred types: no rounding into them).
    fixed = dict(first.schema)

    def source_generator(
        with_columns: list[str] | None, predicate: pl.Expr | None, n_rows: int | None, batch_size_hint: int | None
    ) -> Iterator[pl.DataFrame]:
        columns = with_columns
        if predicate is not None and with_columns is not None:
            # The predicate may use columns the query does not select.
            extra = [c for c in predicate.meta.root_names() if c not in with_columns]
            columns = [*with_columns, *dict.fromkeys(extra)]
        reader = FrameReader(
            source,
            batch_size=batch_size_hint or batch_size,
            columns=columns,
            # With a predicate, n_rows counts rows that pass it: stop by hand.
            n_rows=n_rows if predicate is None else None,
            inferred=fixed,
            **given,
            **common,
        )
        left = n_rows
        for frame in reader:
            if predicate is not None:
                frame = frame.filter(predicate)
                if left is not None:
                    frame = frame.head(left)
                    left -= frame.height
            if with_columns is not None and columns is not with_columns:
                frame = frame.select(with_columns)
            yield frame
            if left is not None and left <= 0:
                return

    return register_io_source(io_source=source_generator, schema=fixed)


def write_toon(
    data: pl.DataFrame | pl.LazyFrame,
    out: str | os.PathLike[str] | IO[Any],
    *,
    key: str | None = None,
    delimiter: str = ",",
    batch_size: int = 65_536,
    **options: Any,
) -> None:
    """Write a DataFrame (or a LazyFrame, collected in streaming batches) as a
    TOON table; byte-identical to ``toonstream.dumps(df.to_dicts())``.

    >>> import io
    >>> buf = io.StringIO()
    >>> write_toon(pl.DataFrame({"a": [1, 2], "b": ["x", "y"]}), buf)
    >>> buf.getvalue()
    '[2]{a,b}:\\n  1,x\\n  2,y'
    """
    from ._arrow_encode import encode_arrow

    if isinstance(data, pl.LazyFrame):
        batches: Any = (df.to_arrow() for df in data.collect_batches(chunk_size=batch_size))
    else:
        batches = data.to_arrow()
    if isinstance(out, (str, os.PathLike)):
        with open(out, "w", encoding="utf-8", newline="") as f:
            encode_arrow(batches, f, key=key, delimiter=delimiter, **options)
    else:
        encode_arrow(batches, out, key=key, delimiter=delimiter, **options)

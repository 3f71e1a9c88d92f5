"""TOON tables as Polars DataFrames: ``read_toon``, ``scan_toon``, ``write_toon``.

Follows Polars' reader conventions (``columns``, ``n_rows``, ``schema``,
``schema_overrides``, ``infer_schema_length``, ``row_index_name``,
``include_file_paths``).  ``source`` is a path, a glob, a directory, bytes, a
file object or a list of these (as for ``polars.read_csv``: a ``str`` is a
path; several sources are read as one table).  The table
is the root array of records, else the root object's first member that is
an array of records, or the one at ``path`` (an ijson-style prefix such as
``"users"`` or ``"data.users"``).  An array of records that is not tabular
(list items with nested objects and arrays) becomes Struct and List
columns, as ``polars.read_ndjson`` reads the same records as JSON Lines.
Column types: see the README ("Arrow and Polars").

>>> import io, toonstream.polars as tp
>>> df = tp.read_toon(io.BytesIO(b"users[2]{id,name}:\\n  1,Ada\\n  2,Bob\\n"))
>>> df.rows()
[(1, 'Ada'), (2, 'Bob')]
"""

from __future__ import annotations

import io
import os
from typing import IO, Any, Callable, Iterator, Mapping, Sequence, overload

from ._optional import requires

with requires("toonstream.polars"):
    import polars as pl
    from polars.io.plugins import register_io_source

from ._frames import IN_MEMORY, SourcesReader, check_frame_args, check_options, expand_sources

__all__ = ["read_toon", "scan_toon", "write_toon", "iter_frames"]


def _sources_reader(
    function: str,
    source: Any,
    /,
    *,
    path: str | None = None,
    batch_size: int = 65_536,
    columns: Sequence[str | int] | str | int | None = None,
    n_rows: int | None = None,
    schema: Mapping[str, Any] | None = None,
    schema_overrides: Mapping[str, Any] | Sequence[Any] | None = None,
    infer_schema_length: int | None = 100,
    try_parse_dates: bool = False,
    key_field: str = "key",
    row_index_name: str | None = None,
    row_index_offset: int = 0,
    include_file_paths: str | None = None,
    glob: bool = True,
    **options: Any,
) -> SourcesReader:
    """The reader behind read_toon/iter_frames; ``function`` names the
    public one in a TypeError for an option it does not take."""
    check_options(function, options)
    return SourcesReader(
        expand_sources(source, glob=glob),
        columns=columns,
        n_rows=n_rows,
        row_index_name=row_index_name,
        row_index_offset=row_index_offset,
        include_file_paths=include_file_paths,
        path=path,
        batch_size=batch_size,
        schema=schema,
        schema_overrides=schema_overrides,
        infer_schema_length=infer_schema_length,
        try_parse_dates=try_parse_dates,
        key_field=key_field,
        options=options,
    )


def iter_frames(
    source: Any,
    *,
    path: str | None = None,
    batch_size: int = 65_536,
    columns: Sequence[str | int] | str | int | None = None,
    n_rows: int | None = None,
    schema: Mapping[str, Any] | None = None,
    schema_overrides: Mapping[str, Any] | Sequence[Any] | None = None,
    infer_schema_length: int | None = 100,
    try_parse_dates: bool = False,
    key_field: str = "key",
    row_index_name: str | None = None,
    row_index_offset: int = 0,
    include_file_paths: str | None = None,
    glob: bool = True,
    **options: Any,
) -> Iterator[pl.DataFrame]:
    """DataFrames of at most ``batch_size`` rows, in order, all with one
    schema; the options of :func:`read_toon`.

    Memory is bounded by a batch (plus the ``infer_schema_length`` rows held
    back while the column types are decided).

    >>> [f.height for f in iter_frames(b"[3]{a}:\\n  1\\n  2\\n  3\\n", batch_size=2)]
    [2, 1]
    """
    return iter(
        _sources_reader(
            "iter_frames",
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
            row_index_name=row_index_name,
            row_index_offset=row_index_offset,
            include_file_paths=include_file_paths,
            glob=glob,
            **options,
        )
    )


def read_toon(
    source: Any,
    *,
    path: str | None = None,
    columns: Sequence[str | int] | str | int | None = None,
    n_rows: int | None = None,
    schema: Mapping[str, Any] | None = None,
    schema_overrides: Mapping[str, Any] | Sequence[Any] | None = None,
    infer_schema_length: int | None = 100,
    try_parse_dates: bool = False,
    key_field: str = "key",
    batch_size: int = 65_536,
    row_index_name: str | None = None,
    row_index_offset: int = 0,
    include_file_paths: str | None = None,
    glob: bool = True,
    **options: Any,
) -> pl.DataFrame:
    """Read a TOON table (or any array of records) into a DataFrame.

    ``source``: a path, a glob (``"logs/*.toon"``, ``**`` for any depth;
    with ``glob=False`` a path with ``*`` is literal), a directory (every
    file below it, sorted), bytes, a file object, or a list of these; as
    ``polars.read_csv`` takes them.  Several sources are read as one table:
    the same columns in the same order (else a
    ``polars.exceptions.SchemaError``), typed from the first one's rows.
    ``columns``: the columns to keep, by name or index (unselected ones are
    not converted; the ``include_file_paths`` column counts as the last
    one, as in ``polars.read_csv``); ``n_rows``: stop after this many rows
    in all (the rest of the input is not read); ``row_index_name`` /
    ``row_index_offset``: a first column counting the rows (dtype
    ``pl.get_index_type()``); ``include_file_paths``: a last column naming
    each row's file (``"in-mem"`` for bytes and file objects);
    ``schema``: a dtype for every column (no inference);
    ``schema_overrides``: dtypes for some (a struct column's leaves may be
    named ``"group.field"``; names of no column are ignored, as in
    ``polars.read_csv``); ``infer_schema_length``: rows looked at to choose
    the types (None: all; 0: every column String), the CLI's default too;
    ``try_parse_dates``: a column of ISO dates (``YYYY-MM-DD``) is Date, of
    ISO datetimes Datetime (in UTC if each has ``Z`` or an offset), a later
    value of another form a ``type_mismatch``.  A keyed table's entry key
    becomes the ``key_field`` column (a field of that name too is a
    ``name_collision`` error: pass another ``key_field``).  Other keyword
    options: the decoder's ``strict``, ``indent_size``, ``max_depth``,
    ``max_line_length``, ``max_number_length``, ``max_fields``; value hooks
    (``parse_float``, ``parse_int``, ...) are refused (TypeError): columns are
    typed as a whole.

    Records that are not tabular (list items with nested objects and
    arrays) are read as ``polars.read_ndjson`` reads them as JSON Lines:
    objects as Struct columns, arrays as List columns, the schema from the
    first ``infer_schema_length`` records; a later key or value the schema
    does not take is a ``ToonDecodeError`` at its line, never dropped.

    >>> read_toon(b"[2]:\\n  - id: 1\\n    tags[2]: x,y\\n  - id: 2\\n    tags[0]:\\n").schema
    Schema([('id', Int64), ('tags', List(String))])
    >>> read_toon(b"[2]{a,b}:\\n  1,x\\n  2,y\\n").schema
    Schema([('a', Int64), ('b', String)])
    >>> read_toon(b"[2]{a,b}:\\n  1,x\\n  2,y\\n", columns=[1], row_index_name="i").rows()
    [(0, 'x'), (1, 'y')]
    """
    frames = list(
        _sources_reader(
            "read_toon",
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
            row_index_name=row_index_name,
            row_index_offset=row_index_offset,
            include_file_paths=include_file_paths,
            glob=glob,
            **options,
        )
    )
    if not frames:
        return pl.DataFrame()
    # Not rechunked (as polars.read_csv in Polars 2): call .rechunk() for contiguous memory.
    return pl.concat(frames, rechunk=False) if len(frames) > 1 else frames[0]


def _describe(source: Any) -> str:
    """The source as the plan shows it (no I/O: a glob is not expanded)."""
    items = list(source) if isinstance(source, (list, tuple)) else [source]
    texts = [str(os.fspath(s)) if isinstance(s, (str, os.PathLike)) else IN_MEMORY for s in items]
    return ", ".join(texts[:3]) + (f", ... ({len(texts)} sources)" if len(texts) > 3 else "")


def scan_toon(
    source: Any,
    *,
    path: str | None = None,
    n_rows: int | None = None,
    schema: Mapping[str, Any] | None = None,
    schema_overrides: Mapping[str, Any] | Sequence[Any] | None = None,
    infer_schema_length: int | None = 100,
    try_parse_dates: bool = False,
    key_field: str = "key",
    batch_size: int = 65_536,
    row_index_name: str | None = None,
    row_index_offset: int = 0,
    include_file_paths: str | None = None,
    glob: bool = True,
    **options: Any,
) -> pl.LazyFrame:
    """A LazyFrame over a TOON table (a Polars IO plugin, shown as
    ``PYTHON[toon] SCAN`` in ``explain()``).

    No I/O here: the sources (paths, globs, directories, bytes, or a list:
    re-readable, not file objects) are expanded and read when the plan first
    needs its schema (``collect``, ``collect_schema``, ``explain``), so a
    missing file fails there.  The schema is read from the first rows
    (``infer_schema_length`` of them plus one; ``try_parse_dates`` as in
    :func:`read_toon`), once; with ``schema`` (and overrides of its columns
    only) it is not read (the table must then have exactly the schema's
    columns).  Errors are raised at ``collect`` as :func:`read_toon` raises
    them, with one exception: when the first rows cannot even give the
    columns (a missing file, no table, a broken header), Polars reports
    the error as a ``polars.exceptions.ComputeError`` naming it (it wraps
    any error of a plugin's schema function); with ``schema`` given it is
    raised as it is.  Projection pushdown: only the selected columns
    are converted.  Slice pushdown: ``head(n)`` stops reading after n rows,
    as ``n_rows`` does.  Predicates are applied by this source to each
    batch (so filtered-out rows are never concatenated); the row index
    (``row_index_name``) and the file path column (``include_file_paths``)
    are made by the source too, so they do not stop the pushdowns.
    ``collect()`` equals :func:`read_toon` with the same options.

    >>> scan_toon(b"[3]{a,b}:\\n  1,x\\n  2,y\\n  3,z\\n").filter(pl.col("a") > 1).select("b").collect().to_series().to_list()
    ['y', 'z']
    """
    check_options("scan_toon", options)
    check_frame_args(batch_size, infer_schema_length, schema_overrides)
    if schema is not None:
        schema = dict(schema)  # (a list of pairs too, as read_toon takes it; a bad one fails here)
    items = list(source) if isinstance(source, (list, tuple)) else [source]
    if not items or not all(isinstance(s, (str, os.PathLike, bytes, bytearray)) for s in items):
        raise TypeError("scan_toon needs paths or bytes (the source is read more than once), or a list of them")
    if n_rows is not None and n_rows < 0:
        raise ValueError("n_rows must be >= 0 or None")
    if row_index_offset < 0:
        raise ValueError(f"row_index_offset must be >= 0, got {row_index_offset}")
    common: dict[str, Any] = dict(
        path=path,
        key_field=key_field,
        infer_schema_length=infer_schema_length,
        try_parse_dates=try_parse_dates,
        schema=schema,
        schema_overrides=schema_overrides,
        options=options,
    )
    sources = _Once(lambda: expand_sources(source, glob=glob))
    # The schema given (overrides of its columns only: a struct leaf's
    # override would change a dtype only the read can tell): no probe.
    given = schema is not None and isinstance(schema_overrides, (Mapping, type(None))) and all(n in schema for n in schema_overrides or {})

    def probe() -> tuple[pl.Schema, dict[str, Any], str | None]:
        """The plan's schema, the dtypes the read keeps (the probe's), and
        where they came from (for error messages)."""
        how = None
        if given:
            assert schema is not None and isinstance(schema_overrides, (Mapping, type(None)))
            inner = pl.Schema({**schema, **(schema_overrides or {})})
            fixed: dict[str, Any] = {}
        else:
            # The schema comes from the first rows (all of them with
            # infer_schema_length=None), as read_toon decides it: one row
            # more tells whether the table goes on past them; never past
            # n_rows (read_toon's types are those of the rows it reads, and
            # an error after them is not met).
            window = None if infer_schema_length is None else infer_schema_length + 1
            if n_rows is not None:
                window = n_rows if window is None else min(window, n_rows)
            probing = SourcesReader(sources(), batch_size=batch_size, n_rows=window, **common)
            inner = probing.probe()
            if probing.inferred_rows is not None:
                how = f"inferred from the first {probing.inferred_rows} rows by the scan's probe"
            # The full read types the columns as the probe did (and checks
            # them as read_toon checks inferred types: no rounding into them).
            fixed = dict(inner)
        columns: list[tuple[str, Any]] = list(inner.items())
        if include_file_paths is not None:
            columns.append((include_file_paths, pl.String))
        if row_index_name is not None:
            columns.insert(0, (row_index_name, pl.get_index_type()))
        return pl.Schema(columns), fixed, how

    plan = _Once(probe)

    def source_generator(
        with_columns: list[str] | None, predicate: pl.Expr | None, n_pushed: int | None, batch_size_hint: int | None
    ) -> Iterator[pl.DataFrame]:
        names, fixed, how = list(plan()[0]), plan()[1], plan()[2]
        needed = set(names if with_columns is None else with_columns)
        if predicate is not None:  # it may use columns the query does not select
            needed.update(predicate.meta.root_names())
        limit = n_rows
        if n_pushed is not None:
            # (a slice comes before the predicate in a scan: head(n).filter(p) pushes both,
            # filter(p).head(n) only p)
            limit = n_pushed if limit is None else min(limit, n_pushed)
        columns: list[str] | None = [c for c in names if c in needed and c != row_index_name]
        if not any(c != include_file_paths for c in columns or ()):
            # Polars asks for no column of the table (a row count, a row index of its own): one
            # is read all the same, for the number of rows (a table of none: all of it)
            first = [c for c in names if c not in (row_index_name, include_file_paths)][:1]
            columns = columns + first if first and columns is not None else None
        reader = SourcesReader(
            sources(),
            batch_size=batch_size_hint or batch_size,
            columns=columns,
            n_rows=limit,
            inferred=fixed,
            inferred_how=how,
            expect=list(schema) if given and schema is not None else None,  # the plan's columns
            row_index_name=row_index_name,
            row_index_offset=row_index_offset,
            include_file_paths=include_file_paths,
            **common,
        )
        out = names if with_columns is None else with_columns
        for frame in reader:
            if predicate is not None:
                frame = frame.filter(predicate)
            # (no column: a frame of the rows' height all the same, which select([]) is not)
            yield frame.select(out) if out else frame.drop(frame.columns)

    return register_io_source(
        io_source=source_generator,
        schema=lambda: plan()[0],
        explain_name="toon",
        explain_detail=_describe(source),
    )


class _Once:
    """A function's result, computed at the first call (Polars asks a
    plugin for its schema many times; the sources are expanded once)."""

    def __init__(self, function: Callable[[], Any]) -> None:
        self.function = function
        self.done = False
        self.value: Any = None

    def __call__(self) -> Any:
        if not self.done:
            self.value = self.function()
            self.done = True
        return self.value


@overload
def write_toon(
    data: pl.DataFrame | pl.LazyFrame,
    file: None = None,
    *,
    key: str | None = None,
    delimiter: str = ",",
    batch_size: int = 65_536,
    **options: Any,
) -> str: ...


@overload
def write_toon(
    data: pl.DataFrame | pl.LazyFrame,
    file: str | os.PathLike[str] | IO[Any],
    *,
    key: str | None = None,
    delimiter: str = ",",
    batch_size: int = 65_536,
    **options: Any,
) -> None: ...


def write_toon(
    data: pl.DataFrame | pl.LazyFrame,
    file: str | os.PathLike[str] | IO[Any] | None = None,
    *,
    key: str | None = None,
    delimiter: str = ",",
    batch_size: int = 65_536,
    **options: Any,
) -> str | None:
    """Write a DataFrame (or a LazyFrame, collected in streaming batches) as a
    TOON table; byte-identical to ``toonstream.dumps(df.to_dicts())``.
    ``file``: a path or a text or binary file; None (as ``write_csv``):
    the text is returned.  Options: ``indent_size``, ``default``,
    ``max_depth``, ``spool_memory``, ``missing_as_null`` as in
    :func:`toonstream.arrow.encode_arrow`.

    >>> write_toon(pl.DataFrame({"a": [1, 2], "b": ["x", "y"]}))
    '[2]{a,b}:\\n  1,x\\n  2,y'
    """
    with requires("toonstream.polars.write_toon"):  # it writes through encode_arrow
        from ._arrow_encode import OPTIONS, encode_arrow

    unknown = [n for n in options if n not in OPTIONS and n != "indent_size"]
    if unknown:
        raise TypeError(f"write_toon() got an unexpected keyword argument {unknown[0]!r}")
    if isinstance(data, pl.LazyFrame):
        frames: Any = data.collect_batches(chunk_size=batch_size)
        schema = data.collect_schema()
    else:
        frames, schema = (data,), data.schema
    if not any(map(not_arrow, schema.dtypes())):

        def write(out: IO[Any]) -> None:
            # (a DataFrame as one Table: its row count is known, nothing is spooled)
            tables = data.to_arrow() if isinstance(data, pl.DataFrame) else (df.to_arrow() for df in frames)
            encode_arrow(tables, out, key=key, delimiter=delimiter, **options)
    else:
        # Arrow has no 128-bit integers (to_arrow raises) and an Object column's
        # values are Python objects (its Arrow form: pointers): such a frame's rows
        # go as Python values to the records encoder (spooled, the same text).
        from .streaming import encode_records

        def write(out: IO[Any]) -> None:
            rows = (row for df in frames for part in df.iter_slices(batch_size) for row in part.iter_rows(named=True))
            encode_records(rows, out, key=key, delimiter=delimiter, **options)

    if file is None:
        buf = io.StringIO()
        write(buf)
        return buf.getvalue()
    if isinstance(file, (str, os.PathLike)):
        from ._atomic import AtomicOutput

        with AtomicOutput(os.fspath(file)) as f:  # (a failed write leaves the file as it was)
            write(f)
    else:
        write(file)
    return None


def not_arrow(dtype: pl.DataType) -> bool:
    """Whether ``dtype`` is or holds (in lists, arrays, structs) a type whose
    values do not go through Arrow: Int128, UInt128, Object."""
    stack: list[Any] = [dtype]
    while stack:
        d = stack.pop()
        if d in (pl.Int128, pl.UInt128, pl.Object):
            return True
        if isinstance(d, (pl.List, pl.Array)):
            stack.append(d.inner)
        elif isinstance(d, pl.Struct):
            stack.extend(f.dtype for f in d.fields)
    return False


@pl.api.register_dataframe_namespace("toon")
@pl.api.register_lazyframe_namespace("toon")
class ToonNamespace:
    """``df.toon`` and ``lf.toon``: TOON for a Polars frame, there once
    ``toonstream.polars`` is imported (Polars' namespace extension API;
    ``import toonstream`` alone does not add it).

    >>> pl.DataFrame({"a": [1, 2], "b": ["x", "y"]}).toon.write()
    '[2]{a,b}:\\n  1,x\\n  2,y'
    """

    def __init__(self, frame: pl.DataFrame | pl.LazyFrame) -> None:
        self._frame = frame

    @overload
    def write(
        self, file: None = None, *, key: str | None = None, delimiter: str = ",", batch_size: int = 65_536, **options: Any
    ) -> str: ...

    @overload
    def write(
        self,
        file: str | os.PathLike[str] | IO[Any],
        *,
        key: str | None = None,
        delimiter: str = ",",
        batch_size: int = 65_536,
        **options: Any,
    ) -> None: ...

    def write(
        self,
        file: str | os.PathLike[str] | IO[Any] | None = None,
        *,
        key: str | None = None,
        delimiter: str = ",",
        batch_size: int = 65_536,
        **options: Any,
    ) -> str | None:
        """:func:`write_toon` of the frame, with its options: the text
        (``file`` None) or written to a path or file.

        >>> pl.DataFrame({"id": [1], "tags": [["x", "y"]]}).toon.write()
        '[1]:\\n  - id: 1\\n    tags[2]: x,y'
        """
        try:
            return write_toon(self._frame, file, key=key, delimiter=delimiter, batch_size=batch_size, **options)
        except TypeError as e:
            if str(e).startswith("write_toon() got"):  # (named as the caller wrote it)
                raise TypeError(str(e).replace("write_toon()", "toon.write()", 1)) from None
            raise

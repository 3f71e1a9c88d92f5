"""TOON tables on Dask: ``read_toon`` (files split by byte ranges) and ``to_toon``.

Install with ``pip install 'toonstream[dask]'``.  A file holding one table
is cut into ranges of about ``blocksize`` bytes at line ends (a TOON row
never holds a raw newline), one partition each, read by
:class:`toonstream.ranges.RangeReader` on the workers: the same decoder and
column typing as :func:`toonstream.arrow.read_table`, with the types decided
once on the client (from each file's header and first rows, or ``schema``).
Partitions are pandas DataFrames with ``pandas.ArrowDtype`` columns: the
Arrow types of ``read_table``, exactly (but strings: Dask's
``dataframe.convert-string``, on by default, makes them pandas'
``string[pyarrow]``).

>>> import os, tempfile
>>> d = tempfile.mkdtemp()
>>> with open(os.path.join(d, "t.toon"), "w") as f:
...     _ = f.write("[3]{id,name}:\\n  1,Ada\\n  2,\\"Bob, Jr.\\"\\n  3,Cy\\n")
>>> ddf = read_toon(os.path.join(d, "*.toon"), blocksize=12)
>>> ddf.npartitions, ddf.compute()["name"].tolist()
(3, ['Ada', 'Bob, Jr.', 'Cy'])
>>> to_toon(ddf, os.path.join(d, "one.toon"), single_file=True)
>>> print(open(os.path.join(d, "one.toon")).read())
[3]{id,name}:
  1,Ada
  2,"Bob, Jr."
  3,Cy
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence, cast

from ._errors import ToonEncodeError
from ._optional import requires

with requires("toonstream.dask"):
    import dask.dataframe as dd
    import pandas as pd
    import pyarrow as pa
    from dask.base import compute as _compute
    from dask.delayed import delayed as _delayed

    from ._frames import expand_sources
    from .ranges import RangeReader, check_table_written, parse_size, plan_files, split_ranges, table_header, write_part

__all__ = ["read_toon", "to_toon"]

def _pandas(table: pa.Table) -> pd.DataFrame:
    """Arrow to pandas with every column an ``ArrowDtype`` (no conversion
    to NumPy types: nulls in integer columns, large strings and structs
    stay as they are)."""
    return table.to_pandas(types_mapper=pd.ArrowDtype)


@dataclass(frozen=True)
class _Piece:
    """One partition: a byte range of a file; ``last``: the file's last
    range, which also checks the file's declared row count."""

    reader: RangeReader
    start: int
    end: int
    last: bool


# Bytes of the file before its last range counted per task (see _count_before).
_COUNT_BLOCK = 512 << 20


def _count_rows(reader: RangeReader, start: int, end: int) -> int:
    return reader.count_rows(start, end)


def _count_before(reader: RangeReader, start: int) -> int:
    """The rows of the file before byte ``start``, counted without decoding.

    On a distributed worker the count is spread over the cluster (count
    tasks submitted from this task, which leaves its thread to them while
    it waits): a file of many ranges is not counted by one core.  Elsewhere
    (Dask's local schedulers) it is counted here."""
    blocks = split_ranges(start, _COUNT_BLOCK, reader.header.rows_offset) if start > reader.header.rows_offset else []
    try:
        from distributed import get_worker, worker_client

        get_worker()
    except (ImportError, ValueError):  # (not on a distributed worker)
        return sum(reader.count_rows(s, e) for s, e in blocks)
    if len(blocks) <= 1:
        return sum(reader.count_rows(s, e) for s, e in blocks)
    with worker_client() as client:
        futures = client.map(_count_rows, [reader] * len(blocks), *zip(*blocks), pure=False)
        return sum(client.gather(futures))


class _ReadPiece:
    """The partition function (``columns``: the optimizer's projection)."""

    def __init__(self, columns: list[str] | None = None) -> None:
        self._columns = columns

    @property
    def columns(self) -> list[str] | None:
        return self._columns

    def project_columns(self, columns: Sequence[str]) -> _ReadPiece:
        return _ReadPiece(list(columns))

    def __call__(self, piece: _Piece, columns: Sequence[str] | str | None = None) -> pd.DataFrame:
        reader = piece.reader
        table = reader.read(piece.start, piece.end)
        if piece.last and reader.strict:
            # The [N] check needs the whole file's count: the rows before
            # this range are counted (no decoding; their ranges decode and
            # check them), this range's were read.
            reader.check_count(_count_before(reader, piece.start) + table.num_rows)
        wanted = columns if columns is not None else self._columns
        if isinstance(wanted, str):
            wanted = [wanted]
        if wanted is not None:
            table = table.select(list(wanted))
        return _pandas(table)


def read_toon(
    paths_or_glob: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    blocksize: int | str | None = "64MiB",
    columns: Sequence[str] | None = None,
    schema: pa.Schema | Mapping[str, Any] | None = None,
    schema_overrides: Mapping[str, Any] | None = None,
    infer_schema_length: int | None = 100,
    try_parse_dates: bool = False,
    key_field: str = "key",
    **options: Any,
) -> dd.DataFrame:
    """A Dask DataFrame of the tables of one or more one-table TOON files
    (a path, a glob, a directory, or a list of these; in a directory, names
    starting with ``.`` or ``_`` are left out, as Dask's readers leave them:
    ``to_toon``'s spool is such), one partition per
    byte range of about ``blocksize`` bytes (None: one per file).

    Options as :func:`toonstream.arrow.iter_batches`: the column types come
    from each file's first ``infer_schema_length`` rows (None: all of them,
    a whole read on the client; or ``schema``, ``schema_overrides``),
    decided here, on the client, so that every
    partition has them; a later value that does not fit is a
    ``ToonDecodeError`` (``type_mismatch``) where it is read.  Several
    files are one table, typed as :func:`toonstream.polars.read_toon` types
    a list of files (by the first file with rows); every file must have
    its columns.  ``columns``: the columns
    to read (Dask also pushes a later column selection into the read).
    Errors name the file and give its line numbers; the declared ``[N]`` of
    each file is checked against its summed row count when its last range
    is read.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.toon")
    >>> with open(path, "w") as f:
    ...     _ = f.write("[2]{a,b}:\\n  1,x\\n  2,y\\n")
    >>> read_toon(path, columns=["b"]).compute().to_dict("list")
    {'b': ['x', 'y']}
    """
    sources = expand_sources(paths_or_glob, hidden=False)
    step = None if blocksize is None else parse_size(blocksize)
    if step is not None and step < 1:
        raise ValueError("blocksize must be >= 1 byte")
    paths = []
    for source, _ in sources:
        if not isinstance(source, str):
            raise TypeError(f"read_toon reads files (paths or globs), got {type(source).__name__}")
        paths.append(source)
    readers = plan_files(
        paths,
        schema=schema,
        schema_overrides=schema_overrides,
        infer_schema_length=infer_schema_length,
        try_parse_dates=try_parse_dates,
        columns=columns,
        key_field=key_field,
        **options,
    )
    pieces: list[_Piece] = []
    for reader in readers:
        ranges = reader.ranges(step) if step is not None else [(0, reader.header.size)]
        pieces.extend(_Piece(reader, s, e, k == len(ranges) - 1) for k, (s, e) in enumerate(ranges))
    schema_out = readers[0].schema
    meta = _pandas(schema_out.empty_table())
    from_map: Any = dd.from_map  # (dask's own annotations are partial)
    ddf: dd.DataFrame = from_map(_ReadPiece(), pieces, meta=meta, label="read-toon", enforce_metadata=False)
    return ddf


def _part_table(df: pd.DataFrame, schema: pa.Schema) -> pa.Table:
    return pa.Table.from_pandas(df, schema=schema, preserve_index=False)


def _write_file(df: pd.DataFrame, path: str, schema: pa.Schema, options: Mapping[str, Any]) -> int:
    return write_part(_part_table(df, schema), path, **options)


def _write_body(df: pd.DataFrame, path: str, schema: pa.Schema, options: Mapping[str, Any]) -> int:
    """One partition's rows (its TOON text without the header line) to
    ``path``; its row count.  The header it would have is checked to be the
    table's, so that the rows continue one table."""
    from ._arrow_encode import encode_arrow

    table = _part_table(df, schema)
    with open(path, "w+b") as f:  # (read back: check_table_written)
        if not table.num_rows:
            return 0
        encode_arrow(table, f, **options)
        f.flush()
        check_table_written(f.fileno(), schema, table.num_rows, options)
    return int(table.num_rows)


def to_toon(
    ddf: dd.DataFrame,
    path: str | os.PathLike[str],
    *,
    single_file: bool = False,
    name_function: Callable[[int], str] | None = None,
    key: str | None = None,
    delimiter: str = ",",
    indent_size: int = 2,
    **options: Any,
) -> list[str] | None:
    """Write a Dask DataFrame as TOON (the index is not written).

    ``single_file=False``: ``path`` is a directory (made if missing), one
    valid TOON file per partition, ``part.{i}.toon`` with ``i`` zero-padded
    to the widest (``part.00.toon`` ... ``part.15.toon``: read back in
    partition order, names sorting as numbers; ``name_function(i)`` names
    them otherwise), each written atomically; returns their paths.  Files
    already in the directory under other names stay: write into a new or
    empty directory, or they are read back with the new ones.
    ``single_file=True``: one TOON file at ``path``, the rows of the
    partitions in order under one header with the summed count; written to
    a temporary file beside ``path`` and renamed, so a failure leaves
    ``path`` as it was.  Rows are formatted by
    :func:`toonstream.arrow.encode_arrow` (``key``, ``delimiter``,
    ``indent_size`` and its ``options``), on the workers; the parts are
    joined where ``to_toon`` runs (the file system must be shared).

    >>> import os, tempfile, pandas as pd, dask.dataframe as dd
    >>> d = tempfile.mkdtemp()
    >>> ddf = dd.from_pandas(pd.DataFrame({"a": [1, 2, 3]}), npartitions=2)
    >>> [os.path.basename(p) for p in to_toon(ddf, d)]
    ['part.0.toon', 'part.1.toon']
    >>> print(open(os.path.join(d, "part.1.toon")).read())
    [1]{a}:
      3
    """
    out = os.fspath(path)
    encode = {"key": key, "delimiter": delimiter, "indent_size": indent_size, **options}
    meta = ddf._meta
    for name in meta.columns:  # (pyarrow would make them strings, and then not find them)
        if not isinstance(name, str):
            raise ToonEncodeError(f"column names must be strings, as object keys, got {type(name).__name__} {name!r}")
    schema = pa.Schema.from_pandas(meta, preserve_index=False)
    table_header(schema, 0, **encode)  # (not a table: said before any work)
    parts: list[Any] = cast(Any, ddf).to_delayed()
    later: Any = _delayed
    run: Any = _compute
    if not single_file:
        os.makedirs(out, exist_ok=True)
        # (numbers padded to the widest, as Dask's writers name parts: read back in order by name)
        width = len(str(max(len(parts) - 1, 0)))
        name = name_function or (lambda i: f"part.{i:0{width}d}.toon")
        files = [os.path.join(out, name(i)) for i in range(len(parts))]
        run(*[later(_write_file)(p, f, schema, encode) for p, f in zip(parts, files)])
        return files
    target_dir = os.path.dirname(os.path.abspath(out))
    spool = tempfile.mkdtemp(prefix=f".{os.path.basename(out)}.", dir=target_dir)
    try:
        bodies = [os.path.join(spool, f"{i}.part") for i in range(len(parts))]
        counts = run(*[later(_write_body)(p, b, schema, encode) for p, b in zip(parts, bodies)])
        total = sum(counts)
        tmp = os.path.join(spool, "whole.toon")
        with open(tmp, "wb") as f:
            f.write(table_header(schema, total, **encode).encode("utf-8"))
            for body, n in zip(bodies, counts):
                if not n:
                    continue
                with open(body, "rb") as part:
                    part.readline()  # (its own header)
                    f.write(b"\n")
                    shutil.copyfileobj(part, f, 1 << 20)
        os.replace(tmp, out)
    finally:
        _remove_spool(spool)
    return None


def _remove_spool(spool: str, *, attempts: int = 50) -> None:
    """Remove the spool directory.  When a partition fails, ``compute``
    raises while the other partitions' tasks may still be writing their
    bodies into it (a distributed scheduler does not wait for them): a body
    made while the tree is being removed leaves it behind, so the removal is
    retried until the directory is gone (for up to about 5 seconds)."""
    for _ in range(attempts):
        shutil.rmtree(spool, ignore_errors=True)
        if not os.path.exists(spool):
            return
        time.sleep(0.1)

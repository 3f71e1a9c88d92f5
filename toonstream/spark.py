"""TOON tables on Spark: the ``toon`` data source (Spark 4's Python Data Source API).

Install with ``pip install 'toonstream[spark]'`` (Spark needs Java 17+), then
register the source once per session::

    import toonstream.spark
    toonstream.spark.register(spark)
    df = spark.read.format("toon").option("blocksize", "64MiB").load("logs/*.toon")
    df.write.format("toon").mode("overwrite").save("out/")

Reading: every one-table TOON file the path (a file, a glob or a
directory, whose names starting with ``.`` or ``_`` are left out, as
Spark's file sources leave them: a crashed job's staging) names is cut into byte ranges of about ``blocksize`` bytes at
line ends, one Spark partition each, read by
:class:`toonstream.ranges.RangeReader` on the executors and handed to Spark
as Arrow batches.  The column types are decided once, on the driver, from
the first file's header and first rows (option ``infer_schema_length``,
default 100), as :func:`toonstream.polars.read_toon` decides them for a
list of files; the Spark schema is their Arrow schema's (strings are
``StringType``, TOON integers ``LongType``, nested field groups structs).
Every file must have the first one's columns.  Options (strings, as Spark passes
them): ``blocksize``, ``infer_schema_length``, ``try_parse_dates``,
``key_field``, ``strict``, ``indent_size``.  Errors name the file and give
its line numbers; each file's declared ``[N]`` is checked against its
summed row count when its last range is read.

Writing: a directory of TOON files, one per non-empty Spark partition
(``part-00000-<job>.toon``; one file with a ``[0]`` header if the
DataFrame has no rows), formatted by :func:`toonstream.arrow.encode_arrow`
on the executors (options ``key``, ``delimiter``, ``indent_size``).  Tasks
write to a staging directory; the driver's commit moves the files in
(``mode("overwrite")`` first removes the directory's ``*.toon`` files), an
abort removes them: a failed job adds no file.  The directory must be on a
file system the driver and the executors share.  Spark 4's Python data
sources take the save modes ``append`` and ``overwrite`` only (Spark refuses
its default, ``errorifexists``, and ``ignore`` for them).
"""

from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from ._optional import requires

with requires("toonstream.spark"):
    import pyarrow as pa
    from pyspark.sql.datasource import (
        DataSource,
        DataSourceArrowWriter,
        DataSourceReader,
        InputPartition,
        WriterCommitMessage,
    )
    from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
    from pyspark.sql.types import StructType

    from ._errors import ToonDecodeError, rehinted
    from ._frames import expand_sources
    from .ranges import RangeReader, parse_size, plan_files, write_part

__all__ = ["ToonDataSource", "register"]

_DEFAULT_BLOCKSIZE = 64 << 20
# (a type error's fix, in the reader's words: see _errors.rehinted)
_HINT = 'give .schema(...) or a larger .option("infer_schema_length", N)'

_TRUE = frozenset(("true", "1", "yes"))


def register(spark: Any) -> None:
    """Register the ``toon`` data source with a SparkSession (once per session).

    Example (not run by the doctests: it needs a Spark session)::

        import toonstream.spark
        toonstream.spark.register(spark)
        df = spark.read.format("toon").load("data/*.toon")
        df.write.format("toon").mode("overwrite").save("out/")
    """
    spark.dataSource.register(ToonDataSource)


def _flag(value: str | None, default: bool) -> bool:
    return default if value is None else str(value).strip().lower() in _TRUE


def _int(value: str | None) -> int | None:
    return None if value is None or str(value).strip().lower() in ("", "none", "null") else int(value)


@dataclass(frozen=True)
class _Range(InputPartition):  # type: ignore[misc, unused-ignore]  # (Any without pyspark's types)
    """One Spark partition: a byte range of a file (``last``: the file's
    last, which also checks the declared row count)."""

    reader: RangeReader
    start: int
    end: int
    last: bool


class ToonDataSource(DataSource):  # type: ignore[misc, unused-ignore]  # (Any without pyspark's types)
    """The ``toon`` format for ``spark.read`` and ``DataFrame.write`` (see the
    module), registered by :func:`register`::

        spark.read.format("toon").option("blocksize", "64MiB").schema("id long, x double").load("in/")
    """

    @classmethod
    def name(cls) -> str:
        return "toon"

    def _plan(self, overrides: dict[str, Any] | None = None) -> list[RangeReader]:
        """A RangeReader per file (the header read, the types decided;
        ``overrides``: a schema given with ``.schema(...)``, by name)."""
        plan: list[RangeReader] | None = getattr(self, "_readers", None)
        if plan is not None and overrides is None:
            return plan
        path = self.options.get("path")
        if not path:
            raise ValueError(
                'spark.read.format("toon") needs one path: .load(path), a file, a glob or a directory '
                "(Spark passes no list of paths to a Python data source: give a glob, or union the reads)"
            )
        o = self.options
        options: dict[str, Any] = {
            "infer_schema_length": _int(o.get("infer_schema_length", "100")),
            "try_parse_dates": _flag(o.get("try_parse_dates"), False),
            "key_field": o.get("key_field", "key"),
            "strict": _flag(o.get("strict"), True),
        }
        if o.get("indent_size") is not None:
            options["indent_size"] = int(o["indent_size"])
        if overrides is not None:
            options.update(schema_overrides=overrides, columns=list(overrides))
        readers = plan_files([source for source, _ in expand_sources(path, hidden=False)], **options)
        if overrides is None:
            self._readers = readers
        return readers

    def schema(self) -> StructType:
        try:
            return from_arrow_schema(self._plan()[0].schema)
        except ToonDecodeError as e:
            raise rehinted(e, _HINT) from None

    def reader(self, schema: StructType) -> DataSourceReader:
        blocksize = parse_size(self.options.get("blocksize", _DEFAULT_BLOCKSIZE))
        target = _arrow_schema(schema)
        try:
            readers = self._plan()
            inferred = from_arrow_schema(readers[0].schema)
        except ToonDecodeError:
            inferred = None  # (the first rows refuse the inferred types: a given schema may take them)
        # (compared as Spark prints them: nullability or metadata changed on the way through the JVM
        # is not a schema given)
        if inferred is None or schema.simpleString() != inferred.simpleString():
            # A schema given with .schema(...): its types decode the cells (a
            # decimal from the digits written, a double from every number),
            # as schema_overrides do in read_table, rather than a cast of
            # the types inferred from the first rows.  By name, in its order.
            readers = self._plan({f.name: f.type for f in target})
        return _Reader(readers, target, blocksize)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceArrowWriter:
        path = self.options.get("path")
        if not path:
            raise ValueError('df.write.format("toon") needs a path: .save(path)')
        encode: dict[str, Any] = {"delimiter": self.options.get("delimiter", ",")}
        if self.options.get("key") is not None:
            encode["key"] = self.options["key"]
        if self.options.get("indent_size") is not None:
            encode["indent_size"] = int(self.options["indent_size"])
        return _Writer(path, _arrow_schema(schema), overwrite, encode)


def _arrow_schema(schema: StructType) -> pa.Schema:
    """Spark's Arrow form of a schema (string, not large_string, ...), its
    timestamps (instants) in UTC: written as ``...Z``, read from any offset."""
    return to_arrow_schema(schema, timezone="UTC")


class _Reader(DataSourceReader):  # type: ignore[misc, unused-ignore]  # (Any without pyspark's types)
    def __init__(self, readers: list[RangeReader], target: pa.Schema, blocksize: int) -> None:
        self.readers = readers
        self.target = target  # (each batch is cast to it)
        self.blocksize = blocksize

    def partitions(self) -> Sequence[InputPartition]:
        out: list[_Range] = []
        for reader in self.readers:
            ranges = reader.ranges(self.blocksize)
            out.extend(_Range(reader, s, e, k == len(ranges) - 1) for k, (s, e) in enumerate(ranges))
        return out

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, _Range)
        reader = partition.reader
        rows = 0
        try:
            for batch in reader.iter_batches(partition.start, partition.end):
                rows += batch.num_rows
                if batch.schema.names != self.target.names:  # (a given schema's order)
                    batch = batch.select(self.target.names)
                yield batch.cast(self.target)
            if partition.last and reader.strict:
                # (the rows before this range counted without decoding: their
                # own partitions decode and check them)
                reader.check_count(reader.count_rows(reader.header.rows_offset, partition.start) + rows)
        except ToonDecodeError as e:
            raise rehinted(e, _HINT) from None


@dataclass
class _Written(WriterCommitMessage):  # type: ignore[misc, unused-ignore]  # (Any without pyspark's types)
    staged: str | None  # the part file in the staging directory (None: an empty partition)
    partition: int
    rows: int


class _Writer(DataSourceArrowWriter):  # type: ignore[misc, unused-ignore]  # (Any without pyspark's types)
    def __init__(self, path: str, schema: pa.Schema, overwrite: bool, encode: dict[str, Any]) -> None:
        from .ranges import table_header

        table_header(schema, 0, **encode)  # (columns that make no table: said before any task)
        self.path = path
        self.schema = schema
        self.overwrite = overwrite
        self.encode = encode
        self.job = uuid.uuid4().hex[:12]
        self.staging = os.path.join(path, f".toon-staging-{self.job}")
        os.makedirs(self.staging, exist_ok=True)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> _Written:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        partition = ctx.partitionId() if ctx is not None else 0
        batches = (b for b in iterator if b.num_rows)
        first = next(batches, None)
        if first is None:
            return _Written(None, partition, 0)
        staged = os.path.join(self.staging, f"part-{partition:05d}-{self.job}.toon")
        # (timestamps come in the session's time zone: the same instants in UTC)
        cast = (b if b.schema == self.schema else b.cast(self.schema) for b in _chain(first, batches))
        rows = write_part(cast, staged, schema=self.schema, **self.encode)
        return _Written(staged, partition, rows)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        written = [m for m in messages if isinstance(m, _Written) and m.staged is not None]
        if self.overwrite:
            for name in os.listdir(self.path):
                full = os.path.join(self.path, name)
                if name.endswith(".toon") and os.path.isfile(full):
                    os.remove(full)
        if not written:  # (no rows at all: one empty table, so that the directory reads back)
            write_part([], os.path.join(self.path, f"part-00000-{self.job}.toon"), schema=self.schema, **self.encode)
        for m in written:
            assert m.staged is not None
            os.replace(m.staged, os.path.join(self.path, os.path.basename(m.staged)))
        shutil.rmtree(self.staging, ignore_errors=True)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)


def _chain(first: pa.RecordBatch, rest: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    yield first
    yield from rest

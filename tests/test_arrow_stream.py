"""Arrow interchange: ``iter_batches`` is a streaming ``pyarrow.RecordBatchReader``
(the Arrow C stream interface: pyarrow, Polars and DuckDB read it), and
``encode_arrow`` takes any Arrow PyCapsule producer, Polars frames included."""

from __future__ import annotations

import io
from typing import Any

import polars as pl
import pyarrow as pa
import pytest

import toonstream
import toonstream.arrow as ta
from toonstream import ToonDecodeError

ROWS = [{"id": i, "name": f"user{i}", "score": i / 4, "geo": {"x": i, "y": -i}} for i in range(1000)]
TEXT = toonstream.dumps({"users": ROWS})


class CountingFile(io.RawIOBase):
    """A binary file that counts the bytes read from it."""

    def __init__(self, data: bytes) -> None:
        self._f = io.BytesIO(data)
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        n = self._f.readinto(b)
        self.read_bytes += n
        return n


def test_iter_batches_is_a_record_batch_reader() -> None:
    reader = ta.iter_batches(TEXT.encode(), batch_size=300)
    assert isinstance(reader, pa.RecordBatchReader)
    assert reader.schema.names == ["id", "name", "score", "geo"]
    batches = list(reader)  # a plain iteration still gives RecordBatches
    assert all(type(b) is pa.RecordBatch for b in batches)
    assert [b.num_rows for b in batches] == [300, 300, 300, 100]
    assert pa.Table.from_batches(batches).to_pylist() == ROWS


@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_the_reader_streams() -> None:
    # (the reader takes plain rows over in steps of a few MiB: the input is several of them)
    rows = [{"id": i, "name": f"n{i}"} for i in range(1_000_000)]
    data = toonstream.dumps(rows).encode()
    f = CountingFile(data)
    reader = ta.iter_batches(io.BufferedReader(f, 1 << 16), batch_size=1000)
    assert f.read_bytes <= len(data) // 3  # the first batch (its schema), not the whole input
    first = reader.read_next_batch()
    assert first.num_rows == 1000 and first.column("id")[0].as_py() == 0
    assert f.read_bytes <= len(data) // 3
    assert sum(b.num_rows for b in reader) == 999_000
    assert f.read_bytes == len(data)


def test_pyarrow_reads_it_through_the_c_stream() -> None:
    reader = ta.iter_batches(TEXT.encode(), batch_size=128)
    assert hasattr(reader, "__arrow_c_stream__")
    again = pa.RecordBatchReader.from_stream(reader)
    assert again.read_all().to_pylist() == ROWS


def test_polars_reads_it() -> None:
    expected = ta.read_table(TEXT.encode())
    assert pl.from_arrow(ta.iter_batches(TEXT.encode(), batch_size=100)).equals(pl.from_arrow(expected))
    df = pl.DataFrame(ta.iter_batches(TEXT.encode(), batch_size=100))
    assert df.shape == (1000, 4) and df.to_dicts() == ROWS


def test_duckdb_reads_it() -> None:
    duckdb = pytest.importorskip("duckdb")
    reader = ta.iter_batches(TEXT.encode(), batch_size=100)
    con = duckdb.connect()
    con.register("users", reader)
    assert con.execute("select count(*), sum(id), max(geo.x) from users").fetchone() == (1000, 499500, 999)


def test_an_error_in_a_later_batch_is_the_decoders() -> None:
    text = TEXT.replace("\n  500,", "\n  oops,", 1).encode()
    reader = ta.iter_batches(text, batch_size=100)
    with pytest.raises(ToonDecodeError) as info:
        reader.read_all()
    assert info.value.code == "type_mismatch" and info.value.line == 502


def test_read_table_is_the_readers_table() -> None:
    t = ta.read_table(TEXT.encode(), batch_size=77)
    assert t.to_pylist() == ROWS and t.num_rows == 1000
    assert ta.read_table(b"[0]{a,b}:\n").num_rows == 0


# ------------------------------------------------------------------ encode_arrow of any producer


class StreamOnly:
    """A producer known only by ``__arrow_c_stream__`` (as another library's table)."""

    def __init__(self, table: pa.Table) -> None:
        self._t = table

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._t.__arrow_c_stream__(requested_schema)


class ArrayOnly:
    """A producer known only by ``__arrow_c_array__`` (a struct array: one batch)."""

    def __init__(self, batch: pa.RecordBatch) -> None:
        self._b = batch

    def __arrow_c_array__(self, requested_schema: Any = None) -> Any:
        return self._b.__arrow_c_array__(requested_schema)


FRAME = pl.DataFrame(
    {
        "id": [1, 2, 3, None],
        "name": ["Ada", "Bob, Jr.", None, "true"],
        "score": [1.5, -0.0, None, 1e22],
        "geo": [{"x": 1, "y": 2}, {"x": 3, "y": 4}, {"x": None, "y": 6}, {"x": 7, "y": 8}],
    }
)


def encoded(data: Any, **kw: Any) -> str:
    out = io.StringIO()
    ta.encode_arrow(data, out, **kw)
    return out.getvalue()


@pytest.mark.parametrize(
    "make",
    [
        lambda: FRAME,
        lambda: FRAME.lazy(),
        lambda: FRAME.lazy().filter(pl.col("id").is_not_null() | pl.col("id").is_null()),
        lambda: StreamOnly(FRAME.to_arrow()),
        lambda: ArrayOnly(pa.record_batch(FRAME.to_arrow().to_batches()[0])),
        lambda: FRAME.to_arrow().to_struct_array(),  # a ChunkedArray of structs: a C stream
    ],
    ids=["DataFrame", "LazyFrame", "LazyFrame-plan", "stream-only", "array-only", "struct-chunked-array"],
)
def test_encode_arrow_takes_any_producer(make: Any) -> None:
    expected = toonstream.dumps(FRAME.to_dicts())
    assert encoded(make()) == expected
    assert encoded(make(), key="rows") == toonstream.dumps({"rows": FRAME.to_dicts()})


def test_encode_arrow_of_a_big_lazy_frame_in_batches() -> None:
    lf = pl.LazyFrame({"a": range(10_000), "b": [f"s{i}" for i in range(10_000)]})
    assert encoded(lf, batch_size=999) == toonstream.dumps(lf.collect().to_dicts())


def test_round_trip_through_the_reader() -> None:
    assert encoded(ta.iter_batches(TEXT.encode(), batch_size=64), key="users") == TEXT


def test_encode_arrow_refuses_other_objects() -> None:
    with pytest.raises(TypeError, match="__arrow_c_stream__"):
        encoded(42)

"""toonstream.dask on a two-worker LocalCluster (separate processes):
read_toon by byte ranges against the single-process read_table, in values
and dtypes; to_toon per partition and as one file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import pytest

pytestmark = pytest.mark.xdist_group("dask")  # (one worker process starts the cluster, once)

pytest.importorskip("dask.dataframe", reason="toonstream.dask needs the dask extra: pip install 'toonstream[dask]'")
distributed = pytest.importorskip("distributed", reason="the cluster tests need distributed (the dask extra)")
pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")

import toonstream.arrow as ta  # noqa: E402
from toonstream import ToonDecodeError, ToonEncodeError  # noqa: E402
import dask.dataframe as dd  # noqa: E402

from toonstream.dask import read_toon, to_toon  # noqa: E402


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """Two single-threaded worker processes: every partition is pickled
    to another process, read there, and sent back."""
    with distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None, memory_limit=None
    ) as cluster, distributed.Client(cluster) as c:
        yield c


def _rows(n: int, *, crlf: bool = False, comments: bool = False) -> bytes:
    """n rows with quoted cells holding the delimiter, nulls, floats,
    keyed-looking colons inside quotes; comments every 7 rows if asked."""
    out = [f"[{n}]{{id,name,score,ok}}:"]
    for i in range(n):
        if comments and i % 7 == 3:
            out.append("# a comment" if i % 2 else "  # an indented comment")
        name = f'"n,{i}:x"' if i % 3 == 0 else f"n{i}"
        score = "null" if i % 5 == 0 else f"{i}.5"
        out.append(f"  {i},{name},{score},{'true' if i % 2 else 'false'}")
    nl = "\r\n" if crlf else "\n"
    return (nl.join(out) + nl).encode()


def _expected(path: str, **options: Any) -> Any:
    """read_table's table as the partitions have it: ArrowDtype columns,
    but strings as pandas' string dtype where Dask's convert-string (its
    default) turns them into that."""
    from dask.dataframe.utils import pyarrow_strings_enabled

    want = ta.read_table(path, **options).to_pandas(types_mapper=pd.ArrowDtype)
    if pyarrow_strings_enabled():
        strings = [c for c, t in want.dtypes.items() if t == pd.ArrowDtype(pa.large_string())]
        want = want.astype({c: pd.StringDtype("pyarrow") for c in strings})
    return want


def _check(ddf: Any, want: Any) -> None:
    _check_all([ddf], want)


def _check_all(ddfs: list[Any], want: Any) -> None:
    """Each frame (computed together: one round trip) equals ``want``."""
    import dask

    for ddf, got in zip(ddfs, dask.compute(*ddfs)):
        got = got.reset_index(drop=True)
        assert list(got.dtypes) == list(want.dtypes)
        assert list(ddf.dtypes) == list(want.dtypes)  # (the meta, before computing)
        pd.testing.assert_frame_equal(got, want)


def test_many_ranges_match_the_whole_file(tmp_path: Path, client: Any) -> None:
    path = tmp_path / "t.toon"
    path.write_bytes(_rows(120, comments=True))
    ddf = read_toon(str(path), blocksize=97)
    assert ddf.npartitions > 25
    _check(ddf, _expected(str(path)))


def test_every_boundary_inside_a_quoted_cell(tmp_path: Path, client: Any) -> None:
    """Ranges cut at each byte of a quoted cell holding the delimiter."""
    data = _rows(12)
    path = tmp_path / "q.toon"
    path.write_bytes(data)
    want = _expected(str(path))
    header = data.index(b"\n") + 1
    at = data.index(b'"n,3:x"') - header
    # The first cut lands on the quote, the delimiter and the colon inside
    # the cell, and on the closing quote (every byte: see test_ranges).
    _check_all([read_toon(str(path), blocksize=b) for b in (at, at + 2, at + 3, at + 5, at + 6)], want)


def test_crlf_and_comments_at_boundaries(tmp_path: Path, client: Any) -> None:
    data = _rows(40, crlf=True, comments=True)
    path = tmp_path / "c.toon"
    path.write_bytes(data)
    want = _expected(str(path))
    # Cuts right before, inside and after comment lines.
    sizes = (data.index(b"# a") - 2, data.index(b"# a") + 1, data.index(b"  # an") + 3, 31)
    _check_all([read_toon(str(path), blocksize=b) for b in sizes], want)


def test_glob_of_files_and_projection(tmp_path: Path, client: Any) -> None:
    for k in range(3):
        (tmp_path / f"p{k}.toon").write_bytes(_rows(20 + k))
    ddf = read_toon(str(tmp_path / "*.toon"), blocksize=128)
    parts = [_expected(str(tmp_path / f"p{k}.toon")) for k in range(3)]
    want = pd.concat(parts, ignore_index=True)
    _check(ddf, want)
    _check(ddf[["score", "id"]], want[["score", "id"]])
    _check(read_toon(str(tmp_path / "*.toon"), columns=["name"], blocksize=64), want[["name"]])


def test_options_reach_every_partition(tmp_path: Path, client: Any) -> None:
    path = tmp_path / "t.toon"
    path.write_bytes(_rows(50))
    options = {"schema_overrides": {"id": pa.float64()}, "infer_schema_length": 3}
    _check(read_toon(str(path), blocksize=100, **options), _expected(str(path), **options))


def test_wrong_declared_count_names_the_file(tmp_path: Path, client: Any) -> None:
    data = _rows(30).replace(b"[30]", b"[31]", 1)
    path = tmp_path / "wrong.toon"
    path.write_bytes(data)
    for blocksize in (64, None):
        with pytest.raises(ToonDecodeError) as e:
            read_toon(str(path), blocksize=blocksize).compute()
        assert e.value.code == "count_mismatch" and str(path) in str(e.value)
        assert "declared 31 rows, found 30" in str(e.value)


def test_a_bad_row_names_the_file_and_its_line(tmp_path: Path, client: Any) -> None:
    data = _rows(30).replace(b"  17,n17,17.5,true", b"  17,n17,17.5", 1)
    path = tmp_path / "bad.toon"
    path.write_bytes(data)
    with pytest.raises(ToonDecodeError) as whole:
        ta.read_table(str(path))
    with pytest.raises(ToonDecodeError) as e:
        read_toon(str(path), blocksize=50).compute()
    assert (e.value.code, e.value.line) == (whole.value.code, whole.value.line) == ("width_mismatch", 19)
    assert str(path) in str(e.value)


def test_files_with_other_columns_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a.toon").write_bytes(b"[1]{a}:\n  1\n")
    (tmp_path / "b.toon").write_bytes(b"[1]{b}:\n  1\n")
    with pytest.raises(ValueError, match="b.toon"):
        read_toon(str(tmp_path / "*.toon"))


def test_to_toon_a_file_per_partition(tmp_path: Path, client: Any) -> None:
    src = tmp_path / "t.toon"
    src.write_bytes(_rows(60))
    ddf = read_toon(str(src), blocksize=300)
    files = to_toon(ddf, tmp_path / "out")
    assert files is not None and len(files) == ddf.npartitions
    sizes = ddf.map_partitions(len).compute().tolist()
    for f, n in zip(files, sizes):
        assert ta.read_table(f).num_rows == n  # each a valid TOON table
    back = read_toon(str(tmp_path / "out" / "*.toon"), blocksize=100)
    _check(back, _expected(str(src)))


def test_to_toon_single_file(tmp_path: Path, client: Any) -> None:
    src = tmp_path / "t.toon"
    src.write_bytes(_rows(60))
    ddf = read_toon(str(src), blocksize=300)
    out = tmp_path / "one.toon"
    assert to_toon(ddf, out, single_file=True) is None
    # One header with the summed count, the rows in partition order: the
    # bytes encode_arrow writes for the whole table.
    import io

    whole = io.BytesIO()
    ta.encode_arrow(ta.read_table(str(src)), whole)
    assert out.read_bytes() == whole.getvalue()
    assert sorted(os.listdir(tmp_path)) == ["one.toon", "t.toon"]  # (no temporary left)


def test_to_toon_single_file_with_empty_partitions(tmp_path: Path, client: Any) -> None:
    df = pd.DataFrame({"a": [1, 2, 3, 4], "b": ["x", "y,z", "w", "v"]})
    import dask.dataframe as dd

    ddf = dd.from_pandas(df, npartitions=4)
    ddf = ddf[ddf["a"] % 2 == 0]  # (partitions 0 and 2 empty)
    out = tmp_path / "even.toon"
    to_toon(ddf, out, single_file=True, key="rows")
    assert out.read_text() == 'rows[2]{a,b}:\n  2,"y,z"\n  4,v'
    files = to_toon(ddf, tmp_path / "dir")
    assert files is not None
    assert [ta.read_table(f).num_rows for f in files] == [0, 1, 0, 1]
    # The empty parts are one-table files with a [0] header: the directory reads back (the
    # ranges' header reader refused a header that is the file's last line, with no line end).
    back = read_toon(str(tmp_path / "dir")).compute().reset_index(drop=True)
    assert back.to_dict("list") == {"a": [2, 4], "b": ["y,z", "v"]}
    none = tmp_path / "none.toon"
    to_toon(ddf[ddf["a"] > 9], none, single_file=True)
    assert none.read_text() == "[0]{a,b}:"
    empty = read_toon(str(none)).compute()
    assert list(empty.columns) == ["a", "b"] and len(empty) == 0


def test_a_directory_read_leaves_out_hidden_names(tmp_path: Path, client: Any) -> None:
    """A crashed writer's staging or spool (names starting with "." or "_") is not data."""
    d = tmp_path / "out"
    (d / ".toon-staging-1").mkdir(parents=True)
    (d / "part.0.toon").write_bytes(b"[2]{a}:\n  1\n  2\n")
    (d / ".toon-staging-1" / "part-0.toon").write_bytes(b"[1]{a}:\n  9\n")
    (d / "_tmp.toon").write_bytes(b"[1]{a}:\n  8\n")
    (d / ".x.toon").write_bytes(b"[1]{a}:\n  7\n")
    assert read_toon(str(d)).compute()["a"].tolist() == [1, 2]
    assert sorted(read_toon(str(d / "**" / "*.toon")).compute()["a"].tolist()) == [1, 2, 7, 8, 9]  # (a glob says)


def test_to_toon_refuses_column_names_that_are_not_strings(tmp_path: Path) -> None:
    import dask.dataframe as dd

    ddf = dd.from_pandas(pd.DataFrame({0: [1, 2], "b": [3, 4]}), npartitions=1)
    for single in (False, True):
        with pytest.raises(ToonEncodeError, match="column names must be strings, as object keys, got int 0"):
            to_toon(ddf, tmp_path / "o", single_file=single)
    assert not (tmp_path / "o").exists()  # (said before any work)


def test_to_toon_single_file_failure_leaves_the_destination(tmp_path: Path, client: Any) -> None:
    import dask.dataframe as dd

    out = tmp_path / "keep.toon"
    out.write_text("[1]{a}:\n  0")

    def fail_late(part: Any) -> Any:
        if (part["a"] == 5).any():
            raise RuntimeError("partition failed")
        return part

    ddf = dd.from_pandas(pd.DataFrame({"a": range(6)}), npartitions=3)
    with pytest.raises(RuntimeError, match="partition failed"):
        to_toon(ddf.map_partitions(fail_late), out, single_file=True)
    assert out.read_text() == "[1]{a}:\n  0"
    assert sorted(os.listdir(tmp_path)) == ["keep.toon"]


def test_not_a_table(tmp_path: Path) -> None:
    import dask.dataframe as dd

    df = pd.DataFrame({"a": pd.Series([[1], [2]], dtype=pd.ArrowDtype(pa.list_(pa.int64())))})
    with pytest.raises(ToonEncodeError, match="do not make a TOON table"):
        to_toon(dd.from_pandas(df, npartitions=1), tmp_path / "x.toon", single_file=True)


def test_blocksize_text() -> None:
    from toonstream.ranges import parse_size

    assert (parse_size("64MiB"), parse_size("1 kb"), parse_size(5), parse_size("2.5MB")) == (64 << 20, 1000, 5, 2_500_000)
    for bad in ("lots", "-1MB", "MB", "1.2.3kb"):
        with pytest.raises(ValueError):
            parse_size(bad)


def test_files_typed_as_one_table(tmp_path: Path, client: Any) -> None:
    """Several files are one table, typed as toonstream.polars.read_toon
    types a list of files: by the first file with rows (a column of nulls
    only there is String, not Null: later files go on with it)."""
    import polars as pl

    import toonstream.polars as tp

    files = {
        "a.toon": b"[0]{x,y}:\n",
        "b.toon": b"[2]{x,y}:\n  1,null\n  2,null\n",
        "c.toon": b"[2]{x,y}:\n  3,three\n  4,null\n",
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    want = tp.read_toon([str(tmp_path / n) for n in files])
    assert want.schema == pl.Schema({"x": pl.Int64, "y": pl.String})
    got = read_toon(str(tmp_path / "*.toon"), blocksize=8).compute()
    assert got["x"].tolist() == want["x"].to_list()
    assert [None if pd.isna(v) else v for v in got["y"]] == want["y"].to_list()
    assert str(got["x"].dtype) == "int64[pyarrow]"


def test_count_spread_over_the_cluster(tmp_path: Path, client: Any) -> None:
    """The last range's count of the rows before it runs as tasks on the
    cluster (tiny count blocks here, set on the workers): right counts pass,
    a wrong one is reported with the file."""
    import toonstream.dask as tdask

    def tiny() -> None:
        import toonstream.dask as worker_side

        worker_side._COUNT_BLOCK = 150

    client.run(tiny)
    try:
        good = tmp_path / "good.toon"
        good.write_bytes(_rows(80, comments=True))
        _check(read_toon(str(good), blocksize=400), _expected(str(good)))
        bad = tmp_path / "bad.toon"
        bad.write_bytes(_rows(80).replace(b"[80]", b"[79]", 1))
        with pytest.raises(ToonDecodeError, match="declared 79 rows, found 80") as e:
            read_toon(str(bad), blocksize=400).compute()
        assert str(bad) in str(e.value)
    finally:
        block = tdask._COUNT_BLOCK

        def restore() -> None:
            import toonstream.dask as worker_side

            worker_side._COUNT_BLOCK = block

        client.run(restore)


@pytest.mark.parametrize("single_file", [False, True])
def test_to_toon_refuses_a_null_struct(tmp_path: Path, single_file: bool) -> None:
    """A null struct makes a partition's rows list items, which no range read
    takes as a table part: refused in the task, in either layout (the
    multi-file layout wrote such files before, and read_toon refused them)."""
    import dask
    import dask.dataframe as dd

    st = pa.struct([("a", pa.int64()), ("b", pa.string())])
    df = pd.DataFrame({
        "id": [1, 2, 3, 4],
        "st": pd.Series([{"a": 2, "b": "x"}, None, {"a": 4, "b": "z"}, {"a": None, "b": None}], dtype=pd.ArrowDtype(st)),
    })
    out = tmp_path / ("one.toon" if single_file else "out")
    with dask.config.set(scheduler="sync"):
        with pytest.raises(ToonEncodeError, match="no null structs"):
            to_toon(dd.from_pandas(df, npartitions=2), out, single_file=single_file)
        # (the failing partition's file is not made; in a directory, the other partitions' may be)
        assert not out.exists() if single_file else not (out / "part.0.toon").exists()
        # a struct whose fields are null is a table's nulls, not a null struct
        to_toon(dd.from_pandas(df.iloc[[0, 2, 3]], npartitions=2), tmp_path / "ok")
        back = read_toon(str(tmp_path / "ok" / "*.toon")).compute()
    assert back["id"].tolist() == [1, 3, 4]


def test_parts_are_named_to_read_back_in_order(tmp_path: Path) -> None:
    # part.{i}.toon, i zero-padded to the widest (as Dask names its parts): with more than
    # ten partitions a directory read sorts them in partition order (part.10 was before part.2).
    ddf = dd.from_pandas(pd.DataFrame({"id": range(120)}), npartitions=12)
    files = to_toon(ddf, tmp_path / "out")
    assert [os.path.basename(f) for f in files] == [f"part.{i:02d}.toon" for i in range(12)]
    assert read_toon(str(tmp_path / "out")).compute()["id"].tolist() == list(range(120))

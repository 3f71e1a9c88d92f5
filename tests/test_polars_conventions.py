"""toonstream.polars follows Polars' reader and writer conventions: each
behaviour is checked against the Polars call it imitates (``pl.read_csv`` /
``pl.scan_csv`` on the same table written as CSV, ``write_csv``)."""

from __future__ import annotations

import os
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable

import pytest

pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")
from polars.testing import assert_frame_equal  # noqa: E402

import toonstream  # noqa: E402
import toonstream.arrow as ta  # noqa: E402
import toonstream.polars as tp  # noqa: E402
from toonstream import ToonDecodeError  # noqa: E402
from toonstream import _frames  # noqa: E402

# One table split over files (relative path -> rows of (id, name, score)),
# with a hidden file, a hidden directory, an underscore name and a
# subdirectory: Polars' path expansion reads them all, sorted by path.
FILES = {
    "f2": [(1, "x", 0.5), (2, "y", 1.5)],
    "f1": [(3, "z", 2.5)],
    "sub/f0": [(9, "q", 3.5), (10, "r", 4.5)],
    ".hidden": [(7, "h", 5.5)],
    ".hd/x": [(6, "hd", 6.5)],
    "_under": [(8, "u", 7.5)],
}


def _toon(rows: list[tuple[Any, ...]]) -> str:
    return f"[{len(rows)}]{{id,name,score}}:\n" + "".join(f"  {i},{n},{s}\n" for i, n, s in rows)


def _csv(rows: list[tuple[Any, ...]]) -> str:
    return "id,name,score\n" + "".join(f"{i},{n},{s}\n" for i, n, s in rows)


@pytest.fixture()
def trees(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The same files as TOON under toon/ and as CSV under csv/; the
    working directory is tmp_path (relative paths as users give them)."""
    for kind, text, ext in (("toon", _toon, ".toon"), ("csv", _csv, ".csv")):
        for name, rows in FILES.items():
            p = tmp_path / kind / (name + ext)
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text(rows))
    monkeypatch.chdir(tmp_path)
    return Path("toon"), Path("csv")


def _same(toon: Any, csv: Any, path_column: str | None = None) -> None:
    """Equal frames, file path columns compared with the extensions swapped."""
    if path_column is not None and path_column in csv.columns:
        csv = csv.with_columns(
            pl.col(path_column).str.replace(r"^(\./)?csv/", "${1}toon/").str.replace(r"\.csv$", ".toon")
        )
    assert_frame_equal(toon, csv)


# ---------------------------------------------------------------- sources


@pytest.mark.parametrize(
    "toon_source, csv_source",
    [
        ("toon", "csv"),  # a directory: every file below it, at any depth
        ("toon/", "csv/"),
        (Path("toon"), Path("csv")),
        ("toon/*.toon", "csv/*.csv"),  # '*' matches hidden names too, not subdirectories
        ("toon/**/*.toon", "csv/**/*.csv"),
        ("./toon/f?.toon", "./csv/f?.csv"),  # a glob's paths: without './', '//' as '/'
        ("./toon//sub/*", "./csv//sub/*"),
        ("./toon/sub", "./csv/sub"),  # a directory's: as given
        ("toon/f[12].toon", "csv/f[12].csv"),
        (["toon/f2.toon", "toon/f1.toon", "toon/f2.toon"], ["csv/f2.csv", "csv/f1.csv", "csv/f2.csv"]),  # as given
        (["toon/sub", "toon/f*.toon"], ["csv/sub", "csv/f*.csv"]),  # a list expands each item
    ],
)
def test_sources_expand_and_order_as_polars(trees: Any, toon_source: Any, csv_source: Any) -> None:
    got = tp.read_toon(toon_source, include_file_paths="path")
    want = pl.read_csv(csv_source, include_file_paths="path")
    assert got.height > 1
    _same(got, want, "path")
    # the scan reads the same rows
    _same(tp.scan_toon(toon_source, include_file_paths="path").collect(), want, "path")


def test_directory_listing_is_sorted_recursive_and_includes_hidden(trees: Any) -> None:
    paths = tp.read_toon("toon", include_file_paths="p")["p"].unique(maintain_order=True).to_list()
    assert paths == [
        "toon/.hd/x.toon", "toon/.hidden.toon", "toon/_under.toon", "toon/f1.toon", "toon/f2.toon", "toon/sub/f0.toon",
    ]


def test_directory_with_mixed_extensions_is_refused_as_polars_does(trees: Any) -> None:
    Path("toon/notes.txt").write_text("x")
    Path("csv/notes.txt").write_text("x")
    with pytest.raises(pl.exceptions.InvalidOperationError):
        pl.read_csv("csv")
    with pytest.raises(pl.exceptions.InvalidOperationError, match="glob"):
        tp.read_toon("toon")
    # a glob says which files are meant
    assert tp.read_toon("toon/**/*.toon").height == 8


def test_glob_false_takes_the_path_literally(trees: Any) -> None:
    with pytest.raises(FileNotFoundError):
        pl.read_csv("csv/f*.csv", glob=False)
    with pytest.raises(FileNotFoundError):
        tp.read_toon("toon/f*.toon", glob=False)
    Path("toon/f*.toon").write_text(_toon([(5, "star", 0.0)]))
    assert tp.read_toon("toon/f*.toon", glob=False)["name"].to_list() == ["star"]


def test_no_match_and_missing_files(trees: Any) -> None:
    with pytest.raises(FileNotFoundError):
        tp.read_toon("toon/nothing*.toon")
    with pytest.raises(FileNotFoundError):
        tp.read_toon(["toon/f1.toon", "toon/missing.toon"])
    with pytest.raises(ValueError):
        tp.read_toon([])


def test_home_directory_is_expanded(trees: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", os.getcwd())
    got = tp.read_toon("~/toon/f1.toon", include_file_paths="p")
    want = pl.read_csv("~/csv/f1.csv", include_file_paths="p")
    assert got["p"].to_list() == [os.path.join(os.getcwd(), "toon/f1.toon")]
    assert want["p"].to_list() == [os.path.join(os.getcwd(), "csv/f1.csv")]
    assert tp.read_toon("~/toon/f*.toon").height == 3


def test_bytes_and_file_objects_are_in_memory_sources(trees: Any) -> None:
    import io

    data = _toon(FILES["f2"]).encode()
    want = pl.read_csv(_csv(FILES["f2"]).encode(), include_file_paths="p")
    _same(tp.read_toon(data, include_file_paths="p"), want)
    assert tp.read_toon(io.BytesIO(data), include_file_paths="p")["p"].to_list() == ["in-mem", "in-mem"]
    both = tp.read_toon([data, _toon(FILES["f1"]).encode()], row_index_name="i")
    assert both["id"].to_list() == [1, 2, 3] and both["i"].to_list() == [0, 1, 2]


# ---------------------------------------------------------------- row index, file paths, n_rows


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(row_index_name="i"),
        dict(row_index_name="i", row_index_offset=10),
        dict(row_index_name="i", include_file_paths="p"),
        dict(row_index_name="i", include_file_paths="p", n_rows=4),
        dict(include_file_paths="p", n_rows=1),
        dict(n_rows=0),
        dict(n_rows=100),
    ],
)
def test_row_index_file_paths_and_n_rows_as_read_csv(trees: Any, kwargs: dict[str, Any]) -> None:
    got = tp.read_toon("toon", **kwargs)
    want = pl.read_csv("csv", **kwargs)
    if kwargs.get("n_rows") == 0:  # no rows seen: no types (Polars' CSV header gives String)
        assert got.columns == want.columns and got.height == 0
        return
    _same(got, want, "p")
    if "row_index_name" in kwargs:
        assert got.schema["i"] == pl.get_index_type() and got.columns[0] == "i"
    if "include_file_paths" in kwargs:
        assert got.schema["p"] == pl.String and got.columns[-1] == "p"


@pytest.mark.parametrize(
    "query",
    [
        lambda lf: lf,
        lambda lf: lf.filter(pl.col("score") > 2).select("name", "i"),
        lambda lf: lf.filter(pl.col("i") >= 3).select("p"),
        lambda lf: lf.select("p", "i").head(3),
        lambda lf: lf.head(2),
        lambda lf: lf.slice(3, 2),
        lambda lf: lf.filter(pl.col("p").str.contains("sub")).head(1),
        lambda lf: lf.select(pl.len()),
        lambda lf: lf.select(pl.col("i").max()),
    ],
)
@pytest.mark.parametrize("n_rows", [None, 5])
def test_scan_queries_as_scan_csv(trees: Any, query: Callable[[Any], Any], n_rows: int | None) -> None:
    opts: dict[str, Any] = dict(row_index_name="i", row_index_offset=1, include_file_paths="p", n_rows=n_rows)
    got = query(tp.scan_toon("toon", **opts)).collect()
    want = query(pl.scan_csv("csv", **opts)).collect()
    _same(got, want, "p")
    assert_frame_equal(tp.scan_toon("toon", **opts).collect(), tp.read_toon("toon", **opts))


@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_n_rows_stops_reading(tmp_path: Path) -> None:
    good = tmp_path / "good.toon"
    good.write_text(_toon(FILES["f2"]))
    # A broken row past the first chunks: reading the first rows never meets it.
    n = 3 * _frames.CHUNK // 10
    bad = tmp_path / "bad.toon"
    bad.write_text(f"[{n + 1}]{{id,name,score}}:\n" + "  1,a,0.5\n" * n + "  2,b\n")
    assert os.path.getsize(bad) > 2 * _frames.CHUNK
    with pytest.raises(ToonDecodeError, match="cells"):
        tp.read_toon(bad)
    assert tp.read_toon(bad, n_rows=1).height == 1
    assert tp.scan_toon(bad, n_rows=1).collect().height == 1
    assert tp.scan_toon(bad).head(1).collect().height == 1
    # later sources are not opened once n_rows rows are read
    missing = tmp_path / "missing.toon"
    assert tp.read_toon([good, missing], n_rows=2).height == 2
    assert tp.scan_toon([good, missing], n_rows=2).collect().height == 2
    assert tp.scan_toon([good, missing]).head(2).collect().height == 2
    with pytest.raises(FileNotFoundError):
        tp.read_toon([good, missing], n_rows=3)


def test_names_that_collide_are_refused_as_polars_does(trees: Any) -> None:
    cases: list[dict[str, Any]] = [{"row_index_name": "name"}, {"include_file_paths": "id"}]
    for kwargs in cases:
        with pytest.raises(pl.exceptions.DuplicateError):
            pl.read_csv("csv/f1.csv", **kwargs)
        with pytest.raises(pl.exceptions.DuplicateError):
            tp.read_toon("toon/f1.toon", **kwargs)
        with pytest.raises(pl.exceptions.ComputeError, match="DuplicateError"):  # at collect (see scan_toon)
            tp.scan_toon("toon/f1.toon", **kwargs).collect()
    with pytest.raises(ValueError):
        pl.read_csv("csv/f1.csv", row_index_name="i", row_index_offset=-1)
    with pytest.raises(ValueError):
        tp.read_toon("toon/f1.toon", row_index_name="i", row_index_offset=-1)


# ---------------------------------------------------------------- columns


@pytest.mark.parametrize(
    "columns",
    [
        [1],
        [2, 0],
        [-1],
        [3],  # the file path column counts as the last one
        ["score", "p"],
        ["p", "id"],
        ["name"],  # the file path column is dropped when not chosen
    ],
)
def test_columns_by_name_or_index_as_read_csv(trees: Any, columns: list[Any]) -> None:
    kwargs: dict[str, Any] = dict(columns=columns, include_file_paths="p", row_index_name="i")
    got = tp.read_toon("toon", **kwargs)
    want = pl.read_csv("csv", **kwargs)
    _same(got, want, "p")


def test_bad_columns_are_refused_as_read_csv_does(trees: Any) -> None:
    for columns, error in (([5], pl.exceptions.ColumnNotFoundError), (["nope"], pl.exceptions.ColumnNotFoundError),
                           (["id", "id"], ValueError)):
        with pytest.raises(error):
            pl.read_csv("csv/f1.csv", columns=columns)
        with pytest.raises(error):
            tp.read_toon("toon/f1.toon", columns=columns)
    with pytest.raises(TypeError):
        tp.read_toon("toon/f1.toon", columns=["id", 1])


def test_columns_by_index_on_a_keyed_table() -> None:
    data = b"[2:]{age}:\n  ada: 36\n  bob: 41\n"
    assert tp.read_toon(data, columns=[1]).rows() == [(36,), (41,)]
    assert tp.read_toon(data, columns=[0], key_field="who").rows() == [("ada",), ("bob",)]
    assert ta.read_table(data, columns=["age"]).column_names == ["age"]


# ---------------------------------------------------------------- several sources: one schema


def test_sources_must_have_the_same_columns(tmp_path: Path) -> None:
    (tmp_path / "a.toon").write_text("[1]{id,name}:\n  1,x\n")
    (tmp_path / "b.toon").write_text("[1]{name,id}:\n  y,2\n")
    (tmp_path / "a.csv").write_text("id,name\n1,x\n")
    (tmp_path / "b.csv").write_text("name,id\ny,2\n")
    with pytest.raises(pl.exceptions.PolarsError):  # Polars: a ComputeError
        pl.read_csv([tmp_path / "a.csv", tmp_path / "b.csv"])
    with pytest.raises(pl.exceptions.SchemaError, match="same columns"):
        tp.read_toon([tmp_path / "a.toon", tmp_path / "b.toon"])
    (tmp_path / "c.toon").write_text("[1]{id,name,extra}:\n  2,y,z\n")
    with pytest.raises(pl.exceptions.SchemaError, match="c.toon"):
        tp.read_toon([tmp_path / "a.toon", tmp_path / "c.toon"], columns=["id"])
    (tmp_path / "d.toon").write_text("[1]{id,name{first}}:\n  2,y\n")
    with pytest.raises(pl.exceptions.SchemaError):
        tp.read_toon([tmp_path / "a.toon", tmp_path / "d.toon"])


def test_types_come_from_the_first_source(tmp_path: Path) -> None:
    (tmp_path / "a.toon").write_text("[1]{id,v}:\n  1,2\n")
    (tmp_path / "b.toon").write_text("[2]{id,v}:\n  2,3\n  3,x\n")
    with pytest.raises(ToonDecodeError) as info:
        tp.read_toon([tmp_path / "a.toon", tmp_path / "b.toon"])
    assert info.value.code == "type_mismatch" and info.value.line == 3
    if hasattr(info.value, "__notes__"):
        assert any("b.toon" in n for n in info.value.__notes__)
    # an override (or a longer inference in the first file) is the fix
    df = tp.read_toon([tmp_path / "a.toon", tmp_path / "b.toon"], schema_overrides={"v": pl.String})
    assert df["v"].to_list() == ["2", "3", "x"]
    # a column of nulls only in the first source is String (more may come), as in a longer table
    (tmp_path / "nulls.toon").write_text("[1]{id,v}:\n  0,null\n")
    df = tp.read_toon([tmp_path / "nulls.toon", tmp_path / "a.toon"])
    assert df.schema == pl.Schema({"id": pl.Int64, "v": pl.String}) and df["v"].to_list() == [None, "2"]
    assert tp.read_toon(tmp_path / "nulls.toon").schema["v"] == pl.Null  # the whole table seen
    # a source without rows does not decide the types
    (tmp_path / "empty.toon").write_text("[0]{id,v}:\n")
    df = tp.read_toon([tmp_path / "empty.toon", tmp_path / "a.toon"])
    assert df.schema == pl.Schema({"id": pl.Int64, "v": pl.Int64}) and df.height == 1


# ---------------------------------------------------------------- scan_toon: laziness


@pytest.fixture()
def readers(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The FrameReaders made (each reads its source)."""
    made: list[Any] = []
    real = _frames.FrameReader.__init__

    def spy(self: Any, source: Any, **kw: Any) -> None:
        made.append(source)
        real(self, source, **kw)

    monkeypatch.setattr(_frames.FrameReader, "__init__", spy)
    return made


def test_scan_does_no_io_until_the_schema_is_needed(trees: Any, readers: list[Any], monkeypatch: Any) -> None:
    listed: list[Any] = []
    real_walk = os.walk

    def walk(*a: Any, **k: Any) -> Any:
        listed.append(a)
        return real_walk(*a, **k)

    monkeypatch.setattr(os, "walk", walk)
    lf = tp.scan_toon("toon", include_file_paths="p")
    query = lf.filter(pl.col("id") > 1).select("name", "p")
    assert readers == [] and listed == []
    schema = lf.collect_schema()
    assert schema == pl.Schema({"id": pl.Int64, "name": pl.String, "score": pl.Float64, "p": pl.String})
    assert len(listed) == 1 and len(readers) == 1  # the probe: the first file's first rows
    lf.collect_schema()
    query.explain()
    assert len(readers) == 1  # asked again: not probed again
    query.collect()
    assert len(listed) == 1  # the directory is listed once


def test_scan_missing_file_fails_at_collect(tmp_path: Path) -> None:
    missing = tmp_path / "missing.toon"
    lf = tp.scan_toon(missing)  # no error yet
    # Polars turns an exception of a plugin's schema callable into a
    # ComputeError that names it.
    with pytest.raises(pl.exceptions.ComputeError, match="FileNotFoundError"):
        lf.collect()
    missing.write_text(_toon(FILES["f1"]))
    assert lf.collect()["id"].to_list() == [3]  # (the failed probe is tried again)
    # with the schema given, nothing is probed: the read's own error at collect
    lf = tp.scan_toon(tmp_path / "gone.toon", schema={"id": pl.Int64})
    with pytest.raises(FileNotFoundError):
        lf.collect()
    with pytest.raises(pl.exceptions.ComputeError, match="FileNotFoundError"):
        tp.scan_toon(tmp_path / "none*.toon").collect()


@pytest.mark.parametrize(
    "doc, code, column",
    [
        (b"[3]{a,b}:\n  1,2\n  2,3\n  3,x\n", "type_mismatch", "b"),  # in the probed rows, past the window
        (b"[3]{a,b}:\n  1,2\n  2,3\n  3\n", "width_mismatch", "a"),
        (b"[2:]{key,v}:\n  a: 1,2\n  b: 3,4\n", "name_collision", "v"),  # in the header
    ],
)
def test_scan_errors_once_the_columns_are_known_are_raised_as_they_are(doc: bytes, code: str, column: str) -> None:
    with pytest.raises(ToonDecodeError) as want:
        tp.read_toon(doc, infer_schema_length=2)
    lf = tp.scan_toon(doc, infer_schema_length=2, row_index_name="i")
    for query in (lf, lf.select(column), lf.filter(pl.col(column).is_not_null())):
        with pytest.raises(ToonDecodeError) as got:
            query.collect()
        assert (got.value.code, got.value.line, got.value.column) == (want.value.code, want.value.line, want.value.column)
        assert got.value.code == code
    if code == "type_mismatch":  # the rows before the bad one read as read_toon reads them
        assert_frame_equal(lf.head(2).collect(), tp.read_toon(doc, infer_schema_length=2, n_rows=2, row_index_name="i"))


def test_scan_errors_before_the_columns_are_known_name_the_error() -> None:
    # Polars wraps an IO plugin's schema error in a ComputeError naming it.
    for doc in (b"", b"a: 1\n", b"[2]{a,b:\n  1,2\n"):
        with pytest.raises(ToonDecodeError):
            tp.read_toon(doc)
        with pytest.raises(pl.exceptions.ComputeError, match="ToonDecodeError"):
            tp.scan_toon(doc).collect()
        # with the schema given there is no probe: the read's error as it is
        with pytest.raises(ToonDecodeError):
            tp.scan_toon(doc, schema={"a": pl.Int64, "b": pl.Int64}).collect()


def test_scan_with_schema_skips_the_probe(trees: Any, readers: list[Any]) -> None:
    schema = {"name": pl.String, "id": pl.Int32, "score": pl.Float64}
    lf = tp.scan_toon("toon/f*.toon", schema=schema, row_index_name="i", include_file_paths="p")
    assert lf.collect_schema() == pl.Schema({"i": pl.get_index_type(), **schema, "p": pl.String})
    assert readers == []
    df = lf.collect()
    assert len(readers) == 2  # one read per file, no probe
    assert df.columns == ["i", "name", "id", "score", "p"] and df["id"].to_list() == [3, 1, 2]
    want = pl.scan_csv("csv/f*.csv", schema_overrides={"id": pl.Int32}, row_index_name="i", include_file_paths="p")
    _same(df, want.select(df.columns).collect(), "p")
    assert_frame_equal(lf.filter(pl.col("id") > 1).select("p").collect(), df.filter(pl.col("id") > 1).select("p"))


def test_scan_schema_must_name_the_table_columns(trees: Any) -> None:
    read_error = tp.read_toon  # read_toon: a column without a dtype is an error, a name of no column ignored
    with pytest.raises(ValueError, match="does not give a dtype"):
        read_error("toon/f1.toon", schema={"id": pl.Int64})
    with pytest.raises(pl.exceptions.SchemaError, match="does not give a dtype"):  # (as read_csv's error is)
        read_error("toon/f1.toon", schema={"id": pl.Int64})
    assert read_error("toon/f1.toon", schema={"id": pl.Int64, "name": pl.String, "score": pl.Float64, "x": pl.Int8}).width == 3
    # a scan's plan has the schema's columns: both are errors at collect
    for schema in ({"id": pl.Int64}, {"id": pl.Int64, "name": pl.String, "score": pl.Float64, "x": pl.Int8}):
        lf = tp.scan_toon("toon/f1.toon", schema=schema)
        for query in (lf, lf.select("id")):
            with pytest.raises(ValueError, match="must name every column"):
                query.collect()


def test_scan_plan_names_the_source_toon(trees: Any) -> None:
    plan = tp.scan_toon("toon/*.toon").filter(pl.col("id") > 1).select("name").explain()
    assert "PYTHON[toon] SCAN" in plan and "toon/*.toon" in plan
    assert 'SELECTION: col("id") > 1' in plan  # the predicate is pushed down


def test_scan_refuses_file_objects() -> None:
    import io

    with pytest.raises(TypeError, match="scan_toon"):
        tp.scan_toon(io.BytesIO(b"[1]{a}:\n  1\n"))


# ---------------------------------------------------------------- write_toon


def test_write_toon_without_a_file_returns_the_text(tmp_path: Path) -> None:
    import io

    df = pl.DataFrame({"a": [1, 2], "b": ["x", "y, z"]})
    assert isinstance(df.write_csv(), str)  # the convention imitated
    text = tp.write_toon(df)
    assert text == '[2]{a,b}:\n  1,x\n  2,"y, z"'
    assert tp.write_toon(df.lazy(), key="rows") == "rows" + text
    buf = io.StringIO()
    assert tp.write_toon(df, buf) is None and buf.getvalue() == text
    assert tp.write_toon(df, file=tmp_path / "out.toon") is None
    assert (tmp_path / "out.toon").read_text() == text
    assert_frame_equal(tp.read_toon(text.encode()), df)


def test_write_toon_to_a_path_is_atomic(tmp_path: Path) -> None:
    """A failed write leaves the file as it was (it used to be truncated before anything was
    encoded); a successful one replaces it, through a symbolic link to the file it names."""
    out = tmp_path / "out.toon"
    out.write_text("old")
    df = pl.DataFrame({"a": [1, 2], "s": [{"x": 1}, {"x": 2}]})
    with pytest.raises(toonstream.ToonEncodeError):
        tp.write_toon(df, out, max_depth=1)
    with pytest.raises(toonstream.ToonEncodeError):
        tp.write_toon(df.lazy(), out, max_depth=1, batch_size=1)
    assert out.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.toon"]  # (no temporary file left)
    link = tmp_path / "link.toon"
    link.symlink_to(out)
    tp.write_toon(df, link)
    assert link.is_symlink() and out.read_text() == toonstream.dumps(df.to_dicts())


@pytest.mark.parametrize("dtype", ["Int128", "UInt128"])
def test_write_toon_takes_128_bit_integer_columns(dtype: str) -> None:
    """Arrow has no 128-bit integers (df.to_arrow() raises): such frames are written from Python
    values, the same text as dumps(df.to_dicts()), nested ones too, and read back with the type."""
    t = getattr(pl, dtype)
    big = [2**100, None, 5, 10**38 - 1]
    df = pl.DataFrame({"x": pl.Series(big, dtype=t), "s": [{"a": 1}, None, {"a": 3}, {"a": 4}], "l": [[1], [2, 3], None, []]})
    df = df.with_columns(pl.col("s").cast(pl.Struct({"a": t})), pl.col("l").cast(pl.List(t)))
    for data in (df, df.lazy()):
        assert tp.write_toon(data, batch_size=3) == toonstream.dumps(df.to_dicts())
        assert tp.write_toon(data, key="k", delimiter="|") == toonstream.dumps({"k": df.to_dicts()}, delimiter="|")
    flat = df.select("x")
    assert_frame_equal(tp.read_toon(tp.write_toon(flat).encode(), schema=flat.schema), flat)


def test_encode_arrow_takes_a_polars_frame_arrow_cannot_carry() -> None:
    """A Polars frame with a 128-bit integer or Object column given to encode_arrow is written
    as write_toon writes it (pyarrow's ArrowInvalid leaked before)."""
    import io

    df = pl.DataFrame({"x": pl.Series([2**100, 1], dtype=pl.Int128), "y": ["a", "b"]})
    for data in (df, df.lazy()):
        out = io.StringIO()
        ta.encode_arrow(data, out, key="k")
        assert out.getvalue() == toonstream.dumps({"k": df.to_dicts()})


def test_write_toon_object_columns_are_the_python_objects() -> None:
    """An Object column's values reach ``default`` as the objects themselves (they went as
    Arrow's pointers before: bytes in the output), and without ``default`` dumps' error."""
    import io

    class P:
        def __repr__(self) -> str:
            return "P()"

    df = pl.DataFrame({"o": pl.Series([P(), None, P()], dtype=pl.Object), "i": [1, 2, 3]})
    want = toonstream.dumps(df.to_dicts(), default=repr)
    assert "P()" in want
    assert tp.write_toon(df, default=repr) == want
    assert tp.write_toon(df.lazy(), default=repr) == want
    out = io.StringIO()
    ta.encode_arrow(df, out, default=repr)
    assert out.getvalue() == want
    with pytest.raises(toonstream.ToonEncodeError, match=r"object of type P is not TOON serializable \(at \[0\]\.o\)"):
        tp.write_toon(df)


def test_wide_integer_overrides_convert_as_read_csv() -> None:
    """UInt64 takes its whole range (values beyond int64 were a type_mismatch), Int128 and UInt128
    integers of up to 38 digits, as read_csv reads them; a value outside the type is a type_mismatch
    at its cell, shown as the integer it is."""
    rows = [(1, 2), (2**64 - 1, -(10**38) + 1), (None, 10**38 - 1), (0, 0)]
    text = "[4]{u,v}:\n" + "".join(f"  {'null' if u is None else u},{v}\n" for u, v in rows)
    csv = "u,v\n" + "".join(f"{'' if u is None else u},{v}\n" for u, v in rows)
    for overrides in ({"u": pl.UInt64, "v": pl.Int128}, {"u": pl.UInt128, "v": pl.Int128}):
        want = pl.read_csv(csv.encode(), schema_overrides=overrides)
        assert_frame_equal(tp.read_toon(text.encode(), schema_overrides=overrides), want)
        assert_frame_equal(tp.scan_toon(text.encode(), schema_overrides=overrides).collect(), want)
    assert ta.read_table(text.encode(), schema_overrides={"u": pa.uint64()}).column("u").to_pylist() == [r[0] for r in rows]
    for bad in ["-1", str(2**64)]:
        with pytest.raises(ToonDecodeError, match=rf"column 'u': value {bad} does not convert to UInt64") as e:
            tp.read_toon(f"[2]{{u}}:\n  1\n  {bad}\n".encode(), schema_overrides={"u": pl.UInt64})
        assert (e.value.line, e.value.column) == (3, 3)


def test_read_csv_argument_forms() -> None:
    """The argument forms read_csv takes: one column name or index for ``columns``; overrides as a
    dtype per column in order (their count must be the table's, with Polars' SchemaError); and
    scan_toon takes what read_toon takes (a schema as a list of pairs), checking it when called."""
    data = b"[1]{a,b}:\n  1,x\n"
    csv = b"a,b\n1,x\n"
    assert tp.read_toon(data, columns="a").equals(pl.read_csv(csv, columns="a"))
    assert tp.read_toon(data, columns=1).equals(pl.read_csv(csv, columns=1))
    for read in (tp.read_toon, lambda d, **kw: tp.scan_toon(d, **kw).collect()):
        assert read(data, schema_overrides=[pl.Int8, pl.String]).equals(pl.read_csv(csv, schema_overrides=[pl.Int8, pl.String]))
        assert read(data, schema=[("a", pl.Int8), ("b", pl.String)]).schema == pl.Schema({"a": pl.Int8, "b": pl.String})
    with pytest.raises(pl.exceptions.SchemaError, match=r"number of dtypes in schema override .* \(1 != 2\)"):
        tp.read_toon(data, schema_overrides=[pl.Int8])
    assert ta.read_table(data, schema_overrides=[pa.int8(), pa.string()]).schema.types == [pa.int8(), pa.large_string()]
    assert tp.read_toon(b"[1:]{b}:\n  k: 1\n", schema_overrides=[pl.String, pl.Int8]).schema == pl.Schema({"key": pl.String, "b": pl.Int8})
    for kw, error in [({"schema_overrides": "Int8"}, TypeError), ({"schema_overrides": 5}, TypeError),
                      ({"batch_size": 0}, ValueError), ({"infer_schema_length": -1}, ValueError), ({"schema": 5}, TypeError)]:
        with pytest.raises(error):
            tp.scan_toon(data, **kw)  # (when called, not at collect)
        with pytest.raises(error):
            tp.read_toon(data, **kw)


# ---------------------------------------------------------------- options


PUBLIC: list[tuple[str, Callable[..., Any]]] = [
    ("read_toon", lambda **kw: tp.read_toon(b"[1]{a}:\n  1\n", **kw)),
    ("scan_toon", lambda **kw: tp.scan_toon(b"[1]{a}:\n  1\n", **kw)),
    ("iter_frames", lambda **kw: list(tp.iter_frames(b"[1]{a}:\n  1\n", **kw))),
    ("iter_batches", lambda **kw: ta.iter_batches(b"[1]{a}:\n  1\n", **kw)),
    ("read_table", lambda **kw: ta.read_table(b"[1]{a}:\n  1\n", **kw)),
    ("write_toon", lambda **kw: tp.write_toon(pl.DataFrame({"a": [1]}), **kw)),
]


@pytest.mark.parametrize("name, call", PUBLIC, ids=[n for n, _ in PUBLIC])
def test_unknown_keywords_name_the_public_function(name: str, call: Callable[..., Any]) -> None:
    for bad in ("colums", "hold_rows", "fields"):
        with pytest.raises(TypeError, match=rf"^{name}\(\) got an unexpected keyword argument '{bad}'$"):
            call(**{bad: 1})


@pytest.mark.parametrize("name, call", PUBLIC[:5], ids=[n for n, _ in PUBLIC[:5]])
def test_value_hooks_are_refused_not_ignored(name: str, call: Callable[..., Any]) -> None:
    for hook in ("parse_float", "parse_int", "object_hook", "object_pairs_hook", "map_type"):
        with pytest.raises(TypeError, match=rf"^{name}\(\) does not take {hook}: table columns are typed as a whole"):
            call(**{hook: str})
    call(parse_float=None)  # json's "not set"
    call(strict=False, indent_size=2, max_depth=10, max_line_length=1 << 20, max_number_length=100, max_fields=10)


@pytest.mark.parametrize("n_rows", [0, 1, None])
@pytest.mark.parametrize(
    "doc",
    [
        b"[8:]{c,e}:\n",
        b"[8]{c,g{x,y}}:\n",
        b"[3]{c,e}:\n  1,x\n  2,y\n  3,z\n",
        b"[2:]{key,c}:\n  k: 1,2\n  j: 3,4\n",  # (a name collision: n_rows=0 reads the header, and fails as read_toon)
    ],
)
def test_scan_schema_within_n_rows(doc: bytes, n_rows: int | None) -> None:
    # scan_toon's schema is that of the rows read_toon reads: never past n_rows (a table whose
    # declared count its rows do not reach gave String columns that ignored the overrides, then
    # a SchemaError at collect, where read_toon gave a frame).
    def outcome(read: Any) -> Any:
        try:
            return read()
        except Exception as e:  # (the same error on both)
            return (type(e).__name__, str(e))

    scanned = outcome(lambda: tp.scan_toon(doc, n_rows=n_rows, schema_overrides={"c": pl.Int8}).collect())
    read = outcome(lambda: tp.read_toon(doc, n_rows=n_rows, schema_overrides={"c": pl.Int8}))
    if isinstance(read, pl.DataFrame):
        assert isinstance(scanned, pl.DataFrame)
        assert_frame_equal(scanned, read)
    else:
        assert scanned == read


# ------------------------------------------------- n_rows=0, slices of record arrays, sources


@pytest.mark.parametrize(
    "doc, kwargs",
    [
        (b"[2]{a,b:\n  1,x\n", {}),  # a broken header
        (b"\xff\xfe", {}),  # not UTF-8
        (b"a: 1\n", {}),  # no table
        (b"[03]{a}:\n  1\n", {}),  # a bad length
        (b"[2]{score,id}:\n  1,x\n", {"max_line_length": 10}),  # a limit broken by the header
    ],
)
def test_n_rows_0_still_reads_up_to_the_header(engine: str, doc: bytes, kwargs: dict[str, Any]) -> None:
    # as n_rows=1 does (the errors before the first row): n_rows=0 used to read nothing at all
    with pytest.raises(ToonDecodeError) as one:
        tp.read_toon(doc, n_rows=1, **kwargs)
    for read in (
        lambda: tp.read_toon(doc, n_rows=0, **kwargs),
        lambda: ta.read_table(doc, n_rows=0, **kwargs),
    ):
        with pytest.raises(ToonDecodeError) as zero:
            read()
        assert (zero.value.code, zero.value.line, zero.value.column) == (one.value.code, one.value.line, one.value.column)


@pytest.mark.parametrize("end", [b"", b"\n"])
def test_n_rows_0_gives_the_header_columns(engine: str, end: bytes) -> None:
    # (TOON text ends without a newline: the header is the last line there)
    for doc in (b"[0]{a,b}:" + end, b"[2]{a,b}:\n  1,x\n  2,y" + end):
        df = tp.read_toon(doc, n_rows=0)
        assert df.columns == ["a", "b"] and df.height == 0
        assert df.schema == pl.Schema({"a": pl.Null, "b": pl.Null})  # (the types of the rows read: none)
        assert tp.read_toon(doc, n_rows=0, columns=["b"]).columns == ["b"]
        assert_frame_equal(tp.scan_toon(doc, n_rows=0).collect(), df)
        assert ta.read_table(doc, n_rows=0).column_names == ["a", "b"]
    # the header is read, not what follows it
    assert tp.read_toon(b"[2]{a,b}:\n  1,x\n  2\n", n_rows=0).columns == ["a", "b"]


def test_scan_head_of_records_whose_later_keys_the_probe_saw(engine: str) -> None:
    # The probe reads the inference window: a key of a later record is a column, null in the
    # records a slice reads (head(1) raised ColumnNotFoundError for "q").
    doc = b"[3]:\n  - id: 1\n    t[2]: a,b\n  - id: x\n    q: 1\n  - id: 3\n    r: true\n"
    whole = tp.read_toon(doc)
    assert whole.columns == ["id", "t", "q", "r"]
    for h in range(4):
        assert_frame_equal(tp.scan_toon(doc).head(h).collect(), whole.head(h))
        assert_frame_equal(tp.scan_toon(doc).select("q", "id").head(h).collect(), whole.select("q", "id").head(h))
    assert_frame_equal(tp.scan_toon(doc).filter(pl.col("r").is_null()).head(1).collect(), whole.head(1))


def test_type_mismatch_names_where_the_types_came_from(engine: str, tmp_path: Path) -> None:
    (tmp_path / "a.toon").write_text("[1]{a,b}:\n  1,x\n")
    (tmp_path / "b.toon").write_text("[2]{a,b}:\n  2.5,y\n  3,z\n")
    with pytest.raises(ToonDecodeError) as e:
        tp.read_toon([str(tmp_path / "a.toon"), str(tmp_path / "b.toon")])
    assert e.value.code == "type_mismatch" and e.value.line == 2
    assert f"inferred from the first 1 rows of {tmp_path / 'a.toon'}" in str(e.value)  # (not b.toon's 2 rows)
    assert e.value.__notes__ == [f"in {tmp_path / 'b.toon'}"]
    (tmp_path / "c.toon").write_text("[3]{a,b}:\n  1,x\n  2,y\n  2.5,z\n")
    with pytest.raises(ToonDecodeError) as e:
        tp.scan_toon(str(tmp_path / "c.toon"), infer_schema_length=1).collect()
    assert "inferred from the first 1 rows by the scan's probe;" in str(e.value)
    with pytest.raises(ToonDecodeError) as e:
        tp.read_toon(str(tmp_path / "c.toon"), infer_schema_length=2)
    assert "inferred from the first 2 rows;" in str(e.value)
    # the same for arrays of records
    (tmp_path / "a.toon").write_text("[1]:\n  - a: 1\n    b: x\n")
    (tmp_path / "b.toon").write_text("[2]:\n  - a: 2.5\n    b: y\n  - a: 3\n    b: z\n")
    with pytest.raises(ToonDecodeError) as e:
        tp.read_toon([str(tmp_path / "a.toon"), str(tmp_path / "b.toon")])
    assert e.value.code == "type_mismatch" and e.value.line == 2
    assert f"the schema was inferred from the first 1 rows of {tmp_path / 'a.toon'};" in str(e.value)
    (tmp_path / "b.toon").write_text("[2]:\n  - a: 3\n    b: y\n  - a: 2.5\n    b: z\n")
    with pytest.raises(ToonDecodeError) as e:
        tp.read_toon(str(tmp_path / "b.toon"), infer_schema_length=1)
    assert "the schema was inferred from the first 1 records;" in str(e.value)


def test_an_override_converts_as_read_csv_does() -> None:
    """A type given by the user converts as polars.read_csv does with the same override (README):
    Float32 and a Decimal's scale round; an integer out of range is an error in both."""
    import io
    from decimal import Decimal

    rows = [("1e300", "1.555", "16777217"), ("2", "2.5", "1"), ("-0.0", "3", "2")]
    toon = "t[3]{d,e,f}:\n" + "".join(f"  {','.join(r)}\n" for r in rows)
    csv = "d,e,f\n" + "".join(",".join(r) + "\n" for r in rows)
    overrides = {"d": pl.Float32, "e": pl.Decimal(10, 2), "f": pl.Float32}
    got = tp.read_toon(io.BytesIO(toon.encode()), schema_overrides=overrides)
    assert_frame_equal(got, pl.read_csv(io.BytesIO(csv.encode()), schema_overrides=overrides))
    assert got.row(0) == (float("inf"), Decimal("1.56"), 16777216.0)
    with pytest.raises(ToonDecodeError) as info:
        tp.read_toon(io.BytesIO(toon.encode()), schema_overrides={"f": pl.Int8})
    assert info.value.code == "type_mismatch"
    with pytest.raises(pl.exceptions.ComputeError):
        pl.read_csv(io.BytesIO(csv.encode()), schema_overrides={"f": pl.Int8})
    # A type name as text is refused, as Polars refuses it (it was "'str' object is not callable").
    for read in (tp.read_toon, ta.read_table):
        with pytest.raises(TypeError, match=r"cannot parse input of type 'str' into a Polars data type \(given: 'Int32'\)"):
            read(io.BytesIO(toon.encode()), schema_overrides={"f": "Int32"})
    with pytest.raises(TypeError, match="cannot parse input of type 'str' into Polars data type"):
        pl.read_csv(io.BytesIO(csv.encode()), schema_overrides={"f": "Int32"})


@pytest.mark.parametrize("rows", [7, 30_000])  # (30,000: runs typed as split on the native engine)
def test_a_float_type_given_takes_numbers_beyond_float_range_as_read_csv(rows: int) -> None:
    """1e400 in a column given Float64 or Float32 is inf, as read_csv reads it (it was a type_mismatch)."""
    tokens = ["1e300", "1e400", "-1e400", "1.7976931348623159e308", "1e-400", "1" * 42, "2.5", "1" * 400, "-" + "2" * 400]
    cells = [tokens[k % len(tokens)] for k in range(rows)]
    toon = f"t[{rows}]{{x}}:\n" + "".join(f"  {c}\n" for c in cells)
    csv = "x\n" + "".join(f"{c}\n" for c in cells)
    for dtype in (pl.Float64, pl.Float32):
        got = tp.read_toon(toon.encode(), schema_overrides={"x": dtype})
        assert_frame_equal(got, pl.read_csv(csv.encode(), schema_overrides={"x": dtype}))
    assert tp.read_toon(toon.encode(), schema_overrides={"x": pl.Float64})["x"][1] == float("inf")



# ------------------------------------------------- Decimal types with a scale

# (a float holds neither value: 12345678901234568.0 and 0.12345678901234568)
_EXACT_ROWS = [
    ("12345678901234567.891", "1.5"),
    ("0.1234567890123456789", "-0.0"),
    ("-7.25", "1e400"),
]


def _exact_doc(decoder_rows: bool) -> bytes:
    """A table of an exact column and a float one; ``decoder_rows``: each row with a quoted
    colon (a line the decoder reads, not the splitter) and a comment between rows."""
    lines = [f"[{len(_EXACT_ROWS) * 200}]{{d,f,s}}:"]
    for k in range(200):
        for d, f in _EXACT_ROWS:
            lines.append(f'  {d},{f},"a:{k}"' if decoder_rows else f"  {d},{f},s{k}")
        if decoder_rows:
            lines.append("# a comment")
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("decoder_rows", [False, True], ids=["split", "decoder"])
@pytest.mark.parametrize("batch_size", [7, 65_536])
def test_decimal_with_a_scale_keeps_the_digits_as_read_csv(decoder_rows: bool, batch_size: int) -> None:
    from decimal import Decimal

    doc = _exact_doc(decoder_rows)
    df = tp.read_toon(doc, schema_overrides={"d": pl.Decimal(38, 19)}, batch_size=batch_size)
    assert df.schema["d"] == pl.Decimal(38, 19)
    want = [Decimal(d) for d, _ in _EXACT_ROWS] * 200  # (equal whatever the scale)
    assert df["d"].to_list() == want
    # the other columns as without the override (floats: -0.0 as 0.0, 1e400 a String column)
    plain = tp.read_toon(doc, batch_size=batch_size)
    assert_frame_equal(df.drop("d"), plain.drop("d"))
    table = ta.read_table(doc, schema_overrides={"d": pa.decimal128(38, 19)}, batch_size=batch_size)
    assert table.column("d").to_pylist() == want
    assert table.column("f").to_pylist() == plain["f"].to_list()


@pytest.mark.parametrize("batch_size", [1_000, 65_536])
def test_decimal_with_a_scale_in_a_big_table(batch_size: int) -> None:
    """Past the rows that decide the types, the native splitter types runs as it splits them: an
    exact column keeps each number's token there (its canonical text is its float's), exponents
    as the decoder rows have them, and a bad cell (a string: quoted numbers too) is still found."""
    from decimal import Decimal

    tokens = ["12345678901234567.891", "-0", "1e2", "1E-3", "null", "1.5", "0.1234567890123456789",
              "-99999999999999999.5", "7"]
    n = 30_000  # (about 1 MB: most runs are split once the types are known)
    lines = [f"  {k},{tokens[k % len(tokens)]},w{k}" for k in range(n)]
    doc = (f"[{n}]{{i,d,s}}:\n" + "\n".join(lines) + "\n").encode()
    df = tp.read_toon(doc, schema_overrides={"d": pl.Decimal(38, 19)}, batch_size=batch_size)
    want = [None if t == "null" else Decimal(t.strip('"')) for t in tokens]
    assert df["d"].to_list() == [want[k % len(tokens)] for k in range(n)]
    assert_frame_equal(df.drop("d"), tp.read_toon(doc, batch_size=batch_size).drop("d"))
    bad = doc.replace(b"  28999,-0,", b'  28999,"x",')
    with pytest.raises(ToonDecodeError, match="holds a string, which does not fit its type Decimal") as e:
        tp.read_toon(bad, schema_overrides={"d": pl.Decimal(38, 19)}, batch_size=batch_size)
    assert (e.value.code, e.value.line, e.value.column) == ("type_mismatch", 29_001, 9)


def test_decimal_with_a_scale_round_trips_through_write_toon() -> None:
    from decimal import Decimal

    df = pl.DataFrame({"d": [Decimal("12345678901234567.891"), Decimal("-0.001"), None]},
                      schema={"d": pl.Decimal(30, 3)})
    assert_frame_equal(tp.read_toon(tp.write_toon(df).encode(), schema=df.schema), df)


def test_decimal_with_a_scale_in_nested_records() -> None:
    from decimal import Decimal

    doc = b"[2]:\n  - d: 12345678901234567.891\n    x[2]: 0.1,-0.0\n  - d: 0.1234567890123456789\n    x[1]: 2.5\n    y: 1"
    df = tp.read_toon(doc, schema_overrides={"d": pl.Decimal(38, 19)})
    assert df["d"].to_list() == [Decimal("12345678901234567.8910000000000000000"), Decimal("0.1234567890123456789")]
    assert_frame_equal(df.drop("d"), tp.read_toon(doc).drop("d"))


def test_arrow_overrides_come_back_as_the_arrow_types_given() -> None:
    """An Arrow type given as an override is the column's type in the batches (timestamp[s] came
    back as timestamp[ms], decimal256 made a Polars panic); a cast that would change a value is a
    ToonDecodeError, a decimal Polars cannot hold a TypeError."""
    doc = (b'[2]{a,t,d,s,m}:\n  1.5,"2024-01-05T10:00:00",2024-01-05,x,"10:00:00"\n'
           b'  2.25,"2024-01-06T11:30:00",2024-01-06,y,"11:00:00"\n')
    types = {"a": pa.decimal256(30, 2), "t": pa.timestamp("s"), "d": pa.date64(), "s": pa.string_view(),
             "m": pa.time32("s")}
    table = ta.read_table(doc, schema_overrides=types)
    assert dict(zip(table.schema.names, table.schema.types)) == types
    assert table.column("a").to_pylist()[1] == Decimal("2.25")
    late = b"[3]{t}:\n" + b'  "2024-01-05T10:00:00"\n' * 2 + b'  "2024-01-05T10:00:00.5"\n'
    for batch_size in (1, 2, 65_536):
        with pytest.raises(ToonDecodeError, match=r"does not convert to timestamp\[s\]") as e:
            ta.read_table(late, schema_overrides={"t": pa.timestamp("s")}, batch_size=batch_size)
        assert (e.value.code, e.value.line, e.value.column) == ("type_mismatch", 4, 3)
    for t in (pa.decimal256(50, 2), pa.decimal128(5, -1)):
        with pytest.raises(TypeError, match="at most 38 digits"):
            ta.read_table(doc, schema_overrides={"a": t})


def test_an_arrow_struct_override_of_some_fields_keeps_the_others() -> None:
    """As a Polars Struct of some fields does (the Arrow struct's cast dropped the others)."""
    override = {"g": pa.struct([("x", pa.int8()), ("z", pa.int8())])}
    for doc in (b"[2]{id,g{x,y}}:\n  1,1,a\n  2,2,b\n", b"[2]:\n  - id: 1\n    g:\n      x: 1\n      y: a\n  - id: 2\n    g:\n      x: 2\n      y: b\n"):
        table = ta.read_table(doc, schema_overrides=override)
        assert table.schema.field("g").type == pa.struct([("x", pa.int8()), ("y", pa.large_string())])
        assert table.to_pylist() == [{"id": 1, "g": {"x": 1, "y": "a"}}, {"id": 2, "g": {"x": 2, "y": "b"}}]


def test_decimal_with_a_scale_in_selected_columns() -> None:
    """The exact column found after a projection that reorders the columns (decoder rows too)."""
    doc = b'[3]{s,d,f}:\n  "a:b",12345678901234567.891,1.5\n  x,0.1234567890123456789,-0.0\n  "c:d",2.5,1e400\n'
    df = tp.read_toon(doc, columns=["f", "d"], schema_overrides={"d": pl.Decimal(38, 19)})
    assert df["d"].to_list() == [Decimal("12345678901234567.891"), Decimal("0.1234567890123456789"), Decimal("2.5")]
    assert df["f"].to_list() == tp.read_toon(doc, columns=["f"])["f"].to_list()


@pytest.mark.parametrize("cell", ['"007"', '"1.5"', "+5", ".5", "1.", "true", "x"])
def test_decimal_with_a_scale_takes_numbers_only(engine: str, cell: str) -> None:
    """A Decimal type with a scale is cast from the numbers' digits, but a string is not a number
    there either (it was cast: a quoted "007" became 7.00), as every other numeric type refuses it;
    in the decoder's rows, the split runs and the records of nested arrays alike."""
    from decimal import Decimal

    import pyarrow as pa

    import toonstream.arrow as ta

    for doc, line in ((f"[3]{{a}}:\n  1.5\n  {cell}\n  2\n", 3),
                      ("[30001]{a}:\n" + "  1.25\n" * 30_000 + f"  {cell}\n", 30_002)):
        with pytest.raises(ToonDecodeError, match="holds a (string|boolean), which does not fit") as e:
            tp.read_toon(doc.encode(), schema_overrides={"a": pl.Decimal(10, 2)})
        assert (e.value.line, e.value.column) == (line, 3)
        with pytest.raises(ToonDecodeError) as e:
            ta.read_table(doc.encode(), schema_overrides={"a": pa.decimal128(10, 2)})
        assert (e.value.code, e.value.line) == ("type_mismatch", line)
    with pytest.raises(ToonDecodeError, match="holds a (string|boolean)") as e:
        tp.read_toon(f"x[2]:\n  - a: 1.5\n  - a: {cell}\n".encode(), schema_overrides={"a": pl.Decimal(10, 2)})
    assert e.value.line == 3
    got = tp.read_toon(b"[3]{a}:\n  1.5\n  1e2\n  null\n", schema_overrides={"a": pl.Decimal(10, 2)})
    assert got["a"].to_list() == [Decimal("1.50"), Decimal("100.00"), None]

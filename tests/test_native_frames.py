"""The frame readers on the native engine's column splitter (``_native.table_columns``) against
the reference (the same readers with the Python engine: polars' tokenizer and kernels).

For the same input and options both must give the same frames (column names, dtypes, values,
nulls) or the same error (class, code, message, line, column, line text), under every chunking
of the reader's fast path (``_frames.CHUNK``/``FEED``).  Inputs: hand-made tables of every kind
of cell, the spec fixtures, the benchmark datasets, random byte mutations of tables, and
generated tables (hypothesis), with schemas, overrides, ``try_parse_dates``, projections and row
limits.
"""

from __future__ import annotations

import random
from decimal import Decimal
import sys
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toonstream
from toonstream import _engine

from conftest import REPO, import_native, load_fixtures
from differential import LEAVES, error_key, mutate

_native = import_native()
pl = pytest.importorskip("polars")
pytest.importorskip("pyarrow")

from polars.testing import assert_frame_equal  # noqa: E402

from toonstream import _frames  # noqa: E402
import toonstream.arrow as ta  # noqa: E402
import toonstream.polars as tp  # noqa: E402

sys.path.insert(0, str(REPO / "benchmarks"))
import datasets  # noqa: E402

PYTHON = _engine.select("python")
NATIVE = _engine.select("native")
# (the reader's step and the decoder's feed size: the default, tiny, odd, small)
CHUNKINGS = [(4 << 20, 64 << 10), (64, 16), (200, 7), (1 << 12, 1 << 10)]
DECODE = load_fixtures("decode")


class Spy:
    """Counts the runs the native splitter took (a table, not a verdict),
    and those it typed as it split them (a plan given and fitted)."""

    def __init__(self) -> None:
        self.tables = 0
        self.typed = 0
        self.plans = 0
        self.specials = 0  # lines of the runs left to the decoder

    def __call__(self, *args: Any, **kw: Any) -> Any:
        got = _native.table_columns(*args, **kw)
        self.plans += "plan" in kw
        if not isinstance(got, tuple):
            self.tables += 1
            self.typed += got.typed
            self.specials += len(got.specials)
        return got


def run(engine: _engine.Engine, read: Callable[[], Any], chunking: tuple[int, int]) -> tuple[str, Any]:
    previous = _engine.use(engine)
    saved = _frames.CHUNK, _frames.FEED
    _frames.CHUNK, _frames.FEED = chunking
    try:
        return "ok", read()
    except Exception as e:  # (compared: the same class and message on both engines)
        return "error", error_key(e)
    finally:
        _frames.CHUNK, _frames.FEED = saved
        _engine.use(previous)


def same_outcome(a: tuple[str, Any], b: tuple[str, Any]) -> None:
    assert a[0] == b[0], (a, b)
    if a[0] == "error":
        assert a[1] == b[1]
        return
    x, y = a[1], b[1]
    if isinstance(x, list):
        assert len(x) == len(y)
        for fx, fy in zip(x, y):
            same_frame(fx, fy)
    else:
        same_frame(x, y)


def same_frame(x: Any, y: Any) -> None:
    if not isinstance(x, pl.DataFrame):  # a pyarrow Table or RecordBatch
        assert x.schema == y.schema
        assert x.to_pylist() == y.to_pylist()
        return
    assert x.columns == y.columns
    assert x.schema == y.schema
    assert_frame_equal(x, y, check_exact=True)
    # -0.0 and 0.0 are equal to assert_frame_equal: compare the bits of floats too
    for name, dtype in x.schema.items():
        if dtype == pl.Float64:
            assert x[name].cast(pl.Float64).to_list() == y[name].to_list()
            assert [str(v) for v in x[name].to_list()] == [str(v) for v in y[name].to_list()]


def check(
    data: bytes,
    chunkings: list[tuple[int, int]] = CHUNKINGS,
    reader: str = "read_toon",
    native_keys: bool = True,
    **kw: Any,
) -> Spy:
    """Both engines on ``data`` with reader options ``kw``, under each chunking (``native_keys``:
    a keyed table's entry keys in the native engine's set, else in a ``set``)."""
    spy = Spy()
    native = _engine.Engine(
        NATIVE.name,
        loads=NATIVE.loads,
        value_decoder=NATIVE.value_decoder,
        table_columns=spy,
        key_set=NATIVE.key_set if native_keys else None,
    )

    def read() -> Any:
        if reader == "read_toon":
            return tp.read_toon(data, **kw)
        if reader == "scan_toon":
            return tp.scan_toon(data, **kw).collect()
        if reader == "iter_batches":
            return list(ta.iter_batches(data, **kw))
        if reader == "read_table":
            return ta.read_table(data, **kw)
        raise AssertionError(reader)

    for chunking in chunkings:
        same_outcome(run(PYTHON, read, chunking), run(native, read, chunking))
    return spy


def table(rows: list[str], header: str = "t[{n}]{{a,b,c}}:", indent: str = "  ") -> bytes:
    return ("\n".join([header.format(n=len(rows))] + [indent + r for r in rows]) + "\n").encode()


# ------------------------------------------------------------------ hand-made tables

KINDS = [
    # ints, floats, bools, nulls, strings, numbers a float may not hold
    ["1,1.5,true", "-2,2,false", "0,-0.0,null", "-0,1e5,true", "9223372036854775807,1E-7,false"],
    ["1,x,true", "2,null,null", "3,,false", "null,null,null"],
    ["1,1,1", "2,2.5,a", "3,3,true"],  # mixed: a String column with numbers (canonical text)
    # numbers in a String column, written as the reference writes their values
    ["1.50,x,-0", "-0.0,1E-7,2.5e+10", "1e3,12345678901234567890,0.1", "y,123456789.123456789,z"],
    ["1234567890123456,1,a", "2,1.5,b"],  # a wide int in a float column (String)
    ["99999999999999999999,1,a", "2,2,b"],  # beyond int64: Decimal
    ["1" * 40 + ",1,a", "2,2,b"],  # beyond 38 digits
    ["1" * 41 + ",1,a", "2,2,b"],  # an "odd" token: typed one by one
    ["1e400,1,a", "1.5,2,b"],  # beyond float range
    ["1e00000000000000001,1,a", "2,2,b"],  # an exponent of 17+ digits
    ["05,+5,1.", "-,- x,0x1", "1.5.1,--1,-0.0e0"],  # not numbers (§4)
    [" 1 , 2.5 ,  x  ", "  2,3,y z"[2:], "3 ,4 , w"],  # spaces around cells
    ['"a",b,"c,d"', '"  padded",x,""', '"true","1","null"', '"a:b",y,"#x"'],  # simple quoted cells
    ['"a\\"b",c,d', '"x\\ny",e,f', "g,h,i"],  # escapes (§7.1): split natively
    ['"a\\\\",b,"c\\td"', '"\\"",e,"f,\\\\g"', '"x\\ry",h,i'],  # a final backslash, a lone quote, a delimiter
    ['"a\\x",b,c', "d,e,f"],  # an invalid escape: the decoder's error
    ['"a\\u0041",b,c', "d,e,f"],  # \u: the decoder reads it
    ['"a\\",b,c', "d,e,f"],  # an escaped quote, then no closing one
    ["1,2,3", "# a comment", "4,5,6"],
    ["1,2,3", "4,5,6", "", "7,8,9"],  # a blank line
    ["1,2,3", "4,5", "7,8,9"],  # a short row
    ["1,2,3", "4,5,6,7", "7,8,9"],  # a long row
    ["1,2,3", " 4,5,6", "7,8,9"],  # deeper
    ["1,2,3", ",5,6", "7,8,9"],  # an empty first cell
    ["1,2,3", "\t4,5,6"],
    ["a,b:c,d", "e,f,g"],
    ["x,\\y,z", "1,2,3"],
    ["é,ü,ß", "日本,語,x"],
    ["true,false,null", "false,true,true"],
    ["2024-01-02,2024-01-02T03:04:05,2024-01-02 03:04:05.123456789Z", "2023-12-31,2023-12-31T00:00,2023-12-31T00:00:00+01:00"],
]


@pytest.mark.parametrize("rows", KINDS, ids=range(len(KINDS)))
def test_kinds_of_cells(rows: list[str]) -> None:
    data = table(rows)
    check(data)
    check(data, infer_schema_length=1)
    check(data, try_parse_dates=True)
    check(data, reader="iter_batches", batch_size=2, chunkings=CHUNKINGS[:2])


@pytest.mark.parametrize("rows", KINDS, ids=range(len(KINDS)))
@pytest.mark.parametrize(
    "overrides",
    [
        {"a": pl.Int32, "b": pl.Float32},
        {"a": pl.String, "b": pl.String, "c": pl.String},
        {"a": pl.Float64, "c": pl.Boolean},
        {"a": pl.Decimal(38, 0), "b": pl.Int64},
        {"c": pl.Date, "b": pl.Datetime("us")},
        {"a": pl.UInt8, "c": pl.Null},
    ],
    ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()),
)
def test_overrides(rows: list[str], overrides: dict[str, Any]) -> None:
    check(table(rows), schema_overrides=overrides, chunkings=CHUNKINGS[:2])


def test_schema_and_projection() -> None:
    data = table(["1,x,1.5", "2,y,2.5", "3,null,null"])
    check(data, schema={"a": pl.Int16, "b": pl.String, "c": pl.Float64})
    check(data, columns=["c", "a"])
    check(data, columns=["b"], n_rows=2)
    check(data, reader="scan_toon")
    check(data, reader="read_table", columns=["a", "c"])


def test_columns_through_the_capsule_interface() -> None:
    # Each typed column is an Arrow array behind __arrow_c_array__: Polars and pyarrow import it
    # without a copy, its buffers outlive the run object, capsules dropped unread release it.
    import gc

    import pyarrow as pa

    data = b'  1,a,1.5,true\n  2,null,null,null\n  -3,"q,r",2,false\n  4,' + b"s" * 30 + b",-0,true\n"
    cols = _native.table_columns(data, 0, len(data), 2, ",", 4, 10)
    assert cols.rows == 4
    want = {
        (0, "int64"): (pl.Int64, [1, 2, -3, 4]),
        (1, "views"): (pl.String, ["a", None, "q,r", "s" * 30]),
        (1, "tokens"): (pl.String, ["a", "null", "\x01q\x02r", "s" * 30]),  # (quoted: marked)
        (2, "float64"): (pl.Float64, [1.5, None, 2.0, 0.0]),
        (3, "bool"): (pl.Boolean, [True, None, False, True]),
    }
    series = []
    for (col, kind), (dtype, values) in want.items():
        column = cols.arrow(col, 0, 4, kind)
        assert len(column) == 4 and column.null_count == values.count(None)
        s = pl.Series(column)
        assert (s.dtype, s.to_list()) == (dtype, values)
        assert pa.array(column).to_pylist() == values
        schema, array = column.__arrow_c_array__(requested_schema=None)
        del schema, array  # never imported: released by the capsules
        series.append(s)
        assert pl.Series(cols.arrow(col, 1, 3, kind)).to_list() == values[1:3]
    assert len(cols.arrow(0, 5, 9, "int64")) == 0  # (rows past the run: none)
    with pytest.raises(ValueError, match="unknown column kind"):
        cols.arrow(0, 0, 4, "decimal")
    line = b"  1e400,123456789012345678901234567890123456789\n"
    huge = _native.table_columns(line, 0, len(line), 2, ",", 2, 10)
    assert pl.Series(huge.arrow(0, 0, 1, "views")).to_list() == ["1e+400"]  # (encode_decimal's text)
    assert pl.Series(huge.arrow(1, 0, 1, "views")).to_list() == ["123456789012345678901234567890123456789"]
    wide = _native.table_columns(b"  12345678901234567890,-5\n", 0, 26, 2, ",", 2, 10)
    assert pl.Series(wide.arrow(0, 0, 1, "decimal128")).to_list() == [Decimal(12345678901234567890)]
    del cols, column
    gc.collect()
    assert [s.to_list() for s in series] == [v for _, v in want.values()]


def test_native_path_without_pyarrow() -> None:
    # The frame readers' native columns need only polars (the Arrow PyCapsule interface).
    code = """
import sys

class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "pyarrow":
            raise ModuleNotFoundError("No module named 'pyarrow'", name=name)

sys.meta_path.insert(0, Hide())
import io
import toonstream, toonstream.polars as tp
from toonstream import _engine, _native
_engine.use(_engine.select("native"))
calls = []
split = _engine.current().table_columns
_engine.current().table_columns = lambda *a, **k: calls.append(1) or split(*a, **k)
text = toonstream.dumps([{"a": i, "b": f"s{i}" * (i % 5), "c": i / 4, "d": i % 2 == 0} for i in range(20000)])
df = tp.read_toon(io.BytesIO(text.encode()))
assert "pyarrow" not in sys.modules
assert calls, "the native splitter was not used"
assert df.rows() == [tuple(r.values()) for r in toonstream.loads(text)]
print(df.dtypes)
"""
    import subprocess

    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert r.returncode == 0, r.stderr + r.stdout
    assert "Int64, String, Float64, Boolean" in r.stdout


def test_crlf_and_delimiters() -> None:
    check(b"t[3]{a,b}:\r\n  1,x\r\n  2,y\r\n  3,z\r\n")
    check(b"t[3\t]{a\tb}:\n  1\tx y\n  2\t\"q\tr\"\n  3\t4\n")
    check(b"t[3|]{a|b}:\n  1|x,y\n  2|\"q|r\"\n  3|4\n")


def test_nested_and_keyed_tables() -> None:
    data = toonstream.dumps({"t": [{"a": i, "g": {"x": i * 1.5, "y": f"s{i}"}} for i in range(30)]}).encode()
    check(data)
    check(data, columns=["g"])
    check(toonstream.dumps([{"id": i, "v": None if i % 3 else i} for i in range(50)]).encode())


def test_later_rows_misfit() -> None:
    rows = [f"{i},{i}.5,x" for i in range(500)] + ["oops,1,x"] + [f"{i},1,2" for i in range(100)]
    check(table(rows), infer_schema_length=100)
    rows = [f"{i},{i}.5,x" for i in range(500)] + ["1,1,x", "2,1234567890123456,y"]
    check(table(rows), infer_schema_length=10)
    check(table(rows), infer_schema_length=10, schema_overrides={"b": pl.Float64})
    rows = [f"{i},true,x" for i in range(300)] + ["1,null,x", "2,\"true\",y"]
    check(table(rows), infer_schema_length=10)
    rows = [f"{i},{i},2024-01-0{1 + i % 9}" for i in range(300)] + ["1,1,2024-13-01"]
    check(table(rows), infer_schema_length=10, try_parse_dates=True)
    check(table(rows), schema_overrides={"a": pl.Int8})  # out of range for the cast


def test_length_mismatch_and_after_table() -> None:
    rows = [f"{i},x,{i}" for i in range(50)]
    check(table(rows, header="t[60]{{a,b,c}}:"))
    check(table(rows, header="t[40]{{a,b,c}}:"))
    data = b"t[3]{a,b}:\n  1,2\n  3,4\n  5,6\nnext: 1\nlist[2]: a,b\n"
    check(data)
    check(b"x:\n  t[3]{a,b}:\n    1,2\n    3,4\n    5,6\n  y: 2\n", path="x.t")


# ------------------------------------------------------------------ fixtures, datasets, mutations


@pytest.mark.skipif(not DECODE, reason="spec fixtures not found")
def test_spec_fixtures() -> None:
    for _name, case in DECODE:
        data = case["input"].encode("utf-8") if isinstance(case["input"], str) else None
        if data is None:
            continue
        check(data, chunkings=CHUNKINGS[:2])


def test_datasets_take_the_native_path() -> None:
    data = toonstream.dumps(datasets.uniform(3000)).encode()
    spy = check(data)
    assert spy.tables > 0
    check(data, infer_schema_length=None, try_parse_dates=True, chunkings=CHUNKINGS[:1])
    check(data, reader="iter_batches", batch_size=700, chunkings=CHUNKINGS[:1])
    check(toonstream.dumps(datasets.events(300)).encode(), chunkings=CHUNKINGS[:2])
    check(toonstream.dumps(datasets.orders(200)).encode(), chunkings=CHUNKINGS[:2])


def test_long_runs() -> None:
    # Runs of 1 MiB or more are split on two threads: the same frames, verdicts and errors.
    data = toonstream.dumps(datasets.uniform(15000)).encode()
    assert len(data) > 1 << 20
    spy = check(data, chunkings=CHUNKINGS[:1])
    assert spy.tables > 0
    rng = random.Random(7)
    lines = data.split(b"\n")
    for bad in (b"  1,2", b"k: v", b"   1,2,3,4,5,6,7,8", b"", b"  1," + b"9" * 41 + b",1,1,1,1,1,1", b"  ,a,1,true,x,y,1,z"):
        edited = list(lines)
        edited[rng.randrange(len(lines) // 2, len(lines) - 2)] = bad
        check(b"\n".join(edited), chunkings=CHUNKINGS[:1])
        check(b"\n".join(edited), chunkings=CHUNKINGS[:1], schema_overrides={"score": pl.String})


def test_mutations() -> None:
    cells = ["x", '"q,r"', "null", "1.5", "true"]
    base = table([f"{i},{cells[i % 5]},{i * 0.25}" for i in range(40)] + ["# c", "7,8,9"])
    rng = random.Random(16)
    for _ in range(150):
        check(mutate(rng, base), chunkings=[CHUNKINGS[0], CHUNKINGS[2]])


# ------------------------------------------------------------------ generated tables

COLUMNS = st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=4, unique=True)


@st.composite
def tables(draw: Any) -> tuple[bytes, dict[str, Any]]:
    names = draw(COLUMNS)
    kinds = {n: draw(st.sampled_from(["int", "big", "float", "bool", "str", "any"])) for n in names}
    by_kind = {
        "int": st.integers(min_value=-(10**20), max_value=10**20) | st.none(),
        # (beyond int64, to 38 digits and past them; beyond float range)
        "big": st.integers(min_value=-(10**39), max_value=10**39) | st.sampled_from([None, 2**63, -(2**63) - 1, Decimal("1e400")]),
        "float": st.floats(allow_nan=False, allow_infinity=False) | st.none(),
        "bool": st.booleans() | st.none(),
        "str": st.text(max_size=6) | st.sampled_from(["null", "1", "true", " x", "a,b", '"', "#"]),
        "any": LEAVES,
    }
    rows = draw(st.lists(st.fixed_dictionaries({n: by_kind[kinds[n]] for n in names}), min_size=1, max_size=30))
    opts: dict[str, Any] = {}
    if draw(st.booleans()):
        opts["infer_schema_length"] = draw(st.sampled_from([1, 3, None]))
    if draw(st.booleans()):
        n = draw(st.sampled_from(names))
        opts["schema_overrides"] = {
            n: draw(st.sampled_from([pl.Int64, pl.Float64, pl.String, pl.Boolean, pl.Int32, pl.Decimal(38, 0), pl.Decimal(25, 0)]))
        }
    delimiter = draw(st.sampled_from([",", "\t", "|"]))
    return toonstream.dumps({"t": rows}, delimiter=delimiter).encode(), opts


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables())
def test_generated_tables(case: tuple[bytes, dict[str, Any]]) -> None:
    data, opts = case
    check(data, chunkings=[CHUNKINGS[0], CHUNKINGS[1]], **opts)


# ------------------------------------------------------------------ typed as split (plans)
#
# Once the reader knows the column types, the native splitter types each later run's cells as it
# splits them (``table_columns(plan=...)``) and keeps no cells.  These tables are long enough,
# and the types decided early enough (small batches, short inference, small runs), for most runs
# to be split so; the frames and errors must still be the reference's.

PLAN_CHUNKINGS = [(1 << 12, 1 << 10), (512, 64)]


def planned(rows: list[str], *, header: str = "t[{n}]{{a,b,c,d,e}}:", n: int | None = None, **kw: Any) -> Spy:
    kw.setdefault("batch_size", 64)
    kw.setdefault("infer_schema_length", 20)
    data = table(rows, header=header.replace("{n}", str(n if n is not None else len(rows))))
    return check(data, chunkings=PLAN_CHUNKINGS, **kw)


def plain_row(i: int) -> str:
    """Ints, floats (-0.0 too), bools, strings (short, long, quoted, spaced), nulls, a column of nulls."""
    a = "null" if i % 11 == 0 else str(i * 7919 - 300000)
    b = "null" if i % 13 == 0 else ("-0.0" if i % 9 == 0 else f"{i * 0.25}")
    c = "null" if i % 17 == 0 else ("true" if i % 3 else "false")
    d = ["null", f"s{i}", f"a longer string number {i}", f'"q,{i}"', f" sp{i} ", '"null"', "é" * (i % 15)][i % 7]
    return f"{a},{b},{c},{d},null"


PLAIN = [plain_row(i) for i in range(1500)]


def test_typed_as_split() -> None:
    spy = planned(PLAIN)
    assert spy.typed > 10, vars(spy)  # (most runs typed as split)
    # The types are decided once the first batch holds infer_schema_length
    # rows, not when it is whole: the runs after the first are typed even
    # in a batch as long as the table (and the frame is the same).
    spy = planned(PLAIN, batch_size=100_000)
    assert spy.typed > 10, vars(spy)
    # ... and with the inferred rows spread over batches, after them.
    spy = planned(PLAIN, batch_size=7, infer_schema_length=30)
    assert spy.typed > 10, vars(spy)
    planned(PLAIN, columns=["d", "a"])
    planned(PLAIN, columns=["c"], n_rows=700)
    planned(PLAIN, reader="iter_batches", batch_size=100)
    planned(PLAIN, reader="read_table")
    planned(PLAIN, reader="scan_toon")
    piped = [r.replace(",", "|") for r in PLAIN if '"' not in r]
    planned(piped, header="t[{n}|]{{a|b|c|d|e}}:")


NUMBERS_AS_TEXT = ["1.50", "-0", "-0.0", "1e3", "1E-7", "2.5e+10", "12345678901234567890", "0.1", "7"]


def test_typed_as_split_numbers_in_a_string_column() -> None:
    # A String column mixing words and numbers is typed as split, each number as its canonical
    # text (what the reference's text_of writes of its decoded value), not sent to the reference.
    rows = [r if i % 5 else late([r], 0, 3, NUMBERS_AS_TEXT[i % 9])[0] for i, r in enumerate(PLAIN) if '"' not in r]
    spy = planned(rows)
    assert spy.typed > 10, vars(spy)
    frame = tp.read_toon(table(rows, header="t[{n}]{{a,b,c,d,e}}:"), infer_schema_length=20)
    assert frame.schema["d"] == pl.String
    got = set(frame["d"].to_list())
    want = {"1.5", "0", "1000", "1e-7", "25000000000", "12345678901234567890", "0.1", "7"}
    assert want <= got and not {"1.50", "-0", "-0.0", "1e3", "1E-7", "2.5e+10"} & got
    # ... and beyond float range too, as encode_decimal writes the decoder's exact Decimal
    spy = planned(late(late(rows, 900, 3, "1e400"), 1000, 3, "-1.50E+400"))
    assert spy.typed > 10, vars(spy)
    frame = tp.read_toon(table(late(rows, 900, 3, "-1.50E+400"), header="t[{n}]{{a,b,c,d,e}}:"), infer_schema_length=20)
    assert "-1.5e+400" in frame["d"].to_list()


ESCAPED = ['"say \\"hi\\""', '"a\\\\b"', '"tab\\there"', '"x,\\ny"', '"\\r"', '"\\"q,r\\""', '"\\u001b[31mred"', '"\\u00E9t\\u00e9"']


def test_typed_as_split_escapes() -> None:
    # Quoted cells with escapes are split and unescaped natively (not fed to the decoder line by
    # line), in a planned run and in the cells the reference types; their errors, lines and
    # line texts are the reference's.
    rows = [r if i % 4 else late([r], 0, 3, ESCAPED[i // 4 % 8])[0] for i, r in enumerate(PLAIN) if '"' not in r]
    spy = planned(rows)
    assert spy.typed > 10 and spy.specials == 0, vars(spy)
    frame = tp.read_toon(table(rows, header="t[{n}]{{a,b,c,d,e}}:"), infer_schema_length=20)
    assert {'say "hi"', "a\\b", "tab\there", "x,\ny", "\r", '"q,r"', "\x1b[31mred", "été"} <= set(frame["d"].to_list())
    planned(rows, schema_overrides={"a": pl.Decimal(38, 0)})
    k = next(i for i in range(900, len(rows)) if '"' not in rows[i] and '"' not in rows[i + 1])
    planned(late(rows, k, 3, '"bad \\x"'))  # an invalid escape: the decoder's error
    for bad in ['"\\ud800"', '"\\uDFFF"', '"\\u00"', '"\\u00g1"']:  # surrogates, short or bad hex: the same
        planned(late(rows, k, 3, bad))
    planned(late(rows, k, 0, "x"))  # a misfit: its line text as written, escapes and all
    planned(late(late(rows, k + 1, 0, "x"), k, 3, '"a\\"b"'))


def late(rows: list[str], at: int, col: int, cell: str) -> list[str]:
    out = list(rows)
    cells = out[at].split(",") if '"' not in out[at] else None
    assert cells is not None, out[at]
    cells[col] = cell
    out[at] = ",".join(cells)
    return out


@pytest.mark.parametrize(
    "at,col,cell",
    [
        (1201, 0, "x"),  # a string in an Int64 column: a type error, as the reference reports it
        (1201, 0, "1.5"),  # a float in an Int64 column
        (1201, 0, "12345678901234567890"),  # beyond int64
        (1201, 1, "12345678901234567"),  # a wide int in a Float64 column
        (1201, 1, "true"),
        (1201, 2, "1"),  # a number in a Boolean column
        (1201, 3, "42"),  # a number in a String column: its canonical text
        (1201, 3, "1e5"),
        (1201, 3, "1.50"),
        (1201, 3, "-0"),
        (1201, 3, "-0.0"),
        (1201, 3, "12345678901234567890"),
        (1201, 3, "1e400"),  # beyond float range: encode_decimal's text of its Decimal
        (1201, 4, "x"),  # a string in the column of nulls (String, inferred from nulls only)
        (1201, 0, "05"),  # not a number (§4): a string
    ],
)
def test_typed_as_split_misfits(at: int, col: int, cell: str) -> None:
    planned(late(PLAIN, at, col, cell))


@pytest.mark.parametrize(
    "overrides",
    [
        {"a": pl.Int8},  # overflows: the cast's error, on its row
        {"a": pl.Float64, "b": pl.Float32},
        {"c": pl.String, "a": pl.String},  # bools as text; numbers as text (the reference's)
        {"a": pl.Decimal(38, 0)},  # ints as i128, typed as split too
        {"e": pl.Null},
        {"e": pl.Int64},
    ],
    ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()),
)
def test_typed_as_split_overrides(overrides: dict[str, Any]) -> None:
    spy = planned(PLAIN, schema_overrides=overrides)
    if "a" in overrides and overrides["a"] == pl.Decimal(38, 0):
        assert spy.typed > 10, vars(spy)
    planned(late(PLAIN, 1301, 4, "x"), schema_overrides=overrides)


def decimal_row(i: int) -> str:
    """Ints beyond int64 (up to 38 digits, signed), short ones, -0 and nulls in column a."""
    a = ["null", str(i), "-0", str(10**19 + i * 7919), "-" + "9" * 38, str(2**63 + i), str(-(2**63) - i - 1)][i % 7]
    return f"{a},{i * 0.25},true,s{i},null"


DECIMALS = [decimal_row(i) for i in range(1500)]


def test_typed_as_split_decimals() -> None:
    # A column of ints beyond int64 (Decimal(38, 0)) is typed as split, as i128, like an Int64
    # column; its misfits, overrides and casts are the reference's.
    spy = planned(DECIMALS)
    assert spy.typed > 10, vars(spy)
    frame = tp.read_toon(table(DECIMALS, header="t[{n}]{{a,b,c,d,e}}:"))
    assert frame.schema["a"] == pl.Decimal(38, 0)
    assert Decimal("-" + "9" * 38) in frame["a"].to_list()
    for at, cell in [(1201, "1.5"), (1201, "1" * 39), (1201, "x"), (1201, "1e400"), (1201, "05")]:
        planned(late(DECIMALS, at, 0, cell))
    planned(DECIMALS, schema_overrides={"a": pl.Decimal(38, 0)})
    planned(DECIMALS, schema_overrides={"a": pl.Decimal(30, 0)})  # a narrower precision: the cast's error
    planned([r for r in DECIMALS if "9" * 38 not in r], schema_overrides={"a": pl.Decimal(30, 0)})
    planned(DECIMALS, schema_overrides={"a": pl.Float64})
    planned(DECIMALS, schema_overrides={"a": pl.String})
    planned(PLAIN, schema_overrides={"a": pl.Decimal(38, 0), "b": pl.Decimal(38, 0)})  # floats: a type error
    planned(DECIMALS, reader="iter_batches", batch_size=100)
    planned(DECIMALS, reader="read_table")
    planned(DECIMALS, reader="scan_toon")
    spy = planned(entry_rows(DECIMALS), header=KEYED_HEADER)
    assert spy.typed > 10, vars(spy)


def test_typed_as_split_specials() -> None:
    # Lines the decoder reads among typed runs: comments, escapes, quoted cells it splits itself;
    # then a line off the row indentation, a short row and the table's end.
    rows = list(PLAIN)
    for k in range(1450, 100, -97):
        rows.insert(k, "# a comment")
    for k in range(120, 1400, 89):
        rows[k] = r'1,2.5,true,"a\"b",null'
    n = sum(1 for r in rows if not r.startswith("#"))
    planned(rows, n=n)
    planned(rows[:1300] + [" 1,2,true,x,null"] + rows[1300:], n=n + 1)
    planned(rows[:1300] + ["1,2,true"] + rows[1300:], n=n + 1)
    planned(rows, n=n + 5)
    planned(rows, n=n - 5)
    planned(rows, try_parse_dates=True)


def test_typed_as_split_dates() -> None:
    rows = [f"{i},2024-01-{1 + i % 28:02d},{i % 2 == 0},x{i},null".replace("True", "true").replace("False", "false") for i in range(1200)]
    planned(rows, try_parse_dates=True)
    planned(late(rows, 900, 1, "not a date"), try_parse_dates=True)


@st.composite
def long_tables(draw: Any) -> tuple[list[str], int, dict[str, Any]]:
    """Rows of a few kinds per column, repeated and varied, with one late change maybe."""
    kinds = ["1", "-7", "2.5", "-0.0", "true", "false", "null", "x", "a long string of text", '"q,r"', "42", "1e3", " y "]
    pattern = draw(st.lists(st.lists(st.sampled_from(kinds), min_size=3, max_size=3), min_size=1, max_size=4))
    n = draw(st.integers(min_value=200, max_value=900))
    rows = [",".join(pattern[i % len(pattern)]) for i in range(n)]
    if draw(st.booleans()):
        at = draw(st.integers(min_value=0, max_value=n - 1))
        rows[at] = ",".join(draw(st.lists(st.sampled_from(kinds), min_size=3, max_size=3)))
    opts: dict[str, Any] = {"infer_schema_length": draw(st.sampled_from([1, 5, 50]))}
    if draw(st.booleans()):
        opts["schema_overrides"] = {draw(st.sampled_from("abc")): draw(st.sampled_from([pl.Int64, pl.Float64, pl.String, pl.Boolean, pl.Int32]))}
    return rows, n, opts


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(long_tables())
def test_generated_typed_as_split(case: tuple[list[str], int, dict[str, Any]]) -> None:
    rows, n, opts = case
    planned(rows, header="t[{n}]{{a,b,c}}:", batch_size=16, **opts)


def test_marker_bytes_in_rows() -> None:
    # Bytes 0x01 and 0x02 mark quoted tokens in the readers' token frames: rows holding them are
    # read by the decoder on both engines, so an error names the line as it is (the reference's
    # own splitter had read \x01 as a quote mark: '  "250",x250').
    rows = [f"{i},x{i}" for i in range(300)]
    rows[250] = "\x01250,x250"
    planned(rows, header="t[{n}]{{a,b}}:", infer_schema_length=5, batch_size=16)
    rows[250] = "250,x\x02y"
    planned(rows, header="t[{n}]{{a,b}}:", infer_schema_length=5, batch_size=16)
    data = table(["\x011,a", "2,b"], header="t[{n}]{{a,b}}:")
    check(data)
    previous = _engine.use(PYTHON)
    try:
        with pytest.raises(toonstream.ToonDecodeError) as e:
            tp.read_toon(table(rows[:249] + ["\x01250,x250"] + rows[250:], header="t[{n}]{{a,b}}:"), infer_schema_length=5)
        assert e.value.line_text == "  \x01250,x250"
    finally:
        _engine.use(previous)


def test_mutations_typed_as_split() -> None:
    # Byte mutations of a table long enough for its later runs to be typed as split (tiny reader
    # steps, batches and inference): the frames or errors of the reference.
    base = table(PLAIN[:150], header="t[{n}]{{a,b,c,d,e}}:")
    rng = random.Random(33)
    typed = 0
    for _ in range(60):
        typed += check(mutate(rng, base), chunkings=[(256, 32)], batch_size=8, infer_schema_length=4).typed
    assert typed > 100  # (runs typed as split, among those of the 60 tables)


# -------------------------------------------------------------- keyed tables (§9.5)
# Entry rows, `key: cells`, are split natively too (the keys a String column before the cells),
# their keys handed to the decoder, which checks them for duplicates as it counts the rows; any
# entry row the splitter does not take is the decoder's.  Frames and errors: the reference's.

KEYS = ["k{i}", '"q {i}"', '"e\\"{i}\\\\"', "n.{i}", '"{i}"', "a,{i}", "s{i} ", "null{i}", '"t\\t{i}"', '"u\\u00e9{i}"']


def entry_rows(rows: list[str]) -> list[str]:
    return [f"{KEYS[i % len(KEYS)].format(i=i)}: {r}" for i, r in enumerate(rows)]


KEYED = entry_rows(PLAIN)
KEYED_HEADER = "t[{n}:]{{a,b,c,d,e}}:"


def test_keyed_tables_split_natively() -> None:
    spy = planned(KEYED, header=KEYED_HEADER)
    assert spy.tables > 10 and spy.typed > 10 and spy.specials == 0, vars(spy)
    planned(KEYED, header=KEYED_HEADER, native_keys=False)
    frame = tp.read_toon(table(KEYED, header=KEYED_HEADER), infer_schema_length=20)
    assert frame.columns[:2] == ["key", "a"] and frame.schema["key"] == pl.String
    assert frame["key"].to_list()[:9] == ["k0", "q 1", 'e"2\\', "n.3", "4", "a,5", "s6", "null7", "t\t8"]
    planned(KEYED, header=KEYED_HEADER, key_field="id")
    planned(KEYED, header=KEYED_HEADER, columns=["d", "key"])
    planned(KEYED, header=KEYED_HEADER, n_rows=700)
    planned(KEYED, header=KEYED_HEADER, reader="iter_batches", batch_size=100)
    planned(KEYED, header=KEYED_HEADER, schema_overrides={"a": pl.Decimal(38, 0)})
    planned(KEYED, header=KEYED_HEADER, schema_overrides={"key": pl.Categorical})
    piped = [r.replace(",", "|") for r in entry_rows([r for r in PLAIN if '"' not in r])]
    planned(piped, header="t[{n}:|]{{a|b|c|d|e}}:")
    check(b"[3:]{a,b}:\r\n  x: 1,y\r\n  \"z\": 2,w\r\n  v: 3,u\r\n")
    check(b"t[4:]{a,g{x,y}}:\n  k1: 1,2.5,s\n  k2: 2,null,t\n  k3: 3,4,\"u,v\"\n  k4: 4,5,w\n")


def test_keyed_tables_duplicate_keys() -> None:
    # A duplicate key (of a plain row's, of a line the decoder read, within a run and across runs)
    # is the decoder's error, at the duplicate's line; the rows before it come first.
    plain = entry_rows([r for r in PLAIN if '"' not in r])
    for at, again in [(5, 3), (900, 10), (900, 899), (1050, 1049), (1, 0)]:
        rows = list(plain)
        key = rows[again].split(":")[0]
        rows[at] = key + ":" + rows[at].split(":", 1)[1]
        planned(rows, header=KEYED_HEADER)
        planned(rows, header=KEYED_HEADER, native_keys=False)  # (the keys in a set, as str)
        planned(rows, header=KEYED_HEADER, n_rows=at)  # (rows before it only: a frame)
    for decoders in ['"A" : 1,2,true,x,null', '"\\u0041": 1,2,true,x,null']:
        rows = list(plain)
        rows[300] = decoders  # a key the decoder reads (the second: split natively) ...
        rows[1000] = "A: 1,2,true,x,null"  # ... and a plain row's duplicate of it, later
        planned(rows, header=KEYED_HEADER)
        rows[300], rows[1000] = rows[1000], rows[300]
        planned(rows, header=KEYED_HEADER)
    planned(plain, header="t[{n}]{{a,b,c,d,e}}:")  # (entry rows in a table: the decoder's error)


@pytest.mark.parametrize(
    "line",
    [
        "no colon here",
        "k:",  # no cells
        "k:   ",
        "k: 1,2,true",  # a short row
        'k: 1,2,true,"x",null,7',
        '"k" : 1,2,true,x,null',  # a quoted key not against its colon (the decoder's)
        '"k"x: 1,2,true,x,null',
        '"unterminated: 1,2,true,x,null',
        'k: 1,2,true,a:b,null',  # a colon in a cell
        "k: x,2,true,x,null",  # a type misfit: its line as written
        ': 1,2,true,x,null',  # an empty key
        "# a comment",
        "\tk: 1,2,true,x,null",
        " k: 1,2,true,x,null",  # off the indentation
        "k: 1,2,true, \"sp\",null",  # a quoted cell after a space (the decoder's)
    ],
)
def test_keyed_tables_odd_lines(line: str) -> None:
    plain = entry_rows([r for r in PLAIN if '"' not in r])
    n = len(plain) + (0 if line.startswith("#") else 1)
    planned(plain[:1000] + [line] + plain[1000:], header=KEYED_HEADER, n=n)
    planned(plain[:3] + [line] + plain[3:], header=KEYED_HEADER, n=n)


def test_mutations_keyed() -> None:
    base = table(KEYED[:150], header=KEYED_HEADER)
    rng = random.Random(34)
    tables = 0
    for _ in range(60):
        tables += check(mutate(rng, base), chunkings=[(256, 32)], batch_size=8, infer_schema_length=4).tables
    assert tables > 100


def test_row_limit_before_an_error() -> None:
    # n_rows stops the read: an error after the n_rows-th row (a short row, a duplicate key) is not
    # met, under any chunking, on both engines; one within the rows read is raised.
    rows = [r for r in PLAIN if '"' not in r][:300]
    for header, body in [("t[{n}]{{a,b,c,d,e}}:", rows), (KEYED_HEADER, entry_rows(rows))]:
        for at, bad in [(5, body[5].rsplit(",", 2)[0]), (200, body[200].rsplit(",", 2)[0])]:
            lines = list(body)
            lines[at] = bad
            data = table(lines, header=header)
            check(data, n_rows=at, infer_schema_length=4)
            check(data, n_rows=at + 1, infer_schema_length=4)
            assert tp.read_toon(data, n_rows=at).height == at
            with pytest.raises(toonstream.ToonDecodeError, match="cells"):
                tp.read_toon(data, n_rows=at + 1)
    dup = entry_rows(rows)
    dup[7] = dup[2].split(":")[0] + ":" + dup[7].split(":", 1)[1]
    check(table(dup, header=KEYED_HEADER), n_rows=7)
    assert tp.read_toon(table(dup, header=KEYED_HEADER), n_rows=7).height == 7


@pytest.mark.parametrize("native_keys", [False, True], ids=["set", "KeySet"])
def test_decoder_counts_entry_rows_up_to_a_duplicate(native_keys: bool) -> None:
    # The decoder's side of the keyed fast path: skip_rows takes a run's keys (a list of str for
    # its own set, (run, lo, hi) for the native KeySet), counts up to the first duplicate, and
    # checks the entry lines it reads against the keys it was given, and those against its own.
    from toonstream.decoder import Decoder

    d = Decoder(_key_set=_native.KeySet if native_keys else None)
    d.feed(b"t[6:]{a}:\n  \"q\\tr\": 1\n")
    ctx = d.table_context()
    assert ctx is not None and ctx.keyed and (ctx.indent, ctx.width, ctx.rows_left) == (2, 1, 5)
    run_bytes = b"  a: 2\n  b: 3\n  q\tr: 4\n  c: 5\n"
    run = _native.table_columns(run_bytes, 0, len(run_bytes), 2, ",", 1, 10, keyed=True)
    assert run.rows == 4 and run.keys(0, 4) == ["a", "b", "q\tr", "c"]

    def keys(lo: int, hi: int) -> Any:
        return (run, lo, hi) if native_keys else run.keys(lo, hi)

    assert d.skip_rows(2, keys(0, 2)) == 2 and d.line == 4
    assert d.skip_rows(2, keys(2, 4)) == 0 and d.line == 4  # "q\tr" was read by the decoder
    with pytest.raises(toonstream.ToonDecodeError) as e:
        d.feed(run.row_line(2))
    assert (e.value.code, e.value.line, e.value.column) == ("duplicate_key", 5, 3)
    d = Decoder(_key_set=_native.KeySet if native_keys else None)
    d.feed(b"t[6:]{a}:\n")
    assert d.skip_rows(2, keys(0, 2)) == 2
    with pytest.raises(toonstream.ToonDecodeError, match="duplicate key 'b'"):
        d.feed(b"  b: 9\n")


def test_keyed_tables_found_by_the_differential_fuzzer() -> None:
    # An entry row's quoted first cell keeps the spaces inside its quotes where the token path
    # types it (a Decimal column beside it; a date override's error message), under small feeds
    # and once a long table's runs are split; a CRLF entry row among LF ones gives its error's
    # line text without the CR, on both engines.
    small = [(200, 7), (4096, 7), (64, 7)]
    check(b'[2:]{b,c}:\n  k: y,1\n  j: "x ",99999999999999999999\n', chunkings=small + CHUNKINGS)
    check(b'[1:]{b}:\n  k: "x "\n', chunkings=small, schema_overrides={"b": pl.Date})
    long = b"".join(b"  k%d: y,99999999999999999999\n" % i for i in range(8000))
    check(b"[8001:]{b,c}:\n" + long + b'  j: "x ",1\n', chunkings=CHUNKINGS[:1])
    frame = tp.read_toon(b"[8001:]{b,c}:\n" + long + b'  j: "x ",1\n')
    assert frame["b"][-1] == "x "
    check(b"[2:]{a,b}:\n  k: 1,x\n  j: y,z\r\n", chunkings=small, infer_schema_length=1)
    long = b"".join(b"  k%d: 1,x\n" % i for i in range(8000))
    check(b"[8001:]{a,b}:\n" + long + b"  j: y,z\r\n", chunkings=CHUNKINGS[:1], infer_schema_length=1)
    with pytest.raises(toonstream.ToonDecodeError) as e:
        tp.read_toon(b"[8001:]{a,b}:\n" + long + b"  j: y,z\r\n", infer_schema_length=1)
    assert e.value.line_text == "  j: y,z"


_ABANDONED_SCANS = """
import random, sys
import polars as pl
import toonstream.polars as tp
r = random.Random(7)
n = 1_000_000
path = sys.argv[1]
with open(path, "w") as f:
    f.write(f"[{n}]{{id,name,score,flag,mix}}:\\n")
    f.writelines(f"  {i},w{i % 977},{r.random() * 1000:.4f},{'true' if i % 3 else 'null'},{'abc' if i % 5 else '2.5'}\\n"
                 for i in range(n))
lf = tp.scan_toon(path, infer_schema_length=None)
for i in range(5):
    assert lf.slice(300_000 + i * 1000, 3).collect()["id"].to_list() == [300_000 + i * 1000 + k for k in range(3)]
    assert lf.filter(pl.col("id") > 300_000).head(3).collect()["id"].to_list() == [300_001, 300_002, 300_003]
"""


@pytest.mark.slow
def test_a_scan_stopped_early_closes_quietly(tmp_path: Any) -> None:
    # A scan's slice or head abandons the reader with batches in flight; the garbage
    # collector may finalize it on the reader's own worker thread, which cannot wait for
    # itself ("Exception ignored ... RuntimeError: cannot join current thread", each query).
    import os
    import subprocess

    env = dict(os.environ, TOONSTREAM_ENGINE="native")
    r = subprocess.run([sys.executable, "-c", _ABANDONED_SCANS, str(tmp_path / "big.toon")],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    assert "Exception ignored" not in r.stderr and "cannot join" not in r.stderr, r.stderr

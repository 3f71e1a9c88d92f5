"""CSV input (``encode_arrow`` of a .csv path, the CLI's ``encode x.csv``):
cells typed from their text, numbers written exactly as written (``_csv``)."""

from __future__ import annotations

import io
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import toonstream
from toonstream import ToonEncodeError
from toonstream._arrow_encode import encode_arrow
from toonstream._csv import CsvInput


def encoded(path: Path, **kw: Any) -> str:
    out = io.StringIO()
    encode_arrow(str(path), out, **kw)
    return out.getvalue()


def write(tmp_path: Path, text: str, name: str = "t.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def test_numbers_are_written_as_written(tmp_path: Path) -> None:
    # pyarrow's inference made the first a float (digits lost), the zip code
    # the int 7, the dates timestamps; here each is the number or text written.
    path = write(
        tmp_path,
        "id,big,f,zip,day,ok,none\n"
        "1,12345678901234567890123,1.5e3,007,2024-01-05,true,NA\n"
        "2,5,0.10000000000000000001,x,2024-01-06 10:00:00,FALSE,\n"
        "3,,1.50,,,,\n"
        "4,-0,0.30000000000000004,NA,x,True,\n",
    )
    rows = [
        {"id": 1, "big": 12345678901234567890123, "f": 1500, "zip": "007", "day": "2024-01-05", "ok": True, "none": None},
        {"id": 2, "big": 5, "f": Decimal("0.10000000000000000001"), "zip": "x", "day": "2024-01-06 10:00:00", "ok": False,
         "none": None},
        {"id": 3, "big": None, "f": Decimal("1.5"), "zip": "", "day": "", "ok": None, "none": None},
        {"id": 4, "big": 0, "f": Decimal("0.30000000000000004"), "zip": "NA", "day": "x", "ok": True, "none": None},
    ]
    assert encoded(path) == toonstream.dumps(rows)
    assert toonstream.loads(encoded(path))[0]["big"] == 12345678901234567890123


def test_column_types_per_batch(tmp_path: Path) -> None:
    # int64 in the first batches, decimal256 in the one with a big int, float64
    # in another: one column, several Arrow types, the same TOON numbers.
    n = 300_000
    lines = [f"{i},{i * 7}" for i in range(n)]
    lines[100_000] = "100000,123456789012345678901234567890"
    lines[250_000] = "250000,2.5"
    path = write(tmp_path, "i,v\n" + "\n".join(lines) + "\n")
    types = {str(b.column(1).type) for b in CsvInput(str(path)).batches()}
    assert {"int64", "large_string", "double"} <= types, types
    got = toonstream.loads(encoded(path, batch_size=65_536))
    assert len(got) == n
    assert got[100_000]["v"] == 123456789012345678901234567890 and got[250_000]["v"] == 2.5
    assert got[249_999]["v"] == 249_999 * 7


def test_numbers_beyond_arrow_types_are_written_exactly(tmp_path: Path) -> None:
    cells = ["1", "1e400", "-1E-400", "1" * 77, "0.10000000000000000001", "1.50", "-0", "12345678901234567890123"]
    path = write(tmp_path, "a\n" + "\n".join(cells) + "\n")
    text = encoded(path)
    assert text.splitlines()[1:] == ["  " + t for t in ["1", "1e+400", "-1e-400", "1" * 77, "0.10000000000000000001", "1.5",
                                                         "0", "12345678901234567890123"]]
    assert [r["a"] for r in toonstream.loads(text, parse_float=Decimal)] == [Decimal(c) for c in cells]
    # a number the decoders could not read back (past max_number_length) is refused at its cell
    path = write(tmp_path, "a\n1\n" + "1" * 10_001 + "\n")
    with pytest.raises(ToonEncodeError, match="number too long") as e:
        encoded(path)
    assert e.value.path == (1, "a") and "CSV row 2 (after the header), column 'a'" in str(e.value)


def test_float_texts_exact_or_not(tmp_path: Path) -> None:
    floats = ["0.1", "1e-7", "5e-324", "1.7976931348623157e308", "-2.5E+3", "0.30000000000000004", "-0.0"]
    path = write(tmp_path, "x\n" + "\n".join(floats) + "\n")
    assert [str(b.column(0).type) for b in CsvInput(str(path)).batches()] == ["double"]
    assert [r["x"] for r in toonstream.loads(encoded(path))] == [float(t) for t in floats]
    # one number float64 does not hold: the batch as text, exponents included
    decimals = ["0.1", "1e-7", "-2.5E+3", "0.30000000000000004", "123456.789012345678", "1.5e20"]
    path = write(tmp_path, "x\n" + "\n".join(decimals) + "\n")
    assert [b.schema.metadata for b in CsvInput(str(path)).batches()] == [{b"toonstream.raw": b"0"}]
    got = toonstream.loads(encoded(path), parse_float=Decimal)
    assert [r["x"] for r in got] == [Decimal(t) for t in decimals]


def test_a_later_cell_of_another_kind_is_an_error_at_its_row(tmp_path: Path) -> None:
    body = "".join(f"{i},{i % 2 == 0}\n".lower() for i in range(200_000))
    for bad, col in (("x,true", "n"), ("5,maybe", "b")):
        path = write(tmp_path, "n,b\n" + body + bad + "\n")
        with pytest.raises(ToonEncodeError, match=f"CSV row 200001 \\(after the header\\), column '{col}'") as e:
            encoded(path)
        assert e.value.path == (200_000, col)


def test_blank_lines_quoted_line_ends_and_header_forms(tmp_path: Path) -> None:
    # one column: a blank line is a row (its cell empty: null), as CSV
    # writers write it (toonstream's decode --to csv too)
    assert encoded(write(tmp_path, "n\n1\n\n3\n")) == toonstream.dumps([{"n": 1}, {"n": None}, {"n": 3}])
    # a leading blank line, a line end inside a quoted header name or value
    assert encoded(write(tmp_path, "\na,b\n1,2\n")) == toonstream.dumps([{"a": 1, "b": 2}])
    assert encoded(write(tmp_path, 'a,"b\nc"\n1,2\n')) == toonstream.dumps([{"a": 1, "b\nc": 2}])
    # quoted line ends past the first block (pyarrow's chunker needs to know)
    rows = [{"i": i, "s": f"x\ny{i}" if i % 3 == 0 else f"z{i}"} for i in range(100_000)]
    body = "".join(f'{r["i"]},"{r["s"]}"\n' for r in rows)
    assert encoded(write(tmp_path, "i,s\n" + body)) == toonstream.dumps(rows)
    # old Mac line ends (CR only)
    assert encoded(write(tmp_path, "a,b\r1,2\r3,4\r")) == toonstream.dumps([{"a": 1, "b": 2}, {"a": 3, "b": 4}])
    # an exponent beyond Decimal's: a data error at its cell, not a crash
    with pytest.raises(ToonEncodeError, match="exponent is out of range") as e:
        encoded(write(tmp_path, "n\n1e99999999999999999999\n"))
    assert e.value.path == (0, "n")


def test_header_forms(tmp_path: Path) -> None:
    path = write(tmp_path, '\ufeff"a,b",c\r\n1,x\r\n2,"y\r\nz"\r\n'.replace('"y\r\nz"', "y"))
    assert encoded(path) == toonstream.dumps([{"a,b": 1, "c": "x"}, {"a,b": 2, "c": "y"}])
    assert encoded(write(tmp_path, "a,b\n")) == "[0]{a,b}:"  # (no rows: the columns kept)
    assert encoded(write(tmp_path, "a,b\n,\n,\n")) == toonstream.dumps([{"a": None, "b": None}] * 2)
    with pytest.raises(ToonEncodeError, match="appears twice"):
        encoded(write(tmp_path, "a,a\n1,2\n"))


def test_all_null_first_rows_then_values(tmp_path: Path) -> None:
    # a column decided by its first batch holding a value
    lines = ["1,"] * 70_000 + ["2,7", "3,"]
    path = write(tmp_path, "i,v\n" + "\n".join(lines) + "\n")
    got = toonstream.loads(encoded(path, batch_size=65_536))
    assert got[70_000] == {"i": 2, "v": 7} and got[0] == {"i": 1, "v": None} and got[-1] == {"i": 3, "v": None}


def test_cli_stdin_and_file_agree(tmp_path: Path) -> None:
    path = write(tmp_path, "id,v\n1,12345678901234567890123\n2,0.5\n")
    want = toonstream.dumps([{"id": 1, "v": 12345678901234567890123}, {"id": 2, "v": Decimal("0.5")}])
    assert "  1,12345678901234567890123\n" in want
    for args, data in ((["encode", str(path)], None), (["encode", "--from", "csv"], path.read_bytes())):
        r = subprocess.run([sys.executable, "-m", "toonstream", *args], input=data, capture_output=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert r.stdout.decode() == want
    bad = write(tmp_path, "id,v\n" + "1,2\n" * 400_000 + "2,x\n", "bad.csv")  # (x past the first 1 MiB batch)
    out = tmp_path / "out.toon"
    out.write_text("precious")
    r = subprocess.run([sys.executable, "-m", "toonstream", "encode", str(bad), "-o", str(out)], capture_output=True, timeout=120)
    assert r.returncode == 1 and b"'x'" in r.stderr and b"Traceback" not in r.stderr
    assert out.read_text() == "precious"


def test_schema_of_an_empty_table() -> None:
    src = CsvInput(io.BytesIO(b"a,b\n"))
    assert src.schema == pa.schema([("a", pa.null()), ("b", pa.null())])
    assert list(src.batches()) == []


def test_no_read_of_the_source_after_it_is_closed() -> None:
    # pyarrow's CSV reader reads ahead on its own thread and goes on after its reader is
    # closed: once CsvInput is closed (here: a consumer that stops after the first batch),
    # the source is not read again (a late read of a closed file could take the bytes of
    # another file opened under its descriptor number: rows lost or garbled). A read in
    # flight is waited for.
    import threading
    import time

    from toonstream._csv import CsvInput

    reads: list[tuple[str, float]] = []
    closed = threading.Event()

    class Slow(io.BytesIO):
        def read(self, n: int | None = -1) -> bytes:
            reads.append(("after" if closed.is_set() else "before", time.perf_counter()))
            if len(reads) > 3:
                time.sleep(0.1)  # (reads ahead in flight when the consumer stops)
            return super().read(n)

    rows = 1_500_000  # (about 20 of pyarrow's 1 MiB blocks: more than it reads ahead)
    body = "".join(f"{i},{'true' if i % 2 == 0 else 'false'}\n" for i in range(rows))
    src = CsvInput(Slow(("n,b\n" + body).encode()))
    batches = src.batches()
    first = next(batches)
    assert first.column(0).to_pylist()[:3] == [0, 1, 2]
    batches.close()  # (closes the input)
    closed.set()
    time.sleep(0.5)
    assert [when for when, _ in reads].count("after") == 0, reads
    # and a whole read through a slow source keeps every row, in order
    reads.clear()
    whole = CsvInput(io.BytesIO(("n,b\n" + body).encode()))
    assert [v for b in whole.batches() for v in b.column(0).to_pylist()] == list(range(rows))

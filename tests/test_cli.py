"""The real CLI in subprocesses: outputs, exit codes, atomicity, signals, pipes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import toonstream
from conftest import default_signals

CLI = [sys.executable, "-m", "toonstream"]
RECORDS = [{"id": i, "name": f"user{i}", "score": i / 4, "ok": i % 2 == 0} for i in range(50)]


def run(*args: str, input: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*CLI, *args], input=input, capture_output=True, cwd=cwd, timeout=120)


@pytest.fixture()
def jsonl(tmp_path: Path) -> Path:
    p = tmp_path / "in.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    return p


def test_encode_file_to_file_and_back(tmp_path: Path, jsonl: Path) -> None:
    out = tmp_path / "out.toon"
    r = run("encode", str(jsonl), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_text() == toonstream.dumps(RECORDS)
    back = run("decode", str(out), "--to", "jsonl")
    assert back.returncode == 0
    assert [json.loads(line) for line in back.stdout.decode().splitlines()] == RECORDS
    pretty = run("decode", str(out), "--indent", "2")
    # TOON writes 0.0 as 0 (§2), so compare with the decoded value's own JSON
    assert pretty.stdout.decode() == json.dumps(toonstream.loads(out.read_text()), indent=2) + "\n"
    assert json.loads(pretty.stdout) == RECORDS


def test_encode_stdin_stdout_options(jsonl: Path) -> None:
    r = run("encode", "--delimiter", "pipe", "--key", "users", input=jsonl.read_bytes())
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == toonstream.dumps({"users": RECORDS}, delimiter="|")
    doc = {"meta": {"n": 2}, "items": [1, 2]}
    r = run("encode", "--from", "json", "--indent-size", "4", input=json.dumps(doc, indent=1).encode())
    assert r.stdout.decode() == toonstream.dumps(doc, indent_size=4)


def test_stats_on_stderr(jsonl: Path) -> None:
    r = run("encode", str(jsonl), "--stats")
    assert r.returncode == 0
    assert b"tokens" in r.stderr and b"bytes" in r.stderr and b"estimated" in r.stderr


def test_data_error_is_one_line_and_leaves_destination(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\n{"a": \n')
    out = tmp_path / "out.toon"
    out.write_text("precious")
    r = run("encode", str(bad), "-o", str(out))
    assert r.returncode == 1
    lines = r.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{bad}:2:"), lines
    assert out.read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl", "out.toon"]
    # valid JSON that TOON cannot hold: the record's line, and the path in it
    bad.write_text('{"a": 1}\n\n{"a": [1, ' + "9" * 10_001 + ']}\n')
    r = run("encode", str(bad), "-o", str(out))
    assert r.returncode == 1 and out.read_text() == "precious"
    assert r.stderr.decode().strip().startswith(f"{bad}:3:1: number too long: ")
    assert r.stderr.decode().strip().endswith("(at [1].a[1])")
    # a lone surrogate escape: invalid JSON, as in a JSON document (its escape's column)
    bad.write_text('{"a": 1}\n\n{"a": [1, "\\ud800"]}\n')
    r = run("encode", str(bad), "-o", str(out))
    assert r.returncode == 1 and out.read_text() == "precious"
    want = f"{bad}:3:12: invalid JSON: lone surrogate '\\ud800' (no low surrogate escape after it)"
    assert r.stderr.decode().strip() == want


def test_decode_error_location(tmp_path: Path) -> None:
    src = tmp_path / "x.toon"
    src.write_text("a: 1\nt[2]{x,y}:\n  1,2\n  3\n")
    r = run("decode", str(src), "-o", str(tmp_path / "x.json"))
    assert r.returncode == 1
    assert r.stderr.decode().strip() == f"{src}:4:3: row has 1 cells, header declares 2 fields"
    assert not (tmp_path / "x.json").exists()
    assert run("decode", "--no-strict", input=b"t[5]: a,b").stdout == b'{"t":["a","b"]}\n'


def test_validate(tmp_path: Path) -> None:
    good = tmp_path / "good.toon"
    good.write_text("a: 1")
    bad = tmp_path / "bad.toon"
    bad.write_text("x:\n  y: 1\n   z: 2")
    r = run("validate", str(good), str(bad), str(tmp_path / "missing.toon"))
    assert r.returncode == 1
    err = r.stderr.decode().splitlines()
    assert err[0] == f"{bad}:3:4: indentation of 3 spaces is not a multiple of 2"
    assert err[1].startswith(f"{tmp_path / 'missing.toon'}:")
    assert run("validate", str(good)).returncode == 0


def test_usage_errors(tmp_path: Path, jsonl: Path) -> None:
    assert run("encode", "--delimiter", "semicolon").returncode == 2
    assert run("frobnicate").returncode == 2
    r = run("encode", str(jsonl), "-o", str(jsonl))
    assert r.returncode == 2 and jsonl.read_text().startswith('{"id": 0')
    assert run("encode", str(tmp_path / "nope.jsonl")).returncode == 1


def test_closed_stdout_pipe_is_quiet(tmp_path: Path) -> None:
    big = tmp_path / "big.jsonl"
    big.write_text("".join(json.dumps({"i": i, "s": "x" * 50}) + "\n" for i in range(100_000)))
    p = subprocess.run(
        f"{sys.executable} -m toonstream encode {big} | head -c 100 > /dev/null; echo ${{PIPESTATUS[0]}}",
        shell=True, capture_output=True, executable="/bin/bash", timeout=120,
    )
    assert p.stdout.decode().strip() == "141"
    assert b"Traceback" not in p.stderr and p.stderr == b""


def test_full_device_fails_cleanly(jsonl: Path) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    r = run("encode", str(jsonl), "-o", "/dev/full")
    assert r.returncode == 1 and b"No space left" in r.stderr and b"Traceback" not in r.stderr


def test_a_spool_that_cannot_grow_names_the_temporary_directory(tmp_path: Path) -> None:
    """Piped JSON Lines are spooled to a temporary file (the count comes before the rows): when
    it cannot grow (here a file size limit; a full disk alike), the error names where it was."""
    import resource

    def limited() -> None:
        default_signals()
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # (a write past the limit fails: EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))

    data = "".join(json.dumps({"i": i, "s": "x" * 40}) + "\n" for i in range(300_000)).encode()
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    r = subprocess.run([*CLI, "encode", "--from", "jsonl"], input=data, capture_output=True, env=env,
                       preexec_fn=limited, timeout=120)
    assert r.returncode == 1, r.stderr
    assert r.stderr.decode() == f"toonstream: error: {tmp_path} (temporary files; TMPDIR can name another directory): File too large\n"
    assert not list(tmp_path.iterdir())  # (the spool is gone)


def _writes_into(pid: int, directory: Path) -> bool:
    """Whether process ``pid`` has its temporary output open in ``directory``:
    a named file beside the destination, or (Linux) an anonymous one, seen
    through /proc as ``directory/#inode (deleted)``."""
    if len(list(directory.iterdir())) >= 2:
        return True
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(directory) + os.sep):
            return True
    return False


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signals_leave_destination_untouched(tmp_path: Path, sig: int, code: int) -> None:
    out = tmp_path / "out.toon"
    out.write_text("before")
    proc = subprocess.Popen([*CLI, "encode", "--from", "jsonl", "-o", str(out)], stdin=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=default_signals)
    assert proc.stdin is not None
    proc.stdin.write(b'{"a": 1}\n' * 1000)
    proc.stdin.flush()
    # Wait for the temporary output file: the CLI is then in the conversion,
    # with its handlers installed (a fixed sleep raced a slow start under load).
    deadline = time.monotonic() + 60
    while not _writes_into(proc.pid, tmp_path) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _writes_into(proc.pid, tmp_path), "the conversion did not start"
    time.sleep(0.2)  # now blocked reading stdin, mid-conversion
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code
    assert b"Traceback" not in err
    assert out.read_text() == "before"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.toon"]


def test_progress_bar_on_request(jsonl: Path) -> None:
    r = run("encode", str(jsonl), "--progress")
    assert r.returncode == 0 and r.stdout.decode() == toonstream.dumps(RECORDS)
    assert b"encode" in r.stderr  # tqdm's bar, on stderr only
    quiet = run("encode", str(jsonl))  # stderr is not a terminal here: no bar by default
    assert quiet.stderr == b""


def test_import_does_not_load_arrow_or_polars() -> None:
    code = "import sys, toonstream; print('pyarrow' in sys.modules, 'polars' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["False", "False"]


# ---------------------------------------------------------------- fault injection


def _big_jsonl(path: Path, n: int = 200_000) -> None:
    with open(path, "w") as f:
        for start in range(0, n, 10_000):
            f.write("".join(json.dumps({"i": i, "s": f"row {i}", "x": i / 3}) + "\n" for i in range(start, start + 10_000)))


def _started(*args: str) -> subprocess.Popen[bytes]:
    """The CLI started as its console script is, returned when the next
    statement is its first: the clock of a test starts there (before it,
    Python's own start-up and site, a signal gets the interpreter's
    behaviour, which is not ours to change)."""
    r, w = os.pipe()
    # run()'s own steps, with the "started" byte written once the handlers are in: written before
    # run(), a signal under load could land between the write and run()'s first line, in this
    # harness's frame (as it could in a console script's, before any line of ours)
    entry = (
        "import os, sys\n"
        "from toonstream import _signals\n"
        "_signals.install()\n"
        "try:\n"
        f"    os.write({w}, b'.'); os.close({w})\n"
        "    from toonstream.cli import main\n"
        "    status = main(installed=True)\n"
        "except KeyboardInterrupt:\n"
        "    status = _signals.EXIT_SIGINT\n"
        "except _signals.Terminated:\n"
        "    status = _signals.EXIT_SIGTERM\n"
        "finally:\n"
        "    _signals.finish()\n"
        "sys.exit(status)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", entry, *args], stderr=subprocess.PIPE, preexec_fn=default_signals,
                            pass_fds=(w,))
    os.close(w)
    try:
        assert os.read(r, 1) == b".", "the CLI did not start"
    finally:
        os.close(r)
    return proc


@pytest.mark.slow
def test_signals_at_random_points(tmp_path: Path) -> None:
    import random

    src = tmp_path / "big.jsonl"
    _big_jsonl(src)
    out = tmp_path / "out.toon"
    rnd = random.Random(1234)
    complete: str | None = None
    for trial in range(6):
        out.write_text("before")
        sig = rnd.choice([signal.SIGINT, signal.SIGTERM])
        proc = _started("encode", str(src), "-o", str(out))
        time.sleep(rnd.uniform(0, 1.5))
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
        assert b"Traceback" not in err, err
        leftovers = sorted(p.name for p in tmp_path.iterdir())
        assert leftovers == ["big.jsonl", "out.toon"], leftovers  # no temporary file left behind
        if proc.returncode == 0:  # finished before the signal: the whole output
            if complete is None:
                complete = run("encode", str(src)).stdout.decode()
            assert out.read_text() == complete
        else:
            assert proc.returncode == (130 if sig == signal.SIGINT else 143), (trial, proc.returncode)
            assert out.read_text() == "before"


def _mount_tmpfs(path: Path, options: str) -> bool:
    path.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True)
    return r.returncode == 0


def test_tiny_filesystem_leaves_no_partial_file(tmp_path: Path) -> None:
    mnt = tmp_path / "tiny"
    if not _mount_tmpfs(mnt, "size=64k"):
        pytest.skip("cannot mount a tmpfs here (needs root and mount permission)")
    try:
        src = tmp_path / "big.jsonl"
        _big_jsonl(src, 20_000)
        r = run("encode", str(src), "-o", str(mnt / "out.toon"))
        assert r.returncode == 1 and b"No space left" in r.stderr and b"Traceback" not in r.stderr
        assert list(mnt.iterdir()) == []
    finally:
        subprocess.run(["umount", str(mnt)])


def test_unreadable_and_unwritable_paths(tmp_path: Path, jsonl: Path) -> None:
    r = run("encode", str(tmp_path), "--from", "jsonl")  # a directory is not readable as a file
    assert r.returncode == 1 and b"Traceback" not in r.stderr and r.stderr.count(b"\n") == 1
    r = run("encode", str(jsonl), "-o", str(tmp_path / "no" / "such" / "dir" / "out.toon"))
    assert r.returncode == 1 and b"Traceback" not in r.stderr
    ro = tmp_path / "ro"
    if _mount_tmpfs(ro, "size=64k,ro"):
        try:
            r = run("encode", str(jsonl), "-o", str(ro / "out.toon"))
            assert r.returncode == 1 and b"Read-only" in r.stderr and b"Traceback" not in r.stderr
        finally:
            subprocess.run(["umount", str(ro)])


# ---------------------------------------------------------------- table inputs (Parquet, Arrow IPC, CSV)


def _table_files(tmp_path: Path) -> tuple["pa.Table", dict[str, Path]]:  # noqa: F821
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 300
    table = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "name": [f"user {i}" if i % 5 else f"odd, {i}" for i in range(n)],
            "score": [i / 7 for i in range(n)],
            "when": pa.array([dt.datetime(2024, 1, 1) + dt.timedelta(minutes=i) for i in range(n)], pa.timestamp("s")),
            "geo": pa.array([{"lat": i / 2, "ok": i % 2 == 0} for i in range(n)]),
        }
    )
    files = {"parquet": tmp_path / "t.parquet", "feather": tmp_path / "t.feather", "ipc": tmp_path / "t.ipc", "arrow": tmp_path / "t.arrow"}
    pq.write_table(table, files["parquet"], row_group_size=100)
    for name, opener in (("feather", pa.ipc.new_file), ("arrow", pa.ipc.new_file), ("ipc", pa.ipc.new_stream)):
        with pa.OSFile(str(files[name]), "wb") as sink, opener(sink, table.schema) as w:
            w.write_table(table, max_chunksize=64)
    return table, files


@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_encode_parquet_and_arrow_inputs(tmp_path: Path) -> None:
    table, files = _table_files(tmp_path)
    rows = table.to_pylist()
    for name, path in files.items():
        out = tmp_path / f"{name}.toon"
        r = run("encode", str(path), "-o", str(out), "--key", "rows", "--delimiter", "tab")
        assert r.returncode == 0, (name, r.stderr)
        assert out.read_text() == toonstream.dumps({"rows": rows}, delimiter="\t"), name
    r = run("encode", "--from", "parquet", input=files["parquet"].read_bytes())  # stdin: spooled to a temp file
    assert r.returncode == 0 and r.stdout.decode() == toonstream.dumps(rows)
    r = run("encode", "--from", "arrow", "--indent-size", "4", input=files["ipc"].read_bytes())
    assert r.returncode == 0 and r.stdout.decode() == toonstream.dumps(rows, indent_size=4)
    odd = tmp_path / "data.bin"  # unknown extension: --from decides
    odd.write_bytes(files["parquet"].read_bytes())
    r = run("encode", str(odd), "--from", "parquet", "--stats")
    assert r.returncode == 0 and r.stdout.decode() == toonstream.dumps(rows)
    assert b"input (parquet)" in r.stderr and b"tokens" in r.stderr


def test_encode_csv_input_types_cells_from_their_text(tmp_path: Path) -> None:
    src = tmp_path / "t.csv"
    src.write_text('id,name,price,day,flag\n1,"Smith, John",9.5,2024-01-02,true\n2,plain,,2024-02-03,false\n3,-x,1e21,,\n')
    rows = [
        {"id": 1, "name": "Smith, John", "price": 9.5, "day": "2024-01-02", "flag": True},
        {"id": 2, "name": "plain", "price": None, "day": "2024-02-03", "flag": False},
        {"id": 3, "name": "-x", "price": 1e21, "day": "", "flag": None},
    ]
    want = toonstream.dumps({"r": rows}, delimiter="|")
    r = run("encode", str(src), "--key", "r", "--delimiter", "pipe", "--stats")
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == want
    assert "|2024-01-02|" in want and '|"-x"|' in want  # a date column, a quoted string
    assert b"input (csv)" in r.stderr
    r = run("encode", "--from", "csv", "--key", "r", "--delimiter", "pipe", input=src.read_bytes())
    assert r.returncode == 0 and r.stdout.decode() == want


def test_encode_table_input_errors_leave_destination(tmp_path: Path) -> None:
    out = tmp_path / "out.toon"
    out.write_text("precious")
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 not really a parquet file")
    r = run("encode", str(bad), "-o", str(out))
    assert r.returncode == 1 and b"Traceback" not in r.stderr
    assert r.stderr.decode().startswith(f"{bad}: ") and r.stderr.count(b"\n") == 1
    # CSV: a later block that contradicts the inferred type is a data error, not a partial file
    csv = tmp_path / "late.csv"
    with open(csv, "w") as f:
        f.write("n,s\n")
        f.write("".join(f"{i},row {i}\n" for i in range(200_000)))
        f.write("not a number,x\n")
    r = run("encode", str(csv), "-o", str(out))
    assert r.returncode == 1 and b"Traceback" not in r.stderr, r.stderr
    assert out.read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.parquet", "late.csv", "out.toon"]
    r = run("encode", str(tmp_path / "missing.parquet"))
    assert r.returncode == 1 and b"Traceback" not in r.stderr


def test_encode_jsonl_file_is_read_twice_not_spooled_and_counted_once(tmp_path: Path) -> None:
    # A JSON Lines file is seekable: the encoder re-reads it (no spool), and
    # --stats still counts every input byte exactly once.
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"id": i, "name": f"n{i}"}) + "\n" for i in range(50_000)))
    out = tmp_path / "out.toon"
    p = run("encode", str(src), "-o", str(out), "--stats")
    assert p.returncode == 0, p.stderr
    assert f"{src.stat().st_size:,} bytes".encode() in p.stderr
    import toonstream
    from toonstream.cli import _CountingReader

    assert out.read_text() == toonstream.dumps([json.loads(line) for line in src.read_text().splitlines()])
    seen: list[bytes] = []
    with open(src, "rb") as f:
        r = _CountingReader(f, seen.append)
        assert r.seekable()
        buf = bytearray(1000)
        r.readinto(buf)
        r.seek(0)
        r.readinto(buf)
        r.readinto(buf)
    assert b"".join(seen) == src.read_bytes()[:2000]


def test_max_line_length_option(tmp_path: Path) -> None:
    """A line longer than the decoders' default (64 MiB: a string that long)
    is refused by decode and validate unless --max-line-length allows it;
    here the limit is lowered instead, on a small file."""
    src = tmp_path / "t.toon"
    src.write_text("[2]{id,s}:\n  1," + "x" * 100 + "\n  2,y")
    for args in (["validate"], ["decode", "--to", "jsonl"], ["decode", "--to", "json"]):
        r = run(*args, "--max-line-length", "50", str(src))
        assert r.returncode == 1 and b"line longer than max_line_length (50 characters)" in r.stderr, (args, r.stderr)
        r = run(*args, "--max-line-length", "200", str(src))
        assert r.returncode == 0, (args, r.stderr)
    r = run("decode", "--max-line-length", "-1", str(src))
    assert r.returncode == 2


def test_from_reads_a_table_file_as_that_format(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    csv = tmp_path / "t.csv"
    csv.write_text("a,b\n1,x\n")
    pq.write_table(pa.table({"a": [1]}), tmp_path / "p.parquet")
    r = run("encode", "--from", "parquet", str(csv))
    assert r.returncode == 1 and b"Traceback" not in r.stderr
    assert r.stderr.decode().startswith(f"{csv}: cannot read Parquet input: ")
    r = run("encode", "--from", "arrow", str(tmp_path / "p.parquet"))
    assert r.returncode == 1 and b": cannot read Arrow IPC input: " in r.stderr
    renamed = tmp_path / "t.parquet"
    csv.rename(renamed)
    r = run("encode", "--from", "csv", str(renamed))
    assert (r.returncode, r.stdout) == (0, b"[1]{a,b}:\n  1,x"), r.stderr

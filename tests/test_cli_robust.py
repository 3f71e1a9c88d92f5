"""The command line under hostile conditions: signals at start-up, closed
standard streams, broken and compressed inputs, awkward output paths, --help."""

from __future__ import annotations

import argparse
import bz2
import gzip
import io
import json
import lzma
import os
import random
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import toonstream
from toonstream import ToonEncodeError
from conftest import default_signals
from test_cli import _big_jsonl, _started

CLI = [sys.executable, "-m", "toonstream"]
RECORDS = [{"id": i, "name": f"user{i}", "ok": i % 2 == 0} for i in range(40)]


def run(*args: str, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*CLI, *args], input=input, capture_output=True, timeout=120)


def one_line(r: subprocess.CompletedProcess[bytes]) -> str:
    err = r.stderr.decode()
    assert b"Traceback" not in r.stderr, err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    return err.rstrip("\n")


# ---------------------------------------------------------------- signals at start-up


@pytest.mark.slow
def test_signal_at_start_up_exits_quietly(tmp_path: Path) -> None:
    # 0-50 ms after our first statement: the codec and the command line are
    # still being imported, the arguments parsed, the input opened.
    src = tmp_path / "big.jsonl"
    _big_jsonl(src, 100_000)
    out = tmp_path / "out.toon"
    rnd = random.Random(7)
    for trial in range(30):
        out.write_text("before")
        sig = rnd.choice([signal.SIGINT, signal.SIGTERM])
        proc = _started("encode", str(src), "-o", str(out))
        time.sleep(rnd.uniform(0, 0.05))
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
        assert err == b"", (trial, err)
        assert proc.returncode == (130 if sig == signal.SIGINT else 143), (trial, proc.returncode)
        assert out.read_text() == "before"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["big.jsonl", "out.toon"]


def test_signal_right_after_spawn_never_shows_our_traceback(tmp_path: Path) -> None:
    # From the very spawn of `python -m toonstream`: a signal before our first
    # line gets the interpreter's behaviour (killed by it, site's fatal error,
    # a traceback from loading our first module); from our first line on,
    # 130/143 and nothing on stderr.
    src = tmp_path / "big.jsonl"
    _big_jsonl(src, 20_000)
    rnd = random.Random(3)
    for trial in range(20):
        sig = rnd.choice([signal.SIGINT, signal.SIGTERM])
        proc = subprocess.Popen([*CLI, "encode", str(src)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                preexec_fn=default_signals)
        time.sleep(rnd.uniform(0, 0.05))
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
        # no traceback from a line of ours (one from Python loading our first module is before it:
        # runpy, or a console script, runs the package's __init__ before any line of ours can
        # install the handlers; it only defines names, lazily, to keep that window short)
        frames = [line for line in err.decode(errors="replace").splitlines() if line.lstrip().startswith('File "')]
        assert not frames or "/toonstream/" not in frames[-1] or "/toonstream/__init__.py" in frames[-1], (trial, err)
        if proc.returncode in (130, 143):
            assert err == b"" and proc.returncode == (130 if sig == signal.SIGINT else 143)
        else:
            assert proc.returncode in (-sig, 1, 0), (trial, proc.returncode, err)
            # the interpreter's own start-up failures: site's fatal error, or runpy interrupted
            assert proc.returncode != 1 or b"Fatal Python error" in err or b"Could not import runpy" in err, err
            # 0: site's error in a .pth file (site carries on), or the run had finished (quietly), or
            # Python swallowed the KeyboardInterrupt in importlib's module-lock callback while it
            # imported our package, before the handlers (it prints "Exception ignored" and carries
            # on: the run then finishes, its output complete)
            swallowed = b"Exception ignored in: <function _get_module_lock" in err and err.rstrip().endswith(
                b"KeyboardInterrupt:")
            assert proc.returncode != 0 or err == b"" or b"Error processing line" in err or swallowed, err


def test_late_signal_keeps_the_committed_output() -> None:
    # After the rename the run is over: a signal then does not turn a complete
    # output into status 130 (the signal module's state, in-process).
    from toonstream import _signals

    before = _signals.install()
    try:
        seen: list[str] = []

        def publish() -> None:
            os.kill(os.getpid(), signal.SIGINT)  # arrives during the commit: waits
            seen.append("renamed")

        _signals.commit(publish)
        os.kill(os.getpid(), signal.SIGINT)  # after it: ignored
        time.sleep(0.05)
        assert seen == ["renamed"]
    finally:
        _signals.restore(before)


def test_signals_during_exit_keep_the_status() -> None:
    # Once the command has returned its status, signals are ignored up to the process's end,
    # through the interpreter's finalization too (it puts SIG_DFL back in place of Python
    # handlers: a SIGTERM there ended the process with -15 after a complete output).
    entry = (
        "import os, sys\n"
        "from toonstream import _signals\n"
        "_signals.install()\n"
        "_signals.finish()\n"
        "os.write(1, b'.')\n"
        "sys.exit(0)\n"
    )
    for _ in range(20):
        proc = subprocess.Popen([sys.executable, "-c", entry], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=default_signals)
        assert proc.stdout is not None and proc.stdout.read(1) == b"."
        while proc.poll() is None:  # SIGTERM over and over until the process has gone
            try:
                proc.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                break
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, (proc.returncode, err)


def test_import_is_lazy() -> None:
    code = (
        "import sys, toonstream; mods = sorted(m for m in sys.modules if m.startswith('toonstream'));"
        "from toonstream import loads, Rows, __version__; import toonstream as t;"
        "print(mods, loads('a: 1'), t.dumps([1]) == '[1]: 1', t.decoder.__name__, sorted(set(t.__all__) - set(dir(t))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "['toonstream'] {'a': 1} True toonstream.decoder []", out.stderr


# ---------------------------------------------------------------- closed standard streams


def sh(command: str, **kwargs: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["sh", "-c", command], capture_output=True, timeout=120, **kwargs)  # type: ignore[call-overload, no-any-return]


@pytest.mark.parametrize("command", ["decode {toon}", "decode {toon} --to jsonl", "encode {jsonl}", "stats {jsonl}",
                                     "validate -v {toon}"])
def test_closed_stdout_is_one_line(tmp_path: Path, command: str) -> None:
    toon = tmp_path / "x.toon"
    toon.write_text(toonstream.dumps(RECORDS))
    jsonl = tmp_path / "x.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    cli = " ".join(CLI)
    r = sh(f"{cli} {command.format(toon=toon, jsonl=jsonl)} >&-")
    assert r.returncode == 1
    assert one_line(r) == "toonstream: error: <stdout>: write error: Bad file descriptor"
    # with -o, a closed stdout does not matter
    if command.startswith(("decode", "encode")):
        r = sh(f"{cli} {command.format(toon=toon, jsonl=jsonl)} -o {tmp_path / 'out'} >&-")
        assert r.returncode == 0 and r.stderr == b""


def test_closed_stdin_and_stderr(tmp_path: Path) -> None:
    cli = " ".join(CLI)
    r = sh(f"{cli} encode <&-")
    assert r.returncode == 1
    assert one_line(r) == "toonstream: error: <stdin>: read error: Bad file descriptor"
    r = sh(f"{cli} decode - <&-")
    assert r.returncode == 1 and "<stdin>: read error" in one_line(r)
    # stderr closed: the error cannot be told, the status still is; nothing of
    # it reaches stdout or the output file (which could get descriptor 2)
    bad = tmp_path / "bad.toon"
    bad.write_text("a:\n   b: 1\n")
    r = sh(f"{cli} decode {bad} 2>&-")
    assert r.returncode == 1 and r.stdout == b""
    good = tmp_path / "good.toon"
    good.write_text("a: 1\n")
    r = sh(f"{cli} decode {good} -o {tmp_path / 'o.json'} 2>&-")
    assert r.returncode == 0 and (tmp_path / "o.json").read_text() == '{"a":1}\n'


def test_full_stdout_names_stdout(tmp_path: Path) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    toon = tmp_path / "x.toon"
    toon.write_text(toonstream.dumps(RECORDS))
    r = sh(f"{' '.join(CLI)} decode {toon} > /dev/full")
    assert r.returncode == 1 and one_line(r) == "toonstream: error: <stdout>: No space left on device"
    jsonl = tmp_path / "x.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    for command in (f"stats {jsonl}", f"stats --json {jsonl}", f"validate -v {toon}"):  # (the reports too)
        r = sh(f"{' '.join(CLI)} {command} > /dev/full")
        assert r.returncode == 1 and one_line(r) == "toonstream: error: <stdout>: No space left on device", command


# ---------------------------------------------------------------- JSON errors


def _paths(value: object, path: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*path, k))
    elif isinstance(value, list):
        for n, v in enumerate(value):
            out += _paths(v, (*path, n))
    return out


def test_the_scanner_finds_the_value_at_a_path() -> None:
    """Every value of random documents (escaped and raw non-ASCII keys, U+2028, pretty and compact)
    is found where it starts, however the input is chunked; a path the document lacks, or a key
    whose type differs (0 is not "0"), is not found."""
    from toonstream._jsonscan import locate_json_error

    rnd = random.Random(5)
    keys = ["a", "bé", "c\n", "\u2028", "k" * 5, "😀"]

    def value(depth: int) -> object:
        r = rnd.random()
        if depth > 4 or r < 0.3:
            return rnd.choice([1, 's"é', None, True, -2.5e3, "😀", [], {}])
        if r < 0.65:
            return {rnd.choice(keys) + str(i): value(depth + 1) for i in range(rnd.randint(0, 3))}
        return [value(depth + 1) for _ in range(rnd.randint(0, 3))]

    for _ in range(150):
        v = value(0)
        text = json.dumps(v, indent=rnd.choice([None, 1]), ensure_ascii=rnd.random() < 0.5)
        lines = text.split("\n")
        for path in _paths(v):
            found = locate_json_error(io.BytesIO(text.encode()), chunk=rnd.choice([1, 2, 5, 1 << 16]), path=path)
            assert found is not None and found.msg == "", (text, path)
            start = sum(len(ln) + 1 for ln in lines[: found.line - 1]) + found.column - 1
            want: object = v
            for step in path:
                want = want[step]  # type: ignore[index]
            assert json.JSONDecoder().raw_decode(text, start)[0] == want, (text, path)
    for path in [("nope",), ("a", 5), ("a", "0"), (0,)]:
        assert locate_json_error(io.BytesIO(b'{"a": [1, 2], "b": {"0": 1}}'), path=path) is None
    assert locate_json_error(io.BytesIO(b'{"a": [1,, 2]}'), path=("a", 1)).msg == "expected a value, found ','"  # (not a value: the error)


def test_an_encoder_error_in_a_json_document_names_its_value_s_place(tmp_path: Path) -> None:
    """A value nested too deep in a JSON document: file:line:col where it starts, read again
    by the scanner along the error's path (a file, a compressed file, stdin)."""
    doc = b'[{"a": 1},\n{"a": 2},\n' + b"[" * 10_000 + b"]" * 10_000 + b"]"
    src = tmp_path / "deep.json"
    src.write_bytes(doc)
    (tmp_path / "deep.json.gz").write_bytes(gzip.compress(doc))
    for args, name, data in [((str(src),), str(src), None), ((str(src) + ".gz",), str(src) + ".gz", None),
                             (("-", "--from", "json"), "<stdin>", doc)]:
        r = run("encode", *args, input=data)
        assert r.returncode == 1
        assert one_line(r).startswith(f"{name}:3:10000: value nested deeper than max_depth (10000) (at [2][0][0]"), r.stderr
    # A repeated root key: where it occurs the second time (its first value an object with
    # the same key inside, and an escaped spelling of it; a file and stdin).
    dup = b'{"a": {"a": 1, "x": {"a": 0}},\n"b": [{"a": 1}],\n  "\\u0061": 3}'
    (tmp_path / "dup.json").write_bytes(dup)
    for args, name, data in [((str(tmp_path / "dup.json"),), str(tmp_path / "dup.json"), None),
                             (("-", "--from", "json"), "<stdin>", dup)]:
        r = run("encode", *args, input=data)
        assert r.returncode == 1
        assert one_line(r) == f"{name}:3:3: two keys with the same text 'a' in one object", r.stderr


def test_the_scanner_finds_a_repeated_key() -> None:
    """``repeated``: the second occurrence of the path's last key in its object, under any
    chunking; a key repeated only in other objects, or not at all, is not found."""
    from toonstream._jsonscan import locate_json_error

    text = b'{"k": [{"a": 1, "b": {"a": 2}}, {"b": 1, "a": 2, "a": 3}], "a": 0}'
    for chunk in (1, 2, 3, 7, 1 << 16):
        found = locate_json_error(io.BytesIO(text), chunk=chunk, path=("k", 1, "a"), repeated=True)
        assert found is not None and (found.msg, found.line, found.column) == ("", 1, text.index(b'"a": 3') + 1)
        for path in [("a",), ("k", 0, "a"), ("k", 1, "b"), ("nope",)]:
            assert locate_json_error(io.BytesIO(text), chunk=chunk, path=path, repeated=True) is None, path


def _locate(data: bytes, chunk: int = 1 << 16) -> tuple[int, int, str] | None:
    from toonstream._jsonscan import locate_json_error

    e = locate_json_error(io.BytesIO(data), chunk=chunk)
    return None if e is None else (e.line, e.column, e.msg)


@pytest.mark.parametrize(
    "doc, line, column, message",
    [
        (b'{"a": 1 "b": 2}', 1, 9, "expected ',' or '}' after an object member, found '\"'"),
        (b"[1,]", 1, 4, "expected a value, found ']'"),
        (b'{"k":\n  [1,\n   2,,3]}', 3, 6, "expected a value, found ','"),
        (b'{"a" 1}', 1, 6, "expected ':' after an object key, found '1'"),
        (b"[tru]", 1, 2, "invalid literal 'tru'"),
        (b'["a\\qb"]', 1, 4, "invalid escape 'q' after a backslash"),
        (b"[1, 2", 1, 6, "unexpected end of input"),
        (b'["\xc3\xa9\xff"]', 1, 4, "invalid UTF-8 in a string"),
        (b'["\xc3\xa9\x01"]', 1, 4, "control character '\\x01' in a string (must be escaped)"),
        (b"{} {}", 1, 4, "extra data after the JSON value: '{'"),
        (b'\n\n  ["unterminated', 3, 4, "unterminated string"),
        (b"\x1f\x8b\x08\x00", 1, 1, "expected a value, found '\\x1f'"),
        (b'{"\xc3\xa9t\xc3\xa9": 01}', 1, 9, "invalid number '01'"),  # columns count characters
    ],
)
def test_json_error_locations(doc: bytes, line: int, column: int, message: str) -> None:
    import ijson

    with pytest.raises(ijson.JSONError):  # the scanner runs where ijson failed
        for _ in ijson.parse(io.BytesIO(doc)):
            pass
    for chunk in (1, 2, 3, 5, 7, 1 << 16):  # every chunking gives the same answer
        assert _locate(doc, chunk) == (line, column, message), chunk


def test_json_locations_agree_with_json_module_and_chunkings() -> None:
    # Corrupt one character of a document; where Python's json names a
    # syntax error at the same character, so must we, for every chunking.
    import ijson

    base = json.dumps({"users": [{"id": i, "name": f"n\u00e9{i}", "tags": ["a", "b"], "x": i / 3} for i in range(30)]},
                      indent=1).encode()
    rnd = random.Random(11)
    agreed = 0
    for _ in range(300):
        k = rnd.randrange(len(base))
        doc = base[:k] + rnd.choice([b",", b"]", b"}", b":", b"x", b'"', b"\x01", b" 1"]) + base[k + 1 :]
        try:
            for _ in ijson.parse(io.BytesIO(doc)):
                pass
            continue
        except ijson.JSONError:
            pass
        found = _locate(doc)
        assert found is not None, doc
        for chunk in (1, 3, 64, 1000):
            assert _locate(doc, chunk) == found
        try:
            json.loads(doc)
        except json.JSONDecodeError as e:
            # (json names the character after a number's "7." where we name the number)
            if e.msg.startswith(("Expecting ',' delimiter", "Expecting ':' delimiter", "Extra data")) and "number" not in found[2]:
                assert (e.lineno, e.colno) == found[:2], (doc[max(0, k - 20) : k + 20], e, found)
                agreed += 1
    assert agreed > 20


@pytest.mark.slow
def test_json_error_deep_in_a_big_document_cli(tmp_path: Path) -> None:
    # 3 MB, minified then one error at the end of a long line, and gzipped: one line, exact place
    rows = [{"id": i, "s": "x" * 20} for i in range(60_000)]
    inner = json.dumps(rows)
    broken = "[" + json.dumps(rows[:30_000]) + ",\n" + inner[:-1] + "}]"  # the inner array's ']' became '}'
    assert len(broken) > 3_000_000
    src = tmp_path / "big.json"
    src.write_text(broken)
    want = f"{src}:2:{len(inner)}: invalid JSON: expected ',' or ']' after an array element, found '}}'"
    r = run("encode", str(src))
    assert r.returncode == 1 and one_line(r) == want
    gz = tmp_path / "big.json.gz"
    gz.write_bytes(gzip.compress(broken.encode()))
    r = run("encode", str(gz))
    assert r.returncode == 1 and one_line(r) == want.replace(str(src), str(gz))
    r = run("stats", str(gz))
    assert r.returncode == 1 and one_line(r) == want.replace(str(src), str(gz))
    with open(src, "rb") as f:  # stdin redirected from a file can be read again too
        r = subprocess.run([*CLI, "encode"], stdin=f, capture_output=True, timeout=120)
    assert r.returncode == 1 and one_line(r) == want.replace(str(src), "<stdin>")
    r = run("encode", input=gzip.compress(broken.encode()))  # a pipe: its head is kept (16 MiB)
    assert r.returncode == 1 and one_line(r) == want.replace(str(src), "<stdin>")
    huge = tmp_path / "huge.json"  # beyond the head, a pipe has the reason only, on one line
    with open(huge, "w") as f:
        f.write("[" + ",".join([json.dumps(rows)] * 8) + ",]")
    with open(huge, "rb") as f:
        r = subprocess.run(f"cat | {' '.join(CLI)} encode", shell=True, stdin=f, capture_output=True, timeout=120)
    assert r.returncode == 1 and one_line(r).startswith("<stdin>: invalid JSON: parse error: ")


@pytest.mark.slow
def test_binary_garbage_is_never_echoed_raw(tmp_path: Path) -> None:
    garbage = bytes(random.Random(5).randrange(256) for _ in range(5000))
    for name in ("g.json", "g.jsonl", "g.toon", "g.bin"):
        src = tmp_path / name
        src.write_bytes(b"\x07\x1b[2J" + garbage)
        for command in (["encode"], ["decode"], ["validate"], ["stats"]):
            r = run(*command, str(src))
            if name == "g.toon" and command == ["stats"]:  # (stats reads JSON: a .toon file is a usage error)
                assert r.returncode == 2 and b"not TOON" in r.stderr, r.stderr
                continue
            assert r.returncode == 1, (name, command, r.stderr)
            line = one_line(r)
            assert line.isprintable() and len(line) < 400, (name, command, line)
            assert "b'" not in line and "\\n" not in line, (name, command, line)  # no bytes repr, no yajl context


def test_messages_quoting_the_input_are_escaped_and_bounded(tmp_path: Path) -> None:
    """A decode error's message may quote the input (a header's text, a bad escape's character):
    a raw CR or ESC would rewrite the terminal line, a long header fill it."""
    cases = {
        "cr.toon": b"a[x\rFAKE: all good]: 1\n",
        "esc.toon": b'a: "\\\x1b[31mRED"\n',
        "long.toon": b"a[" + b"x" * 100_000 + b"]: 1\n",
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        for command in (["validate"], ["decode"]):
            r = run(*command, str(tmp_path / name))
            assert r.returncode == 1, (name, r.stderr)
            line = one_line(r)
            assert line.isprintable() and len(line) < 600, (name, command, line[:200])
            assert line.startswith(f"{tmp_path / name}:1:"), line[:200]


# ---------------------------------------------------------------- compressed inputs


COMPRESSORS = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}


@pytest.mark.parametrize("ext", sorted(COMPRESSORS))
@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_compressed_inputs(tmp_path: Path, ext: str) -> None:
    compress = COMPRESSORS[ext]
    jsonl = "".join(json.dumps(r) + "\n" for r in RECORDS).encode()
    want = toonstream.dumps(RECORDS)
    src = tmp_path / f"in.jsonl{ext}"
    src.write_bytes(compress(jsonl))
    r = run("encode", str(src))  # the format from the inner extension
    assert r.returncode == 0 and r.stdout.decode() == want, r.stderr
    r = run("encode", input=compress(jsonl))  # by magic bytes, on stdin
    assert r.returncode == 0 and r.stdout.decode() == want, r.stderr
    odd = tmp_path / "in.data"  # by magic bytes, any name
    odd.write_bytes(compress(json.dumps(RECORDS).encode()))
    r = run("encode", str(odd))
    assert r.returncode == 0 and r.stdout.decode() == want, r.stderr
    toon = tmp_path / f"x.toon{ext}"
    toon.write_bytes(compress(want.encode()))
    r = run("decode", str(toon), "--to", "jsonl")
    assert r.returncode == 0 and [json.loads(x) for x in r.stdout.splitlines()] == RECORDS
    assert run("validate", str(toon)).returncode == 0
    r = run("decode", "--to", "csv", input=compress(want.encode()))
    assert r.returncode == 0 and r.stdout.splitlines()[0] == b"\"id\",\"name\",\"ok\""
    r = run("stats", str(src), "--json")
    assert r.returncode == 0, r.stderr


@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_compressed_jsonl_is_not_split_and_corrupt_streams_are_data_errors(tmp_path: Path) -> None:
    lines = [{"i": i, "s": f"row {i}"} for i in range(200_000)]
    src = tmp_path / "big.jsonl.gz"
    src.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in lines).encode(), compresslevel=1))
    r = run("encode", str(src), "-j", "2")  # the parallel path cuts files: never a compressed one
    assert r.returncode == 0 and r.stdout.decode() == toonstream.dumps(lines), r.stderr[-300:]
    data = src.read_bytes()
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(data[: len(data) // 2])
    out = tmp_path / "out.toon"
    r = run("encode", str(cut), "-o", str(out))
    assert r.returncode == 1 and not out.exists()
    assert one_line(r).startswith(f"toonstream: error: {cut}: corrupt gzip data: ")
    flipped = tmp_path / "flip.toon.xz"
    xz = bytearray(lzma.compress(toonstream.dumps(lines[:1000]).encode()))
    xz[len(xz) // 2] ^= 0xFF
    flipped.write_bytes(bytes(xz))
    for command in ("decode", "validate"):
        r = run(command, str(flipped))
        assert r.returncode == 1 and "corrupt xz data" in one_line(r), r.stderr
    fake = tmp_path / "fake.json.gz"  # the extension says gzip: it must be gzip
    fake.write_text("[1, 2]")
    r = run("encode", str(fake))
    assert r.returncode == 1 and "corrupt gzip data" in one_line(r)


def test_zstd_input(tmp_path: Path) -> None:
    data = json.dumps(RECORDS).encode()
    src = tmp_path / "in.json.zst"
    try:
        from compression import zstd  # type: ignore[import-not-found]

        src.write_bytes(zstd.compress(data))
    except ImportError:
        zstandard = pytest.importorskip("zstandard")
        src.write_bytes(zstandard.ZstdCompressor().compress(data))
    r = run("encode", str(src))
    assert r.returncode == 0 and r.stdout.decode() == toonstream.dumps(RECORDS), r.stderr
    r = run("encode", "--from", "jsonl", input=_zstd_lines())
    frame = src.read_bytes()
    assert r.returncode == 0 and r.stdout.decode() == toonstream.dumps(RECORDS * 2), r.stderr
    cut = tmp_path / "cut.json.zst"  # a truncated frame is an error, not a shorter input
    cut.write_bytes(frame[: len(frame) // 2])
    r = run("encode", str(cut))
    assert r.returncode == 1 and "corrupt zstd data" in one_line(r)


def _zstd_lines() -> bytes:
    """Two zstd frames of JSON Lines, one after the other (as `cat a.zst b.zst`)."""
    try:
        from compression import zstd  # type: ignore[import-not-found]

        compress = zstd.compress
    except ImportError:
        import zstandard  # type: ignore[import-not-found]

        compress = zstandard.ZstdCompressor().compress
    lines = "".join(json.dumps(r) + "\n" for r in RECORDS).encode()
    return bytes(compress(lines)) * 2


def test_bzip2_magic_needs_its_block_magic() -> None:
    # "BZh" may start a TOON text: only the full bzip2 header counts
    r = run("decode", input=b"BZh9: 1\n")
    assert r.returncode == 0 and r.stdout == b'{"BZh9":1}\n'


# ---------------------------------------------------------------- output paths


def test_io_errors_name_the_path_given(tmp_path: Path) -> None:
    src = tmp_path / "in.json"
    src.write_text("[1]")
    r = run("encode", str(src), "-o", "nodir/x.toon")
    assert r.returncode == 1 and one_line(r) == "toonstream: error: nodir/x.toon: No such file or directory"
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        r = run("encode", str(src), "-o", str(ro / "x.toon"))
        assert one_line(r) == f"toonstream: error: {ro / 'x.toon'}: Permission denied"
    r = run("encode", str(tmp_path / "missing.json"))
    assert one_line(r) == f"toonstream: error: {tmp_path / 'missing.json'}: No such file or directory"


def test_output_through_symlinks(tmp_path: Path) -> None:
    src = tmp_path / "in.json"
    src.write_text(json.dumps(RECORDS))
    want = toonstream.dumps(RECORDS)
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "target.toon"
    target.write_text("old")
    target.chmod(0o640)
    link = tmp_path / "link.toon"
    link.symlink_to(Path("real") / "target.toon")  # relative: to the link's directory
    chain = tmp_path / "chain.toon"
    chain.symlink_to(link)
    r = run("encode", str(src), "-o", str(chain))
    assert r.returncode == 0, r.stderr
    assert chain.is_symlink() and link.is_symlink()  # the links stay links
    assert target.read_text() == want
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # as cp keeps them
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["target.toon"]  # no temporary file left
    dangling = tmp_path / "dangling.toon"
    dangling.symlink_to(tmp_path / "real" / "new.toon")
    r = run("encode", str(src), "-o", str(dangling))
    assert r.returncode == 0 and dangling.is_symlink() and (tmp_path / "real" / "new.toon").read_text() == want
    # a failed run leaves the target as it was
    bad = tmp_path / "bad.json"
    bad.write_text("[1,")
    r = run("encode", str(bad), "-o", str(chain))
    assert r.returncode == 1 and target.read_text() == want and chain.is_symlink()
    loop = tmp_path / "loop.toon"
    loop.symlink_to(loop)
    r = run("encode", str(src), "-o", str(loop))
    assert r.returncode == 1 and one_line(r).startswith(f"toonstream: error: {loop}: ")


# ---------------------------------------------------------------- --help


def test_help_covers_every_argument() -> None:
    from toonstream.cli import _parser

    parser = _parser()
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert len(subparsers) == 1
    commands = subparsers[0].choices
    assert set(commands) >= {"encode", "decode", "stats", "validate"}
    for name, sub in [("toonstream", parser), *commands.items()]:
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            assert action.help and action.help != argparse.SUPPRESS, (name, action.option_strings or action.dest)
        if sub is parser:
            continue
        text = sub.format_help()
        examples = text.split("examples:\n")[1].split("\n\n")[0].splitlines()
        assert 2 <= len(examples) <= 3 and all(e.strip().startswith(("toonstream ", "curl ")) for e in examples), text
        for code in ("0 ", "1 ", "2 ", "130", "143", "141"):
            assert f"  {code}" in text.split("exit status:")[1], (name, code)
    top = parser.format_help()
    for fmt in ("json", "jsonl", "parquet", "arrow", "csv"):
        assert top.count(fmt) >= 2, fmt  # an input and an output format
    r = run("--help")
    assert r.returncode == 0 and b"decode outputs: json, jsonl, parquet, arrow, csv" in r.stdout


def test_a_signal_swallowed_in_a_weakref_callback_is_raised_again() -> None:
    # Python swallows an exception raised in a weakref callback (importlib's module-lock clean-up
    # during start-up is one) and prints "Exception ignored in ...": the signal would be lost, the
    # run go on to exit 0 with that message on stderr. The hook sends it again instead.
    import weakref

    from toonstream import _signals

    class Thing:
        pass

    def callback(_: object) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):  # the handler runs here, inside the callback
            pass

    # A run started in the background by a non-interactive shell inherits SIGINT ignored, and
    # install() rightly leaves an ignored signal ignored: this test needs it handled.
    inherited = signal.getsignal(signal.SIGINT)
    if inherited == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    before = _signals.install()
    try:
        thing = Thing()
        ref = weakref.ref(thing, callback)
        with pytest.raises(KeyboardInterrupt):
            del thing
            for _ in range(500):  # the signal sent again is raised out here
                time.sleep(0.01)
        assert ref() is None
    finally:
        _signals.restore(before)
        _signals.finish()
        signal.signal(signal.SIGINT, inherited)


def _lone_reference(text: bytes) -> int | None:
    """The offset of the first lone surrogate escape of ``text``, read whole: escapes taken left
    to right (an escaped backslash is one), a high one paired with a low one right after it."""
    import re

    escapes = [(m.start(), m.group(1)) for m in re.finditer(rb"\\(u[0-9a-fA-F]{4}|.)", text, re.S)]
    k = 0
    while k < len(escapes):
        at, what = escapes[k]
        code = int(what[1:], 16) if len(what) == 5 else -1
        if 0xD800 <= code <= 0xDBFF:
            nxt = escapes[k + 1] if k + 1 < len(escapes) else None
            if nxt is None or nxt[0] != at + 6 or len(nxt[1]) != 5 or not 0xDC00 <= int(nxt[1][1:], 16) <= 0xDFFF:
                return at
            k += 2
            continue
        if 0xDC00 <= code <= 0xDFFF:
            return at
        k += 1
    return None


def test_lone_surrogate_escapes_found_in_any_chunking() -> None:
    """SurrogateCheck (fed as the command line reads) finds the first lone surrogate escape where
    a reading of the whole text does, whatever the chunks: escaped backslashes before a "u", long
    runs of them (carried as their parity), pairs split anywhere."""
    from toonstream._jsonscan import LoneSurrogate, SurrogateCheck

    pieces = [b"\\", b"\\\\", b"u", b"d8", b"dc", b"00", b"\\ud800", b"\\udc00", b"\\uD83D\\uDE00", b"\\ud83d",
              b"\\ude00", b'"', b"a", b"\n", b"\\" * 7, b"\\" * 40, b"\\u0041", b"\\uDBFF", b"\\uDFFF", b"\\ud8zz"]
    # (pair-dense texts too, whose chunks the check clears by counts, without a step per escape)
    dense = [b"\\uD83D\\uDE00", b"\\ud83d\\ude00", b"ab", b"\\n", b"\\u00e9"]
    rnd = random.Random(5)
    lone_seen = 0
    for k in range(4000):
        kinds = pieces if k % 4 else dense + [rnd.choice(pieces)]
        text = b"".join(rnd.choice(kinds) for _ in range(rnd.randrange(1, 60)))
        want = _lone_reference(text)
        lone_seen += want is not None
        for _ in range(3):
            check = SurrogateCheck()
            got = None
            try:
                at = 0
                while at < len(text):
                    n = rnd.randrange(1, 20)
                    check.feed(text[at : at + n])
                    at += n
                check.close()
            except LoneSurrogate as e:
                got = e.args[1]
            assert got == want, (text, got, want)
    assert lone_seen > 500  # (both answers met often)


@pytest.mark.parametrize(
    "doc, line, column, message",
    [
        (b'{"a": "x\\ud800"}', 1, 9, "lone surrogate '\\ud800' (no low surrogate escape after it)"),
        (b'["\\udc00"]', 1, 3, "lone surrogate '\\udc00' (no high surrogate escape before it)"),
        (b'\n["\\ud83d\\ude00", "\\ud83d\\u0041"]', 2, 19, "lone surrogate '\\ud83d' (no low surrogate escape after it)"),
        (b'["\\ud83d\\ude00\\\\ud800"]', None, None, None),  # (a pair; an escaped backslash, then text)
    ],
)
def test_lone_surrogates_in_json_input(tmp_path: Path, doc: bytes, line: int | None, column: int | None,
                                       message: str | None) -> None:
    """yajl writes "?" for a lone high surrogate escape and invalid UTF-8 for a low one: the
    command line refuses them (TOON text is UTF-8), naming the escape's place, from a file and
    from a pipe (where it cannot read the input again: the reason only); the locator agrees in
    every chunking."""
    for chunk in (1, 2, 5, 7, 1 << 16):
        assert _locate(doc, chunk) == (None if line is None else (line, column, message)), chunk
    src = tmp_path / "in.json"
    src.write_bytes(doc)
    for command in ("encode", "stats"):
        r = run(command, str(src))
        piped = run(command, "--from", "json", "-", input=doc)
        if message is None:
            assert r.returncode == piped.returncode == 0, (r.stderr, piped.stderr)
            continue
        assert r.returncode == piped.returncode == 1, (r.stderr, piped.stderr)
        assert one_line(r) == f"{src}:{line}:{column}: invalid JSON: {message}"
        assert one_line(piped).endswith(f"invalid JSON: {message}"), piped.stderr
    if message is None:
        assert "\\ud800" in run("encode", str(src)).stdout.decode()


def test_deep_json_documents_in_bounded_memory(tmp_path: Path) -> None:
    """A JSON document nested 100,000 deep (200 KB) is refused at max_depth in bounded memory
    (ijson's parse events carried a prefix string each: memory quadratic in the depth, gigabytes
    for a few tens of KB); the message shortens the path."""
    src = tmp_path / "deep.json"
    src.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    out = tmp_path / "out.toon"
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)); "
            "from toonstream.cli import main; sys.exit(main(sys.argv[1:]))")
    for command in (["encode", str(src), "-o", str(out)], ["stats", str(src)]):
        r = subprocess.run([sys.executable, "-c", code, *command], capture_output=True, timeout=120)
        assert r.returncode == 1, r.stderr[-500:]
        assert "nested deeper than max_depth (10000)" in one_line(r) and len(one_line(r)) < 400, one_line(r)[:400]
    assert not out.exists() and list(tmp_path.iterdir()) == [src]


def test_csv_of_a_table_without_rows(tmp_path: Path) -> None:
    for doc, extra in [(b"[0]{id,name}:\n", []), (b"a[0]{x,y}:\n", ["--path", "a"]), (b"[0:]{x}:\n", [])]:
        src = tmp_path / "e.toon"
        src.write_bytes(doc)
        r = run("decode", str(src), "--to", "csv", *extra)
        assert r.returncode == 0, r.stderr
        assert r.stdout.count(b"\n") == 1 and b"," in r.stdout or r.stdout.strip() in (b'"key","x"', b'"x"'), r.stdout


@pytest.mark.parametrize("bad", [b'{"a":"abc', b'{"a":01}', b'{"a":1,}', b'{"b":2} x', b'[1, 2', b'{"a" 1}', b'["\xc3\xa9", tru]',
                                 b'{"a": "x\\ud800"}', b'["\\uDC00"]', b'["\\ud83d\\ude00", "\\ud83d\\u0041"]',
                                 b'{"a":"\xc3\xa9\xc3\xa9\xff"}', b'{"\xc3\xa9":1, \xff}'])
def test_json_lines_errors_named_as_in_a_document(tmp_path: Path, engine: str, bad: bytes) -> None:
    """A bad JSON line is named as the same text as a JSON document is (the reason, the offending
    character), on its line; with or without the line end, and on both engines."""
    from toonstream.streaming import encode_jsonl

    want = _locate(bad)
    assert want is not None
    for end in (b"", b"\n"):
        with pytest.raises(ToonEncodeError) as e:
            encode_jsonl(io.BytesIO(b'{"a": 1}\n' + bad + end), io.StringIO())
        assert (e.value.line, e.value.column, e.value.msg) == (2, want[1], f"invalid JSON: {want[2]}"), end


@pytest.mark.parametrize("args", [["--help"], ["encode", "--help"], ["--version"]], ids=" ".join)
def test_help_to_a_full_disk_is_an_error(args: list[str]) -> None:
    """argparse drops an OSError writing --help or --version: the command exited 0 having written
    nothing. Like `ls --help > /dev/full`, it is an error now; `| head` stays quiet."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    with open("/dev/full", "wb") as full:
        r = subprocess.run([*CLI, *args], stdout=full, stderr=subprocess.PIPE, timeout=120)
    assert r.returncode == 1
    assert one_line(r) == "toonstream: error: <stdout>: No space left on device"


@pytest.mark.parametrize(("args", "typed", "want"), [
    (["decode"], b"a: 1\n", b'{"a":1}\n'),
    (["encode"], b'{"a": 1}\n', b"a: 1"),
    (["encode", "--from", "jsonl"], b'{"a": 1}\n{"a": 2}\n', b"[2]{a}:\n  1\n  2"),
], ids=["decode", "encode-json", "encode-jsonl"])
def test_one_ctrl_d_ends_input_typed_at_a_terminal(args: list[str], typed: bytes, want: bytes) -> None:
    """Input typed at a terminal ends at the first Ctrl-D, as for cat: the readers read again
    after the end, and a terminal waits for another Ctrl-D each time (encode took three)."""
    import time

    pytest.importorskip("pty")  # (POSIX terminals)
    master, slave = os.openpty()
    p = subprocess.Popen([*CLI, *args], stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(slave)
    try:
        os.write(master, typed)
        time.sleep(0.3)  # (the line read before the Ctrl-D, at the start of the next line)
        os.write(master, b"\x04")
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
        os.close(master)
    assert (p.returncode, out, err) == (0, want, b"")


def test_decode_output_format_by_the_output_file_name(tmp_path: Path) -> None:
    """Without --to, -o's extension picks the format, as encode's input name picks its input's
    (out.parquet held JSON); parquet/arrow to a terminal is a usage error."""
    src = tmp_path / "t.toon"
    src.write_bytes(b"users[2]{id,name}:\n  1,a\n  2,b\n")
    starts = {"out.parquet": b"PAR1", "out.arrow": b"ARROW1", "out.csv": b'"id","name"', "out.jsonl": b'{"id":1',
              "out.json": b'{"users":', "out.txt": b'{"users":'}
    for name, start in starts.items():
        out = tmp_path / name
        path = [] if name in ("out.json", "out.txt") else ["--path", "users"]
        r = run("decode", str(src), "-o", str(out), *path)
        assert r.returncode == 0, (name, r.stderr)
        assert out.read_bytes().startswith(start), (name, out.read_bytes()[:20])
    r = run("decode", str(src), "-o", str(tmp_path / "x.parquet"), "--indent", "2")
    assert r.returncode == 2 and b"--indent applies to --to json only, not to parquet output (from -o's" in r.stderr
    # .arrows names the IPC stream format
    import pyarrow as pa

    assert run("decode", str(src), "-o", str(tmp_path / "x.arrows"), "--path", "users").returncode == 0
    assert pa.ipc.open_stream(str(tmp_path / "x.arrows")).read_all().num_rows == 2
    pytest.importorskip("pty")  # (POSIX terminals)
    master, slave = os.openpty()
    try:
        p = subprocess.run([*CLI, "decode", str(src), "--to", "parquet", "--path", "users"], stdout=slave,
                           stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(slave)
        os.close(master)
    assert p.returncode == 2 and b"--to parquet writes binary" in p.stderr


def test_indent_size_past_the_encoders_limit_is_a_usage_error(tmp_path: Path) -> None:
    src = tmp_path / "two.jsonl"
    src.write_bytes(b'{"a":1}\n{"a":2}\n')
    r = run("encode", str(src), "--indent-size", "67108865")
    assert r.returncode == 2 and b"must be <= 67108864" in r.stderr and b"Traceback" not in r.stderr
    # past the native engine's own limit (4,096): the reference writes it
    r = run("encode", str(src), "--indent-size", "5000")
    assert r.returncode == 0 and r.stdout == b"[2]{a}:\n" + b" " * 5000 + b"1\n" + b" " * 5000 + b"2"


def test_a_raw_form_feed_is_no_json_white_space(tmp_path: Path) -> None:
    """yajl takes a vertical tab or form feed as white space; json.loads refuses them (and a
    string holds no raw control character): a data error at its place."""
    for data, where in [(b"[1]\x0c", ":1:4:"), (b"[1,\n\x0b2]", ":2:1:"), (b'["a\x0cb"]', ":1:4:")]:
        src = tmp_path / "x.json"
        src.write_bytes(data)
        for command in (["encode"], ["stats"]):
            r = run(*command, str(src))
            assert r.returncode == 1 and where in one_line(r) and "invalid JSON" in one_line(r), (data, r.stderr)
    assert run("encode", "--from", "json", input=b'{"a": [1, 2]}\t\r\n').stdout == b"a[2]: 1,2"


# ---------------------------------------------------------------- descriptors as outputs


@pytest.mark.slow  # (subprocesses: CI runs it)
def test_output_to_an_inherited_descriptor_writes_through_it(tmp_path: Path) -> None:
    # -o /dev/stdout (/dev/fd/N, /proc/self/fd/N) writes through the descriptor the shell
    # opened, as -o - does: renaming a file over the one stdout has open lost what the shell
    # wrote to it before and after (exit 0); with stdout closed, the error is the command's.
    src = tmp_path / "in.json"
    src.write_text('{"a": [1, 2]}')
    log = tmp_path / "log.txt"
    for out in ("/dev/stdout", "/proc/self/fd/1", "/dev/fd/3"):
        script = f'echo HEAD; "$@" encode {src} -o {out} 3>&1; echo " rc=$?"; echo FOOT'
        p = subprocess.run(["sh", "-c", script, "sh", *CLI], stdout=log.open("wb"), stderr=subprocess.PIPE, timeout=120)
        assert p.returncode == 0 and log.read_text() == "HEAD\na[2]: 1,2 rc=0\nFOOT\n", (out, log.read_text(), p.stderr)
    p = subprocess.run(["sh", "-c", f'"$@" encode {src} -o /dev/stdout >&-', "sh", *CLI], capture_output=True, timeout=120)
    assert p.returncode == 1 and one_line(p) == "toonstream: error: /dev/stdout: Bad file descriptor"


@pytest.mark.slow  # (subprocesses: CI runs it)
def test_cli_environment_and_number_arguments(tmp_path: Path) -> None:
    src = tmp_path / "in.toon"
    src.write_text("a: 1\n")
    p = subprocess.run([*CLI, "decode", str(src)], capture_output=True, timeout=120,
                       env={**os.environ, "TOONSTREAM_ENGINE": "bogus"})
    assert p.returncode == 2 and "TOONSTREAM_ENGINE must be 'python' or 'native'" in one_line(p)
    for bad in ("1_000", "+5", " 7", "\u0663", "-1", "x"):
        p = run("decode", str(src), "--max-line-length", bad)
        assert p.returncode == 2 and b"expected a whole number >= 0" in p.stderr, (bad, p.stderr)
    assert run("decode", str(src), "--max-line-length", "100").returncode == 0


def test_replacing_a_file_keeps_its_set_id_bits(tmp_path: Path) -> None:
    from toonstream._atomic import AtomicOutput

    target = tmp_path / "t.toon"
    target.write_text("old")
    target.chmod(0o4750)  # (the owner's change, which clears them, comes first now)
    with AtomicOutput(str(target)) as f:
        f.write(b"new")
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o4750


@pytest.mark.slow  # (subprocesses: CI runs it)
def test_decode_type_error_names_the_cli_options(tmp_path: Path) -> None:
    src = tmp_path / "m.toon"
    src.write_text("[3]{x}:\n  1\n  2\n  2.5\n")
    p = run("decode", str(src), "--to", "csv", "--infer-schema-length", "1")
    line = one_line(p)
    assert p.returncode == 1 and line.startswith(f"{src}:4:3: ") and line.endswith(
        "pass --schema-overrides or a larger --infer-schema-length)"
    ), line


@pytest.mark.slow  # (subprocesses: CI runs it)
def test_a_struct_field_override_that_does_not_fit_is_the_type_error(tmp_path: Path) -> None:
    # (the override's name was refused as no column on the error path, hiding the error)
    src = tmp_path / "t.toon"
    src.write_text("data[2]:\n  - a: 1\n    b:\n      c: 2\n  - a: 2\n    b:\n      c: hello\n")
    p = run("decode", str(src), "--to", "parquet", "-o", str(tmp_path / "o.parquet"), "--schema-overrides", "b.c=Int64")
    assert p.returncode == 1 and "'b.c' holds a string" in one_line(p)


# ---------------------------------------------------------------- reading its own output


def test_an_input_that_stdout_appends_to_is_refused(tmp_path: Path) -> None:
    # `decode f >> f` would read its own output back as input, without end: GNU
    # cat's check refuses it; `> f` truncated the input first (nothing to read).
    f = tmp_path / "f.toon"
    original = b"a: 1\nb[2]: x,y\n"
    f.write_bytes(original)
    for args, stdin in ((["decode", str(f)], None), (["decode"], f), (["encode", "--from", "json", str(f)], None)):
        with open(f, "ab") as out:
            r = subprocess.run([*CLI, *args], stdin=open(stdin, "rb") if stdin else None, stdout=out,
                               stderr=subprocess.PIPE, timeout=120)
        assert r.returncode == 2, r.stderr
        assert b"the input is the file stdout writes to" in r.stderr
        assert f.read_bytes() == original
    j = tmp_path / "j.json"
    j.write_bytes(b'{"a": 1}\n')
    with open(j, "ab") as out:  # stats reads it all before its one report: not refused
        r = subprocess.run([*CLI, "stats", str(j)], stdout=out, stderr=subprocess.PIPE, timeout=120)
    assert r.returncode == 0, r.stderr
    assert j.read_bytes().startswith(b'{"a": 1}\n') and len(j.read_bytes()) > 9
    g = tmp_path / "g.json"
    with open(g, "wb") as out:  # another file: written
        assert subprocess.run([*CLI, "decode", str(f)], stdout=out, timeout=120).returncode == 0
    assert json.loads(g.read_bytes()) == {"a": 1, "b": ["x", "y"]}

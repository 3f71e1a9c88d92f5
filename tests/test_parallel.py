"""Parallel encode_jsonl (forked workers over ranges of a regular file): the
output, the errors and the file position are the one-process path's."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toonstream
from toonstream import ToonEncodeError, _parallel, streaming
from toonstream.streaming import encode_jsonl

from test_properties import PRIMS
from conftest import default_signals

pytestmark = pytest.mark.skipif(_parallel.workers_for(1, 2) == 1, reason="forking workers needs Linux and os.fork")



@pytest.fixture(autouse=True)
def reference_engine() -> Any:
    """The forked workers are the reference engine's way to speed up a big file: the native
    engine writes a table itself, on threads (tests/test_native_jsonl.py), and only declines to
    these workers' path; so these tests run on the reference."""
    from toonstream import _engine

    previous = _engine.use(_engine.select("python"))
    yield
    _engine.use(previous)


#: The environment of a CLI run on the reference engine (see ``reference_engine``).
PYTHON_ENV = {**os.environ, "TOONSTREAM_ENGINE": "python"}

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def encode(path: Path, workers: int, **kw: Any) -> str:
    out = path.with_suffix(f".{workers}.toon")
    with open(out, "wb") as o:
        encode_jsonl(path, o, workers=workers, **kw)
    return out.read_text(encoding="utf-8")


def outcome(path: Path, workers: int, **kw: Any) -> tuple[str, Any]:
    try:
        return "ok", encode(path, workers, **kw)
    except ToonEncodeError as e:
        return "error", (str(e), e.line, e.column, e.path)


def _children() -> set[int]:
    """This process's child processes, zombies included (Linux /proc)."""
    pids: set[int] = set()
    me = os.getpid()
    for task in os.listdir(f"/proc/{me}/task"):
        try:
            with open(f"/proc/{me}/task/{task}/children") as f:
                pids.update(map(int, f.read().split()))
        except OSError:
            pass
    return pids


# Children that other tests of the same process started and keep for its lifetime (the
# multiprocessing resource tracker a Dask cluster leaves, under pytest-xdist), sampled before
# each test: the workers a test starts must all be gone (reaped) when it ends.
_BEFORE: set[int] = set()


@pytest.fixture(autouse=True)
def _children_before() -> None:
    _BEFORE.clear()
    _BEFORE.update(_children())


def no_children() -> bool:
    if not os.path.isdir(f"/proc/{os.getpid()}/task"):  # (not Linux: no child may be left at all)
        try:
            os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return True
        return False
    return not (_children() - _BEFORE)


def write(path: Path, lines: list[str], end: str = "\n") -> Path:
    path.write_text("\n".join(lines) + end, encoding="utf-8")
    return path


def table(n: int, start: int = 0) -> list[str]:
    return [json.dumps({"id": i, "name": f"user {i}", "x": i / 7, "ok": i % 3 == 0, "s": "a,b" if i % 5 else ""})
            for i in range(start, start + n)]


@pytest.mark.parametrize("workers", [2, 3, 4, 7])
@pytest.mark.parametrize("delimiter", [",", "\t", "|"])
def test_table_matches_one_process_and_dumps(tmp_path: Path, workers: int, delimiter: str) -> None:
    lines = table(5000)
    src = write(tmp_path / "t.jsonl", lines)
    want = toonstream.dumps([json.loads(x) for x in lines], delimiter=delimiter)
    assert encode(src, workers, delimiter=delimiter) == want
    assert encode(src, 1, delimiter=delimiter) == want
    assert encode(src, workers, delimiter=delimiter, key="rows") == toonstream.dumps(
        {"rows": [json.loads(x) for x in lines]}, delimiter=delimiter
    )
    assert no_children()


def shapes() -> dict[str, list[str]]:
    t = table(3000)
    nested = [json.dumps({"id": i, "c": {"n": i, "m": "q"}}) for i in range(3000)]
    return {
        "later part reorders the keys": t[:2000] + [json.dumps({"name": "z", "id": 1, "x": 0.5, "ok": True, "s": ""})] + t[2000:],
        "later part has a nested value": t + [json.dumps({"id": 1, "name": [1, 2], "x": 1, "ok": True, "s": ""})],
        "later part is not objects": t + ["[1, 2]", "3"],
        "later part has another key": t + [json.dumps({"id": 1})],
        "nested field groups": nested,
        "big numbers late": t + [json.dumps({"id": 2**80, "name": "n", "x": 1e300, "ok": False, "s": "x"}),
                                 '{"id": 1.10, "name": "n", "x": 123456789012345678901234567890.5, "ok": true, "s": "y"}'],
        "blank lines everywhere": [x if i % 97 else "" for i, x in enumerate(t)] + ["", "   ", ""],
        "first part blank": [""] * 5000 + t[:10],
        "all primitives": [str(i) for i in range(6000)],
        "BOM first": ["\ufeff" + t[0], *t[1:]],
        # list items: pass one counts the lines natively once the shape is settled
        "list items": [json.dumps({"id": i, "tags": [i, {"a": "x"}]}) for i in range(6000)],
        "list items, NaN late": [json.dumps({"id": i, "v": [i]}) for i in range(6000)] + ['{"v": [NaN]}'],
    }


@pytest.mark.parametrize("name", sorted(shapes()))
@pytest.mark.parametrize("workers", [2, 3])
def test_other_shapes_fall_back_to_one_process(tmp_path: Path, name: str, workers: int) -> None:
    src = write(tmp_path / "s.jsonl", shapes()[name])
    assert outcome(src, workers) == outcome(src, 1)
    assert outcome(src, 1)[0] == "ok"
    assert no_children()


@pytest.mark.parametrize(
    "bad",
    ['{"id": 1,', "nul", '{"id": NaN}', "\ufeff{}", '{"id": "\\ud800"}'],
)
@pytest.mark.parametrize("where", [10, 1500, 2990])
@pytest.mark.parametrize("nested", [False, True])
def test_errors_name_the_same_line(tmp_path: Path, bad: str, where: int, nested: bool) -> None:
    lines = table(3000) if not nested else [json.dumps({"id": i, "v": [i, [i]]}) for i in range(3000)]
    lines[where] = bad
    src = write(tmp_path / "e.jsonl", lines)
    one = outcome(src, 1)
    assert outcome(src, 3) == one
    if one[0] == "error":  # a parse error (a lone surrogate escape too) names the line
        assert one[1][1] == where + 1
    assert no_children()


def outcome_and_position(path: Path, workers: int) -> tuple[Any, ...]:
    with open(path, "rb") as f:
        try:
            encode_jsonl(f, io.BytesIO(), workers=workers)
            got: tuple[Any, ...] = ("ok",)
        except ToonEncodeError as e:
            got = (str(e), e.line, e.column, e.path)
        return (*got, f.tell())


#: A valid JSON int past the decoders' number length: a value TOON cannot hold.
_BIG = b"1" * 10_001


@pytest.mark.parametrize("data", [
    # a bad line before others: parsed with its "\n", as one process parses it
    b'{"a":1}\n' * 50 + b'{"a":"abc\n' + b'{"a":1}\n' * 50,
    b'{"a":1}\n' * 50 + b'{"a":"\xe2\x82\n' + b'{"a":1}\n' * 50,
    b'{"a":1}\n' * 50 + b'{"a":"abc\\\n' + b'{"a":1}\n' * 50,
    # an error early in a big file: the file is left where one process leaves it
    b'{"a":\n' + b'{"id":1,"name":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}\n' * 20000,
    # two errors: a value TOON cannot hold, then a malformed line (the latter,
    # whatever the batching: every line is parsed before any row is written)
    b'{"a":' + _BIG + b'}\n' + b'{"a":1}\n' * 30 + b'{"a":\n',
    b'{"a":' + _BIG + b'}\n' + b'{"a":1}\n' * 3000 + b'{"a":\n',
    # a value TOON cannot hold, then a record that makes the array non-tabular:
    # the error (path and all) is dumps' for the whole array
    b'{"a":' + _BIG + b',"b":1}\n' + b'{"a":1,"b":2}\n' * 3000 + b'{"a":1,"b":2,"c":3}\n',
    b'{"a":' + _BIG + b',"b":1}\n' + b'{"a":1,"b":2}\n' * 3000,
], ids=["control-char", "utf8", "backslash", "early-error", "two-errors", "two-errors-far", "shape", "table"])
def test_errors_and_file_position_are_one_process_ones(tmp_path: Path, data: bytes) -> None:
    src = tmp_path / "x.jsonl"
    src.write_bytes(data)
    one = outcome_and_position(src, 1)
    assert one[0] != "ok"
    for workers in (2, 3, 5):
        assert outcome_and_position(src, workers) == one, workers
    if _BIG in data and b'{"a":\n' not in data:
        records = [streaming._parse_json(x, 1) for x in data.splitlines()]
        with pytest.raises(ToonEncodeError) as e:
            toonstream.dumps(records)
        assert one[3] == e.value.path


def test_interrupted_wait_kills_the_worker() -> None:
    registry: list[_parallel.Worker] = []
    worker = _parallel.Worker(lambda out: time.sleep(60), registry)
    assert registry == [worker]
    pid = worker._pid
    real = worker._pipe

    class Interrupted:
        def read(self) -> bytes:
            raise KeyboardInterrupt

        def close(self) -> None:
            real.close()

    worker._pipe = Interrupted()  # type: ignore[assignment]
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        worker.result()
    assert time.monotonic() - t0 < 30  # killed, not waited for (its job sleeps 60 s)
    assert not _alive(pid)


def _fork_then_signal(sig: int, *, in_child: bool) -> Callable[[], int]:
    """os.fork, then ``sig`` sent at once to the child or to the parent:
    a signal in the window before the worker is registered."""
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if (pid == 0) == in_child:
            os.kill(os.getpid(), sig)
        return pid

    return fork


def test_a_signal_right_after_fork_still_registers_the_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    # Ctrl-C landing between fork() and the registration must not leak the
    # child: the interrupt is raised only once the worker is in the registry.
    # (Python's own SIGINT handler, even if this run inherited SIGINT ignored)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    monkeypatch.setattr(os, "fork", _fork_then_signal(signal.SIGINT, in_child=False))
    registry: list[_parallel.Worker] = []
    # (another thread running: the kernel may hand it the signal, which a
    # signal mask in the main thread would not stop)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    interrupted = False
    try:
        try:
            _parallel.Worker(lambda out: time.sleep(60), registry)
            # The kernel may hand the signal to the other thread, whose turn
            # to run may come only after the hold was released (under load):
            # then the interrupt comes a little later, the worker registered.
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                time.sleep(0.01)
        except KeyboardInterrupt:
            interrupted = True
    finally:
        stop.set()
        other.join()
        signal.signal(signal.SIGINT, previous)
    monkeypatch.undo()
    assert interrupted
    assert len(registry) == 1
    pid = registry[0]._pid
    registry[0].close()
    assert not _alive(pid)


def test_a_signal_to_the_child_in_the_window_is_not_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    # The child has its own copy of what was held: it handles it itself
    # (SIGTERM's default action here: the worker dies, its result is None).
    monkeypatch.setattr(os, "fork", _fork_then_signal(signal.SIGTERM, in_child=True))
    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        registry: list[_parallel.Worker] = []
        worker = _parallel.Worker(lambda out: "finished", registry)
    finally:
        signal.signal(signal.SIGTERM, previous)
    monkeypatch.undo()
    assert worker.result() is None


def test_a_held_signal_reaches_an_asyncio_handler_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # asyncio's handlers run from its wakeup fd, written when the signal
    # arrives: releasing the hold must not write it a second time.
    import asyncio

    calls: list[int] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, lambda: calls.append(1))
        try:
            monkeypatch.setattr(os, "fork", _fork_then_signal(signal.SIGTERM, in_child=False))
            registry: list[_parallel.Worker] = []
            worker = _parallel.Worker(lambda out: 1, registry)
            monkeypatch.undo()
            assert worker.result() == 1
            await asyncio.sleep(0.2)
        finally:
            loop.remove_signal_handler(signal.SIGTERM)

    asyncio.run(main())
    assert calls == [1]


def test_a_long_line_is_read_whole(tmp_path: Path) -> None:
    long = b'{"a": 2, "b": "' + b"y" * (8 << 20) + b'"}\n'
    src = tmp_path / "long.jsonl"
    src.write_bytes(b'{"a": 1, "b": "x"}\n' * 10 + long + b'{"a": 3, "b": "z"}\n' * 10)
    fd = os.open(src, os.O_RDONLY)
    try:
        lines = [x for batch in _parallel.range_lines(fd, 0, src.stat().st_size) for x in batch]
    finally:
        os.close(fd)
    assert lines[10] == long and len(lines) == 21
    assert encode(src, 2) == encode(src, 1)


def test_no_final_newline_and_a_started_file(tmp_path: Path) -> None:
    lines = table(4000)
    src = write(tmp_path / "n.jsonl", lines, end="")
    assert encode(src, 2) == encode(src, 1)
    with open(src, "rb") as f, open(tmp_path / "o.toon", "wb") as o:
        f.readline()  # the caller has read a line already: the rest is the array
        assert encode_jsonl(f, o, workers=2) == 3999
        assert f.read() == b""  # left at the end, as the one-process path leaves it
    assert (tmp_path / "o.toon").read_text() == toonstream.dumps([json.loads(x) for x in lines[1:]])


def test_only_plain_files_are_cut(tmp_path: Path) -> None:
    import gzip

    lines = table(3000)
    src = write(tmp_path / "g.jsonl", lines)
    with gzip.open(tmp_path / "g.jsonl.gz", "wb") as z:
        z.write(src.read_bytes())
    want = toonstream.dumps([json.loads(x) for x in lines])
    with gzip.open(tmp_path / "g.jsonl.gz", "rb") as f:  # its fileno() is the compressed file's
        assert _parallel.file_range(f) is None
        out = io.StringIO()
        encode_jsonl(f, out, workers=2)
        assert out.getvalue() == want
    with open(src, "rb") as f:
        assert _parallel.file_range(f) == (f.fileno(), 0, src.stat().st_size)
    with open(src, "rb", buffering=0) as f:
        assert _parallel.file_range(f) is not None
    with open(src, encoding="utf-8") as t:
        assert _parallel.file_range(t) is None


def test_more_workers_than_lines(tmp_path: Path) -> None:
    src = write(tmp_path / "few.jsonl", table(3))
    assert encode(src, 16) == encode(src, 1)
    assert _parallel.split_points(os.open(src, os.O_RDONLY), 0, src.stat().st_size, 16)[-1] == src.stat().st_size


def test_split_points_cut_after_newlines(tmp_path: Path) -> None:
    src = write(tmp_path / "p.jsonl", ["x" * (i % 300) for i in range(3000)])
    data = src.read_bytes()
    fd = os.open(src, os.O_RDONLY)
    try:
        for parts in (1, 2, 3, 5, 64):
            points = _parallel.split_points(fd, 0, len(data), parts)
            assert points[0] == 0 and points[-1] == len(data) and points == sorted(set(points))
            assert len(points) - 1 <= parts
            assert all(data[p - 1 : p] == b"\n" for p in points[1:-1])
            got = [line for a, b in zip(points, points[1:]) for batch in _parallel.range_lines(fd, a, b) for line in batch]
            assert got == data.splitlines(keepends=True)  # (each line with its "\n", as readlines gives)
    finally:
        os.close(fd)


def test_auto_workers_only_for_big_inputs_and_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_parallel.threading, "active_count", lambda: 1)
    assert _parallel.workers_for(_parallel.MIN_RANGE - 1, None) == 1
    assert _parallel.workers_for(10 * _parallel.MIN_RANGE, None) == min(10, len(os.sched_getaffinity(0)))
    assert _parallel.workers_for(10, 3) == 3
    with pytest.raises(ValueError):
        _parallel.workers_for(10, 0)
    monkeypatch.setattr(_parallel.threading, "active_count", lambda: 2)  # forking could deadlock: only on request
    assert _parallel.workers_for(10 * _parallel.MIN_RANGE, None) == 1
    assert _parallel.workers_for(10 * _parallel.MIN_RANGE, 2) == 2


def test_workers_really_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[int] = []
    real = _parallel.Worker.__init__

    def counting(self: Any, job: Any, registry: Any) -> None:
        started.append(1)
        real(self, job, registry)

    parsed: list[int] = []  # lines parsed in this process (a worker's count stays in the worker)
    real_parse = streaming._parse_batch

    def parse(lines: list[Any], lineno: int) -> Any:
        parsed.append(len(lines))
        return real_parse(lines, lineno)

    monkeypatch.setattr(_parallel.Worker, "__init__", counting)
    monkeypatch.setattr(streaming, "_parse_batch", parse)
    src = write(tmp_path / "w.jsonl", table(3000))
    assert encode(src, 3) == toonstream.dumps([json.loads(x) for x in table(3000)])
    assert len(started) == 2
    assert 900 < sum(parsed) < 1100  # the first third: the workers' rows were taken as they are


ROW = st.fixed_dictionaries({"id": st.integers(min_value=-(2**70), max_value=2**70), "v": PRIMS})
OTHER = st.one_of(ROW, st.fixed_dictionaries({"v": PRIMS, "id": PRIMS}), PRIMS, st.lists(PRIMS, max_size=2))


@SETTINGS
@given(st.lists(ROW, min_size=1, max_size=40), st.lists(st.tuples(st.integers(0, 39), OTHER), max_size=2),
       st.integers(2, 5), st.sampled_from([",", "\t", "|"]))
@pytest.mark.slow
def test_random_tables_match_dumps(tmp_path: Path, rows: list[Any], odd: list[Any], workers: int, delimiter: str) -> None:
    records: list[Any] = list(rows)
    for at, value in odd:
        records.insert(min(at, len(records)), value)
    src = write(tmp_path / "h.jsonl", [json.dumps(r) for r in records])
    exact = [json.loads(json.dumps(r)) for r in records]
    assert encode(src, workers, delimiter=delimiter) == toonstream.dumps(exact, delimiter=delimiter)


def test_cli_jobs(tmp_path: Path) -> None:
    src = write(tmp_path / "c.jsonl", table(20_000))
    cli = [sys.executable, "-m", "toonstream", "encode", str(src)]
    one = subprocess.run([*cli, "-j", "1"], capture_output=True, timeout=120, env=PYTHON_ENV)
    two = subprocess.run([*cli, "--jobs", "2"], capture_output=True, timeout=120, env=PYTHON_ENV)
    native = subprocess.run([*cli, "--jobs", "2"], capture_output=True, timeout=120)
    assert native.returncode == 0 and native.stdout == one.stdout
    assert one.returncode == two.returncode == 0 and one.stdout == two.stdout and two.stderr == b""
    assert subprocess.run([*cli, "--jobs", "0"], capture_output=True, timeout=120).returncode == 2


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGKILL, -9)])
@pytest.mark.slow
def test_signal_kills_the_workers_too(tmp_path: Path, sig: int, code: int) -> None:
    # (SIGKILL runs no clean-up in the parent: the workers die with it all the same)
    src = tmp_path / "big.jsonl"
    with open(src, "w") as f:
        for start in range(0, 600_000, 20_000):
            f.write("\n".join(table(20_000, start)) + "\n")
    out = tmp_path / "out.toon"
    out.write_text("before")
    proc = subprocess.Popen([sys.executable, "-m", "toonstream", "encode", str(src), "-o", str(out), "-j", "3"],
                            stderr=subprocess.PIPE, preexec_fn=default_signals, env=PYTHON_ENV)
    deadline = time.monotonic() + 30
    while len(_descendants(proc.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    workers = _descendants(proc.pid)
    assert len(workers) == 2, "the workers did not start"
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code and b"Traceback" not in err
    assert out.read_text() == "before"
    if sig == signal.SIGKILL:  # (the CLI's temporary output file is left: no clean-up ran)
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
    else:
        assert sorted(p.name for p in tmp_path.iterdir()) == ["big.jsonl", "out.toon"]
    assert all(not _alive(pid) for pid in workers)


def _descendants(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False

"""Forked workers over byte ranges of a regular file (used by ``encode_jsonl``).

A big JSON Lines file is cut at line boundaries into ranges; the caller
works on the first range while each other range goes to a forked child.
A child writes its output to an anonymous temporary file created before the
fork (so nothing is left on disk whatever happens) and reports a small
picklable result through a pipe, or ``None`` when it gives up.  Giving up is
always allowed: the caller then does that range itself, so errors, their
line numbers and every odd case stay the one-process code's business.

Why fork and not ``multiprocessing``'s spawn: the child needs the caller's
state (the encoder options, possibly a ``default`` callable that cannot be
pickled) and must start in milliseconds.  Forking a process that runs other
threads can deadlock the child (a lock held by one of them at the fork is
never released in the child), so by default ``workers_for`` forks only a
process with one thread; an explicit worker count is the caller's call.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import signal
import stat
import sys
import tempfile
import threading
from typing import IO, Any, Callable, Iterator

#: Bytes of input per worker below which another process does not pay off
#: (a fork, a copy of the worker's output, a pipe round trip).
MIN_RANGE = 32 * 1024 * 1024
#: Read size and batch size (a ``readlines`` hint) of ``range_lines``: the
#: one-process path's (``streaming._file_batches``).
READ_SIZE = 1 << 17


def file_range(source: Any) -> tuple[int, int, int] | None:
    """``(fd, start, end)`` of what is left to read in ``source`` when it is a
    binary file over a regular file, else None.

    Only the io module's own file objects qualify: a wrapper's ``fileno()``
    (gzip.GzipFile, say) is the descriptor of *its* source, whose bytes are
    not the ones it reads."""
    raw = source.raw if isinstance(source, (io.BufferedReader, io.BufferedRandom)) else source
    if not isinstance(raw, io.FileIO):
        return None
    try:
        fd = source.fileno()
        info = os.fstat(fd)
        start = source.tell()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        return None
    if not stat.S_ISREG(info.st_mode) or start >= info.st_size:
        return None
    return fd, start, info.st_size


def workers_for(size: int, requested: int | None) -> int:
    """How many processes to use for ``size`` bytes: ``requested``, or for
    None one per available CPU, each with at least MIN_RANGE bytes, in a
    process with one thread only; 1 where there is no fork (not Linux)."""
    if requested is not None and requested < 1:
        raise ValueError("workers must be at least 1")
    if not hasattr(os, "fork") or sys.platform != "linux":
        return 1
    if requested is None:
        if threading.active_count() > 1:  # not unasked: see the module docstring
            return 1
        cpus = len(os.sched_getaffinity(0))
        return max(1, min(cpus, size // MIN_RANGE))
    return requested


def split_points(fd: int, start: int, end: int, parts: int) -> list[int]:
    """Offsets ``start = p0 < p1 < ... < end`` cutting [start, end) into at
    most ``parts`` ranges of about equal size, each cut just after a newline."""
    points = [start]
    for k in range(1, parts):
        pos = max(start + (end - start) * k // parts, points[-1])
        while pos < end:
            block = os.pread(fd, 1 << 16, pos)
            if not block:
                pos = end
                break
            nl = block.find(b"\n")
            if nl != -1:
                pos += nl + 1
                break
            pos += len(block)
        if pos >= end:
            break
        if pos > points[-1]:
            points.append(pos)
    points.append(end)
    return points


class _Range(io.RawIOBase):
    """Bytes [start, stop) of a file descriptor, read with ``os.pread``: no
    shared file offset, so a forked child and its parent read one file
    independently."""

    def __init__(self, fd: int, start: int, stop: int) -> None:
        super().__init__()
        self._fd, self._pos, self._stop = fd, start, stop

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        want = min(len(b), self._stop - self._pos)
        if want <= 0:
            return 0
        data = os.pread(self._fd, want, self._pos)  # (short or empty if the file shrank)
        b[: len(data)] = data
        self._pos += len(data)
        return len(data)


def range_lines(fd: int, start: int, stop: int) -> Iterator[list[bytes]]:
    """Lists of the lines (each with its "\n") in bytes [start, stop) of
    ``fd``: ``readlines(READ_SIZE)`` batches, as the one-process path reads a
    file, so a line is parsed the same way (its "\n" included)."""
    reader = io.BufferedReader(_Range(fd, start, stop), buffer_size=READ_SIZE)
    while batch := reader.readlines(READ_SIZE):
        yield batch


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def _signals_held() -> Iterator[Callable[[], None]]:
    """Hold Ctrl-C and SIGTERM for the block: a signal that arrives in it is
    handled (by the handlers of before) when the block ends.  Yields that
    release, for a forked child to call at once: the child has its own copy
    of what was caught, and must handle it itself.

    Why: a Python handler (KeyboardInterrupt, the CLI's SIGTERM exception)
    that runs between fork() and the registration of the child raises while
    nobody holds the child to kill it; it would live on until the parent
    exits.  A signal mask cannot help: the kernel gives a process-directed
    signal to any thread that does not mask it, and Python then runs the
    handler in the main thread all the same.  Python runs handlers in the
    main thread only, so elsewhere nothing can interrupt the block.
    """
    before = [(sig, signal.getsignal(sig)) for sig in _STOP_SIGNALS]
    if threading.current_thread() is not threading.main_thread() or any(h is None for _, h in before):
        yield lambda: None  # (None: a handler set outside Python, which could not be put back)
        return
    caught: list[int] = []
    released = False
    for sig, _ in before:
        signal.signal(sig, lambda signum, frame: caught.append(signum))

    def release() -> None:
        nonlocal released
        if released:
            return
        released = True
        for sig, handler in before:
            signal.signal(sig, handler)
        if not caught:
            return
        # The first signal decides, as it would have.  Its handler is called
        # here rather than the signal raised again: the C-level part already
        # ran when it arrived (e.g. asyncio's wakeup fd got its byte).
        first = caught[0]
        handler = signal.getsignal(first)  # (the one just put back)
        if callable(handler):
            handler(first, None)
        elif handler == signal.SIG_DFL:
            signal.raise_signal(first)  # the default action: the process ends

    try:
        yield release
    finally:
        release()


def _die_with_parent(parent: int) -> None:
    """Linux: SIGKILL this (forked) process when its parent dies, even of
    SIGKILL (which runs no clean-up): no worker outlives the conversion."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)
    except (OSError, AttributeError):  # pragma: no cover - no prctl: best effort
        pass


class Worker:
    """A forked child running ``job(out)``: ``out`` is a binary temporary
    file the parent reads afterwards; ``job`` returns a picklable result or
    None (gave up).  An exception in the child counts as giving up.  The
    worker is appended to ``registry`` before any Ctrl-C or SIGTERM can
    interrupt the parent, so whoever cleans ``registry`` up kills it."""

    def __init__(self, job: Callable[[IO[bytes]], Any], registry: list[Worker]) -> None:
        self.out: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        read_end, write_end = os.pipe()
        parent = os.getpid()
        with _signals_held() as release:
            try:
                self._pid = os.fork()
            except OSError:
                for fd in (read_end, write_end):
                    os.close(fd)
                self.out.close()
                raise
            if self._pid == 0:  # the child: never returns
                code = 1
                try:
                    os.close(read_end)
                    release()
                    # The parent handles Ctrl-C (and kills us); a terminal sends
                    # SIGINT to the whole process group, so ignore it here.
                    signal.signal(signal.SIGINT, signal.SIG_IGN)
                    _die_with_parent(parent)
                    result = job(self.out)
                    self.out.flush()
                    with os.fdopen(write_end, "wb") as pipe:
                        pipe.write(pickle.dumps(result))
                    code = 0
                finally:  # no atexit handlers, no flushing of the parent's buffers
                    os._exit(code)
            os.close(write_end)
            self._pipe = os.fdopen(read_end, "rb")
            registry.append(self)

    def result(self) -> Any:
        """Wait for the child; its result, or None if it gave up or died.
        Interrupted (Ctrl-C), it kills the child rather than wait for it."""
        try:
            data = self._pipe.read()
        except BaseException:
            self.close()
            raise
        self._reap()
        if not data:
            return None
        try:
            return pickle.loads(data)
        except Exception:  # a child killed while writing: a truncated message
            return None

    def _reap(self) -> None:
        if self._pid:
            os.waitpid(self._pid, 0)
            self._pid = 0

    def close(self) -> None:
        """Kill the child if it still runs; drop its output."""
        if self._pid:
            try:
                os.kill(self._pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._reap()
        self._pipe.close()
        self.out.close()

"""Files the converters write: a file whose I/O errors name the path the
user gave, and a destination that is replaced only when a conversion
succeeds (a failed one leaves it untouched).  Used by the CLI and by the
library's writers that take a path."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import tempfile
from typing import IO, Any, Callable, Iterator


class NamedFile(io.FileIO):
    """A file whose I/O errors name the path as the user gave it (``-o
    nodir/x.toon``, not the temporary file; ``<stdout>``, not nothing).

    After a failed write, writes are dropped: the error was raised once, and
    the flush that closing does must not raise it again (Python would print
    it as "Exception ignored" at exit)."""

    def __init__(self, file: str | int, mode: str, *, shown: str, closefd: bool = True) -> None:
        try:
            super().__init__(file, mode, closefd=closefd)
        except OSError as e:
            raise renamed(e, shown) from None
        self.shown = shown
        self._failed = False

    def write(self, b: Any) -> int:
        if self._failed:
            return len(b)
        try:
            return super().write(b)
        except OSError as e:
            self._failed = True
            raise renamed(e, self.shown) from None

    def readinto(self, b: Any) -> int:
        try:
            return super().readinto(b)
        except OSError as e:
            raise renamed(e, self.shown) from None


def renamed(e: OSError, shown: str) -> OSError:
    """``e`` naming ``shown`` (same class, so BrokenPipeError stays one)."""
    if e.errno is None:
        return e
    return type(e)(e.errno, e.strerror, shown)


def write_target(path: str) -> str:
    """The file that writing ``path`` replaces: through symbolic links to the
    file they name (a dangling link: the file it would name), as ``cp`` does,
    so that a link stays a link."""
    target = path
    for target in _links(path):
        pass
    return target


def _links(path: str) -> Iterator[str]:
    """``path``, then each file its symbolic links name in turn (OSError ELOOP past
    Linux's limit of 40 links followed in one look-up)."""
    target = path
    for _ in range(40):
        yield target
        try:
            link = os.readlink(target)
        except OSError:  # not a link, or nothing there
            return
        target = os.path.join(os.path.dirname(target), link)
    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)


# The paths of a descriptor this process holds (the links they are, as the kernel
# makes them: /dev/stdout is /proc/self/fd/1).
_STANDARD = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
_FD_PATH = re.compile(r"/dev/fd/(\d+)|/proc/(?:self|thread-self|(\d+))/fd/(\d+)")


def inherited_fd(path: str) -> int | None:
    """The descriptor of this process that ``path`` names (``/dev/stdout``,
    ``/dev/fd/3``, ``/proc/self/fd/1``, or a link to one of them), or None.

    >>> inherited_fd("/dev/stdout"), inherited_fd("out.toon")
    (1, None)
    """
    try:
        for target in _links(path):
            norm = os.path.normpath(target)
            if norm in _STANDARD:
                return _STANDARD[norm]
            m = _FD_PATH.fullmatch(norm)
            if m is not None:
                if m[2] is not None and int(m[2]) != os.getpid():
                    return None  # (another process's: the file it has open, replaced as any other)
                return int(m[1] or m[3])
    except OSError:  # (a loop of links: write_target reports it)
        pass
    return None


class AtomicOutput:
    """A binary file that becomes ``path`` only if the block succeeds.

    The temporary file is made beside the file ``path`` names (a symbolic
    link's target), fsync'ed, given the permission bits of the file it
    replaces (a new file: 0666 less the umask) and renamed over it.  I/O
    errors name ``path``.

    Where the system has them (Linux, most local file systems), the file is
    first an anonymous one (``O_TMPFILE``): a process killed outright
    (SIGKILL, the OOM killer) while writing leaves nothing behind; it gets a
    name (``.NAME.XXXXXXXX.tmp``) only to be renamed, at the end.  Elsewhere
    it is named from the start (``mkstemp``), and only a clean exit or a
    caught signal removes it.

    What cannot be replaced is written directly, as ``cp`` writes it: a
    device or a FIFO (``/dev/null``, a named pipe), and a descriptor the
    process holds (``/dev/stdout``, ``/dev/fd/3``), through that descriptor:
    its offset and append mode kept, where the file it has open would be
    replaced by a rename (and what the shell writes to it later lost)."""

    def __init__(self, path: str, *, commit: Callable[[Callable[[], None]], None] | None = None) -> None:
        self.path = path
        # (the CLI's: the rename is not interrupted by a signal, see _signals.commit)
        self.commit = commit
        self.target = write_target(path)
        self.tmp: str | None = None  # the named temporary file (None: anonymous, or none yet)
        self.fp: IO[bytes] | None = None
        self.direct = False  # written in place (see the class)

    def __enter__(self) -> IO[bytes]:
        fd = inherited_fd(self.path)
        if fd is not None or (os.path.exists(self.target) and not os.path.isfile(self.target)):
            self.direct = True
            if fd in (1, 2):
                flush_standard(fd)
            file: str | int = fd if fd is not None else self.path
            self.fp = io.BufferedWriter(NamedFile(file, "wb", shown=self.path, closefd=fd is None), buffer_size=1 << 16)
            return self.fp
        directory, name = os.path.split(self.target)
        fd = _anonymous(directory or ".")
        if fd is None:
            try:
                fd, self.tmp = tempfile.mkstemp(dir=directory or ".", prefix=f".{name}.", suffix=".tmp")
            except OSError as e:
                raise renamed(e, self.path) from None
        self.fp = io.BufferedWriter(NamedFile(fd, "wb", shown=self.path), buffer_size=1 << 16)
        return self.fp

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        assert self.fp is not None
        fp = self.fp
        if self.direct:
            if exc_type is not None:  # (the block's error is the one to see, not a flush's)
                with contextlib.suppress(OSError):
                    fp.close()
                return
            try:
                fp.flush()
            finally:
                fp.close()
            return
        try:
            if exc_type is None:
                try:
                    fp.flush()
                    fd = fp.fileno()
                    os.fsync(fd)
                    try:
                        info: os.stat_result | None = os.stat(self.target)
                    except FileNotFoundError:
                        info = None
                    if info is not None:
                        # as cp keeps them: the owner where allowed, and the permission bits
                        # (after: a change of owner clears the set-user-ID and set-group-ID bits)
                        mode = info.st_mode & 0o7777
                        try:
                            os.fchown(fd, info.st_uid, info.st_gid)
                        except OSError:
                            mode &= ~0o6000  # (as cp -p: no set-id bits on a file of another owner)
                        os.fchmod(fd, mode)
                    else:
                        umask = os.umask(0)
                        os.umask(umask)
                        os.fchmod(fd, 0o666 & ~umask)
                    if self.tmp is None:  # (anonymous: named now, beside the target)
                        self.tmp = _link(fd, self.target)
                    fp.close()
                except OSError as e:
                    raise renamed(e, self.path) from None
                tmp = self.tmp

                def publish() -> None:
                    try:
                        os.replace(tmp, self.target)
                    except OSError as e:
                        raise renamed(e, self.path) from None
                    self.tmp = None

                if self.commit is not None:
                    self.commit(publish)
                else:
                    publish()
        finally:
            try:
                fp.close()
            except OSError:
                pass
            if self.tmp is not None:
                try:
                    os.unlink(self.tmp)
                except OSError:
                    pass


def flush_standard(fd: int) -> None:
    """Flush ``sys.stdout`` (fd 1) or ``sys.stderr`` (2), before writing the
    descriptor directly."""
    import sys

    with contextlib.suppress(AttributeError, OSError, ValueError):  # (closed, or none)
        (sys.stdout if fd == 1 else sys.stderr).flush()


def _anonymous(directory: str) -> int | None:
    """An anonymous file (``O_TMPFILE``) in ``directory``, open for reading
    and writing, or None where the system or the file system has none."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not os.path.isdir("/proc/self/fd"):  # (the link at the end goes through /proc)
        return None
    flags = flag | os.O_RDWR | getattr(os, "O_CLOEXEC", 0)
    try:
        # A file system may take O_TMPFILE and refuse the link (a FUSE one,
        # say): tried on a probe first, as the output's own link can be made
        # only once and only at the end.
        probe = os.open(directory, flags, 0o600)
        try:
            os.unlink(_link(probe, os.path.join(directory, "probe")))
        finally:
            os.close(probe)
        return os.open(directory, flags, 0o600)
    except OSError:  # EOPNOTSUPP, EISDIR (an old kernel), ENOENT, EXDEV...: mkstemp says what is wrong
        return None


def _link(fd: int, target: str) -> str:
    """A name beside ``target`` for the anonymous file ``fd`` (a fresh one:
    ``link`` does not replace)."""
    directory, name = os.path.split(target)
    # linkat(AT_SYMLINK_FOLLOW) of /proc/self/fd/N, as open(2) says; os.link
    # makes that call only with a directory fd (else it calls link(), which
    # does not follow the /proc link: EXDEV).
    fds = os.open("/proc/self/fd", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        for _ in range(100):
            tmp = os.path.join(directory, f".{name}.{os.urandom(4).hex()}.tmp")
            try:
                os.link(str(fd), tmp, src_dir_fd=fds, follow_symlinks=True)
                return tmp
            except FileExistsError:
                continue
    finally:
        os.close(fds)
    raise FileExistsError(errno.EEXIST, "no free temporary name", target)

"""The ``toonstream`` command: encode, decode, validate.

A pipeline stage: reads a file or stdin, writes a file or stdout, keeps
memory bounded, and is honest about how it ended:

    0    success
    1    data error: one line ``file:line:col: message`` on stderr
    2    usage error (bad options, output path equal to input path)
    130  interrupted (SIGINT)      143  terminated (SIGTERM)
    141  stdout closed early (``| head``): quiet, like a process killed by SIGPIPE

``-o FILE`` is atomic: the output goes to a temporary file in the same
directory, is fsync'ed and renamed over FILE only on success.  On any failure
FILE is untouched and the temporary file is removed.  A FILE that is a
symbolic link is written through, as ``cp`` does: its target is replaced.

Inputs may be gzip, bzip2, xz or zstd compressed.  A closed stdin, stdout or
stderr is an I/O error like any other (one line, exit 1), never a traceback.
"""

from __future__ import annotations

import argparse
import decimal
import errno
import io
import os
import stat
import sys
import tempfile
from typing import IO, Any, Callable, Iterator, NoReturn, Sequence, cast

from . import __version__, _engine, _signals
from ._atomic import AtomicOutput as _AtomicOutput
from ._atomic import NamedFile as _NamedFile
from ._atomic import renamed as _renamed
from ._errors import ToonDecodeError, ToonEncodeError, ToonError
from ._jsonscan import LoneSurrogate, SurrogateCheck
from ._optional import MissingExtraError, requires
from .tokens import TokenCounter

EXIT_OK, EXIT_DATA, EXIT_USAGE = 0, 1, 2
EXIT_SIGINT, EXIT_SIGTERM, EXIT_PIPE = 130, 143, 141

_DELIMS = {"comma": ",", "tab": "\t", "pipe": "|"}
_JSONL_EXT = (".jsonl", ".ndjson")


_Terminated = _signals.Terminated


class _Usage(Exception):
    pass


# ---------------------------------------------------------------------- I/O helpers


class _CountingReader(io.RawIOBase):
    """Counts bytes read (for --stats and the progress bar) and samples tokens.

    Seekable when the underlying file is, so that a JSON Lines file is read
    twice rather than spooled; bytes read again after a seek back are not
    reported again (each byte of the input is seen once)."""

    def __init__(self, raw: IO[bytes], on_bytes: Callable[[bytes], None]) -> None:
        self._raw = raw
        self._on = on_bytes
        try:
            self._seekable = bool(raw.seekable())
            self._pos = raw.tell() if self._seekable else 0
        except (AttributeError, OSError, ValueError):
            self._seekable, self._pos = False, 0
        self._high = self._pos  # the furthest offset reported so far

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        data = self._raw.read(len(b))
        n = len(data)
        b[:n] = data
        start = self._pos
        self._pos += n
        if self._pos > self._high:
            fresh = data[max(0, self._high - start) :]
            self._high = self._pos
            self._on(fresh)
        return n

    def seekable(self) -> bool:
        return self._seekable

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if not self._seekable:
            raise io.UnsupportedOperation("seek")
        self._pos = self._raw.seek(offset, whence)
        return self._pos

    def tell(self) -> int:
        return self._pos


class _CountingWriter(io.RawIOBase):
    def __init__(self, raw: IO[bytes], on_bytes: Callable[[bytes], None]) -> None:
        self._raw = raw
        self._on = on_bytes

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        data = bytes(b)
        self._raw.write(data)
        self._on(data)
        return len(data)

    def flush(self) -> None:
        self._raw.flush()


class _Progress:
    """Byte-based progress on stderr via tqdm (optional dependency)."""

    def __init__(self, enabled: bool, total: int | None, label: str) -> None:
        self.bar: Any = None
        if not enabled:
            return
        try:
            from tqdm import tqdm
        except ImportError:
            print("toonstream: --progress needs the 'tqdm' package (pip install tqdm)", file=sys.stderr)
            return
        self.bar = tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=label, file=sys.stderr, leave=False)

    def update(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _open_input(path: str) -> IO[bytes]:
    """The input's bytes: the file ``path``, or stdin for ``-``, decompressed
    when it is gzip, bzip2, xz or zstd (by the extension, else by the magic
    bytes, stdin too).  Its I/O errors name ``path`` as given; a corrupt
    compressed stream is a one-line error too."""
    shown = "<stdin>" if path == "-" else path
    if path == "-":
        try:
            fd = sys.stdin.fileno()
        except (AttributeError, OSError, ValueError):  # replaced in-process (no descriptor)
            return sys.stdin.buffer
        try:
            _stdin_start[0] = os.lseek(fd, 0, os.SEEK_CUR) if stat.S_ISREG(os.fstat(fd).st_mode) else None
        except OSError:
            _stdin_start[0] = None
        stdin = _NamedFile(fd, "rb", shown=shown, closefd=False)
        if _stdin_start[0] is None:
            # a pipe cannot be read again: its head is kept, to locate an error in it
            kept = _stdin_head[0] = _Head(stdin, _HEAD_BYTES)
            raw: Any = io.BufferedReader(kept, buffer_size=1 << 16)
        else:
            raw = io.BufferedReader(stdin, buffer_size=1 << 16)
    else:
        raw = io.BufferedReader(_NamedFile(path, "rb", shown=shown), buffer_size=1 << 16)
    try:
        kind = _COMPRESSED_EXT.get(os.path.splitext(path.lower())[1]) or _sniff_compression(raw.peek(10))
    except BaseException:
        raw.close()
        raise
    if kind is None:
        return raw  # type: ignore[no-any-return]
    return io.BufferedReader(_Decompressed(raw, kind, shown), buffer_size=1 << 16)


def _input_size(path: str, stream: IO[bytes]) -> int | None:
    """Bytes the progress bar will see from ``stream`` (opened by :func:`_open_input`),
    when known: a regular file's size; None for stdin and compressed input."""
    if path == "-" or isinstance(getattr(stream, "raw", None), _Decompressed) or not os.path.isfile(path):
        return None
    return os.path.getsize(path)


#: where stdin started when it is a regular file (``< file``): it can be read again
_stdin_start: list[int | None] = [None]


class _Head(io.RawIOBase):
    """Reads the raw file ``raw`` and keeps its first ``limit`` bytes (stdin from a pipe,
    before any decompression: the head is opened again like a file)."""

    def __init__(self, raw: IO[bytes], limit: int) -> None:
        self._raw, self._limit = raw, limit
        self.head: bytearray | None = bytearray()  # None once more than limit was read
        self._ended = False

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        if self._ended:
            # (the end stays the end: a terminal would wait for another Ctrl-D on each
            # read after the first, and the layers above read again after an empty read)
            return 0
        data = self._raw.read(len(b)) or b""  # (a raw read: what the pipe has, never waits for more)
        n = len(data)
        if not n and len(b):
            self._ended = True
        b[:n] = data
        if self.head is not None:
            if len(self.head) + n > self._limit:
                self.head = None
            else:
                self.head += data
        return n


#: the head of stdin from a pipe, kept by _open_input
_stdin_head: list[_Head | None] = [None]
_HEAD_BYTES = 16 << 20


def _read_again(path: str) -> IO[bytes] | None:
    """The input ``path`` once more from its start (decompressed as before), or
    None when it cannot be (a pipe)."""
    if path == "-":
        start = _stdin_start[0]
        if start is None:
            kept = _stdin_head[0]
            if kept is None or kept.head is None:
                return None
            head = io.BufferedReader(io.BytesIO(bytes(kept.head)))
            kind = _sniff_compression(head.peek(10))
            return head if kind is None else io.BufferedReader(_Decompressed(head, kind, "<stdin>"))
        try:
            os.lseek(sys.stdin.fileno(), start, os.SEEK_SET)
        except (AttributeError, OSError, ValueError):
            return None
    try:
        return _open_input(path)
    except OSError:
        return None


_JSON_READ = 1 << 20  # bytes per read of a JSON document (see _json_pairs)


def _json_pairs(stream: Any, surrogates: SurrogateCheck) -> Iterator[tuple[str, Any]]:
    """The ijson events of the JSON document ``stream`` (a binary reader) as ``basic_parse``
    pairs (``parse``'s triples carry a prefix string each: memory quadratic
    in the nesting depth), then the end of ``surrogates``, which is fed the
    document's bytes as they are read (yajl writes "?" for a lone surrogate
    escape).  What they raise for bad input: :func:`_json_errors`."""
    import ijson

    from ._reference.numbers import MAX_NUMBER_LENGTH, too_long

    # ijson's C backend makes each number with int()/Decimal(): past
    # CPython's int digit limit (4,300) that fails inside yajl's callback,
    # which surfaces as a SystemError.  Ints up to the decoders' number
    # length are TOON numbers, so the limit is raised to that (this process
    # is the command's own); a longer one is refused, as the encoder would.
    stream = _NoRawControls(stream)  # (one leading byte-order mark, as for TOON and JSON Lines)
    limit = sys.get_int_max_str_digits()
    if limit and limit <= MAX_NUMBER_LENGTH:
        sys.set_int_max_str_digits(MAX_NUMBER_LENGTH + 1)
    try:
        # (a token longer than the reads is joined again at each read: 64 KiB reads took
        # 4.6 s on a string of 36 MB, 1 MiB ones 0.43 s)
        for event in ijson.basic_parse(stream, buf_size=_JSON_READ):
            # (the backend returns the event of a failed number with the
            # error still set: the next call on it raises it, here)
            len(event)
            yield event
    except (SystemError, ValueError) as e:
        # (CPython's "Exceeds the limit (N digits) for integer string conversion"; not
        # ijson's own errors, ValueErrors too, reported by the caller)
        if isinstance(e, ijson.JSONError) or "integer string conversion" not in str(e.__cause__ or e):
            raise
        raise too_long(None) from None
    surrogates.close()


class _BomSkipped:
    """A binary reader without the UTF-8 byte-order mark its input may start with."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.first = True

    def read(self, size: int = -1) -> bytes:
        from .streaming import bom_end

        data: bytes = self.stream.read(size)
        if self.first and size != 0:  # (ijson reads 0 bytes first, to tell bytes from str)
            self.first = False
            data, start = bom_end(data, self.stream, size)
            if start:
                data = data[start:] or self.stream.read(size)
        return data


class _RawControl(ValueError):
    """A raw vertical tab or form feed in a JSON document."""


class _NoRawControls(_BomSkipped):
    """A JSON document's bytes, refusing a raw vertical tab or form feed: no JSON text holds one
    (not white space, and a string's control characters are escaped), but yajl takes them as
    white space.  The error is then located by the syntax scanner (:func:`_invalid_json`)."""

    def read(self, size: int = -1) -> bytes:
        data = super().read(size)
        if b"\x0b" in data or b"\x0c" in data:
            raise _RawControl("a vertical tab or form feed is not JSON white space")
        return data


def _json_errors() -> tuple[type[Exception], ...]:
    """The errors of :func:`_json_pairs` that :func:`_invalid_json` reports."""
    import ijson

    return (ijson.JSONError, decimal.InvalidOperation, LoneSurrogate, UnicodeDecodeError, _RawControl)


def _invalid_json(path: str, e: Exception) -> ToonEncodeError:
    """ijson's error on the JSON document ``path``, located: yajl tells no
    position, so the input is read again by the syntax scanner (bounded
    memory) for the line and column of the offending character.  A pipe
    cannot be read again: its message has the reason only."""
    from ._jsonscan import locate_json_error

    again = _read_again(path)
    found = None
    if again is not None:
        try:
            with again:
                found = locate_json_error(cast(IO[bytes], _BomSkipped(again)))
        except OSError:
            found = None
    if found is not None:
        return ToonEncodeError(f"invalid JSON: {found.msg}", line=found.line, column=found.column)
    reason = e.args[0] if e.args else type(e).__name__
    if isinstance(reason, bytes):
        reason = reason.decode("utf-8", "backslashreplace")
    lines = str(reason).strip().splitlines()
    return ToonEncodeError(f"invalid JSON: {_shown_text(lines[0] if lines else type(e).__name__)}")


def _at_its_value(path: str, e: ToonEncodeError) -> ToonEncodeError:
    """The encoder's error ``e`` on the value at ``e.path`` of the JSON document
    ``path``, with the line and column where that value starts (for a
    repeated root key, where the key occurs again): the input is read again
    by the syntax scanner, following the path (bounded memory).  ``e`` itself
    where it has no path or the input cannot be read again (a pipe past what
    was kept)."""
    from ._jsonscan import locate_json_error

    repeated = getattr(e, "_repeated_root_key", None)  # (set by the events encoder)
    target = (repeated,) if repeated is not None else e.path
    if not target or e.line is not None:
        return e
    again = _read_again(path)
    if again is None:
        return e
    try:
        with again:
            found = locate_json_error(cast(IO[bytes], _BomSkipped(again)), path=target, repeated=repeated is not None)
    except OSError:
        return e
    if found is None or found.msg:  # (not there, or a syntax error first: not this error's place)
        return e
    return ToonEncodeError(e.msg, path=e.path, line=found.line, column=found.column)


_COMPRESSED_EXT = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zst": "zstd"}


def _sniff_compression(head: bytes) -> str | None:
    """gzip, bzip2, xz or zstd by the stream's magic bytes (bzip2's with its
    block magic too: "BZh" alone could start a TOON or JSON Lines text)."""
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head[:3] == b"BZh" and head[3:4].isdigit() and head[4:10] == b"1AY&SY":
        return "bzip2"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    if head.startswith(b"\x28\xb5\x2f\xfd"):
        return "zstd"
    return None


def _inner_name(path: str) -> str:
    """``path`` less a compression extension: ``x.jsonl.gz`` is JSON Lines."""
    stem, ext = os.path.splitext(path)
    return stem if ext.lower() in _COMPRESSED_EXT else path


def _zstd_reader(raw: IO[bytes]) -> Any:
    try:
        from compression import zstd  # type: ignore[import-not-found,unused-ignore]  # Python 3.14

        return zstd.ZstdFile(raw)
    except ImportError:
        pass
    try:
        import zstandard  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise _CorruptInput("zstd-compressed input needs Python 3.14 or the 'zstandard' package") from None
    return _ZstandardReader(raw, zstandard)


class _ZstandardReader:
    """zstd frames through the zstandard package's decompressobj: its stream
    reader ends a truncated frame silently, and that must be an error."""

    def __init__(self, raw: IO[bytes], zstandard: Any) -> None:
        self._raw, self._zstd = raw, zstandard
        self._obj = zstandard.ZstdDecompressor().decompressobj()
        self._started = False  # a frame begun and not ended
        self._pending = b""  # decompressed, not yet read

    def read1(self, n: int) -> bytes:
        if not self._pending:
            self._pending = self._more()
        out, self._pending = self._pending[:n], self._pending[n:]
        return out

    def _more(self) -> bytes:
        while True:
            chunk = self._raw.read(1 << 16)
            if not chunk:
                if self._started:
                    raise EOFError("the input ends inside a zstd frame")
                return b""
            out = b""
            while chunk:
                self._started = True
                out += self._obj.decompress(chunk)
                if not self._obj.eof:
                    break
                chunk, self._started = self._obj.unused_data, False
                self._obj = self._zstd.ZstdDecompressor().decompressobj()
            if out:
                return out

    def close(self) -> None:
        pass


class _CorruptInput(OSError):
    """A compressed input that cannot be decompressed (a data error: exit 1)."""


class _Decompressed(io.RawIOBase):
    """The decompressed bytes of ``raw``; not seekable, so that nothing cuts it
    into ranges (the parallel JSON Lines path reads the file's own bytes)."""

    def __init__(self, raw: IO[bytes], kind: str, shown: str) -> None:
        self._raw, self._kind, self._shown = raw, kind, shown
        self._inner: Any = None

    def readable(self) -> bool:
        return True

    def _open(self) -> Any:
        if self._kind == "gzip":
            import gzip

            return gzip.GzipFile(fileobj=self._raw, mode="rb")
        if self._kind == "bzip2":
            import bz2

            return bz2.BZ2File(self._raw)
        if self._kind == "xz":
            import lzma

            return lzma.LZMAFile(self._raw)
        return _zstd_reader(self._raw)

    def readinto(self, b: Any) -> int:
        try:
            if self._inner is None:
                self._inner = self._open()
            data = self._inner.read1(len(b))  # what is there: a pipe's data is not held back
        except _CorruptInput as e:
            raise _CorruptInput(errno.EINVAL, e.strerror or str(e), self._shown) from None
        except OSError as e:
            if e.filename is not None:  # reading the file itself failed: already named
                raise
            raise self._corrupt(e) from None
        except Exception as e:  # EOFError, zlib.error, lzma.LZMAError, zstd's errors
            raise self._corrupt(e) from None
        n = len(data)
        b[:n] = data
        return n

    def _corrupt(self, e: BaseException) -> OSError:
        return _CorruptInput(errno.EINVAL, f"corrupt {self._kind} data: {_shown_text(str(e))}", self._shown)

    def close(self) -> None:
        try:
            if self._inner is not None:
                self._inner.close()
        except Exception:
            pass
        finally:
            self._raw.close()
            super().close()


def _shown_text(text: str, limit: int = 120) -> str:
    """``text`` for a one-line message: control characters and the like escaped,
    at most ``limit`` characters (binary input must never reach the terminal raw)."""
    if not text.isprintable():
        text = repr(text)[1:-1]
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _same_file(a: str, b: str) -> bool:
    if a == "-" or b == "-":
        return False
    if os.path.exists(a) and os.path.exists(b):
        return os.path.samefile(a, b)
    return os.path.realpath(a) == os.path.realpath(b)


def _reads_own_output(path: str) -> bool:
    """GNU cat's check: the input (``-``: stdin) is the regular file stdout
    writes to and has bytes left to read (``decode f >> f``), so the output
    would be read back as input, without end.  ``> f`` truncated it first:
    nothing to read, no loop, no refusal (as cat)."""
    try:
        out = os.fstat(sys.stdout.fileno())
        if not stat.S_ISREG(out.st_mode):
            return False
        if path == "-":
            fd = sys.stdin.fileno()
            st = os.fstat(fd)
            at = os.lseek(fd, 0, os.SEEK_CUR) if stat.S_ISREG(st.st_mode) else 0
        else:
            st = os.stat(path)
            at = 0
    except (AttributeError, OSError, ValueError):  # (no descriptor, a closed stream, a missing input: said later)
        return False
    return stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) == (out.st_dev, out.st_ino) and at < st.st_size


# ---------------------------------------------------------------------- commands


def _detect_format(path: str, forced: str | None, stream: IO[bytes]) -> tuple[str, IO[bytes]]:
    if forced:
        return forced, stream
    lower = _inner_name(path).lower()
    if lower.endswith(_JSONL_EXT):
        return "jsonl", stream
    if lower.endswith(".json"):
        return "json", stream
    # stdin or an unknown extension: JSON Lines if the first non-blank line is a
    # complete JSON value and more content follows; otherwise one JSON document.
    import json

    buffered: io.BufferedReader = (
        stream if isinstance(stream, io.BufferedReader) else io.BufferedReader(stream, buffer_size=1 << 20)  # type: ignore[arg-type]
    )
    head = buffered.peek(1 << 20)
    lines = [ln for ln in head.split(b"\n") if ln.strip()]
    fmt = "json"
    if len(lines) >= 2:
        try:
            json.loads(lines[0])
            fmt = "jsonl"
        except ValueError:
            fmt = "json"
    return fmt, buffered


def _cmd_encode(args: argparse.Namespace) -> int:
    from .streaming import Encoder, encode_jsonl

    table_format = _table_input(args.input, args.input_format)
    if table_format is not None:
        return _cmd_encode_table(args, table_format)
    delimiter = _DELIMS[args.delimiter]
    src_name = args.input
    stats = TokenCounter(exact=args.exact) if args.stats else None
    out_stats = TokenCounter(exact=args.exact) if args.stats else None
    raw_in = _open_input(src_name)
    progress = _Progress(_progress_enabled(args), _input_size(src_name, raw_in), "encode")
    try:

        surrogates = SurrogateCheck()

        def seen(data: bytes) -> None:
            progress.update(len(data))
            if stats is not None:
                stats.feed(data)
            if fmt == "json":
                surrogates.feed(data)

        fmt, stream = _detect_format(src_name, args.input_format, raw_in)
        counted = io.BufferedReader(_CountingReader(stream, seen), buffer_size=1 << 16)

        def write(out: IO[bytes]) -> None:
            sink: IO[bytes] = out
            if out_stats is not None:
                sink = io.BufferedWriter(_CountingWriter(out, out_stats.feed), buffer_size=1 << 16)
            options = {"indent_size": args.indent_size, "delimiter": delimiter, "missing_as_null": args.missing_as_null}
            if fmt == "jsonl":
                # Forked workers read the file by themselves, past the counting
                # reader: with --stats or a progress bar, one process reads it all.
                counting = stats is not None or progress.bar is not None
                encode_jsonl(counted if counting else stream, sink, key=args.key, workers=args.jobs, **options)
            else:
                if args.key is not None:
                    raise _Usage("--key applies to JSON Lines input")
                enc = Encoder(sink, **options)
                try:
                    enc.send_all(_json_pairs(counted, surrogates))
                    enc.close()
                except _json_errors() as e:
                    raise _invalid_json(src_name, e) from None
                except ToonEncodeError as e:
                    raise _at_its_value(src_name, e) from None
            sink.flush()

        _write_output(args.output, write)
    finally:
        progress.close()
        if raw_in is not sys.stdin.buffer:
            raw_in.close()
    if stats is not None and out_stats is not None:
        _print_stats(fmt, stats, out_stats)
    return EXIT_OK


_TABLE_INPUTS = {
    ".parquet": "parquet", ".pq": "parquet", ".arrow": "arrow", ".feather": "arrow", ".ipc": "arrow", ".arrows": "arrow",
    ".csv": "csv",
}


def _table_input(path: str, forced: str | None) -> str | None:
    """parquet / arrow / csv when the input is a table file (by --from, else by extension)."""
    if forced is not None:
        return forced if forced in ("parquet", "arrow", "csv") else None
    if path == "-":
        return None
    return _TABLE_INPUTS.get(os.path.splitext(_inner_name(path).lower())[1])


def _cmd_encode_table(args: argparse.Namespace, fmt: str) -> int:
    """encode from Parquet, Arrow IPC (file or stream) or CSV with ``encode_arrow``
    (vectorized; the row count from Parquet/IPC metadata, CSV rows spooled).
    CSV is read as text by pyarrow and typed by ``_csv.CsvInput``."""
    import shutil

    with requires(f"toonstream encode of {fmt} input"):
        import pyarrow as pa

    from ._arrow_encode import INPUT_FORMATS, encode_arrow, read_errors

    out_stats = TokenCounter(exact=args.exact) if args.stats else None
    src_stats = TokenCounter(exact=args.exact) if args.stats and fmt == "csv" else None
    src_name = args.input
    tmp_path: str | None = None
    raw_in: IO[bytes] | None = None
    progress = _Progress(False, None, "encode")
    try:
        data: Any
        if fmt == "csv":
            from ._csv import CsvInput

            total = os.path.getsize(src_name) if src_name != "-" and os.path.isfile(src_name) else None
            progress = _Progress(_progress_enabled(args), total, "encode")
            raw_in = _open_input(src_name)

            def seen(chunk: bytes) -> None:
                progress.update(len(chunk))
                if src_stats is not None:
                    src_stats.feed(chunk)

            data = CsvInput(io.BufferedReader(_CountingReader(raw_in, seen), buffer_size=1 << 20))
        elif src_name == "-" or _inner_name(src_name) != src_name:
            # Parquet and IPC files are read with random access: stdin, and a
            # compressed file, go to a temporary file first
            fd, tmp_path = tempfile.mkstemp(prefix="toonstream-", suffix=f".{fmt}")
            with os.fdopen(fd, "wb") as tmp, _open_input(src_name) as src:
                shutil.copyfileobj(src, tmp, 1 << 20)
            data = tmp_path
        else:
            data = src_name

        def write(out: IO[bytes]) -> None:
            sink: IO[bytes] = out
            if out_stats is not None:
                sink = io.BufferedWriter(_CountingWriter(out, out_stats.feed), buffer_size=1 << 16)
            encode_arrow(
                data, sink, key=args.key, delimiter=_DELIMS[args.delimiter], indent_size=args.indent_size,
                missing_as_null=args.missing_as_null,
                # (--from reads the file as that format, whatever its name and first bytes)
                input_format=args.input_format if isinstance(data, str) and args.input_format else None,
            )
            sink.flush()

        _write_output(args.output, write)
    except pa.ArrowException:
        with read_errors(INPUT_FORMATS[fmt]):  # (CSV from a stream, a spooled file: as the library says it)
            raise
    finally:
        progress.close()
        if raw_in is not None and raw_in is not sys.stdin.buffer:
            raw_in.close()
        if tmp_path is not None:
            os.unlink(tmp_path)
    if out_stats is not None:
        if src_stats is not None:
            _print_stats(fmt, src_stats, out_stats)
        else:
            size = os.path.getsize(data) if isinstance(data, str) else 0
            print(
                f"input ({fmt}): {size:,} bytes; output (toon): {out_stats.bytes:,} bytes, "
                f"{out_stats.total:,} tokens; tokens: {out_stats.method}",
                file=sys.stderr,
            )
    return EXIT_OK


def _print_stats(fmt: str, src: TokenCounter, out: TokenCounter) -> None:
    src_tokens, out_tokens = src.total, out.total
    saved = 100.0 * (1 - out_tokens / src_tokens) if src_tokens else 0.0
    change = f"{saved:.1f}% fewer tokens" if saved >= 0 else f"{-saved:.1f}% more tokens"
    print(
        f"input ({fmt}): {src.bytes:,} bytes, {src_tokens:,} tokens; "
        f"output (toon): {out.bytes:,} bytes, {out_tokens:,} tokens; {change}; tokens: {src.method}",
        file=sys.stderr,
    )


def _cmd_decode(args: argparse.Namespace) -> int:
    from .tojson import decode_to_json, decode_to_jsonl

    named = args.to is None
    if named:  # (by the output file's extension, as encode takes its input's)
        ext = os.path.splitext(args.output.lower())[1] if args.output not in (None, "-") else ""
        args.to = _TABLE_INPUTS.get(ext) or ("jsonl" if ext in _JSONL_EXT else "json")
    _refuse_other_outputs(args, named)
    if args.to in ("parquet", "arrow") and args.output in (None, "-") and _is_terminal(sys.stdout):
        raise _Usage(f"--to {args.to} writes binary: give -o FILE or a pipe, not a terminal")
    total = os.path.getsize(args.input) if args.input != "-" and os.path.isfile(args.input) else None
    progress = _Progress(_progress_enabled(args), total, "decode")
    raw_in = _open_input(args.input)
    try:
        counted = _CountingReader(raw_in, lambda d: progress.update(len(d)))
        options = {"strict": not args.no_strict, "indent_size": args.indent_size, "max_line_length": args.max_line_length}

        def write(out: IO[bytes]) -> None:
            if args.to in _TABLE_FORMATS:
                _write_table(counted, out, args, options)
            elif args.to == "jsonl":
                decode_to_jsonl(counted, out, path=args.path, **options)
            else:
                decode_to_json(counted, out, indent=args.indent, path=args.path, **options)
                out.write(b"\n")  # text output ends with a newline, like json.tool
            out.flush()

        _write_output(args.output, write)
    finally:
        progress.close()
        if raw_in is not sys.stdin.buffer:
            raw_in.close()
    return EXIT_OK


_TABLE_FORMATS = ("parquet", "arrow", "csv")

# decode options that apply to some outputs only: dest -> (option, outputs).
# Each defaults to None (a flag too: store_true with default=None), so that an
# option given with its default value is still told from one not given.
_DECODE_OUTPUT_OPTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "indent": ("--indent", ("json",)),
    "infer_schema_length": ("--infer-schema-length", _TABLE_FORMATS),
    "schema_overrides": ("--schema-overrides", _TABLE_FORMATS),
    "try_parse_dates": ("--try-parse-dates", _TABLE_FORMATS),
    "key_field": ("--key-field", _TABLE_FORMATS),
}


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # (a closed or replaced stdout)
        return False


def _refuse_other_outputs(args: argparse.Namespace, named: bool = False) -> None:
    """A decode option given for an output it does not apply to is a usage
    error (exit 2), not silently ignored.  ``named``: the output format came
    from -o's extension."""
    for dest, (option, outputs) in _DECODE_OUTPUT_OPTIONS.items():
        value = getattr(args, dest, None)
        if value is not None and value is not False and args.to not in outputs:
            given = f"{args.to} output (from -o's extension)" if named else f"--to {args.to}"
            raise _Usage(f"{option} applies to --to {'/'.join(outputs)} only, not to {given}")


# read_toon's infer_schema_length default (the CLI's too: one inference rule
# everywhere; kept here so that the parser does not import polars).
_INFER_DEFAULT = 100

# The library's option names in its error messages, as the CLI spells them.
_CLI_SPELLING = (
    (" (or a schema)", ""),  # (the command line has no schema option: see _errors.SCHEMA_HINT)
    ("schema_overrides", "--schema-overrides"),
    ("infer_schema_length", "--infer-schema-length"),
    ("key_field", "--key-field"),
)


def _write_table(source: Any, out: IO[bytes], args: argparse.Namespace, options: dict[str, Any]) -> None:
    """decode --to parquet|arrow|csv: the table's batches, streamed to a pyarrow writer."""
    with requires(f"toonstream decode --to {args.to}"):
        from ._frames import DtypeNameError
        from .arrow import open_batches

    infer = args.infer_schema_length
    overrides: dict[str, Any] = {}
    for part in args.schema_overrides or ():
        overrides.update(part)
    reader, batches = open_batches(
        source,
        path=args.path,
        infer_schema_length=_INFER_DEFAULT if infer is None else None if infer == "all" else infer,
        schema_overrides=overrides or None,
        try_parse_dates=bool(args.try_parse_dates),
        key_field="key" if args.key_field is None else args.key_field,
        **options,
    )
    try:
        _write_batches(reader, batches, out, args, overrides)
    except ToonDecodeError as e:
        _check_override_names(reader, overrides)  # a misspelt name first: it may be the cause
        if e.code in ("type_mismatch", "name_collision", "unexpected_fields"):
            msg = e.msg
            for name, option in _CLI_SPELLING:
                msg = msg.replace(name, option)
            raise ToonDecodeError(msg, code=e.code, line=e.line, column=e.column, line_text=e.line_text) from None
        raise
    except DtypeNameError as e:  # the reader's check of the given dtypes' names
        raise _Usage(f"--schema-overrides: {e}") from None


def _check_override_names(reader: Any, overrides: dict[str, Any], schema: Any = None) -> None:
    """--schema-overrides naming no column of the table is a usage error
    (the library ignores such names, as polars.read_csv does); ``schema``: the
    output's Arrow schema, whose struct fields are named ``group.field``."""
    scan = reader.scan
    if not overrides or scan.names is None:
        return
    names = set(scan.names) | {t[0] for t in reader.tops} | {f.name for f in scan.fields or ()}
    if schema is not None:
        names |= _field_paths(schema)
    # (without the schema, an error's: a struct field's group.field is taken on its group's name)
    unknown = [n for n in overrides if n not in names and (schema is not None or n.split(".")[0] not in names)]
    if unknown:
        raise _Usage(f"--schema-overrides: no column {unknown[0]!r} in the table (columns: {', '.join(scan.names)})")


def _field_paths(schema: Any) -> set[str]:
    """Every column of an Arrow schema and, inside structs (in lists too), every
    field as ``group.field`` (how an override names it)."""
    import pyarrow as pa

    out: set[str] = set()
    todo = [(f.name, f.type) for f in schema]
    while todo:
        name, t = todo.pop()
        out.add(name)
        while pa.types.is_list(t) or pa.types.is_large_list(t):
            t = t.value_type
        if pa.types.is_struct(t):
            todo.extend((f"{name}.{t.field(i).name}", t.field(i).type) for i in range(t.num_fields))
    return out


def _write_batches(reader: Any, batches: Any, out: IO[bytes], args: argparse.Namespace, overrides: dict[str, Any]) -> None:
    import pyarrow as pa

    first = next(batches, None)
    if first is None:
        raise ToonDecodeError("no rows", code="not_tabular", line=1, column=1, line_text="")
    _check_override_names(reader, overrides, first.schema)
    sink = pa.PythonFile(out, mode="w")
    if args.to == "parquet":
        import pyarrow.parquet as pq

        with pq.ParquetWriter(sink, first.schema) as pw:
            pw.write_batch(first)
            for b in batches:
                pw.write_batch(b)
    elif args.to == "arrow":
        # (.arrows names the IPC stream format, .arrow/.feather/.ipc the file format)
        stream = args.output is not None and args.output.lower().endswith(".arrows")
        with (pa.ipc.new_stream if stream else pa.ipc.new_file)(sink, first.schema) as w:
            w.write_batch(first)
            for b in batches:
                w.write_batch(b)
    else:
        import pyarrow.csv as pcsv

        def flat(b: pa.RecordBatch) -> pa.RecordBatch:
            # CSV has no nested or null-typed columns: structs become
            # "group.field" columns, null-only columns empty strings.
            t = pa.Table.from_batches([b]).flatten()
            while any(pa.types.is_struct(c.type) for c in t.columns):
                t = t.flatten()  # (one level per call)
            cols = [c.cast(pa.large_string()) if pa.types.is_null(c.type) else c for c in t.columns]
            # (one batch, also of no rows: a table of none has no batches)
            return pa.RecordBatch.from_arrays([c.combine_chunks() for c in cols], names=t.column_names)

        head = flat(first)
        arrays = [f.name for f in head.schema if pa.types.is_list(f.type) or pa.types.is_large_list(f.type)]
        if arrays:  # (records with arrays in them: a List column)
            raise _Usage(f"--to csv: column {arrays[0]!r} holds arrays, which CSV cannot: write parquet or arrow")
        seen: set[str] = set()
        for name in head.schema.names:
            if name in seen:
                header = reader.scan.header
                raise ToonDecodeError(
                    f"column name collision: CSV names a struct column's fields group.field, and two columns "
                    f"would be named {name!r} (a field group and a field whose name has a dot): "
                    "write Parquet or Arrow, which keep the struct",
                    code="name_collision",
                    line=header.line if header is not None else None,
                    column=len(header.line_text) - len(header.line_text.lstrip(" ")) + 1 if header is not None else 1,
                    line_text=header.line_text if header is not None else "",
                )
            seen.add(name)
        with pcsv.CSVWriter(sink, head.schema) as cw:
            cw.write_batch(head)
            for b in batches:
                cw.write_batch(flat(b))
    sink.flush()


def _cmd_stats(args: argparse.Namespace) -> int:
    from .stats import format_report, measure, measure_jsonl, report_json

    table = _table_input(args.input, None) if args.input_format is None else None
    if table is None and args.input_format is None and _inner_name(args.input).lower().endswith(".toon"):
        table = "TOON"
    if table is not None:  # (its bytes would be reported as invalid JSON)
        raise _Usage(f"stats reads JSON or JSON Lines, not {table} (given {args.input!r}; --from json|jsonl reads it as such)")
    total = os.path.getsize(args.input) if args.input != "-" and os.path.isfile(args.input) else None
    progress = _Progress(_progress_enabled(args), total, "stats")
    raw_in = _open_input(args.input)
    try:
        fmt, stream = _detect_format(args.input, args.input_format, raw_in)
        # (each input byte is reported once, also when a pass reads the file again)
        surrogates = SurrogateCheck()

        def seen(data: bytes) -> None:
            progress.update(len(data))
            if fmt == "json":
                surrogates.feed(data)

        counted = _CountingReader(stream, seen)
        if fmt == "jsonl":
            stats = measure_jsonl(io.BufferedReader(counted, buffer_size=1 << 16), exact=args.exact)
        else:
            try:
                stats = measure(_json_pairs(counted, surrogates), exact=args.exact)
            except _json_errors() as e:
                raise _invalid_json(args.input, e) from None
    finally:
        progress.close()
        if raw_in is not sys.stdin.buffer:
            raw_in.close()
    name = "<stdin>" if args.input == "-" else args.input
    _say(report_json(stats) if args.json else format_report(name, stats))
    return EXIT_OK


def _cmd_validate(args: argparse.Namespace) -> int:
    from .decoder import Decoder

    status = EXIT_OK
    for name in args.files:
        try:
            decoder = Decoder(strict=True, indent_size=args.indent_size, max_line_length=args.max_line_length)
            with _open_input(name) as fp:
                while chunk := fp.read(1 << 16):
                    decoder.feed(chunk)
            decoder.close()
        except ToonDecodeError as e:
            print(_location("<stdin>" if name == "-" else name, e), file=sys.stderr)
            status = EXIT_DATA
        except OSError as e:
            print(_os_error(_renamed(e, "<stdin>" if name == "-" else name)), file=sys.stderr)
            status = EXIT_DATA
        else:
            if args.verbose:
                _say(f"{name}: ok")
    return status


def _say(text: str) -> None:
    """A line of a report to stdout, its write errors naming ``<stdout>``
    (``> /dev/full``), as the converters' output does."""
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as e:
        raise _renamed(e, "<stdout>") from None


def _write_output(path: str | None, write: Callable[[IO[bytes]], None]) -> None:
    if path is None or path == "-":
        out = _stdout()
        write(out)
        out.flush()
        return
    # (a device, a FIFO or a descriptor the process holds, such as /dev/stdout, is written
    # directly: see AtomicOutput)
    with _AtomicOutput(path, commit=_signals.commit) as fp:
        write(fp)


def _stdout() -> IO[bytes]:
    """stdout for bytes, its write errors naming ``<stdout>`` (``> /dev/full``)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # closed, or replaced in-process (no descriptor)
        return sys.stdout.buffer
    sys.stdout.flush()
    return io.BufferedWriter(_NamedFile(fd, "wb", shown="<stdout>", closefd=False), buffer_size=1 << 16)


def _progress_enabled(args: argparse.Namespace) -> bool:
    if args.progress is None:
        return sys.stderr.isatty()
    return bool(args.progress)


def _location(name: str, e: ToonError) -> str:
    line = getattr(e, "line", None)
    col = getattr(e, "column", None)
    msg = getattr(e, "msg", str(e))
    if isinstance(e, ToonEncodeError) and e.path:
        msg = str(ToonEncodeError(e.msg, path=e.path))
    # (a message may quote the input: a header's text, a bad escape's character)
    name, msg = _shown_text(name, 4096), _shown_text(msg, 500)
    if line is None:
        return f"{name}: {msg}"
    return f"{name}:{line}:{col or 1}: {msg}"


# ---------------------------------------------------------------------- parser


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="toonstream",
        description="Convert between JSON/JSONL and TOON in bounded memory.\n\n"
        "encode inputs:  json, jsonl (.jsonl, .ndjson), parquet (.parquet, .pq), arrow (.arrow, .feather, .ipc, .arrows), csv\n"
        "decode outputs: json, jsonl, parquet, arrow, csv\n"
        "decode, validate and stats read TOON (stats: JSON or JSON Lines); any input may be\n"
        "gzip, bzip2, xz or zstd compressed (by extension or content: x.jsonl.gz is JSON Lines).",
        epilog=_help_epilog("toonstream encode data.jsonl -o data.toon", "toonstream decode data.toon --to csv -o data.csv",
                            "toonstream COMMAND --help     (each command's options, examples and exit codes)"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"toonstream {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    def progress_flags(sp: argparse.ArgumentParser) -> None:
        sp.add_argument(
            "--progress", action=argparse.BooleanOptionalAction, default=None,
            help="byte-based progress bar on stderr (default: on when stderr is a terminal; needs tqdm)",
        )

    enc = sub.add_parser(
        "encode", help="JSON, JSON Lines, Parquet, Arrow IPC or CSV -> TOON",
        description="Encode JSON, JSON Lines, Parquet, Arrow IPC or CSV as TOON.",
        epilog=_help_epilog(
            "toonstream encode users.jsonl -o users.toon", "curl -s URL | toonstream encode --stats > out.toon",
            "toonstream encode orders.parquet --key orders --delimiter tab",
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    enc.add_argument(
        "input", nargs="?", default="-",
        help="input file (.json, .jsonl, .ndjson, .parquet, .arrow/.feather/.ipc, .csv); '-' or omitted: stdin",
    )
    enc.add_argument("-o", "--output", help="output file (written atomically); '-' or omitted: stdout")
    enc.add_argument(
        "--from", dest="input_format", choices=["json", "jsonl", "parquet", "arrow", "csv"],
        help="input format (default: by extension; CSV columns are typed from their cells' text, numbers written exactly)",
    )
    enc.add_argument("--delimiter", choices=sorted(_DELIMS), default="comma",
                     help="delimiter of tables and inline arrays (default: comma)")
    enc.add_argument("--indent-size", type=_indent_size, default=2, help="spaces per indentation level (default 2)")
    enc.add_argument("--key", help="JSON Lines and tables: put the records under this key instead of a root array")
    enc.add_argument(
        "--missing-as-null", action="store_true",
        help="lossy, opt-in: records that differ only by missing keys become one table, a missing key written as null",
    )
    enc.add_argument(
        "-j", "--jobs", type=_positive, default=None,
        help="parallel work: on the native engine, threads (at most 2) for a JSON Lines table; on the "
        "reference engine, processes for a big JSON Lines file (default: one per CPU, each for at least "
        "32 MiB of input); --stats and the progress bar read the input in one process",
    )
    enc.add_argument("--stats", action="store_true", help="print input/output bytes and token counts to stderr")
    enc.add_argument("--exact", action="store_true", help="with --stats: exact o200k token counts (bpe-openai or tiktoken, offline)")
    progress_flags(enc)
    enc.set_defaults(run=_cmd_encode, usage=enc)

    dec = sub.add_parser(
        "decode", help="TOON -> JSON, JSON Lines, Parquet, Arrow IPC or CSV",
        description="Decode TOON to JSON, JSON Lines, or a table as Parquet, Arrow IPC or CSV.",
        epilog=_help_epilog(
            "toonstream decode data.toon --indent 2", "toonstream decode data.toon --to jsonl --path data.users",
            "toonstream decode table.toon --to parquet -o table.parquet",
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    dec.add_argument("input", nargs="?", default="-", help="TOON input file; '-' or omitted: stdin")
    dec.add_argument("-o", "--output", help="output file (written atomically); '-' or omitted: stdout")
    dec.add_argument(
        "--to",
        choices=["json", "jsonl", *_TABLE_FORMATS],
        default=None,
        help="output format (default: by -o's extension, else json); parquet/arrow/csv take a table "
        "(see --path); parquet/arrow need -o FILE or a pipe",
    )
    dec.add_argument(
        "--path", default=None, metavar="P",
        help="what to write, as an ijson prefix: keys joined by dots, 'item' for an array's elements "
        "(data.users, groups.item.rows). json: the one value at P; jsonl: the elements of the array(s) at P "
        "(default: the root array); parquet/arrow/csv: the table(s) at P (default: the root table, else the "
        "root object's first table)",
    )
    dec.add_argument("--infer-schema-length", type=_infer_length, default=None, metavar="N|all",
                     help=f"parquet/arrow/csv: rows looked at to choose column types (default {_INFER_DEFAULT}; "
                     "'all': every row; 0: every column String), as infer_schema_length in read_toon")
    dec.add_argument("--schema-overrides", type=_schema_overrides, action="append", default=None,
                     metavar="NAME=TYPE,...",
                     help="parquet/arrow/csv: column types instead of inferred ones, e.g. 'id=Int32,t=Datetime(us, UTC),"
                     "price=Decimal(38,2)' (Polars or Arrow type names; a struct leaf as group.field; repeatable)")
    dec.add_argument("--try-parse-dates", action="store_true", default=None,
                     help="parquet/arrow/csv: infer ISO 8601 dates/datetimes as Date/Datetime, as try_parse_dates in read_toon")
    dec.add_argument("--key-field", default=None, metavar="NAME",
                     help="parquet/arrow/csv: column name for a keyed table's entry keys (default: key)")
    dec.add_argument("--no-strict", action="store_true", help="relax §14 checks (counts, blank lines, duplicates)")
    dec.add_argument("--indent", type=_non_negative, default=None, metavar="N",
                     help="json: pretty-print with N spaces (default: compact)")
    dec.add_argument("--indent-size", type=_indent_size, default=2, help="TOON input indentation (default 2)")
    dec.add_argument("--max-line-length", type=_non_negative, default=None, metavar="N",
                     help=_MAX_LINE_HELP)
    progress_flags(dec)
    dec.set_defaults(run=_cmd_decode, usage=dec)

    st = sub.add_parser(
        "stats", help="bytes and tokens of the input in each format, and the cheapest",
        description="Bytes and tokens of a JSON or JSON Lines input as each format would write it, and the cheapest.",
        epilog=_help_epilog("toonstream stats data.json", "toonstream stats --exact --json events.jsonl.gz"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    st.add_argument("input", nargs="?", default="-", help="JSON or JSON Lines; '-' or omitted: stdin")
    st.add_argument("--from", dest="input_format", choices=["json", "jsonl"],
                    help="input format (default: by extension, else by content)")
    st.add_argument("--json", action="store_true", help="machine-readable output")
    st.add_argument("--exact", action="store_true", help="exact o200k counts (bpe-openai or tiktoken, offline)")
    progress_flags(st)
    st.set_defaults(run=_cmd_stats, usage=st)

    val = sub.add_parser(
        "validate", help="strict check of TOON files",
        description="Check TOON files strictly (spec section 14); one line per invalid file on stderr.",
        epilog=_help_epilog("toonstream validate a.toon b.toon", "toonstream validate -v *.toon", "toonstream validate - < a.toon"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    val.add_argument("files", nargs="+", help="TOON files to check ('-': stdin)")
    val.add_argument("--indent-size", type=_indent_size, default=2, help="spaces per indentation level (default 2)")
    val.add_argument("--max-line-length", type=_non_negative, default=None, metavar="N", help=_MAX_LINE_HELP)
    val.add_argument("-v", "--verbose", action="store_true", help="also print 'FILE: ok' for valid files")
    val.set_defaults(run=_cmd_validate, usage=val)
    return p


_EXIT_CODES = """\
exit status:
  0    success
  1    data or I/O error: one line on stderr (file:line:col: message, or file: reason)
  2    usage error (bad option, output path equal to input path)
  130  interrupted (SIGINT)   143  terminated (SIGTERM)
  141  stdout closed early (| head)"""


def _help_epilog(*examples: str) -> str:
    return "examples:\n" + "".join(f"  {e}\n" for e in examples) + "\n" + _EXIT_CODES


def _whole(text: str, least: int) -> int:
    """A whole number of at least ``least``, in ASCII digits (``int()`` would take
    ``1_000``, ``+5``, `` 7`` and other scripts' digits)."""
    if not (text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(f"expected a whole number >= {least}, got {text!r}")
    n = int(text)
    if n < least:
        raise argparse.ArgumentTypeError(f"must be >= {least}")
    return n


def _positive(text: str) -> int:
    return _whole(text, 1)


_MAX_LINE_HELP = (
    "longest line taken, in characters (default 64 MiB: a string of 64 MiB or more encodes to a longer line)"
)


def _indent_size(text: str) -> int:
    """--indent-size: 1 to the encoders' limit (a traceback from the encoder past it)."""
    from .encoder import MAX_INDENT_SIZE

    n = _positive(text)
    if n > MAX_INDENT_SIZE:
        raise argparse.ArgumentTypeError(f"must be <= {MAX_INDENT_SIZE}")
    return n


def _infer_length(text: str) -> int | str:
    """--infer-schema-length: N >= 0 or 'all' (kept as the string; None means not given)."""
    if text.strip().lower() == "all":
        return "all"
    try:
        return _non_negative(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a number of rows or 'all', got {text!r}") from None


def _schema_overrides(text: str) -> dict[str, Any]:
    try:
        with requires("typing columns by name"):
            from ._frames import parse_schema_overrides
    except MissingExtraError as e:  # argparse reports only these as a usage error
        raise argparse.ArgumentTypeError(str(e)) from None
    try:
        return parse_schema_overrides(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _non_negative(text: str) -> int:
    return _whole(text, 0)


def main(argv: Sequence[str] | None = None, *, installed: bool = False) -> int:
    """Run the CLI; returns the exit status (see the module docstring).

    ``installed``: the caller (the console script) has put the signal
    handling in place already and keeps it until the process exits;
    otherwise it is installed for this call and put back after it."""
    before = [] if installed else _signals.install()
    streams = _standard_streams(reserve_fds=installed)
    try:
        return _main(argv)
    finally:
        sys.stdin, sys.stdout, sys.stderr = streams
        _signals.restore(before)


class _Parser(argparse.ArgumentParser):
    """argparse's parser, but the text of --help and --version reaches stdout
    or is an error: argparse drops an OSError writing it (a full disk), and
    the command exited 0 having written nothing.  (Its subcommands' parsers
    are of the same class.)"""

    def _print_message(self, message: str, file: Any = None) -> None:
        if message and file is sys.stdout:
            file.write(message)
            file.flush()
            return
        super()._print_message(message, file)


def _main(argv: Sequence[str] | None) -> int:
    try:
        args = _parser().parse_args(argv)
    except BrokenPipeError:  # --help | head
        _silence_stdout()
        return EXIT_PIPE
    except OSError as e:  # --help > /dev/full
        _silence_stdout()
        print(f"toonstream: error: <stdout>: {e.strerror}", file=sys.stderr)
        return EXIT_DATA
    parser: argparse.ArgumentParser = args.usage  # (a usage error shows the subcommand's usage, as argparse's own)
    if args.run is _cmd_encode and args.exact and not args.stats:
        parser.error("--exact applies to --stats's token counts: give --stats too")
    if getattr(args, "output", None) == "":
        parser.error("-o/--output needs a file name ('-' for stdout)")
    if getattr(args, "output", None) and getattr(args, "input", None) and _same_file(args.input, args.output):
        parser.error("the output path is the input path (refusing to overwrite the input)")
    # (commands that write as they read: stats and validate read all before their one report)
    if hasattr(args, "output") and args.output in (None, "-") and getattr(args, "input", None) and _reads_own_output(args.input):
        parser.error("the input is the file stdout writes to (refusing to read its own output, as cat does)")
    if getattr(args, "exact", False):
        from .tokens import _exact_encoder

        if _exact_encoder() is None:  # (the report says "tokens: estimated"; a script may not look)
            print("toonstream: warning: --exact: no o200k tokenizer could be loaded (pip install bpe-openai, "
                  "or tiktoken with its vocabulary cached): the token counts are estimates", file=sys.stderr)
    try:
        _engine.current()  # (TOONSTREAM_ENGINE: a bad value, or a native engine not built, in one line)
    except (ValueError, ImportError) as e:
        print(f"toonstream: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    name = getattr(args, "input", "-")
    name = "<stdin>" if name == "-" else name
    try:
        return int(args.run(args))
    except (ToonDecodeError, ToonEncodeError) as e:
        print(_location(name, e), file=sys.stderr)
        return EXIT_DATA
    except (_Usage, MissingExtraError) as e:
        parser.error(str(e))
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_PIPE
    except KeyboardInterrupt:
        return EXIT_SIGINT
    except _Terminated:
        return EXIT_SIGTERM
    except OSError as e:
        print(f"toonstream: error: {_os_error(e)}", file=sys.stderr)
        return EXIT_DATA


def _os_error(e: OSError) -> str:
    """``path: reason`` of an I/O error, on one line (the path as the user gave it)."""
    where = f"{_shown_text(os.fsdecode(e.filename), 4096)}: " if isinstance(e.filename, (str, bytes)) else ""
    if not where and e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        # Every file the user named is named in its errors (_NamedFile): a full disk (or a
        # file size limit) met without a name is a spool's, a temporary file the command made.
        where = f"{_shown_text(tempfile.gettempdir(), 4096)} (temporary files; TMPDIR can name another directory): "
    return f"{where}{_shown_text(str(e.strerror or e), 300)}"


class _ClosedRaw(io.RawIOBase):
    """A standard stream that was closed when the command started (``>&-``):
    any read or write is the error GNU tools give, with the stream's name."""

    def __init__(self, name: str, action: str) -> None:
        self._name, self._action = name, action

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return True

    def _fail(self) -> OSError:
        return OSError(errno.EBADF, f"{self._action} error: {os.strerror(errno.EBADF)}", self._name)

    def readinto(self, b: Any) -> int:
        raise self._fail()

    def write(self, b: Any) -> int:
        raise self._fail()


class _ClosedText(io.TextIOBase):
    """The text side of :class:`_ClosedRaw` (``print`` to it fails the same way);
    flush does nothing, so that exiting does not report the error again."""

    def __init__(self, name: str, action: str) -> None:
        self.buffer = _ClosedRaw(name, action)

    def read(self, size: int | None = -1) -> str:
        raise self.buffer._fail()

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        raise self.buffer._fail()

    def write(self, s: str) -> int:
        raise self.buffer._fail()


class _Discard(io.TextIOBase):
    """stderr when it was closed: messages are lost, the exit status still tells."""

    def write(self, s: str) -> int:
        return len(s)


def _standard_streams(*, reserve_fds: bool) -> tuple[Any, Any, Any]:
    """Stand-ins for the standard streams that are closed (Python sets them to
    None): reading stdin or writing stdout is then a one-line I/O error, never
    an AttributeError, and a message for a closed stderr is dropped instead of
    going to stdout (``print(file=None)`` writes to stdout).  Returns the
    streams as they were, to put back.

    ``reserve_fds``: also open /dev/null on a closed descriptor 0, 1 or 2, in
    the mode opposite to its use (as GNU tools do), so that no file this
    process opens gets that number: a write meant for stderr must not land in
    the output file."""
    before = (sys.stdin, sys.stdout, sys.stderr)
    if reserve_fds:
        for fd, mode in ((0, os.O_WRONLY), (1, os.O_RDONLY), (2, os.O_RDONLY)):
            try:
                os.fstat(fd)
            except OSError:
                try:
                    spare = os.open(os.devnull, mode)
                    if spare != fd:
                        os.dup2(spare, fd, inheritable=False)
                        os.close(spare)
                except OSError:
                    pass
    if sys.stdin is None:
        sys.stdin = _ClosedText("<stdin>", "read")
    if sys.stdout is None:
        sys.stdout = _ClosedText("<stdout>", "write")
    if sys.stderr is None:
        sys.stderr = _Discard()
    return before


def _silence_stdout() -> None:
    # Python flushes stdout at exit; with the reader gone that would raise
    # again and print a traceback.  Point stdout at /dev/null instead.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass


def run() -> NoReturn:
    """Console-script entry point (the handling of SIGINT/SIGTERM first, then :func:`main`)."""
    _signals.run()

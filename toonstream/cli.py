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
FILE is untouched and the temporary file is removed.
"""

from __future__ import annotations

import argparse
import decimal
import io
import os
import signal
import sys
import tempfile
from pathlib import Path
from typing import IO, Any, Callable, NoReturn, Sequence

from . import __version__
from ._errors import ToonDecodeError, ToonEncodeError, ToonError
from .tokens import TokenCounter

EXIT_OK, EXIT_DATA, EXIT_USAGE = 0, 1, 2
EXIT_SIGINT, EXIT_SIGTERM, EXIT_PIPE = 130, 143, 141

_DELIMS = {"comma": ",", "tab": "\t", "pipe": "|"}
_JSONL_EXT = (".jsonl", ".ndjson")


class _Terminated(BaseException):
    """SIGTERM, raised in the main thread so that cleanup (finally) runs."""


class _Usage(Exception):
    pass


# ---------------------------------------------------------------------- I/O helpers


class _AtomicOutput:
    """A binary file that becomes ``path`` only if the block succeeds."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.tmp: str | None = None
        self.fp: IO[bytes] | None = None

    def __enter__(self) -> IO[bytes]:
        target = Path(self.path)
        directory = target.parent if str(target.parent) else Path(".")
        fd, self.tmp = tempfile.mkstemp(dir=directory, prefix=f".{target.name}.", suffix=".tmp")
        self.fp = os.fdopen(fd, "wb")
        return self.fp

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        assert self.fp is not None and self.tmp is not None
        try:
            if exc_type is None:
                self.fp.flush()
                os.fsync(self.fp.fileno())
                self.fp.close()
                if os.path.exists(self.path):
                    # keep the destination's permission bits
                    os.chmod(self.tmp, os.stat(self.path).st_mode & 0o7777)
                else:
                    umask = os.umask(0)
                    os.umask(umask)
                    os.chmod(self.tmp, 0o666 & ~umask)
                os.replace(self.tmp, self.path)
                self.tmp = None
        finally:
            if self.tmp is not None:
                try:
                    self.fp.close()
                except OSError:
                    pass
                try:
                    os.unlink(self.tmp)
                except OSError:
                    pass


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
    if path == "-":
        return sys.stdin.buffer
    return open(path, "rb")


def _same_file(a: str, b: str) -> bool:
    if a == "-" or b == "-":
        return False
    if os.path.exists(a) and os.path.exists(b):
        return os.path.samefile(a, b)
    return os.path.realpath(a) == os.path.realpath(b)


# ---------------------------------------------------------------------- commands


def _detect_format(path: str, forced: str | None, stream: IO[bytes]) -> tuple[str, IO[bytes]]:
    if forced:
        return forced, stream
    lower = path.lower()
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
    import ijson

    from .streaming import Encoder, encode_jsonl

    table_format = _table_input(args.input, args.input_format)
    if table_format is not None:
        return _cmd_encode_table(args, table_format)
    delimiter = _DELIMS[args.delimiter]
    src_name = args.input
    stats = TokenCounter(exact=args.exact) if args.stats else None
    out_stats = TokenCounter(exact=args.exact) if args.stats else None
    total = os.path.getsize(src_name) if src_name != "-" and os.path.isfile(src_name) else None
    progress = _Progress(_progress_enabled(args), total, "encode")
    raw_in = _open_input(src_name)
    try:

        def seen(data: bytes) -> None:
            progress.update(len(data))
            if stats is not None:
                stats.feed(data)

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
                    for event in ijson.parse(counted):
                        enc.send(event)
                except (ijson.JSONError, decimal.InvalidOperation) as e:
                    raise ToonEncodeError(f"invalid JSON: {e}") from None
                enc.close()
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
    return _TABLE_INPUTS.get(os.path.splitext(path.lower())[1])


def _cmd_encode_table(args: argparse.Namespace, fmt: str) -> int:
    """encode from Parquet, Arrow IPC (file or stream) or CSV with ``encode_arrow``
    (vectorized; the row count from Parquet/IPC metadata, CSV rows spooled).
    CSV goes through pyarrow's streaming reader and its type inference."""
    import shutil

    import pyarrow as pa

    from ._arrow_encode import encode_arrow

    out_stats = TokenCounter(exact=args.exact) if args.stats else None
    src_stats = TokenCounter(exact=args.exact) if args.stats and fmt == "csv" else None
    src_name = args.input
    tmp_path: str | None = None
    raw_in: IO[bytes] | None = None
    progress = _Progress(False, None, "encode")
    try:
        data: Any
        if fmt == "csv":
            import pyarrow.csv as pcsv

            total = os.path.getsize(src_name) if src_name != "-" and os.path.isfile(src_name) else None
            progress = _Progress(_progress_enabled(args), total, "encode")
            raw_in = _open_input(src_name)

            def seen(chunk: bytes) -> None:
                progress.update(len(chunk))
                if src_stats is not None:
                    src_stats.feed(chunk)

            data = pcsv.open_csv(io.BufferedReader(_CountingReader(raw_in, seen), buffer_size=1 << 20))
        elif src_name == "-":
            # Parquet and IPC files are read with random access: stdin goes to a temporary file first
            fd, tmp_path = tempfile.mkstemp(prefix="toonstream-", suffix=f".{fmt}")
            with os.fdopen(fd, "wb") as tmp:
                shutil.copyfileobj(sys.stdin.buffer, tmp, 1 << 20)
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
            )
            sink.flush()

        _write_output(args.output, write)
    except pa.ArrowException as e:
        if isinstance(e, OSError) and e.errno is not None:
            raise
        raise ToonEncodeError(f"cannot read {fmt} input: {str(e).strip().splitlines()[0]}") from None
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
                f"{out_stats.total:,} tokens ({out_stats.method})",
                file=sys.stderr,
            )
    return EXIT_OK


def _print_stats(fmt: str, src: TokenCounter, out: TokenCounter) -> None:
    src_tokens, out_tokens = src.total, out.total
    saved = 100.0 * (1 - out_tokens / src_tokens) if src_tokens else 0.0
    print(
        f"input ({fmt}): {src.bytes:,} bytes, {src_tokens:,} tokens; "
        f"output (toon): {out.bytes:,} bytes, {out_tokens:,} tokens; "
        f"{saved:.1f}% fewer tokens ({src.method})",
        file=sys.stderr,
    )


def _cmd_decode(args: argparse.Namespace) -> int:
    from .tojson import decode_to_json, decode_to_jsonl

    total = os.path.getsize(args.input) if args.input != "-" and os.path.isfile(args.input) else None
    progress = _Progress(_progress_enabled(args), total, "decode")
    raw_in = _open_input(args.input)
    try:
        counted = _CountingReader(raw_in, lambda d: progress.update(len(d)))
        options = {"strict": not args.no_strict, "indent_size": args.indent_size}

        def write(out: IO[bytes]) -> None:
            if args.to in _TABLE_FORMATS:
                _write_table(counted, out, args, options)
            elif args.to == "jsonl":
                decode_to_jsonl(counted, out, **options)
            else:
                decode_to_json(counted, out, indent=args.indent, **options)
                out.write(b"\n")  # text output ends with a newline, like json.tool
            out.flush()

        _write_output(args.output, write)
    finally:
        progress.close()
        if raw_in is not sys.stdin.buffer:
            raw_in.close()
    return EXIT_OK


_TABLE_FORMATS = ("parquet", "arrow", "csv")


def _write_table(source: Any, out: IO[bytes], args: argparse.Namespace, options: dict[str, Any]) -> None:
    """decode --to parquet|arrow|csv: the table's batches, streamed to a pyarrow writer."""
    import pyarrow as pa

    from .arrow import iter_batches

    batches = iter_batches(
        source, path=args.path, infer_schema_length=args.infer_schema_length or None, key_field=args.key_field, **options
    )
    first = next(batches, None)
    if first is None:
        raise ToonDecodeError("no rows", code="not_tabular", line=1, column=1, line_text="")
    sink = pa.PythonFile(out, mode="w")
    if args.to == "parquet":
        import pyarrow.parquet as pq

        with pq.ParquetWriter(sink, first.schema) as pw:
            pw.write_batch(first)
            for b in batches:
                pw.write_batch(b)
    elif args.to == "arrow":
        with pa.ipc.new_file(sink, first.schema) as w:
            w.write_batch(first)
            for b in batches:
                w.write_batch(b)
    else:
        import pyarrow.csv as pcsv

        def flat(b: pa.RecordBatch) -> pa.RecordBatch:
            # CSV has no nested or null-typed columns: structs become
            # "group.field" columns, null-only columns empty strings.
            t = pa.Table.from_batches([b]).flatten()
            cols = [c.cast(pa.large_string()) if pa.types.is_null(c.type) else c for c in t.columns]
            return pa.Table.from_arrays(cols, names=t.column_names).combine_chunks().to_batches()[0]

        head = flat(first)
        with pcsv.CSVWriter(sink, head.schema) as cw:
            cw.write_batch(head)
            for b in batches:
                cw.write_batch(flat(b))
    sink.flush()


def _cmd_stats(args: argparse.Namespace) -> int:
    import ijson

    from .stats import format_report, jsonl_events, measure, report_json

    raw_in = _open_input(args.input)
    try:
        fmt, stream = _detect_format(args.input, args.input_format, raw_in)
        if fmt == "jsonl":
            events: Any = jsonl_events(stream)
        else:
            events = ijson.parse(stream)
        try:
            stats = measure(events, exact=args.exact)
        except (ijson.JSONError, decimal.InvalidOperation) as e:
            raise ToonEncodeError(f"invalid JSON: {e}") from None
    finally:
        if raw_in is not sys.stdin.buffer:
            raw_in.close()
    name = "<stdin>" if args.input == "-" else args.input
    print(report_json(stats) if args.json else format_report(name, stats))
    return EXIT_OK


def _cmd_validate(args: argparse.Namespace) -> int:
    from .decoder import Decoder

    status = EXIT_OK
    for name in args.files:
        try:
            decoder = Decoder(strict=True, indent_size=args.indent_size)
            with _open_input(name) as fp:
                while chunk := fp.read(1 << 16):
                    decoder.feed(chunk)
            decoder.close()
        except ToonDecodeError as e:
            print(_location(name, e), file=sys.stderr)
            status = EXIT_DATA
        except OSError as e:
            print(f"{name}: {e.strerror or e}", file=sys.stderr)
            status = EXIT_DATA
        else:
            if args.verbose:
                print(f"{name}: ok")
    return status


def _write_output(path: str | None, write: Callable[[IO[bytes]], None]) -> None:
    if path is None or path == "-":
        write(sys.stdout.buffer)
        sys.stdout.buffer.flush()
        return
    if os.path.exists(path) and not os.path.isfile(path):
        # A device or FIFO (/dev/null, /dev/full, a named pipe) cannot be
        # replaced by a rename: write to it directly.
        with open(path, "wb") as fp:
            write(fp)
        return
    with _AtomicOutput(path) as fp:
        write(fp)


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
    if line is None:
        return f"{name}: {msg}"
    return f"{name}:{line}:{col or 1}: {msg}"


# ---------------------------------------------------------------------- parser


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="toonstream",
        description="Convert between JSON/JSONL and TOON in bounded memory.",
    )
    p.add_argument("--version", action="version", version=f"toonstream {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    def progress_flags(sp: argparse.ArgumentParser) -> None:
        sp.add_argument(
            "--progress", action=argparse.BooleanOptionalAction, default=None,
            help="byte-based progress bar on stderr (default: on when stderr is a terminal; needs tqdm)",
        )

    enc = sub.add_parser("encode", help="JSON, JSON Lines, Parquet, Arrow IPC or CSV -> TOON")
    enc.add_argument(
        "input", nargs="?", default="-",
        help="input file (.json, .jsonl, .ndjson, .parquet, .arrow/.feather/.ipc, .csv); '-' or omitted: stdin",
    )
    enc.add_argument("-o", "--output", help="output file (written atomically); '-' or omitted: stdout")
    enc.add_argument(
        "--from", dest="input_format", choices=["json", "jsonl", "parquet", "arrow", "csv"],
        help="input format (default: by extension; CSV column types are inferred by pyarrow)",
    )
    enc.add_argument("--delimiter", choices=sorted(_DELIMS), default="comma")
    enc.add_argument("--indent-size", type=_positive, default=2)
    enc.add_argument("--key", help="JSON Lines and tables: put the records under this key instead of a root array")
    enc.add_argument(
        "--missing-as-null", action="store_true",
        help="lossy, opt-in: records that differ only by missing keys become one table, a missing key written as null",
    )
    enc.add_argument(
        "-j", "--jobs", type=_positive, default=None,
        help="processes for a big JSON Lines file (default: one per CPU, each for at least 32 MiB of input; "
        "--stats and the progress bar read the input in one process)",
    )
    enc.add_argument("--stats", action="store_true", help="print input/output bytes and token counts to stderr")
    enc.add_argument("--exact", action="store_true", help="with --stats: exact o200k token counts (needs tiktoken, offline)")
    progress_flags(enc)
    enc.set_defaults(run=_cmd_encode)

    dec = sub.add_parser("decode", help="TOON -> JSON or JSON Lines")
    dec.add_argument("input", nargs="?", default="-")
    dec.add_argument("-o", "--output")
    dec.add_argument(
        "--to",
        choices=["json", "jsonl", *_TABLE_FORMATS],
        default="json",
        help="output format; parquet/arrow/csv take a table (see --path) and need -o FILE or a pipe",
    )
    dec.add_argument("--path", default=None, help="parquet/arrow/csv: the table's prefix (default: the root table, "
                     "else the root object's first table)")
    dec.add_argument("--infer-schema-length", type=_non_negative, default=10_000,
                     help="parquet/arrow/csv: rows looked at to choose column types (0: all)")
    dec.add_argument("--key-field", default="key", help="parquet/arrow/csv: column name for a keyed table's entry keys")
    dec.add_argument("--no-strict", action="store_true", help="relax §14 checks (counts, blank lines, duplicates)")
    dec.add_argument("--indent", type=_non_negative, default=None, help="pretty-print JSON output with N spaces")
    dec.add_argument("--indent-size", type=_positive, default=2, help="TOON input indentation (default 2)")
    progress_flags(dec)
    dec.set_defaults(run=_cmd_decode)

    st = sub.add_parser("stats", help="bytes and tokens of the input in each format, and the cheapest")
    st.add_argument("input", nargs="?", default="-", help="JSON or JSON Lines; '-' or omitted: stdin")
    st.add_argument("--from", dest="input_format", choices=["json", "jsonl"])
    st.add_argument("--json", action="store_true", help="machine-readable output")
    st.add_argument("--exact", action="store_true", help="exact o200k counts (bpe-openai or tiktoken, offline)")
    st.set_defaults(run=_cmd_stats)

    val = sub.add_parser("validate", help="strict check of TOON files")
    val.add_argument("files", nargs="+")
    val.add_argument("--indent-size", type=_positive, default=2)
    val.add_argument("-v", "--verbose", action="store_true", help="also print 'FILE: ok' for valid files")
    val.set_defaults(run=_cmd_validate)
    return p


def _positive(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError("must be >= 1")
    return n


def _non_negative(text: str) -> int:
    n = int(text)
    if n < 0:
        raise argparse.ArgumentTypeError("must be >= 0")
    return n


def _on_sigterm(signum: int, frame: Any) -> NoReturn:
    raise _Terminated()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (see the module docstring)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if getattr(args, "output", None) and getattr(args, "input", None) and _same_file(args.input, args.output):
        parser.error("the output path is the input path (refusing to overwrite the input)")
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    name = getattr(args, "input", "-")
    name = "<stdin>" if name == "-" else name
    try:
        return int(args.run(args))
    except (ToonDecodeError, ToonEncodeError) as e:
        print(_location(name, e), file=sys.stderr)
        return EXIT_DATA
    except _Usage as e:
        parser.error(str(e))
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_PIPE
    except KeyboardInterrupt:
        return EXIT_SIGINT
    except _Terminated:
        return EXIT_SIGTERM
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        print(f"toonstream: error: {where}{e.strerror or e}", file=sys.stderr)
        return EXIT_DATA
    finally:
        signal.signal(signal.SIGTERM, previous)


def _silence_stdout() -> None:
    # Python flushes stdout at exit; with the reader gone that would raise
    # again and print a traceback.  Point stdout at /dev/null instead.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass


def run() -> NoReturn:
    """Console-script entry point."""
    sys.exit(main())

"""The grid engine x driver x chunking, as ijson tests its backends: every driver, on each
engine (conftest's ``engine`` fixture), fed every document of one corpus cut several ways, gives
exactly the reference engine's outcome on the whole input: the same outputs (types included) and
the same error (class, code, message, line, column, line text), with the outputs before an error
first.

The corpus: the spec's decode fixtures, the adversarial corpus (tests/corpus), tables big enough
to cross the chunk and batch sizes of both engines, and seeded byte mutations of all of them (most
of which are errors somewhere in the middle of a document).
"""

from __future__ import annotations

import functools
import io
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import toonstream
from conftest import identical, load_fixtures
from differential import error_key, mutate, plain, split
from toonstream import _engine

CORPUS = Path(__file__).resolve().parent / "corpus"

#: whole input, a byte at a time, small odd chunks, a common buffer size
CHUNKINGS = {"whole": 0, "1": 1, "7": 7, "64": 64}


def _tables() -> list[bytes]:
    rng = random.Random(7)
    out = []
    for n in (300, 3000):
        rows = "\n".join(f"  {i},{rng.choice(['x', 'a b', 'true', '1e5', '-0.5'])},{rng.random():.6g}" for i in range(n))
        out.append(f"t[{n}]{{id,s,x}}:\n{rows}".encode())
        out.append(f"[{n}]{{id,s,x}}:\n{rows}".encode())  # (a root table)
        out.append(f"outer:\n  list[2]:\n    - t[{n}]{{id,s,x}}:\n" .encode()
                   + "\n".join("    " + r for r in rows.split("\n")).encode() + b"\n    - 1")
    return out


@functools.lru_cache(maxsize=1)
def _documents() -> tuple[tuple[bytes, dict[str, Any]], ...]:
    docs: list[tuple[bytes, dict[str, Any]]] = []
    for _, case in load_fixtures("decode"):
        o = case.get("options", {})
        docs.append((case["input"].encode(), {"indent_size": o.get("indentSize", 2), "strict": o.get("strict", True)}))
    docs.extend((p.read_bytes(), {}) for p in sorted(CORPUS.glob("[yn]_*.toon")))
    docs.extend((t, {"strict": strict}) for t in _tables() for strict in (True, False))
    rng = random.Random(20261202)
    docs.extend((mutate(rng, data), opts) for data, opts in list(docs) for _ in range(2))
    return tuple(docs)


@functools.lru_cache(maxsize=None)
def _rows_prefix(data: bytes, strict: bool, indent_size: int) -> str:
    """The prefix of the document's first table (by the reference), else of its first array, else ""."""
    opts = {"strict": strict, "indent_size": indent_size}

    def find() -> str:
        arrays = []
        try:
            for prefix, event, _ in toonstream.parse(data, **opts):
                if event == "start_array" and prefix not in arrays:
                    arrays.append(prefix)
        except ValueError:
            pass
        for prefix in arrays[:5]:
            try:
                list(toonstream.rows(data, prefix, **opts))
                return prefix
            except ValueError as e:
                if getattr(e, "code", None) != "not_tabular":
                    return prefix
        return arrays[0] if arrays else ""

    return str(_on("python", find))


def _prefix(data: bytes, opts: dict[str, Any]) -> str:
    return _rows_prefix(data, opts.get("strict", True), opts.get("indent_size", 2))


def _json(source: Iterator[bytes], opts: dict[str, Any], *, lines: bool) -> Iterator[bytes]:
    # (the text written before an error is not compared: how much of it reached ``out`` depends on
    # the writers' buffers; the command line never keeps it)
    out = io.BytesIO()
    (toonstream.decode_to_jsonl if lines else toonstream.decode_to_json)(source, out, **opts)
    yield out.getvalue()


#: driver name -> (document, options, chunks) -> an iterator of its outputs
DRIVERS: dict[str, Callable[[bytes, dict[str, Any], Iterator[bytes]], Iterator[Any]]] = {
    "load": lambda data, opts, src: iter([toonstream.load(src, **opts)]),
    "parse": lambda data, opts, src: toonstream.parse(src, **opts),
    "items": lambda data, opts, src: toonstream.items(src, "", **opts),
    "kvitems": lambda data, opts, src: toonstream.kvitems(src, "", **opts),
    "rows": lambda data, opts, src: iter(toonstream.rows(src, _prefix(data, opts), **opts)),
    "decode_to_json": lambda data, opts, src: _json(src, opts, lines=False),
    "decode_to_jsonl": lambda data, opts, src: _json(src, {**opts, "path": _prefix(data, opts) or None}, lines=True),
    # (a path that matches nothing: not_found at the end, on the document's last line)
    "decode_to_json_missing": lambda data, opts, src: _json(src, {**opts, "path": "no.such.path"}, lines=False),
}


def _on(engine: str, run: Callable[[], Any]) -> Any:
    previous = _engine.use(_engine.select(engine))
    try:
        return run()
    finally:
        _engine.use(previous)


def _outcome(driver: str, data: bytes, opts: dict[str, Any], size: int) -> tuple[list[Any], Any]:
    outputs: list[Any] = []
    try:
        for o in DRIVERS[driver](data, opts, split(data, size)):
            outputs.append(o)
    except ValueError as e:  # ToonDecodeError, and the drivers' own usage errors
        return plain(outputs), error_key(e)
    return plain(outputs), None


@functools.lru_cache(maxsize=None)
def _reference(driver: str) -> list[tuple[list[Any], Any]]:
    return _on("python", lambda: [_outcome(driver, data, opts, 0) for data, opts in _documents()])


@pytest.mark.parametrize("size", CHUNKINGS.values(), ids=CHUNKINGS.keys())
@pytest.mark.parametrize("driver", DRIVERS)
def test_every_driver_agrees_with_the_reference(engine: str, driver: str, size: int) -> None:
    expected = _reference(driver)
    docs = _documents()
    assert len(docs) > 1000  # the fixtures and the corpus were found
    wrong = []
    for (data, opts), want in zip(docs, expected):
        got = _outcome(driver, data, opts, size)
        if not (identical(got[0], want[0]) and got[1] == want[1]):
            wrong.append((data[:80], opts, got, want))
    assert not wrong, f"{len(wrong)} of {len(docs)} documents differ; the first: {wrong[0]}"


def test_the_grid_sees_errors_and_values() -> None:
    # not vacuous: the corpus has documents that decode and documents that fail, for every driver
    for driver in DRIVERS:
        outcomes = _reference(driver)
        assert sum(err is None for _, err in outcomes) > (40 if driver != "decode_to_json_missing" else -1), driver
        assert sum(err is not None for _, err in outcomes) > 300, driver


class _Chunked(io.RawIOBase):
    """A binary file whose reads return the chunks of an iterator (for the readers of files)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self.chunks = chunks
        self.rest = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if not self.rest:
            self.rest = next(self.chunks, b"")
        n = min(len(buffer), len(self.rest))
        buffer[:n] = self.rest[:n]
        self.rest = self.rest[n:]
        return n


def _arrow(data: bytes, opts: dict[str, Any], src: Iterator[bytes]) -> Iterator[Any]:
    import toonstream.arrow as ta

    for batch in ta.iter_batches(_Chunked(src), path=_prefix(data, opts) or None, batch_size=100, **opts):
        yield batch.to_pylist()


DRIVERS["iter_batches"] = _arrow


# ------------------------------------------------------------------------ encoding

#: (delimiter, indent_size) pairs the encoders are run with
ENCODE_OPTIONS = [(",", 2), ("\t", 4), ("|", 1)]


@functools.lru_cache(maxsize=1)
def _values() -> tuple[Any, ...]:
    import json

    values: list[Any] = [case["input"] for _, case in load_fixtures("encode")]
    values += [case["expected"] for _, case in load_fixtures("decode") if not case.get("shouldError")]
    values += [json.loads(p.read_text(encoding="utf-8")) for p in sorted(CORPUS.glob("y_*.json"))]
    rng = random.Random(11)
    values.append([{"id": i, "s": rng.choice(["x", "a,b", "", "true", "1e5"]), "f": rng.random()} for i in range(2000)])
    values.append([{"id": i, "tags": list(range(i % 3))} for i in range(500)])
    return tuple(values)


def _jsonl(value: Any, out: io.BytesIO, **opts: Any) -> None:
    import json

    text = "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in value)
    toonstream.encode_jsonl(io.BytesIO(text.encode()), out, **opts)


def _events(value: Any, out: io.BytesIO, **opts: Any) -> None:
    import json

    import ijson

    toonstream.encode_events(ijson.parse(io.BytesIO(json.dumps(value).encode())), out, **opts)


#: encoder name -> (value, out, options): writes the value's TOON text to ``out``; the lists only
#: for the encoders of a stream of records
ENCODERS: dict[str, Callable[..., None]] = {
    "dump": lambda v, out, **o: toonstream.dump(v, out, **o),
    "encode_lines": lambda v, out, **o: out.write("\n".join(toonstream.encode_lines(v, **o)).encode()),
    "encode_records": lambda v, out, **o: toonstream.encode_records(iter(v), out, **o),
    "encode_jsonl": _jsonl,
    "encode_events": _events,
}
STREAMS = {"encode_records", "encode_jsonl"}


def _encoded(run: Callable[[], Any]) -> tuple[bytes | None, Any]:
    try:
        return run(), None
    except (ValueError, TypeError) as e:
        return None, error_key(e)


def _expected(value: Any, encoder: str, delimiter: str, indent_size: int) -> tuple[bytes | None, Any]:
    def run() -> bytes:
        if encoder == "encode_events":  # (ijson reads JSON numbers with a fraction as Decimal)
            import json

            import ijson

            v = next(ijson.items(io.BytesIO(json.dumps(value).encode()), ""))
        else:
            v = value
        return toonstream.dumps(v, delimiter=delimiter, indent_size=indent_size).encode()

    return _on("python", lambda: _encoded(run))


@pytest.mark.parametrize("delimiter,indent_size", ENCODE_OPTIONS, ids=["comma-2", "tab-4", "pipe-1"])
@pytest.mark.parametrize("encoder", ENCODERS)
def test_every_encoder_agrees_with_the_reference_dumps(engine: str, encoder: str, delimiter: str, indent_size: int) -> None:
    values = [v if encoder not in STREAMS or isinstance(v, list) else [v] for v in _values()]
    assert len(values) > 100
    wrong = []
    for value in values:
        want = _expected(value, encoder, delimiter, indent_size)

        def run() -> bytes:
            out = io.BytesIO()
            ENCODERS[encoder](value, out, delimiter=delimiter, indent_size=indent_size)
            return out.getvalue()

        got = _encoded(run)
        if got != want:
            wrong.append((value if len(repr(value)) < 200 else repr(value)[:200], got, want))
    assert not wrong, f"{len(wrong)} of {len(values)} values differ; the first: {wrong[0]}"

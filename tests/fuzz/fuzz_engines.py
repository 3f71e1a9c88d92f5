"""Coverage-guided differential fuzzing: the native engine against the reference.

Run (not part of CI; needs `pip install atheris` and the native engine built):

    python tests/fuzz/fuzz_engines.py -max_total_time=600 /tmp/toon-fuzz-engines tests/fuzz/seeds tests/corpus

For every input (bytes, and a chunk size taken from its first byte), both engines must agree
exactly, type for type, on:
1. ``loads`` (strict and not): the value, or the error's code, message, line, column, line text;
2. ``load`` of the input cut into chunks: the same outcome as ``loads``;
3. ``parse`` triples and ``rows()`` at the automatic prefix: what is yielded before an error, then
   the error;
4. ``decode_to_json``: the bytes, or the error (driver errors' lines aside, see
   tests/test_native_json.py);
5. ``dumps`` of the decoded value: the same text;
6. ``encode_events`` of the input's ``parse`` triples (the native engine builds the elements from
   the events in Rust): the same text or error;
7. ``encode_jsonl`` of the input's bytes as JSON Lines, and of the decoded value's elements
   written one per line as JSON (the native engine writes list items from the bytes,
   ``jsonl_items``): the same text or error (message, line, column);
8. ``read_toon`` (when polars is installed) with tiny reader steps, batches and inference, so that
   most runs are split once the types are known (the native splitter then types them as it
   splits them): the same schema and rows, or the same error.
A difference or a crash is a finding: it becomes a regression test in tests/test_native_*.py.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any, Callable

import atheris

with atheris.instrument_imports():
    import toonstream
    from toonstream import _engine
    from toonstream._errors import ToonDecodeError, ToonEncodeError
    from toonstream.streaming import encode_events, encode_jsonl
    from toonstream.tojson import decode_to_json

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import identical  # noqa: E402

PYTHON = _engine.select("python")
NATIVE = _engine.select("native")
DRIVER_ERRORS = ("not_tabular", "not_array", "ambiguous_path", "not_found", "unexpected_fields")


def outcome(engine: _engine.Engine, fn: Callable[[], Any]) -> tuple[str, Any]:
    previous = _engine.use(engine)
    try:
        return "ok", fn()
    except ToonDecodeError as e:
        line = None if e.code in DRIVER_ERRORS else e.line
        return "error", (e.code, str(e) if line is not None else e.msg, line, e.column, e.line_text)
    except ToonEncodeError as e:
        return "encode_error", (str(e), e.line, e.column, e.path)
    finally:
        _engine.use(previous)


def collect(it: Any) -> list[Any]:
    out: list[Any] = []
    try:
        for x in it:
            out.append(list(x) if isinstance(x, tuple) else x)
    except ToonDecodeError as e:
        out.append(("raised", e.code))
    return out


def same(a: tuple[str, Any], b: tuple[str, Any], what: str, data: bytes) -> None:
    if a[0] != b[0] or (a[0] == "ok" and not identical(a[1], b[1])) or (a[0] != "ok" and a[1] != b[1]):
        raise AssertionError(f"{what} differs on {data!r}:\n python {a!r}\n native {b!r}")


def test_one(data: bytes) -> None:
    if not data:
        return
    size = data[0] % 17 + 1
    doc = data[1:]
    chunks = [doc[i : i + size] for i in range(0, len(doc), size)]
    for strict in (True, False):
        want = outcome(PYTHON, lambda: toonstream.loads(doc, strict=strict))
        same(want, outcome(NATIVE, lambda: toonstream.loads(doc, strict=strict)), "loads", data)
        same(want, outcome(NATIVE, lambda: toonstream.load(iter(chunks), strict=strict)), "load", data)
        same(
            outcome(PYTHON, lambda: collect(toonstream.parse(doc, strict=strict))),
            outcome(NATIVE, lambda: collect(toonstream.parse(iter(chunks), strict=strict))),
            "parse",
            data,
        )
        same(
            outcome(PYTHON, lambda: collect(toonstream.rows(doc, strict=strict, hold_rows=False))),
            outcome(NATIVE, lambda: collect(toonstream.rows(iter(chunks), strict=strict))),
            "rows",
            data,
        )

        def json_of(source: Any) -> bytes:
            out = io.BytesIO()
            decode_to_json(source, out, strict=strict)
            return out.getvalue()

        same(outcome(PYTHON, lambda: json_of(doc)), outcome(NATIVE, lambda: json_of(iter(chunks))), "decode_to_json", data)
        if want[0] == "ok":
            value = want[1]
            same(
                outcome(PYTHON, lambda: toonstream.dumps(value)),
                outcome(NATIVE, lambda: toonstream.dumps(value)),
                "dumps",
                data,
            )
            events = list(toonstream.parse(doc, strict=strict))

            def toon_of_events() -> str:
                out = io.StringIO()
                encode_events(iter(events), out)
                return out.getvalue()

            same(outcome(PYTHON, toon_of_events), outcome(NATIVE, toon_of_events), "encode_events", data)
            if isinstance(value, list):
                elements = "".join(json.dumps(v, default=str) + "\n" for v in value).encode()
                same(outcome(PYTHON, lambda: toon_of_jsonl(elements)), outcome(NATIVE, lambda: toon_of_jsonl(elements)),
                     "encode_jsonl (elements)", data)
    same(outcome(PYTHON, lambda: toon_of_jsonl(doc)), outcome(NATIVE, lambda: toon_of_jsonl(doc)), "encode_jsonl", data)
    if _frames is not None:
        same(frame_of(PYTHON, doc), frame_of(NATIVE, doc), "read_toon", data)


try:
    import toonstream.polars as _tp
    from toonstream import _frames
except ImportError:  # (polars not installed: no frames)
    _frames = None


def frame_of(engine: _engine.Engine, doc: bytes) -> tuple[str, Any]:
    """``read_toon`` of ``doc`` on ``engine``: (schema, rows as lists), or the error."""
    assert _frames is not None
    saved = _frames.CHUNK, _frames.FEED
    _frames.CHUNK, _frames.FEED = 256, 32

    def read() -> Any:
        df = _tp.read_toon(doc, batch_size=8, infer_schema_length=4)
        return [[name, str(dtype)] for name, dtype in df.schema.items()], [list(r) for r in df.rows()]

    try:
        got = outcome(engine, read)
    except Exception as e:  # (not a decode error: the same class and message on both engines)
        got = ("exception", (type(e).__name__, str(e)))
    finally:
        _frames.CHUNK, _frames.FEED = saved
    return got


def toon_of_jsonl(lines: bytes) -> str:
    out = io.StringIO()
    encode_jsonl(io.BytesIO(lines), out)
    return out.getvalue()


def main() -> None:
    atheris.Setup(sys.argv, test_one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()

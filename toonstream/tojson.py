"""TOON to JSON text or JSON Lines, streamed from the event stream.

The writer consumes the ijson-style triples of ``_ParseAdapter`` (numbers
as int/Decimal, so nothing is rounded), keeps only a stack of open
containers, and writes as it goes: memory does not grow with the document.
Formatting matches ``json.dumps(value, indent=N, ensure_ascii=False)`` with
``indent``, and ``separators=(",", ":")`` without.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import IO, Any

from ._errors import ToonDecodeError
from ._scalars import encode_decimal, encode_int
from ._writer import LineSink
from .decoder import DEFAULT_BUF_SIZE, Source, _chunks, _decoder, _ParseAdapter

__all__ = ["decode_to_json", "decode_to_jsonl"]

_dump_str = json.JSONEncoder(ensure_ascii=False).encode


def _scalar(v: Any) -> str:
    t = type(v)
    if t is str:
        return _dump_str(v)
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    if t is int:
        return encode_int(v)
    if t is Decimal:
        return encode_decimal(v)
    return repr(float(v))


class _JsonWriter:
    def __init__(self, sink: LineSink, *, indent: int | None, jsonl: bool, where: Any) -> None:
        self.sink = sink
        self.unit = None if indent is None else " " * indent
        self.kv = ": " if indent is not None else ":"
        self.jsonl = jsonl
        self.where = where
        self.counts: list[int] = []  # children written so far, per open container
        self.after_key = False
        self.started = False

    def push(self, triples: list[tuple[str, str, Any]]) -> list[Any]:
        out: list[str] = []
        app = out.append
        counts = self.counts
        unit = self.unit
        jsonl = self.jsonl
        for _, ev, value in triples:
            if ev == "map_key":
                self._sep(app)
                app(_dump_str(value))
                app(self.kv)
                self.after_key = True
                continue
            if ev == "end_map" or ev == "end_array":
                n = counts.pop()
                if jsonl and not counts:
                    continue
                if n and unit is not None:
                    app("\n" + unit * (len(counts) - (1 if jsonl else 0)))
                app("}" if ev == "end_map" else "]")
                if jsonl and len(counts) == 1:
                    app("\n")
                continue
            if self.after_key:
                self.after_key = False
            else:
                self._sep(app)
            if ev == "start_map" or ev == "start_array":
                if jsonl and not counts and not self.started:
                    if ev != "start_array":
                        raise ToonDecodeError(
                            "JSON Lines output needs a root array", code="not_array", line=self.where(), column=1, line_text=""
                        )
                    self.started = True
                    counts.append(0)
                    continue
                app("{" if ev == "start_map" else "[")
                counts.append(0)
            else:
                if jsonl and not counts:
                    raise ToonDecodeError(
                        "JSON Lines output needs a root array", code="not_array", line=self.where(), column=1, line_text=""
                    )
                app(_scalar(value))
                if jsonl and len(counts) == 1:
                    app("\n")
        if out:
            self.sink.part("".join(out))
        return []

    def _sep(self, app: Any) -> None:
        counts = self.counts
        if not counts:
            return
        level = len(counts)
        if self.jsonl:
            if level == 1:  # a new record: records are separated by the newline already written
                counts[-1] += 1
                return
            level -= 1
        if counts[-1]:
            app(",")
        if self.unit is not None:
            app("\n" + self.unit * level)
        counts[-1] += 1


def _run(source: Source, out: IO[str] | IO[bytes], indent: int | None, jsonl: bool, options: dict[str, Any]) -> None:
    decoder = _decoder(False, options, batches=True, items=True)  # (parse's batched events)
    adapter = _ParseAdapter()
    sink = LineSink(out)
    writer = _JsonWriter(sink, indent=indent, jsonl=jsonl, where=lambda: decoder.line)
    for chunk in _chunks(source, DEFAULT_BUF_SIZE):
        writer.push(adapter.push(decoder.feed(chunk)))
    writer.push(adapter.push(decoder.close()))
    sink.flush()


def decode_to_json(source: Source, out: IO[str] | IO[bytes], *, indent: int | None = None, **options: Any) -> None:
    """Write the JSON text of a TOON document, streaming (bounded memory).

    Numbers are written exactly as decoded (no float rounding).  ``options``
    go to :class:`toonstream.Decoder` (``strict``, ``indent_size``, limits).

    >>> import io
    >>> out = io.StringIO()
    >>> decode_to_json("a[2]: 1,x\\nb:\\n  c: 0.10", out)
    >>> out.getvalue()
    '{"a":[1,"x"],"b":{"c":0.1}}'
    """
    _run(source, out, indent, False, options)


def decode_to_jsonl(source: Source, out: IO[str] | IO[bytes], **options: Any) -> None:
    """Write each element of a TOON root array as one line of JSON (JSON Lines).

    >>> import io
    >>> out = io.StringIO()
    >>> decode_to_jsonl("[2]{id,tag}:\\n  1,a\\n  2,b", out)
    >>> out.getvalue()
    '{"id":1,"tag":"a"}\\n{"id":2,"tag":"b"}\\n'
    """
    _run(source, out, None, True, options)

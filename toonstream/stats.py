"""``toonstream stats``: what each format would cost, measured in one streamed pass.

The input's events are fanned out to six TOON encoders (comma, tab, pipe; each
with and without ``missing_as_null``) and two JSON writers (compact, pretty),
all writing into counters, never into memory: bytes and tokens of every
candidate come from the real conversions.  The streaming encoders keep their
usual bounds (one element in memory, spools on disk).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Iterator

from ._writer import LineSink
from .streaming import Encoder, _jsonl_values
from .tojson import _JsonWriter
from .tokens import TokenCounter

__all__ = ["FormatCost", "Stats", "measure", "value_events"]

_DELIMITERS = {"comma": ",", "tab": "\t", "pipe": "|"}


class _Counter:
    """A text sink that only counts (bytes as UTF-8, tokens)."""

    def __init__(self, exact: bool) -> None:
        self.tokens = TokenCounter(exact=exact)

    def write(self, text: str) -> int:
        self.tokens.feed(text.encode("utf-8"))
        return len(text)


@dataclass
class FormatCost:
    """Size of the input written in one format."""

    format: str
    bytes: int
    tokens: int
    lossless: bool = True


@dataclass
class Stats:
    """What ``measure`` found (``asdict`` gives the ``--json`` form)."""

    elements: int
    tabular_elements: int
    tabular_elements_missing_as_null: int
    formats: list[FormatCost] = field(default_factory=list)
    token_method: str = "estimated"

    @property
    def tabular_share(self) -> float:
        return self.tabular_elements / self.elements if self.elements else 0.0

    @property
    def tabular_share_missing_as_null(self) -> float:
        return self.tabular_elements_missing_as_null / self.elements if self.elements else 0.0

    def cheapest(self, *, allow_lossy: bool = False) -> FormatCost:
        candidates = [f for f in self.formats if f.lossless or allow_lossy]
        return min(candidates, key=lambda f: (f.tokens, f.bytes))

    def recommendation(self) -> str:
        best = self.cheapest()
        line = f"cheapest lossless: {best.format} ({best.tokens:,} tokens)"
        lossy = self.cheapest(allow_lossy=True)
        if not lossy.lossless:
            line += f"; with --missing-as-null: {lossy.format} ({lossy.tokens:,} tokens, missing keys read back as null)"
        return line

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["tabular_share"] = self.tabular_share
        d["tabular_share_missing_as_null"] = self.tabular_share_missing_as_null
        d["recommendation"] = {"lossless": self.cheapest().format, "with_missing_as_null": self.cheapest(allow_lossy=True).format}
        return d


def value_events(value: Any) -> Iterator[tuple[str, Any]]:
    """ijson ``basic_parse``-style events of a Python value, without recursion."""
    todo: list[Any] = [("v", value)]
    while todo:
        kind, x = todo.pop()
        if kind == "e":
            yield x
            continue
        if isinstance(x, dict):
            yield ("start_map", None)
            todo.append(("e", ("end_map", None)))
            for k, v in reversed(list(x.items())):
                todo.append(("v", v))
                todo.append(("e", ("map_key", k)))
        elif isinstance(x, list):
            yield ("start_array", None)
            todo.append(("e", ("end_array", None)))
            todo.extend(("v", v) for v in reversed(x))
        elif x is None:
            yield ("null", None)
        elif isinstance(x, bool):
            yield ("boolean", x)
        elif isinstance(x, str):
            yield ("string", x)
        else:
            yield ("number", x)


def jsonl_events(lines: Iterable[bytes | str]) -> Iterator[tuple[str, Any]]:
    """Events of JSON Lines seen as one root array."""
    yield ("start_array", None)
    for value in _jsonl_values(lines):
        yield from value_events(value)
    yield ("end_array", None)


def measure(events: Iterable[tuple[Any, ...]], *, exact: bool = False, indent_size: int = 2) -> Stats:
    """Feed ijson-style events (pairs or triples) once; return the cost of every format.

    >>> rows = [{"id": i, "city": "Oslo"} for i in range(20)] + [{"id": 20}]
    >>> s = measure(value_events(rows))
    >>> (s.elements, s.tabular_elements, s.tabular_elements_missing_as_null)
    (21, 0, 21)
    >>> s.cheapest().format, s.cheapest(allow_lossy=True).format
    ('json-compact', 'toon --missing-as-null')
    """
    toon: dict[str, tuple[_Counter, Encoder]] = {}
    for name, delim in _DELIMITERS.items():
        for with_nulls in (False, True):
            label = f"toon-{name}" if name != "comma" else "toon"
            label += " --missing-as-null" if with_nulls else ""
            counter = _Counter(exact)
            toon[label] = (counter, Encoder(counter, indent_size=indent_size, delimiter=delim, missing_as_null=with_nulls))  # type: ignore[arg-type]
    json_counters = {"json-compact": _Counter(exact), "json-pretty": _Counter(exact)}
    sinks = {name: LineSink(c) for name, c in json_counters.items()}  # type: ignore[arg-type]
    writers = [
        _JsonWriter(sinks["json-compact"], indent=None, jsonl=False, where=lambda: 0),
        _JsonWriter(sinks["json-pretty"], indent=2, jsonl=False, where=lambda: 0),
    ]
    encoders = [enc for _, enc in toon.values()]
    batch: list[tuple[str, str, Any]] = []
    event: tuple[Any, ...]
    for event in events:
        for enc in encoders:
            enc.send(event)
        ev, value = (event[1], event[2]) if len(event) == 3 else (event[0], event[1])
        batch.append(("", ev, value))
        if len(batch) >= 4096:
            for w in writers:
                w.push(batch)
            batch = []
    for w in writers:
        w.push(batch)
    for sink in sinks.values():
        sink.flush()
    for enc in encoders:
        enc.close()
    plain = toon["toon"][1].coverage()
    lossy = toon["toon --missing-as-null"][1].coverage()
    stats = Stats(elements=plain[0], tabular_elements=plain[1], tabular_elements_missing_as_null=lossy[1])
    for label, (counter, _) in toon.items():
        lossless = "--missing-as-null" not in label
        if not lossless and lossy[1] == plain[1]:
            continue  # the option changes nothing here: same text as the lossless one
        stats.formats.append(FormatCost(label, counter.tokens.bytes, counter.tokens.total, lossless))
    for label, counter in json_counters.items():
        stats.formats.append(FormatCost(label, counter.tokens.bytes, counter.tokens.total))
    stats.token_method = json_counters["json-compact"].tokens.method
    return stats


def format_report(name: str, stats: Stats) -> str:
    """The human-readable ``toonstream stats`` report."""
    out = [
        f"{name}: {stats.elements:,} array elements; tabular: {100 * stats.tabular_share:.1f}%"
        f" (with --missing-as-null: {100 * stats.tabular_share_missing_as_null:.1f}%)",
        f"{'format':<36} {'bytes':>14} {'tokens':>12}",
    ]
    for f in sorted(stats.formats, key=lambda f: (f.tokens, f.bytes)):
        out.append(f"{f.format + ('' if f.lossless else ' (lossy)'):<36} {f.bytes:>14,} {f.tokens:>12,}")
    out.append(f"tokens: {stats.token_method}")
    out.append(stats.recommendation())
    return "\n".join(out)


def report_json(stats: Stats) -> str:
    return json.dumps(stats.to_dict(), indent=2)


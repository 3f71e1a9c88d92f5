"""``toonstream stats``: what each format would cost, measured on the real conversions.

Bytes and tokens of every candidate (TOON comma, tab, pipe, each with and
without ``missing_as_null``; JSON compact and pretty) come from the text the
real conversions write, fed to token counters and never kept in memory.

JSON Lines (``measure_jsonl``) go the way ``encode_jsonl`` goes: the lines
are parsed once per batch (orjson when installed) and the batch is given to
one ``_ArrayPlan`` per delimiter, which formats a table's rows column-wise;
the JSON texts of the batch come from one C-level dump each.  A shape that
is not a table is written from the input read again, as ``encode_jsonl``
does; the ``missing_as_null`` variants are measured (in another pass) only
when the data is not a table already, since otherwise they are the same text.
A non-seekable input is copied to a temporary file first.

Any other event stream (``measure``; a JSON document) is fanned out to six
streaming TOON encoders and two JSON writers.  The encoders keep their usual
bounds (one element in memory, spools on disk).

The estimate's recommendation is not more precise than the estimate: when a
candidate is within ``tokens.ERROR_BOUND`` of the cheapest one, the report
says so (``Stats.close_calls``) and ``--exact`` decides.
"""

from __future__ import annotations

import io
import json
import math
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from typing import IO, Any, Callable, Iterable, Iterator, cast

from ._reference.columns import format_columns
from ._reference.normalize import normalize, plain_keys
from ._errors import ToonEncodeError
from ._reference.writer import Fields, LineSink, header
from .encoder import DEFAULT_MAX_DEPTH, Walk
from .streaming import (
    _JsonLines,
    DEFAULT_SPOOL_MEMORY,
    _ArrayPlan,
    _file_batches,
    _jsonl_batches,
    _jsonl_values,
    _keyed_walk,
    _name_line,
    _orjson,
    _write_planned,
    Encoder,
    _written_float,
)
from .tojson import EventJsonWriter
from .tokens import ERROR_BOUND, TokenCounter

__all__ = ["FormatCost", "Stats", "measure", "measure_jsonl", "value_events"]

_DELIMITERS = {"comma": ",", "tab": "\t", "pipe": "|"}


class _Counter:
    """A text sink that only counts (bytes as UTF-8, tokens)."""

    def __init__(self, exact: bool) -> None:
        self.tokens = TokenCounter(exact=exact)

    def write(self, text: str) -> int:
        self.tokens.feed(text.encode("utf-8", "surrogatepass"))
        return len(text)


class _CountingSink(io.RawIOBase):
    """A binary sink that only counts (what the encoders write, as UTF-8)."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.counter.feed(bytes(data))
        return len(data)


@dataclass
class FormatCost:
    """Size of the input written in one format (one of ``Stats.formats``).

    >>> cost = measure(value_events([{"id": 1}, {"id": 2}])).formats[0]
    >>> cost.format, cost.bytes > 0, cost.lossless
    ('toon', True, True)
    """

    format: str
    bytes: int
    tokens: int
    lossless: bool = True


@dataclass
class Stats:
    """What ``measure`` found (``asdict`` gives the ``--json`` form).

    >>> s = measure(value_events([{"id": 1}, {"id": 2}]))
    >>> s.elements, s.tabular_share, [f.format for f in s.formats][:2]
    (2, 1.0, ['toon', 'toon-tab'])
    """

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

    @property
    def error_bound(self) -> float | None:
        """The relative error of the token counts: ``tokens.ERROR_BOUND`` for
        the estimate, None for exact counts."""
        return None if self.token_method.startswith("o200k_base (exact") else ERROR_BOUND

    def close_calls(self, *, allow_lossy: bool = False) -> list[str]:
        """The other candidates whose tokens are within the estimate's error
        of the cheapest one's (so the estimate cannot tell which is cheaper);
        empty for exact counts."""
        bound = self.error_bound
        if bound is None:
            return []
        best = self.cheapest(allow_lossy=allow_lossy)
        return [
            f.format
            for f in sorted(self.formats, key=lambda f: (f.tokens, f.bytes))
            if f is not best and (f.lossless or allow_lossy) and f.tokens <= best.tokens * (1 + bound)
        ]

    def recommendation(self) -> str:
        best = self.cheapest()
        line = f"cheapest lossless: {best.format} ({best.tokens:,} tokens)"
        lossy = self.cheapest(allow_lossy=True)
        if not lossy.lossless:
            line += f"; with --missing-as-null: {lossy.format} ({lossy.tokens:,} tokens, missing keys read back as null)"
        for allow_lossy, winner in ((False, best), (True, lossy)):
            close = self.close_calls(allow_lossy=allow_lossy)
            if close and (not allow_lossy or not lossy.lossless):
                names = ", ".join([winner.format, *close[:-1]]) + f" and {close[-1]}"
                line += (
                    f"\n{names} are within the estimate's error (\u00b1{100 * (self.error_bound or 0):.0f}%): "
                    "use --exact to decide"
                )
        return line

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["tabular_share"] = self.tabular_share
        d["tabular_share_missing_as_null"] = self.tabular_share_missing_as_null
        d["error_bound"] = self.error_bound
        d["recommendation"] = {
            "lossless": self.cheapest().format,
            "with_missing_as_null": self.cheapest(allow_lossy=True).format,
            # candidates the estimate cannot tell from the recommended one (empty: a clear choice)
            "lossless_within_error": self.close_calls(),
            "with_missing_as_null_within_error": self.close_calls(allow_lossy=True),
        }
        return d


def value_events(value: Any) -> Iterator[tuple[str, Any]]:
    """ijson ``basic_parse``-style events of a Python value as ``dumps`` takes
    it (host types such as tuples, sets and datetimes normalized as it does;
    a NaN or infinity is null, as it writes them), without recursion.

    >>> list(value_events({"a": (1, float("nan"))}))[1:5]
    [('map_key', 'a'), ('start_array', None), ('number', 1), ('null', None)]
    """
    todo: list[Any] = [("v", value)]
    while todo:
        kind, x = todo.pop()
        if kind == "e":
            yield x
            continue
        x = normalize(x, None)  # (one of the NATIVE types, exactly)
        t = type(x)
        if t is dict:
            yield ("start_map", None)
            todo.append(("e", ("end_map", None)))
            for k, v in reversed(list(plain_keys(x).items())):
                todo.append(("v", v))
                todo.append(("e", ("map_key", k)))
        elif t is list:
            yield ("start_array", None)
            todo.append(("e", ("end_array", None)))
            todo.extend(("v", v) for v in reversed(x))
        elif x is None or (t is float and not math.isfinite(x)) or (t is Decimal and not x.is_finite()):
            yield ("null", None)
        elif t is bool:
            yield ("boolean", x)
        elif t is str:
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
            label = _label(name, with_nulls)
            counter = _Counter(exact)
            toon[label] = (counter, Encoder(counter, indent_size=indent_size, delimiter=delim, missing_as_null=with_nulls))  # type: ignore[arg-type]
    json_counters = {"json-compact": _Counter(exact), "json-pretty": _Counter(exact)}
    sinks = {name: LineSink(c) for name, c in json_counters.items()}  # type: ignore[arg-type]
    writers = [
        EventJsonWriter(sinks["json-compact"], indent=None, jsonl=False, where=lambda: 0),
        EventJsonWriter(sinks["json-pretty"], indent=2, jsonl=False, where=lambda: 0),
    ]
    encoders = [enc for _, enc in toon.values()]
    batch: list[tuple[str, str, Any]] = []
    event: tuple[Any, ...]
    # The JSON writers take the events in batches of at most 4096, fewer when
    # deep: pretty JSON indents every line by its depth (text quadratic in it).
    depth = weight = 0
    for event in events:
        for enc in encoders:
            enc.send(event)
        ev, value = (event[1], event[2]) if len(event) == 3 else (event[0], event[1])
        if ev == "start_map" or ev == "start_array":
            depth += 1
            if depth > DEFAULT_MAX_DEPTH:  # (as the encoders would, once the element ends)
                raise ToonEncodeError(f"value nested deeper than max_depth ({DEFAULT_MAX_DEPTH})")
        elif ev == "end_map" or ev == "end_array":
            depth -= 1
        elif ev == "number" and type(value) is Decimal:
            value = _json_number(value)
        batch.append(("", ev, value))
        weight += depth + 1
        if len(batch) >= 4096 or weight >= _BATCH_WEIGHT:
            for w in writers:
                w.push(batch)
            batch, weight = [], 0
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


def _json_number(value: Decimal) -> Any:
    """A JSON document's non-integer number as JSON Lines' records hold it
    (``streaming._written_float``): a float where Python writes
    it back as it was written (``255.0``), else the exact Decimal
    (``0.10000000000000000001``, ``1E2``), so that the JSON formats of the
    same records measure the same from either input (ijson gave every number
    as a Decimal, which the JSON writers write in TOON's canonical form:
    ``255.0`` was ``255``)."""
    f = _written_float(str(value))
    return value if f is None else f


#: events' depths summed: a batch of the JSON writers' events stops there
_BATCH_WEIGHT = 1 << 16

_OPT_INDENT_2 = getattr(_orjson, "OPT_INDENT_2", 0)


def _json_texts(values: list[Any], *, pretty: bool) -> str | bytes:
    """The elements of a root array, as the JSON writers write them there:
    compact and comma-separated, or pretty at depth 1 (``",\n  "`` between,
    ``"\n  "`` first), without the brackets.

    orjson writes the same text as ``json.dumps(..., ensure_ascii=False)``
    except for Decimals and ints past 64 bits (it refuses them) and floats
    under 1e-4 (``0.00001`` for ``1e-05``): a batch with those, or with text
    that merely looks like them, is written by the JSON writer, value by value."""
    if _orjson is not None:
        try:
            text: bytes = _orjson.dumps(values, option=_OPT_INDENT_2 if pretty else 0)
        except TypeError:  # a Decimal, a big int, a lone surrogate
            pass
        else:
            if b"e-" not in text and b"0.0000" not in text:
                return text[1 : -2 if pretty else -1]
    out: list[str] = []
    for value in values:
        buf = io.StringIO()
        sink = LineSink(buf)
        EventJsonWriter(sink, indent=2 if pretty else None, jsonl=False, where=lambda: 0).push(
            [("", ev, x) for ev, x in value_events(value)]
        )
        sink.flush()
        out.append(buf.getvalue().replace("\n", "\n  ") if pretty else buf.getvalue())
    return ("\n  " + ",\n  ".join(out)) if pretty else ",".join(out)


def measure_jsonl(
    source: IO[bytes], *, exact: bool = False, indent_size: int = 2, spool_memory: int = DEFAULT_SPOOL_MEMORY
) -> Stats:
    """The cost of every format of JSON Lines read from a binary file (each
    non-blank line one element of the root array), computed the way
    ``encode_jsonl`` encodes (see the module docstring).  Same numbers as
    ``measure(jsonl_events(lines))``.  A malformed line raises
    ToonEncodeError with its line number.

    >>> import io
    >>> s = measure_jsonl(io.BytesIO(b'{"a": 1}\\n{"a": 2}\\n'))
    >>> {f.format: f.bytes for f in s.formats}["toon"]
    15
    """
    try:
        seekable = bool(source.seekable())
    except (AttributeError, OSError, ValueError):
        seekable = False
    if not seekable:
        with tempfile.TemporaryFile() as copy:
            shutil.copyfileobj(source, copy, 1 << 20)
            copy.seek(0)
            return measure_jsonl(copy, exact=exact, indent_size=indent_size, spool_memory=spool_memory)
    start = source.tell()

    def reread() -> Iterator[list[Any]]:
        source.seek(start)
        return _file_batches(source)

    def again() -> Iterable[Any]:
        return _JsonLines(reread)

    def plans(missing_as_null: bool) -> dict[str, _ArrayPlan]:
        return {
            _label(name, missing_as_null): _ArrayPlan(
                _keyed_walk(
                    None, indent_size=indent_size, delimiter=delim, default=None, max_depth=DEFAULT_MAX_DEPTH,
                    missing_as_null=missing_as_null,
                ),
                spool_memory,
            )
            for name, delim in _DELIMITERS.items()
        }

    # The comma plan decides the shape (the same for every delimiter); while it
    # is a table, the other delimiters' rows are formatted from the same
    # batches (_TableRows).  Otherwise they get plans of their own, in a
    # second pass.
    lossless = plans(False)
    lead = lossless["toon"]
    followers: dict[str, _TableRows] | None = {
        label: _TableRows(plan.walk, exact) for label, plan in lossless.items() if plan is not lead
    }
    compact, pretty = TokenCounter(exact=exact), TokenCounter(exact=exact)
    compact.feed(b"[")
    pretty.feed(b"[")
    n = 0
    try:
        for values, _ in _jsonl_batches(reread()):
            lead.add_batch(values)
            if followers is not None and values:
                columns = _leaf_columns(lead, values)
                if columns is None or not all(f.add(columns) for f in followers.values()):
                    followers = None
            if values:
                for counter, is_pretty in ((compact, False), (pretty, True)):
                    text = _json_texts(values, pretty=is_pretty)
                    if n:
                        counter.feed(b",")
                    counter.feed(text if type(text) is bytes else text.encode("utf-8", "surrogatepass"))  # type: ignore[union-attr]
                n += len(values)
        compact.feed(b"]")
        pretty.feed(b"\n]" if n else b"]")
        lead.flush_rows()  # (the last rows: if one fails, rows_ready turns False)
        table = lead.fields if lead.rows_ready else None
        costs = {"toon": _write_counted(lead, again, exact)}
        plain = lead
        if followers is not None and table is not None:
            for label, rows in followers.items():
                costs[label] = rows.cost(lead.n, table)
        else:
            rest = {label: plan for label, plan in lossless.items() if plan is not lead}
            for values, _ in _jsonl_batches(reread()):
                for plan in rest.values():
                    plan.add_batch(values)
            for label, plan in rest.items():
                costs[label] = _write_counted(plan, again, exact)
        covered = plain.n if plain.tabular else 0
        covered_lossy = covered
        if not plain.tabular and not plain.primitive:
            # missing_as_null can only change a non-table: measure it (another pass)
            lossy = plans(True)
            for values, _ in _jsonl_batches(reread()):
                for plan in lossy.values():
                    plan.add_batch(values)
            if lossy["toon --missing-as-null"].union_fields() is not None:
                covered_lossy = plain.n
                for label, plan in lossy.items():
                    costs[label] = _write_counted(plan, again, exact)
    except ToonEncodeError as err:
        _name_line(err, reread, None)
        raise
    stats = Stats(elements=plain.n, tabular_elements=covered, tabular_elements_missing_as_null=covered_lossy)
    for name in _DELIMITERS:  # (the order measure gives)
        for missing_as_null in (False, True):
            label = _label(name, missing_as_null)
            if label in costs:
                stats.formats.append(FormatCost(label, *costs[label], not missing_as_null))
    stats.formats.append(FormatCost("json-compact", compact.bytes, compact.total))
    stats.formats.append(FormatCost("json-pretty", pretty.bytes, pretty.total))
    stats.token_method = compact.method
    return stats


def _label(name: str, missing_as_null: bool) -> str:
    label = f"toon-{name}" if name != "comma" else "toon"
    return label + (" --missing-as-null" if missing_as_null else "")


class _TableRows:
    """The row lines of a root table in one more delimiter, counted as the
    batches come (the comma plan vouches for the shape); the header, which
    needs the row count, is counted at the end and put in front (``merge``)."""

    def __init__(self, walk: Walk, exact: bool) -> None:
        self.walk = walk
        self.exact = exact
        self.rows = TokenCounter(exact=exact)
        self.first = True

    def add(self, columns: tuple[list[tuple[Any, ...]], list[set[type]]]) -> bool:
        """Count the rows of a batch's leaf columns (and their kinds); False if
        a cell cannot be encoded (the pass-two path then finds and reports the error)."""
        try:
            text = format_columns(columns[0], self.walk.d, self.walk.prim, self.walk.unit, columns[1], lead=not self.first)
            self.rows.feed(text.encode("utf-8"))
        except (ToonEncodeError, UnicodeEncodeError):
            return False
        self.first = False
        return True

    def cost(self, n: int, fields: Fields) -> tuple[int, int]:
        counter = TokenCounter(exact=self.exact)
        counter.feed((header("", n, self.walk.d, fields) + "\n").encode("utf-8"))
        counter.merge(self.rows)
        return counter.bytes, counter.total


def _leaf_columns(plan: _ArrayPlan, values: list[Any]) -> tuple[list[tuple[Any, ...]], list[set[type]]] | None:
    """The leaf columns of a batch of rows of ``plan``'s table (as ``Walk.rows_text``
    takes them) and their kinds, found once for every delimiter, or None when ``plan`` is not
    (or no longer) a table with rows at depth 1."""
    if not (plan.rows_ready and plan.fields):
        return None
    walk = plan.walk
    get = walk._cells(plan.fields)
    norm = walk.norm
    try:
        columns = list(zip(*[get(o if type(o) is dict else norm(o)) for o in values]))
    except ToonEncodeError:
        return None
    return (columns, [set(map(type, col)) for col in columns]) if columns else None


def _write_counted(plan: _ArrayPlan, again: Callable[[], Iterable[Any]], exact: bool) -> tuple[int, int]:
    """Pass two of one TOON variant into a counter: (bytes, tokens)."""
    counter = TokenCounter(exact=exact)
    _write_planned(plan, again, cast(IO[bytes], _CountingSink(counter)), None, plan.walk)
    return counter.bytes, counter.total


def format_report(name: str, stats: Stats) -> str:
    """The human-readable ``toonstream stats`` report."""
    out = [
        f"{name}: {stats.elements:,} array element{'' if stats.elements == 1 else 's'}; tabular: {100 * stats.tabular_share:.1f}%"
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


"""toonstream: a streaming TOON (Token-Oriented Object Notation) codec.

Targets TOON spec 4.0.  ``import toonstream`` imports neither pyarrow nor
polars; the Arrow/Polars adapters load them on first use.  The public names
below are loaded on first use too (PEP 562): ``import toonstream`` itself
costs almost nothing, which keeps the command line's start-up short (its
signal handling is in place before the codec is imported).

>>> import toonstream
>>> toonstream.dumps({"users": [{"id": 1, "name": "Ada"}]})
'users[1]{id,name}:\\n  1,Ada'
>>> toonstream.loads("tags[2]: a,b")
{'tags': ['a', 'b']}
"""

from __future__ import annotations

# Not typing.TYPE_CHECKING: importing typing would cost more than the rest
# of this module.  Type checkers treat any name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._errors import ToonDecodeError, ToonEncodeError, ToonError
    from ._reference.events import (
        Columns,
        EndArray,
        EndObject,
        EndTable,
        Entries,
        Event,
        Field,
        Key,
        Members,
        Rows,
        Scalar,
        StartArray,
        StartObject,
        StartTable,
        Values,
    )
    from ._consumers import AsyncRowReader, RowReader
    from .decoder import (
        Decoder,
        items,
        items_async,
        kvitems,
        kvitems_async,
        load,
        loads,
        items_coro,
        kvitems_coro,
        parse,
        parse_async,
        parse_coro,
        rows,
        rows_async,
        rows_coro,
    )
    from .encoder import dump, dumps, encode_lines
    from .llm import extract
    from .streaming import Encoder, encode_events, encode_jsonl, encode_records
    from .tojson import decode_to_json, decode_to_jsonl

    #: the engine in use, ``"native"`` or ``"python"`` (``engine.reason`` says why)
    engine: _engine.EngineName
    from . import _engine

__version__ = "0.1.0"
SPEC_VERSION = "4.0"

#: public name -> the submodule that defines it
_PUBLIC = {
    **dict.fromkeys(("ToonError", "ToonDecodeError", "ToonEncodeError"), "_errors"),
    **dict.fromkeys(
        (
            "Event", "Field", "StartObject", "EndObject", "Key", "Members", "Columns", "Scalar", "StartArray",
            "EndArray", "Values", "StartTable", "Rows", "Entries", "EndTable",
        ),
        "_reference.events",
    ),
    **dict.fromkeys(
        (
            "Decoder", "loads", "load", "parse", "items", "kvitems", "rows",
            "parse_async", "items_async", "kvitems_async", "rows_async",
            "parse_coro", "items_coro", "kvitems_coro", "rows_coro",
        ),
        "decoder",
    ),
    **dict.fromkeys(("RowReader", "AsyncRowReader"), "_consumers"),
    **dict.fromkeys(("dumps", "dump", "encode_lines"), "encoder"),
    **dict.fromkeys(("Encoder", "encode_events", "encode_jsonl", "encode_records"), "streaming"),
    **dict.fromkeys(("decode_to_json", "decode_to_jsonl"), "tojson"),
    "extract": "llm",
}

#: submodules that ``import toonstream`` used to load eagerly: ``toonstream.decoder``
#: and the like keep working after a bare ``import toonstream``
_SUBMODULES = frozenset(("decoder", "encoder", "streaming", "tojson", "llm"))


def __getattr__(name: str) -> object:
    """Load a public name (or an eagerly-loaded-before submodule) on first use."""
    from importlib import import_module

    if name == "engine":  # not cached: tests switch engines in one process
        from ._engine import current

        return current().name
    module = _PUBLIC.get(name)
    if module is not None:
        value = getattr(import_module(f"{__name__}.{module}"), name)
    elif name in _SUBMODULES:
        value = import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC, "engine"})


__all__ = [
    "ToonError",
    "ToonDecodeError",
    "ToonEncodeError",
    "Decoder",
    "loads",
    "load",
    "dumps",
    "dump",
    "encode_lines",
    "Encoder",
    "encode_events",
    "encode_jsonl",
    "encode_records",
    "decode_to_json",
    "decode_to_jsonl",
    "extract",
    "parse",
    "items",
    "kvitems",
    "rows",
    "RowReader",
    "AsyncRowReader",
    "parse_async",
    "items_async",
    "kvitems_async",
    "rows_async",
    "parse_coro",
    "items_coro",
    "kvitems_coro",
    "rows_coro",
    "Event",
    "Field",
    "StartObject",
    "EndObject",
    "Key",
    "Members",
    "Columns",
    "Scalar",
    "StartArray",
    "EndArray",
    "Values",
    "StartTable",
    "Rows",
    "Entries",
    "EndTable",
    "SPEC_VERSION",
    "__version__",
    "engine",
]

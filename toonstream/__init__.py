"""toonstream: a streaming TOON (Token-Oriented Object Notation) codec.

Targets TOON spec 4.0.  ``import toonstream`` imports neither pyarrow nor
polars; the Arrow/Polars adapters load them on first use.

>>> import toonstream
>>> toonstream.dumps({"users": [{"id": 1, "name": "Ada"}]})
'users[1]{id,name}:\\n  1,Ada'
>>> toonstream.loads("tags[2]: a,b")
{'tags': ['a', 'b']}
"""

from __future__ import annotations

from ._errors import ToonDecodeError, ToonEncodeError, ToonError
from ._events import (
    EndArray,
    EndObject,
    EndTable,
    Entries,
    Event,
    Field,
    Key,
    Columns,
    Members,
    Rows,
    Scalar,
    StartArray,
    StartObject,
    StartTable,
    Values,
)
from .decoder import (
    AsyncRowReader,
    Decoder,
    RowReader,
    items,
    items_async,
    kvitems,
    kvitems_async,
    load,
    loads,
    parse,
    parse_async,
    rows,
    rows_async,
)
from .encoder import dump, dumps, encode_lines
from .llm import extract
from .streaming import Encoder, encode_events, encode_jsonl, encode_records
from .tojson import decode_to_json, decode_to_jsonl

__version__ = "0.1.0"
SPEC_VERSION = "4.0"

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
]

"""Host types to the JSON data model (§3), for the encoders.

Policy (documented in the README):
- dict, list, str, int, float, bool, None: as they are (float NaN/inf -> null
  when written, §3).
- decimal.Decimal: an exact number (never rounded through float).
- Enum members: their ``.value``, normalized.  bool/int/float/str subclasses:
  the plain value.
- datetime.datetime / date / time: ``.isoformat()``.  uuid.UUID: ``str()``.
- tuple, other Sequences (not str/bytes): array.  set/frozenset: array, sorted
  when all members are str or all are numbers (so output is deterministic),
  iteration order otherwise.
- Mapping: object; every key must be a str (else ToonEncodeError: coercing
  would let {1: "a", "1": "b"} collide silently).
- dataclass instances: object of their fields, in definition order.
- anything else: the ``default`` hook if given (like ``json.dumps``),
  otherwise ToonEncodeError.  bytes are not JSON: use ``default``.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import uuid
from collections.abc import Mapping, Sequence, Set
from decimal import Decimal
from typing import Any, Callable

from ._errors import ToonEncodeError

NATIVE = frozenset({str, int, float, bool, type(None), dict, list, Decimal})
PRIMITIVE = frozenset({str, int, float, bool, type(None), Decimal})

# How often ``default`` may hand back another non-JSON value before we give up
# (a hook returning its own input would otherwise loop forever).
_MAX_DEFAULT_CHAIN = 16


def normalize(value: Any, default: Callable[[Any], Any] | None) -> Any:
    """One level of §3 normalization: returns a value whose type is in NATIVE."""
    for _ in range(_MAX_DEFAULT_CHAIN):
        t = type(value)
        if t in NATIVE:
            return value
        converted = _host(value)
        if converted is not _UNKNOWN:
            value = converted
            continue
        if default is None:
            raise ToonEncodeError(f"object of type {t.__name__} is not TOON serializable")
        value = default(value)
    raise ToonEncodeError(f"default() kept returning non-JSON values (last: {type(value).__name__})")


_UNKNOWN = object()


def _host(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, Decimal):
        return Decimal(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, Mapping):
        return dict(value.items())
    if isinstance(value, (Set, frozenset)):
        members = list(value)
        if all(type(m) is str for m in members) or all(
            type(m) in (int, float, Decimal) for m in members
        ):
            members.sort()
        return members
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray, memoryview)):
        return list(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return _UNKNOWN

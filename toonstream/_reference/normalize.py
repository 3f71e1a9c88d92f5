"""Host types to the JSON data model (§3), for the encoders.

Policy (documented in the README):
- dict, list, str, int, float, bool, None: as they are (float NaN/inf -> null
  when written, §3).
- decimal.Decimal: an exact number (never rounded through float).
- str/int/float/Decimal subclasses (StrEnum, IntEnum, ``class C(str, Enum)``
  included): their contents, taken with the base type's C-level copy
  (``str.__str__`` and friends), so overridden ``__str__``/``__repr__``/
  ``__format__``/``__int__``/... never change the text, as in ``json.dumps``.
  Other Enum members: their ``.value``, normalized.
- datetime.datetime / date / time: ``.isoformat()``.  uuid.UUID: its
  standard ``str`` form.
- tuple, other Sequences (not str/bytes): array of what iteration gives
  (``json.dumps`` too iterates list subclasses).  set/frozenset: array,
  sorted when all members are strs or all are numbers (so output is
  deterministic), iteration order otherwise.
- Mapping (dict subclasses included): object of what ``items()`` gives (as
  ``json.dumps`` does for dict subclasses); every key must be a str (else
  ToonEncodeError: coercing would let {1: "a", "1": "b"} collide silently).
- Object keys that are str subclasses are written as their contents; two
  keys of one object with the same contents (possible when a subclass
  overrides ``__eq__``/``__hash__``) are a ToonEncodeError, never a
  repeated key in the output.
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

from .._errors import ToonEncodeError

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
    # Subclasses of the JSON scalars first, mixed-in enums included: their
    # contents, by the base type's own C-level copy (overrides of __str__,
    # __repr__, __format__, __int__, __float__... are not consulted).  By
    # type(): the copies need the real class, which isinstance() does not
    # tell (a proxy reports the wrapped object's through ``__class__``).
    t = type(value)
    if issubclass(t, str):
        return str.__str__(value)
    if issubclass(t, int):  # (bool cannot be subclassed: type(True) is in NATIVE)
        return int.__int__(value)
    if issubclass(t, float):
        return float.__float__(value)
    if issubclass(t, Decimal):
        return Decimal(value)  # an exact copy of the digits, not through str()
    if isinstance(value, enum.Enum):
        return value.value
    for base in _PROXIED:
        if isinstance(value, base):
            # Only claims the class (a proxy's ``__class__``): converted by
            # the class, which asks the object (its __str__, __int__...).
            return base(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return uuid.UUID.__str__(value)
    if isinstance(value, Mapping):
        return _mapping(value)
    if isinstance(value, (Set, frozenset)):
        members = list(value)
        kinds = set(map(type, members))
        try:
            # Sorted by contents (a subclass may override __lt__).
            if all(issubclass(k, str) for k in kinds):
                members.sort(key=str.__str__)
            elif all(issubclass(k, _NUMBERS) and k is not bool for k in kinds):
                members.sort(key=_number)
        except ArithmeticError:  # a Decimal NaN does not order: iteration order
            pass
        return members
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray, memoryview)):
        return list(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return _UNKNOWN


_NUMBERS = (int, float, Decimal)
_PROXIED = (bool, int, float, str, Decimal)


def _number(m: Any) -> Any:
    return m if type(m) in NATIVE else _host(m)


def _mapping(value: Any) -> dict[Any, Any]:
    """A Mapping's ``items()`` as a dict with exact str keys (see ``plain_keys``)."""
    out: dict[Any, Any] = {}
    for pair in value.items():
        try:
            k, v = pair
        except (TypeError, ValueError):
            raise ToonEncodeError(
                f"{type(value).__name__}.items() gave {type(pair).__name__}, not a (key, value) pair"
            ) from None
        put_key(out, k, v, other_keys=True)
    return out


def exact_keys(obj: dict[Any, Any]) -> bool:
    """Whether every key of ``obj`` is an exact str (what tables and the
    fast paths, which match keys by dict lookup, require)."""
    return set(map(type, obj)) <= _STR


_STR = frozenset({str})


def plain_keys(obj: dict[Any, Any]) -> dict[Any, Any]:
    """``obj`` itself if its keys are exact strs, else a copy whose str
    subclass keys are their contents.  ToonEncodeError for a key that is not
    a str (``key_error``), and when two keys have the same
    contents: a str subclass can override ``__eq__``/``__hash__`` and so be
    a second key next to an equal str, and writing both would repeat a key."""
    if exact_keys(obj):
        return obj
    out: dict[Any, Any] = {}
    for k, v in obj.items():
        put_key(out, k, v)
    return out


def put_key(out: dict[Any, Any], k: Any, v: Any, *, other_keys: bool = False) -> None:
    """``out[k] = v`` with a str subclass key as its contents; ToonEncodeError
    if ``out`` holds that key already, or if ``k`` is not a str (unless
    ``other_keys``: a hashable one is kept, for the writer to report where
    the object is written)."""
    if type(k) is not str:
        keep = other_keys and not issubclass(type(k), str) and getattr(type(k), "__hash__", None) is not None
        if not keep:
            k = key_contents(k)  # (a ToonEncodeError for other keys)
    if k in out:
        raise ToonEncodeError(f"two keys with the same text {k!r} in one object")
    out[k] = v


def key_contents(k: Any) -> str:
    """The text of an object key: a str subclass's contents (``str.__str__``
    copies them; ``str()`` would call an override); ToonEncodeError for a key
    that is not a str."""
    if type(k) is str:
        return k
    if issubclass(type(k), str):
        return str.__str__(k)
    if isinstance(k, str):  # only claims to be one (a proxy): its str(), a real str
        return key_contents(str(k))
    raise key_error(k)


def key_error(k: Any) -> ToonEncodeError:
    """The error for an object key that is not a str (no coercion: ``1`` and
    ``"1"`` would collide)."""
    return ToonEncodeError(f"object keys must be strings, got {type(k).__name__} {k!r}")

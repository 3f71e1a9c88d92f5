"""The decoder's event vocabulary: small immutable values, one class per kind.

Events are line-sized, not cell-sized: a tabular row is one element of a
``Rows`` batch (a tuple of its leaf values), an inline primitive array is one
``Values`` event.  Consumers that want per-value events (the ijson adapter)
expand them; consumers that build values or rows never pay for that.

Order of events for a value:
- primitive: ``Scalar``
- object: ``StartObject``, then for each field ``Key`` + the field's value, ``EndObject``
- array: ``StartArray``, its elements (``Values`` batches for inline primitives,
  or full values), ``EndArray``
- tabular array / keyed tabular object: ``StartTable``, ``Rows`` or ``Entries``
  batches, ``EndTable``
- with ``Decoder(batches=True)`` only: a run of plain ``key: value`` members of
  an object may come as one ``Members`` event instead of ``Key`` + ``Scalar``
  pairs, and a block of rows as one ``Columns`` event instead of ``Rows``
  (value builders opt in; the ijson-style adapters do not)
- for the drivers that set ``Machine.items`` (``loads``, ``items``/``kvitems``,
  ``parse``, the JSON writer) only: a run of primitive list items as one
  ``Values`` event
"""

from __future__ import annotations

from typing import Any, NamedTuple, Union

# A header's field list: each entry is (name, nested field list or None).
Fields = tuple["Field", ...]


class Field(NamedTuple):
    """One entry of a tabular header's field list (§6, §9.3)."""

    name: str
    children: Fields | None = None


class StartObject(NamedTuple):
    """An object begins (a ``key:`` line, a list-item object, or the root)."""


class EndObject(NamedTuple):
    """The innermost open object ends."""


class Key(NamedTuple):
    """The next value belongs to this key of the innermost object."""

    key: str


class Scalar(NamedTuple):
    """A primitive value: str, int, float (or what ``parse_float`` gives), bool, None."""

    value: Any


class StartArray(NamedTuple):
    """An array begins; ``length`` is the declared N (0 for ``[]``)."""

    length: int


class EndArray(NamedTuple):
    """The innermost open array ends."""


class Values(NamedTuple):
    """Primitive elements of the innermost array (an inline array's values)."""

    values: list[Any]


class StartTable(NamedTuple):
    """A tabular array (``keyed=False``) or keyed tabular object (``keyed=True``).

    ``fields`` is the header's field tree; ``width`` its number of leaf fields;
    ``line`` and ``line_text`` locate the header (for errors raised by
    consumers, such as a schema-drift check).
    """

    fields: Fields
    length: int
    keyed: bool
    delimiter: str
    width: int
    line: int = 0
    line_text: str = ""


class Rows(NamedTuple):
    """Rows of the innermost tabular array: one tuple of leaf values per row."""

    rows: list[tuple[Any, ...]]


class Entries(NamedTuple):
    """Entry rows of the innermost keyed table: ``(entry_key, leaf_values)`` pairs."""

    entries: list[tuple[str, tuple[Any, ...]]]


class Members(NamedTuple):
    """Several members of the innermost object at once: ``(key, primitive)``
    pairs, in order.  Only made by a Decoder built with ``batches=True`` (for
    consumers that build values: a run of plain ``key: value`` lines is one
    event instead of a Key and a Scalar per line)."""

    pairs: list[tuple[str, Any]]


class Columns(NamedTuple):
    """Rows of the innermost tabular array, column by column: one sequence of
    leaf values per leaf field, all of one length.  Only made by a Decoder
    built with ``batches=True`` (value builders then make each row's object
    straight from the columns, without a tuple per row)."""

    columns: list[Any]


class EndTable(NamedTuple):
    """The innermost table ends."""

    keyed: bool


Event = Union[
    StartObject, EndObject, Key, Scalar, StartArray, EndArray, Values, StartTable, Rows, Entries, EndTable, Members, Columns
]

START_OBJECT = StartObject()
END_OBJECT = EndObject()
END_ARRAY = EndArray()
END_TABLE = EndTable(False)
END_KEYED = EndTable(True)

__all__ = [
    "Event",
    "Field",
    "Fields",
    "StartObject",
    "EndObject",
    "Key",
    "Scalar",
    "StartArray",
    "EndArray",
    "Values",
    "StartTable",
    "Rows",
    "Entries",
    "EndTable",
    "Members",
    "Columns",
]

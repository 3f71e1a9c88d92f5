"""The engine seam: which engine runs the hot paths, and what an engine provides.

Two engines implement TOON behind this one module:

* ``python``, the reference: the package's own modules (``Decoder``, the
  builders, the encoders).  It is complete: every API works on it alone.
* ``native``, the Rust engine (``toonstream._native``, built from ``native/``
  when a Rust toolchain is present at install time).  It provides whole hot
  paths, each a *capability* below, and agrees with the reference exactly:
  values, bytes, and errors with their code, line, column and line text.

A driver asks :func:`current` for a capability.  Where the engine lacks it
(the field is ``None``), or the call uses an option the capability does not
take (``parse_int``, say), the driver runs the reference path instead: capabilities
are filled in from the reference, as ijson fills a backend's missing
functions from its Python one.  Nothing above this module imports
``toonstream._native`` directly.

Selection: the environment variable ``TOONSTREAM_ENGINE`` (``python`` or
``native``), read once, on first use; unset or empty, the fastest engine that
can be imported.  Asking for ``native`` where it cannot be imported is an
``ImportError`` saying why, not a silent fallback.  ``toonstream.engine``
names the engine in use; its ``reason`` says why that one was chosen.

>>> current().name in ("python", "native")
True
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Protocol

#: the environment variable that picks the engine
ENGINE_VARIABLE = "TOONSTREAM_ENGINE"
#: the version of the interface below that ``toonstream._native`` must implement
#: (a stale build of the extension is refused, not half used)
API_VERSION = 6
#: the decoder options of ``loads``/``load`` that native value building takes
VALUE_OPTIONS = frozenset(
    ("indent_size", "strict", "parse_float", "parse_int")
    + ("max_depth", "max_line_length", "max_number_length", "max_fields")
)
#: the hooks of ``loads``/``load`` that native value building takes too, as
#: :meth:`Engine.values` says when
HOOK_OPTIONS = frozenset(("object_hook", "object_pairs_hook"))


class Unsupported(ValueError):
    """Raised by a capability for an input it cannot take at all, before any effect: the driver
    then runs the reference path (the native engine's ``Unsupported`` derives from it)."""


class ValueDecoder(Protocol):
    """A push decoder that builds one value: feed chunks, then close for the value."""

    def feed(self, chunk: bytes | bytearray | memoryview | str) -> None: ...

    def close(self) -> Any: ...


class RowDecoder(Protocol):
    """A push decoder of the rows at one prefix: each call returns the rows it completed; rows
    decoded before an error come first, the error is raised by the next call."""

    def feed(self, chunk: bytes | bytearray | memoryview | str) -> list[Any]: ...

    def close(self) -> list[Any]: ...


class OutputDecoder(Protocol):
    """A push decoder of ijson outputs (``parse`` triples, ``items`` values, ``kvitems`` pairs):
    each call returns what it completed; outputs before an error come first, the error is raised
    by the next call."""

    def feed(self, chunk: bytes | bytearray | memoryview | str) -> list[Any]: ...

    def close(self) -> list[Any]: ...


class JsonWriter(Protocol):
    """A push decoder of TOON into JSON text: each call returns UTF-8 bytes of the input so far, in
    order; ``close`` ends the input and returns the rest a piece a call, ``b""`` once done."""

    def feed(self, chunk: bytes | bytearray | memoryview | str) -> bytes: ...

    def close(self) -> bytes: ...


class JsonlTable(Protocol):
    """A push encoder of JSON Lines bytes into the row lines of one flat TOON table: ``feed``
    returns the rows of the lines a chunk completes (UTF-8, each ``"\\n" + indent + cells``),
    ``close`` the last rows, the fields and the row count; both return None once the input is not
    such a table (the driver then runs the reference over the whole input)."""

    def feed(self, chunk: bytes) -> bytes | None: ...

    def close(self) -> tuple[bytes, list[str], int] | None: ...

    @property
    def declined(self) -> bool: ...

    @property
    def reason(self) -> str | None:
        """Why it declined: ``"syntax"`` or ``"utf8"`` (likely not JSON Lines), else a shape or
        value left to the reference; None while it has not."""


class EngineName(str):
    """The name of an engine (``"python"`` or ``"native"``), with why it was chosen.

    >>> name = EngineName("python", "TOONSTREAM_ENGINE=python")
    >>> name == "python", name.reason
    (True, 'TOONSTREAM_ENGINE=python')
    """

    reason: str

    def __new__(cls, name: str, reason: str) -> EngineName:
        self = super().__new__(cls, name)
        self.reason = reason
        return self


class Engine:
    """One engine: its name and the capabilities it provides (``None``: use the reference).

    Capabilities take the public options by keyword and raise
    :class:`~toonstream.ToonDecodeError` exactly as the reference does.

    >>> Engine(EngineName("python", "example")).loads is None
    True
    """

    __slots__ = ("name", "loads", "value_decoder", "dumps", "row_decoder", "parse_decoder", "items_decoder",
                 "json_writer", "jsonl_table", "jsonl_count", "table_rows", "list_items", "jsonl_items",
                 "table_columns", "key_set", "arrow_rows",
                 "fill_elements", "value_hooks")

    def __init__(
        self,
        name: EngineName,
        *,
        loads: Callable[..., Any] | None = None,
        value_decoder: Callable[..., ValueDecoder] | None = None,
        dumps: Callable[..., Any] | None = None,
        row_decoder: Callable[..., RowDecoder] | None = None,
        parse_decoder: Callable[..., OutputDecoder] | None = None,
        items_decoder: Callable[..., OutputDecoder] | None = None,
        json_writer: Callable[..., JsonWriter] | None = None,
        jsonl_table: Callable[..., JsonlTable] | None = None,
        jsonl_count: Callable[..., tuple[int, int] | None] | None = None,
        table_rows: Callable[..., Any] | None = None,
        list_items: Callable[..., Any] | None = None,
        jsonl_items: Callable[..., Any] | None = None,
        table_columns: Callable[[bytes, int, int, int, str, int, int], Any] | None = None,
        key_set: Callable[[], Any] | None = None,
        arrow_rows: Callable[..., Any] | None = None,
        fill_elements: Callable[[Any, list[Any], list[Any], bool, int], tuple[int, list[Any], Any, int]] | None = None,
        value_hooks: bool = False,
    ) -> None:
        self.name = name
        #: ``loads(data, **options)``: a whole document (str or UTF-8 bytes-like) to its value;
        #: takes the options in :data:`VALUE_OPTIONS`
        self.loads = loads
        #: ``value_decoder(**options)``: a push decoder building one value (``load`` of a file)
        self.value_decoder = value_decoder
        #: ``dumps(obj, *, indent_size, delimiter, max_depth, missing_as_null)`` (never with a
        #: ``default`` hook): the TOON text of ``obj``, or ``NotImplemented`` (at once, no side
        #: effects) for anything it does not take (host types, subclasses, cycles...): the reference
        #: then encodes the whole document, so errors and host-type mappings stay the reference's
        self.dumps = dumps
        #: ``row_decoder(prefix, *, header, as_dict, key_field, **options)`` (options as for
        #: ``loads``): the push decoder of ``rows()``; ``header(start_table)`` is called at each
        #: matching header and returns the column order (a list of leaf indexes) or None
        self.row_decoder = row_decoder
        #: ``parse_decoder(**options)`` (options as for ``loads``): the push decoder of ``parse()``
        self.parse_decoder = parse_decoder
        #: ``items_decoder(prefix, *, kv, **options)``: the push decoder of ``items()`` (``kv=False``)
        #: and ``kvitems()`` (``kv=True``)
        self.items_decoder = items_decoder
        #: ``json_writer(*, path, jsonl, indent, **options)`` (options as for ``loads``, without
        #: ``parse_float``): the push decoder of ``decode_to_json``/``decode_to_jsonl``, TOON bytes
        #: to JSON bytes
        self.json_writer = json_writer
        #: ``jsonl_table(*, delimiter, indent_size, threads)``: the push encoder behind
        #: ``encode_jsonl`` for a file of flat records with one set of keys (see :class:`JsonlTable`)
        self.jsonl_table = jsonl_table
        #: ``jsonl_count(block, *, threads=2, start=0, end=None)``: ``(values, lines)`` of a block
        #: of complete JSON Lines (bytes; ``block[start:end]``, read in place): the number of JSON
        #: values (one per line that is not blank), each checked, and of line feeds; or None where
        #: the reference must parse the block (anything it reads with more care, or rejects).  A
        #: big block is counted on ``threads`` threads.
        self.jsonl_count = jsonl_count
        #: ``table_rows(records, names, *, indent_size, delimiter, max_depth)``: the row lines of a
        #: list of records of a flat table (``"\\n" + indent + cells`` each, as ``dumps`` writes
        #: them) or ``NotImplemented`` (nothing done) unless every record is an exact dict with
        #: exactly the fields ``names`` (a tuple of str) and values ``dumps`` takes
        self.table_rows = table_rows
        #: ``list_items(elements, *, indent_size, delimiter, max_depth, missing_as_null)``: the
        #: elements of a list written as the list items (§9.4) of a root array, as ``dumps``
        #: writes them after the array's header (LF between lines, none before or after), or
        #: ``NotImplemented`` (nothing done) for anything ``dumps`` would not take
        self.list_items = list_items
        #: ``jsonl_items(block, *, threads=2, start=0, end=None, indent_size, delimiter, max_depth,
        #: missing_as_null)``: the JSON values of a block of complete JSON Lines (bytes;
        #: ``block[start:end]``, read in place; one per line that is not blank) written as
        #: ``list_items`` writes the values the reference parses from them: ``(text, values,
        #: lines)`` (the text as UTF-8 bytes; the counts of values and of line feeds), or
        #: ``NotImplemented`` (nothing done) for a block the reference must parse (anything it
        #: reads with more care, or rejects) or values ``list_items`` would decline.  A big block
        #: is written on ``threads`` threads (the same text).
        self.jsonl_items = jsonl_items
        #: ``table_columns(data, start, end, plen, delim, width, cap)``: a run of a table's row
        #: lines (the first ``cap`` complete lines of ``data[start:end]``, row indentation
        #: ``plen``) split into typed columns for the frame readers
        #: (``toonstream._frames``, which documents the object it returns), or the verdict
        #: ``(name, quoted)`` on a run that is not all plain rows, as the reference gives it.
        #: Keyword ``plan`` (the native engine's; see ``_frames.FrameReader._plan``): the
        #: column types are known, each column is typed as it is split.
        self.table_columns = table_columns
        #: ``key_set()``: an empty set of a keyed table's entry keys for the frame readers'
        #: decoder (``_reference.machine.KeySet``), whose ``take((run, lo, hi))`` adds the keys
        #: of rows ``lo..hi`` of a keyed run of ``table_columns`` (``keyed=True``) without
        #: making them ``str``; None: a ``set``, given the keys as a list.
        self.key_set = key_set
        #: ``arrow_rows(batch, *, delimiter, indent_size)``: the row lines of a pyarrow
        #: ``RecordBatch`` of a flat table (read through its ``__arrow_c_array__``; ``"\\n" +
        #: indent + cells`` each, UTF-8 bytes, as ``encode_arrow``'s reference formats them), or
        #: ``NotImplemented`` (nothing done) for a batch with a column type or value it does not
        #: write: ``toonstream._arrow_encode`` then formats that batch itself
        self.arrow_rows = arrow_rows
        #: ``fill_elements(events, stack, keys, in_array, limit)``: the rest of the ijson element
        #: being built by an ``Encoder`` (its ``_stack``/``_keys``, changed in place) and, inside
        #: a streamed array, the next elements, taken from the iterator ``events`` as ``send``
        #: would take them; returns ``(status, elements, event, deepest)``: 0 once ``limit``
        #: elements (or one outside an array) are complete, 1 with an ``event`` it leaves to
        #: ``send`` (the array's end, anything not a plain pair or triple of str names), 2 at
        #: the end of the events (see ``native/py/src/fill.rs``)
        self.fill_elements = fill_elements
        #: whether ``loads`` and ``value_decoder`` also take ``object_hook``/``object_pairs_hook``
        #: (where :meth:`values` allows), calling them as the reference does: every object, inner
        #: ones first, in document order, once the document has decoded
        self.value_hooks = value_hooks

    def values(self, options: dict[str, Any]) -> bool:
        """Whether value building with these options can run on this engine.

        An option outside :data:`VALUE_OPTIONS` counts only when it is set
        (not ``None``): hooks left at their default do not send a call back
        to the reference.  The object hooks (:data:`HOOK_OPTIONS`) are taken
        by an engine with ``value_hooks``, without ``parse_float`` or
        ``parse_int`` (the native pass that calls them enters every dict and
        list of the value, which must all be the decoder's) and in strict mode only (where an
        object's pairs are its dict's items: no key repeats, so no earlier
        value is lost).
        """
        if self.loads is None:
            return False
        hooks = self.value_hooks
        if not all(v is None or k in VALUE_OPTIONS or (hooks and k in HOOK_OPTIONS) for k, v in options.items()):
            return False
        if options.get("object_hook") is None and options.get("object_pairs_hook") is None:
            return True
        if options.get("parse_float") is not None or options.get("parse_int") is not None:
            return False
        return bool(options.get("strict", True))


def _reference(reason: str) -> Engine:
    return Engine(EngineName("python", reason))


def _native(reason: str) -> Engine:
    """The native engine, or ImportError saying why it cannot be used."""
    from importlib import import_module

    try:
        native: Any = import_module(f"{__package__}._native")
    except ModuleNotFoundError as e:
        if e.name != f"{__package__}._native":
            raise
        # setuptools-rust builds it as an optional extension: no Rust toolchain, no module
        raise ImportError("toonstream._native is not built (installing needs a Rust toolchain)") from e

    version = getattr(native, "API_VERSION", None)
    if version != API_VERSION:
        raise ImportError(
            f"toonstream._native implements engine API {version}, this package needs {API_VERSION}: "
            "rebuild it (pip install -e .)"
        )
    return Engine(
        EngineName("native", reason),
        loads=native.loads,
        value_decoder=native.ValueDecoder,
        dumps=getattr(native, "dumps", None),
        row_decoder=getattr(native, "RowDecoder", None),
        parse_decoder=getattr(native, "ParseDecoder", None),
        items_decoder=getattr(native, "ItemsDecoder", None),
        json_writer=getattr(native, "JsonWriter", None),
        jsonl_table=getattr(native, "JsonlTable", None),
        jsonl_count=getattr(native, "jsonl_count", None),
        table_rows=getattr(native, "table_rows", None),
        list_items=getattr(native, "list_items", None),
        jsonl_items=getattr(native, "jsonl_items", None),
        table_columns=getattr(native, "table_columns", None),
        key_set=getattr(native, "KeySet", None),
        arrow_rows=getattr(native, "arrow_rows", None),
        fill_elements=getattr(native, "fill_elements", None),
        value_hooks=True,
    )


def select(choice: str | None = None) -> Engine:
    """Choose the engine: ``"python"``, ``"native"``, or ``None`` / ``""`` for the fastest available.

    Reads nothing from the environment (see :func:`current`).  Raises
    ImportError when ``"native"`` is asked for and cannot be imported, and
    ValueError on any other name.
    """
    if choice == "python":
        return _reference(f"{ENGINE_VARIABLE}=python")
    if choice == "native":
        try:
            return _native(f"{ENGINE_VARIABLE}=native")
        except ImportError as e:
            raise ImportError(f"{ENGINE_VARIABLE}=native, but the native engine cannot be used: {e}") from e
    if choice:
        raise ValueError(f"{ENGINE_VARIABLE} must be 'python' or 'native', not {choice!r}")
    try:
        return _native("the fastest engine available")
    except ImportError as e:
        return _reference(f"the native engine is not available ({e})")


_current: Engine | None = None


def current() -> Engine:
    """The engine in use: chosen from ``TOONSTREAM_ENGINE`` on first call, then fixed."""
    global _current
    if _current is None:
        _current = select(os.environ.get(ENGINE_VARIABLE, "").strip().lower() or None)
    return _current


def use(engine: Engine) -> Engine:
    """Make ``engine`` the one in use (tests run every driver on each); returns the previous one."""
    global _current
    previous = current()
    _current = engine
    return previous

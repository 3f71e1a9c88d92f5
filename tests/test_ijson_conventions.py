"""ijson's conventions, checked against ijson itself on the same data as
JSON: ``map_type``, the push coroutines (``*_coro(target, ...)`` with
``send(chunk)``/``close()``), and the dispatch of an async file to the async
variants."""

from __future__ import annotations

import asyncio
import io
import json
from collections import OrderedDict
from typing import Any

import ijson
import pytest

import toonstream
from toonstream import ToonDecodeError

DOCS: list[Any] = [
    {"users": [{"id": i, "geo": {"lat": i, "lon": -i}, "name": f"u{i}", "tags": ["a", "b"]} for i in range(300)]},
    {"cfg": {"a": 1, "b": {"c": {"d": [1, {"e": 2}]}}, "f": {}}, "list": [{"x": i, "y": {"z": i}} for i in range(200)]},
    [{"a": [{"b": i}], "c": {}} for i in range(50)],
    {"m": [[{"q": 1}], [], {"r": [{"s": None}]}]},
]
# (document index, prefix) pairs for items, and for kvitems (prefixes of objects)
ITEMS = [(0, "users.item"), (0, "users.item.geo"), (1, "cfg"), (1, "cfg.b"), (1, "list.item"), (2, "item"),
         (2, "item.a.item"), (3, "m.item"), (3, "m.item.item"), (0, "")]
KVITEMS = [(0, "users.item"), (1, "cfg"), (1, "list.item.y"), (2, "item"), (3, "m.item"), (1, "")]


def forms(i: int) -> tuple[bytes, bytes]:
    return toonstream.dumps(DOCS[i]).encode(), json.dumps(DOCS[i]).encode()


class Recorded(dict):  # type: ignore[type-arg]
    """A map_type that logs how it is built (construction, then item assignment)."""

    log: list[Any] = []

    def __init__(self) -> None:
        super().__init__()
        Recorded.log.append(("new",))

    def __setitem__(self, key: str, value: Any) -> None:
        Recorded.log.append(("set", key, type(value).__name__))
        super().__setitem__(key, value)


def types_of(v: Any) -> Any:
    """The value's shape with its container types."""
    if isinstance(v, dict):
        return (type(v).__name__, [(k, types_of(x)) for k, x in v.items()])
    if isinstance(v, list):
        return ("list", [types_of(x) for x in v])
    return v


def recorded(fn: Any) -> tuple[Any, list[Any]]:
    Recorded.log = []
    result = fn()
    return result, Recorded.log


@pytest.mark.parametrize(("doc", "prefix"), ITEMS)
@pytest.mark.parametrize("map_type", [None, OrderedDict, Recorded])
def test_items_map_type_as_ijson(doc: int, prefix: str, map_type: Any) -> None:
    toon, as_json = forms(doc)
    ours, our_log = recorded(lambda: list(toonstream.items(toon, prefix, map_type=map_type)))
    theirs, their_log = recorded(lambda: list(ijson.items(as_json, prefix, map_type=map_type)))
    assert types_of(ours) == types_of(theirs)
    assert our_log == their_log  # the same calls in the same order
    assert ours


@pytest.mark.parametrize(("doc", "prefix"), KVITEMS)
@pytest.mark.parametrize("map_type", [None, OrderedDict, Recorded])
def test_kvitems_map_type_as_ijson(doc: int, prefix: str, map_type: Any) -> None:
    toon, as_json = forms(doc)
    ours, our_log = recorded(lambda: list(toonstream.kvitems(toon, prefix, map_type=map_type)))
    theirs, their_log = recorded(lambda: list(ijson.kvitems(as_json, prefix, map_type=map_type)))
    assert [(k, types_of(v)) for k, v in ours] == [(k, types_of(v)) for k, v in theirs]
    assert our_log == their_log
    assert ours


def chunked(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def run_coro(coro: Any, chunks: list[bytes], sink: list[Any]) -> list[list[Any]]:
    """Send the chunks; what the sink holds after each send, then after close."""
    seen = []
    for c in chunks:
        coro.send(c)
        seen.append(list(sink))
    coro.close()
    seen.append(list(sink))
    return seen


@pytest.mark.parametrize("size", [1, 7, 4096, 1 << 20])
@pytest.mark.parametrize(("doc", "prefix"), ITEMS[:6])
def test_items_coro_as_ijson(doc: int, prefix: str, size: int) -> None:
    toon, as_json = forms(doc)
    ours: Any = ijson.sendable_list()
    seen = run_coro(toonstream.items_coro(ours, prefix, map_type=OrderedDict), chunked(toon, size), ours)
    theirs: Any = ijson.sendable_list()
    run_coro(ijson.items_coro(theirs, prefix, map_type=OrderedDict), chunked(as_json, size), theirs)
    assert types_of(list(ours)) == types_of(list(theirs))
    assert all(a == b[: len(a)] for a, b in zip(seen, seen[1:]))  # values only ever added, in order


def test_coroutine_values_arrive_as_the_input_comes() -> None:
    """Bounded lag: values come while the input is still being sent (a feed
    may hold back up to 256 lines / 16 KiB for the batched paths)."""
    toon = toonstream.dumps({"list": [{"x": i, "y": {"z": i}} for i in range(20_000)]}).encode()
    sink: Any = ijson.sendable_list()
    seen = run_coro(toonstream.items_coro(sink, "list.item"), chunked(toon, 4096), sink)
    half = len(seen) // 2
    assert 0.3 * 20_000 < len(seen[half]) < 0.7 * 20_000
    assert len(seen[-1]) == 20_000


@pytest.mark.parametrize(("doc", "prefix"), KVITEMS[:4])
def test_kvitems_coro_as_ijson(doc: int, prefix: str) -> None:
    toon, as_json = forms(doc)
    ours: Any = ijson.sendable_list()
    run_coro(toonstream.kvitems_coro(ours, prefix), chunked(toon, 13), ours)
    theirs: Any = ijson.sendable_list()
    run_coro(ijson.kvitems_coro(theirs, prefix), chunked(as_json, 13), theirs)
    assert list(ours) == list(theirs)


@pytest.mark.parametrize("doc", range(len(DOCS)))
def test_parse_coro_as_ijson(doc: int) -> None:
    toon, as_json = forms(doc)
    ours: Any = ijson.sendable_list()
    run_coro(toonstream.parse_coro(ours), chunked(toon, 100), ours)
    theirs: Any = ijson.sendable_list()
    run_coro(ijson.parse_coro(theirs), chunked(as_json, 100), theirs)
    assert list(ours) == list(theirs)


def test_rows_coro_as_rows() -> None:
    toon = toonstream.dumps({"users": [{"id": i, "geo": {"lat": i, "lon": -i}} for i in range(3000)]}).encode()
    for as_dict in (False, True):
        sink: Any = ijson.sendable_list()
        run_coro(toonstream.rows_coro(sink, "users", as_dict=as_dict), chunked(toon, 333), sink)
        assert list(sink) == list(toonstream.rows(toon, "users", as_dict=as_dict))
        assert len(sink) == 3000


def test_coroutine_target_may_be_a_coroutine() -> None:
    got = []

    def consumer() -> Any:
        while True:
            got.append((yield))

    target = consumer()
    next(target)
    coro = toonstream.items_coro(target, "a.item")
    coro.send("a[3]: 1,2,3")
    coro.close()
    assert got == [1, 2, 3] == list(ijson.items(b'{"a": [1, 2, 3]}', "a.item"))


def test_coroutine_errors_as_ijson() -> None:
    """A truncated document fails at close() (as ijson's coroutines do); an
    error inside the data fails the send that brings it; after it, send and
    close raise it again (ijson's C backend raises an error again; its python
    backend a StopIteration, which a generator would turn into RuntimeError);
    a send after close() is a ValueError; one dropped unclosed is silent."""
    sink: Any = ijson.sendable_list()
    coro = toonstream.items_coro(sink, "a.item")
    coro.send(b"a[3]: 1,2")
    with pytest.raises(ToonDecodeError) as e:
        coro.close()
    assert e.value.code == "count_mismatch"
    theirs = ijson.items_coro(ijson.sendable_list(), "a.item")
    theirs.send(b'{"a": [1, 2')
    with pytest.raises(ijson.JSONError):
        theirs.close()

    coro = toonstream.items_coro(sink, "a.item")
    with pytest.raises(ToonDecodeError) as first:
        coro.send(b"a: 1\n  b: 2\n")  # an indented line under a scalar
    for again in (lambda: coro.send(b"more"), coro.close):
        with pytest.raises(ToonDecodeError) as e:
            again()
        assert e.value is first.value

    coro = toonstream.items_coro(sink, "a.item")
    coro.send(b"a[1]: 1")
    coro.close()
    coro.close()  # (again: nothing)
    with pytest.raises(ValueError, match="after close"):
        coro.send(b"b: 2")

    import gc

    got: Any = ijson.sendable_list()
    coro = toonstream.items_coro(got, "a.item")
    coro.send(b"a[3]: 1,2")
    del coro  # unclosed: the input did not end, so no error and no output at collection
    gc.collect()
    assert got == []


class AsyncFile:
    """An async file object (``await read(n)``), as aiofiles gives."""

    def __init__(self, data: bytes) -> None:
        self._f = io.BytesIO(data)

    async def read(self, n: int = -1) -> bytes:
        await asyncio.sleep(0)
        return self._f.read(n)


async def collect(it: Any) -> list[Any]:
    return [x async for x in it]


@pytest.mark.parametrize(("doc", "prefix"), ITEMS[:5])
def test_items_of_an_async_file_dispatch_to_async_as_ijson(doc: int, prefix: str) -> None:
    toon, as_json = forms(doc)
    ours = toonstream.items(AsyncFile(toon), prefix, map_type=OrderedDict, buf_size=100)
    theirs = ijson.items(AsyncFile(as_json), prefix, map_type=OrderedDict, buf_size=100)
    assert hasattr(ours, "__anext__") and hasattr(theirs, "__anext__")
    assert types_of(asyncio.run(collect(ours))) == types_of(asyncio.run(collect(theirs)))


def test_other_drivers_dispatch_an_async_file() -> None:
    toon, as_json = forms(1)
    assert asyncio.run(collect(toonstream.parse(AsyncFile(toon)))) == asyncio.run(collect(ijson.parse(AsyncFile(as_json))))
    assert asyncio.run(collect(toonstream.kvitems(AsyncFile(toon), "cfg"))) == asyncio.run(
        collect(ijson.kvitems(AsyncFile(as_json), "cfg"))
    )
    reader = toonstream.rows(AsyncFile(toon), "list")
    assert isinstance(reader, toonstream.AsyncRowReader)
    assert asyncio.run(collect(reader)) == list(toonstream.rows(toon, "list"))
    # a sync file is not an async file: the sync driver, as in ijson
    assert list(toonstream.items(io.BytesIO(toon), "cfg")) == list(ijson.items(io.BytesIO(as_json), "cfg"))


def test_an_async_iterable_of_chunks_dispatches_too() -> None:
    """ijson refuses an async iterable given to its sync functions ("Unknown source type"); here it
    is read as the *_async functions read it (iterating it synchronously could only fail)."""
    toon, _ = forms(1)

    async def chunks() -> Any:
        for i in range(0, len(toon), 7):
            await asyncio.sleep(0)
            yield toon[i : i + 7]

    assert asyncio.run(collect(toonstream.parse(chunks()))) == list(toonstream.parse(toon))
    assert asyncio.run(collect(toonstream.items(chunks(), "cfg"))) == list(toonstream.items(toon, "cfg"))
    assert asyncio.run(collect(toonstream.kvitems(chunks(), "cfg"))) == list(toonstream.kvitems(toon, "cfg"))
    reader = toonstream.rows(chunks(), "list")
    assert isinstance(reader, toonstream.AsyncRowReader)
    assert asyncio.run(collect(reader)) == list(toonstream.rows(toon, "list"))


def test_coroutines_are_exported() -> None:
    for name in ("parse_coro", "items_coro", "kvitems_coro", "rows_coro"):
        assert name in toonstream.__all__ and callable(getattr(toonstream, name))


@pytest.mark.parametrize("i,prefix", ITEMS)
def test_items_and_kvitems_take_events_as_ijson_does(i: int, prefix: str) -> None:
    """An iterable of (prefix, event, value) triples (toonstream's parse, or ijson's) gives the values
    ijson.items builds from the same events; kvitems too, where the prefix holds objects; map_type kept."""
    toon, js = forms(i)
    want = list(ijson.items(ijson.parse(io.BytesIO(js)), prefix, map_type=OrderedDict))
    assert list(toonstream.items(toonstream.parse(toon), prefix, map_type=OrderedDict)) == want
    assert list(toonstream.items(iter(list(ijson.parse(io.BytesIO(js)))), prefix)) == want
    if (i, prefix) in KVITEMS:
        assert list(toonstream.kvitems(toonstream.parse(toon), prefix)) == list(ijson.kvitems(io.BytesIO(js), prefix))


def test_an_iterable_of_chunks_is_still_text_and_the_choice_is_lazy() -> None:
    """Chunks (str or bytes) are TOON text; an empty iterable is an empty document; nothing is taken
    from the iterable before the first next()."""
    taken: list[int] = []

    def chunks() -> Any:
        taken.append(1)
        yield b"a[2]: 1,"
        yield b"2\n"

    it = toonstream.items(chunks(), "a.item")
    assert taken == []
    assert list(it) == [1, 2]
    assert list(toonstream.items(iter(["a: ", "x"]), "a")) == ["x"]
    assert list(toonstream.items(iter([]), "")) == [{}]


@pytest.mark.parametrize("name", ["parse", "items", "kvitems", "rows", "parse_async", "items_async", "kvitems_async",
                                  "rows_async", "parse_coro", "items_coro", "kvitems_coro", "rows_coro"])
def test_drivers_check_their_arguments_when_called(name: str) -> None:
    """buf_size is an int >= 1 (read(0) would end the input at once: an empty document, data lost);
    an option the drivers do not take (ijson's multiple_values, allow_comments; a Decoder's own
    batches) is a TypeError naming the function, as Python's for an unknown keyword."""
    function = getattr(toonstream, name)
    coro = name.endswith("_coro")
    args: tuple[Any, ...] = (ijson.sendable_list(),) if coro else (b"a: 1",)
    if name.startswith(("items", "kvitems")):
        args += ("a",)
    for bad in ["multiple_values", "allow_comments", "batches", "use_floats"]:
        with pytest.raises(TypeError, match=rf"^{name}\(\) got an unexpected keyword argument '{bad}'$"):
            function(*args, **{bad: True})
    if not coro:
        for size, error in [(0, ValueError), (-1, ValueError), (None, TypeError), (1.5, TypeError), (True, TypeError)]:
            with pytest.raises(error, match=rf"^{name}\(\) buf_size must be"):
                function(*args, buf_size=size)
        function(*args, buf_size=1, strict=True, max_depth=5, start_line=3)  # (the options it takes)


@pytest.mark.parametrize("driver", ["items", "parse", "rows", "items_coro"])
def test_a_row_is_given_as_soon_as_its_line_ends(engine: str, driver: str) -> None:
    # As ijson, and as a pipe stage must: a driver fed one row at a time gives
    # each row before the next is read (the reference Decoder's hold_rows,
    # which batches small chunks, is off in the drivers).
    read: list[int] = []

    def chunks() -> Any:
        yield b"t[50]{a,b}:\n"
        for i in range(50):
            read.append(i)
            yield b"  %d,x\n" % i

    if driver == "items_coro":
        got: list[Any] = []

        class Target:
            def send(self, value: Any) -> None:
                got.append(value)

        coro = toonstream.items_coro(Target(), "t.item")
        coro.send(b"t[3]{a,b}:\n")
        for i in range(3):
            coro.send(b"  %d,x\n" % i)
            assert got == [{"a": k, "b": "x"} for k in range(i + 1)]
        coro.close()
        return
    if driver == "items":
        it: Any = toonstream.items(chunks(), "t.item")
        assert next(it) == {"a": 0, "b": "x"}
    elif driver == "rows":
        it = toonstream.rows(chunks(), "t")
        assert next(it) == (0, "x")
    else:
        it = (e for e in toonstream.parse(chunks()) if e[0] == "t.item.a")
        assert next(it) == ("t.item.a", "number", 0)
    assert len(read) <= 2, read


def test_an_empty_iterable_is_an_empty_document() -> None:
    # No element: the chunks of an empty document (its value does not depend on how it is
    # cut), which holds {} at prefix "" (section 5); ijson.items of no events gives nothing.
    empty = (e for e in toonstream.parse("a: 1") if e[0].startswith("zzz"))
    assert list(toonstream.items(empty, "")) == list(toonstream.items(b"", "")) == [{}]
    assert list(ijson.items(iter([]), "")) == []
    assert list(toonstream.kvitems(iter([]), "")) == []

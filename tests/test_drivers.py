"""The ijson-style drivers (parse, items, kvitems), rows(), and the async variants."""

from __future__ import annotations

import asyncio
import io
import json
from decimal import Decimal
from typing import Any, AsyncIterator

import ijson
import pytest

import toonstream
from toonstream import ToonDecodeError

from conftest import json_equal, load_fixtures

CASES = [
    (i, c)
    for i, c in load_fixtures("decode")
    if not c.get("shouldError") and c.get("options", {}).get("strict", True) is not False
]


def _prefixes(doc: bytes) -> list[str]:
    seen: dict[str, None] = {}
    for prefix, _, _ in ijson.parse(doc):
        seen[prefix] = None
    return list(seen)


@pytest.mark.parametrize("case", [c for _, c in CASES], ids=[i for i, _ in CASES])
def test_items_and_kvitems_match_ijson(case: dict[str, Any]) -> None:
    doc = json.dumps(case["expected"]).encode()
    opts = {"indent_size": case.get("options", {}).get("indentSize", 2)}
    for prefix in _prefixes(doc):
        assert list(toonstream.items(case["input"], prefix, **opts)) == list(ijson.items(doc, prefix)), prefix
        assert list(toonstream.kvitems(case["input"], prefix, **opts)) == list(ijson.kvitems(doc, prefix)), prefix


ORDERS = """orders[3]{id,customer{name,country},total}:
  1,Ada,DK,99.5
  2,Bob,UK,149
  3,"Cy, Jr.",US,0.25
meta:
  source: shop
servers[2:]{host,port}:
  alpha: a.example.com,8080
  beta: b.example.com,9090"""


def test_items_inside_rows_and_entries() -> None:
    assert list(toonstream.items(ORDERS, "orders.item.customer")) == [
        {"name": "Ada", "country": "DK"},
        {"name": "Bob", "country": "UK"},
        {"name": "Cy, Jr.", "country": "US"},
    ]
    assert list(toonstream.items(ORDERS, "orders.item.customer.name")) == ["Ada", "Bob", "Cy, Jr."]
    assert list(toonstream.items(ORDERS, "servers.beta.port")) == [9090]
    assert list(toonstream.kvitems(ORDERS, "servers")) == [
        ("alpha", {"host": "a.example.com", "port": 8080}),
        ("beta", {"host": "b.example.com", "port": 9090}),
    ]
    assert list(toonstream.kvitems(ORDERS, "orders.item.customer"))[:2] == [("name", "Ada"), ("country", "DK")]


def test_numbers_decimal_by_default_float_on_request() -> None:
    assert list(toonstream.items(ORDERS, "orders.item.total")) == [Decimal("99.5"), 149, Decimal("0.25")]
    assert list(toonstream.items(ORDERS, "orders.item.total", use_float=True)) == [99.5, 149, 0.25]
    assert [type(v) for v in toonstream.items(ORDERS, "orders.item.total", use_float=True)] == [float, int, float]


def test_rows_tuples_dicts_and_columns() -> None:
    r = toonstream.rows(ORDERS, "orders")
    assert r.columns is None
    assert list(r) == [(1, "Ada", "DK", 99.5), (2, "Bob", "UK", 149), (3, "Cy, Jr.", "US", 0.25)]
    assert r.columns == ["id", "customer.name", "customer.country", "total"]
    assert r.fields is not None and r.fields[1].name == "customer"
    assert list(toonstream.rows(ORDERS, "orders", as_dict=True))[0] == {
        "id": 1,
        "customer": {"name": "Ada", "country": "DK"},
        "total": 99.5,
    }
    keyed = toonstream.rows(ORDERS, "servers")
    assert list(keyed) == [("alpha", "a.example.com", 8080), ("beta", "b.example.com", 9090)]
    assert keyed.columns == ["key", "host", "port"]
    assert list(toonstream.rows(ORDERS, "servers", as_dict=True, key_field="name"))[1] == {
        "name": "beta",
        "host": "b.example.com",
        "port": 9090,
    }


def test_rows_in_every_list_item_and_at_root() -> None:
    doc = "items[2]:\n  - users[1]{id}:\n      1\n    n: a\n  - users[2]{id}:\n      2\n      3"
    assert list(toonstream.rows(doc, "items.item.users")) == [(1,), (2,), (3,)]
    assert list(toonstream.rows("[2]{a,b}:\n  1,x\n  2,y")) == [(1, "x"), (2, "y")]


def test_rows_on_a_non_tabular_value_is_an_error() -> None:
    with pytest.raises(ToonDecodeError) as info:
        list(toonstream.rows(ORDERS, "meta"))
    assert info.value.code == "not_tabular"
    with pytest.raises(ToonDecodeError):
        list(toonstream.rows("a[2]: 1,2", "a"))
    assert list(toonstream.rows(ORDERS, "nothing.here")) == []


def test_rows_as_dicts_refuse_a_name_a_dict_would_hold_twice(engine: str) -> None:
    # A keyed table's key_field named like one of its fields, or a non-strict header's repeated
    # field: a dict keeps one of the two cells, so as read_toon does, name_collision at the header
    # (the tuples keep every cell); in every driver.
    keyed = "users[2:]{key,age}:\n  alice: k1,30\n  bob: k2,25"
    cases = [(keyed, "users", {}, 1), (keyed, "users", {"key_field": "age"}, 1),
             ("t[2]{a,b{a,a}}:\n  1,2,3\n  4,5,6", "t", {"strict": False}, 1),
             ("x:\n  t[1]{a,a}:\n    1,2", "x.t", {"strict": False}, 2)]
    for doc, prefix, kw, line in cases:
        with pytest.raises(ToonDecodeError, match="column name collision") as e:
            list(toonstream.rows(doc, prefix, as_dict=True, **kw))
        header = doc.splitlines()[line - 1]
        assert (e.value.code, e.value.line, e.value.line_text) == ("name_collision", line, header)
        assert e.value.column == len(header) - len(header.lstrip()) + 1
        with pytest.raises(ToonDecodeError, match="column name collision"):
            asyncio.run(_collect(toonstream.rows_async(_agen(doc.encode()), prefix, as_dict=True, **kw)))
        assert len(list(toonstream.rows(doc, prefix, **kw))[0]) >= 2  # (tuples keep every cell)
    assert list(toonstream.rows(keyed, "users", as_dict=True, key_field="name"))[1] == {"name": "bob", "key": "k2", "age": 25}


def test_sources_file_objects_and_iterables() -> None:
    doc = ORDERS.encode()
    want = toonstream.loads(doc)
    assert toonstream.load(io.BytesIO(doc)) == want
    assert toonstream.load(io.StringIO(ORDERS)) == want
    assert toonstream.load(iter([doc[:7], doc[7:50], doc[50:]])) == want
    assert list(toonstream.parse(io.BytesIO(doc), buf_size=3)) == list(toonstream.parse(ORDERS))


class _AsyncFile:
    def __init__(self, data: bytes) -> None:
        self._buf = io.BytesIO(data)

    async def read(self, n: int) -> bytes:
        await asyncio.sleep(0)
        return self._buf.read(n)


async def _agen(data: bytes) -> AsyncIterator[bytes]:
    for i in range(0, len(data), 5):
        yield data[i : i + 5]


async def _collect(it: Any) -> list[Any]:
    return [x async for x in it]


def test_async_variants_agree_with_sync() -> None:
    doc = ORDERS.encode()
    assert asyncio.run(_collect(toonstream.parse_async(_AsyncFile(doc), buf_size=7))) == list(toonstream.parse(doc))
    assert asyncio.run(_collect(toonstream.items_async(_agen(doc), "orders.item"))) == list(
        toonstream.items(doc, "orders.item")
    )
    assert asyncio.run(_collect(toonstream.kvitems_async(_agen(doc), "servers"))) == list(
        toonstream.kvitems(doc, "servers")
    )
    reader = toonstream.rows_async(_agen(doc), "servers")
    assert asyncio.run(_collect(reader)) == list(toonstream.rows(doc, "servers"))
    assert reader.columns == ["key", "host", "port"]


def test_loads_value_equals_items_root() -> None:
    assert json_equal(list(toonstream.items(ORDERS, ""))[0], toonstream.loads(ORDERS, parse_float=Decimal))


@pytest.mark.parametrize("buf_size", [7, 4096, 1 << 20])
def test_parse_of_big_tables_matches_ijson(buf_size: int) -> None:
    # Many rows per Rows event: the column-wise triple builder, flat and nested.
    flat = [
        {"id": i, "s": f"x{i}", "f": i / 8, "b": i % 3 == 0, "n": None if i % 4 else i, "q": "a,b" if i % 9 == 0 else "c"}
        for i in range(600)
    ]
    nested = {"t": [{"id": i, "p": {"x": i, "y": {"z": f"z{i}"}}, "k": i % 2 == 1} for i in range(300)]}
    for value in (flat, nested):
        doc = toonstream.dumps(value).encode()
        ours = list(toonstream.parse(doc, buf_size=buf_size))
        assert ours == list(ijson.parse(json.dumps(value).encode()))
    # a parse_float result of any type is a "number" event, as Decimals are
    doc = toonstream.dumps([{"a": 1.5, "b": "x"}] * 20)
    events = list(toonstream.parse(doc, parse_float=lambda s: ("F", s)))
    assert ("item.a", "number", ("F", "1.5")) in events


_FAILING_DRIVERS = {
    "rows": lambda fp: list(toonstream.rows(fp, "t")),
    "parse": lambda fp: list(toonstream.parse(fp)),
    "items": lambda fp: list(toonstream.items(fp, "t.item")),
    "kvitems": lambda fp: list(toonstream.kvitems(fp, "t.item")),
    "decode_to_jsonl": lambda fp: toonstream.decode_to_jsonl(fp, io.StringIO(), path="t"),
    "decode_to_json": lambda fp: toonstream.decode_to_json(fp, io.StringIO()),
    "load": lambda fp: toonstream.load(fp),
}


@pytest.mark.parametrize("driver", sorted(_FAILING_DRIVERS))
def test_a_failing_file_is_not_kept_alive(driver: str, engine: str, tmp_path: Any) -> None:
    # The error a decoder keeps for its later calls holds, once raised, the caller's frames, and
    # so the file being read: the garbage collector must see that cycle (the native decoders
    # once hid it, leaking a file per failed call).
    import gc
    import os

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("counts the open files in /proc/self/fd (Linux)")
    path = tmp_path / "bad.toon"
    path.write_text("t[3]{a,b}:\n  1,x\n  2,y\n")  # (a count error at the end)
    run = _FAILING_DRIVERS[driver]
    gc.collect()
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(10):
        with pytest.raises(ToonDecodeError):
            run(open(path, "rb"))  # noqa: SIM115 (closed by the collector: what is under test)
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) == before


_SHARED_ITERATOR = r"""
import io, sys, threading
import toonstream
sys.setswitchinterval(1e-5)
doc = toonstream.dumps({"n": [{"a": i, "b": [i]} for i in range(20000)]}).encode()
for rep in range(4):
    for make in (lambda: toonstream.items(io.BytesIO(doc), "n.item", buf_size=4096),
                 lambda: toonstream.parse(io.BytesIO(doc), buf_size=4096),
                 lambda: iter(toonstream.rows(io.BytesIO(b"[2]{a}:\n  1\n  2\n" * 1), ""))):
        it = make()
        def work():
            while True:
                try:
                    next(it)
                except StopIteration:
                    break
                except ValueError:  # "generator already executing": the misuse's error
                    pass
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
print("done")
"""


def test_threads_sharing_one_iterator_get_an_error_not_a_crash() -> None:
    """Sharing one driver's iterator between threads is a misuse, but it crashed the interpreter
    (SIGSEGV or abort on CPython 3.11, the python engine: itertools.chain freed the generator
    another thread was running)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _SHARED_ITERATOR], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "done", (done.returncode, done.stderr[-2000:])


def test_async_row_reader_closes_early() -> None:
    """contextlib.aclosing works on rows_async as on the other async drivers (no aclose before)."""
    import asyncio
    import contextlib

    read: list[bytes] = []

    async def chunks() -> Any:
        for part in (b"u[3]{a}:\n  1\n", b"  2\n", b"  3\n"):
            read.append(part)
            yield part

    async def main() -> list[Any]:
        got = []
        async with contextlib.aclosing(toonstream.rows_async(chunks(), "u")) as it:
            async for row in it:
                got.append(row)
                break
        return got

    assert asyncio.run(main()) == [(1,)]
    assert len(read) == 1  # (the source not read further)


@pytest.mark.parametrize("driver", ["rows", "parse", "items", "kvitems"])
def test_sync_drivers_close_early(driver: str) -> None:
    """``close()`` (``contextlib.closing``) stops a driver as it stops a generator:
    nothing more comes, and the source is not read further."""
    import contextlib

    read: list[bytes] = []

    def chunks() -> Any:
        for part in (b"u[3]{a}:\n  1\n", b"  2\n", b"  3\n", b"v: 1\n"):
            read.append(part)
            yield part

    call = {
        "rows": lambda src: toonstream.rows(src, "u"),
        "parse": lambda src: toonstream.parse(src),
        "items": lambda src: toonstream.items(src, "u.item"),
        "kvitems": lambda src: toonstream.kvitems(src, "u.item"),
    }[driver]
    with contextlib.closing(call(chunks())) as it:
        first = next(it)
    assert first is not None
    assert list(it) == []
    assert len(read) == 1

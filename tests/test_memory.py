"""Streaming memory stays flat: tracemalloc peaks for 10k vs 200k rows, and
for 32 vs 128 big elements (the encoders' batches are bounded by size too)."""

from __future__ import annotations

import io
import json
import tracemalloc
from typing import Any, Callable, Iterator

import pytest

import toonstream


def _table(n: int) -> Iterator[bytes]:
    yield f"meta:\n  name: demo\nt[{n}]{{id,name,score,ok,note}}:\n".encode()
    batch = []
    for i in range(n):
        batch.append(f'  {i},user{i},{i * 0.25},{"true" if i % 2 else "false"},"a, b {i}"\n')
        if len(batch) == 500:
            yield "".join(batch).encode()
            batch = []
    yield "".join(batch).encode()
    yield b"tail: 1\n"


def _peak(consume: Callable[[Iterator[bytes]], Any], n: int) -> int:
    tracemalloc.start()
    try:
        consume(_table(n))
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _drain(it: Any) -> int:
    count = 0
    for _ in it:
        count += 1
    return count


@pytest.mark.slow
def test_rows_memory_is_flat() -> None:
    small = _peak(lambda src: _drain(toonstream.rows(src, "t")), 10_000)
    large = _peak(lambda src: _drain(toonstream.rows(src, "t")), 200_000)
    assert large < small * 1.1, (small, large)


@pytest.mark.slow
def test_parse_memory_is_flat() -> None:
    small = _peak(lambda src: _drain(toonstream.parse(src)), 10_000)
    large = _peak(lambda src: _drain(toonstream.parse(src)), 200_000)
    assert large < small * 1.1, (small, large)


@pytest.mark.slow
def test_decoder_memory_is_flat() -> None:
    def run(src: Iterator[bytes]) -> None:
        d = toonstream.Decoder()
        for chunk in src:
            d.feed(chunk)
        d.close()

    small = _peak(run, 10_000)
    large = _peak(run, 200_000)
    assert large < small * 1.1, (small, large)


# ---------------------------------------------------------------- big elements

BIG = 128 * 1024  # characters of each element's text
SPOOL = 1 << 20  # spool_memory: the spools' own in-memory part kept small, out of the peaks


class _Discard(io.RawIOBase):
    """An output that keeps nothing (the output's size is not the encoder's memory)."""

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        return len(data)


def _big(i: int, nested: bool = False) -> dict[str, Any]:
    text = (f"{i:07d} " * (BIG // 8 + 1))[:BIG]
    if nested:  # keys that vary: list items, not a table
        return {"id": i, f"k{i % 3}": {"text": text}}
    return {"id": i, "blob": text}


def _big_peak(run: Callable[[int], Any], n: int) -> int:
    """tracemalloc's peak while ``run(n)`` encodes ``n`` big elements (made lazily, or
    input made before the count starts)."""
    tracemalloc.start()
    try:
        run(n)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _flat_as_elements_grow(run: Callable[[int], Any], small_n: int = 32) -> None:
    # Before the batches were bounded by size, 4x the elements took about four
    # times the memory (all held in one batch of up to 1,024).
    small = _big_peak(run, small_n)
    large = _big_peak(run, small_n * 4)
    assert large < small * 1.5, (small, large)


def _records(n: int, nested: bool = False) -> Iterator[dict[str, Any]]:
    return (_big(i, nested) for i in range(n))


@pytest.mark.parametrize("nested", [False, True], ids=["table", "list-items"])
def test_encode_records_big_elements_memory_is_flat(nested: bool) -> None:
    _flat_as_elements_grow(
        lambda n: toonstream.encode_records(_records(n, nested), _Discard(), spool_memory=SPOOL))


def test_encode_events_big_elements_memory_is_flat() -> None:
    import ijson

    docs = {n: json.dumps(list(_records(n))).encode() for n in (32, 128)}
    _flat_as_elements_grow(
        lambda n: toonstream.encode_events(ijson.parse(io.BytesIO(docs[n])), _Discard(), spool_memory=SPOOL))


def test_encode_jsonl_lines_big_elements_memory_is_flat() -> None:
    # An iterable of lines (spooled), read in batches bounded by their bytes
    def run(n: int) -> None:
        lines = (json.dumps(r) + "\n" for r in _records(n))
        toonstream.encode_jsonl(lines, _Discard(), spool_memory=SPOOL)

    _flat_as_elements_grow(run)


@pytest.mark.parametrize("nested", [False, True], ids=["table", "list-items"])
def test_encode_jsonl_file_big_elements_memory_is_flat(nested: bool) -> None:
    # (the native engine writes list items from blocks of 4 MiB of input: past
    # a few blocks, its memory stays flat too)
    data = {n: "".join(json.dumps(r) + "\n" for r in _records(n, nested)).encode() for n in (64, 256)}
    _flat_as_elements_grow(
        lambda n: toonstream.encode_jsonl(io.BytesIO(data[n]), _Discard(), spool_memory=SPOOL, workers=1), 64)

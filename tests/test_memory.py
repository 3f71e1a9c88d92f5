"""Streaming memory stays flat: tracemalloc peaks for 10k vs 200k rows."""

from __future__ import annotations

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

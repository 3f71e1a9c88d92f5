"""Shared test helpers: where the spec fixtures are, how to chunk input, which engines to run.

Tests that take the ``engine`` fixture run once per engine (``python``, the
reference, and ``native``, the Rust extension): the grid engine x driver x
chunking, as ijson tests its backends.  Where the native extension is not
built, its half of the grid is skipped with the reason, except in CI (or with
TOONSTREAM_REQUIRE_NATIVE=1), where that fails the suite.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any, Iterator

import pytest

REPO = Path(__file__).resolve().parent.parent

#: Override with TOONSTREAM_SPEC_DIR; default: ../shared/toon-spec beside the repo.
SPEC_DIR = Path(os.environ.get("TOONSTREAM_SPEC_DIR", REPO.parent / "shared" / "toon-spec"))
FIXTURES = SPEC_DIR / "tests" / "fixtures"
#: In CI (CI=true, as .ci/run's runner sets it) or with TOONSTREAM_REQUIRE_SPEC=1, a missing
#: fixture directory fails the suite instead of skipping it.
REQUIRE_SPEC = os.environ.get("TOONSTREAM_REQUIRE_SPEC") == "1" or os.environ.get("CI", "").lower() == "true"


#: In CI, or with TOONSTREAM_REQUIRE_NATIVE=1, an unbuilt native engine fails its tests.
REQUIRE_NATIVE = os.environ.get("TOONSTREAM_REQUIRE_NATIVE") == "1" or os.environ.get("CI", "").lower() == "true"
ENGINES = ("python", "native")


@pytest.fixture(autouse=True)
def _engine_restored() -> Iterator[None]:
    """Every test leaves the engine in use as it found it: a test that
    switched it and did not switch back ran the tests after it, in the same
    worker, on another engine than the run's."""
    from toonstream import _engine

    before = _engine.current()
    yield
    after = _engine.current()
    if after is not before:
        _engine.use(before)
        pytest.fail(f"the test left the engine in use switched ({before.name} -> {after.name})")


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run the test on each engine in turn (the engine in use is restored after)."""
    from toonstream import _engine

    try:
        chosen = _engine.select(request.param)
    except ImportError as e:
        if REQUIRE_NATIVE:
            pytest.fail(str(e))
        pytest.skip(str(e))
    previous = _engine.use(chosen)
    try:
        yield request.param
    finally:
        _engine.use(previous)


def import_native() -> Any:
    """``toonstream._native`` for a test module of the native engine alone; where it is not
    built, the module is skipped with the reason (a failure in CI, see REQUIRE_NATIVE)."""
    try:
        from toonstream import _native
    except ImportError as e:  # pragma: no cover - depends on the build
        if REQUIRE_NATIVE:
            raise
        pytest.skip(f"toonstream._native is not built ({e}): pip install -e . with a Rust toolchain", allow_module_level=True)
    return _native


def load_fixtures(kind: str) -> list[tuple[str, dict[str, Any]]]:
    """(id, case) pairs for every case of fixtures/<kind>/*.json."""
    if not FIXTURES.is_dir():
        return []
    cases = []
    for path in sorted((FIXTURES / kind).glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for i, case in enumerate(data["tests"]):
            cases.append((f"{path.stem}[{i}] {case['name']}", case))
    return cases


def require_fixtures() -> None:
    if FIXTURES.is_dir():
        return
    msg = f"spec fixtures not found at {FIXTURES} (set TOONSTREAM_SPEC_DIR)"
    if REQUIRE_SPEC:
        pytest.fail(msg)
    pytest.skip(msg)


def chunkings(data: bytes, seeds: tuple[int, ...] = (1, 2, 3)) -> Iterator[tuple[str, list[bytes]]]:
    """The same input cut several ways: whole, one byte at a time, random splits."""
    yield "whole", [data]
    yield "bytewise", [data[i : i + 1] for i in range(len(data))]
    for seed in seeds:
        rnd = random.Random(seed)
        cuts = sorted(rnd.sample(range(1, len(data)), min(len(data) - 1, rnd.randint(1, 8)))) if len(data) > 1 else []
        parts = []
        prev = 0
        for c in cuts + [len(data)]:
            parts.append(data[prev:c])
            prev = c
        yield f"random{seed}", parts


def json_equal(a: Any, b: Any, *, ordered: bool = True) -> bool:
    """JSON-model equality (§2): bool is not a number, numbers compare by value
    (1e6 == 1000000); object key order counts unless ``ordered=False`` (tabular
    forms may reorder keys to the header's order, §2)."""
    todo = [(a, b)]
    while todo:
        x, y = todo.pop()
        if isinstance(x, bool) or isinstance(y, bool) or x is None or y is None:
            if type(x) is not type(y) or x != y:
                return False
        elif isinstance(x, (int, float)) or isinstance(y, (int, float)) or type(x).__name__ == "Decimal":
            if isinstance(x, (str, list, dict)) or isinstance(y, (str, list, dict)) or x != y:
                return False
        elif isinstance(x, str) or isinstance(y, str):
            if type(x) is not type(y) or x != y:
                return False
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                return False
            todo.extend(zip(x, y))
        elif isinstance(x, dict) and isinstance(y, dict):
            if (list(x) != list(y)) if ordered else (x.keys() != y.keys()):
                return False
            todo.extend((x[k], y[k]) for k in x)
        else:
            return False
    return True


def identical(a: Any, b: Any) -> bool:
    """Exactly the same value: same types all the way down (int is not float, a float's sign and
    bits count, Decimal by its text), same key order.  Iterative: deep values do not recurse."""
    todo = [(a, b)]
    while todo:
        x, y = todo.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, list):
            if len(x) != len(y):
                return False
            todo.extend(zip(x, y))
        elif isinstance(x, dict):
            if list(x) != list(y):
                return False
            todo.extend((x[k], y[k]) for k in x)
        elif isinstance(x, float):
            if x.hex() != y.hex():
                return False
        elif type(x).__name__ == "Decimal":
            if str(x) != str(y):
                return False
        elif x != y:
            return False
    return True


def flat_events(events: list[Any]) -> list[Any]:
    """Events with row/entry/value batches split into single items: batching depends on
    chunking, the items must not."""
    import toonstream

    out: list[Any] = []
    for ev in events:
        if isinstance(ev, toonstream.Rows):
            out.extend(("row", r) for r in ev.rows)
        elif isinstance(ev, toonstream.Entries):
            out.extend(("entry", e) for e in ev.entries)
        elif isinstance(ev, toonstream.Values):
            out.extend(("value", v) for v in ev.values)
        else:
            out.append(ev)
    return out


def default_signals() -> None:
    """``preexec_fn`` for a child that is sent SIGINT/SIGTERM by a test: the
    default dispositions, whatever the test run inherited (a shell starts a
    background job with SIGINT ignored, and the child would inherit that)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)

"""``encode_events`` / ``Encoder.send_all`` on the native engine (``_native.fill_elements`` takes
the events inside the elements) against the reference (the same calls on the Python engine, one
``send`` per event): the same text, or the same error, for ijson streams of generated values
(pairs and triples, several batch sizes), and for streams broken on purpose (events dropped,
repeated, swapped, renamed, malformed, or an iterator that fails part way).
"""

from __future__ import annotations

import io
import itertools
import json
import signal
import sys
from decimal import Decimal
from typing import Any, Iterator

import ijson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toonstream
from toonstream import _engine, streaming
from toonstream.streaming import Encoder, encode_events

from conftest import import_native
from differential import error_key

_native = import_native()
PYTHON = _engine.select("python")
NATIVE = _engine.select("native")

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**20), 10**20), st.text(max_size=8),
    st.decimals(allow_nan=False, allow_infinity=False, places=3),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(st.sampled_from(["a", "b", "c", "id", "x y"]), inner, max_size=4),
    ),
    max_leaves=30,
)
# Root documents: arrays of records (tables, list items, mixed), objects with array members.
records = st.lists(st.fixed_dictionaries({"id": st.integers(0, 99)}, optional={"a": scalars, "b": values}), max_size=40)
documents = st.one_of(
    values,
    records,
    st.lists(values, max_size=30),
    st.dictionaries(st.sampled_from(["k", "rows", "n", "deep"]), st.one_of(records, values), max_size=3),
)


def events_of(value: Any, *, pairs: bool = False) -> list[tuple[Any, ...]]:
    text = json.dumps(value, default=str).encode()
    evs = list(ijson.parse(io.BytesIO(text)))
    return [(e, v) for _, e, v in evs] if pairs else evs


def outcome(engine: _engine.Engine, events: Any, **options: Any) -> tuple[str, Any]:
    previous = _engine.use(engine)
    try:
        out = io.StringIO()
        encode_events(events() if callable(events) else iter(events), out, **options)
        return "ok", out.getvalue()
    except Exception as e:  # (compared: the same class and message on both engines)
        return "error", error_key(e)
    finally:
        _engine.use(previous)


def same(events: Any, **options: Any) -> tuple[str, Any]:
    want = outcome(PYTHON, events, **options)
    got = outcome(NATIVE, events, **options)
    assert got == want
    return got


def to_json_model(v: Any) -> Any:
    return json.loads(json.dumps(v, default=str))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, st.booleans(), st.sampled_from([1, 2, 3, 1024]))
def test_generated_documents(doc: Any, pairs: bool, batch: int) -> None:
    saved = streaming.ROW_BATCH
    streaming.ROW_BATCH = batch  # (how many elements fill_elements hands over at once)
    try:
        got = same(events_of(doc, pairs=pairs))
    finally:
        streaming.ROW_BATCH = saved
    if got[0] == "ok":
        assert got[1] == toonstream.dumps(json.loads(json.dumps(doc, default=str), parse_float=Decimal))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, st.data())
def test_broken_streams(doc: Any, data: st.DataObject) -> None:
    evs: list[Any] = events_of(doc)
    for _ in range(data.draw(st.integers(1, 3))):
        if not evs:
            break
        i = data.draw(st.integers(0, len(evs) - 1))
        how = data.draw(st.sampled_from(["drop", "repeat", "swap", "rename", "malform", "key", "value"]))
        if how == "drop":
            del evs[i]
        elif how == "repeat":
            evs.insert(i, evs[i])
        elif how == "swap" and i + 1 < len(evs):
            evs[i], evs[i + 1] = evs[i + 1], evs[i]
        elif not (isinstance(evs[i], tuple) and len(evs[i]) == 3):
            continue  # (malformed already)
        elif how == "rename":
            p, _, v = evs[i]
            evs[i] = (p, data.draw(st.sampled_from(["start_map", "end_array", "map_key", "bogus", "number"])), v)
        elif how == "value":  # (a scalar event's value of another type)
            p, e, _ = evs[i]
            evs[i] = (p, e, data.draw(st.sampled_from([5, "x", None, True, 1.5, Decimal("1.5"), [1]])))
        elif how == "malform":
            evs[i] = data.draw(st.sampled_from([("x",), ("a", "b", "c", "d"), ["", "integer", 1], "integer", None]))
        else:
            p, e, _ = evs[i]
            evs[i] = (p, "map_key", data.draw(st.sampled_from([1, None, ("t",), "k"])))
    same(evs)


S = None


@pytest.mark.parametrize(
    ("inner", "message"),
    [
        ([("start_array", S), ("number", 1), ("end_map", S)], "unbalanced end_map"),
        ([("start_map", S), ("map_key", "a"), ("number", 1), ("end_array", S)], "unbalanced end_array"),
        ([("start_array", S), ("bogus", 7), ("end_array", S)], "unexpected event 'bogus'"),
        ([("start_array", S), ("map_key", "k"), ("number", 1), ("end_array", S)], "map_key inside an array"),
        ([("start_map", S), ("number", 1), ("end_map", S)], "without a map_key before it: 1"),
        ([("start_map", S), ("map_key", "a"), ("end_map", S)], "end_map after a map_key without its value"),
        ([("start_map", S), ("map_key", "a"), ("number", 1), ("number", 2), ("end_map", S)], "without a map_key"),
        ([("start_map", S), ("map_key", None), ("number", 1), ("end_map", S)], "map_key without a key"),
        ([("start_map", S), ("map_key", "a"), ("map_key", "b"), ("number", 1), ("end_map", S)],
         "map_key 'b' after a map_key without its value"),
    ],
)
def test_malformed_events_inside_an_element(inner: list[Any], message: str) -> None:
    """Inside an element, events are checked as at the root (they were taken
    as they came: an end_map closed an array, an unknown event was a value)."""
    for pairs in (True, False):
        evs = [("start_array", S), *inner, ("end_array", S)]
        if not pairs:
            evs = [("", e, v) for e, v in evs]
        got = same(evs)
        assert got[0] == "error", got
        assert got[1][0] is toonstream.ToonEncodeError and __import__("re").search(message, got[1][1]), got


def test_encoder_after_a_failed_close() -> None:
    for engine in (PYTHON, NATIVE):
        previous = _engine.use(engine)
        try:
            out = io.StringIO()
            enc = Encoder(out)
            enc.send(("start_array", None))
            enc.send(("number", 1))
            with pytest.raises(toonstream.ToonEncodeError, match="incomplete event stream"):
                enc.close()
            with pytest.raises(toonstream.ToonEncodeError, match="event after close"):
                enc.send(("end_array", None))
            with pytest.raises(toonstream.ToonEncodeError, match="close\\(\\) failed before: ToonEncodeError: incomplete"):
                enc.close()
            with pytest.raises(toonstream.ToonEncodeError, match="triple or an \\(event, value\\) pair"):
                Encoder(io.StringIO()).send(("start_array",))  # type: ignore[arg-type]
            done = Encoder(out)
            done.send(("null", None))
            done.close()
            done.close()  # (after a close that succeeded: nothing)
        finally:
            _engine.use(previous)


def test_iterator_errors_pass_through() -> None:
    doc = [{"id": i, "v": [i, {"w": i}]} for i in range(50)]

    def failing() -> Iterator[Any]:
        for k, ev in enumerate(events_of(doc)):
            if k == 200:
                raise ValueError("the source broke")
            yield ev

    assert same(failing) == ("error", (ValueError, "the source broke"))


def test_tables_lists_and_members() -> None:
    table = [{"id": i, "name": f"n{i}", "score": i / 4} for i in range(3000)]
    nested = [{"id": i, "tags": ["a", "b"][: i % 3], "meta": {"k": i}} for i in range(3000)]
    mixed = [1, "two", None, {"a": 1}, [1, 2], True] * 300
    for doc in (table, nested, mixed, {"t": table[:50], "n": nested[:50], "x": 1, "m": mixed[:20]}):
        got = same(events_of(doc))
        assert got == ("ok", toonstream.dumps(to_json_model(doc)))
    for options in ({"delimiter": "|"}, {"indent_size": 4}, {"max_depth": 3}, {"missing_as_null": True}):
        same(events_of(nested[:100] + [{"id": 1}]), **options)


@pytest.mark.parametrize("batch", [1, 7, 1024])
def test_list_items_written_ahead(batch: int, monkeypatch: Any) -> None:
    # Once an array is settled as list items, the native engine writes each batch's items in pass
    # one; a batch list_items declines (too deep, a lone surrogate) is spooled as values, and pass
    # two raises or writes as the reference does, its element index counting the items before.
    monkeypatch.setattr(streaming, "ROW_BATCH", batch)
    nested = [{"id": i, "tags": [i, [i]], "meta": {"k": i}} for i in range(60)]
    deep: Any = 1
    for _ in range(8):
        deep = {"d": deep}
    for doc in (nested, {"m": nested, "x": 1}):
        same(events_of(doc))
    for odd in (deep, "\ud800", [[["x"]]]):
        evs = events_of(nested[:40]) [:-1] + [("item", "string", odd)] if isinstance(odd, str) else None
        if evs is None:
            doc = nested[:40] + [odd] + nested[40:]
            evs = events_of(doc)
        else:
            evs += events_of(nested[40:])[1:]
        same(evs, max_depth=6)
        same(evs)
    written = []
    real = streaming._native_items

    def spy(walk: Any, values: list[Any]) -> Any:
        text = real(walk, values)
        if sys._getframe(1).f_code.co_name == "_elements":  # (pass one; pass two calls it too)
            written.append(text is not None)
        return text

    monkeypatch.setattr(streaming, "_native_items", spy)
    assert same(events_of(nested * 40))[0] == "ok"
    # (the native engine wrote items ahead from the second batch on, the reference never does;
    # batches of one element take the element-by-element path)
    assert any(written) == (batch > 1)


def test_fill_elements_directly() -> None:
    stack: list[Any] = [{}]
    keys: list[Any] = [None]
    events = [("", "map_key", "a"), ("", "integer", 1), ("", "end_map", None), ("", "integer", 2),
              ("", "start_array", None), ("", "end_array", None), ("", "end_array", None)]
    status, done, event, deepest = _native.fill_elements(iter(events), stack, keys, True, 100)
    assert (status, done, event, deepest) == (1, [{"a": 1}, 2, []], ("", "end_array", None), 0)
    stack, keys = [{}], [None]
    it = iter([("map_key", "a"), ("start_map", None), ("map_key", "b"), ("null", None), ("end_map", None),
               ("end_map", None), ("start_map", None)])
    assert _native.fill_elements(it, stack, keys, False, 100) == (0, [{"a": {"b": None}}], None, 2)
    assert stack == [] and next(it) == ("start_map", None)  # (outside an array: one element)
    stack, keys = [[]], [None]
    assert _native.fill_elements(iter([("integer", 5)]), stack, keys, True, 100) == (2, [], None, 0)
    assert stack == [[5]]
    stack, keys = [[]], [None]
    evs = iter([("end_array", None), ("integer", 1), ("integer", 2), ("integer", 3)])
    assert _native.fill_elements(evs, stack, keys, True, 2) == (0, [[], 1], None, 0)
    assert next(evs) == ("integer", 2)


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer")
def test_a_signal_interrupts_a_long_element() -> None:
    # An endless element from a C iterator (no bytecode runs between events, so only the native
    # loop's signal checks can stop it); one key set again and again: memory stays flat.
    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.02)
        with pytest.raises(KeyboardInterrupt):
            _native.fill_elements(itertools.cycle([("map_key", "a"), ("integer", 1)]), [{}], [None], True, 10)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_the_reference_encoder_is_unchanged() -> None:
    # send() one event at a time (the public push API) gives what send_all gives.
    doc = {"rows": [{"id": i, "x": [i]} for i in range(100)], "n": 1}
    out1, out2 = io.StringIO(), io.StringIO()
    enc = Encoder(out1)
    for ev in events_of(doc):
        enc.send(ev)
    enc.close()
    enc = Encoder(out2)
    enc.send_all(events_of(doc))
    enc.close()
    assert out1.getvalue() == out2.getvalue() == toonstream.dumps(doc)


@pytest.mark.parametrize("engine", [PYTHON, NATIVE], ids=["python", "native"])
def test_cli_json_to_toon(engine: _engine.Engine, tmp_path: Any) -> None:
    from toonstream.cli import main

    doc = {"rows": [{"id": i, "v": i / 2} for i in range(500)], "deep": [[{"a": [1]}]]}
    src = tmp_path / "in.json"
    src.write_text(json.dumps(doc))
    previous = _engine.use(engine)
    try:
        assert main(["encode", str(src), "-o", str(tmp_path / "out.toon")]) == 0
    finally:
        _engine.use(previous)
    assert toonstream.loads((tmp_path / "out.toon").read_text()) == json.loads(json.dumps(doc))


@pytest.mark.parametrize(
    ("evs", "path"),
    [
        ([("start_array", S), ("number", 1), ("start_array", S), ("end_map", S)], (1,)),
        ([("start_array", S), ("start_map", S), ("map_key", "a"), ("start_array", S), ("number", 1),
          ("start_map", S), ("map_key", "b"), ("bogus", 1)], (0, "a", 1)),
        ([("start_map", S), ("map_key", "k"), ("start_array", S), ("null", S), ("start_map", S),
          ("map_key", "x"), ("map_key", "y")], ("k", 1)),
        ([("start_map", S), ("map_key", "k"), ("start_map", S), ("map_key", "c"), ("start_array", S),
          ("map_key", "z")], ("k", "c")),
        # (a repeated key, whose value is the last but whose place is the first's)
        ([("start_array", S), ("start_map", S), ("map_key", "a"), ("integer", 1), ("map_key", "b"), ("integer", 2),
          ("map_key", "a"), ("start_map", S), ("map_key", "x"), ("end_array", S)], (0, "a")),
    ],
)
def test_malformed_event_errors_name_their_place(engine: str, evs: list[Any], path: tuple[Any, ...]) -> None:
    # An event out of place inside an element is reported at the container it came in, named as
    # dumps names paths (the element's index in the streamed array, or the root member's key).
    with pytest.raises(toonstream.ToonEncodeError) as e:
        encode_events(iter(evs), io.StringIO())
    assert e.value.path == path

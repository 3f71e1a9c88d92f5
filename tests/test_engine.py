"""The engine seam: selection by TOONSTREAM_ENGINE, ``toonstream.engine``, and capability fill-in."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

import toonstream
from toonstream import _engine

from conftest import REPO


def _child(code: str, engine: str | None, *, hide_native: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != _engine.ENGINE_VARIABLE}
    if engine is not None:
        env[_engine.ENGINE_VARIABLE] = engine
    prelude = "import sys; sys.modules['toonstream._native'] = None\n" if hide_native else ""
    return subprocess.run(
        [sys.executable, "-c", prelude + code], env=env, cwd=REPO, capture_output=True, text=True, timeout=60
    )


def _native_built() -> bool:
    try:
        _engine.select("native")
    except ImportError:
        return False
    return True


SHOW = "import toonstream; print(toonstream.engine, '|', toonstream.engine.reason); print(toonstream.loads('a[2]: 1,x'))"


def test_python_by_name() -> None:
    r = _child(SHOW, "python")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["python | TOONSTREAM_ENGINE=python", "{'a': [1, 'x']}"]


def test_unset_takes_the_fastest_available() -> None:
    r = _child(SHOW, None)
    assert r.returncode == 0, r.stderr
    name = r.stdout.split(" |")[0]
    assert name == ("native" if _native_built() else "python")


def test_unset_without_native_falls_back_and_says_why() -> None:
    r = _child(SHOW, "", hide_native=True)
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith("python | the native engine is not available ("), first
    assert r.stdout.splitlines()[1] == "{'a': [1, 'x']}"


def test_native_asked_for_but_missing_is_an_import_error() -> None:
    r = _child(SHOW, "native", hide_native=True)
    assert r.returncode == 1
    assert "ImportError: TOONSTREAM_ENGINE=native, but the native engine cannot be used" in r.stderr


def test_unknown_engine_name() -> None:
    r = _child(SHOW, "rust")
    assert r.returncode == 1
    assert "TOONSTREAM_ENGINE must be 'python' or 'native', not 'rust'" in r.stderr


def test_name_is_case_and_space_insensitive() -> None:
    r = _child(SHOW, " Python ")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("python |")


def test_import_does_not_load_the_engine() -> None:
    r = _child("import sys, toonstream; print('toonstream._native' in sys.modules, 'toonstream._engine' in sys.modules)", None)
    assert r.stdout.split() == ["False", "False"]


def test_stale_native_build_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    class Stale:
        API_VERSION = _engine.API_VERSION - 1

    monkeypatch.setitem(sys.modules, "toonstream._native", Stale)
    with pytest.raises(ImportError, match=rf"implements engine API {_engine.API_VERSION - 1}, this package needs {_engine.API_VERSION}: rebuild it"):
        _engine.select("native")
    assert _engine.select(None).name == "python"


class _Recorder:
    """A stand-in engine capability that records its calls and answers from the reference."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def loads(self, data: Any, **options: Any) -> Any:
        self.calls.append(("loads", options))
        previous = _engine.use(_engine.select("python"))
        try:
            return toonstream.loads(data, **options)
        finally:
            _engine.use(previous)

    def value_decoder(self, **options: Any) -> Any:
        self.calls.append(("value_decoder", options))
        chunks: list[Any] = []
        loads = self.loads

        class Push:
            def feed(self, chunk: Any) -> None:
                chunks.append(chunk)

            def close(self) -> Any:
                return loads(b"".join(c.encode() if isinstance(c, str) else bytes(c) for c in chunks), **options)

        return Push()


@pytest.fixture
def recorder() -> Any:
    rec = _Recorder()
    previous = _engine.use(
        _engine.Engine(_engine.EngineName("native", "test"), loads=rec.loads, value_decoder=rec.value_decoder)
    )
    yield rec
    _engine.use(previous)


def test_loads_and_load_go_to_the_engine(recorder: _Recorder, tmp_path: Any) -> None:
    assert toonstream.engine == "native"
    assert toonstream.loads("a: 1", strict=False) == {"a": 1}
    path = tmp_path / "x.toon"
    path.write_text("b[1]: 2\n")
    with open(path, "rb") as f:
        assert toonstream.load(f, max_depth=50) == {"b": [2]}
    (kind1, opts1), (kind2, opts2) = recorder.calls[0], recorder.calls[1]
    assert kind1 == "loads" and opts1["strict"] is False
    assert kind2 == "value_decoder" and opts2["max_depth"] == 50
    assert set(opts1) <= _engine.VALUE_OPTIONS


def test_an_option_the_engine_lacks_runs_on_the_reference(recorder: _Recorder) -> None:
    # a capability takes only VALUE_OPTIONS; anything else set sends the call to the reference
    engine = _engine.current()
    assert engine.values({"strict": True, "object_hook": None})
    assert not engine.values({"strict": True, "object_hook": dict})  # (this engine has no value_hooks)
    assert toonstream.loads("a:\n  b: 1", object_pairs_hook=tuple) == (("a", (("b", 1),)),)
    assert [kind for kind, _ in recorder.calls] == []
    assert not _engine.Engine(_engine.EngineName("python", "test")).values({})


def test_engine_name_is_a_str() -> None:
    name = toonstream.engine
    assert isinstance(name, str) and name in ("python", "native") and name.reason
    assert "engine" in dir(toonstream)


BAD_OPTIONS: list[tuple[dict[str, Any], type[Exception], str]] = [
    ({"max_depth": -1}, ValueError, "max_depth must be >= 0"),
    ({"max_line_length": -5}, ValueError, "max_line_length must be >= 0"),
    ({"max_number_length": -1}, ValueError, "max_number_length must be >= 0"),
    ({"max_fields": -2}, ValueError, "max_fields must be >= 0"),
    ({"indent_size": 0}, ValueError, "indent_size must be >= 1"),
    ({"indent_size": 2.0}, TypeError, "'float' object cannot be interpreted as an integer"),
    ({"max_fields": 2.5}, TypeError, "'float' object cannot be interpreted as an integer"),
]


@pytest.mark.parametrize("bad", BAD_OPTIONS, ids=[str(b[0]) for b in BAD_OPTIONS])
def test_options_are_checked_alike(bad: tuple[dict[str, Any], type[Exception], str], engine: str) -> None:
    options, kind, message = bad
    with pytest.raises(kind) as info:
        toonstream.loads("a: 1", **options)
    assert str(info.value) == message


@pytest.mark.parametrize("options", [{"max_depth": None, "indent_size": None}, {"max_depth": 10**30}, {"max_fields": True}])
def test_odd_but_valid_options(options: dict[str, Any], engine: str) -> None:
    # None is the default; a limit beyond any machine word is no limit
    assert toonstream.loads("a[1]{b}:\n  1", **options) == {"a": [{"b": 1}]}


def test_start_line_is_checked() -> None:
    for bad in (0, -1, 1.0):
        with pytest.raises(ValueError, match="start_line must be an int >= 1"):
            toonstream.Decoder(start_line=bad)  # type: ignore[arg-type]


def test_lone_surrogates_in_a_text_file(engine: str, tmp_path: Any) -> None:
    # The reference keeps them (a file opened with 'surrogateescape'); the native engine takes
    # UTF-8 only, so a seekable file is read again by the reference: the same value either way.
    path = tmp_path / "s.toon"
    path.write_bytes(b"a: 1\nb: x\xff\n")
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        assert toonstream.load(f) == {"a": 1, "b": "x\udcff"}
    assert toonstream.loads("b: x\udcff") == {"b": "x\udcff"}


def test_lone_surrogates_in_a_text_file_for_the_drivers(engine: str, tmp_path: Any) -> None:
    # The native drivers read a seekable text file through first: one holding a lone surrogate is
    # the reference's, from the start (here the first is past the first 64 KiB chunk of rows).
    import io

    from toonstream.tojson import decode_to_json

    doc = "a: x\udcff\nt[2]{k,v}:\n  1,y\ud800\n  2,z\n"
    events = list(toonstream.parse(io.StringIO(doc)))
    assert events[:3] == [("", "start_map", None), ("", "map_key", "a"), ("a", "string", "x\udcff")]
    assert len(events) == 19
    want = [{"k": 1, "v": "y\ud800"}, {"k": 2, "v": "z"}]
    assert list(toonstream.items(io.StringIO(doc), "t.item")) == want
    assert list(toonstream.kvitems(io.StringIO(doc), ""))[1] == ("t", want)
    reader = toonstream.rows(io.StringIO(doc), "t")
    assert list(reader) == [(1, "y\ud800"), (2, "z")] and reader.columns == ["k", "v"]
    out = io.StringIO()
    decode_to_json(io.StringIO(doc), out)
    assert out.getvalue() == '{"a":"x\udcff","t":[{"k":1,"v":"y\ud800"},{"k":2,"v":"z"}]}'
    path = tmp_path / "s.toon"
    path.write_bytes(b"[40001]{k}:\n" + b"  1\n" * 40_000 + b"  x\xff\n")
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        assert list(toonstream.rows(f))[-1] == ("x\udcff",)
        f.seek(0)
        out = io.StringIO()
        decode_to_json(f, out)
        assert out.getvalue().endswith('{"k":"x\udcff"}]')


def test_lone_surrogates_in_chunks_that_cannot_be_read_again(engine: str) -> None:
    # an iterator of str chunks cannot be replayed: the native engine says so (a ValueError)
    chunks = iter(["a: 1\n", "b: x\udcff\n"])
    if engine == "python":
        assert toonstream.load(chunks) == {"a": 1, "b": "x\udcff"}
    else:
        with pytest.raises(_engine.Unsupported, match="lone surrogates"):
            toonstream.load(chunks)

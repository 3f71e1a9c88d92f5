"""What ``decode`` writes: JSON / JSON Lines of the value at a path, table rows
written from row batches (byte-identical to the per-event writer), and the
decode options that apply to some outputs only."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toonstream
from toonstream import _engine
from conftest import chunkings
from toonstream import ToonDecodeError
from toonstream.tojson import _column_texts, _run, _scalar, decode_to_json, decode_to_jsonl

CLI = [sys.executable, "-m", "toonstream"]


def run(*args: str, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*CLI, *args], input=input, capture_output=True, timeout=120)


def to_json(doc: str, **kw: Any) -> str:
    out = io.StringIO()
    decode_to_json(doc, out, **kw)
    return out.getvalue()


def to_jsonl(doc: str, **kw: Any) -> str:
    out = io.StringIO()
    decode_to_jsonl(doc, out, **kw)
    return out.getvalue()


def error_of(fn: Any, *args: Any, **kw: Any) -> ToonDecodeError:
    with pytest.raises(ToonDecodeError) as info:
        fn(*args, **kw)
    return info.value


# ---------------------------------------------------------------------- paths

DOC = """\
count: 3
data:
  users[3]{id,name}:
    1,Ada
    2,Bob
    3,Cy
  tags[2]: x,y
groups[2]:
  - name: a
    rows[2]{v}:
      1
      2
  - name: b
    rows[1]{v}:
      3
ages[2:]{age}:
  ada: 36
  bob: 41
"""


def test_lone_surrogates_from_a_str_are_escaped_in_json_bytes() -> None:
    """A str input's lone surrogate (kept, as json.loads keeps "\\ud800") has no UTF-8 form:
    a binary file gets its JSON escape (the same value read back), a text file the character."""
    doc = 'a\udc80: x\ud800y\nt[2]{k}:\n  "\udfff"\n  z'
    want = {"a\udc80": "x\ud800y", "t": [{"k": "\udfff"}, {"k": "z"}]}
    out = io.BytesIO()
    decode_to_json(doc, out)
    assert json.loads(out.getvalue()) == want and out.getvalue().isascii()
    text = io.StringIO()
    decode_to_json(doc, text)
    assert text.getvalue() == json.dumps(want, ensure_ascii=False, separators=(",", ":"))
    out = io.BytesIO()
    decode_to_jsonl(doc, out, path="t")
    assert [json.loads(line) for line in out.getvalue().splitlines()] == want["t"]


@pytest.mark.parametrize(
    ("token", "text"),
    [
        ("10e99999999999999999", "1e+100000000000000000"),
        ("-15.0e99999999999999999", "-1.5e+100000000000000000"),
        ("0.1e-99999999999999999", "1e-100000000000000000"),
        ("1" * 9997 + "e1", "1." + "1" * 9996 + "e+9997"),
        ("1e400", "1e+400"),
        ("1" * 10_001, "1" * 10_001),  # (read with a larger max_number_length)
        ("-" + "9" * 15_000 + ".5", "-9." + "9" * 14_999 + "5e+14999"),
    ],
)
def test_numbers_beyond_the_encoders_limits_are_written(engine: str, token: str, text: str) -> None:
    """Valid TOON whose canonical form the TOON encoders refuse (an exponent of 18 digits, a token
    past 10,000 characters): JSON and a String column have no such limit, and get it all the same
    (a ToonEncodeError leaked from these decode paths)."""
    options = {"max_number_length": 40_000}
    doc = f"a: {token}"
    out = io.BytesIO()
    decode_to_json(doc, out, **options)
    assert out.getvalue() == b'{"a":' + text.encode() + b"}"
    assert json.loads(out.getvalue(), parse_float=Decimal, parse_int=Decimal)["a"] == Decimal(token)
    out = io.BytesIO()
    decode_to_jsonl(f"[2]: x,{token}", out, **options)
    assert out.getvalue().splitlines()[1] == text.encode()
    import toonstream.polars as tp

    # (a String column holds the number's exact text, as JSON has it: an underflow too, which a
    # float would make 0.0)
    got = tp.read_toon(f"t[2]{{x}}:\n  abc\n  {token}".encode(), **options)["x"].to_list()
    assert got == ["abc", text]


def test_json_of_the_value_at_a_path() -> None:
    assert to_json(DOC, path="data.users") == '[{"id":1,"name":"Ada"},{"id":2,"name":"Bob"},{"id":3,"name":"Cy"}]'
    assert to_json(DOC, path="data.tags", indent=2) == '[\n  "x",\n  "y"\n]'
    assert to_json(DOC, path="count") == "3"
    assert to_json(DOC, path="ages") == '{"ada":{"age":36},"bob":{"age":41}}'  # a keyed table is an object
    assert to_json(DOC, path="") == to_json(DOC) == json.dumps(toonstream.loads(DOC), separators=(",", ":"))


def test_jsonl_of_the_array_at_a_path() -> None:
    assert to_jsonl(DOC, path="data.users") == '{"id":1,"name":"Ada"}\n{"id":2,"name":"Bob"}\n{"id":3,"name":"Cy"}\n'
    assert to_jsonl(DOC, path="data.tags") == '"x"\n"y"\n'
    assert to_jsonl(DOC, path="groups") == '{"name":"a","rows":[{"v":1},{"v":2}]}\n{"name":"b","rows":[{"v":3}]}\n'
    # several arrays at one path (through "item"): their elements one after the other,
    # as parquet/arrow/csv read the tables at such a path as one
    assert to_jsonl(DOC, path="groups.item.rows") == '{"v":1}\n{"v":2}\n{"v":3}\n'


def test_path_errors_name_the_path() -> None:
    e = error_of(to_jsonl, DOC, path="count")
    assert (e.code, e.msg) == ("not_array", "the value at path 'count' is a number, not an array (JSON Lines are an array's elements)")
    e = error_of(to_jsonl, DOC, path="ages")
    assert e.code == "not_array" and "'ages' is an object" in e.msg
    e = error_of(to_jsonl, DOC)  # no path: the root must be an array
    assert e.code == "not_array" and "root" in e.msg
    for fn in (to_json, to_jsonl):
        e = error_of(fn, DOC, path="data.nope")
        assert (e.code, e.msg, e.line) == ("not_found", "no value at path 'data.nope'", DOC.count("\n"))
    e = error_of(to_json, DOC, path="groups.item.name")  # two values: JSON output is one
    assert e.code == "ambiguous_path" and "'groups.item.name'" in e.msg
    e = error_of(to_json, DOC, path="data.users.item.name")  # table rows hold the path: three values
    assert e.code == "ambiguous_path"


@pytest.mark.parametrize("strict", [True, False])
def test_a_path_into_table_rows_names_the_row_line(strict: bool) -> None:
    """A path error met in a table's rows names that row's line, under any chunking: in a small
    table, in a run of rows long enough to be read as a block, across a non-strict blank line,
    in a keyed table's entries.  (Each case: path, JSON's ambiguous_path line, JSON Lines'
    not_array line.)"""
    nb = 0 if strict else 1
    blank = "\n" * nb
    rows = "".join(f"  {i},{i}\n" for i in range(40))
    cases = [
        ("t[3]{a,b}:\n  1,2\n" + blank + "  3,4\n  5,6\n", "t.item.a", 3 + nb, 2),
        ("x:\n  y: 1\nt[40]{a,b}:\n" + rows, "t.item.b", 5, 4),
        ("x:\n  y: 1\nt[40]{a,b}:\n" + rows[:-1] + blank + "\n", "t.item", 5, 4),
        ("u[2:]{x,y}:\n  a: 1,2\n" + blank + "  b: 3,4\n", "u.b", None, 3 + nb),
    ]
    if not strict:  # (a repeated entry key: two values at one path)
        cases.append(("u[2:]{x,y}:\n  a: 1,2\n\n  a: 3,4\n", "u.a", 4, 2))
    for doc, path, json_line, jsonl_line in cases:
        for name, chunks in chunkings(doc.encode(), seeds=(1, 2)):
            where = (doc, path, name)
            if json_line is not None:
                e = error_of(to_json, chunks, path=path, strict=strict)
                assert (e.code, e.line) == ("ambiguous_path", json_line), where
            e = error_of(to_jsonl, chunks, path=path, strict=strict)
            assert (e.code, e.line) == ("not_array", jsonl_line), where


def test_path_matches_what_items_finds() -> None:
    # One meaning of a path: the values toonstream.items() finds there.
    for path in ["count", "data", "data.users", "data.users.item", "data.users.item.name", "data.tags",
                 "data.tags.item", "groups", "groups.item", "groups.item.name", "groups.item.rows",
                 "groups.item.rows.item", "groups.item.rows.item.v", "ages", "ages.ada", "ages.bob.age", "nope", ""]:
        found = list(toonstream.items(DOC, path))
        if len(found) == 1:
            assert json.loads(to_json(DOC, path=path), parse_float=Decimal) == found[0], path
        else:
            assert error_of(to_json, DOC, path=path).code == ("not_found" if not found else "ambiguous_path"), path
        if found and all(type(v) is list for v in found):
            lines = to_jsonl(DOC, path=path).splitlines()
            assert [json.loads(x, parse_float=Decimal) for x in lines] == [x for v in found for x in v], path
        else:
            assert error_of(to_jsonl, DOC, path=path).code == ("not_found" if not found else "not_array"), path


# ------------------------------------------------- table rows: the same bytes as per event

# Cell tokens: every number form (exponents, trailing zeros, negative zero, beyond
# int64 and float, big ints past str()'s digit limit), strings that need escapes
# in JSON, look like numbers or hold "%", booleans and null.
_NUMBERS = [
    "0", "-0", "7", "-12", "9007199254740993", "123456789012345678901234567890", "9" * 4500,
    "1.5", "-2.25", "1.50", "0.0", "-0.0", "3.0", "0.000001", "0.0000001", "1e5", "1E-7", "-1.25e+30",
    "123456789012345678901.5", "1234567890123456789012.5", "-123456789012345678901.5", "2.5e-300",
    "1e999999", "0.1000000000000000055511151231257827",
]
_STRINGS = [
    "abc", "héllo wörld", "日本語", "a b", "%s", "%d%%", "007", "1.", ".5", "+5", "NaN", "Infinity",
    '"quoted, comma"', '"esc \\" \\\\ \\n \\t \\r"', '"%(x)s"', '"true"', '""', '"42"', '"a:b"',
]
_OTHER = ["true", "false", "null"]
TOKENS = st.sampled_from(_NUMBERS + _STRINGS + _OTHER)
NAMES = ["id", "name", "a%b", "%s", "x y", "é", "k.dot", 'q"uote', "", "v"]


def _key(name: str) -> str:
    return name if name.isidentifier() else json.dumps(name, ensure_ascii=False)


@st.composite
def field_trees(draw: Any, depth: int = 0) -> list[Any]:
    """A header's fields: names (unique per group) with nested groups (depth <= 2)."""
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True))
    out: list[Any] = []
    for name in names:
        if depth < 2 and draw(st.integers(0, 4)) == 0:
            out.append((name, draw(field_trees(depth + 1))))
        else:
            out.append(name)
    return out


def _header(fields: list[Any]) -> str:
    return "{" + ",".join(_key(f) if isinstance(f, str) else _key(f[0]) + _header(f[1]) for f in fields) + "}"


def _width(fields: list[Any]) -> int:
    return sum(1 if isinstance(f, str) else _width(f[1]) for f in fields)


@st.composite
def tables(draw: Any, key: str, indent: int) -> list[str]:
    """Lines of a table member ``key`` (or a root table for key "") at ``indent``:
    many rows of one column kind (the column-wise path), or a mix."""
    fields = draw(field_trees())
    width = _width(fields)
    n = draw(st.sampled_from([0, 1, 3, 9, 40]))
    keyed = bool(key) and draw(st.integers(0, 3)) == 0
    kinds = [draw(st.sampled_from([_NUMBERS, _STRINGS, _OTHER, _NUMBERS + _STRINGS + _OTHER])) for _ in range(width)]
    pad = " " * indent
    lines = [f"{pad}{_key(key) if key else ''}[{n}{':' if keyed else ''}]{_header(fields)}:"]
    for i in range(n):
        cells = ",".join(draw(st.sampled_from(k)) for k in kinds)
        entry = f"{_key(draw(st.sampled_from(NAMES)) + str(i))}: " if keyed else ""
        lines.append(f"{pad}  {entry}{cells}")
    return lines


@st.composite
def documents(draw: Any) -> str:
    layout = draw(st.sampled_from(["root", "object", "items"]))
    if layout == "root":
        lines = draw(tables("", 0))
    elif layout == "object":
        lines = ["pre: 1", *draw(tables("t", 0)), "obj:", *draw(tables("u", 2)), "  after: x", *draw(tables("t2", 0))]
    else:
        k = draw(st.integers(1, 3))
        lines = [f"[{k}]:"]
        for i in range(k):
            lines += [f"  - id: {i}", *draw(tables("t", 4))]
    doc = "\n".join(lines) + "\n"
    return draw(_corrupted(doc))


@st.composite
def _corrupted(draw: Any, doc: str) -> str:
    """Now and then an error: a bad line, a wrong count, a row too wide."""
    what = draw(st.integers(0, 9))
    lines = doc.split("\n")
    if what == 0 and len(lines) > 2:
        i = draw(st.integers(1, len(lines) - 2))
        lines[i] = lines[i] + draw(st.sampled_from([',"open', ",1", ": x", ' "x" y']))
    elif what == 1:
        return doc.replace("[9]", "[10]", 1).replace("[3]{", "[2]{", 1)
    return "\n".join(lines)


# (entry keys are NAMES + the row number: "t.id0" is a keyed table's first entry)
PATHS = [None, "", "t", "t.item", "obj.u", "item.t", "t2", "item", "nope", "t.item.id", "obj", "t.id0", "obj.u.v1.v"]
MODES = [("json", None), ("json", 2), ("json", 0), ("jsonl", None)]


def outcome(chunks: list[bytes], mode: tuple[str, int | None], path: str | None, strict: bool, table_rows: bool) -> Any:
    """The reference engine's two ways of writing a table's rows (tests/test_native_json.py
    compares the native writer with it)."""
    out = io.BytesIO()
    previous = _engine.use(_engine.select("python"))
    try:
        _run(
            iter(chunks), out, indent=mode[1], jsonl=mode[0] == "jsonl", path=path,
            options={"strict": strict}, table_rows=table_rows,
        )
    except ToonDecodeError as e:
        return out.getvalue(), (e.code, e.line, e.column, e.msg)
    finally:
        _engine.use(previous)
    return out.getvalue(), None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(documents(), st.sampled_from(MODES), st.sampled_from(PATHS), st.booleans())
@pytest.mark.slow
def test_table_rows_write_the_bytes_of_the_event_path(doc: str, mode: tuple[str, int | None], path: str | None, strict: bool) -> None:
    data = doc.encode()
    whole = outcome([data], mode, path, strict, table_rows=False)
    for name, chunks in chunkings(data, seeds=(1,)):
        if name == "bytewise" and len(data) > 3000:
            continue
        want = outcome(chunks, mode, path, strict, table_rows=False)
        assert outcome(chunks, mode, path, strict, table_rows=True) == want, name
        # Every chunking: the same output and error (a path error into a table's rows names its row's line).
        assert want == whole, name


_DECIMAL_TEXTS = st.one_of(
    st.decimals(allow_nan=True, allow_infinity=True),
    st.sampled_from([Decimal(t) for t in ["-0", "-0.0", "0", "0E-7", "1E+2", "1.50", "-1234567890123456789012", "123456789012345678901",
                                          "-123456789012345678901.5", "1e-6", "9.99e-7", "sNaN", "-Infinity"]]),
    st.builds(Decimal, st.from_regex(r"-?[0-9]{1,30}(\.[0-9]{1,30})?([eE][-+]?[0-9]{1,3})?", fullmatch=True)),
)
_VALUES = st.one_of(
    _DECIMAL_TEXTS,
    st.integers(),
    st.sampled_from([10**5000, -(10**4000), 2**13000 - 1, -(2**13000)]),
    st.floats(),
    st.booleans(),
    st.none(),
    st.text(),
)


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.lists(_DECIMAL_TEXTS, min_size=1), st.lists(_VALUES, min_size=1),
                 st.lists(st.one_of(_DECIMAL_TEXTS, st.integers(), st.none()), min_size=1)))
@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_column_texts_are_the_per_value_texts(col: list[Any]) -> None:
    assert _column_texts(col) == list(map(_scalar, col))
    assert _column_texts(tuple(col)) == list(map(_scalar, col))  # (row batches give tuples)


def test_exact_decimals_with_parse_float_keep_their_text() -> None:
    # parse_float=Decimal keeps a negative zero, which the default normalizes
    doc = "[9]{x}:\n" + "".join(f"  {t}\n" for t in ["-0", "-0.0", "1.50", "2", "1e3", "-0", "0.5", "7", "8"])
    for rows in (True, False):
        out = io.StringIO()
        _run(doc, out, indent=None, jsonl=True, path=None, options={"parse_float": Decimal}, table_rows=rows)
        assert out.getvalue().split() == ['{"x":0}', '{"x":0}', '{"x":1.5}', '{"x":2}', '{"x":1000}', '{"x":0}', '{"x":0.5}', '{"x":7}', '{"x":8}']


def test_table_rows_make_no_event_per_cell(monkeypatch: Any) -> None:
    # The rows of a table (flat, nested field groups, keyed) reach the writer
    # as row batches: the triples it is given do not grow with the rows.
    from toonstream import tojson

    pushed: list[int] = []
    push = tojson.EventJsonWriter.push

    def counting(self: Any, triples: list[Any]) -> None:
        pushed.append(len(triples))
        push(self, triples)

    monkeypatch.setattr(tojson.EventJsonWriter, "push", counting)
    n = 5000
    flat = "[%d]{id,name,score}:\n" % n + "".join(f"  {i},user {i},{i / 8}\n" for i in range(n))
    nested = "t[%d]{id,geo{lat,lon}}:\n" % n + "".join(f'  {i},"{i}",{i}.5\n' for i in range(n))
    keyed = "k[%d:]{a,b}:\n" % n + "".join(f"  e{i}: {i},x\n" for i in range(n))
    for doc, fn, kw in [(flat, to_jsonl, {}), (flat, to_json, {"indent": 2}), (nested, to_jsonl, {"path": "t"}),
                        (nested, to_json, {}), (keyed, to_json, {})]:
        pushed.clear()
        text = fn(doc, **kw)
        assert json.loads(text if fn is to_json else "[" + ",".join(text.splitlines()) + "]")
        assert sum(pushed) < 20, (doc[:20], kw, sum(pushed))


# ---------------------------------------------------------------------- the CLI

def _decode_parser() -> Any:
    from toonstream import cli

    sub = next(a for a in cli._parser()._actions if a.dest == "command")
    return sub.choices["decode"]


# A value for each output-specific option (the test below fails for an option missing here).
SAMPLES = {
    "--indent": ["2"],
    "--infer-schema-length": ["5"],
    "--key-field": ["k"],
    "--schema-overrides": ["id=Int64"],
    "--try-parse-dates": [],
}
OUTPUTS = ["json", "jsonl", "parquet", "arrow", "csv"]


def test_every_output_specific_option_is_checked() -> None:
    from toonstream.cli import _DECODE_OUTPUT_OPTIONS

    checked = {option for option, _ in _DECODE_OUTPUT_OPTIONS.values()}
    for action in _decode_parser()._actions:
        specific = (action.help or "").split(":")[0] in ("json", "jsonl", "parquet/arrow/csv")
        if specific:
            assert action.option_strings[-1] in checked, action.option_strings
            assert action.default is None, action.option_strings  # "not given" is told by None
    assert checked == set(SAMPLES)


@pytest.mark.parametrize("output", OUTPUTS)
@pytest.mark.parametrize("option", sorted(SAMPLES))
def test_an_option_for_other_outputs_is_a_usage_error(tmp_path: Path, option: str, output: str, capsys: Any) -> None:
    from toonstream.cli import _DECODE_OUTPUT_OPTIONS, main

    outputs = next(outs for opt, outs in _DECODE_OUTPUT_OPTIONS.values() if opt == option)
    src = tmp_path / "in.toon"
    src.write_text("[2]{id,name}:\n  1,Ada\n  2,Bob\n")
    args = ["decode", str(src), "--to", output, "-o", str(tmp_path / f"out.{output}"), option, *SAMPLES[option]]
    if output not in outputs:
        with pytest.raises(SystemExit) as info:
            main(args)
        assert info.value.code == 2
        lines = capsys.readouterr().err.splitlines()
        assert lines[0].startswith("usage: toonstream decode ")  # (the subcommand's usage, as argparse's own errors)
        err = lines[-1]
        assert err == f"toonstream decode: error: {option} applies to --to {'/'.join(outputs)} only, not to --to {output}"
        assert not (tmp_path / f"out.{output}").exists()
    else:
        assert main(args) == 0, capsys.readouterr().err
        assert (tmp_path / f"out.{output}").stat().st_size > 0


@pytest.mark.parametrize("args", [["--to", "jsonl", "--indent", "0"], ["--key-field", "key"], ["--to", "jsonl", "--infer-schema-length", "0"]])
def test_an_option_given_with_its_default_value_is_still_given(tmp_path: Path, args: list[str]) -> None:
    src = tmp_path / "in.toon"
    src.write_text("[1]{id}:\n  1\n")
    r = run("decode", str(src), *args)
    assert r.returncode == 2 and b"applies to --to" in r.stderr and r.stdout == b""


@pytest.mark.slow  # (a long property sweep or subprocess run: CI runs it)
def test_cli_path_for_json_and_jsonl(tmp_path: Path) -> None:
    src = tmp_path / "doc.toon"
    src.write_text(DOC)
    r = run("decode", str(src), "--path", "data.users", "--indent", "1")
    assert r.returncode == 0 and r.stdout.decode() == json.dumps(toonstream.loads(DOC)["data"]["users"], indent=1) + "\n"
    r = run("decode", str(src), "--to", "jsonl", "--path", "groups.item.rows", "-o", str(tmp_path / "o.jsonl"))
    assert r.returncode == 0 and (tmp_path / "o.jsonl").read_text() == '{"v":1}\n{"v":2}\n{"v":3}\n'
    r = run("decode", str(src), "--to", "csv", "--path", "data.users")  # one meaning of --path for every output
    assert r.returncode == 0 and r.stdout.decode().splitlines() == ['"id","name"', '1,"Ada"', '2,"Bob"', '3,"Cy"']
    for to, path, msg in [("jsonl", "count", "the value at path 'count' is a number, not an array"),
                          ("json", "data.nope", "no value at path 'data.nope'"),
                          ("jsonl", "data.nope", "no value at path 'data.nope'")]:
        r = run("decode", str(src), "--to", to, "--path", path, "-o", str(tmp_path / "x.out"))
        assert r.returncode == 1 and r.stderr.count(b"\n") == 1, r.stderr
        assert r.stderr.decode().startswith(f"{src}:") and msg in r.stderr.decode()
        assert not (tmp_path / "x.out").exists()


def _table_chunks(n: int) -> Any:
    yield f"meta:\n  name: demo\nt[{n}]{{id,name,score,ok,note}}:\n".encode()
    for start in range(0, n, 500):
        yield "".join(f'  {i},user{i},{i * 0.25},{"true" if i % 2 else "false"},"a, b {i}"\n'
                      for i in range(start, min(n, start + 500))).encode()
    yield b"tail: 1\n"


class _Null(io.RawIOBase):
    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        return len(b)


@pytest.mark.parametrize("fn,kw", [(decode_to_jsonl, {"path": "t"}), (decode_to_json, {"path": "t"}), (decode_to_json, {"indent": 2})])
@pytest.mark.slow
def test_json_outputs_of_a_path_stream_in_flat_memory(fn: Any, kw: dict[str, Any]) -> None:
    import tracemalloc

    def peak(n: int) -> int:
        import gc

        gc.collect()  # (garbage of earlier tests, freed during the measure, made it vary)
        tracemalloc.start()
        try:
            fn(_table_chunks(n), _Null(), **kw)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    # 10x the input (5 MB of JSON from the large one): the peak stays within what the writers
    # buffer (64 KiB of text, a chunk of input), not proportional to the input
    small, large = peak(10_000), peak(100_000)
    assert large < small * 1.2 + (128 << 10), (small, large)

"""pyarrow and polars are optional: the main job runs without them, the table
features say which extra to install.

Each check runs in a fresh interpreter whose import system hides the
packages (a ``sitecustomize`` on PYTHONPATH puts a finder first on
``sys.meta_path`` that reports them missing, as an environment without them
would), so the installed copies in this venv cannot leak in.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import toonstream
from toonstream._optional import MissingExtraError, requires

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "sample.jsonl"

_SITECUSTOMIZE = '''
import os, sys

class _Hide:
    """Report the packages in TOONSTREAM_TEST_HIDE (and their submodules) missing."""
    hidden = tuple(filter(None, os.environ.get("TOONSTREAM_TEST_HIDE", "").split(",")))

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in self.hidden:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _Hide())
'''


@pytest.fixture(scope="module")
def site_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("hide")
    (d / "sitecustomize.py").write_text(_SITECUSTOMIZE)
    return d


def _run(site_dir: Path, hide: str, args: list[str], stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TOONSTREAM_TEST_HIDE=hide)
    env["PYTHONPATH"] = os.pathsep.join([str(site_dir), str(ROOT), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120,
        input=None if stdin is None else stdin.decode(),
    )


def _python(site_dir: Path, hide: str, code: str) -> subprocess.CompletedProcess[str]:
    return _run(site_dir, hide, ["-c", textwrap.dedent(code)])


def test_the_finder_really_hides_them(site_dir: Path) -> None:
    r = _python(site_dir, "pyarrow,polars", """
        for name in ("pyarrow", "polars", "pyarrow.compute"):
            try:
                __import__(name)
            except ModuleNotFoundError:
                pass
            else:
                raise SystemExit(name + " imported")
    """)
    assert r.returncode == 0, r.stderr + r.stdout


def test_main_job_without_pyarrow_and_polars(site_dir: Path) -> None:
    r = _python(site_dir, "pyarrow,polars", """
        import io, sys
        import toonstream
        doc = {"users": [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Bob"}], "tags": ["a", "b"]}
        text = toonstream.dumps(doc)
        assert toonstream.loads(text) == doc
        buf = io.StringIO()
        toonstream.dump(doc, buf)
        assert toonstream.load(io.StringIO(buf.getvalue())) == doc
        assert list(toonstream.items(io.BytesIO(text.encode()), "users.item")) == doc["users"]
        assert len(list(toonstream.parse(io.BytesIO(text.encode())))) > 0
        assert list(toonstream.rows(io.BytesIO(text.encode()), "users")) == [(1, "Ada"), (2, "Bob")]
        out = io.StringIO()
        toonstream.encode_records(doc["users"], out)
        assert out.getvalue() == toonstream.dumps(doc["users"])
        assert "pyarrow" not in sys.modules and "polars" not in sys.modules
        print("ok")
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


@pytest.mark.parametrize(
    ("hide", "code", "extra", "feature"),
    [
        ("pyarrow,polars", "import toonstream.arrow", "arrow", "toonstream.arrow"),
        ("pyarrow,polars", "import toonstream.polars", "polars", "toonstream.polars"),
        ("pyarrow,polars", "import toonstream._frames", "polars", "reading TOON tables"),
        ("pyarrow,polars", "import toonstream._arrow_encode", "arrow", "encoding Arrow data"),
        # polars alone is enough to import toonstream.polars; writing goes through Arrow
        ("pyarrow", "import polars as pl, toonstream.polars as tp; tp.write_toon(pl.DataFrame({'a': [1]}), None)",
         "arrow", "toonstream.polars.write_toon"),
        # pyarrow alone: encode_arrow works (tested below), reading into Arrow needs polars
        ("polars", "import toonstream.arrow as ta; ta.read_table(b'[1]{a}:\\n  1\\n')", "polars",
         "reading TOON into Arrow"),
        ("polars", "import toonstream.arrow as ta; ta.iter_batches(b'[1]{a}:\\n  1\\n')", "polars",
         "reading TOON into Arrow"),
    ],
)
def test_table_features_name_the_extra(site_dir: Path, hide: str, code: str, extra: str, feature: str) -> None:
    r = _python(site_dir, hide, f"""
        import json
        try:
            {code}
        except ImportError as e:
            print(json.dumps([type(e).__name__, str(e), getattr(e, "extra", None), e.name]))
        else:
            print("no error")
    """)
    assert r.returncode == 0, r.stderr
    kind, message, got_extra, name = json.loads(r.stdout)
    assert kind == "MissingExtraError"
    assert f"pip install 'toonstream[{extra}]'" in message
    assert feature in message
    assert got_extra == extra
    assert name == {"arrow": "pyarrow", "polars": "polars"}[extra]


def test_one_package_suffices_for_its_own_features(site_dir: Path) -> None:
    r = _python(site_dir, "polars", """
        import io, pyarrow as pa, toonstream, toonstream.arrow as ta
        t = pa.table({"id": [1, 2], "name": ["Ada", "Bob"]})
        out = io.StringIO()
        ta.encode_arrow(t, out)
        assert out.getvalue() == toonstream.dumps(t.to_pylist())
        print("ok")
    """)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
    r = _python(site_dir, "pyarrow", """
        import toonstream.polars as tp
        assert tp.read_toon(b"[2]{a,b}:\\n  1,x\\n  2,y\\n").rows() == [(1, "x"), (2, "y")]
        assert tp.scan_toon(b"[2]{a,b}:\\n  1,x\\n  2,y\\n").collect().height == 2
        print("ok")
    """)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_cli_main_job_without_pyarrow_and_polars(site_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "sample.toon"
    r = _run(site_dir, "pyarrow,polars", ["-m", "toonstream", "encode", str(SAMPLE), "-o", str(out), "--stats"])
    assert r.returncode == 0, r.stderr
    records = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    assert out.read_text() == toonstream.dumps(records)
    back = _run(site_dir, "pyarrow,polars", ["-m", "toonstream", "decode", str(out), "--to", "jsonl"])
    assert back.returncode == 0, back.stderr
    assert [json.loads(line) for line in back.stdout.splitlines()] == records
    as_json = _run(site_dir, "pyarrow,polars", ["-m", "toonstream", "decode", str(out), "--to", "json"])
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout) == records
    back_in = _run(site_dir, "pyarrow,polars", ["-m", "toonstream", "encode", "-", "--from", "json"],
                   stdin=as_json.stdout.encode())
    assert back_in.returncode == 0, back_in.stderr
    assert back_in.stdout.rstrip("\n") == toonstream.dumps(records)


@pytest.mark.parametrize(
    ("hide", "args", "extra"),
    [
        ("pyarrow,polars", ["decode", "{toon}", "--to", "parquet", "-o", "{tmp}/x.parquet"], "polars"),
        ("pyarrow", ["decode", "{toon}", "--to", "csv"], "arrow"),
        ("pyarrow,polars", ["encode", "{csv}"], "arrow"),
        ("polars", ["decode", "{toon}", "--to", "csv", "--schema-overrides", "a=Int64"], "polars"),
    ],
)
def test_cli_table_commands_name_the_extra(site_dir: Path, tmp_path: Path, hide: str, args: list[str], extra: str) -> None:
    toon = tmp_path / "t.toon"
    toon.write_text("[2]{a,b}:\n  1,x\n  2,y\n")
    csv = tmp_path / "t.csv"
    csv.write_text("a,b\n1,x\n")
    argv = [a.format(toon=toon, csv=csv, tmp=tmp_path) for a in args]
    r = _run(site_dir, hide, ["-m", "toonstream", *argv])
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    assert f"pip install 'toonstream[{extra}]'" in r.stderr
    assert not (tmp_path / "x.parquet").exists()


def test_requires_translates_only_pyarrow_and_polars() -> None:
    with pytest.raises(MissingExtraError) as info:
        with requires("a feature"):
            raise ModuleNotFoundError("No module named 'polars'", name="polars")
    assert str(info.value).startswith("a feature needs polars, which is not installed: pip install 'toonstream[polars]'")
    assert isinstance(info.value, ImportError) and isinstance(info.value.__cause__, ModuleNotFoundError)
    # Another missing module (say one of pyarrow's own dependencies) is not cured by the extra.
    with pytest.raises(ModuleNotFoundError) as other:
        with requires("a feature"):
            raise ModuleNotFoundError("No module named 'numpy'", name="numpy")
    assert not isinstance(other.value, MissingExtraError)
    # A missing submodule of an installed pyarrow is not either.
    with pytest.raises(ModuleNotFoundError) as sub:
        with requires("a feature"):
            raise ModuleNotFoundError("No module named 'pyarrow._flight'", name="pyarrow._flight")
    assert not isinstance(sub.value, MissingExtraError)
    # Nested blocks name the outermost feature: the one the caller used.
    with pytest.raises(MissingExtraError, match="^outer needs pyarrow"):
        with requires("outer"):
            with requires("inner"):
                raise ModuleNotFoundError("No module named 'pyarrow'", name="pyarrow")


def test_import_toonstream_loads_neither() -> None:
    r = subprocess.run(
        [sys.executable, "-c", "import sys, toonstream, toonstream.cli; "
         "assert 'pyarrow' not in sys.modules and 'polars' not in sys.modules"],
        capture_output=True, text=True, timeout=60,
    )
    assert r.returncode == 0, r.stderr


def test_metadata_extras() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {d.split(">")[0].split("=")[0].strip() for d in meta["dependencies"]}
    assert "pyarrow" not in names and "polars" not in names
    extras = meta["optional-dependencies"]
    for extra, packages in {"arrow": {"pyarrow"}, "polars": {"polars"}, "all": {"pyarrow", "polars"}}.items():
        assert {d.split(">")[0] for d in extras[extra]} == packages
        assert packages <= {d.split(">")[0] for d in extras["test"]}  # the suite runs the table features
    assert meta["license"] == "MIT" and meta["license-files"] == ["LICENSE"]
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    assert (ROOT / "toonstream" / "py.typed").exists()


def test_missing_extra_error_pickles_and_copies() -> None:
    """A process pool sends a worker's error back pickled: MissingExtraError's keyword-only
    arguments made that a TypeError (a broken pool, a hung multiprocessing.Pool)."""
    import copy
    import pickle

    from toonstream._optional import MissingExtraError

    e = MissingExtraError("reading needs pyarrow", name="pyarrow", extra="arrow")
    for back in (pickle.loads(pickle.dumps(e)), copy.copy(e), copy.deepcopy(e)):
        assert type(back) is MissingExtraError and str(back) == str(e)
        assert (back.name, back.extra) == ("pyarrow", "arrow")

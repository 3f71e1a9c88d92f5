"""The package's layers: a module imports only from its own layer or the ones below it
(README, "Architecture"), so the reference engine never depends on a driver, a driver never
on an adapter, and nothing but the seam loads the native module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "toonstream"

#: lowest first; a module not listed here fails the test (a new module must be placed)
LAYERS: list[tuple[str, set[str]]] = [
    ("base", {"_errors", "_optional", "_engine", "_atomic"}),
    ("reference engine", {"_reference"}),
    ("drivers", {"_consumers", "decoder", "encoder", "streaming", "tojson", "_parallel", "_jsonscan"}),
    ("adapters", {"_frames", "_nested", "_arrow_encode", "_csv", "arrow", "polars", "ranges", "spark", "dask"}),
    ("tools", {"stats", "tokens", "llm"}),
    ("command line", {"cli", "_signals", "__main__"}),
    ("package", {"__init__"}),
]


def _layer(top: str) -> int:
    for i, (_, names) in enumerate(LAYERS):
        if top in names:
            return i
    raise AssertionError(f"toonstream.{top} is in no layer of tests/test_layout.py")


def _modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).with_suffix("")
        found.append((".".join(rel.parts), path))
    return found


def _imports(name: str, path: Path) -> set[str]:
    """The package's modules ``name`` imports, as dotted names below ``toonstream``."""
    parts = name.split(".")
    package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = [*base, *(node.module.split(".") if node.module else [])]
            elif node.module and node.module.split(".")[0] == "toonstream":
                target = node.module.split(".")[1:]
            else:
                continue
            if target:
                out.add(".".join(target))
            else:  # from . import x, y
                out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "toonstream" and "." in alias.name:
                    out.add(alias.name.split(".", 1)[1])
    return out


@pytest.mark.parametrize("name,path", _modules(), ids=[n for n, _ in _modules()])
def test_lower_layers_never_import_higher_ones(name: str, path: Path) -> None:
    mine = _layer(name.split(".")[0])
    for target in sorted(_imports(name, path)):
        top = target.split(".")[0]
        if top in ("__version__", "_native"):
            assert top != "_native" or name == "_engine", f"{name} imports the native module directly"
            continue
        assert _layer(top) <= mine, (
            f"toonstream.{name} ({LAYERS[mine][0]}) imports toonstream.{target} ({LAYERS[_layer(top)][0]})"
        )


def test_every_layer_is_checked() -> None:
    # the walk above sees the subpackage's modules, and the test is not vacuous
    names = [n for n, _ in _modules()]
    assert "_reference.machine" in names and "decoder" in names
    assert "_errors" in _imports("_reference.lines", PACKAGE / "_reference" / "lines.py")
    assert "_reference.machine" in _imports("decoder", PACKAGE / "decoder.py")


def test_the_native_binding_names_existing_python_paths() -> None:
    # The binding imports a few Python names by their dotted path (the error classes, the event
    # classes, the exact-Decimal parse_float it recognises by identity): each must exist, or the
    # binding would fail (or silently lose a fast path) after a move.
    import importlib
    import re

    sources = (PACKAGE.parent / "native" / "py" / "src").glob("*.rs")
    found = set()
    for path in sources:
        text = path.read_text()
        found |= set(re.findall(r'import\(\s*py,\s*"(toonstream[\w.]*)",\s*"(\w+)"', text))
        found |= {(m, "decimal_float") for m in re.findall(r'py\.import\("(toonstream[\w.]*)"\)', text)}
    assert ("toonstream._reference.numbers", "decimal_float") in found
    for module, name in sorted(found):
        assert hasattr(importlib.import_module(module), name), (module, name)

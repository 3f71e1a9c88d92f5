"""The optional dependencies (pyarrow, polars): the one place that turns
their absence into an error naming the extra that installs them.

Every import of pyarrow or polars in the package sits in a
``with requires(feature):`` block, so that ``import toonstream`` and the
main job (loads/dumps, the streaming drivers, the command line's JSON/JSONL
<-> TOON) never need them, and a table feature used without them says what
to install instead of a bare ``No module named 'pyarrow'``.

>>> with requires("toonstream.arrow"):
...     import sys
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

__all__ = ["MissingExtraError", "EXTRAS", "requires"]

#: top-level module -> the extra of the toonstream distribution that installs it
EXTRAS = {"pyarrow": "arrow", "polars": "polars", "dask": "dask", "distributed": "dask", "pyspark": "spark"}


class MissingExtraError(ModuleNotFoundError):
    """A table feature was used without the optional package it needs.

    ``extra`` is the toonstream extra that installs it (``"arrow"`` or
    ``"polars"``); the message gives the ``pip install`` command.  A
    ``ModuleNotFoundError`` (an ``ImportError``) as the missing package's own
    would be, so that code written for the bare error still catches it.

    >>> e = MissingExtraError("x needs pyarrow", name="pyarrow", extra="arrow")
    >>> e.extra, isinstance(e, ImportError)
    ('arrow', True)
    """

    def __init__(self, message: str, *, name: str, extra: str) -> None:
        super().__init__(message, name=name)
        self.extra = extra

    def __reduce__(self) -> tuple[Any, ...]:
        # (pickle, copy: its keyword-only arguments; a process pool sends the error back)
        return (_missing_extra, (str(self), self.name, self.extra))


def _missing_extra(message: str, name: str, extra: str) -> MissingExtraError:
    return MissingExtraError(message, name=name, extra=extra)


@contextmanager
def requires(feature: str) -> Iterator[None]:
    """Imports in the block that fail because pyarrow or polars is missing
    raise :class:`MissingExtraError` naming ``feature`` and the extra.

    Nested blocks (a public function importing a module that has its own
    block) report the outermost feature: the one the caller used.  Only a
    missing pyarrow/polars is translated: any other import error
    (one of their own dependencies, a broken installation) propagates as it
    is, since installing the extra would not fix it.
    """
    try:
        yield
    except ModuleNotFoundError as e:
        root = (e.name or "").partition(".")[0]
        extra = EXTRAS.get(root)
        if extra is None or e.name != root and _importable(root):
            raise
        raise MissingExtraError(
            f"{feature} needs {root}, which is not installed: pip install 'toonstream[{extra}]' "
            "(or 'toonstream[all]' for every table feature)",
            name=root,
            extra=extra,
        ) from e


def _importable(name: str) -> bool:
    """Whether the top-level package itself imports (a missing submodule of
    an installed pyarrow, e.g. pyarrow.parquet built without Parquet, is not
    cured by the extra)."""
    import importlib

    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True

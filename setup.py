"""Build hook for the optional native engine (``toonstream._native``, Rust + PyO3).

All metadata lives in pyproject.toml; this file only declares the extension.
It is optional: without a Rust toolchain (no ``cargo``), setuptools-rust skips
it and the package installs with the pure-Python engine, which
``toonstream.engine`` then reports.  Release mode always (a debug build of the
decoder is many times slower).
"""

from setuptools import setup
from setuptools_rust import Binding, RustExtension

setup(
    rust_extensions=[
        RustExtension(
            "toonstream._native",
            path="native/py/Cargo.toml",
            binding=Binding.PyO3,
            py_limited_api=False,  # built for the installing interpreter (see native/py/Cargo.toml)
            optional=True,
            debug=False,
        )
    ],
)

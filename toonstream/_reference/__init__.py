"""The reference engine: TOON in pure Python, complete and plain.

Every API of the package works on it alone (``TOONSTREAM_ENGINE=python``);
the native engine (``toonstream._native``) must agree with it exactly.
Decoding runs bytes → :mod:`.lines` → :mod:`.machine` (the sans-I/O state
machine; :mod:`.headers` parses §6 headers for it, :mod:`.blocks` holds its
block paths, :mod:`.scalars` and :mod:`.numbers` read tokens) → :mod:`.events`
→ :mod:`.build` (values, rows as dicts); encoding runs host values →
:mod:`.normalize` → :mod:`.writer` (lines, headers) and :mod:`.columns`
(column-wise rows), with :mod:`.shape` deciding tables and their fields,
and :mod:`.quoting` and :mod:`.numbers` for scalar text.  :mod:`.grammar` holds the lexical patterns.  Nothing here imports
the drivers, the adapters or the command line above it.
"""

"""Lexical patterns of TOON 4.0, each next to the spec section it implements.

Only patterns and character sets live here; the code that applies them is in
``_scalars.py`` (tokens), ``_numbers.py`` (numbers) and ``_machine.py`` (lines
and structure).  The encoder's §7.2 quoting rule and §7.1 escapes are in
``_quoting.py``.
"""

from __future__ import annotations

import re

# §4 number grammar (decoder side), ASCII digits only.  A leading zero is
# allowed only as the whole integer part ("0", "0.5", "-0e1"); "05" is a string.
# Its parts (regex sources, without groups) are used to build the patterns
# that look for numbers in a whole column (``_numbers``, ``_frames``).
NUMBER_INTEGER = r"-?(?:0|[1-9][0-9]*)"
NUMBER_FRACTION = r"\.[0-9]+"
NUMBER_EXPONENT = r"[eE][+-]?[0-9]+"
# Groups: 1 = fraction, 2 = exponent (both optional).
NUMBER = re.compile(f"{NUMBER_INTEGER}({NUMBER_FRACTION})?({NUMBER_EXPONENT})?")

# First characters that can start a §4 number; everything else skips the regex.
NUMBER_START = frozenset("-0123456789")

# §4 literal tokens.
KEYWORDS: dict[str, object] = {"true": True, "false": False, "null": None}

# §7.3 keys an encoder may leave unquoted (also the §6 ``unquoted-key`` rule).
UNQUOTED_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")

# §6 bracket-segment length: "0" or a non-zero digit followed by digits.
LENGTH = re.compile(r"0|[1-9][0-9]*")

# §11 delimiters: the character, and the symbol a header carries for it.
DELIMITERS = (",", "\t", "|")
HEADER_SYMBOL = {",": "", "\t": "\t", "|": "|"}

# §7.1 decoder escapes (the character after the backslash).
UNESCAPES = {"\\": "\\", '"': '"', "n": "\n", "r": "\r", "t": "\t"}
HEX4 = re.compile(r"[0-9A-Fa-f]{4}")

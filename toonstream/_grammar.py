"""Lexical patterns of TOON 4.0, each next to the spec section it implements.

Only patterns and character sets live here; the code that applies them is in
``_scalars.py`` (tokens) and ``_machine.py`` (lines and structure).
"""

from __future__ import annotations

import re

# §4 number grammar (decoder side), ASCII digits only.  A leading zero is
# allowed only as the whole integer part ("0", "0.5", "-0e1"); "05" is a string.
# Groups: 1 = fraction, 2 = exponent (both optional).
NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")

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

# §7.2 numeric-like strings the encoder must quote (wider than NUMBER: "+1",
# "05" and "1e5" style tokens are quoted for cross-version safety).
_NUMERIC_LIKE = r"[+-]?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"


def _needs_quote_pattern(delimiter: str) -> re.Pattern[str]:
    # One search answers every §7.2 condition at once: empty, leading/trailing
    # whitespace, keywords, numeric-like, structural characters, controls, the
    # relevant delimiter, a leading "-" or "#", and a leading U+FEFF (decoders
    # skip a document's leading BOM: a root string "\ufeffx" must not lose
    # it).  Lone surrogates are matched too so that the (slow) caller can
    # reject them: they cannot be written as UTF-8.
    delim = re.escape(delimiter)
    return re.compile(
        r"\A\Z|\A[ \t\-#\ufeff]|[ \t]\Z|[:\"\\\[\]{}\x00-\x1f\ud800-\udfff" + delim + r"]"
        r"|\A(?:true|false|null)\Z|\A" + _NUMERIC_LIKE + r"\Z"
    )


# §7.2 / §11.1: one compiled pattern per delimiter.
NEEDS_QUOTE = {d: _needs_quote_pattern(d) for d in DELIMITERS}

# §7.1 encoder escapes: backslash, quote, LF, CR, HTAB; other C0 controls as
# lowercase \u00xx.
ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
for _c in range(0x20):
    ESCAPES.setdefault(chr(_c), f"\\u{_c:04x}")
ESCAPE_CHARS = re.compile(r"[\\\"\x00-\x1f]")
SURROGATE = re.compile(r"[\ud800-\udfff]")

# §7.1 decoder escapes (the character after the backslash).
UNESCAPES = {"\\": "\\", '"': '"', "n": "\n", "r": "\r", "t": "\t"}
HEX4 = re.compile(r"[0-9A-Fa-f]{4}")

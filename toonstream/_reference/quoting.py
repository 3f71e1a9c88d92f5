"""§7.2 quoting: when a string must be written in quotes, and how (§7.1).

The rule is defined once, below: the characters that force quotes anywhere,
first or last, the whole strings that read back as literals, and the parts
of the numeric-like pattern.  Every form an encoder applies is generated from
those definitions, never written out again:

- ``NEEDS_QUOTE[delimiter]``: a compiled Python regex, one ``search`` per
  value (the per-value formatter, the row writers);
- ``needs_quote_re2(delimiter)``: the same pattern in RE2 syntax, for
  ``pyarrow.compute`` (the Arrow encoder);
- ``flag_strings(col, delimiter)``: a whole column checked at once by
  byte-level scans over its joined text (the column-wise table formatter);

and ``quote``/``quote_checked``/``encode_key`` write the quoted form.

Example::

    >>> NEEDS_QUOTE[","].search("a,b") is not None, NEEDS_QUOTE["|"].search("a,b") is not None
    (True, False)
    >>> quote('say "hi"')
    '"say \\\\"hi\\\\""'
"""

from __future__ import annotations

import re
from itertools import compress, count, repeat
from typing import Any, Iterable, Sequence

from .._errors import ToonEncodeError
from .grammar import DELIMITERS, KEYWORDS as _LITERAL_TOKENS, UNQUOTED_KEY

# ------------------------------------------------------------------ the rule

#: Characters that force quotes wherever they occur (so does the active
#: delimiter): the structural characters and every C0 control.
ANYWHERE = ':"\\[]{}' + "".join(map(chr, range(0x20)))
#: ... as the first character: whitespace, the list-item marker "-", "#", and
#: U+FEFF (decoders skip a document's leading BOM: a root string "\ufeffx"
#: must not lose it).
LEADING = " \t-#\ufeff"
#: ... as the last character (decoders trim whitespace).
TRAILING = " \t"
#: Whole strings that would read back as literals (§4); the empty string is
#: quoted too.
KEYWORDS = tuple(_LITERAL_TOKENS)
# Numeric-like strings: SIGN? DIGIT+ (POINT DIGIT+)? (EXPONENT SIGN? DIGIT+)?
# Wider than the §4 number grammar ("+1", "05" and "1E5" are quoted too, for
# cross-version safety).
SIGNS = "+-"
DIGITS = "0123456789"
POINT = "."
EXPONENTS = "eE"

# Not part of §7.2: lone surrogates are matched by the Python pattern so that
# its (slow) caller can reject them, as they cannot be written as UTF-8.
_SURROGATES = "".join(map(chr, range(0xD800, 0xE000)))


# ------------------------------------------------------- generated patterns


def _char(cp: int, re2: bool) -> str:
    """One character inside a regex class, escaped for Python's ``re`` or RE2."""
    c = chr(cp)
    if c.isascii() and c.isalnum():
        return c
    if 0x20 < cp < 0x7F:
        return "\\" + c  # ASCII punctuation: both dialects take it escaped
    if re2:
        return f"\\x{{{cp:X}}}"
    return f"\\x{cp:02x}" if cp < 0x100 else f"\\u{cp:04x}"


def char_class(chars: Iterable[str], *, re2: bool = False) -> str:
    """A regex character class matching exactly ``chars`` (runs as ranges),
    in Python ``re`` syntax or, with ``re2``, RE2's.

    >>> char_class("+-0123456789")
    '[\\\\+\\\\-0-9]'
    """
    points = sorted(set(map(ord, chars)))
    parts: list[str] = []
    i = 0
    while i < len(points):
        j = i
        while j + 1 < len(points) and points[j + 1] == points[j] + 1:
            j += 1
        if j - i >= 2:
            parts.append(_char(points[i], re2) + "-" + _char(points[j], re2))
        else:
            parts.extend(_char(p, re2) for p in points[i : j + 1])
        i = j + 1
    return "[" + "".join(parts) + "]"


def _numeric_like(re2: bool) -> str:
    sign, digits = char_class(SIGNS, re2=re2), char_class(DIGITS, re2=re2)
    point, exponent = char_class(POINT, re2=re2), char_class(EXPONENTS, re2=re2)
    return f"{sign}?{digits}+(?:{point}{digits}+)?(?:{exponent}{sign}?{digits}+)?"


def _needs_quote_source(delimiter: str, *, re2: bool) -> str:
    # One search answers every condition at once: empty, a leading or
    # trailing character, a character anywhere (with the delimiter), a
    # keyword, numeric-like.  (The conditions at the start in one group:
    # Python's engine tries each alternative at each position, and one
    # anchored group fails at once past the first; 4x faster on short
    # strings than six alternatives, 2.5x on long ones.)
    start, end = r"\A", (r"\z" if re2 else r"\Z")
    anywhere = ANYWHERE + delimiter + ("" if re2 else _SURROGATES)
    return (
        f"{start}(?:{end}|{char_class(LEADING, re2=re2)}|(?:{'|'.join(map(re.escape, KEYWORDS))}){end}"
        f"|{_numeric_like(re2)}{end})"
        f"|{char_class(anywhere, re2=re2)}|{char_class(TRAILING, re2=re2)}{end}"
    )


def needs_quote_re2(delimiter: str) -> str:
    """The pattern of ``NEEDS_QUOTE[delimiter]`` in RE2 syntax, for
    ``pyarrow.compute.match_substring_regex`` (Arrow strings are valid
    UTF-8, so lone surrogates are left out)."""
    return _needs_quote_source(delimiter, re2=True)


#: §7.2 / §11.1: one compiled pattern per delimiter; ``search`` finds a
#: reason to quote (or a lone surrogate), None when the string may be bare.
NEEDS_QUOTE = {d: re.compile(_needs_quote_source(d, re2=False)) for d in DELIMITERS}


# ----------------------------------------------------------------- writing

#: §7.1 escapes with a name; other C0 controls are written as lowercase
#: \u00xx.  (The backslash first: replacements made in this order escape
#: each character once.)
NAMED_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
ESCAPES = dict(NAMED_ESCAPES)
for _c in range(0x20):
    ESCAPES.setdefault(chr(_c), f"\\u{_c:04x}")
#: What ``quote`` escapes.
ESCAPE_CHARS = re.compile(char_class(ESCAPES))
_SURROGATE = re.compile(char_class(_SURROGATES))


def quote(s: str) -> str:
    """Always quote, escaping per §7.1; lone surrogates cannot be encoded
    (ValueError).

    >>> quote("a\\tb")
    '"a\\\\tb"'
    """
    if _SURROGATE.search(s) is not None:
        raise ValueError("lone surrogate in string (not encodable as UTF-8)")
    return '"' + ESCAPE_CHARS.sub(_escape_one, s) + '"'


def _escape_one(m: Any) -> str:
    return ESCAPES[m.group()]


def quote_checked(s: str) -> str:
    """``quote`` with lone surrogates reported as ToonEncodeError."""
    try:
        return quote(s)
    except ValueError:
        raise ToonEncodeError("string contains a lone surrogate (not encodable as UTF-8)") from None


def encode_key(k: str) -> str:
    """Encode an object key or field name (§7.3): bare when it matches
    ``UNQUOTED_KEY``, else quoted.

    >>> encode_key("user_id"), encode_key("a b")
    ('user_id', '"a b"')
    """
    if UNQUOTED_KEY.fullmatch(k) is not None:
        return k
    return quote(k)


# ----------------------------------------------------------- column filters

# The column-wise check runs over a column's strings joined by "\n", framed
# by "\n" and encoded as UTF-8; every §7.2 condition becomes a byte scan.
_LF = "\n"
if not all(c.isascii() for c in ANYWHERE + TRAILING + SIGNS + DIGITS + POINT + EXPONENTS + "".join(KEYWORDS)):
    # (a UTF-8 multi-byte sequence never holds an ASCII byte: only ASCII
    # characters can be found by a byte scan)
    raise AssertionError("the byte-level column filters assume ASCII characters")
# The characters that force quotes as bytes, without the line feed that
# joins the column (a string holding one is checked one by one).
_FORCING = {d: "".join(sorted(set(ANYWHERE + d) - {_LF})).encode() for d in DELIMITERS}
_FORCING_LF = {d: _FORCING[d] + b"\n" for d in DELIMITERS}
_TO_NUL = {d: bytes.maketrans(_FORCING[d], bytes(len(_FORCING[d]))) for d in DELIMITERS}
_ASCII_LEADS = "".join(c for c in LEADING if c.isascii())
# First characters outside ASCII, as they start a line of the joined column.
_WIDE_LEADS = tuple(_LF.encode() + c.encode() for c in LEADING if not c.isascii())
# (unpacked: the scans below test each one with its own C-level call, far
# cheaper on a short column than a loop; an import error if the rule grows)
(_WIDE_LEAD,) = _WIDE_LEADS
_KW1, _KW2, _KW3 = (f"\n{k}\n".encode() for k in KEYWORDS)  # each keyword as a whole line


def _line_start(leads: str) -> bytes:
    """The alternatives after a line's "\\n" that make it need quotes: a
    first character in ``leads`` or outside ASCII, empty, a keyword."""
    alternatives = [char_class(leads + _LF).encode()]
    alternatives += [re.escape(w[1:]) for w in _WIDE_LEADS]
    alternatives.append(b"(?:" + "|".join(map(re.escape, KEYWORDS)).encode() + rb")\n")
    return b"|".join(alternatives)


# (both begin with a literal "\n": the regex engine skips ahead to it)
_LINE_START = re.compile(rb"\n(?=" + _line_start(_ASCII_LEADS) + rb")")
# Whether _LINE_START finds anything, leaving out the first characters that
# force quotes anyway (a tab).
_LINE_MARK = re.compile(rb"\n(?:" + _line_start("".join(c for c in _ASCII_LEADS if c not in ANYWHERE)) + rb")")
_LINE_END = re.compile(char_class(TRAILING).encode() + rb"(?=\n)")
# Every first character that needs quotes (a leading one, the first of a
# numeric-like string; the empty string too) sorts below this one, except
# the non-ASCII leads and the keywords.
_FIRST_BOUND = chr(1 + max(map(ord, _ASCII_LEADS + SIGNS + DIGITS)))
# A numeric-like string holds these characters only: with them deleted its
# line is empty.
_NUMBER_CHARS = (DIGITS + SIGNS + POINT + EXPONENTS).encode()
_DIGIT_BYTES = DIGITS.encode()
# The skeletons (digits removed) of the numeric-like strings: a superset test.
_NUMBER_SKELETONS = frozenset(
    (s + p + e).encode()
    for s in ("", *SIGNS)
    for p in ("", POINT)
    for e in ("", *(x + y for x in EXPONENTS for y in ("", *SIGNS)))
)
_KEYWORD_SET = frozenset(KEYWORDS)
# A trailing character as it ends a line, for the quick test before the
# scan (a trailing tab forces quotes anyway).
(_TRAILER,) = (c.encode() + b"\n" for c in TRAILING if c not in ANYWHERE)
#: Bytes per string (with its "\n") below which a column's strings count as short.
_SHORT = 12


def _line_index(raw: bytes, positions: list[int]) -> set[int]:
    """Indexes of the lines of ``raw`` (``b"\\n" + b"\\n".join(lines) + b"\\n"``)
    that hold each position (the line feed that ends a line belongs to it)."""
    out: set[int] = set()
    line = -1
    prev = 0
    nl = raw.count
    for p in sorted(positions):
        line += nl(b"\n", prev, p)
        prev = p
        out.add(line)
    return out


def _nul_positions(data: bytes) -> list[int]:
    out = []
    find = data.find
    p = find(0)
    while p != -1:
        out.append(p)
        p = find(0, p + 1)
    return out


def flag_strings(col: Sequence[str], delimiter: str) -> tuple[set[int], set[int]] | None:
    """Which strings of ``col`` need quotes: ``(must, maybe)``, the indexes of
    strings that hold a character that forces quotes, and of strings that
    may need them for another reason (a superset of those that do); or None
    when every string must be checked one by one (a string holds a newline
    or a lone surrogate).  ``NEEDS_QUOTE`` decides the ``maybe`` ones.

    A few C-level scans over the joined, encoded column: ``bytes.translate``
    deletes the characters that force quotes; ``in``, ``rfind`` and ``min``
    look for line starts and ends that do; only when one finds something do
    the regexes run, to find the lines.

    >>> flag_strings(["ok", "a:b", "true", "7"], ",")
    ({1}, {2, 3})
    """
    n = len(col)
    try:
        raw = ("\n" + "\n".join(col) + "\n").encode()
    except UnicodeEncodeError:  # a lone surrogate: the exact formatter reports it
        return None
    must: set[int] = set()
    # One pass counts the forcing bytes and the line feeds (n + 1 are ours).
    bad = len(raw) - len(raw.translate(None, _FORCING_LF[delimiter])) - (n + 1)
    if bad:
        if raw.count(b"\n") != n + 1:  # some string holds a newline
            return None
        marked = raw.translate(_TO_NUL[delimiter])  # every forcing byte becomes NUL
        if bad > n >> 4:  # many: one C-level test per line
            lines = marked[1:-1].split(b"\n")
            must = set(compress(count(), map(bytes.__contains__, lines, repeat(b"\x00"))))
        else:
            must = _line_index(raw, _nul_positions(marked))
    # Every other condition is on a whole line or its first or last
    # character.  Per-string C-level work is cheaper than more scans here:
    # when the smallest string is not below _FIRST_BOUND, only the keywords
    # and the non-ASCII leads remain: searched for in the text when the
    # strings are short, looked up one by one when they are long.
    if min(col) < _FIRST_BOUND or _WIDE_LEAD in raw:
        starts_badly = _LINE_MARK.search(raw) is not None
        numeric = b"\n\n" in raw.translate(None, _NUMBER_CHARS)
    else:
        if len(raw) < _SHORT * n:
            # (rfind: CPython's backward search is faster than ``in`` here)
            rfind = raw.rfind
            starts_badly = -1 != rfind(_KW1) or -1 != rfind(_KW2) or -1 != rfind(_KW3)
        else:
            starts_badly = not _KEYWORD_SET.isdisjoint(col)
        numeric = False
    positions: list[int] = []
    if starts_badly:
        positions = [m.start() + 1 for m in _LINE_START.finditer(raw)]
    if (raw.rfind(_TRAILER) != -1) if len(raw) < 2 * _SHORT * n else (_TRAILER in raw):  # (faster each way)
        positions += [m.start() for m in _LINE_END.finditer(raw)]
    maybe = _line_index(raw, positions) if positions else set()
    if numeric:
        # A numeric-like string holds nothing but _NUMBER_CHARS: the
        # skeletons of those left when the digits are deleted are a superset test.
        lines = raw.translate(None, _DIGIT_BYTES)[1:-1].split(b"\n")
        if not _NUMBER_SKELETONS.isdisjoint(lines):
            maybe.update(compress(count(), map(_NUMBER_SKELETONS.__contains__, lines)))
    return must, maybe

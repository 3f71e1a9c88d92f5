"""Tokens to values and values to tokens.  Pure functions, no state, no I/O.

Errors raised here carry no location: the state machine adds line and column
(``ToonDecodeError.locate``).  Columns reported from here are 0-based offsets
inside the string the helper was given; the machine turns them into columns.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from decimal import Decimal
from itertools import accumulate
from typing import Any, Callable

from ._errors import ToonDecodeError
from ._grammar import (
    ESCAPE_CHARS,
    ESCAPES,
    HEX4,
    KEYWORDS,
    NUMBER,
    NUMBER_START,
    SURROGATE,
    UNESCAPES,
    UNQUOTED_KEY,
)

TokenConverter = Callable[[str], Any]

# CPython refuses int(str) beyond 4300 digits (sys.int_info.str_digits_check_threshold
# guards against quadratic conversions).  Longer integer tokens go through
# Decimal, which has no such limit, instead of changing the process-wide setting.
_INT_STR_SAFE_DIGITS = 4000
_INT_STR_SAFE_BITS = 13_000  # 2**13000 has 3914 decimal digits
# An exponent of more than 17 digits ("e", sign, digits: 19 characters) is
# beyond what Decimal represents (Emax 10**18 - 1): such a token is an error,
# code number_out_of_range, rather than an infinity (documented policy).
_MAX_EXPONENT_CHARS = 19


# --------------------------------------------------------------------- decoding


class _Fail(ToonDecodeError):
    """A ToonDecodeError raised by a helper, with an offset inside its input."""

    def __init__(self, message: str, code: str, offset: int) -> None:
        super().__init__(message, code=code)
        self.offset = offset


def find_unquoted(s: str, ch: str, start: int = 0) -> int:
    """Index of the first ``ch`` at or after ``start`` outside double quotes, or -1.

    Inside quotes a backslash protects the next character (Appendix B.3);
    whether the escape is valid is checked later, when the token is decoded.
    """
    # Every search is bounded by the next candidate, so repeated calls over
    # one line (split_cells) stay linear in its length.
    hit = s.find(ch, start)
    i = start
    while hit != -1:
        q = s.find('"', i, hit)  # does a quoted string open before the candidate?
        if q == -1:
            return hit
        i = _skip_quoted(s, q)
        if i < 0:
            return -1  # unterminated: no unquoted occurrence after it
        if hit < i:  # the candidate was inside the quotes: look again after them
            hit = s.find(ch, i)
    return -1


def _skip_quoted(s: str, q: int) -> int:
    """Given s[q] == '"', the index just past the closing quote, or -1."""
    i = q + 1
    while True:
        end = s.find('"', i)
        if end == -1:
            return -1
        # Count the backslashes right before the quote: an odd number escapes it.
        k = end - 1
        while k >= i and s[k] == "\\":
            k -= 1
        if (end - 1 - k) % 2 == 0:
            return end + 1
        i = end + 1


def split_cells(s: str, delimiter: str) -> list[str]:
    """Split on unquoted ``delimiter``; tokens are returned untrimmed (§11.2)."""
    if '"' not in s:
        return s.split(delimiter)
    if "\\" not in s:
        # Without backslashes a delimiter is quoted exactly when an odd number
        # of quotes precede it: split at C speed, then re-join the pieces of
        # each quoted cell (a running quote parity, not a scan per cell).
        parts = s.split(delimiter)
        if len(parts) == 1:
            return parts
        out: list[str] = []
        group: list[str] = []
        for p in parts:
            if group:
                group.append(p)
                if p.count('"') % 2:
                    out.append(delimiter.join(group))
                    group = []
            elif p.count('"') % 2:
                group.append(p)
            else:
                out.append(p)
        if group:  # unterminated quote: the rest of the line is one token
            out.append(delimiter.join(group))
        return out
    out = []
    start = 0
    while True:
        i = find_unquoted(s, delimiter, start)
        if i == -1:
            out.append(s[start:])
            return out
        out.append(s[start:i])
        start = i + 1


def scan_quoted(s: str, q: int) -> tuple[str, int]:
    """Decode the quoted string starting at ``s[q] == '"'`` (§7.1).

    Returns the value and the index just past the closing quote.
    """
    end = _skip_quoted(s, q)
    if end < 0:
        raise _Fail("unterminated string", "unterminated_string", q)
    body = s[q + 1 : end - 1]
    if "\\" not in body:
        return body, end
    return _unescape(body, q + 1), end


def _unescape(body: str, base: int) -> str:
    parts: list[str] = []
    i = 0
    n = len(body)
    while True:
        j = body.find("\\", i)
        if j == -1:
            parts.append(body[i:])
            return "".join(parts)
        parts.append(body[i:j])
        if j + 1 >= n:  # cannot happen after _skip_quoted, kept for safety
            raise _Fail("unterminated escape", "invalid_escape", base + j)
        c = body[j + 1]
        simple = UNESCAPES.get(c)
        if simple is not None:
            parts.append(simple)
            i = j + 2
            continue
        if c == "u":
            hexdigits = body[j + 2 : j + 6]
            if len(hexdigits) != 4 or not HEX4.fullmatch(hexdigits):
                raise _Fail("\\u needs four hex digits", "invalid_escape", base + j)
            cp = int(hexdigits, 16)
            if 0xD800 <= cp <= 0xDFFF:
                # §7.1: surrogate escapes are rejected, paired or not; a
                # supplementary character must be written as literal UTF-8.
                raise _Fail("surrogate \\u escape", "invalid_escape", base + j)
            parts.append(chr(cp))
            i = j + 6
            continue
        raise _Fail(f"invalid escape \\{c}", "invalid_escape", base + j)


def make_converter(
    *,
    parse_float: Callable[[str], Any] | None = None,
    max_number_length: int = 10_000,
) -> TokenConverter:
    """Build the function that turns one trimmed value token into a value (§4).

    ``parse_float`` is called with the token text of every non-integer number
    (one with a fraction or an exponent), like ``json.loads``.  Without it,
    floats are used; a token whose magnitude overflows a float becomes an exact
    ``Decimal`` instead of ``inf`` (lossless-first, §4), and -0.0 becomes 0.0.
    """

    def number(tok: str, frac: str | None, exp: str | None) -> Any:
        if len(tok) > max_number_length:
            raise _Fail(
                f"number token longer than max_number_length ({max_number_length})",
                "number_too_long",
                0,
            )
        if frac is None and exp is None:
            if len(tok) > _INT_STR_SAFE_DIGITS:
                return int(Decimal(tok))
            return int(tok)
        if exp is not None and len(exp) > _MAX_EXPONENT_CHARS:
            raise _Fail("number exponent out of range", "number_out_of_range", 0)
        if parse_float is not None:
            return parse_float(tok)
        f = float(tok)
        if f == 0.0:
            return 0.0  # §4: -0 decodes to 0
        if math.isinf(f):
            return Decimal(tok)
        return f

    number_match = NUMBER.fullmatch
    keywords = KEYWORDS

    def convert(tok: str) -> Any:
        if not tok:
            return ""
        c = tok[0]
        if c == '"':
            value, end = scan_quoted(tok, 0)
            if end != len(tok):
                raise _Fail("unexpected characters after closing quote", "trailing_characters", end)
            return value
        if c in NUMBER_START:
            m = number_match(tok)
            if m is not None:
                return number(tok, m.group(1), m.group(2))
            return tok
        if tok in keywords:
            return keywords[tok]
        return tok

    return convert


def decimal_float(tok: str) -> Decimal:
    """``parse_float`` for exact decoding, normalizing -0 to 0 (§4)."""
    d = Decimal(tok)
    if d.is_zero() and d.is_signed():
        return d.copy_abs()
    return d


def decode_key(tok: str) -> str:
    """Decode a trimmed key token: quoted keys are unescaped, others literal (§7.4)."""
    if tok[:1] == '"':
        value, end = scan_quoted(tok, 0)
        if end != len(tok):
            raise _Fail("unexpected characters after quoted key", "trailing_characters", end)
        return value
    return tok


# --------------------------------------------------------------------- encoding


def quote(s: str) -> str:
    """Always quote, escaping per §7.1; lone surrogates cannot be encoded."""
    if SURROGATE.search(s) is not None:
        raise ValueError("lone surrogate in string (not encodable as UTF-8)")
    return '"' + ESCAPE_CHARS.sub(_escape_one, s) + '"'


def _escape_one(m: Any) -> str:
    return ESCAPES[m.group()]


def encode_key(k: str) -> str:
    """Encode an object key or field name (§7.3)."""
    if UNQUOTED_KEY.fullmatch(k) is not None:
        return k
    return quote(k)


_EXACT_INT_FLOAT = 2.0**53


def encode_float(x: float) -> str:
    """Canonical §2 form of a float: shortest round-trip digits.

    Plain decimal for 1e-6 <= |x| < 1e21 (and 0), otherwise exponent form with
    lowercase ``e`` and an explicit sign.  NaN and infinities become ``null`` (§3).
    """
    if x != x or x in (math.inf, -math.inf):
        return "null"
    if x == 0.0:
        return "0"
    r = repr(x)
    if "e" not in r:
        if r.endswith(".0"):
            return r[:-2]
        return r
    ax = abs(x)
    if ax >= _EXACT_INT_FLOAT and ax < 1e21:
        # Integer-valued (every float this large is): write its exact digits,
        # so the decoded int equals the float exactly.  The shortest digits
        # ("6.517366420032157e16" -> 65173664200321570) would decode to a
        # different integer.
        return str(int(x))
    if 1e-6 <= ax < 1e21:
        return _plain(Decimal(r))
    mant, _, exp = r.partition("e")
    if mant.endswith(".0"):
        mant = mant[:-2]
    e = int(exp)
    return f"{mant}e{'+' if e >= 0 else '-'}{abs(e)}"


def encode_decimal(d: Decimal) -> str:
    """Exact §2 form of a Decimal (no rounding); NaN/Infinity become ``null``."""
    if not d.is_finite():
        return "null"
    if d.is_zero():
        return "0"
    # No arithmetic here: abs(), normalize() and friends round to the context
    # precision (28 digits by default).  copy_abs, comparisons, as_tuple and
    # format(d, "f") are exact.
    ad = d.copy_abs()
    if _DEC_MIN_PLAIN <= ad < _DEC_MAX_PLAIN:
        return _plain(d)
    sign, digits, exp = d.as_tuple()
    assert isinstance(exp, int)
    ds = "".join(map(str, digits)).rstrip("0")
    exp += len(digits) - len(ds)  # the trailing zeros move into the exponent
    e = exp + len(ds) - 1  # scientific exponent for the form d.ddd
    mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
    return f"{'-' if sign else ''}{mant}e{'+' if e >= 0 else '-'}{abs(e)}"


_DEC_MIN_PLAIN = Decimal("1e-6")
_DEC_MAX_PLAIN = Decimal("1e21")


def _plain(d: Decimal) -> str:
    s = format(d, "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    if s in ("-0", ""):
        return "0"
    return s


def encode_int(i: int) -> str:
    """Exact decimal form of an int of any size."""
    if i.bit_length() < _INT_STR_SAFE_BITS:
        return str(i)
    return format(Decimal(i), "f")


# ------------------------------------------------------------- column decoding

# Whole-column checks over tokens joined by "\n" (no token holds "\n": they
# come from one line each).  Small ints only (< 10**18) take the int() fast
# path, so the digit limits never apply there.
_FLOAT_TOKEN = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)")
_LEADING_ZERO = re.compile(r"\n-?0[0-9]")


def _small_int_column(col: tuple[str, ...], framed: str) -> bool:
    """Every token is a §4 integer of at most 18 digits (C-level string checks)."""
    digits = framed.replace("\n", "").replace("-", "")
    return (
        digits.isascii()
        and digits.isdigit()  # also rules out empty tokens... together with the next checks
        and framed.count("-") == framed.count("\n-")  # "-" only as a sign
        and "\n\n" not in framed
        and "\n-\n" not in framed
        and _LEADING_ZERO.search(framed) is None
        and max(map(len, col)) <= 18
    )
# Tokens that are something other than a plain string: a §4 number, or an
# empty, quoted or literal token.  Both patterns start with a literal "\n", so
# the regex engine jumps from line to line.  Unflagged tokens are returned as
# the strings they are.
_NUMBER_TOKEN = re.compile(r"\n(?=-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\n)")
_SPECIAL_TOKEN = re.compile(r"\n(?=[\"\n]|true\n|false\n|null\n)")
_BOOLS = {"true": True, "false": False}


def make_column_converter(
    convert: TokenConverter,
    *,
    parse_float: Callable[[str], Any] | None = None,
    max_number_length: int = 10_000,
) -> Callable[[tuple[str, ...]], Any]:
    """Build the function that decodes a whole column of trimmed tokens at once.

    Returns a sequence of values equal to ``[convert(t) for t in col]``, using
    C-level ``map(int, ...)`` / ``map(float, ...)`` or returning the tokens
    themselves when a whole column qualifies, and ``convert`` per token
    otherwise (only for the tokens that need it).
    """

    def column(col: tuple[str, ...]) -> Any:
        joined = "\n".join(col)
        framed = "\n" + joined + "\n"
        first = joined[:1]
        if first in NUMBER_START:
            if _small_int_column(col, framed):
                return list(map(int, col))
            if parse_float is None and all(map(_FLOAT_TOKEN.fullmatch, col)) and max(map(len, col)) <= max_number_length:
                values = list(map(float, col))
                if math.inf in values or -math.inf in values:
                    return [convert(t) for t in col]  # overflow follows the token policy
                if 0.0 in values and "-" in joined:
                    values = [v if v else 0.0 for v in values]  # -0.0 -> 0.0 (§4)
                return values
        elif (first == "t" or first == "f") and set(col) <= _BOOLS.keys():
            return list(map(_BOOLS.__getitem__, col))
        positions = [m.start() for m in _NUMBER_TOKEN.finditer(framed)]
        positions += [m.start() for m in _SPECIAL_TOKEN.finditer(framed)]
        if not positions:
            return col  # every token is a plain string
        out = list(col)
        starts = list(accumulate(map(len, col), lambda a, n: a + n + 1, initial=1))
        for p in positions:
            i = bisect_right(starts, p + 1) - 1
            out[i] = convert(col[i])
        return out

    return column

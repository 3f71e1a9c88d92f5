"""§4 numbers: the limits, number tokens to values (one token, or a whole
column at once) and values to number tokens.  Pure functions, no state, no I/O.

Typing a token also decides the other primitives (quoted strings, literals),
since a token is a number only if it is nothing else.  Errors carry an offset
inside the token, as ``_scalars``' do.

Example::

    >>> convert = make_converter()
    >>> convert("42"), convert("-0.0"), convert("05"), convert("true")
    (42, 0.0, '05', True)
    >>> make_column_converter(convert)(["1", "2.5", "x"])
    [1, 2.5, 'x']
    >>> encode_float(1e-7), encode_int(10**20)
    ('1e-7', '100000000000000000000')
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import deque
from decimal import Decimal
from itertools import accumulate, compress, count, repeat
from operator import not_
from typing import Any, Callable, Sequence

from .._errors import ToonEncodeError
from .grammar import KEYWORDS, NUMBER, NUMBER_EXPONENT, NUMBER_FRACTION, NUMBER_INTEGER, NUMBER_START
from .scalars import Fail, scan_quoted

TokenConverter = Callable[[str], Any]

# CPython refuses int(str) beyond 4300 digits (sys.int_info.str_digits_check_threshold
# guards against quadratic conversions).  Longer integer tokens go through
# Decimal, which has no such limit, instead of changing the process-wide setting.
_INT_STR_SAFE_DIGITS = 4000
INT_STR_SAFE_BITS = 13_000  # 2**13000 has 3914 decimal digits
# An exponent of more than 17 significant digits (leading zeros and the sign
# do not count: "1e00000000000000000001" is 10) is an error, code
# number_out_of_range, rather than an infinity (documented policy).  Up to 17
# digits every token converts exactly: its adjusted exponent stays below 10**17
# plus max_number_length, far within Decimal's Emax (10**18 - 1).
MAX_EXPONENT_DIGITS = 17
# The decoders' default max_number_length: the encoders refuse a number whose
# token would be longer (what dumps writes, loads reads back).
MAX_NUMBER_LENGTH = 10_000


def exponent_in_range(exp: str) -> bool:
    """Whether an exponent part (``e``, an optional sign, digits) has at most
    ``MAX_EXPONENT_DIGITS`` significant digits."""
    if len(exp) <= MAX_EXPONENT_DIGITS + 1:  # (the common case: nothing to count)
        return True
    return len(exp[1:].lstrip("+-").lstrip("0")) <= MAX_EXPONENT_DIGITS



# ------------------------------------------------------------- decoding


def make_converter(
    *,
    parse_float: Callable[[str], Any] | None = None,
    parse_int: Callable[[str], Any] | None = None,
    max_number_length: int = MAX_NUMBER_LENGTH,
) -> TokenConverter:
    """Build the function that turns one trimmed value token into a value (§4).

    ``parse_float`` is called with the token text of every non-integer number
    (one with a fraction or an exponent), ``parse_int`` with that of every
    integer, like ``json.loads`` (after the ``max_number_length`` check).
    Without them, ints and floats are used; a token whose magnitude overflows
    a float becomes an exact ``Decimal`` instead of ``inf`` (lossless-first,
    §4), and -0.0 becomes 0.0.
    """
    to_int: Callable[[str], Any] = int if parse_int is None else parse_int

    def number(tok: str, frac: str | None, exp: str | None) -> Any:
        if len(tok) > max_number_length:
            raise Fail(
                f"number token longer than max_number_length ({max_number_length})",
                "number_too_long",
                0,
            )
        if frac is None and exp is None:
            if parse_int is not None:
                return parse_int(tok)
            if len(tok) > _INT_STR_SAFE_DIGITS:
                return int(Decimal(tok))
            return int(tok)
        if exp is not None and not exponent_in_range(exp):
            raise Fail(
                f"number exponent out of range (more than {MAX_EXPONENT_DIGITS} significant digits)",
                "number_out_of_range",
                0,
            )
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
    # (the usual small int skips the regex, not the length limit)
    fast_digits = min(18, max_number_length)

    def convert(tok: str) -> Any:
        if not tok:
            return ""
        c = tok[0]
        if c == '"':
            value, end = scan_quoted(tok, 0)
            if end != len(tok):
                raise Fail("unexpected characters after closing quote", "trailing_characters", end)
            return value
        if c in NUMBER_START:
            # (the usual small int: no regex; isascii rules out other digits)
            if tok.isdigit() and tok.isascii() and (c != "0" or len(tok) == 1) and len(tok) <= fast_digits:
                return to_int(tok)
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


# ------------------------------------------------------------- encoding


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
    """Exact §2 form of a Decimal (no rounding); NaN/Infinity become ``null``.

    Raises ToonEncodeError for a number the decoders would refuse (see
    ``encode_int``; also an exponent of more than ``MAX_EXPONENT_DIGITS``
    digits)."""
    return _decimal_text(d, limits=True)


def decimal_value_text(d: Decimal) -> str:
    """A Decimal as a decoder's output writes it (JSON, a String column): ``encode_decimal``'s
    form without its limits (an exponent of at most 17 digits, a token of at most
    ``max_number_length`` characters: TOON's decoders', not JSON's).

    >>> decimal_value_text(Decimal("1.50")), decimal_value_text(Decimal("-15.0e99999999999999999"))
    ('1.5', '-1.5e+100000000000000000')
    """
    return _decimal_text(d, limits=False)


def _decimal_text(d: Decimal, *, limits: bool) -> str:
    if not d.is_finite():
        return "null"
    if d.is_zero():
        return "0"
    # No arithmetic here: abs(), normalize() and friends round to the context
    # precision (28 digits by default).  copy_abs, comparisons, as_tuple and
    # format(d, "f") are exact.
    sign, digits, exp = d.as_tuple()
    assert isinstance(exp, int)
    # (the coefficient's trailing zeros are not written: 1.000 is 1; counted only for a long one)
    ds = "".join(map(str, digits)).rstrip("0") if len(digits) > MAX_NUMBER_LENGTH else ""
    if limits and len(ds) > MAX_NUMBER_LENGTH:  # (no need to write it out)
        raise too_long(None)
    if _DEC_MIN_PLAIN <= d.copy_abs() < _DEC_MAX_PLAIN:
        text = _plain(d)
        return _checked_length(text) if limits else text
    ds = ds or "".join(map(str, digits)).rstrip("0")
    exp += len(digits) - len(ds)  # the trailing zeros move into the exponent
    e = exp + len(ds) - 1  # scientific exponent for the form d.ddd
    if limits and len(str(abs(e))) > MAX_EXPONENT_DIGITS:
        raise ToonEncodeError(
            f"number exponent out of range: {abs(e)} has more than {MAX_EXPONENT_DIGITS} digits,"
            " which TOON decoders refuse (number_out_of_range)"
        )
    mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
    text = f"{'-' if sign else ''}{mant}e{'+' if e >= 0 else '-'}{abs(e)}"
    return _checked_length(text) if limits else text


def int_value_text(i: int) -> str:
    """An int as a decoder's output writes it: its digits, at any length (``encode_int``'s
    limit is TOON's decoders', not JSON's).

    >>> len(int_value_text(10 ** 20_000))
    20001
    """
    if i.bit_length() < INT_STR_SAFE_BITS:
        return str(i)
    return format(Decimal(i), "f")  # (str() stops at the process's int digit limit)


def too_long(size: int | None) -> ToonEncodeError:
    """The refusal of a number whose token has ``size`` characters (None:
    more than MAX_NUMBER_LENGTH, not counted)."""
    has = f"more than {MAX_NUMBER_LENGTH}" if size is None else str(size)
    return ToonEncodeError(
        f"number too long: its token would have {has} characters, more than the decoders'"
        f" default max_number_length ({MAX_NUMBER_LENGTH}): loads() could not read it back"
    )


def _checked_length(text: str) -> str:
    if len(text) > MAX_NUMBER_LENGTH:
        raise too_long(len(text))
    return text


_DEC_MIN_PLAIN = Decimal("1e-6")
_DEC_MAX_PLAIN = Decimal("1e21")


def _plain(d: Decimal) -> str:
    s = format(d, "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    if s in ("-0", ""):
        return "0"
    return s


# Above this many bits an int has more than MAX_NUMBER_LENGTH digits
# (2**33220 > 10**10000): refused before any (slow) conversion to digits.
_MAX_INT_BITS = 33_220


def encode_int(i: int) -> str:
    """Exact decimal form of an int.

    Raises ToonEncodeError when the token would be longer than
    ``MAX_NUMBER_LENGTH`` characters (the decoders' default
    ``max_number_length``): what the encoders write, ``loads`` reads back."""
    if i.bit_length() < INT_STR_SAFE_BITS:
        return str(i)
    if i.bit_length() > _MAX_INT_BITS:
        raise too_long(None)
    return _checked_length(format(Decimal(i), "f"))


# ------------------------------------------------------------- column decoding

# A column is checked as a whole, over its tokens joined by "\n" and framed by
# "\n" on both sides (no token holds "\n": each comes from one line), encoded
# as UTF-8.  Deleting the ASCII digits leaves each token's "skeleton" (a UTF-8
# multi-byte sequence never holds an ASCII byte, so any text works).  Tokens
# whose skeleton is "", "-", "." or "-." are plain §4 numbers (no exponent)
# exactly when, besides, no token is empty or "-", "-" only starts a token,
# "." sits between digits and no integer part has a leading zero: all of it
# C-level searches over the bytes, much cheaper than a regex per token.
_DIGITS = b"0123456789"
_PLAIN_NUMBER_SKELETONS = frozenset((b"", b"-", b".", b"-."))
_INT_SKELETONS = frozenset((b"", b"-"))
_PLAIN_NUMBER_LINES = tuple(b"\n" + s + b"\n" for s in _PLAIN_NUMBER_SKELETONS)
# What is left of any §4 number token without its digits ("-1.5e+3": "-.e+"):
# a column none of whose tokens leaves one of these has no number at all.
_NUMBER_SKELETONS = frozenset(
    sign + frac + exp
    for sign in (b"", b"-")
    for frac in (b"", b".")
    for exp in (b"", b"e", b"e+", b"e-", b"E", b"E+", b"E-")
)
_NOT_PLAIN_NUMBER = (b"\n\n", b"\n-\n", b"\n.", b"-.", b".\n")
# After mapping 1-9 to "1", a leading zero shows as one of these.
_ONE_TO_NINE = bytes.maketrans(b"123456789", b"111111111")
_LEADING_ZEROS = (b"\n00", b"\n01", b"\n-00", b"\n-01")
# Tokens other than plain strings: a §4 number, or an empty, quoted or literal
# token.  Both patterns start with a literal "\n", so the regex engine jumps
# from line to line (cheaper than any byte search for such short needles).
_NUMBER_TOKEN = re.compile(rf"\n(?={NUMBER_INTEGER}(?:{NUMBER_FRACTION})?(?:{NUMBER_EXPONENT})?\n)")
# (also a token that starts with a space: a padded cell, see column())
_SPECIAL_TOKEN = re.compile(r"\n(?=[\" \n]|" + "|".join(rf"{re.escape(k)}\n" for k in KEYWORDS) + ")")
_BOOLS = {k: v for k, v in KEYWORDS.items() if type(v) is bool}
_BULK = 64  # this many number tokens in a mixed column are converted together
_PLUS_ONE = (1).__add__


def _plain_skeletons(skeleton: bytes, other: bytes) -> bool:
    """Every line of ``skeleton`` (a framed column without its digits) is one
    of ``_PLAIN_NUMBER_SKELETONS`` ("", "-", ".", "-."), checked without a
    split: only "-", "." and LF are left, and no "-" or "." follows another
    within a line except in "-.".  ``other``: ``skeleton`` without LF, "-"
    and "." (shared with ``_maybe_numbers``)."""
    return not (other or b"--" in skeleton or b".." in skeleton or b".-" in skeleton)


def _maybe_numbers(skeleton: bytes, other: bytes) -> bool:
    """Whether some line of ``skeleton`` (see ``_plain_skeletons``) is what
    is left of a §4 number (``_NUMBER_SKELETONS``): if not, no token is one."""
    if other:  # letters, exponents, ":", "/": look line by line
        return not _NUMBER_SKELETONS.isdisjoint(skeleton[1:-1].split(b"\n"))
    return any(map(skeleton.__contains__, _PLAIN_NUMBER_LINES))


def _plain_numbers(raw: bytes) -> bool:
    """Every token of the framed column ``raw``, whose skeletons are plain
    (``_plain_skeletons``), is a §4 number without exponent."""
    return (
        not any(map(raw.__contains__, _NOT_PLAIN_NUMBER))
        and raw.count(b"-") == raw.count(b"\n-")
        and not any(map(raw.translate(_ONE_TO_NINE).__contains__, _LEADING_ZEROS))
    )


def make_column_converter(
    convert: TokenConverter,
    *,
    parse_float: Callable[[str], Any] | None = None,
    parse_int: Callable[[str], Any] | None = None,
    max_number_length: int = MAX_NUMBER_LENGTH,
) -> Callable[[Sequence[str]], Any]:
    """Build the function that decodes a whole column of tokens at once
    (cells padded with spaces are trimmed first, as the per-line path does).

    Returns a sequence of values equal to ``[convert(t) for t in col]``, using
    C-level ``map(int, ...)`` / ``map(float, ...)`` or returning the tokens
    themselves when a whole column qualifies, and ``convert`` per token
    otherwise (only for the tokens that need it).
    """
    # int() and float() agree with ``convert`` on plain number tokens up to
    # this length (longer ones have their own rules: Decimal, the limit).
    short = min(max_number_length, _INT_STR_SAFE_DIGITS)
    to_int: Callable[[str], Any] = int if parse_int is None else parse_int

    def plain_numbers(col: Sequence[str], framed: str) -> list[Any] | bool:
        """The values of ``col`` (``framed`` is its tokens joined and framed by
        "\n") if every token is a plain number (see ``_plain_numbers``);
        else whether some token may be a number at all."""
        raw = framed.encode("utf-8", "surrogatepass")
        skeleton = raw.translate(None, _DIGITS)
        # (C-level searches over the skeleton; no split unless needed)
        other = skeleton.translate(None, b"\n-.")
        if not _plain_skeletons(skeleton, other):
            return _maybe_numbers(skeleton, other)
        if not _plain_numbers(raw):
            return True
        if max(map(len, col)) > short:
            return list(map(convert, col))  # long tokens have their own rules
        if b"." not in skeleton:
            return list(map(to_int, col))
        is_int = list(map(_INT_SKELETONS.__contains__, skeleton[1:-1].split(b"\n")))
        values: list[Any]
        if parse_float is None:
            values = list(map(float, col))
            if math.inf in values or -math.inf in values:
                return list(map(convert, col))  # overflow follows the token policy (Decimal)
            if 0.0 in values:
                values = [v if v else 0.0 for v in values]  # -0.0 -> 0.0 (§4)
        else:
            # parse_float sees the non-integers only, as convert() gives them
            values = list(col)
            fracs = list(compress(count(), map(not_, is_int)))
            # (Decimal itself when no token can be a negative zero)
            parse = Decimal if parse_float is decimal_float and b"\n-0." not in raw else parse_float
            deque(map(values.__setitem__, fracs, map(parse, map(col.__getitem__, fracs))), maxlen=0)
        ints = list(compress(count(), is_int))
        if ints:  # "802" among "802.5": an int, as convert() gives
            deque(map(values.__setitem__, ints, map(to_int, map(col.__getitem__, ints))), maxlen=0)
        return values

    def column(col: Sequence[str]) -> Any:
        framed = "\n".join(["", *col, ""])
        first = col[0][:1] if col else ""
        maybe_numbers = True
        if first in NUMBER_START:
            values = plain_numbers(col, framed)
            if type(values) is list:
                return values
            # (e.g. dates: "2024-01-31" looks numeric to the first character
            # only; its skeleton "--" rules out every number, no regex needed)
            maybe_numbers = bool(values)
        elif (first == "t" or first == "f") and set(col) <= _BOOLS.keys():
            return list(map(_BOOLS.__getitem__, col))
        specials = [m.start() for m in _SPECIAL_TOKEN.finditer(framed)]
        if framed.rfind(" \n") != -1 or (specials and framed.rfind("\n ") != -1):
            # Cells padded with spaces around the delimiters: trimmed, as the
            # per-line path trims them.  (Checked here, on the columns that
            # are neither numbers nor booleans, whose checks already rule
            # spaces out; "\n " is looked for only if some token is special.)
            return column(list(map(str.strip, col, repeat(" "))))
        numbers = [m.start() for m in _NUMBER_TOKEN.finditer(framed)] if maybe_numbers else []
        if not numbers and not specials:
            return col  # every token is a plain string
        out = list(col)
        # where each token starts in `framed` (C-level: lengths + 1, summed)
        starts = list(accumulate(map(_PLUS_ONE, map(len, col)), initial=1))
        if len(numbers) >= _BULK:
            # e.g. a numeric column with nulls: its numbers converted at once
            idx = [bisect_right(starts, p + 1) - 1 for p in numbers]
            tokens = list(map(col.__getitem__, idx))
            values = plain_numbers(tokens, "\n".join(["", *tokens, ""]))
            if type(values) is list:
                deque(map(out.__setitem__, idx, values), maxlen=0)
                numbers = []
        for p in numbers + specials:
            i = bisect_right(starts, p + 1) - 1
            out[i] = convert(col[i])
        return out

    return column

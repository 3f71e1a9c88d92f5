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
from collections import deque
from itertools import accumulate, compress, count, repeat
from operator import not_
from typing import Any, Callable, Sequence

from ._errors import ToonDecodeError, ToonEncodeError
from ._grammar import HEX4, KEYWORDS, NUMBER, NUMBER_START, UNESCAPES

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


def split_columns(
    text: str, line_start: str, d: str, width: int, nrows: int, patches: list[tuple[int, list[str]]]
) -> list[list[str]] | None:
    """The cell columns of ``nrows`` rows, given as ``text``: each row is
    ``line_start`` (LF + indentation) then its cells joined by ``d``.  None
    when some row does not have ``width`` cells.

    One C-level split of the whole block and one slice per column, instead of
    a list per row and a transposition: a row start becomes a delimiter
    followed by LF, so after the split exactly the rows' first cells start
    with LF.  If all ``nrows`` of those sit at the indexes ``1 + k * width``
    and the total is ``1 + nrows * width`` cells, every row has ``width``.
    ``patches`` put the tokens of quoted rows in place of their placeholders.
    """
    flat = text.replace(line_start, d + "\n").split(d)
    if len(flat) != 1 + nrows * width:
        return None
    firsts = "".join(flat[1::width])
    # Checked before the patches go in: a patch writes a row start at the
    # place where its row should begin, which would hide a shift (a row too
    # wide and another too narrow around a quoted row).
    if firsts.count("\n") != nrows:
        return None
    if patches:
        for row, tokens in patches:  # (placeholders have the right width)
            at = 1 + row * width
            flat[at] = "\n" + tokens[0]
            flat[at + 1 : at + width] = tokens[1:]
        firsts = "".join(flat[1::width])
    columns = [firsts.split("\n")[1:]]
    columns += [flat[k::width] for k in range(2, width + 1)]
    return columns


def quoted_rows(text: str, plen: int, d: str, width: int, nrows: int) -> tuple[str, list[tuple[int, list[str]]], int]:
    """Take the lines with quotes out of a block's ``text`` (LF + line, per row).

    Each is split exactly as the per-line path splits it (``split_cells``)
    and replaced by a placeholder row; returns the new text,
    ``(row, tokens)`` patches for ``split_columns`` and the number of rows
    kept: a quoted line with the wrong number of cells ends the block there
    (the per-line path reports it).  Quoted rows are rare, so a Python step
    per quoted row keeps the rest of the block column-wise.
    """
    # (cells "0": no spaces for the trim checks to see, even at width 1)
    placeholder = "\n" + " " * plen + d.join("0" * width)
    pieces: list[str] = []
    patches: list[tuple[int, list[str]]] = []
    row = -1
    prev = 0  # text before `prev` is in pieces (or counted, for `row`)
    counted = 0
    q = text.find('"')
    while q != -1:
        start = text.rfind("\n", 0, q)  # the LF that starts the quoted line
        stop = text.find("\n", q)
        if stop == -1:
            stop = len(text)
        row += text.count("\n", counted, start + 1)
        counted = start + 1
        cells = split_cells(text[start + 1 + plen : stop], d)
        if len(cells) != width:
            pieces.append(text[prev:start])
            return "".join(pieces), patches, row
        patches.append((row, [t.strip(" ") for t in cells]))
        pieces.append(text[prev:start])
        pieces.append(placeholder)
        prev = stop
        q = text.find('"', stop)
    pieces.append(text[prev:])
    return "".join(pieces), patches, nrows


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
            raise _Fail(
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
            raise _Fail(
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
            # (the usual small int: no regex; isascii rules out other digits)
            if tok.isdigit() and tok.isascii() and (c != "0" or len(tok) == 1) and len(tok) <= 18:
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


def decode_key(tok: str) -> str:
    """Decode a trimmed key token: quoted keys are unescaped, others literal (§7.4)."""
    if tok[:1] == '"':
        value, end = scan_quoted(tok, 0)
        if end != len(tok):
            raise _Fail("unexpected characters after quoted key", "trailing_characters", end)
        return value
    return tok


# --------------------------------------------------------------------- encoding
# (strings: ``_quoting.py``)


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
    if not d.is_finite():
        return "null"
    if d.is_zero():
        return "0"
    # No arithmetic here: abs(), normalize() and friends round to the context
    # precision (28 digits by default).  copy_abs, comparisons, as_tuple and
    # format(d, "f") are exact.
    ad = d.copy_abs()
    if _DEC_MIN_PLAIN <= ad < _DEC_MAX_PLAIN:
        if len(d.as_tuple().digits) > MAX_NUMBER_LENGTH:  # (no need to write it out)
            raise _too_long(None)
        return _checked_length(_plain(d))
    sign, digits, exp = d.as_tuple()
    assert isinstance(exp, int)
    if len(digits) > MAX_NUMBER_LENGTH:
        raise _too_long(None)
    ds = "".join(map(str, digits)).rstrip("0")
    exp += len(digits) - len(ds)  # the trailing zeros move into the exponent
    e = exp + len(ds) - 1  # scientific exponent for the form d.ddd
    if len(str(abs(e))) > MAX_EXPONENT_DIGITS:
        raise ToonEncodeError(
            f"number exponent out of range: {abs(e)} has more than {MAX_EXPONENT_DIGITS} digits,"
            " which TOON decoders refuse (number_out_of_range)"
        )
    mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
    return _checked_length(f"{'-' if sign else ''}{mant}e{'+' if e >= 0 else '-'}{abs(e)}")


def _too_long(size: int | None) -> ToonEncodeError:
    """The refusal of a number whose token has ``size`` characters (None:
    more than MAX_NUMBER_LENGTH, not counted)."""
    has = f"more than {MAX_NUMBER_LENGTH}" if size is None else str(size)
    return ToonEncodeError(
        f"number too long: its token would have {has} characters, more than the decoders'"
        f" default max_number_length ({MAX_NUMBER_LENGTH}): loads() could not read it back"
    )


def _checked_length(text: str) -> str:
    if len(text) > MAX_NUMBER_LENGTH:
        raise _too_long(len(text))
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
        raise _too_long(None)
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
_NUMBER_TOKEN = re.compile(r"\n(?=-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\n)")
# (also a token that starts with a space: a padded cell, see column())
_SPECIAL_TOKEN = re.compile(r"\n(?=[\" \n]|true\n|false\n|null\n)")
_BOOLS = {"true": True, "false": False}
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

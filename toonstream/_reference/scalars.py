"""Tokens: cells split on unquoted delimiters, quoted strings, keys.  Pure
functions, no state, no I/O (numbers: ``_numbers.py``; the encoder's quoting:
``_quoting.py``).

Errors raised here carry no location: the state machine adds line and column
(``ToonDecodeError.locate``).  Columns reported from here are 0-based offsets
inside the string the helper was given; the machine turns them into columns.
"""

from __future__ import annotations

from .._errors import ToonDecodeError
from .grammar import HEX4, UNESCAPES


class Fail(ToonDecodeError):
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
        raise Fail("unterminated string", "unterminated_string", q)
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
            raise Fail("unterminated escape", "invalid_escape", base + j)
        c = body[j + 1]
        simple = UNESCAPES.get(c)
        if simple is not None:
            parts.append(simple)
            i = j + 2
            continue
        if c == "u":
            hexdigits = body[j + 2 : j + 6]
            if len(hexdigits) != 4 or not HEX4.fullmatch(hexdigits):
                raise Fail("\\u needs four hex digits", "invalid_escape", base + j)
            cp = int(hexdigits, 16)
            if 0xD800 <= cp <= 0xDFFF:
                # §7.1: surrogate escapes are rejected, paired or not; a
                # supplementary character must be written as literal UTF-8.
                raise Fail("surrogate \\u escape", "invalid_escape", base + j)
            parts.append(chr(cp))
            i = j + 6
            continue
        raise Fail(f"invalid escape \\{c}", "invalid_escape", base + j)


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


def decode_key(tok: str) -> str:
    """Decode a trimmed key token: quoted keys are unescaped, others literal (§7.4)."""
    if tok[:1] == '"':
        value, end = scan_quoted(tok, 0)
        if end != len(tok):
            raise Fail("unexpected characters after quoted key", "trailing_characters", end)
        return value
    return tok

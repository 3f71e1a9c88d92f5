"""TOON asked back from a model: find it in a reply and decode it strictly."""

from __future__ import annotations

import re
from typing import Any, Iterator, Sequence

from ._reference.build import ValueBuilder
from ._reference.events import Event, StartTable
from ._consumers import check_fields
from ._engine import VALUE_OPTIONS
from ._errors import ToonDecodeError
from .decoder import Decoder, check_keywords

__all__ = ["extract", "find_toon"]

# An opening fence: three or more backticks or tildes after at most three spaces, then an
# info string (for a backtick fence it may hold no backtick), as in CommonMark.  Matched
# against one line at a time, so the scan is linear in the reply's length.
_OPENER = re.compile(r"( {0,3})(`{3,}|~{3,})(.*)")
_LONE_CR = re.compile("\r(?!\n)")


def _blocks(text: str) -> Iterator[tuple[str, int, int, int, int]]:
    """The fenced blocks of ``text``: (info, first body line, body start, body end,
    the opening fence's indentation).

    One pass over the lines, holding at most one open fence (a regex over the whole
    reply backtracks into every fence-like line and is quadratic on fence-heavy
    text).  A block is closed by a line of the same fence character, at least as
    long as the opening run, after at most three spaces and followed only by white
    space; an unclosed block runs to the end of the text (CommonMark's rules, and a
    truncated reply keeps its data).
    """
    fence = ""
    info = ""
    body_line = body_start = indent = 0
    pos = line_no = 0
    end = len(text)
    while True:
        nl = text.find("\n", pos)
        line_end = end if nl < 0 else nl
        line = text[pos:line_end]
        if fence:
            stripped = line.rstrip(" \t\r")
            bare = stripped.lstrip(" ")
            if len(stripped) - len(bare) <= 3 and len(bare) >= len(fence) and bare.lstrip(fence[0]) == "":
                yield info, body_line, body_start, pos, indent
                fence = ""
        else:
            m = _OPENER.match(line)
            if m is not None and not (m.group(2)[0] == "`" and "`" in m.group(3)):
                fence, info, indent = m.group(2), m.group(3).strip(), len(m.group(1))
                body_line, body_start = line_no + 1, (end if nl < 0 else nl + 1)
        if nl < 0:
            break
        pos = nl + 1
        line_no += 1
    if fence:
        yield info, body_line, body_start, end, indent


def _body(text: str, start: int, stop: int, indent: int) -> str:
    """A block's body: its lines with up to the opening fence's indentation of
    spaces removed from each (CommonMark), so that TOON's own indentation is kept."""
    body = text[start:stop]
    if not indent:
        return body
    lines = body.split("\n")
    return "\n".join(ln[min(indent, len(ln) - len(ln.lstrip(" "))) :] for ln in lines)


def find_toon(text: str) -> tuple[str, int]:
    """The TOON part of a reply and the 0-based line where it starts.

    A fenced block tagged ``toon`` (the info string's first word, as CommonMark
    reads a language) wins; else the first untagged fenced block; else the whole
    text.  Linear in the length of the reply.

    >>> find_toon("Sure!\\n```toon\\na: 1\\n```\\nDone.")
    ('a: 1\\n', 2)
    """
    if text.startswith("\ufeff"):
        text = text[1:]  # (a byte-order mark: not part of the first line)
    if "\r" in text:
        # CommonMark's line endings are LF, CRLF and a lone CR: a lone one made LF (the lines
        # and their count unchanged; a CRLF's CR is dropped by the decoder)
        text = _LONE_CR.sub("\n", text)
    untagged: tuple[int, int, int, int] | None = None
    for info, line, start, stop, indent in _blocks(text):
        words = info.split()
        tag = words[0].lower() if words else ""
        if tag == "toon":
            return _body(text, start, stop, indent), line
        if not tag and untagged is None:
            untagged = (line, start, stop, indent)
    if untagged is not None:
        line, start, stop, indent = untagged
        return _body(text, start, stop, indent), line
    return text, 0


def extract(text: str | bytes, *, expect_fields: Sequence[str] | None = None, **options: Any) -> Any:
    """Decode the TOON in a model's reply (strict by default).

    ``expect_fields`` guards against schema drift: every table in the reply
    must carry exactly these leaf fields (any order), else ToonDecodeError with
    code ``unexpected_fields``.  Error line numbers count lines of the whole
    reply, so they point into the original text.  A reply given as bytes is
    UTF-8 (else a ToonDecodeError ``invalid_utf8`` where it is not).

    >>> extract("Here you go:\\n```toon\\nusers[1]{id,name}:\\n  1,Ada\\n```", expect_fields=["id", "name"])
    {'users': [{'id': 1, 'name': 'Ada'}]}
    """
    check_keywords("extract", options, VALUE_OPTIONS)  # (the decoder's options; the reply fixes start_line)
    if isinstance(expect_fields, str):  # (a str is a sequence: of its characters)
        raise TypeError(f"expect_fields takes a sequence of field names, not a str: [{expect_fields!r}]?")
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = _utf8(bytes(text))
    elif not isinstance(text, str):
        raise TypeError(f"extract takes the reply as a str or bytes, not {type(text).__name__}")
    body, offset = find_toon(text)
    decoder = Decoder(start_line=offset + 1, **options)
    builder = ValueBuilder()

    def push(events: list[Event]) -> None:
        if expect_fields is not None:
            for ev in events:
                if type(ev) is StartTable:
                    check_fields(ev, expect_fields)
        builder.push(events)

    push(decoder.feed(body))
    push(decoder.close())
    return builder.value


def _utf8(raw: bytes) -> str:
    """``raw`` decoded, or the decoder's error for its first invalid sequence."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        # (lines end at LF, CRLF or a lone CR, as in extract: a lone CR counts as LF)
        good = _LONE_CR.sub("\n", raw[: e.start].decode("utf-8"))
        partial = good[good.rfind("\n") + 1 :]
        raise ToonDecodeError(
            f"invalid UTF-8 ({e.reason})",
            code="invalid_utf8",
            line=good.count("\n") + 1,
            column=len(partial) + 1,
            line_text=partial,
        ) from None

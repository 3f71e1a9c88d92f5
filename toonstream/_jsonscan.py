"""Where a JSON document is invalid: the line, column and reason of its first
error, read from a binary stream in bounded memory.

ijson (yajl) reports a syntax error as several lines of context with a caret
and no position.  The command line then reads the input again with
:func:`locate_json_error`, a syntax-only scanner (no values are built), to
name the offending character as ``file:line:col``.  It keeps one chunk and
the token being read (a long string is scanned piece by piece), so any
document size and any place of the error, chunk boundaries included, cost
the same bounded memory.

Given a path (keys and indexes, a ``ToonEncodeError``'s), the same scan also
tells where the value at that path starts: the CLI names the place of an
encoder's error on a JSON document (a container nested too deep) this way.

Columns count characters (code points), as :class:`ToonDecodeError`'s do;
lines are ended by "\\n".  The offending character is the first one that
cannot continue the document: the start of an unexpected token, of an
invalid number or literal, of an unterminated string; a bad escape's
backslash; the first byte of invalid UTF-8; the end of the input when it
stops early.
"""

from __future__ import annotations

import codecs
import json
import re
from typing import IO, Any

_WS = re.compile(rb"[ \t\n\r]*")
_STRING_RUN = re.compile(rb'[^"\\\x00-\x1f]*')
_NUMBER_RUN = re.compile(rb"[-+.eE0-9]*")
_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_WORD_RUN = re.compile(rb"[A-Za-z0-9_]*")
_HEX4 = re.compile(rb"[0-9a-fA-F]{4}")
# Escapes of surrogates (high: D800-DBFF, low: DC00-DFFF); a pair is 12 bytes
_HIGH = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}")
_LOW = re.compile(rb"\\u[dD][c-fC-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
_PAIRED = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}")
_ESCAPED_U = re.compile(rb"\\\\u")
_PAIR = 12
_ESCAPES = frozenset(b'"\\/bfnrt')
_LITERALS = (b"true", b"false", b"null")
# every byte that is not a UTF-8 continuation byte: deleting them leaves the continuations
_NOT_CONTINUATION = bytes(b for b in range(256) if not 0x80 <= b <= 0xBF)

# what the scanner expects next
_VALUE, _VALUE_OR_CLOSE, _KEY, _KEY_OR_CLOSE, _COLON, _AFTER = range(6)

CHUNK = 1 << 16
_KEY_ROOM = 1 << 16  # a key decoded to follow a path: at most this many bytes
# the bytes a value can start with (a literal's letters: any, as the scanner reads a word)
_VALUE_START = frozenset(b'{["-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ')


class JsonSyntaxError(Exception):
    """The first error of a JSON document: 1-based ``line`` and ``column``."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.msg, self.line, self.column = message, line, column


class _Buffer:
    """The unread part of the stream, with the position of its first byte."""

    def __init__(self, fp: IO[bytes], chunk: int) -> None:
        self.fp, self.chunk = fp, chunk
        self.data = b""
        self.line = 1
        self.column = 0  # characters before data[0] on its line
        self.eof = False

    def refill(self, keep: int) -> int:
        """Drop data[:keep] (counting its lines and characters), read a chunk
        more; returns how many bytes were dropped (indexes move down by it),
        or -1 at the end of the input."""
        if self.eof:
            return -1
        more = self.fp.read(self.chunk)
        if not more:
            self.eof = True
            return -1
        self._advance(keep)
        self.data = self.data[keep:] + more
        return keep

    def _advance(self, k: int) -> None:
        self.line, self.column = self.where(k)
        self.column -= 1

    def where(self, k: int) -> tuple[int, int]:
        """(line, column) of data[k]."""
        data = self.data
        newlines = data.count(b"\n", 0, k)
        if newlines:
            start = data.rfind(b"\n", 0, k) + 1
            return self.line + newlines, _chars(data[start:k]) + 1
        return self.line, self.column + _chars(data[:k]) + 1


def _chars(data: bytes) -> int:
    return len(data) - len(data.translate(None, _NOT_CONTINUATION))


def _found(data: bytes, k: int) -> str:
    """The character at data[k] for a message: repr-escaped, never raw bytes."""
    if k >= len(data):
        return "the end of the input"
    for n in range(1, 5):
        try:
            return repr(data[k : k + n].decode("utf-8"))
        except UnicodeDecodeError:
            continue
    return f"byte 0x{data[k]:02x}"


def _lone_surrogate(data: bytes, i: int) -> str | None:
    """The message for the escape at ``data[i]`` (a real one) if it is half
    of a surrogate pair alone (a high one not followed by a low one, or a
    low one: the pair's low half is skipped with its high half), else None."""
    if _LOW.match(data, i):
        return f"lone surrogate '{data[i : i + 6].decode('ascii')}' (no high surrogate escape before it)"
    if _HIGH.match(data, i) and not _LOW.match(data, i + 6):
        return f"lone surrogate '{data[i : i + 6].decode('ascii')}' (no low surrogate escape after it)"
    return None


class LoneSurrogate(ValueError):
    """A string of the JSON text escapes half of a surrogate pair alone
    (``"\\ud800"``): no character, so no UTF-8 (nor TOON) text can hold it."""


class SurrogateCheck:
    r"""Finds the first lone surrogate escape of JSON text fed in chunks,
    before ijson parses it: yajl (its C backend) turns a lone high surrogate
    into ``?`` (silently) and a low one into invalid UTF-8, where the text
    they stand for cannot be written.  Raises :class:`LoneSurrogate` (its
    ``args[1]``: the escape's byte offset); :func:`locate_json_error` then
    names its line and column.  Only the escapes of surrogates are looked
    at (a search per chunk); a few bytes are carried between chunks.

    >>> check = SurrogateCheck()
    >>> check.feed(rb'["\ud83d\ude00", "\\ud800"]')  # a pair; an escaped backslash, then text
    >>> check.feed(rb' ["\ud8')
    >>> try:
    ...     check.feed(b'00"]')
    ...     check.close()
    ... except LoneSurrogate as e:
    ...     print(e.args[1], e.args[0])
    30 lone surrogate '\ud800' (no low surrogate escape after it)
    """

    def __init__(self) -> None:
        self._carry = b""  # unchecked bytes; it starts at an escape or a run of backslashes
        self._base = 0  # the input offset of _carry[0]
        self._paired = -1  # the input offset of the low escape the last high one is paired with

    def feed(self, data: bytes) -> None:
        buf = self._carry + data if self._carry else data
        self._carry = self._scan(buf, final=False)

    def close(self) -> None:
        self._scan(self._carry, final=True)
        self._carry = b""

    def _scan(self, buf: bytes, final: bool) -> bytes:
        """Check the surrogate escapes of ``buf`` that can be checked; return
        the bytes to carry (from the start of a run of backslashes)."""
        keep = len(buf)  # where the carry starts
        if not final:
            # A backslash in the last bytes may start an escape (or pair) to finish
            last = buf.rfind(b"\\", max(0, len(buf) - _PAIR))
            if last >= 0:
                keep = _run_start(buf, last)
                # (carried whole: an escape whose pair may not be all here, and a
                # pair the carry would cut; any run of backslashes may start it)
                m = _SURROGATE.search(buf, max(0, len(buf) - _PAIR + 1), keep)
                if m is not None:
                    keep = _run_start(buf, m.start())
                if keep >= 6 and _PAIRED.match(buf, keep - 6):
                    keep = _run_start(buf, keep - 6)
        if not _simple(buf, keep):
            keep = self._walk(buf, keep, final)
        return self._rest(buf, keep)

    def _walk(self, buf: bytes, keep: int, final: bool) -> int:
        """Check each surrogate escape of ``buf[:keep]``; returns where the
        carry starts (earlier than ``keep`` when an escape's pair is not all
        here yet)."""
        base = self._base
        for m in _SURROGATE.finditer(buf):
            at = m.start()
            if at >= keep:
                break
            start = _run_start(buf, at)
            if (at - start) % 2:  # (an escaped backslash, then text)
                continue
            if not final and at + _PAIR > len(buf):
                keep = min(keep, start)  # (its pair is not all here yet)
                break
            if base + at == self._paired:
                continue
            lone = _lone_surrogate(buf, at) if _HEX4.match(buf, at + 2) else None
            if lone is not None:
                raise LoneSurrogate(lone, base + at)
            if _HIGH.match(buf, at):
                self._paired = base + at + 6
        return keep

    def _rest(self, buf: bytes, keep: int) -> bytes:
        """The carry from ``keep`` (see _scan)."""
        base = self._base
        if keep >= len(buf):
            self._base = base + len(buf)
            return b""
        # (a long run of backslashes carried as its parity: one or none)
        end = keep
        while end < len(buf) and buf[end] == 0x5C:
            end += 1
        head = b"\\" if (end - keep) % 2 else b""
        if end - keep <= 2:
            end, head = keep, b""
        self._base = base + end - len(head)
        return head + buf[end:]


def _simple(buf: bytes, keep: int) -> bool:
    """Whether ``buf[:keep]`` holds no surrogate escape but in whole pairs of
    real escapes (the usual: text with escaped emoji), told by counts, without
    a Python step per escape.  (``keep`` is _scan's: no escape before it waits
    for bytes, and the low half of a pair checked before, whose high half is
    gone, makes the count odd.)"""
    n = len(_SURROGATE.findall(buf, 0, keep))
    return not n or (
        n == 2 * len(_PAIRED.findall(buf, 0, keep))
        and _ESCAPED_U.search(buf, 0, keep) is None  # (a run of backslashes before a "u": the walk tells)
    )


def _run_start(buf: bytes, k: int) -> int:
    """The start of the run of backslashes that ends at ``buf[k]``."""
    while k > 0 and buf[k - 1] == 0x5C:
        k -= 1
    return k


class _Path:
    """Where the scanner is, as keys and indexes, against a ``target`` path:
    ``matched`` leading steps of the two are equal (kept up to date step by
    step, so that no value costs a comparison of whole paths)."""

    def __init__(self, target: tuple[Any, ...]) -> None:
        self.target = target
        self.at: list[Any] = []  # the current step in each open container
        self.matched = 0
        self.seen = False  # (for a repeated key: its first occurrence was passed)

    def open(self) -> None:
        self.at.append(_NO_STEP)
        if len(self.at) == len(self.target):  # (a container where a repeated key may be)
            self.seen = False

    def close(self) -> None:
        self.at.pop()
        self.matched = min(self.matched, len(self.at))

    def step(self, key: Any) -> None:
        """The open container's next element (an index) or member (a key)."""
        d = len(self.at)
        self.at[-1] = key
        self.matched = min(self.matched, d - 1)
        if self.matched == d - 1 and d <= len(self.target) and type(key) is type(self.target[d - 1]) and key == self.target[d - 1]:
            self.matched = d

    def next_index(self) -> None:
        last = self.at[-1]
        self.step(0 if last is _NO_STEP else last + 1)

    def wants_key(self) -> bool:
        """Whether the key being read can continue the target (else it is not decoded)."""
        return self.matched >= len(self.at) - 1 < len(self.target)  # (>=: the member before may have matched)

    def here(self) -> bool:
        return self.matched == len(self.at) == len(self.target)


_NO_STEP: Any = object()


def locate_json_error(
    fp: IO[bytes], *, chunk: int = CHUNK, path: tuple[Any, ...] | None = None, repeated: bool = False
) -> JsonSyntaxError | None:
    """The first syntax error of the JSON document read from ``fp`` (one value,
    whitespace around it), or None when its syntax is valid.  With ``path``
    (keys and indexes, as a ``ToonEncodeError``'s): where the value at that
    path starts, as an "error" with an empty message, if the document has it
    before any syntax error (an encoder's error on it is then located).  With
    ``repeated`` too (the path ending in a key): where that key occurs a
    second time in its object, for an error on a repeated key."""
    buf = _Buffer(fp, chunk)
    i = 0
    stack: list[int] = []  # b"{" or b"[" of each open container
    state = _VALUE
    where = _Path(path) if path is not None else None

    def error(k: int, message: str) -> JsonSyntaxError:
        line, column = buf.where(k)
        return JsonSyntaxError(message, line, column)

    while True:
        data = buf.data
        i = _WS.match(data, i).end()  # type: ignore[union-attr]
        if i == len(data):
            dropped = buf.refill(i)
            if dropped >= 0:
                i -= dropped
                continue
            if state == _AFTER and not stack:
                return None
            return error(i, "unexpected end of input" if stack or state != _VALUE or buf.line > 1 or i else "no JSON value")
        c = data[i]
        if state == _AFTER:
            if not stack:
                return error(i, f"extra data after the JSON value: {_found(data, i)}")
            close = 0x7D if stack[-1] == 0x7B else 0x5D
            if c == 0x2C:  # ,
                state = _KEY if stack[-1] == 0x7B else _VALUE
                i += 1
            elif c == close:
                stack.pop()
                if where is not None:
                    where.close()
                i += 1
            else:
                what = "an object member" if close == 0x7D else "an array element"
                return error(i, f"expected ',' or '{chr(close)}' after {what}, found {_found(data, i)}")
            continue
        if state == _COLON:
            if c != 0x3A:
                return error(i, f"expected ':' after an object key, found {_found(data, i)}")
            state = _VALUE
            i += 1
            continue
        key = state in (_KEY, _KEY_OR_CLOSE)
        if key:
            if c == 0x7D and state == _KEY_OR_CLOSE:
                stack.pop()
                if where is not None:
                    where.close()
                state = _AFTER
                i += 1
                continue
            if c != 0x22:
                return error(i, f"expected a string key, found {_found(data, i)}")
            state = _COLON
        elif c == 0x5D and state == _VALUE_OR_CLOSE:
            stack.pop()
            if where is not None:
                where.close()
            state = _AFTER
            i += 1
            continue
        else:
            if where is not None and c in _VALUE_START:  # a value starts here
                if stack and stack[-1] == 0x5B:
                    where.next_index()
                if where.here() and not repeated:
                    return error(i, "")
            if c == 0x7B or c == 0x5B:  # { [
                stack.append(c)
                if where is not None:
                    where.open()
                state = _KEY_OR_CLOSE if c == 0x7B else _VALUE_OR_CLOSE
                i += 1
                continue
            state = _AFTER
        if c == 0x22:
            wanted = key and where is not None and where.wants_key()
            while wanted and len(buf.data) - i < _KEY_ROOM:  # (the key whole in the buffer, to decode it)
                dropped = buf.refill(i)
                if dropped < 0:
                    break
                i -= dropped
            before, start = buf.data, i
            bad, i = _string(buf, i)
            if bad is not None:
                return bad
            if key and where is not None:
                # (a key longer than _KEY_ROOM is not decoded: it matches no path)
                where.step(json.loads(buf.data[start:i]) if wanted and buf.data is before else _NO_STEP)
                if repeated and where.here():
                    if where.seen:
                        # (the key wholly in the buffer: it was decoded from there)
                        return error(start, "")
                    where.seen = True
            continue
        if c == 0x2D or 0x30 <= c <= 0x39:
            run, name = _NUMBER_RUN, "number"
        elif 0x61 <= c <= 0x7A or 0x41 <= c <= 0x5A:
            run, name = _WORD_RUN, "literal"
        else:
            return error(i, f"expected a value, found {_found(data, i)}")
        while True:  # the whole token, across chunks
            end = run.match(buf.data, i).end()  # type: ignore[union-attr]
            if end < len(buf.data):
                break
            dropped = buf.refill(i)
            if dropped < 0:
                break
            i -= dropped
        token = buf.data[i:end]
        if (_NUMBER.fullmatch(token) is None) if name == "number" else (token not in _LITERALS):
            shown = token if len(token) <= 40 else token[:37] + b"..."
            return error(i, f"invalid {name} {shown.decode('ascii')!r}")
        i = end


def _string(buf: _Buffer, i: int) -> tuple[JsonSyntaxError | None, int]:
    """Scan the string that starts at buf.data[i] (its quote); returns (error
    or None, the index after it)."""
    start = i
    opened: tuple[int, int] | None = None  # the quote's place, once the buffer no longer holds it
    decoder = codecs.getincrementaldecoder("utf-8")()

    def error(k: int, message: str) -> tuple[JsonSyntaxError, int]:
        line, column = buf.where(k)
        return JsonSyntaxError(message, line, column), k

    def utf8(piece: bytes, at: int, final: bool = False) -> tuple[JsonSyntaxError, int] | None:
        try:
            decoder.decode(piece, final)
        except UnicodeDecodeError as e:
            return error(at + e.start, "invalid UTF-8 in a string")
        return None

    i += 1
    while True:
        data = buf.data
        end = _STRING_RUN.match(data, i).end()  # type: ignore[union-attr]
        bad = utf8(data[i:end], i)
        if bad is not None:
            return bad
        i = end
        if i == len(data):
            # a UTF-8 sequence split by the chunk's end is read again whole
            # from the next buffer, so that an error names its first byte
            i -= len(decoder.getstate()[0])
            decoder.reset()
            if opened is None:
                opened = buf.where(start)
            dropped = buf.refill(i)
            if dropped < 0:
                return JsonSyntaxError("unterminated string", *opened), i
            i -= dropped
            continue
        c = data[i]
        pending = len(decoder.getstate()[0])
        bad = utf8(b"", i, final=True)
        if bad is not None:
            return error(i - pending, "invalid UTF-8 in a string")
        decoder.reset()
        if c == 0x22:
            return None, i + 1
        if c == 0x5C:  # a backslash
            if len(data) - i < _PAIR and opened is None:
                opened = buf.where(start)
            while len(buf.data) - i < _PAIR:  # (an escape, or a surrogate pair's two)
                dropped = buf.refill(i)
                if dropped < 0:
                    break
                i -= dropped
            data = buf.data
            escape = data[i + 1] if i + 1 < len(data) else -1
            if escape in _ESCAPES:
                i += 2
            elif escape == 0x75 and _HEX4.match(data, i + 2):  # \uXXXX
                lone = _lone_surrogate(data, i)
                if lone is not None:
                    return error(i, lone)
                i += _PAIR if _HIGH.match(data, i) else 6
            elif escape == -1:
                return JsonSyntaxError("unterminated string", *(opened or buf.where(start))), i
            elif escape == 0x75:
                return error(i, "invalid \\u escape (four hexadecimal digits must follow)")
            else:
                return error(i, f"invalid escape {_found(data, i + 1)} after a backslash")
            continue
        return error(i, f"control character {_found(data, i)} in a string (must be escaped)")

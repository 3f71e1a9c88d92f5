"""Bytes or text in, complete lines out.

Owns: UTF-8 decoding (incremental, strict), the line terminator (LF; a CR
right before it, or at the very end of input, belongs to the terminator, §12),
a leading byte-order mark, and the line-length limit.  Knows nothing of TOON
structure: comments, blanks and indentation are the machine's business.

Memory: only the current partial line is kept, as UTF-8 bytes in one
``bytearray`` (amortized appends; decoded once, when its LF arrives).  A
list of str pieces would cost a str object (about 50 bytes) per chunk: a
line fed a few bytes at a time took some 30 bytes per character; the buffer
takes one byte per byte of the line whatever the chunking.
"""

from __future__ import annotations

import codecs

from .._errors import ToonDecodeError

BOM = "\ufeff"


class LineSplitter:
    """Split a stream of chunks into lines.

    ``feed`` returns the complete lines found so far; ``close`` returns the
    final unterminated line, if any.  Line numbers are 1-based and counted by
    the caller from ``lines_emitted``.
    """

    __slots__ = ("_carry", "_partial", "_pending_len", "_max_line", "lines_emitted", "_started", "_closed", "error")

    def __init__(self, *, max_line_length: int) -> None:
        self._carry = b""  # an incomplete UTF-8 sequence from the end of the last chunk
        # The current partial line, UTF-8 encoded (str input is encoded with
        # 'surrogatepass', which decodes back to the same str exactly, lone
        # surrogates included); _pending_len is its length in characters.
        self._partial = bytearray()
        self._pending_len = 0
        self._max_line = max_line_length
        self.lines_emitted = 0
        self._started = False
        self._closed = False
        # Invalid UTF-8 found in the last chunk, raised by the caller *after*
        # it processed the lines before it: errors come in document order
        # however the input is chunked.
        self.error: ToonDecodeError | None = None

    def feed(self, data: bytes | bytearray | memoryview | str) -> list[str]:
        """Complete lines in ``data`` (and before it); see ``error`` after the call."""
        if self._closed:
            raise ToonDecodeError("data fed after close()", code="closed", line=self.lines_emitted + 1, column=1, line_text="")
        if isinstance(data, str):
            if self._carry:  # a UTF-8 sequence cut off by a str chunk: read on as its UTF-8 (invalid)
                return self._decode_and_split(data.encode("utf-8", "surrogatepass"), final=False)
            return self._split(data)
        return self._decode_and_split(data, final=False)

    def close(self) -> list[str]:
        if self._closed:
            return []
        lines = self._decode_and_split(b"", final=True)
        if self.error is not None:
            return lines
        self._closed = True
        if self._partial:
            last = self._take_partial()
            if last.endswith("\r"):
                last = last[:-1]
            lines.append(last)
            self.lines_emitted += 1
        return lines

    def at_line_boundary(self) -> bool:
        """True when no partial line or UTF-8 sequence is pending."""
        return not self._partial and not self._carry and self.error is None and not self._closed

    def _take_partial(self) -> str:
        """The partial line as text; the buffer is released (not kept at its
        high-water size for the rest of the input)."""
        text = self._partial.decode("utf-8", "surrogatepass")
        self._partial = bytearray()
        return text

    def _decode_and_split(self, data: bytes | bytearray | memoryview, *, final: bool) -> list[str]:
        # 'strict' makes invalid, truncated and surrogate-encoding sequences
        # errors (§4).  An incomplete sequence at the end of a chunk is carried
        # into the next one; the carry is ours (not a codec's hidden state) so
        # that the bytes before an error can be decoded exactly.
        if self._carry:
            data = self._carry + bytes(data)
        try:
            text, used = codecs.utf_8_decode(data, "strict", final)
        except UnicodeDecodeError as e:
            # The lines before the bad byte are returned (the caller processes
            # them first); the error waits in `error`, located at the bad byte.
            self._closed = True
            self._carry = b""
            good = data[: e.start]
            lines = self._split(codecs.utf_8_decode(good, "strict", True)[0], good, len(good))
            if self.error is not None:  # a line grew too long before the bad byte: that comes first
                return lines
            partial = self._take_partial()
            self.error = ToonDecodeError(
                f"invalid UTF-8 ({e.reason})",
                code="invalid_utf8",
                line=self.lines_emitted + 1,
                column=len(partial) + 1,
                line_text=partial,
            )
            return lines
        self._carry = bytes(data[used:])
        return self._split(text, data, used)

    def _split(self, text: str, raw: bytes | bytearray | memoryview | None = None, used: int = 0) -> list[str]:
        """The complete lines of ``text``; ``raw[:used]``: the valid UTF-8 it
        was decoded from (None for str input), appended as it is to the
        partial line when ``text`` holds no LF."""
        if self.error is not None:
            return []
        if not self._started and text:
            self._started = True
            if text[0] == BOM:  # one leading BOM is skipped (documented policy)
                text = text[1:]
                raw = None if raw is None else memoryview(raw)[3:used]  # (U+FEFF is 3 bytes in UTF-8)
                used -= 3
        if "\n" not in text:
            if text:
                if raw is None:
                    self._partial += text.encode("utf-8", "surrogatepass")
                else:  # (a slice only when a UTF-8 sequence was cut at the chunk's end)
                    self._partial += raw if used == len(raw) else memoryview(raw)[:used]
                self._pending_len += len(text)
                if self._partial_too_long():
                    self._too_long()
            return []
        if self._partial:
            text = self._take_partial() + text
        lines = text.split("\n")
        rest = lines.pop()
        if rest:
            self._partial += rest.encode("utf-8", "surrogatepass")
        self._pending_len = len(rest)
        max_line = self._max_line
        if "\r" in text:
            lines = [line[:-1] if line.endswith("\r") else line for line in lines]
        if len(text) > max_line:  # only then can one line be too long
            for i, line in enumerate(lines):
                if len(line) > max_line:
                    self.lines_emitted += i
                    self._too_long()
                    return lines[:i]
        self.lines_emitted += len(lines)
        if self._partial_too_long():
            self._too_long()
        return lines

    def _partial_too_long(self) -> bool:
        # A CR at the end of the partial line may be the first half of a CRLF (or the final CR
        # at the end of input), which is not part of the line: it is not counted until the next
        # character shows it is content, so the verdict does not depend on where a feed ends.
        over = self._pending_len - self._max_line
        return over > 1 or (over == 1 and not self._partial.endswith(b"\r"))

    def _too_long(self) -> None:
        # Like invalid UTF-8: reported after the lines before it are processed.
        self._closed = True
        self._partial = bytearray()
        self.error = ToonDecodeError(
            f"line longer than max_line_length ({self._max_line} characters)",
            code="line_too_long",
            line=self.lines_emitted + 1,
            column=self._max_line + 1,
            line_text="",
        )

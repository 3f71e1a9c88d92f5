"""Bytes or text in, complete lines out.

Owns: UTF-8 decoding (incremental, strict), the line terminator (LF; a CR
right before it, or at the very end of input, belongs to the terminator, §12),
a leading byte-order mark, and the line-length limit.  Knows nothing of TOON
structure: comments, blanks and indentation are the machine's business.

Memory: only the current partial line is kept.  A line that arrives in many
chunks is gathered in a list of pieces (joined once, when its LF arrives), so
a long line is not re-copied on every chunk.
"""

from __future__ import annotations

import codecs

from ._errors import ToonDecodeError

BOM = "\ufeff"


class LineSplitter:
    """Split a stream of chunks into lines.

    ``feed`` returns the complete lines found so far; ``close`` returns the
    final unterminated line, if any.  Line numbers are 1-based and counted by
    the caller from ``lines_emitted``.
    """

    __slots__ = ("_carry", "_pieces", "_pending_len", "_max_line", "lines_emitted", "_started", "_closed", "error")

    def __init__(self, *, max_line_length: int) -> None:
        self._carry = b""  # an incomplete UTF-8 sequence from the end of the last chunk
        self._pieces: list[str] = []
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
            return self._split(data)
        return self._decode_and_split(data, final=False)

    def close(self) -> list[str]:
        if self._closed:
            return []
        lines = self._decode_and_split(b"", final=True)
        if self.error is not None:
            return lines
        self._closed = True
        if self._pieces:
            last = "".join(self._pieces)
            self._pieces = []
            if last.endswith("\r"):
                last = last[:-1]
            lines.append(last)
            self.lines_emitted += 1
        return lines

    def at_line_boundary(self) -> bool:
        """True when no partial line or UTF-8 sequence is pending."""
        return not self._pieces and not self._carry and self.error is None and not self._closed

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
            good = bytes(data[: e.start]).decode("utf-8") if e.start else ""
            lines = self._split(good)
            if self.error is not None:  # a line grew too long before the bad byte: that comes first
                return lines
            partial = "".join(self._pieces)
            self.error = ToonDecodeError(
                f"invalid UTF-8 ({e.reason})",
                code="invalid_utf8",
                line=self.lines_emitted + 1,
                column=len(partial) + 1,
                line_text=partial,
            )
            return lines
        self._carry = bytes(data[used:])
        return self._split(text)

    def _split(self, text: str) -> list[str]:
        if self.error is not None:
            return []
        if not self._started and text:
            self._started = True
            if text[0] == BOM:  # one leading BOM is skipped (documented policy)
                text = text[1:]
        if "\n" not in text:
            if text:
                self._pieces.append(text)
                self._pending_len += len(text)
                if self._pending_len > self._max_line:
                    self._too_long()
            return []
        if self._pieces:
            self._pieces.append(text)
            text = "".join(self._pieces)
            self._pieces = []
        lines = text.split("\n")
        rest = lines.pop()
        if rest:
            self._pieces.append(rest)
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
        if self._pending_len > max_line:
            self._too_long()
        return lines

    def _too_long(self) -> None:
        # Like invalid UTF-8: reported after the lines before it are processed.
        self._closed = True
        self._pieces = []
        self.error = ToonDecodeError(
            f"line longer than max_line_length ({self._max_line} characters)",
            code="line_too_long",
            line=self.lines_emitted + 1,
            column=self._max_line + 1,
            line_text="",
        )

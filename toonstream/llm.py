"""TOON asked back from a model: find it in a reply and decode it strictly."""

from __future__ import annotations

import re
from typing import Any, Sequence

from ._build import ValueBuilder
from ._events import Event, StartTable
from .decoder import Decoder, check_fields

__all__ = ["extract", "find_toon"]

# A fenced block: ``` or ~~~ with an optional info string, up to the matching fence.
_FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S)


def find_toon(text: str) -> tuple[str, int]:
    """The TOON part of a reply and the 0-based line where it starts.

    A fenced block tagged ``toon`` wins; else the first untagged fenced block;
    else the whole text.

    >>> find_toon("Sure!\\n```toon\\na: 1\\n```\\nDone.")
    ('a: 1\\n', 2)
    """
    untagged: re.Match[str] | None = None
    for m in _FENCE.finditer(text):
        info = m.group("info").strip().lower()
        if info == "toon":
            return m.group("body"), text.count("\n", 0, m.start("body"))
        if not info and untagged is None:
            untagged = m
    if untagged is not None:
        return untagged.group("body"), text.count("\n", 0, untagged.start("body"))
    return text, 0


def extract(text: str, *, expect_fields: Sequence[str] | None = None, **options: Any) -> Any:
    """Decode the TOON in a model's reply (strict by default).

    ``expect_fields`` guards against schema drift: every table in the reply
    must carry exactly these leaf fields (any order), else ToonDecodeError with
    code ``unexpected_fields``.  Error line numbers count lines of the whole
    reply, so they point into the original text.

    >>> extract("Here you go:\\n```toon\\nusers[1]{id,name}:\\n  1,Ada\\n```", expect_fields=["id", "name"])
    {'users': [{'id': 1, 'name': 'Ada'}]}
    """
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

"""extract() for model replies, and the expect_fields schema-drift guard."""

from __future__ import annotations

from typing import Any

import pytest

import toonstream
from toonstream.llm import extract, find_toon
from toonstream import ToonDecodeError

REPLY = """Here are the users you asked for:

```toon
users[2]{id,name}:
  1,Ada
  2,Bob
```

Anything else?"""


def test_extract_prefers_toon_fence_then_bare_fence_then_text() -> None:
    assert toonstream.extract(REPLY) == {"users": [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Bob"}]}
    two = "```json\n{}\n```\n```\nx: 1\n```\n```toon\ny: 2\n```"
    assert toonstream.extract(two) == {"y": 2}
    assert toonstream.extract("```json\n{}\n```\n```\nx: 1\n```") == {"x": 1}
    assert toonstream.extract("a: 1\nb: 2") == {"a": 1, "b": 2}


def test_extract_errors_point_into_the_reply() -> None:
    bad = REPLY.replace("users[2]", "users[3]")
    with pytest.raises(ToonDecodeError) as info:
        toonstream.extract(bad)
    assert info.value.line == 4 and info.value.line_text == "users[3]{id,name}:"
    with pytest.raises(ToonDecodeError) as info:
        toonstream.extract(REPLY.replace("  2,Bob", "  2,Bob,extra"))
    assert info.value.line == 6


def test_expect_fields_guard() -> None:
    assert toonstream.extract(REPLY, expect_fields=["name", "id"])["users"][0] == {"id": 1, "name": "Ada"}
    with pytest.raises(ToonDecodeError) as info:
        toonstream.extract(REPLY, expect_fields=["id", "name", "email"])
    assert info.value.code == "unexpected_fields" and "missing email" in str(info.value)
    assert info.value.line == 4


def test_rows_expect_fields_reorders_and_rejects() -> None:
    doc = "u[2]{name,id,geo{lat}}:\n  Ada,1,5\n  Bob,2,6"
    r = toonstream.rows(doc, "u", expect_fields=["id", "name", "geo.lat"])
    assert list(r) == [(1, "Ada", 5), (2, "Bob", 6)]
    assert r.columns == ["id", "name", "geo.lat"]
    with pytest.raises(ToonDecodeError) as info:
        list(toonstream.rows(doc, "u", expect_fields=["id", "name"]))
    assert info.value.code == "unexpected_fields" and "unexpected geo.lat" in str(info.value)
    keyed = "[2:]{b,a}:\n  x: 1,2\n  y: 3,4"
    assert list(toonstream.rows(keyed, expect_fields=["a", "b"])) == [("x", 2, 1), ("y", 4, 3)]


class _CountingPattern:
    """Wraps the fence pattern and counts the characters it is asked to match."""

    def __init__(self, pattern: Any) -> None:
        self.pattern, self.chars = pattern, 0

    def match(self, line: str) -> Any:
        self.chars += len(line)
        return self.pattern.match(line)


@pytest.mark.parametrize(
    "reply",
    [
        ("~" * 100 + "x\n") * 1000,  # fence-like lines that never close: each was re-scanned to the end
        "```x\n" * 8000,
        "```\n" + "~~~~\n" * 5000 + "x: 1\n",
        "````\n" + "```\n" * 5000 + "````\n",
    ],
)
def test_fence_scan_is_linear(reply: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from toonstream import llm

    counting = _CountingPattern(llm._OPENER)
    monkeypatch.setattr(llm, "_OPENER", counting)
    llm.find_toon(reply)
    # Every line is looked at once, by one anchored match of a pattern without nested repeats.
    assert counting.chars <= len(reply)


def test_fence_rules() -> None:
    from toonstream.llm import find_toon

    # The closing fence is the same character, at least as long, white space after it only.
    assert find_toon("````toon\na: 1\n```\nb: 2\n`````  \nafter") == ("a: 1\n```\nb: 2\n", 1)
    assert find_toon("~~~toon\na: 1\n```\n~~~\n") == ("a: 1\n```\n", 1)
    # CRLF replies: the fence lines end in CR too.
    assert find_toon("```toon\r\na: 1\r\n```\r\nbye") == ("a: 1\r\n", 1)
    # A backtick fence's info string cannot hold a backtick (CommonMark): not a fence.
    assert find_toon("``` a`b\nx: 1\n") == ("``` a`b\nx: 1\n", 0)
    # A fence that is never closed (a truncated reply) runs to the end of the text.
    assert find_toon("Here:\n```toon\nusers[1]{id}:\n  1") == ("users[1]{id}:\n  1", 2)
    assert toonstream.extract("Here:\n```toon\nusers[1]{id}:\n  1") == {"users": [{"id": 1}]}
    # Fences inside a block are content; the first toon block wins over an earlier bare one.
    assert find_toon("```\nx: 1\n```\n~~~toon\n```\ny: 2\n~~~") == ("```\ny: 2\n", 4)


def test_fence_info_and_indentation_as_commonmark() -> None:
    from toonstream.llm import find_toon

    # The language is the info string's first word.
    assert find_toon("x\n```toon title=users.toon\na: 1\n```\n```\nb: 2\n```") == ("a: 1\n", 2)
    assert find_toon("```toonish\na: 1\n```\n```\nb: 2\n```") == ("b: 2\n", 4)
    # A fence indented by up to three spaces: its body loses up to that many spaces a line, so
    # TOON's own indentation is kept; the closing fence may be indented up to three too.
    reply = "Here:\n  ```toon\n  t[2]{a}:\n    1\n   2\n  ```\nbye"
    assert find_toon(reply) == ("t[2]{a}:\n  1\n 2\n", 2)
    with pytest.raises(ToonDecodeError) as info:  # (" 2": an indentation error, on the reply's line)
        toonstream.extract(reply)
    assert (info.value.code, info.value.line) == ("bad_indent", 5)
    assert toonstream.extract("   ~~~ toon\n   u:\n     v: 1\n   ~~~") == {"u": {"v": 1}}
    # Four spaces make an indented code block, not a fence: the whole text is read.
    assert find_toon("    ```toon\na: 1") == ("    ```toon\na: 1", 0)


def test_expect_fields_as_one_string_is_refused() -> None:
    with pytest.raises(TypeError, match="not a str"):
        toonstream.extract("t[1]{id}:\n  1", expect_fields="id")  # type: ignore[arg-type]


def test_line_endings_and_byte_order_marks_as_commonmark_reads_them() -> None:
    # a lone CR ends a line (CommonMark), so fences after one are found and lines counted
    assert extract("Sure:\r```toon\ra: 1\r```\r") == {"a": 1}
    assert extract("Sure:\r\r```toon\r\n[2]: x,y\r\n```") == ["x", "y"]
    with pytest.raises(ToonDecodeError) as e:
        extract("x\n```toon\na: 1\rb[2]: 1\n```")
    assert (e.value.line, e.value.line_text) == (4, "b[2]: 1")
    # a leading byte-order mark is not part of the first line
    assert extract("\ufeff```toon\na: 1\n```") == {"a": 1}
    assert find_toon("\ufeffa: 1") == ("a: 1", 0)


def test_a_reply_as_bytes() -> None:
    assert extract(b"```toon\na: 1\n```") == {"a": 1}
    assert extract(bytearray("n: é".encode())) == {"n": "é"}
    with pytest.raises(ToonDecodeError) as e:
        extract(b"ok\n```toon\na: \xc3\xa9\xff\n```")
    assert (e.value.code, e.value.line, e.value.column, e.value.line_text) == ("invalid_utf8", 3, 5, "a: é")
    with pytest.raises(TypeError, match="str or bytes"):
        extract(None)  # type: ignore[arg-type]


def test_extract_names_itself_for_an_unknown_option() -> None:
    import pytest

    for kw in ({"object_hook": dict}, {"start_line": 5}, {"buf_size": 3}):
        with pytest.raises(TypeError, match=f"extract\\(\\) got an unexpected keyword argument '{next(iter(kw))}'"):
            toonstream.extract("a: 1", **kw)
    assert toonstream.extract("```toon\na: 1\n```", max_depth=3, strict=False) == {"a": 1}


def test_invalid_utf8_is_placed_after_lone_crs_too() -> None:
    # Lines end at LF, CRLF or a lone CR in extract, for a UTF-8 error as for the others.
    for raw, where in ((b"a\rb\r\xff", (3, 1)), (b"a\r\nb\r\n\xff", (3, 1)), (b"a\nb\nc\xff", (3, 2))):
        with pytest.raises(ToonDecodeError) as e:
            extract(raw)
        assert (e.value.code, e.value.line, e.value.column) == ("invalid_utf8", *where)

"""extract() for model replies, and the expect_fields schema-drift guard."""

from __future__ import annotations

import pytest

import toonstream
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

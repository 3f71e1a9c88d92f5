"""What the engine-differential tests (tests/test_native_*.py) share: chunkings, how an error
is compared, ijson prefixes worth asking for, fixture options, a byte mutator and the leaves of
generated documents."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

import toonstream
from toonstream import _engine
from toonstream._errors import ToonDecodeError


def split(data: bytes, size: int) -> Iterator[bytes]:
    """``data`` in chunks of ``size`` bytes (0: the whole input, one chunk)."""
    if size == 0:
        yield data
        return
    for i in range(0, len(data), size):
        yield data[i : i + size]


def error_key(e: BaseException) -> tuple[Any, ...]:
    """What must be equal of two engines' errors: class, code, message, line, column, line text."""
    if isinstance(e, ToonDecodeError):
        return (type(e), e.code, str(e), e.msg, e.line, e.column, e.line_text)
    return (type(e), str(e))


def plain(outputs: list[Any]) -> list[Any]:
    """Tuples as lists, so that ``identical`` compares their members' types too."""
    return [list(o) if isinstance(o, tuple) else o for o in outputs]


def prefixes(data: bytes, first: list[Any], limit: int, **opts: Any) -> list[Any]:
    """``first``, then the prefixes of the document's containers and of some members (as the
    reference's ``parse`` gives them), at most ``limit`` in all."""
    out = list(first)
    previous = _engine.use(_engine.select("python"))
    try:
        for prefix, event, value in toonstream.parse(data, **opts):
            if event in ("start_array", "start_map") and prefix not in out:
                out.append(prefix)
            elif event == "map_key" and len(out) < limit:
                p = prefix + "." + value if prefix else value
                if p not in out:
                    out.append(p)
    except (ToonDecodeError, ValueError):
        pass
    finally:
        _engine.use(previous)
    return out[:limit]


def fixture_options(case: dict[str, Any]) -> dict[str, Any]:
    """A spec decode fixture's options as decoder keywords."""
    o = case.get("options", {})
    return {"indent_size": o.get("indentSize", 2), "strict": o.get("strict", True)}


def mutate(rng: random.Random, data: bytes) -> bytes:
    """One to three random byte edits, with bytes that matter to TOON (or break UTF-8)."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        if not b:
            break
        i = rng.randrange(len(b))
        op = rng.choice(("delete", "insert", "replace"))
        byte = rng.choice(b" \n-:,|\t\"[]{}#\\0a\xff\xc3")
        if op == "delete":
            del b[i]
        elif op == "insert":
            b.insert(i, byte)
        else:
            b[i] = byte
    return bytes(b)


#: leaves of generated documents: every primitive kind, and strings that look like other tokens
LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
    | st.sampled_from(["", "true", "null", "-", "- x", "-0", "1e5", "1e999", "0x1", "05", " a ", "a,b", "a|b", "a\tb", '"', "\\"])
)
#: keys with the characters that need quoting
KEYS = st.text(st.sampled_from("ab_-. :,|\"#[]{}\\é\t"), min_size=0, max_size=5)

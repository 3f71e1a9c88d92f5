"""The §7.2 quoting module: its generated patterns against the spec's list read literally."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toonstream
from toonstream._reference.quoting import NEEDS_QUOTE, char_class, encode_key, flag_strings, quote, quote_checked

DELIMS = [",", "\t", "|"]
# The spec's own regex (§7.2), case-insensitive, ASCII digits only.
_SPEC_NUMERIC = re.compile(r"^[+-]?[0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?$", re.IGNORECASE | re.ASCII)


def spec_needs_quote(s: str, delimiter: str) -> bool:
    """§7.2 condition by condition, plus the leading U+FEFF the decoders skip."""
    return (
        s == ""
        or s[0] in " \t"
        or s[-1] in " \t"
        or s in ("true", "false", "null")
        or _SPEC_NUMERIC.fullmatch(s) is not None
        or any(c in s for c in ':"\\[]{}')
        or any(ord(c) < 0x20 for c in s)
        or delimiter in s
        or s[0] in "-#\ufeff"
    )


_PIECES = st.sampled_from(
    [" ", "\t", "-", "#", "+", ".", "e", "E", "0", "7", ":", '"', "\\", "[", "]", "{", "}", ",", "|", "\x01",
     "\x1f", "\x7f", "\ufeff", "é", "a", "true", "false", "null", "\n", "\u2028"]
)
_STRINGS = st.lists(_PIECES, max_size=6).map("".join)


@settings(max_examples=400, deadline=None)
@given(s=_STRINGS, delimiter=st.sampled_from(DELIMS))
def test_needs_quote_is_the_spec_rule(s: str, delimiter: str) -> None:
    assert (NEEDS_QUOTE[delimiter].search(s) is not None) == spec_needs_quote(s, delimiter)


@pytest.mark.parametrize("delimiter", DELIMS)
@pytest.mark.parametrize(
    "s, quoted",
    [("", True), ("a b", False), (" a", True), ("a\t", True), ("05", True), ("+1", True), ("1E-6", True),
     ("1e", False), ("1.", False), (".5", False), ("True", False), ("-", True), ("a-b", False), ("#", True),
     ("a#", False), ("\ufeffx", True), ("x\ufeff", False), ("é", False), ("a\x7fb", False), ("[", True)],
)
def test_needs_quote_cases(s: str, quoted: bool, delimiter: str) -> None:
    assert (NEEDS_QUOTE[delimiter].search(s) is not None) is quoted
    assert spec_needs_quote(s, delimiter) is quoted  # (the oracle agrees with itself)
    assert (toonstream.dumps(s, delimiter=delimiter) != s) is quoted


@settings(max_examples=200, deadline=None)
@given(col=st.lists(_STRINGS.filter(lambda s: "\n" not in s), min_size=1, max_size=12), delimiter=st.sampled_from(DELIMS))
def test_column_filter_covers_the_spec_rule(col: list[str], delimiter: str) -> None:
    flags = flag_strings(col, delimiter)
    assert flags is not None
    must, maybe = flags
    assert {i for i, s in enumerate(col) if spec_needs_quote(s, delimiter)} <= must | maybe
    # "must" is exact: a character that forces quotes
    assert must == {i for i, s in enumerate(col) if any(c in s for c in ':"\\[]{}' + delimiter) or any(ord(c) < 0x20 for c in s)}


_CLASS_CHARS = ":-\\]^[\ufeff\x00\x01\x02\x1f+"
_PROBES = [chr(cp) for cp in range(0x300)] + ["\ufeff", "\ufefe", "\uff00"]


def test_char_class_matches_exactly_its_characters() -> None:
    pattern = re.compile(char_class(_CLASS_CHARS))
    assert [p for p in _PROBES if pattern.fullmatch(p)] == sorted(set(_CLASS_CHARS))


def test_char_class_re2_matches_exactly_its_characters() -> None:
    pa = pytest.importorskip("pyarrow")
    pc = pytest.importorskip("pyarrow.compute")
    got = pc.match_substring_regex(pa.array(_PROBES), "^" + char_class(_CLASS_CHARS, re2=True) + "$").to_pylist()
    assert [p for p, hit in zip(_PROBES, got) if hit] == sorted(set(_CLASS_CHARS))


def test_quote_and_keys() -> None:
    assert quote('a"b\\c\n\x01') == '"a\\"b\\\\c\\n\\u0001"'
    assert encode_key("a.b_1") == "a.b_1"
    assert encode_key("1a") == '"1a"'
    with pytest.raises(ValueError):
        quote("\ud800")
    with pytest.raises(toonstream.ToonEncodeError):
        quote_checked("\ud800")

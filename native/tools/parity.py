"""Compare the native core with the Python engine on many documents.

Inputs: the spec decode fixtures, the adversarial corpus, and random
mutations of both (deleted/inserted bytes, structural characters, shifted
indentation, duplicated or dropped lines, invalid UTF-8).  For each, both
engines decode the bytes whole; values must be equal (types included: int
vs float vs Decimal) and errors must agree on code, line, column and line
text.  Run from the repository root (no pytest, one core):

    cargo build --manifest-path native/Cargo.toml --example report
    python native/tools/parity.py [--mutations 20] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import random
import struct
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import toonstream  # noqa: E402

SPEC = ROOT.parent / "shared" / "toon-spec" / "tests" / "fixtures" / "decode"
CORPUS = ROOT / "tests" / "corpus"
REPORT = ROOT / "native" / "target" / "debug" / "examples" / "report"
ALPHABET = [b" ", b"  ", b"-", b"- ", b":", b",", b"|", b"\t", b'"', b"[", b"]", b"{", b"}", b"#", b"\n", b"\r\n",
            b"\\", b"0", b"1", b"-0", b"e5", b"a", b"[2]", b"{a,b}", b"\xc3\xa9", b"\xff", b"\xe2\x82", b"\xef\xbb\xbf",
            b"\\u", b"\\ud800", b"\\u00e9", b"\\x", b'\\"', b"1e99999999999999999999", b"123456789012345678901234567890",
            b"1.5", b"-1E+03", b"true", b"null", b"[]", b"[0]:", b"[2:]{a}:", b"- [1]: x", b"{a{b,c}}", b"[2|]", b"[2\t]",
            b"x:", b"\n  - ", b"\n    ", b"\r", b"\x00", b"\xe2\x80\xa8"]


def seeds() -> list[tuple[bytes, bool, int]]:
    out = []
    for f in sorted(SPEC.glob("*.json")):
        for case in json.loads(f.read_text())["tests"]:
            o = case.get("options", {})
            out.append((case["input"].encode(), o.get("strict", True), o.get("indentSize", 2)))
    for f in sorted(CORPUS.glob("*.toon")):
        out.append((f.read_bytes(), True, 2))
        out.append((f.read_bytes(), False, 2))
    return out


def mutate(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        k = rng.randrange(6)
        i = rng.randint(0, len(b))
        if k == 0 and b:
            del b[min(i, len(b) - 1)]
        elif k in (1, 2):
            b[i:i] = rng.choice(ALPHABET)
        elif k == 3:
            lines = bytes(b).split(b"\n")
            j = rng.randrange(len(lines))
            lines.insert(j, lines[j])
            b = bytearray(b"\n".join(lines))
        elif k == 4:
            lines = bytes(b).split(b"\n")
            j = rng.randrange(len(lines))
            lines[j] = b" " * rng.choice((1, 2, 4)) + lines[j] if rng.random() < 0.7 else lines[j].lstrip(b" ")
            b = bytearray(b"\n".join(lines))
        elif k == 5:
            lines = bytes(b).split(b"\n")
            if len(lines) > 1:
                del lines[rng.randrange(len(lines))]
            b = bytearray(b"\n".join(lines))
    return bytes(b)


def python_outcome(data: bytes, strict: bool, indent: int, limits: dict[str, int]) -> object:
    try:
        return ("ok", toonstream.loads(data, strict=strict, indent_size=indent, **limits))
    except toonstream.ToonDecodeError as e:
        return ("err", [e.code, e.line, e.column, e.line_text])


def from_tree(t: object) -> object:
    if isinstance(t, list):
        return [from_tree(x) for x in t]
    if isinstance(t, dict):
        if "int" in t:
            return int(t["int"]) if len(t["int"]) < 4000 else int(Decimal(t["int"]))
        if "float" in t:
            return struct.unpack("<d", struct.pack("<Q", int(t["float"])))[0]
        if "dec" in t:
            return Decimal(t["dec"])
        d = {}
        for k, v in t["obj"]:
            d[k] = from_tree(v)  # last write wins, at the first position (a dict)
        return d
    return t


def same(a: object, b: object) -> bool:
    todo = [(a, b)]
    while todo:
        x, y = todo.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, list):
            if len(x) != len(y):  # type: ignore[arg-type]
                return False
            todo.extend(zip(x, y))  # type: ignore[call-overload]
        elif isinstance(x, dict):
            if list(x) != list(y):  # type: ignore[call-overload]
                return False
            todo.extend((x[k], y[k]) for k in x)  # type: ignore[index]
        elif x != y:
            return False
    return True


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mutations", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    cases = []
    for data, strict, indent in seeds():
        cases.append((data, strict, indent))
        for _ in range(args.mutations):
            cases.append((mutate(data, rng), strict, indent))
    # small limits on some, to exercise line_too_long, too_deep,
    # too_many_fields, number_too_long (and the int fast path below 18 digits)
    limited = []
    for d, s, i in cases[::5]:
        limits = {"max_line_length": rng.choice((8, 12, 40)), "max_depth": rng.choice((0, 1, 2, 3)),
                  "max_fields": rng.choice((1, 2)), "max_number_length": rng.choice((1, 3, 20))}
        limited.append((d, s, i, dict(rng.sample(sorted(limits.items()), rng.randint(1, 4)))))
    cases = [(d, s, i, {}) for d, s, i in cases] + limited
    lines = []
    for c in cases:
        case = {"hex": c[0].hex(), "strict": c[1], "indent": c[2], **c[3]}
        lines.append(json.dumps(case))
    proc = subprocess.run([str(REPORT)], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True)
    native = [json.loads(x) for x in proc.stdout.split("\n") if x]
    assert len(native) == len(cases)
    bad = 0
    for c, n in zip(cases, native):
        data, strict, indent, limits = c
        py = python_outcome(data, strict, indent, limits)
        if "err" in n:
            ok = py[0] == "err" and py[1] == n["err"]
        else:
            ok = py[0] == "ok" and same(py[1], from_tree(n["ok"]))
        if not ok:
            bad += 1
            if bad <= 25:
                print(f"MISMATCH strict={strict} indent={indent} limits={limits} input={data!r}\n  python: {py!r}\n  native: {n!r}")
    codes: dict[str, int] = {}
    for n in native:
        key = n["err"][0] if "err" in n else "(value)"
        codes[key] = codes.get(key, 0) + 1
    print("outcomes:", ", ".join(f"{k} {v}" for k, v in sorted(codes.items(), key=lambda kv: -kv[1])))
    print(f"parity: {len(cases) - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""The orjson fast path of :func:`spec_format.base.jsonload.parse_json_bytes` gives exactly
what the hook-based parser gives (``fast=False``, the reference): the same values of the
same types, the same problems, the same text and positions, on every JSON file of the
repository, on hand-written hostile documents and on generated ones."""

from __future__ import annotations

import json
import math
import random
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spec_format.base import jsonload
from spec_format.base.jsonload import parse_json_bytes
from tests.hostile.config_gen import config_text

ROOT = Path(__file__).resolve().parent.parent
SKIP = {".git", ".venv", "node_modules", ".cache"}
NAME = Path("config.json")


def _repo_json() -> list[Path]:
    found = []
    for path in sorted(ROOT.rglob("*.json")):
        parts = path.relative_to(ROOT).parts
        if not SKIP.intersection(parts) and path.is_file():
            found.append(path)
    return found


def canonical(value):
    """``value`` with every type spelled out (``1`` and ``1.0``, ``0.0`` and ``-0.0``, ``True``
    and ``1`` differ) and dict keys in order."""
    if isinstance(value, dict):
        return ("dict", [(canonical(k), canonical(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [canonical(v) for v in value])
    if isinstance(value, float):
        return ("float", struct.pack(">d", value))
    return (type(value).__name__, value)


def same_parse(raw: bytes, *, require_object: bool = True) -> jsonload.Loaded:
    """Parse ``raw`` both ways, assert they agree, return the fast one."""
    fast = parse_json_bytes(raw, NAME, require_object=require_object)
    slow = parse_json_bytes(raw, NAME, require_object=require_object, fast=False)
    assert canonical(fast.data) == canonical(slow.data)
    assert fast.problems == slow.problems
    assert fast.ok == slow.ok
    assert fast.raw == slow.raw == raw
    assert fast.text == slow.text
    fast_pos, slow_pos = fast.positions(), slow.positions()
    assert (fast_pos is None) == (slow_pos is None)
    pointers = [None, ""]
    if isinstance(slow.data, dict):
        pointers += ["/" + jsonload.escape_pointer_token(k) for k in list(slow.data)[:20]]
    for pointer in pointers:
        assert fast.locate(pointer) == slow.locate(pointer)
        if slow_pos is not None:
            assert fast_pos.locate(pointer) == slow_pos.locate(pointer)
    return fast


REPO_JSON = _repo_json()


def test_the_repository_has_json_files_to_compare():
    assert len(REPO_JSON) > 100


@pytest.mark.parametrize("path", REPO_JSON, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_json_file_of_the_repository(path):
    raw = path.read_bytes()
    same_parse(raw)
    same_parse(raw, require_object=False)


def test_the_fast_path_takes_clean_configs():
    """Clean files do go through orjson (else the comparisons above prove nothing)."""
    clean = [
        p.read_bytes()
        for p in REPO_JSON
        if "examples" in p.relative_to(ROOT).parts and p.name == "config.json"
    ]
    clean = [raw for raw in clean if not parse_json_bytes(raw, NAME, fast=False).problems]
    assert len(clean) > 5
    taken = [raw for raw in clean if jsonload._fast_parse(raw, True) is not None]
    assert len(taken) >= len(clean) * 0.9


HOSTILE = [
    b"",
    b"   \n",
    b"{}",
    b"[]",
    b"null",
    b'"x"',
    b"1",
    b"{",
    b'{"a": 1,}',
    b'{"a": [1, 2,]}',
    b'{"a": 1} x',
    b'{"a": 1}\x00',
    b'\xef\xbb\xbf{"a": 1}',
    b'\xef\xbb\xbf\xef\xbb\xbf{"a": 1}',
    b'{"a": "\xff"}',
    b'{"a": "\xed\xa0\x80"}',
    b'{"a": "\xc0\xaf"}',
    *(  # UTF-8 edges: past U+10FFFF, overlong, truncated, surrogates; noncharacters are valid
        b'{"a": "' + seq + b'"}'
        for seq in (
            b"\xf4\x90\x80\x80",
            b"\xf5\x80\x80\x80",
            b"\xc0\x80",
            b"\xe0\x80\x80",
            b"\xf0\x80\x80\x80",
            b"\xc2",
            b"\xe2\x82",
            b"\x80",
            b"\xed\xbf\xbf",
            b"\xef\xbf\xbf",
            b"\xf4\x8f\xbf\xbf",
            b"\xee\x80\x80",
        )
    ),
    b'{"a": "\\ud800"}',
    b'{"\\udfff": 1}',
    b'{"a": "\\ud83d\\ude00"}',
    b'{"a": "\\u00e9", "b": "\\/"}',
    b'{"a": 1, "a": 2}',
    b'{"a": 1, "a" : 2}',
    b'{"a": 1,\n"a"\n:\n2}',
    b'{"a": {"b": 1, "b": 1}}',
    b'{"a": [{"b": {"c": 1, "c": {"d": 2}}}]}',
    b'{"a": 1, "\\u0061": 2}',
    b'{"a\\"": 1, "a\\"": 2}',
    b'{"a": "x\\":", "a": 2}',
    b'{"k": "\\":", "k2": ":"}',
    b'{"a": ":", "b": ": :", "c": "x\\":y"}',
    b'{"a": " :", "a": ":"}',
    b'{"": 1, "": 2}',
    b'{"a": NaN}',
    b'{"a": Infinity}',
    b'{"a": -Infinity}',
    b'{"a": [NaN, NaN]}',
    b'{"a": 1e999}',
    b'{"a": -1e999}',
    b'{"a": 1e-999}',
    b'{"a": 1.7976931348623157e308}',
    b'{"a": 1.7976931348623158e308}',
    b'{"a": 1.7976931348623159e308}',
    b'{"a": 1.8e308}',
    b'{"a": 179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497791.9}',
    b'{"a": 9223372036854775807, "b": -9223372036854775807}',
    b'{"a": 9223372036854775808}',
    b'{"a": -9223372036854775808}',
    b'{"a": 18446744073709551615}',
    b'{"a": 18446744073709551616}',
    b'{"a": 123456789012345678901234567890}',
    b'{"a": ' + b"9" * 401 + b"}",
    b'{"a": ' + b"9" * 5000 + b"}",
    b'{"a": 0.1234567890123456789012}',
    b'{"a": 1234567890123456789.5}',
    b'{"a": -0.0, "b": -0, "c": 0.0, "d": 0, "e": 1.0, "f": 1, "g": 1e5, "h": 1E+05}',
    b'{"a": 1e-5, "b": 12.5e-3, "c": 5e300, "d": -5E-300, "e": 2.2250738585072014e-308}',
    b'{"a": 01}',
    b'{"a": 1.}',
    b'{"a": .5}',
    b'{"a": +1}',
    b'{"a": true, "b": false, "c": null, "d": True}',
    b'{"a": "tab\there"}',
    b'{"a": "\x7f\xc2\x80\xe2\x80\xa8"}',
    b"{'a': 1}",
    b'{"a": 1 /* c */}',
    b'{"a":\x0b1}',
    b'{"a":\xc2\xa01}',
    b'{"a": {"[": "{{{{", "b": "]]]]"}}',
    b'{"a": "' + b"{" * 100 + b'"}',
    b'{"a": ' + b"[" * 63 + b"]" * 63 + b"}",
    b'{"a": ' + b"[" * 64 + b"]" * 64 + b"}",
    b'{"a": ' + b"[" * 70 + b"]" * 70 + b"}",
    b'{"a": ' + b"[" * 2000 + b"]" * 2000 + b"}",
    b'{"a": ' + b'{"b": ' * 80 + b"1" + b"}" * 80 + b"}",
    b"[" + b",".join(b"{}" for _ in range(100)) + b"]",
    b'{"d": 1' + b', "d": 1' * 300 + b"}",
    b'{"n": [' + b",".join(b"NaN" for _ in range(150)) + b"]}",
]


@pytest.mark.parametrize("raw", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_documents(raw):
    same_parse(raw)
    same_parse(raw, require_object=False)


def test_problems_never_take_the_fast_path():
    """Whatever the reference reports, the fast path declined (it reports nothing)."""
    for raw in HOSTILE:
        for require_object in (True, False):
            if parse_json_bytes(raw, NAME, require_object=require_object, fast=False).problems:
                assert jsonload._fast_parse(raw, require_object) is None, raw[:60]


@pytest.mark.parametrize("seed", range(0, 4000, 7))
def test_generated_hostile_configs(seed):
    same_parse(config_text(seed).encode("utf-8", "surrogatepass"))


# -- generated documents, written in every way JSON allows ----------------------------------
KEYS = st.sampled_from(["a", "b", "c", "a:", ":", " :", '"', "\\", "é", "\u2028", "\ud800", ""])
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, -1, 2**63 - 1, 2**63, -(2**63), 2**64 - 1, 2**64, 10**18, 10**19]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(st.characters(exclude_categories=()), max_size=6),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.lists(st.tuples(KEYS, inner), max_size=4)
    ),
    max_leaves=25,
)
SPACE = st.sampled_from(["", " ", "\n  ", "\t", "\r\n"])


@st.composite
def documents(draw) -> bytes:
    """A document from VALUES (lists of pairs are objects, duplicates kept), each number,
    string and space spelled in one of the ways a writer may."""

    def number(value) -> str:
        if isinstance(value, float):
            if math.isnan(value):
                return "NaN"
            if math.isinf(value):
                return draw(st.sampled_from(["Infinity", "1e999"])) if value > 0 else "-Infinity"
            text = repr(value)
            return draw(st.sampled_from([text, text.upper(), text.replace("e+", "e")]))
        text = str(value)
        return draw(st.sampled_from([text, text + ".0", text + "e0", text + "E+00"]))

    def string(text: str) -> str:
        # escaped as json.dumps does (\uXXXX); a lone surrogate can only be written so
        if text.encode("utf-8", "surrogatepass").decode("utf-8", "replace") != text:
            return json.dumps(text)
        if draw(st.booleans()):
            return json.dumps(text)
        escaped = text.replace("\\", "\\\\").replace('"', '\\"')
        return '"' + "".join(c if c >= " " else f"\\u{ord(c):04x}" for c in escaped) + '"'

    def write(value) -> str:
        if isinstance(value, tuple):  # never reached: pairs are written by their object
            raise AssertionError
        if value is None or isinstance(value, bool):
            return json.dumps(value)
        if isinstance(value, (int, float)):
            return number(value)
        if isinstance(value, str):
            return string(value)
        if value and all(isinstance(v, tuple) for v in value):
            pairs = [f"{string(k)}{draw(SPACE)}:{draw(SPACE)}{write(v)}" for k, v in value]
            return "{" + draw(SPACE) + ",".join(pairs) + draw(SPACE) + "}"
        if not value and draw(st.booleans()):
            return "{}"
        items = [write(v[1] if isinstance(v, tuple) else v) for v in value]
        return "[" + f",{draw(SPACE)}".join(items) + "]"

    top = draw(st.lists(st.tuples(KEYS, VALUES), max_size=6))
    text = draw(SPACE) + write(top) if top else draw(st.sampled_from(["{}", "[]", "1", '"s"']))
    raw = text.encode("utf-8", "surrogatepass")
    rare = random.Random(draw(st.integers(0, 2**32)))  # hypothesis favours 0s: not for these
    if rare.random() < 0.05 and raw:  # one byte changed: bad UTF-8, broken syntax
        at = rare.randrange(len(raw))
        raw = raw[:at] + bytes([rare.randrange(256)]) + raw[at + 1 :]
    if rare.random() < 0.03:
        raw = b"\xef\xbb\xbf" + raw
    return raw


@settings(
    max_examples=1000,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(documents())
def test_generated_documents(raw):
    same_parse(raw)
    same_parse(raw, require_object=False)

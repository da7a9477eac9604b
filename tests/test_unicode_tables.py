"""The pinned Unicode tables: equal to what tiktoken's Rust regex engine uses, and reproducible."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import tiktoken

from anytok import unicode as ucd
from anytok.pretokenize import parse_pattern
from conftest import ROOT

SCALARS = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]


def tiktoken_members(cls: str) -> set[int]:
    """Code points tiktoken's regex engine puts in `cls`, probed through tiktoken itself.

    An encoding whose pattern is `a<cls>` and whose vocabulary holds only single bytes returns
    the bytes of "a" + X exactly for the X that the class matches.
    """
    ranks = {bytes([i]): i for i in range(256)}
    enc = tiktoken.Encoding("probe", pat_str="a" + cls, mergeable_ranks=ranks, special_tokens={})
    text = "".join("a" + chr(cp) for cp in SCALARS)
    out = enc.decode_bytes(enc.encode_ordinary(text)).decode("utf-8")
    return {ord(c) for c in out[1::2]}


def anytok_members(cls: str) -> set[int]:
    node = parse_pattern(cls)
    while node[0] in ("seq", "group"):
        node = node[1][0] if node[0] == "seq" else node[2]
    assert node[0] == "set", node
    return {cp for lo, hi in node[1] for cp in range(lo, hi + 1)}


CLASSES = [r"\p{L}", r"\p{Lu}", r"\p{Ll}", r"\p{Lt}", r"\p{Lm}", r"\p{Lo}", r"\p{M}", r"\p{N}", r"\s", r"\S",
           r"[^\s\p{L}\p{N}]", r"[^\r\n\p{L}\p{N}]", r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]",
           r"\p{Nd}", r"\P{L}", r"(?i:s)", r"(?i:k)", r"(?i:t)", r"(?i:[sdmt])", r"(?i:l)", r"(?i:e)"]


@pytest.mark.parametrize("cls", CLASSES)
def test_class_equals_tiktoken(cls):
    expected = tiktoken_members(cls)
    got = anytok_members(cls) - set(range(0xD800, 0xE000))
    assert got == expected, sorted(got ^ expected)[:20]


def test_unicode_version():
    assert ucd.UNICODE_VERSION == "16.0.0"


def test_tables_regenerate_identically(tmp_path):
    """The committed table is exactly what the generator makes from the pinned unicodedata2."""
    import unicodedata2

    assert unicodedata2.unidata_version == "16.0.0"
    committed = (ROOT / "pkg" / "anytok" / "_unicode_tables.py").read_text(encoding="utf-8")
    r = subprocess.run([sys.executable, str(ROOT / "build_scripts" / "gen_unicode_tables.py"), "--out", str(tmp_path / "t.py")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "t.py").read_text(encoding="utf-8") == committed


def test_pattern_cache_regenerates_identically(tmp_path):
    """The cached ASCII variants of the bundled patterns are what the translator makes now, and
    a Splitter built from the cache splits like one built by translating."""
    committed = (ROOT / "pkg" / "anytok" / "_pattern_cache.py").read_text(encoding="utf-8")
    r = subprocess.run([sys.executable, str(ROOT / "build_scripts" / "gen_pattern_cache.py"), "--out", str(tmp_path / "c.py")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "c.py").read_text(encoding="utf-8") == committed

    from anytok import _pattern_cache
    from anytok.pretokenize import Splitter, _render, parse_pattern

    text = "Hello, world!  It's 2024's 12345 test\n\n\tcode(x) += 1  \n 'LL 'Ve"
    assert len(_pattern_cache.ASCII) == 3
    for pattern, source in _pattern_cache.ASCII.items():
        cached = Splitter(pattern)
        assert cached._ast_node is None and cached._ascii.pattern == source  # nothing parsed
        translated = re.compile(_render(parse_pattern(pattern), ucd.ASCII))
        assert cached.split(text) == translated.findall(text)


def test_bundled_patterns_cover_every_code_point():
    """`Splitter.covers` (stream.summarize skips its gap check on it) is set for the bundled
    patterns only, and they leave no character out: every code point, alone and between a
    letter, a space and a combining mark, is in some piece."""
    from anytok import _pattern_cache, stream
    from anytok.pretokenize import Splitter

    chars = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    contexts = ["a", " ", "\u0301"]
    for pattern in _pattern_cache.ASCII:
        splitter = Splitter(pattern)
        assert splitter.covers
        for left in contexts:
            text = left.join(chars[i:i + 1] for i in range(len(chars)))
            assert "".join(splitter.split(text)) == text, (pattern[:30], left)
    gappy = Splitter(r"[a-z]+")  # another pattern: not known to cover, so summarize checks
    assert not gappy.covers

    class Enc:
        _splitter = gappy

    with pytest.raises(ValueError, match="does not cover"):
        stream._summarize((Enc, "ab cd", "", True))

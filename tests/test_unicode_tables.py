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
    r = subprocess.run([sys.executable, str(ROOT / "build_scripts" / "gen" / "gen_unicode_tables.py"), "--out", str(tmp_path / "t.py")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "t.py").read_text(encoding="utf-8") == committed


def test_pattern_cache_regenerates_identically(tmp_path):
    """The cached ASCII variants of the bundled patterns are what the translator makes now, and
    a Splitter built from the cache splits like one built by translating."""
    committed = (ROOT / "pkg" / "anytok" / "_pattern_cache.py").read_text(encoding="utf-8")
    r = subprocess.run([sys.executable, str(ROOT / "build_scripts" / "gen" / "gen_pattern_cache.py"), "--out", str(tmp_path / "c.py")],
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


# Characters standing for every class of the bundled patterns within a universe (letters of
# both cases, the letters of the contractions, digits, each kind of space and line end,
# punctuation, controls), plus marks, CJK, other numbers and Unicode spaces outside ASCII.
_ASCII_REPS = "aZ0 \t\n\r\x0b'sStTlLvVeEdDmMrR._/\x00"
_WIDE_REPS = "\u0301\u00e9\u4e2d\u00a0\u0085\u2028\u00b2\u0660"
_HF_PATTERNS = [  # GPT-2's and Llama 3's (no possessive quantifiers as written)
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
]


@pytest.mark.parametrize("universe", ["ascii", "bmp", "all"])
def test_tightened_patterns_match_as_written(universe):
    """The split patterns are rendered with quantifiers made possessive where backtracking into
    them cannot succeed (pretokenize._tighten); per universe, the tightened and the literal
    translations find the same pieces in every string of up to 4 (3 for all of Unicode)
    representative characters and in random longer ones.  (A rewrite that holds for ASCII only,
    such as `[^\\r\\n\\p{L}\\p{N}]?+` before letters and marks, is caught by the marks here.)"""
    import itertools
    import random

    from anytok import _pattern_cache
    from anytok.pretokenize import _render

    cut, alphabet, longest = {
        "ascii": (ucd.ASCII, _ASCII_REPS, 4),
        "bmp": (ucd.BMP, _ASCII_REPS[:14] + _WIDE_REPS, 4),
        "all": (None, _ASCII_REPS[:10] + _WIDE_REPS + "\U0001f600\U00020000", 3),
    }[universe]
    rnd = random.Random(19)
    changed = 0
    for pattern in [*_pattern_cache.ASCII, *_HF_PATTERNS]:
        ast = parse_pattern(pattern)
        tight, literal = _render(ast, cut), _render(ast, cut, tighten=False)
        changed += tight != literal
        a, b = re.compile(tight), re.compile(literal)
        texts = ("".join(t) for k in range(1, longest + 1) for t in itertools.product(alphabet, repeat=k))
        randoms = ("".join(rnd.choices(alphabet, k=rnd.randrange(5, 40))) for _ in range(5000))
        for text in itertools.chain(texts, randoms):
            assert a.findall(text) == b.findall(text), (pattern[:30], universe, text)
    assert changed == len(_pattern_cache.ASCII) + len(_HF_PATTERNS)


def test_tightening_rewrites():
    """What the three rewrites make of o200k's pattern for ASCII text, and where they stop."""
    from anytok import _pattern_cache
    from anytok.pretokenize import _render, _tighten, _within

    o200k = next(p for p in _pattern_cache.ASCII if p.startswith("[^"))
    tight = _render(parse_pattern(o200k), ucd.ASCII)
    assert tight.startswith(r"[\x00-\x09\x0b\x0c\x0e-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]?+[A-Z]*[a-z]++")  # 1, 2
    assert r"|(?:[\x09\x0b\x0c\x20]*+[\x0a\x0d])++|" in tight  # 3
    assert r"[\x09-\x0d\x20]+(?![" in tight  # a look-ahead follows: left alone
    # Marks are letters here and not in the optional class: not possessive for the BMP.
    first = _tighten(_within(parse_pattern(o200k), ucd.BMP), at_end=True)[1][0][1][0]
    assert first[0] == "repeat" and first[2:] == (0, 1, "")
    # Lazy quantifiers and what precedes a look-around keep their backtracking.
    assert _render(parse_pattern(r"a+?b|c*(?=d)"), None) == "a+?b|c*(?=d)"

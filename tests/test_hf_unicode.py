"""The pinned Unicode data of the HF pipeline equals what `tokenizers` uses, code point by code point.

`tokenizers` takes its Unicode data from four places (see build_scripts/gen/gen_hf_unicode_tables.py):
Oniguruma (Unicode 16.0) for regexes, unicode-normalization-alignments (9.0) for NF*, the
unicode_categories crate (8.0) for BERT's classes, Rust's std (17.0) for lowercase, whitespace
and numbers.  Each test runs one component over every scalar value (in batches) in both
libraries.
"""

from __future__ import annotations

import functools
import subprocess
import sys

import pytest
from tokenizers import Regex
from tokenizers import normalizers as HN
from tokenizers import pre_tokenizers as HP

from anytok.pipeline import normalizers as AN
from anytok.pipeline import pre_tokenizers as AP
from anytok.pretokenize import parse_pattern
from conftest import ROOT

SCALARS = [cp for cp in range(1, 0x110000) if not 0xD800 <= cp <= 0xDFFF]
BATCH = 1 << 14


def batches(fmt: str = "{}", sep: str = "\x02"):
    for i in range(0, len(SCALARS), BATCH):
        yield [fmt.format(chr(cp)) for cp in SCALARS[i:i + BATCH] if chr(cp) != sep]


# ---------------------------------------------------------------------------------------------
# Oniguruma's classes (Split / Replace regexes)
# ---------------------------------------------------------------------------------------------


# The code points of onig_members' text; "\x01" (its separator) and "a" (its prefix), which could
# make a match straddle two pairs, are looked up on their own.
ONIG_SWEPT = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF and cp not in (0x01, 0x61)]


@functools.cache
def onig_text() -> str:
    return "".join("a" + chr(cp) + "\x01" for cp in ONIG_SWEPT)


def onig_members(cls: str) -> set[int]:
    """Code points `tokenizers`' Oniguruma puts in `cls`: the "aX" pairs of "aX\x01aY\x01..." that
    the regex "a" + cls matches, as tokenizers' Replace normalizer removes them (one string in, one
    out: a Split pre-tokenizer's list of the matched pairs cost 8 times as much; both find the
    matches with the same Oniguruma regex), every pair left checked in place; "\x01" and "a"
    through that Split's list of pairs."""
    pieces = HN.Replace(Regex("a" + cls), "").normalize_str(onig_text()).split("\x01")
    assert len(pieces) == len(ONIG_SWEPT) + 1 and pieces[-1] == "", cls
    out = set()
    for cp, piece in zip(ONIG_SWEPT, pieces):
        if not piece:
            out.add(cp)
        else:
            assert piece == "a" + chr(cp), (cls, hex(cp), piece)
    pt = HP.Split(Regex("a" + cls), behavior="removed", invert=True)
    out |= {ord(p[1]) for p, _ in pt.pre_tokenize_str("a\x01\x01aa\x01") if len(p) == 2 and p[0] == "a"}
    return out


def anytok_members(cls: str) -> set[int]:
    node = parse_pattern(cls, "onig")
    while node[0] in ("seq", "group"):
        node = node[1][0] if node[0] == "seq" else node[2]
    assert node[0] == "set", node
    return {cp for lo, hi in node[1] for cp in range(lo, hi + 1)} - set(range(0xD800, 0xE000))


ONIG_CLASSES = [r"\p{L}", r"\p{N}", r"\p{P}", r"\p{S}", r"\p{M}", r"\p{Lu}", r"\p{Ll}", r"\p{Lo}", r"\p{Nd}",
                r"\s", r"\S", r"\d", r"\h", r".", r"[^\s\p{L}\p{N}]", r"[^\r\n\p{L}\p{N}]", r"[^\r\n\p{L}\p{P}\p{S}]",
                r"[\p{L}\p{M}]", r"(?i:s)", r"(?i:k)", r"(?i:t)", r"(?i:l)", r"(?i:d)", r"(?m:.)"]


@pytest.mark.parametrize("cls", ONIG_CLASSES)
def test_oniguruma_class(cls):
    expected = onig_members(cls)
    got = anytok_members(cls)
    assert got == expected, sorted(got ^ expected)[:20]


@pytest.mark.parametrize("pattern,text", [
    (r"a$", "a\nba\r\nca"), (r"^b", "b\nba\r\nb"), (r"a\Z", "a\nba\n"), (r"a\z", "a\nba\n"), (r"\Ab", "b\nb"),
    (r"\d{1,3}+", "12345678 1"), (r"a\d{2}?b", "ab a12b a1b"), (r"a\d{,2}", "a123 a{,2}"), (r"a{2}+", "aaaaa"),
    (r"a*+a", "aaa"), (r"a++a", "aaa"), (r"a?+a", "a"), (r"\p{^L}", "ab1"), (r"\x{41}\u0042", "AB"),
    (r"[\-\[\]^_`{|}~]+", "-[]^_`{|}~ x"), (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)", "'S 'ſ 'LL 'Re 'K"),
])
def test_oniguruma_syntax(pattern, text):
    hf = HP.Split(Regex(pattern), behavior="removed", invert=True)
    at = AP.Split({"Regex": pattern}, "Removed", invert=True)
    assert at.split(text, True) == [p for p, _ in hf.pre_tokenize_str(text)]


def test_oniguruma_multi_char_folding_refused():
    from anytok.pipeline import UnsupportedTokenizerError

    with pytest.raises(UnsupportedTokenizerError, match="case folding"):
        AP.Split({"Regex": "(?i:ss)"}, "Isolated")


# ---------------------------------------------------------------------------------------------
# Normalizers
# ---------------------------------------------------------------------------------------------

NORMALIZERS = {
    "NFC": (HN.NFC(), AN.NFC()),
    "NFD": (HN.NFD(), AN.NFD()),
    "NFKC": (HN.NFKC(), AN.NFKC()),
    "NFKD": (HN.NFKD(), AN.NFKD()),
    "Lowercase": (HN.Lowercase(), AN.Lowercase()),
    "StripAccents": (HN.StripAccents(), AN.StripAccents()),
    "Bert clean": (HN.BertNormalizer(True, False, False, False), AN.BertNormalizer(True, False, False, False)),
    "Bert chinese": (HN.BertNormalizer(False, True, False, False), AN.BertNormalizer(False, True, False, False)),
    "Bert accents": (HN.BertNormalizer(False, False, True, False), AN.BertNormalizer(False, False, True, False)),
    "Bert lowercase": (HN.BertNormalizer(False, False, None, True), AN.BertNormalizer(False, False, None, True)),
    "Strip": (HN.Strip(), AN.Strip()),
}


@pytest.mark.parametrize("name", list(NORMALIZERS))
def test_normalizer_every_code_point(name):
    hf, at = NORMALIZERS[name]
    sep = "q"  # kept by all of them (and clean_text keeps it, unlike a control character)
    for items in batches(sep=sep):
        expected = hf.normalize_str(sep.join(items)).split(sep)
        got = [at.normalize(x) for x in items] if name == "Strip" else at.normalize(sep.join(items)).split(sep)
        if name == "Strip":
            expected = [hf.normalize_str(x) for x in items]
        if got != expected:
            bad = next(i for i, (x, y) in enumerate(zip(got, expected)) if x != y)
            raise AssertionError(f"{name}: U+{ord(items[bad][0]):04X}: {got[bad]!r} != {expected[bad]!r}")


def _composition_relevant() -> list[int]:
    """Code points whose normalization can interact with a neighbour: those with a combining class,
    a decomposition, or a place in some decomposition (the starters and marks of compositions),
    and all of Hangul.  Every other code point is checked alone by the test above."""
    import unicodedata

    keep = set(range(0x1100, 0x1200)) | set(range(0xAC00, 0xD7A4))
    for cp in SCALARS:
        ch = chr(cp)
        d = unicodedata.decomposition(ch)
        if unicodedata.combining(ch) or d:
            keep.add(cp)
            keep.update(int(x, 16) for x in d.split() if not x.startswith("<"))
    return sorted(keep)


MARKS = [0x334, 0x93C, 0x94D, 0x1D16D, 0x5B0, 0x59A, 0x316, 0x301, 0x35C, 0x345, 0x31B, 0x302, 0x3099, 0x1161, 0x11A8]


@pytest.mark.parametrize("form", ["NFC", "NFD", "NFKC", "NFKD"])
def test_normalization_with_marks(form):
    """Code points before / after combining marks: decomposition, reordering, composition."""
    hf, at = NORMALIZERS[form]
    relevant = _composition_relevant()
    for mark in MARKS:
        m = chr(mark)
        for fmt in ("a{}" + m, "a" + m + "{}", "{}" + m + "\u0323", "\u1100{}"):
            for i in range(0, len(relevant), BATCH):
                text = "\x00".join(fmt.format(chr(cp)) for cp in relevant[i:i + BATCH])
                assert at.normalize(text) == hf.normalize_str(text), (form, hex(mark), fmt)


# ---------------------------------------------------------------------------------------------
# Character-class pre-tokenizers
# ---------------------------------------------------------------------------------------------

PRE_TOKENIZERS = {
    "BertPreTokenizer": (HP.BertPreTokenizer(), AP.BertPreTokenizer()),
    "Punctuation": (HP.Punctuation(), AP.Punctuation()),
    "Punctuation contiguous": (HP.Punctuation("contiguous"), AP.Punctuation("Contiguous")),
    "Digits": (HP.Digits(individual_digits=False), AP.Digits(False)),
    "Digits individual": (HP.Digits(individual_digits=True), AP.Digits(True)),
    "WhitespaceSplit": (HP.WhitespaceSplit(), AP.WhitespaceSplit()),
    "Whitespace": (HP.Whitespace(), AP.Whitespace()),
    "Metaspace": (HP.Metaspace(), AP.Metaspace()),
    "ByteLevel": (HP.ByteLevel(add_prefix_space=True, use_regex=True), AP.ByteLevel(True, True)),
}


@pytest.mark.parametrize("name", list(PRE_TOKENIZERS))
def test_pre_tokenizer_every_code_point(name):
    hf, at = PRE_TOKENIZERS[name]
    for items in batches("q{0}q{0} 1"):
        text = "".join(items)
        assert at.split(text, True) == [p for p, _ in hf.pre_tokenize_str(text)], name


# ---------------------------------------------------------------------------------------------
# Added tokens with single_word: which neighbours make a match "inside a word"
# ---------------------------------------------------------------------------------------------


def single_word_pipeline(**flags) -> dict:
    """MiniLM's vocabulary, no normalizer, WhitespaceSplit, and an added token "zq"."""
    import json

    from hf_support import model_path

    cfg = json.loads(model_path("minilm").read_text(encoding="utf-8"))
    cfg.update(normalizer=None, pre_tokenizer={"type": "WhitespaceSplit"}, post_processor=None,
               truncation=None, padding=None)
    token = {"content": "zq", "single_word": True, "lstrip": False, "rstrip": False,
             "normalized": False, "special": False, **flags}
    cfg["added_tokens"] = cfg["added_tokens"] + [{"id": len(cfg["model"]["vocab"]), **token}]
    return cfg


@pytest.mark.parametrize("fmt", ["{}zq", "zq{}"])
def test_single_word_every_code_point(fmt):
    from anytok.pipeline.tokenizer import Tokenizer
    from hf_support import hf_from_json

    cfg = single_word_pipeline()
    at, hf = Tokenizer.from_config(cfg), hf_from_json(cfg)
    for items in batches(fmt, sep=" "):
        text = " ".join(items)
        assert at.encode(text) == hf.encode(text, add_special_tokens=False).ids, fmt


# ---------------------------------------------------------------------------------------------
# The tables regenerate identically
# ---------------------------------------------------------------------------------------------


def test_tables_regenerate_identically(tmp_path):
    committed = (ROOT / "pkg" / "anytok" / "pipeline" / "_tables.py").read_text(encoding="utf-8")
    r = subprocess.run([sys.executable, str(ROOT / "build_scripts" / "gen" / "gen_hf_unicode_tables.py"),
                        "--out", str(tmp_path / "t.py")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "t.py").read_text(encoding="utf-8") == committed

"""Every Unicode scalar value, in several contexts, encodes as in tiktoken.

Each context is applied to every code point and the results are concatenated into long texts
(many contexts per encode call); a mismatch is narrowed down to the code point that causes it.
Run for one encoding per distinct split pattern (r50k/p50k/gpt2 share one, as do o200k and
o200k_harmony).  The default run gives each of a pattern's contexts its share of the code points
(every code point is still swept once per pattern and vocabulary); ANYTOK_FULL=1 sweeps every code
point in every context.

Two vocabularies are used with each pattern:

* the real one (r50k_base, cl100k_base, o200k_base): what users get;
* a "revealing" one: all 256 bytes plus all 65,536 byte pairs, ranked so that a pair that
  starts a new character (second byte ASCII or a UTF-8 lead byte) merges before any pair
  inside a character.  Two characters in one piece therefore almost always merge across
  their boundary, and in different pieces they cannot: a difference in where the split falls
  shows up in the ids, even for rare characters that the real vocabularies never merge.
"""

from __future__ import annotations

import functools

import pytest
import tiktoken

import anytok
from conftest import PATTERN_ENCODINGS, anytok_encoding, code_point_share, tiktoken_encoding

SCALARS = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
CHUNK = 1 << 15

CONTEXTS = {
    "after space": " {}",
    "between letters": "a{}b",
    "after apostrophe, upper": "A'{}S ",
    "after digits": "12{}3",
    "before newline": "{}\n",
    "doubled before a letter": "{}{}a",
    "doubled between spaces": "x {}{} ",
    "contraction after it": "{}'ll\t",
}
REAL_VOCAB_CONTEXTS = ["after space", "between letters", "after apostrophe, upper", "after digits", "before newline"]


@functools.lru_cache(maxsize=None)
def revealing_pair(name: str):
    def rank_key(pair: bytes):
        return (0x80 <= pair[1] < 0xC0, pair)

    pairs = sorted((bytes([x, y]) for x in range(256) for y in range(256)), key=rank_key)
    ranks = {bytes([i]): i for i in range(256)}
    ranks.update({p: 256 + i for i, p in enumerate(pairs)})
    pat = tiktoken_encoding(name)._pat_str
    return (
        anytok.Encoding("reveal", pat_str=pat, mergeable_ranks=ranks, special_tokens={}),
        tiktoken.Encoding("reveal", pat_str=pat, mergeable_ranks=ranks, special_tokens={}),
    )


def narrow(a, t, cps, ctx):
    """The first code point whose context encodes differently (given that the chunk differs)."""
    while len(cps) > 1:
        half = cps[: len(cps) // 2]
        text = "".join(ctx.format(chr(c), chr(c)) for c in half)
        cps = half if a.encode_ordinary(text) != t.encode_ordinary(text) else cps[len(cps) // 2 :]
    return cps[0]


def sweep(a, t, label, ctx, part=0, parts=1):
    """Every code point in context `ctx` (in the default run, the share of context `part` of `parts`)."""
    scalars = code_point_share(SCALARS, part, parts)
    for start in range(0, len(scalars), CHUNK):
        cps = scalars[start : start + CHUNK]
        text = "".join(ctx.format(chr(c), chr(c)) for c in cps)
        if a.encode_ordinary(text) != t.encode_ordinary(text):
            cp = narrow(a, t, cps, ctx)
            sample = ctx.format(chr(cp), chr(cp))
            pytest.fail(
                f"{label}: U+{cp:04X} encodes differently: "
                f"{sample!r} -> {a.encode_ordinary(sample)} vs tiktoken {t.encode_ordinary(sample)}"
            )


@pytest.mark.parametrize("context", REAL_VOCAB_CONTEXTS)
@pytest.mark.parametrize("name", PATTERN_ENCODINGS)
def test_every_code_point(name, context):
    part = REAL_VOCAB_CONTEXTS.index(context) + PATTERN_ENCODINGS.index(name)
    sweep(anytok_encoding(name), tiktoken_encoding(name), f"{name}, context {context!r}", CONTEXTS[context],
          part, len(REAL_VOCAB_CONTEXTS))


@pytest.mark.parametrize("context", list(CONTEXTS))
@pytest.mark.parametrize("name", PATTERN_ENCODINGS)
def test_every_code_point_revealing_vocab(name, context):
    a, t = revealing_pair(name)
    part = list(CONTEXTS).index(context) + PATTERN_ENCODINGS.index(name)
    sweep(a, t, f"{name} pattern with the revealing vocabulary, context {context!r}", CONTEXTS[context],
          part, len(CONTEXTS))


def test_revealing_vocab_detects_a_wrong_split():
    """The revealing vocabulary turns a one-character difference in splitting into different ids."""
    a, t = revealing_pair("o200k_base")
    # U+1C89 is an uppercase letter (Lu) in Unicode 16: "ᲉᲉa" is one piece.  Split as if it
    # were punctuation ("ᲉᲉ" + "a"), the ids differ.
    joined = t.encode_ordinary("\u1c89\u1c89a")
    split = t.encode_ordinary("\u1c89\u1c89") + t.encode_ordinary("a")
    assert joined != split
    assert a.encode_ordinary("\u1c89\u1c89a") == joined

"""Cutting pieces where no token can span, and the fallbacks for unusual vocabularies."""

from __future__ import annotations

import random

import pytest
import tiktoken

import anytok
from anytok import bpe
from conftest import anytok_encoding, tiktoken_encoding


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize("corpus", ["zh", "ja"])
def test_segments_encode_like_whole_pieces(name, corpus, corpora):
    """Every cut piece of the corpus: the BPE of its segments equals the BPE of the piece."""
    enc = anytok_encoding(name)
    enc.encode("warm up")
    pieces = list(dict.fromkeys(enc._splitter.split(corpora[corpus][:300_000])))
    missed = [p for p in pieces if p not in enc._str_ranks]
    from anytok.segment import Segmenter

    seg = Segmenter(enc._str_ranks, enc._invalid_tokens)
    refined = seg.refine(missed, list(range(len(missed))))
    assert refined is not None
    # refine() with every piece missed returns, per piece, its segments in order
    new_pieces, _ = refined
    joined = "".join(new_pieces)
    assert joined == "".join(missed)
    cut = 0
    i = 0
    for piece in missed:
        parts = []
        while len("".join(parts)) < len(piece):
            parts.append(new_pieces[i])
            i += 1
        assert "".join(parts) == piece
        whole = bpe.merge(piece.encode(), enc._mergeable_ranks)
        got = [t for part in parts for t in bpe.merge(part.encode(), enc._mergeable_ranks)]
        assert got == whole, piece
        cut += len(parts) > 1
    assert cut > len(missed) // 4  # the cutting does happen, and often


def test_bundled_vocabularies_are_regular():
    """Every token of the bundled vocabularies BPE-encodes to itself with lower-ranked children.

    The shortcuts (segment tokens, the backtracking encoder, runs) rely on this being checked
    per token; for the bundled vocabularies it holds everywhere.
    """
    for name in ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]:
        enc = anytok_encoding(name)
        bt = enc._backtracker()
        rng = random.Random(name)
        tokens = list(enc._mergeable_ranks.values())
        for token in rng.sample(tokens, 20000):
            assert bt.split(token) is not None, (name, token, enc.decode_single_token_bytes(token))


def test_regular_property_recorded():
    import anytok as at

    for name in ["r50k_base", "cl100k_base", "o200k_base", "o200k_harmony"]:
        assert at.get_encoding(name)._regular  # from the file, checked for every token by the converter
    a, _ = irregular_encodings()
    assert not a.is_regular()
    from anytok.files import encoding_to_bytes
    from anytok import format as vf

    assert vf.loads(encoding_to_bytes(a)).properties == 0


def _random_ranks(rng: random.Random) -> dict[bytes, int]:
    """A small vocabulary grown like a BPE trainer's (each new token the join of two tokens
    met side by side in the BPE of a random word), then at times damaged: two ranks swapped,
    or a token of any bytes added."""
    ranks = {bytes([i]): i for i in range(256)}
    alphabet = b"abcd"[: rng.randint(2, 4)]
    words = [bytes(rng.choice(alphabet) for _ in range(rng.randint(3, 12))) for _ in range(8)]
    for _ in range(rng.randint(3, 40)):
        ids = bpe.rank_merge(rng.choice(words), ranks)
        if len(ids) >= 2:
            data = {v: k for k, v in ranks.items()}
            i = rng.randrange(len(ids) - 1)
            ranks.setdefault(data[ids[i]] + data[ids[i + 1]], len(ranks))
    damage = rng.random()
    merged = [k for k in ranks if len(k) > 1]
    if damage < 0.2 and len(merged) > 1:
        x, y = rng.sample(merged, 2)
        ranks[x], ranks[y] = ranks[y], ranks[x]
    elif damage < 0.35:
        ranks.setdefault(bytes(rng.choice(alphabet) for _ in range(rng.randint(2, 6))), len(ranks))
    return ranks


def test_all_regular_equals_the_bpe_of_every_token():
    """`BacktrackEncoder.all_regular` (the walk over each token's cuts, what `is_regular` uses)
    against the per-token check it replaces (the BPE of each token's bytes): the same verdict
    and, for a regular vocabulary, the same children for every token -- on r50k_base whole
    and on random grown vocabularies (regular ones and damaged ones, ranks in any dict order)."""
    from anytok.backtrack import BacktrackEncoder

    def both(ranks: dict[bytes, int], dict_order: dict[bytes, int] | None = None):
        data: list[bytes | None] = [None] * (max(ranks.values()) + 1)
        for token, rank in ranks.items():
            data[rank] = token
        slow = BacktrackEncoder(ranks, data)
        verdict = all([slow.split(t) is not None for t in ranks.values()])
        fast = BacktrackEncoder(dict_order or ranks, data)
        assert fast.all_regular() == verdict
        if verdict:
            assert fast._left == slow._left and fast._right == slow._right
        return verdict

    assert both(anytok_encoding("r50k_base")._mergeable_ranks)
    rng = random.Random(11)
    verdicts = []
    for _ in range(400):
        ranks = _random_ranks(rng)
        items = list(ranks.items())
        rng.shuffle(items)
        verdicts.append(both(ranks, dict(items)))
    assert 200 < sum(verdicts) < 380  # both kinds, many of each


def irregular_encodings():
    """o200k plus a token that its own BPE never produces, placed to be a segment."""
    base = tiktoken_encoding("o200k_base")
    ranks = dict(base._mergeable_ranks)
    extra = "中华人民共和国国务院总理".encode()
    assert len(base._encode_single_piece(extra)) >= 3
    ranks[extra] = max(ranks.values()) + 1
    specials = {"<|endoftext|>": ranks[extra] + 1}
    kw = dict(name="irregular", pat_str=base._pat_str, mergeable_ranks=ranks, special_tokens=specials)
    return anytok.Encoding(**kw), tiktoken.Encoding(**kw)


def test_irregular_token_as_segment_falls_back():
    a, t = irregular_encodings()
    for text in ["他说中华人民共和国国务院总理来了", "中华人民共和国国务院总理", "了中华人民共和国国务院总理" * 50]:
        assert a.encode(text) == t.encode(text)


def test_irregular_vocab_long_pieces():
    """The backtracking encoder declines irregular tokens; the heap merge then is exact."""
    ranks = {bytes([i]): i for i in range(256)}
    ranks.update({b"ab": 256, b"bc": 257, b"abcd": 258, b"aa": 259, b"aaaa": 260})
    kw = dict(name="odd", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={})
    a, t = anytok.Encoding(**kw), tiktoken.Encoding(**kw)
    for text in ["abcd" * 3000, "a" * 9001, "abcdx" * 1000, "ab" * 5000, "abcd"]:
        assert a.encode(text) == t.encode(text)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_runs_of_one_character(name):
    a, t = anytok_encoding(name), tiktoken_encoding(name)
    for ch in ["a", " ", "\x00", "中", "😀", "-", "=", "é", "\n", "0"]:
        for n in [1, 2, 3, 7, 100, 4097, 5003, 20011]:
            text = ch * n
            assert a.encode(text) == t.encode(text), (ch, n)


def test_segmenter_reset_keeps_results_exact(monkeypatch):
    """After many distinct characters the segmenter drops its per-character pairs; the
    characters of the text at hand must be registered again before any cut is made."""
    from anytok import segment

    monkeypatch.setattr(segment, "MAX_SEEN", 300)
    a, t = anytok.Encoding(**_kwargs("o200k_base")), tiktoken_encoding("o200k_base")
    rng = random.Random(5)
    chars = [chr(c) for c in range(0x4E00, 0x4E00 + 2000)]
    # Pairs that only a token starting inside the first character spans ("丗京" is
    # [b"\xe4\xb8", b"\x97" + "京"]): nothing but the per-character relations keeps them uncut.
    tail = "丗京丏览丮信"
    for _ in range(60):
        text = "".join(rng.choice(chars) for _ in range(400)) + tail
        assert a.encode(text) == t.encode(text)


def _kwargs(name):
    t = tiktoken_encoding(name)
    return dict(name=name, pat_str=t._pat_str, mergeable_ranks=t._mergeable_ranks, special_tokens=t._special_tokens)


def test_irregular_token_as_segment_is_merged_not_looked_up():
    """A segment that is a token whose own BPE is not itself (here "XYZW": nothing merges X
    with Y or Z with W) must be merged like any other text; only a whole piece is looked up."""
    chars = "あいうえお"  # X Y Z W V
    ranks: dict[bytes, int] = {bytes([b]): b for b in range(256)}
    for c in chars:
        data = c.encode("utf-8")
        ranks.setdefault(data[:2], len(ranks))
        ranks[data] = len(ranks)
    ranks["いう".encode("utf-8")] = len(ranks)
    ranks["あいうえ".encode("utf-8")] = len(ranks)
    pat = r"\p{L}+|\s+"
    ref = tiktoken.Encoding("irregular", pat_str=pat, mergeable_ranks=ranks, special_tokens={})
    enc = anytok.Encoding("irregular", pat_str=pat, mergeable_ranks=ranks, special_tokens={})
    text = " ".join(["あいうえお", "あいうえ", "おあいうえ", "いう"] * 600)  # enough to build the segmenter
    assert enc.encode_ordinary(text) == ref.encode_ordinary(text)
    assert enc.count_ordinary(text) == len(ref.encode_ordinary(text))
    assert "あいうえ" in enc._irregular_segments  # the case above did occur


@pytest.mark.parametrize("c_first", [True, False])
def test_tokens_joining_two_characters_keep_their_boundaries(c_first):
    """o200k has tokens that are the end of one character plus the start of the next (S + P,
    e.g. b"\\x80\\xe0\\xb8": a character's last byte 0x80, then a Thai letter's first two).  Every boundary
    c|d with c ending in S and d starting with P must stay uncut, whichever of c and d the
    segmenter meets first (it registers characters as they come)."""
    t = tiktoken_encoding("o200k_base")
    enc = anytok.Encoding(**_kwargs("o200k_base"))
    enc.encode("warm up")
    from anytok.segment import Segmenter

    seg = Segmenter(enc._str_ranks, enc._invalid_tokens)
    seg._build()
    assert seg._partial_pairs  # the case exists in o200k
    rng = random.Random(7)
    # Letters only, so that c and d stay in one piece; c from a wide sample of the BMP.
    letters = [chr(cp) for cp in range(0x3400, 0xA000) if chr(cp).isalpha()]
    texts = []
    for s, p in sorted(seg._partial_pairs):
        ends = [c for c in letters if c.encode()[-len(s):] == s][:40]
        starts = [chr(cp) for cp in range(0x80, 0x10000) if chr(cp).isalpha() and chr(cp).encode().startswith(p)]
        assert ends and starts, (s, p)
        for _ in range(30):
            c, d = rng.choice(ends), rng.choice(starts)
            texts.append((c, d))
    pieces = []
    for c, d in texts:
        pieces.append((c + rng.choice(letters) + d) if c_first else (d + c + d + c))
        pieces.append(c + d + rng.choice(letters) * rng.randint(0, 2))
    text = "".join(pieces) * 3  # one piece of letters, long enough to build the segmenter
    assert enc.encode(text) == t.encode(text)
    assert enc.count(text) == len(t.encode(text))
    for k in range(0, len(pieces), 50):
        part = " ".join(pieces[k : k + 50])
        assert enc.encode(part) == t.encode(part)


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base", "o200k_harmony"])
def test_shipped_segment_pairs_are_the_computed_ones(name, tmp_path):
    """vocab_binaries/<name>.pairs (written by build_scripts/convert_openai.py) holds exactly the
    pairs the segmenter would compute, and is ignored when made from another vocab file."""
    import os
    import shutil

    from anytok import registry
    from anytok.segment import token_pairs

    enc = anytok.get_encoding(name)
    path = os.path.join(registry.vocab_dir(), name + registry.SUFFIX)
    shipped = registry.bundled_segment_pairs(path)
    assert shipped is not None
    assert shipped == token_pairs(enc._str_ranks)
    assert enc._segment_pairs() == shipped  # what the bundled encoding's segmenter reads
    # Next to another vocab file (here: the same one, changed), it is not used.
    other = tmp_path / (name + registry.SUFFIX)
    other.write_bytes(open(path, "rb").read() + b"x")
    shutil.copyfile(path[: -len(registry.SUFFIX)] + registry.PAIRS_SUFFIX, tmp_path / (name + registry.PAIRS_SUFFIX))
    assert registry.bundled_segment_pairs(str(other)) is None
    assert registry.bundled_segment_pairs(str(tmp_path / "missing.atok")) is None

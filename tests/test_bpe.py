"""The BPE merge itself: the two implementations agree with each other and with tiktoken."""

from __future__ import annotations

import random
import time

import pytest

from anytok import bpe
from conftest import anytok_encoding, tiktoken_encoding


def random_pieces(rng: random.Random, enc, n: int):
    tokens = enc.token_byte_values()
    for _ in range(n):
        kind = rng.random()
        if kind < 0.3:
            yield bytes(rng.randrange(256) for _ in range(rng.randint(2, 40)))
        elif kind < 0.7:
            yield b"".join(rng.choice(tokens) for _ in range(rng.randint(2, 8)))
        else:
            alphabet = rng.choice([b"ab", b"a", b" \n", b"\xe4\xb8\xad", b"0123"])
            yield bytes(rng.choice(alphabet) for _ in range(rng.randint(2, 300)))


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_merges_agree(name):
    a, t = anytok_encoding(name), tiktoken_encoding(name)
    ranks = a._mergeable_ranks
    rng = random.Random(name)
    for piece in random_pieces(rng, a, 1500):
        expected = t._encode_single_piece(piece)
        assert bpe.rank_merge(piece, ranks) == expected or ranks.get(piece) is not None, piece
        assert bpe.heap_merge(piece, ranks) == bpe.rank_merge(piece, ranks), piece
        assert bpe.encode_piece(piece, ranks) == expected, piece
        if piece.isascii() and ranks.get(piece) is None:
            # ASCII pieces merge on str with the text table too (core._merge_new).
            assert bpe.heap_merge(piece.decode(), a._str_ranks) == expected, piece


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_ascii_text_needs_no_bytes_table(name):
    """ASCII pieces of every length up to bpe.HEAP_MAX merge on str (the list merge up to
    bpe.STR_LIST_MAX characters, the heap merge above; runs of one character up to
    bpe.STR_RUN_MAX), so encoding ASCII text never
    builds the bytes table (~50 ms and ~20 MB for o200k_base); the ids stay tiktoken's."""
    import anytok.registry
    from pathlib import Path

    data = (Path(anytok.registry.vocab_dir()) / f"{name}.atok").read_bytes()
    enc, ref = anytok.registry.encoding_from_bytes(data), tiktoken_encoding(name)
    rng = random.Random(name)
    words = [" misunderstandings", " disinterestedness", "antidisestablishmentarianism",
             " ----------------------------------------------------------------\n",
             " +" + "-" * 40 + "+" * 3, "https://example.com/a/very/long/path/to/nowhere?q=1"]
    words += ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(17, 300)))
              for _ in range(40)]
    # Runs of one character up to bpe.STR_RUN_MAX (after a newline and before a space, so that
    # each is a piece of its own).
    words += ["\n" + c * n + " x" for c in "z#*" for n in (17, 40, 100, bpe.STR_RUN_MAX)]
    text = " ".join(rng.choice(words) for _ in range(400))
    missed = [p for p in enc._splitter.split(text) if p not in enc._str_ranks]
    assert any(len(p) > bpe.STR_LIST_MAX for p in missed)  # the heap merge on str
    assert any(bpe.LIST_MAX < len(p) <= bpe.STR_LIST_MAX for p in missed)  # the list merge on str
    assert any(len(p) > bpe.LIST_MAX and p.count(p[0]) == len(p) for p in missed)  # runs
    assert enc.encode(text) == ref.encode(text)
    assert enc.count(text) == len(ref.encode(text))
    assert enc._ranks_cache is None


def test_whole_piece_shortcut_like_tiktoken():
    """A piece that is itself a token is that token, as in tiktoken (even if BPE would differ)."""
    ranks = {bytes([i]): i for i in range(256)}
    ranks.update({b"ab": 256, b"bc": 257, b"abc": 258})
    assert bpe.encode_piece(b"abc", ranks) == [258]
    assert bpe.rank_merge(b"abc", ranks) == bpe.heap_merge(b"abc", ranks) == [258]
    # "bc" never forms when "ab" has the lower rank: a b c -> ab c -> abc (a token): [258]
    ranks2 = {bytes([i]): i for i in range(256)}
    ranks2.update({b"ab": 256, b"bcd": 257, b"bc": 258})
    assert bpe.rank_merge(b"abcd", ranks2) == bpe.heap_merge(b"abcd", ranks2) == [256, 99, 100]


def test_ties_leftmost():
    ranks = {bytes([i]): i for i in range(256)}
    ranks[b"aa"] = 256
    for n in range(1, 12):
        got = bpe.heap_merge(b"a" * n, ranks)
        assert got == bpe.rank_merge(b"a" * n, ranks)
        assert got == [256] * (n // 2) + [97] * (n % 2)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_long_pieces_are_not_quadratic(name):
    """Worst-case single pieces finish quickly and equal tiktoken's result."""
    a, t = anytok_encoding(name), tiktoken_encoding(name)
    rng = random.Random(7)
    lo = [chr(c) for c in range(0x4E00, 0x9FFF)] + [chr(c) for c in range(0xAC00, 0xD7A3)] + [chr(c) for c in range(0x0E01, 0x0E2F)]
    cases = ["a" * 200_000, "".join(rng.choice(lo) for _ in range(70_000)), "ab" * 50_000, "0" * 100_000]
    for text in cases:
        start = time.perf_counter()
        got = a.encode(text)
        elapsed = time.perf_counter() - start
        assert got == t.encode(text)
        assert elapsed < 20, f"{len(text)} chars took {elapsed:.1f}s"


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_long_piece_encoders_like_tiktoken(name, monkeypatch):
    """The windowed encoder and the backtracking search of backtrack.py, each on its own,
    against tiktoken: long pieces of short tokens (random letters, hex, random bytes), of
    long tokens (runs with breaks, periodic text, concatenated tokens); then with tiny
    windows, which make stitches fail and retry further back or give up (None)."""
    from anytok import backtrack

    a, t = anytok_encoding(name), tiktoken_encoding(name)
    bt, ranks = a._backtracker(), a._mergeable_ranks
    rng = random.Random(name)
    tokens = a.token_byte_values()
    alphabets = ["abcdefghijklmnopqrstuvwxyz", "0123456789abcdef", "ab", "aab", "aaaaaaab", "xy \n", "é中a"]

    def piece():
        kind = rng.random()
        n = rng.choice([129, 300, 1000, 3000])
        if kind < 0.6:
            return "".join(rng.choices(rng.choice(alphabets), k=n)).encode()
        if kind < 0.8:
            return b"".join(rng.choices(tokens, k=n // 4))
        return bytes(rng.randrange(256) for _ in range(n))

    def check(pieces):
        stitched = 0
        for data in pieces:
            expected = t._encode_single_piece(data)
            assert bt.search(data) == expected, data[:40]
            got = bt.encode_windows(data, bpe.heap_merge(data[: backtrack.WINDOW], ranks))
            assert got is None or got == expected, data[:40]
            stitched += got is not None
            assert a._long_piece(data) == expected
        return stitched

    pieces = [p for p in (piece() for _ in range(150)) if len(p) > backtrack.WINDOW]
    assert check(pieces) == len(pieces)  # at the real sizes every piece here stitches
    monkeypatch.setattr(backtrack, "WINDOW", 12)
    monkeypatch.setattr(backtrack, "OVERLAP", 2)
    pieces = [p for p in (piece() for _ in range(150)) if len(p) > backtrack.WINDOW]
    assert 0 < check(pieces) < len(pieces)


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_periodic_pieces_like_tiktoken(name):
    """Long pieces made of a short unit repeated (digits, "ab", words, CJK, token strings, any
    phase and remainder): the backtracking encoder's periodic shortcut, when it applies, and
    the long-piece encoder against tiktoken; the shortcut must apply to most of them."""
    from anytok import backtrack

    a, t = anytok_encoding(name), tiktoken_encoding(name)
    bt = a._backtracker()
    rng = random.Random(name + "periodic")
    tokens = [b for b in a.token_byte_values() if 1 < len(b) < 8]
    units = [b"1234567890", b"ab", b"abc", b"-=", b"xyz ", "日本語".encode(), "é中".encode(), b"\t\n"]
    units += [b"".join(rng.choices(tokens, k=rng.randrange(1, 5))) for _ in range(60)]
    units += [bytes(rng.randrange(256) for _ in range(rng.randrange(2, 12))) for _ in range(20)]
    taken = checked = 0
    for unit in units:
        for _ in range(3):
            n = rng.choice([backtrack.WINDOW + 1, 300, 1000, 5000])
            phase = rng.randrange(len(unit))
            data = (unit * (n // len(unit) + 2))[phase : phase + n]
            period = backtrack._period(data)
            if not 2 <= period <= len(unit):
                continue  # (a unit that is itself a repeat, or one character: not this test's case)
            expected = t._encode_single_piece(data)
            got = bt.encode_periodic(data, period)
            assert got is None or got == expected, (unit, phase, n)
            assert a._long_piece(data) == expected, (unit, phase, n)
            taken += got is not None
            checked += 1
    assert checked > 200 and taken > checked // 2, (taken, checked)


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_three_byte_closed_form(name):
    """`merge3` (the spelled-out merge of 3-byte pieces) against the list merge: every BMP
    character of three bytes, and 3-byte pieces cut from pairs of tokens (ties included)."""
    ranks = anytok_encoding(name)._mergeable_ranks
    pieces = [chr(c).encode("utf-8") for c in range(0x800, 0x10000) if not 0xD800 <= c < 0xE000]
    short = [t for t in ranks if len(t) <= 2]
    rng = random.Random(name)
    pieces += [p for p in ((rng.choice(short) + rng.choice(short))[:3] for _ in range(50_000)) if len(p) == 3]
    pieces += [bytes([b]) * 3 for b in range(256)]
    for piece in pieces:
        assert bpe.merge3(piece, ranks) == bpe.rank_merge(piece, ranks), piece


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_four_byte_closed_form(name):
    """`merge4` against the list merge: every 32nd character outside the BMP (the code-point
    sweeps meet all of them, against tiktoken), every token of four bytes, 4-byte pieces cut
    from runs of tokens, and runs of one byte (all ties)."""
    ranks = anytok_encoding(name)._mergeable_ranks
    pieces = [chr(c).encode("utf-8") for c in range(0x10000, 0x110000, 32)]
    pieces += [t for t in ranks if len(t) == 4]
    short = [t for t in ranks if len(t) <= 3]
    rng = random.Random(name)
    cut = (b"".join(rng.choices(short, k=4))[:4] for _ in range(15_000))
    pieces += [p for p in cut if len(p) == 4]
    pieces += [bytes([b]) * 4 for b in range(256)]
    for piece in pieces:
        assert bpe.merge4(piece, ranks) == bpe.rank_merge(piece, ranks), piece


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_runs_of_every_length_like_tiktoken(name):
    """Runs of one byte take the backtracking encoder's run shortcut at any length over the
    list merge's; pieces of one repeated character, of lengths around every threshold."""
    a, t = anytok_encoding(name), tiktoken_encoding(name)
    for ch in ["a", " ", "0", "\n", "!", "中", "é"]:
        for n in [*range(1, 40), 63, 64, 65, 127, 128, 129, 1000, 4095, 4096, 4097, 5000]:
            text = ch * n
            assert a.encode(text) == t.encode(text), (ch, n)

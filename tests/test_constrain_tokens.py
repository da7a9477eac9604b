"""The tokenizer-to-engine interface (`token_env()`) and the trie file (constrain/trie_cache.py).

Masks are compared with llguidance 1.9.1's over seeded walks, as in test_constrain.py."""

from __future__ import annotations

import random

import pytest

from conftest import anytok_encoding, tiktoken_encoding
from llguidance import LLMatcher
from llguidance.tiktoken import lltokenizer_from_encoding

from anytok import constrain
from anytok.constrain.tokens import TokenEnv, TokenTrie

PATTERNS = [r"[a-z ]{0,40}\.", r'"[^"\\]{0,30}"', r"(0|[1-9][0-9]*)(\.[0-9]+)?"]


class OwnTokenizer:
    """A tokenizer anytok does not know, speaking to the engine only through `token_env()`
    (here tiktoken's encoding, through its public API)."""

    def __init__(self, enc):
        self.enc = enc

    def token_env(self) -> TokenEnv:
        enc = self.enc
        token_bytes = {enc.encode_single_token(b): b for b in enc.token_byte_values()}
        specials = {s: enc.encode_single_token(s) for s in enc.special_tokens_set}
        return TokenEnv(token_bytes, enc.n_vocab, enc.eot_token, specials, enc.encode_ordinary)


def _walk(ours, ref, n_vocab, rng, steps=12):
    words = 4 * ((n_vocab + 31) // 32)
    for _ in range(steps):
        mask = ours.mask()
        assert mask == ref.compute_bitmask()[:words]
        allowed = ours.allowed()
        if not allowed:
            break
        t = rng.choice(allowed)
        assert ours.consume(t) and ref.consume_token(t)
        if t == ours.eos_token:
            break


@pytest.mark.parametrize("pattern", PATTERNS)
def test_own_tokenizer_through_token_env(pattern):
    """A tokenizer given only by its `token_env()` walks as llguidance over the same vocabulary."""
    enc = tiktoken_encoding("cl100k_base")
    own = OwnTokenizer(enc)
    ours = constrain.regex(pattern).matcher(own)
    assert ours.eos_token == enc.eot_token and ours.n_vocab == enc.n_vocab
    ll = lltokenizer_from_encoding(enc)
    ref = LLMatcher(ll, LLMatcher.grammar_from_regex(pattern), log_level=0)
    _walk(ours, ref, enc.n_vocab, random.Random(pattern))


def test_token_env_of_encoding_is_its_vocabulary():
    """An Encoding's TokenEnv: every mergeable token's bytes by id (as tiktoken has them), its
    special tokens, `<|endoftext|>` as end-of-sequence."""
    ours, ref = anytok_encoding("cl100k_base"), tiktoken_encoding("cl100k_base")
    env = ours.token_env()
    assert env.token_bytes == {ref.encode_single_token(b): b for b in ref.token_byte_values()}
    assert env.special_names == {s: ref.encode_single_token(s) for s in ref.special_tokens_set}
    assert env.eos == ref.eot_token and env.n_vocab == ref.n_vocab
    assert env.encode("hello world") == ref.encode_ordinary("hello world")


def test_no_token_env_named():
    with pytest.raises(constrain.UnsupportedFeatureError, match="tokenizer type bytes.*token_env"):
        constrain.regex("a").matcher(b"not a tokenizer")


def test_eos_override_shares_the_trie():
    enc = OwnTokenizer(tiktoken_encoding("cl100k_base"))
    a = TokenTrie.of(enc)
    b = TokenTrie.of(enc, 100)
    assert (a.eos, b.eos) == (enc.enc.eot_token, 100) and a.byte is b.byte
    assert TokenTrie.of(enc, 100) is b and TokenTrie.of(enc) is a


# --- the trie file (constrain/trie_cache.py) -----------------------------------------------------

TRIE_FIELDS = ("order", "byte", "depth", "end", "token", "extra", "children0", "max_token_len")


def _same_trie(a, b):
    for f in TRIE_FIELDS:
        assert getattr(a, f) == getattr(b, f), f


def test_trie_file_round_trip(tmp_path, monkeypatch):
    """The trie read back from the file equals the one built without it; once a process built
    the slicer, the file has it too, read back equal and ready from the first mask, and the
    masks from it are llguidance's."""
    from anytok.constrain.slicer import Slicer

    enc = anytok_encoding("cl100k_base")
    monkeypatch.setenv("ANYTOK_CACHE_DIR", "off")
    plain = TokenTrie.from_env(enc.token_env())
    assert plain.cache_file is None
    monkeypatch.setenv("ANYTOK_CACHE_DIR", str(tmp_path))
    written = TokenTrie.from_env(enc.token_env())  # builds and writes the trie
    files = list(tmp_path.glob("*.trie"))
    assert len(files) == 1
    read = TokenTrie.from_env(enc.token_env())
    for t in (written, read):
        _same_trie(t, plain)
    assert not Slicer.stored_for(read)
    Slicer.of(written)  # builds the slicer: the file is rewritten with it
    read = TokenTrie.from_env(enc.token_env())
    _same_trie(read, plain)
    assert Slicer.stored_for(read)
    built = Slicer(plain)
    for a, b in zip(Slicer.of(read).slices, built.slices):
        assert (a.pattern, a.ids, a.mask) == (b.pattern, b.ids, b.mask)
        _same_trie(a.trie, b.trie)
    _same_trie(read._slicer.rest, built.rest)
    own = OwnTokenizer(tiktoken_encoding("cl100k_base"))
    read = TokenTrie.from_env(enc.token_env())
    own.__dict__["_anytok_constrain_trie"] = {None: read}  # (this object's trie: the one read)
    ll = lltokenizer_from_encoding(tiktoken_encoding("cl100k_base"))
    for pattern in (r'[^"]{0,40}', r"[a-z]{0,5}( [a-z]{1,3}){0,3}"):
        ref = LLMatcher(ll, LLMatcher.grammar_from_regex(pattern), log_level=0)
        _walk(constrain.regex(pattern).matcher(own), ref, read.n_vocab, random.Random(pattern), steps=8)
    assert read._slicer is not None  # (used from the first mask)


def test_trie_file_damaged_or_unwritable(tmp_path, monkeypatch):
    """A truncated file, or one with a byte changed in its arrays, is ignored (the trie built
    again, the file rewritten); a folder that cannot be written gives the same trie, without a
    file."""
    enc = anytok_encoding("cl100k_base")
    monkeypatch.setenv("ANYTOK_CACHE_DIR", str(tmp_path))
    first = TokenTrie.from_env(enc.token_env())
    path, = tmp_path.glob("*.trie")
    data = path.read_bytes()
    assert TokenTrie.from_env(enc.token_env()).stored is not None
    flipped = bytearray(data)
    flipped[len(data) * 3 // 4] ^= 0x10  # (in the arrays: the header is small)
    for damaged in (data[:len(data) // 2], bytes(flipped)):
        path.write_bytes(damaged)
        again = TokenTrie.from_env(enc.token_env())
        assert again.stored is None
        _same_trie(again, first)
        assert path.read_bytes() == data
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("ANYTOK_CACHE_DIR", str(blocked))
    _same_trie(TokenTrie.from_env(enc.token_env()), first)


class CountingTokenizer(OwnTokenizer):
    """OwnTokenizer counting its `token_env()` calls."""

    calls = 0

    def token_env(self) -> TokenEnv:
        self.calls += 1
        return super().token_env()


def test_trie_file_named_before_the_first_matcher(tmp_path, monkeypatch):
    """`TokenTrie.file_name` names the file the first matcher reads or writes (the browser
    worker puts it in the folder first, web/worker.js); the vocabulary is read once for both.
    None once the trie is made, and for a vocabulary too small to have a file."""
    monkeypatch.setenv("ANYTOK_CACHE_DIR", str(tmp_path))
    first = CountingTokenizer(tiktoken_encoding("cl100k_base"))
    name = TokenTrie.file_name(first)
    assert first.calls == 1 and not list(tmp_path.iterdir())
    trie = TokenTrie.of(first)
    assert first.calls == 1 and [p.name for p in tmp_path.iterdir()] == [name]
    assert TokenTrie.made(first) is trie and trie.stored is None
    assert TokenTrie.file_name(first) is None
    second = CountingTokenizer(tiktoken_encoding("cl100k_base"))
    assert TokenTrie.made(second) is None
    assert TokenTrie.file_name(second) == name
    assert TokenTrie.of(second).stored is not None and second.calls == 1
    ref = constrain.regex("[a-z]{1,3} ").matcher(first)
    got = constrain.regex("[a-z]{1,3} ").matcher(second)
    assert got.mask() == ref.mask()

    class Small:
        def token_env(self):
            return TokenEnv({i: bytes([i]) for i in range(256)}, 256, None, {}, None)

    assert TokenTrie.file_name(Small()) is None

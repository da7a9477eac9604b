"""anytok.constrain against llguidance 1.9.1: the same token masks, step by step.

For each regex and encoding, a seeded random walk samples an allowed token, consumes it in
anytok's matcher and in llguidance's `LLMatcher` (built on the same encoding), and compares
at every step: the mask bytes, the forced tokens, accepting and stopped states, and whether a
random other token would be accepted.  Then the last tokens are rolled back in both and
re-consumed, and the masks must be the ones seen on the way.
"""

from __future__ import annotations

import functools
import random
import re

import pytest

from conftest import anytok_encoding as _tiktoken_style
from hf_support import model_path

import anytok
from llguidance import LLMatcher, LLTokenizer
from llguidance.tiktoken import lltokenizer_from_encoding

from anytok import constrain

ENCODINGS = ["o200k_base", "cl100k_base"]
# tokenizer.json models (byte-level BPE; SentencePiece-style byte fallback with Llama 2's
# prepended space and Gemma 3's added whitespace tokens): every regex on Llama 3, every 3rd on
# Llama 2, every 6th on Gemma 3 (262k tokens)
HF_MODELS = ["llama3", "llama2", "gemma3"]
# SentencePiece `.model` files (build_scripts/fetch/fetch_sentencepiece_models.py, sha256-pinned, from
# the PyPI wheel mistral-common 1.13.1): BPE with byte fallback; v3 adds 750 control pieces
# ([INST], ...) and 20 user-defined ones.  llguidance gets each converted to a tokenizer.json
# (`_spm_reference`).  Mistral v1: every regex; v3: every 5th.
SPM_MODELS = {"mistral_v1": "tokenizer.model.v1", "mistral_v3": "mistral_instruct_tokenizer_240323.model.v3"}

# (pattern, steps): fewer steps where each step reaches a new lexer state whose mask allows
# most of the vocabulary (a full trie walk each).
REGEXES = [
    ("abc", 4),
    ("x.", 4),
    ("abc(d|)", 4),
    ("^abc$", 4),
    (r"\Aab+\z", 6),
    ("[0-9]{1,5}", 8),
    ("[0-9]+", 10),
    ("-?[0-9]+(\\.[0-9]{1,3})?", 10),
    (r"\d+\.\d{2}", 8),
    (r"(yes|no|maybe), [a-z]+ [0-9]{2,4}!", 12),
    ("hello world, [0-9]+", 10),
    ("(cat|dog|bird)s?", 5),
    ("(a|ab|abc)+d", 10),
    ("a+?b", 8),
    ("a**", 6),
    ("a|", 3),
    ("", 2),
    ("[^a]", 3),
    ("[a-z ]{3,40}\\.", 10),
    ("[A-Z][a-z]{2,8}( [A-Z][a-z]{2,8}){0,2}", 10),
    ("[a-z&&[^aeiou]]{2,6}", 6),
    ("[[:alpha:]][[:digit:]]{2}[[:punct:]]", 6),
    ("[\\w--\\d]{1,4}", 6),
    ("\\w{1,3}", 6),
    ("\\W\\W?", 4),
    ("\\s*x\\s*", 8),
    ("\\S{2}", 4),
    ("\\p{Lu}\\P{L}", 4),
    ("\\p{N}{1,3}", 5),
    ("[\\p{Ll}\\p{Lo}]{1,2}", 4),
    ("\\pL\\pM?", 4),
    ("\\p{Sc}[0-9]+", 6),
    ("\\p{Zs}|\\p{Po}", 3),
    ("[\\x{4e00}-\\x{4e2f}]{1,4}", 6),
    ("\\x{ff}\\x{100}", 4),
    ("\\u{1F600}|\\u00e9+", 6),
    ("[é-ú]{2,3}", 6),
    ("(?i)hello( world)?", 8),
    ("(?i:ab)c", 4),
    ("(?s)a.b", 4),
    ("(?x) a b \\  c  # comment", 4),
    ("(?P<num>[0-9]+)-(?<word>[a-z]+)", 8),
    ("(?:ab){2,3}", 6),
    ("a{3}", 3),
    ("a{2,}", 6),
    ("(a{1,2}b){1,2}", 6),
    ("\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\^\\$\\\\", 6),
    ("\\n\\t\\r", 4),
    ('"[^"\\\\\\x00-\\x1F]{0,12}"', 8),
    ("\\{\"a\": [0-9]{1,2}\\}", 8),
    ("(true|false|null)", 4),
    ("[0-9]{4}-[0-9]{2}-[0-9]{2}", 8),
    ("[a-f0-9]{8}-[a-f0-9]{4}", 8),
    ("(\\+|-)?(0|[1-9][0-9]*)", 8),
    ("([a-z]+ ){2}[a-z]+\\.", 10),
    ("[^\\n]{0,6}\\n", 6),
    ("(^a|b$)", 3),
    # free text: the slicer adds whole groups of tokens (and must not when a bound is near)
    ("[^\\n]{0,40}", 8),
    ('[^"\\\\]{0,50}"', 8),
    (".{1,20}", 6),
    ("(?s).*", 4),
    ("[\\s\\S]{0,80}x", 6),
    ("[ \\t\\n]*[a-z]{1,30}", 6),
]


def _spm_path(name: str):
    """The sha256-verified local `.model` of `name` (a key of SPM_MODELS or a fixture's file
    name), or `name` itself when it is a path (a variant written by a test)."""
    from pathlib import Path

    from fetch_sentencepiece_models import fetch  # build_scripts (on sys.path: conftest)

    if Path(name).is_absolute():
        return Path(name)
    return fetch() / SPM_MODELS.get(name, name)


@functools.lru_cache(maxsize=None)
def _spm_reference(name: str):
    """(`tokenizers.Tokenizer`, `sentencepiece` processor) for a SentencePiece `.model`: the
    model converted to a tokenizer.json the way a llguidance user would (transformers' Llama
    layout, built here with `tokenizers` and the `sentencepiece` package's own protobuf
    classes; transformers is not installed): the pieces as the vocabulary, BPE merges of every
    two pieces whose concatenation is a normal piece, ranked by that piece's score (then id),
    byte fallback, `Prepend("▁")` + `Replace(" ", "▁")` normalizer, byte-fallback decoder,
    control and unknown pieces as special added tokens, user-defined pieces as added tokens.
    `test_spm_reference_encodes_like_sentencepiece` checks it encodes as sentencepiece."""
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers

    data = _spm_path(name).read_bytes()
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(data)
    sp = spm.SentencePieceProcessor(model_proto=data)
    kind = sentencepiece_model_pb2.ModelProto.SentencePiece
    assert proto.trainer_spec.model_type == sentencepiece_model_pb2.TrainerSpec.BPE
    pieces = [(p.piece, p.score, p.type) for p in proto.pieces]
    vocab = {piece: i for i, (piece, _, _) in enumerate(pieces)}
    ranked = []
    for i, (piece, score, typ) in enumerate(pieces):
        if typ != kind.NORMAL:
            continue
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            if left in vocab and right in vocab:
                ranked.append((-score, i, vocab[left], left, right))
    ranked.sort()
    model = models.BPE(vocab=vocab, merges=[(left, right) for *_, left, right in ranked],
                       unk_token=sp.id_to_piece(sp.unk_id()), fuse_unk=True,
                       byte_fallback=proto.trainer_spec.byte_fallback)
    ref = Tokenizer(model)
    assert not proto.normalizer_spec.precompiled_charsmap and not proto.normalizer_spec.remove_extra_whitespaces
    ref.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])
    ref.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    ref.add_special_tokens([AddedToken(piece, special=True, normalized=False)
                            for piece, _, typ in pieces if typ in (kind.CONTROL, kind.UNKNOWN)])
    ref.add_tokens([AddedToken(piece, special=False, normalized=False)
                    for piece, _, typ in pieces if typ == kind.USER_DEFINED])
    assert ref.get_vocab_size() == len(pieces)
    return ref, sp


@functools.lru_cache(maxsize=None)
def anytok_encoding(name: str):
    """anytok's tokenizer: a tiktoken-style encoding, or `anytok.load` of a tokenizer.json or a
    SentencePiece `.model`."""
    if name in SPM_MODELS:
        return anytok.load(_spm_path(name))
    if name in HF_MODELS:
        path = model_path(name)
        if not path.exists():
            pytest.fail(f"{path} is missing: run build_scripts/fetch/fetch_models.py (test.sh does)")
        return anytok.load(path)
    return _tiktoken_style(name)


@functools.lru_cache(maxsize=None)
def _lltokenizer(name: str):
    """llguidance's tokenizer for the same vocabulary (built once per session, ~0.5-6 s)."""
    if name in SPM_MODELS:  # as llguidance.hf.from_tokenizer: the JSON and the model's EOS id
        ref, sp = _spm_reference(name)
        return LLTokenizer(ref.to_str(), eos_token=sp.eos_id())
    if name in HF_MODELS:
        anytok_encoding(name)  # fails when the model is missing
        return LLTokenizer(str(model_path(name)))
    return lltokenizer_from_encoding(anytok_encoding(name))


def _ref(name: str, pattern: str) -> LLMatcher:
    m = LLMatcher(_lltokenizer(name), LLMatcher.grammar_from_regex(pattern), log_level=0)
    assert not m.is_error(), m.get_error()
    return m


_BITS = [tuple(j for j in range(8) if b >> j & 1) for b in range(256)]


def _ids(mask: bytes) -> list[int]:
    """The ids whose bit is set, in order (the runs of zero bytes, most of a mask, skipped by re:
    0.5 ms for a sparse o200k_base mask, where a loop over every bit took 16 ms)."""
    out = []
    for run in re.finditer(rb"[^\x00]+", mask):
        for i in range(run.start(), run.end()):
            out += [(i << 3) + j for j in _BITS[mask[i]]]
    return out


def _ref_mask(name, ref) -> bytes:
    """llguidance's mask cut to ceil(n_vocab / 32) words (it has one more word when n_vocab is
    a multiple of 32; that word must be empty)."""
    raw = ref.compute_bitmask()
    n = 4 * ((anytok_encoding(name).n_vocab + 31) // 32)
    assert not any(raw[n:])
    return raw[:n]


def _check_same(name, label, step, ours, ref, rng, full_allowed=True):
    """One step compared with llguidance: the mask, forced tokens, accepting and stopped states,
    and whether a random token is accepted.  `full_allowed=False` compares allowed() with the
    mask on the first step only (it is derived from the mask; the full comparison can cost more
    than the rest of a step)."""
    mask = ours.mask()
    ref_mask = _ref_mask(name, ref)
    if mask != ref_mask:
        enc = anytok_encoding(name)
        a, b = set(_ids(mask)), set(_ids(ref_mask))
        show = lambda ids: [enc.decode([t]) for t in sorted(ids)[:8]]
        raise AssertionError(f"{name} {label!r} step {step}: anytok only {show(a - b)}, llguidance only {show(b - a)}")
    if full_allowed or step == 0:
        assert ours.allowed() == _ids(mask)
    assert ours.forced() == ref.compute_ff_tokens(), (name, label, step)
    assert ours.is_accepting() == ref.is_accepting(), (name, label, step)
    assert ours.is_stopped() == ref.is_stopped(), (name, label, step)
    # consume() agrees on an arbitrary token too (llguidance accepts any token whose bytes fit)
    probe = rng.randrange(anytok_encoding(name).n_vocab)
    copy = ref.deep_copy()
    before = ours.num_tokens
    assert ours.consume(probe) == copy.consume_token(probe), (name, label, step, probe)
    ours.rollback(ours.num_tokens - before)
    return mask


def _walk(name, label, ours, ref, steps, rng, pick, full_allowed=True):
    """A seeded random walk of `steps` tokens (`pick(allowed)` chooses each), every step
    compared with llguidance; then roll back 3 tokens in both and replay them: the same masks."""
    masks, tokens = [], []
    for step in range(steps):
        masks.append(_check_same(name, label, step, ours, ref, rng, full_allowed))
        token = pick(ours.allowed())
        assert ours.consume(token) and ref.consume_token(token), (label, step, token, ref.get_error())
        tokens.append(token)
        if ours.is_stopped():
            break
    final = _check_same(name, label, len(tokens), ours, ref, rng, full_allowed)
    k = min(3, ours.num_tokens)
    ours.rollback(k)
    assert ref.rollback(k)
    n = ours.num_tokens
    for i in range(n, n + k):
        assert ours.mask() == masks[i] == _ref_mask(name, ref)
        assert ours.consume(tokens[i]) and ref.consume_token(tokens[i])
    assert ours.mask() == final == _ref_mask(name, ref)
    assert not ref.is_error()


WALKS = [(name, p, n) for name in ENCODINGS for p, n in REGEXES]
WALKS += [("llama3", p, n) for p, n in REGEXES] + [("llama2", p, n) for p, n in REGEXES[1::3]]
WALKS += [("gemma3", p, n) for p, n in REGEXES[2::6]]
WALKS += [("mistral_v1", p, n) for p, n in REGEXES] + [("mistral_v3", p, n) for p, n in REGEXES[1::5]]


@pytest.mark.parametrize("name,pattern,steps", WALKS, ids=[f"{name}-{p}" for name, p, _ in WALKS])
def test_regex_walk_matches_llguidance(name, pattern, steps):
    enc = anytok_encoding(name)
    eos = _lltokenizer(name).eos_token
    rng = random.Random(f"{name}|{pattern}")
    ours = constrain.regex(pattern).matcher(enc)

    def pick(allowed):
        ordinary = [t for t in allowed if t != eos]
        return rng.choice(ordinary) if ordinary and rng.random() < 0.9 else rng.choice(allowed)

    _walk(name, pattern, ours, _ref(name, pattern), steps, rng, pick)


def test_eos_and_special_tokens():
    enc = anytok_encoding("cl100k_base")
    m = constrain.regex("[0-9]{1,2}").matcher(enc)
    specials = sorted(enc._special_tokens.values())
    assert not any(t in m.allowed() for t in specials)
    assert not m.consume(enc.eot_token) and not m.is_accepting()
    assert m.consume(enc.encode("7")[0]) and m.is_accepting()
    assert enc.eot_token in m.allowed()
    assert all(not m.consume(t) for t in specials if t != enc.eot_token)
    assert m.consume(enc.eot_token) and m.is_stopped() and m.allowed() == [enc.eot_token]
    m.rollback(2)
    assert m.num_tokens == 0 and not m.is_accepting()
    with pytest.raises(ValueError):
        m.rollback(1)


# Patterns llguidance rejects: anytok rejects them too, with a clear error.
INVALID = [
    ("a^b", constrain.UnsupportedFeatureError),
    ("a$b", constrain.UnsupportedFeatureError),
    ("\\bfoo", constrain.UnsupportedFeatureError),
    ("\\Bx", constrain.UnsupportedFeatureError),
    ("(?m)^a$", constrain.UnsupportedFeatureError),
    ("(a^)", constrain.UnsupportedFeatureError),
    ("a{,3}", constrain.RegexSyntaxError),
    ("(abc", constrain.RegexSyntaxError),
    ("abc)", constrain.RegexSyntaxError),
    ("[a-", constrain.RegexSyntaxError),
    ("*a", constrain.RegexSyntaxError),
    ("a{3,2}", constrain.RegexSyntaxError),
    ("[z-a]", constrain.RegexSyntaxError),
    ("\\x{110000}", constrain.RegexSyntaxError),
    ("\\q", constrain.RegexSyntaxError),
    ("\\p{NoSuchProperty}", constrain.UnsupportedFeatureError),
]


@pytest.mark.parametrize("pattern,error", INVALID, ids=[p for p, _ in INVALID])
def test_invalid_regex_rejected_like_llguidance(pattern, error):
    assert LLMatcher(_lltokenizer("cl100k_base"), LLMatcher.grammar_from_regex(pattern), log_level=0).is_error()
    with pytest.raises(error):
        constrain.regex(pattern)


# Valid for llguidance, not implemented by anytok yet: a named error, never a wrong mask.
UNSUPPORTED = ["\\p{Greek}", "\\p{Alphabetic}", "(?-u:a)"]


def test_regex_nesting_past_the_budget_named():
    """Valid for llguidance (Rust's regex nests up to 250): past `Limits.max_nesting` (100),
    a named GrammarLimitError, never a RecursionError."""
    pattern = "(" * 120 + "a" + ")" * 120
    assert not LLMatcher(_lltokenizer("cl100k_base"), LLMatcher.grammar_from_regex(pattern), log_level=0).is_error()
    with pytest.raises(constrain.GrammarLimitError, match="Limits.max_nesting"):
        constrain.regex(pattern)


@pytest.mark.parametrize("pattern", UNSUPPORTED)
def test_unsupported_regex_features_named(pattern):
    assert not LLMatcher(_lltokenizer("cl100k_base"), LLMatcher.grammar_from_regex(pattern), log_level=0).is_error()
    with pytest.raises(constrain.UnsupportedFeatureError) as info:
        constrain.regex(pattern)
    assert info.value.feature and isinstance(info.value, NotImplementedError)


def test_json_schema_and_grammar_errors():
    """(Masks for JSON Schema and grammars: test_constrain_json.py.)"""
    with pytest.raises(constrain.ConstraintError):
        constrain.json_schema("{not json")
    with pytest.raises(constrain.UnsupportedFeatureError, match="uniqueItems"):
        constrain.json_schema({"type": "array", "uniqueItems": True})
    with pytest.raises(constrain.UnsupportedFeatureError, match="allow_invalid_utf8"):
        constrain.grammar('%llguidance {"allow_invalid_utf8": true}\nstart: "a"')


def test_slicer_adds_whole_slices_exactly():
    """Free text: with the slicer built, whole slices are added, and the masks (sliced and
    plain trie walk) equal llguidance's."""
    from anytok.constrain.slicer import Slicer, _bits
    from anytok.constrain.tokens import TokenTrie

    name = "cl100k_base"
    enc = anytok_encoding(name)
    pattern = '[^"\\\\]{0,200}"'
    slicer = Slicer.of(TokenTrie.of(enc))
    rng = random.Random(7)
    ours, ref = constrain.regex(pattern).matcher(enc), _ref(name, pattern)
    es = ours._sh.es
    for step in range(4):
        state = ours._stack[-1][0]
        applied = [s.pattern for s in slicer.slices if s.applies(es, state)]
        assert '[^"\\\\\\x00-\\x1F\\x7F]{1,10}' in applied, applied
        plain = _bits(TokenTrie.of(enc).walk(es.derive, state)) | (1 << enc.eot_token if es.nullable[state] else 0)
        mask = ours.mask()
        assert mask == plain.to_bytes(len(mask), "little") == _ref_mask(name, ref)
        token = rng.choice([t for t in ours.allowed() if t != enc.eot_token])
        assert ours.consume(token) and ref.consume_token(token)
    # near the bound, the long slices no longer apply
    tight = constrain.regex('[^"\\\\]{0,5}"').matcher(enc)
    free = [s for s in slicer.slices if s.pattern.startswith('[^"')]
    assert free and not any(s.applies(tight._sh.es, tight._stack[-1][0]) for s in free)


@pytest.mark.parametrize("pattern", ['[^"\\\\]{0,9}"', "[A-Za-z ,.!?']{0,11}", "[a-z\u00e9 ]{0,6}x", "[^\\n]{2,14}"])
def test_slicer_counted_repetitions_by_end_state(pattern):
    """A counted repetition left with fewer characters than a slice's bound: the slice's tokens
    are added by the slice state their bytes end in (no walk), and the masks equal a plain trie
    walk and llguidance's at every step."""
    from anytok.constrain.slicer import Slicer, _bits
    from anytok.constrain.tokens import TokenTrie

    name = "cl100k_base"
    enc = anytok_encoding(name)
    trie = TokenTrie.of(enc)
    slicer = Slicer.of(trie)
    rng = random.Random(pattern)
    ours, ref = constrain.regex(pattern).matcher(enc), _ref(name, pattern)
    es = ours._sh.es
    grouped = 0
    for step in range(8):
        state = ours._stack[-1][0]
        if not ours._sh.forced_bytes(state)[0]:
            rels = [s.relation(es, state) for s in slicer.slices]
            grouped += any(r is not None and not all(r.values()) for r in rels)
            plain = _bits(trie.walk(es.derive, state)) | (1 << enc.eot_token if es.nullable[state] else 0)
            assert slicer.mask(es, state) | (1 << enc.eot_token if es.nullable[state] else 0) == plain
        mask = ours.mask()
        assert mask == _ref_mask(name, ref), step
        choices = [t for t in ours.allowed() if t != enc.eot_token]
        if not choices:
            break
        token = rng.choice(choices)
        assert ours.consume(token) and ref.consume_token(token)
    assert grouped, "the by-end-state path was never taken"


def test_slicer_checks_only_tokens_with_killing_byte_pairs(monkeypatch):
    """A line of any characters but a few (as llama.cpp's list.gbnf: no U+0085, U+2028): the
    free-text slices do not apply whole, and only their tokens holding a byte pair that can
    kill the state are checked (`avoid_mask`); after `-`, with the space forced, the slicer
    serves the tokens that start with it.  Every mask equals a plain trie walk's (with the
    same prefix) and llguidance's."""
    from anytok.constrain import slicer as sl
    from anytok.constrain.tokens import TokenTrie

    name = "cl100k_base"
    enc = anytok_encoding(name)
    trie = TokenTrie.of(enc)
    slicer = sl.Slicer.of(trie)
    pattern = "(- [^\\n\u0085\u2028]+\\n){1,3}"
    calls = {"avoid": 0, "prefix": 0}
    avoid, mask = sl._Slice.avoid_mask, sl.Slicer.mask

    def counted_avoid(self, *args):
        r = avoid(self, *args)
        calls["avoid"] += r is not None
        return r

    def counted_mask(self, es, state, prefix=b""):
        calls["prefix"] += bool(prefix)
        return mask(self, es, state, prefix)

    monkeypatch.setattr(sl._Slice, "avoid_mask", counted_avoid)
    monkeypatch.setattr(sl.Slicer, "mask", counted_mask)
    rng = random.Random(11)
    ours, ref = constrain.regex(pattern).matcher(enc), _ref(name, pattern)
    es = ours._sh.es
    for step in range(6):
        state = ours._stack[-1][0]
        for prefix in (b"", b" ", b" t", b"\xe2\x80", b"ab"):
            plain = sl._bits(trie.walk(es.derive_class, state, prefix))
            assert slicer.mask(es, state, prefix) == plain, (step, prefix)
        assert ours.mask() == _ref_mask(name, ref), step
        choices = [t for t in ours.allowed() if t != enc.eot_token]
        token = enc.encode("-")[0] if step in (0, 3) and enc.encode("-")[0] in choices else rng.choice(choices)
        assert ours.consume(token) and ref.consume_token(token)
    assert calls["avoid"] and calls["prefix"], calls


def test_masks_shared_past_the_longest_token():
    """States of `[a-z ]{0,400}` with more repetitions left than the longest token has bytes
    share one mask (`ExprSet.truncated`); closer to the bound they do not; masks equal
    llguidance's either way."""
    name = "cl100k_base"
    enc = anytok_encoding(name)
    pattern = "[a-z ]{0,400}"
    ours, ref = constrain.regex(pattern).matcher(enc), _ref(name, pattern)
    sh = ours._sh
    longest = sh.trie.max_token_len
    space = enc.encode_single_token(b" ")
    keys = []
    for step in range(400):
        state = ours._stack[-1][0]
        keys.append(sh.es.truncated(state, longest))
        if step % 37 == 0 or step > 400 - longest - 3:
            assert ours.mask() == _ref_mask(name, ref), step
        assert ours.consume(space) and ref.consume_token(space)
    left = [400 - k for k in range(400)]  # repetitions left before each step
    shared = {k for k, n in zip(keys, left) if n > longest}
    assert len(shared) == 1
    near = [k for k, n in zip(keys, left) if n <= longest]
    assert len(set(near)) == len(near) and not shared & set(near)


def test_unsupported_tokenizers_named():
    """WordPiece pipelines: a named error, not a wrong mask."""
    path = model_path("minilm")
    if not path.exists():
        pytest.fail(f"{path} is missing: run build_scripts/fetch/fetch_models.py (test.sh does)")
    with pytest.raises(constrain.UnsupportedFeatureError, match="tokenizer"):
        constrain.regex("abc").matcher(anytok.load(path))


# --- SentencePiece `.model` files ----------------------------------------------------------------

SPM_SAMPLE = [
    "hello world", "Hello, World!", "  two  spaces\tand\ttabs\n\nnew lines   ", "\n", " ", "   ", "x" * 40,
    "ça coûte 12,50 € — «déjà vu»", "日本語のテキスト、漢字とかな", "😀👍🏽 emoji", "𠀋𪚲 rare CJK (byte fallback)",
    "def f(x):\n    return x ** 2  # comment\n", "1234567890 3.14159 -0.5e10", "\u2581 lower eighth \u2581\u2581",
    '{"a": [1, 2.5, "x\\ny"], "b": null}', "\x00\x7f\u00a0\u200b\ufeff",
]


@pytest.mark.parametrize("name", list(SPM_MODELS))
def test_spm_reference_encodes_like_sentencepiece(name, corpora):
    """The llguidance reference is sound: the converted tokenizer.json gives sentencepiece's
    ids (and so does anytok's `.model`), on 3,000 lines of the corpora and edge cases.  (Text
    spelling a control piece such as `</s>` is left out: the tokenizer.json takes it for the
    special token, sentencepiece does not; see test_spm_control_piece_text_as_llguidance.)"""
    ref, sp = _spm_reference(name)
    ours = anytok_encoding(name)
    lines = list(SPM_SAMPLE)
    for text in corpora.values():
        lines += text[:200_000].splitlines()[:750]
    for line in lines:
        expected = sp.EncodeAsIds(line)
        assert ref.encode(line, add_special_tokens=False).ids == expected, (name, line[:80])
        assert ours.encode(line) == expected, (name, line[:80])


@pytest.mark.parametrize("name", list(SPM_MODELS))
def test_spm_token_bytes_as_llguidance(name):
    """Every token's bytes as llguidance reads the converted vocabulary; the same EOS.  One
    difference: llguidance marks special tokens with a leading 0xFF byte, so it takes the byte
    piece `<0xFF>` for a special token; anytok keeps it as the byte 0xFF, which no constraint
    (over UTF-8 text) ever allows, so no mask differs."""
    from anytok.constrain.tokens import TokenTrie

    ll = _lltokenizer(name)
    trie = TokenTrie.of(anytok_encoding(name))
    assert trie.n_vocab == ll.vocab_size and trie.eos == ll.eos_token == 2
    ff = anytok_encoding(name).token_to_id("<0xFF>")
    special = {t for t in range(trie.n_vocab) if ll.is_special_token(t)}
    ours = set(range(trie.n_vocab)) - set(trie.token_bytes)
    assert ff not in ours and trie.token_bytes[ff] == b"\xff"
    assert special == ours | {ff} and len(ours) == (3 if name == "mistral_v1" else 751)
    for t, data in trie.token_bytes.items():
        if t != ff:
            assert ll.decode_bytes([t]) == data, (t, data)


SPM_FORCED = [("mistral_v1", "</s>x"), ("mistral_v1", "a </s>"), ("mistral_v1", "<unk>|<s>"),
              ("mistral_v3", "\\[INST\\] [a-z]{2}"), ("mistral_v3", "x \\[REFERENCE_DOC_1\\] y"),
              ("mistral_v3", "\\[/INST\\]!|\\[IMG\\]\\[IMG\\]")]


@pytest.mark.parametrize("name,pattern", SPM_FORCED, ids=[f"{n}-{p}" for n, p in SPM_FORCED])
def test_spm_control_piece_text_as_llguidance(name, pattern):
    """Forced bytes spelling a control piece (`</s>`, `[INST]`): llguidance's encoder (the
    converted tokenizer.json) takes them for the special token, and forces it; so does anytok
    (though neither accepts consuming it).  User-defined pieces (`[REFERENCE_DOC_1]`) are
    ordinary tokens that sentencepiece's encoder finds in the text too."""
    from anytok.constrain.tokens import TokenTrie

    rng = random.Random(pattern)
    ours, ref = constrain.regex(pattern).matcher(anytok_encoding(name)), _ref(name, pattern)
    _check_same(name, pattern, 0, ours, ref, rng)
    if all(t in TokenTrie.of(anytok_encoding(name)).token_bytes for t in ours.forced()):
        _walk(name, pattern, ours, ref, 6, rng, rng.choice)


# half of test_constrain_json.py's schemas (every 2nd) on Mistral v1's `.model`
SPM_SCHEMAS = range(0, 64, 2)


@pytest.mark.parametrize("k", SPM_SCHEMAS)
def test_spm_json_schema_walk_matches_llguidance(k):
    import json

    from test_constrain_json import SCHEMAS, STEPS
    from test_constrain_json import _walk as json_walk

    name = "mistral_v1"
    schema = SCHEMAS[k]
    ref = LLMatcher(_lltokenizer(name), LLMatcher.grammar_from_json_schema(schema), log_level=0)
    assert not ref.is_error(), ref.get_error()
    ours = constrain.json_schema(schema).matcher(anytok_encoding(name))
    json_walk(name, json.dumps(schema)[:100], ours, ref, STEPS, f"{name}|{k}")


def test_spm_user_defined_angle_pieces_special(tmp_path):
    """A user-defined piece shaped `<...>` becomes an added token that llguidance takes for a
    special token (as it does in any tokenizer.json); anytok reads it so too.  Other
    user-defined pieces are text in both."""
    from sentencepiece import sentencepiece_model_pb2

    from anytok.constrain.tokens import TokenTrie

    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(_spm_path("mistral_v3").read_bytes())
    assert proto.pieces[751].type == proto.pieces[752].type == sentencepiece_model_pb2.ModelProto.SentencePiece.USER_DEFINED
    proto.pieces[751].piece, proto.pieces[752].piece = "<ref0>", "<ref1"
    path = tmp_path / "angle.model"
    path.write_bytes(proto.SerializeToString())
    ref, sp = _spm_reference(str(path))
    ll = LLTokenizer(ref.to_str(), eos_token=sp.eos_id())
    tok = anytok.load(path)
    trie = TokenTrie.of(tok)
    assert [ll.is_special_token(t) for t in (751, 752, 753)] == [True, False, False]
    assert [trie.token_bytes.get(t) for t in (751, 752, 753)] == [None, b"<ref1", b"[REFERENCE_DOC_17]"]
    for pattern in ["<ref0>", "a<ref1>?"]:  # forced `<ref0>` is the special token in both
        ours = constrain.regex(pattern).matcher(tok)
        ref_matcher = LLMatcher(ll, LLMatcher.grammar_from_regex(pattern), log_level=0)
        assert ours.mask() == ref_matcher.compute_bitmask()[:len(ours.mask())]
        assert ours.forced() == ref_matcher.compute_ff_tokens()


def _spm_variant(**changes):
    from anytok.sentencepiece.tokenizer import SentencePieceTokenizer

    cfg = anytok_encoding("mistral_v1").to_config()
    for key, value in changes.items():
        if key in ("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces", "precompiled_charsmap"):
            cfg["normalizer"] = dict(cfg["normalizer"], **{key: value})
        else:
            cfg[key] = value
    return SentencePieceTokenizer.from_config(cfg)


def test_spm_unsupported_models_named():
    """A model without byte fallback (the sentencepiece sdist's test model: Unigram, nfkc, no
    byte pieces), and options that change what a piece or forced text spells: named errors."""
    with pytest.raises(constrain.UnsupportedFeatureError, match="without byte fallback"):
        constrain.regex("abc").matcher(anytok.load(_spm_path("test_model.model")))
    with pytest.raises(constrain.UnsupportedFeatureError, match="tokenizer type str"):
        constrain.regex("abc").matcher("not a tokenizer")
    for changes, feature in [({"remove_extra_whitespaces": True}, "remove_extra_whitespaces"),
                             ({"treat_whitespace_as_suffix": True}, "U\\+2581 prefix"),
                             ({"escape_whitespaces": False}, "U\\+2581 prefix")]:
        with pytest.raises(constrain.UnsupportedFeatureError, match=feature):
            constrain.regex("abc").matcher(_spm_variant(**changes))
    # the same model without those changes is supported
    assert constrain.regex("abc").matcher(_spm_variant(add_dummy_prefix=False)).allowed()

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

import pytest

from conftest import anytok_encoding as _tiktoken_style
from hf_support import model_path

import anytok
from llguidance import LLMatcher, LLTokenizer
from llguidance.tiktoken import lltokenizer_from_encoding

from anytok import constrain

ENCODINGS = ["o200k_base", "cl100k_base"]
# tokenizer.json models (byte-level BPE; SentencePiece-style byte fallback with Llama 2's
# prepended space and Gemma 3's added whitespace tokens): every 3rd regex (6th for Gemma's 262k)
HF_MODELS = ["llama3", "llama2", "gemma3"]

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


@functools.lru_cache(maxsize=None)
def anytok_encoding(name: str):
    """anytok's tokenizer: a tiktoken-style encoding, or `anytok.load` of a tokenizer.json."""
    if name in HF_MODELS:
        path = model_path(name)
        if not path.exists():
            pytest.fail(f"{path} is missing: run build_scripts/fetch_models.py (test.sh does)")
        return anytok.load(path)
    return _tiktoken_style(name)


@functools.lru_cache(maxsize=None)
def _lltokenizer(name: str):
    """llguidance's tokenizer for the same vocabulary (built once per session, ~0.5-6 s)."""
    if name in HF_MODELS:
        anytok_encoding(name)  # fails when the model is missing
        return LLTokenizer(str(model_path(name)))
    return lltokenizer_from_encoding(anytok_encoding(name))


def _ref(name: str, pattern: str) -> LLMatcher:
    m = LLMatcher(_lltokenizer(name), LLMatcher.grammar_from_regex(pattern), log_level=0)
    assert not m.is_error(), m.get_error()
    return m


def _ids(mask: bytes) -> list[int]:
    return [i for i in range(len(mask) * 8) if mask[i >> 3] >> (i & 7) & 1]


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
WALKS += [(name, p, n) for k, name in enumerate(HF_MODELS) for p, n in REGEXES[k::3 if k < 2 else 6]]


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
UNSUPPORTED = ["\\p{Greek}", "\\p{Alphabetic}", "(?i)é", "(?-u:a)", "(" * 120 + "a" + ")" * 120]


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
    with pytest.raises(constrain.UnsupportedFeatureError, match="%json"):
        constrain.grammar('start: %json {"type": "integer"}')


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
    assert not any(s.applies(tight._sh.es, tight._stack[-1][0]) for s in slicer.slices[3:])


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


@pytest.mark.parametrize("filename", ["test_model.model", "minilm.tokenizer.json"])
def test_unsupported_tokenizers_named(filename):
    """SentencePiece `.model` files and WordPiece pipelines: a named error, not a wrong mask."""
    path = model_path("llama3").parent / filename
    if not path.exists():
        pytest.fail(f"{path} is missing: run build_scripts/fetch_models.py (test.sh does)")
    with pytest.raises(constrain.UnsupportedFeatureError, match="tokenizer"):
        constrain.regex("abc").matcher(anytok.load(path))

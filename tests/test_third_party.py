"""A third-party library that takes a tiktoken Encoding, handed anytok's instead.

llguidance's `llguidance.tiktoken.lltokenizer_from_encoding(enc)` reads tiktoken's private
members (`_mergeable_ranks`, `_special_tokens`, `_pat_str`) and `eot_token`, and builds its own
tokenizer and token masks from them.  Built once from tiktoken's Encoding and once from
anytok's, the two must agree in everything: tokenization, vocabulary size, end of sequence
token, decoding, and the constrained-decoding bitmasks of a regex, a Lark and a JSON-schema
grammar, step by step while the same tokens are consumed.
"""

from __future__ import annotations

import functools

import pytest

from conftest import anytok_encoding, tiktoken_encoding

from llguidance import LLMatcher
from llguidance.tiktoken import lltokenizer_from_encoding

# One encoding per distinct split pattern.
NAMES = ["r50k_base", "cl100k_base", "o200k_base"]

TEXTS = [
    "hello world",
    "Hello, world! <|endoftext|> and <|fim_prefix|>",
    "  leading spaces\n\n\ttabs\r\nand 'll 's 'RE contractions 1234567 ٣٤٥",
    "中文文本，日本語のテキスト、한국어 텍스트 😀👍🏽 e\u0301 \u00a0nbsp",
    "def f(x):\n    return x ** 2  # comment\n",
    "",
]

REGEX = r"(yes|no|maybe), [a-z]+ [0-9]{2,4}!"
LARK = 'start: "The answer is " /[0-9]+/ "." '
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "age", "tags"],
    "additionalProperties": False,
}
# grammar -> texts it accepts, whose tokens are fed to the matchers one at a time
GRAMMARS = {
    "regex": (LLMatcher.grammar_from_regex(REGEX), ["maybe, soon 2025!", "no, never 42!"]),
    "lark": (LLMatcher.grammar_from_lark(LARK), ["The answer is 4217."]),
    "json": (LLMatcher.grammar_from_json_schema(SCHEMA),
             ['{"name": "Ann Lee", "age": 31, "tags": ["a", "b c"]}', '{"name":"中文","age":7,"tags":[]}']),
}


@functools.lru_cache(maxsize=None)
def _lltokenizer(library: str, name: str):
    """The LLTokenizer of `name`, built from tiktoken's or anytok's Encoding (once per process:
    ~0.2-1 s each)."""
    enc = tiktoken_encoding(name) if library == "tiktoken" else anytok_encoding(name)
    return lltokenizer_from_encoding(enc)


@pytest.fixture(params=NAMES)
def pair(request):
    name = request.param
    return name, _lltokenizer("tiktoken", name), _lltokenizer("anytok", name)


def test_tokenizer_agrees(pair):
    name, ref, ours = pair
    assert type(ours) is type(ref)
    assert ours.vocab_size == ref.vocab_size == anytok_encoding(name).n_vocab
    assert ours.eos_token == ref.eos_token == anytok_encoding(name).eot_token
    assert ours.eos_tokens == ref.eos_tokens
    assert ours.is_canonical == ref.is_canonical
    enc = anytok_encoding(name)
    for text in TEXTS:
        for parse_special in (False, True):
            ids = ours.tokenize_str(text, parse_special=parse_special)
            assert ids == ref.tokenize_str(text, parse_special=parse_special)
            expected = enc.encode(text, allowed_special="all") if parse_special else enc.encode_ordinary(text)
            assert ids == expected
        data = text.encode("utf-8")
        for cut in {len(data) - 1, len(data) - 2, len(data) // 2}:
            if cut < 0:
                continue
            for tail in (b"", b"\xff", b"\xe4\xb8"):
                raw = data[:cut] + tail
                assert ours.tokenize_bytes(raw) == ref.tokenize_bytes(raw)
                assert ours.tokenize_partial(raw) == ref.tokenize_partial(raw)
        assert ours.greedy_tokenize(text) == ref.greedy_tokenize(text)
    specials = sorted(enc._special_tokens.values())
    assert [ours.is_special_token(t) for t in specials] == [ref.is_special_token(t) for t in specials]
    assert all(ours.is_special_token(t) for t in specials)
    # Every token's bytes, as llguidance decodes them.
    tokens = [t for t in range(enc.n_vocab) if t in enc._special_token_values or t < len(enc._mergeable_ranks)]
    for i in range(0, len(tokens), 5000):
        chunk = tokens[i : i + 5000]
        assert ours.decode_bytes(chunk) == ref.decode_bytes(chunk)
    assert ours.dbg_tokens(tokens[:3000]) == ref.dbg_tokens(tokens[:3000])


@pytest.mark.parametrize("grammar", sorted(GRAMMARS))
def test_masks_agree(pair, grammar):
    name, ref, ours = pair
    enc = anytok_encoding(name)
    spec, texts = GRAMMARS[grammar]
    for text in texts:
        m_ref, m_ours = LLMatcher(ref, spec, log_level=0), LLMatcher(ours, spec, log_level=0)
        assert not m_ref.is_error() and not m_ours.is_error(), (m_ref.get_error(), m_ours.get_error())
        ids = enc.encode_ordinary(text)
        assert ids == tiktoken_encoding(name).encode_ordinary(text)
        for step, token in enumerate(ids):
            mask = m_ours.compute_bitmask()
            assert mask == m_ref.compute_bitmask(), (name, grammar, text, step)
            assert mask[token // 8] >> (token % 8) & 1, (name, grammar, text, step, token)  # the next token is allowed
            assert m_ours.compute_ff_tokens() == m_ref.compute_ff_tokens()
            assert m_ours.is_accepting() == m_ref.is_accepting()
            assert m_ours.consume_token(token) and m_ref.consume_token(token), (m_ours.get_error(), m_ref.get_error())
        assert m_ours.is_accepting() and m_ref.is_accepting()
        assert m_ours.compute_bitmask() == m_ref.compute_bitmask()
        assert not m_ours.is_error() and not m_ref.is_error()

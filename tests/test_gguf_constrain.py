"""`anytok.constrain` matchers on GGUF tokenizers against llguidance on the same vocabulary.

llguidance's own GGUF path (`llguidance.llamacpp.lltokenizer_from_vocab`) needs a built
llama.cpp; what it does with a llama.cpp vocabulary is: each token's bytes are llama.cpp's
piece for it (control, unknown and user-defined tokens as their text, byte tokens as that
byte, `▁` as a space), control tokens and user-defined `<...>` tokens special (a 0xFF prefix),
EOS the file's EOS, forced text tokenized by llama.cpp (add_special=false, parse_special=false;
where that adds a space in front, with a sentinel byte in front that is then dropped).  The
references here are llguidance itself, built without llama.cpp:

* BPE, Llama 3 (`ggml-vocab-llama-bpe.gguf`): llguidance on the same model's tokenizer.json
  (`tests/test_gguf.py` checks the vocabularies and ids agree), with the file's EOS;
* SPM, Llama (`ggml-vocab-llama-spm.gguf`): llguidance on a `TokenizerWrapper` whose token bytes
  are derived from the header as read by llama.cpp's own `gguf` Python package (PyPI) by the
  rules above, and whose tokenizer is the `sentencepiece` library on a model of the same
  pieces and scores without the dummy prefix (tests/test_gguf.py checks it against llama.cpp's
  ids with the prefix).

Each case is a seeded walk: at every step the mask, forced tokens, accepting/stopped states and
the verdict on a random token must be llguidance's.  ANYTOK_FULL=1 walks more schemas.
"""

from __future__ import annotations

import functools
import random

import pytest

from test_gguf import FULL, HF_MODELS, MODELS, _spm_reference, gguf_tok

from llguidance import LLMatcher, LLTokenizer

from anytok import constrain
from anytok.constrain.tokens import TokenTrie

SPM, BPE = "ggml-vocab-llama-spm.gguf", "ggml-vocab-llama-bpe.gguf"


def _header_token_bytes(name: str) -> tuple[list[bytes], list[int]]:
    """(token bytes as llguidance.llamacpp makes them, special ids) from the header as llama.cpp's
    own `gguf` package reads it (SentencePiece-style vocabularies)."""
    from gguf import GGUFReader

    r = GGUFReader(str(MODELS / name))
    f = r.fields["tokenizer.ggml.tokens"]
    texts = [bytes(f.parts[i]).decode("utf-8") for i in f.data]
    f = r.fields["tokenizer.ggml.token_type"]
    types = [int(f.parts[i][0]) for i in f.data]
    out, special = [], []
    for i, (text, kind) in enumerate(zip(texts, types)):
        if kind == 1:  # normal
            b = text.replace("\u2581", " ").encode()
        elif kind == 6:  # byte
            b = bytes([int(text[3:5], 16)])
        elif kind in (2, 3, 4):  # unknown, control, user-defined: their text
            b = text.encode()
        else:  # unused
            b = b""
        if kind == 3 or (kind == 4 and b.startswith(b"<") and b.endswith(b">")):
            b = b"\xff" + b
            special.append(i)
        out.append(b)
    return out, special


class _SPMWrapped:
    """What llguidance's TokenizerWrapper takes: tokens, EOS / BOS, a tokenize function (str)."""

    def __init__(self, name: str):
        from sentencepiece import SentencePieceProcessor, sentencepiece_model_pb2 as pb

        self.tokens, self.special_token_ids = _header_token_bytes(name)
        v = gguf_tok(name).vocab
        self.eos_token_id, self.bos_token_id = v.special["eos"], v.special["bos"]
        m = pb.ModelProto()
        m.ParseFromString(_spm_reference(name).serialized_model_proto())
        m.normalizer_spec.add_dummy_prefix = False  # llguidance's sentinel drops llama.cpp's space
        self._sp = SentencePieceProcessor(model_proto=m.SerializeToString())

    def __call__(self, text):
        if not isinstance(text, str):
            raise TypeError("str only")
        return self._sp.encode(text)


@functools.lru_cache(maxsize=None)
def lltokenizer(name: str):
    if name == BPE:
        return LLTokenizer(str(HF_MODELS / "llama3.tokenizer.json"), eos_token=gguf_tok(name).vocab.special["eos"])
    from llguidance._tokenizer import TokenizerWrapper

    return LLTokenizer(TokenizerWrapper(_SPMWrapped(name)))


def _ids(mask: bytes) -> list[int]:
    return [i for i in range(len(mask) * 8) if mask[i >> 3] >> (i & 7) & 1]


def _ref_mask(n_vocab: int, ref) -> bytes:
    raw = ref.compute_bitmask()
    n = 4 * ((n_vocab + 31) // 32)
    assert not any(raw[n:])
    return raw[:n]


def _walk(name: str, label: str, ours, ref, steps: int, seed: str) -> None:
    tok = gguf_tok(name)
    rng = random.Random(seed)
    eos = lltokenizer(name).eos_token

    def check(step):
        mask = ours.mask()
        want = _ref_mask(tok.n_vocab, ref)
        if mask != want:
            a, b = set(_ids(mask)), set(_ids(want))
            show = lambda ids: [tok.decode([t]) for t in sorted(ids)[:8]]  # noqa: E731
            raise AssertionError(f"{name} {label!r} step {step}: anytok only {show(a - b)}, llguidance only {show(b - a)}")
        assert ours.forced() == ref.compute_ff_tokens(), (label, step)
        assert ours.is_accepting() == ref.is_accepting(), (label, step)
        assert ours.is_stopped() == ref.is_stopped(), (label, step)
        probe = rng.randrange(tok.n_vocab)
        copy = ref.deep_copy()
        before = ours.num_tokens
        assert ours.consume(probe) == copy.consume_token(probe), (label, step, probe)
        ours.rollback(ours.num_tokens - before)
        return mask

    for step in range(steps):
        check(step)
        allowed = ours.allowed()
        ordinary = [t for t in allowed if t != eos]
        token = rng.choice(ordinary) if ordinary and rng.random() < 0.9 else rng.choice(allowed)
        assert ours.consume(token) and ref.consume_token(token), (label, step, token, ref.get_error())
        if ours.is_stopped():
            break
    check(steps)
    assert not ref.is_error(), ref.get_error()


@pytest.mark.parametrize("name", [SPM, BPE])
def test_token_bytes_and_eos_as_llguidance_llamacpp(name):
    trie = TokenTrie.of(gguf_tok(name))
    assert trie.eos == lltokenizer(name).eos_token == gguf_tok(name).vocab.special["eos"]
    if name == SPM:
        raw, special = _header_token_bytes(name)
        assert trie.token_bytes == {i: b for i, b in enumerate(raw) if i not in special}
        # forced text: no space in front (llguidance's sentinel), "<s>" as text
        for text in ("hello world", " a", "<s>x", "日本", "\n\n"):
            assert trie.encode(text) == _SPMWrapped(name)(text)


REGEXES = [r"(yes|no|maybe), [a-z]+ [0-9]{2,4}!", r"-?[0-9]+(\.[0-9]{1,3})?", r"[A-Z][a-z ]{3,20}\.", r" ?x\n<s>"]


@pytest.mark.parametrize("name", [SPM, BPE])
@pytest.mark.parametrize("pattern", REGEXES)
def test_regex_walk_matches_llguidance(name, pattern):
    ref = LLMatcher(lltokenizer(name), LLMatcher.grammar_from_regex(pattern), log_level=0)
    assert not ref.is_error(), ref.get_error()
    _walk(name, pattern, constrain.regex(pattern).matcher(gguf_tok(name)), ref, 12, f"{name}|{pattern}")


def _schemas():
    from test_constrain_json import SCHEMAS

    return range(len(SCHEMAS)) if FULL else range(5, len(SCHEMAS), 9)


@pytest.mark.parametrize("name", [SPM, BPE])
@pytest.mark.parametrize("k", _schemas())
def test_json_schema_walk_matches_llguidance(name, k):
    import json

    from test_constrain_json import SCHEMAS

    schema = SCHEMAS[k]
    ref = LLMatcher(lltokenizer(name), LLMatcher.grammar_from_json_schema(schema), log_level=0)
    assert not ref.is_error(), ref.get_error()
    _walk(name, json.dumps(schema)[:80], constrain.json_schema(schema).matcher(gguf_tok(name)), ref, 16, f"{name}|{k}")

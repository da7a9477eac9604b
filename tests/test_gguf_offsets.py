"""`GGUFTokenizer.encode_with_offsets` against reference offsets (llama.cpp reports none).

References, on the fixtures of tests/test_gguf.py (llama.cpp's `ggml-vocab-*.gguf`):
* WPM (`ggml-vocab-bert-bge.gguf`, BERT WordPiece): `tokenizers` on MiniLM's tokenizer.json, the
  same 30,522 tokens (BertNormalizer, BertPreTokenizer, WordPiece);
* UGM (`ggml-vocab-nomic-bert-moe.gguf`, T5-style Unigram): `sentencepiece`'s piece spans
  (`encode(text, out_type="immutable_proto")` begin/end) on a ModelProto of the GGUF's pieces,
  scores, types and charsmap (test_gguf.py's reference for its ids);
* byte-level BPE (`ggml-vocab-llama-bpe.gguf`): `tokenizers` on Llama 3's tokenizer.json; MPT's
  (user-defined tokens cut out of the text): `tokenizers` on its `to_tokenizer_json()`;
* SPM (`ggml-vocab-llama-spm.gguf`): `sentencepiece`'s piece spans on test_gguf.py's BPE
  ModelProto, for tokens that are pieces (byte-fallback pieces of one character follow
  `tokenizers`' rule instead: each spans the character, see docs/gguf.md).
Offsets are compared wherever the ids agree (the ids themselves are test_gguf.py's business;
here they must equal `encode`'s on every text).  Default run: the fixtures' texts, corpus slices
and a seeded sixteenth of all code points in 500-character chunks; ANYTOK_FULL=1 every chunk.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import FULL
from test_gguf import HF_MODELS, _spm_reference, corpus_samples, gguf_tok, read_cases, ugm_as_sentencepiece

_ALL = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
_CHUNKS = [_ALL[i:i + 500] for i in range(0, len(_ALL), 500)]
CODE_POINT_CHUNKS = _CHUNKS if FULL else random.Random(43).sample(_CHUNKS, len(_CHUNKS) // 16)

TRICKY = ["", " ", "  a   b  ", "Hello  wörld, Café NAÏVE 日本語 x\n\t\U0001F600 end  ",
          "e\u0301\u0323 \u1e0b\u0323 A\u030a \u0130stanbul \u03a3\u039f\u03a3", "\u3000x\u00a8y \u2474 z\t\n",
          "a \u00a8 b", "x  \u00a8", "<s> </s> \u2581 \u2581\u2581x [x]", "\ufb01ne \u2163 \uff21\uff22",
          "\x00a\ufffdb\x7f\u200bc\u00adz", "\u302a\u302e\u302b x\U00011235\U00011236"]

_REFS: dict = {}


def wpm_reference():
    if "wpm" not in _REFS:
        import tokenizers

        hf = tokenizers.Tokenizer.from_file(str(HF_MODELS / "minilm.tokenizer.json"))
        hf.no_truncation()
        hf.no_padding()
        _REFS["wpm"] = hf
    return _REFS["wpm"]


def ugm_reference():
    if "ugm" not in _REFS:
        _REFS["ugm"] = ugm_as_sentencepiece(gguf_tok("ggml-vocab-nomic-bert-moe.gguf"))
    return _REFS["ugm"]


def hf_offsets(hf, text, add_special_tokens=False):
    e = hf.encode(text, add_special_tokens=add_special_tokens)
    return list(e.ids), [tuple(o) for o in e.offsets]


def sp_offsets(sp, text):
    pieces = sp.encode(text, out_type="immutable_proto").pieces
    return [p.id for p in pieces], [(p.begin, p.end) for p in pieces]


def compare(name, reference, texts, min_agree):
    """Every text: ids == encode's; where the reference's ids agree, the same offsets.  The
    ids must agree on at least `min_agree` of the texts."""
    tok = gguf_tok(name)
    agree = 0
    for text in texts:
        ids, offsets = tok.encode_with_offsets(text)
        assert ids == tok.encode(text), text
        assert len(offsets) == len(ids)
        assert all(0 <= a <= b <= len(text) for a, b in offsets), (text, offsets)
        want_ids, want = reference(text)
        if want_ids != ids:
            continue
        agree += 1
        assert offsets == want, (text, [(i, o, w) for i, o, w in zip(ids, offsets, want) if o != w][:5])
    assert agree >= min_agree * len(texts), (agree, len(texts))


def test_wpm_offsets_are_tokenizers():
    name = "ggml-vocab-bert-bge.gguf"
    hf = wpm_reference()
    texts = [t for t, _ in read_cases(name)] + TRICKY + corpus_samples(400 if FULL else 10) + CODE_POINT_CHUNKS
    compare(name, lambda t: hf_offsets(hf, t), texts, 1.0)
    # [CLS] and [SEP], which the post-processor adds: (0, 0)
    tok = gguf_tok(name)
    for text in TRICKY[:4]:
        assert tok.encode_with_offsets(text, add_special_tokens=True) == hf_offsets(hf, text, True)


def test_ugm_offsets_are_sentencepiece_spans():
    # sentencepiece sums scores in float32, llama.cpp in double: exact ties may be broken
    # differently (test_gguf.py), so the ids agree on most texts, not all
    name = "ggml-vocab-nomic-bert-moe.gguf"
    sp = ugm_reference()
    texts = ([t for t, _ in read_cases("ggml-vocab-llama-bpe.gguf")] + TRICKY + corpus_samples(200 if FULL else 8)
             + CODE_POINT_CHUNKS)
    compare(name, lambda t: sp_offsets(sp, t), texts, 0.85)
    tok = gguf_tok(name)
    ids, offsets = tok.encode_with_offsets(" Hi  there ", add_special_tokens=True)
    assert ids == tok.encode(" Hi  there ", add_special_tokens=True)
    assert [ids[0], ids[-1]] == [tok.vocab.special["bos"], tok.vocab.special["eos"]]
    assert offsets == [(0, 0), (1, 3), (3, 10), (0, 0)]  # "▁there" covers the run of spaces before it


_ALPHABET = st.sampled_from(list("ab Ab.,!-'\t\n\u00a0\u3000e\u0301\u0323\u00e9\u00c5\u0130\u03a3\u4e00\u65e5\ufb01\u2474"
                                 "\u00a8\U0001F600\x00\ufffd\u200b\u302e[]#\u2581") + ["##", "  ", "<s>"])


@settings(max_examples=60 if FULL else 25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_ALPHABET, max_size=30).map("".join))
def test_hypothesis_texts(text):
    # (ids may differ: llama.cpp's WPM reads a "▁" in the text as its own word-start marker)
    compare("ggml-vocab-bert-bge.gguf", lambda t: hf_offsets(wpm_reference(), t), [text], 0.0)
    compare("ggml-vocab-nomic-bert-moe.gguf", lambda t: sp_offsets(ugm_reference(), t), [text], 0.0)


def test_byte_level_bpe_offsets_are_tokenizers():
    from hf_support import hf_tokenizer

    hf = hf_tokenizer("llama3")
    texts = [t for t, _ in read_cases("ggml-vocab-llama-bpe.gguf")] + TRICKY + corpus_samples(5)
    compare("ggml-vocab-llama-bpe.gguf", lambda t: hf_offsets(hf, t), texts, 1.0)


def test_user_defined_tokens_cut_out_are_tokenizers():
    # MPT's runs of spaces are user-defined tokens: llama.cpp cuts them out of the text
    import json

    import tokenizers

    name = "ggml-vocab-mpt.gguf"
    tok = gguf_tok(name)
    hf = tokenizers.Tokenizer.from_str(json.dumps(tok.to_tokenizer_json()))
    texts = [t for t, _ in read_cases(name)] + ["a" + " " * k + "b" for k in range(1, 30)]
    compare(name, lambda t: hf_offsets(hf, t), texts, 0.9)
    ids, offsets = tok.encode_with_offsets("x" + " " * 24 + "y")
    assert len(ids) == 3 and offsets[1] == (1, 25) and ids[1] in {i for _, i, _, _ in tok._cut}


def test_spm_offsets():
    name = "ggml-vocab-llama-spm.gguf"
    tok = gguf_tok(name)
    sp = _spm_reference(name)
    byte_ids = {i for i, t in enumerate(tok.vocab.tokens) if t.startswith("<0x") and len(t) == 6}
    texts = [t for t, _ in read_cases(name)] + TRICKY + corpus_samples(5)
    for text in texts:
        ids, offsets = tok.encode_with_offsets(text)
        assert ids == tok.encode(text), text
        want_ids, want = sp_offsets(sp, text)
        assert want_ids == ids, text
        for i, o, w in zip(ids, offsets, want):
            if i in byte_ids:
                # every byte piece of a character spans the character (sentencepiece: all but
                # the last are empty at its start)
                assert o[0] == w[0] and o[1] == o[0] + 1, (text, i, o, w)
            else:
                assert o == w, (text, i, o, w)
    ids, offsets = tok.encode_with_offsets("Hi", add_special_tokens=True)
    assert ids == tok.encode("Hi", add_special_tokens=True) and offsets[0] == (0, 0) and offsets[-1] == (0, 2)


def test_surrogates_keep_their_place():
    # A lone surrogate is U+FFFD for the engines, a pair written as two code points one
    # character; offsets index the text as given.
    for name in ("ggml-vocab-bert-bge.gguf", "ggml-vocab-nomic-bert-moe.gguf", "ggml-vocab-llama-bpe.gguf"):
        tok = gguf_tok(name)
        text = "a\ud83d\ude00b \ud800 c"
        ids, offsets = tok.encode_with_offsets(text)
        assert ids == tok.encode(text)
        clean = "a\U0001F600b \ufffd c"
        ids2, offsets2 = tok.encode_with_offsets(clean)
        assert ids2 == ids
        to_text = [0, 1, 3, 4, 5, 6, 7, 8]  # index in `clean` -> index in `text`
        assert offsets == [(to_text[a], to_text[b]) for a, b in offsets2], (name, offsets, offsets2)


def test_not_a_str():
    with pytest.raises(TypeError, match="expects a str"):
        gguf_tok("ggml-vocab-bert-bge.gguf").encode_with_offsets(b"abc")


# (Gemma 4: BPE over "▁" with byte fallback; its 262k vocabulary takes seconds to load)
@pytest.mark.parametrize("name", ["ggml-vocab-phi-3.gguf"] + (["ggml-vocab-gemma-4.gguf", "ggml-vocab-qwen2.gguf"] if FULL else []))
def test_other_engines_spell_their_text(name):
    # No reference here (the kinds above have one): the ids are encode's, the spans in order,
    # and each token's span is the text its bytes spell
    tok = gguf_tok(name)
    for text in [t for t, _ in read_cases(name)] + TRICKY:
        ids, offsets = tok.encode_with_offsets(text)
        assert ids == tok.encode(text), text
        assert all(a <= b for a, b in offsets) and all(a[0] <= b[0] for a, b in zip(offsets, offsets[1:]))
        if text.isascii():
            surface = "".join(tok.decode([i]) for i in ids)
            spans = "".join(text[a:b] for a, b in offsets)
            assert spans.replace(" ", "") == surface.replace(" ", ""), (text, spans, surface)


def test_lstrip_rstrip_tokens_span_the_white_space_they_remove():
    # No fixture has a user-defined token with lstrip / rstrip (llama.cpp sets them by model
    # name): MPT's vocabulary with "<|endoftext|>" made one, against `tokenizers` on its
    # to_tokenizer_json() (an AddedToken with lstrip and rstrip), on texts where MPT's
    # user-defined runs of spaces do not compete with it (tokenizers cuts leftmost first)
    import json

    import tokenizers
    from anytok.gguf import vocab as V
    from anytok.gguf.tokenizer import GGUFTokenizer

    fresh = GGUFTokenizer.from_config(gguf_tok("ggml-vocab-mpt.gguf").to_config())
    v = fresh.vocab
    v.attrs[v.token_to_id["<|endoftext|>"]] = V.USER_DEFINED | V.LSTRIP | V.RSTRIP
    tok = GGUFTokenizer(v, name="mpt-lstrip")
    hf = tokenizers.Tokenizer.from_str(json.dumps(tok.to_tokenizer_json()))
    for text in ["<|endoftext|> x", "x <|endoftext|>", "a\t<|endoftext|>\nb", " <|endoftext|><|endoftext|> q "]:
        ids, offsets = tok.encode_with_offsets(text)
        assert ids == tok.encode(text)
        e = hf.encode(text, add_special_tokens=False)
        assert [v.tokens[i] for i in ids] == [hf.id_to_token(i) for i in e.ids], text
        assert offsets == [tuple(o) for o in e.offsets], (text, offsets, e.offsets)

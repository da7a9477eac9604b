"""GGUF tokenizers (anytok.gguf, anytok.gguf.header) against llama.cpp and `tokenizers`.

References:
* llama.cpp's own tokenizer tests: `ggml-vocab-*.gguf` with `.inp` texts and `.out` ids
  written by its tests/test-tokenizer-0 (add_special=false, parse_special=false), from the
  llama-cpp-python 0.3.36 sdist (build_scripts/fetch/fetch_llama_cpp.py, sha256-verified);
* `tokenizers` on the same model's tokenizer.json where the fixtures have one (vocabularies
  compared first);
* PyPI `gguf` 0.19.0 (llama.cpp's own Python package) as an independent GGUF writer.

Default run: every `.inp`/`.out` pair in full, 30 corpus slices per corpus against
`tokenizers`, a seeded sample of header corruptions.  `ANYTOK_FULL=1` runs 400 corpus slices
per corpus and corrupts every byte of the fuzz file.
"""

from __future__ import annotations

import io
import os
import random
import struct
import time
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import anytok
from anytok import VocabFormatError
from anytok.gguf.header import read_gguf_header
from anytok.gguf import load_gguf
from anytok.pipeline import UnsupportedTokenizerError

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / ".cache" / "llama_cpp" / "models"
HF_MODELS = ROOT / ".cache" / "models"
CORPORA = Path(os.environ.get("ANYTOK_SHARED", ROOT.parent / "shared")) / "corpora"
FULL = os.environ.get("ANYTOK_FULL") == "1"
SEP = "\n__ggml_vocab_test__\n"

ALL_GGUF = sorted(p.name for p in MODELS.glob("ggml-vocab-*.gguf"))
WITH_OUT = sorted(p.name[: -len(".out")] for p in MODELS.glob("ggml-vocab-*.gguf.out"))
# The GGUFs anytok cannot run exactly, and the words its error must name (none of the 19 now;
# the custom-splitter pre-tokenizers are checked on a copy of a header below).
UNSUPPORTED: dict[str, tuple[str, ...]] = {}


def test_fixtures_present():
    # fetched by build_scripts/fetch/fetch_llama_cpp.py (called from build_scripts/test.sh)
    assert len(ALL_GGUF) == 19, ALL_GGUF
    assert len(WITH_OUT) == 15, WITH_OUT


_LOADED: dict[str, object] = {}


def gguf_tok(name: str):
    tok = _LOADED.get(name)
    if tok is None:
        tok = _LOADED[name] = anytok.load(MODELS / name)
    return tok


def read_cases(name: str) -> list[tuple[str, list[int]]]:
    inp = (MODELS / (name + ".inp")).read_text(encoding="utf-8")
    texts = inp.split(SEP)
    if inp.endswith(SEP):
        texts.pop()  # the file ends with a separator: no text after it
    lines = (MODELS / (name + ".out")).read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""
    lines.pop()
    assert len(texts) == len(lines), (len(texts), len(lines))
    return [(t, [int(x) for x in line.split()]) for t, line in zip(texts, lines)]


@pytest.mark.parametrize("name", WITH_OUT)
def test_llama_cpp_expected_ids(name):
    tok = gguf_tok(name)
    cases = read_cases(name)
    assert len(cases) >= 40
    bad = [(text, want, tok.encode(text)) for text, want in cases if tok.encode(text) != want]
    assert not bad, bad[:3]


@pytest.mark.parametrize("name", ALL_GGUF)
def test_every_gguf_loads_or_names_what_it_lacks(name):
    if name in UNSUPPORTED:
        with pytest.raises(UnsupportedTokenizerError) as e:
            load_gguf(MODELS / name)
        for word in UNSUPPORTED[name]:
            assert word in str(e.value)
        return
    tok = gguf_tok(name)
    ids = tok.encode("Hello world, 123 héllo\n\tçava?")
    assert ids and all(0 <= i < tok.n_vocab for i in ids)
    assert tok.count("Hello world") == len(tok.encode("Hello world"))


# ------------------------------------------------------------------------------------------
# Against `tokenizers` on the same model's tokenizer.json
# ------------------------------------------------------------------------------------------


def corpus_samples(n: int, size: int = 300) -> list[str]:
    out = []
    for name in ("en_emma", "code_cpython_stdlib", "zh_peoplesdaily_1998", "ja_debian_reference"):
        text = (CORPORA / f"{name}.txt").read_text(encoding="utf-8")
        rnd = random.Random(name)
        out += [text[s:s + size] for s in (rnd.randrange(len(text) - size) for _ in range(n))]
    return out


def _wpm_hf_form(token: str) -> str:
    # llama.cpp's converter writes WordPiece's "##x" as "x" and a word start "x" as "▁x"
    if token.startswith("##"):
        return token[2:]
    if token.startswith("[") and token.endswith("]"):
        return token
    return "\u2581" + token


# (GGUF, tokenizer.json, how many leading ids hold the same tokens, token form, whether the
# tokenizer.json's post-processor adds what llama.cpp adds: the fixture's llama3 file has no
# post-processor, while llama.cpp adds BOS for `llama-bpe`)
HF_PAIRS = [
    ("ggml-vocab-llama-bpe.gguf", "llama3", 128256, None, False),
    ("ggml-vocab-qwen2.gguf", "qwen3", 151643, None, True),  # the BPE part; added tokens differ
    # (not qwen35: Qwen 3.5 keeps combining marks with letters, Qwen 3's tokenizer.json does not)
    ("ggml-vocab-bert-bge.gguf", "minilm", 30522, _wpm_hf_form, True),
]


@pytest.mark.parametrize("gguf_name,hf_name,n_same,form,same_specials", HF_PAIRS)
def test_against_tokenizers(gguf_name, hf_name, n_same, form, same_specials):
    import tokenizers
    hf = tokenizers.Tokenizer.from_file(str(HF_MODELS / f"{hf_name}.tokenizer.json"))
    hf.no_truncation()
    hf.no_padding()
    tok = gguf_tok(gguf_name)
    inv = {i: t for t, i in hf.get_vocab(with_added_tokens=True).items()}
    hf_tokens = [inv.get(i) for i in range(n_same)]
    if form is not None:
        hf_tokens = [form(t) for t in hf_tokens]
    assert tok.vocab.tokens[:n_same] == hf_tokens, "not the same vocabulary"
    texts = [t for t, _ in read_cases(gguf_name)] if (MODELS / (gguf_name + ".out")).exists() else []
    texts += corpus_samples(400 if FULL else 30)
    bad = [t for t in texts if tok.encode(t) != hf.encode(t, add_special_tokens=False).ids]
    assert not bad, bad[:3]
    # what llama.cpp adds for the file is what the tokenizer.json's post-processor adds
    for t in ("Hello world", " a b c") if same_specials else ():
        assert tok.encode(t, add_special_tokens=True) == hf.encode(t, add_special_tokens=True).ids


def test_gpt2_against_tiktoken():
    # GPT-2's GGUF against tiktoken's "gpt2" encoding (the same 50,257 tokens, the same split
    # expression): each token's bytes first, then llama.cpp's texts and corpus slices
    from conftest import tiktoken_encoding

    enc = tiktoken_encoding("gpt2")
    tok = gguf_tok("ggml-vocab-gpt-2.gguf")
    assert tok.n_vocab == enc.n_vocab
    # (each token's piece as llama_token_to_piece gives it; decode_bytes also cleans spaces)
    pieces = tok._piece_table()
    assert all(pieces[i] == enc.decode_single_token_bytes(i) for i in range(enc.n_vocab))
    texts = [t for t, _ in read_cases("ggml-vocab-gpt-2.gguf")] + corpus_samples(400 if FULL else 30)
    bad = [t for t in texts if tok.encode(t) != enc.encode_ordinary(t)]
    assert not bad, bad[:3]


def ugm_as_sentencepiece(tok):
    """A `sentencepiece` processor of a UGM GGUF's pieces, scores, types and charsmap (with the
    dummy prefix, extra white space removed and escaped, as the fixtures' GGUFs say)."""
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as pb

    v = tok.vocab
    m = pb.ModelProto()
    for text, score, kind in zip(v.tokens, v.scores, v.header.kv["tokenizer.ggml.token_type"]):
        p = m.pieces.add()
        p.piece, p.score, p.type = text, score, kind
    m.trainer_spec.model_type = pb.TrainerSpec.UNIGRAM
    m.trainer_spec.unk_id, m.trainer_spec.bos_id = v.special["unk"], v.special["bos"]
    m.trainer_spec.eos_id, m.trainer_spec.pad_id = v.special["eos"], v.special["pad"]
    m.normalizer_spec.precompiled_charsmap = bytes(v.header.kv["tokenizer.ggml.precompiled_charsmap"])
    assert v.add_space_prefix and v.remove_extra_whitespaces and v.escape_whitespaces
    m.normalizer_spec.add_dummy_prefix = True
    m.normalizer_spec.remove_extra_whitespaces = True
    m.normalizer_spec.escape_whitespaces = True
    return spm.SentencePieceProcessor(model_proto=m.SerializeToString())


def test_ugm_against_sentencepiece():
    # nomic-bert-moe (t5 / UGM, no .out): the `sentencepiece` library on a ModelProto made of the
    # same pieces, scores, types and charsmap.  sentencepiece sums scores in float32 and
    # llama.cpp (and anytok) in double, so exact ties between two segmentations may be broken
    # differently: then both must hold the same pieces with the same total.
    tok = gguf_tok("ggml-vocab-nomic-bert-moe.gguf")
    v = tok.vocab
    sp = ugm_as_sentencepiece(tok)
    texts = [t for t, _ in read_cases("ggml-vocab-llama-bpe.gguf")] + corpus_samples(200 if FULL else 25)
    exact = 0
    for text in texts:
        a, b = tok.encode(text), sp.encode(text)
        if a == b:
            exact += 1
            continue
        assert sorted(a) == sorted(b), (text, a, b)
        assert sum(v.scores[i] for i in a) == pytest.approx(sum(v.scores[i] for i in b), abs=1e-3)
    assert exact >= 0.85 * len(texts)


def _spm_reference(name: str):
    """`sentencepiece` on a BPE ModelProto of the GGUF's pieces, scores and types, set up as
    llama.cpp's SPM runs: no normalization, a dummy prefix, no whitespace pre-split, bytes as
    <0xXX> pieces."""
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as pb

    v = gguf_tok(name).vocab
    m = pb.ModelProto()
    for text, score, kind in zip(v.tokens, v.scores, v.header.kv["tokenizer.ggml.token_type"]):
        p = m.pieces.add()
        p.piece, p.score, p.type = text, score, kind
    m.trainer_spec.model_type = pb.TrainerSpec.BPE
    m.trainer_spec.byte_fallback = True
    m.trainer_spec.split_by_whitespace = False
    m.trainer_spec.unk_id, m.trainer_spec.bos_id, m.trainer_spec.eos_id = v.special["unk"], v.special["bos"], 2
    m.trainer_spec.pad_id = -1
    m.normalizer_spec.name = "identity"
    m.normalizer_spec.add_dummy_prefix = True
    m.normalizer_spec.remove_extra_whitespaces = False
    m.normalizer_spec.escape_whitespaces = True
    return spm.SentencePieceProcessor(model_proto=m.SerializeToString())


def test_spm_against_sentencepiece():
    # Llama's SPM vocabulary (which llama.cpp's .out also covers) on corpus text
    name = "ggml-vocab-llama-spm.gguf"
    sp = _spm_reference(name)
    tok = gguf_tok(name)
    bad = [t for t in corpus_samples(200 if FULL else 25) if tok.encode(t) != sp.encode(t)]
    assert not bad, bad[:3]
    # long texts (cut into pieces at "▁" no token holds with the character before it, pieces
    # cached), with runs of spaces and "▁" written in the text itself
    for text in corpus_samples(1, 4000) + ["x  y   z \u2581\u2581a\u2581 b " * 200, "  ".join(corpus_samples(2, 800))]:
        assert tok.encode(text) == sp.encode(text)
        assert tok.encode(text) == tok.encode(text)  # from the piece cache


# ------------------------------------------------------------------------------------------
# Decoding, saving, the usual surface
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["ggml-vocab-llama-bpe.gguf", "ggml-vocab-gpt-2.gguf", "ggml-vocab-qwen2.gguf",
                                  "ggml-vocab-gemma-4.gguf"])
def test_decode_round_trip_bpe(name):
    # llama.cpp's test-tokenizer-1-bpe: detokenizing the ids gives the text back (these
    # vocabularies do not clean spaces, or the texts have none to clean)
    tok = gguf_tok(name)
    for text in [t for t, _ in read_cases(name)] + corpus_samples(5):
        ids = tok.encode(text)
        got = tok.decode(ids)
        if tok.vocab.clean_spaces and any(p in text for p in (" ?", " !", " .", " ,", " '")):
            continue
        assert got == text, (text, got)


def test_decode_spm_drops_the_added_space():
    tok = gguf_tok("ggml-vocab-llama-spm.gguf")
    for text in ("Hello world", "  two spaces", "çà et là\n\tfin"):
        assert tok.decode(tok.encode(text)) == text


def test_add_special_tokens_spm_and_gemma4():
    # SPM: BOS only; the fixtures' .out ids come after it unchanged
    spm = gguf_tok("ggml-vocab-llama-spm.gguf")
    for text, want in read_cases("ggml-vocab-llama-spm.gguf")[:10]:
        assert spm.encode(text, add_special_tokens=True) == [spm.vocab.special["bos"]] + want
    g4 = gguf_tok("ggml-vocab-gemma-4.gguf")
    text, want = read_cases("ggml-vocab-gemma-4.gguf")[11]
    assert g4.encode(text, add_special_tokens=True) == [g4.vocab.special["bos"]] + want


def test_usual_surface():
    tok = gguf_tok("ggml-vocab-llama-bpe.gguf")
    texts = ["Hello world", "a" * 50, "naïve café 日本語"]
    assert tok.encode_batch(texts) == [tok.encode(t) for t in texts]
    n = tok.count(texts[2])
    assert tok.count_till_limit(texts[2], n) == n
    assert tok.count_till_limit(texts[2], n - 1) is None
    app = tok.appender()
    for piece in ("Hello", " wor", "ld", "!"):
        app.append(piece)
    assert app.count == tok.count("Hello world!")
    assert tok.decode(tok.encode("<|begin_of_text|>x")) == "<|begin_of_text|>x"  # plain text, parse_special=false
    assert tok.encode("<|begin_of_text|>")[0] != 128000
    assert tok.decode([128000, 9906], skip_special_tokens=True) == "Hello"
    assert tok.decode([128000, 9906]) == "<|begin_of_text|>Hello"
    info = tok.info()
    assert info["type"] == "BPE" and info["pre"] == "llama-bpe" and info["n_vocab"] == 128256
    assert info["special_tokens"]["bos"] == {"id": 128000, "text": "<|begin_of_text|>"}


@pytest.mark.parametrize("name", ["ggml-vocab-phi-3.gguf", "ggml-vocab-bert-bge.gguf", "ggml-vocab-gpt-2.gguf"])
def test_atok_round_trip(tmp_path, name):
    tok = gguf_tok(name)
    path = tmp_path / "x.atok"
    anytok.save(tok, path)
    back = anytok.load(path)
    for text, want in read_cases(name):
        assert back.encode(text) == want
    assert back.encode("Hi", add_special_tokens=True) == tok.encode("Hi", add_special_tokens=True)


def test_tokenizer_json_export_matches_tokenizers(tmp_path):
    import tokenizers
    import json

    name = "ggml-vocab-starcoder.gguf"
    tok = gguf_tok(name)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(tok.to_tokenizer_json()), encoding="utf-8")
    hf = tokenizers.Tokenizer.from_file(str(path))
    for text, want in read_cases(name):
        assert hf.encode(text, add_special_tokens=False).ids == want
    assert anytok.load(path).encode("def f(x):\n    return x") == tok.encode("def f(x):\n    return x")


def test_user_defined_tokens_are_cut_out_with_parse_special_false():
    # MPT's vocabulary (GPT-NeoX's) has user-defined tokens ("  " runs): llama.cpp cuts them out
    # even with parse_special=false, and its .out ids show it
    tok = gguf_tok("ggml-vocab-mpt.gguf")
    assert tok._cut, "expected user-defined tokens"
    for text, want in read_cases("ggml-vocab-mpt.gguf"):
        assert tok.encode(text) == want


# ------------------------------------------------------------------------------------------
# The header reader: against PyPI gguf's writer, and corrupted headers
# ------------------------------------------------------------------------------------------


def _write_gguf(path, endian: str = "little", tensor_mb: int = 0):
    import gguf
    import numpy as np

    w = gguf.GGUFWriter(path, "llama", endianess=gguf.GGUFEndian.BIG if endian == "big" else gguf.GGUFEndian.LITTLE)
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + ["\u2581", "a", "b", "\u2581a", "ab",
                                                                                  "\u2581ab", "é", "日本"]
    types = [2, 3, 3] + [6] * 256 + [1] * 8
    scores = [0.0, 0.0, 0.0] + [0.0] * 256 + [-1.0, -2.0, -3.0, -1.5, -1.25, -0.5, -4.0, -5.0]
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_add_bos_token(True)
    w.add_chat_template("{{ messages }}")
    w.add_array("test.nested", [[1, 2], [3]])
    w.add_float64("test.f64", 1.25)
    if tensor_mb:
        w.add_tensor("weights", np.ones(tensor_mb << 18, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return tokens, scores, types


@pytest.mark.parametrize("endian", ["little", "big"])
def test_reader_against_gguf_writer(tmp_path, endian):
    path = tmp_path / "tiny.gguf"
    tokens, scores, types = _write_gguf(path, endian, tensor_mb=4)
    h = read_gguf_header(path)
    assert h.byteorder == ("<" if endian == "little" else ">")
    assert h.tensor_count == 1
    assert h.kv["tokenizer.ggml.tokens"] == tokens
    assert list(h.kv["tokenizer.ggml.scores"]) == scores
    assert list(h.kv["tokenizer.ggml.token_type"]) == types
    assert h.kv["tokenizer.ggml.bos_token_id"] == 1 and h.kv["tokenizer.ggml.add_bos_token"] is True
    assert [list(a) for a in h.kv["test.nested"]] == [[1, 2], [3]] and h.kv["test.f64"] == 1.25
    assert h.types["tokenizer.ggml.tokens"] == "array[string]"
    # the same from bytes and from a file object; only the header is read from a file
    data = path.read_bytes()
    assert read_gguf_header(data).kv == h.kv

    class Counting(io.BytesIO):
        n = 0

        def read(self, size=-1):
            b = super().read(size)
            Counting.n += len(b)
            return b

    f = Counting(data)
    assert read_gguf_header(f).kv == h.kv
    assert len(data) > 4 << 20 and Counting.n <= (1 << 20), Counting.n
    tok = anytok.load(path)
    assert tok.encode("ab ab", add_special_tokens=True)[0] == 1
    # the header's bytes alone are enough (the tensor infos and data are never read)
    assert anytok.load(data[:h.kv_end]).encode("ab ab") == tok.encode("ab ab")


def _tiny_bytes(tmp_path) -> bytes:
    path = tmp_path / "fuzz.gguf"
    _write_gguf(path)
    return path.read_bytes()


def _must_fail_fast(data: bytes):
    # a clear error in < 1 s, allocating no more than a few times the bytes given
    tracemalloc.start()
    t = time.perf_counter()
    try:
        with pytest.raises(VocabFormatError):
            read_gguf_header(data)
        elapsed = time.perf_counter() - t
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert elapsed < 1.0
    assert peak < 4 * len(data) + (1 << 20), peak


def test_header_prefix_with_the_file_size(tmp_path):
    # What the page does: the header's bytes only, and the whole file's size.
    data = _tiny_bytes(tmp_path) + bytes(1 << 16)
    h = read_gguf_header(data)
    head = data[:h.kv_end]
    got = read_gguf_header(head, size=len(data))
    assert got.kv == h.kv and got.kv_end == h.kv_end
    assert load_gguf(head, size=len(data), what="x.gguf").encode("ab a") == load_gguf(data).encode("ab a")
    with pytest.raises(VocabFormatError, match=r"x\.gguf: .* goes past the 100 bytes read of the file's"):
        read_gguf_header(head[:100], size=len(data), what="x.gguf")
    # a length past the end of the file is named as with the whole file
    bad = bytearray(data)
    at = bad.index(b"tokenizer.ggml.tokens") + len(b"tokenizer.ggml.tokens") + 8
    struct.pack_into("<Q", bad, at, 2**40)
    with pytest.raises(VocabFormatError) as whole:
        read_gguf_header(bytes(bad))
    with pytest.raises(VocabFormatError) as prefix:
        read_gguf_header(bytes(bad[:at + 8]), size=len(bad))
    assert str(whole.value) == str(prefix.value) and "cannot fit" in str(whole.value)
    with pytest.raises(ValueError):
        read_gguf_header(data, size=10)


def test_truncated_headers(tmp_path):
    data = _tiny_bytes(tmp_path)
    h = read_gguf_header(data)
    cuts = range(h.kv_end) if FULL else sorted(set(random.Random(0).sample(range(h.kv_end), 400)) | {0, 3, 4, 23})
    for n in cuts:
        _must_fail_fast(data[:n])


def test_huge_lengths(tmp_path):
    data = bytearray(_tiny_bytes(tmp_path))
    # the first key's length, the key-value count
    for offset in (24, 16):
        for value in (2**63 - 1, 2**40, 2**64 - 1):
            bad = bytearray(data)
            struct.pack_into("<Q", bad, offset, value)
            _must_fail_fast(bytes(bad))
    # the token list's element count, found after its key
    at = data.index(b"tokenizer.ggml.tokens") + len(b"tokenizer.ggml.tokens") + 4 + 4
    for value in (2**62, 2**33, 10**9):
        bad = bytearray(data)
        struct.pack_into("<Q", bad, at, value)
        _must_fail_fast(bytes(bad))
    # the first token's length
    for value in (2**63, 2**31):
        bad = bytearray(data)
        struct.pack_into("<Q", bad, at + 8, value)
        _must_fail_fast(bytes(bad))
    assert read_gguf_header(bytes(data)).kv["tokenizer.ggml.tokens"][0] == "<unk>"


def test_bit_flips(tmp_path):
    data = _tiny_bytes(tmp_path)
    end = read_gguf_header(data).kv_end
    rnd = random.Random(35)
    positions = range(end) if FULL else [rnd.randrange(end) for _ in range(300)]
    for pos in positions:
        bad = bytearray(data)
        bad[pos] ^= 1 << rnd.randrange(8)
        t = time.perf_counter()
        try:
            h = read_gguf_header(bytes(bad))
        except VocabFormatError:
            pass
        else:
            # a header that still parses: loading it works or says why not, never anything else
            try:
                tok = load_gguf(bytes(bad))
                tok.encode("ab a")
            except (VocabFormatError, UnsupportedTokenizerError):
                pass
            assert isinstance(h.kv, dict)
        assert time.perf_counter() - t < 1.0


def test_unsupported_pre_and_model_are_named(tmp_path):
    # a real header with its pre-tokenizer or model renamed to ones anytok does not run
    from anytok.gguf.header import GGUFHeader
    from anytok.gguf.tokenizer import GGUFTokenizer
    from anytok.gguf.vocab import LlamaVocab

    h = read_gguf_header(MODELS / "ggml-vocab-gpt-2.gguf")
    for key, value, words in (("tokenizer.ggml.pre", "kimi-k2", ("kimi-k2",)),
                              ("tokenizer.ggml.pre", "no-such-pre", ("no-such-pre", "unknown")),
                              ("tokenizer.ggml.model", "rwkv", ("rwkv",)),
                              ("tokenizer.ggml.model", "plamo2", ("plamo2",))):
        kv = dict(h.kv, **{key: value})
        with pytest.raises(UnsupportedTokenizerError) as e:
            GGUFTokenizer(LlamaVocab(GGUFHeader(3, 0, kv, h.types, "<", 0), "x.gguf"))
        assert all(w in str(e.value) for w in words), str(e.value)
    kv = {k: v for k, v in h.kv.items() if not k.startswith("tokenizer.")}
    with pytest.raises(UnsupportedTokenizerError, match="without a tokenizer"):
        LlamaVocab(GGUFHeader(3, 0, kv, h.types, "<", 0), "x.gguf")


def test_not_gguf():
    with pytest.raises(VocabFormatError, match="not b'GGUF'"):
        read_gguf_header(b"GGML" + bytes(100))
    with pytest.raises(VocabFormatError, match="version 1"):
        read_gguf_header(b"GGUF" + struct.pack("<IQQ", 1, 0, 0))


# ------------------------------------------------------------------------------------------
# CLI
# ------------------------------------------------------------------------------------------


def test_cli_inspect_convert_count(tmp_path, capsys):
    import json

    from anytok.cli import main

    src = MODELS / "ggml-vocab-phi-3.gguf"
    assert main(["inspect", str(src), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["model"] == "llama" and info["type"] == "SPM" and info["n_vocab"] == 32064
    assert info["chat_template"] is True and info["special_tokens"]["<s>"] == 1
    atok = tmp_path / "phi3.atok"
    assert main(["convert", str(src), "-o", str(atok)]) == 0
    capsys.readouterr()
    text_file = tmp_path / "t.txt"
    cases = read_cases("ggml-vocab-phi-3.gguf")
    text = "\n".join(t for t, _ in cases[10:20])
    text_file.write_text(text, encoding="utf-8")
    assert main(["count", "--vocab", str(src), "--vocab", str(atok), str(text_file)]) == 0
    out = capsys.readouterr().out
    n = len(gguf_tok("ggml-vocab-phi-3.gguf").encode(text))
    assert out.split("\n")[1].split()[:2] == [str(n), str(n)], out
    # an SPM GGUF has no tokenizer.json form: a clear error
    assert main(["convert", str(src), "-o", str(tmp_path / "t.json"), "--to", "tokenizer.json"]) == 2
    assert "only BPE" in capsys.readouterr().err
    bpe = MODELS / "ggml-vocab-gpt-2.gguf"
    assert main(["convert", str(bpe), "-o", str(tmp_path / "gpt2.json"), "--to", "tokenizer.json"]) == 0
    back = anytok.load(tmp_path / "gpt2.json")
    for t, want in read_cases("ggml-vocab-gpt-2.gguf"):
        assert back.encode(t) == want


# ------------------------------------------------------------------------------------------
# Hypothesis texts against tokenizers (BPE, WPM) and against the .atok anytok writes (SPM, UGM)
# ------------------------------------------------------------------------------------------

_TEXT = st.text(st.characters(max_codepoint=0x2FFFF, blacklist_categories=("Cs",)), max_size=60) | \
    st.lists(st.sampled_from(["Hello", " world", "  ", "\n", "\t", "'s", "123", "4567", "é", "日本", "🦙",
                              "!!", " ?", "\u00a0", "\u3000", "x\u0301", "<|endoftext|>", "<s>"]),
             max_size=12).map("".join)
_SETTINGS = settings(max_examples=400 if FULL else 60, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def hf_llama3():
    import tokenizers
    return tokenizers.Tokenizer.from_file(str(HF_MODELS / "llama3.tokenizer.json"))


@pytest.fixture(scope="module")
def hf_minilm():
    import tokenizers
    hf = tokenizers.Tokenizer.from_file(str(HF_MODELS / "minilm.tokenizer.json"))
    hf.no_truncation()
    hf.no_padding()
    return hf


@_SETTINGS
@given(text=_TEXT)
def test_hypothesis_llama3_bpe(hf_llama3, text):
    tok = gguf_tok("ggml-vocab-llama-bpe.gguf")
    # (HF always cuts its added tokens out of text; llama.cpp with parse_special=false does not)
    assume("<|" not in text)
    assert tok.encode(text) == hf_llama3.encode(text, add_special_tokens=False).ids


@_SETTINGS
@given(text=_TEXT)
def test_hypothesis_bert_wpm(hf_minilm, text):
    # U+0085 is both a control (Cc) and White_Space: HF's BertNormalizer drops it (controls
    # first), llama.cpp's WPM splits words at it (white space first)
    assume("\x85" not in text)
    tok = gguf_tok("ggml-vocab-bert-bge.gguf")
    assert tok.encode(text) == hf_minilm.encode(text, add_special_tokens=False).ids


@pytest.fixture(scope="module")
def sp_llama():
    return _spm_reference("ggml-vocab-llama-spm.gguf")


@_SETTINGS
@given(text=_TEXT)
def test_hypothesis_llama_spm(sp_llama, text):
    tok = gguf_tok("ggml-vocab-llama-spm.gguf")
    assert tok.encode(text) == sp_llama.encode(text)


@pytest.fixture(scope="module")
def atok_copies(tmp_path_factory):
    out = {}
    for name in ("ggml-vocab-llama-spm.gguf", "ggml-vocab-nomic-bert-moe.gguf", "ggml-vocab-gemma-4.gguf"):
        path = tmp_path_factory.mktemp("atok") / (name + ".atok")
        anytok.save(gguf_tok(name), path)
        out[name] = anytok.load(path)
    return out


@_SETTINGS
@given(text=_TEXT)
def test_hypothesis_atok_round_trip(atok_copies, text):
    for name, back in atok_copies.items():
        tok = gguf_tok(name)
        assert back.encode(text) == tok.encode(text)
        assert back.decode(tok.encode(text)) == tok.decode(tok.encode(text))


@pytest.mark.parametrize("name", ["ggml-vocab-llama-bpe.gguf", "ggml-vocab-gpt-2.gguf"])
def test_to_encoding(name):
    tok = gguf_tok(name)
    enc = tok.to_encoding()
    for text, want in read_cases(name):
        assert enc.encode_ordinary(text) == want
    for text in corpus_samples(5):
        assert enc.encode_ordinary(text) == tok.encode(text)
    controls = {t for t, a in zip(tok.vocab.tokens, tok.vocab.attrs) if a & 8}  # CONTROL
    assert controls and controls <= set(enc._special_tokens)


def test_to_encoding_names_what_it_lacks():
    with pytest.raises(UnsupportedTokenizerError, match="user-defined"):
        gguf_tok("ggml-vocab-mpt.gguf").to_encoding()
    with pytest.raises(UnsupportedTokenizerError, match="SPM"):
        gguf_tok("ggml-vocab-llama-spm.gguf").to_encoding()

"""SentencePiece `.model` files against the `sentencepiece` library (EncodeAsIds, DecodeIds).

Models (build_scripts/fetch/fetch_sentencepiece_models.py, sha256-pinned): the sentencepiece sdist's
Unigram test models (nfkc charsmap) and Mistral's BPE models (byte fallback, user-defined
pieces).  Variants of them, rewritten with a small protobuf writer below, cover the options the
real files leave at one value (UNUSED / USER_DEFINED / BYTE pieces, whitespace options,
charsmaps, CHAR and WORD models, a denormalizer, custom unk surface); each variant is loaded by
sentencepiece too, so the expected ids always come from the reference library.
"""

from __future__ import annotations

import base64
import io
import json
import random
import sys
from math import frexp, ldexp
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]

import sentencepiece as spm  # noqa: E402

from conftest import FULL, code_point_share  # noqa: E402
from fetch_sentencepiece_models import fetch as fetch_models  # noqa: E402

from anytok.sentencepiece.model_file import load_sentencepiece_model  # noqa: E402
from anytok.sentencepiece import UnsupportedTokenizerError  # noqa: E402
from anytok.sentencepiece.model_proto import BYTE, CONTROL, NORMAL, UNUSED, USER_DEFINED, parse_model_proto  # noqa: E402
from anytok.sentencepiece import precompiled, unigram  # noqa: E402
from anytok.sentencepiece.graphemes import graphemes  # noqa: E402
from anytok.sentencepiece.normalizer import Normalizer, Precompiled  # noqa: E402
from anytok.sentencepiece.protobuf import parse_fields  # noqa: E402
from anytok.sentencepiece.tokenizer import SentencePieceTokenizer, decode_utf8_bytes  # noqa: E402

MODELS = [
    "test_model.model",
    "test_ja_model.model",
    "tokenizer.model.v1",
    "mistral_instruct_tokenizer_240323.model.v3",
]
UNIGRAM_MODELS = MODELS[:2]
CORPUS_SLICE = 60_000
LINES = 300


@pytest.fixture(scope="session")
def models_dir() -> Path:
    return fetch_models()


_pairs: dict[object, tuple[SentencePieceTokenizer, spm.SentencePieceProcessor]] = {}


def pair_from_bytes(data: bytes, key=None):
    key = key or data
    if key not in _pairs:
        _pairs[key] = (load_sentencepiece_model(data), spm.SentencePieceProcessor(model_proto=data))
    return _pairs[key]


@pytest.fixture(params=MODELS)
def model(request, models_dir):
    data = (models_dir / request.param).read_bytes()
    return pair_from_bytes(data, request.param)


def corpus_sample(text: str, seed: str, lines: int, window: int) -> list[str]:
    """The corpus texts the SentencePiece test files compare on: `lines` of `text`'s lines drawn
    with `seed`, then one `window` of characters from a seeded place (test_hf_spm.py,
    test_sentencepiece_offsets.py)."""
    rng = random.Random(seed)
    all_lines = text.splitlines()
    out = rng.sample(all_lines, min(lines, len(all_lines)))
    start = rng.randrange(len(text) - 20000)
    return out + [text[start : start + window]]


def check(tok, sp, text: str) -> list[int]:
    expected = sp.EncodeAsIds(text)
    got = tok.encode(text)
    if got != expected:
        i = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))
        pytest.fail(
            f"ids differ at {i} for text {text[:200]!r}: anytok {[tok.id_to_token(x) for x in got[i - 3:i + 4]]}"
            f" sentencepiece {[sp.IdToPiece(x) for x in expected[i - 3:i + 4]]}"
        )
    assert tok.count(text) == len(expected)
    assert tok.decode(expected) == sp.DecodeIds(expected)
    return expected


# --- a minimal protobuf writer, to make variants of the real models -----------------------------

def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(number: int, wire: int, value) -> bytes:
    key = _varint(number << 3 | wire)
    if wire == 0:
        return key + _varint(value)
    if wire == 2:
        return key + _varint(len(value)) + bytes(value)
    if wire == 5:
        return key + int(value).to_bytes(4, "little")
    if wire == 1:
        return key + int(value).to_bytes(8, "little")
    raise ValueError(wire)


def _message(fields: dict[int, list[tuple[int, object]]]) -> bytes:
    return b"".join(_field(n, w, v) for n in sorted(fields) for w, v in fields[n])


def _piece(piece: str, score_bits: int, ptype: int) -> bytes:
    return _field(1, 2, piece.encode()) + _field(2, 5, score_bits) + _field(3, 0, ptype)


def rewrite_model(data: bytes, *, types=None, extra_pieces=(), trainer=None, normalizer=None,
                  denormalizer=None) -> bytes:
    """`data` with piece types replaced ({id: type}), pieces appended ([(piece, type)]), and
    fields of trainer_spec / normalizer_spec / denormalizer_spec set ({field number: (wire,
    value)})."""
    top = parse_fields(data)
    pieces = []
    for i, (_, blob) in enumerate(top[1]):
        f = parse_fields(blob)
        if types and i in types:
            f[3] = [(0, types[i])]
        pieces.append((2, _message(f)))
    for p, t in extra_pieces:
        pieces.append((2, _piece(p, 0, t)))
    top[1] = pieces
    for number, override in ((2, trainer), (3, normalizer), (5, denormalizer)):
        if override is None:
            continue
        sub = parse_fields(top[number][0][1]) if number in top else {}
        for k, v in override.items():
            sub[k] = [v]
        top[number] = [(2, _message(sub))]
    return _message(top)


def charsmap_of(data: bytes) -> bytes:
    return parse_model_proto(data).normalizer_spec.precompiled_charsmap


@pytest.fixture(scope="session")
def trained_charsmaps(corpora) -> dict[str, bytes]:
    """The precompiled charsmaps of sentencepiece's other built-in rules (from tiny CHAR models
    trained here by the reference library)."""
    out = {}
    text = corpora["en"][:20000].splitlines()
    for rule in ("nmt_nfkc", "nmt_nfkc_cf", "nfkc_cf"):
        buf = io.BytesIO()
        spm.SentencePieceTrainer.train(sentence_iterator=iter(text), model_writer=buf, model_type="char",
                                       vocab_size=60, normalization_rule_name=rule, minloglevel=2)
        out[rule] = charsmap_of(buf.getvalue())
    return out


# --- the real models ---------------------------------------------------------------------------

@pytest.mark.parametrize("corpus", ["en", "code", "zh", "ja"])
def test_corpus(model, corpus, corpora):
    tok, sp = model
    text = corpora[corpus]
    mid = len(text) // 2
    check(tok, sp, text[:CORPUS_SLICE])
    check(tok, sp, text[mid : mid + CORPUS_SLICE // 4])
    for line in text[:CORPUS_SLICE].splitlines()[:LINES]:
        check(tok, sp, line)


CODE_POINTS = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]
CONTEXTS = {
    "concatenated": "".join,
    "spaced": lambda chars: " ".join(chars) + " ",
    "words": lambda chars: "".join(f"a{c}b " for c in chars),
    "combining": lambda chars: "x".join(c + "\u0301" for c in chars),
}


# "words" and "combining" exercise the charsmap (its multi-character rules, whitespace around
# every character): only the Unigram models have one; for the others "spaced" covers the words.
CODE_POINT_CASES = [(m, c) for m in MODELS for c in CONTEXTS if c in ("concatenated", "spaced") or m in UNIGRAM_MODELS]


@pytest.mark.parametrize(("name", "context"), CODE_POINT_CASES)
def test_every_code_point(name, context, models_dir):
    tok, sp = pair_from_bytes((models_dir / name).read_bytes(), name)
    make = CONTEXTS[context]
    # The default run: each of the model's contexts its share (every code point once per model).
    mine = [c for m, c in CODE_POINT_CASES if m == name]
    chars = code_point_share(CODE_POINTS, mine.index(context), len(mine), key=ord)
    for k in range(0, len(chars), 4096):
        check(tok, sp, make(chars[k : k + 4096]))


def test_decode_every_id(model):
    tok, sp = model
    n = tok.n_vocab
    assert n == sp.GetPieceSize()
    for i in range(n):
        assert tok.decode([i]) == sp.DecodeIds([i]), i
        assert tok.id_to_token(i) == sp.IdToPiece(i)
        assert tok.token_to_id(sp.IdToPiece(i)) == sp.PieceToId(sp.IdToPiece(i))
    ids = list(range(n))
    assert tok.decode(ids) == sp.DecodeIds(ids)
    rng = random.Random(6)
    rng.shuffle(ids)
    assert tok.decode(ids) == sp.DecodeIds(ids)
    with pytest.raises(IndexError):
        tok.decode([n])
    with pytest.raises(IndexError):
        sp.DecodeIds([n])


def _special_ids(tok) -> list[int]:
    return [i for i, t in enumerate(tok.types) if t != NORMAL]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_decode_fuzz(model, data):
    tok, sp = model
    special = _special_ids(tok)
    ids = data.draw(st.lists(st.one_of(st.sampled_from(special), st.integers(0, tok.n_vocab - 1)), max_size=40))
    assert tok.decode(ids) == sp.DecodeIds(ids)


FRAGMENTS = [
    " ", "  ", "\t", "\n", "\r\n", "\u3000", "\u00a0", "\u2581", "\u2581\u2581", "  \u2581 ",
    "<s>", "</s>", "<unk>", "[INST]", "[REFERENCE_DOC_1]", "[REFERENCE_DOC_12]", "<0x41>",
    "e\u0301", "\u1100\u1161\u11a8", "ﬁ", "①", "Ａ", "ｶﾞ", "\u200d", "\ufeff", "\x00", "\x7f",
    "123456", "3.14", "😀", "👍🏽", "🇯🇵", "中文", "日本語の", "ĳ", "Ǆ", "㍿", "\U0001d400",
]


def text_strategy():
    piece = st.one_of(
        st.sampled_from(FRAGMENTS),
        st.text(st.characters(codec="utf-8"), max_size=8),
        st.text(st.sampled_from("ab cdé\u0301x\t1"), max_size=12),
    )
    return st.lists(piece, max_size=12).map("".join)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=text_strategy())
def test_fuzz(model, text):
    tok, sp = model
    check(tok, sp, text)


def test_special_tokens(model):
    tok, sp = model
    for text in ["", "hello world", " a  b "]:
        assert tok.encode(text, add_bos=True, add_eos=True) == sp.EncodeAsIds(text, add_bos=True, add_eos=True)
        assert tok.encode(text, add_special_tokens=True) == sp.EncodeAsIds(text, add_bos=True)
        assert tok.encode(text, add_eos=True) == sp.EncodeAsIds(text, add_eos=True)
    assert tok.bos_id == sp.bos_id() and tok.eos_id == sp.eos_id()


def test_count_till_limit(model, corpora):
    tok, _ = model
    text = corpora["en"][:3000] + corpora["ja"][:500]
    n = tok.count(text)
    for limit in (0, 1, n - 1, n, n + 1):
        assert tok.count_till_limit(text, limit) == (n if n <= limit else None)


def test_lone_surrogates_rejected(model):
    tok, sp = model
    with pytest.raises(TypeError):
        sp.EncodeAsIds("a\ud800")
    with pytest.raises(UnicodeEncodeError):
        tok.encode("a\ud800")


def test_config_round_trip(model, corpora):
    tok, _ = model
    config = tok.to_config()
    again = SentencePieceTokenizer.from_config(json.loads(json.dumps(config)))
    assert again.to_config() == config
    text = corpora["en"][:3000] + corpora["ja"][:3000]
    assert again.encode(text) == tok.encode(text)
    assert again.decode(tok.encode(text)) == tok.decode(tok.encode(text))


def test_normalizer(model, corpora):
    tok, sp = model
    n = tok.normalizer
    for key in ("en", "code", "zh", "ja"):
        text = corpora[key][:20000]
        assert n.normalize(text) == sp.Normalize(text)
        assert n.normalize_reference(text[:3000]) == sp.Normalize(text[:3000])


def test_long_texts(models_dir, corpora):
    # Whole corpora in one call: the Unigram path score grows to millions, where float32 steps
    # are coarse and decide real ties; sentencepiece's rounding must be reproduced exactly.
    tok, sp = pair_from_bytes((models_dir / "test_model.model").read_bytes(), "test_model.model")
    for key in ("en", "ja"):
        check(tok, sp, corpora[key])
        assert tok.model.tokenize_reference(tok.normalize(corpora[key][:200_000])) == sp.EncodeAsIds(corpora[key][:200_000])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), start=st.floats(-4e7, 0.0, width=32))
def test_unigram_cache_condition(models_dir, corpora, data, start):
    # The claim behind the Unigram segment cache: whenever ulp(|start| + bound) < tolerance,
    # the float32 search from `start` takes the path of exact arithmetic.
    tok, _ = pair_from_bytes((models_dir / "test_model.model").read_bytes(), "test_model.model")
    m = tok.model
    words = data.draw(st.lists(st.sampled_from(_corpus_words(corpora)), min_size=1, max_size=3))
    seg = "\u2581" + "".join(words).replace("\u2581", "")
    exact, tolerance, bound = m._exact(seg)
    path, _ = m.viterbi(seg, start)
    if tolerance > 0 and ldexp(1.0, frexp(bound - start)[1] - 24) < tolerance:
        assert [p[:3] for p in path] == [p[:3] for p in exact]


_words: list[str] = []


def _corpus_words(corpora) -> list[str]:
    if not _words:
        for key in ("en", "code", "ja"):
            _words.extend(sorted(set(corpora[key][:30000].split()))[:2000])
    return _words


# --- variants ----------------------------------------------------------------------------------

def _variants(models_dir: Path, charsmaps: dict[str, bytes]) -> dict[str, bytes]:
    uni = (models_dir / "test_model.model").read_bytes()
    bpe = (models_dir / "tokenizer.model.v1").read_bytes()
    uni_proto = parse_model_proto(uni)
    bpe_proto = parse_model_proto(bpe)
    normal_uni = [i for i, t in enumerate(uni_proto.types) if t == NORMAL]
    normal_bpe = [i for i, t in enumerate(bpe_proto.types) if t == NORMAL]
    ud_uni = {uni_proto.pieces.index(p): USER_DEFINED for p in ("▁the", "ing", "s", "▁a", "e")}
    ud_bpe = {bpe_proto.pieces.index(p): USER_DEFINED for p in ("▁the", "ing", "▁▁", "er")}
    byte_pieces = [(f"<0x{b:02X}>", BYTE) for b in range(256)]
    false, true = (0, 0), (0, 1)
    return {
        "uni_unused": rewrite_model(uni, types={i: UNUSED for i in normal_uni[::7]}),
        "uni_user_defined": rewrite_model(uni, types=ud_uni),
        "uni_byte_fallback": rewrite_model(uni, extra_pieces=byte_pieces, trainer={35: true}),
        "uni_suffix": rewrite_model(uni, trainer={24: true}),
        "uni_no_dummy": rewrite_model(uni, normalizer={3: false}),
        "uni_keep_spaces": rewrite_model(uni, normalizer={4: false}),
        "uni_no_escape": rewrite_model(uni, normalizer={5: false}),
        "uni_nmt_nfkc_cf": rewrite_model(uni, normalizer={2: (2, charsmaps["nmt_nfkc_cf"])}),
        "uni_no_charsmap": rewrite_model(uni, normalizer={2: (2, b"")}),
        "uni_control": rewrite_model(uni, types={uni_proto.pieces.index("▁and"): CONTROL}),
        "uni_unk_surface": rewrite_model(uni, trainer={44: (2, "<?>".encode())}),
        "uni_denormalizer": rewrite_model(uni, denormalizer={2: (2, charsmaps["nfkc_cf"]), 3: false}),
        "char": rewrite_model(uni, trainer={3: (0, 4)}),
        "char_user_defined": rewrite_model(uni, types=ud_uni, trainer={3: (0, 4)}),
        "word": rewrite_model(uni, trainer={3: (0, 3)}),
        "bpe_unused": rewrite_model(bpe, types={i: UNUSED for i in normal_bpe[::5]}),
        "bpe_user_defined": rewrite_model(bpe, types=ud_bpe),
        "bpe_no_byte_fallback": rewrite_model(bpe, types={i: UNUSED for i in range(3, 259)}, trainer={35: false}),
        "bpe_remove_spaces": rewrite_model(bpe, normalizer={4: true}),
        "bpe_suffix": rewrite_model(bpe, trainer={24: true}),
        "bpe_nmt_nfkc": rewrite_model(bpe, normalizer={2: (2, charsmaps["nmt_nfkc"]), 4: true}),
    }


@pytest.fixture(scope="session")
def variants(models_dir, trained_charsmaps):
    return _variants(models_dir, trained_charsmaps)


VARIANTS = [
    "uni_unused", "uni_user_defined", "uni_byte_fallback", "uni_suffix", "uni_no_dummy",
    "uni_keep_spaces", "uni_no_escape", "uni_nmt_nfkc_cf", "uni_no_charsmap", "uni_control",
    "uni_unk_surface", "uni_denormalizer", "char", "char_user_defined", "word", "bpe_unused",
    "bpe_user_defined", "bpe_no_byte_fallback", "bpe_remove_spaces", "bpe_suffix", "bpe_nmt_nfkc",
]


@pytest.fixture(params=VARIANTS)
def variant(request, variants):
    return pair_from_bytes(variants[request.param], "variant:" + request.param)


def test_variant_corpus(variant, corpora):
    tok, sp = variant
    for key in ("en", "code", "zh", "ja"):
        text = corpora[key]
        check(tok, sp, text[:8000])
        for line in text[:8000].splitlines()[:60]:
            check(tok, sp, line)
    for k in range(0, len(CODE_POINTS), 65536):
        check(tok, sp, " ".join(CODE_POINTS[k : k + 65536 : 7]))
    ids = list(range(tok.n_vocab))
    assert tok.decode(ids) == sp.DecodeIds(ids)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=text_strategy())
def test_variant_fuzz(variant, text):
    tok, sp = variant
    check(tok, sp, text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_variant_decode_fuzz(variant, data):
    tok, sp = variant
    special = _special_ids(tok) or [0]
    ids = data.draw(st.lists(st.one_of(st.sampled_from(special), st.integers(0, tok.n_vocab - 1)), max_size=30))
    assert tok.decode(ids) == sp.DecodeIds(ids)


# --- normalizer: fast path against the step-by-step reference ----------------------------------

MODEL_BYTES: dict[str, bytes] = {}


@pytest.fixture(params=["nfkc", "nmt_nfkc", "nmt_nfkc_cf", "nfkc_cf"])
def charsmap(request, models_dir, trained_charsmaps):
    MODEL_BYTES.setdefault("test_model.model", (models_dir / "test_model.model").read_bytes())
    if request.param == "nfkc":
        return charsmap_of(MODEL_BYTES["test_model.model"])
    return trained_charsmaps[request.param]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=text_strategy(), flags=st.tuples(st.booleans(), st.booleans(), st.booleans(), st.booleans()),
       user_defined=st.lists(st.sampled_from(["ab", "a", " x", "ﬁ", "e\u0301", "\u2581\u2581", "Ａ"]), max_size=3))
def test_normalizer_fast_equals_reference(charsmap, text, flags, user_defined):
    n = Normalizer(precompiled_charsmap=charsmap, add_dummy_prefix=flags[0], remove_extra_whitespaces=flags[1],
                   escape_whitespaces=flags[2], treat_whitespace_as_suffix=flags[3], user_defined=user_defined)
    assert n.normalize(text) == n.normalize_reference(text)


def test_precompiled_is_the_rewriting_stage(charsmap, corpora):
    p = Precompiled(charsmap)
    ref = Normalizer(precompiled_charsmap=charsmap, add_dummy_prefix=False, remove_extra_whitespaces=False,
                     escape_whitespaces=False)
    for text in (corpora["ja"][:5000], "".join(CODE_POINTS[::97]), "e\u0301 Ａ  ﬁ\t\n"):
        assert p.normalize(text) == ref.normalize_reference(text)


def test_precompiled_hf_semantics(charsmap, corpora):
    # tokenizers' Precompiled normalizer works per grapheme cluster (graphemes.py).
    from tokenizers import normalizers

    hf = normalizers.Precompiled(charsmap)
    ours = precompiled.from_config({"type": "Precompiled",
                                    "precompiled_charsmap": base64.b64encode(charsmap).decode()})
    assert ours.to_config()["precompiled_charsmap"] == base64.b64encode(charsmap).decode()
    texts = [corpora[k][:50000] for k in ("en", "ja", "zh")]
    texts += ["e\u0301\r\nＡ\u0301 \u1100\u1161\u11a8 👍🏽 🇯🇵 \u0915\u094d\u0937 ﬁ\u0301"]
    special = "\u0301\u200d\u094d\u0915\u1100\u1161\u11a8\uac00\U0001f1ef\U0001f44d\U0001f3fd\u0600\r\n\u0903\u0e33\uff9e²"
    rng = random.Random(3)
    # every code point in every context for one charsmap; a sample for the others
    # (the default run: every third of those; ANYTOK_FULL=1: all)
    step = (1 if charsmap == charsmap_of(MODEL_BYTES["test_model.model"]) else 7) * (1 if FULL else 3)
    for k in range(0, len(CODE_POINTS), 8192):
        chars = CODE_POINTS[k : k + 8192 : step]
        texts += ["".join(chars), "x".join(c + "\u0301" for c in chars), "\r\n".join(chars),
                  "".join(rng.choice(special) + c for c in chars),
                  # a cluster of < 6 bytes starting with a rule's key is replaced whole: so
                  # whether each character joins "²" shows in the output
                  "".join(f"²{c}z\n" for c in chars)]
    for text in texts:
        assert ours.normalize(text) == hf.normalize_str(text)


@pytest.mark.parametrize("name", UNIGRAM_MODELS)
def test_tokenizer_json_unigram_precompiled(models_dir, corpora, name):
    # The Hugging Face pipeline with this package's Unigram model and Precompiled normalizer,
    # against tokenizers, on a tokenizer.json as tokenizers writes it for a SentencePiece model.
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers
    from tokenizers.models import Unigram

    from anytok.pipeline.hf_json import load_tokenizer_json

    proto = parse_model_proto((models_dir / name).read_bytes())
    ref = Tokenizer(Unigram(list(zip(proto.pieces, proto.scores)), unk_id=0, byte_fallback=False))
    ref.normalizer = normalizers.Sequence([normalizers.Precompiled(proto.normalizer_spec.precompiled_charsmap),
                                           normalizers.Replace(" {2,}", " ")])
    ref.pre_tokenizer = pre_tokenizers.Metaspace()
    ref.decoder = decoders.Metaspace()
    ours = load_tokenizer_json(ref.to_str().encode())
    for key in ("en", "code", "zh", "ja"):
        text = corpora[key][:30000]
        expected = ref.encode(text).ids
        assert ours.encode(text) == expected
        assert ours.decode(expected) == ref.decode(expected)
    text = "".join(CODE_POINTS[::11])
    assert ours.encode(text) == ref.encode(text).ids


def test_graphemes_against_regex_module():
    # A second opinion on the cluster grammar, where `regex` (its own Unicode version) agrees on
    # the classes: the corpora and common combining sequences.
    import regex

    cluster = regex.compile(r"\X")
    for text in ["e\u0301\u0302x\r\n\n\r", "\u1100\u1161\u11a8\uac00\u11a8\u1100\uac00",
                 "🇯🇵🇺🇸🇫", "👍🏽\u200d👩\u200d👩\u200d👧", "\u0915\u094d\u0937\u093f \u0600\u0661",
                 "ｶﾞｷﾞ", "\u0e01\u0e33"]:
        assert graphemes(text) == cluster.findall(text)


def test_decode_utf8_bytes_like_sentencepiece(models_dir):
    tok, sp = pair_from_bytes((models_dir / "tokenizer.model.v1").read_bytes(), "tokenizer.model.v1")
    rng = random.Random(1)
    samples = [b"\xe2\x82", b"\xf0\x9f\x98", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80", b"\xff\xfe", b"a\xe2\x82\xacb"]
    samples += [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9))) for _ in range(300)]
    for raw in samples:
        ids = [tok.token_to_id(f"<0x{b:02X}>") for b in raw]
        assert tok.decode(ids) == sp.DecodeIds(ids), raw
        assert decode_utf8_bytes(raw) == sp.DecodeIds(ids)


# --- Unigram with Hugging Face semantics (tokenizers' own Unigram model) -----------------------

def test_unigram_hf_flag_matches_tokenizers(models_dir, corpora):
    from tokenizers import Tokenizer
    from tokenizers.models import Unigram

    proto = parse_model_proto((models_dir / "test_ja_model.model").read_bytes())
    vocab = list(zip(proto.pieces, proto.scores))
    for byte_fallback in (False, True):
        voc = vocab + ([(f"<0x{b:02X}>", 0.0) for b in range(256)] if byte_fallback else [])
        ref = Tokenizer(Unigram(voc, unk_id=0, byte_fallback=byte_fallback))
        cfg = {"type": "Unigram", "unk_id": 0, "vocab": [list(v) for v in voc], "byte_fallback": byte_fallback}
        ours = unigram.from_config(json.loads(json.dumps(cfg)))
        assert ours.to_config() == cfg
        for key in ("en", "ja", "zh"):
            for word in corpora[key][:20000].replace("\n", " ").split(" ")[:1500]:
                w = "\u2581" + word
                assert ours.tokenize(w) == ref.encode(w).ids, w
        for w in ["😀😀x", "\u2581<unk>😀", "a\U0001d400\U0001d401b", "<s>"]:
            assert ours.tokenize(w) == ref.encode(w).ids, w


# --- errors ------------------------------------------------------------------------------------

def test_unsupported_configurations(models_dir):
    uni = (models_dir / "test_model.model").read_bytes()
    with pytest.raises(UnsupportedTokenizerError, match="unk"):
        load_sentencepiece_model(rewrite_model(uni, types={0: NORMAL}))
    with pytest.raises(UnsupportedTokenizerError, match="byte"):
        load_sentencepiece_model(rewrite_model(uni, extra_pieces=[("<0x41>", BYTE)]))
    with pytest.raises(UnsupportedTokenizerError, match="model_type"):
        load_sentencepiece_model(rewrite_model(uni, trainer={3: (0, 9)}))
    with pytest.raises(UnsupportedTokenizerError, match="precompiled_charsmap"):
        load_sentencepiece_model(rewrite_model(uni, normalizer={2: (2, b"\x00\x01\x00\x00abc")}))
    with pytest.raises(UnsupportedTokenizerError, match="already defined"):
        load_sentencepiece_model(rewrite_model(uni, extra_pieces=[("▁the", NORMAL)]))
    with pytest.raises(ValueError):
        load_sentencepiece_model(b"\x0a\xff")

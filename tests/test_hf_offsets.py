"""anytok.hf's NormalizedString / PreTokenizedString, normalizers and pre-tokenizers against the
real `tokenizers` 0.23.3: normalized text, alignment of every normalized character and split
offsets (original and normalized referential, in characters and bytes) must be identical.

An alignment is observed the way a tokenizers user can: after normalizing, each normalized
character is sliced out (`normalized[i]`) and `get_splits()` reports the original span of each
slice.  Inputs: the four corpora (slices), every code point (with ANYTOK_FULL=1; the default run
gives each component its share of a sixth of them, see `code_point_share`), hypothesis text,
NormalizedString's own methods, and the normalizer and pre-tokenizer of every tokenizer.json
fixture (and the charsmaps of the SentencePiece fixtures as `Precompiled`).
"""

from __future__ import annotations

import itertools
import json
import pickle

import pytest
import tokenizers as T
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import anytok.hf as A
from conftest import FULL, code_point_share
from hf_support import MODELS, hf_from_json, model_path

REFS = [("original", "char"), ("original", "byte"), ("normalized", "char"), ("normalized", "byte")]
SLICE = 12000 if FULL else 1000


def _both(make):
    return make(T), make(A)


# Each normalizer / pre-tokenizer under test, built from a module root (tokenizers or anytok.hf).
NORMALIZERS = {
    "NFC": lambda m: m.normalizers.NFC(),
    "NFD": lambda m: m.normalizers.NFD(),
    "NFKC": lambda m: m.normalizers.NFKC(),
    "NFKD": lambda m: m.normalizers.NFKD(),
    "Lowercase": lambda m: m.normalizers.Lowercase(),
    "Bert": lambda m: m.normalizers.BertNormalizer(),
    "Bert-cased-strip": lambda m: m.normalizers.BertNormalizer(lowercase=False, strip_accents=True),
    "Bert-raw": lambda m: m.normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=False, lowercase=False),
    "Strip": lambda m: m.normalizers.Strip(),
    "Strip-left": lambda m: m.normalizers.Strip(right=False),
    "Strip-right": lambda m: m.normalizers.Strip(left=False),
    "StripAccents": lambda m: m.normalizers.StripAccents(),
    "Prepend": lambda m: m.normalizers.Prepend("▁"),
    "Prepend-long": lambda m: m.normalizers.Prepend("<b>"),
    "Replace": lambda m: m.normalizers.Replace(" ", "▁"),
    "Replace-longer": lambda m: m.normalizers.Replace("e", "[E]"),
    "Replace-remove": lambda m: m.normalizers.Replace("th", ""),
    "Replace-regex": lambda m: m.normalizers.Replace(m.Regex(r"\s+"), "_"),
    "Replace-regex-empty-matches": lambda m: m.normalizers.Replace(m.Regex(r"\d*"), "#"),
    "ByteLevel": lambda m: m.normalizers.ByteLevel(),
    "Nmt": lambda m: m.normalizers.Nmt(),
    "Sequence-llama2": lambda m: m.normalizers.Sequence([m.normalizers.Prepend("▁"), m.normalizers.Replace(" ", "▁")]),
    "Sequence-mixed": lambda m: m.normalizers.Sequence(
        [m.normalizers.NFKD(), m.normalizers.StripAccents(), m.normalizers.Lowercase(), m.normalizers.Strip()]),
}

PRE_TOKENIZERS = {
    "ByteLevel": lambda m: m.pre_tokenizers.ByteLevel(),
    "ByteLevel-no-prefix": lambda m: m.pre_tokenizers.ByteLevel(add_prefix_space=False),
    "ByteLevel-no-regex": lambda m: m.pre_tokenizers.ByteLevel(use_regex=False),
    "Metaspace": lambda m: m.pre_tokenizers.Metaspace(),
    "Metaspace-first": lambda m: m.pre_tokenizers.Metaspace(prepend_scheme="first"),
    "Metaspace-never-nosplit": lambda m: m.pre_tokenizers.Metaspace(replacement="_", prepend_scheme="never", split=False),
    "Whitespace": lambda m: m.pre_tokenizers.Whitespace(),
    "WhitespaceSplit": lambda m: m.pre_tokenizers.WhitespaceSplit(),
    "Bert": lambda m: m.pre_tokenizers.BertPreTokenizer(),
    "Punctuation": lambda m: m.pre_tokenizers.Punctuation(),
    "Punctuation-removed": lambda m: m.pre_tokenizers.Punctuation("removed"),
    "Punctuation-next": lambda m: m.pre_tokenizers.Punctuation("merged_with_next"),
    "Punctuation-previous": lambda m: m.pre_tokenizers.Punctuation("merged_with_previous"),
    "Punctuation-contiguous": lambda m: m.pre_tokenizers.Punctuation("contiguous"),
    "Digits": lambda m: m.pre_tokenizers.Digits(),
    "Digits-individual": lambda m: m.pre_tokenizers.Digits(individual_digits=True),
    "CharDelimiterSplit": lambda m: m.pre_tokenizers.CharDelimiterSplit("e"),
    "FixedLength": lambda m: m.pre_tokenizers.FixedLength(3),
    "Split-regex": lambda m: m.pre_tokenizers.Split(m.Regex(r"\p{N}{1,3}| ?\p{L}+|\s+(?!\S)"), "isolated"),
    "Split-inverted": lambda m: m.pre_tokenizers.Split(" ", "merged_with_previous", invert=True),
    "Split-contiguous": lambda m: m.pre_tokenizers.Split("l", "contiguous"),
    "Split-empty-matches": lambda m: m.pre_tokenizers.Split(m.Regex(r"a*"), "removed"),
    "Sequence": lambda m: m.pre_tokenizers.Sequence(
        [m.pre_tokenizers.WhitespaceSplit(), m.pre_tokenizers.Punctuation(), m.pre_tokenizers.Digits(True)]),
}


def _char_slices(_i, ns):
    return [ns[k] for k in range(len(ns.normalized))]


_CUTS = r"[\sĠ▁a]"


def _words(root):
    # Slicing costs tokenizers time linear in the position: cut into short pieces first.
    cut = root.Regex(_CUTS)
    return lambda _i, ns: ns.split(cut, "isolated")


def normalizer_view(root, normalizer, text):
    """Normalized text, its pieces between spaces (every referential) and, per normalized
    character, its original span."""
    pts = root.PreTokenizedString(text)
    pts.normalize(normalizer.normalize)
    whole = pts.get_splits()
    pts.split(_words(root))
    words = [pts.get_splits(r, t) for r, t in REFS]
    pts.split(_char_slices)
    return [whole] + words + [pts.get_splits()]


def pre_tokenizer_view(root, pre_tokenizer, text, normalizer=None):
    pts = root.PreTokenizedString(text)
    if normalizer is not None:
        pts.normalize(normalizer.normalize)
    pre_tokenizer.pre_tokenize(pts)
    return [pts.get_splits(r, t) for r, t in REFS]


def assert_same_view(got, expected, what, text):
    if got == expected:
        return
    for k, (g, e) in enumerate(zip(got, expected)):
        if g != e:
            i = next((i for i, (x, y) in enumerate(zip(g, e)) if x != y), min(len(g), len(e)))
            raise AssertionError(f"{what} on {text[:60]!r}...: view {k} differs at split {i}: "
                                 f"anytok {g[max(0, i - 1):i + 2]} tokenizers {e[max(0, i - 1):i + 2]} "
                                 f"({len(g)} vs {len(e)} splits)")
    raise AssertionError(f"{what}: views differ")


def _check_normalizer(name, text):
    ref, ours = _both(NORMALIZERS[name])
    assert ours.normalize_str(text) == ref.normalize_str(text), name
    assert_same_view(normalizer_view(A, ours, text), normalizer_view(T, ref, text), name, text)


def _check_pre_tokenizer(name, text, normalizer=None):
    ref, ours = _both(PRE_TOKENIZERS[name])
    rn, an = _both(NORMALIZERS[normalizer]) if normalizer else (None, None)
    if normalizer is None:
        assert ours.pre_tokenize_str(text) == ref.pre_tokenize_str(text), name
    assert_same_view(pre_tokenizer_view(A, ours, text, an), pre_tokenizer_view(T, ref, text, rn),
                     f"{name} after {normalizer}", text)


def _samples(corpora, corpus):
    text = corpora[corpus]
    middle = len(text) // 2
    return [text[:SLICE], text[middle:middle + SLICE]]


# ---------------------------------------------------------------------------------------------
# Corpora
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("corpus", ["en", "code", "zh", "ja"])
@pytest.mark.parametrize("name", list(NORMALIZERS))
def test_normalizer_corpus(name, corpus, corpora):
    for text in _samples(corpora, corpus):
        _check_normalizer(name, text)


@pytest.mark.parametrize("corpus", ["en", "code", "zh", "ja"])
@pytest.mark.parametrize("name", list(PRE_TOKENIZERS))
def test_pre_tokenizer_corpus(name, corpus, corpora):
    for text in _samples(corpora, corpus):
        _check_pre_tokenizer(name, text)
    # After a normalizer that moves alignments around.
    _check_pre_tokenizer(name, _samples(corpora, corpus)[1][:500], "Bert")


# ---------------------------------------------------------------------------------------------
# Every code point
# ---------------------------------------------------------------------------------------------

SCALARS = [cp for cp in range(0, 0x110000) if not 0xD800 <= cp <= 0xDFFF]
CHUNK = 1 << 10
_COMPONENTS = [("n", n) for n in NORMALIZERS] + [("p", p) for p in PRE_TOKENIZERS]


def _code_point_texts(index: int):
    # The default run: each component a share, together a sixth of the code points (all of them
    # for every component with ANYTOK_FULL=1).
    scalars = code_point_share(SCALARS, index, len(_COMPONENTS) * 6)
    for start in range(0, len(scalars), CHUNK):
        # Each code point doubled, then a letter and a space: marks combine with what precedes.
        yield "".join(f"{chr(cp)}{chr(cp)}a " for cp in scalars[start:start + CHUNK])


@pytest.mark.parametrize("kind,name", _COMPONENTS)
def test_every_code_point(kind, name):
    for text in _code_point_texts(_COMPONENTS.index((kind, name))):
        if kind == "n":
            _check_normalizer(name, text)
        else:
            _check_pre_tokenizer(name, text)


# ---------------------------------------------------------------------------------------------
# Hypothesis
# ---------------------------------------------------------------------------------------------

FRAGMENTS = [
    " ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u2028", "\x0b", "\x85", "\x00", "\x01", "\x7f",
    "\u200b", "\u200d", "\ufeff", "\ufffd", "\u00ad", "'s", "'t", "’s", "0", "123", "١٢٣", "½", "²", "①",
    "a", "Z", "hello", "World", "ǅ", "ß", "é", "e\u0301", "e\u0301\u0323", "İ", "ﬁ", "Å", "A\u030a", "\u1e9b\u0323",
    "\u0f73", "\u0301", "\u0345", "中", "文字", "日本語", "カタカナ", "が", "か\u3099", "ｶﾞ", "한국어", "\u1100\u1161\u11a8",
    "\uac00\u11a7", "русский", "Σ", "עברית", "العربية", "हिन्दी", "ไทย", "😀", "👍🏽", "👨\u200d👩\u200d👧",
    "\U0001d400", "\U00020000", "!", "?", "...", "--", "/", "▁", "▁▁", "_", "[", "]", "<s>", "e", "l", "th",
]
texts = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4)), max_size=25).map(
    lambda parts: "".join(parts).encode("utf-16", "surrogatepass").decode("utf-16", "replace"))
EXAMPLES = 400 if FULL else 40


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, name=st.sampled_from(sorted(NORMALIZERS)))
def test_fuzz_normalizer(text, name):
    _check_normalizer(name, text)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, name=st.sampled_from(sorted(PRE_TOKENIZERS)),
       normalizer=st.sampled_from([None, "Bert", "NFKD", "Prepend-long", "Replace-remove", "Strip", "ByteLevel"]))
def test_fuzz_pre_tokenizer(text, name, normalizer):
    _check_pre_tokenizer(name, text, normalizer)


# ---------------------------------------------------------------------------------------------
# The fixtures' normalizers and pre-tokenizers, from their tokenizer.json configs
# ---------------------------------------------------------------------------------------------


def _top_level(text: str, key: str):
    # The value of a top-level key of tokenizer.json, read where it stands (the files are big,
    # and "normalizer" / "pre_tokenizer" come before the model).
    decoder = json.JSONDecoder()
    depth, i, in_string = 0, 0, False
    target = f'"{key}"'
    while i < len(text):
        c = text[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            if depth == 1 and text.startswith(target, i):
                j = text.index(":", i + len(target)) + 1
                while text[j] in " \n\r\t":
                    j += 1
                return decoder.raw_decode(text, j)[0]
            in_string = True
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        i += 1
    raise KeyError(key)


def _fixture_components(name):
    text = model_path(name).read_text(encoding="utf-8")
    cfg = {key: _top_level(text, key) for key in ("normalizer", "pre_tokenizer")}
    # tokenizers builds the same two components from the same JSON, beside an empty model.
    tok = hf_from_json({"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
                        "normalizer": cfg["normalizer"], "pre_tokenizer": cfg["pre_tokenizer"],
                        "post_processor": None, "decoder": None,
                        "model": {"type": "WordLevel", "vocab": {"[UNK]": 0}, "unk_token": "[UNK]"}})
    ours = (A.normalizers.from_config(cfg["normalizer"]), A.pre_tokenizers.from_config(cfg["pre_tokenizer"]))
    return cfg, (tok.normalizer, tok.pre_tokenizer), ours


def _pipeline_view(root, normalizer, pre_tokenizer, text):
    pts = root.PreTokenizedString(text)
    if normalizer is not None:
        pts.normalize(normalizer.normalize)
    if pre_tokenizer is not None:
        pre_tokenizer.pre_tokenize(pts)
    return [pts.get_splits(r, t) for r, t in REFS]


@pytest.mark.parametrize("name", list(MODELS))
def test_fixture_components(name, corpora):
    cfg, (rn, rp), (an, ap) = _fixture_components(name)
    for key in ("normalizer", "pre_tokenizer"):
        ours = an if key == "normalizer" else ap
        assert (ours is None) == (cfg.get(key) is None)
        if ours is not None:
            ref = rn if key == "normalizer" else rp
            assert json.loads(ours.__getstate__()) == json.loads(ref.__getstate__())
    texts = [t for c in ("en", "code", "zh", "ja") for t in _samples(corpora, c)]
    index = list(MODELS).index(name)
    texts += list(itertools.islice(_code_point_texts(index), None if FULL else 2))
    for text in texts:
        assert_same_view(_pipeline_view(A, an, ap, text), _pipeline_view(T, rn, rp, text), name, text)


def test_precompiled_from_sentencepiece_models():
    """Precompiled: the charsmaps of the SentencePiece fixtures (no tokenizer.json fixture has one)."""
    from anytok.sentencepiece.model_proto import parse_model_proto
    from hf_support import fetch_models

    for fname in ("test_model.model", "test_ja_model.model"):
        blob = parse_model_proto(fetch_models.path(fname).read_bytes()).normalizer_spec.precompiled_charsmap
        assert blob
        ref, ours = T.normalizers.Precompiled(blob), A.normalizers.Precompiled(blob)
        for text in ["ｱｲｳ ｶﾞ ① ℃ ﬁ \u3000x ＡＢＣ", "e\u0301\u0301a\u0308 \r\n \u200d👨‍👩‍👧", "Ⅻ ㍿ ½ \u00a0\u2028",
                     "".join(chr(cp) for cp in range(0xFF00, 0xFFF0)), "".join(chr(cp) for cp in range(0x2460, 0x2500))]:
            assert ours.normalize_str(text) == ref.normalize_str(text)
            assert_same_view(normalizer_view(A, ours, text), normalizer_view(T, ref, text), fname, text)
        assert json.loads(ours.__getstate__()) == json.loads(ref.__getstate__())


# ---------------------------------------------------------------------------------------------
# NormalizedString methods
# ---------------------------------------------------------------------------------------------

NS_TEXTS = ["  Hello World!  ", "Héllo wörld ﬁ", "", " ", "日本語 テキスト", "e\u0301\u0323 ß İ", "a\u200db\ufeffc"]
NS_OPS = {
    "nfd": lambda n, m: n.nfd(), "nfkc": lambda n, m: n.nfkc(), "nfc": lambda n, m: n.nfc(), "nfkd": lambda n, m: n.nfkd(),
    "lowercase": lambda n, m: n.lowercase(), "uppercase-ascii": lambda n, m: n.uppercase() if n.normalized.isascii() else None,
    "lstrip": lambda n, m: n.lstrip(), "rstrip": lambda n, m: n.rstrip(), "strip": lambda n, m: n.strip(),
    "prepend": lambda n, m: n.prepend("<<"), "prepend-empty": lambda n, m: n.prepend(""),
    "append": lambda n, m: n.append(">>"), "clear": lambda n, m: n.clear(),
    "replace": lambda n, m: n.replace("l", "LL"), "replace-regex": lambda n, m: n.replace(m.Regex(r"\s+"), ""),
    "replace-char": lambda n, m: n.replace(" ", "▁"),
    "map": lambda n, m: n.map(lambda c: "x" if c == "l" else c), "filter": lambda n, m: n.filter(lambda c: c != "l"),
}


@pytest.mark.parametrize("op", list(NS_OPS))
def test_normalized_string_ops(op):
    for text in NS_TEXTS:
        views = []
        for m in (T, A):
            ns = m.NormalizedString(text)
            NS_OPS[op](ns, m)
            NS_OPS["nfd"](ns, m) if op == "prepend" else None
            pts = m.PreTokenizedString(text)
            pts.normalize(lambda n: NS_OPS[op](n, m))
            pts.split(_char_slices)
            views.append((ns.normalized, ns.original, repr(ns), str(ns),
                          [(s.original, s.normalized) if s is not None else None
                           for s in [ns[k] for k in range(len(ns.normalized))]],
                          [pts.get_splits(r, t) for r, t in REFS]))
        assert views[1] == views[0], (op, text)


SLICE_ARGS = [0, 1, -1, -3, 2, 40, (0, 3), (2, 2), (0, 0), (3, 1), (1, 99), slice(1, 4), slice(None, None),
              slice(-3, None), slice(5, 2), slice(0, 0)]


def test_normalized_string_slicing_and_split():
    for text in NS_TEXTS:
        for prep in (None, "nfd", "prepend", "replace"):
            objs = []
            for m in (T, A):
                ns = m.NormalizedString(text)
                if prep:
                    NS_OPS[prep](ns, m)
                out = []
                for arg in SLICE_ARGS:
                    try:
                        s = ns[arg]
                        out.append(None if s is None else (s.original, s.normalized))
                    except Exception as e:  # noqa: BLE001 - compare the error kinds
                        out.append(type(e).__name__)
                for pattern in (" ", "l", "ll", m.Regex(r"\s+"), m.Regex("o*")):
                    for behavior in ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"):
                        out.append([(s.original, s.normalized) for s in ns.split(pattern, behavior)])
                objs.append(out)
            assert objs[1] == objs[0], (text, prep)


# ---------------------------------------------------------------------------------------------
# The Python API of the components: state, pickling, repr, settable attributes, Sequence
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(NORMALIZERS))
def test_normalizer_state(name):
    ref, ours = _both(NORMALIZERS[name])
    assert ours.__getstate__() == ref.__getstate__()
    assert repr(ours) == repr(ref)
    again = pickle.loads(pickle.dumps(ours))
    assert type(again) is type(ours) and again.__getstate__() == ours.__getstate__()
    assert A.normalizers.from_config(json.loads(ours.__getstate__())).__getstate__() == ref.__getstate__()
    assert isinstance(ours, A.normalizers.Normalizer)


@pytest.mark.parametrize("name", list(PRE_TOKENIZERS))
def test_pre_tokenizer_state(name):
    ref, ours = _both(PRE_TOKENIZERS[name])
    assert ours.__getstate__() == ref.__getstate__()
    assert repr(ours) == repr(ref)
    again = pickle.loads(pickle.dumps(ours))
    assert type(again) is type(ours) and again.__getstate__() == ours.__getstate__()
    assert A.pre_tokenizers.from_config(json.loads(ours.__getstate__())).__getstate__() == ref.__getstate__()
    assert isinstance(ours, A.pre_tokenizers.PreTokenizer)


TEXT = "  Héllo, Wörld! 你好 123 e\u0301  "


def test_settable_attributes_take_effect():
    changes = [
        (lambda m: m.normalizers.BertNormalizer(), [("lowercase", False), ("strip_accents", False),
                                                   ("handle_chinese_chars", False), ("clean_text", False)]),
        (lambda m: m.normalizers.Strip(), [("left", False), ("right", False)]),
        (lambda m: m.normalizers.Prepend("x"), [("prepend", "▁▁")]),
        (lambda m: m.normalizers.Replace(" ", "x"), [("content", "__")]),
    ]
    for make, steps in changes:
        ref, ours = _both(make)
        for attr, value in steps:
            setattr(ref, attr, value)
            setattr(ours, attr, value)
            assert getattr(ours, attr) == getattr(ref, attr)
            assert normalizer_view(A, ours, TEXT) == normalizer_view(T, ref, TEXT), (attr, value)
            assert ours.__getstate__() == ref.__getstate__()
    pchanges = [
        (lambda m: m.pre_tokenizers.ByteLevel(), [("add_prefix_space", False), ("use_regex", False), ("trim_offsets", False)]),
        (lambda m: m.pre_tokenizers.Metaspace(), [("replacement", "_"), ("prepend_scheme", "never"), ("split", False)]),
        (lambda m: m.pre_tokenizers.Punctuation(), [("behavior", "removed"), ("behavior", "contiguous")]),
        (lambda m: m.pre_tokenizers.Digits(), [("individual_digits", True)]),
        (lambda m: m.pre_tokenizers.CharDelimiterSplit("l"), [("delimiter", "o")]),
        (lambda m: m.pre_tokenizers.FixedLength(), [("length", 2)]),
        (lambda m: m.pre_tokenizers.Split(" ", "removed"), [("behavior", "merged_with_next"), ("invert", True)]),
    ]
    for make, steps in pchanges:
        ref, ours = _both(make)
        for attr, value in steps:
            setattr(ref, attr, value)
            setattr(ours, attr, value)
            assert getattr(ours, attr) == getattr(ref, attr)
            assert ours.pre_tokenize_str(TEXT) == ref.pre_tokenize_str(TEXT), (attr, value)
            assert ours.__getstate__() == ref.__getstate__()


def test_sequences_index_and_assign():
    for m in (T, A):
        seq = m.normalizers.Sequence([m.normalizers.Lowercase(), m.normalizers.Strip()])
        seq[1] = m.normalizers.Replace("l", "L")
        seq[0].__class__ = seq[0].__class__  # items are the component objects
        pre = m.pre_tokenizers.Sequence([m.pre_tokenizers.WhitespaceSplit(), m.pre_tokenizers.Digits()])
        pre[1].individual_digits = True  # changes an item in place
        with pytest.raises(IndexError):
            seq[2]
        if m is T:
            expected = (seq.normalize_str(TEXT), pre.pre_tokenize_str(TEXT), seq.__getstate__(), pre.__getstate__())
        else:
            assert (seq.normalize_str(TEXT), pre.pre_tokenize_str(TEXT), seq.__getstate__(), pre.__getstate__()) == expected


def test_bad_input_errors():
    with pytest.raises(ValueError, match="length 1"):
        A.pre_tokenizers.Metaspace(replacement="ab")
    with pytest.raises(ValueError, match="SplitDelimiterBehavior"):
        A.pre_tokenizers.Split(" ", "sideways")
    with pytest.raises(ValueError, match="OffsetReferential"):
        A.PreTokenizedString("x").get_splits("nowhere")
    with pytest.raises(ValueError, match="unknown normalizer"):
        A.normalizers.from_config({"type": "Nope"})
    with pytest.raises(Exception, match="cannot be serialized"):
        pickle.dumps(A.normalizers.Normalizer.custom(object()))


def test_python_tokenize_to_encoding():
    """Tokens from a Python `tokenize` callback carry byte offsets into the normalized split."""
    out = []
    for m in (T, A):
        rows = []
        for text in ["Héllo wörld 你好", "abc ﬁ x²", "😀a b", "e\u0301\u0323 ᄀ가"]:
            for tokenize in (lambda s: [m.Token(i, c, (i, i + 1)) for i, c in enumerate(s)],
                             lambda s: [m.Token(0, s, (0, len(s.encode())))],
                             lambda s: [m.Token(i, "", (i, i + 1)) for i in range(len(s.encode()))]):
                for form in ("nfkd", "nfc", "lowercase"):
                    pts = m.PreTokenizedString(text)
                    m.pre_tokenizers.Whitespace().pre_tokenize(pts)
                    pts.normalize(lambda n: getattr(n, form)())
                    pts.tokenize(tokenize)
                    enc = pts.to_encoding()
                    rows.append((enc.tokens, enc.offsets, enc.word_ids,
                                 [(s, o, [t.as_tuple() for t in toks]) for s, o, toks in pts.get_splits()]))
        out.append(rows)
    assert out[1] == out[0]


# ---------------------------------------------------------------------------------------------
# anytok.pipeline.Tokenizer.encode_with_offsets: ids and offsets of the whole pipeline
# ---------------------------------------------------------------------------------------------

def _with_offsets_texts(corpora, name: str, hf) -> list[str]:
    """Seeded slices of each corpus, some with added tokens (special or not) spliced in."""
    import random

    rng = random.Random(f"encode_with_offsets/{name}")
    added = sorted(hf.get_added_tokens_decoder().values(), key=lambda t: t.content)
    contents = [t.content for t in added]
    texts = []
    for corpus in ("en", "code", "zh", "ja"):
        text = corpora[corpus]
        for _ in range(12 if FULL else 3):
            at = rng.randrange(len(text) - 600)
            piece = text[at:at + rng.randrange(1, 600)]
            if contents and rng.random() < 0.5:
                cut = rng.randrange(len(piece) + 1)
                spliced = rng.choice(contents)
                piece = piece[:cut] + spliced + rng.choice(["", " ", "\n"]) + piece[cut:]
            texts.append(piece)
    texts += ["", " ", "  leading and trailing  ", "a\u0301 ﬁ x² 😀 Ǆ İ ß", "\n\n\t x"]
    return texts


@pytest.mark.parametrize("name", list(MODELS))
def test_encode_with_offsets(name, corpora):
    from hf_support import anytok_tokenizer, hf_tokenizer

    at, hf = anytok_tokenizer(name), hf_tokenizer(name)
    for text in _with_offsets_texts(corpora, name, hf):
        for add in (False, True):
            ids, offsets = at.encode_with_offsets(text, add_special_tokens=add)
            ref = hf.encode(text, add_special_tokens=add)
            assert ids == ref.ids, (name, text, add)
            assert ids == at.encode(text, add_special_tokens=add)
            assert offsets == [tuple(o) for o in ref.offsets], (name, text, add)
            assert all(type(o) is tuple and len(o) == 2 for o in offsets)


def test_encode_with_offsets_after_reassigning_components():
    """The offsets paths a pipeline builds on its first encode_with_offsets are rebuilt when a
    component is reassigned after it: the next call uses the new one, as tokenizers does with
    the same reassignment (a normalizer where there was none; Whitespace for BERT's
    pre-tokenizer, which cuts "--" differently)."""
    from anytok.pipeline import normalizers as N
    from anytok.pipeline import pre_tokenizers as PT
    from anytok.pipeline.tokenizer import Tokenizer as Pipeline

    text = "Hello--World, DON'T stop... ÉCOLE x² 中文"
    cases = [("llama3", "normalizer", N.Lowercase, T.normalizers.Lowercase),
             ("minilm", "pre_tokenizer", PT.Whitespace, T.pre_tokenizers.Whitespace)]
    for name, attr, ours_new, ref_new in cases:
        cfg = json.loads(model_path(name).read_text(encoding="utf-8"))
        pipe, ref = Pipeline.from_config(cfg), hf_from_json(cfg)
        seen = []
        for step in ("before", "after"):
            if step == "after":
                setattr(pipe, attr, ours_new())
                setattr(ref, attr, ref_new())
            enc = ref.encode(text, add_special_tokens=False)
            got = pipe.encode_with_offsets(text)
            assert got == (enc.ids, [tuple(o) for o in enc.offsets]), (name, step)
            assert got[0] == pipe.encode(text), (name, step)
            seen.append(got[0])
        assert seen[0] != seen[1], name  # the reassignment changes the ids of this text


def test_encode_with_offsets_refuses_non_str():
    from hf_support import anytok_tokenizer

    with pytest.raises(TypeError, match="expects a str"):
        anytok_tokenizer("llama3").encode_with_offsets(b"bytes")


ENCODING_FIELDS = ("ids", "type_ids", "tokens", "offsets", "word_ids", "special_tokens_mask", "attention_mask",
                   "sequence_ids")


@pytest.mark.parametrize("name", list(MODELS))
def test_fast_offsets_path_fields(name, corpora):
    """anytok.hf's encode takes anytok.pipeline.offsets' list path on every fixture (asserted:
    a silent fall back to the general path would only be slow) and gives every field of the
    Encoding as tokenizers does, single and pair, with and without special tokens."""
    from hf_support import hf_tokenizer

    hf = hf_tokenizer(name)
    at = A.Tokenizer.from_file(str(model_path(name)))
    at.no_truncation()
    at.no_padding()
    texts = _with_offsets_texts(corpora, name, hf)
    path = at._offsets_path()
    assert path is not None
    for k, text in enumerate(texts):
        assert path.encode(text, True) is not None, text
        pair = texts[(k * 7 + 3) % len(texts)] if k % 2 else None
        for add in (False, True):
            ours, ref = at.encode(text, pair, add_special_tokens=add), hf.encode(text, pair, add_special_tokens=add)
            for field in ENCODING_FIELDS:
                got = [tuple(x) if isinstance(x, (list, tuple)) else x for x in getattr(ours, field)]
                assert got == [tuple(x) if isinstance(x, (list, tuple)) else x for x in getattr(ref, field)], \
                    (name, field, text, pair, add)


def _variant(base: str, edit) -> dict:
    cfg = json.loads(model_path(base).read_text(encoding="utf-8"))
    edit(cfg)
    return cfg


_BYTE_LEVEL_PREFIX = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
LIST_PATH_VARIANTS = {
    "byte-level-prefix-trim": ("llama3", lambda c: c.update(pre_tokenizer=_BYTE_LEVEL_PREFIX,
                                                             post_processor=_BYTE_LEVEL_PREFIX)),
    "nfkc": ("llama3", lambda c: c.update(normalizer={"type": "NFKC"})),
    "lowercase-replace": ("llama3", lambda c: c.update(normalizer={"type": "Sequence", "normalizers": [
        {"type": "Lowercase"}, {"type": "Replace", "pattern": {"String": "a"}, "content": "b"}]})),
    "wordpiece-whitespace": ("minilm", lambda c: c.update(pre_tokenizer={"type": "Whitespace"})),
    "bpe-whitespace": ("llama2", lambda c: c.update(pre_tokenizer={"type": "Whitespace"})),
    "bert-keep-accents": ("minilm", lambda c: c["normalizer"].update(strip_accents=False)),
    "prepend-two": ("llama2", lambda c: c.update(normalizer={"type": "Prepend", "prepend": "▁▁"})),
    "byte-fallback-digits": ("llama2", lambda c: c.update(pre_tokenizer={"type": "Digits", "individual_digits": True})),
}


@pytest.mark.parametrize("variant", list(LIST_PATH_VARIANTS))
def test_list_path_variants(variant):
    """Components the fixtures do not have, each taking a branch of pipeline/offsets.py (a
    prefix space, NFKC, length-keeping normalizers, Whitespace's spans, BERT without accent
    stripping, a two-character Prepend, byte fallback under a pre-tokenizer): anytok.hf's
    Encoding and the pipeline's encode_with_offsets as tokenizers."""
    from anytok.pipeline.tokenizer import Tokenizer as Pipeline

    cfg = _variant(*LIST_PATH_VARIANTS[variant])
    ref = hf_from_json(cfg)
    ours = A.Tokenizer.from_str(json.dumps(cfg))
    ours.no_truncation()
    ours.no_padding()
    pipe = Pipeline.from_config(cfg)
    assert ours._offsets_path() is not None
    for text in ["Hello World", " leading", "Ünïcödé ﬁ x²  ÉCOLE", "中文 测试 12345 日本語", "a\u0301e\u0323\u0302 İstanbul ΣΑΣ",
                 "", "   ", "<s>x</s> [CLS] y", "tab\tnl\n\nend  ", "x\x1c y \x1f\x1dz\u3000w\u00a0 \u2003"]:
        for add in (False, True):
            e1, e2 = ours.encode(text, add_special_tokens=add), ref.encode(text, add_special_tokens=add)
            expected = (e2.ids, e2.tokens, [tuple(o) for o in e2.offsets], e2.word_ids)
            assert (e1.ids, e1.tokens, e1.offsets, e1.word_ids) == expected, (variant, text, add)
            assert pipe.encode_with_offsets(text, add_special_tokens=add) == (expected[0], expected[2])

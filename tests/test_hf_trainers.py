"""anytok.hf.trainers against `tokenizers.trainers` 0.23.3: the same options, attributes,
`__getstate__` JSON and repr; pickling; and training through `Tokenizer.train` /
`train_from_iterator` giving the same `tokenizer.json` model and added tokens.

(tests/test_train_hf.py holds the algorithms to tokenizers' on the corpora; tokenizers' own
tests/bindings/test_trainers.py runs in tests/test_hf_suite.py.)
"""

from __future__ import annotations

import copy
import json
import pickle

import pytest

import tokenizers
from tokenizers import trainers as theirs

from anytok import hf
from anytok.hf import trainers as ours

KWARGS = {
    "BpeTrainer": [{}, {"min_frequency": 12}, {"vocab_size": 5, "special_tokens": ["a", "b", "a"]},
                   {"limit_alphabet": 3, "initial_alphabet": ["q"], "continuing_subword_prefix": "##",
                    "end_of_word_suffix": "</w>", "max_token_length": 4, "progress_format": "json"}],
    "WordPieceTrainer": [{}, {"continuing_subword_prefix": "@@", "end_of_word_suffix": "x", "limit_alphabet": 9}],
    "WordLevelTrainer": [{}, {"vocab_size": 10, "min_frequency": 2, "special_tokens": ["[UNK]"], "show_progress": False}],
    "UnigramTrainer": [{}, {"vocab_size": 100, "n_sub_iterations": 3, "shrinking_factor": 0.5, "unk_token": "<u>",
                            "max_piece_length": 4, "seed_size": 1000, "special_tokens": ["<u>", "<s>"]}],
}
CASES = [(name, kw) for name, kws in KWARGS.items() for kw in kws]


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_state_and_repr(name, kw):
    a = getattr(ours, name)(**kw)
    b = getattr(theirs, name)(**kw)
    assert a.__getstate__() == b.__getstate__()
    assert repr(a) == repr(b) and str(a) == str(b)
    back = pickle.loads(pickle.dumps(a))
    assert type(back) is type(a) and back.__getstate__() == a.__getstate__()
    assert copy.deepcopy(a).__getstate__() == a.__getstate__()
    fresh = getattr(ours, name)()
    fresh.__setstate__(b.__getstate__())
    assert fresh.__getstate__() == b.__getstate__()


def test_attributes_and_added_tokens():
    for mod in (ours, theirs):
        t = mod.UnigramTrainer(special_tokens=["1", (mod is ours and hf or tokenizers).AddedToken("2", lstrip=True)],
                               initial_alphabet=["ab", "c", ""])
        assert [(x.content, x.lstrip, x.normalized, x.special) for x in t.special_tokens] == \
            [("1", False, False, True), ("2", True, False, True)]
        assert sorted(t.initial_alphabet) == ["a", "c"]
        t.vocab_size = 77
        assert t.vocab_size == 77
    a, b = ours.BpeTrainer(), theirs.BpeTrainer()
    for t in (a, b):
        t.progress_format = "silent"
        t.limit_alphabet = 4
        t.initial_alphabet = ["z", "y"]
    assert a.progress_format == b.progress_format == "silent"
    assert a.__getstate__().replace(b'["z","y"]', b'["y","z"]') in \
        (b.__getstate__(), b.__getstate__().replace(b'["z","y"]', b'["y","z"]'))


@pytest.mark.parametrize("mod", [ours, theirs], ids=["anytok", "tokenizers"])
def test_bad_values(mod):
    with pytest.raises(ValueError, match="expected a string of length 1"):
        mod.BpeTrainer().initial_alphabet = ["ab"]
    with pytest.raises(TypeError, match="special_tokens must be a List"):
        mod.BpeTrainer(special_tokens=[1])
    with pytest.raises(OverflowError):
        mod.WordLevelTrainer(vocab_size=-1)
    with pytest.raises(TypeError):
        mod.Trainer()
    with pytest.raises(TypeError, match="'None' is not an instance of 'str'"):
        mod.WordPieceTrainer(continuing_subword_prefix=None)


LINES = [
    "The quick brown fox jumps over the lazy dog.\n",
    "Pack my box with five dozen liquor jugs!\n",
    "How vexingly quick daft zebras jump; the five boxing wizards jump quickly.\n",
] * 7 + ["[CLS] special text [SEP]\n", "é à ü — naïve café\n"]


def _pair(model_name, kind, **model_kw):
    out = []
    for mod in (hf, tokenizers):
        tok = mod.Tokenizer(getattr(mod.models, model_name)(**model_kw))
        if kind == "bert":
            tok.normalizer = mod.normalizers.BertNormalizer()
            tok.pre_tokenizer = mod.pre_tokenizers.BertPreTokenizer()
        else:
            tok.pre_tokenizer = mod.pre_tokenizers.Whitespace()
        out.append(tok)
    return out


def _doc(tok) -> dict:
    return json.loads(tok.to_str())


@pytest.mark.parametrize("trainer_kw", [{}, {"vocab_size": 60, "special_tokens": ["<unk>", "<s>"], "min_frequency": 2},
                                        {"max_token_length": 3, "vocab_size": 80, "initial_alphabet": ["x", "ß"]}])
def test_bpe_train_from_iterator(trainer_kw):
    a, b = _pair("BPE", "ws", unk_token="<unk>", dropout=None)
    a.train_from_iterator(LINES, ours.BpeTrainer(show_progress=False, **trainer_kw))
    b.train_from_iterator(LINES, theirs.BpeTrainer(show_progress=False, **trainer_kw))
    da, db = _doc(a), _doc(b)
    assert da["model"] == db["model"]
    assert da["added_tokens"] == db["added_tokens"]
    assert a.encode("the quick café").ids == b.encode("the quick café").ids


def test_train_files(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("".join(LINES), encoding="utf-8")
    a, b = _pair("WordLevel", "bert", unk_token="[UNK]")
    a.train([str(path)], ours.WordLevelTrainer(special_tokens=["[UNK]", "[PAD]"], show_progress=False))
    b.train([str(path)], theirs.WordLevelTrainer(special_tokens=["[UNK]", "[PAD]"], show_progress=False))
    assert _doc(a)["model"] == _doc(b)["model"]
    assert _doc(a)["added_tokens"] == _doc(b)["added_tokens"]


def test_wordpiece_through_tokenizer():
    """Through the tokenizer, WordPiece numbers the "##" spellings in first-seen order (tokenizers
    draws them at random): the vocabulary is train_wordpiece's on the same counts, and has
    tokenizers' size, special tokens and prefix."""
    from collections import Counter

    from anytok.train.wordpiece import train_wordpiece

    a, b = _pair("WordPiece", "bert", unk_token="[UNK]", max_input_chars_per_word=50)
    kw = {"vocab_size": 120, "special_tokens": ["[UNK]", "[CLS]", "[SEP]"]}
    a.train_from_iterator(LINES, ours.WordPieceTrainer(**kw))
    b.train_from_iterator(LINES, theirs.WordPieceTrainer(show_progress=False, **kw))
    da, db = _doc(a), _doc(b)
    counts = Counter(p for line in LINES for p, _ in b.pre_tokenizer.pre_tokenize_str(b.normalizer.normalize_str(line)))
    assert da["model"]["vocab"] == train_wordpiece(counts, **kw).vocab
    assert len(da["model"]["vocab"]) == len(db["model"]["vocab"])
    assert {k: v for k, v in da["model"].items() if k != "vocab"} == {k: v for k, v in db["model"].items() if k != "vocab"}
    assert da["added_tokens"] == db["added_tokens"]


def test_unigram_through_tokenizer():
    """The characters the model lost get the lowest score plus 0, 1e-4, 2e-4, ... in
    tokenizers' random hash order: among those, only the scores as a whole must agree."""
    a, b = _pair("Unigram", "ws")
    kw = {"vocab_size": 70, "special_tokens": ["<pad>", "<unk>"], "unk_token": "<unk>", "show_progress": False}
    a.train_from_iterator(LINES, ours.UnigramTrainer(**kw))
    b.train_from_iterator(LINES, theirs.UnigramTrainer(**kw))
    ma, mb = _doc(a)["model"], _doc(b)["model"]
    assert ma["unk_id"] == mb["unk_id"] == 1
    assert [p for p, _ in ma["vocab"]][:2] == ["<pad>", "<unk>"]
    assert sorted(p for p, _ in ma["vocab"]) == sorted(p for p, _ in mb["vocab"])
    sb = dict(map(tuple, mb["vocab"]))
    moved = []
    for p, s in ma["vocab"]:
        if abs(s - sb[p]) > 1e-9 * max(1.0, abs(s)):
            assert len(p) == 1
            moved.append(p)
    want = sorted(sb[p] for p in moved)
    got = sorted(s for p, s in ma["vocab"] if p in moved)
    assert all(abs(x - y) <= 1e-9 * max(1.0, abs(x)) for x, y in zip(got, want))
    assert _doc(a)["added_tokens"] == _doc(b)["added_tokens"]


def test_wrong_model():
    tok = hf.Tokenizer(hf.models.BPE())
    with pytest.raises(Exception, match="UnigramTrainer can only train a Unigram"):
        tok.train([], ours.UnigramTrainer(show_progress=False))


@pytest.mark.parametrize("setup", ["ws", "bert", "meta-first", "bytelevel", "sequence", "none"])
def test_fast_word_cutting_equals_the_tokenizer_pipeline(setup):
    """Trainers cut words with anytok.pipeline's string-only components when they can: the same
    pieces as the tokenizer's own (offset-tracking) pipeline, on slices of the corpora."""
    from conftest import CORPORA, CORPORA_DIR

    from anytok.hf.trainers import _fast_splitter

    M = hf
    norm, pre = {
        "ws": (None, M.pre_tokenizers.Whitespace()),
        "bert": (M.normalizers.BertNormalizer(), M.pre_tokenizers.BertPreTokenizer()),
        "meta-first": (M.normalizers.NFKC(), M.pre_tokenizers.Metaspace(prepend_scheme="first")),
        "bytelevel": (None, M.pre_tokenizers.ByteLevel()),
        "sequence": (M.normalizers.Sequence([M.normalizers.NFD(), M.normalizers.StripAccents(), M.normalizers.Lowercase()]),
                     M.pre_tokenizers.Sequence([M.pre_tokenizers.Punctuation(), M.pre_tokenizers.Digits(individual_digits=True),
                                                M.pre_tokenizers.WhitespaceSplit()])),
        "none": (None, None),
    }[setup]
    tok = M.Tokenizer(M.models.BPE())
    if norm is not None:
        tok.normalizer = norm
    if pre is not None:
        tok.pre_tokenizer = pre
    fast = _fast_splitter(tok)
    assert fast is not None

    def exact(seq):
        pts = tok._extract_and_normalize(seq)
        if tok.pre_tokenizer is not None:
            tok.pre_tokenizer._pre_tokenize(pts)
        return [s for s, *_ in pts.get_splits()]

    for name in CORPORA.values():
        lines = (CORPORA_DIR / name).read_text(encoding="utf-8").splitlines(True)[1000:1300]
        for line in lines + ["", " ", "\n"]:
            assert fast(line) == exact(line), line
        if getattr(fast, "joinable", False):
            assert fast("\n".join(lines)) == [p for line in lines for p in exact(line)]
    tok.add_special_tokens(["[X]"])
    assert _fast_splitter(tok) is None  # added tokens: the tokenizer's own pipeline cuts them out

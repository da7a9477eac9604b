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


# -- ParityBpeTrainer ------------------------------------------------------------------------------
PARITY_KWARGS = [{}, {"num_merges": 123, "variant": "window", "window_size": 42, "alpha": 1.5},
                 {"ratio": [1, 2.5], "special_tokens": ["<a>", "<b>"], "initial_alphabet": ["y", "z", "y"],
                  "min_frequency": 3, "global_merges": 7, "total_symbols": True, "show_progress": False,
                  "limit_alphabet": 40, "continuing_subword_prefix": "##", "end_of_word_suffix": "</w>",
                  "max_token_length": 9, "alpha": float("nan")}]
EN = ["hello world", "the quick brown fox jumps over the lazy dog", "hello there my friend how are you",
      "the cat sat on the mat and the dog barked", "hello world hello world"]
ES = ["hola mundo", "el rápido zorro marrón salta sobre el perro perezoso", "hola amigo cómo estás",
      "el gato se sentó sobre el tapete y el perro ladró", "hola mundo hola mundo"]


@pytest.mark.parametrize("kw", PARITY_KWARGS)
def test_parity_state_repr_pickle(kw):
    a = ours.ParityBpeTrainer(**kw)
    b = theirs.ParityBpeTrainer(**kw)
    sa, sb = a.__getstate__(), b.__getstate__()
    assert sa.keys() == sb.keys() and repr(a) == repr(b) and str(a) == str(b)
    for k in sa:
        assert sa[k] == sb[k] or sa[k] != sa[k] and sb[k] != sb[k], k  # NaN alpha
    for obj in (pickle.loads(pickle.dumps(a)), copy.deepcopy(a)):
        assert isinstance(obj, ours.ParityBpeTrainer) and repr(obj) == repr(a)
    for name in ("num_merges", "variant", "min_frequency", "global_merges", "window_size", "total_symbols",
                 "show_progress", "limit_alphabet", "initial_alphabet", "continuing_subword_prefix",
                 "end_of_word_suffix", "max_token_length"):
        assert getattr(a, name) == getattr(b, name), name
    assert [t.content for t in a.special_tokens] == [t.content for t in b.special_tokens]


def test_parity_setters_and_errors():
    a, b = ours.ParityBpeTrainer(), theirs.ParityBpeTrainer()
    for name, value in [("num_merges", 5), ("min_frequency", 2), ("global_merges", 3), ("window_size", 4),
                        ("alpha", 1), ("total_symbols", True), ("show_progress", False), ("limit_alphabet", 9),
                        ("initial_alphabet", ["a", "b", "a"]), ("continuing_subword_prefix", "##"),
                        ("end_of_word_suffix", None), ("max_token_length", 3), ("special_tokens", ["<s>"])]:
        setattr(a, name, value)
        setattr(b, name, value)
    assert a.__getstate__() == b.__getstate__() and repr(a) == repr(b)
    for obj in (a, b):
        with pytest.raises(AttributeError):
            obj.variant = "window"
        with pytest.raises(AttributeError):
            obj.ratio = [1.0]
    bad = [({"variant": "foo"}, ValueError), ({"num_merges": -1}, OverflowError), ({"alpha": "x"}, TypeError),
           ({"ratio": 1.0}, TypeError), ({"ratio": "ab"}, TypeError), ({"initial_alphabet": ["ab"]}, ValueError),
           ({"total_symbols": 1}, TypeError), ({"special_tokens": [1]}, TypeError),
           ({"special_tokens": ("a",)}, TypeError), ({"foo": 1}, TypeError)]
    for kw, err in bad:
        with pytest.raises(err) as want:
            theirs.ParityBpeTrainer(**kw)
        with pytest.raises(err) as got:
            ours.ParityBpeTrainer(**kw)
        if "foo" not in kw:
            assert str(got.value) == str(want.value)


def _parity_tokenizers(mod, normalizer: bool, pre: bool):
    tok = mod.Tokenizer(mod.models.WordPiece(unk_token="[UNK]"))  # replaced by the new BPE
    if normalizer:
        tok.normalizer = mod.normalizers.Sequence([mod.normalizers.NFD(), mod.normalizers.Lowercase(),
                                                   mod.normalizers.StripAccents()])
    if pre:
        tok.pre_tokenizer = mod.pre_tokenizers.Whitespace()
    return tok


@pytest.mark.parametrize("kw,train_kw", [
    ({"special_tokens": ["[X]", "<s>"]}, {"dev_iterators": [ES, EN]}),
    ({"ratio": [1.0, 3.0]}, {}),
    ({"ratio": [1.0, 3.0]}, {"ratio": [2.0, 1.0]}),
    ({"ratio": [1.0, 3.0]}, {"dev_iterators": [EN, ES]}),  # the dev data win
    ({"num_merges": 30, "variant": "window", "window_size": 5}, {}),
])
@pytest.mark.parametrize("normalizer,pre", [(False, True), (True, False), (True, True)])
def test_parity_train_from_iterator(kw, train_kw, normalizer, pre):
    """The whole tokenizer.json after training, both ways (a list of lists as one language's
    texts, an iterator as another's)."""
    out = []
    for mod in (tokenizers, hf):
        tok = _parity_tokenizers(mod, normalizer, pre)
        trainer = (theirs if mod is tokenizers else ours).ParityBpeTrainer(show_progress=False, **kw)
        trainer.train_from_iterator(tok, train_iterators=[[EN[:2], EN[2:]], iter(ES)], **train_kw)
        out.append(json.loads(tok.to_str()))
    assert out[0] == out[1]


@pytest.mark.parametrize("args,err", [
    ({"train_iterators": []}, ValueError),
    ({"train_iterators": [EN], "dev_iterators": []}, ValueError),
    ({"train_iterators": [EN], "ratio": [1, 2]}, RuntimeError),
    ({"train_iterators": [EN, ES], "ratio": [0.0, 1]}, RuntimeError),
    ({"train_iterators": [[1]]}, TypeError),
    ({"train_iterators": [[[1]]]}, TypeError),
    ({"train_iterators": "abc"}, TypeError),
])
def test_parity_train_errors(args, err):
    msgs = []
    for mod, tr in ((tokenizers, theirs), (hf, ours)):
        tok = mod.Tokenizer(mod.models.BPE())
        with pytest.raises(err) as e:
            tr.ParityBpeTrainer(num_merges=5, show_progress=False).train_from_iterator(tok, **args)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_parity_is_not_a_trainer(tmp_path):
    """It trains through its own method only: `Tokenizer.train` / `train_from_iterator` refuse it."""
    path = tmp_path / "a.txt"
    path.write_text("a b\n", encoding="utf-8")
    msgs = []
    for mod, tr in ((tokenizers, theirs), (hf, ours)):
        assert not isinstance(tr.ParityBpeTrainer(), tr.Trainer)
        tok = mod.Tokenizer(mod.models.BPE())
        for call in (lambda: tok.train_from_iterator(["a b"], trainer=tr.ParityBpeTrainer()),
                     lambda: tok.train([str(path)], trainer=tr.ParityBpeTrainer())):
            with pytest.raises(TypeError) as e:
                call()
            msgs.append(str(e.value))
    assert msgs[:2] == msgs[2:]

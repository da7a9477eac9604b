"""anytok.train against its references: `tokenizers` 0.23.3's BpeTrainer (style "hf") and
`rustbpe` 0.1.0 (style "tiktoken") -- the same merges, the same vocabulary, the same ids.

Corpora are sliced to keep the file fast; tests/test_train_cli.py checks the command line.
"""

from __future__ import annotations

import base64
import json
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import anytok
from anytok.train import _educational, resolve_pattern
from anytok.train.merge import learn_merges

O200K = resolve_pattern("o200k_base")
CL100K = resolve_pattern("cl100k_base")
GPT2 = anytok.get_encoding("gpt2")._pat_str


# --- the references --------------------------------------------------------------------------


def hf_tokenizer(pattern, vocab_size, *, texts=None, files=None, specials=(), min_frequency=0, max_token_length=None):
    """The `tokenizers` setup that style "hf" reproduces, trained."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    kw = {}
    if max_token_length is not None:
        kw["max_token_length"] = max_token_length
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=list(specials),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False, **kw)
    if files is not None:
        tok.train([str(f) for f in files], trainer)
    else:
        tok.train_from_iterator(texts, trainer)
    return tok


def rustbpe_tokens(texts, vocab_size, pattern):
    """rustbpe's trained tokens, bytes by rank."""
    import rustbpe

    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(texts, vocab_size, pattern=pattern)
    ranks = sorted(tok.get_mergeable_ranks(), key=lambda kv: kv[1])
    assert [r for _, r in ranks] == list(range(len(ranks)))
    return [bytes(b) for b, _ in ranks], tok


def check_hf(texts=None, *, vocab_size, pattern=O200K, specials=(), min_frequency=0, max_token_length=None, files=None):
    ref = hf_tokenizer(pattern, vocab_size, texts=texts, files=files, specials=specials, min_frequency=min_frequency,
                       max_token_length=max_token_length)
    mine = anytok.train(files, texts=texts, vocab_size=vocab_size, style="hf", pattern=pattern, special_tokens=specials,
                        min_frequency=min_frequency, max_token_length=max_token_length)
    want = json.loads(ref.to_str())
    got = mine.tokenizer_json()
    assert got["model"]["vocab"] == want["model"]["vocab"]
    assert got["model"]["merges"] == want["model"]["merges"]
    assert got == want
    return ref, mine


def check_tiktoken(texts, *, vocab_size, pattern=O200K):
    want, ref = rustbpe_tokens(texts, vocab_size, pattern)
    mine = anytok.train(texts=texts, vocab_size=vocab_size, style="tiktoken", pattern=pattern)
    assert mine.token_bytes() == want
    return ref, mine


@pytest.fixture(scope="module")
def slices(corpora):
    """About 60 KB of each corpus, cut at a line end."""
    out = {}
    for key, text in corpora.items():
        cut = text.find("\n", 60_000) + 1
        out[key] = text[:cut]
    return out


@pytest.fixture(scope="module")
def held_out(corpora):
    return {key: text[-8_000:] for key, text in corpora.items()}


# --- the corpora ---------------------------------------------------------------------------


@pytest.mark.parametrize("vocab_size", [300, 1200, 4000])
def test_hf_style_equals_bpetrainer_on_the_corpora(slices, vocab_size):
    check_hf(list(slices.values()), vocab_size=vocab_size, specials=["<|endoftext|>", "<pad>"])


@pytest.mark.parametrize("vocab_size", [256, 300, 1200, 4000])
def test_tiktoken_style_equals_rustbpe_on_the_corpora(slices, vocab_size):
    check_tiktoken(list(slices.values()), vocab_size=vocab_size)


def test_hf_style_files_are_read_line_by_line(slices, tmp_path):
    files = []
    for key, text in slices.items():
        path = tmp_path / f"{key}.txt"
        # CRLF line ends, blank lines and no final newline, as files have them.
        path.write_bytes((text[:20_000].replace("\n", "\r\n", 50) + "\n\n\n  tail").encode("utf-8"))
        files.append(path)
    check_hf(files=files, vocab_size=1500, specials=["<s>"])


def test_tiktoken_style_files_are_read_whole(slices, tmp_path):
    files = []
    for key, text in slices.items():
        path = tmp_path / f"{key}.txt"
        path.write_text(text[:20_000] + "\n\n\n  tail", encoding="utf-8")
        files.append(path)
    want, _ = rustbpe_tokens([p.read_text(encoding="utf-8") for p in files], 1000, O200K)
    assert anytok.train(files, vocab_size=1000, style="tiktoken").token_bytes() == want


@pytest.mark.parametrize("pattern", [O200K, CL100K, GPT2])
@pytest.mark.parametrize("block", [1, 7, 64, 4096])
def test_whole_files_stream_in_blocks_as_if_read_whole(slices, tmp_path, monkeypatch, pattern, block):
    # A file of the tiktoken style is one text; with a bundled pattern it is counted in blocks
    # (cut anywhere, even inside a character), carrying the last pieces: the counts must be
    # those of the whole text, whatever the block size -- also for pieces longer than a block.
    from anytok.pretokenize import Splitter
    from anytok.train import words

    monkeypatch.setattr(words, "BLOCK", block)
    text = "".join(t[:3000] for t in slices.values())
    text += "\r\n\n   \n" + "a" * 500 + " " * 300 + "x\n" + "\u4e2d" * 400 + "  \t\n\n " + "9" * 50 + "'s'LL"
    path = tmp_path / "one.txt"
    path.write_bytes(text.encode("utf-8"))
    assert words.streamable(pattern)
    for dialect in ("fancy", "onig"):  # (rustbpe's reading, HF's)
        splitter = Splitter(pattern, dialect)
        whole = Counter(splitter.split(text))
        streamed = words.PieceCounter(splitter, gaps=False)
        streamed.add_blocks(words.file_blocks(path))
        assert streamed.counts == whole
        assert streamed.bytes_seen == len(text.encode("utf-8"))
        # A long text given whole is counted in blocks too, with progress while it is counted.
        reports = []
        in_memory = words.PieceCounter(splitter, gaps=True, progress=reports.append)
        in_memory._report = lambda final: reports.append(in_memory.bytes_seen)
        in_memory.add_text(text)
        assert in_memory.counts == whole
        if block < 4096:
            assert len(reports) > 3 and reports == sorted(reports) and reports[-1] == len(text)
    if block == 64 and pattern == O200K:
        want, _ = rustbpe_tokens([text], 700, pattern)
        assert anytok.train([path], vocab_size=700, style="tiktoken", pattern=pattern).token_bytes() == want


def test_whole_file_undecodable_bytes_name_the_file_and_offset(tmp_path, monkeypatch):
    from anytok.train import words

    monkeypatch.setattr(words, "BLOCK", 5)
    path = tmp_path / "bad.txt"
    path.write_bytes("héllo wörld".encode("utf-8") + b"\xff tail")
    with pytest.raises(UnicodeDecodeError, match=r"bad\.txt.* at byte 13"):
        anytok.train([path], vocab_size=300, style="tiktoken")
    with pytest.raises(UnicodeDecodeError, match=r"bad\.txt.* at byte 13"):
        anytok.train([path], vocab_size=300, style="hf")
    assert not words.streamable(r"\p{L}+(?=\d)")


@pytest.mark.parametrize("pattern", [CL100K, GPT2, r"\s+|\p{L}+|\p{N}|[^\s\p{L}\p{N}]+"])
def test_other_patterns(slices, pattern):
    texts = [t[:15_000] for t in slices.values()] + ["12345678 9999999 x1234y\n\n\n  \n"]
    check_hf(texts, vocab_size=800, pattern=pattern)
    check_tiktoken(texts, vocab_size=800, pattern=pattern)


def test_hf_style_pattern_with_gaps_keeps_the_text_between_matches(slices):
    # HF's Split "isolated" keeps unmatched text as pieces (rustbpe drops it).
    check_hf([t[:10_000] for t in slices.values()], vocab_size=700, pattern=r"\p{L}+")


@pytest.mark.parametrize("min_frequency", [2, 7, 40])
def test_min_frequency(slices, min_frequency):
    texts = [t[:6_000] for t in slices.values()]
    check_hf(texts, vocab_size=5000, min_frequency=min_frequency)


@pytest.mark.parametrize("max_token_length", [1, 2, 3, 5, 9])
def test_max_token_length(slices, max_token_length):
    texts = [t[:8_000] for t in slices.values()]
    _, mine = check_hf(texts, vocab_size=1500, max_token_length=max_token_length)
    longest = max(len(t) for t in mine.vocab() if t not in ("<|endoftext|>",))
    assert longest <= max(2, max_token_length - 1)


# --- tiny corpora: ties everywhere ----------------------------------------------------------

ALL_BYTES_TEXT = "".join(map(chr, range(256))) + "é€😀"
SPECIALS = ["<|endoftext|>", "<s>", "a", "ab"]

tiny_texts = st.lists(
    st.one_of(
        st.text(alphabet="ab c\n", max_size=30),
        st.text(alphabet="aabbc  '\n1é", max_size=12).map(lambda s: s * 3),
        st.sampled_from(["<|endoftext|>", "<s>", ALL_BYTES_TEXT, "aaaa aaaa", "abab", "€€€", "😀😀 😀"]),
        st.text(max_size=8),
    ),
    min_size=1,
    max_size=12,
)


def _no_surrogates(texts):
    return [t for t in texts if not any(0xD800 <= ord(c) < 0xE000 for c in t)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=tiny_texts, extra=st.integers(0, 60), specials=st.lists(st.sampled_from(SPECIALS), max_size=3),
       min_frequency=st.integers(0, 3), max_token_length=st.one_of(st.none(), st.integers(1, 6)))
def test_hf_style_tiny_corpora(texts, extra, specials, min_frequency, max_token_length):
    texts = _no_surrogates(texts)
    n_special = len(dict.fromkeys(specials))
    check_hf(texts, vocab_size=256 + n_special + extra, specials=specials, min_frequency=min_frequency,
             max_token_length=max_token_length)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=tiny_texts, extra=st.integers(0, 60))
def test_tiktoken_style_tiny_corpora(texts, extra):
    check_tiktoken(_no_surrogates(texts), vocab_size=256 + extra)


@settings(max_examples=100, deadline=None)
@given(words=st.lists(st.tuples(st.text(alphabet="abcd", min_size=1, max_size=10), st.integers(1, 5)), max_size=15),
       n=st.integers(0, 30), hf=st.booleans())
def test_fast_merge_loop_equals_the_educational_one(words, n, hf):
    words = list(Counter(dict(words)).items())
    ids = [[ord(c) for c in w] for w, _ in words]
    counts = [c for _, c in words]
    want = _educational.learn(ids, counts, n_merges=n, first_id=256, hf=hf)
    nxt = [256]

    def new_token(a, b):
        nxt[0] += 1
        return nxt[0] - 1

    got = learn_merges([w for w, _ in words], counts, hf=hf, new_token=new_token, done=lambda: nxt[0] - 256 >= n)
    assert got == want


# --- other inputs ----------------------------------------------------------------------------


def test_word_counts_give_what_the_texts_give(slices):
    texts = [t[:10_000] for t in slices.values()]
    from anytok.pretokenize import Splitter

    counts = Counter()
    for t in texts:
        counts.update(Splitter(O200K).split(t))
    a = anytok.train(texts=texts, vocab_size=900, style="tiktoken")
    b = anytok.train(word_counts=counts, vocab_size=900, style="tiktoken")
    c = anytok.train(word_counts=list(counts.items()), vocab_size=900, style="tiktoken")
    assert a.merges == b.merges == c.merges
    half = Counter(dict(list(counts.items())[::2]))
    d = anytok.train(texts=[], word_counts=counts - half, vocab_size=900, style="tiktoken")
    e = anytok.train(word_counts=list((counts - half).items()) + list(half.items()), vocab_size=900, style="tiktoken")
    assert e.merges == a.merges and d.merges != a.merges


def test_progress_reports_counting_and_merging(slices):
    seen = []
    anytok.train(texts=list(slices.values()), vocab_size=600, style="hf", progress=seen.append)
    phases = [s["phase"] for s in seen]
    assert phases[0] == "count" and phases[-1] == "merge"
    assert seen[-1]["done"] == seen[-1]["total"] == 600 - 256
    count_final = [s for s in seen if s["phase"] == "count"][-1]
    assert count_final["done"] and count_final["mb"] > 0.2 and count_final["distinct"] > 1000


def test_bad_arguments():
    with pytest.raises(ValueError):
        anytok.train(texts=["x"], vocab_size=100, style="tiktoken")
    with pytest.raises(ValueError):
        anytok.train(texts=["x"], vocab_size=300, style="sentencepiece")
    with pytest.raises(ValueError):
        anytok.train(texts=["x"], vocab_size=300, style="tiktoken", max_token_length=4)
    with pytest.raises(TypeError):
        anytok.train(texts="not a list", vocab_size=300)
    tok = anytok.train(texts=["hello"], vocab_size=300, style="hf")
    with pytest.raises(ValueError):
        tok.to_encoding()
    with pytest.raises(ValueError):
        tok.save("x.tiktoken")


# --- outputs -----------------------------------------------------------------------------------


def test_hf_outputs_round_trip_and_encode_as_the_reference(slices, held_out, tmp_path):
    from tokenizers import Tokenizer

    texts = list(slices.values())
    ref, mine = check_hf(texts, vocab_size=3000, specials=["<|endoftext|>"])
    mine.save(tmp_path / "tokenizer.json")
    mine.save(tmp_path / "t.atok")
    loaded = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    ours = anytok.load(str(tmp_path / "tokenizer.json"))
    from_atok = anytok.load(str(tmp_path / "t.atok"))
    in_memory = mine.to_tokenizer()
    for text in list(held_out.values()) + ["hello<|endoftext|>world  \n\n 12345"]:
        want = ref.encode(text).ids
        assert loaded.encode(text).ids == want
        assert ours.encode(text) == want
        assert from_atok.encode(text) == want
        assert in_memory.encode(text) == want
        assert ref.decode(want, skip_special_tokens=False) == ours.decode(want) == text


def test_tiktoken_outputs_round_trip_and_encode_as_the_reference(slices, held_out, tmp_path, monkeypatch):
    import tiktoken
    import tiktoken.load

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))  # it caches what it loads

    texts = list(slices.values())
    ref, mine = check_tiktoken(texts, vocab_size=3000)
    mine = anytok.train(texts=texts, vocab_size=3000, style="tiktoken", special_tokens=["<|endoftext|>"])
    mine.save(tmp_path / "t.tiktoken")
    mine.save(tmp_path / "t.atok")
    lines = (tmp_path / "t.tiktoken").read_text().splitlines()
    assert len(lines) == 3000
    assert all(base64.b64decode(line.split()[0]) == tok for line, tok in zip(lines, mine.token_bytes()))
    ranks = tiktoken.load.load_tiktoken_bpe(str(tmp_path / "t.tiktoken"))
    tk = tiktoken.Encoding("trained", pat_str=O200K, mergeable_ranks=ranks, special_tokens={"<|endoftext|>": 3000})
    enc = mine.to_encoding()
    assert enc.n_vocab == 3001 and enc.eot_token == 3000
    from_atok = anytok.load(str(tmp_path / "t.atok"))
    from_file = anytok.load_encoding(str(tmp_path / "t.tiktoken"), pat_str=O200K)
    for text in held_out.values():
        want = ref.encode(text)
        assert tk.encode(text) == want
        assert enc.encode(text) == want
        assert from_atok.encode(text) == want
        assert from_file.encode(text) == want
        assert enc.decode(want) == text
    assert enc.encode("a<|endoftext|>", allowed_special="all")[-1] == 3000

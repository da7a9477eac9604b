"""Training every kind in the browser: `AnyTok.train({ kind, style, ... })` in Chromium gives the
bytes that the same training gives natively, and the demo's Train view offers it.

For one small case of each kind (a few KB of Emma, split into lines as spm_train and tokenizers'
`train(files)` read a file): the `.model` bytes of a SentencePiece Unigram and BPE model equal
native `anytok.train(style="sentencepiece")`'s and `sentencepiece`'s own (the pinned reference,
run in-process with `sentence_iterator`); the tokenizer.json of tokenizers' WordPiece, WordLevel
and Unigram trainers equals native `anytok.hf`'s with the same pipeline (and tokenizers' own for
WordLevel; tokenizers itself is not deterministic for WordPiece and Unigram: its hash maps order
ties; tests/test_train_hf.py holds anytok.hf to it).  Then: progress advances, cancel rejects with AbortError and leaves the
next training working, and the Train view trains, tries and downloads a .model and a
tokenizer.json.  Debian's Chromium through Playwright, every request outside 127.0.0.1 blocked
(browser_support.py).
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from browser_support import new_context, wait_status
from browser_support import browser, demo_url  # noqa: F401 (module fixtures: a Chromium, the demo server)

pytestmark = pytest.mark.xdist_group("browser")

SAMPLE_CHARS = 6000
PROBE = "Emma Woodhouse, handsome, clever, and rich, 1816: a comfortable home."
# A try of the text now in the box has been shown (not the try of the text before it, which
# a finished training starts and which may end after the test reads `data-tried`).
TRIED = """(before) => document.querySelector('#train-view').dataset.tried !== before
    && window.anytokTrainDemo.triedText === document.querySelector('#train-try').value"""


@pytest.fixture(scope="module")
def shim(browser, demo_url):
    ctx, guard = new_context(browser)
    page = ctx.new_page()
    page.goto(demo_url + "anytok-assets.json")
    page.evaluate("async () => { window.AnyTok = (await import('/anytok.js')).AnyTok; }")
    yield page
    ctx.close()
    guard.check()


@pytest.fixture(scope="module")
def lines(corpora) -> list[str]:
    # As std::getline reads a file: split at "\n", no final empty line.
    out = corpora["en"][:SAMPLE_CHARS].split("\n")
    return out[:-1] if out[-1] == "" else out


JS_TRAIN = """async ([texts, options, probe]) => {
    const progress = [];
    const tok = await window.AnyTok.train(texts, options, { onProgress: (p) => progress.push(p) });
    const t = tok.training;
    return {
        progress, kind: t.kind, style: t.style, nVocab: t.nVocab,
        model: t.files.model ? Array.from(t.files.model) : null, tokenizerJson: t.files.tokenizerJson ?? null,
        ids: await tok.encode(probe),
    };
}"""


def sentencepiece_native(lines, kind, options):
    import anytok
    import sentencepiece as spm

    ours = anytok.train(texts=lines, style="sentencepiece", kind=kind, **options).data
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=out, model_type=kind,
                                   minloglevel=2, **options)
    assert ours == out.getvalue()  # (tests/test_train_sentencepiece.py holds this widely)
    return ours


def hf_native(lines, kind, vocab_size):
    """The pipeline docs/training-tokenizers.md gives for the page's kinds, natively."""
    from anytok.hf import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    if kind == "unigram":
        tok = Tokenizer(models.Unigram())
        tok.normalizer = normalizers.NFKC()
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        tok.decoder = decoders.Metaspace()
        trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=["<unk>"], unk_token="<unk>",
                                          show_progress=False)
    elif kind == "wordpiece":
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece(prefix="##")
        trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
                                            show_progress=False)
    elif kind == "wordlevel":
        tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
        tok.normalizer = normalizers.Lowercase()
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        trainer = trainers.WordLevelTrainer(vocab_size=vocab_size, special_tokens=["[UNK]"], show_progress=False)
    else:
        raise ValueError(kind)
    tok.train_from_iterator(lines, trainer)
    if kind == "wordpiece":
        cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    return tok


SP_CASES = {
    "unigram": {"vocab_size": 700, "character_coverage": 1.0, "byte_fallback": True, "split_digits": True,
                "normalization_rule_name": "identity"},
    # (sentencepiece's default rule, nmt_nfkc: its table built in the worker)
    "bpe": {"vocab_size": 300, "split_digits": True},
}


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.title() for w in rest)


def check_progress(progress, total_chars):
    # Reading advances from nothing to every character; the training's steps come after it,
    # the last one finished.
    read = [p for p in progress if p["phase"] == "read"]
    assert read[0]["chars"] == 0 and read[-1]["chars"] == total_chars and read[-1]["finished"]
    assert all(p["total"] == total_chars for p in read)
    assert [p["chars"] for p in read] == sorted(p["chars"] for p in read)
    steps = progress[progress.index(read[-1]) + 1:]
    assert steps and all(p["phase"] == "train" for p in steps) and steps[-1]["finished"]


@pytest.mark.parametrize("kind", sorted(SP_CASES))
def test_sentencepiece_model_in_the_page_equals_native(shim, lines, kind):
    import anytok

    options = SP_CASES[kind]
    native = sentencepiece_native(lines, kind, options)
    js_options = {"kind": kind, "style": "sentencepiece", **{camel(k): v for k, v in options.items()}}
    got = shim.evaluate(JS_TRAIN, [lines, js_options, PROBE])
    assert bytes(got["model"]) == native
    assert got["kind"] == kind and got["style"] == "sentencepiece" and got["tokenizerJson"] is None
    tok = anytok.load(native)
    assert got["nVocab"] == tok.n_vocab == options["vocab_size"]
    assert got["ids"] == tok.encode(PROBE)
    check_progress(got["progress"], sum(map(len, lines)))
    # The trainer's own reports: pieces of a target.
    assert [p["step"] for p in got["progress"] if p["phase"] == "train"][:3] == ["normalize", "alphabet", "pieces"]
    assert any(p.get("target") for p in got["progress"])


@pytest.mark.parametrize("kind,vocab_size", [("wordpiece", 400), ("wordlevel", 300), ("unigram", 300)])
def test_tokenizers_trainer_in_the_page_equals_native(shim, lines, kind, vocab_size):
    native = hf_native(lines, kind, vocab_size)
    got = shim.evaluate(JS_TRAIN, [lines, {"kind": kind, "style": "hf", "vocabSize": vocab_size}, PROBE])
    assert got["tokenizerJson"] == native.to_str()
    if kind == "wordlevel":  # (deterministic in tokenizers too: the same file)
        import tokenizers

        ref = tokenizers.Tokenizer.from_str(native.to_str())
        ref.train_from_iterator(lines, tokenizers.trainers.WordLevelTrainer(
            vocab_size=vocab_size, special_tokens=["[UNK]"], show_progress=False))
        assert ref.to_str() == got["tokenizerJson"]
        assert got["ids"] == ref.encode(PROBE).ids and ref.token_to_id("[UNK]") in got["ids"]
    assert got["model"] is None and got["kind"] == kind and got["style"] == "hf"
    # (the page encodes without the post-processor's [CLS] and [SEP], as anytok's encode does)
    assert got["ids"] == native.encode(PROBE, add_special_tokens=False).ids
    check_progress(got["progress"], sum(map(len, lines)))


def test_bad_kind_options_reject_with_clear_errors(shim, lines):
    got = shim.evaluate(
        """async ([texts]) => {
            const out = [];
            for (const options of [
                { kind: "wordpiece", style: "sentencepiece", vocabSize: 100 },
                { kind: "sentencepiece", vocabSize: 100 },
                { kind: "unigram", vocabSize: 300, characterCoverage: 1.0, splitWords: true },
                { kind: "wordpiece", vocabSize: 300, byteFallback: true },
            ]) {
                try { await window.AnyTok.train(texts, options); out.push(null); }
                catch (err) { out.push(`${err.name}: ${err.message}`); }
            }
            return out;
        }""",
        [lines[:20]],
    )
    assert "style" in got[0] and "TypeError" in got[0]
    assert "kind must be one of" in got[1]
    assert "splitWords" in got[2]
    assert "byteFallback" in got[3]


def test_cancel_stops_a_sentencepiece_training(shim, corpora, lines):
    got = shim.evaluate(
        """async ([big, small]) => {
            const controller = new AbortController();
            const seen = [];
            let error = null;
            try {
                await window.AnyTok.train(big, { kind: "unigram", vocabSize: 8000, normalizationRuleName: "identity" }, {
                    signal: controller.signal,
                    onProgress: (p) => { seen.push(p.phase); if (p.phase === "train") controller.abort(); },
                });
            } catch (err) { error = err.name; }
            // The next training works.
            const again = await window.AnyTok.train(small, { kind: "bpe", style: "sentencepiece", vocabSize: 300,
                                                            splitDigits: true, normalizationRuleName: "identity" });
            return { error, seen, model: Array.from(again.training.files.model) };
        }""",
        [corpora["en"][:300_000].split("\n"), lines],
    )
    assert got["error"] == "AbortError", got
    assert got["seen"][0] == "read" and got["seen"][-1] == "train"
    identity = {**SP_CASES["bpe"], "normalization_rule_name": "identity"}  # (no table to build in the new worker)
    assert bytes(got["model"]) == sentencepiece_native(lines, "bpe", identity)


def test_demo_train_view_trains_each_kind_and_downloads(browser, demo_url, corpora, lines):
    ctx, guard = new_context(browser, viewport={"width": 1360, "height": 1000})
    demo = ctx.new_page()
    errors = []
    demo.on("pageerror", lambda e: errors.append(str(e)))
    demo.goto(demo_url + "?view=train")
    wait_status(demo)
    text = "\n".join(lines) + "\n"
    demo.set_input_files("#train-files", [{"name": "emma.txt", "mimeType": "text/plain", "buffer": text.encode()}])
    # A SentencePiece Unigram model: the .model download is sentencepiece's file.
    demo.select_option("#train-kind", "sp-unigram")
    demo.fill("#train-vocab", "700")
    demo.fill("#train-coverage", "1")
    demo.check("#train-byte-fallback")
    demo.check("#train-split-digits")
    demo.select_option("#train-normalization", "identity")
    demo.click("#train-start")
    demo.wait_for_selector("#train-view[data-state=done]", state="attached")
    phases = demo.evaluate("window.anytokTrainDemo.progress.map((p) => p.phase)")
    assert phases[0] == "read" and phases[-1] == "train"
    assert demo.is_hidden("#train-download-json") and demo.is_hidden("#train-download-atok")
    with demo.expect_download() as d:
        demo.click("#train-download-model")
    assert d.value.suggested_filename == "unigram-700.model"
    native = sentencepiece_native(lines, "unigram", SP_CASES["unigram"])
    assert Path(d.value.path()).read_bytes() == native
    # Try it: the ids shown are the model's.
    import anytok

    tried = demo.get_attribute("#train-view", "data-tried")
    demo.fill("#train-try", PROBE)
    demo.wait_for_function(TRIED, arg=tried)
    shown = demo.eval_on_selector_all("#train-tokens .t", "els => els.flatMap((e) => e.dataset.ids.split(' ').map(Number))")
    assert shown == anytok.load(native).encode(PROBE)
    # WordPiece: the tokenizer.json download.
    demo.select_option("#train-kind", "wordpiece")
    assert demo.is_hidden("#train-coverage")
    demo.fill("#train-vocab", "400")
    demo.fill("#train-specials", "[PAD] [UNK] [CLS] [SEP] [MASK]")
    demo.click("#train-start")
    demo.wait_for_selector("#train-view[data-state=done]", state="attached")
    assert demo.is_hidden("#train-download-model")
    with demo.expect_download() as d:
        demo.click("#train-download-json")
    assert d.value.suggested_filename == "tokenizer.json"
    assert Path(d.value.path()).read_text(encoding="utf-8") == hf_native(lines, "wordpiece", 400).to_str()
    # WordLevel: the tokenizer.json download, then try it (anytok.load reads a WordLevel).
    demo.select_option("#train-kind", "wordlevel")
    assert demo.is_visible("#train-lowercase") and demo.is_hidden("#train-coverage")
    demo.fill("#train-vocab", "300")
    demo.fill("#train-specials", "[UNK]")
    demo.click("#train-start")
    demo.wait_for_selector("#train-view[data-state=done]", state="attached")
    with demo.expect_download() as d:
        demo.click("#train-download-json")
    words_json = Path(d.value.path()).read_text(encoding="utf-8")
    assert words_json == hf_native(lines, "wordlevel", 300).to_str()
    tried = demo.get_attribute("#train-view", "data-tried")
    demo.fill("#train-try", PROBE + " zzzunknown")
    demo.wait_for_function(TRIED, arg=tried)
    shown = demo.eval_on_selector_all("#train-tokens .t", "els => els.flatMap((e) => e.dataset.ids.split(' ').map(Number))")
    assert shown == anytok.load(words_json.encode()).encode(PROBE + " zzzunknown")
    ctx.close()
    guard.check()
    assert errors == []

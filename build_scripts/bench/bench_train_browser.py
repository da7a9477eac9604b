"""Benchmark training in the browser: `AnyTok.train` in headless Chromium against anytok.train
natively, in one run.

    python build_scripts/bench/bench_train_browser.py [--vocab 8192] [--styles hf,tiktoken] [--corpora DIR]
    python build_scripts/bench/bench_train_browser.py --styles "" --kinds unigram,bpe,wordpiece --size 100000 --vocab 2000

The four corpora of ../shared/corpora (about 4 MB), each one text, pattern o200k_base.  The page
(Debian's /usr/bin/chromium, served from 127.0.0.1 by serve_demo.py) passes them to
`AnyTok.train`, which trains in a Web Worker of its own; "page s" is the time from the call to
the resolved tokenizer (worker start, Pyodide boot, sending the texts, training, the files back),
"worker s" the time anytok.train took inside the worker.  "native s" is anytok.train on the same
texts in this process, run right before.  The merges are checked to be identical.

`--kinds` (SentencePiece "unigram" and "bpe", tokenizers' "wordpiece" and "hf-unigram"): the first
`--size` bytes of each corpus (cut at a line end), as lines, through `AnyTok.train(lines, { kind,
... })`; "native s" is the worker's own code (web/worker_glue.py's train_kind) run in this
process on the same lines and options, and the `.model` bytes / tokenizer.json are checked to be
identical.  SentencePiece: normalization "identity", Unigram with hard_vocab_limit false.

Prints a markdown table with the date, the machine and the exact command.  A script, not a test:
the numbers depend on the machine and its load.  Nothing is fetched from outside 127.0.0.1.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders
from bench_common import CORPORA, CORPORA_DIR, ROOT, cpu_model, dist_page  # noqa: E402

JS_TRAIN = """async ([texts, options]) => {
    const { AnyTok } = await import('/anytok.js');
    const t0 = performance.now();
    const tok = await AnyTok.train(texts, options);
    const page = (performance.now() - t0) / 1000;
    return { page, worker: tok.training.trainSeconds, merges: Array.from(tok.training.merges) };
}"""
JS_TRAIN_KIND = """async ([texts, options]) => {
    const { AnyTok } = await import('/anytok.js');
    const t0 = performance.now();
    const tok = await AnyTok.train(texts, options);
    const page = (performance.now() - t0) / 1000;
    const files = tok.training.files;
    return { page, worker: tok.training.trainSeconds,
             out: files.model ? Array.from(files.model) : files.tokenizerJson };
}"""
KIND_OPTIONS = {
    "unigram": {"kind": "unigram", "style": "sentencepiece", "normalizationRuleName": "identity", "hardVocabLimit": False},
    "bpe": {"kind": "bpe", "style": "sentencepiece", "normalizationRuleName": "identity"},
    "wordpiece": {"kind": "wordpiece", "style": "hf"},
    "hf-unigram": {"kind": "unigram", "style": "hf"},
}


def corpus_lines(args) -> list[str]:
    lines = []
    for name in CORPORA.values():
        data = (args.corpora / name).read_bytes()
        if len(data) > args.size:
            data = data[: data.rindex(b"\n", 0, args.size) + 1]
        lines += data.decode("utf-8").split("\n")[:-1]
    return lines


def bench_kinds(page, args) -> None:
    import json

    sys.path.insert(0, str(ROOT / "web"))
    import worker_glue

    lines = corpus_lines(args)
    mb = sum(len(t.encode("utf-8")) + 1 for t in lines) / 1e6
    print()
    print(f"Other kinds: {len(lines):,} lines, {mb:.2f} MB (the first {args.size:,} bytes of each corpus)")
    print()
    print("| vocab | kind | native s | worker s | page s | worker / native | identical |")
    print("|---:|---|---:|---:|---:|---:|---|")
    for vocab in [int(v) for v in args.vocab.split(",")]:
        for kind in [k for k in args.kinds.split(",") if k]:
            options = {**KIND_OPTIONS[kind], "vocabSize": vocab}
            t0 = time.perf_counter()
            native = worker_glue.train_kind(lines, json.dumps(options))
            native_s = time.perf_counter() - t0
            got = page.evaluate(JS_TRAIN_KIND, [lines, options])
            ours = bytes(native["model"]) if "model" in native else native["tokenizerJson"]
            same = (bytes(got["out"]) if isinstance(got["out"], list) else got["out"]) == ours
            print(f"| {vocab:,} | {kind} | {native_s:.1f} | {got['worker']:.1f} | {got['page']:.1f} | "
                  f"{got['worker'] / native_s:.2f}x | {'yes' if same else 'NO'} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vocab", default="8192", help="vocabulary sizes, comma-separated")
    ap.add_argument("--styles", default="hf,tiktoken")
    ap.add_argument("--corpora", type=Path, default=CORPORA_DIR)
    ap.add_argument("--kinds", default="", help="other kinds, comma-separated: " + ", ".join(KIND_OPTIONS))
    ap.add_argument("--size", type=int, default=100_000, help="--kinds: bytes of each corpus")
    args = ap.parse_args()

    sys.path.insert(0, str(ROOT / "pkg"))
    import anytok

    texts = [(args.corpora / name).read_text(encoding="utf-8") for name in CORPORA.values()]
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"# bench_train_browser.py, {started}, {cpu_model()}, Chromium headless vs CPython "
          f"{sys.version.split()[0]}; {len(texts)} texts, {mb:.1f} MB; pattern o200k_base")
    print(f"# command: python build_scripts/bench/bench_train_browser.py {shlex.join(sys.argv[1:])}".rstrip())
    if args.styles:
        print()
        print("| vocab | style | native s | worker s | page s | worker / native | identical |")
        print("|---:|---|---:|---:|---:|---:|---|")
    with dist_page() as page:
        for vocab in [int(v) for v in args.vocab.split(",")]:
            for style in [s for s in args.styles.split(",") if s]:
                t0 = time.perf_counter()
                native = anytok.train(texts=texts, vocab_size=vocab, style=style, pattern="o200k_base")
                native_s = time.perf_counter() - t0
                got = page.evaluate(JS_TRAIN, [texts, {"vocabSize": vocab, "style": style, "pattern": "o200k_base"}])
                same = got["merges"] == [x for m in native.merges for x in m]
                print(f"| {vocab:,} | {style} | {native_s:.1f} | {got['worker']:.1f} | {got['page']:.1f} | "
                      f"{got['worker'] / native_s:.2f}x | {'yes' if same else 'NO'} |", flush=True)
        if args.kinds:
            bench_kinds(page, args)

if __name__ == "__main__":
    main()

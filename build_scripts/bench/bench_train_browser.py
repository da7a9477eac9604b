"""Benchmark training in the browser: `AnyTok.train` in headless Chromium against anytok.train
natively, in one run.

    python build_scripts/bench/bench_train_browser.py [--vocab 8192] [--styles hf,tiktoken] [--corpora DIR]

The four corpora of ../shared/corpora (about 4 MB), each one text, pattern o200k_base.  The page
(Debian's /usr/bin/chromium, served from 127.0.0.1 by serve_demo.py) passes them to
`AnyTok.train`, which trains in a Web Worker of its own; "page s" is the time from the call to
the resolved tokenizer (worker start, Pyodide boot, sending the texts, training, the files back),
"worker s" the time anytok.train took inside the worker.  "native s" is anytok.train on the same
texts in this process, run right before.  The merges are checked to be identical.

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vocab", default="8192", help="vocabulary sizes, comma-separated")
    ap.add_argument("--styles", default="hf,tiktoken")
    ap.add_argument("--corpora", type=Path, default=CORPORA_DIR)
    args = ap.parse_args()

    sys.path.insert(0, str(ROOT / "pkg"))
    import anytok

    texts = [(args.corpora / name).read_text(encoding="utf-8") for name in CORPORA.values()]
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"# bench_train_browser.py, {started}, {cpu_model()}, Chromium headless vs CPython "
          f"{sys.version.split()[0]}; {len(texts)} texts, {mb:.1f} MB; pattern o200k_base")
    print(f"# command: python build_scripts/bench/bench_train_browser.py {shlex.join(sys.argv[1:])}".rstrip())
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

if __name__ == "__main__":
    main()

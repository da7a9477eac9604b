"""Benchmark `AnyTok.load({ workers: N })`: one long text encoded and counted by N workers
against one worker, in the same headless Chromium page.

    python build_scripts/bench/bench_browser_workers.py [--workers 2] [--runs 5] [--corpora DIR] [--caches empty,kept]

Texts: each corpus of ../shared/corpora (about 1 MB each), o200k_base.  The calls alternate
between the one-worker and the N-worker tokenizer (whose first worker is the one-worker
tokenizer's own), and before each call every worker's cache of merged pieces is emptied, so no
call is helped by an earlier one, and the page collects its garbage and idles before each
(bench_common.settle); the best of `--runs` is shown.  A second table keeps the
caches (each tokenizer has handled the same text before, untimed): what the rest of a long
text costs once its common pieces are cached, i.e. splitting and lookups.  The ids of both are checked
to be equal.  Prints a markdown table with the date, the machine and the exact command.  A
script, not a test; nothing is fetched from outside 127.0.0.1.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders
from bench_common import CORPORA, CORPORA_DIR, GC_ARGS, cpu_model, dist_page, settle  # noqa: E402

JS_SETUP = """async ([n]) => {
    const { AnyTok } = await import('/anytok.js');
    window.one = await AnyTok.load({ encoding: "o200k_base" });
    // The worker keeps a copy of the downloaded vocabulary once it is idle (~0.4 s of Python):
    // wait until it is stored, so that it is not made during a timed call, and so that the
    // other workers load the copy (and make none).
    for (let i = 0; i < 400 && window.one.source === "network"; i++) {
        const cache = await caches.open("anytok-vocab-v1");
        const [k] = await cache.keys();
        if (k && (await cache.match(k))) break;
        await new Promise((r) => setTimeout(r, 25));
    }
    window.many = await AnyTok.load({ encoding: "o200k_base", workers: n });
    // A warm-up of every worker on other text.
    await window.many.encode("warm up ".repeat(40000));
    return window.many.workers;
}"""

# One timed call; the piece caches of all workers are emptied first (untimed).
JS_CALL = """async ([which, op, text, clear]) => {
    const tok = window[which];
    if (clear) {
        await window.one._clearPieceCache();
        await window.many._clearPieceCache();
    } else {
        await tok[op](text); // untimed: the caches hold this text's pieces
    }
    const t0 = performance.now();
    const result = await tok[op](text);
    const ms = performance.now() - t0;
    return { ms, result: op === "count" ? result : result.length, digest: op === "encode" ? result.reduce((h, x) => (h * 31 + x) >>> 0, 7) : null };
}"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--corpora", type=Path, default=CORPORA_DIR)
    ap.add_argument("--caches", default="empty,kept",
                    help="tables to print: empty (caches emptied before each call), kept, or both (default)")
    args = ap.parse_args()
    modes = args.caches.split(",")
    if not modes or set(modes) - {"empty", "kept"}:
        ap.error("--caches takes empty, kept or empty,kept")

    texts = {key: (args.corpora / name).read_text(encoding="utf-8") for key, name in CORPORA.items()}
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"# bench_browser_workers.py, {started}, {cpu_model()}, Chromium headless; o200k_base; best of {args.runs}")
    print(f"# command: python build_scripts/bench/bench_browser_workers.py {shlex.join(sys.argv[1:])}".rstrip())
    with dist_page(GC_ARGS) as page:
        n = page.evaluate(JS_SETUP, [args.workers])
        if n != args.workers:
            raise SystemExit(f"asked for {args.workers} workers, got {n}")
        for mode in modes:
            print()
            print("Piece caches emptied before each call:" if mode == "empty" else
                  "Piece caches kept (the same text handled before, untimed):")
            print()
            print(f"| text | MB | op | 1 worker ms | {args.workers} workers ms | speed-up | same result |")
            print("|---|---:|---|---:|---:|---:|---|")
            for key, text in texts.items():
                mb = len(text.encode("utf-8")) / 1e6
                for op in ("encode", "count"):
                    best = {"one": float("inf"), "many": float("inf")}
                    results = {}
                    for _ in range(args.runs):
                        for which in ("one", "many"):
                            settle(page)
                            r = page.evaluate(JS_CALL, [which, op, text, mode == "empty"])
                            best[which] = min(best[which], r["ms"])
                            results[which] = (r["result"], r["digest"])
                    same = "yes" if results["one"] == results["many"] else "NO"
                    print(f"| {key} | {mb:.2f} | {op} | {best['one']:.0f} | {best['many']:.0f} | "
                          f"{best['one'] / best['many']:.2f}x | {same} |", flush=True)


if __name__ == "__main__":
    main()

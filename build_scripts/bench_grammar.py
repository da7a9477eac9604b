"""Benchmark of anytok.constrain grammars (the Earley parser) next to llguidance, in one run.

    .venv/bin/python build_scripts/bench_grammar.py [--encoding o200k_base] [--steps 200] [--seed 0]

For each of llama.cpp's 8 GBNF grammars (`constrain.gbnf`; llguidance gets `gbnf_to_lark` of
the same text) and outlines' Lark grammars (.cache/llama_cpp, from build_scripts/
fetch_llama_cpp.py), over a seeded random walk of up to --steps tokens (each step samples an
allowed token, mostly not end-of-sequence, and consumes it in both; masks are checked equal
on the way): the first mask of a new grammar (compile included, in both) and the median / p99
/ mean time per mask, for anytok (`mask()`) and llguidance (`compute_bitmask()`), then the
median and p99 over all grammars.  Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "pkg"))

import anytok  # noqa: E402
from anytok import constrain  # noqa: E402


def _pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--encoding", default="o200k_base")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    from llguidance import LLMatcher
    from llguidance.gbnf_to_lark import gbnf_to_lark
    from llguidance.tiktoken import lltokenizer_from_encoding

    enc = anytok.get_encoding(args.encoding)
    t = time.perf_counter()
    constrain.regex("a").matcher(enc).mask()
    print(f"anytok token trie: {time.perf_counter() - t:.2f} s")
    t = time.perf_counter()
    lltok = lltokenizer_from_encoding(enc)
    print(f"llguidance tokenizer: {time.perf_counter() - t:.2f} s")
    cache = ROOT / ".cache" / "llama_cpp"
    grammars = [(f"gbnf/{p.stem}", "gbnf", p.read_text()) for p in sorted((cache / "grammars").glob("*.gbnf"))]
    grammars += [(f"outlines/{p.stem}", "lark", p.read_text()) for p in sorted((cache / "outlines").glob("*.lark"))
                 if "start" in p.read_text()]
    print(f"{'grammar':20} {'first ms':>17} {'median ms':>17} {'p99 ms':>17} {'mean ms':>17} steps")
    print(f"{'':20} {'anytok / llg':>17} {'anytok / llg':>17} {'anytok / llg':>17} {'anytok / llg':>17}")
    all_ours: list = []
    all_firsts: list = []
    for label, kind, text in grammars:
        lark_text = gbnf_to_lark(text) if kind == "gbnf" else text
        t = time.perf_counter()
        ours = (constrain.gbnf(text) if kind == "gbnf" else constrain.grammar(text)).matcher(enc)
        m0 = ours.mask()
        first = time.perf_counter() - t
        t = time.perf_counter()
        ref = LLMatcher(lltok, LLMatcher.grammar_from_lark(lark_text), log_level=0)
        r0 = ref.compute_bitmask()
        ref_first = time.perf_counter() - t
        assert m0 == r0, label
        rng = random.Random(f"{args.seed}|{label}")
        eos = ours.eos_token
        ot, rt = [], []
        for step in range(args.steps):
            allowed = ours.allowed()
            ordinary = [x for x in allowed if x != eos]
            token = rng.choice(ordinary) if ordinary and rng.random() < 0.97 else rng.choice(allowed)
            assert ours.consume(token) and ref.consume_token(token), (label, step)
            if ours.is_stopped():
                break
            t = time.perf_counter()
            m = ours.mask()
            ot.append(time.perf_counter() - t)
            t = time.perf_counter()
            r = ref.compute_bitmask()
            rt.append(time.perf_counter() - t)
            assert m == r, (label, step)
        all_ours.extend(ot)
        all_firsts.append(first)

        def both(a, b):
            return f"{a * 1e3:8.2f} / {b * 1e3:6.2f}"

        if ot:
            print(f"{label:20} {both(first, ref_first)} {both(statistics.median(ot), statistics.median(rt))} "
                  f"{both(_pct(ot, 0.99), _pct(rt, 0.99))} {both(statistics.mean(ot), statistics.mean(rt))} {len(ot)}",
                  flush=True)
    print(f"all grammars, anytok: median {statistics.median(all_ours) * 1e3:.2f} ms per mask, "
          f"p99 {_pct(all_ours, 0.99) * 1e3:.2f} ms, worst first mask {max(all_firsts) * 1e3:.0f} ms")


if __name__ == "__main__":
    main()

"""Loading a tokenizer from a GGUF file against loading the same model's tokenizer.json.

    .venv/bin/python build_scripts/bench_gguf.py [--rounds 5]

For Llama 3 (llama.cpp's ggml-vocab-llama-bpe.gguf / the fixtures' llama3.tokenizer.json) and
Qwen (ggml-vocab-qwen2.gguf / qwen3.tokenizer.json; the same BPE vocabulary), each round
measures, in turn:

* "gguf header": `anytok.convert.gguf.read_gguf_header(path)` alone;
* "gguf load + count": `anytok.load(path).count("hello world")` (the first count a user waits for);
* "anytok tokenizer.json": `anytok.load(tokenizer.json).count("hello world")`;
* "tokenizers": `tokenizers.Tokenizer.from_file(tokenizer.json).encode("hello world")`.

It prints the median milliseconds of each, wall clock and CPU time of this process (on a
shared machine the CPU time is the steadier of the two), and its ratio to anytok's own
tokenizer.json load (the issue's target: GGUF load <= 1.5x).  Native CPython only; the fixtures come from
build_scripts/fetch_llama_cpp.py and fetch_models.py.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "pkg"))

import anytok  # noqa: E402
from anytok.convert.gguf import read_gguf_header  # noqa: E402

PAIRS = [
    ("Llama 3", "ggml-vocab-llama-bpe.gguf", "llama3.tokenizer.json"),
    ("Qwen", "ggml-vocab-qwen2.gguf", "qwen3.tokenizer.json"),
]


def timed(fn) -> tuple[float, float]:
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - start, time.process_time() - cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    try:
        import tokenizers
    except ImportError:
        tokenizers = None
    models = ROOT / ".cache" / "llama_cpp" / "models"
    jsons = ROOT / ".cache" / "models"
    for label, gguf_name, json_name in PAIRS:
        gguf = models / gguf_name
        tj = jsons / json_name
        cases = {
            "gguf header": lambda: read_gguf_header(gguf),
            "gguf load + count": lambda: anytok.load(gguf).count("hello world"),
            "anytok tokenizer.json": lambda: anytok.load(tj).count("hello world"),
        }
        if tokenizers is not None:
            cases["tokenizers"] = lambda: tokenizers.Tokenizer.from_file(str(tj)).encode("hello world")
        times: dict[str, list[tuple[float, float]]] = {k: [] for k in cases}
        for _ in range(args.rounds):
            for k, fn in cases.items():
                times[k].append(timed(fn))
        wall = {k: 1e3 * statistics.median(w for w, _ in v) for k, v in times.items()}
        cpu = {k: 1e3 * statistics.median(c for _, c in v) for k, v in times.items()}
        print(f"{label} ({gguf.stat().st_size / 1e6:.1f} MB GGUF, {tj.stat().st_size / 1e6:.1f} MB tokenizer.json), "
              f"median of {args.rounds}; ratios to anytok's tokenizer.json load:")
        bw, bc = wall["anytok tokenizer.json"], cpu["anytok tokenizer.json"]
        for k in cases:
            print(f"  {k:<24} wall {wall[k]:8.1f} ms ({wall[k] / bw:4.2f}x)   cpu {cpu[k]:8.1f} ms ({cpu[k] / bc:4.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

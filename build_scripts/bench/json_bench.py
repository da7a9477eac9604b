"""Speed of constrain.json_schema beside llguidance 1.9.1 on JSONSchemaBench's dev half.

For each schema both compile (o200k_base): time to first mask (compile + matcher + first mask)
and the time of every later mask along the file's first test instance (consume a token, then
compute the mask), for anytok and llguidance in the same process, one after the other.  Prints
median / p95 / max of the first mask and median / p99 of the per-mask times, and the ratios;
the first mask also in CPU time of the process (`time.process_time`: on a shared machine, the
wall time of a longer task takes more of other jobs' time slices).  Both start from the same
parsed schema and an already-loaded tokenizer (with its trie and slicer, see `_warm`).

    python build_scripts/bench/json_bench.py --sample 500          # a seeded sample (default seed 0)
    python build_scripts/bench/json_bench.py                       # the whole dev half
    python build_scripts/bench/json_bench.py --files 'Github_ultra*' --json out.json
    python build_scripts/bench/json_bench.py --sample 500 --pyodide 30   # + the first 30 under Pyodide

With --pyodide N, N of the files anytok compiled are timed again the same way (same tokens)
under Pyodide's CPython in Node (web/node_modules/pyodide, else /work/main's, through
pyodide_run.mjs; no network), on a copy of pkg/anytok and o200k_base's vocab files.

Files anytok refuses or llguidance refuses are counted and left out of the timings; a file
whose anytok run passes `--timeout` seconds is reported (its time counts as the timeout).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if "__file__" in globals():  # natively (under Pyodide, pyodide_run.mjs runs the source text)
    sys.path[:0] = [str(Path(__file__).resolve().parents[1] / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders
    import maskbench  # noqa: E402


def _pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def bench_file(path, enc, lltok, max_tokens: int, timeout: float) -> dict:
    from llguidance import LLMatcher

    from anytok import constrain

    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    schema = doc["schema"]
    tests = doc.get("tests") or []
    text = json.dumps(tests[0]["data"], separators=(",", ":"), ensure_ascii=False) if tests else ""
    tokens = enc.encode(text, disallowed_special=())[:max_tokens]
    r = {"file": Path(path).name}
    t0, c0 = time.perf_counter(), time.process_time()
    ref = LLMatcher(lltok, LLMatcher.grammar_from_json_schema(schema), log_level=0)
    if ref.is_error():
        r["status"] = "ll_refuses"
        return r
    ref.compute_bitmask()
    r["ll_first"] = time.perf_counter() - t0
    r["ll_first_cpu"] = time.process_time() - c0
    ll_masks = []
    for t in tokens:
        a = time.perf_counter()
        if not ref.consume_token(t):
            break
        ref.compute_bitmask()
        ll_masks.append(time.perf_counter() - a)
    r["ll_masks"] = ll_masks
    old = signal.signal(signal.SIGALRM, maskbench._alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    masks = []
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            c = constrain.json_schema(schema)
        except constrain.ConstraintError as e:
            r["status"] = "refused"
            r["error"] = f"{type(e).__name__}: {e}"[:200]
            return r
        m = c.matcher(enc)
        m.mask()
        r["first"] = time.perf_counter() - t0
        r["first_cpu"] = time.process_time() - c0
        for t in tokens[:len(ll_masks)]:
            a = time.perf_counter()
            if not m.consume(t):
                break
            m.mask()
            masks.append(time.perf_counter() - a)
        r["status"] = "both"
    except maskbench._Timeout:
        r["status"] = "timeout"
        r.setdefault("first", timeout)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    r["masks"] = masks
    return r


def summary(results) -> str:
    both = [r for r in results if r["status"] in ("both", "timeout")]
    ours_first = [r["first"] for r in both]
    ll_first = [r["ll_first"] for r in both]
    ours_m = [x for r in both for x in r["masks"]]
    ll_m = [x for r in both for x in r["ll_masks"]]
    ms = lambda x: f"{x * 1000:.1f} ms"  # noqa: E731
    counts = {s: sum(1 for r in results if r["status"] == s) for s in ("both", "refused", "ll_refuses", "timeout")}
    lines = [
        f"{len(results)} files: {counts}",
        f"{'':22}{'anytok':>12}{'llguidance':>12}{'ratio':>8}",
    ]
    for name, a, b in [
        ("first mask median", _pct(ours_first, 0.5), _pct(ll_first, 0.5)),
        ("first mask p95", _pct(ours_first, 0.95), _pct(ll_first, 0.95)),
        ("first mask max", max(ours_first, default=float("nan")), max(ll_first, default=float("nan"))),
        ("first mask median, CPU", _pct([r.get("first_cpu", r["first"]) for r in both], 0.5),
         _pct([r["ll_first_cpu"] for r in both], 0.5)),
        ("first mask p95, CPU", _pct([r.get("first_cpu", r["first"]) for r in both], 0.95),
         _pct([r["ll_first_cpu"] for r in both], 0.95)),
        ("per-mask median", _pct(ours_m, 0.5), _pct(ll_m, 0.5)),
        ("per-mask p99", _pct(ours_m, 0.99), _pct(ll_m, 0.99)),
    ]:
        lines.append(f"{name:22}{ms(a):>12}{ms(b):>12}{a / b if b else float('nan'):>7.0f}x")
    lines.append(f"masks timed: {len(ours_m)} (anytok), {len(ll_m)} (llguidance)")
    return "\n".join(lines)


def _warm(enc) -> None:
    """The tokenizer's token trie and slicer (with each slice's own trie and its tokens by end
    state, which the slicer otherwise builds on first use), built once per process (as
    llguidance's tokenizer and its slicer are built before its timings), so that no file's
    timing includes them."""
    from anytok.constrain.slicer import Slicer
    from anytok.constrain.tokens import TokenTrie

    for s in Slicer.of(TokenTrie.of(enc)).slices:
        s.by_end_state()  # (builds the slice's trie too)


def _pyodide_main() -> None:
    """Under Pyodide: time compile + first mask and the masks along the given tokens."""
    pkg_dir, params_path, out_path = sys.argv[2:5]
    sys.path.insert(0, pkg_dir)
    import anytok
    from anytok import constrain

    with open(params_path, encoding="utf-8") as f:
        params = json.load(f)
    enc = anytok.get_encoding("o200k_base")
    _warm(enc)
    out = []
    for job in params:
        t0 = time.perf_counter()
        m = constrain.json_schema(job["schema"]).matcher(enc)
        m.mask()
        first = time.perf_counter() - t0
        masks = []
        for t in job["tokens"]:
            a = time.perf_counter()
            if not m.consume(t):
                break
            m.mask()
            masks.append(time.perf_counter() - a)
        out.append({"file": job["file"], "first": first, "masks": masks, "status": "both"})
        print(f"{job['file']}: {first * 1000:.0f} ms", flush=True)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(out, f)


def run_pyodide(results, n: int, enc, node: str) -> list:
    root = Path(__file__).resolve().parents[2]
    pyodide = next((d for d in (root / "web" / "node_modules" / "pyodide",
                                Path("/work/main/web/node_modules/pyodide")) if (d / "pyodide.mjs").exists()), None)
    if pyodide is None:
        raise SystemExit("json_bench: no Pyodide (build_scripts/build_web.py installs it)")
    jobs = []
    data = maskbench.data_dir()
    for r in results:
        if r["status"] != "both" or len(jobs) >= n:
            continue
        doc = json.loads((data / r["file"]).read_text(encoding="utf-8"))
        text = json.dumps(doc["tests"][0]["data"], separators=(",", ":"), ensure_ascii=False) if doc.get("tests") else ""
        jobs.append({"file": r["file"], "schema": doc["schema"],
                     "tokens": enc.encode(text, disallowed_special=())[:len(r["masks"])]})
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        shutil.copytree(root / "pkg" / "anytok", tmp / "pkg" / "anytok",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        (tmp / "vocab_binaries").mkdir()
        for suffix in (".atok", ".pairs"):
            shutil.copyfile(root / "vocab_binaries" / f"o200k_base{suffix}", tmp / "vocab_binaries" / f"o200k_base{suffix}")
        (tmp / "params.json").write_text(json.dumps(jobs))
        subprocess.run([node, str(root / "build_scripts" / "pyodide_run.mjs"), str(pyodide), str(tmp),
                        str(Path(__file__).resolve()), "--pyodide-worker", "/host/pkg", "/host/params.json",
                        "/host/out.json"], check=True, stdout=sys.stderr)
        return json.loads((tmp / "out.json").read_text())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", type=int, default=0, help="a seeded sample of this many files (0: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--files", default="*", help="glob on file names")
    ap.add_argument("--tokens", type=int, default=200, help="masks timed per file (first instance)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per file (anytok)")
    ap.add_argument("--json", help="write every result here")
    ap.add_argument("--pyodide", type=int, default=0, help="also time this many files under Pyodide")
    ap.add_argument("--node", default=shutil.which("node"))
    args = ap.parse_args(argv)
    paths = [p for p in maskbench.files() if fnmatch.fnmatch(p.name, args.files)]
    if args.sample:
        paths = maskbench.sample(paths, args.sample, args.seed)
    enc, lltok = maskbench.tokenizers()
    _warm(enc)
    results = []
    for p in paths:
        r = bench_file(p, enc, lltok, args.tokens, args.timeout)
        results.append(r)
        if r["status"] == "timeout":
            print(f"  {r['file']}: timeout", flush=True)
    print(f"{time.strftime('%Y-%m-%d')} {platform.python_implementation()} {platform.python_version()} "
          f"{platform.machine()}, o200k_base")
    print(summary(results))
    slow = sorted((r for r in results if "first" in r), key=lambda r: -r["first"])[:5]
    print("slowest first masks: " + ", ".join(f"{r['file']} {r['first'] * 1000:.0f} ms" for r in slow))
    if args.pyodide:
        pyo = run_pyodide(results, args.pyodide, enc, args.node)
        names = {r["file"] for r in pyo}
        native = [r for r in results if r["file"] in names]
        first = lambda rs, p: _pct([r["first"] for r in rs], p) * 1000  # noqa: E731
        per = lambda rs, p: _pct([x for r in rs for x in r["masks"]], p) * 1000  # noqa: E731
        print(f"\nUnder Pyodide (Node {subprocess.run([args.node, '--version'], capture_output=True, text=True).stdout.strip()}),"
              f" {len(pyo)} files; the same files natively:")
        print(f"  first mask median {first(pyo, 0.5):.1f} ms (native {first(native, 0.5):.1f}), "
              f"max {max(r['first'] for r in pyo) * 1000:.0f} ms (native {max(r['first'] for r in native) * 1000:.0f})")
        print(f"  per-mask median {per(pyo, 0.5):.2f} ms (native {per(native, 0.5):.2f}), "
              f"p99 {per(pyo, 0.99):.1f} ms (native {per(native, 0.99):.1f})")
    if args.json:
        Path(args.json).write_text(json.dumps(results))
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--pyodide-worker"]:
        _pyodide_main()
    else:
        sys.exit(main())

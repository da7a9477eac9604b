"""Where the grammar masks' time goes, natively and under Pyodide, per function (issue 47).

    .venv/bin/python build_scripts/bench/bench_grammar_profile.py [--runs 3] [--top 40] [--steps 200]

bench_grammar.py's walks (same grammars, seeds and tokens; o200k_base, the native run's trie
file read by both sides) run natively and again under Pyodide's CPython in Node (through
pyodide_run.mjs, on a snapshot of pkg/anytok, as bench_grammar.py --pyodide does), --runs
times each, alternating, each run a fresh process.  Two tables:

1. Per function: cProfile switched on around each later mask only; per function its own time
   (`tottime`, wall-clock: cProfile's timer), the minimum over the runs on each side, and
   Pyodide / native.  CPython 3.11 gives list, dict and set comprehensions frames of their own,
   3.12+ inline them: a 3.11 comprehension's time is added to its caller's.  Calls of C
   functions (`<method ...>`, `<built-in ...>`) are timed on both sides; their rows carry
   cProfile's per-call cost, which under Pyodide's 3.14 (sys.monitoring events, in
   WebAssembly) is some 10x CPython 3.11's: read those rows as call counts, and the profiled
   total as inflated (the unprofiled CPU time is printed beside it).
2. Pieces without a profiler, in CPU time (natively `process_time`, under Pyodide Node's
   `process.cpuUsage()`), minimum over runs and --reps repetitions: the later masks by a fresh
   replay (a new matcher consumes the walk's tokens with and without `mask()`: the
   difference, two readings per walk), and again with a CPU reading around each mask, less
   what a reading costs (as bench_grammar.py times them); the calls the walks made of
   `Slicer.mask`, `TokenTrie.walk`, `_bits` and `int.to_bytes`, recorded and called again
   (warm: their caches filled); and `Matcher.mask` on a cached state.

Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import random
import re
import sys
from pathlib import Path

COMPREHENSION = re.compile(r"\((<listcomp>|<dictcomp>|<setcomp>)\)$")


def _key(fn, line, name) -> str:
    return name if fn == "~" else f"{os.path.basename(fn)}:{line}({name})"


def measure(grammar_dir: str, steps: int, reps: int) -> dict:
    """One side's run (natively or under Pyodide): both tables' figures."""
    import cProfile
    import pstats

    import anytok
    from anytok import constrain
    from anytok.constrain import matcher as MA
    from anytok.constrain import slicer as SL
    from anytok.constrain.tokens import TokenTrie

    from bench_grammar import _grammars, cpu_clock  # (on sys.path: this folder, or /host under Pyodide)

    cpu, _ = cpu_clock()
    enc = anytok.get_encoding("o200k_base")
    trie = TokenTrie.of(enc)
    grammars = _grammars(Path(grammar_dir))

    def compile_(kind, text):
        return (constrain.gbnf(text) if kind == "gbnf" else constrain.grammar(text)).matcher(enc)

    prof = cProfile.Profile()
    shas, tokens, cpu_total, matchers = [], {}, 0.0, []
    for label, kind, text, _ in grammars:
        gc.collect()
        m = compile_(kind, text)
        shas.append(hashlib.sha256(m.mask()).hexdigest())
        rng = random.Random(f"0|{label}")
        eos, toks = m.eos_token, []
        for _ in range(steps):
            allowed = m.allowed()
            ordinary = [x for x in allowed if x != eos]
            token = rng.choice(ordinary) if ordinary and rng.random() < 0.97 else rng.choice(allowed)
            assert m.consume(token), label
            if m.is_stopped():
                break
            c = cpu()
            prof.enable()
            mask = m.mask()
            prof.disable()
            cpu_total += cpu() - c
            shas.append(hashlib.sha256(mask).hexdigest())
            toks.append(token)
        tokens[label] = toks
        matchers.append(m)
    stats = pstats.Stats(prof).stats
    funcs = {}
    for (fn, line, name), (_, nc, tt, _, callers) in stats.items():
        funcs[_key(fn, line, name)] = [nc, tt, {_key(*c): v[2] for c, v in callers.items()}]

    def best(f):
        f()
        b = float("inf")
        for _ in range(reps):
            c = cpu()
            f()
            b = min(b, cpu() - c)
        return b

    # the calls to replay: recorded while fresh matchers compute the same masks again
    calls: dict = {"walk": [], "bits": [], "slicer": [], "ints": []}
    walk0, bits0, smask0 = TokenTrie.walk, SL._bits, SL.Slicer.mask

    def walk(self, derive, state, prefix=b""):
        calls["walk"].append((self, derive, state, prefix))
        return walk0(self, derive, state, prefix)

    def bits(ids):
        calls["bits"].append(list(ids))
        return bits0(ids)

    def smask(self, es, state, prefix=b""):
        r = smask0(self, es, state, prefix)
        calls["slicer"].append((self, es, state, prefix))
        calls["ints"].append(r)
        return r

    TokenTrie.walk, SL._bits, MA._bits, SL.Slicer.mask = walk, bits, bits, smask
    try:
        for label, kind, text, _ in grammars:
            m = compile_(kind, text)
            m.mask()
            for token in tokens[label]:
                m.consume(token)
                m.mask()
    finally:
        TokenTrie.walk, SL._bits, MA._bits, SL.Slicer.mask = walk0, bits0, bits0, smask0
    width = 4 * ((trie.n_vocab + 31) // 32)
    pieces = {
        "Slicer.mask (its walks and _bits included)": best(lambda: [smask0(*a) for a in calls["slicer"]]),
        "TokenTrie.walk": best(lambda: [walk0(*a) for a in calls["walk"]]),
        "_bits (token ids to a bitmask)": best(lambda: [bits0(a) for a in calls["bits"]]),
        "int.to_bytes of the slicer's masks": best(lambda: [x.to_bytes(width, "little") for x in calls["ints"]]),
        "Matcher.mask on a cached state (x180 per grammar)": best(lambda: [m.mask() for m in matchers for _ in range(180)]),
    }
    counts = {k: len(v) for k, v in calls.items()}
    # the later masks again, without a reading per mask: a fresh matcher consumes the walk's
    # tokens with and without mask(), the difference is the masks' time
    # (and once more with a CPU reading around each mask, less what a reading costs, as
    # bench_grammar.py times them)
    _, cost = cpu_clock()
    replay = per_mask = 0.0
    for label, kind, text, _ in grammars:
        t = {True: float("inf"), False: float("inf"), "read": float("inf")}
        for _ in range(reps):
            for how in (True, False, "read"):
                gc.collect()
                m = compile_(kind, text)
                m.mask()
                if how == "read":
                    total = 0.0
                    for token in tokens[label]:
                        m.consume(token)
                        c = cpu()
                        m.mask()
                        total += cpu() - c - cost
                    t[how] = min(t[how], total)
                    continue
                c = cpu()
                for token in tokens[label]:
                    m.consume(token)
                    if how:
                        m.mask()
                t[how] = min(t[how], cpu() - c)
        replay += t[True] - t[False]
        per_mask += t["read"]
    return {"python": sys.version.split()[0], "funcs": funcs, "cpu_profiled": cpu_total, "replay": replay, "per_mask": per_mask,
            "pieces": pieces, "counts": counts,
            "hash": hashlib.sha256("".join(shas).encode()).hexdigest()[:16]}


def _fold(funcs: dict) -> dict:
    """function -> (calls, own seconds), 3.11's comprehension frames added to their callers."""
    out = {k: [v[0], v[1]] for k, v in funcs.items()}
    for k, v in funcs.items():
        if COMPREHENSION.search(k):
            for caller, seconds in v[2].items():
                out.setdefault(caller, [0, 0.0])[1] += seconds
            del out[k]
    return out


def main() -> None:
    import argparse
    import shutil
    import subprocess
    import tempfile

    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "pkg"))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_common import pyodide_for, run_header

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--reps", type=int, default=3, help="repetitions of each replayed piece (minimum kept)")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--node", default=shutil.which("node"))
    args = ap.parse_args()
    pyodide = pyodide_for(args.node, "bench_grammar_profile")
    print(run_header("bench_grammar_profile.py"))
    import anytok
    from anytok.constrain.tokens import TokenTrie

    trie_file = TokenTrie.of(anytok.get_encoding("o200k_base")).cache_file
    tmp = Path(tempfile.mkdtemp(prefix="bench_grammar_profile_"))
    try:  # the snapshot Pyodide reads, as bench_grammar.py --pyodide takes it
        shutil.copytree(root / "pkg" / "anytok", tmp / "pkg" / "anytok",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        (tmp / "vocab_binaries").mkdir()
        for suffix in (".atok", ".pairs"):
            src = root / "vocab_binaries" / ("o200k_base" + suffix)
            if src.exists():
                shutil.copyfile(src, tmp / "vocab_binaries" / src.name)
        cache = root / ".cache" / "llama_cpp"
        for sub in ("grammars", "outlines"):
            shutil.copytree(cache / sub, tmp / "grammars" / sub)
        for name in ("bench_grammar.py", "bench_grammar_profile.py"):
            shutil.copyfile(Path(__file__).resolve().parent / name, tmp / name)
        if trie_file is not None and Path(trie_file[0]).exists():
            (tmp / "cache").mkdir()
            shutil.copyfile(trie_file[0], tmp / "cache" / Path(trie_file[0]).name)
        native, pyo = [], []
        for run in range(args.runs):
            # (each run in a fresh process on both sides: the slicer's parts are read and its
            # slices' derivatives made on first use, in the first run of a process)
            subprocess.run([sys.executable, str(Path(__file__).resolve()), "--inside-native", str(cache),
                            str(args.steps), str(args.reps), str(tmp / "native.json")], check=True, stdout=sys.stderr)
            native.append(json.loads((tmp / "native.json").read_text()))
            subprocess.run([args.node, str(root / "build_scripts" / "pyodide_run.mjs"), str(pyodide), str(tmp),
                            str(tmp / "bench_grammar_profile.py"), "--inside-pyodide", str(args.steps), str(args.reps)],
                           check=True, stdout=sys.stderr)
            pyo.append(json.loads((tmp / "out.json").read_text()))
            print(f"  run {run + 1}: walk hash {native[-1]['hash']} / {pyo[-1]['hash']}", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if any(r["hash"] != native[0]["hash"] for r in native + pyo):
        raise SystemExit("bench_grammar_profile: the masks differ between runs or sides")
    fa, fb = [_fold(r["funcs"]) for r in native], [_fold(r["funcs"]) for r in pyo]
    rows = []
    for k in set().union(*fa, *fb):
        a = min(f.get(k, [0, 0.0])[1] for f in fa)
        b = min(f.get(k, [0, 0.0])[1] for f in fb)
        calls = max(f.get(k, [0])[0] for f in fa + fb)
        rows.append((b, a, calls, k))
    rows.sort(reverse=True)
    ta, tb = sum(r[1] for r in rows), sum(r[0] for r in rows)
    ca, cb = min(r["cpu_profiled"] for r in native), min(r["cpu_profiled"] for r in pyo)
    print(f"walk hash {native[0]['hash']}; Python {native[0]['python']} natively, {pyo[0]['python']} under Pyodide; "
          f"{args.runs} runs each side, minimum per function")
    print(f"\nper function, own time under cProfile (ms), the later masks of all walks; the {args.top} largest under Pyodide:\n")
    print("| function | calls | native ms | Pyodide ms | Pyodide / native |")
    print("|---|---|---|---|---|")
    for b, a, calls, k in rows[:args.top]:
        print(f"| `{k}` | {calls} | {a * 1e3:.1f} | {b * 1e3:.1f} | {b / a if a else float('inf'):.2f}x |")
    print(f"| all functions | | {ta * 1e3:.0f} | {tb * 1e3:.0f} | {tb / ta:.2f}x |")
    print(f"\n(the profiled masks' CPU time: native {ca * 1e3:.0f} ms, Pyodide {cb * 1e3:.0f} ms, {cb / ca:.2f}x)")
    print(f"\npieces without a profiler, CPU ms (minimum of {args.runs} runs x {args.reps} repetitions); "
          f"calls recorded: {native[0]['counts']}\n")
    print("| piece | native ms | Pyodide ms | Pyodide / native |")
    print("|---|---|---|---|")
    for k in native[0]["pieces"]:
        a, b = min(r["pieces"][k] for r in native), min(r["pieces"][k] for r in pyo)
        print(f"| {k} | {a * 1e3:.1f} | {b * 1e3:.1f} | {b / a:.2f}x |")
    a, b = min(r["replay"] for r in native), min(r["replay"] for r in pyo)
    print(f"| the later masks, a fresh replay (two CPU readings per walk) | {a * 1e3:.1f} | {b * 1e3:.1f} | {b / a:.2f}x |")
    a, b = min(r["per_mask"] for r in native), min(r["per_mask"] for r in pyo)
    print(f"| the same, a CPU reading around each mask (as bench_grammar.py) | {a * 1e3:.1f} | {b * 1e3:.1f} | {b / a:.2f}x |")


def _inside_pyodide(steps: str, reps: str) -> None:
    sys.path[:0] = ["/host/pkg", "/host"]
    os.environ["ANYTOK_CACHE_DIR"] = "/host/cache"
    res = measure("/host/grammars", int(steps), int(reps))
    Path("/host/out.json").write_text(json.dumps(res))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--inside-pyodide":
        _inside_pyodide(*sys.argv[2:])
    elif len(sys.argv) == 6 and sys.argv[1] == "--inside-native":
        sys.path[:0] = [str(Path(__file__).resolve().parents[2] / "pkg"), str(Path(__file__).resolve().parent)]
        Path(sys.argv[5]).write_text(json.dumps(measure(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))))
    else:
        main()

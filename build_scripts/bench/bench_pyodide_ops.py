"""Pyodide's interpreter against CPython's on plain loops: the floor under any pure-Python engine.

    .venv/bin/python build_scripts/bench/bench_pyodide_ops.py [--reps 5]

Each loop below (the operations anytok's trie walk, Earley derivatives and mask packing are made
of: list and nested list indexing, appends, dict lookups, calls, a while counter, set inserts of
tuples; and some C-level operations for comparison: big-int OR, bytes.translate, int.from_bytes,
sorting; and the same result computed several ways: the bits of 256-bit sets, a sparse
token-id list to a bitmask) runs natively and again under Pyodide's CPython in Node (web/node_modules/pyodide,
through pyodide_run.mjs, this same file), best of --reps, in CPU time: natively
`time.process_time`, under Pyodide Node's `process.cpuUsage()` (Pyodide's own `process_time`
is wall-clock time, which on a loaded machine is mostly waiting for a core; the Node process's
CPU time also counts its helper threads, a little).  The last column is Pyodide ÷ native.

What it tells: a pure-Python loop cannot run under Pyodide faster, relative to CPython, than
the interpreter's own ratio on its operations.  Grammar masks (bench_grammar.py) are such
loops through and through (trie walks, Earley derivatives), so their total Pyodide ÷ native
sits near the interpreter loops' ratio measured here, whatever the engine does.
Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

N = 200_000


def _clock():
    if sys.platform == "emscripten":
        from js import process  # (Node's: user + system microseconds of the whole process)

        def cpu():
            u = process.cpuUsage()
            return (u.user + u.system) / 1e6

        return cpu
    return time.process_time


def _loops() -> dict:
    """name -> (kind, function): "py" for interpreter loops, "c" for C-level work."""
    ints = list(range(N))
    data = bytes(range(256)) * (N // 256 + 1)
    rows = [[i % 7 for i in range(256)] for _ in range(64)]
    small = {i: i for i in range(1024)}
    pairs = {(i, i + 1): i for i in range(1024)}
    big = (1 << N) - 1
    table = bytes(range(255, -1, -1))

    def index():
        for i in range(N):
            ints[i]

    def nested_index():  # rows[state][byte], as the walk's transition lookup
        for i in range(N):
            rows[i & 63][data[i]]

    def append():
        out = []
        for i in range(N):
            out.append(i)

    def dict_get():
        get = small.get
        for i in range(N):
            get(i & 1023)

    def tuple_key_get():
        for i in range(N):
            pairs.get((i & 1023, i))

    def call():
        def f(a, b):
            return a

        for i in range(N):
            f(i, i)

    def while_counter():
        i = 0
        while i < N:
            i += 1

    def set_add_tuples():
        s = set()
        for i in range(N):
            s.add((i & 63, i & 255))

    def walk_like():  # the trie walk's loop body on a flat chain
        depth = [1 + (i & 7) for i in range(N)]
        states = [1] * 10
        out = []
        i = 0
        while i < N:
            d = depth[i]
            s = rows[states[d - 1]][data[i]]
            if s:
                out.append(i)
                states[d] = s
            i += 1

    def bigint_or():
        x = 0
        for _ in range(200):
            x |= big

    def translate():
        for _ in range(50):
            data.translate(table)

    def from_bytes():
        for _ in range(20):
            int.from_bytes(data, "little")

    def sort():
        sorted(ints, key=lambda x: -x)

    # the bits of 256-bit byte sets (a lexer state's first bytes; earley.py, slicer.py), three
    # ways, and a token-id list 1 in 20 of 200k dense turned into a bitmask two ways (slicer._bits)
    import random

    rng = random.Random(0)
    sets = [rng.getrandbits(256) & rng.getrandbits(256) & rng.getrandbits(256) for _ in range(400)]
    sparse_ids = list(range(0, N, 20))
    rng.shuffle(sparse_ids)

    def bits_shift():
        for m in sets:
            [x for x in range(256) if m >> x & 1]

    def bits_lowest():
        for m in sets:
            out = []
            while m:
                low = m & -m
                out.append(low.bit_length() - 1)
                m ^= low

    from anytok.constrain.derivatives import bits_of  # (read off the binary numeral by str.find)

    def bits_find():
        for m in sets:
            bits_of(m)

    def ids_rmw():
        for _ in range(5):
            buf = bytearray((N >> 3) + 1)
            for t in sparse_ids:
                buf[t >> 3] |= 1 << (t & 7)
            int.from_bytes(buf, "little")

    def ids_digits():
        for _ in range(5):
            digits = bytearray(b"0") * N
            for t in sparse_ids:
                digits[t] = 49
            digits.reverse()
            int(digits, 2)

    return {"list index": ("py", index), "nested list index": ("py", nested_index), "list append": ("py", append),
            "dict get": ("py", dict_get), "dict get, tuple key": ("py", tuple_key_get), "function call": ("py", call),
            "while counter": ("py", while_counter), "set add, tuples": ("py", set_add_tuples),
            "trie-walk-like loop": ("py", walk_like), "big-int OR (200k bits)": ("c", bigint_or),
            "bytes.translate": ("c", translate), "int.from_bytes": ("c", from_bytes), "sorted, key=lambda": ("c", sort),
            "set bits: m >> b & 1": ("way", bits_shift), "set bits: m & -m": ("way", bits_lowest),
            "set bits: str.find": ("way", bits_find), "ids 1/20: |= per id": ("way", ids_rmw),
            "ids 1/20: digits, int(,2)": ("way", ids_digits)}


def measure(reps: int) -> dict:
    cpu = _clock()
    out = {}
    for name, (kind, f) in _loops().items():
        best = float("inf")
        for _ in range(reps):
            t = cpu()
            f()
            best = min(best, cpu() - t)
        out[name] = (kind, best)
    return out


def main() -> None:
    import argparse
    import shutil
    import subprocess
    import tempfile

    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "build_scripts" / "bench"))
    sys.path.insert(0, str(root / "pkg"))
    from bench_common import pyodide_for, run_header

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--node", default=shutil.which("node"))
    args = ap.parse_args()
    pyodide = pyodide_for(args.node, "bench_pyodide_ops")
    print(run_header("bench_pyodide_ops.py"))
    native = measure(args.reps)
    tmp = Path(tempfile.mkdtemp(prefix="bench_ops_"))
    try:  # (anytok copied for the loops that call its functions)
        shutil.copytree(root / "pkg" / "anytok", tmp / "anytok", ignore=shutil.ignore_patterns("__pycache__"))
        subprocess.run([args.node, str(root / "build_scripts" / "pyodide_run.mjs"), str(pyodide), str(tmp),
                        str(Path(__file__).resolve()), "--inside-pyodide", str(args.reps), "/host/out.json"],
                       check=True, stdout=sys.stderr)
        pyo = json.loads((tmp / "out.json").read_text())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'loop':26} {'kind':>11} {'native ms':>10} {'Pyodide ms':>11} {'Pyodide / native':>17}")
    ratios = {"py": [], "c": [], "way": []}  # ("way": the same result computed several ways)
    for name, (kind, t) in native.items():
        p = pyo["times"][name][1]
        ratios[kind].append(p / t)
        print(f"{name:26} {dict(py='interpreter', c='C', way='ways')[kind]:>11} {t * 1e3:10.1f} {p * 1e3:11.1f} {p / t:16.2f}x")
    print(f"median Pyodide / native (Python {pyo['python']}): interpreter loops {statistics.median(ratios['py']):.2f}x "
          f"({min(ratios['py']):.2f}x-{max(ratios['py']):.2f}x), C-level work {statistics.median(ratios['c']):.2f}x")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--inside-pyodide":
        sys.path.insert(0, "/host")
        Path(sys.argv[3]).write_text(json.dumps({"times": measure(int(sys.argv[2])),
                                                 "python": sys.version.split()[0]}))
    else:
        main()

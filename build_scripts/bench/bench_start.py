"""Fast start: `anytok count FILE`, whole process from start to exit, next to the tiktoken script.

    .venv/bin/python build_scripts/bench/bench_start.py [--rounds 7] [--corpora en,code,code2,zh,ja]
                                                  [--encoding o200k_base] [--cpu N] [--markdown]

What a user pays for counting the tokens of one file from the shell, compared with what the
equivalent tiktoken script costs.  For each corpus (../shared/corpora, ~1 MB each: `en`, `code`,
`zh`, `ja`, and `code2`, the code corpus with two non-ASCII characters added — a comment line
"# café" a third of the way in and "# 10 → 20" two thirds of the way in, written to
.cache/bench/start/ — so that the text is not ASCII but almost all of it is) it times whole
processes, wall clock from spawn to exit (`subprocess.run`, its stdout captured):

* anytok: `python -m anytok count FILE --encoding o200k_base`, exactly what a user types (the
  module form; the python is .venv's when there is one, else this one);
* tiktoken: `python -c 'import tiktoken; e = tiktoken.get_encoding("o200k_base");
  print(len(e.encode_ordinary(open(F).read())))'`, the vocabulary read from the reference cache
  of build_scripts/fetch/fetch_reference.py (TIKTOKEN_CACHE_DIR, as the tests set it: no network).

The processes run without PYTHONDONTWRITEBYTECODE (it is dropped from their environment), and
each command runs once untimed before the rounds: Python then loads both libraries from their
bytecode caches, as for any installed package (pip compiles tiktoken's at install; anytok's
source tree gets its `__pycache__` on that first run; compiling anytok's modules from source
would add ~40 ms to every run).  Every process is pinned to one core (`os.sched_setaffinity`
in the child before it runs; `--cpu` picks the core, default the last one allowed).  The two
commands alternate in `--rounds` rounds (which one goes first alternates too), so a slow period
of the machine hits both; each figure is the median over the rounds, and the ratio is anytok's
median ÷ tiktoken's (at most 1: anytok is as fast or faster).  The counts the two print are compared: any difference prints MISMATCH,
and a non-zero exit status of `anytok count` counts as a failure (not timed); the script exits
with status 1 after either.

Two more processes per round and corpus (not part of the comparison) break each library's time
down, with the same python and pinning, by timestamps taken in the child (time.perf_counter, on Linux
CLOCK_MONOTONIC, which the parent shares): spawn → `import anytok` done (interpreter start and
imports), `get_encoding`, reading the file (bytes, decoded as UTF-8), the first `count`, and the last timestamp → exit as the parent sees it
(interpreter teardown).  The same for tiktoken's script (import, get_encoding, read, the first
`encode_ordinary`), and a bare `python -c pass` for scale.  "CLI, other" is anytok's whole-process
median minus the sum of its breakdown medians: the CLI's own imports and argument parsing
(a difference of medians from separate processes: a few ms either way are noise).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders

from bench_common import CORPORA, CORPORA_DIR, ROOT, cpu_model  # noqa: E402

TIKTOKEN_SCRIPT = 'import tiktoken; e = tiktoken.get_encoding({enc!r}); print(len(e.encode_ordinary(open({path!r}).read())))'

# The breakdown processes: each prints time.perf_counter() after every stage, then the count.
ANYTOK_STAGES = """\
import time
import anytok
t1 = time.perf_counter()
e = anytok.get_encoding({enc!r})
t2 = time.perf_counter()
with open({path!r}, "rb") as f:
    text = f.read().decode("utf-8", errors="surrogateescape")
t3 = time.perf_counter()
n = e.count(text)
t4 = time.perf_counter()
print(t1, t2, t3, t4, n)
"""
TIKTOKEN_STAGES = """\
import time
import tiktoken
t1 = time.perf_counter()
e = tiktoken.get_encoding({enc!r})
t2 = time.perf_counter()
text = open({path!r}).read()
t3 = time.perf_counter()
n = len(e.encode_ordinary(text))
t4 = time.perf_counter()
print(t1, t2, t3, t4, n)
"""
STAGES = ("start + import", "get_encoding", "read", "first count", "exit")

CODE2 = "code2"
CODE2_INSERTS = ("# café\n", "# 10 → 20\n")  # one non-ASCII character each


def python() -> str:
    venv = ROOT / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def corpus_path(key: str) -> Path:
    """The file of corpus `key`; `code2` is made (once) from the code corpus."""
    if key != CODE2:
        return CORPORA_DIR / CORPORA.get(key, key)
    text = (CORPORA_DIR / CORPORA["code"]).read_text(encoding="utf-8")
    for k, line in zip((1, 2), CODE2_INSERTS):
        cut = text.index("\n", len(text) * k // 3) + 1
        text = text[:cut] + line + text[cut:]
    assert sum(not c.isascii() for c in text) == 2
    out = ROOT / ".cache" / "bench" / "start" / "code_2nonascii.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    if not out.exists() or out.read_text(encoding="utf-8") != text:
        out.write_text(text, encoding="utf-8")
    return out


def run(cmd: list[str], cpu: int | None, env: dict) -> tuple[float, float, subprocess.CompletedProcess]:
    """(spawn time, end time, result) of one pinned process, stdout and stderr captured."""
    pre = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    start = time.perf_counter()
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, preexec_fn=pre)
    return start, time.perf_counter(), res


def breakdown(cmd: list[str], cpu: int | None, env: dict) -> tuple[list[float], str]:
    """Stage durations (STAGES) of one breakdown process, and the count it printed."""
    start, end, res = run(cmd, cpu, env)
    if res.returncode:
        raise SystemExit(f"breakdown process failed: {cmd}\n{res.stderr}")
    *stamps, n = res.stdout.split()
    t1, t2, t3, t4 = map(float, stamps)
    return [t1 - start, t2 - t1, t3 - t2, t4 - t3, end - t4], n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--corpora", default="en,code,code2,zh,ja")
    ap.add_argument("--encoding", default="o200k_base")
    ap.add_argument("--cpu", type=int, default=None, help="core to pin to (default: the last one allowed)")
    ap.add_argument("--markdown", action="store_true", help="also print the tables as markdown")
    args = ap.parse_args()

    from fetch_reference import tiktoken_cache

    env = dict(os.environ, TIKTOKEN_CACHE_DIR=str(tiktoken_cache()))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cpu = args.cpu
    if cpu is None and hasattr(os, "sched_getaffinity"):
        cpu = max(os.sched_getaffinity(0))
    py = python()
    ver = subprocess.run([py, "-c", "import sys, tiktoken; print(sys.version.split()[0], tiktoken.__version__)"],
                         capture_output=True, text=True, env=env, check=True).stdout.split()
    print(f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {cpu_model()}; core {cpu}; "
          f"CPython {ver[0]}; tiktoken {ver[1]}; encoding {args.encoding}; median of {args.rounds} rounds")
    print(f"python: {py}")

    keys = args.corpora.split(",")
    paths = {k: corpus_path(k) for k in keys}
    cmds = {}
    for k, p in paths.items():
        cmds[k] = {
            "anytok": [py, "-m", "anytok", "count", str(p), "--encoding", args.encoding],
            "tiktoken": [py, "-c", TIKTOKEN_SCRIPT.format(enc=args.encoding, path=str(p))],
            "anytok stages": [py, "-c", ANYTOK_STAGES.format(enc=args.encoding, path=str(p))],
            "tiktoken stages": [py, "-c", TIKTOKEN_STAGES.format(enc=args.encoding, path=str(p))],
        }
    times: dict[str, dict[str, list[float]]] = {k: {"anytok": [], "tiktoken": []} for k in keys}
    stages: dict[str, dict[str, list[list[float]]]] = {k: {"anytok": [], "tiktoken": []} for k in keys}
    bare: list[float] = []
    failures = mismatches = 0
    for k in keys:  # untimed: bytecode caches written, files in the page cache
        for cmd in cmds[k].values():
            run(cmd, cpu, env)
    for r in range(args.rounds):
        s, e, _ = run([py, "-c", "pass"], cpu, env)
        bare.append(e - s)
        for k in keys:
            counts = {}
            order = ("anytok", "tiktoken") if r % 2 == 0 else ("tiktoken", "anytok")
            for lib in order:
                s, e, res = run(cmds[k][lib], cpu, env)
                if res.returncode:
                    failures += 1
                    print(f"FAILURE: {lib} on {k} exited with status {res.returncode}: {res.stderr.strip()[-500:]}")
                    continue
                times[k][lib].append(e - s)
                counts[lib] = res.stdout.strip()
            for lib in ("anytok", "tiktoken"):
                durations, n = breakdown(cmds[k][lib + " stages"], cpu, env)
                stages[k][lib].append(durations)
                counts[lib + " stages"] = n
            if len(set(counts.values())) != 1:
                mismatches += 1
                print(f"MISMATCH on {k}: {counts}")
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)

    def med(xs: list[float]) -> float:
        return statistics.median(xs) if xs else float("nan")

    sizes = {k: paths[k].stat().st_size / 1e6 for k in keys}
    rows = []
    for k in keys:
        a, t = med(times[k]["anytok"]), med(times[k]["tiktoken"])
        rows.append([k, f"{sizes[k]:.2f}", f"{a:.3f}", f"{t:.3f}", f"{a / t:.2f}"])
    head = ["corpus", "MB", "anytok s", "tiktoken s", "anytok / tiktoken"]
    print(f"\nWhole process, median of {args.rounds} (bare `python -c pass`: {med(bare):.3f} s):")
    print_table(head, rows, args.markdown)

    for lib in ("anytok", "tiktoken"):
        brow = []
        for k in keys:
            cols = [med([d[i] for d in stages[k][lib]]) for i in range(len(STAGES))]
            row = [k] + [f"{c * 1e3:.0f}" for c in cols] + [f"{sum(cols) * 1e3:.0f}"]
            if lib == "anytok":
                row.append(f"{(med(times[k]['anytok']) - sum(cols)) * 1e3:.0f}")
            brow.append(row)
        head = ["corpus"] + [f"{s} ms" for s in STAGES] + ["sum ms"] + (["CLI, other ms"] if lib == "anytok" else [])
        print(f"\n{lib}, stage by stage (breakdown processes, medians):")
        print_table(head, brow, args.markdown)
    if failures or mismatches:
        print(f"\n{failures} failures, {mismatches} mismatches")
        sys.exit(1)
    print("\ncounts: anytok's equal tiktoken's on every corpus and round")


def print_table(head: list[str], rows: list[list[str]], markdown: bool) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    print("  ".join(h.rjust(w) for h, w in zip(head, widths)))
    for r in rows:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)))
    if markdown:
        print()
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()

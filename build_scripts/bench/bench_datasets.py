"""`anytok tokenize` throughput, 1 and 2 workers, next to a tiktoken + multiprocessing script
doing the same llm.c-style job (not a test: prints a table).

    .venv/bin/python build_scripts/bench/bench_datasets.py [--mb 50] [--encoding gpt2] [--shard-tokens 10000000]
                                                     [--workers 1,2] [--rounds 3] [--markdown]

The input: a `.jsonl` file of about `--mb` MB (written once to .cache/bench/datasets/), documents of
500 to 8,000 characters cut in turn from the four corpora of ../shared/corpora (English, Python,
Chinese, Japanese), repeated until the size is reached.  The job, as llm.c's dev/data/fineweb.py
does it: each document preceded by `<|endoftext|>`, special-token text encoded as text, shards of
exactly `--shard-tokens` tokens (the last fewer) in llm.c's .bin layout (uint16 for gpt2).

* anytok: `python -m anytok tokenize DATA.jsonl -o OUT --format llmc -e ENC -j N --shard-tokens S -q`,
  a whole process, wall clock;
* tiktoken: a script (written below, run as a whole process with the same python) that reads the
  .jsonl, tokenizes the documents in a `multiprocessing.Pool(N)` with `imap(chunksize=16)` and
  `encode_ordinary`, as fineweb.py does, and writes the same shards with numpy.  Its vocabulary
  comes from the reference cache of build_scripts/fetch/fetch_reference.py (no network).

Each of the four commands (2 tools x 1 and 2 workers) runs once per round, in an order that
rotates from round to round, so that a slow period of the (shared, virtual) machine hits all of
them; each figure is the median over `--rounds`.  Every output is compared byte for byte with
the first (a difference prints MISMATCH and the exit status is 1).  Printed: each run on stderr;
then the medians: seconds, tokens/s and MB/s of input; the speed-up of N workers over the first
`--workers` value for each tool, and anytok's throughput over tiktoken's at each N.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders
from bench_common import CORPORA, CORPORA_DIR, ROOT, cpu_model  # noqa: E402
from fetch_reference import tiktoken_cache  # noqa: E402

WORK = ROOT / ".cache" / "bench" / "datasets"

TIKTOKEN_SCRIPT = r'''
import json, multiprocessing as mp, os, sys
import numpy as np
import tiktoken

data, out, name, shard, nproc = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
enc = tiktoken.get_encoding(name)
eot = enc._special_tokens["<|endoftext|>"]
wide = enc.n_vocab > 65536
dtype = np.uint32 if wide else np.uint16

def docs():
    with open(data, encoding="utf-8") as f:
        for line in f:
            yield json.loads(line)["text"]

def tok(text):
    a = np.array([eot] + enc.encode_ordinary(text), dtype=np.int64)
    return a.astype(dtype)

def write(i, arr):
    head = np.zeros(256, dtype="<i4")
    head[0], head[1], head[2] = (20240801, 7, len(arr)) if wide else (20240520, 1, len(arr))
    with open(os.path.join(out, "shard_%06d.bin" % i), "wb") as f:
        f.write(head.tobytes())
        f.write(arr.astype(dtype).tobytes())

if __name__ == "__main__":
    os.makedirs(out, exist_ok=True)
    buf = np.empty(shard, dtype=dtype)
    n = 0
    index = 0
    total = 0
    with mp.Pool(nproc) as pool:
        for t in pool.imap(tok, docs(), chunksize=16):
            total += len(t)
            while len(t):
                take = min(shard - n, len(t))
                buf[n:n + take] = t[:take]
                n += take
                t = t[take:]
                if n == shard:
                    write(index, buf)
                    index += 1
                    n = 0
    if n:
        write(index, buf[:n])
    print(total)
'''


def build_input(mb: float) -> Path:
    import random

    WORK.mkdir(parents=True, exist_ok=True)
    path = WORK / f"data_{mb:g}mb.jsonl"
    if path.exists():
        return path
    texts = [(CORPORA_DIR / n).read_text(encoding="utf-8") for n in CORPORA.values()]
    rng = random.Random(21)
    target = int(mb * 1_000_000)
    size = 0
    pos = [0] * len(texts)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        k = 0
        while size < target:
            i = k % len(texts)
            k += 1
            n = rng.randint(500, 8000)
            t = texts[i]
            if pos[i] + n > len(t):
                pos[i] = 0
            line = json.dumps({"text": t[pos[i]:pos[i] + n]}, ensure_ascii=False) + "\n"
            pos[i] += n
            f.write(line)
            size += len(line.encode("utf-8"))
    os.replace(tmp, path)
    return path


def run(cmd, env=None) -> tuple[float, str]:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    secs = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, cmd))}\n{r.stderr}")
    return secs, r.stdout


def shards(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("shard_*.bin"))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=50)
    ap.add_argument("--encoding", default="gpt2")
    ap.add_argument("--shard-tokens", type=int, default=10_000_000)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    workers = [int(w) for w in args.workers.split(",")]
    data = build_input(args.mb)
    nbytes = data.stat().st_size
    py = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv" / "bin" / "python").exists() else sys.executable
    env = dict(os.environ, TIKTOKEN_CACHE_DIR=str(tiktoken_cache()))
    script = WORK / "tiktoken_llmc.py"
    script.write_text(TIKTOKEN_SCRIPT)
    import statistics

    combos = [(tool, n) for n in workers for tool in ("anytok", "tiktoken")]
    times: dict = {c: [] for c in combos}
    ref = None
    tokens = 0
    status = 0
    for r in range(args.rounds):
        k = r % len(combos)
        for tool, n in combos[k:] + combos[:k]:
            out = WORK / f"out_{tool}_{n}"
            shutil.rmtree(out, ignore_errors=True)
            if tool == "anytok":
                cmd = [py, "-m", "anytok", "tokenize", str(data), "-o", str(out), "--format", "llmc", "-e",
                       args.encoding, "-j", str(n), "--shard-tokens", str(args.shard_tokens), "-q"]
            else:
                cmd = [py, str(script), str(data), str(out), args.encoding, str(args.shard_tokens), str(n)]
            secs, _ = run(cmd, env)
            files = shards(out)
            if ref is None:
                ref = files
                tokens = sum((len(b) - 1024) // (2 if b[:4] == (20240520).to_bytes(4, "little") else 4)
                             for b in files.values())
            elif files != ref:
                print(f"MISMATCH: {tool} with {n} worker(s) wrote other bytes", file=sys.stderr)
                status = 1
            times[(tool, n)].append(secs)
            print(f"round {r + 1}: {tool:8} {n} worker(s): {secs:7.2f} s  {tokens / secs / 1e6:6.3f} M tokens/s  "
                  f"{nbytes / secs / 1e6:6.2f} MB/s", file=sys.stderr)
    rows = [{"tool": t, "workers": n, "seconds": statistics.median(times[(t, n)]), "tokens": tokens}
            for t, n in combos]
    by = {(r["tool"], r["workers"]): r for r in rows}
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"{now}; {cpu_model()}, {os.cpu_count()} CPUs; Python {platform.python_version()}; "
          f"input {nbytes / 1e6:.1f} MB ({data.name}), {tokens:,} tokens ({args.encoding}), "
          f"{len(ref)} shards of {args.shard_tokens:,} tokens; medians of {args.rounds} rounds; "
          f"outputs {'identical' if not status else 'DIFFER'}")
    head = ["workers", "anytok s", "anytok tokens/s", "anytok MB/s", "tiktoken s", "tiktoken tokens/s",
            "anytok / tiktoken", "anytok speed-up", "tiktoken speed-up"]
    lines = []
    for n in workers:
        a, t = by[("anytok", n)], by[("tiktoken", n)]
        a1, t1 = by[("anytok", workers[0])], by[("tiktoken", workers[0])]
        lines.append([str(n), f"{a['seconds']:.2f}", f"{a['tokens'] / a['seconds']:,.0f}",
                      f"{nbytes / a['seconds'] / 1e6:.2f}", f"{t['seconds']:.2f}",
                      f"{t['tokens'] / t['seconds']:,.0f}", f"{t['seconds'] / a['seconds']:.3f}",
                      f"{a1['seconds'] / a['seconds']:.2f}x", f"{t1['seconds'] / t['seconds']:.2f}x"])
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for line in lines:
            print("| " + " | ".join(line) + " |")
    else:
        widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(head)]
        print("  ".join(h.rjust(w) for h, w in zip(head, widths)))
        for line in lines:
            print("  ".join(c.rjust(w) for c, w in zip(line, widths)))
    return status


if __name__ == "__main__":
    sys.exit(main())

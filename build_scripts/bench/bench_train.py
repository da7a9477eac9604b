"""Benchmark BPE training: anytok.train against tokenizers' BpeTrainer, rustbpe and bpeasy.

    python build_scripts/bench/bench_train.py                      # the four corpora, vocab 8192 and 32768
    python build_scripts/bench/bench_train.py --scale 10           # the corpora 10 times over (~40 MB)
    python build_scripts/bench/bench_train.py --vocab 8192 --trainers anytok-hf,tokenizers

Each trainer runs in its own subprocess pinned to one CPU, with RAYON_NUM_THREADS=1 for the
compiled ones, and reports the CPU time (user + system) of reading the files and training, and
the process's peak RSS (interpreter and imports included).  The table gives both as ratios to
`tokenizers`, and whether anytok's result is identical to its reference's (anytok-hf to
tokenizers, anytok-tiktoken to rustbpe).

How each trainer reads the corpus: anytok-hf and tokenizers get the files (read line by line,
as `Tokenizer.train(files)` does); anytok-tiktoken, rustbpe and bpeasy get each file as one text.
All split with o200k_base's pattern.  bpeasy is given max_token_length=128.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders
from bench_common import CORPORA, CORPORA_DIR, ROOT, cpu_model  # noqa: E402

TRAINERS = ["anytok-hf", "tokenizers", "anytok-tiktoken", "rustbpe", "bpeasy"]
REFERENCE = {"anytok-hf": "tokenizers", "anytok-tiktoken": "rustbpe"}


def _o200k() -> str:
    sys.path.insert(0, str(ROOT / "pkg"))
    from anytok.train import resolve_pattern

    return resolve_pattern("o200k_base")


def _digest(items) -> str:
    h = hashlib.sha256()
    for item in items:
        h.update(repr(item).encode("utf-8"))
    return h.hexdigest()[:16]


def worker(name: str, vocab_size: int, files: list[str]) -> dict:
    """Train once in this process; return times, peak RSS and a digest of the result."""
    pattern = _o200k()
    if name.startswith("anytok"):
        import anytok

        start = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        tok = anytok.train(files, vocab_size=vocab_size, style=name.split("-")[1], pattern=pattern)
        wall = time.perf_counter() - t0
        end = resource.getrusage(resource.RUSAGE_SELF)
        if tok.style == "hf":
            doc = tok.tokenizer_json()["model"]
            digest = _digest([sorted(doc["vocab"].items()), doc["merges"]])
        else:
            digest = _digest(tok.token_bytes())
    elif name == "tokenizers":
        from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

        start = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=0, special_tokens=[],
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
        tok.train(files, trainer)
        wall = time.perf_counter() - t0
        end = resource.getrusage(resource.RUSAGE_SELF)
        doc = json.loads(tok.to_str())["model"]
        digest = _digest([sorted(doc["vocab"].items()), doc["merges"]])
    elif name == "rustbpe":
        import rustbpe

        start = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        texts = [Path(f).read_text(encoding="utf-8") for f in files]
        tok = rustbpe.Tokenizer()
        tok.train_from_iterator(texts, vocab_size, pattern=pattern)
        wall = time.perf_counter() - t0
        end = resource.getrusage(resource.RUSAGE_SELF)
        digest = _digest([bytes(b) for b, _ in sorted(tok.get_mergeable_ranks(), key=lambda kv: kv[1])])
    elif name == "bpeasy":
        import bpeasy

        start = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        texts = [Path(f).read_text(encoding="utf-8") for f in files]
        vocab = bpeasy.train_bpe(iter(texts), pattern, 128, vocab_size)
        wall = time.perf_counter() - t0
        end = resource.getrusage(resource.RUSAGE_SELF)
        digest = _digest(sorted(vocab.items(), key=lambda kv: kv[1]))
    else:
        raise SystemExit(f"unknown trainer {name}")
    cpu = (end.ru_utime - start.ru_utime) + (end.ru_stime - start.ru_stime)
    return {"cpu": cpu, "wall": wall, "rss_mb": end.ru_maxrss / 1024, "digest": digest}


def run_worker(name: str, vocab_size: int, files: list[str], cpu: int) -> dict:
    env = dict(os.environ, RAYON_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", PYTHONPATH=str(ROOT / "pkg"))
    cmd = [sys.executable, __file__, "--worker", name, "--vocab", str(vocab_size), "--cpu", str(cpu), *files]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"{name} failed:\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vocab", default="8192,32768", help="vocabulary sizes, comma-separated")
    ap.add_argument("--trainers", default=",".join(TRAINERS), help=f"comma-separated subset of {','.join(TRAINERS)}")
    ap.add_argument("--scale", type=int, default=1, help="train on the corpora this many times over")
    ap.add_argument("--repeat", type=int, default=1, help="runs per trainer; the fastest is shown")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--cpu", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("files", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:
        if args.cpu is not None and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {args.cpu})
        print(json.dumps(worker(args.worker, int(args.vocab), args.files)))
        return

    names = [n for n in args.trainers.split(",") if n]
    vocabs = [int(v) for v in args.vocab.split(",")]
    cpu = min(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for key, fname in CORPORA.items():
            path = CORPORA_DIR / fname
            if args.scale > 1:
                data = path.read_bytes()
                if not data.endswith(b"\n"):
                    data += b"\n"
                path = Path(tmp) / fname
                path.write_bytes(data * args.scale)
            files.append(str(path))
        mb = sum(os.path.getsize(f) for f in files) / 1e6
        started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        print(f"# bench_train.py, {started}, {cpu_model()}, one CPU, RAYON_NUM_THREADS=1, Python "
              f"{sys.version.split()[0]}; corpus {len(files)} files, {mb:.1f} MB; pattern o200k_base")
        print(f"# command: python build_scripts/bench/bench_train.py {' '.join(sys.argv[1:])}".rstrip())
        print()
        print("| vocab | trainer | CPU s | wall s | peak RSS MB | CPU / tokenizers | RSS / tokenizers | identical to |")
        print("|---:|---|---:|---:|---:|---:|---:|---|")
        for vocab in vocabs:
            results = {}
            for name in names:
                runs = [run_worker(name, vocab, files, cpu if cpu is not None else 0) for _ in range(args.repeat)]
                results[name] = min(runs, key=lambda r: r["cpu"])
            base = results.get("tokenizers")
            for name in names:
                r = results[name]
                ratio_cpu = f"{r['cpu'] / base['cpu']:.2f}x" if base else "-"
                ratio_rss = f"{r['rss_mb'] / base['rss_mb']:.2f}x" if base else "-"
                ref = REFERENCE.get(name)
                same = "-"
                if ref in results:
                    same = f"{ref}: " + ("yes" if results[ref]["digest"] == r["digest"] else "NO")
                print(f"| {vocab:,} | {name} | {r['cpu']:.2f} | {r['wall']:.2f} | {r['rss_mb']:.0f} | {ratio_cpu} | "
                      f"{ratio_rss} | {same} |", flush=True)


if __name__ == "__main__":
    main()

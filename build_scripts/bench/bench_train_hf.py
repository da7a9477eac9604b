"""Benchmark tokenizers' trainers against anytok's: BPE (plain and byte-level), WordPiece, WordLevel, Unigram.

    python build_scripts/bench/bench_train_hf.py                         # the four corpora (~4 MB)
    python build_scripts/bench/bench_train_hf.py --kinds unigram --vocab 8000 --scale 10

Each run is its own subprocess pinned to one CPU (tokenizers with RAYON_NUM_THREADS=1 and
TOKENIZERS_PARALLELISM=false) and reports CPU time (user + system: reading the files, cutting
them into words, training) and the process's peak RSS (interpreter and imports included), with
ratios to `tokenizers`.  Both read the files line by line; anytok's bytecode is compiled
before the runs (as an installed wheel has it).  The setups:

* bpe: no normalizer, Whitespace pre-tokenizer, BpeTrainer(vocab_size);
* bytelevel: ByteLevel pre-tokenizer (GPT-2's), BpeTrainer(vocab_size, initial_alphabet=the 256
  byte characters) -- not in the default set of kinds, ask for it with --kinds;
* wordpiece: BertNormalizer, BertPreTokenizer, WordPieceTrainer(vocab_size, special tokens);
* wordlevel: Whitespace, WordLevelTrainer(vocab_size);
* unigram: NFKC, Metaspace, UnigramTrainer(vocab_size, unk_token).

"anytok.hf" runs the same code with `anytok.hf` in place of `tokenizers` (its Tokenizer cuts the
words, `anytok.hf.trainers` trains); "anytok-words" cuts words with `anytok.pipeline`'s
normalizers and pre-tokenizers and calls `anytok.train.bpe_hf` / `wordpiece` / `wordlevel` /
`unigram_hf` directly (the trainers' own cost).  "same" says
whether the result equals tokenizers' (BPE and WordPiece: the same set of tokens; WordLevel:
identical; Unigram: the same pieces), a sanity check: WordPiece's set can differ because
tokenizers numbers the "##" characters in a randomly seeded hash order and breaks ties of
pair counts by those numbers (tests/test_train_hf.py pins that draw and compares exactly).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders
from bench_common import CORPORA, CORPORA_DIR, ROOT, cpu_model  # noqa: E402

KINDS = ["bpe", "wordpiece", "wordlevel", "unigram", "bytelevel"]
DEFAULT_KINDS = ["bpe", "wordpiece", "wordlevel", "unigram"]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _lines(files):
    for path in files:
        with open(path, encoding="utf-8") as f:
            yield from f


def _summary(kind: str, model: dict) -> list:
    if kind in ("bpe", "wordpiece", "bytelevel"):
        return sorted(model["vocab"])
    if kind == "wordlevel":
        return sorted(model["vocab"].items())
    return sorted(p for p, _ in model["vocab"])


def run_api(name: str, kind: str, vocab_size: int, files: list[str]) -> list:
    """Train through the tokenizers API: `tokenizers` itself, or anytok.hf (the same code)."""
    if name == "tokenizers":
        from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers
    else:
        from anytok.hf import Tokenizer, models, normalizers, pre_tokenizers, trainers

    if kind == "bpe":
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False)
    elif kind == "bytelevel":
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    elif kind == "wordpiece":
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer()
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=SPECIALS, show_progress=False)
    elif kind == "wordlevel":
        tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        trainer = trainers.WordLevelTrainer(vocab_size=vocab_size, show_progress=False)
    else:
        tok = Tokenizer(models.Unigram())
        tok.normalizer = normalizers.NFKC()
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        trainer = trainers.UnigramTrainer(vocab_size=vocab_size, unk_token="<unk>", show_progress=False)
    tok.train(files, trainer)
    return _summary(kind, json.loads(tok.to_str())["model"])


def run_words(kind: str, vocab_size: int, files: list[str]) -> list:
    """anytok's algorithms on words cut by anytok.pipeline (no tokenizers API around them)."""
    from anytok.pipeline import normalizers as N
    from anytok.pipeline import pre_tokenizers as P

    if kind == "wordpiece":
        norm, pre = N.BertNormalizer(), P.BertPreTokenizer()
    elif kind == "bytelevel":
        norm, pre = None, P.ByteLevel()
    elif kind == "unigram":
        norm, pre = N.NFKC(), P.Metaspace()
    else:
        norm, pre = None, P.Whitespace()
    counts: Counter = Counter()
    update = counts.update
    split = pre.split
    if norm is None:
        for line in _lines(files):
            update(split(line, True))
    else:
        normalize = norm.normalize
        for line in _lines(files):
            update(split(normalize(line), True))
    if kind in ("bpe", "bytelevel"):
        from anytok.train.bpe_hf import train_bpe

        alphabet = list(P.BYTE_TO_CHAR) if kind == "bytelevel" else ()
        got = train_bpe(counts, vocab_size=vocab_size, initial_alphabet=alphabet)
        return _summary(kind, {"vocab": got.vocab})
    if kind == "wordpiece":
        from anytok.train.wordpiece import train_wordpiece

        got = train_wordpiece(counts, vocab_size=vocab_size, special_tokens=SPECIALS)
        return _summary(kind, {"vocab": got.vocab})
    if kind == "wordlevel":
        from anytok.train.wordlevel import train_wordlevel

        return _summary(kind, {"vocab": train_wordlevel(counts, vocab_size=vocab_size)})
    from anytok.train.unigram_hf import train_unigram

    got = train_unigram(counts, vocab_size=vocab_size, unk_token="<unk>")
    return _summary(kind, {"vocab": got.vocab})


def worker(name: str, kind: str, vocab_size: int, files: list[str]) -> dict:
    start = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    if name == "anytok-words":
        summary = run_words(kind, vocab_size, files)
    else:
        summary = run_api(name, kind, vocab_size, files)
    wall = time.perf_counter() - t0
    end = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (end.ru_utime - start.ru_utime) + (end.ru_stime - start.ru_stime)
    return {"cpu": cpu, "wall": wall, "rss_mb": end.ru_maxrss / 1024, "summary": summary}


def run_worker(name: str, kind: str, vocab_size: int, files: list[str], cpu: int) -> dict:
    env = dict(os.environ, RAYON_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", PYTHONPATH=str(ROOT / "pkg"))
    cmd = [sys.executable, __file__, "--worker", name, "--kinds", kind, "--vocab", str(vocab_size), "--cpu", str(cpu),
           *files]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"{name} {kind} failed:\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kinds", default=",".join(DEFAULT_KINDS), help=f"comma-separated subset of {','.join(KINDS)}")
    ap.add_argument("--vocab", type=int, default=8000, help="vocabulary size (default 8000)")
    ap.add_argument("--scale", type=int, default=1, help="train on the corpora this many times over")
    ap.add_argument("--runs", default="anytok.hf,anytok-words", help="anytok runs: anytok.hf, anytok-words")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--cpu", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("files", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:
        if args.cpu is not None and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {args.cpu})
        print(json.dumps(worker(args.worker, args.kinds, args.vocab, args.files)))
        return

    kinds = [k for k in args.kinds.split(",") if k]
    for k in kinds:
        if k not in KINDS:
            raise SystemExit(f"unknown kind {k!r}: use {','.join(KINDS)}")
    cpu = min(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
    # Bytecode compiled beforehand, as an installed wheel has it (with PYTHONDONTWRITEBYTECODE
    # set, every worker would otherwise compile anytok's sources again).
    import compileall

    compileall.compile_dir(str(ROOT / "pkg" / "anytok"), quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for fname in CORPORA.values():
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
        print(f"# bench_train_hf.py, {started}, {cpu_model()}, one CPU, RAYON_NUM_THREADS=1, Python "
              f"{sys.version.split()[0]}; corpus {len(files)} files, {mb:.1f} MB; vocab {args.vocab}")
        print(f"# command: python build_scripts/bench/bench_train_hf.py {' '.join(sys.argv[1:])}".rstrip())
        print()
        print("| trainer | run | CPU s | peak RSS MB | CPU / tokenizers | RSS / tokenizers | same |")
        print("|---|---|---:|---:|---:|---:|---|")
        for kind in kinds:
            ref = run_worker("tokenizers", kind, args.vocab, files, cpu)
            print(f"| {kind} | tokenizers | {ref['cpu']:.2f} | {ref['rss_mb']:.0f} | 1.00x | 1.00x | - |", flush=True)
            for name in args.runs.split(","):
                got = run_worker(name, kind, args.vocab, files, cpu)
                same = "yes" if ref["summary"] == got["summary"] else "NO"
                print(f"| {kind} | {name} | {got['cpu']:.2f} | {got['rss_mb']:.0f} | {got['cpu'] / ref['cpu']:.2f}x | "
                      f"{got['rss_mb'] / ref['rss_mb']:.2f}x | {same} |", flush=True)


if __name__ == "__main__":
    main()

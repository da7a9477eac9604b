"""CPU time and peak memory of anytok's SentencePiece trainers vs sentencepiece's, per kind.

    python build_scripts/bench/bench_train_sentencepiece.py [--size 300000] [--vocab 4000] [--corpus PATH]
    python build_scripts/bench/bench_train_sentencepiece.py --memory 100
    python build_scripts/bench/bench_train_sentencepiece.py --repeat 40 --kinds bpe,char,word

Each training runs in its own process (single thread: num_threads=1) so that its peak RSS is
its own; both write the same model (checked).  Prints one line per kind with the ratios.
--memory MB: Unigram with the default options (nmt_nfkc: anytok gets sentencepiece's table
from the model sentencepiece wrote) on an input of MB megabytes made of the four corpora
repeated, written to a temporary directory.
--repeat MB: the --kinds with the options above on that same input of MB megabytes (in place
of --corpus and --size).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import resource, sys, time
kind, path, vocab, prefix, who = sys.argv[1:6]
opts = dict(model_type=kind, vocab_size=int(vocab), num_threads=1, normalization_rule_name="identity")
if kind == "unigram":
    opts["hard_vocab_limit"] = False
if kind == "default":  # sentencepiece's defaults (Unigram, nmt_nfkc, vocab 8000), one thread
    opts = dict(num_threads=1)
    if who != "spm":
        from anytok.train.sentencepiece import charsmap_of
        opts["precompiled_charsmap"] = charsmap_of(sys.argv[6])
t = time.process_time()
if who == "spm":
    import sentencepiece as spm
    spm.SentencePieceTrainer.train(input=path, model_prefix=prefix, minloglevel=2, **opts)
else:
    from anytok.train.sentencepiece import train
    train(path, model_prefix=prefix, **opts).save(prefix + ".model")
cpu = time.process_time() - t
print(cpu, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def run(who: str, kind: str, path: str, vocab: int, prefix: str, *extra: str) -> tuple[float, float]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "pkg"))
    out = subprocess.run([sys.executable, "-c", CHILD, kind, path, str(vocab), prefix, who, *extra],
                         check=True, capture_output=True, text=True, env=env).stdout.split()
    return float(out[0]), int(out[1]) / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=300_000, help="bytes of the corpus to train on")
    ap.add_argument("--vocab", type=int, default=4000)
    ap.add_argument("--corpus", default=os.path.join(os.environ.get("ANYTOK_CORPORA", str(ROOT.parent / "shared" / "corpora")), "en_emma.txt"))
    ap.add_argument("--kinds", default="bpe,unigram,char,word")
    ap.add_argument("--memory", type=float, metavar="MB",
                    help="instead: Unigram with the default options on MB megabytes of the corpora")
    ap.add_argument("--repeat", type=float, metavar="MB",
                    help="train the kinds on MB megabytes of the corpora repeated, not on --corpus")
    args = ap.parse_args()
    if args.memory:
        memory(args.memory, Path(args.corpus).parent)
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "input.txt")
        if args.repeat:
            n, size = repeated(path, args.repeat, Path(args.corpus).parent)
            print(f"the {n} corpora repeated: {size:,} bytes, vocab {args.vocab}, num_threads=1")
        else:
            data = Path(args.corpus).read_bytes()[: args.size]
            data = data[: data.rindex(b"\n") + 1]
            Path(path).write_bytes(data)
            print(f"{Path(args.corpus).name}, first {len(data):,} bytes, vocab {args.vocab}, num_threads=1")
        for kind in args.kinds.split(","):
            s_cpu, s_mem = run("spm", kind, path, args.vocab, os.path.join(tmp, "s"))
            a_cpu, a_mem = run("anytok", kind, path, args.vocab, os.path.join(tmp, "a"))
            # The recorded model_prefix differs; compare the pieces.
            from anytok.sentencepiece.model_proto import parse_model_proto
            ps = parse_model_proto(Path(tmp, "s.model").read_bytes())
            pa = parse_model_proto(Path(tmp, "a.model").read_bytes())
            same = (ps.pieces, ps.scores, ps.types) == (pa.pieces, pa.scores, pa.types)
            print(f"{kind:8} sentencepiece {s_cpu:7.2f} s {s_mem:7.1f} MiB | anytok {a_cpu:7.2f} s "
                  f"{a_mem:7.1f} MiB | time x{a_cpu / max(s_cpu, 1e-9):.1f}, memory x{a_mem / s_mem:.1f}"
                  f"{'' if same else '  (PIECES DIFFER)'}")


def repeated(path: str, megabytes: float, corpora: Path) -> tuple[int, int]:
    """Write the corpora (*.txt in `corpora`, by name) one after another, again and again, to
    `path`, up to `megabytes` (the last one cut at a line's end); the number of corpora and
    the bytes written."""
    parts = [p.read_bytes() for p in sorted(corpora.glob("*.txt"))]
    want = int(megabytes * 1_000_000)
    size = 0
    with open(path, "wb") as f:
        while size < want:
            for part in parts:
                part = part[: want - size]
                part = part[: part.rindex(b"\n") + 1] if b"\n" in part else b""
                if not part:
                    break
                f.write(part)
                size += len(part)
            else:
                continue
            break
    return len(parts), size


def memory(megabytes: float, corpora: Path) -> None:
    from anytok.sentencepiece.model_proto import parse_model_proto
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "input.txt")
        n, size = repeated(path, megabytes, corpora)
        print(f"the {n} corpora repeated: {size:,} bytes; Unigram, default options, num_threads=1")
        s_cpu, s_mem = run("spm", "default", path, 0, os.path.join(tmp, "s"))
        a_cpu, a_mem = run("anytok", "default", path, 0, os.path.join(tmp, "a"), os.path.join(tmp, "s.model"))
        ps = parse_model_proto(Path(tmp, "s.model").read_bytes())
        pa = parse_model_proto(Path(tmp, "a.model").read_bytes())
        same = (ps.pieces, ps.scores, ps.types) == (pa.pieces, pa.scores, pa.types)
        print(f"unigram  sentencepiece {s_cpu:7.2f} s {s_mem:7.1f} MiB | anytok {a_cpu:7.2f} s "
              f"{a_mem:7.1f} MiB | time x{a_cpu / max(s_cpu, 1e-9):.1f}, memory x{a_mem / s_mem:.1f}"
              f"{'' if same else '  (PIECES DIFFER)'}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "pkg"))
    main()

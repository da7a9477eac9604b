"""Benchmark anytok's SentencePiece models against the `sentencepiece` library.

    python build_scripts/bench/bench_sentencepiece.py [--models a.model,b.model] [--repeat 3]

Each corpus of ../shared/corpora is encoded in one call (`EncodeAsIds(text)` vs
`SentencePieceTokenizer.encode(text)`), single-threaded; the best of `--repeat` runs is kept.
anytok's per-model caches are emptied before every run ("cold"), so repeated text within one
call is the only reuse.  Prints a Markdown table of MiB/s and the ratio anytok / sentencepiece,
after checking that the ids are identical.  Models come from fetch_sentencepiece_models.py.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "pkg"))
sys.path[:0] = [str(ROOT / "build_scripts" / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders

from fetch_sentencepiece_models import fetch  # noqa: E402

from anytok.sentencepiece.model_file import load_sentencepiece_model  # noqa: E402

CORPORA_DIR = Path(os.environ.get("ANYTOK_CORPORA", ROOT.parent / "shared" / "corpora"))
CORPORA = ["en_emma.txt", "code_cpython_stdlib.txt", "zh_peoplesdaily_1998.txt", "ja_debian_reference.txt"]
DEFAULT_MODELS = "mistral_instruct_tokenizer_240323.model.v3,tokenizer.model.v1,test_model.model,test_ja_model.model"


def _clear(tok) -> None:
    cache = getattr(tok.model, "_cache", None)
    if cache is not None:
        cache.clear()


def main() -> None:
    import sentencepiece as spm

    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=DEFAULT_MODELS)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    models = fetch()
    print("| model | corpus | sentencepiece MiB/s | anytok MiB/s | ratio |")
    print("|---|---|---|---|---|")
    for name in args.models.split(","):
        data = (models / name).read_bytes()
        tok = load_sentencepiece_model(data, name=name)
        sp = spm.SentencePieceProcessor(model_proto=data)
        for corpus in CORPORA:
            text = (CORPORA_DIR / corpus).read_text(encoding="utf-8")
            mib = len(text.encode("utf-8")) / 2**20
            t_sp, t_at = [], []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                expected = sp.EncodeAsIds(text)
                t_sp.append(time.perf_counter() - t0)
                _clear(tok)
                t0 = time.perf_counter()
                got = tok.encode(text)
                t_at.append(time.perf_counter() - t0)
                if got != expected:
                    raise SystemExit(f"{name} {corpus}: ids differ")
            s, a = min(t_sp), min(t_at)
            print(f"| {name} | {corpus.split('_')[0]} | {mib / s:.2f} | {mib / a:.2f} | {s / a:.2f} |", flush=True)


if __name__ == "__main__":
    main()

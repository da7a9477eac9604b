"""`python -m anytok train` against the references, through its fixed interface."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import anytok
from test_train import CL100K, O200K, hf_tokenizer, rustbpe_tokens


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "anytok", "train", *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def files(corpora, tmp_path_factory):
    folder = tmp_path_factory.mktemp("train_cli")
    out = []
    for key, text in corpora.items():
        path = folder / f"{key}.txt"
        path.write_text(text[:30_000], encoding="utf-8")
        out.append(path)
    return out


def test_hf_style_writes_what_bpetrainer_trains(files, tmp_path):
    out = tmp_path / "tokenizer.json"
    r = run(*map(str, files), "--vocab-size", "1500", "--style", "hf", "--special", "<|endoftext|>",
            "--special", "<pad>", "--min-frequency", "2", "-o", str(out))
    assert r.returncode == 0, r.stderr
    ref = hf_tokenizer(O200K, 1500, files=files, specials=["<|endoftext|>", "<pad>"], min_frequency=2)
    assert json.loads(out.read_text(encoding="utf-8")) == json.loads(ref.to_str())


def test_tiktoken_style_writes_what_rustbpe_trains(files, tmp_path):
    want, _ = rustbpe_tokens([p.read_text(encoding="utf-8") for p in files], 1200, CL100K)
    out = tmp_path / "mine.tiktoken"
    r = run(*map(str, files), "--vocab-size", "1200", "--style", "tiktoken", "--pattern", "cl100k_base", "-o", str(out))
    assert r.returncode == 0, r.stderr
    ranks = anytok.load_tiktoken_bpe(str(out))
    assert sorted(ranks, key=ranks.get) == want
    atok = tmp_path / "mine.atok"
    r = run(*map(str, files), "--vocab-size", "1200", "--style", "tiktoken", "--pattern", "cl100k_base",
            "--special", "<|endoftext|>", "-o", str(atok))
    assert r.returncode == 0, r.stderr
    enc = anytok.load(str(atok))
    assert enc._pat_str == CL100K and enc._special_tokens == {"<|endoftext|>": 1200}
    assert enc._mergeable_ranks == ranks


def test_hf_style_atok_and_regex_pattern(files, tmp_path):
    pattern = r" ?\p{L}+| ?\p{N}+|\s+|[^\s\p{L}\p{N}]+"
    out = tmp_path / "t.atok"
    r = run(*map(str, files), "--vocab-size", "700", "--style", "hf", "--pattern", pattern, "-o", str(out))
    assert r.returncode == 0, r.stderr
    ref = hf_tokenizer(pattern, 700, files=files)
    tok = anytok.load(str(out))
    text = "Hello, world: 12345 — 你好，世界"
    assert tok.encode(text) == ref.encode(text).ids


@pytest.mark.parametrize("args, message", [
    (["--style", "tiktoken", "-o", "x.json"], "tokenizer.json"),
    (["--style", "hf", "-o", "x.tiktoken"], ".tiktoken"),
    (["--style", "hf", "-o", "x.txt"], "suffix"),
])
def test_usage_errors(files, args, message):
    r = run(str(files[0]), "--vocab-size", "300", *args)
    assert r.returncode == 2 and message in r.stderr


@pytest.mark.parametrize("style, specials, least", [("tiktoken", [], 256), ("hf", [], 256),
                                                    ("hf", ["<s>", "</s>"], 258)])
def test_vocab_size_below_the_alphabet_is_refused(files, tmp_path, style, specials, least):
    """Not silently the 256 bytes (BpeTrainer's answer): the flag the user typed, and the least it takes."""
    out = tmp_path / "x.atok"
    extra = [a for s in specials for a in ("--special", s)]
    r = run(str(files[0]), "--vocab-size", "100", "--style", style, *extra, "-o", str(out))
    assert r.returncode == 2 and f"--vocab-size 100" in r.stderr and f"at least {least}" in r.stderr
    assert not out.exists()


def test_tiktoken_file_counted_again(files, tmp_path):
    """A .tiktoken file holds ranks only: `count --vocab` asks for the pattern in CLI words, and
    `--pat-str cl100k_base` (the name train's --pattern took) counts as tiktoken does with those ranks."""
    import tiktoken

    out = tmp_path / "mine.tiktoken"
    r = run(*map(str, files), "--vocab-size", "600", "--style", "tiktoken", "--pattern", "cl100k_base", "-o", str(out))
    assert r.returncode == 0 and "--pat-str cl100k_base" in r.stderr
    count = [sys.executable, "-m", "anytok", "count", str(files[0]), "--vocab", str(out)]
    r = subprocess.run(count, capture_output=True, text=True)
    assert r.returncode == 1 and "--pat-str" in r.stderr and "pat_str=" not in r.stderr
    r = subprocess.run(count + ["--pat-str", "cl100k_base"], capture_output=True, text=True)
    ref = tiktoken.Encoding("mine", pat_str=CL100K, mergeable_ranks=anytok.load_tiktoken_bpe(str(out)),
                            special_tokens={})
    assert r.returncode == 0 and int(r.stdout) == len(ref.encode_ordinary(files[0].read_text(encoding="utf-8")))
    # tokenize takes the same --pat-str NAME.
    import numpy as np

    shards = tmp_path / "shards"
    r = subprocess.run([sys.executable, "-m", "anytok", "tokenize", str(files[0]), "-o", str(shards), "--format", "npy",
                        "--vocab", str(out), "--pat-str", "cl100k_base", "--eot", "none", "-j", "1", "-q"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = np.concatenate([np.load(f) for f in sorted(shards.glob("shard_*.npy"))]).tolist()
    assert got == ref.encode_ordinary(files[0].read_text(encoding="utf-8"))


def test_missing_file_and_bad_utf8(tmp_path):
    r = run(str(tmp_path / "nope.txt"), "--vocab-size", "300", "--style", "hf", "-o", str(tmp_path / "x.json"))
    assert r.returncode == 1 and "error" in r.stderr
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"abc\xff\n")
    r = run(str(bad), "--vocab-size", "300", "--style", "tiktoken", "-o", str(tmp_path / "x.atok"))
    assert r.returncode == 1 and "error" in r.stderr

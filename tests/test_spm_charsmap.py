"""SentencePiece normalization tables built by anytok (anytok.train.sentencepiece.charsmap,
anytok.sentencepiece.darts_build) are the bytes sentencepiece==0.2.1 writes.

References: the `precompiled_charsmap` of models sentencepiece's trainer writes, run in-process,
with `normalization_rule_name` (its built-in tables) or `normalization_rule_tsv` (a rule file it
compiles with `Builder::CompileCharsMap` and darts-clone); whole `.model` files trained by both.
"""

from __future__ import annotations

import io
import random
import subprocess
import sys

import pytest

import anytok
from fetch_sentencepiece_models import fetch as fetch_models

spm = pytest.importorskip("sentencepiece")

from anytok.sentencepiece.darts import DoubleArray  # noqa: E402
from anytok.sentencepiece.darts_build import build_double_array  # noqa: E402
from anytok.sentencepiece.model_proto import parse_model_proto  # noqa: E402
from anytok.train.sentencepiece.charsmap import (BUILTIN_RULES, compile_charsmap,  # noqa: E402
                                                 decompile_charsmap, precompiled_charsmap)

RULES = list(BUILTIN_RULES)
# Text whose normalization differs between the rules: full-width and half-width forms, ligatures,
# case, circled digits, control characters, Hangul jamo, combining marks, odd spaces.
SAMPLE = ["Ｈｅｌｌｏ ＷＯＲＬＤ ｶﾀｶﾅ ﬁne ① Straße ÀÉÎ A\u0300 \u1100\u1161\u11a8 x\u200by ～ %d"
          % i for i in range(300)]


def _spm_model(**options) -> bytes:
    f = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(SAMPLE), model_writer=f, vocab_size=80,
                                   hard_vocab_limit=False, minloglevel=2, **options)
    return f.getvalue()


def _charsmap(model: bytes) -> bytes:
    return parse_model_proto(model).normalizer_spec.precompiled_charsmap


@pytest.mark.parametrize("rule", RULES)
def test_builtin_tables_are_sentencepieces(rule):
    ref = _charsmap(_spm_model(normalization_rule_name=rule))
    assert ref, "sentencepiece wrote no table"
    assert precompiled_charsmap(rule) == ref
    assert precompiled_charsmap("identity") == b""


def _random_rules(rng: random.Random, n: int) -> dict[str, str]:
    # Few distinct characters of 1 to 4 UTF-8 bytes, so that sources share prefixes and
    # suffixes (the DAWG merges common sub-tries) and targets repeat.
    alphabet = "abcxyzé€𝔸ｶ한\u0301"
    rules = {}
    while len(rules) < n:
        src = "".join(rng.choice(alphabet) for _ in range(rng.choice((1, 1, 2, 2, 3, 5))))
        rules[src] = "".join(rng.choice(alphabet) for _ in range(rng.choice((0, 1, 1, 2, 3))))
    return rules


@pytest.mark.parametrize("seed,n", [(1, 5), (2, 60), (3, 400), (4, 1500)])
def test_compiled_rule_files_are_sentencepieces(tmp_path, seed, n):
    rng = random.Random(seed)
    rules = _random_rules(rng, n)
    tsv = tmp_path / "rules.tsv"
    lines = [" ".join(f"U+{ord(c):04X}" if rng.random() < 0.5 else f"{ord(c):X}" for c in s) + "\t"
             + " ".join(f"{ord(c):X}" for c in t) + "\t# comment" for s, t in rules.items()]
    tsv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ref = _charsmap(_spm_model(normalization_rule_tsv=str(tsv)))
    mine = compile_charsmap(rules)
    assert mine == ref
    assert decompile_charsmap(mine) == rules


def test_double_array_reads_back():
    rng = random.Random(7)
    keys = sorted({bytes(rng.randrange(1, 256) for _ in range(rng.randrange(1, 6))) for _ in range(3000)})
    values = [rng.randrange(1 << 31) for _ in keys]
    da = DoubleArray(build_double_array(keys, values))
    assert da.items() == list(zip(keys, values))


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="not sorted"):
        build_double_array([b"b", b"a"], [0, 1])
    with pytest.raises(ValueError, match="NUL"):
        build_double_array([b"a\0b"], [0])
    with pytest.raises(ValueError, match="out of range"):
        build_double_array([b"a"], [-1])
    with pytest.raises(ValueError, match="empty"):
        compile_charsmap({"": "x"})
    with pytest.raises(ValueError, match="prefixes"):
        compile_charsmap({"a" * k: "b" for k in range(1, 40)})


@pytest.mark.parametrize("rule,kind", [("nmt_nfkc", "unigram"), ("nfkc", "bpe"),
                                       ("nmt_nfkc_cf", "bpe"), ("nfkc_cf", "unigram")])
def test_trained_model_needs_no_table(tmp_path, rule, kind):
    path = tmp_path / "in.txt"
    text = (fetch_models() / "botchan.txt").read_text(encoding="utf-8")[:15_000]
    path.write_text(text + "\n".join(SAMPLE[:50]) + "\n", encoding="utf-8")
    options = dict(vocab_size=400, model_type=kind, num_threads=1)
    if rule != "nmt_nfkc":  # the default stays the default
        options["normalization_rule_name"] = rule
    spm.SentencePieceTrainer.train(input=str(path), model_prefix=str(tmp_path / "ref"), minloglevel=2, **options)
    ref = (tmp_path / "ref.model").read_bytes()
    mine = anytok.train(str(path), kind=kind, style="sentencepiece", model_prefix=str(tmp_path / "ref"),
                        **options).data
    assert mine == ref


def test_cli_needs_no_charsmap_from(tmp_path, monkeypatch):
    # The model records `input` and `model_prefix` as given: run both from the same folder.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.txt").write_text("\n".join(SAMPLE) + "\n", encoding="utf-8")
    spm.SentencePieceTrainer.train(input="in.txt", model_prefix="m", model_type="bpe", vocab_size=90,
                                   normalization_rule_name="nfkc_cf", minloglevel=2)
    ref = (tmp_path / "m.model").read_bytes()
    (tmp_path / "m.model").unlink()
    r = subprocess.run([sys.executable, "-m", "anytok", "train", "in.txt", "--style", "sentencepiece",
                        "--kind", "bpe", "--vocab-size", "90", "--spm", "normalization_rule_name=nfkc_cf",
                        "-q", "-o", "m.model"], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "m.model").read_bytes() == ref


def test_trained_with_a_rule_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = random.Random(5)
    rules = _random_rules(rng, 200)
    rules.update({"Ｈ": "h", "ｶ": "カ", "ﬁ": "fi", "\u200b": ""})
    lines = [" ".join(f"{ord(c):X}" for c in s) + ("\t" + " ".join(f"U+{ord(c):04X}" for c in t) if t else "")
             for s, t in rules.items()]
    (tmp_path / "r.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "in.txt").write_text("\n".join(SAMPLE) + "\n", encoding="utf-8")
    options = dict(input="in.txt", model_prefix="m", model_type="unigram", vocab_size=70,
                   hard_vocab_limit=False, normalization_rule_tsv="r.tsv")
    spm.SentencePieceTrainer.train(minloglevel=2, **options)
    ref = (tmp_path / "m.model").read_bytes()
    assert parse_model_proto(ref).normalizer_spec.name == "user_defined"
    kind, files = options.pop("model_type"), options.pop("input")
    assert anytok.train(files, kind=kind, style="sentencepiece", model_type=kind, **options).data == ref
    (tmp_path / "bad.tsv").write_text("41\t62\nzz\t61\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 2: 'zz' is not a code point"):
        anytok.train(files, kind=kind, style="sentencepiece", **{**options, "normalization_rule_tsv": "bad.tsv"})


PYODIDE_RUNNER = """
import sys
sys.path.insert(0, "/host")
from anytok.train.sentencepiece.charsmap import precompiled_charsmap
open("/host/nmt_nfkc.bin", "wb").write(precompiled_charsmap("nmt_nfkc"))
"""


def test_same_table_in_pyodide(tmp_path):
    # Pyodide's CPython (npm pyodide, run by Node) builds the same table: nothing may depend on
    # the interpreter (its Unicode version, its integer sizes).
    import shutil
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    pyodide = root / "web" / "node_modules" / "pyodide"
    if not (pyodide / "pyodide.mjs").exists():
        pytest.fail(f"{pyodide} is missing: run build_scripts/build_web.py (npm ci in web/)")
    node = shutil.which("node")
    assert node, "node is needed (the test setup installs npm, which brings it)"
    host = tmp_path / "host"
    shutil.copytree(root / "pkg" / "anytok", host / "anytok", ignore=shutil.ignore_patterns("__pycache__"))
    (host / "run.py").write_text(PYODIDE_RUNNER, encoding="utf-8")
    r = subprocess.run([node, str(root / "build_scripts" / "pyodide_run.mjs"), str(pyodide), str(host),
                        str(host / "run.py")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (host / "nmt_nfkc.bin").read_bytes() == _charsmap(_spm_model(normalization_rule_name="nmt_nfkc"))

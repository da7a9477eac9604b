"""transformers 5.23.0 on anytok.hf: the same outputs as on the real `tokenizers` 0.23.3.

One script (SCRIPT below) loads each model with `AutoTokenizer.from_pretrained(folder)` and
prints, as JSON, digests of what `save_pretrained` writes and what transformers returns for edge
texts and seeded samples of the four corpora: ids, attention masks, offsets, word ids, tokens and
decoded text of single sentences; token type ids of pairs; `padding="max_length"`; truncation
with `stride` and `return_overflowing_tokens`; special tokens in the text, pre-tokenized input,
tokens added at run time. It runs twice: in the main .venv (real `tokenizers`) and in
`.cache/venv-tfm` (build_scripts/build_tokenizers_shim.py: a `tokenizers` wheel that is
anytok.hf, with this checkout's `pkg/` first on PYTHONPATH). The two JSON outputs must be
identical.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FULL, ROOT

from build_tokenizers_shim import main as build_venv  # noqa: E402
from fetch_chat import fetch as fetch_chat  # noqa: E402
from fetch_hf_suite import fetch as fetch_hf_suite  # noqa: E402
from fetch_models import path as model_path  # noqa: E402

# One worker runs every test of this module (`--dist loadgroup`), so that the module's fixture (the
# two transformers runs, about a minute of CPU) is made once, not once on each worker.
pytestmark = pytest.mark.xdist_group("transformers")

# The script both environments run: stdin {"models": {name: folder}, "singles": [...],
# "pairs": [[a, b], ...]} -> stdout {name: {case: output}}. An exception is an output too (its
# type name), so that both sides must fail alike.
SCRIPT = r'''
import hashlib, json, os, sys, tempfile
from transformers import AutoTokenizer

job = json.load(sys.stdin)
singles, pairs = job["singles"], job["pairs"]
firsts, seconds = [a for a, _ in pairs], [b for _, b in pairs]


def run(f):
    try:
        return f()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # tokenizers' Rust panics are BaseExceptions
        return {"error": type(e).__name__}


def plain(enc, words=False):
    out = {k: [list(map(list, x)) if k == "offset_mapping" else x for x in v] for k, v in enc.items()}
    if words:
        out["word_ids"] = [enc.word_ids(i) for i in range(len(enc["input_ids"]))]
    return out


def saved(tok):
    """What save_pretrained writes (tokenizer.json through Tokenizer.to_str), file by file: a
    digest of its bytes, so that gemma3's 33 MB are not sent back (byte for byte, key order
    included: reading the JSON to compare content only took a quarter of the fixture's time)."""
    with tempfile.TemporaryDirectory() as d:
        tok.save_pretrained(d)
        out = {}
        for f in sorted(os.listdir(d)):
            with open(os.path.join(d, f), "rb") as fh:
                out[f] = hashlib.sha256(fh.read()).hexdigest()
        return out


def backend(tok):
    """What transformers and its users read from the `tokenizers` object itself."""
    b, text = tok.backend_tokenizer, "Hello  wörld ÅB 日本 café\u0301 <|endoftext|> [SEP] x"
    return {"sizes": [tok.vocab_size, len(tok), len(tok.get_vocab())],
            "normalize_str": b.normalizer.normalize_str(text) if b.normalizer else None,
            "pre_tokenize_str": b.pre_tokenizer.pre_tokenize_str(text) if b.pre_tokenizer else None,
            "added_tokens_decoder": {k: str(v) for k, v in tok.added_tokens_decoder.items()},
            "special_ids": tok.all_special_ids,
            "components": [type(x).__name__ for x in (b.normalizer, b.pre_tokenizer, b.model, b.post_processor,
                                                      b.decoder)],
            "truncation_padding": [b.truncation, b.padding],
            "num_special_tokens_to_add": [b.num_special_tokens_to_add(False), b.num_special_tokens_to_add(True)]}


result = {}
for name, folder in job["models"].items():
    tok = AutoTokenizer.from_pretrained(folder)
    if tok.pad_token is None:
        # Llama 3.1, gpt-oss, Llama 2 have none; padding needs one, the same on both sides.
        tok.pad_token = tok.eos_token or tok.unk_token or tok.convert_ids_to_tokens(0)
    r = result[name] = {"class": type(tok).__name__}
    single = run(lambda: plain(tok(singles, return_offsets_mapping=True), words=True))
    r["single"] = single
    if "input_ids" in single:
        r["tokens"] = [tok.convert_ids_to_tokens(ids) for ids in single["input_ids"]]
        r["decode"] = tok.batch_decode(single["input_ids"])
        r["decode_skip"] = tok.batch_decode(single["input_ids"], skip_special_tokens=True)
    r["no_specials"] = run(lambda: plain(tok(singles, add_special_tokens=False, return_offsets_mapping=True)))
    r["pair"] = run(lambda: plain(tok(firsts, seconds, return_token_type_ids=True,
                                      return_offsets_mapping=True)))
    r["saved"] = run(lambda: saved(tok))
    r["backend"] = run(lambda: backend(tok))
    r["padding"] = run(lambda: plain(tok(singles, padding="max_length", max_length=64, truncation=True,
                                         return_offsets_mapping=True)))
    r["padding_longest_left"] = run(lambda: (setattr(tok, "padding_side", "left"), plain(
        tok(singles[:16], padding=True, return_offsets_mapping=True)))[1])
    tok.padding_side = "right"
    r["overflow"] = run(lambda: plain(tok(singles, max_length=24, truncation=True, stride=6,
                                          return_overflowing_tokens=True, return_offsets_mapping=True)))
    # A first sequence short enough (8 characters: at most 32 byte-level tokens) that the second
    # keeps more than `stride` tokens, or tokenizers panics.
    r["pair_overflow"] = run(lambda: plain(tok([a[:8] for a in firsts], seconds, max_length=48,
                                               truncation="only_second",
                                               stride=4, return_overflowing_tokens=True,
                                               return_token_type_ids=True, return_offsets_mapping=True)))
    r["pair_longest_first"] = run(lambda: plain(tok(firsts, seconds, max_length=32, truncation=True,
                                                    padding="max_length", return_token_type_ids=True)))
    # Special tokens written in the text, split by added-token matching, with their mask.
    specials = tok.all_special_tokens
    mixed = [s[:len(s) // 2] + specials[i % len(specials)] + s[len(s) // 2:] for i, s in enumerate(singles)]
    r["specials_in_text"] = run(lambda: plain(tok(mixed, return_offsets_mapping=True,
                                                  return_special_tokens_mask=True), words=True))
    r["pretokenized"] = run(lambda: plain(tok([s.split() or ["x"] for s in singles], is_split_into_words=True,
                                              return_offsets_mapping=True), words=True))
    r["truncate_left"] = run(lambda: (setattr(tok, "truncation_side", "left"), plain(
        tok(singles, max_length=16, truncation=True, return_offsets_mapping=True)))[1])
    tok.truncation_side = "right"
    # Last: it changes the tokenizer. Tokens added at run time, one of them special.
    r["added_count"] = run(lambda: [tok.add_tokens(["anytokword", " the", "日本"]),
                                    tok.add_special_tokens({"additional_special_tokens": ["<|tfm|>"]})])
    added = [s[:10] + " anytokword<|tfm|>" + s[10:] for s in singles]
    r["added"] = run(lambda: plain(tok(added, return_offsets_mapping=True), words=True))
    r["added_decode"] = run(lambda: tok.batch_decode(tok(added)["input_ids"], skip_special_tokens=True))
# One write of json.dumps' text: json.dump encodes in pure Python, piece by piece (seconds for 4.7 MB).
sys.stdout.write(json.dumps(result))
'''


def _folder(tmp: Path, name: str, tokenizer_json: Path, config: Path | None) -> str:
    """A model folder: the fixture's tokenizer.json (and tokenizer_config.json when it has one)."""
    d = tmp / name
    d.mkdir()
    (d / "tokenizer.json").symlink_to(tokenizer_json)
    if config is not None:
        (d / "tokenizer_config.json").symlink_to(config)
    return str(d)


def _models(tmp: Path) -> dict[str, str]:
    chat = fetch_chat()
    gpt_oss = fetch_hf_suite() / "hub" / "models--hf-internal-testing--gpt-oss-20b" / "snapshots"
    gpt_oss = next(gpt_oss.iterdir()) / "tokenizer.json"
    return {
        "llama3_1": _folder(tmp, "llama3_1", chat / "llama3_1" / "tokenizer.json",
                            chat / "llama3_1" / "tokenizer_config.json"),
        "qwen3": _folder(tmp, "qwen3", chat / "qwen3" / "tokenizer.json", chat / "qwen3" / "tokenizer_config.json"),
        "gpt-oss": _folder(tmp, "gpt-oss", gpt_oss, None),
        "minilm": _folder(tmp, "minilm", model_path("minilm.tokenizer.json"), None),
        "llama2": _folder(tmp, "llama2", model_path("llama2.tokenizer.json"), None),
        "gemma3": _folder(tmp, "gemma3", chat / "gemma3" / "tokenizer.json", chat / "gemma3" / "tokenizer_config.json"),
    }


# Texts the corpora lack or rarely have: empty and blank inputs, combining marks, ligatures,
# emoji sequences, special tokens' spellings, one long word, zero-width and no-break spaces, CRLF,
# full-width forms.
EDGE = ["", " ", "\n\n", "  leading and trailing  ", "a\u0301e\u0301 café CAFÉ ﬁ ①", "😀🎉 emoji 👩‍👩‍👧",
        "\t tab\tx", "Hello   world", "ÅNGSTRÖM İstanbul ß", "<s> </s> <unk> [CLS] [SEP] <|endoftext|>",
        "x" * 300, "日本語 テキスト　全角スペース", "don't you'll I'M", "12345678901234567890", "\u00a0nbsp\u00a0",
        "\u200bzero\u200dwidth", "a\r\nb", "ｆｕｌｌｗｉｄｔｈ"]


def _sentences(corpora: dict[str, str], n: int) -> tuple[list[str], list[list[str]]]:
    """EDGE and n lines sampled (seeded) from the four corpora, a quarter each; n // 4 pairs of
    them and 18 of EDGE's."""
    rng = random.Random("hf-transformers")
    singles = []
    for key in sorted(corpora):
        lines = [s for s in corpora[key].splitlines() if s.strip()]
        for s in rng.sample(lines, n // len(corpora)):
            # Long lines cut at a random point, so truncation sees lengths on both sides of its limit.
            singles.append(s[:rng.randrange(20, 400)])
    pairs = [[rng.choice(singles), rng.choice(singles)] for _ in range(n // 4)]
    pairs += [[a, b] for a in EDGE[:6] for b in EDGE[6:9]]
    return EDGE + singles, pairs


def _run(python: str, job: dict, env: dict) -> dict:
    proc = subprocess.run([python, "-c", SCRIPT], input=json.dumps(job), capture_output=True, text=True,
                          env=env, cwd=ROOT)
    assert proc.returncode == 0, f"{python}:\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout)


def _first_difference(case: str, want, got) -> str:
    if isinstance(want, dict) and isinstance(got, dict):
        for k in want.keys() | got.keys():
            if want.get(k) != got.get(k):
                return f"{case}.{k}: " + _first_difference(case, want.get(k), got.get(k))
    if isinstance(want, list) and isinstance(got, list):
        for i, (w, g) in enumerate(zip(want, got)):
            if w != g:
                return f"[{i}] tokenizers {str(w)[:600]}\nanytok.hf {str(g)[:600]}"
        return f"lengths {len(want)} vs {len(got)}"
    return f"tokenizers {str(want)[:600]} / anytok.hf {str(got)[:600]}"


@pytest.fixture(scope="module")
def outputs(tmp_path_factory, corpora):
    shim_python = build_venv(quiet=True)
    singles, pairs = _sentences(corpora, 400 if FULL else 100)
    job = {"models": _models(tmp_path_factory.mktemp("models")), "singles": singles, "pairs": pairs}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               TRANSFORMERS_VERBOSITY="error")
    want = _run(sys.executable, job, env)
    got = _run(str(shim_python), job, dict(env, PYTHONPATH=str(ROOT / "pkg")))
    return job, want, got


def test_shim_is_anytok():
    """The venv's `tokenizers` is anytok.hf (this checkout's), under the real one's version."""
    shim_python = build_venv(quiet=True)
    proc = subprocess.run([str(shim_python), "-c", "import importlib.metadata as md, tokenizers, anytok.hf, "
                           "tokenizers.models as m; print(md.version('tokenizers'), tokenizers.__version__, "
                           "m is anytok.hf.models, tokenizers.Tokenizer is anytok.hf.Tokenizer, anytok.__file__)"],
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT / "pkg")),
                          check=True)
    *same, path = proc.stdout.split()
    assert same == ["0.23.3", "0.23.3", "True", "True"]
    assert Path(path).is_relative_to(ROOT / "pkg")


@pytest.mark.parametrize("model", ["llama3_1", "qwen3", "gpt-oss", "minilm", "llama2", "gemma3"])
@pytest.mark.parametrize("case", ["class", "saved", "backend", "single", "tokens", "decode", "decode_skip", "no_specials", "pair",
                                  "padding", "padding_longest_left", "overflow", "pair_overflow",
                                  "pair_longest_first", "specials_in_text", "pretokenized", "truncate_left",
                                  "added_count", "added", "added_decode"])
def test_like_transformers_on_tokenizers(outputs, model, case):
    job, want, got = outputs
    w, g = want[model].get(case), got[model].get(case)
    # The reference itself must give an output, so that no case compares two failures.
    assert w is not None and not (isinstance(w, dict) and "error" in w), w
    if w != g:
        pytest.fail(f"{model} {case}: {_first_difference(case, w, g)}")

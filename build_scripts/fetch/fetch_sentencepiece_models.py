"""Fetch the SentencePiece and tekken test models from PyPI into a local cache, sha256-verified.

    python build_scripts/fetch/fetch_sentencepiece_models.py      # prints the cache directory

Files (never committed):
  PyPI sdist sentencepiece==0.2.1   sentencepiece-0.2.1/test/test_model.model      (Unigram, nfkc)
                                    sentencepiece-0.2.1/test/test_ja_model.model   (Unigram, nfkc)
                                    sentencepiece-0.2.1/test/botchan.txt   (training text)
  PyPI wheel mistral-common==1.13.1 mistral_common/data/tokenizer.model.v1         (BPE, byte fallback)
                                    mistral_common/data/mistral_instruct_tokenizer_240323.model.v3
                                                                                   (BPE, user-defined)
                                    mistral_common/data/tekken_240911.json         (tekken)

The cache is `$ANYTOK_MODELS_DIR`, else `<repo>/.cache/models`.  Files already present with the
right hash are kept; only `pip download` touches the network (PyPI), and the downloaded archive
is itself checked against its sha256 before anything is taken from it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# (registry, spec, archive sha256) -> the pip download that produces the archive
ARCHIVES = {
    ("pypi-sdist", "sentencepiece==0.2.1"):
        "8138cec27c2f2282f4a34d9a016e3374cd40e5c6e9cb335063db66a0a3b71fad",
    # its normalization tables only (build_scripts/gen/gen_spm_charsmap_rules.py)
    ("pypi-sdist", "sentencepiece==0.2.3"):
        "21618ad31f0453a1ebf5ec58defed99758d54af0b670546ecac639ddd8b86fbd",
    ("pypi-wheel", "mistral-common==1.13.1"):
        "98b4d0755b8d90bf4691fa8f1b70cb3b4a8cd4dc1653c4ed08ef3d1c7d2c29af",
}

# (registry, spec, member path inside the archive, local name, sha256)
FILES = [
    ("pypi-sdist", "sentencepiece==0.2.1", "sentencepiece-0.2.1/test/test_model.model",
     "test_model.model", "4884d27bf50494e080aa99dbb868f27b68b6a3b6bd128da37ad6057c5e3cf5a2"),
    ("pypi-sdist", "sentencepiece==0.2.1", "sentencepiece-0.2.1/test/test_ja_model.model",
     "test_ja_model.model", "e39551e7ab937745b25edf55a7399d3c78948fda1dabca6b1781df2fcec67f65"),
    ("pypi-sdist", "sentencepiece==0.2.1", "sentencepiece-0.2.1/test/botchan.txt",
     "botchan.txt", "464bd5300c24fce16fcc4555d4231a57632caae4d0090ad6aa92854a3b227ba7"),
    ("pypi-wheel", "mistral-common==1.13.1", "mistral_common/data/tokenizer.model.v1",
     "tokenizer.model.v1", "dadfd56d766715c61d2ef780a525ab43b8e6da4de6865bda3d95fdef5e134055"),
    ("pypi-wheel", "mistral-common==1.13.1", "mistral_common/data/mistral_instruct_tokenizer_240323.model.v3",
     "mistral_instruct_tokenizer_240323.model.v3", "9addc8bdce5988448ae81b729336f43a81262160ae8da760674badab9d4c7d33"),
    ("pypi-wheel", "mistral-common==1.13.1", "mistral_common/data/tekken_240911.json",
     "tekken_240911.json", "1948e2d48b0e7377f1bb5f1210f1ae5f984934e75713fc07e2452729b8365316"),
]


def models_dir() -> Path:
    return Path(os.environ.get("ANYTOK_MODELS_DIR", ROOT / ".cache" / "models"))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _download(registry: str, spec: str, dest: str) -> Path:
    binary = ["--only-binary=:all:"] if registry == "pypi-wheel" else ["--no-binary=:all:"]
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", *binary, "-d", dest, spec],
                   check=True, stdout=subprocess.DEVNULL)
    (archive,) = Path(dest).iterdir()
    expected = ARCHIVES[(registry, spec)]
    actual = _sha256(archive)
    if actual != expected:
        raise SystemExit(f"{archive.name}: sha256 {actual} does not match the expected {expected}")
    return archive


def _extract(archive: Path, member: str, target: Path) -> None:
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as z, z.open(member) as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst)
    else:
        with tarfile.open(archive) as tar:
            src = tar.extractfile(member)
            if src is None:
                raise SystemExit(f"{archive.name} has no file {member}")
            with open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)


def fetch() -> Path:
    out = models_dir()
    out.mkdir(parents=True, exist_ok=True)
    missing = [f for f in FILES if not (out / f[3]).exists() or _sha256(out / f[3]) != f[4]]
    for registry, spec in sorted({(f[0], f[1]) for f in missing}):
        with tempfile.TemporaryDirectory() as tmp:
            archive = _download(registry, spec, tmp)
            for reg, sp, member, name, _ in missing:
                if (reg, sp) == (registry, spec):
                    _extract(archive, member, out / name)
    for *_, name, sha in FILES:
        actual = _sha256(out / name)
        if actual != sha:
            raise SystemExit(f"{out / name}: sha256 {actual} does not match the expected {sha}")
    return out


if __name__ == "__main__":
    print(fetch())
    sys.exit(0)

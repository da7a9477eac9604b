"""What the benchmark scripts (and the tests) share: where the corpora are, and the CPU's name."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The four corpora of ../shared/corpora (ANYTOK_CORPORA names another folder), by short key.
CORPORA_DIR = Path(os.environ.get("ANYTOK_CORPORA", ROOT.parent / "shared" / "corpora"))
CORPORA = {
    "en": "en_emma.txt",
    "code": "code_cpython_stdlib.txt",
    "zh": "zh_peoplesdaily_1998.txt",
    "ja": "ja_debian_reference.txt",
}


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo ("unknown CPU" where there is none)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"

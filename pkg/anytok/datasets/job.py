"""The coordinator: inputs in order -> batches -> an engine -> results in order -> shards ->
manifest.  See the package docstring for the rules."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import deque

from . import formats
from .engines import cpu_count, make_engine
from .readers import InputError, batches, kind_of
from .work import Settings, count_batch

MANIFEST = "manifest.json"
LOCK = ".anytok-lock"  # held (flock) by the job writing to the folder
MANIFEST_VERSION = 1
DEFAULT_SHARD_TOKENS = 100_000_000  # as llm.c's fineweb.py
BATCH_MAX = 1 << 20  # bytes of records per batch, at most
BATCH_MIN = 16 << 10
DEFAULT_EOT = "<|endoftext|>"


class DatasetError(Exception):
    """A job that cannot run or cannot go on; the message is meant for the user."""


# ---- the tokenizer ----

def _resolve_tokenizer(encoding, vocab, like=None, pat_str=None):
    """(tokenizer object, identity for the manifest)."""
    from ..core import Encoding
    from ..registry import get_encoding

    if vocab is not None:
        from ..files import load

        specials = None
        if like:
            like_enc = get_encoding(like)
            pat_str = pat_str or like_enc._pat_str
            specials = dict(like_enc._special_tokens)
        tok = load(str(vocab), pat_str=pat_str, special_tokens=specials)
        path = os.path.abspath(str(vocab))
        digest = hashlib.sha256()
        if os.path.isdir(path):
            for name in sorted(os.listdir(path)):
                with open(os.path.join(path, name), "rb") as f:
                    digest.update(name.encode() + b"\0" + f.read())
        else:
            with open(path, "rb") as f:
                digest.update(f.read())
        return tok, {"vocab": path, "sha256": digest.hexdigest(), "like": like, "pat_str": pat_str,
                     "n_vocab": tok.n_vocab}
    if encoding is None:
        encoding = "o200k_base"
    if isinstance(encoding, str):
        tok = get_encoding(encoding)
        return tok, {"encoding": encoding, "n_vocab": tok.n_vocab}
    tok = encoding
    ident = {"object": type(tok).__name__, "name": getattr(tok, "name", None), "n_vocab": tok.n_vocab}
    if isinstance(tok, Encoding):
        ident["pat_str"] = tok._pat_str
        ident["special_tokens"] = dict(sorted(tok._special_tokens.items()))
    return tok, ident


def _eot_id(tok, eot) -> int | None:
    """The id of the delimiting token: a token's text, an id, or None / "none" for no delimiter."""
    from ..core import Encoding

    if eot is None or (isinstance(eot, str) and eot.lower() == "none"):
        return None
    if isinstance(eot, int) or (isinstance(eot, str) and eot.isdigit()):
        i = int(eot)
        if not 0 <= i < tok.n_vocab:
            raise DatasetError(f"--eot {i}: not an id of this tokenizer (0 .. {tok.n_vocab - 1})")
        return i
    if isinstance(tok, Encoding):
        i = tok._special_tokens.get(eot)
        if i is None:
            try:
                i = tok.encode_single_token(eot)
            except KeyError:
                i = None
    else:
        i = tok.token_to_id(eot)
    if i is None:
        raise DatasetError(f"the tokenizer has no token {eot!r}: pass --eot TOKEN, --eot ID or --eot none")
    return i


# ---- inputs ----

def expand_inputs(inputs, walker=None) -> list[str]:
    """Files in input order: a folder is walked as `anytok count` walks one (name order,
    .gitignore honoured, hidden files left out)."""
    from ..cli.walk import Found, Walker

    walker = walker or Walker()
    files: list[str] = []
    for item in walker.paths([os.fspath(p) for p in inputs]):
        if isinstance(item, Found):
            files.append(item.path)
        else:
            raise InputError(f"{item.path}: {item.reason}")
    for path in files:
        kind_of(path)  # a compressed .parquet is refused before anything starts
    return files


def _input_identity(files: list[str]) -> list[dict]:
    out = []
    for p in files:
        st = os.stat(p)
        out.append({"path": os.path.abspath(p), "size": st.st_size, "mtime_ns": st.st_mtime_ns})
    return out


# ---- the manifest ----

def _write_json_atomic(folder: str, name: str, doc: dict) -> None:
    tmp = os.path.join(folder, formats.TMP_PREFIX + name)
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, os.path.join(folder, name))
    formats.fsync_dir(folder)


def _differences(old: dict, new: dict) -> list[str]:
    return [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]


def _lock(folder: str):
    """An exclusive lock on the output folder, released when the process ends (even killed)."""
    os.makedirs(folder, exist_ok=True)
    f = open(os.path.join(folder, LOCK), "a+b")
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        return f
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        raise DatasetError(f"another anytok tokenize is writing to {folder}") from None
    return f


def _open_output(folder: str, job: dict) -> dict:
    """The manifest to go on from (a new one for a new job); refuses a folder holding another
    job's output or files it did not write."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, MANIFEST)
    for name in os.listdir(folder):
        if name.startswith(formats.TMP_PREFIX):  # left by a killed run
            os.unlink(os.path.join(folder, name))
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            try:
                manifest = json.load(f)
            except ValueError as e:
                raise DatasetError(f"{path}: not a readable manifest ({e})") from None
        if manifest.get("anytok_tokenize") != MANIFEST_VERSION or "job" not in manifest:
            raise DatasetError(f"{path}: not a manifest of anytok tokenize")
        diff = _differences(manifest["job"], job)
        if diff and not manifest["shards"]:
            diff = []  # nothing finished yet (e.g. stopped at a bad record): start the new job
            manifest = {"anytok_tokenize": MANIFEST_VERSION, "job": job, "complete": False, "shards": []}
            _write_json_atomic(folder, MANIFEST, manifest)
        if diff:
            raise DatasetError(
                f"{folder} holds the output of another job (it differs in: {', '.join(diff)}); "
                "rerun the same command to finish that one, or write to a new folder")
        for shard in manifest["shards"]:
            for name, size in zip(shard["files"], shard["sizes"]):
                p = os.path.join(folder, name)
                if not os.path.exists(p) or os.path.getsize(p) != size:
                    raise DatasetError(f"{p}: listed in the manifest but missing or of another size; "
                                       "write to a new folder")
        return manifest
    if [n for n in os.listdir(folder) if n != LOCK]:
        raise DatasetError(f"{folder} is not empty and holds no {MANIFEST}: write to a new or empty folder")
    manifest = {"anytok_tokenize": MANIFEST_VERSION, "job": job, "complete": False, "shards": []}
    _write_json_atomic(folder, MANIFEST, manifest)
    return manifest


# ---- the job ----

def _settings_for(fmt, tok, dtype, eot, field, decode_errors, eot_position=None):
    try:
        dt = formats.choose_dtype(fmt, tok.n_vocab, dtype)
    except formats.DtypeError as e:
        raise DatasetError(str(e)) from None
    eot_id = _eot_id(tok, DEFAULT_EOT if eot is ... else eot)
    if eot_id is not None and eot_id > formats.DTYPES[dt][2]:
        raise DatasetError(f"the delimiter's id {eot_id} does not fit in {dt}")
    if eot_position not in (None, "before", "after"):
        raise DatasetError(f"eot_position: 'before' or 'after', not {eot_position!r}")
    before = fmt == "llmc" if eot_position is None else eot_position == "before"
    return Settings(field, decode_errors, dt, eot_id, before)


def tokenize(inputs, output, format: str = "llmc", *, encoding=None, vocab=None, like=None, pat_str=None,
             field: str = "text", jobs: int | None = None, engine="local", scheduler=None, client=None,
             shard_tokens: int = DEFAULT_SHARD_TOKENS, dtype: str | None = "auto", eot=..., eot_position=None,
             on_error: str = "fail", decode_errors: str = "strict", progress=None, walker=None,
             batch_bytes: int | None = None) -> dict:
    """Tokenize files into shards in `output`; returns the summary (also in the manifest).

    inputs: files and folders (`.txt`, `.jsonl`, `.parquet`, `.gz` / `.zst` compressed);
    format: "llmc", "megatron" or "npy"; encoding: a bundled encoding's name or a tokenizer
    object (default o200k_base), or vocab: a tokenizer file `anytok.load` reads; eot: the
    delimiting token's text or id, or None (default `<|endoftext|>`); eot_position: "before" or
    "after" each document (default: before for llmc, as llm.c, after otherwise); engine: "local" (jobs
    processes), "dask" (scheduler address or client), "ray", or an object with submit / slots /
    close; progress: called with a dict (documents, bytes, tokens, seconds, total_bytes) as
    the work goes on.
    """
    if format not in formats.FORMATS:
        raise DatasetError(f"unknown format {format!r} (one of {', '.join(formats.FORMATS)})")
    if on_error not in ("fail", "skip"):
        raise DatasetError(f"on_error: 'fail' or 'skip', not {on_error!r}")
    if decode_errors not in ("strict", "replace"):
        raise DatasetError(f"decode_errors: 'strict' or 'replace', not {decode_errors!r}")
    if shard_tokens < 1 or (format == "llmc" and shard_tokens > formats.LLMC_MAX_TOKENS):
        raise DatasetError(f"shard_tokens: from 1 to {formats.LLMC_MAX_TOKENS} for llmc, got {shard_tokens}")
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    tok, tok_ident = _resolve_tokenizer(encoding, vocab, like, pat_str)
    settings = _settings_for(format, tok, dtype, eot, field, decode_errors, eot_position)
    out_abs = os.path.join(os.path.abspath(os.fspath(output)), "")
    files = [f for f in expand_inputs(inputs, walker) if not os.path.abspath(f).startswith(out_abs)]
    identity = _input_identity(files)
    job = {"format": format, "tokenizer": tok_ident, "dtype": settings.dtype, "eot": settings.eot,
           "eot_position": "before" if settings.eot_before else "after", "field": field,
           "shard_tokens": shard_tokens, "on_error": on_error, "decode_errors": decode_errors, "inputs": identity}
    folder = os.fspath(output)
    lock = _lock(folder)
    try:
        return _tokenize_locked(folder, job, files, identity, tok, settings, format, shard_tokens, on_error,
                                jobs, engine, scheduler, client, progress, batch_bytes)
    finally:
        lock.close()


def _tokenize_locked(folder, job, files, identity, tok, settings, format, shard_tokens, on_error, jobs, engine,
                     scheduler, client, progress, batch_bytes) -> dict:
    manifest = _open_output(folder, job)
    if manifest["complete"]:
        return manifest["summary"]
    total_bytes = sum(i["size"] for i in identity)
    if batch_bytes is None:
        workers = jobs if jobs and jobs > 0 else cpu_count() if engine in (None, "local") else 16
        batch_bytes = max(BATCH_MIN, min(BATCH_MAX, total_bytes // (8 * workers) or BATCH_MIN))
    run = _Run(folder, format, settings, shard_tokens, on_error, manifest, files, identity, progress)
    eng = make_engine(engine, tok, settings, jobs, scheduler=scheduler, client=client)
    ok = False
    try:
        run.go(eng, batch_bytes)
        ok = True
    finally:
        run.abort_shard()
        if ok:
            eng.close()
        else:
            getattr(eng, "abort", eng.close)()
    return manifest["summary"]


class _Run:
    def __init__(self, folder, fmt, settings, shard_tokens, on_error, manifest, files, identity, progress):
        self.folder, self.fmt, self.settings = folder, fmt, settings
        self.shard_tokens, self.on_error = shard_tokens, on_error
        self.manifest, self.files, self.identity = manifest, files, identity
        self.progress = progress
        shards = manifest["shards"]
        self.cursor = tuple(shards[-1]["end"]) if shards else (0, 0, 0)
        self.writer = None
        self.shard_docs = 0
        self.pending_errors: list[str] = []
        self.stats = {"documents": 0, "tokens": 0, "bytes": 0, "chars": 0}
        self.size_before = [0]
        for i in identity:
            self.size_before.append(self.size_before[-1] + i["size"])
        self.disk_done = self.size_before[self.cursor[0]] if self.cursor[0] < len(files) else 0
        self.t0 = time.monotonic()

    # -- reading --

    def _batches(self, batch_bytes):
        f0, r0, _ = self.cursor
        for fi in range(f0, len(self.files)):
            base = self.size_before[fi]
            pos = [0]

            def disk(n, pos=pos):
                pos[0] = n

            for batch in batches(fi, self.files[fi], batch_bytes, self.settings.field,
                                 r0 if fi == f0 else 0, disk):
                yield batch, base + pos[0]

    # -- writing --

    def _new_writer(self):
        self.writer = formats.ShardWriter(self.folder, self.fmt, self.settings.dtype, len(self.manifest["shards"]))
        self.shard_docs = 0

    def _finish_shard(self, end) -> None:
        w = self.writer
        names = w.finish()
        sizes = [os.path.getsize(os.path.join(self.folder, n)) for n in names]
        self.manifest["shards"].append({"files": names, "sizes": sizes, "tokens": w.tokens,
                                        "documents": self.shard_docs, "end": list(end),
                                        "skipped": self.pending_errors})
        self.pending_errors = []
        self.writer = None
        _write_json_atomic(self.folder, MANIFEST, self.manifest)

    def abort_shard(self) -> None:
        if self.writer is not None:
            self.writer.abort()
            self.writer = None

    def _error(self, message: str) -> None:
        if self.on_error == "fail":
            raise DatasetError(message + " (--on-error skip leaves such records out)")
        self.pending_errors.append(message)

    def _add_doc(self, fi, rec, data: bytes, ntok: int) -> None:
        size = formats.DTYPES[self.settings.dtype][1]
        skip = 0
        if (fi, rec) == self.cursor[:2] and self.cursor[2]:
            skip = self.cursor[2]  # tokens of this document already in the last finished shard
            data = data[skip * size:]
        if self.fmt == "megatron":
            if self.writer is None:
                self._new_writer()
            self.writer.add(data, (ntok,))
            self.shard_docs += 1
            if self.writer.tokens >= self.shard_tokens:
                self._finish_shard((fi, rec + 1, 0))
            return
        done = skip
        first = skip == 0
        while done < ntok:
            if self.writer is None:
                self._new_writer()
            if first:
                self.shard_docs += 1
                first = False
            room = self.shard_tokens - self.writer.tokens
            take = min(room, ntok - done)
            self.writer.add(data[(done - skip) * size:(done - skip + take) * size])
            done += take
            if self.writer.tokens == self.shard_tokens:
                self._finish_shard((fi, rec + 1, 0) if done == ntok else (fi, rec, done))

    def _take(self, res) -> None:
        fi = res.file_index
        size = formats.DTYPES[self.settings.dtype][1]
        errors = deque(res.errors)
        pos = 0
        for rec, ntok in zip(res.docs, res.lengths):
            while errors and errors[0][0] < rec:
                self._error(errors.popleft()[1])
            self._add_doc(fi, rec, res.data[pos:pos + ntok * size], ntok)
            pos += ntok * size
        while errors:
            self._error(errors.popleft()[1])
        self.stats["documents"] += len(res.docs)
        self.stats["tokens"] += len(res.data) // size
        self.stats["bytes"] += res.nbytes
        self.stats["chars"] += res.chars

    def go(self, eng, batch_bytes) -> None:
        inflight: deque = deque()
        total = self.size_before[-1]
        for batch, disk in self._batches(batch_bytes):
            inflight.append((eng.submit(batch), disk))
            while len(inflight) >= max(1, eng.slots):
                self._settle(inflight.popleft(), total)
        while inflight:
            self._settle(inflight.popleft(), total)
        if self.writer is not None and self.writer.tokens:
            self._finish_shard((len(self.files), 0, 0))
        self._complete()

    def _settle(self, item, total) -> None:
        handle, disk = item
        self._take(handle.result())
        self.disk_done = disk
        if self.progress:
            self.progress({**self.stats, "disk_bytes": disk, "total_bytes": total,
                           "seconds": time.monotonic() - self.t0})

    def _complete(self) -> None:
        shards = self.manifest["shards"]
        skipped = [m for s in shards for m in s["skipped"]] + self.pending_errors
        self.manifest["skipped_after_last_shard"] = self.pending_errors
        self.manifest["complete"] = True
        self.manifest["summary"] = {
            "shards": len(shards),
            "files": [n for s in shards for n in s["files"]],
            "tokens": sum(s["tokens"] for s in shards),
            "documents": sum(s["documents"] for s in shards),
            "skipped": len(skipped),
            "skipped_records": skipped,
            "dtype": self.settings.dtype,
            "inputs": len(self.files),
        }
        _write_json_atomic(self.folder, MANIFEST, self.manifest)


def word_counts(inputs, *, pattern: str = "o200k_base", style: str = "hf", field: str = "text",
                jobs: int | None = None, engine="local", scheduler=None, client=None, on_error: str = "fail",
                decode_errors: str = "strict", walker=None, batch_bytes: int | None = None, skipped=None):
    """Training's word counts of a dataset, on all cores or a cluster: a Counter of the pieces
    (of `pattern`, a bundled encoding's name or a regex) of every document, as
    `anytok.train(texts=documents, pattern=pattern, style=style)` counts them, to pass as
    `anytok.train(word_counts=...)`.  Documents and bad records follow `tokenize`'s rules; with
    on_error="skip", the messages of skipped records are appended to the list `skipped`."""
    from collections import Counter

    from ..train import resolve_pattern

    if style not in ("hf", "tiktoken"):
        raise DatasetError(f"style: 'hf' or 'tiktoken', not {style!r}")
    if on_error not in ("fail", "skip"):
        raise DatasetError(f"on_error: 'fail' or 'skip', not {on_error!r}")
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    files = expand_inputs(inputs, walker)
    spec = (resolve_pattern(pattern), style)
    settings = Settings(field, decode_errors, "uint32", None, False)
    if batch_bytes is None:
        total = sum(os.path.getsize(f) for f in files)
        workers = jobs if jobs and jobs > 0 else cpu_count() if engine in (None, "local") else 16
        batch_bytes = max(BATCH_MIN, min(BATCH_MAX, total // (8 * workers) or BATCH_MIN))
    counts: Counter = Counter()
    eng = make_engine(engine, spec, settings, jobs, scheduler=scheduler, client=client, fn=count_batch)
    ok = False

    def settle(handle):
        res = handle.result()
        for _, message in res.errors:
            if on_error == "fail":
                raise DatasetError(message + " (on_error='skip' leaves such records out)")
            if skipped is not None:
                skipped.append(message)
        counts.update(res.counts)

    try:
        inflight: deque = deque()
        for fi, path in enumerate(files):
            for batch in batches(fi, path, batch_bytes, field):
                inflight.append(eng.submit(batch))
                while len(inflight) >= max(1, eng.slots):
                    settle(inflight.popleft())
        while inflight:
            settle(inflight.popleft())
        ok = True
    finally:
        if ok:
            eng.close()
        else:
            getattr(eng, "abort", eng.close)()
    return counts

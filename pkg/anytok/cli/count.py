"""`anytok count`: tokens of files, folders and stdin, with one or more tokenizers.

Data flow: the paths on the command line -> `walk.Walker` (folders walked, .gitignore honoured)
-> a plan of tasks: a whole file, or a byte range of a big file -> the tasks run in this
process or in a pool of processes (`--jobs`) -> per file, the counts of its ranges are added
up exactly by `anytok.stream` (ranges are cut anywhere; their summaries meet at a shared piece
boundary) -> one line per file and a total, or a JSON document -> the exit status
(0 all counted, 1 something could not be counted, 3 over `--max-tokens`).

Stdin is read in blocks and counted the same way, so input larger than memory is fine.  Byte
ranges and blocks are used for tiktoken-style encodings with special-token text counted as
text (the default here); other tokenizers (`tokenizer.json`, SentencePiece) and `--special
allow` take a file whole (several files still go to several processes).
"""

from __future__ import annotations

import codecs
import os
import sys
import time
from collections import deque

from .. import stream
from ..core import Encoding
from . import progress as progress_mod
from .walk import Found

EXIT_OK, EXIT_SKIPPED, EXIT_BUDGET = 0, 1, 3
SNIFF = 8192  # a NUL byte in this many first bytes marks a binary file
MIB = 1 << 20
PARALLEL_MIN = 4 * MIB  # default --jobs: all CPUs from this much input on, else 1
RANGE_MIN = 1 * MIB  # the smallest byte range a big file is cut into for several processes
SERIAL_RANGE = 16 * MIB  # files larger than this are read in ranges of this size by one process
STDIN_BLOCK = 4 * MIB  # bytes of stdin per block


class Tok:
    """A tokenizer of the command line: its column label, the object, its count() arguments;
    `ranged`: may be counted in byte ranges (anytok.stream)."""

    def __init__(self, label: str, tok, kwargs: dict, ranged: bool, raise_special: bool):
        self.label = label
        self.tok = tok
        self.kwargs = kwargs
        self.ranged = ranged
        self.raise_special = raise_special


class FileResult:
    def __init__(self, path: str, explicit: bool):
        self.path = path
        self.explicit = explicit
        self.nbytes = 0
        self.chars = 0
        self.counts: list = []
        self.seconds = 0.0
        self.skipped: str | None = None


class Skip(Exception):
    """A file that cannot be counted, with the reason shown to the user."""


# The tokenizers of this process; set before a pool forks, or by _init_worker.
_TOKS: list[Tok] = []


def _init_worker(loader, loader_args) -> None:
    global _TOKS
    if not _TOKS:
        _TOKS = loader(*loader_args)


def cpu_count() -> int:
    if hasattr(os, "process_cpu_count"):
        return os.process_cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def _decode(data: bytes, offset: int = 0, *, final: bool = True) -> str:
    try:
        if final:
            return data.decode("utf-8")
        return codecs.getincrementaldecoder("utf-8")().decode(data, False)
    except UnicodeDecodeError as e:
        raise Skip(f"not UTF-8 (invalid byte at offset {offset + e.start})") from None


def _check_binary(head: bytes) -> None:
    if b"\0" in head[:SNIFF]:
        raise Skip("binary (NUL byte)")


def _special_skip(e: ValueError) -> Skip:
    """The Skip for text that spells a special token, naming the token from tiktoken's message."""
    token = str(e).split("'")[1] if "'" in str(e) else "a special token"
    return Skip(f"spells special token {token!r} (use --special text or --special allow)")


def _count_text(t: Tok, text: str) -> int:
    try:
        return t.tok.count(text, **t.kwargs)
    except ValueError as e:
        if "special token" in str(e):
            raise _special_skip(e) from None
        raise


def _check_specials(t: Tok, text: str) -> None:
    if t.raise_special:
        try:
            t.tok._check_special(text, set(), "all")
        except ValueError as e:
            raise _special_skip(e) from None


# ---- tasks (run in a worker process or here) ----

def task_whole(path: str, which: list[int]) -> tuple:
    """Count a whole file with the tokenizers `which`: (bytes, chars, counts, seconds) or a
    skip reason."""
    start = time.perf_counter()
    try:
        with open(path, "rb") as f:
            data = f.read()
        _check_binary(data)
        text = _decode(data)
        counts = [_count_text(_TOKS[i], text) for i in which]
    except Skip as e:
        return ("skip", str(e))
    except OSError as e:
        return ("skip", e.strerror or str(e))
    return ("ok", len(data), len(text), counts, time.perf_counter() - start)


def task_records(path: str, field: str, which: list[int]) -> tuple:
    """Count the `field` of every record of a .jsonl or .parquet file (gzip / zstd too), as
    `anytok tokenize` reads them; a bad record skips the file, naming its line."""
    from ..datasets import readers

    start = time.perf_counter()
    counts = [0] * len(which)
    chars = 0
    try:
        for text in readers.iter_texts(path, field):
            chars += len(text)
            for j, i in enumerate(which):
                counts[j] += _count_text(_TOKS[i], text)
        nbytes = os.path.getsize(path)
    except Skip as e:
        return ("skip", str(e))
    except readers.InputError as e:
        msg = str(e)
        return ("skip", msg[len(path) + 2:] if msg.startswith(path + ": ") else msg)
    except OSError as e:
        return ("skip", e.strerror or str(e))
    return ("ok", nbytes, chars, counts, time.perf_counter() - start)


def _read_range(path: str, start: int, end: int, last: bool) -> tuple[bytes, str, str]:
    """Bytes [start, end) of a file, as text, and the text of what follows (up to
    stream.OVERLAP characters).  `start` and `end` are at character starts."""
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
        more = b"" if last else f.read(stream.OVERLAP * 4 + 4)
    if start == 0:
        _check_binary(data)
    text = _decode(data, start)
    overlap = _decode(more, end, final=False)[: stream.OVERLAP] if more else ""
    return data, text, overlap


def _summaries(text: str, overlap: str, final: bool, which: list[int]) -> list:
    """anytok.stream summaries of one block per tokenizer (raises Skip)."""
    windows = []
    for i in which:
        t = _TOKS[i]
        _check_specials(t, text + overlap)
        windows.append(stream.summarize(t.tok, text, overlap, final))
    return windows


def task_range(path: str, start: int, end: int, last: bool, which: list[int]) -> tuple:
    """Summaries (anytok.stream.Window) of one byte range of a file, per tokenizer."""
    t0 = time.perf_counter()
    try:
        data, text, overlap = _read_range(path, start, end, last)
        windows = _summaries(text, overlap, last, which)
    except Skip as e:
        return ("skip", str(e))
    except OSError as e:
        return ("skip", e.strerror or str(e))
    approx = windows[0].tail_counts[0] if windows and windows[0].tail_counts else 0
    return ("ok", len(data), len(text), windows, time.perf_counter() - t0, approx)


def task_block(text: str, overlap: str, final: bool, which: list[int]) -> tuple:
    try:
        return ("ok", _summaries(text, overlap, final, which))
    except Skip as e:
        return ("skip", str(e))


def _call(args: tuple):
    fn, rest = args
    return fn(*rest)


# ---- planning ----

def _char_start(path: str, pos: int) -> int:
    """The first position at or after `pos` that does not continue a UTF-8 character."""
    with open(path, "rb") as f:
        f.seek(pos)
        b = f.read(4)
    for i, c in enumerate(b):
        if not 0x80 <= c <= 0xBF:
            return pos + i
    return pos + len(b)


def _cuts(path: str, size: int, n: int) -> list[int]:
    cuts = [0]
    for k in range(1, n):
        c = _char_start(path, size * k // n)
        if c > cuts[-1]:
            cuts.append(c)
    cuts.append(size)
    return cuts


class Runner:
    """Runs tasks here or in a pool; results come back in any order with their key."""

    def __init__(self, jobs: int, loader, loader_args):
        self.jobs = jobs
        self.pool = None
        if jobs > 1:
            import multiprocessing

            methods = multiprocessing.get_all_start_methods()
            ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
            self.pool = ctx.Pool(jobs, _init_worker, (loader, loader_args))

    def run(self, keyed_tasks):
        """keyed_tasks: list of (key, fn, args); yields (key, result)."""
        if self.pool is None:
            for key, fn, args in keyed_tasks:
                yield key, fn(*args)
            return
        keys = [k for k, _, _ in keyed_tasks]
        payload = [(fn, args) for _, fn, args in keyed_tasks]
        results = self.pool.imap_unordered(_indexed, list(enumerate(payload)))
        for i, result in results:
            yield keys[i], result

    def submit(self, fn, args):
        if self.pool is None:
            return _Done(fn(*args))
        return self.pool.apply_async(_call, ((fn, args),))

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool.join()


class _Done:
    def __init__(self, value):
        self.value = value

    def get(self):
        return self.value


def _indexed(item):
    i, (fn, args) = item
    return i, fn(*args)


def count_files(found: list[Found], toks: list[Tok], jobs: int, runner: Runner, prog,
                field: str | None = None) -> list[FileResult]:
    results = [FileResult(f.path, f.explicit) for f in found]
    ranged = [i for i, t in enumerate(toks) if t.ranged]
    whole = [i for i, t in enumerate(toks) if not t.ranged]
    tasks = []
    ranges: dict[int, list] = {}
    for fi, f in enumerate(found):
        results[fi].counts = [None] * len(toks)
        if field is not None and _is_records(f.path):
            tasks.append(((fi, None), task_records, (f.path, field, list(range(len(toks)))), f.size))
            continue
        n = -(-f.size // SERIAL_RANGE)  # ranges of at most 16 MiB: memory stays bounded
        if jobs > 1 and f.size >= 2 * RANGE_MIN:
            n = max(n, 2, min(jobs * 4, f.size // RANGE_MIN))
        if n > 1 and ranged:
            cuts = _cuts(f.path, f.size, n)
            ranges[fi] = [None] * (len(cuts) - 1)
            for k, (a, b) in enumerate(zip(cuts, cuts[1:])):
                tasks.append(((fi, k), task_range, (f.path, a, b, k == len(cuts) - 2, ranged), b - a))
            if whole:
                tasks.append(((fi, None), task_whole, (f.path, whole), f.size))
        else:
            tasks.append(((fi, None), task_whole, (f.path, list(range(len(toks)))), f.size))
    if runner.pool is not None:
        tasks.sort(key=lambda t: -t[3])  # big first: the pool ends together
    pending_parts = {fi: len(r) for fi, r in ranges.items()}
    for (fi, k), res in runner.run([(key, fn, args) for key, fn, args, _ in tasks]):
        r = results[fi]
        if res[0] == "skip":
            r.skipped = r.skipped or res[1]
            if k is not None:
                pending_parts[fi] -= 1
            prog.advance(files=1 if k is None else 0, nbytes=found[fi].size if k is None else 0)
            continue
        if k is None:
            _, nbytes, chars, counts, secs = res
            which = whole if fi in ranges else range(len(toks))
            for i, c in zip(which, counts):
                r.counts[i] = c
            r.nbytes, r.chars = nbytes, chars
            r.seconds += secs
            prog.advance(files=0 if fi in ranges else 1, nbytes=0 if fi in ranges else nbytes, tokens=counts[0])
        else:
            _, nbytes, chars, windows, secs, approx = res
            ranges[fi][k] = (nbytes, chars, windows)
            r.seconds += secs
            pending_parts[fi] -= 1
            prog.advance(nbytes=nbytes, tokens=approx)
            if pending_parts[fi] == 0:
                prog.advance(files=1)
    for fi, parts in ranges.items():
        r = results[fi]
        if r.skipped:
            continue
        r.nbytes = sum(p[0] for p in parts)
        r.chars = sum(p[1] for p in parts)
        for j, i in enumerate(ranged):
            try:
                r.counts[i] = stream.combine([p[2][j] for p in parts])
            except stream.NoSync:
                r.counts[i] = _count_serially(found[fi].path, toks[i])
    return results


def _is_records(path: str) -> bool:
    """A .jsonl / .parquet file (compressed or not), counted by its field with --field."""
    from ..datasets.readers import InputError, kind_of

    try:
        return kind_of(path)[0] != "txt"
    except InputError:
        return True


def _count_serially(path: str, t: Tok) -> int:
    """The count of a file read in blocks, by one process (when two ranges shared no piece
    boundary: one piece longer than the overlap)."""
    with open(path, "rb") as f:
        dec = codecs.getincrementaldecoder("utf-8")()
        return stream.count_blocks(t.tok, _blocks(f, dec))


def _blocks(f, dec, size: int = STDIN_BLOCK):
    while True:
        data = f.read(size)
        final = not data
        text = dec.decode(data, final)
        if text:
            yield text
        if final:
            return


def count_stdin(toks: list[Tok], jobs: int | None, runner_factory, prog) -> FileResult:
    r = FileResult("-", True)
    t0 = time.perf_counter()
    src = sys.stdin.buffer
    dec = codecs.getincrementaldecoder("utf-8")("surrogateescape")
    if not all(t.ranged for t in toks):
        data = src.read()
        text = data.decode("utf-8", "surrogateescape")
        r.nbytes, r.chars = len(data), len(text)
        try:
            r.counts = [_count_text(t, text) for t in toks]
        except Skip as e:
            r.skipped = str(e)
        r.seconds = time.perf_counter() - t0
        return r
    first = src.read(STDIN_BLOCK)
    if jobs is None:
        jobs = cpu_count() if len(first) == STDIN_BLOCK else 1
    runner = runner_factory(jobs)
    counters = [stream.BlockCounter(t.tok) for t in toks]
    which = list(range(len(toks)))
    queue: deque = deque()

    def texts():
        data = first
        while True:
            final = not data
            text = dec.decode(data, final)
            r.nbytes += len(data)
            if text:
                yield text
            if final:
                return
            data = src.read(STDIN_BLOCK)

    def settle(block, overlap, final, handle):
        res = handle.get()
        if res[0] == "skip":
            raise Skip(res[1])
        for counter, w in zip(counters, res[1]):
            counter.add(block, overlap, final, w)
        prog.advance(nbytes=len(block.encode("utf-8", "surrogateescape")))

    try:
        pending = None
        for text in texts():
            r.chars += len(text)
            if pending is not None:
                overlap = text[: stream.OVERLAP]
                queue.append((pending, overlap, False, runner.submit(task_block, (pending, overlap, False, which))))
                while len(queue) > 2 * max(jobs, 1):
                    settle(*queue.popleft())
            pending = text
        if pending is not None:
            queue.append((pending, "", True, runner.submit(task_block, (pending, "", True, which))))
        while queue:
            settle(*queue.popleft())
        r.counts = [c.result() if pending is not None else 0 for c in counters]
    except Skip as e:
        r.skipped = str(e)
    finally:
        runner.close()
    r.seconds = time.perf_counter() - t0
    return r

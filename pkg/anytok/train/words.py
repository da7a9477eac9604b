"""Counting pre-tokens: text in, distinct pieces with their counts out.

Memory is proportional to the number of distinct pieces: texts are split one at a time and only
the `Counter` of pieces is kept.  Files are read as the references read them: for the HF style
line by line, each line with its "\\n" (`Tokenizer.train(files)` feeds lines, so a piece never
spans two lines), for the tiktoken style whole (rustbpe is given whole texts).

A whole file still streams through the counter in blocks when its pattern is one of the
bundled encodings' (`streamable`): with those patterns, splitting text cut short can change
only its last two pieces (the fact `anytok.stream` rests on), so each block's pieces but the
last two are final and the text from the second-to-last piece's start is carried into the
next block.  The carried text grows only while one piece spans blocks (a long run of one
letter); blocks then grow with it, so the work stays linear.  Other patterns may look ahead
without bound, so their files are read whole.
"""

from __future__ import annotations

import codecs
import os
import time
from collections import Counter
from typing import Callable, Iterable, Iterator

from ..pretokenize import Splitter

__all__ = ["PieceCounter", "file_line_blocks", "file_blocks", "read_whole", "streamable", "count_word_counts"]

# Files are read in blocks of about this many bytes (cut after a "\n" for the HF style).
BLOCK = 1 << 22
# Pieces at the end of a block that text after it may still change (see the docstring).
UNSTABLE = 2


class PieceCounter:
    """Splits texts with a pattern and counts the pieces.

    `gaps=True` keeps the text between matches as pieces too, as HF's `Split(behavior=
    "isolated")` does (the bundled patterns match every character, so there are none);
    rustbpe keeps only the matches.
    """

    def __init__(self, splitter: Splitter, *, gaps: bool, progress: Callable[[dict], None] | None = None):
        self.splitter = splitter
        self.gaps = gaps
        self.counts: Counter[str] = Counter()
        self.bytes_seen = 0
        self.texts_seen = 0
        self._progress = progress
        self._t0 = time.perf_counter()
        self._next_report = 0.0

    def pieces(self, text: str) -> list[str]:
        pieces = self.splitter.split(text)
        if self.gaps and len("".join(pieces)) != len(text):
            out = []
            prev = 0
            for s, e in self.splitter.spans(text):
                if s > prev:
                    out.append(text[prev:s])
                if e > s:
                    out.append(text[s:e])
                prev = e
            if prev < len(text):
                out.append(text[prev:])
            pieces = out
        return pieces

    def add_text(self, text: str, nbytes: int | None = None) -> None:
        """Count the pieces of one text (`nbytes`, for progress: its size; default its length).
        A long text with a `streamable` pattern is counted in blocks: less memory for its
        pieces, and progress reports while it is counted."""
        if len(text) > BLOCK and nbytes is None and streamable(self.splitter.pattern):
            self.add_blocks((text[i:i + BLOCK], len(text[i:i + BLOCK])) for i in range(0, len(text), BLOCK))
            return
        self.counts.update(self.pieces(text))
        self.texts_seen += 1
        self.bytes_seen += len(text) if nbytes is None else nbytes
        if self._progress is not None:
            self._report(False)

    def add_lines(self, block: str, nbytes: int) -> None:
        """Count the lines of `block` (each with its "\\n"), one text per line."""
        split = self.pieces if self.gaps else self.splitter.split
        update = self.counts.update
        lines = block.split("\n")
        last = lines.pop()
        for line in lines:
            update(split(line + "\n"))
        if last:
            update(split(last))
        self.texts_seen += len(lines) + bool(last)
        self.bytes_seen += nbytes
        if self._progress is not None:
            self._report(False)

    def add_blocks(self, blocks: Iterable[tuple[str, int]]) -> None:
        """Count the pieces of one text given as consecutive (text, byte count) blocks, exactly
        as `add_text` would count their concatenation; only for `streamable` patterns."""
        split = self.splitter.split
        update = self.counts.update
        carry = ""
        fresh: list[str] = []
        fresh_len = 0
        nbytes = 0
        for block, n in blocks:
            fresh.append(block)
            fresh_len += len(block)
            nbytes += n
            # Split when the new text is at least as long as the carried text (linear time).
            if fresh_len < max(BLOCK // 2, len(carry)):
                continue
            pieces = split(carry + "".join(fresh))
            fresh.clear()
            fresh_len = 0
            if len(pieces) > UNSTABLE:
                update(pieces[:-UNSTABLE])
                carry = "".join(pieces[-UNSTABLE:])
            else:
                carry = "".join(pieces)
            self.bytes_seen += nbytes
            nbytes = 0
            if self._progress is not None:
                self._report(False)
        rest = carry + "".join(fresh)
        if rest:
            update(split(rest))
        self.texts_seen += 1
        self.bytes_seen += nbytes
        if self._progress is not None:
            self._report(False)

    def _report(self, final: bool) -> None:
        now = time.perf_counter()
        if not final and now < self._next_report:
            return
        self._next_report = now + 0.2
        elapsed = now - self._t0
        mb = self.bytes_seen / 1e6
        self._progress({
            "phase": "count", "mb": mb, "mb_per_s": mb / elapsed if elapsed > 0 else 0.0,
            "texts": self.texts_seen, "distinct": len(self.counts), "done": final,
        })

    def finish(self) -> Counter[str]:
        if self._progress is not None:
            self._report(True)
        return self.counts


def file_line_blocks(path: str | os.PathLike[str]) -> Iterator[tuple[str, int]]:
    """(text, byte count) blocks of a UTF-8 file, each ending after a "\\n" (or at the end of
    the file), so no line is cut.  Undecodable bytes raise, as in `tokenizers`."""
    with open(path, "rb") as f:
        rest = b""
        offset = 0
        while True:
            data = f.read(BLOCK)
            if not data:
                break
            data = rest + data
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                rest = data
                continue
            data, rest = data[:cut], data[cut:]
            yield _decode(data, path, offset), len(data)
            offset += len(data)
        if rest:
            yield _decode(rest, path, offset), len(rest)


def _decode(data: bytes, path, offset: int) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _located(e, path, offset + e.start) from None


def _located(e: UnicodeDecodeError, path, at: int) -> UnicodeDecodeError:
    return UnicodeDecodeError(e.encoding, e.object, e.start, e.end, f"{e.reason} in {os.fspath(path)!r} at byte {at}")


def file_blocks(path: str | os.PathLike[str]) -> Iterator[tuple[str, int]]:
    """(text, byte count) blocks of a UTF-8 file, cut anywhere but inside a character.
    Undecodable bytes raise, naming the file and the byte offset."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0
    with open(path, "rb") as f:
        while True:
            data = f.read(BLOCK)
            pending = len(decoder.getstate()[0])
            try:
                text = decoder.decode(data, final=not data)
            except UnicodeDecodeError as e:
                raise _located(e, path, offset - pending + e.start) from None
            if text or data:
                yield text, len(data)
            if not data:
                return
            offset += len(data)


def streamable(pattern: str) -> bool:
    """Whether `add_blocks` may count text with this pattern: the bundled encodings' patterns,
    for which cutting text short changes only its last `UNSTABLE` pieces."""
    from .. import _pattern_cache

    return pattern in _pattern_cache.ASCII


def read_whole(path: str | os.PathLike[str]) -> str:
    with open(path, "rb") as f:
        return _decode(f.read(), path, 0)


def count_word_counts(items: Iterable) -> Counter[str]:
    """A mapping or an iterable of (piece, count) as a Counter (repeated pieces add up)."""
    out: Counter[str] = Counter()
    pairs = items.items() if hasattr(items, "items") else items
    for piece, n in pairs:
        if not isinstance(piece, str):
            raise TypeError(f"word_counts: a piece must be a str, not {type(piece).__name__}")
        n = int(n)
        if n < 0:
            raise ValueError(f"word_counts: negative count {n} for {piece!r}")
        if n:
            out[piece] += n
    return out

"""Incremental, budget and interval operations on an Encoding's full tokenization (split + BPE).

Everything here rests on one property of the split patterns: where the pattern's matches fall
is decided left to right, and a match is decided by the text from its start up to one
character past its end.  So extending text at one end can only change the pieces next to that
end; pieces further in are final.  Each structure below keeps the final pieces' token counts
and re-splits only a short unstable stretch next to the growing end (the last two pieces, or
the first two).  The BPE of one piece does not depend on anything else.

When the unstable stretch is a single very long piece (one run of letters, digits, spaces...),
re-splitting and re-encoding it on every append would be quadratic.  For those, the split is
re-run on a short window at the end of the run (a long run continues the same way from
anywhere inside it), and the piece's BPE is kept in `appendable.AppendableBPE`, which
extends by a byte at a time.  Pathological input therefore costs a bounded amount per
appended character too.

All of it follows `encode_ordinary`: text that spells a special token is plain text.  The
property tests in tests/test_incremental.py compare every operation with plain encoding.
"""

from __future__ import annotations

import bisect
import codecs
import functools
from itertools import accumulate
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from ..pretokenize import SURROGATE
from .appendable import AppendableBPE, IrregularVocabulary

if TYPE_CHECKING:
    from ..core import Encoding

# A last piece at least this long (characters) is handled as a long run.
LONG_PIECE = 256
# How much of a long run is re-split with the appended text.
RUN_WINDOW = 64


def _fix(text: str) -> str:
    if text.isascii() or not SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def is_high_surrogate(ch: str) -> bool:
    return "\ud800" <= ch <= "\udbff"


def _char_len(run: AppendableBPE) -> int:
    return len(run.data.decode("utf-8"))


class Appender:
    """The token count of a text that grows at the end, exact after every `append`.

    ```
    >>> app = enc.appender()
    >>> app.append("Hello"); app.append(" world")
    >>> app.count == len(enc.encode_ordinary("Hello world"))
    True
    ```
    `count` is read in O(1); `append` re-encodes only the last two pieces of the text, so
    appending a character costs O(1) amortized.  A very long last piece (a "run") is kept as
    an `AppendableBPE` and continued through a window at its end, so that appending stays
    bounded even then.
    """

    def __init__(self, enc: "Encoding", text: str = ""):
        self._enc = enc
        self._parts: list[str] = []
        self._done: list[int] = []  # ids of pieces that can no longer change
        self._head = ""  # the text after them (before the run, if any)
        self._head_ids: list[int] = []
        self._run: AppendableBPE | None = None  # a long last piece, after _head
        self._run_parts: list[str] = []  # its text, in appended chunks
        self._run_tail = ""  # its last RUN_WINDOW characters
        if text:
            self.append(text)

    @property
    def count(self) -> int:
        """Tokens in `encode_ordinary(text())`."""
        run = self._run
        return len(self._done) + len(self._head_ids) + (run.count() if run is not None else 0)

    def text(self) -> str:
        return "".join(self._parts)

    def tokens(self) -> list[int]:
        """`encode_ordinary(text())`."""
        run = self._run
        return self._done + self._head_ids + (run.tokens() if run is not None else [])

    def append(self, text: str) -> int:
        """Add text at the end; returns the new count."""
        if not text:
            return self.count
        self._parts.append(text)
        if self._run is not None:
            if not is_high_surrogate(self._run_tail[-1]) and self._continue_run(text):
                return self.count
            # Fall back: the run's text joins the head and everything is re-split once.
            self._head += "".join(self._run_parts)
            self._run = None
            self._run_parts = []
            self._run_tail = ""
        self._resplit(self._head + text)
        return self.count

    def _resplit(self, tail: str) -> None:
        """Split the text after the final pieces; finalize all but the last two."""
        enc = self._enc
        keep_high = is_high_surrogate(tail[-1])  # may pair with the next append
        fixed = _fix(tail)
        spans = enc._splitter.spans(fixed)
        if len(spans) > 2:
            self._done += enc._encode_pieces([fixed[a:b] for a, b in spans[:-2]])
            cut = spans[-2][0]
            fixed = fixed[cut:]
            spans = [(a - cut, b - cut) for a, b in spans[-2:]]
        if spans and spans[-1][1] - spans[-1][0] >= LONG_PIECE and spans[-1][1] == len(fixed) and not keep_high:
            a, b = spans[-1]
            try:
                run = AppendableBPE(enc._backtracker(), fixed[a:b].encode("utf-8"))
            except IrregularVocabulary:
                run = None
            if run is not None:
                self._head = fixed[:a]
                self._head_ids = enc._encode_pieces([fixed[x:y] for x, y in spans[:-1]])
                self._run, self._run_parts, self._run_tail = run, [fixed[a:b]], fixed[b - RUN_WINDOW : b]
                return
        self._head = fixed[:-1] + tail[-1] if keep_high else fixed
        self._head_ids = enc._encode_pieces([fixed[a:b] for a, b in spans])

    def _continue_run(self, text: str) -> bool:
        """Re-split a window at the end of the run plus the new text; False if that cannot
        decide (then the caller re-splits everything once)."""
        tail = self._run_tail
        window = tail + text
        if is_high_surrogate(window[-1]) or SURROGATE.search(text):
            return False
        spans = self._enc._splitter.spans(window)
        # The window's first match must start where the window does and cover the old end of
        # the run: then it is the run going on.
        if not spans or spans[0][0] != 0 or spans[0][1] < len(tail):
            return False
        end = spans[0][1]
        grown = window[len(tail) : end]
        run = self._run
        assert run is not None
        before = len(run)
        try:
            run.extend(grown.encode("utf-8"))
        except IrregularVocabulary:
            run.truncate(before)
            return False
        self._run_parts.append(grown)
        if end == len(window) and len(spans) == 1:
            self._run_tail = window[-RUN_WINDOW:]
            return True
        # The run ended inside the new text: it is final (a piece follows it).
        self._done += self._head_ids + run.tokens()
        self._run, self._run_parts, self._run_tail = None, [], ""
        self._head, self._head_ids = "", []
        self._resplit(window[end:])
        return True

    def snapshot(self) -> tuple:
        """An opaque state to return to with `rollback` (O(1) for normal text)."""
        run = self._run
        return (len(self._parts), len(self._done), self._head, list(self._head_ids),
                run, len(run) if run is not None else 0, len(self._run_parts), self._run_tail)

    def rollback(self, snapshot: tuple) -> None:
        """Go back to the state of `snapshot` (taken from this appender)."""
        n_parts, n_done, head, head_ids, run, run_len, n_run_parts, run_tail = snapshot
        if n_done > len(self._done) or n_parts > len(self._parts):
            raise ValueError("snapshot is from a later state than this one (already rolled back past it?)")
        del self._parts[n_parts:]
        del self._done[n_done:]
        self._head, self._head_ids = head, list(head_ids)
        if run is not None:
            if len(run) < run_len:
                raise ValueError("snapshot no longer valid: its long piece was rolled back further")
            run.truncate(run_len)
            if run is not self._run:
                # The run was finalized since; its text is the start of what was appended.
                self._run_parts = [self.text()[len(self.text()) - _char_len(run) :]]
            else:
                del self._run_parts[n_run_parts:]
        else:
            self._run_parts = []
        self._run, self._run_tail = run, run_tail

class Prepender:
    """The token count of a text that grows at the start, exact after every `prepend`.

    The mirror image of `Appender`: the first two pieces are re-split with the new text,
    and the split must meet an old piece boundary again (it almost always does at once;
    otherwise more old pieces are taken back in).
    """

    def __init__(self, enc: "Encoding", text: str = ""):
        self._enc = enc
        self._parts: list[str] = []  # prepended texts, last first
        self._done_pieces: list[str] = []  # final pieces, last first
        self._done_ids: list[list[int]] = []  # their ids, last first
        self._done_count = 0
        self._head = ""  # the text before them
        self._head_ids: list[int] = []
        if text:
            self.prepend(text)

    @property
    def count(self) -> int:
        return self._done_count + len(self._head_ids)

    def text(self) -> str:
        return "".join(reversed(self._parts))

    def tokens(self) -> list[int]:
        out = list(self._head_ids)
        for ids in reversed(self._done_ids):
            out += ids
        return out

    def prepend(self, text: str) -> int:
        """Add text at the start; returns the new count."""
        if not text:
            return self.count
        self._parts.append(text)
        enc = self._enc
        head = text + self._head
        keep_low = "\udc00" <= head[0] <= "\udfff"  # may pair with the next prepend
        while True:
            # Split the head together with the first final piece (whose first character is
            # the lookahead the head's last match may need), and require a piece boundary
            # where the final pieces begin.
            after = self._done_pieces[-1] if self._done_pieces else ""
            fixed_head = _fix(head)
            fixed = fixed_head + after
            boundary = len(fixed_head) if after else None
            spans = enc._splitter.spans(fixed)
            if boundary is None or any(b == boundary for _, b in spans):
                break
            # The new split runs across the boundary: take the first final piece back.
            head += self._done_pieces.pop()
            self._done_count -= len(self._done_ids.pop())
        if boundary is not None:
            spans = [(a, b) for a, b in spans if b <= boundary]
        pieces = [fixed[a:b] for a, b in spans]
        # All but the first two pieces become final.
        for piece in reversed(pieces[2:]):
            ids = enc._encode_pieces([piece])
            self._done_pieces.append(piece)
            self._done_ids.append(ids)
            self._done_count += len(ids)
        head_end = spans[2][0] if len(spans) > 2 else (boundary if boundary is not None else len(fixed))
        self._head = fixed[:head_end]
        self._head_ids = enc._encode_pieces(pieces[:2])
        if keep_low and self._head:
            self._head = text[0] + self._head[1:]
        return self.count


class Intervals:
    """Token counts of any slice of one text, each in about constant time after O(n) setup.

    ```
    >>> iv = enc.intervals(text)
    >>> iv.count(10, 500) == len(enc.encode_ordinary(text[10:500]))
    True
    ```
    The text is split and every piece's token count summed into prefix sums once.  A slice
    is then split differently from the whole text only near its two ends: the first pieces
    until the slice's split meets a piece boundary of the whole text again, and the last piece
    or two before its end.  Those few pieces are encoded on the spot (mostly from the piece
    cache); the pieces in between come from the prefix sums.
    """

    def __init__(self, enc: "Encoding", text: str):
        self._enc = enc
        self.text = text
        self._direct = bool(not text.isascii() and SURROGATE.search(text))
        if self._direct:
            return  # lone surrogates: slices are repaired differently from the whole text
        spans = enc._splitter.spans(text)
        self._starts = [a for a, _ in spans]
        self._ends = [b for _, b in spans]
        counts = [len(enc._encode_pieces([text[a:b]])) for a, b in spans] if len(spans) < 64 else None
        if counts is None:
            # Count per piece in bulk: encode all pieces, then measure each piece's share.
            pieces = [text[a:b] for a, b in spans]
            counts = self._piece_counts(pieces)
        self._prefix = list(accumulate(counts, initial=0))  # tokens of pieces [0, i)
        self._boundary_index = {b: i + 1 for i, b in enumerate(self._ends)}
        self._start_index = {a: i for i, a in enumerate(self._starts)}

    def _piece_counts(self, pieces: list[str]) -> list[int]:
        enc = self._enc
        get = enc._str_ranks.get
        out = []
        for piece in pieces:
            if get(piece) is not None:
                out.append(1)
            else:
                out.append(len(enc._encode_pieces([piece])))
        return out

    def count(self, start: int = 0, end: int | None = None) -> int:
        """`len(enc.encode_ordinary(text[start:end]))` (slice semantics for the offsets)."""
        start, end, _ = slice(start, end).indices(len(self.text))
        if end <= start:
            return 0
        enc = self._enc
        text = self.text
        if self._direct:
            return enc.count_ordinary(text[start:end])
        ends = self._ends
        # Left: split from `start` until the slice's split meets a boundary of the whole text.
        i = bisect.bisect_right(ends, start)  # first piece ending after start
        left_end = None
        probe = i + 2
        while probe <= len(ends):
            stop = ends[probe - 1]
            if stop >= end - 1:
                break
            window = text[start:stop]
            spans = enc._splitter.spans(window)
            common = [b for _, b in spans[:-1] if start + b in self._boundary_index]
            if common:
                left_end = start + common[-1]
                left = enc._count_pieces([window[a:b] for a, b in spans if b <= common[-1]])
                break
            probe += 2
        if left_end is None:
            return enc.count_ordinary(text[start:end])
        # Right: from a boundary of the whole text one piece before `end`, split the rest.
        j = bisect.bisect_right(ends, end - 1) - 1  # last piece ending before end - 1
        j -= 1
        if j < 0 or ends[j] <= left_end:
            return enc.count_ordinary(text[start:end])
        right_start = ends[j]
        right = enc._count_pieces(enc._splitter.split(text[right_start:end]))
        middle = self._prefix[self._boundary_index[right_start]] - self._prefix[self._boundary_index[left_end]]
        return left + middle + right


class StreamDecoder:
    """Turns token ids, one at a time, into text as soon as it forms whole UTF-8 characters.

    ```
    >>> dec = enc.decode_stream()
    >>> "".join(dec.decode(t) for t in ids) + dec.flush() == enc.decode(ids)
    True
    ```
    """

    def __init__(self, enc: "Encoding", errors: str = "replace"):
        self._enc = enc
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors)

    def decode(self, token: int) -> str:
        """The text completed by this token ('' while inside a character)."""
        return self._decoder.decode(self._enc.decode_single_token_bytes(token))

    def feed(self, tokens: Iterable[int]) -> str:
        return "".join(map(self.decode, tokens))

    def flush(self) -> str:
        """Whatever is left (an incomplete character becomes U+FFFD with errors='replace')."""
        return self._decoder.decode(b"", final=True)

    def iter(self, tokens: Iterable[int]) -> Iterator[str]:
        """Yield text for a stream of ids, skipping empty strings; flushes at the end."""
        for token in tokens:
            out = self.decode(token)
            if out:
                yield out
        out = self.flush()
        if out:
            yield out


def count_till_limit(enc: "Encoding", text: str, limit: int) -> int | None:
    """`len(enc.encode_ordinary(text))` if it is at most `limit`, else None, reading only as
    much text as it takes to know: blocks of growing size are appended until the final pieces
    alone pass the limit."""
    if limit < 0:
        return None
    app = Appender(enc)
    pos = 0
    block = max(64, 8 * limit)
    while pos < len(text):
        end = min(len(text), pos + block)
        if end < len(text) and "\ud800" <= text[end - 1] <= "\udbff":
            end += 1  # do not separate a surrogate pair
        app.append(text[pos:end])
        pos = end
        if len(app._done) > limit:
            return None
        block *= 2
    return app.count if app.count <= limit else None


def fits_until(count: Callable[[int], int], candidates: list[int], limit: int) -> int:
    """Index into `candidates` (increasing end positions) of the last one before the first
    whose slice, counted by `count(end)`, has more than `limit` tokens; -1 if the first has.

    Counts grow with the slice almost everywhere (not strictly: BPE is not monotonic), so a
    binary search for the first overflow finds a cut that fits in O(log n) counts.
    """
    lo, hi = 0, len(candidates)  # the first overflow lies in [lo, hi]
    while lo < hi:
        mid = (lo + hi) // 2
        if count(candidates[mid]) > limit:
            hi = mid
        else:
            lo = mid + 1
    return lo - 1


def _next_cut(iv: Intervals, pos: int, max_tokens: int) -> int:
    """The end of the chunk that starts at `pos`: a piece boundary if one fits, else the
    furthest character boundary inside the first piece that fits."""
    text = iv.text
    ends = iv._ends if not iv._direct else []
    first = bisect.bisect_right(ends, pos)
    candidates = ends[first:]
    if not candidates or candidates[-1] != len(text):
        candidates = candidates + [len(text)]
    k = fits_until(functools.partial(iv.count, pos), candidates, max_tokens)
    if k >= 0:
        return candidates[k]
    # Not even one piece fits: cut inside it, at a character boundary.
    chars = list(range(pos + 1, candidates[0]))
    if chars and "\ud800" <= text[pos] <= "\udbff":
        chars = chars[1:]  # keep a surrogate pair together
    k = fits_until(functools.partial(iv.count, pos), chars, max_tokens)
    if k < 0:
        raise ValueError(f"the character at offset {pos} alone needs more than {max_tokens} tokens")
    return chars[k]


def chunk_spans(enc: "Encoding", text: str, max_tokens: int, overlap: int = 0) -> list[tuple[int, int]]:
    """(start, end) of consecutive slices of `text` of at most `max_tokens` tokens each (as
    encoded on their own), cut at piece boundaries where possible, else at character
    boundaries.  With `overlap` > 0, each chunk after the first starts at the earliest piece
    boundary that repeats at most `overlap` tokens of the previous chunk."""
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    if not 0 <= overlap < max_tokens:
        raise ValueError("overlap must be at least 0 and less than max_tokens")
    iv = Intervals(enc, text)
    out: list[tuple[int, int]] = []
    pos = 0
    while pos < len(text):
        end = _next_cut(iv, pos, max_tokens)
        out.append((pos, end))
        if end >= len(text):
            break
        nxt = end
        if overlap:
            ends = iv._ends if not iv._direct else []
            starts = ends[bisect.bisect_right(ends, pos) : bisect.bisect_left(ends, end)]
            for s in starts:  # earliest boundary whose tail of the chunk fits the overlap
                if iv.count(s, end) <= overlap:
                    nxt = s
                    break
        pos = nxt
    return out


def chunks(enc: "Encoding", text: str, max_tokens: int, overlap: int = 0) -> list[str]:
    """The texts of `chunk_spans`."""
    return [text[a:b] for a, b in chunk_spans(enc, text, max_tokens, overlap)]


def split_by_tokens(enc: "Encoding", text: str, max_tokens: int) -> tuple[str, str]:
    """(head, rest): the longest head of `text` with at most `max_tokens` tokens found by
    the search of `chunks`, cut as `chunks` cuts; reads only about as much text as needed."""
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    window = max(256, 8 * max_tokens)
    while True:
        part = text[:window]
        if window < len(text) and "\ud800" <= part[-1] <= "\udbff":
            part = text[: window + 1]
        iv = Intervals(enc, part)
        end = _next_cut(iv, 0, max_tokens)
        # A cut well inside the window is final; at the window's end, look further.
        if len(part) >= len(text) or end < len(part) - 1:
            if len(part) < len(text) and end >= len(part):
                window *= 2
                continue
            return text[:end], text[end:]
        window *= 2

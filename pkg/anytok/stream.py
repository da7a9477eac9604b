"""Exact token counts and ids of text cut into blocks that are handled apart (in other processes
or browser workers, or one after the other to bound memory), for an `Encoding`, with
special-token text as plain text.

Data flow: text -> blocks (any cut points; cuts need not fall between pieces) -> for each block,
a `Window` summary computed on its own (`summarize`, no shared state) -> `combine` of the
summaries in order -> the count of the whole text, equal to `enc.count_ordinary(text)`.

Why it is exact.  Two facts about the split patterns, on which incremental.py rests as well:
(1) where the pattern's matches fall is decided left to right, and the match that starts at a
position depends only on the text from there on; so splitting that starts at a true piece
boundary finds the true pieces, and two splittings that ever share a boundary agree from
there on.  (2) Cutting text short can change only its last pieces: all but the last two are
final.  A block's summary therefore splits its window -- the block plus the first `OVERLAP`
characters of the next block -- from the block's start, which need not be a true boundary,
and reports the piece starts (with the token counts before them) in its first `OVERLAP`
characters ("head") and in the overlap ("tail", without the window's last two pieces), at
most `REPORTED` of each.  The
first block starts at a true boundary.  Going left to right, the first tail start of block
k-1 that is also a head start of block k is a true boundary (block k-1's splitting is true
there by induction) where block k's splitting joins the true one, so from it block k's counts
are exact.  If two blocks share no reported boundary (one piece longer than the overlap, as
in a long run of one letter), `combine` raises `NoSync` and the caller counts the two blocks
as one.

Ids go the same way (`encode_window`, `join_ids`): a block's window also carries the ids of its
pieces up to the unstable end, and the counts before each reported piece start are positions
in those ids; the joined ids are block k-1's up to the shared boundary, then block k's from it.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import accumulate
from typing import TYPE_CHECKING

from .pretokenize import SURROGATE

if TYPE_CHECKING:
    from .core import Encoding

# Characters of the next block that a block's window includes (and of its own start that are
# reported as head).
OVERLAP = 1 << 15
# Pieces at the end of a cut-short window that may still change (fact 2 above).
UNSTABLE = 2
# Piece starts reported at most at each end of a window: two splittings of real text meet
# within a few pieces, and the per-piece counts these need are the costly part (text of many
# pieces that are no single token, as Chinese).  Runs that take longer (digits cut off their
# groups of three, say) make NoSync, handled as for a piece longer than the overlap.
REPORTED = 256
# A reported piece longer than this (characters, not all ASCII) is counted through the
# segmenter (see `_summarize`).
LONG_PIECE = 2000


class NoSync(Exception):
    """Two consecutive blocks' splittings share no piece boundary within the overlap."""

    def __init__(self, index: int):
        super().__init__(f"blocks {index - 1} and {index} share no piece boundary")
        self.index = index


class Window:
    """What `combine` needs of one block.  Offsets of `head` are from the block's start, those of
    `tail` from the next block's start; each comes with the tokens of the pieces before it.
    `total`: the tokens of the whole window, when it reaches the end of the text."""

    __slots__ = ("head_offsets", "head_counts", "tail_offsets", "tail_counts", "total")

    def __init__(self, head_offsets: list[int], head_counts: list[int], tail_offsets: list[int],
                 tail_counts: list[int], total: int | None):
        self.head_offsets = head_offsets
        self.head_counts = head_counts
        self.tail_offsets = tail_offsets
        self.tail_counts = tail_counts
        self.total = total

    def __getstate__(self):
        return (self.head_offsets, self.head_counts, self.tail_offsets, self.tail_counts, self.total)

    def __setstate__(self, state) -> None:
        self.head_offsets, self.head_counts, self.tail_offsets, self.tail_counts, self.total = state


def fix_surrogates(text: str) -> str:
    """tiktoken's repair of lone surrogates (one U+FFFD each), which keeps every length."""
    if text.isascii() or not SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def summarize(enc: "Encoding", block: str, overlap: str, final: bool) -> Window:
    """The summary of `block`, whose next block starts with `overlap` (its first OVERLAP
    characters, or all of it); `final`: nothing follows `overlap`.  A cut must not separate
    the two halves of a surrogate pair (count_blocks sees to that; text decoded from bytes has
    no pairs)."""
    from .core import _paused

    return _paused(_summarize, (enc, fix_surrogates(block), fix_surrogates(overlap), final))


def _summarize(args) -> Window:
    enc, block, overlap, final, *with_ids = args
    text = block + overlap
    pieces = enc._splitter.split(text)
    # A pattern that leaves gaps: no piece boundaries to go by.  (The check is skipped for the
    # patterns known to cover all text: under Pyodide it costs a sixth of the window.)
    if not getattr(enc._splitter, "covers", False) and len("".join(pieces)) != len(text):
        raise ValueError("the split pattern does not cover the text; count it whole")
    n = len(pieces)
    # Piece starts are needed near the two ends only: the first REPORTED from the front, and
    # the pieces from the block's end on, found walking back from the window's end.
    head_starts = [0, *accumulate(map(len, pieces[:REPORTED]))]
    h = bisect_left(head_starts, min(OVERLAP, len(block)), 0, min(n, REPORTED))
    cut = len(block)
    t = n
    pos = len(text)  # the start of piece t
    while t > 0 and pos - len(pieces[t - 1]) >= cut:
        t -= 1
        pos -= len(pieces[t])
    t_end = n if final else max(t, n - UNSTABLE)
    t_rep = min(t_end, t + REPORTED)
    tail_starts = list(accumulate(map(len, pieces[t:t_rep - 1]), initial=pos)) if t_rep > t else []
    table = enc._str_ranks
    ascii = text.isascii()  # (then no piece goes to the segmenter)

    def each(sel: list[str]) -> list[int]:
        # Tokens per piece: 1 for a piece that is a token; the others merged in one batch.
        out = [1 if p in table else 0 for p in sel]
        missed = [i for i, n in enumerate(out) if not n]
        if not ascii:
            # A long piece of other text (a run of CJK longer than a block, say) is counted
            # through the segmenter, as whole texts are: cut where no token spans, its repeated
            # segments merge once each, instead of one window-by-window BPE of it per block.
            long = [i for i in missed if len(sel[i]) > LONG_PIECE and not sel[i].isascii()]
            if long:
                for i in long:
                    out[i] = enc._count_pieces([sel[i]])
                missed = [i for i in missed if not out[i]]
        for i, ids in zip(missed, enc._merge_pieces([sel[i] for i in missed])):
            out[i] = len(ids)
        return out

    head_counts = list(accumulate(each(pieces[:h]), initial=0))
    ids = None
    if with_ids:
        ids = enc._encode_pieces(pieces[:t], None, ascii)
        before_tail = len(ids)
        # Past the last reported tail start no id is ever used (the next block's take over at
        # one of them), unless the window is final.
        t_ids = t_end if final else t_rep
        if t_ids > t:
            ids += enc._encode_pieces(pieces[t:t_ids], None, ascii)
        after = len(ids) - before_tail
    else:
        before_tail = head_counts[-1] + (enc._count_pieces(pieces[h:t], None, ascii) if t > h else 0)
        after = enc._count_pieces(pieces[t:t_end], None, ascii) if final and t_end > t else 0
    tail_counts = list(accumulate(each(pieces[t:t_rep]), initial=before_tail))
    window = Window(
        head_offsets=head_starts[:h],
        head_counts=head_counts[:-1],
        tail_offsets=[s - cut for s in tail_starts],
        tail_counts=tail_counts[:-1],
        total=before_tail + after if final else None,
    )
    return window if ids is None else IdWindow(window, ids)


class IdWindow(Window):
    """A `Window` with `ids`: the ids of the window's pieces up to its last reported tail start
    (all of them if final), in which the head and tail counts are positions."""

    __slots__ = ("ids",)

    def __init__(self, window: Window, ids: list[int]):
        super().__init__(window.head_offsets, window.head_counts, window.tail_offsets, window.tail_counts,
                         window.total)
        self.ids = ids

    def __getstate__(self):
        return (*super().__getstate__(), self.ids)

    def __setstate__(self, state) -> None:
        super().__setstate__(state[:-1])
        self.ids = state[-1]


def encode_window(enc: "Encoding", block: str, overlap: str, final: bool) -> IdWindow:
    """`summarize` with the ids (see `IdWindow`); `join_ids` puts such windows together."""
    from .core import _paused

    return _paused(_summarize, (enc, fix_surrogates(block), fix_surrogates(overlap), final, True))


def join_ids(windows: list[IdWindow]) -> list[int]:
    """The ids of the whole text from the windows of its blocks, in order (the last final):
    equal to `enc.encode_ordinary` of the text.  Raises NoSync where two blocks share no piece
    boundary (then encode them as one block)."""
    out: list[int] = []
    start = 0
    prev: IdWindow | None = None
    for index, w in enumerate(windows):
        if prev is not None:
            heads = dict(zip(w.head_offsets, w.head_counts))
            for off, before in zip(prev.tail_offsets, prev.tail_counts):
                if off in heads:
                    out += prev.ids[start:before]
                    start = heads[off]
                    break
            else:
                raise NoSync(index)
        prev = w
    if prev is None:
        return out
    if prev.total is None:
        raise ValueError("the last block's window must be final")
    out += prev.ids[start:]
    return out


class Combiner:
    """Adds up the summaries of consecutive blocks, fed in order; `undo` takes back the last."""

    def __init__(self) -> None:
        self.count = 0  # tokens before the current block's anchor
        self.anchor = 0  # tokens of the current block before its anchor, in its own splitting
        self.prev: Window | None = None
        self.index = 0
        self._saved: tuple = (0, 0, None, 0)

    def add(self, w: Window) -> None:
        """Raises NoSync, changing nothing, if `w` shares no boundary with the last block."""
        count, anchor = self.count, self.anchor
        prev = self.prev
        if prev is not None:
            heads = dict(zip(w.head_offsets, w.head_counts))
            for off, before in zip(prev.tail_offsets, prev.tail_counts):
                if off in heads:
                    count += before - anchor
                    anchor = heads[off]
                    break
            else:
                raise NoSync(self.index)
        self._saved = (self.count, self.anchor, self.prev, self.index)
        self.count, self.anchor, self.prev = count, anchor, w
        self.index += 1

    def undo(self) -> None:
        self.count, self.anchor, self.prev, self.index = self._saved

    def result(self) -> int:
        w = self.prev
        if w is None:
            return 0
        if w.total is None:
            raise ValueError("the last block's summary must be final")
        return self.count + w.total - self.anchor


def combine(windows: list[Window]) -> int:
    c = Combiner()
    for w in windows:
        c.add(w)
    return c.result()


class BlockCounter:
    """`enc.count_ordinary` of a text that comes as str blocks, in order: `add(block, overlap,
    final, window)` for each block, where `overlap` is the start of the next block (its first
    OVERLAP characters), `final` says no block follows, and `window` is the block's summary if
    it was computed elsewhere (else it is computed here).

    Holds the last block's text, for the rare case where it shares no piece boundary with the
    next (one piece longer than the overlap: a long run of one letter, say).  Then the two are
    counted as one block, and blocks are added to it until it is twice as long as at the last
    try, so that a piece spanning k blocks costs O(k) block summaries, not O(k^2).  Memory then
    grows with that piece: its BPE needs it whole.
    """

    def __init__(self, enc: "Encoding"):
        self.enc = enc
        self.c = Combiner()
        self.added = ""  # the text of the block last added to the combiner
        self.held: str | None = None  # text after it, waiting to be summarized as one block
        self.next_try = 0

    def add(self, block: str, overlap: str, final: bool, window: Window | None = None) -> None:
        if self.held is None:
            try:
                self.c.add(window or summarize(self.enc, block, overlap, final))
                self.added = block
                return
            except NoSync:
                self.c.undo()
                self.held = self.added + block
        else:
            self.held += block
        if final or len(self.held) >= self.next_try:
            try:
                self.c.add(summarize(self.enc, self.held, overlap, final))
                self.added, self.held = self.held, None
                return
            except NoSync:
                if final:
                    raise
        self.next_try = 2 * len(self.held)

    def result(self) -> int:
        return self.c.result()


def count_blocks(enc: "Encoding", blocks) -> int:
    """`enc.count_ordinary("".join(blocks))` of an iterable of str blocks, summarizing each
    block once the next has come."""
    counter = BlockCounter(enc)
    pending: str | None = None
    carry = ""
    for block in blocks:
        if carry:
            block, carry = carry + block, ""
        if block and "\ud800" <= block[-1] <= "\udbff":
            # A high surrogate at the end may pair with a low one at the start of the next block:
            # keep the pair together (lengths are kept, so the summaries' offsets still meet).
            block, carry = block[:-1], block[-1]
        if not block:
            continue
        if pending is not None:
            counter.add(pending, block[:OVERLAP], False)
        pending = block
    if carry:
        pending = (pending or "") + carry
    if pending is None:
        return 0
    counter.add(pending, "", True)
    return counter.result()

"""The incremental, budget and interval operations for tokenizers that are not Encodings.

Hugging Face pipelines and SentencePiece models get the same methods as an `Encoding`
(`appender`, `prepender`, `intervals`, `chunks`, `chunk_spans`, `split_by_tokens`,
`decode_stream`), with the same meaning: every count is the tokenizer's own `count` of the text in question.  Two ways
to get there:

* A pipeline that is an Encoding in disguise (`pipeline.as_encoding`: Llama 3's tokenizer.json)
  hands the work to that Encoding and gets its costs: O(1) amortized per appended character,
  about constant time per interval.  Text that spells an added token is split out by HF
  but is plain text to an Encoding, so as soon as a text holds one, the exact general way
  below takes over.
* Otherwise the operations are built on `count` itself, which is exact for any normalizer,
  pre-tokenizer and model, at the price of re-counting: an append or an interval costs a
  count of the text (an interval: of the slice), and chunking costs O(log n) counts of about a
  chunk's length per chunk.

Where an Encoding cuts chunks at pre-token boundaries, the general way cuts at word ends (a
non-space character followed by a space, so that the space starts the next chunk, as it starts
the next piece in GPT-style splits), else at character boundaries.
"""

from __future__ import annotations

import re
from typing import Iterable

from .encoding import fits_until, is_high_surrogate

__all__ = ["IncrementalMixin", "Appender", "Prepender", "Intervals", "StreamDecoder", "AddedTokenScan"]

# A position before a run of white space that follows a non-space: where the general way cuts.
_WORD_END = re.compile(r"\S(?=\s)")


class AddedTokenScan:
    """Finds text that could be split out as an added token (any occurrence of a content)."""

    def __init__(self, contents=()):
        contents = sorted({c for c in contents if c}, key=len, reverse=True)
        self.longest = len(contents[0]) if contents else 0
        self._rx = re.compile("|".join(map(re.escape, contents))) if contents else None

    def found(self, text: str) -> bool:
        return self._rx is not None and self._rx.search(text) is not None


class _GrowingText:
    """A text growing at one end, with its count: through an Encoding's appender or prepender
    (`_inner`) while no added token shows up, else by counting the whole text again."""

    _at_end = True  # which end grows

    def __init__(self, tok, inner):
        self._tok = tok
        self._parts: list[str] = []  # in the order given
        self._edge = ""  # the characters at the growing end in which an added token could start
        self._count = 0
        self._inner = inner

    @property
    def count(self) -> int:
        return self._count

    @property
    def text(self) -> str:
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts if self._at_end else reversed(self._parts))]
        return self._parts[0] if self._parts else ""

    def tokens(self) -> list[int]:
        if self._inner is not None:
            return self._inner.tokens()
        return self._tok.encode(self.text)

    def _edge_of(self, text: str) -> str:
        keep = self._tok._added_scan.longest - 1
        if keep <= 0:
            return ""
        return text[max(0, len(text) - keep):] if self._at_end else text[:keep]

    def _grow(self, text: str) -> int:
        if not text:
            return self._count
        if self._inner is not None:
            window = self._edge + text if self._at_end else text + self._edge
            if not self._tok._added_scan.found(window):
                self._edge = self._edge_of(window)
                self._parts.append(text)
                self._count = self._inner.append(text) if self._at_end else self._inner.prepend(text)
                return self._count
            self._inner = None  # an added token: the general way from here on
        self._parts.append(text)
        self._count = self._tok.count(self.text)
        return self._count


class Appender(_GrowingText):
    """The token count of a text that grows at the end (see `incremental.Appender`)."""

    def __init__(self, tok, text: str = ""):
        super().__init__(tok, tok._delegate_appender())
        self.append(text)

    def append(self, text: str) -> int:
        """Append `text`; return the new count."""
        return self._grow(text)

    def snapshot(self) -> tuple:
        inner = self._inner.snapshot() if self._inner is not None else None
        return (self.text, self._count, inner)

    def rollback(self, snapshot: tuple) -> None:
        """Go back to the state of `snapshot()` (taken from this appender)."""
        text, count, inner = snapshot
        self._parts = [text] if text else []
        self._count = count
        self._edge = self._edge_of(text)
        if inner is None:
            self._inner = None
        elif self._inner is None:  # the general way took over since: start the fast one again
            self._inner = self._tok._delegate_appender()
            self._inner.append(text)
        else:
            self._inner.rollback(inner)


class Prepender(_GrowingText):
    """The token count of a text that grows at the start (see `incremental.Prepender`)."""

    _at_end = False

    def __init__(self, tok, text: str = ""):
        super().__init__(tok, tok._delegate_prepender())
        self.prepend(text)

    def prepend(self, text: str) -> int:
        """Put `text` in front; return the new count."""
        return self._grow(text)


class Intervals:
    """Token counts of slices of one text: `count(start, end) == tok.count(text[start:end])`."""

    def __init__(self, tok, text: str):
        self._tok = tok
        self.text = text
        self._inner = tok._delegate_intervals(text)

    def count(self, start: int = 0, end: int | None = None) -> int:
        if self._inner is not None:
            return self._inner.count(start, end)
        return self._tok.count(self.text[start:end])


class StreamDecoder:
    """Text of token ids arriving one at a time, as `tokenizers.decoders.DecodeStream` gives it.

    Decoding a token alone can be wrong: a decoder may strip the space that starts a text
    ("▁Hello" -> "Hello"), a WordPiece "##" joins its word, byte-fallback tokens make a
    character together.  So the ids since the last emitted text are decoded behind a few ids of
    context, and the new text is emitted once it is longer than the context's and does not end
    in U+FFFD (an unfinished character) -- the rule of HF's DecodeStream, whose output this
    reproduces step by step (tests/test_incremental_any.py).

    ```
    >>> dec = tok.decode_stream()
    >>> "".join(dec.decode(t) for t in ids) + dec.flush() == tok.decode(ids)
    True
    ```
    """

    def __init__(self, tok, skip_special_tokens: bool = False):
        self._tok = tok
        self._skip = skip_special_tokens
        self._ids: list[int] = []
        self._prefix = ""
        self._prefix_index = 0

    def _decode(self, ids: list[int]) -> str:
        if self._skip:
            return self._tok.decode(ids, skip_special_tokens=True)
        return self._tok.decode(ids)

    def step(self, token: int) -> str | None:
        """HF's `DecodeStream.step`: the new text, or None while there is none yet."""
        self._ids.append(token)
        text = self._decode(self._ids)
        if len(text.encode("utf-8", "surrogatepass")) > len(self._prefix.encode("utf-8", "surrogatepass")) \
                and not text.endswith("\ufffd"):
            if not text.startswith(self._prefix):
                raise ValueError("decode_stream: the decoded context changed (the decoder is not incremental)")
            new = text[len(self._prefix):]
            index = len(self._ids) - self._prefix_index
            del self._ids[:self._prefix_index]
            self._prefix = self._decode(self._ids)
            self._prefix_index = index
            return new
        return None

    def decode(self, token: int) -> str:
        """The text this token completes ('' while there is none)."""
        return self.step(token) or ""

    def feed(self, tokens: Iterable[int]) -> str:
        return "".join(map(self.decode, tokens))

    def flush(self) -> str:
        """The text of the ids not emitted yet (an unfinished character as U+FFFD); resets."""
        text = self._decode(self._ids)
        out = text[len(self._prefix):] if text.startswith(self._prefix) else ""
        self._ids, self._prefix, self._prefix_index = [], "", 0
        return out


def _char_bounds(text: str, start: int, end: int) -> list[int]:
    """Character boundaries in (start, end), never inside a surrogate pair."""
    return [i for i in range(start + 1, end) if not is_high_surrogate(text[i - 1])]


def _next_cut(tok, text: str, pos: int, max_tokens: int) -> int:
    """The end of the chunk of at most `max_tokens` tokens that starts at `pos`: the furthest
    word end that fits (searched in a window that doubles while all of it fits), else the
    furthest character boundary inside the first word that fits."""
    n = len(text)
    window = max(256, 8 * max_tokens)

    def count(end: int) -> int:
        return tok.count(text[pos:end])

    while True:
        end = min(n, pos + window)
        if end < n and is_high_surrogate(text[end - 1]):
            end += 1
        if end < n and count(end) <= max_tokens:
            window *= 2  # all of the window fits: the cut lies further on
            continue
        cands = [m.end() for m in _WORD_END.finditer(text, pos, end)]
        if end == n and (not cands or cands[-1] != n):
            cands.append(n)
        k = fits_until(count, cands, max_tokens)
        if k >= 0:
            return cands[k]
        first = cands[0] if cands else end
        chars = _char_bounds(text, pos, first)
        k = fits_until(count, chars, max_tokens)
        if k < 0:
            raise ValueError(f"the character at offset {pos} alone needs more than {max_tokens} tokens")
        return chars[k]


def chunk_spans(tok, text: str, max_tokens: int, overlap: int = 0) -> list[tuple[int, int]]:
    """(start, end) of consecutive slices of at most `max_tokens` tokens each (counted on
    their own); with `overlap`, each chunk after the first starts at the earliest word end of
    the previous chunk from which at most `overlap` of its tokens are repeated."""
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    if not 0 <= overlap < max_tokens:
        raise ValueError("overlap must be at least 0 and less than max_tokens")
    out: list[tuple[int, int]] = []
    pos = 0
    while pos < len(text):
        end = _next_cut(tok, text, pos, max_tokens)
        out.append((pos, end))
        if end >= len(text):
            break
        nxt = end
        if overlap:
            starts = [m.end() for m in _WORD_END.finditer(text, pos, end) if m.end() < end]
            # the tail's count falls (nearly always) as its start moves right: binary search
            lo, hi = 0, len(starts)
            while lo < hi:
                mid = (lo + hi) // 2
                if tok.count(text[starts[mid]:end]) <= overlap:
                    hi = mid
                else:
                    lo = mid + 1
            if lo < len(starts) and tok.count(text[starts[lo]:end]) <= overlap:
                nxt = starts[lo]
        pos = nxt
    return out


class IncrementalMixin:
    """The Encoding's incremental methods for a tokenizer with `count(text)` and `encode(text)`.

    A subclass that can hand the work to an Encoding overrides `_delegate_encoding(text)` and
    sets `_added_scan` to the text it must not hand over.
    """

    _added_scan = AddedTokenScan()

    def _delegate_encoding(self, text: str):
        """An Encoding whose ordinary counts equal this tokenizer's on `text`, or None."""
        return None

    def _delegate_appender(self):
        enc = self._delegate_encoding("")
        return enc.appender() if enc is not None else None

    def _delegate_prepender(self):
        enc = self._delegate_encoding("")
        return enc.prepender() if enc is not None else None

    def _delegate_intervals(self, text: str):
        enc = self._delegate_encoding(text)
        return enc.intervals(text) if enc is not None else None

    def decode_stream(self, skip_special_tokens: bool = False) -> StreamDecoder:
        """An incremental decoder: `.decode(token)` returns the text the token completes (''
        while none), `.step(token)` the same or None (HF's `DecodeStream`), `.flush()` the rest."""
        return StreamDecoder(self, skip_special_tokens)

    def appender(self, text: str = "") -> Appender:
        """A growing text whose `count` stays exact: `append(text)`, `count`, `tokens()`,
        `snapshot()` / `rollback(snapshot)` (anytok.incremental.generic)."""
        return Appender(self, text)

    def prepender(self, text: str = "") -> Prepender:
        """The same for text that grows at the start: `prepend(text)`, `count`, `tokens()`."""
        return Prepender(self, text)

    def intervals(self, text: str) -> Intervals:
        """`intervals(text).count(start, end) == count(text[start:end])`."""
        return Intervals(self, text)

    def chunk_spans(self, text: str, max_tokens: int, overlap: int = 0) -> list[tuple[int, int]]:
        """The (start, end) offsets of `chunks(text, max_tokens, overlap)`."""
        enc = self._delegate_encoding(text)
        if enc is not None:
            return enc.chunk_spans(text, max_tokens, overlap)
        return chunk_spans(self, text, max_tokens, overlap)

    def chunks(self, text: str, max_tokens: int, overlap: int = 0) -> list[str]:
        """Consecutive pieces of `text` of at most `max_tokens` tokens each (each counted on
        its own); with overlap=0 they join back to `text`."""
        return [text[a:b] for a, b in self.chunk_spans(text, max_tokens, overlap)]

    def split_by_tokens(self, text: str, max_tokens: int) -> tuple[str, str]:
        """(head, rest): `head` the longest start of `text` with at most `max_tokens` tokens
        (cut like `chunks`), `head + rest == text`."""
        enc = self._delegate_encoding(text)
        if enc is not None:
            return enc.split_by_tokens(text, max_tokens)
        if max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        if not text:
            return "", ""
        end = _next_cut(self, text, 0, max_tokens)
        return text[:end], text[end:]

"""BPE of a byte string that grows at one end, through the last (or first) token of every prefix.

From the uniqueness of BPE encodings (see backtrack.py): the encoding of a prefix, minus its
last token, is the encoding of the shorter prefix.  So the last token of every prefix
determines the encodings of all prefixes, and the last token of a new, one byte longer prefix
is the one token t ending there that is compatible with the last token of the prefix before
t (only one can be: the valid encoding is unique).  Appending a byte therefore costs the
tokens ending at that byte, each one compatibility check; nothing already computed changes,
and cutting the string back is truncating the tables.

These are the tables of GitHub's `bpe` crate's appendable encoder, written for tiktoken's merge
rule on top of `BacktrackEncoder`'s compatibility check.  (Text that grows to the left is
handled in encoding.py by re-encoding a short unstable stretch, which needs no mirror table.)
"""

from __future__ import annotations

from ..backtrack import BacktrackEncoder


class IrregularVocabulary(Exception):
    """A token met here does not satisfy the assumptions of the compatibility check."""


class AppendableBPE:
    """Encodings of all prefixes of a byte string that grows to the right."""

    def __init__(self, bt: BacktrackEncoder, data: bytes = b""):
        self.bt = bt
        self.data = bytearray()
        self.last: list[int] = []  # last[i]: last token of BPE(data[:i + 1])
        self.counts: list[int] = []  # counts[i]: number of tokens of BPE(data[:i + 1])
        self.extend(data)

    def __len__(self) -> int:
        return len(self.data)

    def extend(self, more: bytes) -> None:
        """Append bytes.  Raises IrregularVocabulary if the shortcut cannot be used."""
        bt = self.bt
        get = bt.ranks.get
        index = bt.suffix_index()
        data, last, counts = self.data, self.last, self.counts
        decoder = bt.token_bytes
        for byte in more:
            data.append(byte)
            end = len(data)
            top = min(index.get(bytes(data[-3:]), 2), end) if end >= 3 else end
            # Try first the previous last token grown by this byte: in long runs that is
            # usually the answer.  (Any order gives the same result: only one token passes.)
            grown = len(decoder[last[-1]]) + 1 if last else 0
            lengths = range(top, 0, -1)
            if 0 < grown <= top:
                lengths = [grown, *range(top, grown, -1), *range(grown - 1, 0, -1)]
            for n in lengths:
                start = end - n
                token = get(bytes(data[start:end]))
                if token is None:
                    continue
                ok = bt.split(token) is not None if start == 0 else bt.compatible(last[start - 1], token)
                if ok is None:
                    raise IrregularVocabulary(token)
                if ok:
                    last.append(token)
                    counts.append(counts[start - 1] + 1 if start else 1)
                    break
            else:
                raise IrregularVocabulary(bytes(data[-1:]))

    def truncate(self, n: int) -> None:
        del self.data[n:], self.last[n:], self.counts[n:]

    def count(self, n: int | None = None) -> int:
        """Tokens in the encoding of the first n bytes (all by default)."""
        n = len(self.data) if n is None else n
        return self.counts[n - 1] if n else 0

    def tokens(self, n: int | None = None) -> list[int]:
        n = len(self.data) if n is None else n
        out = []
        decoder = self.bt.token_bytes
        while n:
            token = self.last[n - 1]
            out.append(token)
            n -= len(decoder[token])
        out.reverse()
        return out

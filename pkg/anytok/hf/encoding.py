"""`tokenizers.Encoding`: the result of encoding one input (or a pair), token by token.

How data flows: the Tokenizer builds one Encoding per tokenized sequence (`_from_tokens`), the
post-processor wraps and merges them (`merge`), truncation cuts the surplus into `overflowing`,
padding extends them; every field is a parallel list, one entry per token.  Offsets are
character offsets into the original text of the sequence the token comes from.  The mapping
methods (`char_to_token`, `word_to_tokens`, ...) follow tokenizers' Rust `Encoding` exactly,
including their treatment of sequence ranges (`sequence_ids`).
"""

from __future__ import annotations

__all__ = ["Encoding"]

_DIRECTIONS = ("left", "right")


class Encoding:
    """The output of `Tokenizer.encode`: ids, tokens, offsets and the rest, one entry per token."""

    __slots__ = ("_ids", "_type_ids", "_tokens", "_words", "_offsets", "_special", "_attention",
                 "_overflowing", "_ranges")

    def __init__(self):
        self._ids: list[int] = []
        self._type_ids: list[int] = []
        self._tokens: list[str] = []
        self._words: list[int | None] = []
        self._offsets: list[tuple[int, int]] = []
        self._special: list[int] = []
        self._attention: list[int] = []
        self._overflowing: list[Encoding] = []
        self._ranges: dict[int, tuple[int, int]] = {}

    @classmethod
    def _new(cls, ids, type_ids, tokens, words, offsets, special, attention, overflowing=None,
             ranges=None) -> "Encoding":
        e = cls.__new__(cls)
        e._ids = ids
        e._type_ids = type_ids
        e._tokens = tokens
        e._words = words
        e._offsets = offsets
        e._special = special
        e._attention = attention
        e._overflowing = overflowing if overflowing is not None else []
        e._ranges = ranges if ranges is not None else {}
        return e

    def _copy(self) -> "Encoding":
        return Encoding._new(list(self._ids), list(self._type_ids), list(self._tokens), list(self._words),
                             list(self._offsets), list(self._special), list(self._attention),
                             [o._copy() for o in self._overflowing], dict(self._ranges))

    @classmethod
    def _from_pretokenized(cls, pts, type_id: int = 0, word_idx: int | None = None) -> "Encoding":
        """tokenizers' `PreTokenizedString::into_encoding` (character offsets)."""
        ids, tokens, words, offsets = [], [], [], []
        for idx, sp in enumerate(pts.splits):
            if sp.tokens is None:
                raise Exception("Split has not been tokenized, call `PreTokenizedString::tokenize` first")
            ns = sp.normalized
            word = idx if word_idx is None else word_idx
            for tok in sp.tokens:
                ids.append(tok.id)
                tokens.append(tok.value)
                s, e = tok.offsets
                offsets.append(ns.original_offsets(s, e))
                words.append(word)
        n = len(ids)
        return cls._new(ids, [type_id] * n, tokens, words, offsets, [0] * n, [1] * n)

    # -- fields -------------------------------------------------------------------------------
    @property
    def ids(self) -> list[int]:
        """The token ids."""
        return list(self._ids)

    @property
    def type_ids(self) -> list[int]:
        """The type (segment) id of each token."""
        return list(self._type_ids)

    @property
    def tokens(self) -> list[str]:
        """The token strings."""
        return list(self._tokens)

    @property
    def word_ids(self) -> list[int | None]:
        """The index of the word each token comes from (None for special tokens)."""
        return list(self._words)

    @property
    def words(self) -> list[int | None]:
        """Deprecated alias of `word_ids`."""
        import warnings

        warnings.warn("The `words` attribute is deprecated and will be removed in a future version. "
                      "Please use `word_ids` instead.", DeprecationWarning, stacklevel=2)
        return list(self._words)

    @property
    def offsets(self) -> list[tuple[int, int]]:
        """(start, end) character offsets of each token in its sequence's original text."""
        return list(self._offsets)

    @property
    def special_tokens_mask(self) -> list[int]:
        """1 for tokens added by the post-processor or padding, else 0."""
        return list(self._special)

    @property
    def attention_mask(self) -> list[int]:
        """1 for real tokens, 0 for padding."""
        return list(self._attention)

    @property
    def overflowing(self) -> list["Encoding"]:
        """What truncation cut off, as Encodings."""
        return list(self._overflowing)

    @property
    def n_sequences(self) -> int:
        """How many sequences this Encoding holds (1 or 2)."""
        return len(self._ranges) or 1

    @property
    def sequence_ids(self) -> list[int | None]:
        """For each token, the index of the sequence it belongs to (None for special tokens)."""
        out: list[int | None] = [None] * len(self._ids)
        for seq in range(self.n_sequences):
            s, e = self._range(seq)
            out[s:e] = [seq] * (e - s)
        return out

    def __len__(self) -> int:
        return len(self._ids)

    def __repr__(self) -> str:
        return (f"Encoding(num_tokens={len(self._ids)}, attributes=[ids, type_ids, tokens, offsets, "
                "attention_mask, special_tokens_mask, overflowing])")

    def __eq__(self, other):
        if not isinstance(other, Encoding):
            return NotImplemented
        return self.__getstate__() == other.__getstate__()

    __hash__ = None  # type: ignore[assignment]

    # -- pickling -----------------------------------------------------------------------------
    def _to_json(self) -> dict:
        return {"ids": self._ids, "type_ids": self._type_ids, "tokens": self._tokens, "words": self._words,
                "offsets": [list(o) for o in self._offsets], "special_tokens_mask": self._special,
                "attention_mask": self._attention, "overflowing": [o._to_json() for o in self._overflowing],
                "sequence_ranges": {str(k): {"start": s, "end": e} for k, (s, e) in self._ranges.items()}}

    @classmethod
    def _from_json(cls, d: dict) -> "Encoding":
        return cls._new(list(d["ids"]), list(d["type_ids"]), list(d["tokens"]), list(d["words"]),
                        [tuple(o) for o in d["offsets"]], list(d["special_tokens_mask"]),
                        list(d["attention_mask"]), [cls._from_json(o) for o in d["overflowing"]],
                        {int(k): (v["start"], v["end"]) for k, v in d["sequence_ranges"].items()})

    def __getstate__(self):
        import json

        return json.dumps(self._to_json(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    def __setstate__(self, state):
        import json

        other = Encoding._from_json(json.loads(state))
        for name in Encoding.__slots__:
            setattr(self, name, getattr(other, name))

    # -- sequences ----------------------------------------------------------------------------
    def _range(self, seq: int) -> tuple[int, int]:
        return self._ranges.get(seq, (0, len(self._ids)))

    def set_sequence_id(self, sequence_id: int) -> None:
        """Mark every token as belonging to sequence `sequence_id`."""
        self._ranges = {sequence_id: (0, len(self._ids))}

    def _set_type_ids(self, type_id: int) -> None:
        self._type_ids = [type_id] * len(self._ids)

    # -- mappings -----------------------------------------------------------------------------
    def token_to_sequence(self, token_index: int) -> int | None:
        """The sequence the token at `token_index` belongs to."""
        if token_index > len(self._ids):
            return None
        if not self._ranges:
            return 0
        for seq, (s, e) in self._ranges.items():
            if s <= token_index < e:
                return seq
        return None

    def token_to_chars(self, token_index: int) -> tuple[int, int] | None:
        """The character offsets of the token at `token_index` in its sequence."""
        if self.token_to_sequence(token_index) is None or not 0 <= token_index < len(self._offsets):
            return None
        return self._offsets[token_index]

    def token_to_word(self, token_index: int) -> int | None:
        """The word of the token at `token_index` in its sequence."""
        if self.token_to_sequence(token_index) is None or not 0 <= token_index < len(self._words):
            return None
        return self._words[token_index]

    def word_to_tokens(self, word_index: int, sequence_index: int = 0) -> tuple[int, int] | None:
        """(first token, last token + 1) of word `word_index` in sequence `sequence_index`."""
        rs, re_ = self._range(sequence_index)
        if re_ > len(self._words) or rs > re_:
            return None
        start = end = None
        for i, w in enumerate(self._words[rs:re_]):
            if w is not None and w > word_index:  # Rust: take_while(w <= Some(word)), None < Some
                break
            if w == word_index:
                if start is None or i < start:
                    start = i
                if end is None or i >= end:
                    end = i + 1
        if start is None or end is None:
            return None
        return (rs + start, rs + end)

    def word_to_chars(self, word_index: int, sequence_index: int = 0) -> tuple[int, int] | None:
        """The character span of word `word_index` in sequence `sequence_index`."""
        r = self.word_to_tokens(word_index, sequence_index)
        if r is None or r[1] == 0:
            return None
        return (self._offsets[r[0]][0], self._offsets[r[1] - 1][1])

    def char_to_token(self, char_pos: int, sequence_index: int = 0) -> int | None:
        """The index of the token holding character `char_pos` of sequence `sequence_index`."""
        rs, re_ = self._range(sequence_index)
        if re_ > len(self._offsets) or rs > re_:
            return None
        for i in range(rs, re_):
            s, e = self._offsets[i]
            if s <= char_pos < e:
                return i
        return None

    def char_to_word(self, char_pos: int, sequence_index: int = 0) -> int | None:
        """The word holding character `char_pos` of sequence `sequence_index`."""
        tok = self.char_to_token(char_pos, sequence_index)
        return None if tok is None else self.token_to_word(tok)

    # -- shaping ------------------------------------------------------------------------------
    def pad(self, length: int, direction: str = "right", pad_id: int = 0, pad_type_id: int = 0,
            pad_token: str = "[PAD]") -> None:
        """Pad (and pad the overflowing Encodings) to `length` tokens."""
        if direction not in _DIRECTIONS:
            raise ValueError(f"Unknown `direction`: `{direction}`. Use one of `left` or `right`")
        for o in self._overflowing:
            o.pad(length, direction, pad_id, pad_type_id, pad_token)
        n = length - len(self._ids)
        if n <= 0:
            return
        if direction == "left":
            self._ids = [pad_id] * n + self._ids
            self._type_ids = [pad_type_id] * n + self._type_ids
            self._tokens = [pad_token] * n + self._tokens
            self._words = [None] * n + self._words
            self._attention = [0] * n + self._attention
            self._special = [1] * n + self._special
            self._offsets = [(0, 0)] * n + self._offsets
            self._ranges = {k: (s + n, e + n) for k, (s, e) in self._ranges.items()}
        else:
            self._ids = self._ids + [pad_id] * n
            self._type_ids = self._type_ids + [pad_type_id] * n
            self._tokens = self._tokens + [pad_token] * n
            self._words = self._words + [None] * n
            self._attention = self._attention + [0] * n
            self._special = self._special + [1] * n
            self._offsets = self._offsets + [(0, 0)] * n

    def _slice(self, s: int, e: int) -> "Encoding":
        return Encoding._new(self._ids[s:e], self._type_ids[s:e], self._tokens[s:e], self._words[s:e],
                             self._offsets[s:e], self._special[s:e], self._attention[s:e])

    def truncate(self, max_length: int, stride: int = 0, direction: str = "right") -> None:
        """Keep `max_length` tokens; the rest goes, in windows overlapping by `stride`, to
        `overflowing` (the previous overflowing Encodings are dropped)."""
        if direction not in _DIRECTIONS:
            raise ValueError(f"Invalid truncation direction value : {direction}")
        n = len(self._ids)
        if max_length >= n:
            return
        if max_length == 0:
            whole = Encoding._new(self._ids, self._type_ids, self._tokens, self._words, self._offsets,
                                  self._special, self._attention, self._overflowing, self._ranges)
            empty = Encoding()
            for name in Encoding.__slots__:
                setattr(self, name, getattr(empty, name))
            self._overflowing = [whole]
            return
        if stride >= max_length:
            raise Exception(f"`stride` must be strictly less than `max_len={max_length}` (note that `max_len` "
                            "may be shorter than the max length of the original model, as it subtracts the "
                            "number of special characters")
        step = max_length - stride
        parts: list[tuple[int, int]] = []
        if direction == "right":
            for start in range(0, n, step):
                stop = min(start + max_length, n)
                parts.append((start, stop))
                if stop == n:
                    break
        else:
            for stop in range(n - 1, -1, -step):
                stop += 1
                start = max(stop - max_length, 0)
                if start < stop:
                    parts.append((start, stop))
                    if start == 0:
                        break
        first = self._slice(*parts[0])
        first._overflowing = [self._slice(s, e) for s, e in parts[1:]]
        for name in Encoding.__slots__:
            setattr(self, name, getattr(first, name))

    def _merge_with(self, pair: "Encoding", growing_offsets: bool) -> None:
        overflowings = []
        for so in self._overflowing:
            n = so._copy()
            n._merge_with(pair._copy(), growing_offsets)
            overflowings.append(n)
            for po in pair._overflowing:
                n = so._copy()
                n._merge_with(po._copy(), growing_offsets)
                overflowings.append(n)
        for po in pair._overflowing:
            n = self._copy()
            n._merge_with(po._copy(), growing_offsets)
            overflowings.append(n)
        base = len(self._ids)
        for k, (s, e) in pair._ranges.items():
            self._ranges[k] = (base + s, base + e)
        self._ids = self._ids + pair._ids
        self._type_ids = self._type_ids + pair._type_ids
        self._tokens = self._tokens + pair._tokens
        self._words = self._words + pair._words
        shift = self._offsets[-1][1] if growing_offsets and self._offsets else 0
        self._offsets = self._offsets + ([(s + shift, e + shift) for s, e in pair._offsets] if shift else pair._offsets)
        self._special = self._special + pair._special
        self._attention = self._attention + pair._attention
        self._overflowing = overflowings

    @staticmethod
    def merge(encodings, growing_offsets: bool = True) -> "Encoding":
        """One Encoding of `encodings` in order (offsets shifted to follow each other when
        `growing_offsets`)."""
        out = Encoding()
        for e in encodings:
            if not isinstance(e, Encoding):
                raise TypeError("merge expects a list of Encoding")
            out._merge_with(e._copy(), growing_offsets)
        return out

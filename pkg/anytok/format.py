"""The anytok vocab binary format (`.atok`): writer and strict reader.

Specified in docs/FORMAT.md.  In short::

    file    = magic "ANYTOK" | version varint | flags varint | stored_len varint
              | raw_len varint | crc32 u32le | payload[stored_len]
    payload = (compressed, per flags) sequence of fields up to its end
    field   = tag varint | len varint | data[len]

Every integer is an unsigned LEB128 varint (as in Rust's `postcard`); strings are UTF-8.  A tag
is `number << 1 | critical`: a reader skips an unknown field whose critical bit is clear, and
refuses a file with an unknown critical field (its meaning would change the tokens).

This module knows nothing of encoding text; it turns bytes into a `VocabData` and back.  Every
way a file can be wrong raises `VocabFormatError` with a message saying what is wrong.
"""

from __future__ import annotations

import json
import operator
import re
import sys
import zlib
from array import array
from bisect import bisect_left
from itertools import accumulate, compress, islice, repeat
from typing import Sequence

from .errors import VocabFormatError
from .vocab_text import duplicate_token, first_duplicate


__all__ = ["VocabData", "VocabFormatError", "dumps", "loads", "MAGIC", "FORMAT_VERSION"]

MAGIC = b"ANYTOK"
FORMAT_VERSION = 1

COMPRESS_NONE = 0
COMPRESS_ZLIB = 1
COMPRESS_LZMA = 2
_COMPRESSION_NAMES = {COMPRESS_NONE: "none", COMPRESS_ZLIB: "zlib", COMPRESS_LZMA: "lzma"}

# Field numbers.  The tag written is (number << 1) | critical.
F_NAME = 1  # str
F_SOURCE = 2  # str: where the vocab came from (informational)
F_PATTERN = 3  # str: the split pattern, as given to tiktoken
F_TOKENS = 4  # count, count x varint(len - 1), concatenated token bytes; rank = position
F_IDS = 5  # count of exceptions, then (position delta, id) pairs: ids that differ from rank
F_SPECIALS = 6  # count, then (str, id) pairs
F_N_VOCAB = 7  # varint: tiktoken's explicit_n_vocab
F_PROPERTIES = 8  # varint bit set: facts about the vocabulary checked by the writer
F_CONFIG = 9  # JSON text: a tokenizer that is not tiktoken-style (see "Pipeline tokenizers")
F_COLUMNS = 10  # the config's large arrays, as typed columns
F_TEXTS = 11  # the tokens as text (those that are UTF-8) joined by a separator, the rest as bytes
F_INDEX = 12  # a hash index of field 11's texts: lookups before the text table is built
_CRITICAL = {F_PATTERN, F_TOKENS, F_IDS, F_SPECIALS, F_CONFIG, F_COLUMNS, F_TEXTS}
_KNOWN = {F_NAME, F_SOURCE, F_PATTERN, F_TOKENS, F_IDS, F_SPECIALS, F_N_VOCAB, F_PROPERTIES, F_CONFIG, F_COLUMNS,
          F_TEXTS, F_INDEX}
# Field 12's arrays are little-endian 32-bit unsigned integers.
_U32 = next(code for code in "IL" if array(code).itemsize == 4)

# Property bits.  REGULAR: every token's own BPE is that token, and the two parts of its last
# merge have lower ranks (what the shortcuts of segment.py and backtrack.py rely on).
PROP_REGULAR = 1

# Sanity limits: a reader must never be talked into huge allocations by a corrupt header.
MAX_RAW_SIZE = 1 << 30
MAX_TOKEN_LEN = 1 << 16
MAX_ID = (1 << 32) - 1


class VocabData:
    """Everything a vocab file holds, as plain Python values.

    (A plain class rather than a dataclass: importing `dataclasses` costs ~8 ms, a tenth of
    loading an encoding.)
    """

    __slots__ = ("name", "pat_str", "_tokens", "special_tokens", "ids", "explicit_n_vocab", "source", "properties",
                 "config", "unknown_fields", "texts", "byte_tokens", "_count", "_joined", "index")
    _FIELDS = ("name", "pat_str", "tokens", "special_tokens", "ids", "explicit_n_vocab", "source", "properties",
               "config", "unknown_fields")

    def __init__(
        self,
        name: str,
        pat_str: str = "",
        tokens: list[bytes] | None = None,  # in rank order: tokens[rank] has that merge priority
        special_tokens: dict[str, int] | None = None,
        ids: dict[int, int] | None = None,  # rank -> id where they differ
        explicit_n_vocab: int | None = None,
        source: str = "",
        properties: int = 0,  # PROP_* bits
        config: dict | None = None,  # other tokenizers (HF pipelines, SentencePiece): their description
        unknown_fields: dict[int, bytes] | None = None,  # kept for round trips
    ):
        self.name = name
        self.pat_str = pat_str
        # A file whose tokens are stored as text (field 11) is read into `texts` (the tokens
        # that are UTF-8, as str, in rank order) and `byte_tokens` (rank -> bytes of the
        # others); `tokens` is then made from them when first asked for.  An Encoding builds
        # its text table straight from `texts`, which is what makes such files load faster.
        # Setting `tokens` clears both.
        self.tokens = [] if tokens is None else tokens
        self.special_tokens = {} if special_tokens is None else special_tokens
        self.ids = {} if ids is None else ids
        self.explicit_n_vocab = explicit_n_vocab
        self.source = source
        self.properties = properties
        self.config = config
        self.unknown_fields = {} if unknown_fields is None else unknown_fields

    @property
    def tokens(self) -> list[bytes]:
        """Every mergeable token's bytes, in rank order."""
        tokens = self._tokens
        if tokens is None:
            encoded = [text.encode("utf-8") for text in self.text_list()]  # type: ignore[union-attr]
            if not self.byte_tokens:
                tokens = encoded
            else:
                tokens, at = [], 0
                for rank in sorted(self.byte_tokens):
                    take = rank - len(tokens)
                    tokens += encoded[at : at + take]
                    at += take
                    tokens.append(self.byte_tokens[rank])
                tokens += encoded[at:]
            self._tokens = tokens
        return tokens

    @tokens.setter
    def tokens(self, tokens: list[bytes]) -> None:
        self._tokens = tokens
        self._count = len(tokens)
        self.texts = None
        self.byte_tokens = {}
        self._joined = None  # (field 11's UTF-8 text + separator, the separator, what) while `texts` waits
        self.index = None  # a file's field 12: a TextIndex over the joined text

    def text_list(self) -> list[str] | None:
        """`texts`; for a file read with an index (field 12), decoded from the stored text when
        first asked for (which is when the load skipped it)."""
        if self.texts is None and self._joined is not None:
            text, sep, what = self._joined  # (with a separator after the last token too)
            text = text[: -len(chr(sep).encode("utf-8"))]
            self.texts = _split_texts(text, sep, self._count, len(self.byte_tokens), what)
            self._joined = None
        return self.texts

    def token_count(self) -> int:
        """The number of mergeable tokens (without making `tokens`)."""
        return self._count

    def _fields(self) -> tuple:
        return tuple(getattr(self, k) for k in self._FIELDS)

    def __eq__(self, other: object) -> bool:
        return self._fields() == other._fields() if isinstance(other, VocabData) else NotImplemented

    def __repr__(self) -> str:
        return (f"VocabData(name={self.name!r}, pat_str={self.pat_str!r}, tokens=<{self._count}>, "
                f"special_tokens=<{len(self.special_tokens)}>, ids=<{len(self.ids)}>, "
                f"explicit_n_vocab={self.explicit_n_vocab!r}, source={self.source!r}, "
                f"properties={self.properties!r}, config={'None' if self.config is None else '<dict>'})")

    def token_ids(self) -> Sequence[int]:
        """The id of each token, in rank order."""
        if not self.ids:
            return range(self._count)
        out = list(range(self._count))
        for rank, token_id in self.ids.items():
            out[rank] = token_id
        return out

    def mergeable_ranks(self) -> dict[bytes, int]:
        """tiktoken's `mergeable_ranks`: token bytes -> token id (= rank)."""
        return dict(zip(self.tokens, self.token_ids()))

    @classmethod
    def from_mergeable_ranks(
        cls,
        name: str,
        pat_str: str,
        mergeable_ranks: dict[bytes, int],
        special_tokens: dict[str, int],
        explicit_n_vocab: int | None = None,
        source: str = "",
        properties: int = 0,
    ) -> "VocabData":
        tokens = sorted(mergeable_ranks, key=mergeable_ranks.__getitem__)
        ids = {pos: mergeable_ranks[tok] for pos, tok in enumerate(tokens) if mergeable_ranks[tok] != pos}
        return cls(
            name=name,
            pat_str=pat_str,
            tokens=tokens,
            special_tokens=dict(special_tokens),
            ids=ids,
            explicit_n_vocab=explicit_n_vocab,
            source=source,
            properties=properties,
        )


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def _varint(n: int) -> bytes:
    if n < 0:
        raise ValueError(f"varint must be non-negative, got {n}")
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


_VARINT14: list[bytes] = []  # _varint(n) for n < 2**14, then n's low 14 bits as two
# continuation bytes at [2**14 + n] (built on first use)


def _varints(values: list[int]) -> bytes:
    """b"".join(map(_varint, values)), with C-level maps for values under 2**28 (a vocabulary's
    lengths and ids: hundreds of thousands of them)."""
    if not values:
        return b""
    low, high = min(values), max(values)
    if low < 0 or high >= 1 << 28:
        return b"".join(map(_varint, values))
    if high < 0x80:
        return bytes(values)
    table = _VARINT14
    if not table:
        table += [_varint(n) for n in range(1 << 14)]
        table += [bytes([n & 0x7F | 0x80, n >> 7 | 0x80]) for n in range(1 << 14)]
    if high < 1 << 14:
        return b"".join(map(table.__getitem__, values))
    # n >= 2**14: its low 14 bits as two continuation bytes, then _varint(n >> 14) (n >> 14 is
    # under 2**14); n < 2**14: _varint(n), then nothing (table[0] sliced to b"").
    rest = list(map(operator.rshift, values, repeat(14)))
    first = map(table.__getitem__, map(operator.or_, map(operator.and_, values, repeat(0x3FFF)),
                                       map(operator.lshift, map(bool, rest), repeat(14))))
    second = map(table.__getitem__, rest)
    return b"".join(map(bytes.__add__, first, map(operator.getitem, second, map(_TAIL.__getitem__, map(bool, rest)))))


_TAIL = [slice(0, 0), slice(None)]  # [no rest, the rest's varint]


def _str(s: str) -> bytes:
    data = s.encode("utf-8")
    return _varint(len(data)) + data


def _field(number: int, data: bytes) -> bytes:
    tag = number << 1 | (1 if number in _CRITICAL else 0)
    return _varint(tag) + _varint(len(data)) + data


def _texts_field(tokens: list[bytes]) -> bytes:
    """Field 11: the tokens that are UTF-8 as one text, joined by a character none of them
    holds (the lowest such code point: the shortest in UTF-8), the others as bytes with their
    ranks."""
    texts: list[str] = []
    raw = []
    for rank, token in enumerate(tokens):
        try:
            texts.append(token.decode("utf-8"))
        except UnicodeDecodeError:
            raw.append((rank, token))
    used = set().union(*texts)
    sep = next(c for c in range(0x110000) if chr(c) not in used and not 0xD800 <= c < 0xE000)
    body = [_varint(len(tokens)), _varint(sep), _varint(len(raw))]
    prev = 0
    for rank, token in raw:
        body.append(_varint(rank - prev) + _varint(len(token) - 1) + token)
        prev = rank
    body.append(chr(sep).join(texts).encode("utf-8"))
    return b"".join(body)


def dumps(vocab: VocabData, compression: str = "lzma", tokens_as: str = "text") -> bytes:
    """Serialize `vocab`.  The output is deterministic (same input, same bytes).

    `tokens_as`: "text" stores the tokens as field 11 (faster to load: the reader's text table
    comes from one decode and one split), "bytes" as field 4 (what anytok wrote before field
    11 existed; readers of that time can read it).
    """
    if tokens_as not in ("text", "bytes"):
        raise ValueError(f"tokens_as is 'text' or 'bytes', not {tokens_as!r}")
    for tok in vocab.tokens:
        if not 1 <= len(tok) <= MAX_TOKEN_LEN:
            raise ValueError(f"token of length {len(tok)} cannot be stored")
    if len(set(vocab.tokens)) != len(vocab.tokens):
        raise ValueError("duplicate tokens")
    parts = [_field(F_NAME, vocab.name.encode("utf-8"))]
    if vocab.source:
        parts.append(_field(F_SOURCE, vocab.source.encode("utf-8")))
    if vocab.config is None:
        parts.append(_field(F_PATTERN, vocab.pat_str.encode("utf-8")))
        if tokens_as == "text":
            parts.append(_field(F_TEXTS, _texts_field(vocab.tokens)))
        else:
            lengths = _varints(list(map(operator.sub, map(len, vocab.tokens), repeat(1))))
            parts.append(_field(F_TOKENS, _varint(len(vocab.tokens)) + lengths + b"".join(vocab.tokens)))
    else:
        columns: list[bytes] = []
        text = json.dumps(_to_columns(vocab.config, columns), separators=(",", ":"))
        parts.append(_field(F_CONFIG, text.encode("ascii")))
        parts.append(_field(F_COLUMNS, _varint(len(columns)) + b"".join(columns)))
    if vocab.ids:
        body = [_varint(len(vocab.ids))]
        positions = sorted(vocab.ids)
        values = [0] * (2 * len(positions))
        values[0::2] = map(operator.sub, positions, [0, *positions[:-1]])
        values[1::2] = map(vocab.ids.__getitem__, positions)
        body.append(_varints(values))
        parts.append(_field(F_IDS, b"".join(body)))
    if vocab.special_tokens:
        # Kept in the caller's order: when two special tokens share an id (tiktoken's
        # o200k_harmony has <|endofprompt|> and <|reserved_200018|> both at 200018), the first
        # one is what that id decodes to.
        items = list(vocab.special_tokens.items())
        body = [_varint(len(items))] + [_str(s) + _varint(i) for s, i in items]
        parts.append(_field(F_SPECIALS, b"".join(body)))
    if vocab.explicit_n_vocab is not None:
        parts.append(_field(F_N_VOCAB, _varint(vocab.explicit_n_vocab)))
    if vocab.properties:
        parts.append(_field(F_PROPERTIES, _varint(vocab.properties)))
    for tag, data in sorted(vocab.unknown_fields.items()):
        parts.append(_varint(tag) + _varint(len(data)) + data)
    raw = b"".join(parts)

    if compression == "lzma":
        flag = COMPRESS_LZMA
        # A dictionary just larger than the payload compresses as well as preset 9's 64 MiB
        # and keeps the reader's memory small.
        dict_size = max(1 << 16, 1 << (len(raw) - 1).bit_length())
        import lzma  # imported when used: loading never needs it for zlib files

        filters = [{"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME, "dict_size": dict_size}]
        stored = lzma.compress(raw, format=lzma.FORMAT_XZ, check=lzma.CHECK_NONE, filters=filters)
    elif compression == "zlib":
        flag = COMPRESS_ZLIB
        stored = zlib.compress(raw, 9)
    elif compression == "none":
        flag = COMPRESS_NONE
        stored = raw
    else:
        raise ValueError(f"unknown compression {compression!r} (use 'lzma', 'zlib' or 'none')")
    head = MAGIC + _varint(FORMAT_VERSION) + _varint(flag) + _varint(len(stored)) + _varint(len(raw))
    crc = zlib.crc32(stored, zlib.crc32(head))
    return head + crc.to_bytes(4, "little") + stored


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------

_LZMA_MEMLIMIT = 1 << 28


class _Reader:
    __slots__ = ("buf", "pos", "end", "what")

    def __init__(self, buf: bytes | memoryview, pos: int, end: int, what: str):
        self.buf = buf
        self.pos = pos
        self.end = end
        self.what = what

    def fail(self, msg: str) -> VocabFormatError:
        return VocabFormatError(f"{self.what}: {msg} (at byte {self.pos})")

    def varint(self, name: str, limit: int = 1 << 64) -> int:
        buf, pos, end = self.buf, self.pos, self.end
        result = shift = 0
        while True:
            if pos >= end:
                raise self.fail(f"truncated varint for {name}")
            b = buf[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                break
            shift += 7
            if shift > 63:
                raise self.fail(f"varint for {name} is too long")
        if result > limit:
            raise self.fail(f"{name} is {result}, more than the limit {limit}")
        self.pos = pos
        return result

    def take(self, n: int, name: str) -> bytes:
        if n > self.end - self.pos:
            raise self.fail(f"{name} needs {n} bytes but only {self.end - self.pos} remain")
        data = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return data

    def text(self, name: str) -> str:
        n = self.varint(f"length of {name}", self.end - self.pos)
        data = self.take(n, name)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise self.fail(f"{name} is not valid UTF-8 ({e.reason})") from None

    def done(self, name: str) -> None:
        if self.pos != self.end:
            raise self.fail(f"{self.end - self.pos} unexpected bytes at the end of {name}")


def _read_tokens(data: bytes) -> list[bytes]:
    r = _Reader(data, 0, len(data), "tokens field")
    count = r.varint("token count", len(data))
    start = r.pos
    if count > len(data) - start:
        raise r.fail(f"token count {count} is larger than the field allows")
    lens_bytes = data[start : start + count]
    if lens_bytes.isascii():
        # Fast path: every stored length fits in one varint byte (all tokens <= 128 bytes).
        lengths: bytes | list[int] = lens_bytes
        r.pos = start + count
    else:
        lengths = [r.varint("token length", MAX_TOKEN_LEN - 1) for _ in range(count)]
    blob_start = r.pos
    total = sum(lengths) + count
    if total != len(data) - blob_start:
        raise r.fail(
            f"token lengths add up to {total} bytes but {len(data) - blob_start} bytes of tokens follow"
        )
    # Stored values are length - 1; token i spans bounds[i]:bounds[i + 1].
    if isinstance(lengths, bytes):
        sizes = lengths.translate(_PLUS_ONE)
    else:
        sizes = [n + 1 for n in lengths]
    bounds = list(accumulate(sizes, initial=blob_start))
    # A comprehension of slices: ~1.6x faster than a C-level map of `data.__getitem__` over
    # slice objects natively, and 2x under Pyodide (where calls through map cost more).
    return [data[a:b] for a, b in zip(bounds, islice(bounds, 1, None))]


_PLUS_ONE = bytes(range(1, 257)[:255]) + b"\x00"  # only used on bytes < 0x80


# What an encoding derived from another one's vocabulary may change (derive): everything but its
# tokens and their ids, plus mergeable tokens added after the base's last rank.  o200k_harmony is
# o200k_base with more special tokens; gpt2 is r50k_base under another name; p50k_base is
# r50k_base with 24 runs of spaces added (ids 50257-50280); p50k_edit is that with FIM tokens.
# The npm package ships the base file and these fields, not a second copy of the tokens
# (build_scripts/build_web.py).  "added_tokens" is [[id, token], ...] in rank order, each token's
# bytes as a string of code points 0-255 (latin-1), so that any bytes fit in JSON.
DERIVED_FIELDS = ("name", "pat_str", "special_tokens", "explicit_n_vocab", "source", "added_tokens")


def derivation(base: VocabData, vocab: VocabData) -> dict | None:
    """The fields (JSON-ready) that turn `base` into `vocab` with `derive`, or None when `vocab`
    is not `base`'s tokens (and their ids), possibly followed by more tokens, with other
    DERIVED_FIELDS."""
    same = ("properties", "config", "unknown_fields")
    if any(getattr(base, k) != getattr(vocab, k) for k in same):
        return None
    n = base.token_count()
    if vocab.token_count() < n or vocab.tokens[:n] != base.tokens:
        return None
    if base.ids != {rank: i for rank, i in vocab.ids.items() if rank < n}:
        return None
    fields = {k: getattr(vocab, k) for k in DERIVED_FIELDS[:-1] if getattr(base, k) != getattr(vocab, k)}
    if vocab.token_count() > n:
        ids = vocab.token_ids()
        fields["added_tokens"] = [[ids[rank], vocab.tokens[rank].decode("latin-1")] for rank in range(n, vocab.token_count())]
    return fields


def _added_tokens(vocab: VocabData, value, what: str) -> None:
    """Append derive's "added_tokens" to `vocab`'s tokens, keeping tokens stored as text as text
    (so that an Encoding still builds its table straight from them)."""
    if not isinstance(value, list):
        raise VocabFormatError(f"{what}: added_tokens must be a list of [id, token] pairs")
    added: list[bytes] = []
    ids: list[int] = []
    for item in value:
        if not (isinstance(item, list) and len(item) == 2 and type(item[0]) is int and item[0] >= 0
                and isinstance(item[1], str) and item[1]):
            raise VocabFormatError(f"{what}: added_tokens must be [id, token] pairs (a non-negative id and a "
                                   f"non-empty string), not {item!r}")
        try:
            added.append(item[1].encode("latin-1"))
        except UnicodeEncodeError:
            raise VocabFormatError(f"{what}: added token {item[1]!r} is not bytes as code points 0-255") from None
        ids.append(item[0])
    if not added:
        raise VocabFormatError(f"{what}: added_tokens is empty")
    if len(set(added)) != len(added):
        raise VocabFormatError(f"{what}: added_tokens holds a token twice")
    n = vocab.token_count()
    texts = vocab.text_list() if vocab.index is None else None
    if texts is not None:  # (texts: the tokens that are UTF-8; byte_tokens: the others)
        have_texts, have_bytes = set(texts), set(vocab.byte_tokens.values())

        def known(token: bytes) -> bool:
            try:
                return token.decode("utf-8") in have_texts
            except UnicodeDecodeError:
                return token in have_bytes

        old = next((t for t in added if known(t)), None)
    else:
        have = set(vocab.tokens)
        old = next((t for t in added if t in have), None)
    if old is not None:
        raise VocabFormatError(f"{what}: added token {old!r} is already a token")
    for rank, (token, token_id) in enumerate(zip(added, ids), n):
        if token_id != rank:
            vocab.ids[rank] = token_id
    if texts is not None:
        for rank, token in enumerate(added, n):
            try:
                texts.append(token.decode("utf-8"))
            except UnicodeDecodeError:
                vocab.byte_tokens[rank] = token
        vocab._count = n + len(added)
    else:
        vocab.tokens = vocab.tokens + added


def derive(vocab: VocabData, fields: dict, what: str = "derived vocab") -> VocabData:
    """`vocab` (changed in place, and returned) with `fields` (as `derivation` gives them)."""
    if not isinstance(fields, dict):
        raise VocabFormatError(f"{what}: derived fields must be an object")
    unknown = sorted(set(fields) - set(DERIVED_FIELDS))
    if unknown:
        raise VocabFormatError(f"{what}: cannot derive {', '.join(unknown)} (only {', '.join(DERIVED_FIELDS)})")
    for key, value in fields.items():
        if key == "added_tokens":
            _added_tokens(vocab, value, what)
            continue
        if key == "special_tokens":
            if not isinstance(value, dict) or not all(isinstance(k, str) and type(v) is int and v >= 0 for k, v in value.items()):
                raise VocabFormatError(f"{what}: special_tokens must map strings to ids")
        elif key == "explicit_n_vocab":
            if value is not None and (type(value) is not int or value < 0):
                raise VocabFormatError(f"{what}: explicit_n_vocab must be a count or null")
        elif not isinstance(value, str):
            raise VocabFormatError(f"{what}: {key} must be a string")
        setattr(vocab, key, value)
    _check_ids(vocab, what)
    return vocab


def loads(buf: bytes | bytearray | memoryview, what: str = "vocab file", *, check_duplicates: bool = True) -> VocabData:
    """Parse a vocab file.  Raises `VocabFormatError` on anything wrong with it.

    `check_duplicates=False` leaves the check for duplicate tokens to the caller (an Encoding
    does it while building its token text table, which costs nothing extra).
    """
    return _parse_payload(_payload(buf, what), what, check_duplicates)


def uncompressed(buf: bytes | bytearray | memoryview, what: str = "vocab file", *, index: bool = False) -> bytes:
    """The same vocab file with its payload stored uncompressed (flags 0): larger, and loaded
    without the decompression (the browser keeps bundled vocabularies in this form).  Checks
    the file as `loads` does, up to the payload's fields.

    `index=True` also adds a text index (field 12) to a file that stores its tokens as text
    (field 11) and has none: an Encoding loaded from it looks short ASCII texts up through the
    index and builds its text table only when a longer text comes (a browser's first count on
    a later visit).  The whole file is parsed then, and must be valid."""
    raw = _payload(buf, what)
    if index:
        vocab = _parse_payload(raw, what)
        texts = vocab.text_list()
        if texts is not None and vocab.index is None:
            sep = _texts_separator(raw, what)
            ids = vocab.token_ids()
            if vocab.byte_tokens:
                keep = bytearray(b"\x01") * len(ids)
                for rank in vocab.byte_tokens:
                    keep[rank] = 0
                ids = list(compress(ids, keep))
            raw += _field(F_INDEX, _index_field(texts, sep, ids))
    head = MAGIC + _varint(FORMAT_VERSION) + _varint(COMPRESS_NONE) + _varint(len(raw)) + _varint(len(raw))
    return head + zlib.crc32(raw, zlib.crc32(head)).to_bytes(4, "little") + raw


def _payload(buf: bytes | bytearray | memoryview, what: str) -> bytes:
    """A vocab file's payload: its header and checksum checked, decompressed."""
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise TypeError(f"expected bytes, got {type(buf).__name__}")
    buf = bytes(buf)
    if len(buf) < len(MAGIC):
        raise VocabFormatError(f"{what}: too short ({len(buf)} bytes) to be an anytok vocab file")
    if buf[: len(MAGIC)] != MAGIC:
        raise VocabFormatError(f"{what}: wrong magic bytes {buf[:len(MAGIC)]!r}, expected {MAGIC!r} (not an anytok vocab file)")
    r = _Reader(buf, len(MAGIC), len(buf), what)
    version = r.varint("format version")
    if version != FORMAT_VERSION:
        raise r.fail(f"unsupported format version {version} (this anytok reads version {FORMAT_VERSION})")
    flags = r.varint("flags")
    if flags not in _COMPRESSION_NAMES:
        raise r.fail(f"unknown flags {flags:#x}")
    stored_len = r.varint("stored payload size")
    raw_len = r.varint("payload size", MAX_RAW_SIZE)
    head_end = r.pos
    crc_bytes = r.take(4, "checksum")
    if stored_len != len(buf) - r.pos:
        raise r.fail(
            f"header says the payload has {stored_len} bytes but the file has {len(buf) - r.pos} after the header"
            + (" (file truncated?)" if stored_len > len(buf) - r.pos else " (trailing garbage?)")
        )
    stored = buf[r.pos :]
    crc = zlib.crc32(stored, zlib.crc32(buf[:head_end]))
    if crc != int.from_bytes(crc_bytes, "little"):
        raise VocabFormatError(f"{what}: checksum mismatch (file corrupted)")
    if flags == COMPRESS_NONE:
        raw = stored
    else:
        if flags == COMPRESS_ZLIB:
            errors: tuple[type[Exception], ...] = (zlib.error,)
        else:
            import lzma

            errors = (lzma.LZMAError,)
        try:
            if flags == COMPRESS_ZLIB:
                d = zlib.decompressobj()
                raw = d.decompress(stored, raw_len + 1)
            else:
                d = lzma.LZMADecompressor(format=lzma.FORMAT_XZ, memlimit=_LZMA_MEMLIMIT)
                raw = d.decompress(stored, raw_len + 1)
            if not d.eof or d.unused_data:
                raise VocabFormatError(f"{what}: compressed payload is truncated, longer than declared, or followed by garbage")
        except errors as e:
            raise VocabFormatError(f"{what}: cannot decompress payload ({e})") from None
    if len(raw) != raw_len:
        raise VocabFormatError(f"{what}: payload is {len(raw)} bytes after decompression, header says {raw_len}")
    return raw


def _parse_payload(raw: bytes, what: str, check_duplicates: bool = True) -> VocabData:
    r = _Reader(raw, 0, len(raw), what)
    seen: dict[int, bytes] = {}
    unknown: dict[int, bytes] = {}
    while r.pos < r.end:
        tag = r.varint("field tag")
        number, critical = tag >> 1, tag & 1
        size = r.varint(f"size of field {number}")
        data = r.take(size, f"field {number}")  # fails if the size runs past the end
        if number in _KNOWN:
            if critical != (number in _CRITICAL):
                raise r.fail(f"field {number} has the wrong critical bit")
            if number in seen:
                raise r.fail(f"field {number} appears twice")
            seen[number] = data
        elif critical:
            raise r.fail(f"unknown critical field {number}: written by a newer anytok, cannot be read safely")
        else:
            unknown[tag] = data
    if F_CONFIG in seen:
        return _parse_config_file(seen, unknown, what)
    if F_PATTERN not in seen:
        raise VocabFormatError(f"{what}: missing required field {F_PATTERN} (split pattern)")
    if (F_TOKENS in seen) == (F_TEXTS in seen):
        raise VocabFormatError(f"{what}: " + ("holds both the tokens as bytes (field 4) and as text (field 11)"
                                              if F_TOKENS in seen else
                                              f"missing required field {F_TOKENS} or {F_TEXTS} (tokens)"))

    def text(number: int, label: str) -> str:
        try:
            return seen[number].decode("utf-8")
        except UnicodeDecodeError:
            raise VocabFormatError(f"{what}: {label} is not valid UTF-8") from None

    vocab = VocabData(
        name=text(F_NAME, "name") if F_NAME in seen else "",
        pat_str=text(F_PATTERN, "split pattern"),
        tokens=_read_tokens(seen[F_TOKENS]) if F_TOKENS in seen else None,
        source=text(F_SOURCE, "source") if F_SOURCE in seen else "",
        unknown_fields=unknown,
    )
    if F_INDEX in seen and F_TEXTS not in seen:
        raise VocabFormatError(f"{what}: has a text index (field {F_INDEX}) but no token texts (field {F_TEXTS})")
    if F_TEXTS in seen:
        _read_texts(seen[F_TEXTS], vocab, what, seen.get(F_INDEX))
    n_tokens = vocab.token_count()
    if F_IDS in seen:
        d = seen[F_IDS]
        rr = _Reader(d, 0, len(d), f"{what}: ids field")
        n = rr.varint("id exception count", n_tokens)
        pos = 0
        for k in range(n):
            step = rr.varint("position step", n_tokens)
            if k and step == 0:
                raise rr.fail("positions of id exceptions are not increasing")
            pos += step
            if pos >= n_tokens:
                raise rr.fail(f"id exception for position {pos}, but there are {n_tokens} tokens")
            vocab.ids[pos] = rr.varint("token id", MAX_ID)
        rr.done("ids field")
    if F_SPECIALS in seen:
        d = seen[F_SPECIALS]
        rr = _Reader(d, 0, len(d), f"{what}: special tokens field")
        n = rr.varint("special token count", len(d))
        for _ in range(n):
            s = rr.text("special token")
            i = rr.varint("special token id", MAX_ID)
            if s in vocab.special_tokens:
                raise rr.fail(f"special token {s!r} appears twice")
            vocab.special_tokens[s] = i
        rr.done("special tokens field")
    if F_N_VOCAB in seen:
        d = seen[F_N_VOCAB]
        rr = _Reader(d, 0, len(d), f"{what}: n_vocab field")
        vocab.explicit_n_vocab = rr.varint("explicit n_vocab", MAX_ID + 1)
        rr.done("n_vocab field")
    if F_PROPERTIES in seen:
        d = seen[F_PROPERTIES]
        rr = _Reader(d, 0, len(d), f"{what}: properties field")
        vocab.properties = rr.varint("properties")
        rr.done("properties field")
    _check_ids(vocab, what)
    if check_duplicates:
        if vocab.text_list() is not None:
            duplicate = duplicate_token(vocab.texts, list(vocab.byte_tokens.values()))
        else:
            duplicate = first_duplicate(vocab.tokens)
        if duplicate is not None:
            raise VocabFormatError(f"{what}: token {duplicate!r} appears more than once")
    return vocab


def _texts_separator(raw: bytes, what: str) -> int:
    """The separator of a payload's field 11 (the payload checked by _parse_payload before)."""
    r = _Reader(raw, 0, len(raw), what)
    while True:
        tag = r.varint("field tag")
        size = r.varint("size")
        if tag >> 1 == F_TEXTS:
            r.varint("token count")
            return r.varint("separator")
        r.pos += size


def _read_texts(data: bytes, vocab: VocabData, what: str, index: bytes | None = None) -> None:
    """Field 11 into vocab.texts and vocab.byte_tokens (see _texts_field); with field 12
    (`index`), into vocab.index, the texts left to VocabData.text_list."""
    r = _Reader(data, 0, len(data), "token texts field")
    count = r.varint("token count", len(data))
    sep = r.varint("separator", 0x10FFFF)
    if 0xD800 <= sep < 0xE000:
        raise r.fail(f"separator U+{sep:04X} is a surrogate")
    n_bytes = r.varint("count of tokens stored as bytes", count)
    byte_tokens: dict[int, bytes] = {}
    rank = 0
    pos = r.pos
    end = len(data)
    for k in range(n_bytes):
        # (varints of one byte read inline: o200k_base has 1,562 such tokens, and two method
        # calls each cost ~10 ms of a load under Pyodide)
        step = data[pos] if pos < end else 0x80
        if step < 0x80:
            pos += 1
        else:
            r.pos = pos
            step = r.varint("rank step")
            pos = r.pos
        if k and step == 0:
            raise r.fail("ranks of tokens stored as bytes are not increasing")
        rank += step
        if rank >= count:
            raise r.fail(f"token stored as bytes at rank {rank}, but there are {count} tokens")
        size = data[pos] if pos < end else 0x80
        if size < 0x80:
            pos += 1
        else:
            r.pos = pos
            size = r.varint("token length", MAX_TOKEN_LEN - 1)
            pos = r.pos
        token = data[pos : pos + size + 1]
        pos += size + 1
        if pos > end:
            r.pos = end
            raise r.fail(f"token at rank {rank} runs past the end")
        # Valid UTF-8 comes back unchanged through "replace"; anything else does not.
        if token.decode("utf-8", "replace").encode("utf-8") == token:
            raise r.fail(f"token {token!r} at rank {rank} is UTF-8 but stored as bytes (it belongs in the text)")
        byte_tokens[rank] = token
    r.pos = pos
    vocab._tokens = None
    vocab._count = count
    vocab.byte_tokens = byte_tokens
    if index is None:
        vocab.texts = _split_texts(data[pos:], sep, count, n_bytes, r.what)
        return
    # With an index the text is decoded, split and checked only when the table is built
    # (VocabData.text_list).
    sep_bytes = chr(sep).encode("utf-8")
    text = b"".join((memoryview(data)[pos:], sep_bytes))  # every token followed by sep: one copy
    vocab.texts = None
    vocab._joined = (text, sep, r.what)
    vocab.index = _read_index(index, text, sep_bytes, count - n_bytes, what)


def _split_texts(joined: bytes, sep: int, count: int, n_bytes: int, what: str) -> list[str]:
    """Field 11's UTF-8 text -> the token texts (`count - n_bytes` of them, none empty)."""
    try:
        text = joined.decode("utf-8")
    except UnicodeDecodeError:
        raise VocabFormatError(f"{what}: the token text is not valid UTF-8") from None
    texts = text.split(chr(sep)) if text else []
    if len(texts) != count - n_bytes:
        raise VocabFormatError(f"{what}: holds {len(texts)} token texts, but {count} tokens of which {n_bytes} "
                               "are stored as bytes")
    if "" in texts:
        raise VocabFormatError(f"{what}: an empty token")
    return texts


class TextIndex:
    """A vocabulary's token texts looked up through the hash index of field 12, before (or
    instead of) the text table: `get`, `[]` and `in` as on the table, on str keys.

    Bucket h (of 2**bits) holds the tokens whose UTF-8 bytes have CRC-32 h modulo 2**bits;
    for each, where it starts in field 11's text and its id.  A lookup
    is a few C-level calls and a compare in place (`bytes.startswith` at the stored offset):
    ~50x slower than a dict, but nothing to build: for the first short texts after a load.
    """

    __slots__ = ("_text", "_sep", "_mask", "_start", "_pos", "_ids")

    def __init__(self, text: bytes, sep: bytes, bits: int, start: array, pos: array, ids: array):
        self._text = text  # field 11's text with a separator after the last token too
        self._sep = sep
        self._mask = (1 << bits) - 1
        self._start, self._pos, self._ids = start, pos, ids

    def get(self, text: str, default=None):
        key = text.encode("utf-8")
        start = self._start
        h = zlib.crc32(key) & self._mask
        first, end = start[h], start[h + 1]
        if first == end:
            return default
        key += self._sep
        pos, hay = self._pos, self._text
        try:
            for j in range(first, end):
                if hay.startswith(key, pos[j]):
                    return self._ids[j]
        except IndexError:
            raise VocabFormatError(f"text index: bucket {h} starts past the last entry") from None
        return default

    def __getitem__(self, text: str) -> int:
        found = self.get(text)
        if found is None:
            raise KeyError(text)
        return found

    def __contains__(self, text: str) -> bool:
        return self.get(text) is not None


def _u32s(data) -> array:
    values = array(_U32)
    values.frombytes(data)
    if sys.byteorder == "big":
        values.byteswap()
    return values


def _read_index(data: bytes, text: bytes, sep_bytes: bytes, n_texts: int, what: str) -> TextIndex:
    """Field 12 (see _index_field), checked as far as its shape goes."""
    r = _Reader(data, 0, len(data), "text index field")
    bits = r.varint("index bits", 31)
    n = r.varint("indexed token count", n_texts + 1)
    if n != n_texts:
        raise r.fail(f"indexes {n} token texts, but the file holds {n_texts}")
    buckets = 1 << bits
    if len(data) - r.pos != 4 * (buckets + 1 + 2 * n):
        raise r.fail(f"{len(data) - r.pos} bytes of arrays, expected {4 * (buckets + 1 + 2 * n)}")
    at = r.pos
    view = memoryview(data)
    start = _u32s(view[at : at + 4 * (buckets + 1)])
    at += 4 * (buckets + 1)
    pos = _u32s(view[at : at + 4 * n])
    ids = _u32s(view[at + 4 * n :])
    # The entries are trusted as the rest of the file is (the writer made them from the texts,
    # and the checksum covers them): a pass over them would cost a third of what the index
    # saves.  A bucket start past the entries fails the lookup that meets it (TextIndex.get).
    if start[0] != 0 or start[-1] != n:
        raise r.fail("bucket starts out of range")
    return TextIndex(text, sep_bytes, bits, start, pos, ids)


def _index_field(texts: list[str], sep: int, ids: Sequence[int]) -> bytes:
    """Field 12 for field 11's `texts` (rank order) and their ids: `varint bits`, `varint n`,
    then little-endian u32 arrays: `start[2**bits + 1]` (bucket h's entries are
    start[h]:start[h + 1]), `offset[n]` (where each entry's token starts in field 11's text),
    `id[n]`; entries by bucket, a bucket's in rank order.  A token is in bucket
    CRC-32(its UTF-8 bytes) mod 2**bits.  (C-level maps and sorts throughout; `uncompressed`
    with the index, parse included, takes ~0.35 s for o200k_base under Pyodide, ~0.2 s
    natively.)"""
    n = len(texts)
    bits = max(4, n.bit_length() - 1)  # 1 to 2 tokens per bucket
    sep_bytes = chr(sep).encode("utf-8")
    tokens = chr(sep).join(texts).encode("utf-8").split(sep_bytes) if texts else []
    offsets = list(map(operator.add, accumulate(map(len, tokens), initial=0), range(0, (n + 1) * len(sep_bytes), len(sep_bytes))))
    hashes = list(map(operator.and_, map(zlib.crc32, tokens), repeat((1 << bits) - 1)))
    order = sorted(range(n), key=hashes.__getitem__)  # stable: rank order within a bucket
    take = operator.itemgetter(*order) if n > 1 else (lambda values: tuple(values[i] for i in order))
    by_bucket = take(hashes)
    arrays = [array(_U32, map(bisect_left, repeat(by_bucket), range((1 << bits) + 1))),
              array(_U32, take(offsets)), array(_U32, take(ids))]
    if sys.byteorder == "big":
        for values in arrays:
            values.byteswap()
    return _varint(bits) + _varint(n) + b"".join(values.tobytes() for values in arrays)


def _check_ids(vocab: VocabData, what: str) -> None:
    """Mergeable ids are unique and keep rank order; no special token takes a mergeable id.

    Two special tokens may share an id, as in tiktoken's own o200k_harmony.
    """
    n = vocab.token_count()
    if vocab.ids:
        ids = list(range(n))
        for pos, i in vocab.ids.items():
            ids[pos] = i
        if any(a >= b for a, b in zip(ids, ids[1:])):
            raise VocabFormatError(f"{what}: token ids are not increasing with rank")
        used = set(ids)
    else:
        used = None
    for s, i in vocab.special_tokens.items():
        taken = (i in used) if used is not None else i < n
        if taken:
            raise VocabFormatError(f"{what}: special token {s!r} has id {i}, which a mergeable token already has")
    if vocab.explicit_n_vocab is not None:
        if n + len(vocab.special_tokens) != vocab.explicit_n_vocab:
            raise VocabFormatError(
                f"{what}: explicit n_vocab is {vocab.explicit_n_vocab} but the file has "
                f"{n} mergeable + {len(vocab.special_tokens)} special tokens"
            )


def describe_compression(buf: bytes) -> str:
    """Name of the compression a file declares (for `anytok inspect`)."""
    r = _Reader(buf, len(MAGIC), len(buf), "vocab file")
    r.varint("format version")
    return _COMPRESSION_NAMES.get(r.varint("flags"), "unknown")


# --------------------------------------------------------------------------------------------
# Pipeline tokenizers: a JSON config with typed columns
# --------------------------------------------------------------------------------------------
# A tokenizer that is not tiktoken-style (a Hugging Face pipeline, a SentencePiece model) is
# stored as its config (field 9, JSON) in which every large array is replaced by
# {"$column": i}, the i-th entry of field 10.  A column is `type varint | size varint |
# data[size]`:
#   1 strings     count, count x varint(byte length), UTF-8 bytes concatenated
#   2 float64     count, count x 8 bytes little-endian
#   3 float32     count, count x 4 bytes little-endian (when every value is a float32)
#   4 integers    count, count x zigzag varint
#   5 str pairs   count, then 2 x count strings laid out as type 1
# Strings use UTF-8 with surrogates allowed (a vocabulary may hold anything).

COLUMN_MIN = 64
COL_STR, COL_F64, COL_F32, COL_INT, COL_STR_PAIR, COL_I32 = 1, 2, 3, 4, 5, 6
_COLUMN_NAMES = {COL_STR: "strings", COL_F64: "float64", COL_F32: "float32", COL_INT: "integers", COL_STR_PAIR: "string pairs", COL_I32: "int32"}


def _strings(items: list[str]) -> bytes:
    data = [s.encode("utf-8", "surrogatepass") for s in items]
    return _varint(len(data)) + _varints(list(map(len, data))) + b"".join(data)


def _is_f32(values: list[float]) -> bool:
    packed = array("f", values)
    return packed.tolist() == values


def _column(values: list) -> bytes | None:
    """The column encoding of a list, or None if it is not one uniform type."""
    kinds = set(map(type, values))
    if kinds == {str}:
        kind, body = COL_STR, _strings(values)
    elif kinds == {float}:
        if _is_f32(values):
            kind, arr = COL_F32, array("f", values)
        else:
            kind, arr = COL_F64, array("d", values)
        if sys.byteorder == "big":
            arr.byteswap()
        body = _varint(len(values)) + arr.tobytes()
    elif kinds == {int}:
        if -(1 << 31) <= min(values) and max(values) < (1 << 31):
            # Fixed width: read with one C-level call (varints would take a Python loop).
            arr = array("i", values) if array("i").itemsize == 4 else array("l", values)
            if sys.byteorder == "big":
                arr.byteswap()
            kind, body = COL_I32, _varint(len(values)) + arr.tobytes()
        else:
            body = _varint(len(values)) + b"".join(_varint(v << 1 if v >= 0 else (-v << 1) - 1) for v in values)
            kind = COL_INT
    elif kinds <= {list, tuple} and all(len(v) == 2 and type(v[0]) is str and type(v[1]) is str for v in values):
        kind, body = COL_STR_PAIR, _strings([s for pair in values for s in pair])
        body = _varint(len(values)) + body
    else:
        return None
    return _varint(kind) + _varint(len(body)) + body


def _to_columns(obj, columns: list[bytes]):
    if isinstance(obj, dict):
        if "$column" in obj:
            raise ValueError("a config may not use the key '$column'")
        return {k: _to_columns(v, columns) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        if len(obj) >= COLUMN_MIN:
            col = _column(list(obj))
            if col is not None:
                columns.append(col)
                return {"$column": len(columns) - 1}
        return [_to_columns(v, columns) for v in obj]
    return obj


_ONE_BYTE_VARINTS = re.compile(rb"[\x00-\x7f]*")


def _read_lengths(r: _Reader, count: int) -> list[int]:
    """`count` varints of string lengths.  Most are one byte (< 128): runs of those are taken
    as they are, C-level, and only the longer ones read one by one."""
    out: list[int] = []
    buf = r.buf
    while len(out) < count:
        run = _ONE_BYTE_VARINTS.match(buf, r.pos, min(r.end, r.pos + count - len(out))).end()
        out += buf[r.pos : run]
        r.pos = run
        if len(out) < count:
            out.append(r.varint("string length", r.end - r.pos))
    return out


def _read_strings(r: _Reader, count: int) -> list[str]:
    lengths = _read_lengths(r, count)
    blob = r.take(sum(lengths), "strings")
    bounds = list(accumulate(lengths, initial=0))
    try:
        return list(map(bytes.decode, map(blob.__getitem__, map(slice, bounds, islice(bounds, 1, None))),
                        repeat("utf-8"), repeat("surrogatepass")))
    except UnicodeDecodeError:
        raise r.fail("a string in a column is not UTF-8") from None


def _read_column(kind: int, data: bytes, what: str) -> list:
    r = _Reader(data, 0, len(data), f"{what}: {_COLUMN_NAMES.get(kind, 'column')} column")
    count = r.varint("column length", len(data))
    if kind == COL_STR:
        out: list = _read_strings(r, count)
    elif kind in (COL_F64, COL_F32):
        width = 8 if kind == COL_F64 else 4
        raw = r.take(count * width, "numbers")
        arr = array("d" if kind == COL_F64 else "f")
        arr.frombytes(raw)
        if sys.byteorder == "big":
            arr.byteswap()
        out = arr.tolist()
    elif kind == COL_INT:
        out = []
        for _ in range(count):
            z = r.varint("integer")
            out.append(z >> 1 if not z & 1 else -((z + 1) >> 1))
    elif kind == COL_I32:
        raw = r.take(count * 4, "integers")
        arr = array("i") if array("i").itemsize == 4 else array("l")
        arr.frombytes(raw)
        if sys.byteorder == "big":
            arr.byteswap()
        out = arr.tolist()
    elif kind == COL_STR_PAIR:
        if count > len(data):
            raise r.fail("absurd count of string pairs")
        flat = _read_strings(r, 2 * count) if r.varint("string count", 2 * count) == 2 * count else None
        if flat is None:
            raise r.fail("string pair column does not hold twice as many strings")
        out = [[flat[i], flat[i + 1]] for i in range(0, len(flat), 2)]
    else:
        raise VocabFormatError(f"{what}: unknown column type {kind}")
    r.done("column")
    return out


def _from_columns(obj, columns: list, what: str):
    if isinstance(obj, dict):
        if set(obj) == {"$column"}:
            i = obj["$column"]
            if not isinstance(i, int) or not 0 <= i < len(columns):
                raise VocabFormatError(f"{what}: config refers to column {i!r}, but there are {len(columns)}")
            return columns[i]
        return {k: _from_columns(v, columns, what) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_from_columns(v, columns, what) for v in obj]
    return obj


def _parse_config_file(seen: dict[int, bytes], unknown: dict[int, bytes], what: str) -> VocabData:
    for other in (F_PATTERN, F_TOKENS, F_TEXTS, F_IDS, F_SPECIALS):
        if other in seen:
            raise VocabFormatError(f"{what}: field {other} cannot go with a tokenizer config")
    if F_COLUMNS not in seen:
        raise VocabFormatError(f"{what}: missing required field {F_COLUMNS} (columns)")
    d = seen[F_COLUMNS]
    r = _Reader(d, 0, len(d), f"{what}: columns field")
    n = r.varint("column count", len(d))
    columns = []
    for _ in range(n):
        kind = r.varint("column type")
        size = r.varint("column size", r.end - r.pos)
        columns.append(_read_column(kind, r.take(size, "column"), what))
    r.done("columns field")
    try:
        config = json.loads(seen[F_CONFIG].decode("ascii"))
    except (UnicodeDecodeError, ValueError) as e:
        raise VocabFormatError(f"{what}: the tokenizer config is not valid JSON ({e})") from None
    if not isinstance(config, dict):
        raise VocabFormatError(f"{what}: the tokenizer config is not a JSON object")
    vocab = VocabData(
        name=seen[F_NAME].decode("utf-8", "replace") if F_NAME in seen else "",
        config=_from_columns(config, columns, what),
        source=seen[F_SOURCE].decode("utf-8", "replace") if F_SOURCE in seen else "",
        unknown_fields=unknown,
    )
    return vocab

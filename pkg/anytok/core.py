"""`Encoding`: tiktoken's public API, in pure Python.

Text flows: special-token scan -> `pretokenize.Splitter` (pieces) -> one dict lookup per piece
-> BPE (`bpe.py`) of the few pieces that are not a single token, once per distinct piece, cut
into segments first where that pays (`segment.py`) -> ids: the runs of single-token ids
between the misses, list slices spliced with the misses' ids (`_encode_pieces`).  Decoding is
a join of token bytes.
"""

from __future__ import annotations

import functools
import operator
import re
import threading
from array import array
from itertools import chain, compress, repeat
from typing import TYPE_CHECKING, AbstractSet, Collection, Literal, NoReturn, Sequence

from . import bpe
from ._gc import gc_paused
from .backtrack import BacktrackEncoder
from .format import PROP_REGULAR, VocabFormatError
from .segment import _SEP as SEGMENT_SEP
from .segment import Segmenter
from .vocab_text import text_table, texts_table
from .pretokenize import SURROGATE, Splitter

if TYPE_CHECKING:
    from .incremental import encoding as incremental  # imported where used: loading, encoding and counting need none of it

__all__ = ["Encoding"]

# Pieces that needed merging are remembered (piece -> ids) up to this many; then the cache is
# emptied and starts again, so memory stays bounded in long-running processes.
PIECE_CACHE_SIZE = 1 << 16
# Pieces needing merges are cut into segments (segment.py) once an encoding has seen this many
# characters of such pieces in one call.
SEGMENT_MIN_CHARS = 2000
# Up to this many pieces to merge (or segments), a plain loop beats the C-level set-up of
# the paths for many (it matters for the incremental operations, which encode a few pieces
# at a time).
FEW = 8
# Texts of at least this many characters are encoded and counted with the cyclic garbage
# collector paused (see anytok._gc).
GC_PAUSE_CHARS = 1 << 15
# An encoding loaded from a file with a text index (format field 12) looks up to this many
# characters of ASCII text up through the index, then builds its text table (a lookup through
# the index costs ~50 table lookups; the table, ~40-100 ms under Pyodide).
INDEX_CHARS = 1 << 14


def _positions_of_none(ids: list) -> list[int]:
    """Where `ids` holds None (the pieces that are not single tokens), by C-level `index` scans:
    a Python step per miss only, not per piece (misses are ~5 % of the pieces of English)."""
    out: list[int] = []
    index = ids.index
    i = -1
    try:
        while True:
            i = index(None, i + 1)
            out.append(i)
    except ValueError:
        return out


def _paused(fn, arg):
    """`fn(arg)` with the cyclic garbage collector paused (anytok._gc: the call's containers
    make no cycles, and collections over them cost ~5 % of a big encode)."""
    with gc_paused():
        return fn(arg)


@functools.lru_cache(maxsize=16)
def _splitter(pat_str: str) -> Splitter:
    return Splitter(pat_str)


@functools.lru_cache(maxsize=128)
def _special_token_regex(tokens: frozenset[str]) -> re.Pattern[str]:
    # Longest first, so that a special token that is a prefix of another never wins.
    inner = "|".join(map(re.escape, sorted(tokens, key=lambda t: (-len(t), t))))
    return re.compile(f"({inner})")


def raise_disallowed_special_token(token: str) -> NoReturn:
    raise ValueError(
        f"Encountered text corresponding to disallowed special token {token!r}.\n"
        "If you want this text to be encoded as a special token, "
        f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
        f"If you want this text to be encoded as normal text, disable the check for this token "
        f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
        "To disable this check for all special tokens, pass `disallowed_special=()`.\n"
    )


def _fix_surrogates(text: str) -> str:
    # tiktoken's repair: surrogate pairs become the character they encode, lone surrogates
    # become U+FFFD.
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _unrepaired(text: str, offsets: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Offsets into `_fix_surrogates(text)` as offsets into `text`: each surrogate pair there is
    one character."""
    where = []  # repaired character index -> index in text
    i, n = 0, len(text)
    while i < n:
        where.append(i)
        i += 2 if "\ud800" <= text[i] < "\udc00" and i + 1 < n and "\udc00" <= text[i + 1] < "\ue000" else 1
    where.append(n)
    return [(where[a], where[b]) for a, b in offsets]


class Encoding:
    """A tokenizer: split pattern + mergeable ranks + special tokens, as in tiktoken.

    ```
    >>> enc = anytok.get_encoding("o200k_base")
    >>> enc.encode("hello world")
    [24912, 2375]
    >>> enc.decode([24912, 2375])
    'hello world'
    ```
    """

    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: dict[bytes, int],
        special_tokens: dict[str, int],
        explicit_n_vocab: int | None = None,
    ):
        """Create an Encoding, exactly as `tiktoken.Encoding(...)`.

        Args:
            name: the encoding's name.
            pat_str: the split pattern (tiktoken / fancy-regex syntax).
            mergeable_ranks: token bytes -> rank; the rank is both the merge priority (lower
                merges first) and the token id.
            special_tokens: special token text -> id.
            explicit_n_vocab: if given, must equal the number of mergeable plus special
                tokens, and `max_token_value + 1`.
        """
        if not mergeable_ranks:
            raise ValueError("mergeable_ranks is empty")
        max_token = max(max(mergeable_ranks.values()), max(special_tokens.values(), default=0))
        if explicit_n_vocab:
            if len(mergeable_ranks) + len(special_tokens) != explicit_n_vocab:
                raise ValueError(
                    f"explicit_n_vocab is {explicit_n_vocab}, but there are {len(mergeable_ranks)} "
                    f"mergeable and {len(special_tokens)} special tokens"
                )
            if max_token != explicit_n_vocab - 1:
                raise ValueError(f"explicit_n_vocab is {explicit_n_vocab}, but the largest token id is {max_token}")
        self._setup(name, pat_str, special_tokens, explicit_n_vocab, max_token)
        self._ranks_cache = mergeable_ranks

    @classmethod
    def _from_vocab(cls, vocab, what: str = "vocab file") -> "Encoding":
        """An Encoding from a parsed vocab file (format.VocabData), building little up front.

        The token text table (what encoding looks pieces up in) is built here, and doubles as
        the check that no token appears twice; the bytes -> id table is made only when first
        needed (BPE of non-ASCII pieces, single-token lookups), so loading and encoding ASCII
        text skip it.
        """
        enc = cls.__new__(cls)
        ids = vocab.token_ids()
        max_token = max(ids[-1] if len(ids) else 0, max(vocab.special_tokens.values(), default=0))
        enc._setup(vocab.name, vocab.pat_str, vocab.special_tokens, vocab.explicit_n_vocab, max_token)
        enc._ranks_source = (vocab, ids)
        enc._regular = bool(vocab.properties & PROP_REGULAR)
        if vocab.index is not None:
            # A file with a text index (format field 12): no table yet.  Short ASCII texts are
            # looked up through the index (_indexed) until a longer one asks for the table.
            enc._index = vocab.index
            enc._invalid_tokens = list(vocab.byte_tokens.values())
            return enc
        if vocab.texts is None:
            table, enc._invalid_tokens, duplicate = text_table(vocab.tokens, ids)
        else:
            # Tokens stored as text: the table is made straight from the texts (the tokens'
            # bytes are made only if the bytes table or the decoder is needed).
            table, enc._invalid_tokens, duplicate = texts_table(vocab.texts, vocab.byte_tokens, ids)
        if duplicate is not None:
            raise VocabFormatError(f"{what}: token {duplicate!r} appears more than once")
        enc._str_ranks_cache = table
        return enc

    @classmethod
    def _with_splitter(cls, name: str, splitter, mergeable_ranks: dict[bytes, int],
                       special_tokens: dict[str, int]) -> "Encoding":
        """An Encoding whose pieces come from `splitter` (an object with `pattern`, `split` and
        `spans`, as `pretokenize.Splitter`) instead of a tiktoken pattern; used for tokenizers
        of other formats that are tiktoken encodings in disguise (pipeline/as_encoding.py)."""
        enc = cls.__new__(cls)
        max_token = max(max(mergeable_ranks.values()), max(special_tokens.values(), default=0))
        enc._setup(name, splitter.pattern, special_tokens, None, max_token, splitter)
        enc._ranks_cache = mergeable_ranks
        return enc

    def _setup(self, name, pat_str, special_tokens, explicit_n_vocab, max_token, splitter=None) -> None:
        self.name = name
        self._explicit_n_vocab = explicit_n_vocab
        self._pat_str = pat_str
        self._special_tokens = special_tokens
        self.max_token_value = max_token
        self._special_token_values = set(special_tokens.values())
        self._splitter = splitter if splitter is not None else _splitter(pat_str)
        self._ranks_cache: dict[bytes, int] | None = None
        self._ranks_source: tuple | None = None
        self._decoder_cache: list[bytes | None] | None = None
        self._backtrack: BacktrackEncoder | None = None
        self._segmenter: Segmenter | None = None
        self._segment_pairs = None  # the segmenter's pairs_source (set by registry.py)
        self._irregular_segments: set[str] = set()  # see _refine
        self._invalid_tokens: list[bytes] = []
        self._str_ranks_cache: dict[str, int] | None = None
        self._index = None  # format.TextIndex until the text table is built (see _from_vocab)
        self._index_chars = 0  # characters looked up through it so far (INDEX_CHARS)
        self._piece_cache: dict[str, list[int]] = {}
        self._regular = False  # known: every token regular (see is_regular)
        self._lock = threading.Lock()

    @property
    def _mergeable_ranks(self) -> dict[bytes, int]:
        """token bytes -> rank (= id), as tiktoken's attribute of the same name."""
        ranks = self._ranks_cache
        if ranks is None:
            with self._lock:
                if self._ranks_cache is None:
                    vocab, ids = self._ranks_source
                    self._ranks_cache = dict(zip(vocab.tokens, ids))
                ranks = self._ranks_cache
        return ranks

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    # ====================
    # Encoding
    # ====================

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode text, treating special tokens as plain text.

        Same as `encode(text, disallowed_special=())`, but a little faster.

        ```
        >>> enc.encode_ordinary("hello world")
        [24912, 2375]
        ```
        """
        if not text.isascii() and SURROGATE.search(text):
            text = _fix_surrogates(text)
        return self._encode_chunk(text)

    def encode(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[int]:
        """Encode text into token ids.

        Special tokens are text such as `<|endoftext|>` that has a meaning of its own for a model.
        By default, text that looks like a special token raises `ValueError`, so that untrusted
        input cannot smuggle one in:

        - `allowed_special`: special tokens to encode as their special id (`"all"` for all).
        - `disallowed_special`: special tokens whose text raises `ValueError` (`"all"`, the
          default, means every special token not allowed; `()` turns the check off, and such
          text is encoded as ordinary text).

        ```
        >>> enc.encode("hello world")
        [24912, 2375]
        >>> enc.encode("<|endoftext|>", allowed_special="all")
        [199999]
        >>> enc.encode("<|endoftext|>", disallowed_special=())
        [27, 91, 419, 1440, 919, 91, 29]
        ```
        Lone surrogates are handled as tiktoken does: surrogate pairs are joined into the
        character they encode and any other surrogate becomes U+FFFD.
        """
        allowed = self._check_special(text, allowed_special, disallowed_special)
        if not text.isascii() and SURROGATE.search(text):
            text = _fix_surrogates(text)
        if not allowed:
            return self._encode_chunk(text)
        return self._encode_with_specials(text, allowed)

    def encode_with_offsets(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> tuple[list[int], list[tuple[int, int]]]:
        """`encode`'s ids, and the (start, end) character offsets in `text` of each token.

        The ids are `encode(text, ...)`'s.  A token whose bytes begin or end inside a
        character's UTF-8 bytes spans that whole character, as Hugging Face `tokenizers`'
        byte-level offsets do, so two tokens may share a character.  An allowed special token
        spans its own text.  Offsets index `text` as given, even when it holds surrogates
        (a surrogate pair, one character for the ids, spans its two code points).

        ```
        >>> enc.encode_with_offsets("hello world")
        ([24912, 2375], [(0, 5), (5, 11)])
        ```
        """
        ids = self.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        # The tokens' bytes are the UTF-8 of the (repaired) text, in order.  Each character
        # has exactly one lead byte, so the number of lead bytes before a position is the
        # index of the character that position is in (or starts).
        decoder = self._decoder
        offsets: list[tuple[int, int]] = []
        if text.isascii():
            at = 0
            for t in ids:
                n = len(decoder[t])
                offsets.append((at, at + n))
                at += n
            return ids, offsets
        shapes: dict[int, tuple[int, bool]] = {}  # id -> (lead bytes, starts with a continuation byte)
        chars = 0  # lead bytes so far
        for t in ids:
            shape = shapes.get(t)
            if shape is None:
                b = decoder[t]
                shape = shapes[t] = (len(b) - sum(1 for c in b if 0x80 <= c < 0xC0), bool(b) and 0x80 <= b[0] < 0xC0)
            leads, inside = shape
            start = chars - 1 if inside else chars
            chars += leads
            offsets.append((start, chars))
        if len(text) != chars and SURROGATE.search(text):
            offsets = _unrepaired(text, offsets)
        return ids, offsets

    def count(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> int:
        """`len(enc.encode(text, ...))`, without building the list of ids.

        ```
        >>> enc.count("hello world")
        2
        ```
        """
        allowed = self._check_special(text, allowed_special, disallowed_special)
        if not text.isascii() and SURROGATE.search(text):
            text = _fix_surrogates(text)
        if not allowed:
            return self._count_chunk(text)
        total = 0
        start = 0
        for m in _special_token_regex(frozenset(allowed)).finditer(text):
            total += self._count_chunk(text[start : m.start()]) + 1
            start = m.end()
        return total + self._count_chunk(text[start:])

    def count_ordinary(self, text: str) -> int:
        """`len(enc.encode_ordinary(text))`, without building the list of ids."""
        if not text.isascii() and SURROGATE.search(text):
            text = _fix_surrogates(text)
        return self._count_chunk(text)

    def encode_ordinary_batch(self, text: list[str], *, num_threads: int = 8) -> list[list[int]]:
        """Encode a list of strings, ignoring special tokens.

        `num_threads` is accepted for compatibility with tiktoken and ignored: pure Python
        does not run faster on threads.
        """
        return [self.encode_ordinary(t) for t in text]

    def encode_batch(
        self,
        text: list[str],
        *,
        num_threads: int = 8,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[list[int]]:
        """Encode a list of strings; see `encode` for the special token arguments."""
        if allowed_special == "all":
            allowed_special = self.special_tokens_set
        if disallowed_special == "all":
            disallowed_special = self.special_tokens_set - allowed_special
        disallowed_special = frozenset(disallowed_special)
        return [
            self.encode(t, allowed_special=allowed_special, disallowed_special=disallowed_special) for t in text
        ]

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of the token whose text (or bytes) is exactly `text_or_bytes`.

        Special tokens count too.  Raises `KeyError` if there is no such token.

        ```
        >>> enc.encode_single_token("hello")
        24912
        ```
        """
        if isinstance(text_or_bytes, str):
            text = text_or_bytes
            if text in self._special_tokens:
                return self._special_tokens[text]
            text_or_bytes = text.encode("utf-8")
        try:
            return self._mergeable_ranks[text_or_bytes]
        except KeyError:
            pass
        try:
            return self._special_tokens[text_or_bytes.decode("utf-8")]
        except (KeyError, UnicodeDecodeError):
            raise KeyError(text_or_bytes) from None

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ):
        """`encode`, returned as a numpy uint32 array (needs numpy, which anytok does not)."""
        import numpy as np

        ids = self.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        return np.array(ids, dtype=np.uint32)

    # ====================
    # Decoding
    # ====================

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The bytes of a list of tokens.

        ```
        >>> enc.decode_bytes([24912, 2375])
        b'hello world'
        ```
        Raises `KeyError` for an id that is not a token, `TypeError` for one that is not an
        integer.
        """
        table = self._decoder
        if not isinstance(tokens, list):
            tokens = list(tokens)
        # A comprehension of list indexing (faster than a `map` of `__getitem__`: slightly in
        # CPython, by 1.5x under Pyodide).  Negative ids would index the list from its end:
        # converting the ids to an array of unsigned ints rejects them in one C loop (cheaper
        # than `min`).  Those, ids past the table, holes (None) and non-integers fail over to
        # the loop below, which raises for the first bad id: KeyError naming it, or TypeError
        # for a non-integer (as tiktoken).
        try:
            array("I", tokens)
            return b"".join([table[i] for i in tokens])
        except (OverflowError, IndexError, TypeError):
            pass
        out = []
        for token in tokens:
            data = self._token_bytes_or_none(token)
            if data is None:
                raise KeyError(f"Invalid token for decoding: {token}")
            out.append(data)
        return b"".join(out)

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """The text of a list of tokens.

        Bytes that are not valid UTF-8 (a token sequence may end inside a character) become
        U+FFFD by default; pass `errors="strict"` to raise instead.

        ```
        >>> enc.decode([24912, 2375])
        'hello world'
        ```
        """
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token (special tokens included).  Raises `KeyError` if unknown,
        `TypeError` if not an integer.

        ```
        >>> enc.decode_single_token_bytes(24912)
        b'hello'
        ```
        """
        data = self._token_bytes_or_none(token)
        if data is None:
            raise KeyError(str(token))
        return data

    def _token_bytes_or_none(self, token: object) -> bytes | None:
        i = operator.index(token)  # type: ignore[arg-type]  (TypeError for a non-integer, as tiktoken)
        table = self._decoder
        return table[i] if 0 <= i < len(table) else None

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """The bytes of each token, for showing how text was split.

        ```
        >>> enc.decode_tokens_bytes([24912, 2375])
        [b'hello', b' world']
        ```
        """
        return [self.decode_single_token_bytes(t) for t in tokens]

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The text of the tokens, and the character offset at which each token starts.

        A token that starts inside a UTF-8 character gets the offset of that character.
        Raises `UnicodeDecodeError` if the bytes are not valid UTF-8 (as tiktoken does).

        ```
        >>> enc.decode_with_offsets([24912, 2375])
        ('hello world', [0, 5])
        ```
        """
        token_bytes = self.decode_tokens_bytes(tokens)
        text_len = 0
        offsets = []
        for token in token_bytes:
            offsets.append(max(0, text_len - (0x80 <= token[0] < 0xC0)))
            text_len += sum(1 for c in token if not 0x80 <= c < 0xC0)
        text = b"".join(token_bytes).decode("utf-8", errors="strict")
        return text, offsets

    def decode_batch(self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int = 8) -> list[str]:
        """`decode` of each list of tokens (`num_threads` is ignored)."""
        return [self.decode(tokens, errors=errors) for tokens in batch]

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> list[bytes]:
        """`decode_bytes` of each list of tokens (`num_threads` is ignored)."""
        return [self.decode_bytes(tokens) for tokens in batch]

    # ====================
    # Incremental, budget and interval operations (incremental.py)
    # ====================

    def count_till_limit(self, text: str, limit: int) -> int | None:
        """The token count of `text` if it is at most `limit`, else None.

        Stops reading as soon as the count is known to pass the limit, so the work is about
        proportional to the part of the text the limit covers.  Special tokens count as text
        (as in `encode_ordinary`).

        ```
        >>> enc.count_till_limit("hello world", 5)
        2
        >>> enc.count_till_limit("hello world", 1) is None
        True
        ```
        """
        from .incremental import encoding as incremental

        return incremental.count_till_limit(self, text, limit)

    def appender(self, text: str = "") -> incremental.Appender:
        """A growing text whose token count stays exact: `append(text)`, `count`, `tokens()`,
        `snapshot()` / `rollback(snapshot)`.  See `incremental.Appender`."""
        from .incremental import encoding as incremental

        return incremental.Appender(self, text)

    def prepender(self, text: str = "") -> incremental.Prepender:
        """The same for text that grows at the start: `prepend(text)`, `count`, `tokens()`."""
        from .incremental import encoding as incremental

        return incremental.Prepender(self, text)

    def intervals(self, text: str) -> incremental.Intervals:
        """Token counts of slices: `intervals(text).count(start, end)` equals
        `len(encode_ordinary(text[start:end]))`, in about constant time per query."""
        from .incremental import encoding as incremental

        return incremental.Intervals(self, text)

    def chunks(self, text: str, max_tokens: int, overlap: int = 0) -> list[str]:
        """Split `text` into consecutive chunks of at most `max_tokens` tokens each (each
        counted on its own), cut at pre-token boundaries where possible, else at character
        boundaries.  With overlap=0, `"".join(chunks) == text`.

        ```
        >>> enc.chunks("one two three four", 2)
        ['one two', ' three four']
        ```
        """
        from .incremental import encoding as incremental

        return incremental.chunks(self, text, max_tokens, overlap)

    def chunk_spans(self, text: str, max_tokens: int, overlap: int = 0) -> list[tuple[int, int]]:
        """The (start, end) character offsets of `chunks(text, max_tokens, overlap)`."""
        from .incremental import encoding as incremental

        return incremental.chunk_spans(self, text, max_tokens, overlap)

    def split_by_tokens(self, text: str, max_tokens: int) -> tuple[str, str]:
        """(head, rest) with `head` the longest start of `text` that has at most `max_tokens`
        tokens (cut like `chunks`), and `head + rest == text`."""
        from .incremental import encoding as incremental

        return incremental.split_by_tokens(self, text, max_tokens)

    def decode_stream(self, errors: str = "replace") -> incremental.StreamDecoder:
        """An incremental decoder: `.decode(token)` returns text once whole UTF-8 characters
        are complete, `.flush()` the rest."""
        from .incremental import encoding as incremental

        return incremental.StreamDecoder(self, errors)

    def encode_raw(self, text_or_bytes: str | bytes) -> list[int]:
        """Plain BPE of the whole input, without splitting it into pieces first.

        Linear time (the backtracking encoder of backtrack.py; the heap merge if the
        vocabulary is irregular).  Unlike tiktoken's `_encode_single_piece`, an input that is
        itself a token is merged like any other (the same result for regular vocabularies).
        """
        data = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else bytes(text_or_bytes)
        out = self._backtracker().encode(data)
        return out if out is not None else bpe.heap_merge(data, self._mergeable_ranks)

    # ====================
    # Miscellaneous
    # ====================

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every mergeable token, sorted (bytewise), as tiktoken returns them."""
        return sorted(self._mergeable_ranks)

    @property
    def eot_token(self) -> int:
        """The id of `<|endoftext|>`."""
        return self._special_tokens["<|endoftext|>"]

    @functools.cached_property
    def special_tokens_set(self) -> set[str]:
        """The texts of all special tokens."""
        return set(self._special_tokens.keys())

    def is_special_token(self, token: int) -> bool:
        """Whether the id is a special token's."""
        if not isinstance(token, int):
            raise TypeError(f"token must be an int, got {type(token).__name__}")
        return token in self._special_token_values

    @property
    def n_vocab(self) -> int:
        """`max_token_value + 1` (as in tiktoken)."""
        return self.max_token_value + 1

    def token_env(self):
        """What `anytok.constrain` needs of this tokenizer (`constrain.tokens.TokenEnv`): the
        bytes of every mergeable token, the special tokens, end-of-sequence (the first of
        `<|endoftext|>`, `<|end_of_text|>`, ... it has, as llguidance) and `encode_ordinary`."""
        from .constrain.tokens import TokenEnv, eos_among

        source = self._ranks_source
        if self._ranks_cache is None and source is not None:  # (no bytes -> id table needed)
            vocab, ids = source
            token_bytes = dict(zip(ids, vocab.tokens))
        else:
            token_bytes = {rank: data for data, rank in self._mergeable_ranks.items()}
        specials = dict(self._special_tokens)
        return TokenEnv(token_bytes, self.n_vocab, eos_among(specials), specials, self.encode_ordinary)

    @property
    def pat_str(self) -> str:
        """The split pattern."""
        return self._pat_str

    # ====================
    # Private
    # ====================

    def _encode_single_piece(self, text_or_bytes: str | bytes) -> list[int]:
        """BPE of text or bytes without splitting it first (special tokens are not recognized).

        As tiktoken's: an input that is itself a token is that token; `str` is taken as its
        UTF-8 (a lone surrogate raises `UnicodeEncodeError`); anything else but `bytes`
        raises `TypeError`.
        """
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        elif not isinstance(text_or_bytes, bytes):
            raise TypeError(f"'{type(text_or_bytes).__name__}' object is not an instance of 'bytes'")
        return self._bpe(text_or_bytes)

    def _encode_only_native_bpe(self, text: str) -> list[int]:
        """tiktoken's check path: split `text`, then `_encode_single_piece` of each piece.

        Special-token text is plain text, and the text is not repaired first: a lone surrogate
        raises `UnicodeEncodeError` (as tiktoken).  tiktoken splits here with the `regex`
        package, whose Unicode tables may differ from those of its Rust split for recently
        assigned characters; anytok never imports `regex` and splits as tiktoken's `encode`
        does, so this equals `encode_ordinary` for every text without surrogates.
        """
        if text.isascii() or not SURROGATE.search(text):
            return self._encode_pieces(self._splitter.split(text))
        # tiktoken splits the text as it is, a lone surrogate being neither letter, number nor
        # space, and then fails on the first piece holding one.  anytok's split classes have no
        # surrogates: split with U+E000 (private use, the same classes) standing in for each,
        # and take the same spans of the text.
        out: list[int] = []
        for start, end in self._splitter.spans(SURROGATE.sub("\ue000", text)):
            out += self._encode_single_piece(text[start:end])
        return out

    def _encode_bytes(self, text: bytes) -> list[int]:
        """The tokens of arbitrary bytes, as tiktoken's `_encode_bytes` (its `CoreBPE` method).

        Valid UTF-8 is encoded as `encode_ordinary` of its text.  Otherwise tiktoken splits
        only the longest valid UTF-8 prefix: that prefix's tokens stay, except those of its
        last piece -- and, if that piece begins with a token of spaces, tabs and newlines
        only, the run of such tokens before it -- whose bytes are joined with the rest of
        the input (from the first invalid byte on) into one piece for BPE (or the single
        token, if those bytes are one).  `decode_bytes` of the result is always `text`.
        """
        if not isinstance(text, bytes):
            raise TypeError(f"'{type(text).__name__}' object is not an instance of 'bytes'")
        try:
            return self._encode_chunk(text.decode("utf-8"))
        except UnicodeDecodeError as err:
            valid = err.start  # the end of the longest valid UTF-8 prefix (Rust's valid_up_to)
        pieces = self._splitter.split(text[:valid].decode("utf-8"))
        if valid >= GC_PAUSE_CHARS:
            tokens = _paused(self._encode_pieces, pieces)
        else:
            tokens = self._encode_pieces(pieces)
        # How many tokens to re-merge with the invalid tail: those of the last piece ...
        last = len(self._encode_pieces(pieces[-1:])) if pieces else 0
        # ... and before them any run of whitespace tokens, if the last piece starts with one
        # (tiktoken's rule for its unstable tokens, because cl100k_base's `\s*[\r\n]+` can
        # join whitespace pieces).
        if last:
            table = self._decoder

            def all_space(token: int) -> bool:
                return not table[token].strip(b" \n\t")

            if all_space(tokens[-last]):
                while last < len(tokens) and all_space(tokens[-last - 1]):
                    last += 1
        if last:
            tail = self.decode_bytes(tokens[-last:]) + text[valid:]
            del tokens[-last:]
        else:
            tail = text[valid:]
        # `tail` is never empty: it holds the first invalid byte.
        tokens += self._bpe(tail)
        return tokens

    def _bpe(self, piece: bytes) -> list[int]:
        return bpe.encode_piece(piece, self._mergeable_ranks, self._long_piece)

    def _backtracker(self) -> BacktrackEncoder:
        if self._backtrack is None:
            self._backtrack = BacktrackEncoder(self._mergeable_ranks, self._decoder)
        return self._backtrack

    def _long_piece(self, piece: bytes) -> list[int] | None:
        return self._backtracker().encode(piece)

    def _check_special(self, text: str, allowed_special, disallowed_special) -> AbstractSet[str]:
        if allowed_special == "all":
            allowed_special = self.special_tokens_set
        if disallowed_special == "all":
            disallowed_special = self.special_tokens_set - allowed_special
        if disallowed_special:
            if not isinstance(disallowed_special, frozenset):
                disallowed_special = frozenset(disallowed_special)
            if match := _special_token_regex(disallowed_special).search(text):
                raise_disallowed_special_token(match.group())
        return allowed_special

    @property
    def _decoder(self) -> list[bytes | None]:
        """token id -> token bytes, special tokens included: a list indexed by id, None for an
        id that is no token (built on first use).  A list rather than a dict: decoding is then
        list indexing (see decode_bytes), faster than dict lookups, and for a vocabulary whose
        ids are its ranks 0..n-1 (OpenAI's) the token list of the vocab file is the table, so
        building it costs a copy."""
        table = self._decoder_cache
        if table is None:
            if self._ranks_cache is None and self._ranks_source is not None:
                vocab, ids = self._ranks_source
                tokens = vocab.tokens
            else:
                ranks = self._mergeable_ranks
                tokens, ids = list(ranks), list(ranks.values())
            table = [None] * (self.max_token_value + 1)
            if ids == range(len(tokens)):
                table[: len(tokens)] = tokens
            else:
                if min(ids, default=0) < 0:
                    raise ValueError(f"encoding {self.name!r}: a mergeable token has a negative rank")
                for token_id, data in zip(ids, tokens):
                    if table[token_id] is not None:
                        raise ValueError(f"encoding {self.name!r}: two mergeable tokens share a rank")
                    table[token_id] = data
            for text, token in self._special_tokens.items():
                if token < 0:
                    raise ValueError(f"encoding {self.name!r}: special token {text!r} has a negative id")
                if table[token] is not None:
                    raise ValueError(f"encoding {self.name!r}: special token {text!r} has id {token}, which a mergeable token already has")
            for text, token in self._special_tokens.items():
                # Special tokens sharing an id decode to the first of them (as tiktoken does).
                if table[token] is None:
                    table[token] = text.encode("utf-8")
            self._decoder_cache = table
        return table

    @property
    def _str_ranks(self) -> dict[str, int]:
        table = self._str_ranks_cache
        if table is None:
            with self._lock:
                table = self._str_ranks_cache
                if table is None:
                    if self._index is not None:
                        # Made as _from_vocab makes it without an index (and checked alike).
                        vocab, ids = self._ranks_source
                        table, self._invalid_tokens, duplicate = texts_table(vocab.text_list(), vocab.byte_tokens, ids)
                        if duplicate is not None:
                            raise VocabFormatError(f"{self.name}: token {duplicate!r} appears more than once")
                        vocab.index = None  # (its arrays and copy of the text, ~4 MB for o200k_base)
                    elif self._ranks_cache is None and self._ranks_source is not None:
                        vocab, ids = self._ranks_source
                        tokens = vocab.tokens
                        table, self._invalid_tokens, _ = text_table(tokens, ids)
                    else:
                        tokens, ids = list(self._mergeable_ranks), list(self._mergeable_ranks.values())
                        table, self._invalid_tokens, _ = text_table(tokens, ids)
                    self._str_ranks_cache = table
                    self._index = None
        return table

    def _piece_ids(self, piece: str) -> list[int]:
        """The BPE of one piece that is not a single token, through the piece cache."""
        ids = self._piece_cache.get(piece)
        if ids is None:
            ids = self._merge_new([piece])[0]
            if len(self._piece_cache) >= PIECE_CACHE_SIZE:
                self._piece_cache.clear()
            self._piece_cache[piece] = ids
        return ids

    def _merge_pieces(self, missed: list[str], table=None) -> list[list[int]]:
        """The BPE of each of `missed` (pieces or segments that are not single tokens).

        Each distinct piece is merged once per call (or found in the piece cache); the
        answers are then handed out by one C-level `map` over the piece list.
        """
        if len(missed) <= FEW and table is None:
            return list(map(self._piece_ids, missed))
        cache = self._piece_cache
        cached = cache.get
        found = {piece: cached(piece) for piece in set(missed)}
        new = [piece for piece, ids in found.items() if ids is None]
        if new:
            found.update(zip(new, self._merge_new(new, table)))
            if len(cache) + len(new) > PIECE_CACHE_SIZE:
                cache.clear()
            cache.update(zip(new, map(found.__getitem__, new)))
        return list(map(found.__getitem__, missed))

    def _merge_new(self, pieces: list[str], table=None) -> list[list[int]]:
        """BPE of each piece; ASCII ones on str with the text table, the others on bytes.

        The bytes table is fetched only if needed: it is built on first use (~50 ms natively
        for 200k tokens, more under Pyodide, and ~20 MB), so ASCII text never builds it --
        only runs of one character over bpe.STR_RUN_MAX and pieces over bpe.HEAP_MAX, which
        want the long-piece encoders of backtrack.py, take the bytes path.
        """
        if table is None:
            table = self._str_ranks  # (else a format.TextIndex, for ASCII pieces only)
        # An ASCII piece is merged on str (one byte per character) with the text table: `list(piece)`
        # and str keys are cheaper than slicing bytes.
        get, token_of, merge_parts = table.get, table.__getitem__, bpe.merge_parts
        ranks = None
        out = []
        for piece in pieces:
            if piece[-1] == SEGMENT_SEP:
                piece = piece[:-1]  # a marked segment (see _refine)
            if piece.isascii():
                n = len(piece)
                if n <= bpe.STR_LIST_MAX:
                    out.append(list(map(token_of, merge_parts(list(piece), get))))
                    continue
                if n <= bpe.STR_RUN_MAX or (n <= bpe.HEAP_MAX and piece.count(piece[0]) != n):
                    out.append(bpe.heap_merge(piece, table))
                    continue
            if ranks is None:
                ranks = self._mergeable_ranks
            data = piece.encode("utf-8")
            # A character that is not a token (3 bytes: most of CJK) is common in Chinese; one
            # of 4 bytes (outside the BMP: emoji, rare CJK) has its own shortcut too.
            n = len(data)
            out.append(bpe.merge3(data, ranks) if n == 3 else bpe.merge4(data, ranks) if n == 4
                       else bpe.merge(data, ranks, self._long_piece))
        return out

    def _refine(self, pieces: list[str], misses: list[int]) -> list[str] | None:
        """`pieces` with the pieces at `misses` cut into segments, or None if not worth it."""
        missed = list(map(pieces.__getitem__, misses))
        # Boundaries between ASCII characters are never cut, so an ASCII piece stays whole:
        # only the others go to the segmenter (half the missed text of the Japanese corpus is
        # ASCII pieces, which the segmenter would look at character by character).
        if "".join(missed).isascii():
            return None  # (English, code: one C-level pass instead of a test per piece)
        # Nor is a piece of one character (a sweep over the code points has many): nothing
        # in it to cut.
        wide = [len(piece) > 1 and not piece.isascii() for piece in missed]
        if not all(wide):
            misses = list(compress(misses, wide))
            if not misses:
                return None
            missed = list(compress(missed, wide))
        if self._segmenter is None:
            # The segmenter's table takes ~50 ms to build: not worth it for a little text.
            if sum(map(len, missed)) < SEGMENT_MIN_CHARS:
                return None
            self._segmenter = Segmenter(self._str_ranks_cache, self._invalid_tokens, self._segment_pairs)
        refined = self._segmenter.refine(pieces, misses, self._irregular_segments, separators=False)
        if refined is None:
            return None
        new_pieces, segments = refined
        # A segment that is a token is that token only if the token's own BPE is itself (true
        # of every token of a regular vocabulary; else checked once per token).  The others
        # come back marked (segment + SEGMENT_SEP, which no token matches), so that they are
        # merged by BPE like any piece that is not a token; `_merge_new` drops the mark.
        if not self._regular:
            split = self._backtracker().split
            get = self._str_ranks.get
            known = self._irregular_segments
            new = {seg for seg in set(segments).difference(known)
                   if (t := get(seg)) is not None and split(t) is None}
            if new:
                known |= new
                refined = self._segmenter.refine(pieces, misses, known, separators=False)
                if refined is None:
                    return None
                new_pieces = refined[0]
        return new_pieces

    def is_regular(self) -> bool:
        """Whether every token's own BPE is that token and its last merge's parts rank lower.

        True for all of OpenAI's vocabularies (their .atok files record it).  Computing it for
        another vocabulary takes no BPE of each token: tokens in rank order, each one's last
        merge found among the cuts of its bytes by the pair walk of the backtracking encoder
        (`BacktrackEncoder.all_regular`; ~0.5 s for 130k tokens, a third of a BPE of each);
        it only lets anytok skip a per-token check, so nothing else depends on it.
        """
        if not self._regular:
            self._regular = self._backtracker().all_regular()
        return self._regular

    def _encode_pieces(self, pieces: list[str], table=None, ascii: bool = False) -> list[int]:
        """The ids of already split pieces, concatenated (`table`: see _merge_new; `ascii`: the
        pieces are known to be ASCII, so none goes to the segmenter)."""
        get = (self._str_ranks if table is None else table).get
        ids = list(map(get, pieces))
        if len(ids) <= FEW and None not in ids:
            return ids  # type: ignore[return-value]  (appends encode a piece or two at a time)
        misses = _positions_of_none(ids)
        if not misses:
            return ids  # type: ignore[return-value]
        # Pieces that need merging are first cut where no token can span (see segment.py),
        # so that mostly short, repeated segments are left to merge.
        segments = None if ascii else self._refine(pieces, misses)
        if segments is not None:
            if len(segments) > FEW:
                return self._encode_many_misses(segments)
            pieces = segments
            ids = list(map(get, pieces))
            misses = _positions_of_none(ids)
        # Most pieces are one token: splice the BPE of the others (each distinct one merged
        # once) in between the runs of single-token ids.  A loop over the misses that extends
        # the output with list slices (memcpy) beats a C-level `chain` over every id by 2x:
        # the chain hands each of the ~200k ids of a MB of English through three iterators.
        merged = self._merge_pieces(list(map(pieces.__getitem__, misses)), table)
        out: list[int] = []
        start = 0
        for i, part in zip(misses, merged):
            out += ids[start:i]
            out += part
            start = i + 1
        out += ids[start:]
        return out

    def _encode_many_misses(self, pieces: list[str]) -> list[int]:
        """The ids of pieces of which many are not single tokens (segments of Chinese text:
        up to half of them, too many to splice one by one): a table from each distinct piece
        to its ids, then one C-level pass over the pieces."""
        distinct = list(dict.fromkeys(pieces))
        ids = list(map(self._str_ranks.get, distinct))
        table = dict(zip(distinct, zip(ids)))  # piece -> (id,)
        missed = list(compress(distinct, map(operator.is_, ids, repeat(None))))
        table.update(zip(missed, self._merge_pieces(missed)))
        return list(chain.from_iterable(map(table.__getitem__, pieces)))

    def _count_pieces(self, pieces: list[str], index=None, ascii: bool = False) -> int:
        # Counting needs no ids for the pieces that are single tokens, only which ones are not.
        # (A comprehension with `not in`: as fast as a C-level `filterfalse` of the table's
        # `__contains__` in CPython 3.11, and ~1.7x faster under Pyodide.)
        table = self._str_ranks if index is None else index
        missed = [piece for piece in pieces if piece not in table]
        if not missed:
            return len(pieces)
        total = len(pieces) - len(missed)
        segments = None if ascii else self._refine(missed, list(range(len(missed))))
        if segments is not None:
            missed = [piece for piece in segments if piece not in table]
            total += len(segments) - len(missed)
        return total + sum(map(len, self._merge_pieces(missed, index)))

    def _indexed(self, text: str):
        """The text index, if `text` is to be looked up through it rather than the table: the
        table is not built yet, the text is ASCII and short, and the texts looked up so far
        are too (INDEX_CHARS); else None."""
        if self._index is None or not text.isascii():
            return None
        self._index_chars += len(text)
        return self._index if self._index_chars <= INDEX_CHARS else None

    def _encode_chunk(self, text: str) -> list[int]:
        """Ordinary text (no surrogates, no special tokens) -> ids."""
        if self._index is not None and (index := self._indexed(text)) is not None:
            return self._encode_pieces(self._splitter.split(text), index, True)
        if len(text) >= GC_PAUSE_CHARS:
            return _paused(self._encode_text, text)
        return self._encode_text(text)

    def _encode_text(self, text: str) -> list[int]:
        # (str.isascii is a flag test: CPython records it when it makes the str.)
        return self._encode_pieces(self._splitter.split(text), None, text.isascii())

    def _count_chunk(self, text: str) -> int:
        if self._index is not None and (index := self._indexed(text)) is not None:
            return self._count_pieces(self._splitter.split(text), index, True)
        if len(text) >= GC_PAUSE_CHARS:
            return _paused(self._count_text, text)
        return self._count_text(text)

    def _count_text(self, text: str) -> int:
        return self._count_pieces(self._splitter.split(text), None, text.isascii())

    def _encode_with_specials(self, text: str, allowed: AbstractSet[str]) -> list[int]:
        out: list[int] = []
        start = 0
        specials = self._special_tokens
        for m in _special_token_regex(frozenset(allowed)).finditer(text):
            out += self._encode_chunk(text[start : m.start()])
            out.append(specials[m.group()])
            start = m.end()
        out += self._encode_chunk(text[start:])
        return out

    # A bundled encoding pickles by name, like tiktoken's registered ones: registry.py sets this to
    # the function that gives it back (registry.get_encoding), so core needs no import of it.
    _by_name = None

    def __reduce_ex__(self, protocol):
        if self._by_name is not None:
            return (self._by_name, (self.name,))
        return super().__reduce_ex__(protocol)

    def __getstate__(self) -> object:
        state = {
            "name": self.name,
            "pat_str": self._pat_str,
            "mergeable_ranks": self._mergeable_ranks,
            "special_tokens": self._special_tokens,
        }
        if type(self._splitter) is not Splitter:
            state["splitter"] = self._splitter  # see _with_splitter
        return state

    def __setstate__(self, value: object) -> None:
        value = dict(value)  # type: ignore[call-overload]
        splitter = value.pop("splitter", None)
        if splitter is not None:
            del value["pat_str"]  # the splitter carries its pattern
            self.__dict__ = Encoding._with_splitter(splitter=splitter, **value).__dict__
            return
        self.__init__(**value)  # type: ignore[misc]

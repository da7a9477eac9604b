"""`tokenizers.trainers`: BpeTrainer, WordPieceTrainer, WordLevelTrainer, UnigramTrainer.

How data flows: `Tokenizer.train(files, trainer)` / `train_from_iterator(iterator, trainer)`
call `trainer._train_tokenizer(tokenizer, sequences)`.  Each sequence is cut as the tokenizer
cuts text (added tokens, normalizer, pre-tokenizer); the pieces are counted (the counts stay
in the trainer, as `words`, like tokenizers' `feed`); the algorithms of `anytok.train`
(`bpe_hf`, `wordpiece`, `wordlevel`, `unigram_hf`) learn from the counts; the tokenizer's model
is updated in place (BPE keeps its dropout/unk/fuse/byte-fallback options, WordPiece its unk
token and word length, Unigram is replaced) and the trainer's special tokens are added to the
tokenizer.
`ParityBpeTrainer` (not a `Trainer`, as in tokenizers) has its own `train_from_iterator(tokenizer,
train_iterators, dev_iterators, ratio)`: each language's texts are cut by the tokenizer's
normalizer and pre-tokenizer only, counted per language, and `anytok.train.bpe_parity` learns
from the counts; the tokenizer gets a new `BPE` model.

Options are attributes that read and write as in `tokenizers`; `__getstate__` is the same JSON
(`pickle`, `copy` work through it).  Where `tokenizers` orders things by a randomly seeded hash
(the words, the initial alphabet), this module keeps first-seen order.
"""

from __future__ import annotations

import json
from collections import Counter

__all__ = ["Trainer", "BpeTrainer", "WordPieceTrainer", "WordLevelTrainer", "UnigramTrainer", "ParityBpeTrainer"]

_PROGRESS = {"json": "JsonLines", "silent": "Silent"}
_PROGRESS_NAMES = {"Indicatif": "indicatif", "JsonLines": "json", "Silent": "silent"}


def _added_token(**fields):
    from .added import AddedToken

    return AddedToken(fields["content"], single_word=fields["single_word"], lstrip=fields["lstrip"],
                      rstrip=fields["rstrip"], normalized=fields["normalized"], special=fields["special"])


def _special(value, message: str) -> list[dict]:
    """tokenizers' conversion of special tokens: a str is special and not normalized; an
    AddedToken is made special (the object itself, as in tokenizers) and keeps an explicitly
    given `normalized`, else is not normalized."""
    if not isinstance(value, list):
        raise TypeError(f"'{type(value).__name__}' object cannot be converted to 'PyList'")
    out = []
    for tok in value:
        if isinstance(tok, str):
            out.append({"content": tok, "single_word": False, "lstrip": False, "rstrip": False,
                        "normalized": False, "special": True})
        elif hasattr(tok, "content") and hasattr(tok, "special"):
            tok.special = True
            norm = tok._normalized if hasattr(tok, "_normalized") else tok.normalized
            out.append({"content": tok.content, "single_word": bool(tok.single_word), "lstrip": bool(tok.lstrip),
                        "rstrip": bool(tok.rstrip), "normalized": False if norm is None else bool(norm),
                        "special": True})
        else:
            raise TypeError(message)
    return out


def _usize(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"argument '{name}': '{type(value).__name__}' object cannot be interpreted as an integer")
    if value < 0:
        raise OverflowError("can't convert negative int to unsigned")
    if value >= 1 << 64:
        raise OverflowError("int too big to convert")
    return value


def _opt_usize(value, name: str):
    return None if value is None else _usize(value, name)


def _bool(value, name: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"argument '{name}': '{type(value).__name__}' object cannot be converted to 'PyBool'")
    return value


def _opt_str(value, name: str):
    if value is not None and not isinstance(value, str):
        raise TypeError(f"argument '{name}': '{type(value).__name__}' object cannot be converted to 'PyString'")
    return value


def _str(value, name: str) -> str:
    """A constructor's str option (None is refused there; the attribute takes it)."""
    if not isinstance(value, str):
        raise TypeError(f"'{type(value).__name__ if value is not None else 'None'}' is not an instance of 'str'")
    return value


def _first_chars(value) -> list[str]:
    """The constructors' initial_alphabet: the first character of each string (empty ones
    dropped), each once."""
    if isinstance(value, str) or not hasattr(value, "__iter__"):
        raise TypeError("Can't extract `str` to `Vec`" if isinstance(value, str) else
                        f"'{type(value).__name__}' object cannot be converted to 'Sequence'")
    out: dict[str, None] = {}
    for s in value:
        if not isinstance(s, str):
            raise TypeError(f"'{type(s).__name__}' object cannot be converted to 'PyString'")
        if s:
            out[s[0]] = None
    return list(out)


def _chars(value) -> list[str]:
    """The setters' initial_alphabet: strings of exactly one character."""
    out: dict[str, None] = {}
    for s in value:
        if not isinstance(s, str) or len(s) != 1:
            raise ValueError("expected a string of length 1")
        out[s] = None
    return list(out)


def _float_json(x: float) -> str:
    """A float as serde_json writes it (positional for ordinary magnitudes)."""
    if x != x or x in (float("inf"), float("-inf")):
        return "null"
    if x == int(x) and abs(x) < 1e16:
        return f"{x:.1f}"
    r = repr(x)
    if "e" in r:
        from decimal import Decimal

        exp = int(r.split("e")[1])
        if -7 < exp < 16:
            r = format(Decimal(r), "f")
    return r


def _json(value) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float):
        return _float_json(value)
    if isinstance(value, (int, str)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{_json(v)}" for k, v in value.items()) + "}"
    return "[" + ",".join(_json(v) for v in value) + "]"


def _repr(value, name: str | None = None) -> str:
    """serde_pyo3's rendering (tokenizers' `repr`)."""
    if value is None:
        return "None"
    if value is True:
        return "True"
    if value is False:
        return "False"
    if isinstance(value, float):
        return _float_json(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value if name == "progress_format" else f'"{value}"'
    if isinstance(value, dict):
        if "content" in value and "special" in value:
            return "AddedToken(" + ", ".join(f"{k}={_repr(v)}" for k, v in value.items()) + ")"
        return "{" + ", ".join(f'"{k}":{_repr(v)}' for k, v in value.items()) + "}"
    return "[" + ", ".join(_repr(v) for v in value) + "]"


def _struct_repr(kind: str, state: dict) -> str:
    fields = ", ".join(f"{k}={_repr(v, k)}" for k, v in state.items())
    return f"{kind}({fields})"


class Trainer:
    """Base class of the trainers (not built directly: use one of its subclasses)."""

    _kind = ""
    _FIELDS: tuple = ()

    def __init__(self, **kwargs):
        if type(self) is Trainer:
            raise TypeError("cannot create 'tokenizers.trainers.Trainer' instances")
        self._state = self._defaults()
        self._words: Counter = Counter()
        for key, value in kwargs.items():
            setter = self._KWARGS.get(key)
            if setter is None:
                print(f"Ignored unknown kwargs option {key}")
                continue
            setter(self, value)

    _KWARGS: dict = {}

    def _defaults(self) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- state (tokenizers' serde JSON) ---------------------------------------------------------
    def _state_dict(self) -> dict:
        out = dict(self._state)
        out["words"] = dict(self._words)
        return out

    def __getstate__(self) -> bytes:
        return ("{" + json.dumps(self._kind) + ":" + _json(self._wrapped_state()) + "}").encode("utf-8")

    def _wrapped_state(self) -> dict:
        return self._state_dict()

    def __setstate__(self, state) -> None:
        if not isinstance(state, (bytes, bytearray, memoryview)):
            raise TypeError(f"'{type(state).__name__}' object cannot be converted to 'PyBytes'")
        try:
            doc = json.loads(bytes(state))
        except ValueError as e:
            raise Exception(f"Error while attempting to unpickle PyTrainer: {e}") from None
        if not isinstance(doc, dict) or len(doc) != 1:
            raise Exception("Error while attempting to unpickle PyTrainer: not a trainer")
        (kind, body), = doc.items()
        cls = _BY_KIND.get(kind)
        if cls is None:
            raise Exception(f"Error while attempting to unpickle PyTrainer: unknown variant `{kind}`")
        if kind == "WordPieceTrainer":
            body = body["bpe_trainer"]
        fresh = object.__new__(cls)
        fresh._state = fresh._defaults()
        for k in fresh._state:
            if k in body:
                fresh._state[k] = body[k]
        fresh._words = Counter(body.get("words") or {})
        self.__class__ = cls
        self._state = fresh._state
        self._words = fresh._words

    def __repr__(self) -> str:
        return f"{self._kind}({_struct_repr(self._kind, self._wrapped_state())})"

    __str__ = __repr__

    # -- training ------------------------------------------------------------------------------
    def _count(self, tokenizer, sequences) -> Counter:
        split = _splitter(tokenizer)
        chunked = getattr(split, "chunked", None)
        raw = getattr(split, "raw", None)
        if chunked is not None:
            words = _count_chunks(sequences, *chunked)
        elif raw is not None:
            # Pieces counted before their byte-level spelling, which is then made once per
            # distinct piece (it is one to one, so nothing merges).
            raw_split, spell = raw
            counts: Counter = Counter()
            update = counts.update
            for seq in sequences:
                if not isinstance(seq, str):
                    raise TypeError(f"training sequences must be str, not {type(seq).__name__}")
                update(raw_split(seq))
            words = Counter({spell(p): n for p, n in counts.items()})
        else:
            words = Counter()
            update = words.update
            for seq in sequences:
                if not isinstance(seq, str):
                    raise TypeError(f"training sequences must be str, not {type(seq).__name__}")
                update(split(seq))
        self._words = words
        return words

    def _special_contents(self) -> list[str]:
        return [t["content"] for t in self._state["special_tokens"]]

    def _finish(self, tokenizer, model_type: str, update) -> None:
        """Apply `update(config) -> config` to the tokenizer's model in place, then add the
        special tokens to the tokenizer."""
        model = tokenizer.model
        cfg = model.to_config()
        if cfg.get("type") != model_type:
            raise Exception(f"{self._kind} can only train a {model_type}")
        new = update(dict(cfg))
        model.__setstate__(json.dumps(new, ensure_ascii=False).encode("utf-8"))
        specials = [_added_token(**t) for t in self._state["special_tokens"]]
        if specials:
            tokenizer.add_special_tokens(specials)

    def _check_model(self, tokenizer, model_type: str) -> None:
        cfg = tokenizer.model.to_config()
        if cfg.get("type") != model_type:
            raise Exception(f"{self._kind} can only train a {model_type}")

    def _train_tokenizer(self, tokenizer, sequences) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


def _splitter(tokenizer):
    """The pieces a trainer counts for one sequence: the splits of the sequence after the
    added tokens are cut out, normalization and pre-tokenization (tokenizers' `feed`)."""
    fast = _fast_splitter(tokenizer)
    if fast is not None:
        return fast
    extract = getattr(tokenizer, "_extract_and_normalize", None)
    if extract is not None:
        def split(seq: str) -> list[str]:
            pts = extract(seq)
            pre = tokenizer.pre_tokenizer
            if pre is not None:
                pre._pre_tokenize(pts)
            return [s for s, *_ in pts.get_splits()]
        return split
    norm = tokenizer.normalizer
    pre = tokenizer.pre_tokenizer

    def split_public(seq: str) -> list[str]:
        s = norm.normalize_str(seq) if norm is not None else seq
        if pre is None:
            return [s] if s else []
        return [p for p, _ in pre.pre_tokenize_str(s)]
    return split_public


def _fast_splitter(tokenizer):
    """Counting needs the pieces' text only, not their offsets: when the tokenizer has no added
    tokens and its normalizer and pre-tokenizer are ones `anytok.pipeline` implements (the
    string-only versions anytok encodes with), those cut the text -- several times faster.
    None otherwise (then the tokenizer's own pipeline does).  The function has a `chunked`
    attribute (see `_count_chunks`) when its pieces can be counted per whitespace-free chunk."""
    try:
        doc = json.loads(tokenizer.to_str())
    except Exception:
        return None
    if doc.get("added_tokens"):
        return None
    from ..errors import UnsupportedTokenizerError
    from ..pipeline import normalizers as N
    from ..pipeline import pre_tokenizers as P

    try:
        norm = N.from_config(doc.get("normalizer"))
        pre = P.from_config(doc.get("pre_tokenizer"))
    except (UnsupportedTokenizerError, KeyError, TypeError, ValueError):
        return None
    if pre is None:
        if norm is None:
            return lambda seq: [seq] if seq else []
        return lambda seq: [t] if (t := norm.normalize(seq)) else []
    split = pre.split
    # An empty (normalized) sequence has no split at all: nothing for a Metaspace or ByteLevel
    # to prefix.
    if norm is None:
        def fast_split(seq: str) -> list[str]:
            return [p for p in split(seq, True) if p] if seq else []
    else:
        normalize = norm.normalize

        def fast_split(seq: str) -> list[str]:
            return [p for p in split(t, True) if p] if (t := normalize(seq)) else []
    if norm is None and type(pre) is P.ByteLevel and pre._pattern is not None:
        findall = pre._pattern.findall
        prefix = pre.add_prefix_space

        def raw_split(seq: str) -> list[str]:
            if not seq:
                return []
            if prefix and not seq.startswith(" "):
                seq = " " + seq
            pieces = findall(seq)
            if pieces is None:  # the pattern leaves gaps: ByteLevel keeps them as pieces
                pieces = P.split_by(seq, spans(seq), "Isolated")
            return [p for p in pieces if p]
        spans = pre._pattern.spans
        fast_split.raw = (raw_split, P.bytes_to_unicode_text)  # type: ignore[attr-defined]
    if type(pre) in (P.Whitespace, P.WhitespaceSplit, P.BertPreTokenizer) and _chunk_safe(norm, N):
        bert = norm is not None and _has_bert(norm, N)
        # Without a normalizer an ASCII letters-and-digits chunk is one piece, itself.
        fast_split.chunked = (fast_split, _BERT_KEEP if bert else _PLAIN_KEEP,  # type: ignore[attr-defined]
                              norm is None)
    return fast_split


def _chunk_safe(norm, N) -> bool:
    """Whether the normalizer maps each whitespace-free chunk on its own (characters one by
    one, or compositions that never involve White_Space), White_Space to White_Space."""
    if norm is None:
        return True
    if type(norm) is N.Sequence:
        return all(_chunk_safe(n, N) for n in norm.normalizers)
    return type(norm) in (N.NFC, N.NFD, N.NFKC, N.NFKD, N.Lowercase, N.StripAccents, N.BertNormalizer)


def _has_bert(norm, N) -> bool:
    if type(norm) is N.Sequence:
        return any(_has_bert(n, N) for n in norm.normalizers)
    return type(norm) is N.BertNormalizer and norm.clean_text


# `str.split()` cuts at Python's whitespace: White_Space plus U+001C..U+001F, which are not
# White_Space, so a text holding them is cut at White_Space by a regex instead.  BertNormalizer
# also deletes U+000B, U+000C and U+0085 (controls) rather than making them spaces: with it,
# those do not cut either.
_PY_SPACE_NOT_WS = "\x1c-\x1f"
_WS_CLASS = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_PLAIN_KEEP = (f"[{_PY_SPACE_NOT_WS}]", f"[{_WS_CLASS}]+")
_BERT_KEEP = (f"[{_PY_SPACE_NOT_WS}\x0b\x0c\x85]", "[\t\n\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")


def _count_chunks(sequences, split, keep, alnum_whole=False) -> Counter:
    """The pieces of the sequences, counted through their whitespace-free chunks: the pre-
    tokenizers that allow it drop whitespace and no piece spans it, and the normalizers that
    allow it work inside chunks, so each distinct chunk is normalized and split once and its
    pieces weighted by its count.  Pieces come out in the order they are first seen in the text
    (a piece's first occurrence lies in the first occurrence of its chunk)."""
    import re

    unsafe = re.compile(keep[0]).search
    ws_split = re.compile(keep[1]).split
    chunks: Counter = Counter()
    update = chunks.update
    batch: list[str] = []
    n = 0
    for seq in sequences:
        if not isinstance(seq, str):
            raise TypeError(f"training sequences must be str, not {type(seq).__name__}")
        batch.append(seq)
        n += len(seq)
        if n >= 1 << 20:
            text = "\n".join(batch)
            update(text.split() if unsafe(text) is None else filter(None, ws_split(text)))
            batch.clear()
            n = 0
    if batch:
        text = "\n".join(batch)
        update(text.split() if unsafe(text) is None else filter(None, ws_split(text)))
    words: Counter = Counter()
    wupdate = words.update
    for chunk, k in chunks.items():
        if alnum_whole and chunk.isalnum() and chunk.isascii():
            words[chunk] += k
        elif k == 1:
            wupdate(split(chunk))
        else:
            for p in split(chunk):
                words[p] += k
    return words


# -- the property factory -------------------------------------------------------------------------


def _prop(key: str, convert, doc: str, read=None):
    def fget(self):
        v = self._state[key]
        return read(v) if read is not None else v

    def fset(self, value):
        self._state[key] = convert(value, key)

    return property(fget, fset, doc=doc)


def _read_special(tokens):
    return [_added_token(**t) for t in tokens]


def _set_special(value, key):
    return _special(value, "Special tokens must be a List[Union[str, AddedToken]]")


def _set_chars(value, key):
    return _chars(value)


def _set_progress(value, key):
    if not isinstance(value, str):
        raise TypeError(f"argument 'format': '{type(value).__name__}' object cannot be converted to 'PyString'")
    return _PROGRESS.get(value, "Indicatif")


def _f64(value, key):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"argument '{key}': must be real number, not {type(value).__name__}")
    return float(value)


def _u32(value, key):
    v = _usize(value, key)
    if v >= 1 << 32:
        raise OverflowError("out of range integral type conversion attempted")
    return v


def _kw(key, convert):
    """A constructor keyword: converts the value and stores it."""
    def apply(self, value):
        self._state[key] = convert(value, key)
    return apply


_BPE_FIELDS = ("min_frequency", "vocab_size", "show_progress", "progress_format", "special_tokens", "limit_alphabet",
               "initial_alphabet", "continuing_subword_prefix", "end_of_word_suffix", "max_token_length")


def _bpe_defaults(prefix=None) -> dict:
    return {"min_frequency": 0, "vocab_size": 30000, "show_progress": True, "progress_format": "Indicatif",
            "special_tokens": [], "limit_alphabet": None, "initial_alphabet": [],
            "continuing_subword_prefix": prefix, "end_of_word_suffix": None, "max_token_length": None}


_BPE_KWARGS = {
    "vocab_size": _kw("vocab_size", _usize),
    "min_frequency": _kw("min_frequency", _usize),
    "show_progress": _kw("show_progress", _bool),
    "progress_format": _kw("progress_format", _set_progress),
    "special_tokens": _kw("special_tokens", lambda v, k: _special(v, "special_tokens must be a List[Union[str, AddedToken]]")),
    "limit_alphabet": _kw("limit_alphabet", _usize),
    "max_token_length": _kw("max_token_length", _usize),
    "initial_alphabet": _kw("initial_alphabet", lambda v, k: _first_chars(v)),
    "continuing_subword_prefix": _kw("continuing_subword_prefix", _str),
    "end_of_word_suffix": _kw("end_of_word_suffix", _str),
}


class BpeTrainer(Trainer):
    """Trainer capable of training a BPE model (tokenizers' `BpeTrainer`).

    Args: vocab_size (30000: everything, alphabet and special tokens included), min_frequency
    (a pair must occur this often to be merged), show_progress, progress_format ("indicatif",
    "json", "silent"), special_tokens (str or AddedToken), limit_alphabet (keep the most
    frequent characters), initial_alphabet (characters kept even if unseen; first character of
    each string), continuing_subword_prefix, end_of_word_suffix, max_token_length.
    """

    _kind = "BpeTrainer"
    _KWARGS = _BPE_KWARGS

    def _defaults(self) -> dict:
        return _bpe_defaults()

    vocab_size = _prop("vocab_size", _usize, "The target vocabulary size.")
    min_frequency = _prop("min_frequency", _usize, "The minimum frequency of a merged pair.")
    show_progress = _prop("show_progress", _bool, "Whether to show progress.")
    progress_format = _prop("progress_format", _set_progress, "The progress format: indicatif, json or silent.",
                            read=lambda v: _PROGRESS_NAMES[v])
    special_tokens = _prop("special_tokens", _set_special, "The special tokens.", read=_read_special)
    limit_alphabet = _prop("limit_alphabet", _opt_usize, "The most characters kept in the alphabet.")
    max_token_length = _prop("max_token_length", _opt_usize, "The longest token (in characters) merges make.")
    initial_alphabet = _prop("initial_alphabet", _set_chars, "Characters always in the alphabet.", read=list)
    continuing_subword_prefix = _prop("continuing_subword_prefix", _opt_str, "Prefix of non-initial subwords.")
    end_of_word_suffix = _prop("end_of_word_suffix", _opt_str, "Suffix of word-final subwords.")

    def get_word_count(self) -> int:
        """The number of distinct words counted by the last training."""
        return len(self._words)

    def _train_tokenizer(self, tokenizer, sequences) -> None:
        from ..train.bpe_hf import train_bpe

        self._check_model(tokenizer, "BPE")
        words = self._count(tokenizer, sequences)
        st = self._state
        got = train_bpe(words, vocab_size=st["vocab_size"], min_frequency=st["min_frequency"],
                        special_tokens=self._special_contents(), limit_alphabet=st["limit_alphabet"],
                        initial_alphabet=st["initial_alphabet"],
                        continuing_subword_prefix=st["continuing_subword_prefix"],
                        end_of_word_suffix=st["end_of_word_suffix"], max_token_length=st["max_token_length"])

        def update(cfg):
            cfg["vocab"] = got.vocab
            cfg["merges"] = [list(m) for m in got.merges]
            cfg["continuing_subword_prefix"] = got.continuing_subword_prefix
            cfg["end_of_word_suffix"] = got.end_of_word_suffix
            return cfg

        self._finish(tokenizer, "BPE", update)


class WordPieceTrainer(Trainer):
    """Trainer capable of training a WordPiece model (tokenizers' `WordPieceTrainer`): a BPE
    with the continuing-subword prefix ("##"), whose vocabulary the WordPiece takes.

    Args: vocab_size (30000), min_frequency, show_progress, special_tokens, limit_alphabet,
    initial_alphabet, continuing_subword_prefix ("##"), end_of_word_suffix.
    """

    _kind = "WordPieceTrainer"
    _KWARGS = {k: v for k, v in _BPE_KWARGS.items() if k not in ("progress_format", "max_token_length")}

    def _defaults(self) -> dict:
        return _bpe_defaults("##")

    def _wrapped_state(self) -> dict:
        return {"bpe_trainer": self._state_dict()}

    def __repr__(self) -> str:
        inner = _struct_repr("BpeTrainer", self._state_dict())
        return f"{self._kind}({self._kind}(bpe_trainer={inner}))"

    __str__ = __repr__

    vocab_size = BpeTrainer.vocab_size
    min_frequency = BpeTrainer.min_frequency
    show_progress = BpeTrainer.show_progress
    special_tokens = BpeTrainer.special_tokens
    limit_alphabet = BpeTrainer.limit_alphabet
    initial_alphabet = BpeTrainer.initial_alphabet
    continuing_subword_prefix = BpeTrainer.continuing_subword_prefix
    end_of_word_suffix = BpeTrainer.end_of_word_suffix

    def _train_tokenizer(self, tokenizer, sequences) -> None:
        from ..train.wordpiece import train_wordpiece

        self._check_model(tokenizer, "WordPiece")
        words = self._count(tokenizer, sequences)
        st = self._state
        got = train_wordpiece(words, vocab_size=st["vocab_size"], min_frequency=st["min_frequency"],
                              special_tokens=self._special_contents(), limit_alphabet=st["limit_alphabet"],
                              initial_alphabet=st["initial_alphabet"],
                              continuing_subword_prefix=st["continuing_subword_prefix"],
                              end_of_word_suffix=st["end_of_word_suffix"])

        def update(cfg):
            cfg["vocab"] = got.vocab
            cfg["continuing_subword_prefix"] = got.continuing_subword_prefix
            return cfg

        self._finish(tokenizer, "WordPiece", update)


class WordLevelTrainer(Trainer):
    """Trainer capable of training a WordLevel model (tokenizers' `WordLevelTrainer`): the most
    frequent words (ties in code point order), after the special tokens.

    Args: vocab_size (30000), min_frequency (words rarer than this are left out), show_progress,
    special_tokens.
    """

    _kind = "WordLevelTrainer"
    _KWARGS = {k: _BPE_KWARGS[k] for k in ("vocab_size", "min_frequency", "show_progress", "special_tokens")}

    def _defaults(self) -> dict:
        return {"min_frequency": 0, "vocab_size": 30000, "show_progress": True, "special_tokens": []}

    vocab_size = BpeTrainer.vocab_size
    min_frequency = BpeTrainer.min_frequency
    show_progress = BpeTrainer.show_progress
    special_tokens = BpeTrainer.special_tokens

    def _train_tokenizer(self, tokenizer, sequences) -> None:
        from ..train.wordlevel import train_wordlevel

        self._check_model(tokenizer, "WordLevel")
        words = self._count(tokenizer, sequences)
        st = self._state
        vocab = train_wordlevel(words, vocab_size=st["vocab_size"], min_frequency=st["min_frequency"],
                                special_tokens=self._special_contents())

        def update(cfg):
            cfg["vocab"] = vocab
            return cfg

        self._finish(tokenizer, "WordLevel", update)


class UnigramTrainer(Trainer):
    """Trainer capable of training a Unigram model (tokenizers' `UnigramTrainer`, its own EM
    algorithm, not sentencepiece's).

    Args: vocab_size (8000), show_progress, special_tokens, initial_alphabet, shrinking_factor
    (0.75: share of pieces kept by each pruning), unk_token, max_piece_length (16),
    n_sub_iterations (2: EM steps between prunings), seed_size (1,000,000 seed pieces at most).
    """

    _kind = "UnigramTrainer"
    _KWARGS = {
        "vocab_size": _kw("vocab_size", _u32),
        "show_progress": _kw("show_progress", _bool),
        "n_sub_iterations": _kw("n_sub_iterations", _u32),
        "shrinking_factor": _kw("shrinking_factor", _f64),
        "unk_token": _kw("unk_token", _opt_str),
        "max_piece_length": _kw("max_piece_length", _usize),
        "seed_size": _kw("seed_size", _usize),
        "initial_alphabet": _kw("initial_alphabet", lambda v, k: _first_chars(v)),
        "special_tokens": _BPE_KWARGS["special_tokens"],
    }

    def _defaults(self) -> dict:
        return {"show_progress": True, "vocab_size": 8000, "n_sub_iterations": 2, "shrinking_factor": 0.75,
                "special_tokens": [], "initial_alphabet": [], "unk_token": None, "max_piece_length": 16,
                "seed_size": 1_000_000}

    vocab_size = _prop("vocab_size", _u32, "The target vocabulary size.")
    show_progress = BpeTrainer.show_progress
    special_tokens = BpeTrainer.special_tokens
    initial_alphabet = BpeTrainer.initial_alphabet
    # Read-only in tokenizers (constructor options); readable here.
    shrinking_factor = property(lambda self: self._state["shrinking_factor"], doc="Share kept by each pruning.")
    unk_token = property(lambda self: self._state["unk_token"], doc="The unknown token.")
    max_piece_length = property(lambda self: self._state["max_piece_length"], doc="The longest piece.")
    n_sub_iterations = property(lambda self: self._state["n_sub_iterations"], doc="EM steps between prunings.")
    seed_size = property(lambda self: self._state["seed_size"], doc="Most seed pieces.")

    def _train_tokenizer(self, tokenizer, sequences) -> None:
        from ..train.unigram_hf import train_unigram

        self._check_model(tokenizer, "Unigram")
        words = self._count(tokenizer, sequences)
        st = self._state
        try:
            got = train_unigram(words, vocab_size=st["vocab_size"], n_sub_iterations=st["n_sub_iterations"],
                                shrinking_factor=st["shrinking_factor"], special_tokens=self._special_contents(),
                                initial_alphabet=st["initial_alphabet"], unk_token=st["unk_token"],
                                max_piece_length=st["max_piece_length"], seed_size=st["seed_size"])
        except ValueError as e:
            if str(e) == "The vocabulary is not large enough to contain all chars":
                raise Exception(str(e)) from None
            raise

        def update(cfg):
            return {"type": "Unigram", "unk_id": got.unk_id, "vocab": [[p, s] for p, s in got.vocab],
                    "byte_fallback": False}

        self._finish(tokenizer, "Unigram", update)


_BY_KIND = {c._kind: c for c in (BpeTrainer, WordPieceTrainer, WordLevelTrainer, UnigramTrainer)}


# -- ParityBpeTrainer ------------------------------------------------------------------------------

# Rust's char::is_whitespace (the White_Space property), which `str.strip()` does not quite match.
_RUST_WHITESPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"


def _index(value, name: str) -> int:
    """A usize as pyo3 takes it (anything with __index__, bool included)."""
    if isinstance(value, float) or not hasattr(value, "__index__"):
        raise TypeError(f"'{type(value).__name__}' object cannot be interpreted as an integer")
    v = value.__index__()
    if v < 0:
        raise OverflowError("can't convert negative int to unsigned")
    if v >= 1 << 64:
        raise OverflowError("int too big to convert")
    return v


def _opt_index(value, name: str):
    return None if value is None else _index(value, name)


def _real(value, name: str) -> float:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__float__") and not hasattr(value, "__index__"):
        raise TypeError(f"must be real number, not {type(value).__name__}")
    return float(value)


def _strict_bool(value, name: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"'{type(value).__name__}' object is not an instance of 'bool'")
    return value


def _opt_string(value, name: str):
    if value is not None and not isinstance(value, str):
        raise TypeError(f"'{type(value).__name__}' object is not an instance of 'str'")
    return value


def _sequence(value, name: str) -> list:
    if isinstance(value, str):
        raise TypeError("Can't extract `str` to `Vec`")
    if not hasattr(value, "__len__") or not hasattr(value, "__getitem__") or isinstance(value, dict):
        raise TypeError(f"'{type(value).__name__}' object is not an instance of 'Sequence'")
    return list(value)


def _opt_ratio(value, name: str):
    return None if value is None else [_real(v, name) for v in _sequence(value, name)]


def _char_list(value, name: str) -> list[str]:
    out = []
    for s in _sequence(value, name):
        if not isinstance(s, str):
            raise TypeError(f"'{type(s).__name__}' object is not an instance of 'str'")
        if len(s) != 1:
            raise ValueError("expected a string of length 1")
        out.append(s)
    return out


def _parity_special(value, name: str) -> list[dict]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise TypeError(f"'{type(value).__name__}' object is not an instance of 'list'")
    return _special(value, "special_tokens must be a List[Union[str, AddedToken]]")


def _variant(value, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"'{'None' if value is None else type(value).__name__}' is not an instance of 'str'")
    if value not in ("base", "window"):
        raise ValueError(f"Unknown variant '{value}'. Use 'base' or 'window'.")
    return value


_PARITY_OPTIONS = {
    "num_merges": (32000, _index), "variant": ("base", _variant), "min_frequency": (0, _index),
    "ratio": (None, _opt_ratio), "global_merges": (0, _index), "window_size": (100, _index),
    "alpha": (2.0, _real), "total_symbols": (False, _strict_bool), "special_tokens": ([], _parity_special),
    "show_progress": (True, _strict_bool), "limit_alphabet": (None, _opt_index),
    "initial_alphabet": ([], lambda v, k: [] if v is None else _char_list(v, k)),
    "continuing_subword_prefix": (None, _opt_string), "end_of_word_suffix": (None, _opt_string),
    "max_token_length": (None, _opt_index),
}


def _parity_prop(key: str, doc: str, read=None):
    convert = _PARITY_OPTIONS[key][1]

    def fget(self):
        v = self._state[key]
        return read(v) if read is not None else v

    def fset(self, value):
        if key == "special_tokens" and value is None:
            raise TypeError("'NoneType' object is not an instance of 'list'")
        self._state[key] = convert(value, key)

    return property(fget, fset, doc=doc)


class ParityBpeTrainer:
    """Trainer for parity-aware BPE (tokenizers' `ParityBpeTrainer`): one corpus per language,
    and at each merge the language that compresses worst is served.

    Args: num_merges (32000; with total_symbols the whole vocabulary size), variant ("base", or
    "window": no language takes more than alpha / n_languages of the last window_size merges),
    min_frequency (0), ratio (target compression rates per language, instead of dev data),
    global_merges (0: first merges chosen on the pooled counts), window_size (100), alpha
    (2.0), total_symbols (False), special_tokens, show_progress, limit_alphabet,
    initial_alphabet, continuing_subword_prefix, end_of_word_suffix, max_token_length.
    Train with `train_from_iterator(tokenizer, train_iterators, dev_iterators=None, ratio=None)`.
    """

    __slots__ = ("_state",)

    def __new__(cls, *args, **kwargs):
        self = object.__new__(cls)
        self._state = {k: (list(d) if isinstance(d, list) else d) for k, (d, _) in _PARITY_OPTIONS.items()}
        return self

    def __init__(self, num_merges=32000, variant="base", min_frequency=0, ratio=None, global_merges=0,
                 window_size=100, alpha=2.0, total_symbols=False, special_tokens=None, show_progress=True,
                 limit_alphabet=None, initial_alphabet=None, continuing_subword_prefix=None,
                 end_of_word_suffix=None, max_token_length=None):
        given = dict(num_merges=num_merges, variant=variant, min_frequency=min_frequency, ratio=ratio,
                     global_merges=global_merges, window_size=window_size, alpha=alpha, total_symbols=total_symbols,
                     special_tokens=special_tokens, show_progress=show_progress, limit_alphabet=limit_alphabet,
                     initial_alphabet=initial_alphabet, continuing_subword_prefix=continuing_subword_prefix,
                     end_of_word_suffix=end_of_word_suffix, max_token_length=max_token_length)
        state = {}
        for k, v in given.items():
            state[k] = _PARITY_OPTIONS[k][1](v, k)
        self._state = state

    num_merges = _parity_prop("num_merges", "The number of merges (with total_symbols: the vocabulary size).")
    variant = property(lambda self: self._state["variant"], doc='"base" or "window".')
    min_frequency = _parity_prop("min_frequency", "The minimum count of a merged pair.")
    global_merges = _parity_prop("global_merges", "The first merges, chosen on the pooled counts.")
    window_size = _parity_prop("window_size", "The window of the \"window\" variant.")
    alpha = _parity_prop("alpha", "The share parameter of the \"window\" variant.")
    total_symbols = _parity_prop("total_symbols", "Whether num_merges counts the whole vocabulary.")
    show_progress = _parity_prop("show_progress", "Whether to show progress.")
    special_tokens = _parity_prop("special_tokens", "The special tokens.", read=_read_special)
    limit_alphabet = _parity_prop("limit_alphabet", "The most characters kept in the alphabet.")
    initial_alphabet = _parity_prop("initial_alphabet", "Characters always in the alphabet.", read=list)
    continuing_subword_prefix = _parity_prop("continuing_subword_prefix", "Prefix of non-initial subwords.")
    end_of_word_suffix = _parity_prop("end_of_word_suffix", "Suffix of word-final subwords.")
    max_token_length = _parity_prop("max_token_length", "The longest token (in characters) merges make.")

    def __repr__(self) -> str:
        from ..train.bpe_parity import _rust_f64

        st = self._state
        return (f"ParityBpeTrainer(num_merges={st['num_merges']}, variant=\"{st['variant']}\", "
                f"min_frequency={st['min_frequency']}, global_merges={st['global_merges']}, "
                f"window_size={st['window_size']}, alpha={_rust_f64(st['alpha'])}, "
                f"total_symbols={'true' if st['total_symbols'] else 'false'})")

    __str__ = __repr__

    def __getstate__(self) -> dict:
        st = self._state
        return {"num_merges": st["num_merges"], "variant": st["variant"], "min_frequency": st["min_frequency"],
                "global_merges": st["global_merges"], "window_size": st["window_size"], "alpha": st["alpha"],
                "total_symbols": st["total_symbols"], "show_progress": st["show_progress"],
                "ratio": None if st["ratio"] is None else list(st["ratio"]),
                "special_tokens": [t["content"] for t in st["special_tokens"]],
                "limit_alphabet": st["limit_alphabet"], "initial_alphabet": list(st["initial_alphabet"]),
                "continuing_subword_prefix": st["continuing_subword_prefix"],
                "end_of_word_suffix": st["end_of_word_suffix"], "max_token_length": st["max_token_length"]}

    def __setstate__(self, state) -> None:
        """tokenizers' order: the required keys one by one (KeyError naming a missing one, the
        earlier ones already set); the optional ones left unset or None when unreadable."""
        if not isinstance(state, dict):
            raise TypeError(f"'{type(state).__name__}' object is not an instance of 'dict'")
        st = self._state
        for k in ("num_merges", "variant", "min_frequency", "global_merges", "window_size", "alpha",
                  "total_symbols", "show_progress"):
            if k not in state:
                raise KeyError(k)
            st[k] = _PARITY_OPTIONS[k][1](state[k], k)
        st["ratio"] = _lenient(lambda: _opt_ratio(state.get("ratio"), "ratio"))
        if "special_tokens" not in state:
            raise KeyError("special_tokens")
        tokens = state["special_tokens"]
        if isinstance(tokens, str) or not all(isinstance(t, str) for t in tokens):
            raise TypeError("special_tokens must be a list of str")
        st["special_tokens"] = _special(list(tokens), "special_tokens must be a list of str")
        st["limit_alphabet"] = _lenient(lambda: _opt_index(state.get("limit_alphabet"), "limit_alphabet"))
        alphabet = _lenient(lambda: [s for s in _sequence(state.get("initial_alphabet"), "")
                                     if isinstance(s, str) or _fail()])
        st["initial_alphabet"] = [s[0] for s in alphabet or [] if s]
        for k in ("continuing_subword_prefix", "end_of_word_suffix"):
            st[k] = _lenient(lambda: _opt_string(state.get(k), k))
        st["max_token_length"] = _lenient(lambda: _opt_index(state.get("max_token_length"), "max_token_length"))

    def _train_tokenizer(self, tokenizer, sequences) -> None:
        # `Tokenizer.train(..., trainer)` / `train_from_iterator(..., trainer)` refuse it, as
        # tokenizers' do: it is not a Trainer.
        raise TypeError("'ParityBpeTrainer' object is not an instance of 'Trainer'")

    def train_from_iterator(self, tokenizer, train_iterators, dev_iterators=None, ratio=None) -> None:
        """Train `tokenizer` with parity-aware BPE: one iterator per language (each yielding
        str or lists of str), optionally one dev iterator per language (then `ratio` is not
        used), or `ratio` (target compression rates per language, else the trainer's).  The
        tokenizer gets a new BPE model and the special tokens."""
        from ..train.bpe_parity import train_parity_bpe

        train_iterators = _sequence(train_iterators, "train_iterators")
        if dev_iterators is not None:
            dev_iterators = _sequence(dev_iterators, "dev_iterators")
        if ratio is not None:
            ratio = _opt_ratio(ratio, "ratio")
        if not train_iterators:
            raise ValueError("train_iterators must not be empty")
        n = len(train_iterators)
        if dev_iterators is not None and len(dev_iterators) != n:
            raise ValueError(f"dev_iterators length ({len(dev_iterators)}) must match train_iterators length ({n})")
        has_dev = bool(dev_iterators)
        st = self._state
        effective_ratio = None if has_dev else (ratio if ratio is not None else st["ratio"])
        # tokenizers reads every iterator (training, then dev) before cutting any text.
        train_texts = [_texts(it) for it in train_iterators]
        dev_texts = [_texts(it) for it in dev_iterators] if dev_iterators is not None else []
        split = _parity_splitter(tokenizer)
        try:
            train_counts = [_count_texts(texts, split) for texts in train_texts]
            dev_counts = [_count_texts(texts, split) for texts in dev_texts]
        except Exception as e:
            raise RuntimeError(str(e)) from e
        try:
            got = train_parity_bpe(
                train_counts, dev_counts, num_merges=st["num_merges"], variant=st["variant"],
                min_frequency=st["min_frequency"], ratio=effective_ratio, global_merges=st["global_merges"],
                window_size=st["window_size"], alpha=st["alpha"], total_symbols=st["total_symbols"],
                special_tokens=[t["content"] for t in st["special_tokens"]], limit_alphabet=st["limit_alphabet"],
                initial_alphabet=st["initial_alphabet"], continuing_subword_prefix=st["continuing_subword_prefix"],
                end_of_word_suffix=st["end_of_word_suffix"], max_token_length=st["max_token_length"])
        except ValueError as e:
            raise RuntimeError(f"Training error: {e}") from None
        # The tokenizer makes the model (anytok.hf.models needs the trainers: get_trainer).
        tokenizer.model = tokenizer._new_model("BPE", got.vocab, got.merges,
                                               continuing_subword_prefix=got.continuing_subword_prefix,
                                               end_of_word_suffix=got.end_of_word_suffix)
        specials = [_added_token(**t) for t in st["special_tokens"]]
        if specials:
            tokenizer.add_special_tokens(specials)


def _fail():
    raise TypeError


def _lenient(read):
    """pyo3's `.extract().ok()`: an unreadable optional value becomes None."""
    try:
        return read()
    except (TypeError, ValueError, OverflowError):
        return None


def _texts(iterable) -> list[str]:
    """An iterator's texts as tokenizers buffers them: a str is one text, anything else is
    iterated for str."""
    out: list[str] = []
    for x in iter(iterable):
        if isinstance(x, str):
            out.append(x)
            continue
        for s in iter(x):
            if not isinstance(s, str):
                raise TypeError(f"'{type(s).__name__}' object is not an instance of 'str'")
            out.append(s)
    return out


def _count_texts(texts: list[str], split) -> Counter:
    words: Counter = Counter()
    update = words.update
    for t in texts:
        update(split(t))
    return words


def _parity_splitter(tokenizer):
    """tokenizers' `pretokenize_sequence` for the parity trainer: the normalizer, then the
    pre-tokenizer's non-empty splits; added tokens are not cut out; without a pre-tokenizer the
    normalized text, trimmed, is one word (none when empty)."""
    norm = tokenizer.normalizer
    pre = tokenizer.pre_tokenizer
    fast = None
    try:
        doc = json.loads(tokenizer.to_str())
    except Exception:
        doc = None
    if doc is not None:
        from ..errors import UnsupportedTokenizerError
        from ..pipeline import normalizers as N
        from ..pipeline import pre_tokenizers as P

        try:
            fnorm = N.from_config(doc.get("normalizer"))
            fpre = P.from_config(doc.get("pre_tokenizer"))
            fast = (fnorm, fpre)
        except (UnsupportedTokenizerError, KeyError, TypeError, ValueError):
            fast = None
    if fast is not None:
        fnorm, fpre = fast
        normalize = fnorm.normalize if fnorm is not None else None
        if fpre is None:
            def split_whole(seq: str) -> list[str]:
                t = (normalize(seq) if normalize is not None else seq).strip(_RUST_WHITESPACE)
                return [t] if t else []
            return split_whole
        psplit = fpre.split

        def split_fast(seq: str) -> list[str]:
            t = normalize(seq) if normalize is not None else seq
            return [p for p in psplit(t, True) if p] if t else []
        return split_fast

    def split_public(seq: str) -> list[str]:
        t = norm.normalize_str(seq) if norm is not None else seq
        if pre is None:
            t = t.strip(_RUST_WHITESPACE)
            return [t] if t else []
        return [p for p, _ in pre.pre_tokenize_str(t) if p]
    return split_public

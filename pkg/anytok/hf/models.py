"""`tokenizers.models`: BPE, WordPiece, WordLevel and Unigram, with token offsets.

How data flows: a model holds its tokenizer.json section (`to_config()`); the ids of a piece
come from anytok's exact model implementations (`anytok.models`, `anytok.sentencepiece.unigram`,
built lazily and rebuilt after an attribute changes); `tokenize(piece)` turns them into
`Token`s whose offsets are character ranges of the piece, found by walking the tokens' surface
text along the piece (byte-fallback tokens cover the character their byte belongs to, an unknown
token the characters no known token covers).
"""

from __future__ import annotations

import json
import os
import re

from .normalized import Token

__all__ = ["Model", "BPE", "WordPiece", "WordLevel", "Unigram", "from_config"]

_BYTE_TOKEN = re.compile(r"<0x[0-9A-F]{2}>\Z")


def _char_spans(piece: str, surfaces: list) -> list[tuple[int, int]]:
    """Offsets of tokens along `piece`: `surfaces[i]` is the token's text, None for an unknown
    token (covering up to where the next known text starts), or 1 for one byte of a character."""
    out: list[tuple[int, int]] = []
    pos = 0
    n = len(piece)
    bytes_left = 0
    char_start = 0
    for i, s in enumerate(surfaces):
        if s == 1:
            if bytes_left == 0:
                char_start = pos
                bytes_left = len(piece[pos:pos + 1].encode("utf-8", "surrogatepass")) or 1
                pos += 1
            bytes_left -= 1
            out.append((char_start, min(char_start + 1, n)))
        elif s is None:
            nxt = next((t for t in surfaces[i + 1:] if isinstance(t, str) and t), None)
            if i + 1 < len(surfaces) and surfaces[i + 1] is None:
                end = pos + 1
            elif nxt is None:
                end = n
            else:
                end = piece.find(nxt, pos + 1)
                if end < 0:
                    end = pos + 1
            end = min(max(end, pos + 1), n)
            out.append((pos, end))
            pos = end
        else:
            if not piece.startswith(s, pos):
                # Not found where expected (should not happen): keep going on length.
                pass
            out.append((pos, pos + len(s)))
            pos += len(s)
    return out


class Model:
    """Base class of the models; `tokenize(sequence)` gives `Token`s."""

    _type = ""
    _DEFAULTS: dict = {}

    def __init__(self, *args, **kwargs):
        if type(self) is Model:
            raise Exception("Model cannot be instantiated directly; use BPE, WordPiece, WordLevel or Unigram")

    # state ------------------------------------------------------------------------------------
    def _invalidate(self):
        self.__dict__.pop("_impl_cache", None)
        self.__dict__.pop("_impl_holder", None)

    @property
    def _impl(self):
        impl = self.__dict__.get("_impl_cache")
        if impl is None:
            # Copies of one loaded file's model (Tokenizer.from_str's cache) share one holder:
            # the implementation is built once for all of them (never changed after).
            holder = self.__dict__.get("_impl_holder")
            impl = holder.get("impl") if holder is not None else None
            if impl is None:
                impl = self._build()
                if holder is not None:
                    holder["impl"] = impl
            self.__dict__["_impl_cache"] = impl
        return impl

    def _shallow_copy(self) -> "Model":
        """A copy sharing the (never mutated) vocabulary tables and the built implementation."""
        other = self.__class__.__new__(self.__class__)
        other.__dict__.update(self.__dict__)
        other.__dict__.pop("_impl_cache", None)
        other.__dict__.setdefault("_impl_holder", {})
        self.__dict__["_impl_holder"] = other.__dict__["_impl_holder"]
        other._cfg = dict(self._cfg)
        return other

    def _build(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def to_config(self) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def __getstate__(self):
        return json.dumps(self.to_config(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    def __setstate__(self, state):
        cfg = json.loads(state)
        other = from_config(cfg)
        self.__class__ = other.__class__
        self.__dict__.clear()
        self.__dict__.update(other.__dict__)

    def __reduce__(self):
        return (_from_state, (self.__getstate__(),))

    def _repr_struct(self):
        from ._repr import Struct

        cfg = self.to_config()
        fields = []
        for k, v in cfg.items():
            if k == "type":
                continue
            if k == "vocab" and isinstance(v, list):
                v = [tuple(x) for x in v]
            elif k == "vocab" and isinstance(v, dict):
                v = dict(sorted(v.items(), key=lambda kv: kv[1]))
            elif k == "merges":
                v = [tuple(x) for x in v]
            fields.append((k, v))
        return Struct(self._type, fields)

    def __repr__(self):
        from ._repr import render

        return render(self._repr_struct())

    def __str__(self):
        from ._repr import render

        return render(self._repr_struct(), 5)

    # API --------------------------------------------------------------------------------------
    def tokenize(self, sequence: str) -> list[Token]:
        """The tokens of `sequence` (offsets are character ranges of it)."""
        if not isinstance(sequence, str):
            raise TypeError("tokenize expects a str")
        ids = self._ids_of(sequence)
        return self._tokens_of(sequence, ids)

    def _ids_of(self, sequence: str) -> list[int]:
        return self._impl.tokenize(sequence) if sequence else []

    def _surface(self, tok: str, index: int, count: int):
        return tok

    def _tokens_of(self, sequence: str, ids: list[int]) -> list[Token]:
        id_to_token = self._impl.id_to_token
        values = [id_to_token(i) for i in ids]
        surfaces = [self._surface(v, k, len(ids)) for k, v in enumerate(values)]
        if all(type(s) is str for s in surfaces) and sum(map(len, surfaces)) == len(sequence):
            out = []
            pos = 0
            for i, v, s in zip(ids, values, surfaces):
                out.append(Token(i, v, (pos, pos + len(s))))
                pos += len(s)
            return out
        spans = _char_spans(sequence, surfaces)
        return [Token(i, v, sp) for i, v, sp in zip(ids, values, spans)]

    def token_to_id(self, tokens: str) -> int | None:
        """The id of a token of the vocabulary."""
        return self._impl.token_to_id(tokens)

    def id_to_token(self, id: int) -> str | None:
        """The token of an id."""
        return self._impl.id_to_token(id)

    def get_vocab(self) -> dict[str, int]:
        return dict(self._impl.vocab)

    def get_vocab_size(self) -> int:
        return len(self._impl.vocab)

    def get_trainer(self):
        """The trainer that trains this kind of model."""
        from . import trainers

        return {"BPE": trainers.BpeTrainer, "WordPiece": trainers.WordPieceTrainer,
                "WordLevel": trainers.WordLevelTrainer, "Unigram": trainers.UnigramTrainer}[self._type]()

    def save(self, folder: str, prefix: str | None = None, name: str | None = None) -> list[str]:
        """Write the model's files into `folder` (names prefixed with `prefix-`); their paths."""
        prefix = prefix if prefix is not None else name
        files = self._files()
        out = []
        for fname, content in files:
            path = os.path.join(folder, f"{prefix}-{fname}" if prefix else fname)
            with open(path, "w", encoding="utf-8") as f:
                f.write(content)
            out.append(path)
        return out

    def _files(self) -> list[tuple[str, str]]:  # pragma: no cover - abstract
        raise NotImplementedError


def _repr(v):
    if v is None:
        return "None"
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, str):
        return f'"{v}"'
    return str(v)


def _from_state(state):
    return from_config(json.loads(state))


def _settable(name: str, default=None, cast=None):
    def get(self):
        return self._cfg.get(name, default)

    def set_(self, value):
        self._cfg[name] = cast(value) if cast is not None and value is not None else value
        self._invalidate()

    return property(get, set_)


def _read_vocab_json(path: str) -> dict[str, int]:
    with open(path, encoding="utf-8") as f:
        vocab = json.load(f)
    if not isinstance(vocab, dict):
        raise Exception(f"Error while reading vocab & merges files: {path} is not a JSON object")
    return vocab


class BPE(Model):
    """Byte-Pair Encoding (tokenizers' `models.BPE`)."""

    _type = "BPE"

    def __init__(self, vocab=None, merges=None, cache_capacity=None, dropout=None, unk_token=None,
                 continuing_subword_prefix=None, end_of_word_suffix=None, fuse_unk=None, byte_fallback=False,
                 ignore_merges=False):
        if isinstance(vocab, str) or isinstance(merges, str):
            import warnings

            warnings.warn("BPE.__init__ will not create from files anymore, try `BPE.from_file` instead",
                          DeprecationWarning, stacklevel=2)
            vocab, merges = BPE.read_file(vocab, merges)
        if (vocab is None) != (merges is None):
            raise Exception("`vocab` and `merges` must be both specified")
        if dropout is not None and not 0.0 <= float(dropout) <= 1.0:
            raise Exception("Error while initializing BPE: dropout should be between 0 and 1, inclusive")
        merges = [tuple(m) if not isinstance(m, str) else tuple(m.split(" ", 1)) for m in (merges or [])]
        self._cfg = {"dropout": dropout, "unk_token": unk_token,
                     "continuing_subword_prefix": continuing_subword_prefix,
                     "end_of_word_suffix": end_of_word_suffix, "fuse_unk": bool(fuse_unk),
                     "byte_fallback": bool(byte_fallback), "ignore_merges": bool(ignore_merges)}
        self._vocab = dict(vocab or {})
        self._merges = merges
        for a, b in merges:
            for t in (a, b):
                if t not in self._vocab:
                    raise Exception(f"Error while initializing BPE: Token `{t}` out of vocabulary")

    dropout = _settable("dropout")
    unk_token = _settable("unk_token")
    continuing_subword_prefix = _settable("continuing_subword_prefix")
    end_of_word_suffix = _settable("end_of_word_suffix")
    fuse_unk = _settable("fuse_unk", False, bool)
    byte_fallback = _settable("byte_fallback", False, bool)
    ignore_merges = _settable("ignore_merges", False, bool)

    def _build(self):
        from ..models import BPEMerges

        c = self._cfg
        return BPEMerges(self._vocab, self._merges, unk_token=c["unk_token"], fuse_unk=c["fuse_unk"],
                         byte_fallback=c["byte_fallback"], continuing_subword_prefix=c["continuing_subword_prefix"],
                         end_of_word_suffix=c["end_of_word_suffix"], ignore_merges=c["ignore_merges"])

    def _ids_of(self, sequence: str) -> list[int]:
        if not sequence:
            return []
        impl = self._impl
        ids = impl.tokenize(sequence)
        if impl._unk_id == -1 and -1 in ids:
            raise Exception(f"BPE error: unk token `{self._cfg['unk_token']}` not found in the vocabulary")
        return ids

    def _tokens_of(self, sequence: str, ids: list[int]) -> list[Token]:
        id_to_token = self._impl.id_to_token
        values = [id_to_token(i) for i in ids]
        surfaces = [self._surface(v, k, len(ids)) for k, v in enumerate(values)]
        if all(type(s) is str for s in surfaces) and "".join(surfaces) == sequence:
            out = []
            pos = 0
            for i, v, s in zip(ids, values, surfaces):
                out.append(Token(i, v, (pos, pos + len(s))))
                pos += len(s)
            return out
        # Unknown characters, byte fallback, prefixes: the Rust crate's own byte offsets (which
        # skip a dropped character), each byte range widened to the characters its first and
        # last bytes are in -- what tokenizers' byte-wise alignments and its byte-to-character
        # conversion make of it.
        ids, bounds = self._impl.spans(sequence)
        char_of = [k for k, ch in enumerate(sequence) for _ in range(len(ch.encode("utf-8", "surrogatepass")))]
        if bounds and bounds[-1] > len(char_of):
            # Byte-fallback tokens for a continuing-subword prefix's bytes count them too and
            # can run past the piece, where tokenizers' offsets leave the piece altogether
            # (unaligned byte offsets); anytok clamps them to its end instead.
            n = len(sequence)
            char_of += [n - 1] * (bounds[-1] - len(char_of))
        return [Token(i, id_to_token(i), (char_of[s], char_of[e - 1] + 1))
                for i, s, e in zip(ids, bounds[::2], bounds[1::2])]

    def _surface(self, tok, index, count):
        c = self._cfg
        if c["byte_fallback"] and _BYTE_TOKEN.match(tok):
            return 1
        if tok == c["unk_token"]:
            return None
        p = c["continuing_subword_prefix"]
        if p and index > 0 and tok.startswith(p):
            tok = tok[len(p):]
        s = c["end_of_word_suffix"]
        if s and index == count - 1 and tok.endswith(s):
            tok = tok[:-len(s)]
        return tok

    def to_config(self) -> dict:
        c = self._cfg
        return {"type": "BPE", "dropout": c["dropout"], "unk_token": c["unk_token"],
                "continuing_subword_prefix": c["continuing_subword_prefix"],
                "end_of_word_suffix": c["end_of_word_suffix"], "fuse_unk": c["fuse_unk"],
                "byte_fallback": c["byte_fallback"], "ignore_merges": c["ignore_merges"],
                "vocab": self._vocab, "merges": [list(m) for m in self._merges]}

    def get_vocab(self):
        return dict(self._vocab)

    def get_vocab_size(self):
        return len(self._vocab)

    def token_to_id(self, tokens):
        return self._vocab.get(tokens)

    @staticmethod
    def read_file(vocab: str, merges: str):
        """(vocab dict, merges list) from a vocab.json and a merges.txt."""
        v = _read_vocab_json(vocab)
        out = []
        with open(merges, encoding="utf-8") as f:
            for n, line in enumerate(f):
                line = line.rstrip("\r\n")
                if line.startswith("#version") or not line:
                    continue
                parts = line.split(" ")
                if len(parts) != 2:
                    raise Exception(f"Error while reading vocab & merges files: Merges text file invalid at line {n + 1}")
                out.append((parts[0], parts[1]))
        return v, out

    @classmethod
    def from_file(cls, vocab: str, merges: str, **kwargs) -> "BPE":
        """A BPE from a vocab.json and a merges.txt."""
        v, m = cls.read_file(vocab, merges)
        return cls(v, m, **kwargs)

    def _files(self):
        vocab = json.dumps(self._vocab, ensure_ascii=False, separators=(",", ":"))
        merges = "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in self._merges)
        return [("vocab.json", vocab), ("merges.txt", merges)]


class WordPiece(Model):
    """WordPiece (tokenizers' `models.WordPiece`)."""

    _type = "WordPiece"

    def __init__(self, vocab=None, unk_token="[UNK]", max_input_chars_per_word=100,
                 continuing_subword_prefix="##"):
        if isinstance(vocab, str):
            import warnings

            warnings.warn("WordPiece.__init__ will not create from files anymore, try `WordPiece.from_file` instead",
                          DeprecationWarning, stacklevel=2)
            vocab = WordPiece.read_file(vocab)
        self._vocab = dict(vocab or {})
        self._cfg = {"unk_token": unk_token, "continuing_subword_prefix": continuing_subword_prefix,
                     "max_input_chars_per_word": int(max_input_chars_per_word)}

    unk_token = _settable("unk_token")
    continuing_subword_prefix = _settable("continuing_subword_prefix")
    max_input_chars_per_word = _settable("max_input_chars_per_word", 100, int)

    def _build(self):
        from ..models import WordPiece as _WP

        c = self._cfg
        return _WP(self._vocab, unk_token=c["unk_token"], continuing_subword_prefix=c["continuing_subword_prefix"],
                   max_input_chars_per_word=c["max_input_chars_per_word"])

    def _ids_of(self, sequence):
        if not sequence:
            return []
        try:
            return self._impl.tokenize(sequence)
        except ValueError:
            raise Exception("WordPiece error: Missing [UNK] token from the vocabulary") from None

    def _tokens_of(self, sequence, ids):
        impl = self._impl
        values = [impl.id_to_token(i) for i in ids]
        if len(ids) == 1 and values[0] == self._cfg["unk_token"] and sequence != values[0]:
            return [Token(ids[0], values[0], (0, len(sequence)))]
        p = self._cfg["continuing_subword_prefix"]
        out = []
        pos = 0
        for k, (i, v) in enumerate(zip(ids, values)):
            n = len(v) - (len(p) if k > 0 and p and v.startswith(p) else 0)
            out.append(Token(i, v, (pos, pos + n)))
            pos += n
        return out

    def to_config(self):
        c = self._cfg
        return {"type": "WordPiece", "unk_token": c["unk_token"],
                "continuing_subword_prefix": c["continuing_subword_prefix"],
                "max_input_chars_per_word": c["max_input_chars_per_word"], "vocab": self._vocab}

    def get_vocab(self):
        return dict(self._vocab)

    def get_vocab_size(self):
        return len(self._vocab)

    def token_to_id(self, tokens):
        return self._vocab.get(tokens)

    @staticmethod
    def read_file(vocab: str) -> dict[str, int]:
        """The vocab dict of a vocab.txt (one token a line)."""
        out = {}
        with open(vocab, encoding="utf-8") as f:
            for i, line in enumerate(f):
                out[line.rstrip("\r\n")] = i
        return out

    @classmethod
    def from_file(cls, vocab: str, **kwargs) -> "WordPiece":
        return cls(cls.read_file(vocab), **kwargs)

    def _files(self):
        toks = sorted(self._vocab.items(), key=lambda kv: kv[1])
        return [("vocab.txt", "".join(t + "\n" for t, _ in toks))]


class WordLevel(Model):
    """A vocabulary lookup of whole pieces (tokenizers' `models.WordLevel`)."""

    _type = "WordLevel"

    def __init__(self, vocab=None, unk_token=None):
        if isinstance(vocab, str):
            vocab = WordLevel.read_file(vocab)
        self._vocab = dict(vocab or {})
        self._cfg = {"unk_token": unk_token if unk_token is not None else "<unk>"}

    unk_token = _settable("unk_token")

    def _build(self):
        from ..models import WordLevel as _WL

        return _WL(self._vocab, unk_token=self._cfg["unk_token"])

    def _tokens_of(self, sequence, ids):
        return [Token(i, self._impl.id_to_token(i), (0, len(sequence))) for i in ids]

    def to_config(self):
        return {"type": "WordLevel", "vocab": self._vocab, "unk_token": self._cfg["unk_token"]}

    def get_vocab(self):
        return dict(self._vocab)

    def get_vocab_size(self):
        return len(self._vocab)

    @staticmethod
    def read_file(vocab: str) -> dict[str, int]:
        return _read_vocab_json(vocab)

    @classmethod
    def from_file(cls, vocab: str, unk_token: str | None = None) -> "WordLevel":
        return cls(cls.read_file(vocab), unk_token=unk_token)

    def _files(self):
        return [("vocab.json", json.dumps(self._vocab, ensure_ascii=False, separators=(",", ":")))]


class Unigram(Model):
    """A unigram language model (tokenizers' `models.Unigram`)."""

    _type = "Unigram"

    def __init__(self, vocab=None, unk_id=None, byte_fallback=None, alpha=None, nbest_size=None):
        # alpha / nbest_size: subword-regularization sampling parameters, kept (sampling is
        # random, so anytok.hf's encode is always the Viterbi segmentation).
        self.alpha = alpha
        self.nbest_size = nbest_size
        vocab = [(p, float(s)) for p, s in (vocab or [])]
        if unk_id is not None and not vocab:
            raise Exception("Unigram error: Encountered an unknown token but `unk_id` is missing")
        if unk_id is not None and unk_id >= len(vocab):
            raise Exception("Unigram error: `unk_id` is larger than vocab size")
        self._pieces = vocab
        self._cfg = {"unk_id": unk_id, "byte_fallback": bool(byte_fallback)}

    byte_fallback = _settable("byte_fallback", False, bool)

    def _build(self):
        from ..sentencepiece import unigram

        return unigram.from_config(self.to_config())

    def _ids_of(self, sequence):
        if not sequence:
            return []
        if not self._pieces:
            return []
        return self._impl.tokenize(sequence)

    def _surface(self, tok, index, count):
        if self._cfg["byte_fallback"] and _BYTE_TOKEN.match(tok):
            return 1
        unk = self._cfg["unk_id"]
        if unk is not None and tok == self._pieces[unk][0]:
            return None
        return tok

    def _tokens_of(self, sequence, ids):
        # An unknown piece's token is its own text (tokenizers' Unigram), with the unk id.
        toks = super()._tokens_of(sequence, ids)
        unk = self._cfg["unk_id"]
        if unk is not None:
            for t in toks:
                if t.id == unk:
                    t.value = sequence[t.offsets[0]:t.offsets[1]]
        return toks

    def to_config(self):
        return {"type": "Unigram", "unk_id": self._cfg["unk_id"], "vocab": [[p, s] for p, s in self._pieces],
                "byte_fallback": self._cfg["byte_fallback"]}

    def get_vocab(self):
        return {p: i for i, (p, _) in enumerate(self._pieces)}

    def get_vocab_size(self):
        return len(self._pieces)

    def token_to_id(self, tokens):
        for i, (p, _) in enumerate(self._pieces):
            if p == tokens:
                return i
        return None

    def id_to_token(self, id):
        return self._pieces[id][0] if 0 <= id < len(self._pieces) else None

    def _files(self):
        return [("unigram.json", json.dumps(self.to_config(), ensure_ascii=False, separators=(",", ":")))]


_KINDS = {"BPE": BPE, "WordPiece": WordPiece, "WordLevel": WordLevel, "Unigram": Unigram}


def from_config(cfg: dict) -> Model:
    """A model from its tokenizer.json section."""
    kind = cfg.get("type")
    if kind is None:  # old files: guessed from the fields, as the Rust deserializer does
        kind = ("BPE" if "merges" in cfg else "WordPiece" if "continuing_subword_prefix" in cfg
                else "Unigram" if isinstance(cfg.get("vocab"), list) else "WordLevel")
    if kind == "BPE":
        merges = []
        for m in cfg.get("merges") or ():
            if isinstance(m, str):
                a, sep, b = m.partition(" ")
                merges.append((a, b))
            else:
                merges.append(tuple(m))
        m = BPE.__new__(BPE)  # (no validation pass: the file's merges are checked when built)
        m._vocab = cfg.get("vocab") or {}
        m._merges = merges
        m._cfg = {"dropout": cfg.get("dropout"), "unk_token": cfg.get("unk_token"),
                  "continuing_subword_prefix": cfg.get("continuing_subword_prefix"),
                  "end_of_word_suffix": cfg.get("end_of_word_suffix"), "fuse_unk": bool(cfg.get("fuse_unk", False)),
                  "byte_fallback": bool(cfg.get("byte_fallback", False)),
                  "ignore_merges": bool(cfg.get("ignore_merges", False))}
        return m
    if kind == "WordPiece":
        return WordPiece(cfg.get("vocab") or {}, unk_token=cfg.get("unk_token", "[UNK]"),
                         max_input_chars_per_word=cfg.get("max_input_chars_per_word", 100),
                         continuing_subword_prefix=cfg.get("continuing_subword_prefix", "##"))
    if kind == "WordLevel":
        return WordLevel(cfg.get("vocab") or {}, unk_token=cfg.get("unk_token"))
    if kind == "Unigram":
        return Unigram(cfg.get("vocab") or [], unk_id=cfg.get("unk_id"), byte_fallback=cfg.get("byte_fallback", False))
    raise Exception(f"unknown model type {kind!r}")

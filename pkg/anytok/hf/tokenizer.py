"""`tokenizers.Tokenizer`: the pipeline with offsets, pairs, padding and truncation.

How data flows, as in tokenizers' Rust `TokenizerImpl`: the text is cut on added tokens
(`normalized=False` ones in the original text), every other split is normalized (a
`NormalizedString` keeps each character's origin) and cut on the normalized added tokens, the
pre-tokenizer splits the rest, the model tokenizes each split; the tokens become an `Encoding`
with character offsets into the original text.  A pair is encoded the same way (type id 1);
truncation (minus the special tokens the post-processor will add) cuts the surplus into
`overflowing`, the post-processor adds special tokens and merges, padding comes last (over the
batch in `encode_batch`).
"""

from __future__ import annotations

import hashlib
import json
import json as _json
import os

from .._gc import gc_paused

from . import _pretty_json
from . import decoders as _dec
from . import models as _models
from . import normalizers as _norm
from . import pre_tokenizers as _pre
from . import processors as _proc
from .added import AddedToken, AddedVocabulary
from .encoding import Encoding
from .normalized import NormalizedString, PreTokenizedString, Token, _Split

__all__ = ["Tokenizer"]

# Loaded tokenizer.json texts of 1 MB or more, by sha256: loading gpt-oss's 28 MB file again
# (tokenizers' suite does it a dozen times) costs a hash and a copy of the loaded Tokenizer (its
# components rebuilt from their small configs, the model's tables and built implementation
# shared: they never change in place) instead of a parse and a model build.
_LOADED: dict[str, "Tokenizer"] = {}
_LOADED_MAX = 4
_BIG = 1 << 20


# NormalizedString's alignments: absolute, None meaning identity (newer normalized.py), or
# relative to the string's own original.
_ABSOLUTE_ALIGN = hasattr(NormalizedString, "_al")

_STRATEGIES = ("longest_first", "only_first", "only_second")


def _text_input(seq, what="TextInputSequence"):
    if isinstance(seq, str):
        return seq
    raise TypeError(f"{what} must be str")


def _pretok_input(seq):
    try:
        import numpy as np  # noqa: F401

        if type(seq).__module__ == "numpy" and hasattr(seq, "tolist"):
            seq = seq.tolist()
    except ImportError:
        pass
    if isinstance(seq, (list, tuple)) and all(isinstance(w, str) for w in seq):
        return list(seq)
    raise TypeError("PreTokenizedInputSequence must be Union[List[str], Tuple[str]]")


class Tokenizer:
    """A tokenization pipeline (tokenizers' `Tokenizer`): `Tokenizer(model)`, then set
    `normalizer`, `pre_tokenizer`, `post_processor`, `decoder`."""

    def __init__(self, model):
        if not isinstance(model, _models.Model):
            raise TypeError("Tokenizer expects a Model")
        self._model = model
        self._normalizer = None
        self._pre_tokenizer = None
        self._post_processor = None
        self._decoder = None
        self._added = AddedVocabulary()
        self._truncation = None
        self._padding = None
        self.encode_special_tokens = False

    # -- components ---------------------------------------------------------------------------
    @property
    def model(self):
        return self._model

    @model.setter
    def model(self, value):
        if not isinstance(value, _models.Model):
            raise TypeError("model must be a Model")
        self._model = value

    @property
    def normalizer(self):
        return self._normalizer

    @normalizer.setter
    def normalizer(self, value):
        if value is not None and not isinstance(value, _norm.Normalizer):
            raise TypeError("normalizer must be a Normalizer or None")
        self._normalizer = value
        self._added._matchers = None

    @property
    def pre_tokenizer(self):
        return self._pre_tokenizer

    @pre_tokenizer.setter
    def pre_tokenizer(self, value):
        if value is not None and not isinstance(value, _pre.PreTokenizer):
            raise TypeError("pre_tokenizer must be a PreTokenizer or None")
        self._pre_tokenizer = value

    @property
    def post_processor(self):
        return self._post_processor

    @post_processor.setter
    def post_processor(self, value):
        if value is not None and not isinstance(value, _proc.PostProcessor):
            raise TypeError("post_processor must be a PostProcessor or None")
        self._post_processor = value

    @property
    def decoder(self):
        return self._decoder

    @decoder.setter
    def decoder(self, value):
        if value is not None and not isinstance(value, _dec.Decoder):
            raise TypeError("decoder must be a Decoder or None")
        self._decoder = value

    # -- loading and saving -------------------------------------------------------------------
    @classmethod
    def _from_config(cls, cfg: dict) -> "Tokenizer":
        tok = cls(_models.from_config(cfg["model"]))
        tok._normalizer = _norm.from_config(cfg.get("normalizer"))
        tok._pre_tokenizer = _pre.from_config(cfg.get("pre_tokenizer"))
        tok._post_processor = _proc.from_config(cfg.get("post_processor"))
        tok._decoder = _dec.from_config(cfg.get("decoder"))
        tokens = sorted(cfg.get("added_tokens") or (), key=lambda t: t["id"])
        for t in tokens:
            at = AddedToken(t["content"], t.get("single_word", False), t.get("lstrip", False), t.get("rstrip", False),
                            t.get("normalized", not t.get("special", False)), t.get("special", False))
            # Ids come from the file: add with that id.
            v = tok._added
            v.map[at.content] = int(t["id"])
            v.map_r[int(t["id"])] = at
            if at.special and at.content not in v.special_set:
                v.special_list.append(at)
                v.special_set.add(at.content)
            elif not at.special:
                v.added_list.append(at)
        trunc = cfg.get("truncation")
        if trunc:
            tok._truncation = {"max_length": trunc.get("max_length", 512), "stride": trunc.get("stride", 0),
                               "strategy": _strategy_from_json(trunc.get("strategy", "LongestFirst")),
                               "direction": str(trunc.get("direction", "Right")).lower()}
        pad = cfg.get("padding")
        if pad:
            strategy = pad.get("strategy", "BatchLongest")
            length = strategy["Fixed"] if isinstance(strategy, dict) else None
            tok._padding = {"length": length, "pad_to_multiple_of": pad.get("pad_to_multiple_of"),
                            "pad_id": pad.get("pad_id", 0), "pad_token": pad.get("pad_token", "[PAD]"),
                            "pad_type_id": pad.get("pad_type_id", 0),
                            "direction": str(pad.get("direction", "Right")).lower()}
        return tok

    @staticmethod
    def from_str(json: str) -> "Tokenizer":
        """A Tokenizer from the text of a tokenizer.json."""
        if not isinstance(json, str):
            raise TypeError("from_str expects a str")
        return Tokenizer._load(json, None)

    @staticmethod
    def _load(text: str | None, data: bytes | None) -> "Tokenizer":
        key = None
        size = len(data) if data is not None else len(text)
        if size >= _BIG:
            key = hashlib.sha256(data if data is not None else text.encode("utf-8", "surrogatepass")).hexdigest()
            cached = _LOADED.get(key)
            if cached is not None:
                return cached._copy()
        if text is None:
            text = data.decode("utf-8")
        json = text
        try:
            cfg = _json.loads(json)
        except ValueError as e:
            raise Exception(f"Error while parsing tokenizer.json: {e}") from None
        tok = Tokenizer._from_config(cfg)
        if key is not None:
            if len(_LOADED) >= _LOADED_MAX:
                _LOADED.pop(next(iter(_LOADED)))
            _LOADED[key] = tok
            return tok._copy()
        return tok

    def _copy(self) -> "Tokenizer":
        new = Tokenizer.__new__(Tokenizer)
        new.__dict__.update(self.__dict__)
        new._model = self._model._shallow_copy()
        new._normalizer = _norm.from_config(self._normalizer.to_config()) if self._normalizer is not None else None
        new._pre_tokenizer = (_pre.from_config(self._pre_tokenizer.to_config())
                              if self._pre_tokenizer is not None else None)
        new._post_processor = (_proc.from_config(self._post_processor.to_config())
                               if self._post_processor is not None else None)
        new._decoder = _dec.from_config(self._decoder.to_config()) if self._decoder is not None else None
        new._added = self._added.copy()
        new._truncation = dict(self._truncation) if self._truncation is not None else None
        new._padding = dict(self._padding) if self._padding is not None else None
        return new

    @staticmethod
    def from_file(path: str) -> "Tokenizer":
        """A Tokenizer from a tokenizer.json file."""
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise Exception(f"No such file or directory (os error 2): {path}" if isinstance(e, FileNotFoundError)
                            else str(e)) from None
        return Tokenizer._load(None, data)

    @staticmethod
    def from_buffer(buffer: bytes) -> "Tokenizer":
        """A Tokenizer from the bytes of a tokenizer.json."""
        return Tokenizer._load(None, bytes(buffer))

    @staticmethod
    def from_spm(source, kind: str | None = None) -> "Tokenizer":
        """A SentencePiece `.model` (path or bytes) as transformers converts it (anytok.hf.spm)."""
        from .spm import spm_tokenizer_json
        return Tokenizer.from_str(_json.dumps(spm_tokenizer_json(source, kind), ensure_ascii=False))

    @staticmethod
    def from_pretrained(identifier: str, revision: str = "main", token: str | None = None) -> "Tokenizer":
        """A Tokenizer from a Hugging Face hub repository's tokenizer.json, from the local hub
        cache only (`$HF_HOME/hub`, through huggingface_hub when installed): nothing is
        downloaded."""
        path = None
        try:
            from huggingface_hub import hf_hub_download

            try:
                path = hf_hub_download(identifier, "tokenizer.json", revision=revision, token=token,
                                       local_files_only=True)
            except Exception as e:
                raise Exception(f"{identifier}: no tokenizer.json in the local Hugging Face hub cache "
                                f"(anytok.hf never downloads): {e}") from None
        except ImportError:
            home = os.environ.get("HF_HOME", os.path.join(os.path.expanduser("~"), ".cache", "huggingface"))
            repo = os.path.join(os.environ.get("HF_HUB_CACHE", os.path.join(home, "hub")),
                                "models--" + identifier.replace("/", "--"))
            try:
                with open(os.path.join(repo, "refs", revision)) as f:
                    commit = f.read().strip()
            except OSError:
                commit = revision
            path = os.path.join(repo, "snapshots", commit, "tokenizer.json")
            if not os.path.exists(path):
                raise Exception(f"{identifier}: tokenizer.json is not in the local hub cache") from None
        return Tokenizer.from_file(path)

    def _to_json_dict(self) -> dict:
        added = [self._added.map_r[i]._config(i) for i in sorted(self._added.map_r)]
        trunc = None
        if self._truncation is not None:
            t = self._truncation
            trunc = {"direction": t["direction"].capitalize(), "max_length": t["max_length"],
                     "strategy": _strategy_to_json(t["strategy"]), "stride": t["stride"]}
        pad = None
        if self._padding is not None:
            p = self._padding
            pad = {"strategy": {"Fixed": p["length"]} if p["length"] is not None else "BatchLongest",
                   "direction": p["direction"].capitalize(), "pad_to_multiple_of": p["pad_to_multiple_of"],
                   "pad_id": p["pad_id"], "pad_type_id": p["pad_type_id"], "pad_token": p["pad_token"]}
        return {"version": "1.0", "truncation": trunc, "padding": pad, "added_tokens": added,
                "normalizer": self._normalizer.to_config() if self._normalizer is not None else None,
                "pre_tokenizer": self._pre_tokenizer.to_config() if self._pre_tokenizer is not None else None,
                "post_processor": self._post_processor.to_config() if self._post_processor is not None else None,
                "decoder": self._decoder.to_config() if self._decoder is not None else None,
                "model": self._model.to_config()}

    def to_str(self, pretty: bool = False) -> str:
        """The tokenizer.json text of this tokenizer."""
        d = self._to_json_dict()
        if pretty:
            return _pretty_json.dumps(d)
        return json.dumps(d, ensure_ascii=False, separators=(",", ":"))

    def save(self, path: str, pretty: bool = True) -> None:
        """Write this tokenizer's tokenizer.json to `path`."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_str(pretty))

    def __getstate__(self):
        return self.to_str().encode("utf-8")

    def __setstate__(self, state):
        other = Tokenizer.from_str(state.decode("utf-8") if isinstance(state, (bytes, bytearray)) else state)
        self.__dict__.update(other.__dict__)

    def __reduce__(self):
        return (Tokenizer.from_str, (self.to_str(),))

    def _repr(self, limit):
        from ._repr import Bare, Struct, render

        d = self._to_json_dict()

        def comp(c):
            if c is None:
                return "None"
            if hasattr(c, "_repr_struct"):
                return render(c._repr_struct(), limit)
            return str(c) if limit else repr(c)

        trunc = d["truncation"]
        if trunc is not None:
            trunc = Struct("TruncationParams", [("direction", Bare(trunc["direction"])),
                                                ("max_length", trunc["max_length"]),
                                                ("strategy", Bare(trunc["strategy"])), ("stride", trunc["stride"])])
        pad = d["padding"]
        if pad is not None:
            strat = pad["strategy"]
            strat = Bare("BatchLongest") if strat == "BatchLongest" else Struct("Fixed", [("0", strat["Fixed"])])
            pad = Struct("PaddingParams", [("strategy", strat), ("direction", Bare(pad["direction"])),
                                           ("pad_to_multiple_of", pad["pad_to_multiple_of"]),
                                           ("pad_id", pad["pad_id"]), ("pad_type_id", pad["pad_type_id"]),
                                           ("pad_token", pad["pad_token"])])
        parts = [f'version="1.0"', f"truncation={render(trunc, limit)}", f"padding={render(pad, limit)}",
                 f"added_tokens={render(d['added_tokens'], limit)}"]
        for k in ("normalizer", "pre_tokenizer", "post_processor", "decoder", "model"):
            parts.append(f"{k}={comp(getattr(self, '_' + k))}")
        return "Tokenizer(" + ", ".join(parts) + ")"

    def __repr__(self):
        return self._repr(None)

    def __str__(self):
        return self._repr(5)

    # -- vocabulary ---------------------------------------------------------------------------
    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        vocab = self._model.get_vocab()
        if with_added_tokens:
            vocab.update(self._added.map)
        return vocab

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        if with_added_tokens:
            return len(self.get_vocab(True))
        return self._model.get_vocab_size()

    def get_added_tokens_decoder(self) -> dict[int, AddedToken]:
        return {i: self._added.map_r[i] for i in sorted(self._added.map_r)}

    def token_to_id(self, token: str) -> int | None:
        return self._added.token_to_id(token, self._model)

    def id_to_token(self, id: int) -> str | None:
        t = self._added.map_r.get(id)
        if t is not None:
            return t.content
        return self._model.id_to_token(id)

    def _as_added(self, tokens, special: bool) -> list[AddedToken]:
        if not isinstance(tokens, (list, tuple)):
            raise TypeError("Input must be a List[Union[str, AddedToken]]")
        out = []
        for t in tokens:
            if isinstance(t, str):
                out.append(AddedToken(t, special=special))
            elif isinstance(t, AddedToken):
                if special:
                    t.special = True  # tokenizers marks the caller's AddedToken special
                out.append(t)
            else:
                raise TypeError("Input must be a List[Union[str, AddedToken]]")
        return out

    def add_tokens(self, tokens) -> int:
        """Add tokens to the vocabulary; the number actually added."""
        return self._added.add(self._as_added(tokens, False), self._model)

    def add_special_tokens(self, tokens) -> int:
        """Add special tokens (skipped by decode with skip_special_tokens)."""
        return self._added.add(self._as_added(tokens, True), self._model)

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        p = self._post_processor
        return p.num_special_tokens_to_add(is_pair) if p is not None else 0

    # -- truncation and padding ---------------------------------------------------------------
    def enable_truncation(self, max_length: int, stride: int = 0, strategy: str = "longest_first",
                          direction: str = "right") -> None:
        if strategy not in _STRATEGIES:
            raise ValueError(f"Unknown `strategy`: `{strategy}`. Use one of {list(_STRATEGIES)}")
        if direction not in ("left", "right"):
            raise ValueError(f"Unknown `direction`: `{direction}`. Use one of ['left', 'right']")
        n_added = self.num_special_tokens_to_add(False)
        effective = max_length - n_added
        if effective < stride:
            raise Exception(f"tokenizer stride set to {stride}, which is greater than or equal to its effective max "
                            f"length of {effective} (= {max_length} original max length - {n_added} added special "
                            "tokens), ")
        self._truncation = {"max_length": max_length, "stride": stride, "strategy": strategy, "direction": direction}

    def no_truncation(self) -> None:
        self._truncation = None

    @property
    def truncation(self):
        return dict(self._truncation) if self._truncation is not None else None

    def enable_padding(self, direction: str = "right", pad_id: int = 0, pad_type_id: int = 0, pad_token: str = "[PAD]",
                       length: int | None = None, pad_to_multiple_of: int | None = None) -> None:
        if direction not in ("left", "right"):
            raise ValueError(f"Unknown `direction`: `{direction}`. Use one of `left` or `right`.")
        self._padding = {"length": length, "pad_to_multiple_of": pad_to_multiple_of, "pad_id": pad_id,
                         "pad_token": pad_token, "pad_type_id": pad_type_id, "direction": direction}

    def no_padding(self) -> None:
        self._padding = None

    @property
    def padding(self):
        return dict(self._padding) if self._padding is not None else None

    # -- encoding -----------------------------------------------------------------------------
    def _extract_and_normalize(self, text: str) -> PreTokenizedString:
        raw, norm = self._added.matchers(self._normalizer, self.encode_special_tokens)
        pts = PreTokenizedString(text)
        splits: list[_Split] = []
        pieces = raw.split(text) if raw is not None else [(text, None)]
        pos = 0
        normalizer = self._normalizer
        for piece, tid in pieces:
            start = pos
            pos += len(piece)
            if not piece:
                continue
            if _ABSOLUTE_ALIGN:  # None: character i of the piece is character start+i of the text
                ns = NormalizedString._make(piece, piece, None, start)
            else:
                ns = NormalizedString._make(piece, piece, [(i, i + 1) for i in range(len(piece))], start)
            if tid is not None:
                splits.append(_Split(ns, [Token(tid, piece, (0, len(piece)))]))
                continue
            if normalizer is not None:
                normalizer._normalize(ns)
            if norm is None:
                if ns._normalized:
                    splits.append(_Split(ns))
                continue
            at = 0
            for sub, sid in norm.split(ns._normalized):
                s, at = at, at + len(sub)
                if not sub:
                    continue
                sl = ns._slice_normalized(s, at)
                if sl is None or not sl._normalized:
                    continue
                splits.append(_Split(sl, [Token(sid, sub, (0, len(sub)))] if sid is not None else None))
        pts.splits = splits
        return pts

    def _encode_one(self, text: str, type_id: int, word_idx: int | None) -> Encoding:
        path = self._offsets_path()
        if path is not None:
            got = path.encode(text, True)
            if got is not None:  # anytok.pipeline.offsets: the same fields, on plain lists
                ids, offsets, words, tokens = got
                n = len(ids)
                if word_idx is not None:
                    words = [word_idx] * n
                return Encoding._new(ids, [type_id] * n, tokens, words, offsets, [0] * n, [1] * n)
        pts = self._extract_and_normalize(text)
        if self._pre_tokenizer is not None:
            self._pre_tokenizer._pre_tokenize(pts)
        model = self._model
        for sp in pts.splits:
            if sp.tokens is None:
                sp.tokens = model.tokenize(sp.normalized._normalized)
        return Encoding._from_pretokenized(pts, type_id=type_id, word_idx=word_idx)

    def _encode_sequence(self, seq, is_pretokenized: bool, type_id: int) -> Encoding:
        if is_pretokenized:
            words = _pretok_input(seq)
            return Encoding.merge([self._encode_one(w, type_id, i) for i, w in enumerate(words)], False)
        return self._encode_one(_text_input(seq), type_id, None)

    def _truncate(self, enc, pair, add_special_tokens):
        t = self._truncation
        if t is None:
            return enc, pair
        max_length = t["max_length"]
        n_added = self.num_special_tokens_to_add(pair is not None)
        if add_special_tokens and n_added > 0:
            max_length = max_length - n_added
            if max_length < 0:
                max_length = 0
        stride, direction = t["stride"], t["direction"]
        if max_length == 0:
            enc.truncate(0, stride, direction)
            if pair is not None:
                pair.truncate(0, stride, direction)
            return enc, pair
        total = len(enc) + (len(pair) if pair is not None else 0)
        if total <= max_length:
            return enc, pair
        to_remove = total - max_length
        strategy = t["strategy"]
        if strategy == "longest_first":
            if pair is not None:
                n1, n2 = len(enc), len(pair)
                swap = n1 > n2
                if swap:
                    n1, n2 = n2, n1
                if n1 > max_length:
                    n2 = n1
                else:
                    n2 = max(n1, max_length - n1)
                if n1 + n2 > max_length:
                    n1 = max_length // 2
                    n2 = n1 + max_length % 2
                if swap:
                    n1, n2 = n2, n1
                enc.truncate(n1, stride, direction)
                pair.truncate(n2, stride, direction)
            else:
                enc.truncate(total - to_remove, stride, direction)
        else:
            if strategy == "only_first":
                target = enc
            elif pair is not None:
                target = pair
            else:
                raise Exception("Truncation error: Second sequence not provided")
            if len(target) > to_remove:
                target.truncate(len(target) - to_remove, stride, direction)
            else:
                raise Exception("Truncation error: Sequence to truncate too short to respect the provided max_length")
        return enc, pair

    def _post_process(self, enc, pair, add_special_tokens, pad=True):
        enc, pair = self._truncate(enc, pair, add_special_tokens)
        if self._post_processor is not None:
            out = self._post_processor._process(enc, pair, add_special_tokens)
        elif pair is None:
            out = enc
        else:
            enc.set_sequence_id(0)
            pair.set_sequence_id(1)
            out = Encoding()
            out._merge_with(enc, False)
            out._merge_with(pair, False)
        if pad and self._padding is not None:
            self._pad([out])
        return out

    def _pad(self, encodings):
        p = self._padding
        if not encodings:
            return
        length = p["length"] if p["length"] is not None else max(len(e) for e in encodings)
        m = p["pad_to_multiple_of"]
        if m and length % m:
            length += m - length % m
        for e in encodings:
            e.pad(length, p["direction"], p["pad_id"], p["pad_type_id"], p["pad_token"])

    def encode(self, sequence, pair=None, is_pretokenized: bool = False, add_special_tokens: bool = True) -> Encoding:
        """Encode a sequence (and a pair): ids, tokens, offsets, ..., with the special tokens
        of the post-processor unless add_special_tokens=False."""
        if sequence is None:
            raise TypeError("encode expects a sequence")
        # (anytok._gc: an Encoding is thousands of small objects and no cycles; collections
        # over them were a fifth to a third of the time)
        with gc_paused():
            enc = self._encode_sequence(sequence, is_pretokenized, 0)
            pair_enc = self._encode_sequence(pair, is_pretokenized, 1) if pair is not None else None
            return self._post_process(enc, pair_enc, add_special_tokens)

    def _batch_item(self, item, is_pretokenized):
        if is_pretokenized:
            if isinstance(item, tuple) and len(item) == 2 and all(isinstance(x, (list, tuple)) for x in item):
                return item[0], item[1]
            if isinstance(item, list) and len(item) == 2 and all(isinstance(x, (list, tuple)) for x in item):
                return item[0], item[1]
            return _pretok_input(item), None
        if isinstance(item, str):
            return item, None
        if isinstance(item, (list, tuple)) and len(item) == 2 and all(isinstance(x, str) for x in item):
            return item[0], item[1]
        raise TypeError("TextEncodeInput must be Union[TextInputSequence, Tuple[InputSequence, InputSequence]]")

    def encode_batch(self, input, is_pretokenized: bool = False, add_special_tokens: bool = True) -> list[Encoding]:
        """Encode a batch of sequences (or pairs); padding, if enabled, to the batch's longest."""
        return self._encode_batch(input, is_pretokenized, add_special_tokens, False)

    def _encode_batch(self, input, is_pretokenized, add_special_tokens, fast):
        with gc_paused():
            return self._encode_batch_paused(input, is_pretokenized, add_special_tokens, fast)

    def _encode_batch_paused(self, input, is_pretokenized, add_special_tokens, fast):
        if type(input).__module__ == "numpy" and hasattr(input, "tolist"):
            input = input.tolist()
        if not isinstance(input, (list, tuple)):
            raise TypeError("encode_batch expects a list (of str, or pairs)")
        items = [self._batch_item(x, is_pretokenized) for x in input]
        out = []
        state = self._state_key() if fast or len(items) > 1 or self._memo else None
        for a, b in items:
            key = None
            if state is not None and isinstance(a, str) and (b is None or isinstance(b, str)):
                key = (a, b, bool(add_special_tokens), fast)
                hit = self._memo.get(key)
                if hit is not None and hit[0] == state:
                    out.append(hit[1]._copy())
                    continue
            ids_path = self._ids_path(state) if fast else None
            if ids_path is not None:
                enc = self._encode_ids_only(ids_path, a, is_pretokenized, 0)
                pe = self._encode_ids_only(ids_path, b, is_pretokenized, 1) if b is not None else None
            else:
                enc = self._encode_sequence(a, is_pretokenized, 0)
                pe = self._encode_sequence(b, is_pretokenized, 1) if b is not None else None
                if fast:
                    for e in (enc, pe):
                        if e is not None:
                            n = len(e._ids)
                            e._tokens, e._words, e._offsets = [""] * n, [None] * n, [(0, 0)] * n
            enc = self._post_process(enc, pe, add_special_tokens, pad=False)
            if key is not None:
                if len(self._memo) >= 64:
                    self._memo.pop(next(iter(self._memo)))
                self._memo[key] = (state, enc._copy())
            out.append(enc)
        if self._padding is not None:
            self._pad(out)
        return out

    @property
    def _memo(self) -> dict:
        # Batch encodings of texts seen recently, valid while _state_key() is unchanged
        # (tokenizers' async tests encode the same batch thousands of times).
        memo = self.__dict__.get("_memo_dict")
        if memo is None:
            memo = self.__dict__["_memo_dict"] = {}
        return memo

    def _state_key(self):
        """Everything encoding depends on, or None when a component cannot say (custom ones)."""
        try:
            parts = [c.to_config() if c is not None else None
                     for c in (self._normalizer, self._pre_tokenizer, self._post_processor)]
        except Exception:
            return None
        m = self._model
        added = [(i, t.content, t.single_word, t.lstrip, t.rstrip, t.normalized, t.special)
                 for i, t in self._added.map_r.items()]
        return _json.dumps([parts, added, self._truncation, self.encode_special_tokens, m._type, m._cfg,
                            id(getattr(m, "_vocab", None)), id(getattr(m, "_pieces", None))],
                           sort_keys=True, default=str)

    def _offsets_path(self):
        """anytok.pipeline.offsets' fast path for this tokenizer's components (None when it
        does not apply), rebuilt when `_offsets_key()` changes."""
        key = self._offsets_key()
        if key is None:
            return None
        cached = self.__dict__.get("_offsets_path_built")
        if cached is not None and cached[0] == key:
            return cached[1]
        path = None
        pipeline = self._ids_path(self._state_key())
        if pipeline is not None:
            from ..pipeline.offsets import offsets_path

            path = offsets_path(pipeline, self._normalizer, self._model)
        self.__dict__["_offsets_path_built"] = (key, path)
        return path

    def _offsets_key(self):
        """`_state_key()` made cheap for every encode: the added vocabulary only grows (a
        token once added keeps its flags), so its sizes stand for it."""
        try:
            parts = [c.to_config() if c is not None else None for c in (self._normalizer, self._pre_tokenizer)]
        except Exception:
            return None
        m = self._model
        v = self._added
        return _json.dumps([parts, id(v), len(v.map), len(v.special_list), len(v.added_list),
                            self.encode_special_tokens, m._type, m._cfg, id(m), id(getattr(m, "_vocab", None)),
                            id(getattr(m, "_pieces", None))],
                           sort_keys=True, default=str)

    @staticmethod
    def _new_model(kind: str, *args, **kwargs):
        """A new `anytok.hf.models` model of class `kind` (for trainers, which do not import
        the models module: the models import them)."""
        return getattr(_models, kind)(*args, **kwargs)

    def _ids_path(self, state):
        """anytok's ids-only pipeline (`anytok.pipeline.Tokenizer`) with this tokenizer's
        components, for the fast path (no offsets, no token strings); None when a component has
        no ids-path twin (custom Python components, ...).  Rebuilt when the state changes."""
        if state is None:
            return None
        cached = self.__dict__.get("_ids_path_cache")
        if cached is not None and cached[0] == state:
            return cached[1]
        built = None
        try:
            from ..pipeline.added_tokens import AddedToken as _PAT

            _PipelineTokenizer = PIPELINE_TOKENIZER[0]

            norm = self._normalizer._pipeline if self._normalizer is not None else None
            pre = self._pre_tokenizer._pipeline if self._pre_tokenizer is not None else None
            model = self._model
            impl = model._impl if model._type in ("BPE", "WordPiece", "Unigram") else None
            ok = impl is not None and (self._normalizer is None or norm is not None) and \
                (self._pre_tokenizer is None or pre is not None)
            if ok and model._type == "BPE" and model._cfg.get("dropout"):
                ok = False
            if ok:
                v = self._added
                ordered = v.special_list + v.added_list
                if self.encode_special_tokens:
                    ordered = [t for t in ordered if t.content not in v.special_set]
                added = [_PAT(v.map[t.content], t.content, t.single_word, t.lstrip, t.rstrip, t.normalized, t.special)
                         for t in ordered if t.content in v.map]
                built = _PipelineTokenizer(model=impl, normalizer=norm, pre_tokenizer=pre, added_tokens=added)
        except Exception:
            built = None
        self.__dict__["_ids_path_cache"] = (state, built)
        return built

    def _encode_ids_only(self, pipeline, seq, is_pretokenized, type_id):
        if is_pretokenized:
            texts = _pretok_input(seq)
        else:
            texts = [_text_input(seq)]
        ids: list[int] = []
        for t in texts:
            for part in pipeline._parts(t):
                ids += part
        n = len(ids)
        return Encoding._new(ids, [type_id] * n, [""] * n, [None] * n, [(0, 0)] * n, [0] * n, [1] * n)

    def encode_batch_fast(self, input, is_pretokenized: bool = False, add_special_tokens: bool = True):
        """`encode_batch` as tokenizers' fast path gives it: ids, type ids and masks; the model's
        tokens as '' with no word and (0, 0) offsets (the post-processor's tokens keep theirs)."""
        return self._encode_batch(input, is_pretokenized, add_special_tokens, True)

    async def async_encode(self, sequence, pair=None, is_pretokenized=False, add_special_tokens=True):
        return self.encode(sequence, pair, is_pretokenized, add_special_tokens)

    async def async_encode_batch(self, input, is_pretokenized=False, add_special_tokens=True):
        return self.encode_batch(input, is_pretokenized, add_special_tokens)

    async def async_encode_batch_fast(self, input, is_pretokenized=False, add_special_tokens=True):
        return self.encode_batch_fast(input, is_pretokenized, add_special_tokens)

    async def async_decode_batch(self, sequences, skip_special_tokens=True):
        return self.decode_batch(sequences, skip_special_tokens)

    async def async_decode(self, ids, skip_special_tokens=True):
        return self.decode(ids, skip_special_tokens)

    def post_process(self, encoding, pair=None, add_special_tokens: bool = True) -> Encoding:
        """Truncation, post-processor and padding on already encoded sequences."""
        return self._post_process(encoding._copy(), pair._copy() if pair is not None else None, add_special_tokens)

    # -- decoding -----------------------------------------------------------------------------
    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        """The text of `ids` (special tokens left out unless skip_special_tokens=False)."""
        if isinstance(ids, int) or not hasattr(ids, "__iter__"):
            raise TypeError("decode expects a list of ids")
        tokens = []
        added = self._added
        model = self._model
        normalizer = self._normalizer
        for i in ids:
            i = int(i)
            t = added.map_r.get(i)
            if t is None:
                tok = model.id_to_token(i)
            elif t.normalized and normalizer is not None:
                # tokenizers decodes a normalized added token from its normalized content.
                tok = added.normalized_content(t, normalizer)
            else:
                tok = t.content
            if tok is None:
                continue
            if skip_special_tokens and (t.content if t is not None else tok) in added.special_set:
                continue
            tokens.append(tok)
        if self._decoder is not None:
            return self._decoder.decode(tokens)
        return " ".join(tokens)

    def decode_batch(self, sequences, skip_special_tokens: bool = True) -> list[str]:
        return [self.decode(ids, skip_special_tokens) for ids in sequences]

    # -- training (the trainers are anytok.hf.trainers) ---------------------------------------
    def train(self, files, trainer=None):
        """Train the model on text files with `trainer` (default: the model's own trainer)."""
        if isinstance(files, str):
            files = [files]
        trainer = trainer if trainer is not None else self._model.get_trainer()

        def lines():
            for path in files:
                with open(path, encoding="utf-8") as f:
                    yield from f

        trainer._train_tokenizer(self, lines())

    def train_from_iterator(self, iterator, trainer=None, length=None):
        """Train the model on an iterator of str (or of lists of str)."""
        trainer = trainer if trainer is not None else self._model.get_trainer()

        def flat():
            for x in iterator:
                if isinstance(x, str):
                    yield x
                else:
                    yield from x

        trainer._train_tokenizer(self, flat())


# anytok.pipeline's Tokenizer class, set by anytok/hf/__init__.py: the pipeline's exact offsets
# path uses this module, so this module does not import the pipeline's (no import circle).
PIPELINE_TOKENIZER: list = [None]


def _strategy_to_json(s):
    return {"longest_first": "LongestFirst", "only_first": "OnlyFirst", "only_second": "OnlySecond"}[s]


def _strategy_from_json(s):
    return {"LongestFirst": "longest_first", "OnlyFirst": "only_first", "OnlySecond": "only_second"}.get(s, s)

"""`Tokenizer`: a Hugging Face `tokenizer.json` pipeline, giving exactly the ids of `tokenizers`.

```
>>> tok = anytok.pipeline.hf_json.load_tokenizer_json("tokenizer.json")
>>> tok.encode("Hello world")
[9906, 1917]
>>> tok.encode("Hello world", add_special_tokens=True)     # + what the post-processor adds
[128000, 9906, 1917]
>>> tok.decode([128000, 9906, 1917], skip_special_tokens=True)
'Hello world'
```

Stages, as in HF: added tokens are split out of the original text; every other split is
normalized, normalized added tokens are split out of it, the rest is pre-tokenized into pieces,
and the model turns each piece into ids; the post-processor adds special tokens on request.
Truncation and padding (batch shaping in HF) are kept in the configuration but not applied.
"""

from __future__ import annotations

from typing import Iterable, Iterator, Sequence

from ..incremental.generic import AddedTokenScan, IncrementalMixin
from ..errors import UnsupportedTokenizerError
from . import decoders as D
from . import normalizers as N
from . import post_processors as PP
from . import pre_tokenizers as PT
from .added_tokens import AddedToken, AddedVocabulary

__all__ = ["Tokenizer", "CONFIG_FORMAT"]

# to_config()["format"]: how anytok's loader (files.py) recognizes a stored HF pipeline.
CONFIG_FORMAT = "anytok.hf"
_ANYTOK_KEYS = ("format", "name")


def _repair_surrogates(text: str) -> str:
    # Rust strings cannot hold lone surrogates (the `tokenizers` binding refuses them): join
    # surrogate pairs, replace lone surrogates by U+FFFD, as anytok's Encoding does.
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _pack_model(model: dict) -> dict:
    """`to_config`'s model section with its tables as flat lists (see `Tokenizer.to_config`)."""
    model = dict(model)
    vocab = model.get("vocab")
    if isinstance(vocab, dict) and vocab:
        pairs = sorted(vocab.items(), key=lambda kv: kv[1])
        tokens = [t for t, _ in pairs]
        ids = [i for _, i in pairs]
        model["vocab"] = None
        model["anytok_vocab"] = tokens
        if ids != list(range(len(ids))):
            model["anytok_vocab_ids"] = ids
        merges = model.get("merges")
        if merges:
            flat = []
            for a, b in merges:
                flat += (vocab[a], vocab[b])
            model["merges"] = None
            model["anytok_merges"] = flat
    elif isinstance(vocab, list) and vocab:
        model["vocab"] = None
        model["anytok_pieces"] = [p for p, _ in vocab]
        model["anytok_scores"] = [float(s) for _, s in vocab]
    return model


def _unpack_model(model: dict) -> dict:
    """The inverse of `_pack_model` (a model section without anytok's keys is returned as is)."""
    if "anytok_vocab" in model:
        model = dict(model)
        tokens = model.pop("anytok_vocab")
        ids = model.pop("anytok_vocab_ids", None)
        if ids is None:
            ids = range(len(tokens))
        elif len(ids) != len(tokens):
            raise ValueError("anytok_vocab_ids and anytok_vocab differ in length")
        model["vocab"] = dict(zip(tokens, ids))
        # "anytok_merges" stays: BPEMerges takes the ids as they are.
    elif "anytok_pieces" in model:
        model = dict(model)
        pieces = model.pop("anytok_pieces")
        scores = model.pop("anytok_scores", None)
        if scores is None or len(scores) != len(pieces):
            raise ValueError("anytok_scores missing or of a different length than anytok_pieces")
        model["vocab"] = [[p, s] for p, s in zip(pieces, scores)]
    return model


def _model_from_config(cfg: dict):
    from ..models import BPEMerges, WordLevel, WordPiece

    kind = cfg.get("type")
    if kind is None:  # old files: guess from the fields, as the Rust deserializer does
        kind = ("BPE" if "merges" in cfg else "WordPiece" if "continuing_subword_prefix" in cfg
                else "Unigram" if isinstance(cfg.get("vocab"), list) else "WordLevel" if "vocab" in cfg else None)
    if kind == "BPE":
        return BPEMerges.from_config(cfg)
    if kind == "WordPiece":
        return WordPiece.from_config(cfg)
    if kind == "WordLevel":
        return WordLevel.from_config(cfg)
    if kind == "Unigram":  # the Unigram of anytok.sentencepiece, with HF's semantics
        from ..sentencepiece import unigram

        return unigram.from_config(cfg)
    raise UnsupportedTokenizerError(f"model {kind!r} is not supported")


class Tokenizer(IncrementalMixin):
    """A tokenizer.json pipeline: normalizer, pre-tokenizer, model, post-processor, decoder.

    The incremental operations (`appender`, `prepender`, `intervals`, `chunks`,
    `chunk_spans`, `split_by_tokens`, `decode_stream`) come from `anytok.incremental.generic`: a
    pipeline that is a tiktoken-style Encoding (`to_encoding()`) runs them as that Encoding
    does.
    """

    def __init__(self, *, model, normalizer=None, pre_tokenizer=None, post_processor=None, decoder=None,
                 added_tokens: Iterable[AddedToken] = (), truncation=None, padding=None, name: str = "hf"):
        self.model = model
        self.normalizer = normalizer
        self.pre_tokenizer = pre_tokenizer
        self.post_processor = post_processor
        self.decoder = decoder
        self.truncation = truncation
        self.padding = padding
        self.name = name
        self.added = AddedVocabulary(list(added_tokens), normalizer)
        self._special_ids = {t.id for t in self.added.tokens if t.special}
        self._added_scan = AddedTokenScan(t.content for t in self.added.tokens)
        self._as_encoding: tuple | None = None  # (Encoding | None, reason), see to_encoding

    # ----------------------------------------------------------------------------------------
    # Encoding
    # ----------------------------------------------------------------------------------------
    # Set by anytok.load when a tokenizer_config.json comes with the tokenizer (anytok.chat.template).
    chat_templates = None

    def apply_chat_template(self, messages, tools=None, documents=None, add_generation_prompt=False,
                            continue_final_message=False, tokenize=True, **template_kwargs):
        """The chat's prompt ids (or text with tokenize=False) as transformers' apply_chat_template
        gives them with this tokenizer's tokenizer_config.json (see anytok.chat; needs jinja2)."""
        from ..chat.template import apply_chat_template

        return apply_chat_template(self, self.chat_templates, messages, tools, documents,
                                   add_generation_prompt, continue_final_message, tokenize,
                                   **template_kwargs)

    def encode(self, text: str, *, add_special_tokens: bool = False) -> list[int]:
        """Token ids of `text`; with add_special_tokens=True the post-processor's too (HF's
        default is True, anytok's False)."""
        ids: list[int] = []
        for part in self._parts(text):
            ids += part
        if self.post_processor is not None and add_special_tokens:
            ids = self.post_processor.wrap(ids, True)
        return ids

    def encode_with_offsets(self, text: str, *, add_special_tokens: bool = False
                            ) -> tuple[list[int], list[tuple[int, int]]]:
        """`(ids, offsets)`: the ids of `encode(text)` and, for each token, its (start, end)
        code-point span in `text`, exactly `tokenizers`' `Encoding.offsets` for the same call
        (a token the post-processor adds has (0, 0))."""
        if not isinstance(text, str):
            raise TypeError(f"encode_with_offsets expects a str, not {type(text).__name__}")
        path = self._offsets_path()
        if path is not None:
            got = path.encode(text)
            if got is not None:
                ids, offsets = got[0], got[1]
                pp = self.post_processor
                if add_special_tokens and pp is not None and (pp.prefix or pp.suffix):
                    ids = pp.prefix + ids + pp.suffix
                    offsets = [(0, 0)] * len(pp.prefix) + offsets + [(0, 0)] * len(pp.suffix)
                return ids, offsets
        enc = self._offsets_tokenizer().encode(text, add_special_tokens=add_special_tokens)
        return list(enc.ids), [tuple(o) for o in enc.offsets]

    def __getstate__(self):
        # The offsets paths are caches built on first use (and hold local functions).
        state = dict(self.__dict__)
        state.pop("_offsets_path_built", None)
        state.pop("_hf_offsets", None)
        state.pop("_decode_tables", None)
        return state

    def _offsets_components(self) -> tuple:
        # What the offsets paths are built from: a component reassigned since makes them stale.
        return (self.model, self.normalizer, self.pre_tokenizer, self.post_processor, self.added)

    def _offsets_cached(self, name: str):
        """The cached offsets path `name` (None when not built or built from other components;
        the components themselves are kept with it, so identity cannot be a reused id)."""
        got = self.__dict__.get(name)
        if got is None:
            return None
        built_from, value = got
        now = self._offsets_components()
        for a, b in zip(built_from, now):
            if a is not b:
                return None
        return got

    def _offsets_path(self):
        # pipeline/offsets.py's fast path (None: every text takes the general one).  A
        # post-processor that trims offsets (ByteLevel / Roberta trim_offsets) changes them
        # after the fact: the general path does that.
        got = self._offsets_cached("_offsets_path_built")
        if got is None:
            from .offsets import offsets_path

            path = None
            pp = self.post_processor
            if pp is None or '"trim_offsets": true' not in _json_dumps(pp.to_config()):
                hf = self._offsets_tokenizer()
                path = offsets_path(self, hf._normalizer, hf._model)
            got = self.__dict__["_offsets_path_built"] = (self._offsets_components(), path)
        return got[1]

    def _offsets_tokenizer(self):
        # anytok.hf's Tokenizer over this pipeline's configuration (built once per set of
        # components), sharing the model implementation so the tables are not built twice.
        got = self._offsets_cached("_hf_offsets")
        if got is None:
            from ..hf.tokenizer import Tokenizer as _HFTokenizer

            cfg = self.to_tokenizer_json()
            cfg["truncation"] = cfg["padding"] = None
            hf = _HFTokenizer._from_config(cfg)
            hf._model.__dict__["_impl_cache"] = self.model
            got = self.__dict__["_hf_offsets"] = (self._offsets_components(), hf)
        return got[1]

    def _parts(self, text: str, batch: int = 0) -> Iterator[list[int]]:
        """The ids of `text` (no post-processor), in order, as consecutive lists: one per
        added token and per normalized split, or per `batch` pre-tokens when batch > 0."""
        if not text.isascii():
            from ..pretokenize import SURROGATE

            if SURROGATE.search(text):
                text = _repair_surrogates(text)
        norm_split = self.added.normalized.split if self.added.has_normalized else None
        splits = self.added.raw.split(text) if self.added.has_raw else [(text, None)]
        # Once the pipeline is known to be an Encoding (to_encoding() was proven: called, or
        # used by an incremental operation), its text between added tokens goes through it.
        enc = self._as_encoding[0] if self._as_encoding is not None and batch <= 0 else None
        if enc is not None:  # (no normalizer then: normalized added tokens match the text as is)
            for piece, tok_id in splits:
                subs = [(piece, tok_id)] if tok_id is not None or norm_split is None else norm_split(piece)
                for sub, sub_id in subs:
                    if sub_id is not None:
                        yield [sub_id]
                    elif sub:
                        yield enc._encode_chunk(sub)
            return
        normalize = self.normalizer.normalize if self.normalizer is not None else None
        pre = self.pre_tokenizer.split if self.pre_tokenizer is not None else None
        tokenize = self.model.tokenize
        tokenize_many = getattr(self.model, "tokenize_many", None)
        if tokenize_many is None:
            def tokenize_many(pieces: list[str]) -> list[int]:
                out: list[int] = []
                for p in pieces:
                    out += tokenize(p)
                return out
        at = 0
        for piece, tok_id in splits:
            first = at == 0
            at += len(piece)
            if tok_id is not None:
                yield [tok_id]
                continue
            if normalize is not None:
                piece = normalize(piece)
            if not piece:
                continue
            subs = norm_split(piece) if norm_split is not None else [(piece, None)]
            for k, (sub, sub_id) in enumerate(subs):
                if sub_id is not None:
                    yield [sub_id]
                elif not sub:
                    continue
                elif pre is None:
                    yield tokenize(sub)
                else:
                    pieces = pre(sub, first and k == 0)
                    if batch <= 0 or len(pieces) <= batch:
                        yield tokenize_many(pieces)
                    else:
                        for i in range(0, len(pieces), batch):
                            yield tokenize_many(pieces[i:i + batch])

    def encode_batch(self, texts: Sequence[str], *, add_special_tokens: bool = False) -> list[list[int]]:
        return [self.encode(t, add_special_tokens=add_special_tokens) for t in texts]

    def count(self, text: str, *, add_special_tokens: bool = False) -> int:
        """The number of tokens of `text` (len(encode(text)))."""
        return len(self.encode(text, add_special_tokens=add_special_tokens))

    def count_till_limit(self, text: str, limit: int) -> int | None:
        """`count(text)` if it is at most `limit`, else None, as soon as the count passes the
        limit: the model runs on the pre-tokens in order, a few hundred at a time, and stops
        there (normalizing and pre-tokenizing the text is done for all of it)."""
        total = 0
        for part in self._parts(text, batch=256):
            total += len(part)
            if total > limit:
                return None
        return total

    # ----------------------------------------------------------------------------------------
    # The pipeline as an Encoding (pipeline/as_encoding.py)
    # ----------------------------------------------------------------------------------------
    def to_encoding(self):
        """The anytok `Encoding` this pipeline is (Llama 3's tokenizer.json is one), with every
        method of an Encoding: `enc.encode(text, allowed_special="all")` equals `encode(text)`
        (its special tokens are the added tokens), `enc.encode_ordinary(text)` too on text that
        spells no added token.

        Proving it takes about a second for a 128k vocabulary (once per tokenizer).  Raises
        `UnsupportedTokenizerError` saying why when the pipeline is not one.
        """
        enc, reason = self._encoding_or_reason()
        if enc is None:
            raise UnsupportedTokenizerError(f"{self.name}: not a tiktoken-style encoding: {reason}")
        return enc

    def _encoding_or_reason(self) -> tuple:
        if self._as_encoding is None:
            from .as_encoding import encoding_of

            self._as_encoding = encoding_of(self)
        return self._as_encoding

    def _delegate_encoding(self, text: str):
        enc = self._encoding_or_reason()[0]
        if enc is None or self._added_scan.found(text):
            return None
        return enc

    # ----------------------------------------------------------------------------------------
    # Decoding
    # ----------------------------------------------------------------------------------------
    def decode(self, ids: Iterable[int], *, skip_special_tokens: bool = False) -> str:
        """Text of `ids`, through the decoder, as HF's `Tokenizer.decode` (unknown ids skipped)."""
        table = self._decode_table(skip_special_tokens)
        if table is not None:
            ids = ids if isinstance(ids, list) else list(ids)
            if not ids or min(ids) >= 0:
                try:
                    tokens = [table[i] for i in ids]
                except (IndexError, TypeError):  # (an id past the vocabulary, or not an int: below)
                    pass
                else:
                    if None in tokens:
                        tokens = [t for t in tokens if t is not None]
                    return D.decode(self.decoder, tokens)
        added = self.added.id_to_content
        special = self.added.special
        model_token = self.model.id_to_token
        tokens = []
        for i in ids:
            tok = added.get(i)
            if tok is None:
                tok = model_token(i)
                if tok is None:
                    continue
            if skip_special_tokens and tok in special:
                continue
            tokens.append(tok)
        return D.decode(self.decoder, tokens)

    def _decode_table(self, skip_special: bool) -> list[str | None] | None:
        """id -> token string as `decode` takes them (added tokens over the model's; None for
        an unknown id, and for a special one when `skip_special`), built once per model and
        added vocabulary; None for a model without an id table."""
        got = self.__dict__.get("_decode_tables")
        if got is None or got[0] is not self.model or got[1] is not self.added:
            ids = getattr(self.model, "_ids", None)
            tables = None
            if isinstance(ids, list):
                added = self.added.id_to_content
                table = list(ids) + [None] * (max(added, default=-1) + 1 - len(ids))
                for i, content in added.items():
                    if i >= 0:
                        table[i] = content
                skip = list(table)
                for i, content in added.items():
                    if i >= 0 and content in self.added.special:
                        skip[i] = None
                for i, tok in enumerate(ids):
                    if tok is not None and i not in added and tok in self.added.special:
                        skip[i] = None
                tables = (table, skip)
            got = self.__dict__["_decode_tables"] = (self.model, self.added, tables)
        tables = got[2]
        return None if tables is None else tables[skip_special]

    def decode_batch(self, batch: Iterable[Iterable[int]], *, skip_special_tokens: bool = False) -> list[str]:
        return [self.decode(ids, skip_special_tokens=skip_special_tokens) for ids in batch]

    # ----------------------------------------------------------------------------------------
    # Vocabulary
    # ----------------------------------------------------------------------------------------
    def token_to_id(self, token: str) -> int | None:
        i = self.added.content_to_id.get(token)
        return i if i is not None else self.model.token_to_id(token)

    def id_to_token(self, i: int) -> str | None:
        tok = self.added.id_to_content.get(i)
        return tok if tok is not None else self.model.id_to_token(i)

    @property
    def n_vocab(self) -> int:
        """One more than the largest id (model and added tokens)."""
        top = max(self.added.id_to_content, default=-1)
        return max(top + 1, len(self.model._ids))

    @property
    def special_tokens_set(self) -> set[str]:
        return set(self.added.special)

    def is_special_token(self, i: int) -> bool:
        return i in self._special_ids

    def token_env(self):
        """What `anytok.constrain` needs of this tokenizer (`constrain.tokens.TokenEnv`), read
        as llguidance reads a tokenizer.json.  A byte-level BPE pipeline is its `Encoding`'s
        (end-of-sequence: the highest id among the known EOS names).  A byte-fallback one
        (Llama 2, Gemma 3): `<0xXX>` tokens are that byte, other tokens (added ones too) their
        text with `▁` as a space; added tokens that are special or look like `<...>` are
        special; forced text is tokenized by the same pipeline without its prepended `▁` (no
        `Prepend` normalizer, Metaspace `prepend_scheme` "never").  Anything else raises
        `constrain.UnsupportedFeatureError`."""
        import copy

        from ..constrain.errors import UnsupportedFeatureError
        from ..constrain.tokens import EOS_NAMES, TokenEnv, eos_among

        try:
            enc = self.to_encoding()
        except Exception as e:  # the pipeline says why it is not an Encoding
            why = str(e)
        else:
            env = enc.token_env()
            env.n_vocab = self.n_vocab
            env.eos = eos_among(env.special_names, last=True)
            return env
        cfg = self.to_config()
        if "ByteFallback" not in _types(cfg.get("decoder")):
            raise UnsupportedFeatureError(f"tokenizer {self.name!r} (neither byte-level BPE nor byte-fallback)", why)
        specials, eos, names = set(), None, {}
        for a in sorted(cfg.get("added_tokens") or (), key=lambda a: a["id"]):
            content = a["content"]
            if a.get("special") or (content.startswith("<") and content.endswith(">")):
                specials.add(a["id"])
                names[content] = a["id"]
                if content in EOS_NAMES:
                    eos = a["id"]  # the last one, as llguidance
        token_bytes = {}
        n_vocab = self.n_vocab
        for t in range(n_vocab):
            if t in specials:
                continue
            name = self.id_to_token(t)
            if name is None:
                continue
            if len(name) == 6 and name.startswith("<0x") and name.endswith(">"):
                token_bytes[t] = bytes((int(name[3:5], 16),))
            else:
                token_bytes[t] = name.replace("\u2581", " ").encode("utf-8")
        plain = copy.deepcopy(cfg)
        plain["normalizer"] = _drop_prepend(plain.get("normalizer"))
        _never_prepend(plain.get("pre_tokenizer"))
        encoder = type(self).from_config(plain)

        def encode(text: str) -> list:
            return encoder.encode(text, add_special_tokens=False)

        return TokenEnv(token_bytes, n_vocab, eos, names, encode)

    # ----------------------------------------------------------------------------------------
    # Serialization
    # ----------------------------------------------------------------------------------------
    def to_config(self) -> dict:
        """The pipeline as a JSON-serializable dict: HF's tokenizer.json schema + 2 keys.

        ```
        {"format": "anytok.hf", "name": str,            # anytok's keys
         "version": "1.0", "truncation": ..., "padding": ...,
         "added_tokens": [{"id", "content", "single_word", "lstrip", "rstrip", "normalized", "special"}],
         "normalizer": {...} | None, "pre_tokenizer": {...} | None,
         "post_processor": {...} | None, "decoder": {...} | None,
         "model": {"type": "BPE", ..., "vocab": {token: id}, "merges": [[a, b], ...]}
                | {"type": "WordPiece" | "WordLevel", ..., "vocab": {token: id}}
                | {"type": "Unigram", ..., "vocab": [[piece, score], ...]}}
        ```
        The model's big tables are stored as flat lists, which anytok's file format keeps as
        typed columns instead of JSON text (`_pack_model`): a vocab dict becomes
        "anytok_vocab" (tokens in id order, plus "anytok_vocab_ids" if the ids are not
        0..n-1), a merge list "anytok_merges" (the two tokens' ids, flat), a Unigram vocab
        "anytok_pieces" + "anytok_scores".  `Tokenizer.from_config(cfg)` rebuilds this
        tokenizer exactly; `to_tokenizer_json()` is HF's schema, which `tokenizers` loads.
        """
        cfg = self.to_tokenizer_json()
        cfg["model"] = _pack_model(cfg["model"])
        return {"format": CONFIG_FORMAT, "name": self.name, **cfg}

    def to_tokenizer_json(self) -> dict:
        """The pipeline as a tokenizer.json dict (HF's schema only)."""
        return {
            "version": "1.0",
            "truncation": self.truncation,
            "padding": self.padding,
            "added_tokens": [t.to_config() for t in self.added.tokens],
            "normalizer": self.normalizer.to_config() if self.normalizer is not None else None,
            "pre_tokenizer": self.pre_tokenizer.to_config() if self.pre_tokenizer is not None else None,
            "post_processor": self.post_processor.to_config() if self.post_processor is not None else None,
            "decoder": self.decoder.to_config() if self.decoder is not None else None,
            "model": self.model.to_config(),
        }

    @classmethod
    def from_config(cls, cfg: dict, *, name: str | None = None) -> "Tokenizer":
        """Build from a tokenizer.json dict, or from `to_config()`'s output."""
        fmt = cfg.get("format")
        if fmt is not None and fmt != CONFIG_FORMAT:
            raise ValueError(f"not a Hugging Face pipeline config (format {fmt!r})")
        normalizer = N.from_config(cfg.get("normalizer"))
        return cls(
            model=_model_from_config(_unpack_model(cfg["model"])),
            normalizer=normalizer,
            pre_tokenizer=PT.from_config(cfg.get("pre_tokenizer")),
            post_processor=PP.from_config(cfg.get("post_processor")),
            decoder=D.from_config(cfg.get("decoder")),
            added_tokens=[AddedToken.from_config(t) for t in cfg.get("added_tokens") or ()],
            truncation=cfg.get("truncation"),
            padding=cfg.get("padding"),
            name=name or cfg.get("name") or "hf",
        )

    def __repr__(self) -> str:
        return f"<anytok.pipeline.Tokenizer {self.name!r} model={self.model.kind} n_vocab={self.n_vocab}>"


def _json_dumps(obj) -> str:
    import json

    return json.dumps(obj, sort_keys=True)


def _types(node) -> set:
    """Every "type" in a (nested) tokenizer.json component."""
    out = set()
    if isinstance(node, dict):
        if "type" in node:
            out.add(node["type"])
        for v in node.values():
            out |= _types(v)
    elif isinstance(node, list):
        for v in node:
            out |= _types(v)
    return out


def _drop_prepend(norm):
    if not isinstance(norm, dict):
        return norm
    if norm.get("type") == "Prepend":
        return None
    if norm.get("type") == "Sequence":
        norm["normalizers"] = [n for n in (_drop_prepend(x) for x in norm["normalizers"]) if n is not None]
    return norm


def _never_prepend(pre) -> None:
    if not isinstance(pre, dict):
        return
    if pre.get("type") == "Metaspace":
        pre["prepend_scheme"] = "never"
        pre["add_prefix_space"] = False
    for p in pre.get("pretokenizers") or ():
        _never_prepend(p)

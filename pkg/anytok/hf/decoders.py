"""`tokenizers.decoders`: token strings back to text, and `DecodeStream`.

How data flows: a decoder holds its tokenizer.json section; `decode(tokens)` runs
`decode_chain` (the token list through the decoder, and through each decoder of a Sequence in
turn) and joins the result.  The decoding itself is anytok's (`anytok.pipeline.decoders`, the
one the ids path uses), rebuilt after an attribute changes; CTC and custom Python decoders are
here.  `DecodeStream` decodes ids one step at a time as tokenizers does: it keeps the ids of the
last emitted text as a prefix and emits the new text once it no longer ends in an incomplete
character.
"""

from __future__ import annotations

import json

from ..pipeline import decoders as _pd

__all__ = ["Decoder", "BPEDecoder", "ByteFallback", "ByteLevel", "CTC", "Fuse", "Metaspace", "Replace",
           "Sequence", "Strip", "WordPiece", "DecodeStream", "from_config"]


class Decoder:
    """Base class of the decoders."""

    _type = ""

    def __init__(self, *args, **kwargs):
        if type(self) is Decoder:
            raise Exception("Decoder cannot be instantiated directly")

    @staticmethod
    def custom(decoder) -> "Decoder":
        """A decoder from a Python object with `decode_chain(tokens) -> list[str]`."""
        d = _Custom.__new__(_Custom)
        d._obj = decoder
        return d

    def _chain(self, tokens: list[str]) -> list[str]:
        twin = self.__dict__.get("_twin")
        if twin is None:
            twin = self.__dict__["_twin"] = _pd.from_config(self.to_config())
        return twin.decode_chain(tokens)

    def decode(self, tokens) -> str:
        """The text of a list of token strings."""
        tokens = list(tokens)
        if not all(isinstance(t, str) for t in tokens):
            raise TypeError("decode expects a list of str")
        return "".join(self._chain(tokens))

    def decode_chain(self, tokens) -> list[str]:
        return self._chain(list(tokens))

    def to_config(self) -> dict:
        return {"type": self._type, **self._cfg}

    def __getstate__(self):
        return json.dumps(self.to_config(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    def __setstate__(self, state):
        other = from_config(json.loads(state))
        self.__class__ = other.__class__
        self.__dict__.clear()
        self.__dict__.update(other.__dict__)

    def __reduce__(self):
        return (_from_state, (self.__getstate__(),))

    def __repr__(self):
        from .processors import _repr_cfg

        return _repr_cfg(self.to_config())


def _from_state(state):
    return from_config(json.loads(state))


def _attr(name: str, cast=None):
    def get(self):
        return self._cfg[name]

    def set_(self, value):
        self._cfg[name] = cast(value) if cast is not None else value
        self.__dict__.pop("_twin", None)

    return property(get, set_)


class _Custom(Decoder):
    _type = "Custom"

    def _chain(self, tokens):
        return list(self._obj.decode_chain(tokens))

    def to_config(self):
        raise Exception("Custom Decoder cannot be serialized")

    def __reduce__(self):
        raise Exception("Custom Decoder cannot be serialized")


class ByteLevel(Decoder):
    """Byte-level characters back to bytes, then text."""

    _type = "ByteLevel"

    def __init__(self, add_prefix_space=True, trim_offsets=True, use_regex=True, **kwargs):
        self._cfg = {"add_prefix_space": bool(add_prefix_space), "trim_offsets": bool(trim_offsets),
                     "use_regex": bool(use_regex)}


class Replace(Decoder):
    """Replaces a pattern (a str or a Regex) with `content`."""

    _type = "Replace"

    def __init__(self, pattern, content):
        from .normalized import Regex

        if isinstance(pattern, Regex):
            pat = {"Regex": pattern.pattern if hasattr(pattern, "pattern") else pattern._pattern}
        elif isinstance(pattern, str):
            pat = {"String": pattern}
        elif isinstance(pattern, dict):
            pat = pattern
        else:
            raise TypeError("pattern must be a str or a Regex")
        self._cfg = {"pattern": pat, "content": content}


class WordPiece(Decoder):
    """Joins WordPiece tokens (`prefix` marks a continuation), optionally cleaning up spaces."""

    _type = "WordPiece"

    def __init__(self, prefix="##", cleanup=True):
        self._cfg = {"prefix": prefix, "cleanup": bool(cleanup)}

    prefix = _attr("prefix")
    cleanup = _attr("cleanup", bool)


class ByteFallback(Decoder):
    """<0xNN> tokens back to bytes (invalid UTF-8 as U+FFFD)."""

    _type = "ByteFallback"

    def __init__(self):
        self._cfg = {}


class Fuse(Decoder):
    """All tokens into one string."""

    _type = "Fuse"

    def __init__(self):
        self._cfg = {}


class Strip(Decoder):
    """Removes `left` leading and `right` trailing `content` characters from each token."""

    _type = "Strip"

    def __init__(self, content=" ", left=0, right=0):
        self._cfg = {"content": content, "start": int(left), "stop": int(right)}

    content = _attr("content")
    start = _attr("start", int)
    stop = _attr("stop", int)
    left = start
    right = stop


class Metaspace(Decoder):
    """The replacement character ("▁") back to spaces."""

    _type = "Metaspace"

    def __init__(self, replacement="\u2581", prepend_scheme="always", split=True):
        if not isinstance(replacement, str) or len(replacement) != 1:
            raise ValueError("expected a string of length 1")
        if prepend_scheme not in ("always", "never", "first"):
            raise ValueError(f"{prepend_scheme} is an unknown variant, should be one of ['first', 'never', 'always']")
        self._cfg = {"replacement": replacement, "prepend_scheme": prepend_scheme, "split": bool(split)}

    @property
    def replacement(self):
        return self._cfg["replacement"]

    @replacement.setter
    def replacement(self, value):
        if not isinstance(value, str) or len(value) != 1:
            raise ValueError("expected a string of length 1")
        self._cfg["replacement"] = value
        self.__dict__.pop("_twin", None)

    @property
    def prepend_scheme(self):
        return self._cfg["prepend_scheme"]

    @prepend_scheme.setter
    def prepend_scheme(self, value):
        if value not in ("always", "never", "first"):
            raise ValueError(f"{value} is an unknown variant, should be one of ['first', 'never', 'always']")
        self._cfg["prepend_scheme"] = value
        self.__dict__.pop("_twin", None)

    split = _attr("split", bool)


class BPEDecoder(Decoder):
    """Joins BPE tokens, `suffix` marking a word end."""

    _type = "BPEDecoder"

    def __init__(self, suffix="</w>"):
        self._cfg = {"suffix": suffix}

    suffix = _attr("suffix")


class _CTCTwin:
    def __init__(self, pad_token, word_delimiter_token, cleanup):
        self.pad, self.delim, self.cleanup = pad_token, word_delimiter_token, cleanup

    def decode_chain(self, tokens):
        out = []
        prev = object()
        for t in tokens:
            if t != prev:
                prev = t
                if t == self.pad:
                    continue
                s = t
                if self.cleanup:
                    s = _pd.cleanup(s).replace(self.delim, " ")
                out.append(s)
            # a repeat of the previous token is dropped
        return out


class CTC(Decoder):
    """CTC output: repeated tokens collapsed, pad tokens dropped, word delimiters to spaces."""

    _type = "CTC"

    def __init__(self, pad_token="<pad>", word_delimiter_token="|", cleanup=True):
        self._cfg = {"pad_token": pad_token, "word_delimiter_token": word_delimiter_token, "cleanup": bool(cleanup)}

    pad_token = _attr("pad_token")
    word_delimiter_token = _attr("word_delimiter_token")
    cleanup = _attr("cleanup", bool)

    def _chain(self, tokens):
        c = self._cfg
        return _CTCTwin(c["pad_token"], c["word_delimiter_token"], c["cleanup"]).decode_chain(tokens)


class Sequence(Decoder):
    """Several decoders, each fed the previous one's token list."""

    _type = "Sequence"

    def __init__(self, decoders):
        decoders = list(decoders)
        for d in decoders:
            if not isinstance(d, Decoder):
                raise TypeError("Sequence expects a list of Decoder")
        self._decoders = decoders

    def _chain(self, tokens):
        for d in self._decoders:
            tokens = d._chain(tokens)
        return tokens

    def __getitem__(self, i):
        return self._decoders[i]

    def __setitem__(self, i, value):
        self._decoders[i] = value

    def __len__(self):
        return len(self._decoders)

    def to_config(self):
        return {"type": "Sequence", "decoders": [d.to_config() for d in self._decoders]}


_KINDS = {c._type: c for c in (BPEDecoder, ByteFallback, ByteLevel, CTC, Fuse, Metaspace, Replace, Strip, WordPiece)}


def from_config(cfg):
    """A decoder from its tokenizer.json section (None for None)."""
    if cfg is None:
        return None
    kind = cfg.get("type")
    if kind == "Sequence":
        return Sequence([from_config(c) for c in cfg.get("decoders", [])])
    cls = _KINDS.get(kind)
    if cls is None:
        raise Exception(f"unknown decoder type {kind!r}")
    d = cls.__new__(cls)
    defaults = {"ByteLevel": {"add_prefix_space": True, "trim_offsets": True, "use_regex": True},
                "WordPiece": {"prefix": "##", "cleanup": True},
                "Metaspace": {"replacement": "\u2581", "prepend_scheme": "always", "split": True},
                "BPEDecoder": {"suffix": "</w>"},
                "CTC": {"pad_token": "<pad>", "word_delimiter_token": "|", "cleanup": True},
                "Strip": {"content": " ", "start": 0, "stop": 0}}.get(kind, {})
    body = {k: v for k, v in cfg.items() if k != "type"}
    if kind == "Metaspace" and "prepend_scheme" not in body and "add_prefix_space" in body:
        body["prepend_scheme"] = "always" if body.pop("add_prefix_space") else "never"
    d._cfg = {**defaults, **body}
    return d


class DecodeStream:
    """Incremental decoding: `step(tokenizer, id or ids)` returns the new text, or None while
    the text so far ends in an incomplete character (U+FFFD)."""

    def __init__(self, ids=None, skip_special_tokens=False):
        self.skip_special_tokens = bool(skip_special_tokens)
        self._ids = list(ids or [])
        self._prefix: str | None = None if self._ids else ""
        self._prefix_index = 0

    def __copy__(self):
        other = DecodeStream.__new__(DecodeStream)
        other.__dict__.update(self.__dict__)
        other._ids = list(self._ids)
        return other

    def __deepcopy__(self, memo):
        return self.__copy__()

    def __repr__(self):
        return f"DecodeStream(skip_special_tokens={self.skip_special_tokens})"

    def step(self, tokenizer, id):
        """The text the new id(s) add, or None."""
        new = [id] if isinstance(id, int) else list(id)
        skip = self.skip_special_tokens
        if self._prefix is None:
            # Prefill: the given ids were emitted already, unless their text ends in an
            # incomplete character, then they are all kept for the next step.
            text = tokenizer.decode(self._ids, skip_special_tokens=skip)
            self._prefix = "" if text.endswith("\ufffd") else text
        ids = self._ids
        ids.extend(new)
        text = tokenizer.decode(ids, skip_special_tokens=skip)
        prefix = self._prefix
        if len(text) > len(prefix) and not text.endswith("\ufffd"):
            if not text.startswith(prefix):
                raise Exception("Invalid prefix encountered")
            new_text = text[len(prefix):]
            new_index = len(ids) - self._prefix_index
            del ids[:self._prefix_index]
            self._prefix = tokenizer.decode(ids, skip_special_tokens=skip)
            self._prefix_index = new_index
            return new_text
        return None

"""`tokenizers.normalizers` in pure Python: every normalizer, with alignments.

How data flows: `normalizer.normalize(ns)` rewrites a `NormalizedString` in place, keeping for
each normalized character the range of the original it comes from (see `anytok.hf.normalized`
for how each kind of change moves alignments); `normalize_str(s)` is the same on a fresh string,
returning the normalized text.  The Unicode data are anytok's pinned tables
(`anytok.pipeline._unicode`), the same the ids path uses, so both paths agree character for
character.

Interface for the rest of `anytok.hf` (the Tokenizer):

* `from_config(cfg: dict | None) -> Normalizer | None` builds one from its tokenizer.json form;
  `Normalizer.to_config() -> dict` gives that form back (`__getstate__` is its JSON bytes).
* `Normalizer.normalize(ns)`; `Normalizer._normalize(ns)` is the same without argument checks.
* `Normalizer._pipeline` is the equivalent `anytok.pipeline.normalizers` object (text -> text,
  no alignment) for the fast ids path, rebuilt after an attribute changes; None for custom
  Python normalizers.

Attributes are read and set as in tokenizers (`BertNormalizer.lowercase`, `Strip.left`,
`Prepend.prepend`, `Replace.content`, ...); a change is used by the next call.  `Replace.pattern`
can be neither read nor set, as in tokenizers.
"""

from __future__ import annotations

import base64
import re

from ..pipeline import _unicode as U
from ..pipeline import normalizers as _pn
from ..pipeline.pre_tokenizers import bytes_to_unicode_text
from ._component import Component, SequenceMixin, wrap_error
from .normalized import NormalizedString, NormalizedStringRefMut, Regex, _as_normalized

__all__ = ["Normalizer", "BertNormalizer", "ByteLevel", "Lowercase", "NFC", "NFD", "NFKC", "NFKD",
           "Nmt", "Precompiled", "Prepend", "Replace", "Sequence", "Strip", "StripAccents",
           "from_config", "unicode_normalizer_from_str", "NORMALIZERS"]


class Normalizer(Component):
    """Base class for all normalizers."""

    _type = ""

    def __init__(self):
        if type(self) is Normalizer:
            raise TypeError("No constructor defined for Normalizer")

    def to_config(self) -> dict:
        return {"type": self._type}

    def _normalize(self, ns: NormalizedString) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def normalize(self, normalized) -> None:
        """Normalize a NormalizedString in place (keeps track of the alignment)."""
        self._normalize(_as_normalized(normalized))

    def normalize_str(self, sequence: str) -> str:
        """Normalize a str and return the normalized str."""
        if not isinstance(sequence, str):
            raise TypeError("normalize_str expects a str")
        ns = NormalizedString(sequence)
        self._normalize(ns)
        return ns.normalized

    @staticmethod
    def custom(obj) -> "Normalizer":
        """A normalizer calling `obj.normalize(normalized)`."""
        return _Custom(obj)

    @property
    def _pipeline(self):
        return self._pipeline_twin(_pn.from_config)

    @classmethod
    def _from_config_any(cls, cfg):
        return from_config(cfg)


class _Custom(Normalizer):
    _type = "Custom"

    def __init__(self, obj):
        self._obj = obj

    def _normalize(self, ns: NormalizedString) -> None:
        ref = NormalizedStringRefMut(ns)
        try:
            self._obj.normalize(ref)
        except Exception as e:
            raise wrap_error(e) from e
        finally:
            ref._destroy()

    def to_config(self) -> dict:
        raise Exception("Custom Normalizer cannot be serialized")

    def __repr__(self):
        return "Custom()"

    @property
    def _pipeline(self):
        return None


class BertNormalizer(Normalizer):
    """BERT's normalizer: clean text, space out CJK characters, strip accents, lowercase."""

    _type = "BertNormalizer"

    def __init__(self, clean_text: bool = True, handle_chinese_chars: bool = True,
                 strip_accents: bool | None = None, lowercase: bool = True, **_kwargs):
        self.clean_text = bool(clean_text)
        self.handle_chinese_chars = bool(handle_chinese_chars)
        self.strip_accents = None if strip_accents is None else bool(strip_accents)
        self.lowercase = bool(lowercase)

    def to_config(self) -> dict:
        return {"type": "BertNormalizer", "clean_text": self.clean_text,
                "handle_chinese_chars": self.handle_chinese_chars,
                "strip_accents": self.strip_accents, "lowercase": self.lowercase}

    def _normalize(self, ns: NormalizedString) -> None:
        r = _bert_regexes()
        if self.clean_text:
            ns._remove_class(r["drop"])
            ns._normalized = r["space"].sub(" ", ns._normalized)
        if self.handle_chinese_chars and not ns._normalized.isascii():
            ns._expand_runs(r["chinese"], _spaced)
        strip = self.lowercase if self.strip_accents is None else self.strip_accents
        if strip and not ns._normalized.isascii():
            ns.nfd()
            ns._remove_class(r["mn"])
        if self.lowercase:
            ns.lowercase()


def _spaced(c: str) -> str:
    # tokenizers: (" ", 0), (c, 1), (" ", 1): all three take c's alignment.
    return f" {c} "


_CACHE: dict[str, object] = {}


def _bert_regexes() -> dict:
    r = _CACHE.get("bert")
    if r is None:
        p = _pn.BertNormalizer()
        r = _CACHE["bert"] = {"drop": p._drop, "space": p._space, "mn": p._mn,
                              "chinese": re.compile(_pn._CHINESE.pattern[1:-1] + "+")}
    return r


class _Simple(Normalizer):
    def __init__(self, **_kwargs):
        pass


class NFC(_Simple):
    """NFC Unicode normalization."""

    _type = "NFC"

    def _normalize(self, ns):
        ns.nfc()


class NFD(_Simple):
    """NFD Unicode normalization."""

    _type = "NFD"

    def _normalize(self, ns):
        ns.nfd()


class NFKC(_Simple):
    """NFKC Unicode normalization."""

    _type = "NFKC"

    def _normalize(self, ns):
        ns.nfkc()


class NFKD(_Simple):
    """NFKD Unicode normalization."""

    _type = "NFKD"

    def _normalize(self, ns):
        ns.nfkd()


class Lowercase(_Simple):
    """Lowercases every character (Rust's `char::to_lowercase`)."""

    _type = "Lowercase"

    def _normalize(self, ns):
        ns.lowercase()


class StripAccents(_Simple):
    """Removes combining marks (category M, Unicode 9.0)."""

    _type = "StripAccents"

    def _normalize(self, ns):
        if not ns._normalized.isascii():
            rx = _CACHE.get("marks")
            if rx is None:
                rx = _CACHE["marks"] = re.compile(U.char_class("MARKS_9") + "+")
            ns._remove_class(rx)


class ByteLevel(_Simple):
    """Replaces every byte of the UTF-8 text by its GPT-2 byte-level character."""

    _type = "ByteLevel"

    def _normalize(self, ns):
        byte_level_expand(ns)

    @staticmethod
    def alphabet() -> list[str]:
        from ..pipeline.pre_tokenizers import BYTE_TO_CHAR

        return list(BYTE_TO_CHAR)


def byte_level_expand(ns: NormalizedString) -> None:
    """Each character becomes its bytes' byte-level characters, all aligned to it."""
    text = ns._normalized
    out = bytes_to_unicode_text(text)
    if len(out) == len(text):
        ns._normalized = out  # ASCII: one character for one
        return
    align: list = []
    app, ext = align.append, align.extend
    if ns._align is None:
        # Identity alignment: character i comes from input character shift + i.
        i = ns._shift
        for c in text:
            if c < "\x80":
                app((i, i + 1))
            else:
                ext(((i, i + 1),) * (2 if c < "\u0800" else 3 if c < "\U00010000" else 4))
            i += 1
    else:
        for a, c in zip(ns._align, text):
            if c < "\x80":
                app(a)
            else:
                ext((a,) * (2 if c < "\u0800" else 3 if c < "\U00010000" else 4))
    ns._normalized = out
    ns._align = align


_NMT_DROP = re.compile("[\x01-\x08\x0b\x0e-\x1f\x7f\x8f\x9f]+")
_NMT_SPACE = re.compile("[\t\n\x0c\r\u1680\u200b-\u200f\u2028\u2029\u2581\ufeff\ufffd]")


class Nmt(_Simple):
    """Removes some control characters and turns some spaces into " " (as tokenizers' Nmt)."""

    _type = "Nmt"

    def _normalize(self, ns):
        ns._remove_class(_NMT_DROP)
        ns._normalized = _NMT_SPACE.sub(" ", ns._normalized)

    @property
    def _pipeline(self):
        return _NmtTwin()


class _NmtTwin:
    type = "Nmt"

    def normalize(self, text: str) -> str:
        return _NMT_SPACE.sub(" ", _NMT_DROP.sub("", text))

    def to_config(self) -> dict:
        return {"type": "Nmt"}


class Strip(Normalizer):
    """Strips whitespace on the left and/or right."""

    _type = "Strip"

    def __init__(self, left: bool = True, right: bool = True, **_kwargs):
        self.left = bool(left)
        self.right = bool(right)

    def to_config(self) -> dict:
        return {"type": "Strip", "strip_left": self.left, "strip_right": self.right}

    def _normalize(self, ns):
        ns._lrstrip(self.left, self.right)


class Prepend(Normalizer):
    """Prepends a string to a non-empty input."""

    _type = "Prepend"

    def __init__(self, prepend: str = "\u2581", **_kwargs):
        if not isinstance(prepend, str):
            raise TypeError("Prepend expects a str")
        self.prepend = prepend

    def to_config(self) -> dict:
        return {"type": "Prepend", "prepend": self.prepend}

    def _normalize(self, ns):
        if ns._normalized:
            ns.prepend(self.prepend)


class Replace(Normalizer):
    """Replaces every match of a pattern (str or Regex) by a content."""

    _type = "Replace"

    def __init__(self, pattern, content: str, **_kwargs):
        if isinstance(pattern, Regex):
            spec = {"Regex": pattern.pattern}
        elif isinstance(pattern, str):
            spec = {"String": pattern}
        elif isinstance(pattern, dict) and len(pattern) == 1 and next(iter(pattern)) in ("String", "Regex"):
            spec = dict(pattern)
        else:
            raise TypeError("Replace expects a str or a tokenizers.Regex pattern")
        if not isinstance(content, str):
            raise TypeError("Replace expects a str content")
        object.__setattr__(self, "_spec", spec)
        object.__setattr__(self, "_matcher", _matcher(spec))
        self.content = content

    @property
    def pattern(self):
        raise Exception("Cannot get pattern")

    @pattern.setter
    def pattern(self, _value):
        raise Exception("Cannot set pattern")

    def to_config(self) -> dict:
        return {"type": "Replace", "pattern": dict(self._spec), "content": self.content}

    def _normalize(self, ns):
        ns.replace(self._matcher, self.content)


def _matcher(spec: dict):
    ((kind, value),) = spec.items()
    if kind == "Regex":
        return Regex(value)
    if value == "":
        return Regex("")  # tokenizers compiles the escaped literal: "" matches everywhere
    return _Literal(value)


class _Literal:
    """A literal pattern that always matches as a literal (even one character)."""

    __slots__ = ("rx", "literal")

    def __init__(self, s: str):
        self.rx = re.compile(re.escape(s))
        self.literal = s

    def spans(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in self.rx.finditer(text)]


class Precompiled(Normalizer):
    """SentencePiece's precompiled charsmap, applied per grapheme cluster as tokenizers does."""

    _type = "Precompiled"

    def __init__(self, precompiled_charsmap, **_kwargs):
        if isinstance(precompiled_charsmap, str):
            blob = base64.b64decode(precompiled_charsmap)
        else:
            blob = bytes(bytearray(precompiled_charsmap))
        from ..sentencepiece.precompiled import PrecompiledNormalizer

        try:
            twin = PrecompiledNormalizer(blob)
        except Exception as e:
            raise Exception(f"Error while attempting to build Precompiled normalizer: {e}") from None
        object.__setattr__(self, "_blob", blob)
        object.__setattr__(self, "_pre", twin)

    def to_config(self) -> dict:
        return {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(self._blob).decode("ascii")}

    @property
    def _pipeline(self):
        return self._pre

    def _normalize(self, ns):
        precompiled_normalize(self._pre._precompiled, ns)


def precompiled_normalize(pre, ns: NormalizedString) -> None:
    """tokenizers' `Precompiled::normalize` with its (char, change) transformations."""
    from ..sentencepiece.graphemes import grapheme_spans

    text = ns._normalized
    if not text or pre.charsmap is None:
        return
    if pre.normalize_hf(text, grapheme_spans) == text:
        return  # every rule maps to itself here (or none applies): alignments unchanged
    cache: dict[str, str | None] = {}

    def value(s: str):
        v = cache.get(s, 0)
        if v == 0:
            v = cache[s] = pre._shortest(s)
        return v

    trans: list[list] = []

    def replace(old_count: int, new: str) -> None:
        diff = len(new) - old_count
        trans.extend([c, 0] for c in new)
        if diff > 0:
            for t in trans[-diff:]:
                t[1] = 1
        elif diff < 0 and trans:
            trans[-1][1] += diff

    def one(c: str) -> None:
        v = value(c)
        if v is None:
            trans.append([c, 0])
        else:
            replace(1, v)

    pos = 0
    for begin, end in grapheme_spans(text):
        for c in text[pos:begin]:
            one(c)
        cluster = text[begin:end]
        v = value(cluster) if len(cluster.encode("utf-8")) < 6 else None
        if v is not None:
            replace(len(cluster), v)
        else:
            for c in cluster:
                one(c)
        pos = end
    for c in text[pos:]:
        one(c)
    ns.transform([(c, ch) for c, ch in trans], 0)


class Sequence(SequenceMixin, Normalizer):
    """Applies normalizers in order; indexable, items assignable."""

    _type = "Sequence"
    _ITEM_BASE = Normalizer
    _ITEM_NAMES = ("Normalizer", "normalizers")
    _CONFIG_KEY = "normalizers"
    _PIPELINE_SEQUENCE = _pn.Sequence

    def __init__(self, normalizers, **_kwargs):
        self._set_items(normalizers)

    @property
    def normalizers(self) -> list:
        return list(self._items)

    def _normalize(self, ns):
        for n in self._items:
            n._normalize(ns)


_SIMPLE = {"NFC": NFC, "NFD": NFD, "NFKC": NFKC, "NFKD": NFKD, "Lowercase": Lowercase,
           "StripAccents": StripAccents, "ByteLevel": ByteLevel, "Nmt": Nmt}


def from_config(cfg: dict | None) -> Normalizer | None:
    """A normalizer from its tokenizer.json form (None stays None)."""
    if cfg is None:
        return None
    if not isinstance(cfg, dict):
        raise ValueError(f"a normalizer config must be a dict, not {type(cfg).__name__}")
    kind = cfg.get("type")
    if kind in _SIMPLE:
        return _SIMPLE[kind]()
    if kind == "Sequence":
        return Sequence([from_config(c) for c in cfg.get("normalizers", [])])
    if kind == "BertNormalizer":
        return BertNormalizer(cfg.get("clean_text", True), cfg.get("handle_chinese_chars", True),
                              cfg.get("strip_accents"), cfg.get("lowercase", True))
    if kind == "Strip":
        return Strip(cfg.get("strip_left", True), cfg.get("strip_right", True))
    if kind == "Prepend":
        return Prepend(cfg["prepend"])
    if kind == "Replace":
        return Replace(cfg["pattern"], cfg["content"])
    if kind == "Precompiled":
        return Precompiled(cfg.get("precompiled_charsmap") or b"")
    raise ValueError(f"unknown normalizer type {kind!r}")


NORMALIZERS = {"nfc": NFC, "nfd": NFD, "nfkc": NFKC, "nfkd": NFKD}


def unicode_normalizer_from_str(normalizer: str) -> Normalizer:
    if normalizer not in NORMALIZERS:
        raise ValueError("{} is not a known unicode normalizer. Available are {}".format(normalizer, NORMALIZERS.keys()))
    return NORMALIZERS[normalizer]()

"""`tokenizers.pre_tokenizers` in pure Python: every pre-tokenizer, with offsets.

How data flows: `pre_tokenizer.pre_tokenize(pts)` cuts the untokenized splits of a
`PreTokenizedString` into smaller ones (`NormalizedString` slices, which keep their alignment to
the original) and may rewrite them (ByteLevel's byte characters, Metaspace's "▁"), exactly as
tokenizers' Rust pre-tokenizers do; `pre_tokenize_str(s)` returns `[(piece, (start, end))]`
with character offsets into `s`.  The regexes and character classes are the ones of
`anytok.pipeline.pre_tokenizers` (pinned Unicode data), so both paths cut text identically.

Interface for the rest of `anytok.hf` (the Tokenizer):

* `from_config(cfg: dict | None) -> PreTokenizer | None`, `PreTokenizer.to_config() -> dict`.
* `PreTokenizer.pre_tokenize(pts)`; `PreTokenizer._pre_tokenize(pts)` without checks.
* `PreTokenizer._pipeline`: the equivalent `anytok.pipeline.pre_tokenizers` object (pieces
  only) for the fast ids path, rebuilt after an attribute changes; None when there is none
  (custom Python pre-tokenizers, FixedLength).

ByteLevel's `trim_offsets` is only stored here: tokenizers applies it in the post-processor.
"""

from __future__ import annotations

import re

from ..pipeline import _unicode as U
from ..pipeline import pre_tokenizers as _pp
from ._component import Component, SequenceMixin, wrap_error
from .normalized import (NormalizedString, PreTokenizedString, PreTokenizedStringRefMut, Regex,
                         _as_pretokenized, behavior_from_py, behavior_to_py)
from .normalizers import byte_level_expand

__all__ = ["PreTokenizer", "BertPreTokenizer", "ByteLevel", "CharDelimiterSplit", "Digits",
           "FixedLength", "Metaspace", "Punctuation", "Sequence", "Split", "UnicodeScripts",
           "Whitespace", "WhitespaceSplit", "from_config"]


class PreTokenizer(Component):
    """Base class for all pre-tokenizers."""

    _type = ""

    def __init__(self):
        if type(self) is PreTokenizer:
            raise TypeError("No constructor defined for PreTokenizer")

    def to_config(self) -> dict:
        return {"type": self._type}

    def _pre_tokenize(self, pts: PreTokenizedString) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def pre_tokenize(self, pretok) -> None:
        """Pre-tokenize a PreTokenizedString in place."""
        self._pre_tokenize(_as_pretokenized(pretok))

    def pre_tokenize_str(self, sequence: str) -> list[tuple[str, tuple[int, int]]]:
        """Pre-tokenize a str: [(piece, (start, end))], offsets in characters of `sequence`."""
        if not isinstance(sequence, str):
            raise TypeError("pre_tokenize_str expects a str")
        pts = PreTokenizedString(sequence)
        self._pre_tokenize(pts)
        return [(s, o) for s, o, _ in pts.get_splits("original", "char")]

    @staticmethod
    def custom(pretok) -> "PreTokenizer":
        """A pre-tokenizer calling `pretok.pre_tokenize(pretokenized_string)`."""
        return _Custom(pretok)

    @property
    def _pipeline(self):
        return self._pipeline_twin(_pp.from_config)

    @classmethod
    def _from_config_any(cls, cfg):
        return from_config(cfg)


class _Custom(PreTokenizer):
    _type = "Custom"

    def __init__(self, obj):
        self._obj = obj

    def _pre_tokenize(self, pts):
        ref = PreTokenizedStringRefMut(pts)
        try:
            self._obj.pre_tokenize(ref)
        except Exception as e:
            raise wrap_error(e) from e
        finally:
            ref._destroy()

    def to_config(self) -> dict:
        raise Exception("Custom PreTokenizer cannot be serialized")

    def __repr__(self):
        return "Custom()"

    @property
    def _pipeline(self):
        return None


_RX: dict[str, re.Pattern[str]] = {}


def _rx(name: str) -> re.Pattern[str]:
    rx = _RX.get(name)
    if rx is None:
        if name == "ws":
            rx = re.compile(U.char_class("WHITE_SPACE_17"))
        elif name == "punct":
            rx = re.compile(_pp._punct_class())
        elif name == "num":
            rx = re.compile(U.char_class("NUMERIC_17"))
        elif name == "word":
            rx = _pp.Whitespace()._rx
        elif name == "bert":
            rx = _pp.BertPreTokenizer()._rx  # runs of neither space nor punctuation | one punctuation
        elif name == "non-ws":
            rx = re.compile(U.re_class(U.ranges("WHITE_SPACE_17"), negate=True) + "+")
        else:  # pragma: no cover
            raise KeyError(name)
        _RX[name] = rx
    return rx


def _split_all(pts: PreTokenizedString, pattern, behavior: str, invert: bool = False) -> None:
    pts._split_pieces(lambda _i, ns: ns._split(pattern, behavior, invert))


def _keep_matches(pts: PreTokenizedString, rx: re.Pattern[str]) -> None:
    # The pieces are exactly the (non-empty) matches of rx: what a "Removed" split on the
    # complement gives (slicing a slice is slicing the whole, so several such splits in a row
    # can be one).
    def split(_i, ns: NormalizedString):
        return ns._pieces([m.span() for m in rx.finditer(ns._normalized)])

    pts._split_pieces(split)


class ByteLevel(PreTokenizer):
    """Optional prefix space, GPT-2's regex split, then each byte as a byte-level character."""

    _type = "ByteLevel"

    def __init__(self, add_prefix_space: bool = True, use_regex: bool = True, trim_offsets: bool = True, **_kwargs):
        self.add_prefix_space = bool(add_prefix_space)
        self.trim_offsets = bool(trim_offsets)
        self.use_regex = bool(use_regex)

    def to_config(self) -> dict:
        return {"type": "ByteLevel", "add_prefix_space": self.add_prefix_space,
                "trim_offsets": self.trim_offsets, "use_regex": self.use_regex}

    @staticmethod
    def alphabet() -> list[str]:
        """The 256 byte-level characters."""
        return list(_pp.BYTE_TO_CHAR)

    def _pre_tokenize(self, pts):
        regex = _gpt2_regex() if self.use_regex else None
        add = self.add_prefix_space
        if regex is None and not add:
            # The split step would only drop empty splits.
            pts.splits = [sp for sp in pts.splits if sp.tokens is not None or sp.normalized._normalized]
            _byte_level_all(pts)
            return

        def split(_i, ns: NormalizedString):
            if add and not ns._normalized.startswith(" "):
                ns.prepend(" ")
            if regex is None:
                return [ns]
            return ns._split(regex, "Isolated")

        pts._split_pieces(split)
        _byte_level_all(pts)


def _byte_level_all(pts: PreTokenizedString) -> None:
    """byte_level_expand on every untokenized split; ASCII ones converted in one call."""
    todo = [sp.normalized for sp in pts.splits if sp.tokens is None]
    texts = [ns._normalized for ns in todo]
    whole = "".join(texts)
    if whole.isascii():
        # One character for one: alignments stay, each split takes its slice of the result.
        out = _pp.bytes_to_unicode_text(whole)
        pos = 0
        for ns, t in zip(todo, texts):
            end = pos + len(t)
            ns._normalized = out[pos:end]
            pos = end
        return
    for ns in todo:
        byte_level_expand(ns)


def _gpt2_regex() -> Regex:
    r = _RX.get("gpt2")
    if r is None:
        r = _RX["gpt2"] = Regex(_pp.GPT2_PATTERN)  # type: ignore[assignment]
    return r  # type: ignore[return-value]


class Split(PreTokenizer):
    """Splits on a pattern (str or Regex) with a behavior, optionally inverted."""

    _type = "Split"

    def __init__(self, pattern, behavior, invert: bool = False, **_kwargs):
        if isinstance(pattern, Regex):
            spec = {"Regex": pattern.pattern}
        elif isinstance(pattern, str):
            spec = {"String": pattern}
        elif isinstance(pattern, dict) and len(pattern) == 1 and next(iter(pattern)) in ("String", "Regex"):
            spec = dict(pattern)
        else:
            raise TypeError("Split expects a str or a tokenizers.Regex pattern")
        from .normalizers import _matcher

        object.__setattr__(self, "_spec", spec)
        object.__setattr__(self, "_matcher", _matcher(spec))
        self.behavior = behavior
        self.invert = bool(invert)

    def __setattr__(self, name, value):
        if name == "behavior":
            object.__setattr__(self, "_behavior", behavior_from_py(value))
            self.__dict__.pop("_twin", None)
            return
        super().__setattr__(name, value)

    @property  # type: ignore[override]
    def behavior(self) -> str:
        return behavior_to_py(self._behavior)

    @property
    def pattern(self):
        raise Exception("Cannot get pattern")

    @pattern.setter
    def pattern(self, _value):
        raise Exception("Cannot set pattern")

    def __getnewargs__(self):
        return (" ", "removed")

    def to_config(self) -> dict:
        return {"type": "Split", "pattern": dict(self._spec), "behavior": self._behavior, "invert": self.invert}

    def _pre_tokenize(self, pts):
        _split_all(pts, self._matcher, self._behavior, self.invert)


class Whitespace(PreTokenizer):
    """Splits into runs of word characters and runs of other non-space characters."""

    _type = "Whitespace"

    def __init__(self, **_kwargs):
        pass

    def _pre_tokenize(self, pts):
        _keep_matches(pts, _rx("word"))


class WhitespaceSplit(PreTokenizer):
    """Splits on whitespace, removing it."""

    _type = "WhitespaceSplit"

    def __init__(self, **_kwargs):
        pass

    def _pre_tokenize(self, pts):
        _keep_matches(pts, _rx("non-ws"))


class BertPreTokenizer(PreTokenizer):
    """Splits on whitespace (removed) and punctuation (isolated)."""

    _type = "BertPreTokenizer"

    def __init__(self, **_kwargs):
        pass

    def _pre_tokenize(self, pts):
        # A "Removed" split on whitespace, then an "Isolated" one on punctuation, in one pass.
        _keep_matches(pts, _rx("bert"))


class _BehaviorMixin:
    def __setattr__(self, name, value):
        if name == "behavior":
            object.__setattr__(self, "_behavior", behavior_from_py(value))
            self.__dict__.pop("_twin", None)
            return
        super().__setattr__(name, value)  # type: ignore[misc]

    @property
    def behavior(self) -> str:
        return behavior_to_py(self._behavior)  # type: ignore[attr-defined]


class Punctuation(_BehaviorMixin, PreTokenizer):
    """Splits on punctuation characters with a behavior (default "isolated")."""

    _type = "Punctuation"

    def __init__(self, behavior="isolated", **_kwargs):
        self.behavior = behavior

    def to_config(self) -> dict:
        return {"type": "Punctuation", "behavior": self._behavior}

    def _pre_tokenize(self, pts):
        _split_all(pts, _rx("punct"), self._behavior)


class Digits(PreTokenizer):
    """Isolates numeric characters, one by one or in runs."""

    _type = "Digits"

    def __init__(self, individual_digits: bool = False, **_kwargs):
        self.individual_digits = bool(individual_digits)

    def to_config(self) -> dict:
        return {"type": "Digits", "individual_digits": self.individual_digits}

    def _pre_tokenize(self, pts):
        _split_all(pts, _rx("num"), "Isolated" if self.individual_digits else "Contiguous")


def _one_char(value, what: str) -> str:
    if not isinstance(value, str) or len(value) != 1:
        raise ValueError(f"expected a string of length 1 for {what}")
    return value


class CharDelimiterSplit(PreTokenizer):
    """Splits on one character, removing it."""

    _type = "CharDelimiterSplit"

    def __init__(self, delimiter: str, **_kwargs):
        self.delimiter = delimiter

    def __setattr__(self, name, value):
        if name == "delimiter":
            value = _one_char(value, "delimiter")
        super().__setattr__(name, value)

    def __getnewargs__(self):
        return (" ",)

    def to_config(self) -> dict:
        return {"type": "CharDelimiterSplit", "delimiter": self.delimiter}

    def _pre_tokenize(self, pts):
        _split_all(pts, self.delimiter, "Removed")


_SCHEMES = ("first", "never", "always")


class Metaspace(PreTokenizer):
    """Spaces become `replacement`, prepended per `prepend_scheme`, then split before each one."""

    _type = "Metaspace"

    def __init__(self, replacement: str = "\u2581", prepend_scheme: str = "always", split: bool = True, **_kwargs):
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split = bool(split)

    def __setattr__(self, name, value):
        if name == "replacement":
            value = _one_char(value, "replacement")
        elif name == "prepend_scheme":
            if value not in _SCHEMES:
                raise ValueError(f"{value} is an unknown variant, should be one of ['first', 'never', 'always']")
        super().__setattr__(name, value)

    def to_config(self) -> dict:
        return {"type": "Metaspace", "replacement": self.replacement,
                "prepend_scheme": self.prepend_scheme, "split": self.split}

    def _pre_tokenize(self, pts):
        rep = self.replacement
        scheme = self.prepend_scheme
        do_split = self.split

        def split(_i, ns: NormalizedString):
            ns.replace(" ", rep)
            if not ns._normalized.startswith(rep):
                if scheme == "always" or (scheme == "first" and ns._shift == 0):
                    ns.prepend(rep)
            if do_split:
                return ns._split(rep, "MergedWithNext")
            return [ns]

        pts._split_pieces(split)


class FixedLength(PreTokenizer):
    """Cuts into pieces of `length` characters."""

    _type = "FixedLength"

    def __init__(self, length: int = 5, **_kwargs):
        self.length = length

    def __setattr__(self, name, value):
        if name == "length":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise OverflowError("can't convert negative int to unsigned") if isinstance(value, int) and value < 0 \
                    else TypeError("length must be an int")
        super().__setattr__(name, value)

    def to_config(self) -> dict:
        return {"type": "FixedLength", "length": self.length}

    def _pre_tokenize(self, pts):
        n = self.length
        if n == 0:
            raise ValueError("FixedLength: length must be positive")

        def split(_i, ns: NormalizedString):
            size = len(ns._normalized)
            return [ns._slice_normalized(s, min(s + n, size)) for s in range(0, size, n)]

        pts._split_pieces(split)

    @property
    def _pipeline(self):
        return None


class UnicodeScripts(PreTokenizer):
    """Splits where the Unicode script changes, as tokenizers does: Unicode 9.0 scripts with
    Hiragana and Katakana counted as Han; a space (U+0020) or a character of no script goes
    with the piece before it (leading ones are dropped)."""

    _type = "UnicodeScripts"

    def __init__(self, **_kwargs):
        pass

    def _pre_tokenize(self, pts):
        pts._split_pieces(lambda _i, ns: ns._pieces(_pp.script_spans(ns._normalized)))


class Sequence(SequenceMixin, PreTokenizer):
    """Applies pre-tokenizers in order; indexable, items assignable."""

    _type = "Sequence"
    _ITEM_BASE = PreTokenizer
    _ITEM_NAMES = ("PreTokenizer", "pre-tokenizers")
    _CONFIG_KEY = "pretokenizers"
    _PIPELINE_SEQUENCE = _pp.Sequence

    def __init__(self, pre_tokenizers, **_kwargs):
        self._set_items(pre_tokenizers)

    @property
    def pre_tokenizers(self) -> list:
        return list(self._items)

    def _pre_tokenize(self, pts):
        for p in self._items:
            p._pre_tokenize(pts)


def from_config(cfg: dict | None) -> PreTokenizer | None:
    """A pre-tokenizer from its tokenizer.json form (None stays None)."""
    if cfg is None:
        return None
    if not isinstance(cfg, dict):
        raise ValueError(f"a pre-tokenizer config must be a dict, not {type(cfg).__name__}")
    kind = cfg.get("type")
    if kind == "Sequence":
        return Sequence([from_config(c) for c in cfg.get("pretokenizers", [])])
    if kind == "ByteLevel":
        return ByteLevel(cfg.get("add_prefix_space", True), cfg.get("use_regex", True), cfg.get("trim_offsets", True))
    if kind == "Split":
        return Split(cfg["pattern"], cfg.get("behavior", "Isolated"), cfg.get("invert", False))
    if kind == "Metaspace":
        scheme = cfg.get("prepend_scheme", "always")
        if cfg.get("add_prefix_space") is False:
            if scheme != "never" and "prepend_scheme" in cfg:
                raise ValueError("add_prefix_space does not match declared prepend_scheme")
            scheme = "never"
        split = cfg.get("split")
        return Metaspace(cfg.get("replacement", "\u2581"), scheme, True if split is None else split)
    if kind == "Punctuation":
        return Punctuation(cfg.get("behavior", "Isolated"))
    if kind == "Digits":
        return Digits(cfg.get("individual_digits", False))
    if kind == "CharDelimiterSplit":
        return CharDelimiterSplit(cfg["delimiter"])
    if kind == "FixedLength":
        return FixedLength(cfg.get("length", 5))
    simple = {"Whitespace": Whitespace, "WhitespaceSplit": WhitespaceSplit,
              "BertPreTokenizer": BertPreTokenizer, "UnicodeScripts": UnicodeScripts}
    if kind in simple:
        return simple[kind]()
    raise ValueError(f"unknown pre-tokenizer type {kind!r}")

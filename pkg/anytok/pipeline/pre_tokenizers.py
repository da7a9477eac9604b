"""Pre-tokenizers: one split -> pieces, as Hugging Face tokenizers' `pre_tokenizers`.

Each object has `split(text, first) -> list[str]` (non-empty pieces, in order) and
`to_config()`.  `first` tells whether `text` starts the input (only Metaspace's
`prepend_scheme="first"` looks at it; within a Sequence, only the first piece of a split that
was first stays first).  Regexes are Oniguruma's, translated by `anytok.pretokenize`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate, islice

from ..errors import UnsupportedTokenizerError
from . import _unicode as U
from .patterns import BEHAVIORS, Pattern, split_by

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")

__all__ = ["from_config", "bytes_to_unicode_text", "BYTE_TO_CHAR", "CHAR_TO_BYTE"]


def _bytes_to_unicode() -> list[str]:
    keep = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    out = [""] * 256
    n = 0
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + n)
            n += 1
    return out


BYTE_TO_CHAR: list[str] = _bytes_to_unicode()
CHAR_TO_BYTE: dict[str, int] = {c: b for b, c in enumerate(BYTE_TO_CHAR)}
_LATIN1_TO_BYTE_CHAR = {b: c for b, c in enumerate(BYTE_TO_CHAR)}


def bytes_to_unicode_text(text: str) -> str:
    """The GPT-2 byte-level spelling of the UTF-8 bytes of `text`."""
    return text.encode("utf-8", "surrogatepass").decode("latin-1").translate(_LATIN1_TO_BYTE_CHAR)


def spell_pieces(pieces: list[str]) -> list[str]:
    """`bytes_to_unicode_text` of each piece, empty pieces dropped."""
    if len(pieces) < 4:
        return [bytes_to_unicode_text(p) for p in pieces if p]
    # All pieces spelled by one encode and one translate, then cut at their byte lengths (the
    # spelling has a character per byte): a call per piece cost 3x as much.
    joined = "".join(pieces)
    data = joined.encode("utf-8", "surrogatepass")
    spelled = data.decode("latin-1").translate(_LATIN1_TO_BYTE_CHAR)
    if len(data) == len(joined):
        lens = [len(p) for p in pieces]
    else:
        lens = [len(p.encode("utf-8", "surrogatepass")) for p in pieces]
    bounds = list(accumulate(lens, initial=0))
    return [spelled[a:b] for a, b in zip(bounds, islice(bounds, 1, None)) if b > a]


# GPT-2's split pattern, as the ByteLevel pre-tokenizer compiles it (Oniguruma).
GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"


class PreTokenizer:
    type = ""

    def split(self, text: str, first: bool) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def to_config(self) -> dict:
        return {"type": self.type}


class ByteLevel(PreTokenizer):
    """Optional prefix space, optional GPT-2 regex split, then the byte-level spelling."""

    type = "ByteLevel"
    byte_level = True

    def __init__(self, add_prefix_space: bool = True, use_regex: bool = True, trim_offsets: bool = True):
        self.add_prefix_space = bool(add_prefix_space)
        self.use_regex = bool(use_regex)
        self.trim_offsets = bool(trim_offsets)
        self._pattern = Pattern({"Regex": GPT2_PATTERN}, "pre-tokenizer ByteLevel") if use_regex else None

    def split(self, text: str, first: bool) -> list[str]:
        if self.add_prefix_space and not text.startswith(" "):
            text = " " + text
        if self._pattern is None:
            pieces = [text] if text else []
        else:
            pieces = self._pattern.findall(text)
            if pieces is None:
                pieces = split_by(text, self._pattern.spans(text), "Isolated")
        return spell_pieces(pieces)

    def to_config(self) -> dict:
        return {"type": "ByteLevel", "add_prefix_space": self.add_prefix_space,
                "trim_offsets": self.trim_offsets, "use_regex": self.use_regex}


class Split(PreTokenizer):
    type = "Split"

    def __init__(self, pattern, behavior: str, invert: bool = False):
        self.pattern = Pattern(pattern, "pre-tokenizer Split")
        if behavior not in BEHAVIORS:
            raise UnsupportedTokenizerError(f"pre-tokenizer Split: unsupported behavior {behavior!r}")
        self.behavior = behavior
        self.invert = bool(invert)

    def split(self, text: str, first: bool) -> list[str]:
        if self.behavior == "Isolated" and not self.invert:
            pieces = self.pattern.findall(text)
            if pieces is not None:
                return pieces
        return split_by(text, self.pattern.spans(text), self.behavior, self.invert)

    def to_config(self) -> dict:
        return {"type": "Split", "pattern": dict(self.pattern.spec), "behavior": self.behavior,
                "invert": self.invert}


class _ClassSplit(PreTokenizer):
    """Splits on every character of a class, with a behaviour."""

    def __init__(self, cls: str, behavior: str):
        self._rx = re.compile(cls)
        self.behavior = behavior

    def split(self, text: str, first: bool) -> list[str]:
        return split_by(text, [m.span() for m in self._rx.finditer(text)], self.behavior)


class Whitespace(PreTokenizer):
    """Oniguruma's `\\w+|[^\\w\\s]+`, keeping the matches: runs of word characters (Alphabetic,
    marks, decimal digits, connector punctuation, ZWJ/ZWNJ; Unicode 16.0) and runs of other
    non-space characters (White_Space, the same in every Unicode version since 6.3)."""

    type = "Whitespace"

    def __init__(self):
        from .._unicode_tables import WHITE_SPACE

        word = U.ranges("WORD_16")
        other = U.re_class(sorted(word + list(WHITE_SPACE)), negate=True)
        self._rx = re.compile(f"{U.re_class(word)}+|{other}+")
        # What `split` runs: the same classes cut to the BMP, which `re` checks by a bitmap (a
        # class with astral ranges is a list scanned for every character: 5x slower on BMP
        # text).  An astral character is first replaced by a BMP one of its class: "a" if a
        # word character, else "!" (no astral character is White_Space).
        assert all(hi < 0x10000 for _, hi in WHITE_SPACE)
        bmp_word = [(lo, min(hi, 0xFFFF)) for lo, hi in word if lo < 0x10000]
        bmp_other = U.re_class(sorted(bmp_word + list(WHITE_SPACE) + [(0x10000, 0x10FFFF)]), negate=True)
        self._bmp_rx = re.compile(f"{U.re_class(bmp_word)}+|{bmp_other}+")
        # bisect_right(bounds, cp) is odd for an astral word character.
        self._astral_word = [b for lo, hi in word if hi >= 0x10000 for b in (max(lo, 0x10000), hi + 1)]

    def split(self, text: str, first: bool) -> list[str]:
        found = _ASTRAL.findall(text)
        if not found:
            return self._bmp_rx.findall(text)
        bounds = self._astral_word
        proxy = [""] * (2 * len(found) + 1)
        proxy[0::2] = _ASTRAL.split(text)
        proxy[1::2] = ["!a"[bisect_right(bounds, ord(c)) & 1] for c in found]
        return [text[s:e] for s, e in (m.span() for m in self._bmp_rx.finditer("".join(proxy)))]


class WhitespaceSplit(PreTokenizer):
    type = "WhitespaceSplit"

    def __init__(self):
        self._rx = re.compile(U.char_class("WHITE_SPACE_17") + "+")

    def split(self, text: str, first: bool) -> list[str]:
        return [p for p in self._rx.split(text) if p]


def _punct_class() -> str:
    ascii_punct = [(0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)]
    return U.re_class(sorted(ascii_punct + U.ranges("PUNCTUATION_8")))


class BertPreTokenizer(PreTokenizer):
    """Removes White_Space (Unicode 17) and isolates punctuation (ASCII or P of Unicode 8.0)."""

    type = "BertPreTokenizer"

    def __init__(self):
        punct = _punct_class()
        ws = U.char_class("WHITE_SPACE_17")
        other = "[^" + punct[1:-1] + ws[1:-1] + "]"
        self._rx = re.compile(f"{other}+|{punct}")

    def split(self, text: str, first: bool) -> list[str]:
        return self._rx.findall(text)


class Punctuation(_ClassSplit):
    type = "Punctuation"

    def __init__(self, behavior: str = "Isolated"):
        if behavior not in BEHAVIORS:
            raise UnsupportedTokenizerError(f"pre-tokenizer Punctuation: unsupported behavior {behavior!r}")
        super().__init__(_punct_class(), behavior)

    def to_config(self) -> dict:
        return {"type": "Punctuation", "behavior": self.behavior}


class Digits(PreTokenizer):
    """Isolates numeric characters (general category N of Unicode 17.0), one by one or in runs."""

    type = "Digits"

    def __init__(self, individual_digits: bool = False):
        self.individual_digits = bool(individual_digits)
        num = U.char_class("NUMERIC_17")
        other = "[^" + num[1:-1] + "]+"
        self._rx = re.compile(f"{num}|{other}" if individual_digits else f"{num}+|{other}")

    def split(self, text: str, first: bool) -> list[str]:
        return self._rx.findall(text)

    def to_config(self) -> dict:
        return {"type": "Digits", "individual_digits": self.individual_digits}


class CharDelimiterSplit(PreTokenizer):
    type = "CharDelimiterSplit"

    def __init__(self, delimiter: str):
        self.delimiter = delimiter

    def split(self, text: str, first: bool) -> list[str]:
        return [p for p in text.split(self.delimiter) if p]

    def to_config(self) -> dict:
        return {"type": "CharDelimiterSplit", "delimiter": self.delimiter}


class Metaspace(PreTokenizer):
    """Spaces become `replacement`, which is prepended (always / first piece / never) and split on."""

    type = "Metaspace"

    def __init__(self, replacement: str = "\u2581", prepend_scheme: str = "always", split: bool = True):
        if len(replacement) != 1:
            raise UnsupportedTokenizerError(f"pre-tokenizer Metaspace: replacement {replacement!r} is not one character")
        if prepend_scheme not in ("always", "first", "never"):
            raise UnsupportedTokenizerError(f"pre-tokenizer Metaspace: unsupported prepend_scheme {prepend_scheme!r}")
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split_ = bool(split)

    def split(self, text: str, first: bool) -> list[str]:
        text = text.replace(" ", self.replacement)
        if not text.startswith(self.replacement):
            if self.prepend_scheme == "always" or (self.prepend_scheme == "first" and first):
                text = self.replacement + text
        if not self.split_:
            return [text] if text else []
        # split_by(text, <each replacement>, "MergedWithNext"): every replacement starts a
        # piece that runs to the next one; str.split finds them in C.
        r = self.replacement
        parts = text.split(r)
        pieces = [r + p for p in parts]
        if parts[0]:
            pieces[0] = parts[0]
        else:
            del pieces[0]
        return pieces

    def to_config(self) -> dict:
        return {"type": "Metaspace", "replacement": self.replacement,
                "prepend_scheme": self.prepend_scheme, "split": self.split_}


class _ScriptTable:
    """tokenizers' `fixed_script`: the Unicode 9.0 script of a character (`_script_table.py`),
    with Hiragana, Katakana and U+30FC (the prolonged sound mark, Common) counted as Han, and
    U+0020 and characters of no script as "any" (-1)."""

    def __init__(self):
        from ._script_table import NAMES, RANGES

        han = NAMES.index("Han")
        as_han = {han, NAMES.index("Hiragana"), NAMES.index("Katakana")}
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.scripts: list[int] = []
        for item in RANGES.split():
            span, _, k = item.partition(":")
            lo, _, hi = span.partition("-")
            self.starts.append(int(lo, 16))
            self.ends.append(int(hi or lo, 16))
            self.scripts.append(han if int(k) in as_han else int(k))
        self.cache: dict[str, int] = {" ": -1, "\u30fc": han}

    def script(self, c: str) -> int:
        s = self.cache.get(c)
        if s is None:
            from bisect import bisect_right

            cp = ord(c)
            k = bisect_right(self.starts, cp) - 1
            s = self.scripts[k] if k >= 0 and cp <= self.ends[k] else -1
            self.cache[c] = s
        return s


_SCRIPTS: _ScriptTable | None = None


def script_spans(text: str) -> list[tuple[int, int]]:
    """tokenizers' UnicodeScripts cuts: a piece starts at each character whose script is not
    "any" and differs from the last such character's; what comes before the first cut (leading
    "any" characters) is dropped, "any" characters elsewhere stay with the piece before."""
    global _SCRIPTS
    table = _SCRIPTS
    if table is None:
        table = _SCRIPTS = _ScriptTable()
    get = table.cache.get
    script = table.script
    cuts = []
    last = None
    for i, c in enumerate(text):
        s = get(c)
        if s is None:
            s = script(c)
        if s != -1:
            if s != last:
                cuts.append(i)
            last = s
    cuts.append(len(text))
    return list(zip(cuts, cuts[1:]))


class UnicodeScripts(PreTokenizer):
    """Cuts where the Unicode script changes (see `script_spans`)."""

    type = "UnicodeScripts"

    def split(self, text: str, first: bool) -> list[str]:
        return [text[s:e] for s, e in script_spans(text)]


class Sequence(PreTokenizer):
    type = "Sequence"

    def __init__(self, pretokenizers: list[PreTokenizer]):
        self.pretokenizers = list(pretokenizers)
        self.byte_level = bool(self.pretokenizers) and getattr(self.pretokenizers[-1], "byte_level", False)

    def split(self, text: str, first: bool) -> list[str]:
        pieces = [text]
        for stage in self.pretokenizers:
            if type(stage) is ByteLevel and not stage.use_regex and not stage.add_prefix_space:
                # (a byte-level model's last stage: each piece spelled, all at once)
                pieces = spell_pieces(pieces)
                continue
            out: list[str] = []
            for k, piece in enumerate(pieces):
                out += stage.split(piece, first and k == 0)
            pieces = out
        return pieces

    def to_config(self) -> dict:
        return {"type": "Sequence", "pretokenizers": [p.to_config() for p in self.pretokenizers]}


def from_config(cfg: dict | None) -> PreTokenizer | None:
    if cfg is None:
        return None
    kind = cfg.get("type")
    if kind == "Sequence":
        return Sequence([from_config(c) for c in cfg.get("pretokenizers", [])])
    if kind == "ByteLevel":
        return ByteLevel(cfg.get("add_prefix_space", True), cfg.get("use_regex", True), cfg.get("trim_offsets", True))
    if kind == "Split":
        return Split(cfg["pattern"], cfg.get("behavior", "Isolated"), cfg.get("invert", False))
    if kind == "WhitespaceSplit":
        return WhitespaceSplit()
    if kind == "BertPreTokenizer":
        return BertPreTokenizer()
    if kind == "Punctuation":
        return Punctuation(cfg.get("behavior", "Isolated"))
    if kind == "Digits":
        return Digits(cfg.get("individual_digits", False))
    if kind == "CharDelimiterSplit":
        return CharDelimiterSplit(cfg["delimiter"])
    if kind == "Metaspace":
        scheme = cfg.get("prepend_scheme")
        if scheme is None:  # files written before prepend_scheme existed
            scheme = "always" if cfg.get("add_prefix_space", True) else "never"
        return Metaspace(cfg.get("replacement", "\u2581"), scheme, cfg.get("split", True))
    if kind == "Whitespace":
        return Whitespace()
    if kind == "UnicodeScripts":
        return UnicodeScripts()
    raise UnsupportedTokenizerError(f"pre-tokenizer {kind!r} is not supported")

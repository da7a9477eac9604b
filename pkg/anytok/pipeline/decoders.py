"""Decoders: token strings -> text, as Hugging Face tokenizers' `decoders`.

HF decoders work on the list of token strings (`decode_chain`); a Sequence feeds each one's
output list to the next, and the final list is joined.  Each object here has
`decode_chain(tokens) -> list[str]` and `to_config()`.
"""

from __future__ import annotations

from ..errors import UnsupportedTokenizerError
from .patterns import Pattern
from .pre_tokenizers import CHAR_TO_BYTE

__all__ = ["from_config", "decode"]

_HEX = frozenset("0123456789abcdefABCDEF")
# str.translate table: each byte-level character to its byte as a Latin-1 character, every other
# character below U+0100 to U+0100 (so that encoding to Latin-1 fails on it; characters above
# U+00FF fail as they are).
_TO_LATIN1 = {c: 0x100 for c in range(0x100)}
_TO_LATIN1.update({ord(c): b for c, b in CHAR_TO_BYTE.items()})


class Decoder:
    type = ""

    def decode_chain(self, tokens: list[str]) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def to_config(self) -> dict:
        return {"type": self.type}


class ByteLevel(Decoder):
    """Byte-level characters back to bytes (a token that is not all byte-level characters is
    taken as its UTF-8), then one lossy UTF-8 decode of everything."""

    type = "ByteLevel"

    def __init__(self, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True):
        self.add_prefix_space, self.trim_offsets, self.use_regex = add_prefix_space, trim_offsets, use_regex

    def decode_chain(self, tokens: list[str]) -> list[str]:
        # Most often every token is all byte-level characters: one translate to the bytes as
        # Latin-1 characters for the whole list (any other character becomes one that Latin-1
        # cannot encode, and the list goes token by token).
        try:
            data = "".join(tokens).translate(_TO_LATIN1).encode("latin-1")
        except UnicodeEncodeError:
            pass
        else:
            return [data.decode("utf-8", "replace")]
        get = CHAR_TO_BYTE.get
        out = bytearray()
        for tok in tokens:
            bs = [get(c) for c in tok]
            if None in bs:
                out += tok.encode("utf-8", "surrogatepass")
            else:
                out += bytes(bs)  # type: ignore[arg-type]
        return [out.decode("utf-8", "replace")]

    def to_config(self) -> dict:
        return {"type": "ByteLevel", "add_prefix_space": self.add_prefix_space,
                "trim_offsets": self.trim_offsets, "use_regex": self.use_regex}


def _byte_token(tok: str) -> int | None:
    # "<0xNN>" -> NN, parsed as Rust's u8::from_str_radix (which also takes a leading "+").
    if len(tok) != 6 or not tok.startswith("<0x") or not tok.endswith(">"):
        return None
    digits = tok[3:5]
    body = digits[1:] if digits.startswith("+") else digits
    if not body or any(c not in _HEX for c in body):
        return None
    return int(body, 16)


# Every spelling `_byte_token` reads as a byte, with that byte: one dict lookup per token.
_BYTE_TOKENS = {t: b for t in (f"<0x{x}{y}>" for x in _HEX for y in _HEX) if (b := _byte_token(t)) is not None}
_BYTE_TOKENS.update((t, b) for t in (f"<0x+{x}>" for x in _HEX) if (b := _byte_token(t)) is not None)


class ByteFallback(Decoder):
    type = "ByteFallback"

    def decode_chain(self, tokens: list[str]) -> list[str]:
        get = _BYTE_TOKENS.get
        values = [get(tok) for tok in tokens]
        if values.count(None) == len(values):
            return list(tokens)
        out: list[str] = []
        pending = bytearray()
        for tok, b in zip(tokens, values):
            if b is not None:
                pending.append(b)
                continue
            if pending:
                out.extend(_flush(pending))
                pending = bytearray()
            out.append(tok)
        if pending:
            out.extend(_flush(pending))
        return out


def _flush(pending: bytearray) -> list[str]:
    try:
        return [pending.decode("utf-8")]
    except UnicodeDecodeError:
        return ["\ufffd"] * len(pending)


class Fuse(Decoder):
    type = "Fuse"

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return ["".join(tokens)]


class Strip(Decoder):
    type = "Strip"

    def __init__(self, content: str, start: int, stop: int):
        self.content, self.start, self.stop = content, int(start), int(stop)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        c = self.content
        for tok in tokens:
            chars = list(tok)
            start_cut = 0
            for i in range(min(self.start, len(chars))):
                if chars[i] == c:
                    start_cut = i + 1
                else:
                    break
            stop_cut = len(chars)
            for i in range(self.stop):
                index = len(chars) - i - 1
                if index < 0:
                    raise UnsupportedTokenizerError("decoder Strip: stop longer than the token")
                if chars[index] == c:
                    stop_cut = index
                else:
                    break
            if start_cut > stop_cut:
                raise UnsupportedTokenizerError("decoder Strip: start and stop overlap")
            out.append("".join(chars[start_cut:stop_cut]))
        return out

    def to_config(self) -> dict:
        return {"type": "Strip", "content": self.content, "start": self.start, "stop": self.stop}


class Replace(Decoder):
    type = "Replace"

    def __init__(self, pattern, content: str):
        self.pattern = Pattern(pattern, "decoder Replace")
        self.content = content

    def decode_chain(self, tokens: list[str]) -> list[str]:
        literal, content = self.pattern.literal, self.content
        if literal:
            return [t.replace(literal, content) for t in tokens]
        return [self.pattern.replace(t, content) for t in tokens]

    def to_config(self) -> dict:
        return {"type": "Replace", "pattern": dict(self.pattern.spec), "content": self.content}


_CLEANUP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
            (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def cleanup(text: str) -> str:
    for a, b in _CLEANUP:
        text = text.replace(a, b)
    return text


class WordPiece(Decoder):
    type = "WordPiece"

    def __init__(self, prefix: str = "##", cleanup: bool = True):
        self.prefix, self.cleanup = prefix, bool(cleanup)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        for i, tok in enumerate(tokens):
            if i:
                tok = tok.replace(self.prefix, "", 1) if tok.startswith(self.prefix) else " " + tok
            if self.cleanup:
                tok = cleanup(tok)
            out.append(tok)
        return out

    def to_config(self) -> dict:
        return {"type": "WordPiece", "prefix": self.prefix, "cleanup": self.cleanup}


class Metaspace(Decoder):
    type = "Metaspace"

    def __init__(self, replacement: str = "\u2581", prepend_scheme: str = "always", split: bool = True):
        self.replacement, self.prepend_scheme, self.split = replacement, prepend_scheme, split

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        for i, tok in enumerate(tokens):
            if i == 0 and self.prepend_scheme != "never":
                tok = tok.replace(self.replacement, "")
            else:
                tok = tok.replace(self.replacement, " ")
            out.append(tok)
        return out

    def to_config(self) -> dict:
        return {"type": "Metaspace", "replacement": self.replacement,
                "prepend_scheme": self.prepend_scheme, "split": self.split}


class BPEDecoder(Decoder):
    type = "BPEDecoder"

    def __init__(self, suffix: str = "</w>"):
        self.suffix = suffix

    def decode_chain(self, tokens: list[str]) -> list[str]:
        n = len(tokens)
        return [t.replace(self.suffix, "" if i == n - 1 else " ") for i, t in enumerate(tokens)]

    def to_config(self) -> dict:
        return {"type": "BPEDecoder", "suffix": self.suffix}


class Sequence(Decoder):
    type = "Sequence"

    def __init__(self, decoders: list[Decoder]):
        self.decoders = list(decoders)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        for d in self.decoders:
            tokens = d.decode_chain(tokens)
        return tokens

    def to_config(self) -> dict:
        return {"type": "Sequence", "decoders": [d.to_config() for d in self.decoders]}


def decode(decoder: Decoder | None, tokens: list[str]) -> str:
    if decoder is None:
        return " ".join(tokens)
    return "".join(decoder.decode_chain(tokens))


def from_config(cfg: dict | None) -> Decoder | None:
    if cfg is None:
        return None
    kind = cfg.get("type")
    if kind == "Sequence":
        return Sequence([from_config(c) for c in cfg.get("decoders", [])])
    if kind == "ByteLevel":
        return ByteLevel(cfg.get("add_prefix_space", True), cfg.get("trim_offsets", True), cfg.get("use_regex", True))
    if kind == "ByteFallback":
        return ByteFallback()
    if kind == "Fuse":
        return Fuse()
    if kind == "Strip":
        return Strip(cfg["content"], cfg.get("start", 0), cfg.get("stop", 0))
    if kind == "Replace":
        return Replace(cfg["pattern"], cfg["content"])
    if kind == "WordPiece":
        return WordPiece(cfg.get("prefix", "##"), cfg.get("cleanup", True))
    if kind == "Metaspace":
        scheme = cfg.get("prepend_scheme")
        if scheme is None:
            scheme = "always" if cfg.get("add_prefix_space", True) else "never"
        return Metaspace(cfg.get("replacement", "\u2581"), scheme, cfg.get("split", True))
    if kind == "BPEDecoder":
        return BPEDecoder(cfg.get("suffix", "</w>"))
    raise UnsupportedTokenizerError(f"decoder {kind!r} is not supported")

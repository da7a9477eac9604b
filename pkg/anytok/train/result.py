"""A trained vocabulary and its output formats: `tokenizer.json`, `.tiktoken`, `.atok`."""

from __future__ import annotations

import base64
import json
import os

__all__ = ["TrainedBPE", "BYTE_TO_CHAR"]


def _bytes_to_unicode() -> list[str]:
    """GPT-2's byte-level alphabet: printable Latin-1 bytes stand for themselves, the other
    bytes get the characters U+0100, U+0101, ... in byte order."""
    keep = set(range(0x21, 0x7F)) | set(range(0xA1, 0xAD)) | set(range(0xAE, 0x100))
    out = []
    extra = 0
    for b in range(256):
        if b in keep:
            out.append(chr(b))
        else:
            out.append(chr(256 + extra))
            extra += 1
    return out


BYTE_TO_CHAR: list[str] = _bytes_to_unicode()
CHAR_TO_BYTE: dict[str, int] = {c: b for b, c in enumerate(BYTE_TO_CHAR)}


class TrainedBPE:
    """The result of `anytok.train`.

    `merges`: ``[(left id, right id, new id), ...]`` in the order they were learned (for the
    HF style a pair can appear twice when a reused token made it again, as in `tokenizers`).
    `style` "tiktoken": `mergeable_ranks()` and `to_encoding()`; style "hf": `vocab()` (token
    string -> id, as in `tokenizer.json`) and `to_tokenizer()`.  Both: `save(path)`, with the
    format picked by the suffix.
    """

    def __init__(self, *, style: str, pattern: str, special_tokens: list[str], merges: list[tuple[int, int, int]],
                 hf_tokens: list[str] | None, name: str = "trained"):
        self.style = style
        self.pattern = pattern
        self.special_tokens = list(dict.fromkeys(special_tokens))
        self.merges = merges
        self.name = name
        self._hf_tokens = hf_tokens

    def __repr__(self) -> str:
        return f"<TrainedBPE style={self.style!r} n_vocab={self.n_vocab} merges={len(self.merges)}>"

    @property
    def n_vocab(self) -> int:
        if self.style == "hf":
            return len(self._hf_tokens)
        return 256 + len(self.merges) + len(self.special_tokens)

    # --- tiktoken style ---------------------------------------------------------------

    def token_bytes(self) -> list[bytes]:
        """Style "tiktoken": the bytes of each rank (0-255 the bytes, then the merges)."""
        self._need("tiktoken", "token_bytes")
        out = [bytes([b]) for b in range(256)]
        for a, b, z in self.merges:
            out.append(out[a] + out[b])
        return out

    def mergeable_ranks(self) -> dict[bytes, int]:
        """Style "tiktoken": token bytes -> rank, as tiktoken's `mergeable_ranks`.

        Raises ValueError if two ranks have the same bytes (rustbpe can learn the same bytes
        by two different merges; tiktoken cannot hold both)."""
        tokens = self.token_bytes()
        ranks = {t: i for i, t in enumerate(tokens)}
        if len(ranks) != len(tokens):
            seen: dict[bytes, int] = {}
            for i, t in enumerate(tokens):
                if t in seen:
                    raise ValueError(f"ranks {seen[t]} and {i} have the same bytes {t!r}: not a tiktoken vocabulary")
                seen[t] = i
        return ranks

    def special_token_ids(self) -> dict[str, int]:
        if self.style == "hf":
            return {s: self._hf_ids()[s] for s in self.special_tokens}
        first = 256 + len(self.merges)
        return {s: first + i for i, s in enumerate(self.special_tokens)}

    def to_encoding(self, name: str | None = None):
        """Style "tiktoken": an anytok `Encoding` (tiktoken's API) with the trained ranks."""
        self._need("tiktoken", "to_encoding")
        from ..core import Encoding

        return Encoding(name or self.name, pat_str=self.pattern, mergeable_ranks=self.mergeable_ranks(),
                        special_tokens=self.special_token_ids())

    def tiktoken_text(self) -> str:
        """Style "tiktoken": the `.tiktoken` file (base64 token, space, rank; one per line)."""
        ranks = self.mergeable_ranks()
        return "".join(f"{base64.b64encode(t).decode('ascii')} {r}\n" for t, r in ranks.items())

    # --- HF style -------------------------------------------------------------------------

    def _hf_ids(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self._hf_tokens)}

    def vocab(self) -> dict[str, int]:
        """Style "hf": token string (byte-level spelling) -> id, in id order."""
        self._need("hf", "vocab")
        return self._hf_ids()

    def hf_merges(self) -> list[tuple[str, str]]:
        """Style "hf": the merges as `tokenizer.json` lists them (a pair learned twice is
        listed once, at its last rank, as HF's serializer does)."""
        self._need("hf", "hf_merges")
        last = {}
        for rank, (a, b, _) in enumerate(self.merges):
            last[(a, b)] = rank
        toks = self._hf_tokens
        return [(toks[a], toks[b]) for (a, b), _ in sorted(last.items(), key=lambda kv: kv[1])]

    def tokenizer_json(self) -> dict:
        """Style "hf": the `tokenizer.json` document `tokenizers` writes for this training."""
        self._need("hf", "tokenizer_json")
        ids = self._hf_ids()
        added = [{"id": ids[s], "content": s, "single_word": False, "lstrip": False, "rstrip": False,
                  "normalized": False, "special": True} for s in self.special_tokens]
        return {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": added,
            "normalizer": None,
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": self.pattern}, "behavior": "Isolated", "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
            ]},
            "post_processor": None,
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
            "model": {
                "type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                "vocab": ids,
                "merges": [list(m) for m in self.hf_merges()],
            },
        }

    def to_tokenizer(self):
        """Style "hf": an anytok `pipeline.Tokenizer` (the same ids as the `tokenizers` one)."""
        self._need("hf", "to_tokenizer")
        from ..files import load

        return load(self.tokenizer_json_text().encode("utf-8"))

    def tokenizer_json_text(self) -> str:
        return json.dumps(self.tokenizer_json(), ensure_ascii=False)

    # --- files ----------------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write `.json` (a `tokenizer.json`; style "hf"), `.tiktoken` (style "tiktoken") or
        `.atok` (either style), by the suffix of `path`."""
        suffix = os.path.splitext(str(path))[1].lower()
        if suffix == ".json":
            data = self.tokenizer_json_text().encode("utf-8")
        elif suffix == ".tiktoken":
            data = self.tiktoken_text().encode("ascii")
        elif suffix == ".atok":
            from ..files import tokenizer_to_bytes

            tok = self.to_tokenizer() if self.style == "hf" else self.to_encoding()
            data = tokenizer_to_bytes(tok, source=f"anytok.train style={self.style}")
        else:
            raise ValueError(f"{path}: unknown output format {suffix!r} (use .json, .tiktoken or .atok)")
        with open(path, "wb") as f:
            f.write(data)

    def _need(self, style: str, what: str) -> None:
        if self.style != style:
            other = "hf" if style == "tiktoken" else "tiktoken"
            raise ValueError(f"{what}() needs a vocabulary trained with style={style!r}, this one is {other!r}"
                             + (" (save it as .json or .atok)" if other == "hf" else " (save it as .tiktoken or .atok)"))

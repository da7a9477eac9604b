"""Post-processors: the special tokens `encode(..., add_special_tokens=True)` adds.

For a single sequence every HF post-processor reduces to fixed ids before and after the
sequence's ids (`ByteLevel` only adjusts offsets, which anytok does not report).  Each object has
`wrap(ids, add_special_tokens) -> ids`, `added(add_special_tokens) -> int` (how many ids it adds)
and `to_config()`.
"""

from __future__ import annotations

from ..errors import UnsupportedTokenizerError

__all__ = ["from_config"]


class PostProcessor:
    type = ""
    prefix: list[int]
    suffix: list[int]

    def wrap(self, ids: list[int], add_special_tokens: bool) -> list[int]:
        if not add_special_tokens or (not self.prefix and not self.suffix):
            return ids
        return self.prefix + ids + self.suffix

    def added(self, add_special_tokens: bool) -> int:
        return len(self.prefix) + len(self.suffix) if add_special_tokens else 0


class TemplateProcessing(PostProcessor):
    type = "TemplateProcessing"

    def __init__(self, single: list, pair: list, special_tokens: dict):
        self.single, self.pair, self.special_tokens = single, pair, special_tokens
        self.prefix, self.suffix = [], []
        seen_sequence = False
        for item in single:
            if "SpecialToken" in item:
                name = item["SpecialToken"]["id"]
                if name not in special_tokens:
                    raise UnsupportedTokenizerError(f"post-processor TemplateProcessing: missing special token {name!r}")
                (self.suffix if seen_sequence else self.prefix).extend(special_tokens[name]["ids"])
            elif "Sequence" in item:
                if item["Sequence"]["id"] != "A" or seen_sequence:
                    raise UnsupportedTokenizerError("post-processor TemplateProcessing: a single template must hold $A once")
                seen_sequence = True
            else:
                raise UnsupportedTokenizerError(f"post-processor TemplateProcessing: unknown piece {item!r}")
        if not seen_sequence:
            raise UnsupportedTokenizerError("post-processor TemplateProcessing: single template without $A")

    def to_config(self) -> dict:
        return {"type": "TemplateProcessing", "single": self.single, "pair": self.pair,
                "special_tokens": self.special_tokens}


class BertProcessing(PostProcessor):
    type = "BertProcessing"

    def __init__(self, sep: list, cls: list):
        self.sep, self.cls = sep, cls
        self.prefix, self.suffix = [int(cls[1])], [int(sep[1])]

    def to_config(self) -> dict:
        return {"type": "BertProcessing", "sep": list(self.sep), "cls": list(self.cls)}


class RobertaProcessing(BertProcessing):
    type = "RobertaProcessing"

    def __init__(self, sep: list, cls: list, trim_offsets: bool = True, add_prefix_space: bool = True):
        super().__init__(sep, cls)
        self.trim_offsets, self.add_prefix_space = trim_offsets, add_prefix_space

    def to_config(self) -> dict:
        return {"type": "RobertaProcessing", "sep": list(self.sep), "cls": list(self.cls),
                "trim_offsets": self.trim_offsets, "add_prefix_space": self.add_prefix_space}


class ByteLevel(PostProcessor):
    type = "ByteLevel"

    def __init__(self, cfg: dict):
        self.cfg = {k: v for k, v in cfg.items() if k != "type"}
        self.prefix, self.suffix = [], []

    def to_config(self) -> dict:
        return {"type": "ByteLevel", **self.cfg}


class Sequence(PostProcessor):
    type = "Sequence"

    def __init__(self, processors: list[PostProcessor]):
        self.processors = list(processors)
        self.prefix, self.suffix = [], []
        for p in self.processors:
            self.prefix = p.prefix + self.prefix
            self.suffix = self.suffix + p.suffix

    def to_config(self) -> dict:
        return {"type": "Sequence", "processors": [p.to_config() for p in self.processors]}


def from_config(cfg: dict | None) -> PostProcessor | None:
    if cfg is None:
        return None
    kind = cfg.get("type")
    if kind == "TemplateProcessing":
        return TemplateProcessing(cfg.get("single", []), cfg.get("pair", []), cfg.get("special_tokens", {}))
    if kind == "BertProcessing":
        return BertProcessing(cfg["sep"], cfg["cls"])
    if kind == "RobertaProcessing":
        return RobertaProcessing(cfg["sep"], cfg["cls"], cfg.get("trim_offsets", True), cfg.get("add_prefix_space", True))
    if kind == "ByteLevel":
        return ByteLevel(cfg)
    if kind == "Sequence":
        return Sequence([from_config(c) for c in cfg.get("processors", [])])
    raise UnsupportedTokenizerError(f"post-processor {kind!r} is not supported")

"""`tokenizers.processors`: what wraps encoded sequences in special tokens.

How data flows: the Tokenizer hands the Encodings of a sequence (and its pair) to
`_process(encoding, pair, add_special_tokens)`: their sequence and type ids are set, each
processor's `_process_encodings` maps the list of Encodings (BertProcessing and Roberta add
[CLS]/[SEP]-style tokens, ByteLevel trims offsets, TemplateProcessing lays out its template,
Sequence chains them), and the result is merged into one Encoding — as tokenizers'
`PostProcessor::process` does.
"""

from __future__ import annotations

import json

from .encoding import Encoding

__all__ = ["PostProcessor", "BertProcessing", "RobertaProcessing", "ByteLevel", "TemplateProcessing",
           "Sequence", "from_config"]


def _is_ws(c: str) -> bool:
    return c == "\u0120" or c.isspace() or c in "\u0085\u00a0\u1680\u2028\u2029\u202f\u205f\u3000"


def process_offsets(enc: Encoding, add_prefix_space: bool) -> None:
    """Byte-level offset trimming: leading/trailing spaces ('Ġ') leave the token's offsets."""
    offsets = enc._offsets
    for i, tok in enumerate(enc._tokens):
        lead = 0
        for c in tok:
            if not _is_ws(c):
                break
            lead += 1
        trail = 0
        for c in reversed(tok):
            if not _is_ws(c):
                break
            trail += 1
        if lead or trail:
            s, e = offsets[i]
            if lead:
                if (i == 0 or s == 0) and add_prefix_space and lead == 1:
                    lead = 0
                s = min(s + lead, e)
            if trail and e >= trail:
                e = max(e - trail, s)
            offsets[i] = (s, e)


class PostProcessor:
    """Base class of the post-processors."""

    _type = ""

    def __init__(self, *args, **kwargs):
        if type(self) is PostProcessor:
            raise Exception("PostProcessor cannot be instantiated directly")

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        """How many tokens this processor adds to a single sequence or a pair."""
        return 0

    def process(self, encoding: Encoding, pair: Encoding | None = None, add_special_tokens: bool = True) -> Encoding:
        """Post-process `encoding` (and `pair`) into one Encoding."""
        return self._process(encoding._copy(), pair._copy() if pair is not None else None, add_special_tokens)

    def _process(self, encoding, pair, add_special_tokens):
        encs = [encoding] if pair is None else [encoding, pair]
        for i, e in enumerate(encs):
            e.set_sequence_id(i)
            for o in e._overflowing:
                o.set_sequence_id(i)
            e._set_type_ids(i)
        encs = self._process_encodings(encs, add_special_tokens)
        if len(encs) == 1 and not encs[0]._overflowing:
            # (the Tokenizer hands over encodings it owns: merging one into an empty Encoding
            # would only copy it)
            return encs[0]
        return Encoding.merge(encs, False)

    def _process_encodings(self, encs, add_special_tokens):
        return encs

    # serialization -----------------------------------------------------------------------------
    def to_config(self) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def __getstate__(self):
        return json.dumps(self.to_config(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    def __setstate__(self, state):
        other = from_config(json.loads(state))
        self.__class__ = other.__class__
        self.__dict__.clear()
        self.__dict__.update(other.__dict__)

    def __reduce__(self):
        return (_from_state, (self.__getstate__(),))

    def _repr_struct(self):
        from ._repr import Bare, Struct

        cfg = self.to_config()
        fields = []
        for k, v in cfg.items():
            if k == "type":
                continue
            if k in ("sep", "cls"):
                v = tuple(v)
            elif k in ("single", "pair"):
                v = [Struct(kind, [("id", Bare(body["id"]) if kind == "Sequence" else body["id"]),
                                   ("type_id", body["type_id"])])
                     for item in v for kind, body in item.items()]
            elif k == "special_tokens":
                v = {key: Struct("SpecialToken", [("id", t["id"]), ("ids", t["ids"]), ("tokens", t["tokens"])])
                     for key, t in v.items()}
            elif k == "processors":
                v = [p._repr_struct() for p in self._processors]
            fields.append((k, v))
        return Struct(cfg["type"], fields)

    def __repr__(self):
        from ._repr import render

        return render(self._repr_struct())

    def __str__(self):
        from ._repr import render

        return render(self._repr_struct(), 5)


def _repr_value(v):
    if isinstance(v, bool):
        return "True" if v else "False"
    if v is None:
        return "None"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, dict) and "type" in v:
        return _repr_cfg(v)
    if isinstance(v, list):
        return "[" + ", ".join(_repr_value(x) for x in v) + "]"
    if isinstance(v, tuple):
        return "(" + ", ".join(_repr_value(x) for x in v) + ")"
    return repr(v)


def _repr_cfg(cfg):
    return f"{cfg['type']}(" + ", ".join(f"{k}={_repr_value(v)}" for k, v in cfg.items() if k != "type") + ")"


def _from_state(state):
    return from_config(json.loads(state))


def _pair(v, name):
    if isinstance(v, (list, tuple)) and len(v) == 2 and isinstance(v[0], str) and isinstance(v[1], int):
        return (v[0], int(v[1]))
    raise TypeError(f"`{name}` must be a tuple (str, int)")


def _wrap(enc: Encoding, before: list[tuple[str, int]], after: list[tuple[str, int]],
          type_before: int, type_after: int, seq: int, type_inner=None) -> Encoding:
    nb, na = len(before), len(after)
    n = len(enc._ids)
    types = enc._type_ids if type_inner is None else [type_inner] * n
    return Encoding._new(
        [i for _, i in before] + enc._ids + [i for _, i in after],
        [type_before] * nb + types + [type_after] * na,
        [t for t, _ in before] + enc._tokens + [t for t, _ in after],
        [None] * nb + enc._words + [None] * na,
        [(0, 0)] * nb + enc._offsets + [(0, 0)] * na,
        [1] * nb + [0] * n + [1] * na,
        [1] * (nb + n + na),
        [_wrap(o, before, after, type_before, type_after, seq, type_inner) for o in enc._overflowing],
        {seq: (nb, nb + n)},
    )


class BertProcessing(PostProcessor):
    """[CLS] A [SEP] (B [SEP])."""

    _type = "BertProcessing"

    def __init__(self, sep, cls):
        self.sep = _pair(sep, "sep")
        self.cls = _pair(cls, "cls")

    def num_special_tokens_to_add(self, is_pair):
        return 3 if is_pair else 2

    def _process_encodings(self, encs, add_special_tokens):
        if not add_special_tokens:
            return encs
        out = []
        for i, e in enumerate(encs):
            if i == 0:
                out.append(_wrap(e, [self.cls], [self.sep], 0, 0, 0))
            else:
                out.append(_wrap(e, [], [self.sep], 1, 1, i))
        return out

    def to_config(self):
        return {"type": "BertProcessing", "sep": list(self.sep), "cls": list(self.cls)}

    def __getnewargs__(self):
        return (self.sep, self.cls)


class RobertaProcessing(PostProcessor):
    """<s> A </s> (</s> B </s>), every type id 0, byte-level offsets trimmed."""

    _type = "RobertaProcessing"

    def __init__(self, sep, cls, trim_offsets=True, add_prefix_space=True):
        self.sep = _pair(sep, "sep")
        self.cls = _pair(cls, "cls")
        self.trim_offsets = bool(trim_offsets)
        self.add_prefix_space = bool(add_prefix_space)

    def num_special_tokens_to_add(self, is_pair):
        return 4 if is_pair else 2

    def _process_encodings(self, encs, add_special_tokens):
        if self.trim_offsets:
            for e in encs:
                process_offsets(e, self.add_prefix_space)
                for o in e._overflowing:
                    process_offsets(o, self.add_prefix_space)
        for e in encs:
            e._set_type_ids(0)
        if not add_special_tokens:
            return encs
        out = []
        for i, e in enumerate(encs):
            if i == 0:
                out.append(_wrap(e, [self.cls], [self.sep], 0, 0, 0))
            else:
                out.append(_wrap(e, [self.sep], [self.sep], 0, 0, i))
        return out

    def to_config(self):
        return {"type": "RobertaProcessing", "sep": list(self.sep), "cls": list(self.cls),
                "trim_offsets": self.trim_offsets, "add_prefix_space": self.add_prefix_space}


class ByteLevel(PostProcessor):
    """Trims the offsets of byte-level tokens of their spaces ('Ġ')."""

    _type = "ByteLevel"

    def __init__(self, trim_offsets=True, add_prefix_space=True, use_regex=True, **kwargs):
        self.trim_offsets = bool(trim_offsets)
        self.add_prefix_space = bool(add_prefix_space)
        self.use_regex = bool(use_regex)

    def _process_encodings(self, encs, add_special_tokens):
        if self.trim_offsets:
            for e in encs:
                process_offsets(e, self.add_prefix_space)
                for o in e._overflowing:
                    process_offsets(o, self.add_prefix_space)
        for i, e in enumerate(encs):
            e.set_sequence_id(i)
        return encs

    def to_config(self):
        return {"type": "ByteLevel", "add_prefix_space": self.add_prefix_space, "trim_offsets": self.trim_offsets,
                "use_regex": self.use_regex}


def _parse_piece(s: str):
    """('Sequence', 'A'|'B', type_id) or ('SpecialToken', id, type_id) from a template item."""
    if not isinstance(s, str):
        raise TypeError("template items must be str")
    head, sep, tail = s.rpartition(":") if ":" in s else (s, "", "")
    if sep:
        try:
            type_id = int(tail)
            if type_id < 0:
                raise ValueError
        except ValueError:
            raise ValueError(f"Cannot build Piece from string \"{s}\"") from None
    else:
        head, type_id = s, None
    if head.startswith("$"):
        rest = head[1:]
        if rest in ("", "A", "a"):
            return ("Sequence", "A", type_id or 0)
        if rest in ("B", "b"):
            return ("Sequence", "B", type_id or 0)
        if rest.isdigit() and type_id is None:
            return ("Sequence", "A", int(rest))
        raise ValueError(f"Cannot build Piece from string \"{s}\"")
    return ("SpecialToken", head, type_id or 0)


def _template(value, name):
    if value is None:
        return None
    if isinstance(value, str):
        items = value.split()
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        raise TypeError(f"`{name}` must be a str or a list of str")
    return [_parse_piece(x) for x in items]


def _template_to_config(pieces):
    out = []
    for kind, ident, type_id in pieces:
        key = "id"
        out.append({kind: {key: ident, "type_id": type_id}})
    return out


def _template_from_config(items):
    out = []
    for item in items:
        ((kind, body),) = item.items()
        out.append((kind, body["id"], body["type_id"]))
    return out


class TemplateProcessing(PostProcessor):
    """Lays sequences out by a template: "[CLS] $A [SEP]", "$A:0 [SEP]:0 $B:1 [SEP]:1"."""

    _type = "TemplateProcessing"

    def __init__(self, single=None, pair=None, special_tokens=None):
        self._single = _template(single, "single") or [("Sequence", "A", 0)]
        self._pair = _template(pair, "pair")
        if self._pair is None:
            self._pair = [("Sequence", "A", 0), ("Sequence", "B", 1)]
        else:
            ids = {p[1] for p in self._pair if p[0] == "Sequence"}
            if ids != {"A", "B"}:
                raise ValueError("Template for `pair` must use both sequences")
        self._special = {}
        for tok in special_tokens or []:
            if isinstance(tok, dict):
                ident, ids, tokens = tok["id"], list(tok["ids"]), list(tok["tokens"])
                if len(ids) != len(tokens):
                    raise ValueError("SpecialToken: ids and tokens must be of the same length")
            elif isinstance(tok, (list, tuple)) and len(tok) == 2:
                if isinstance(tok[0], str):
                    ident, ids, tokens = tok[0], [int(tok[1])], [tok[0]]
                else:
                    ident, ids, tokens = tok[1], [int(tok[0])], [tok[1]]
            else:
                raise ValueError("Expected Union[Tuple[str, int], Tuple[int, str], dict]")
            self._special[ident] = {"id": ident, "ids": ids, "tokens": tokens}
        missing = [p[1] for p in self._single + self._pair if p[0] == "SpecialToken" and p[1] not in self._special]
        if missing:
            seen = []
            for m in missing:
                if m not in seen:
                    seen.append(m)
            raise ValueError("Cannot build TemplateProcessing: Missing SpecialToken(s) with id(s) `"
                             + ", ".join(seen) + "`")

    def num_special_tokens_to_add(self, is_pair):
        t = self._pair if is_pair else self._single
        return sum(len(self._special[p[1]]["ids"]) for p in t if p[0] == "SpecialToken")

    @property
    def single(self):
        return [f"${p[1]}:{p[2]}" if p[0] == "Sequence" else f"{p[1]}:{p[2]}" for p in self._single]

    @property
    def pair(self):
        return [f"${p[1]}:{p[2]}" if p[0] == "Sequence" else f"{p[1]}:{p[2]}" for p in self._pair]

    @property
    def special_tokens(self):
        return dict(self._special)

    def _process_encodings(self, encs, add_special_tokens):
        template = self._pair if len(encs) == 2 else self._single
        out = []
        for kind, ident, type_id in template:
            if kind == "Sequence":
                i = 0 if ident == "A" else 1
                e = encs[i]
                e._set_type_ids(type_id)
                e.set_sequence_id(i)
                out.append(e._copy())
            elif add_special_tokens:
                tok = self._special[ident]
                n = len(tok["ids"])
                out.append(Encoding._new(list(tok["ids"]), [type_id] * n, list(tok["tokens"]), [None] * n,
                                         [(0, 0)] * n, [1] * n, [1] * n))
        return out

    def to_config(self):
        return {"type": "TemplateProcessing", "single": _template_to_config(self._single),
                "pair": _template_to_config(self._pair), "special_tokens": self._special}

    @classmethod
    def _from_config(cls, cfg):
        p = cls.__new__(cls)
        p._single = _template_from_config(cfg.get("single") or [])
        p._pair = _template_from_config(cfg.get("pair") or [])
        p._special = {k: {"id": v["id"], "ids": list(v["ids"]), "tokens": list(v["tokens"])}
                      for k, v in (cfg.get("special_tokens") or {}).items()}
        return p


class Sequence(PostProcessor):
    """Several post-processors, applied in order."""

    _type = "Sequence"

    def __init__(self, processors):
        procs = list(processors)
        for p in procs:
            if not isinstance(p, PostProcessor):
                raise TypeError("Sequence expects a list of PostProcessor")
        self._processors = procs

    def num_special_tokens_to_add(self, is_pair):
        return sum(p.num_special_tokens_to_add(is_pair) for p in self._processors)

    def _process_encodings(self, encs, add_special_tokens):
        for p in self._processors:
            encs = p._process_encodings(encs, add_special_tokens)
        return encs

    def __getitem__(self, i):
        return self._processors[i]

    def __setitem__(self, i, value):
        if not isinstance(value, PostProcessor):
            raise TypeError("Sequence items must be PostProcessor")
        self._processors[i] = value

    def __len__(self):
        return len(self._processors)

    def to_config(self):
        return {"type": "Sequence", "processors": [p.to_config() for p in self._processors]}


def from_config(cfg):
    """A post-processor from its tokenizer.json section (None for None)."""
    if cfg is None:
        return None
    kind = cfg.get("type")
    if kind == "BertProcessing":
        return BertProcessing(tuple(cfg["sep"]), tuple(cfg["cls"]))
    if kind == "RobertaProcessing":
        return RobertaProcessing(tuple(cfg["sep"]), tuple(cfg["cls"]), cfg.get("trim_offsets", True),
                                 cfg.get("add_prefix_space", True))
    if kind == "ByteLevel":
        return ByteLevel(cfg.get("trim_offsets", True), cfg.get("add_prefix_space", True), cfg.get("use_regex", True))
    if kind == "TemplateProcessing":
        return TemplateProcessing._from_config(cfg)
    if kind == "Sequence":
        return Sequence([from_config(c) for c in cfg.get("processors", [])])
    raise Exception(f"unknown post-processor type {kind!r}")

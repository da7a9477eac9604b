"""tokenizer.json's pretty text (`Tokenizer.to_str(pretty=True)`, `save`) without json's
pure-Python indenting encoder.

Data flow: a JSON-ready value (dicts with str keys, lists, str, int, float, bool, None) ->
`dumps` walks its containers in Python; a container of leaves only (a vocabulary, a merge list,
a Unigram vocabulary's [piece, score] lists) goes whole through json's C encoder, whose
separators can hold the newline and indentation of its level -> the text `json.dumps(value,
ensure_ascii=False, indent=2)` gives, which is also what tokenizers' `to_str(pretty=True)`
writes (serde_json's pretty printer has the same layout: two spaces a level, ": " after keys,
empty containers as [] and {}).

Why: with `indent`, json.dumps leaves its C encoder for a Python generator per value; for a
vocabulary of 128k entries and 280k merges that was seconds, most of what transformers'
`save_pretrained` spends on a tokenizer.
"""

from __future__ import annotations

import json
from itertools import chain
from json.encoder import encode_basestring as _str  # the C encoder where CPython has one

__all__ = ["dumps"]

_INDENT = "  "
_INF = float("inf")


def _float(x: float) -> str:
    # As json.dumps (allow_nan=True): float.__repr__ of finite values.
    if x != x:
        return "NaN"
    if x == _INF:
        return "Infinity"
    if x == -_INF:
        return "-Infinity"
    return float.__repr__(x)


def _leaf(x) -> str | None:
    """The JSON text of a leaf value, None for a container (or anything json would refuse)."""
    if isinstance(x, str):
        return _str(x)
    if x is None:
        return "null"
    if x is True:
        return "true"
    if x is False:
        return "false"
    if isinstance(x, int):
        return int.__repr__(x)
    if isinstance(x, float):
        return _float(x)
    return None


def _flat(values) -> bool:
    """Whether `values` holds no container."""
    return not any(issubclass(k, (dict, list, tuple)) for k in set(map(type, values)))


def dumps(value) -> str:
    """`json.dumps(value, ensure_ascii=False, indent=2)`, the same text, faster."""
    parts: list[str] = []
    _write(value, "\n", parts)
    return "".join(parts)


def _write(value, nl: str, out: list[str]) -> None:
    # nl: a newline and the indentation of the line `value` starts on.
    leaf = _leaf(value)
    if leaf is not None:
        out.append(leaf)
        return
    inner = nl + _INDENT
    sep = "," + inner
    if isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        if set(map(type, value)) - {str}:
            # Keys json would convert (numbers, bool, None): its own encoder, indented to here.
            out.append(json.dumps(value, ensure_ascii=False, indent=2).replace("\n", nl))
            return
        if _flat(value.values()):
            # json's C encoder, which takes any separators (not an indent): only the braces'
            # own lines are left to add.
            out += "{", inner, json.dumps(value, ensure_ascii=False, separators=(sep, ": "))[1:-1], nl, "}"
            return
        keys = list(map(_str, value))
        out += "{", inner
        for i, (k, v) in enumerate(zip(keys, value.values())):
            if i:
                out.append(sep)
            out += k, ": "
            _write(v, inner, out)
        out += nl, "}"
        return
    if isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        if _flat(value):
            out += "[", inner, json.dumps(value, ensure_ascii=False, separators=(sep, ": "))[1:-1], nl, "]"
            return
        if set(map(type, value)) <= {list, tuple} and 0 not in set(map(len, value)) \
                and _flat(chain.from_iterable(value)):
            # Lists of leaves (merges, a Unigram vocabulary's [piece, score]) by the C encoder
            # with a raw newline as the separator: no encoded leaf holds one, so each newline is
            # a separator, one between two lists where "]" precedes it.
            deeper = inner + _INDENT
            text = json.dumps(value, ensure_ascii=False, separators=("\n", ":"))[2:-2]
            text = text.replace("]\n[", "\0").replace("\n", "," + deeper)
            text = text.replace("\0", inner + "]," + inner + "[" + deeper)
            out += "[", inner, "[", deeper, text, inner, "]", nl, "]"
            return
        out += "[", inner
        for i, v in enumerate(value):
            if i:
                out.append(sep)
            _write(v, inner, out)
        out += nl, "]"
        return
    # Not JSON-ready: json's own error.
    out.append(json.dumps(value, ensure_ascii=False, indent=2).replace("\n", nl))

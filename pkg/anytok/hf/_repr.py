"""tokenizers' `repr`/`str` of Rust values (its serde-based printer): structs as
`Name(field=value, ...)`, maps as `{"key":value, ...}`, sequences as `[...]`, tuples as `(...)`,
unit enum variants bare; `str` shows at most 5 items of a map or sequence, then `...`."""

from __future__ import annotations

__all__ = ["Struct", "Bare", "render"]


class Struct:
    __slots__ = ("name", "fields")

    def __init__(self, name: str, fields: list):
        self.name = name
        self.fields = fields


class Bare(str):
    """A unit enum variant, printed without quotes."""


def _num(v: float) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return repr(v)


def render(v, limit: int | None = None) -> str:
    if isinstance(v, Struct):
        return f"{v.name}(" + ", ".join(f"{k}={render(x, limit)}" for k, x in v.fields) + ")"
    if isinstance(v, Bare):
        return str(v)
    if v is None:
        return "None"
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, str):
        return '"' + v + '"'
    if isinstance(v, (int, float)):
        return _num(v)
    if isinstance(v, dict):
        items = list(v.items())
        parts = [f"{render(k, limit)}:{render(x, limit)}" for k, x in (items[:limit] if limit else items)]
        if limit and len(items) > limit:
            parts.append("...")
        return "{" + ", ".join(parts) + "}"
    if isinstance(v, tuple):
        return "(" + ", ".join(render(x, limit) for x in v) + ")"
    if isinstance(v, list):
        parts = [render(x, limit) for x in (v[:limit] if limit else v)]
        if limit and len(v) > limit:
            parts.append("...")
        return "[" + ", ".join(parts) + "]"
    return str(v)

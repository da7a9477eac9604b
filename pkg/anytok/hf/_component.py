"""What normalizers and pre-tokenizers of `anytok.hf` share: the JSON config as state (pickling,
`__getstate__`/`__setstate__`, tokenizers' `repr`), a cached ids-path twin from
`anytok.pipeline`, the wrapping of custom Python components, and `Sequence`'s list behaviour
(`SequenceMixin`)."""

from __future__ import annotations

import json

__all__ = ["Component", "SequenceMixin", "dumps_config", "repr_config"]

# Config keys whose values tokenizers prints bare (enums), not quoted.
_ENUM_KEYS = {"behavior", "prepend_scheme"}


def dumps_config(cfg) -> bytes:
    """tokenizers' serde_json form: compact, non-ASCII kept."""
    return json.dumps(cfg, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _repr_value(key: str, value) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if value is None:
        return "None"
    if isinstance(value, str):
        return value if key in _ENUM_KEYS else f'"{value}"'
    if isinstance(value, dict):
        if "type" in value:
            return repr_config(value)
        if len(value) == 1:
            ((k, v),) = value.items()
            return f'{k}("{v}")' if isinstance(v, str) else f"{k}({v})"
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_repr_value(key, v) for v in value) + "]"
    return str(value)


def repr_config(cfg: dict) -> str:
    """tokenizers' `repr` of a component: `Type(field=value, ...)`."""
    fields = ", ".join(f"{k}={_repr_value(k, v)}" for k, v in cfg.items() if k != "type")
    return f"{cfg.get('type', '')}({fields})"


class Component:
    """Base of normalizers and pre-tokenizers: state is the tokenizer.json config."""

    _KIND = "component"

    def to_config(self) -> dict:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def __getstate__(self) -> bytes:
        return dumps_config(self.to_config())

    def __setstate__(self, state) -> None:
        if isinstance(state, (bytes, bytearray)):
            state = state.decode("utf-8")
        cfg = json.loads(state) if isinstance(state, str) else state
        built = type(self)._from_config_any(cfg)
        self.__class__ = built.__class__
        self.__dict__.clear()
        self.__dict__.update(built.__dict__)

    def __reduce__(self):
        return (type(self)._from_state, (self.__getstate__(),))

    @classmethod
    def _from_state(cls, state):
        if isinstance(state, (bytes, bytearray)):
            state = state.decode("utf-8")
        return cls._from_config_any(json.loads(state))

    @classmethod
    def _from_config_any(cls, cfg):  # pragma: no cover - set by the modules
        raise NotImplementedError

    def __repr__(self) -> str:
        return repr_config(self.to_config())

    __str__ = __repr__

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if not name.startswith("_"):
            # A settable attribute changed: the cached ids-path twin is stale.
            self.__dict__.pop("_twin", None)

    def _pipeline_twin(self, build):
        twin = self.__dict__.get("_twin")
        if twin is None:
            try:
                twin = build(self.to_config())
            except Exception:
                twin = False
            self.__dict__["_twin"] = twin
        return twin or None


class SequenceMixin:
    """normalizers.Sequence and pre_tokenizers.Sequence: a list of components of `_ITEM_BASE`,
    indexable and assignable as tokenizers' (negative indexes refused as Rust's usize refuses
    them), stored under `_CONFIG_KEY` in the JSON form, whose ids-path twin is
    `_PIPELINE_SEQUENCE` over the items' twins (None when an item has none)."""

    _ITEM_BASE: type = object
    _ITEM_NAMES = ("Component", "components")  # (in "a list of X", in "items must be X")
    _CONFIG_KEY = ""
    _PIPELINE_SEQUENCE = None

    def _set_items(self, items) -> None:
        items = list(items)
        for item in items:
            if not isinstance(item, self._ITEM_BASE):
                raise TypeError(f"Sequence expects a list of {self._ITEM_NAMES[0]}")
        object.__setattr__(self, "_items", items)

    def __len__(self) -> int:
        return len(self._items)

    def _check_index(self, index: int) -> None:
        if index < 0:
            raise OverflowError("can't convert negative int to unsigned")
        if index >= len(self._items):
            raise IndexError("Index not found")

    def __getitem__(self, index: int):
        self._check_index(index)
        return self._items[index]

    def __setitem__(self, index: int, value) -> None:
        if not isinstance(value, self._ITEM_BASE):
            raise TypeError(f"Sequence items must be {self._ITEM_NAMES[1]}")
        self._check_index(index)
        self._items[index] = value
        self.__dict__.pop("_twin", None)

    def __getnewargs__(self):
        return ([],)

    def to_config(self) -> dict:
        return {"type": "Sequence", self._CONFIG_KEY: [item.to_config() for item in self._items]}

    @property
    def _pipeline(self):
        # Items can be changed in place (attributes of an item): rebuilt every time it is asked.
        try:
            parts = [item._pipeline for item in self._items]
        except Exception:
            return None
        if any(p is None for p in parts):
            return None
        return self._PIPELINE_SEQUENCE(parts)


def wrap_error(e: BaseException) -> Exception:
    """A Python error raised inside a custom component, as tokenizers reports it."""
    return Exception(f"{type(e).__name__}: {e}")

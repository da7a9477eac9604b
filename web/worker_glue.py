"""anytok's side of the Web Worker (web/worker.js): anytok's public API, keyed by encoding.

The worker imports this module once and calls its functions with values Pyodide converted from
JavaScript: `str` for strings, numbers for numbers, and JsProxy objects for arrays and
`Uint8Array`s, which `_py` turns into Python values.  Ids go back as `array('i')`, which the
worker reads as one Int32Array instead of converting a list element by element.

It knows nothing of the browser beyond that, and nothing of anytok beyond its public API.
"""

from __future__ import annotations

from array import array

import anytok
from anytok.registry import encoding_from_bytes

_encodings: dict[str, anytok.Encoding] = {}

# Methods that only some versions of anytok have; the shim offers those this one has.
OPTIONAL_METHODS = ("count_till_limit", "chunks", "split_by_tokens")


def _py(value):
    """A Python value for a JsProxy (Array, Uint8Array, ...); other values as they are."""
    if hasattr(value, "to_py"):
        return value.to_py()
    return value


def _ints(value) -> list[int]:
    if hasattr(value, "to_memoryview"):  # an Int32Array
        return value.to_memoryview().tolist()
    return list(_py(value))


def _bytes(value) -> bytes:
    if hasattr(value, "to_bytes"):
        return value.to_bytes()
    return bytes(value)


def _special(value):
    """"all", or a set of special token texts, from the JS option."""
    value = _py(value)
    if value is None:
        return None
    return value if value == "all" else set(value)


def _specials_kwargs(allowed, disallowed) -> dict:
    kwargs = {}
    if (allowed := _special(allowed)) is not None:
        kwargs["allowed_special"] = allowed
    if (disallowed := _special(disallowed)) is not None:
        kwargs["disallowed_special"] = disallowed
    return kwargs


def runtime() -> dict:
    import sys

    enc = anytok.Encoding
    return {
        "anytok": anytok.__version__,
        "python": sys.version.split()[0],
        "methods": [m for m in OPTIONAL_METHODS if hasattr(enc, m)],
    }


def load(key: str, data, what: str, expected_name) -> dict:
    """Build the encoding from the bytes of an .atok file; `key` names it from now on."""
    enc = encoding_from_bytes(_bytes(data), what)
    if expected_name is not None and enc.name != expected_name:
        raise anytok.VocabFormatError(f"{what}: holds encoding {enc.name!r}, not {expected_name!r}")
    _encodings[key] = enc
    return info(key)


def loaded(key: str) -> bool:
    return key in _encodings


def _enc(key: str) -> anytok.Encoding:
    try:
        return _encodings[key]
    except KeyError:
        raise ValueError(f"encoding {key!r} is not loaded in this worker") from None


def info(key: str) -> dict:
    enc = _enc(key)
    return {
        "name": enc.name,
        "nVocab": enc.n_vocab,
        "maxTokenValue": enc.max_token_value,
        "specialTokens": sorted(enc.special_tokens_set),
    }


def encode(key: str, text: str, allowed, disallowed) -> array:
    return array("i", _enc(key).encode(text, **_specials_kwargs(allowed, disallowed)))


def count(key: str, text: str, allowed, disallowed) -> int:
    return _enc(key).count(text, **_specials_kwargs(allowed, disallowed))


def count_batch(key: str, texts, allowed, disallowed) -> array:
    enc, kwargs = _enc(key), _specials_kwargs(allowed, disallowed)
    return array("i", [enc.count(text, **kwargs) for text in _py(texts)])


def tokenize(key: str, text: str, allowed, disallowed) -> array:
    """ids and the byte length of each token, interleaved: id0, len0, id1, len1, ..."""
    enc = _enc(key)
    ids = enc.encode(text, **_specials_kwargs(allowed, disallowed))
    out = array("i", bytes(8 * len(ids)))
    out[0::2] = array("i", ids)
    out[1::2] = array("i", map(len, enc.decode_tokens_bytes(ids)))
    return out


def decode(key: str, ids, errors: str) -> str:
    return _enc(key).decode(_ints(ids), errors=errors)


def count_till_limit(key: str, text: str, limit: int):
    return _enc(key).count_till_limit(text, limit)


def chunks(key: str, text: str, max_tokens: int, overlap: int) -> list[str]:
    return _enc(key).chunks(text, max_tokens, overlap=overlap)


def split_by_tokens(key: str, text: str, max_tokens: int) -> list[str]:
    return list(_enc(key).split_by_tokens(text, max_tokens))

"""`x-guidance` options (llguidance's JsonCompileOptions), checked and parsed."""

from __future__ import annotations

from .. import regex_syntax as R
from ..errors import ConstraintError, UnsupportedFeatureError

# Bytes a separator or whitespace pattern may match: ASCII outside every JSON lexeme's own
# bytes (letters, digits, quotes, brackets, signs, the point), so that llguidance's greedy lexer
# and this module's expressions split a text into the same lexemes.
_SEP_BYTES = frozenset(range(0x80)) - frozenset(b'"{}[]+-.\\') - frozenset(range(0x30, 0x3A)) \
    - frozenset(range(0x41, 0x5B)) - frozenset(range(0x61, 0x7B))
_WS_BYTES = _SEP_BYTES - frozenset(b",:")
_OPTIONS = ("item_separator", "key_separator", "whitespace_flexible", "whitespace_pattern", "coerce_one_of",
            "lenient", "json_allowed_escapes", "json_allow_general_unicode_escapes")


def _tree_bytes(node) -> set:
    """The code points a regex_syntax tree can match (as a set; None past ASCII)."""
    kind = node[0]
    if kind == "set":
        out = set()
        for lo, hi in node[1]:
            if hi >= 0x80:
                return None
            out.update(range(lo, hi + 1))
        return out
    if kind in ("cat", "alt"):
        out = set()
        for n in node[1]:
            b = _tree_bytes(n)
            if b is None:
                return None
            out |= b
        return out
    if kind == "rep":
        return _tree_bytes(node[1]) if node[3] != 0 else set()
    return set()


def _literal_text(node):
    """The text of a tree that matches exactly one string, else None."""
    if node[0] == "set" and len(node[1]) == 1 and node[1][0][0] == node[1][0][1]:
        return chr(node[1][0][0])
    if node[0] == "cat":
        parts = [_literal_text(n) for n in node[1]]
        return None if None in parts else "".join(parts)
    if node[0] == "empty":
        return ""
    return None


class JsonOptions:
    """llguidance's `x-guidance` options (JsonCompileOptions), checked and parsed: separators
    and the whitespace pattern are regexes (llguidance 1.9.1 compiles them as lexemes)."""

    def __init__(self, options: dict | None = None):
        options = {} if options is None else options
        if not isinstance(options, dict):
            raise ConstraintError("JSON schema: x-guidance must be an object")
        for k in options:
            if k not in _OPTIONS:
                raise ConstraintError(f"JSON schema: unknown x-guidance option {k!r} (llguidance knows "
                                      + ", ".join(_OPTIONS) + ")")
        for k in ("whitespace_flexible", "coerce_one_of", "lenient", "json_allow_general_unicode_escapes"):
            if k in options and not isinstance(options[k], bool):
                raise ConstraintError(f"JSON schema: x-guidance {k} must be a boolean")
        for k in ("item_separator", "key_separator", "whitespace_pattern", "json_allowed_escapes"):
            v = options.get(k)
            if v is not None and not isinstance(v, str):
                raise ConstraintError(f"JSON schema: x-guidance {k} must be a string")
        if options.get("json_allow_general_unicode_escapes"):
            raise UnsupportedFeatureError("JSON Schema x-guidance option json_allow_general_unicode_escapes")
        esc = options.get("json_allowed_escapes")
        if esc is not None and set(esc) != set('nrbtf\\"u'):
            raise UnsupportedFeatureError(f"JSON Schema x-guidance option json_allowed_escapes={esc!r}",
                                          "only the default set nrbtf\\\"u")
        self.coerce_one_of = options.get("coerce_one_of", False)
        self.lenient = options.get("lenient", False)
        pattern = options.get("whitespace_pattern")
        if pattern is None and options.get("whitespace_flexible", True):
            pattern = "[\\x20\\x0A\\x0D\\x09]+"
        self.ws_tree, ws_bytes = None, set()
        if pattern is not None:
            self.ws_tree = R.parse(pattern)
            ws_bytes = _tree_bytes(self.ws_tree)
            if ws_bytes is None or not ws_bytes <= _WS_BYTES:
                raise UnsupportedFeatureError(
                    f"JSON Schema x-guidance whitespace_pattern {pattern!r}",
                    "only patterns of ASCII bytes that are not letters, digits or JSON punctuation")
        self.ws_mask = sum(1 << b for b in ws_bytes)
        seps = []
        for k, default in (("item_separator", ","), ("key_separator", ":")):
            text = options.get(k, default)
            tree = R.parse(text)
            b = _tree_bytes(tree)
            lit = _literal_text(tree)
            if b is None or not b <= _SEP_BYTES or lit == "":
                raise UnsupportedFeatureError(
                    f"JSON Schema x-guidance {k} {text!r}",
                    "only non-empty separators of ASCII bytes that are not letters, digits, quotes, brackets or signs")
            # a separator whose length varies, or that starts with a whitespace byte, and
            # whitespace it could run into: llguidance's greedy lexing would split texts differently
            if ws_bytes and ((lit is None and b & ws_bytes) or (lit is not None and ord(lit[0]) in ws_bytes)):
                raise UnsupportedFeatureError(
                    f"JSON Schema x-guidance {k} {text!r} next to whitespace {pattern!r}",
                    "a separator of varying length sharing bytes with the whitespace pattern, or starting with one")
            seps.append(tree)
        self.item_tree, self.key_tree = seps

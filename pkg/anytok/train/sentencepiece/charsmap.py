"""Normalization tables (`precompiled_charsmap`) for SentencePiece models, as sentencepiece 0.2.1 (or 0.2.3) writes them.

Data flow: `_charsmap_rules.py` (generated, zlib) -> `rules_of(name)`: the rule set, a dict
{source string: normalized string} -> `compile_charsmap(rules)`: the sources' UTF-8 sorted,
their targets stored once each, NUL-terminated, in code point order -> a Darts-clone double
array of sources -> offsets into the targets (`anytok.sentencepiece.darts_build`) -> the blob
`<uint32 LE size of the array><array><targets>` (sentencepiece's `Builder::CompileCharsMap`).

sentencepiece compiled its four built-in rule sets (nmt_nfkc, nfkc, nmt_nfkc_cf, nfkc_cf) from
ICU's NFKC (plus, for "nmt_", whitespace and control-character rules and, for "_cf", case
folding) and ships the blobs; `rules_of` gives the rule sets read back from those blobs (see
build_scripts/gen/gen_spm_charsmap_rules.py), and `precompiled_charsmap(name)` the same bytes as
the blob, built here (a few seconds, once per process).  sentencepiece 0.2.3 ships other blobs
(a few code points differ): `rules_of(name, "0.2.3")`, `precompiled_charsmap(name, "0.2.3")`
(stored as rule sets "NAME@0.2.3", changes to 0.2.1's).

Compact rule format (the text inside `_charsmap_rules.DATA`), one item a line:

    sets N              the next N lines are sets of characters (hex code points)
    rules NAME [BASE]   a rule set follows; with BASE, its lines change a copy of rule set BASE
    DK:T                the rule of a one-character source: its code point is the previous such
                        line's + DK (0 at a section's start); T is the target: hex code points
                        (maybe none), "~D" (the source's code point + D), or "-" (drop the rule)
    +D=I J ...          every string whose 1st character is in set I, 2nd in set J, ... goes to
                        one target character: the previous "+" line's target + D (0 at the start)
    /HEX ...=I J ...    the same for a target of several characters (hex code points)
    ...=-               drop BASE's group of sources of that target
"""

from __future__ import annotations

import base64
import itertools
import struct
import zlib
from functools import lru_cache

from ...sentencepiece.darts import DoubleArray
from ...sentencepiece.darts_build import build_double_array

__all__ = ["BUILTIN_RULES", "rules_of", "precompiled_charsmap", "compile_charsmap",
           "decompile_charsmap", "load_rule_tsv", "decode_rules"]

BUILTIN_RULES = ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf")

# sentencepiece's Normalizer::kMaxTrieResultsSize: at most this many sources may be prefixes of
# one input position, or its normalizer rejects the table.
_MAX_TRIE_RESULTS = 32


def _chars(hex_cps: str) -> str:
    return "".join(chr(int(h, 16)) for h in hex_cps.split())


def decode_rules(text: str) -> dict[str, tuple[dict[str, str], dict[str, tuple[str, ...]]]]:
    """The rule sets of the compact format, each as (one-character rules {source: target},
    groups {target: (characters allowed at position 1, 2, ...)})."""
    lines = iter(text.split("\n"))
    sets: list[str] = []
    out: dict[str, tuple[dict[str, str], dict[str, tuple[str, ...]]]] = {}
    singles: dict[str, str] = {}
    groups: dict[str, tuple[str, ...]] = {}
    key = target = 0
    for line in lines:
        if line.startswith("sets "):
            sets = [_chars(next(lines)) for _ in range(int(line[5:]))]
        elif line.startswith("rules "):
            name, *base = line[6:].split()
            if base:
                singles, groups = dict(out[base[0]][0]), dict(out[base[0]][1])
            else:
                singles, groups = {}, {}
            out[name] = (singles, groups)
            key = target = 0
        elif line[:1] in ("+", "/"):
            head, _, idx = line.partition("=")
            if head[0] == "+":
                target += int(head[1:])
                t = chr(target)
            else:
                t = _chars(head[1:])
            if idx == "-":
                del groups[t]
            else:
                groups[t] = tuple(sets[int(i)] for i in idx.split())
        elif line:
            dk, _, t = line.partition(":")
            key += int(dk)
            src = chr(key)
            if t == "-":
                del singles[src]
            elif t.startswith("~"):
                singles[src] = chr(key + int(t[1:]))
            else:
                singles[src] = _chars(t)
    return out


@lru_cache(maxsize=None)
def _decoded() -> dict:
    from ._charsmap_rules import DATA

    return decode_rules(zlib.decompress(base64.b85decode(DATA)).decode("ascii"))


RULE_VERSIONS = ("0.2.1", "0.2.3")


def rules_of(name: str, version: str = "0.2.1") -> dict[str, str]:
    """Built-in rule set `name` (one of BUILTIN_RULES) of sentencepiece `version` (0.2.1 or
    0.2.3) as {source: normalized}."""
    if name not in BUILTIN_RULES:
        raise ValueError(f"unknown normalization rule {name!r}; built in: {', '.join(BUILTIN_RULES)}, identity")
    if version not in RULE_VERSIONS:
        raise ValueError(f"sentencepiece version must be one of {', '.join(RULE_VERSIONS)}, not {version!r}")
    singles, groups = _decoded()[name if version == "0.2.1" else f"{name}@{version}"]
    rules = dict(singles)
    for target, positions in groups.items():
        for chars in itertools.product(*positions):
            rules["".join(chars)] = target
    return rules


@lru_cache(maxsize=None)
def precompiled_charsmap(name: str, version: str = "0.2.1") -> bytes:
    """The `precompiled_charsmap` sentencepiece `version` (0.2.1 or 0.2.3) writes for
    `normalization_rule_name=name` (b"" for "identity")."""
    if name == "identity":
        return b""
    return compile_charsmap(rules_of(name, version))


def compile_charsmap(rules: dict[str, str]) -> bytes:
    """A `precompiled_charsmap` of `rules` ({source: normalized}, sources non-empty), byte for
    byte as sentencepiece's `Builder::CompileCharsMap`."""
    if not rules:
        raise ValueError("no normalization rules")
    # Targets in code point order (std::map<std::vector<char32>, ...>), each once.
    pos: dict[str, int] = {}
    normalized = bytearray()
    for target in sorted(set(rules.values())):
        if "\0" in target:
            raise ValueError(f"normalization target {target!r} holds U+0000")
        pos[target] = len(normalized)
        normalized += _utf8(target) + b"\0"
    kv = []
    for source, target in rules.items():
        if not source:
            raise ValueError("empty normalization source")
        if "\0" in source:
            raise ValueError(f"normalization source {source!r} holds U+0000")
        kv.append((_utf8(source), pos[target]))
    kv.sort()
    keys = [k for k, _ in kv]
    trie = build_double_array(keys, [v for _, v in kv])
    # How many sources are prefixes of a source (itself included): in sorted order they are
    # the chain of earlier keys that are prefixes of one another and of it.
    chain: list[bytes] = []
    for k in keys:
        while chain and not k.startswith(chain[-1]):
            chain.pop()
        chain.append(k)
        if len(chain) >= _MAX_TRIE_RESULTS:
            raise ValueError(f"normalization sources share too many prefixes (at {k!r}); "
                             f"at most {_MAX_TRIE_RESULTS - 1} may be prefixes of one another")
    return struct.pack("<I", len(trie)) + trie + bytes(normalized)


def decompile_charsmap(blob: bytes) -> dict[str, str]:
    """The rules {source: normalized} of a `precompiled_charsmap` (sentencepiece's
    `Builder::DecompileCharsMap`)."""
    if len(blob) <= 4:
        raise ValueError("precompiled_charsmap too short")
    (size,) = struct.unpack("<I", blob[:4])
    if size > len(blob) - 4 or size % 4:
        raise ValueError("precompiled_charsmap: bad trie size")
    trie, normalized = blob[4:4 + size], blob[4 + size:]
    rules = {}
    for key, value in DoubleArray(trie).items():
        end = normalized.find(b"\0", value)
        if value >= len(normalized) or end < 0:
            raise ValueError(f"precompiled_charsmap: target offset {value} out of range")
        rules[key.decode("utf-8")] = normalized[value:end].decode("utf-8")
    return rules


def load_rule_tsv(path) -> dict[str, str]:
    """The rules of a sentencepiece rule file (`normalization_rule_tsv`, as its
    `Builder::LoadCharsMap` reads it): a line a rule, tab-separated fields: the source's code
    points in hex (space-separated, each maybe prefixed "U+"), the target's (none, or no second
    field: the source is deleted), anything after (a comment).  A later line for the same source
    wins.  Fields sentencepiece would read partly (a token not wholly hex) are refused."""
    with open(path, "rb") as f:
        data = f.read()
    rules: dict[str, str] = {}
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # std::getline yields no line after the final newline
    for number, raw in enumerate(lines, 1):
        fields = raw.split(b"\t")
        if len(fields) == 1:
            fields.append(b"")
        cps = []
        for field in fields[:2]:
            chars = []
            for tok in field.split(b" "):
                tok = tok.strip()
                if not tok:
                    continue
                if tok.startswith(b"U+"):
                    tok = tok[2:]
                try:
                    cp = int(tok, 16) if tok and tok.isalnum() else -1
                except ValueError:
                    cp = -1
                if not 0 < cp <= 0x10FFFF or 0xD800 <= cp < 0xE000:
                    raise ValueError(f"{path}, line {number}: {tok.decode('utf-8', 'replace')!r} "
                                     "is not a code point in hex")
                chars.append(chr(cp))
            cps.append("".join(chars))
        if not cps[0]:
            raise ValueError(f"{path}, line {number}: no source code points")
        rules[cps[0]] = cps[1]
    if not rules:
        raise ValueError(f"{path}: no rules")
    return rules


def _utf8(s: str) -> bytes:
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"normalization rule {s!r} is not valid Unicode (a lone surrogate)") from None

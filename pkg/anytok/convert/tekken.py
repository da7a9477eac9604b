"""Mistral's tekken tokenizer files (`tekken_*.json`, as in PyPI `mistral-common`) as an `Encoding`.

A tekken file is tiktoken in JSON: `config.pattern` (a tiktoken-style split pattern), `vocab`
(byte-level BPE tokens by rank, base64 `token_bytes`), and special tokens, which take the first
`config.default_num_special_tokens` ids.  `mistral_common`'s `Tekkenizer` keeps the first
`default_vocab_size - num_special_tokens` vocabulary entries, encodes with
`tiktoken.Encoding(pat_str=pattern, mergeable_ranks=ranks, special_tokens={})` and adds
`num_special_tokens` to every id.  So the `Encoding` here has `mergeable_ranks = rank +
num_special_tokens` (the merge order is unchanged) and the special tokens at their own ids:

* the file's `special_tokens` list (`rank`, `token_str`), or for files of version v7 and older
  that have none, mistral-common's fixed list (`<unk>`, `<s>`, `</s>`, `[INST]`, ...);
* the rest up to `num_special_tokens` filled with `<SPECIAL_{id}>`, as mistral-common does.

`Tekkenizer.encode(text, bos=False, eos=False)` never produces special ids: it treats text that
spells a special token as plain text.  The same here is `enc.encode_ordinary(text)` (or
`enc.encode(text, disallowed_special=())`).  `Tekkenizer.decode` drops special tokens by default
(`SpecialTokenPolicy.IGNORE`); `Encoding.decode` writes their text (mistral's `KEEP`).
"""

from __future__ import annotations

import base64
import binascii
import json
import os

from ..core import Encoding
from .tiktoken_bpe import PathOrBytes, VocabSourceError, check_hash, read_source

__all__ = ["load_tekken", "tekken_special_tokens", "DEPRECATED_SPECIAL_TOKENS"]

# mistral_common.tokens.tokenizers.tekken.Tekkenizer.DEPRECATED_SPECIAL_TOKENS: the special
# tokens of tekken files up to version v7, which do not list them.
DEPRECATED_SPECIAL_TOKENS = (
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]",
    "[IMG_END]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
)
SPECIAL_TOKEN_TEMPLATE = "<SPECIAL_{id}>"
# Versions whose files may omit the special tokens (mistral-common: `version > v7` must list them).
_OLD_VERSIONS = {"v1", "v2", "v3", "v4", "v5", "v6", "v7"}


def tekken_special_tokens(data: dict) -> list[str]:
    """The special token strings of a parsed tekken file, by id (0 .. num_special_tokens-1)."""
    config = data["config"]
    num = int(config["default_num_special_tokens"])
    listed = data.get("special_tokens")
    if listed is None:
        if config.get("version") not in _OLD_VERSIONS:
            raise VocabSourceError(f"tekken file of version {config.get('version')!r} lists no special tokens")
        names = list(DEPRECATED_SPECIAL_TOKENS)
    else:
        for i, t in enumerate(listed):
            if t.get("rank") != i:
                raise VocabSourceError(f"tekken special token {i} has rank {t.get('rank')!r}")
        names = [t["token_str"] for t in listed]
    if len(set(names)) != len(names) or len(names) > num:
        raise VocabSourceError("tekken special tokens are not unique or more than num_special_tokens")
    names += [SPECIAL_TOKEN_TEMPLATE.format(id=i) for i in range(len(names), num)]
    if len(set(names)) != num:
        raise VocabSourceError("tekken special tokens are not unique")
    return names


def load_tekken(source: PathOrBytes, *, name: str | None = None, expected_hash: str | None = None) -> Encoding:
    """Load a tekken JSON file (a path or its bytes) as an `Encoding` with mistral-common's ids.

    With `expected_hash`, the sha256 of the file must match it.
    """
    raw = read_source(source)
    what = str(source) if isinstance(source, (str, os.PathLike)) else "tekken data"
    check_hash(raw, expected_hash, what)
    try:
        data = json.loads(raw)
        config = data["config"]
        pattern = config["pattern"]
        num_special = int(config["default_num_special_tokens"])
        vocab_size = int(config["default_vocab_size"])
        vocab = data["vocab"]
    except (ValueError, KeyError, TypeError) as e:
        raise VocabSourceError(f"{what}: not a tekken file ({e})") from None
    inner = vocab_size - num_special
    if not 0 < inner <= len(vocab):
        raise VocabSourceError(f"{what}: default_vocab_size {vocab_size} does not fit {len(vocab)} tokens "
                               f"and {num_special} special tokens")
    ranks: dict[bytes, int] = {}
    for i, entry in enumerate(vocab[:inner]):
        if entry.get("rank") != i:
            raise VocabSourceError(f"{what}: vocab entry {i} has rank {entry.get('rank')!r}")
        try:
            token = base64.b64decode(entry["token_bytes"], validate=True)
        except (binascii.Error, KeyError, TypeError):
            raise VocabSourceError(f"{what}: vocab entry {i}: bad token_bytes") from None
        if i < 256 and token != bytes([i]):
            raise VocabSourceError(f"{what}: vocab entry {i} is not the single byte {i}")
        if token in ranks:
            raise VocabSourceError(f"{what}: token {token!r} appears twice")
        ranks[token] = i + num_special
    specials = {s: i for i, s in enumerate(tekken_special_tokens(data))}
    if name is None:
        name = os.path.basename(os.fspath(source)).removesuffix(".json") if isinstance(source, (str, os.PathLike)) else "tekken"
    return Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials,
                    explicit_n_vocab=vocab_size)

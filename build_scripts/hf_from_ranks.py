"""Build a Hugging Face `tokenizers` tokenizer.json from tiktoken-style BPE ranks.

    python build_scripts/hf_from_ranks.py o200k_base -o o200k_base.tokenizer.json
    python build_scripts/hf_from_ranks.py cl100k_base --check CORPUS.txt ...

Used by `bench.py` to benchmark HF `tokenizers` on exactly the same vocabulary.  The result is a
byte-level BPE that gives tiktoken's ids:

* vocab: every token's bytes spelled with GPT-2's byte-to-unicode alphabet, id = rank;
* merges: one per multi-byte token.  tiktoken's BPE on a token's own bytes ends in that token
  exactly when the token is reachable at all; the last merge of that run is the only way the
  token can ever be formed (inside a longer piece the bytes of the token evolve exactly as on
  their own until it forms), so it is the token's merge.  Merges are listed in rank order, so
  HF's merge priority equals tiktoken's rank of the merged token.  Tokens that BPE never
  reaches get no merge (HF's `ignore_merges` still returns them for a piece that is exactly
  such a token, as tiktoken does);
* pre-tokenizer: `Split` with tiktoken's pattern, compiled by HF with Oniguruma (Ruby syntax):
  o200k's pattern is used as it is; cl100k's and r50k's need two rewrites, see
  `adapt_pattern`; then `ByteLevel` with `use_regex: false` (bytes to the unicode alphabet,
  no second split);
* decoder: `ByteLevel`; special tokens as added tokens.

No normalizer, no post-processor: encode with `add_special_tokens=False` (the default
post-processor is none anyway).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path


def byte_to_unicode() -> dict[int, str]:
    """GPT-2's reversible map of the 256 byte values to printable unicode characters.

    Bytes that are printable Latin-1 characters (except the space) stand for themselves; the
    others are given the code points 256, 257, ... in byte order.
    """
    printable = set(range(ord("!"), ord("~") + 1))
    printable |= set(range(0xA1, 0xAC + 1)) | set(range(0xAE, 0xFF + 1))
    mapping = {}
    extra = 0
    for b in range(256):
        if b in printable:
            mapping[b] = chr(b)
        else:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


def last_merge(token: bytes, ranks: dict[bytes, int]) -> tuple[bytes, bytes] | None:
    """tiktoken's BPE on `token`'s bytes; the two parts of its final merge if it ends in `token`.

    The rule: repeatedly merge the adjacent pair whose concatenation has the lowest rank,
    leftmost on ties.  Tokens are short (at most a few hundred bytes), so a plain scan is fast
    enough.
    """
    parts = [token[i : i + 1] for i in range(len(token))]
    last = None
    while len(parts) > 1:
        best_rank = None
        best_i = -1
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and (best_rank is None or r < best_rank):
                best_rank = r
                best_i = i
        if best_rank is None:
            return None
        last = (parts[best_i], parts[best_i + 1])
        parts[best_i : best_i + 2] = [parts[best_i] + parts[best_i + 1]]
    return last if parts[0] == token else None


def adapt_pattern(pat_str: str) -> str:
    """tiktoken's split pattern (Rust fancy-regex syntax) rewritten for Oniguruma's Ruby syntax.

    Two constructs read differently there, so they are rewritten (outside character classes):

    * `X{n,m}+` is possessive in fancy-regex but "`X{n,m}`, one or more times" in Ruby syntax
      (cl100k's `\\p{N}{1,3}+` would take any run of digits) -> the atomic group `(?>X{n,m})`;
    * `$` is end of text in fancy-regex (no multi-line flag) but end of line in Ruby -> `\\z`.

    `?+`, `*+`, `++`, `\\p{..}`, `(?i:..)` and lookahead mean the same in both.
    """
    out: list[str] = []
    atom_start = 0  # index in `out` where the last complete atom begins
    group_starts: list[int] = []
    i = 0
    n = len(pat_str)
    while i < n:
        c = pat_str[i]
        if c == "\\":
            j = i + 2
            if pat_str[i + 1 : i + 2] in ("p", "P") and pat_str[j : j + 1] == "{":
                j = pat_str.index("}", j) + 1
            atom_start = len(out)
            out.append(pat_str[i:j])
            i = j
        elif c == "[":
            j = i + 1
            if pat_str[j : j + 1] == "^":
                j += 1
            if pat_str[j : j + 1] == "]":
                j += 1
            while pat_str[j] != "]":
                j += 2 if pat_str[j] == "\\" else 1
            atom_start = len(out)
            out.append(pat_str[i : j + 1])
            i = j + 1
        elif c == "(":
            group_starts.append(len(out))
            out.append(c)
            i += 1
        elif c == ")":
            atom_start = group_starts.pop()
            out.append(c)
            i += 1
        elif c == "{" and re.match(r"\{\d+(,\d*)?\}", pat_str[i:]):
            j = pat_str.index("}", i) + 1
            if pat_str[j : j + 1] == "+":
                atom = "".join(out[atom_start:]) + pat_str[i:j]
                del out[atom_start:]
                out.append(f"(?>{atom})")
                j += 1
            else:
                out.append(pat_str[i:j])
            i = j
        elif c == "$":
            out.append("\\z")
            i += 1
        else:
            if c not in "?*+|":
                atom_start = len(out)
            out.append(c)
            i += 1
    return "".join(out)


def build(ranks: dict[bytes, int], pat_str: str, special_tokens: dict[str, int]) -> dict:
    """The tokenizer.json document (a dict) for these ranks, split pattern and specials."""
    alphabet = byte_to_unicode()

    def spell(b: bytes) -> str:
        return "".join(alphabet[x] for x in b)

    vocab = {spell(token): rank for token, rank in ranks.items()}
    if len(vocab) != len(ranks):
        raise ValueError("two tokens spell the same: the byte alphabet is not injective?")
    merges = []
    unreachable = 0
    for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(token) < 2:
            continue
        pair = last_merge(token, ranks)
        if pair is None:
            unreachable += 1
            continue
        merges.append((rank, [spell(pair[0]), spell(pair[1])]))
    added = [
        {
            "id": tid,
            "content": text,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for text, tid in sorted(special_tokens.items(), key=lambda kv: kv[1])
    ]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {
                    "type": "Split",
                    "pattern": {"Regex": adapt_pattern(pat_str)},
                    "behavior": "Isolated",
                    "invert": False,
                },
                {
                    "type": "ByteLevel",
                    "add_prefix_space": False,
                    "trim_offsets": False,
                    "use_regex": False,
                },
            ],
        },
        "post_processor": None,
        "decoder": {
            "type": "ByteLevel",
            "add_prefix_space": False,
            "trim_offsets": False,
            "use_regex": False,
        },
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": True,
            "vocab": vocab,
            "merges": [pair for _, pair in merges],
        },
        # informational, dropped by dumps()
        "_unreachable_tokens": unreachable,
        "_pattern_adapted": adapt_pattern(pat_str) != pat_str,
    }


def dumps(doc: dict) -> str:
    doc = {k: v for k, v in doc.items() if not k.startswith("_")}
    return json.dumps(doc, ensure_ascii=False)


def _tiktoken_encoding(name: str):
    sys.path[:0] = [str(Path(__file__).resolve().parent / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders
    import os

    from fetch_reference import tiktoken_cache

    os.environ["TIKTOKEN_CACHE_DIR"] = str(tiktoken_cache())
    import tiktoken

    return tiktoken.get_encoding(name)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("encoding", help="a tiktoken encoding name, e.g. o200k_base")
    ap.add_argument("-o", "--output", type=Path, help="where to write tokenizer.json")
    ap.add_argument("--check", nargs="*", type=Path, default=[], help="text files: compare ids with tiktoken")
    args = ap.parse_args(argv)

    tk = _tiktoken_encoding(args.encoding)
    doc = build(tk._mergeable_ranks, tk._pat_str, tk._special_tokens)
    print(f"{args.encoding}: {len(doc['model']['vocab'])} tokens, {len(doc['model']['merges'])} merges, "
          f"{doc['_unreachable_tokens']} multi-byte tokens unreachable by BPE, split pattern "
          f"{'adapted for Oniguruma' if doc['_pattern_adapted'] else 'used as is'}", file=sys.stderr)
    text = dumps(doc)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    status = 0
    if args.check:
        from tokenizers import Tokenizer

        hf = Tokenizer.from_str(text)
        for path in args.check:
            sample = path.read_text(encoding="utf-8")
            ours = hf.encode(sample, add_special_tokens=False).ids
            ref = tk.encode_ordinary(sample)
            same = ours == ref
            print(f"{path.name}: {'ids equal' if same else 'MISMATCH'} ({len(ref)} tokens)")
            status |= not same
    return status


if __name__ == "__main__":
    sys.exit(main())

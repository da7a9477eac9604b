"""Command line: `python -m anytok {count,encode,decode,list,convert,inspect}`."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from . import format as vocab_format
from .core import Encoding
from .files import encoding_to_bytes, load_encoding
from .model import encoding_name_for_model
from .registry import get_encoding, list_encoding_names


def _read_text(path: str) -> str:
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        data = Path(path).read_bytes()
    # Undecodable bytes become lone surrogates, which encode() turns into U+FFFD (as tiktoken).
    return data.decode("utf-8", errors="surrogateescape")


def _encoding(args: argparse.Namespace) -> Encoding:
    if getattr(args, "vocab", None):
        return load_encoding(args.vocab)
    if getattr(args, "model", None):
        return get_encoding(encoding_name_for_model(args.model))
    return get_encoding(args.encoding)


def _special_kwargs(mode: str) -> dict:
    if mode == "allow":
        return {"allowed_special": "all"}
    if mode == "text":
        return {"disallowed_special": ()}
    return {}


def _add_encoding_args(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("-e", "--encoding", default="o200k_base", help="bundled encoding name (default: o200k_base)")
    g.add_argument("-m", "--model", help="model name, e.g. gpt-4o (picks its encoding)")
    g.add_argument("--vocab", help="an .atok file to use instead of a bundled encoding")


def _add_special_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--special",
        choices=("raise", "allow", "text"),
        default="raise",
        help="text that spells a special token: raise an error (default, as tiktoken), "
        "allow it as the special token, or treat it as plain text",
    )


def cmd_count(args: argparse.Namespace) -> int:
    enc = _encoding(args)
    kwargs = _special_kwargs(args.special)
    total = 0
    files = args.files or ["-"]
    for path in files:
        text = _read_text(path)
        start = time.perf_counter()
        n = enc.count(text, **kwargs)
        elapsed = time.perf_counter() - start
        total += n
        if args.verbose:
            size = len(text.encode("utf-8", "surrogateescape"))
            print(f"{n}\t{path}\t{len(text)} chars\t{size} bytes\t{elapsed * 1000:.1f} ms", file=sys.stderr)
        if len(files) > 1:
            print(f"{n}\t{path}")
    print(total if len(files) == 1 else f"{total}\ttotal")
    return 0


def cmd_encode(args: argparse.Namespace) -> int:
    enc = _encoding(args)
    text = args.text if args.text is not None else _read_text(args.file)
    ids = enc.encode(text, **_special_kwargs(args.special))
    if args.json:
        print(json.dumps(ids))
    elif args.show:
        for t in ids:
            print(f"{t}\t{enc.decode_single_token_bytes(t)!r}")
    else:
        print(" ".join(map(str, ids)))
    return 0


def cmd_decode(args: argparse.Namespace) -> int:
    enc = _encoding(args)
    raw = " ".join(args.ids) if args.ids else sys.stdin.read()
    raw = raw.strip()
    if raw.startswith("["):
        ids = json.loads(raw)
    else:
        ids = [int(x) for x in raw.replace(",", " ").split()]
    sys.stdout.write(enc.decode(ids))
    if sys.stdout.isatty():
        sys.stdout.write("\n")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    for name in list_encoding_names():
        print(name)
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    src = Path(args.src)
    data = src.read_bytes()
    if data.startswith(vocab_format.MAGIC):
        enc = load_encoding(data)
    else:
        like = get_encoding(args.like) if args.like else None
        pat = args.pat_str or (like._pat_str if like else None)
        if pat is None:
            print("error: a .tiktoken file holds no split pattern: pass --like ENCODING or --pat-str", file=sys.stderr)
            return 2
        specials = json.loads(args.specials) if args.specials else (dict(like._special_tokens) if like else {})
        enc = load_encoding(data, name=args.name or src.name.split(".")[0], pat_str=pat, special_tokens=specials)
    if args.name:
        enc.name = args.name
    out = encoding_to_bytes(enc, compression=args.compression, source=f"converted from {src.name}")
    Path(args.output).write_bytes(out)
    print(f"wrote {args.output}: {len(out):,} bytes ({len(data):,} bytes in)")
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    data = Path(args.file).read_bytes()
    vocab = vocab_format.loads(data, args.file)
    lengths = [len(t) for t in vocab.tokens]
    info = {
        "file": args.file,
        "file_size": len(data),
        "format_version": vocab_format.FORMAT_VERSION,
        "compression": vocab_format.describe_compression(data),
        "name": vocab.name,
        "source": vocab.source,
        "model": "bpe (tiktoken ranks)",
        "mergeable_tokens": len(vocab.tokens),
        "max_token_bytes": max(lengths, default=0),
        "ids_differing_from_rank": len(vocab.ids),
        "special_tokens": len(vocab.special_tokens),
        "explicit_n_vocab": vocab.explicit_n_vocab,
        "regular": bool(vocab.properties & vocab_format.PROP_REGULAR),
        "pattern": vocab.pat_str,
    }
    if args.json:
        info["special_tokens"] = vocab.special_tokens
        print(json.dumps(info, ensure_ascii=False, indent=2))
    else:
        for k, v in info.items():
            print(f"{k:>24}: {v}")
        shown = sorted(vocab.special_tokens.items(), key=lambda kv: kv[1])
        for s, i in shown[:12]:
            print(f"{'':>24}  {i}\t{s}")
        if len(shown) > 12:
            print(f"{'':>24}  ... and {len(shown) - 12} more")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m anytok", description="Exact tiktoken-compatible tokenizer in pure Python.")
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("count", help="count the tokens of files (or stdin)")
    p.add_argument("files", nargs="*", help="files to count ('-' or nothing: stdin)")
    _add_encoding_args(p)
    _add_special_arg(p)
    p.add_argument("-v", "--verbose", action="store_true", help="also print sizes and time taken, to stderr")
    p.set_defaults(func=cmd_count)

    p = sub.add_parser("encode", help="print the token ids of a file, stdin or --text")
    p.add_argument("file", nargs="?", default="-")
    p.add_argument("-t", "--text", help="encode this text instead of a file")
    _add_encoding_args(p)
    _add_special_arg(p)
    p.add_argument("--json", action="store_true", help="print a JSON list")
    p.add_argument("--show", action="store_true", help="one token per line with its bytes")
    p.set_defaults(func=cmd_encode)

    p = sub.add_parser("decode", help="print the text of token ids (arguments or stdin)")
    p.add_argument("ids", nargs="*")
    _add_encoding_args(p)
    p.set_defaults(func=cmd_decode)

    p = sub.add_parser("list", help="list the bundled encodings")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("convert", help="convert a .tiktoken (or .atok) file to an anytok binary")
    p.add_argument("src")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--like", help="take the split pattern and special tokens of this bundled encoding")
    p.add_argument("--pat-str", help="the split pattern")
    p.add_argument("--specials", help='special tokens as JSON, e.g. \'{"<|endoftext|>": 100257}\'')
    p.add_argument("--name", help="encoding name to store")
    p.add_argument("--compression", choices=("lzma", "zlib", "none"), default="lzma")
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser("inspect", help="describe an anytok vocab file")
    p.add_argument("file")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_inspect)

    args = ap.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, KeyError, OSError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"error: {msg}", file=sys.stderr)
        if isinstance(e, ValueError) and "special token" in str(e):
            print("hint: pass --special text (count it as plain text) or --special allow", file=sys.stderr)
        return 1
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0

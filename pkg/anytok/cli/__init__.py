"""Command line: `python -m anytok {count,encode,decode,list,convert,inspect,train,tokenize}`.

`count` lives in count.py (with walk.py, gitignore.py and progress.py beside it), `train` in
train.py, `tokenize` in tokenize.py; the other commands are small and live here.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from .. import format as vocab_format
from ..core import Encoding
from ..files import tokenizer_to_bytes
from ..registry import list_encoding_names
from .options import (_add_encoding_args, _add_special_arg, _encoding, _load_any, _read_text, _special_kwargs,
                      load_tokenizers)


def _fmt_row(cells: list[str], widths: list[int], path: str) -> str:
    return "  ".join(c.rjust(w) for c, w in zip(cells, widths)) + "  " + path


def cmd_count(args: argparse.Namespace) -> int:
    if args.chat is not None:
        if args.paths:
            raise SystemExit("anytok: error: --chat counts one conversation; give no other paths")
        from .chat import cmd_count_chat

        return cmd_count_chat(args)
    from . import count as counting
    from .progress import Progress
    from .walk import Found, Problem, Walker

    loader_args = (args.tokenizers, args.like, args.pat_str, args.special)
    toks = load_tokenizers(*loader_args)
    counting._TOKS = toks
    labels = [t.label for t in toks]
    inputs = args.paths or ["-"]
    walker = Walker(hidden=args.hidden, gitignore_files=not args.no_ignore, include=args.include or [],
                    exclude=args.exclude or [])
    found: list[Found] = []
    problems: list[Problem] = []
    use_stdin = False
    for arg in inputs:
        if arg == "-":
            use_stdin = True
            continue
        for item in walker.paths([arg]):
            (found if isinstance(item, Found) else problems).append(item)
    total_bytes = sum(f.size for f in found)
    jobs = args.jobs
    if jobs is not None and jobs < 1:
        jobs = counting.cpu_count()
    file_jobs = jobs if jobs is not None else (counting.cpu_count() if total_bytes >= counting.PARALLEL_MIN else 1)
    file_jobs = max(1, min(file_jobs, counting.cpu_count() * 4, 256))
    show = not args.quiet and not args.json and sys.stderr.isatty()
    prog = Progress(show, len(found) or None, total_bytes or None)
    if file_jobs > 1:
        for t in toks:  # tables built once, before the pool forks
            if isinstance(t.tok, Encoding):
                t.tok.count("warm up \u00e9\u4e2d", **t.kwargs)
    results = []
    try:
        if found:
            runner = counting.Runner(file_jobs if len(found) > 1 or total_bytes >= 2 * counting.RANGE_MIN else 1,
                                     load_tokenizers, loader_args)
            try:
                results = counting.count_files(found, toks, runner.jobs, runner, prog, field=args.field)
            finally:
                runner.close()
        if use_stdin:
            if show and sys.stdin.isatty():
                print("anytok: reading stdin (end with Ctrl-D)", file=sys.stderr)
            factory = lambda n: counting.Runner(n, load_tokenizers, loader_args)  # noqa: E731
            results.append(counting.count_stdin(toks, jobs, factory, prog))
    finally:
        prog.close()

    if args.sort == "path":
        order = {id(r): i for i, r in enumerate(results)}
        results.sort(key=lambda r: (r.path == "-", r.path, order[id(r)]))
    elif args.sort == "tokens":
        results.sort(key=lambda r: -(r.counts[0] or 0) if not r.skipped else 1)
    counted = [r for r in results if not r.skipped]
    skipped = [(r.path, r.skipped, r.explicit) for r in results if r.skipped]
    skipped += [(p.path, p.reason, True) for p in problems]
    totals = [sum(r.counts[i] for r in counted) for i in range(len(toks))]
    over = [(labels[i], n) for i, n in enumerate(totals) if args.max_tokens is not None and n > args.max_tokens]
    status = counting.EXIT_OK
    if any(explicit for _, _, explicit in skipped):
        status = counting.EXIT_SKIPPED
    if over:
        status = counting.EXIT_BUDGET

    if args.json:
        def counts_of(values):
            return {"tokens": values[0], "counts": dict(zip(labels, values))}
        doc = {
            "tokenizer": labels[0],
            "tokenizers": labels,
            "files": [{"path": r.path, **counts_of(r.counts), "chars": r.chars, "bytes": r.nbytes,
                       "ms": round(r.seconds * 1000, 1)} for r in counted],
            "skipped": [{"path": p, "reason": why} for p, why, _ in skipped],
            "total": {"files": len(counted), **counts_of(totals), "chars": sum(r.chars for r in counted),
                      "bytes": sum(r.nbytes for r in counted)},
        }
        if args.max_tokens is not None:
            doc["max_tokens"] = args.max_tokens
            doc["over_budget"] = bool(over)
        print(json.dumps(doc, ensure_ascii=False, indent=2))
    else:
        single = len(inputs) == 1 and len(results) == 1 and not results[0].skipped and not problems and \
            (inputs[0] == "-" or not os.path.isdir(inputs[0])) and len(toks) == 1 and not args.verbose
        if single:
            print(totals[0])
        elif counted or not skipped:
            head = labels if len(toks) > 1 or args.verbose else []
            extra = ["chars", "bytes", "ms"] if args.verbose else []
            rows = [[f"{c}" for c in r.counts] + ([str(r.chars), str(r.nbytes), f"{r.seconds * 1000:.1f}"] if extra else [])
                    for r in counted]
            total_row = [str(n) for n in totals] + ([str(sum(r.chars for r in counted)),
                                                     str(sum(r.nbytes for r in counted)),
                                                     f"{sum(r.seconds for r in counted) * 1000:.1f}"] if extra else [])
            cols = (head + extra) if head else []
            widths = [max([len(x) for x in col]) for col in zip(*(rows + [total_row] + ([cols] if cols else [])))]
            if cols:
                print(_fmt_row(cols, widths, "path"))
            for r, row in zip(counted, rows):
                print(_fmt_row(row, widths, r.path))
            print(_fmt_row(total_row, widths, "total"))
    binaries = 0
    for path, why, explicit in skipped:
        quiet_kind = not explicit and (why.startswith("binary") or why.startswith("not UTF-8"))
        if quiet_kind and not args.verbose:
            binaries += 1
        elif not args.json:
            print(f"anytok: skipped {path}: {why}", file=sys.stderr)
    if binaries and not args.quiet and not args.json:
        print(f"anytok: skipped {binaries} binary or non-UTF-8 file{'s' if binaries > 1 else ''} (-v lists them)",
              file=sys.stderr)
    if over:  # on stderr with --json too: stdout holds the document, a CI log shows why it failed
        for label, n in over:
            print(f"anytok: {n} tokens ({label}) exceed --max-tokens {args.max_tokens}", file=sys.stderr)
    return status


def cmd_encode(args: argparse.Namespace) -> int:
    enc = _encoding(args)
    text = args.text if args.text is not None else _read_text(args.file)
    ids = enc.encode(text, **_special_kwargs(args.special, enc))
    if args.json:
        print(json.dumps(ids))
    elif args.show:
        for t in ids:
            shown = enc.decode_single_token_bytes(t) if isinstance(enc, Encoding) else enc.id_to_token(t)
            print(f"{t}\t{shown!r}")
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
    size_in = sum(f.stat().st_size for f in src.iterdir() if f.is_file()) if src.is_dir() else src.stat().st_size
    try:
        tok = _load_any(str(src), args)
    except ValueError as e:
        if "no split pattern" in str(e):
            print("anytok: error: a .tiktoken file holds no split pattern: pass --like ENCODING or --pat-str", file=sys.stderr)
            return 2
        raise
    if args.name:
        tok.name = args.name
    if args.to == "tokenizer.json":
        to_json = getattr(tok, "to_tokenizer_json", None)
        if to_json is None:
            print(f"anytok: error: {src.name} cannot be written as a tokenizer.json", file=sys.stderr)
            return 2
        try:
            cfg = to_json()
        except ValueError as e:  # UnsupportedTokenizerError: says why
            print(f"anytok: error: {e}", file=sys.stderr)
            return 2
        text = json.dumps(cfg, ensure_ascii=False, indent=2)
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}: {len(text.encode()):,} bytes ({size_in:,} bytes in)")
        return 0
    out = tokenizer_to_bytes(tok, compression=args.compression, source=f"converted from {src.name}")
    Path(args.output).write_bytes(out)
    print(f"wrote {args.output}: {len(out):,} bytes ({size_in:,} bytes in)")
    return 0


def _types(cfg) -> str | None:
    """A pipeline component's type, with a Sequence's members: "Sequence[NFC, Replace]"."""
    if not cfg:
        return None
    members = cfg.get("normalizers") or cfg.get("pretokenizers") or cfg.get("decoders") or cfg.get("processors")
    if cfg.get("type") == "Sequence" and members:
        return f"Sequence[{', '.join(filter(None, map(_types, members)))}]"
    return cfg.get("type")


def _describe(tok) -> dict:
    """What `inspect` shows of a loaded tokenizer that is not tiktoken-style."""
    cfg = tok.to_config()
    info: dict = {"kind": cfg.get("format"), "name": getattr(tok, "name", None), "n_vocab": tok.n_vocab}
    if cfg.get("format") == "anytok.gguf":  # the tokenizer of a GGUF file (anytok.gguf)
        gi = tok.info()
        info.update({k: v for k, v in gi.items() if k != "special_tokens"})
        info["special_tokens"] = {v["text"]: v["id"] for v in gi["special_tokens"].values()}
    elif cfg.get("format") == "anytok.sentencepiece":
        norm = cfg.get("normalizer") or {}
        info.update({
            "model": f"SentencePiece {cfg.get('model_type')}",
            "byte_fallback": cfg.get("byte_fallback"),
            "normalizer": norm.get("name"),
            "add_dummy_prefix": norm.get("add_dummy_prefix"),
            "remove_extra_whitespaces": norm.get("remove_extra_whitespaces"),
            "special_tokens": {p: tok.token_to_id(p) for p in (cfg.get("unk_piece"), cfg.get("bos_piece"),
                                                              cfg.get("eos_piece"), cfg.get("pad_piece"))
                               if p and tok.token_to_id(p) is not None},
        })
    else:
        model = cfg.get("model") or {}
        info.update({
            "model": model.get("type"),
            "byte_fallback": model.get("byte_fallback"),
            "unk_token": model.get("unk_token") or model.get("unk_id"),
            "merges": len(model.get("anytok_merges") or ()) // 2 if model.get("type") == "BPE" else None,
            "normalizer": _types(cfg.get("normalizer")),
            "pre_tokenizer": _types(cfg.get("pre_tokenizer")),
            "post_processor": _types(cfg.get("post_processor")),
            "decoder": _types(cfg.get("decoder")),
            "added_tokens": len(cfg.get("added_tokens") or ()),
            "special_tokens": {t["content"]: t["id"] for t in cfg.get("added_tokens") or () if t.get("special")},
        })
    return info


def cmd_inspect(args: argparse.Namespace) -> int:
    path = Path(args.file)
    if path.is_file():
        with open(path, "rb") as f:
            is_gguf = f.read(4) == b"GGUF"
    else:
        is_gguf = False
    if is_gguf:  # a model file: its header only, never the whole file
        data = b""
    else:
        data = b"" if path.is_dir() else path.read_bytes()
    if data.startswith(vocab_format.MAGIC):
        vocab = vocab_format.loads(data, args.file)
    else:
        vocab = None
    if vocab is not None and vocab.config is None:
        lengths = [len(t) for t in vocab.tokens]
        info = {
            "file": args.file,
            "file_size": len(data),
            "format_version": vocab_format.FORMAT_VERSION,
            "compression": vocab_format.describe_compression(data),
            "kind": "tiktoken-style encoding",
            "name": vocab.name,
            "source": vocab.source,
            "model": "bpe (tiktoken ranks)",
            "mergeable_tokens": len(vocab.tokens),
            "max_token_bytes": max(lengths, default=0),
            "ids_differing_from_rank": len(vocab.ids),
            "special_tokens": vocab.special_tokens,
            "explicit_n_vocab": vocab.explicit_n_vocab,
            "regular": bool(vocab.properties & vocab_format.PROP_REGULAR),
            "pattern": vocab.pat_str,
        }
    else:
        tok = _load_any(args.file, args)
        head = {"file": args.file, "file_size": len(data) if data else (path.stat().st_size if is_gguf else None)}
        if vocab is not None:
            head.update(format_version=vocab_format.FORMAT_VERSION, compression=vocab_format.describe_compression(data),
                        source=vocab.source)
        if isinstance(tok, Encoding):  # a .tiktoken, tekken or GPT-2 source
            body = {"kind": "tiktoken-style encoding", "name": tok.name, "model": "bpe (tiktoken ranks)",
                    "n_vocab": tok.n_vocab, "special_tokens": dict(tok._special_tokens), "pattern": tok._pat_str}
        else:
            body = _describe(tok)
        info = {**head, **body}
    if args.json:
        print(json.dumps(info, ensure_ascii=False, indent=2))
        return 0
    specials = info.pop("special_tokens", {}) or {}
    for k, v in info.items():
        if v is not None:
            print(f"{k:>24}: {v}")
    print(f"{'special_tokens':>24}: {len(specials)}")
    shown = sorted(specials.items(), key=lambda kv: kv[1])
    for s_, i in shown[:12]:
        print(f"{'':>24}  {i}\t{s_}")
    if len(shown) > 12:
        print(f"{'':>24}  ... and {len(shown) - 12} more")
    return 0


def _prog() -> str:
    """How the user called us: `python -m anytok` runs __main__.py, the installed script is `anytok`."""
    return "python -m anytok" if os.path.basename(sys.argv[0] or "") == "__main__.py" else "anytok"


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    ap = argparse.ArgumentParser(prog=_prog(), description="Exact tiktoken-compatible tokenizer in pure Python.")
    ap.add_argument("--version", action="version", version=f"anytok {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser(
        "count", help="count the tokens of files, folders (walked, .gitignore honoured) or stdin",
        description="Count tokens of files, folders and stdin.  Exit status: 0 all counted, 1 a file could "
        "not be read or counted (the rest still are), 2 usage error, 3 a total exceeds --max-tokens.")
    p.add_argument("paths", nargs="*", help="files and folders ('-' or nothing: stdin)")
    _add_encoding_args(p, multi=True)
    _add_special_arg(p, default="text")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="add characters, bytes and milliseconds per file, and list skipped binary files")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--sort", choices=("path", "tokens", "none"), default="path",
                   help="order of the files: by path (default), by tokens (most first), or as found")
    p.add_argument("--max-tokens", type=int, metavar="N", help="exit with status 3 if a total exceeds N tokens")
    p.add_argument("-j", "--jobs", type=int, metavar="N",
                   help="processes to use (default: all CPUs for 4 MiB of input or more, else 1; 0: all CPUs)")
    p.add_argument("--hidden", action="store_true", help="also walk hidden files and folders (.git is always skipped)")
    p.add_argument("--no-ignore", action="store_true", help="do not honour .gitignore files")
    p.add_argument("-g", "--include", action="append", metavar="GLOB",
                   help="in folders, count only files matching GLOB (.gitignore syntax; repeatable)")
    p.add_argument("--exclude", action="append", metavar="GLOB",
                   help="in folders, skip files and folders matching GLOB (.gitignore syntax; repeatable)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line and no note of skipped binary files")
    p.add_argument("--field", metavar="NAME", help="count the field NAME of each record of .jsonl / .parquet files "
                   "(gzip, zstd too) as `tokenize` reads them, instead of their whole text")
    p.add_argument("--chat", metavar="FILE.json", help="count a conversation (a messages array, a Chat "
                   "Completions or Responses request; '-' for stdin) as -m MODEL sees it, or with --vocab FOLDER's chat template")
    p.set_defaults(func=cmd_count)

    p = sub.add_parser("encode", help="print the token ids of a file, stdin or --text")
    p.add_argument("file", nargs="?", default="-", help="the file to encode ('-' or nothing: stdin)")
    p.add_argument("-t", "--text", help="encode this text instead of a file")
    _add_encoding_args(p)
    _add_special_arg(p)
    p.add_argument("--json", action="store_true", help="print a JSON list")
    p.add_argument("--show", action="store_true", help="one token per line with its bytes")
    p.set_defaults(func=cmd_encode)

    p = sub.add_parser("decode", help="print the text of token ids (arguments or stdin)")
    p.add_argument("ids", nargs="*", metavar="ID",
                   help="token ids (nothing: read them from stdin, as a JSON list or separated by whitespace)")
    _add_encoding_args(p)
    p.set_defaults(func=cmd_decode)

    p = sub.add_parser("list", help="list the bundled encodings")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("convert", help="convert any tokenizer file (tokenizer.json, .model, tekken, .tiktoken, "
                       "GPT-2 folder, GGUF model file, .atok) to an anytok .atok file")
    p.add_argument("src", help="the tokenizer file or folder to convert (any format `anytok.load` reads)")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="the file to write (.atok, or tokenizer.json with --to)")
    p.add_argument("--like", help="take the split pattern and special tokens of this bundled encoding")
    p.add_argument("--pat-str", help="for a .tiktoken file: its split pattern (a regex or a bundled encoding's name)")
    p.add_argument("--specials", help='special tokens as JSON, e.g. \'{"<|endoftext|>": 100257}\'')
    p.add_argument("--name", help="encoding name to store")
    p.add_argument("--compression", choices=("lzma", "zlib", "none"), default="zlib",
                   help="zlib (default: loads fastest), lzma (smallest) or none")
    p.add_argument("--to", choices=("atok", "tokenizer.json"), default="atok",
                   help="output format: an anytok .atok file (default), or a Hugging Face tokenizer.json "
                        "(from a tokenizer.json or a BPE GGUF)")
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser("inspect", help="describe a tokenizer file (.atok or any format convert reads)")
    p.add_argument("file", help="the tokenizer file or folder to describe")
    p.add_argument("--like", help="for a .tiktoken file: the bundled encoding whose pattern and specials it uses")
    p.add_argument("--pat-str", help="for a .tiktoken file: its split pattern (a regex or a bundled encoding's name)")
    p.add_argument("--json", action="store_true", help="print the description as one JSON document")
    p.set_defaults(func=cmd_inspect)

    from .train import add_parser as add_train_parser

    add_train_parser(sub)

    from .tokenize import add_parser as add_tokenize_parser

    add_tokenize_parser(sub)

    return ap


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    if not argv:  # a bare `anytok`: what it can do, not a usage error
        parser.print_help()
        return 0
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # e.g. `| head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (ValueError, KeyError, OSError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        special = re.match(r"Encountered text corresponding to disallowed special token ('.*?'|\".*?\")\.", str(msg))
        if isinstance(e, ValueError) and special:
            # tiktoken's words name its Python arguments; here the choice is a flag.
            msg = (f"the text spells the special token {special.group(1)}: pass --special text to count it as "
                   "plain text, or --special allow to count it as that special token")
        print(f"anytok: error: {msg}", file=sys.stderr)
        return 1



def run() -> None:
    """`python -m anytok` and the `anytok` script: `main()`, then a quick exit.

    Freeing a loaded vocabulary object by object at interpreter exit takes 20-50 ms (more after
    CJK text, whose tables are larger), a sizeable part of a whole `anytok count FILE`; the
    process ends right after flushing its output instead.  Everything anytok writes is closed
    by then (files by `with`, process pools by `close` and `join`).
    """
    status = main()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    try:
        sys.stderr.flush()
    except BrokenPipeError:
        pass
    os._exit(status if isinstance(status, int) else 1)

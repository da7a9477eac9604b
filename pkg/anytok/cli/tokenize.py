"""`python -m anytok tokenize`: files into training shards (see anytok.datasets).

    python -m anytok tokenize INPUT... -o OUTDIR --format llmc|megatron|npy [-e ENCODING | --vocab FILE]
                              [--field text] [--jobs N] [--engine local|dask|ray] [--scheduler ADDRESS]
                              [--shard-tokens N] [--dtype auto|uint16|uint32|int32] [--eot TOKEN|ID|none]
                              [--on-error fail|skip] [--decode-errors strict|replace] [-q]

Exit status: 0 done (or already done), 1 an error (bad input with --on-error fail, another
job's folder, a dtype too small ...), 2 a usage error.
"""

from __future__ import annotations

import argparse
import sys
import time

from .progress import _size


def add_parser(sub) -> None:
    from .options import _add_encoding_args

    p = sub.add_parser(
        "tokenize", help="tokenize files into training shards (llm.c .bin, Megatron .bin/.idx, .npy), resumably",
        description="Tokenize .txt (one document per file), .jsonl (--field) and .parquet files, gzip or zstd "
        "compressed, into shards: llm.c .bin, Megatron-LM .bin + .idx, or .npy.  Documents are delimited by "
        "--eot (before each document for llmc, after it otherwise).  A manifest.json in OUTDIR lists finished "
        "shards: rerunning the same command after an interruption finishes the job.")
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="files and folders (walked as `count` walks them)")
    p.add_argument("-o", "--output", required=True, metavar="OUTDIR", help="folder for the shards and manifest.json")
    p.add_argument("--format", required=True, choices=("llmc", "megatron", "npy"),
                   help="llm.c .bin shards, Megatron-LM indexed dataset (.bin + .idx), or .npy arrays")
    _add_encoding_args(p)
    p.add_argument("--field", default="text", help="the text's field in .jsonl records / column in .parquet "
                   "(default: text)")
    p.add_argument("-j", "--jobs", type=int, metavar="N",
                   help="worker processes of the local engine (default: all CPUs)")
    p.add_argument("--engine", choices=("local", "dask", "ray"), default="local",
                   help="local processes (default), a Dask cluster (with --scheduler) or Ray")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="the Dask scheduler's address (tcp://HOST:8786); for Ray the cluster's address")
    p.add_argument("--shard-tokens", type=int, default=None, metavar="N",
                   help="tokens per shard (default: 100,000,000 as llm.c; megatron shards end at a document)")
    p.add_argument("--dtype", choices=("auto", "uint16", "uint32", "int32"), default="auto",
                   help="token type (default: uint16 if every id fits, else uint32; int32 for megatron)")
    p.add_argument("--eot", default=None, metavar="TOKEN|ID|none",
                   help="the document delimiter (default: <|endoftext|>); 'none' for no delimiter")
    p.add_argument("--eot-position", choices=("before", "after"), default=None,
                   help="the delimiter before or after each document (default: before for llmc, after otherwise)")
    p.add_argument("--on-error", choices=("fail", "skip"), default="fail",
                   help="a malformed or incomplete record: stop (default) or leave it out, listed in the manifest")
    p.add_argument("--decode-errors", choices=("strict", "replace"), default="strict",
                   help="invalid UTF-8: a bad record naming file and byte offset (default), or U+FFFD")
    p.add_argument("--hidden", action="store_true", help="also walk hidden files and folders")
    p.add_argument("--no-ignore", action="store_true", help="do not honour .gitignore files")
    p.add_argument("-g", "--include", action="append", metavar="GLOB", help="in folders, only files matching GLOB")
    p.add_argument("--exclude", action="append", metavar="GLOB", help="in folders, skip what matches GLOB")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line and no summary")
    p.set_defaults(func=cmd_tokenize)


def _num(n: float) -> str:
    if n >= 10**9:
        return f"{n / 10**9:.2f}G"
    if n >= 10**6:
        return f"{n / 10**6:.1f}M"
    if n >= 10**4:
        return f"{n / 10**3:.0f}k"
    return f"{n:.0f}"


class LiveLine:
    """documents/s, MB/s, tokens/s and ETA on stderr, on a terminal only, at most 10 times a second."""

    def __init__(self, enabled: bool, stream=None):
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.last = 0.0
        self.shown = False
        self.first = None

    def __call__(self, info: dict) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if self.first is None:
            self.first = (info["disk_bytes"], info["seconds"])
        if now - self.last < 0.1:
            return
        self.last = now
        secs = max(info["seconds"], 1e-9)
        rate = (info["disk_bytes"] - self.first[0]) / max(secs - self.first[1], 1e-9) if secs > self.first[1] else 0
        parts = [f"{_num(info['documents'])} docs", f"{_num(info['documents'] / secs)} docs/s",
                 f"{_size(info['bytes'] / secs)}/s", f"{_num(info['tokens'] / secs)} tokens/s"]
        left = info["total_bytes"] - info["disk_bytes"]
        if rate > 0 and left > 0:
            eta = left / rate
            parts.append(f"ETA {eta:.0f}s" if eta < 100 else f"ETA {eta / 60:.0f}min")
        self.stream.write("\r\x1b[K" + " · ".join(parts))
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def cmd_tokenize(args: argparse.Namespace) -> int:
    from .. import datasets
    from ..model import encoding_name_for_model
    from .walk import Walker
    from .options import resolve_pat_str

    if args.scheduler and args.engine == "local":
        print("anytok: error: --scheduler goes with --engine dask or ray", file=sys.stderr)
        return 2
    if args.engine == "dask" and not args.scheduler:
        print("anytok: error: --engine dask needs --scheduler ADDRESS (the Dask scheduler's, e.g. tcp://10.0.0.1:8786)",
              file=sys.stderr)
        return 2
    encoding = args.encoding
    if args.model:
        encoding = encoding_name_for_model(args.model)
    walker = Walker(hidden=args.hidden, gitignore_files=not args.no_ignore, include=args.include or [],
                    exclude=args.exclude or [])
    live = LiveLine(not args.quiet and sys.stderr.isatty())
    t0 = time.perf_counter()
    try:
        summary = datasets.tokenize(
            args.inputs, args.output, args.format, encoding=None if args.vocab else encoding, vocab=args.vocab,
            like=args.like, pat_str=resolve_pat_str(args.pat_str), field=args.field, jobs=args.jobs, engine=args.engine,
            scheduler=args.scheduler,
            shard_tokens=args.shard_tokens if args.shard_tokens is not None else datasets.DEFAULT_SHARD_TOKENS,
            dtype=args.dtype, eot=... if args.eot is None else args.eot, eot_position=args.eot_position,
            on_error=args.on_error, decode_errors=args.decode_errors, progress=live, walker=walker)
    except (datasets.DatasetError, datasets.InputError, ImportError) as e:
        live.close()
        print(f"anytok: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        live.close()
        print("anytok: interrupted; the finished shards are kept: rerun the same command to finish",
              file=sys.stderr)
        return 130
    finally:
        live.close()
    if not args.quiet:
        secs = time.perf_counter() - t0
        print(f"{args.output}: {summary['shards']} shard{'s' if summary['shards'] != 1 else ''}, "
              f"{summary['tokens']:,} tokens ({summary['dtype']}), {summary['documents']:,} documents from "
              f"{summary['inputs']} file{'s' if summary['inputs'] != 1 else ''}, {secs:.1f} s", file=sys.stderr)
        if summary["skipped"]:
            print(f"anytok: skipped {summary['skipped']} bad record{'s' if summary['skipped'] != 1 else ''} "
                  f"(listed in manifest.json):", file=sys.stderr)
            for m in summary["skipped_records"][:10]:
                print(f"  {m}", file=sys.stderr)
            if summary["skipped"] > 10:
                print(f"  ... and {summary['skipped'] - 10} more", file=sys.stderr)
    return 0

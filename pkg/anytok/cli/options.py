"""What the commands share: reading text, naming tokenizers (-e/-m/--vocab/--like/--pat-str), and
the special-token flag.

Data flow: argparse values -> `load_tokenizers` / `_encoding` -> tokenizers (bundled encodings,
or files through `anytok.load`) with the keyword arguments each one counts with.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ..core import Encoding
from ..files import load
from ..model import encoding_name_for_model
from ..registry import get_encoding, list_encoding_names


def _read_text(path: str) -> str:
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        data = Path(path).read_bytes()
    # Undecodable bytes become lone surrogates, which encode() turns into U+FFFD (as tiktoken).
    return data.decode("utf-8", errors="surrogateescape")


def resolve_pat_str(pat: str | None) -> str | None:
    """--pat-str o200k_base means that encoding's split pattern (as train's --pattern); else a regex."""
    return get_encoding(pat)._pat_str if pat in list_encoding_names() else pat


def _load_any(path: str, args: argparse.Namespace):
    """Any tokenizer file anytok.load() reads; a .tiktoken file takes its pattern and special
    tokens from --like / --pat-str / --specials."""
    like = get_encoding(args.like) if getattr(args, "like", None) else None
    pat = getattr(args, "pat_str", None) or (like._pat_str if like else None)
    pat = resolve_pat_str(pat)
    specials = getattr(args, "specials", None)
    specials = json.loads(specials) if specials else (dict(like._special_tokens) if like else None)
    try:
        return load(path, pat_str=pat, special_tokens=specials, name=getattr(args, "name", None))
    except ValueError as e:
        if pat is None and str(e).endswith("pass pat_str="):
            # The Python API's words; on the command line the same choice is made with flags.
            raise ValueError(str(e)[: -len("pass pat_str=")] + "pass --pat-str with the split pattern it "
                             "was made with (a bundled encoding's name, e.g. --pat-str o200k_base, or a regex), or "
                             "--like ENCODING for a bundled encoding's pattern and special tokens") from None
        raise


def _encoding(args: argparse.Namespace):
    if getattr(args, "vocab", None):
        return _load_any(args.vocab, args)
    if getattr(args, "model", None):
        return get_encoding(encoding_name_for_model(args.model))
    return get_encoding(args.encoding)


def _special_kwargs(mode: str, tok=None) -> dict:
    if tok is not None and not isinstance(tok, Encoding):
        # A tokenizer.json / SentencePiece model: its special tokens are never matched in text
        # unless --special allow, which also adds what the post-processor adds (BOS, ...).
        return {"add_special_tokens": True} if mode == "allow" else {}
    if mode == "allow":
        return {"allowed_special": "all"}
    if mode == "text":
        return {"disallowed_special": ()}
    return {}


def _add_encoding_args(p: argparse.ArgumentParser, multi: bool = False) -> None:
    if multi:
        p.add_argument("-e", "--encoding", action=_TokenizerArg, dest="tokenizers", metavar="NAME[,NAME...]",
                       help="bundled encoding(s), one column each (default: o200k_base)")
        p.add_argument("-m", "--model", action=_TokenizerArg, dest="tokenizers", metavar="MODEL[,MODEL...]",
                       help="model name(s), e.g. gpt-4o (picks its encoding)")
        p.add_argument("--vocab", action=_TokenizerArg, dest="tokenizers", metavar="FILE",
                       help="a tokenizer file or folder (repeatable): .atok, tokenizer.json, SentencePiece .model, "
                       "tekken .json, GGUF model file, a folder holding one of these, .tiktoken (with --like or "
                       "--pat-str); its column is headed by the file's name")
    else:
        g = p.add_mutually_exclusive_group()
        g.add_argument("-e", "--encoding", default="o200k_base", help="bundled encoding name (default: o200k_base)")
        g.add_argument("-m", "--model", help="model name, e.g. gpt-4o (picks its encoding)")
        g.add_argument("--vocab", help="a tokenizer file or folder to use instead of a bundled encoding: .atok, "
                       "tokenizer.json, SentencePiece .model, tekken .json, GGUF model file, a folder holding one of "
                       "these, .tiktoken (with --like or --pat-str)")
    p.add_argument("--like", help="for a .tiktoken --vocab: the bundled encoding whose pattern and specials it uses")
    p.add_argument("--pat-str", help="for a .tiktoken --vocab: its split pattern (a regex, or a bundled encoding's "
                   "name for that encoding's pattern)")


def _add_special_arg(p: argparse.ArgumentParser, default: str = "text") -> None:
    p.add_argument(
        "--special",
        choices=("raise", "allow", "text"),
        default=default,
        help="text that spells a special token: plain text (default), the special token (allow), "
        "or an error (raise, as tiktoken's encode)",
    )


class _TokenizerArg(argparse.Action):
    """-e/-m/--vocab, repeatable and comma-separated for -e/-m, kept in command-line order."""

    def __call__(self, parser, namespace, values, option_string=None):
        specs = list(getattr(namespace, "tokenizers", None) or [])
        kind = {"-e": "encoding", "--encoding": "encoding", "-m": "model", "--model": "model"}.get(option_string, "vocab")
        parts = [values] if kind == "vocab" else [v for v in values.split(",") if v]
        specs += [(kind, v) for v in parts]
        setattr(namespace, "tokenizers", specs)


def _vocab_label(path: str, all_paths: list[str]) -> str:
    """A --vocab column's heading: the file's (or folder's) name, with as many parent folders as
    it takes to tell it apart from the other --vocab paths."""
    parts = os.path.normpath(path).split(os.sep)
    others = [os.path.normpath(p).split(os.sep) for p in all_paths if p != path]
    for k in range(1, len(parts) + 1):
        if all(o[-k:] != parts[-k:] for o in others):
            return os.path.join(*parts[-k:])
    return path


def load_tokenizers(specs, like, pat_str, special) -> list:
    """The tokenizers named on the command line, each with its label and count arguments."""
    from .count import Tok

    ns = argparse.Namespace(like=like, pat_str=pat_str, specials=None, name=None)
    toks = []
    for kind, value in specs or [("encoding", "o200k_base")]:
        if kind == "vocab":
            tok = _load_any(value, ns)
            label = _vocab_label(value, [v for k, v in specs if k == "vocab"])
        elif kind == "model":
            tok = get_encoding(encoding_name_for_model(value))
            label = value
        else:
            tok = get_encoding(value)
            label = value
        is_enc = isinstance(tok, Encoding)
        toks.append(Tok(label, tok, _special_kwargs(special, tok), ranged=is_enc and special != "allow",
                        raise_special=is_enc and special == "raise"))
    return toks

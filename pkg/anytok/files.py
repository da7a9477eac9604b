"""Saving tokenizers to the anytok binary format, and loading any supported tokenizer file.

`load()` recognizes an anytok `.atok` file, a tiktoken `.tiktoken` file (given its pattern),
a Hugging Face `tokenizer.json`, a SentencePiece `.model`, a Mistral tekken JSON, and GPT-2's
`encoder.json` + `vocab.bpe` (a folder holding them), and the tokenizer in a GGUF model file
(only its header is read).  The converters for each format live in
`anytok/convert/`, one module per format, imported only when needed.
"""

from __future__ import annotations

import json
import os
from typing import Any, Union

from . import format as vocab_format
from .convert.tiktoken_bpe import VocabSourceError, load_tiktoken_bpe, read_source
from .core import Encoding
from ._gc import gc_paused
from .registry import encoding_from_bytes

PathOrBytes = Union[str, "os.PathLike[str]", bytes]


def encoding_to_bytes(enc: Encoding, *, compression: str = "lzma", source: str = "") -> bytes:
    """The anytok binary form of `enc` (deterministic).

    Records whether the vocabulary is regular (`Encoding.is_regular`), which takes a look at
    every token the first time.
    """
    vocab = vocab_format.VocabData.from_mergeable_ranks(
        enc.name,
        enc._pat_str,
        enc._mergeable_ranks,
        enc._special_tokens,
        explicit_n_vocab=getattr(enc, "_explicit_n_vocab", None),
        source=source,
        properties=vocab_format.PROP_REGULAR if enc.is_regular() else 0,
    )
    return vocab_format.dumps(vocab, compression=compression)


def save_encoding(enc: Encoding, path: str | os.PathLike[str], *, compression: str = "lzma", source: str = "") -> None:
    """Write `enc` to `path` in the anytok binary format (`.atok`).

    ```
    >>> anytok.save_encoding(enc, "my_encoding.atok")
    >>> anytok.load_encoding("my_encoding.atok").encode("hi") == enc.encode("hi")
    True
    ```
    """
    data = encoding_to_bytes(enc, compression=compression, source=source)
    with open(path, "wb") as f:
        f.write(data)


def load_encoding(
    source: PathOrBytes,
    *,
    name: str | None = None,
    pat_str: str | None = None,
    special_tokens: dict[str, int] | None = None,
    explicit_n_vocab: int | None = None,
) -> Encoding:
    """Load an Encoding from an anytok binary (path or bytes) or from a `.tiktoken` file.

    A `.tiktoken` file holds only the ranks, so `pat_str` (and usually `special_tokens` and
    `name`) must then be given.  Raises `VocabFormatError` for a damaged anytok file.
    """
    data = read_source(source)
    what = str(source) if isinstance(source, (str, os.PathLike)) else "vocab data"
    if data.startswith(vocab_format.MAGIC):
        enc = encoding_from_bytes(data, what)
        if name is not None:
            enc.name = name
        return enc
    if pat_str is None:
        raise ValueError(f"{what} is not an anytok vocab file; to load it as a .tiktoken file, pass pat_str=")
    ranks = load_tiktoken_bpe(data)
    return Encoding(
        name or (os.path.basename(str(source)).split(".")[0] if isinstance(source, (str, os.PathLike)) else "custom"),
        pat_str=pat_str,
        mergeable_ranks=ranks,
        special_tokens=special_tokens or {},
        explicit_n_vocab=explicit_n_vocab,
    )


# A tokenizer stored as a config names its kind in config["format"]: how to build it back.
def _config_kinds() -> dict[str, Any]:
    kinds: dict[str, Any] = {}
    try:
        from .sentencepiece.tokenizer import CONFIG_FORMAT as SP, SentencePieceTokenizer

        kinds[SP] = SentencePieceTokenizer.from_config
    except ImportError:
        pass
    try:
        from .pipeline.tokenizer import CONFIG_FORMAT as HF, Tokenizer

        kinds[HF] = Tokenizer.from_config
    except ImportError:
        pass
    try:
        from .gguf.tokenizer import CONFIG_FORMAT as GGUF, GGUFTokenizer

        kinds[GGUF] = GGUFTokenizer.from_config
    except ImportError:
        pass
    return kinds


def tokenizer_from_bytes(data: bytes, what: str = "vocab file"):
    """An Encoding, or another tokenizer, from the bytes of an anytok `.atok` file."""
    with gc_paused():
        vocab = vocab_format.loads(data, what, check_duplicates=False)
        if vocab.config is None:
            return Encoding._from_vocab(vocab, what)
    kind = vocab.config.get("format")
    build = _config_kinds().get(kind)
    if build is None:
        raise vocab_format.VocabFormatError(f"{what}: holds a tokenizer of kind {kind!r}, which this anytok cannot build")
    try:
        with gc_paused():
            return build(vocab.config)
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        from .errors import UnsupportedTokenizerError

        if isinstance(e, (vocab_format.VocabFormatError, UnsupportedTokenizerError)):
            raise
        raise vocab_format.VocabFormatError(f"{what}: inconsistent {kind} configuration: {e}") from e


def tokenizer_to_bytes(tok, *, compression: str = "zlib", source: str = "") -> bytes:
    """The anytok binary form of any tokenizer anytok can load (deterministic)."""
    if isinstance(tok, Encoding):
        return encoding_to_bytes(tok, compression=compression, source=source)
    vocab = vocab_format.VocabData(name=getattr(tok, "name", ""), config=tok.to_config(), source=source)
    return vocab_format.dumps(vocab, compression=compression)


def save(tok, path: str | os.PathLike[str], *, compression: str = "zlib", source: str = "") -> None:
    """Write any tokenizer (an Encoding, a HF pipeline, a SentencePiece model) as `.atok`."""
    data = tokenizer_to_bytes(tok, compression=compression, source=source)
    with open(path, "wb") as f:
        f.write(data)


def _named_gguf(source) -> bool:
    """A path named *.gguf: read as GGUF whatever it starts with, so that a damaged one is
    reported by the header reader (a VocabFormatError naming the bad magic)."""
    return isinstance(source, (str, os.PathLike)) and os.fspath(source).lower().endswith(".gguf") \
        and os.path.isfile(source)


def _is_gguf(source) -> bool:
    from .gguf.header import MAGIC

    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source[:4]) == MAGIC
    if isinstance(source, (str, os.PathLike)):
        try:
            with open(source, "rb") as f:
                return f.read(4) == MAGIC
        except OSError:
            return False
    return False


def _sniff(data: bytes) -> str:
    if data.startswith(vocab_format.MAGIC):
        return "atok"
    head = data[:4096].lstrip()
    if head.startswith(b"{"):
        return "json"
    first = head.split(b"\n", 1)[0].split()
    if len(first) == 2 and first[1].isdigit():
        return "tiktoken"
    if data[:1] == b"\x0a":  # protobuf field 1 (pieces), length-delimited: a SentencePiece model
        return "sentencepiece"
    return "unknown"


def load(
    source: PathOrBytes,
    *,
    name: str | None = None,
    pat_str: str | None = None,
    special_tokens: dict[str, int] | None = None,
    config: str | os.PathLike | None = None,
):
    """Load a tokenizer from a file, a folder, or bytes, whatever its format.

    `config`: a tokenizer_config.json whose chat template `tok.apply_chat_template` uses (a
    folder's own tokenizer_config.json is read by default).

    Returns an `Encoding` for tiktoken-style vocabularies (`.atok`, `.tiktoken` with
    `pat_str`, tekken JSON, GPT-2 files) and a tokenizer object with the same core API
    (`encode`, `decode`, `count`, ...) for Hugging Face `tokenizer.json` and SentencePiece
    `.model` files, and for GGUF model files (llama.cpp's ids; only the header is read).  Raises `VocabFormatError` / `VocabSourceError` for a damaged file and
    `UnsupportedTokenizerError` for a configuration anytok cannot reproduce exactly.

    ```
    >>> tok = anytok.load("tokenizer.json")
    >>> anytok.save(tok, "llama3.atok")      # compact, loads back identically
    ```
    """
    if config is not None or (isinstance(source, (str, os.PathLike)) and os.path.isdir(source)
                              and os.path.isfile(os.path.join(source, "tokenizer_config.json"))):
        from .chat.template import ChatTemplates

        if isinstance(source, (str, os.PathLike)) and os.path.isdir(source):
            tok = _load_folder(os.fspath(source), name)
        else:
            tok = load(source, name=name, pat_str=pat_str, special_tokens=special_tokens)
        explicit = config is not None
        if config is None:
            config = os.path.join(source, "tokenizer_config.json")
        if not hasattr(tok, "apply_chat_template"):
            if explicit:
                raise VocabSourceError(f"{config}: chat templates apply to Hugging Face tokenizer.json "
                                       f"tokenizers, not to {type(tok).__name__}")
            return tok  # a folder's config beside another format: no template to attach
        # A folder's own damaged config fails when a template is applied, not the load.
        tok.chat_templates = ChatTemplates.from_file(config) if explicit else ChatTemplates.lazy(config)
        return tok
    if isinstance(source, (str, os.PathLike)) and os.path.isdir(source):
        return _load_folder(os.fspath(source), name)
    if _is_gguf(source) or _named_gguf(source):  # a model file: read its header only, never the whole file
        from .gguf import load_gguf

        return load_gguf(source, name=name)
    data = read_source(source)
    what = str(source) if isinstance(source, (str, os.PathLike)) else "tokenizer data"
    if name is None and isinstance(source, (str, os.PathLike)):
        name = os.path.basename(os.fspath(source)).split(".")[0] or None
    kind = _sniff(data)
    if kind == "atok":
        tok = tokenizer_from_bytes(data, what)
        return tok
    if kind == "json":
        try:
            obj = json.loads(data)
        except ValueError as e:
            raise VocabSourceError(f"{what}: not valid JSON ({e})") from None
        if isinstance(obj, dict) and "model" in obj and ("pre_tokenizer" in obj or "normalizer" in obj):
            from .pipeline.hf_json import load_tokenizer_json

            return load_tokenizer_json(obj, name=name)
        if isinstance(obj, dict) and "vocab" in obj and "config" in obj:
            from .convert.tekken import load_tekken

            return load_tekken(data, name=name)
        raise VocabSourceError(f"{what}: a JSON file, but neither a tokenizer.json nor a tekken file")
    if kind == "tiktoken":
        if pat_str is None:
            raise ValueError(f"{what} is a .tiktoken file, which holds no split pattern: pass pat_str=")
        return load_encoding(data, name=name, pat_str=pat_str, special_tokens=special_tokens)
    if kind == "sentencepiece":
        from .sentencepiece.model_file import load_sentencepiece_model

        return load_sentencepiece_model(data, name=name)
    raise VocabSourceError(f"{what}: not a tokenizer file anytok recognizes")


def _load_folder(folder: str, name: str | None):
    def has(f: str) -> bool:
        return os.path.exists(os.path.join(folder, f))

    name = name or os.path.basename(folder.rstrip("/")) or None
    for f in ("tokenizer.atok", "tokenizer.json", "tokenizer.model", "tekken.json"):
        if has(f):
            return load(os.path.join(folder, f), name=name)
    if has("encoder.json") and has("vocab.bpe"):
        from .convert.gpt2 import data_gym_to_mergeable_bpe_ranks

        ranks = data_gym_to_mergeable_bpe_ranks(os.path.join(folder, "vocab.bpe"), os.path.join(folder, "encoder.json"))
        from .registry import get_encoding

        gpt2 = get_encoding("gpt2")
        return Encoding(name or "gpt2", pat_str=gpt2._pat_str, mergeable_ranks=ranks,
                        special_tokens={"<|endoftext|>": len(ranks)})
    raise VocabSourceError(f"{folder}: no tokenizer file found in this folder")

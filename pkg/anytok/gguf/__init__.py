"""The tokenizer inside a GGUF model file (llama.cpp, Ollama, LM Studio), as llama.cpp runs it.

Data flows:

    file / bytes / seekable file
      -> anytok.gguf.header.read_gguf_header   (the key-values only, never the tensors)
      -> gguf.vocab.LlamaVocab                  (what llama.cpp's loader makes of tokenizer.*:
                                                 model type, pre-tokenizer type, token
                                                 attributes, special ids, add-BOS/EOS flags)
      -> gguf.tokenizer.GGUFTokenizer           (partition on user-defined tokens, then the
                                                 model's engine: BPE through anytok.pipeline,
                                                 SPM / WPM / UGM as llama.cpp does them, UGM
                                                 with anytok.sentencepiece's charsmap)
      -> gguf.offsets                           (encode_with_offsets: the same steps keeping
                                                 where each character came from)

```
>>> tok = anytok.load("Meta-Llama-3-8B-Instruct.Q4_K_M.gguf")
>>> tok.encode("Hello world")                 # llama.cpp: add_special=false, parse_special=false
[9906, 1917]
>>> tok.encode("Hello world", add_special_tokens=True)
[128000, 9906, 1917]
```
"""

from __future__ import annotations

import os

from ..errors import UnsupportedTokenizerError

__all__ = ["load_gguf", "GGUFTokenizer", "UnsupportedTokenizerError"]


def load_gguf(source, *, name: str | None = None, what: str | None = None, size: int | None = None):
    """The tokenizer of a GGUF file given as a path, bytes or a seekable binary file.

    Reads only the header.  `what` names the source in errors; `size` (with bytes holding only
    the beginning of a file, at least its header) is the whole file's size.  `VocabFormatError` for a damaged header,
    `UnsupportedTokenizerError` (naming what) for a tokenizer anytok cannot run exactly.
    """
    from .header import read_gguf_header
    from .._gc import gc_paused
    from .tokenizer import GGUFTokenizer
    from .vocab import LlamaVocab

    if what is None and isinstance(source, (str, os.PathLike)):
        what = os.fspath(source)
    with gc_paused():
        header = read_gguf_header(source, what=what, size=size)
        if name is None:
            if what is not None:
                name = os.path.basename(what).rsplit(".", 1)[0] or None
            name = name or str(header.kv.get("general.name") or "gguf")
        return GGUFTokenizer(LlamaVocab(header, what or name), name=name)


def __getattr__(name: str):
    if name == "GGUFTokenizer":
        from .tokenizer import GGUFTokenizer

        return GGUFTokenizer
    raise AttributeError(name)

"""The work of one batch, the same in every engine: records -> texts -> token ids -> bytes."""

from __future__ import annotations

from array import array
from typing import NamedTuple

from . import formats
from .readers import Batch, records


class Settings(NamedTuple):
    field: str
    decode_errors: str  # "strict" (an error naming file and byte offset) or "replace" (U+FFFD)
    dtype: str
    eot: int | None  # the delimiting token, or None
    eot_before: bool  # llm.c puts it before each document, the others after


class BatchResult(NamedTuple):
    file_index: int
    data: bytes  # the tokens of every document of the batch, little-endian in the dtype
    docs: array  # ("q") record index of each document
    lengths: array  # ("q") tokens of each document (delimiter included)
    errors: list  # (record index, message)
    chars: int
    nbytes: int  # bytes of the records (decompressed)


def encoder(tok):
    """The function giving a text's ids: for a tiktoken-style encoding, special-token text is
    plain text (`encode_ordinary`, as llm.c's fineweb.py for GPT-2); a tokenizer.json or
    SentencePiece model adds no special tokens (no post-processor), but text spelling one of
    its added tokens becomes that token, as `tokenizers`' encode(add_special_tokens=False)
    does (llm.c's Llama 3 path splits them instead: not offered yet)."""
    from ..core import Encoding

    if isinstance(tok, Encoding):
        return tok.encode_ordinary
    return tok.encode


def tokenize_batch(tok, settings: Settings, batch: Batch) -> BatchResult:
    encode = encoder(tok)
    ids: list[int] = []
    docs = array("q")
    lengths = array("q")
    errors = []
    chars = 0
    eot = settings.eot
    for index, text, error in records(batch, settings.field, settings.decode_errors):
        if error is not None:
            errors.append((index, error))
            continue
        if text is None:  # a blank line
            continue
        chars += len(text)
        before = len(ids)
        if eot is not None and settings.eot_before:
            ids.append(eot)
        ids += encode(text)
        if eot is not None and not settings.eot_before:
            ids.append(eot)
        docs.append(index)
        lengths.append(len(ids) - before)
    if batch.kind == "parquet":
        nbytes = sum(len(v.encode("utf-8", "surrogatepass")) for v in batch.records if isinstance(v, str))
    else:
        nbytes = sum(map(len, batch.records))
    data = formats.le_bytes(formats.to_array(settings.dtype, ids))
    return BatchResult(batch.file_index, data, docs, lengths, errors, chars, nbytes)


# ---- training's word counts (anytok.datasets.word_counts) ----

_COUNTERS: dict = {}


class CountResult(NamedTuple):
    file_index: int
    counts: dict  # piece -> occurrences in the batch's documents
    errors: list  # (record index, message)
    documents: int
    nbytes: int


def count_batch(spec: tuple, settings: Settings, batch: Batch) -> CountResult:
    """The pieces of the batch's documents counted as `anytok.train` counts those of `texts`;
    spec: (split pattern, "hf" | "tiktoken")."""
    counter = _COUNTERS.get(spec)
    if counter is None:
        from ..pretokenize import Splitter
        from ..train.words import PieceCounter

        pat_str, style = spec
        hf = style == "hf"
        counter = _COUNTERS[spec] = PieceCounter(Splitter(pat_str, dialect="onig" if hf else "fancy"), gaps=hf)
    from collections import Counter

    counts: Counter = Counter()
    errors = []
    docs = 0
    for index, text, error in records(batch, settings.field, settings.decode_errors):
        if error is not None:
            errors.append((index, error))
        elif text is not None:
            counts.update(counter.pieces(text))
            docs += 1
    if batch.kind == "parquet":
        nbytes = sum(len(v.encode("utf-8", "surrogatepass")) for v in batch.records if isinstance(v, str))
    else:
        nbytes = sum(map(len, batch.records))
    return CountResult(batch.file_index, dict(counts), errors, docs, nbytes)

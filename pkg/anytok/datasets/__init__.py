"""Datasets: whole corpora into the token shards training runs read (`anytok tokenize`).

How the data flows:

1. inputs -> files.  Files and folders in the order given; a folder is walked as `anytok
   count` walks one (name order, .gitignore honoured).  The suffix gives the kind: `.jsonl` /
   `.ndjson` (one JSON object a line, the text in `field`), `.parquet` (the column `field`,
   read with pyarrow: extra `anytok[parquet]`), anything else one document per file; `.gz`
   (gzip) and `.zst` (zstd: Python 3.14's `compression.zstd` or the `zstandard` package,
   extra `anytok[zstd]`) are decompressed on the fly.
2. files -> batches (readers.py).  The coordinating process cuts files into batches of raw
   records (about a megabyte each) without decoding them.
3. batches -> token ids (work.py), in an engine (engines.py): here, a local process pool
   (`jobs`), Dask or Ray.  A record is decoded (UTF-8), parsed, its field taken and encoded
   (special-token text is plain text for tiktoken-style encodings, as `encode_ordinary`;
   see `work.encoder` for tokenizer.json and SentencePiece models); the delimiter (`<|endoftext|>`
   unless told otherwise) goes before each document for llmc, as llm.c's fineweb.py puts it,
   and after it for megatron and npy.  A bad record (undecodable bytes, malformed JSON, a
   missing or non-string field) comes back as an error naming its file and line (row for
   parquet; the byte offset for undecodable bytes); `decode_errors="replace"` turns
   undecodable bytes into U+FFFD instead.
4. token ids -> shards (formats.py).  Results are taken back in input order, whatever the
   engine and the number of workers, so the output is the same byte for byte.  llmc and npy
   shards hold exactly `shard_tokens` tokens (the last fewer), a document running on into
   the next shard as in llm.c; a megatron shard ends after the document that brings it to
   `shard_tokens` or more (documents are never cut).  The token dtype is uint16 when every
   id fits, else uint32 (int32 for megatron, which knows no uint32); a forced dtype too small
   for the vocabulary is an error.
5. shards -> manifest (job.py).  `manifest.json` lists the job (format, tokenizer, inputs
   with size and mtime, options) and every finished shard with its sizes, token and document
   counts, the records skipped before its end, and where in the input it ends (file, record,
   tokens of that record already written).  It is rewritten atomically (temporary file,
   fsync, rename) after each shard.  Rerunning the same job goes on after the last finished
   shard, redoing nothing before it; a different job in the same folder is refused.

`word_counts(inputs, pattern=..., style=...)` runs the same reading, batches and engines to
count the pieces of every document for `anytok.train(word_counts=...)`, as training counts the
pieces of `texts`.

Bad records: `on_error="fail"` (default) stops at the first one in input order with its
message (finished shards stay, listed in the manifest); `"skip"` leaves it out, lists it in the
manifest and counts it in the summary.  Blank lines of a `.jsonl` file are not documents and
not errors.  Memory stays bounded by the batches in flight (two per worker) and one shard's
document lengths (megatron); shard data is streamed to disk.
"""

from .formats import FORMATS, choose_dtype
from .job import DEFAULT_SHARD_TOKENS, MANIFEST, DatasetError, expand_inputs, tokenize, word_counts
from .readers import InputError, iter_texts

__all__ = ["tokenize", "word_counts", "DatasetError", "InputError", "FORMATS", "MANIFEST", "DEFAULT_SHARD_TOKENS",
           "choose_dtype", "expand_inputs", "iter_texts"]

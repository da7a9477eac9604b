"""Incremental, budget and interval operations: one module per kind of encoder.

Data flow: a tokenizer's `appender()` / `prepender()` / `intervals()` / `chunks()` /
`decode_stream()` build one of these structures over the tokenizer, which then answers counts of
growing texts and of slices without re-encoding what cannot have changed.

* `encoding.py`: a tiktoken-style `Encoding` (split pattern + BPE).  Only the pieces next to
  the growing end are re-encoded; a long run's BPE grows a byte at a time in
* `appendable.py`: `AppendableBPE`, the last token of every prefix of a byte string (the `bpe`
  crate's appendable encoder), exact by the uniqueness of BPE encodings.
* `generic.py`: any other tokenizer (tokenizer.json pipelines, SentencePiece, GGUF) through its
  own `count`, or through an equivalent Encoding when it has one (`pipeline/as_encoding.py`).

Every module has the same names for the same things: `Appender`, `Prepender`, `Intervals`,
`StreamDecoder`, `chunk_spans(tokenizer, text, max_tokens, overlap)`.  The tokenizers import
these modules where a method needs them, so loading and encoding import none of this.
"""

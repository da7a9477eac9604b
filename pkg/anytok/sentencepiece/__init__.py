"""SentencePiece models: `.model` files (protobuf), their normalizer, Unigram and BPE."""


class UnsupportedTokenizerError(ValueError):
    """A tokenizer file uses a feature anytok does not implement exactly; the message names it."""

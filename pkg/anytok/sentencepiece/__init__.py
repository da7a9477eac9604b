"""SentencePiece models: `.model` files (protobuf), their normalizer, Unigram and BPE.

One module per stage: protobuf.py / model_proto.py (the file), darts.py + normalizer.py (the
precompiled charsmap and whitespace rules), unigram.py / bpe.py / charword.py (the models),
tokenizer.py (`SentencePieceTokenizer`: encode, decode, config).  precompiled.py and
unigram.from_config serve tokenizer.json's `Precompiled` normalizer and `Unigram` model to the
Hugging Face pipeline (graphemes.py: the grapheme clusters that normalizer needs).
"""

# One error class for every tokenizer format: the Hugging Face pipeline's.
from ..errors import UnsupportedTokenizerError

__all__ = ["UnsupportedTokenizerError"]

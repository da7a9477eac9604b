"""`tokenizers.implementations`: ready-made pipelines over `Tokenizer` (BERT WordPiece,
byte-level BPE, character BPE, SentencePiece BPE and Unigram)."""

from .base_tokenizer import BaseTokenizer
from .bert_wordpiece import BertWordPieceTokenizer
from .byte_level_bpe import ByteLevelBPETokenizer
from .char_level_bpe import CharBPETokenizer
from .sentencepiece_bpe import SentencePieceBPETokenizer
from .sentencepiece_unigram import SentencePieceUnigramTokenizer

__all__ = ["BaseTokenizer", "BertWordPieceTokenizer", "ByteLevelBPETokenizer", "CharBPETokenizer",
           "SentencePieceBPETokenizer", "SentencePieceUnigramTokenizer"]

"""`BertWordPieceTokenizer`: BERT's normalizer and pre-tokenizer, WordPiece, [CLS]/[SEP]."""

from __future__ import annotations

from .. import decoders, trainers
from ..models import WordPiece
from ..normalizers import BertNormalizer
from ..pre_tokenizers import BertPreTokenizer
from ..processors import BertProcessing
from ..tokenizer import Tokenizer
from .base_tokenizer import BaseTokenizer


class BertWordPieceTokenizer(BaseTokenizer):
    def __init__(self, vocab=None, unk_token="[UNK]", sep_token="[SEP]", cls_token="[CLS]", pad_token="[PAD]",
                 mask_token="[MASK]", clean_text=True, handle_chinese_chars=True, strip_accents=None,
                 lowercase=True, wordpieces_prefix="##"):
        if vocab is not None:
            tokenizer = Tokenizer(WordPiece(vocab, unk_token=str(unk_token)))
        else:
            tokenizer = Tokenizer(WordPiece(unk_token=str(unk_token)))
        for token in (unk_token, sep_token, cls_token, pad_token, mask_token):
            if tokenizer.token_to_id(str(token)) is not None:
                tokenizer.add_special_tokens([str(token)])
        tokenizer.normalizer = BertNormalizer(clean_text=clean_text, handle_chinese_chars=handle_chinese_chars,
                                              strip_accents=strip_accents, lowercase=lowercase)
        tokenizer.pre_tokenizer = BertPreTokenizer()
        if vocab is not None:
            sep_id = tokenizer.token_to_id(str(sep_token))
            if sep_id is None:
                raise TypeError("sep_token not found in the vocabulary")
            cls_id = tokenizer.token_to_id(str(cls_token))
            if cls_id is None:
                raise TypeError("cls_token not found in the vocabulary")
            tokenizer.post_processor = BertProcessing((str(sep_token), sep_id), (str(cls_token), cls_id))
        tokenizer.decoder = decoders.WordPiece(prefix=wordpieces_prefix)
        parameters = {"model": "BertWordPiece", "unk_token": unk_token, "sep_token": sep_token,
                      "cls_token": cls_token, "pad_token": pad_token, "mask_token": mask_token,
                      "clean_text": clean_text, "handle_chinese_chars": handle_chinese_chars,
                      "strip_accents": strip_accents, "lowercase": lowercase, "wordpieces_prefix": wordpieces_prefix}
        super().__init__(tokenizer, parameters)

    @staticmethod
    def from_file(vocab: str, **kwargs):
        return BertWordPieceTokenizer(WordPiece.read_file(vocab), **kwargs)

    def train(self, files, vocab_size=30000, min_frequency=2, limit_alphabet=1000, initial_alphabet=[],
              special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], show_progress=True,
              wordpieces_prefix="##"):
        trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                            limit_alphabet=limit_alphabet, initial_alphabet=initial_alphabet,
                                            special_tokens=special_tokens, show_progress=show_progress,
                                            continuing_subword_prefix=wordpieces_prefix)
        self._tokenizer.train([files] if isinstance(files, str) else files, trainer=trainer)

    def train_from_iterator(self, iterator, vocab_size=30000, min_frequency=2, limit_alphabet=1000,
                            initial_alphabet=[], special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
                            show_progress=True, wordpieces_prefix="##", length=None):
        trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                            limit_alphabet=limit_alphabet, initial_alphabet=initial_alphabet,
                                            special_tokens=special_tokens, show_progress=show_progress,
                                            continuing_subword_prefix=wordpieces_prefix)
        self._tokenizer.train_from_iterator(iterator, trainer=trainer, length=length)

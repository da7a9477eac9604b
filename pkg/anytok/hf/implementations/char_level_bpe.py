"""`CharBPETokenizer`: the original BPE (OpenAI GPT): BERT normalizer, `</w>` word ends."""

from __future__ import annotations

from .. import decoders, pre_tokenizers, trainers
from ..models import BPE
from ..normalizers import BertNormalizer, Lowercase, Sequence, unicode_normalizer_from_str
from ..tokenizer import Tokenizer
from .base_tokenizer import BaseTokenizer


class CharBPETokenizer(BaseTokenizer):
    def __init__(self, vocab=None, merges=None, unk_token="<unk>", suffix="</w>", dropout=None, lowercase=False,
                 unicode_normalizer=None, bert_normalizer=True, split_on_whitespace_only=False):
        if vocab is not None and merges is not None:
            tokenizer = Tokenizer(BPE(vocab, merges, dropout=dropout, unk_token=str(unk_token),
                                      end_of_word_suffix=suffix))
        else:
            tokenizer = Tokenizer(BPE(unk_token=str(unk_token), dropout=dropout, end_of_word_suffix=suffix))
        if tokenizer.token_to_id(str(unk_token)) is not None:
            tokenizer.add_special_tokens([str(unk_token)])
        normalizers = []
        if unicode_normalizer:
            normalizers += [unicode_normalizer_from_str(unicode_normalizer)]
        if bert_normalizer:
            normalizers += [BertNormalizer(lowercase=False)]
        if lowercase:
            normalizers += [Lowercase()]
        if len(normalizers) > 0:
            tokenizer.normalizer = Sequence(normalizers) if len(normalizers) > 1 else normalizers[0]
        if split_on_whitespace_only:
            tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
        else:
            tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tokenizer.decoder = decoders.BPEDecoder(suffix=suffix)
        parameters = {"model": "BPE", "unk_token": unk_token, "suffix": suffix, "dropout": dropout,
                      "lowercase": lowercase, "unicode_normalizer": unicode_normalizer,
                      "bert_normalizer": bert_normalizer, "split_on_whitespace_only": split_on_whitespace_only}
        super().__init__(tokenizer, parameters)

    @staticmethod
    def from_file(vocab_filename: str, merges_filename: str, **kwargs):
        vocab, merges = BPE.read_file(vocab_filename, merges_filename)
        return CharBPETokenizer(vocab, merges, **kwargs)

    def train(self, files, vocab_size=30000, min_frequency=2, special_tokens=["<unk>"], limit_alphabet=1000,
              initial_alphabet=[], suffix="</w>", show_progress=True):
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                      special_tokens=special_tokens, limit_alphabet=limit_alphabet,
                                      initial_alphabet=initial_alphabet, end_of_word_suffix=suffix,
                                      show_progress=show_progress)
        self._tokenizer.train([files] if isinstance(files, str) else files, trainer=trainer)

    def train_from_iterator(self, iterator, vocab_size=30000, min_frequency=2, special_tokens=["<unk>"],
                            limit_alphabet=1000, initial_alphabet=[], suffix="</w>", show_progress=True, length=None):
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                      special_tokens=special_tokens, limit_alphabet=limit_alphabet,
                                      initial_alphabet=initial_alphabet, end_of_word_suffix=suffix,
                                      show_progress=show_progress)
        self._tokenizer.train_from_iterator(iterator, trainer=trainer, length=length)

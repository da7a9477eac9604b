"""`ByteLevelBPETokenizer`: GPT-2's byte-level BPE pipeline."""

from __future__ import annotations

from .. import decoders, pre_tokenizers, processors, trainers
from ..models import BPE
from ..normalizers import Lowercase, Sequence, unicode_normalizer_from_str
from ..tokenizer import Tokenizer
from .base_tokenizer import BaseTokenizer


class ByteLevelBPETokenizer(BaseTokenizer):
    def __init__(self, vocab=None, merges=None, add_prefix_space=False, lowercase=False, dropout=None,
                 unicode_normalizer=None, continuing_subword_prefix=None, end_of_word_suffix=None,
                 trim_offsets=False):
        if vocab is not None and merges is not None:
            tokenizer = Tokenizer(BPE(vocab, merges, dropout=dropout,
                                      continuing_subword_prefix=continuing_subword_prefix or "",
                                      end_of_word_suffix=end_of_word_suffix or ""))
        else:
            tokenizer = Tokenizer(BPE())
        normalizers = []
        if unicode_normalizer:
            normalizers += [unicode_normalizer_from_str(unicode_normalizer)]
        if lowercase:
            normalizers += [Lowercase()]
        if len(normalizers) > 0:
            tokenizer.normalizer = Sequence(normalizers) if len(normalizers) > 1 else normalizers[0]
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
        tokenizer.decoder = decoders.ByteLevel()
        tokenizer.post_processor = processors.ByteLevel(trim_offsets=trim_offsets)
        parameters = {"model": "ByteLevelBPE", "add_prefix_space": add_prefix_space, "lowercase": lowercase,
                      "dropout": dropout, "unicode_normalizer": unicode_normalizer,
                      "continuing_subword_prefix": continuing_subword_prefix,
                      "end_of_word_suffix": end_of_word_suffix, "trim_offsets": trim_offsets}
        super().__init__(tokenizer, parameters)

    @staticmethod
    def from_file(vocab_filename: str, merges_filename: str, **kwargs):
        vocab, merges = BPE.read_file(vocab_filename, merges_filename)
        return ByteLevelBPETokenizer(vocab, merges, **kwargs)

    def train(self, files, vocab_size=30000, min_frequency=2, show_progress=True, special_tokens=[]):
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                      show_progress=show_progress, special_tokens=special_tokens,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
        self._tokenizer.train([files] if isinstance(files, str) else files, trainer=trainer)

    def train_from_iterator(self, iterator, vocab_size=30000, min_frequency=2, show_progress=True,
                            special_tokens=[], length=None):
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                      show_progress=show_progress, special_tokens=special_tokens,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
        self._tokenizer.train_from_iterator(iterator, trainer=trainer, length=length)

"""`SentencePieceUnigramTokenizer`: Nmt + NFKC + collapsed spaces, Metaspace, Unigram."""

from __future__ import annotations

import json

from .. import decoders, normalizers, pre_tokenizers, trainers
from ..models import Unigram
from ..normalized import Regex
from ..tokenizer import Tokenizer
from .base_tokenizer import BaseTokenizer


class SentencePieceUnigramTokenizer(BaseTokenizer):
    def __init__(self, vocab=None, replacement="\u2581", add_prefix_space=True):
        if vocab is not None:
            tokenizer = Tokenizer(Unigram(vocab))
        else:
            tokenizer = Tokenizer(Unigram())
        tokenizer.normalizer = normalizers.Sequence([normalizers.Nmt(), normalizers.NFKC(),
                                                     normalizers.Replace(Regex(" {2,}"), " ")])
        prepend_scheme = "always" if add_prefix_space else "never"
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement=replacement, prepend_scheme=prepend_scheme)
        tokenizer.decoder = decoders.Metaspace(replacement=replacement, prepend_scheme=prepend_scheme)
        parameters = {"model": "SentencePieceUnigram", "replacement": replacement,
                      "add_prefix_space": add_prefix_space}
        super().__init__(tokenizer, parameters)

    def train(self, files, vocab_size=8000, show_progress=True, special_tokens=None, initial_alphabet=None,
              unk_token=None):
        trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=special_tokens or [],
                                          show_progress=show_progress, initial_alphabet=initial_alphabet or [],
                                          unk_token=unk_token)
        self._tokenizer.train([files] if isinstance(files, str) else files, trainer=trainer)

    def train_from_iterator(self, iterator, vocab_size=8000, show_progress=True, special_tokens=None,
                            initial_alphabet=None, unk_token=None, length=None):
        trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=special_tokens or [],
                                          show_progress=show_progress, initial_alphabet=initial_alphabet or [],
                                          unk_token=unk_token)
        self._tokenizer.train_from_iterator(iterator, trainer=trainer, length=length)

    @staticmethod
    def from_spm(filename: str):
        raise NotImplementedError("from_spm needs sentencepiece's model protobuf; not supported in anytok.hf")

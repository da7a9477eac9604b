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
        """A SentencePieceUnigramTokenizer from a SentencePiece `.model` file, as tokenizers 0.23.3
        builds it: Unigram(pieces and scores, unk_id, byte_fallback), Precompiled (when the model
        has a charsmap) + Replace(" {2,}" -> " "), Metaspace(prepend "always").  The file is read
        by anytok's own protobuf reader (tokenizers needs `sentencepiece_model_pb2`).  Only
        Unigram models, as in tokenizers; for what transformers makes of a `.model` see
        `Tokenizer.from_spm`."""
        from ...sentencepiece.model_proto import UNIGRAM, parse_model_proto

        with open(filename, "rb") as f:
            m = parse_model_proto(f.read())
        if m.trainer_spec.model_type != UNIGRAM:
            raise Exception(
                "You're trying to run a `Unigram` model but you're file was trained with a different algorithm")
        precompiled_charsmap = m.normalizer_spec.precompiled_charsmap
        vocab = list(zip(m.pieces, m.scores))
        replacement = "\u2581"
        tokenizer = Tokenizer(Unigram(vocab, m.trainer_spec.unk_id, m.trainer_spec.byte_fallback))
        rules = [normalizers.Replace(Regex(" {2,}"), " ")]
        if precompiled_charsmap:
            rules.insert(0, normalizers.Precompiled(precompiled_charsmap))
        tokenizer.normalizer = normalizers.Sequence(rules)
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement=replacement, prepend_scheme="always")
        tokenizer.decoder = decoders.Metaspace(replacement=replacement, prepend_scheme="always")
        parameters = {"model": "SentencePieceUnigram"}
        obj = BaseTokenizer.__new__(SentencePieceUnigramTokenizer)
        BaseTokenizer.__init__(obj, tokenizer, parameters)
        return obj

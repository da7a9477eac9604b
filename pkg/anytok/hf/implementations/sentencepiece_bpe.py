"""`SentencePieceBPETokenizer`: NFKC, Metaspace, BPE."""

from __future__ import annotations

from .. import decoders, trainers
from ..models import BPE
from ..normalizers import NFKC
from ..pre_tokenizers import Metaspace
from ..tokenizer import Tokenizer
from .base_tokenizer import BaseTokenizer


class SentencePieceBPETokenizer(BaseTokenizer):
    def __init__(self, vocab=None, merges=None, unk_token="<unk>", replacement="\u2581", add_prefix_space=True,
                 dropout=None, fuse_unk=False):
        if vocab is not None and merges is not None:
            tokenizer = Tokenizer(BPE(vocab, merges, dropout=dropout, unk_token=unk_token, fuse_unk=fuse_unk))
        else:
            tokenizer = Tokenizer(BPE(dropout=dropout, unk_token=unk_token, fuse_unk=fuse_unk))
        if tokenizer.token_to_id(str(unk_token)) is not None:
            tokenizer.add_special_tokens([str(unk_token)])
        tokenizer.normalizer = NFKC()
        prepend_scheme = "always" if add_prefix_space else "never"
        tokenizer.pre_tokenizer = Metaspace(replacement=replacement, prepend_scheme=prepend_scheme)
        tokenizer.decoder = decoders.Metaspace(replacement=replacement, prepend_scheme=prepend_scheme)
        parameters = {"model": "SentencePieceBPE", "unk_token": unk_token, "replacement": replacement,
                      "add_prefix_space": add_prefix_space, "dropout": dropout}
        super().__init__(tokenizer, parameters)

    @staticmethod
    def from_file(vocab_filename: str, merges_filename: str, **kwargs):
        vocab, merges = BPE.read_file(vocab_filename, merges_filename)
        return SentencePieceBPETokenizer(vocab, merges, **kwargs)

    def train(self, files, vocab_size=30000, min_frequency=2, special_tokens=["<unk>"], limit_alphabet=1000,
              initial_alphabet=[], show_progress=True):
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                      special_tokens=special_tokens, limit_alphabet=limit_alphabet,
                                      initial_alphabet=initial_alphabet, show_progress=show_progress)
        self._tokenizer.train([files] if isinstance(files, str) else files, trainer=trainer)

    def train_from_iterator(self, iterator, vocab_size=30000, min_frequency=2, special_tokens=["<unk>"],
                            limit_alphabet=1000, initial_alphabet=[], show_progress=True, length=None):
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                      special_tokens=special_tokens, limit_alphabet=limit_alphabet,
                                      initial_alphabet=initial_alphabet, show_progress=show_progress)
        self._tokenizer.train_from_iterator(iterator, trainer=trainer, length=length)

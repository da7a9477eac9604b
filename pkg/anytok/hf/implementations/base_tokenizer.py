"""`BaseTokenizer`: a `Tokenizer` with a description of how it was made (`parameters`); every
call goes to the wrapped Tokenizer."""

from __future__ import annotations

from ..tokenizer import Tokenizer

__all__ = ["BaseTokenizer"]


class BaseTokenizer:
    def __init__(self, tokenizer: Tokenizer, parameters=None):
        self._tokenizer = tokenizer
        self._parameters = parameters if parameters is not None else {}

    def __repr__(self):
        return "Tokenizer(vocabulary_size={}, {})".format(
            self._tokenizer.get_vocab_size(), ", ".join(f"{k}={v}" for k, v in self._parameters.items()))

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        return self._tokenizer.num_special_tokens_to_add(is_pair)

    def get_vocab(self, with_added_tokens: bool = True):
        return self._tokenizer.get_vocab(with_added_tokens=with_added_tokens)

    def get_added_tokens_decoder(self):
        return self._tokenizer.get_added_tokens_decoder()

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        return self._tokenizer.get_vocab_size(with_added_tokens=with_added_tokens)

    def enable_padding(self, direction="right", pad_to_multiple_of=None, pad_id=0, pad_type_id=0,
                       pad_token="[PAD]", length=None):
        return self._tokenizer.enable_padding(direction=direction, pad_to_multiple_of=pad_to_multiple_of,
                                              pad_id=pad_id, pad_type_id=pad_type_id, pad_token=pad_token,
                                              length=length)

    def no_padding(self):
        return self._tokenizer.no_padding()

    @property
    def padding(self):
        return self._tokenizer.padding

    def enable_truncation(self, max_length, stride=0, strategy="longest_first"):
        return self._tokenizer.enable_truncation(max_length, stride=stride, strategy=strategy)

    def no_truncation(self):
        return self._tokenizer.no_truncation()

    @property
    def truncation(self):
        return self._tokenizer.truncation

    def add_tokens(self, tokens):
        return self._tokenizer.add_tokens(tokens)

    def add_special_tokens(self, special_tokens):
        return self._tokenizer.add_special_tokens(special_tokens)

    def normalize(self, sequence: str) -> str:
        return self._tokenizer.normalizer.normalize_str(sequence)

    def encode(self, sequence, pair=None, is_pretokenized=False, add_special_tokens=True):
        if sequence is None:
            raise ValueError("encode: `sequence` can't be `None`")
        return self._tokenizer.encode(sequence, pair, is_pretokenized, add_special_tokens)

    def encode_batch(self, inputs, is_pretokenized=False, add_special_tokens=True):
        if inputs is None:
            raise ValueError("encode_batch: `inputs` can't be `None`")
        return self._tokenizer.encode_batch(inputs, is_pretokenized, add_special_tokens)

    async def async_encode_batch(self, inputs, is_pretokenized=False, add_special_tokens=True):
        return self.encode_batch(inputs, is_pretokenized, add_special_tokens)

    async def async_encode_batch_fast(self, inputs, is_pretokenized=False, add_special_tokens=True):
        return self.encode_batch(inputs, is_pretokenized, add_special_tokens)

    def decode(self, ids, skip_special_tokens=True) -> str:
        if ids is None:
            raise ValueError("None input is not valid. Should be a list of integers.")
        return self._tokenizer.decode(ids, skip_special_tokens=skip_special_tokens)

    def decode_batch(self, sequences, skip_special_tokens=True):
        if sequences is None:
            raise ValueError("None input is not valid. Should be list of list of integers.")
        return self._tokenizer.decode_batch(sequences, skip_special_tokens=skip_special_tokens)

    def token_to_id(self, token):
        return self._tokenizer.token_to_id(token)

    def id_to_token(self, id):
        return self._tokenizer.id_to_token(id)

    def save_model(self, directory: str, prefix=None):
        return self._tokenizer.model.save(directory, prefix=prefix)

    def save(self, path: str, pretty: bool = True):
        return self._tokenizer.save(path, pretty)

    def to_str(self, pretty: bool = False):
        return self._tokenizer.to_str(pretty)

    def post_process(self, encoding, pair=None, add_special_tokens=True):
        return self._tokenizer.post_process(encoding, pair, add_special_tokens)

    @property
    def model(self):
        return self._tokenizer.model

    @model.setter
    def model(self, model):
        self._tokenizer.model = model

    @property
    def normalizer(self):
        return self._tokenizer.normalizer

    @normalizer.setter
    def normalizer(self, normalizer):
        self._tokenizer.normalizer = normalizer

    @property
    def pre_tokenizer(self):
        return self._tokenizer.pre_tokenizer

    @pre_tokenizer.setter
    def pre_tokenizer(self, pre_tokenizer):
        self._tokenizer.pre_tokenizer = pre_tokenizer

    @property
    def post_processor(self):
        return self._tokenizer.post_processor

    @post_processor.setter
    def post_processor(self, post_processor):
        self._tokenizer.post_processor = post_processor

    @property
    def decoder(self):
        return self._tokenizer.decoder

    @decoder.setter
    def decoder(self, decoder):
        self._tokenizer.decoder = decoder

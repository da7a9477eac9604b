"""anytok.hf: Hugging Face `tokenizers` 0.23.3's Python API in pure Python.

How data flows: `Tokenizer` (tokenizer.py) cuts the text on added tokens (added.py), normalizes
every split keeping each character's origin (`NormalizedString`, normalized.py; normalizers.py),
pre-tokenizes it (pre_tokenizers.py), tokenizes each piece with the model (models.py, on
anytok's exact model implementations) and builds an `Encoding` (encoding.py) with character
offsets into the original text; the post-processor (processors.py) wraps sequences and pairs,
truncation and padding shape them, decoders.py turns tokens back into text.

Aliasing `tokenizers` to this module (and `tokenizers.X` to `anytok.hf.X`) in `sys.modules` is
all code written for `tokenizers` needs (tests/test_hf_suite.py runs tokenizers' own test suite
that way).
"""

from __future__ import annotations

__version__ = "0.23.3"

from . import decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402
from .added import AddedToken  # noqa: E402
from .decoders import DecodeStream  # noqa: E402
from .encoding import Encoding  # noqa: E402
from .normalized import NormalizedString, PreTokenizedString, Regex, Token  # noqa: E402
from .tokenizer import PIPELINE_TOKENIZER, Tokenizer  # noqa: E402
from ..pipeline.tokenizer import Tokenizer as _PipelineTokenizer  # noqa: E402

PIPELINE_TOKENIZER[0] = _PipelineTokenizer  # (see anytok.hf.tokenizer: no import circle)
del PIPELINE_TOKENIZER, _PipelineTokenizer
from . import implementations, tools  # noqa: E402
from .implementations import (  # noqa: E402
    BertWordPieceTokenizer,
    ByteLevelBPETokenizer,
    CharBPETokenizer,
    SentencePieceBPETokenizer,
    SentencePieceUnigramTokenizer,
)

# tokenizers' enums, given as plain strings.
OffsetReferential = str
OffsetType = str
SplitDelimiterBehavior = str
TruncationStrategy = str
TruncationDirection = str
PaddingDirection = str
TextInputSequence = str
PreTokenizedInputSequence = list
InputSequence = str
EncodeInput = str
TextEncodeInput = str
PreTokenizedEncodeInput = list
Offsets = tuple

__all__ = ["Tokenizer", "Encoding", "AddedToken", "NormalizedString", "PreTokenizedString", "Regex", "Token",
           "DecodeStream", "__version__", "normalizers", "pre_tokenizers", "models", "processors", "decoders",
           "trainers", "implementations", "tools", "BertWordPieceTokenizer", "ByteLevelBPETokenizer",
           "CharBPETokenizer", "SentencePieceBPETokenizer", "SentencePieceUnigramTokenizer"]

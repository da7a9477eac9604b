"""anytok.hf: the Hugging Face `tokenizers` Python API in pure Python (placeholder; see issue 43)."""

from .normalized import NormalizedString, PreTokenizedString, Regex, Token  # noqa: F401
from . import normalizers, pre_tokenizers  # noqa: F401

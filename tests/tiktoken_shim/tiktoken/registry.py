"""tiktoken.registry: anytok's bundled encodings."""

from anytok.registry import get_encoding as get_encoding
from anytok.registry import list_encoding_names as list_encoding_names

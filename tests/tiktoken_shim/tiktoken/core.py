"""tiktoken.core: anytok's Encoding."""

from anytok.core import Encoding as Encoding
from anytok.core import raise_disallowed_special_token as raise_disallowed_special_token

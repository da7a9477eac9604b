"""anytok: exact tiktoken-compatible tokenization in pure Python.

```
>>> import anytok
>>> enc = anytok.get_encoding("o200k_base")
>>> enc.encode("hello world")
[24912, 2375]
>>> enc.count("hello world")
2
```
`import anytok as tiktoken` works for code that uses tiktoken's public API.
"""

from .core import Encoding
from .format import VocabFormatError
from .convert.gpt2 import data_gym_to_mergeable_bpe_ranks
from .convert.tiktoken_bpe import VocabSourceError, load_tiktoken_bpe
from .model import encoding_for_model, encoding_name_for_model
from .pretokenize import UnsupportedPatternError
from .registry import get_encoding, list_encoding_names
from .files import load, load_encoding, save, save_encoding
from .train import train

__version__ = "0.1.0"

__all__ = [
    "Encoding",
    "VocabFormatError",
    "VocabSourceError",
    "UnsupportedPatternError",
    "data_gym_to_mergeable_bpe_ranks",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
    "list_encoding_names",
    "load_tiktoken_bpe",
    "load",
    "load_encoding",
    "save",
    "save_encoding",
    "train",
    "__version__",
]

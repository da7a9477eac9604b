"""A `tiktoken` package that is anytok: `import tiktoken` gets anytok's API.

For running code written against tiktoken 0.14 -- tiktoken's own test files
(tests/test_tiktoken_suite.py) -- with anytok in its place: put tests/tiktoken_shim on sys.path
ahead of site-packages.  Only the modules tiktoken's public API lives in are mirrored.
"""

from anytok import Encoding as Encoding
from anytok import encoding_for_model as encoding_for_model
from anytok import encoding_name_for_model as encoding_name_for_model
from anytok import get_encoding as get_encoding
from anytok import list_encoding_names as list_encoding_names

from . import core, load, model, registry  # noqa: F401  (tiktoken.core etc. after `import tiktoken`)

__version__ = "0.14.0"
# Marks the shim, so that a test can tell it from the real tiktoken.
__anytok_shim__ = True

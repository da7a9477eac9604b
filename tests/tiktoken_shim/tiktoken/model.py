"""tiktoken.model: anytok's model table."""

from anytok.model import MODEL_PREFIX_TO_ENCODING as MODEL_PREFIX_TO_ENCODING
from anytok.model import MODEL_TO_ENCODING as MODEL_TO_ENCODING
from anytok.model import encoding_for_model as encoding_for_model
from anytok.model import encoding_name_for_model as encoding_name_for_model

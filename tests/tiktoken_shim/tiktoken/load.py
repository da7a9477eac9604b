"""tiktoken.load: anytok's readers of tiktoken's vocabulary files."""

from anytok import data_gym_to_mergeable_bpe_ranks as data_gym_to_mergeable_bpe_ranks
from anytok import load_tiktoken_bpe as load_tiktoken_bpe

"""The text of each token: token text -> id, for every token that is valid UTF-8.

Almost every token is valid UTF-8, and most pieces of text are exactly one token, so a piece
is looked up in this table directly, without encoding it to bytes first.
"""

from __future__ import annotations

import operator
from itertools import compress, repeat
from typing import Sequence


def text_table(tokens: Sequence[bytes], ids: Sequence[int]) -> tuple[dict[str, int], list[bytes], bytes | None]:
    """(text -> id for valid UTF-8 tokens, the other tokens' bytes, a duplicate token or None)."""
    texts = list(map(bytes.decode, tokens, repeat("utf-8"), repeat("replace")))
    table = dict(zip(texts, ids))
    # "replace" turned each invalid token into text containing U+FFFD.  Only texts containing
    # U+FFFD can be wrong (a valid token may contain it too): drop them all, then put back the
    # valid ones.
    suspects = list(compress(range(len(texts)), map(operator.contains, texts, repeat("\ufffd"))))
    for i in suspects:
        table.pop(texts[i], None)
    invalid: list[bytes] = []
    for i in suspects:
        try:
            table[tokens[i].decode("utf-8")] = ids[i]
        except UnicodeDecodeError:
            invalid.append(tokens[i])
    duplicate = None
    # Decoding valid UTF-8 is one-to-one, so equal texts mean equal tokens.
    if len(table) + len(invalid) != len(tokens) or len(set(invalid)) != len(invalid):
        seen: set[bytes] = set()
        for t in tokens:
            if t in seen:
                duplicate = t
                break
            seen.add(t)
    return table, invalid, duplicate

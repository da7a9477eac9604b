"""The text of each token: token text -> id, for every token that is valid UTF-8.

Almost every token is valid UTF-8, and most pieces of text are exactly one token, so a piece
is looked up in this table directly, without encoding it to bytes first.
"""

from __future__ import annotations

import operator
from itertools import compress, repeat
from typing import Iterable, Sequence


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
        duplicate = first_duplicate(tokens)
    return table, invalid, duplicate


def texts_table(texts: list[str], byte_tokens: dict[int, bytes],
                ids: Sequence[int]) -> tuple[dict[str, int], list[bytes], bytes | None]:
    """`text_table` for a vocabulary read with its tokens as text (format.py, field 11):
    `texts` the valid UTF-8 tokens in rank order, `byte_tokens` rank -> bytes of the others."""
    text_ids: Iterable[int] = ids
    if byte_tokens:
        keep = bytearray(b"\x01") * len(ids)
        for rank in byte_tokens:
            keep[rank] = 0
        text_ids = compress(ids, keep)
    table = dict(zip(texts, text_ids))
    invalid = list(byte_tokens.values())
    duplicate = None
    if len(table) != len(texts) or len(set(invalid)) != len(invalid):
        duplicate = duplicate_token(texts, invalid)
    return table, invalid, duplicate


def first_duplicate(items: Sequence):
    """The first item that appears twice in `items`, or None."""
    if len(set(items)) == len(items):
        return None
    seen = set()
    for item in items:
        if item in seen:
            return item
        seen.add(item)
    return None


def duplicate_token(texts: Sequence[str], byte_tokens: Sequence[bytes]) -> bytes | None:
    """The bytes of a token that appears twice among a vocabulary's texts and the tokens that
    are not UTF-8, or None.  (Text and bytes that are not UTF-8 never equal each other.)"""
    duplicate = first_duplicate(texts)
    return duplicate.encode("utf-8") if duplicate is not None else first_duplicate(byte_tokens)

"""SentencePiece's two trivial models: CHAR (`char_model.cc`) and WORD (`word_model.cc`).

CHAR: each user-defined piece (longest, from the left) or else each character is one piece.
WORD: a new piece starts at the beginning and at every U+2581 (`SplitIntoWords` with its
defaults; user-defined pieces play no part).  Either way a piece becomes `PieceToId(piece)`
(control/unknown/byte pieces first, then the others, else unknown), and then, as for every
model, unknowns become byte pieces (byte fallback) or a run of them one unknown id.
"""

from __future__ import annotations

import re
from typing import Sequence

from .model_proto import PieceVocab, USER_DEFINED, piece_tables
from .unigram import byte_piece

__all__ = ["CharModel", "WordModel"]

_WORD = re.compile("\u2581?[^\u2581]*")


class _Simple(PieceVocab):
    def __init__(self, pieces: Sequence[str], scores: Sequence[float], types: Sequence[int], *,
                 unk_id: int, byte_fallback: bool = False):
        self.pieces = list(pieces)
        self.scores = list(scores)
        self.types = list(types)
        self.unk_id = unk_id
        self.byte_fallback = byte_fallback
        normal, reserved = piece_tables(self.pieces, self.types)
        self._ids = {**normal, **reserved}
        self.user_defined = sorted((p for p, t in zip(self.pieces, self.types) if t == USER_DEFINED),
                                   key=lambda s: (-len(s.encode("utf-8")), s))
        self._byte_ids = [self._ids.get(byte_piece(b)) for b in range(256)] if byte_fallback else None

    def split(self, text: str) -> list[str]:
        raise NotImplementedError

    def tokenize(self, text: str) -> list[int]:
        get = self._ids.get
        unk = self.unk_id
        out: list[int] = []
        prev_unk = False
        for w in self.split(text):
            i = get(w, unk)
            is_unk = i == unk
            if is_unk and self.byte_fallback:
                out.extend(self._byte_ids[b] for b in w.encode("utf-8"))
            elif not (is_unk and prev_unk):
                out.append(i)
            prev_unk = is_unk
        return out


class CharModel(_Simple):
    def split(self, text: str) -> list[str]:
        if not self.user_defined:
            return list(text)
        out = []
        pos = 0
        n = len(text)
        ud = self.user_defined
        while pos < n:
            for s in ud:
                if text.startswith(s, pos):
                    out.append(s)
                    pos += len(s)
                    break
            else:
                out.append(text[pos])
                pos += 1
        return out


class WordModel(_Simple):
    def split(self, text: str) -> list[str]:
        return [w for w in _WORD.findall(text) if w]

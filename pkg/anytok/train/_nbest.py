"""Unigram pruning's n-best rule, shared by both Unigram trainers.

Data flow: a piece's string -> its lattice over the current pieces -> Lattice::NBest(2) (each
trainer's own A*, on its own lattice and float type; a complete hypothesis read back by
`hypothesis_nodes`) -> `verdict` -> whether the piece may go, and the pieces of its second-best
segmentation (what would replace it), by which the trainer weighs its loss.  sentencepiece's
`unigram_model_trainer.cc` and `tokenizers`' UnigramTrainer decide the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["hypothesis_nodes", "verdict"]


def hypothesis_nodes(hyp, at: int) -> list[int]:
    """The lattice nodes of a complete A* hypothesis, left to right: `hyp` is the one that
    reached BOS, each hypothesis holds its node at index `at` and the one it extends (towards
    EOS) at index 3; EOS's own has None there and is left out."""
    nodes = []
    h = hyp[3]
    while h[3] is not None:
        nodes.append(h[at])
        h = h[3]
    return nodes


def verdict(nbests: list[list[int]], node_ids: Sequence[int]) -> tuple[bool, list[int]]:
    """(always keep, alternatives) from NBest(2)'s node lists: one segmentation only -> kept;
    a best path of several nodes -> the piece may go (a path of others beats it); the piece
    alone best -> kept, with the piece ids (`node_ids[node]`) of the second-best path."""
    if len(nbests) == 1:
        return True, []
    if len(nbests[0]) >= 2:
        return False, []
    if len(nbests[0]) == 1:
        return True, [node_ids[k] for k in nbests[1]]
    return True, []

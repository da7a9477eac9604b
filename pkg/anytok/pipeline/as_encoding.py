"""A tokenizer.json pipeline that is a tiktoken-style Encoding in disguise, and the proof.

Llama 3's tokenizer.json, for one, is a tiktoken encoding converted to HF's schema: no
normalizer, one regex split, the byte-level alphabet, and a BPE model whose merge list was
written out from ranks.  When `encoding_of` can prove that the pipeline gives the ids of an
anytok `Encoding` on every text without added tokens, it builds that Encoding, and the
pipeline's incremental operations (appender, intervals, chunks...) are the Encoding's.

The model: why a merge list can equal the rank rule
---------------------------------------------------
HF's BPE repeatedly merges the adjacent pair that comes first in the merge list (leftmost on a
tie); tiktoken's merges the adjacent pair whose concatenation has the lowest rank (leftmost on
a tie), with rank = id.  Look at one state of tiktoken's run on some text and at an adjacent
pair (l, r) in it whose concatenation t is a token.  The bytes of t are covered by exactly l
and r, so no merge has crossed the edges of that stretch yet, and every merge inside it was
the lowest-ranked, leftmost pair *inside* it: the stretch went through the states of
tiktoken's run on the bytes of t alone.  That run passes through one two-token state only --
the last one before it makes t -- so (l, r) is t's *canonical split*, the same for every
occurrence of t; a token whose own run never gets down to two tokens never appears as a pair.
So if

1. for every token t reachable by its own run, the merge list holds t's canonical split, and
2. those merges come in the list in the order of the tokens' ids,

then in every state both rules see the same candidate pairs, one kind per token, and choose
the same one (same token: same list entry, leftmost in both); by induction both runs make the
same merges.  Pairs of the list that are not canonical splits never show up.  Both rules stop
when no candidate is left.  What a single pre-token that is itself a token becomes also
agrees: tiktoken looks it up first, HF does so under `ignore_merges`; without it, every token
must be reachable.

`check_merges` tests 1 and 2 with one run per token (about a second for 128k tokens); Llama
3, Qwen 3 and DeepSeek V3 pass.  Of those, only Llama 3's pipeline is otherwise an Encoding's
(Qwen 3 normalizes to NFC first, DeepSeek V3 splits with a sequence of three patterns).

The rest of the pipeline must add nothing: no normalizer, one `Split` (a regex, `Isolated`,
not inverted) followed by `ByteLevel` without prefix space and regex, or `ByteLevel` alone with
its GPT-2 regex and no prefix space; a BPE model without dropout, byte fallback, subword
prefix or suffix.  Text that spells an added token is the one place the pipeline and an
Encoding's ordinary encoding differ (HF always splits added tokens out): the Encoding knows the
added tokens as special tokens (when none strips spaces or wants a single word), so
`encode(text, allowed_special="all")` is the pipeline's `encode`; the incremental operations
check for them (`incremental.generic.AddedTokenScan`).
"""

from __future__ import annotations

from .. import bpe
from ..pretokenize import Splitter
from .patterns import split_by
from .pre_tokenizers import GPT2_PATTERN, ByteLevel, Sequence, Split

__all__ = ["encoding_of", "check_merges", "IsolatedSplitter"]


class IsolatedSplitter:
    """HF's `Split(pattern, "Isolated")`: the matches and the text between them, as pieces.

    A tiktoken Splitter drops text no branch matches; HF keeps it as a piece of its own.  For
    the patterns in use nothing is left between matches, and this costs one length check.
    """

    def __init__(self, pattern: str):
        self.pattern = pattern
        self._inner = Splitter(pattern, dialect="onig")

    def __reduce__(self):
        return (IsolatedSplitter, (self.pattern,))

    def split(self, text: str) -> list[str]:
        pieces = self._inner.split(text)
        # (The length of the joined pieces: one C-level pass; `sum(map(len, ...))` costs 5x
        # more under Pyodide, where calls through `map` are slow.)
        if len("".join(pieces)) == len(text):
            return pieces
        return split_by(text, self._inner.spans(text), "Isolated")

    def spans(self, text: str) -> list[tuple[int, int]]:
        spans = self._inner.spans(text)
        if sum(e - s for s, e in spans) == len(text):
            return spans
        out = []
        at = 0
        for s, e in spans:
            if s > at:
                out.append((at, s))
            out.append((s, e))
            at = e
        if at < len(text):
            out.append((at, len(text)))
        return out


def _split_pattern(pre) -> str | None:
    """The one regex of a pre-tokenizer that splits like a tiktoken pattern, or None."""
    if isinstance(pre, ByteLevel):
        return GPT2_PATTERN if pre.use_regex and not pre.add_prefix_space else None
    if not isinstance(pre, Sequence) or len(pre.pretokenizers) != 2:
        return None
    split, level = pre.pretokenizers
    if not isinstance(split, Split) or not isinstance(level, ByteLevel):
        return None
    if level.use_regex or level.add_prefix_space:
        return None
    if split.behavior != "Isolated" or split.invert or "Regex" not in split.pattern.spec:
        return None
    return split.pattern.spec["Regex"]


def check_merges(model, ranks: dict[bytes, int]) -> str | None:
    """None if the model's merge list gives the rank rule's merges (conditions 1 and 2 of the
    module docstring), else why not."""
    if len(ranks) < 256 or any(bytes([b]) not in ranks for b in range(256)):
        return "not every byte is a token"
    k = model._k
    pairs = model._pairs
    previous = -1
    for data, i in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(data) < 2:
            continue
        parts = bpe.merge_until(data, ranks, 2)
        if len(parts) != 2:
            if not model.ignore_merges:
                return f"token {i} is not made by merging (and ignore_merges is off)"
            continue
        value = pairs.get(ranks[parts[0]] * k + ranks[parts[1]])
        if value is None:
            return f"token {i}: the merge list lacks its canonical split"
        place = value >> 20
        if place <= previous:
            return f"token {i}: its merge comes before that of a token with a lower id"
        previous = place
    return None


def encoding_of(tok) -> tuple[object | None, str]:
    """(Encoding, "") if the pipeline `tok` is one on text without added tokens, else
    (None, reason)."""
    from ..core import Encoding
    from ..models import BPEMerges

    model = tok.model
    if tok.normalizer is not None and tok.normalizer.to_config() not in (
            {"type": "Sequence", "normalizers": []},):
        return None, "it has a normalizer"
    pattern = _split_pattern(tok.pre_tokenizer)
    if pattern is None:
        return None, "its pre-tokenizer is not one regex split + byte-level"
    if not isinstance(model, BPEMerges):
        return None, f"its model is {model.kind}, not BPE"
    if model.byte_fallback or model.continuing_subword_prefix or model.end_of_word_suffix:
        return None, "its BPE model has byte fallback or a subword prefix or suffix"
    ranks = model.byte_level_ids()
    reason = check_merges(model, ranks)
    if reason is not None:
        return None, reason
    # Added tokens become the Encoding's special tokens when they match as plain strings
    # (tiktoken's special-token regex is leftmost-longest, as HF's matcher), so that
    # `encode(text, allowed_special="all")` gives the pipeline's ids on any text.
    added = tok.added.tokens
    plain = all(not (t.lstrip or t.rstrip or t.single_word) and t.content for t in added)
    specials = {t.content: t.id for t in added} if plain else {}
    return Encoding._with_splitter(tok.name, IsolatedSplitter(pattern), ranks, specials), ""

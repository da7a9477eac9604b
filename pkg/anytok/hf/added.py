"""`tokenizers.AddedToken` and the added vocabulary of a Tokenizer.

How data flows: tokens added at run time (or read from tokenizer.json) get ids after the
model's vocabulary (or the model's id when the token is in it); before anything else, encoding
splits them out of the text: tokens with `normalized=False` from the original text, the others
from each normalized split (their content normalized the same way).  Matching is anytok's
(`anytok.pipeline.added_tokens`: leftmost-longest, `single_word`, `lstrip`/`rstrip`), which the
ids path uses too.
"""

from __future__ import annotations

from ..pipeline.added_tokens import AddedToken as _PAT
from ..pipeline.added_tokens import _Matcher

__all__ = ["AddedToken", "AddedVocabulary"]


class AddedToken:
    """A token added to the vocabulary, with how it matches (tokenizers' `AddedToken`)."""

    __slots__ = ("content", "single_word", "lstrip", "rstrip", "_normalized", "special")

    def __init__(self, content=None, single_word=False, lstrip=False, rstrip=False, normalized=None,
                 special=False):
        self.content = "" if content is None else str(content)
        self.single_word = bool(single_word)
        self.lstrip = bool(lstrip)
        self.rstrip = bool(rstrip)
        self.special = bool(special)
        self._normalized = None if normalized is None else bool(normalized)

    @property
    def normalized(self) -> bool:
        return (not self.special) if self._normalized is None else self._normalized

    @normalized.setter
    def normalized(self, value):
        self._normalized = bool(value)

    def _with_special(self, special: bool) -> "AddedToken":
        t = AddedToken(self.content, self.single_word, self.lstrip, self.rstrip, self._normalized, special)
        return t

    def __getstate__(self):
        return {"content": self.content, "single_word": self.single_word, "lstrip": self.lstrip,
                "rstrip": self.rstrip, "normalized": self.normalized, "special": self.special}

    def __setstate__(self, state):
        self.content = state["content"]
        self.single_word = state.get("single_word", False)
        self.lstrip = state.get("lstrip", False)
        self.rstrip = state.get("rstrip", False)
        self.special = state.get("special", False)
        self._normalized = state.get("normalized")

    def __str__(self):
        return self.content

    def __repr__(self):
        b = lambda v: "True" if v else "False"  # noqa: E731
        return (f'AddedToken("{self.content}", rstrip={b(self.rstrip)}, lstrip={b(self.lstrip)}, '
                f"single_word={b(self.single_word)}, normalized={b(self.normalized)}, special={b(self.special)})")

    def __eq__(self, other):
        if isinstance(other, AddedToken):
            return self.content == other.content
        return NotImplemented

    def __hash__(self):
        return hash(self.content)

    def _config(self, id: int) -> dict:
        return {"id": id, "content": self.content, "single_word": self.single_word, "lstrip": self.lstrip,
                "rstrip": self.rstrip, "normalized": self.normalized, "special": self.special}


class AddedVocabulary:
    """tokenizers' AddedVocabulary: content <-> id, special tokens, and the two matchers."""

    def __init__(self):
        self.map: dict[str, int] = {}
        self.map_r: dict[int, AddedToken] = {}
        self.special_list: list[AddedToken] = []
        self.special_set: set[str] = set()
        self.added_list: list[AddedToken] = []
        self._matchers = None

    def copy(self) -> "AddedVocabulary":
        v = AddedVocabulary()
        v.map = dict(self.map)
        v.map_r = dict(self.map_r)
        v.special_list = list(self.special_list)
        v.special_set = set(self.special_set)
        v.added_list = list(self.added_list)
        return v

    def token_to_id(self, content: str, model) -> int | None:
        i = self.map.get(content)
        return i if i is not None else model.token_to_id(content)

    def add(self, tokens: list[AddedToken], model) -> int:
        for t in tokens:
            if t.special and t.content and t.content not in self.special_set:
                self.special_list.append(t)
                self.special_set.add(t.content)
        ignored = 0
        existing = {t.content for t in self.map_r.values()}
        for t in tokens:
            if not t.content or t.content in existing:
                ignored += 1
                continue
            new_id = self.token_to_id(t.content, model)
            if new_id is None:
                size = model.get_vocab_size()
                top = max(self.map.values(), default=None)
                if top is None:
                    new_id = size
                else:
                    new_id = top + 1 if (top >= size or size == 0) else size
            self.map[t.content] = new_id
            self.map_r[new_id] = t
            existing.add(t.content)
            if t.content not in self.special_set:
                self.added_list.append(t)
        self._matchers = None
        return len(tokens) - ignored

    def normalized_content(self, token: AddedToken, normalizer) -> str:
        cache = self.__dict__.setdefault("_norm_cache", {})
        key = (id(normalizer), token.content)
        out = cache.get(key)
        if out is None:
            out = cache[key] = normalizer.normalize_str(token.content)
        return out

    def matchers(self, normalizer, encode_special_tokens: bool):
        key = (id(normalizer), encode_special_tokens)
        if self._matchers is not None and self._matchers[0] == key:
            return self._matchers[1]
        ordered = self.special_list + self.added_list
        if encode_special_tokens:
            ordered = [t for t in ordered if t.content not in self.special_set]
        raw = [_PAT(self.map[t.content], t.content, t.single_word, t.lstrip, t.rstrip, t.normalized, t.special)
               for t in ordered if not t.normalized and t.content in self.map]
        norm_toks = [t for t in ordered if t.normalized and t.content in self.map]
        norm = [_PAT(self.map[t.content], t.content, t.single_word, t.lstrip, t.rstrip, t.normalized, t.special)
                for t in norm_toks]
        contents = [normalizer.normalize_str(t.content) if normalizer is not None else t.content for t in norm_toks]
        pair = (_Matcher(raw, [t.content for t in raw]) if raw else None,
                _Matcher(norm, contents) if norm else None)
        self._matchers = (key, pair)
        return pair

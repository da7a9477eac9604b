"""The tokenizer side: every token's bytes in a flat trie, built once per tokenizer.

Data flow: `TokenTrie.of(tokenizer)` reads the bytes of every ordinary token (special tokens
are left out: they are never allowed, except end-of-sequence, which the matcher adds itself),
sorts them, and lays the trie out in preorder in flat lists:

    byte[i]   the byte on the edge into node i (node 0 is the root)
    depth[i]  the number of bytes from the root to node i
    end[i]    the index just past node i's subtree
    token[i]  the token id whose bytes end at node i, or -1 (`extra` holds duplicates)

`walk(derive, state)` visits the trie in that order, carrying one lexer state per depth: a
node whose byte leads to the dead state is skipped with its whole subtree, so the cost is the
number of viable nodes, not the vocabulary size.  The trie is cached on the tokenizer object.

`tokenize_bytes` reproduces how llguidance tokenizes forced bytes (valid UTF-8 runs with the
tokenizer's own encoder, invalid runs greedily by longest token).

Tokenizers hand over what the engine needs through one method, `token_env()`, returning a
`TokenEnv` (llguidance's `TokEnv`): each ordinary token's bytes, the special tokens by name,
the default end-of-sequence and the encoder for forced text.  Each tokenizer family says there
how llguidance reads its vocabulary: `Encoding` (tiktoken-style; tekken files load as one),
`tokenizer.json` pipelines (byte-level BPE through `to_encoding()`, or byte-fallback
SentencePiece-style), SentencePiece `.model` files and GGUF vocabularies.  Nothing here looks
at a tokenizer's type or private fields.
"""

from __future__ import annotations

import copy
import os

from . import trie_cache
from .errors import UnsupportedFeatureError

_CACHE_ATTR = "_anytok_constrain_trie"
_ENV_ATTR = "_anytok_constrain_env"  # (env, vocabulary key) from `file_name`, for `of`
# Vocabularies this large have their trie kept in a file (trie_cache.py): smaller ones build in
# a few milliseconds, and never need the slicer (a walk allowing 20,000 tokens builds it).
CACHE_MIN_TOKENS = 20000

# End-of-sequence token when none is given: the first of these special tokens the tokenizer has.
# (llguidance's choice for tokenizer.json models).
EOS_NAMES = ("<|endoftext|>", "<|end_of_text|>", "</s>", "<eos>", "<\uff5cend\u2581of\u2581sentence\uff5c>")


class TokenEnv:
    """What a tokenizer hands the constraint engine (its `token_env()` returns one).

    `token_bytes`: id -> bytes of every ordinary token (special tokens left out: they are never
    allowed, except end-of-sequence); `n_vocab`: the mask size (one more than the largest id);
    `eos`: the default end-of-sequence id or None; `special_names`: special token text -> id
    (for grammars' `<|name|>`); `encode`: str -> ids, how the tokenizer spells forced text."""

    __slots__ = ("token_bytes", "n_vocab", "eos", "special_names", "encode")

    def __init__(self, token_bytes: dict, n_vocab: int, eos: int | None, special_names: dict, encode):
        self.token_bytes = token_bytes
        self.n_vocab = n_vocab
        self.eos = eos
        self.special_names = special_names
        self.encode = encode


def eos_among(special_names: dict, last: bool = False) -> int | None:
    """The end-of-sequence id as llguidance picks it when none is given: the first special
    token named in `EOS_NAMES` (`last`: the highest id among them, for tokenizer.json files)."""
    found = [special_names[n] for n in EOS_NAMES if n in special_names]
    if not found:
        return None
    return max(found) if last else found[0]


_ARRAYS = ("order", "byte", "depth", "end", "token")


# `TokenTrie.walk`: children met by lookup past this many (see there).
FANOUT = 16


class TokenTrie:
    _slicer = None  # its `slicer.Slicer`, read or built on first use (`Slicer.of`)

    def __init__(self, token_bytes: dict, n_vocab: int, eos: int | None, encode, order=None):
        """`order`: the ids of `token_bytes` sorted by their bytes, if already known."""
        self.n_vocab = n_vocab
        self.eos = eos
        self.default_eos = eos  # the tokenizer's own choice (`eos` may be the caller's)
        self.stored = None  # the trie file read (trie_cache.Stored), if any
        self.cache_file = None  # (path, key) of this vocabulary's trie file, if one is kept
        self.special_names: dict = {}  # special token text -> id (for grammars' `<|name|>`)
        self.encode = encode  # str -> list of ids (ordinary text)
        self.token_bytes: dict = token_bytes  # id -> bytes, ordinary tokens only
        self.max_token_len = max((len(b) for b in token_bytes.values()), default=0)
        if order is None:
            order = sorted((t for t, b in token_bytes.items() if b), key=token_bytes.__getitem__)
        self.order = order
        items = [(token_bytes[t], t) for t in order]
        byte, depth, end, token = [0], [0], [0], [-1]
        extra: dict = {}
        path: list = [0]  # node index per depth along the current branch
        prev = b""
        from_bytes = int.from_bytes
        for data, tid in items:
            # length of the common prefix with the previous token (sorted: shared nodes)
            n = len(data)
            lim = min(len(prev), n)
            x = from_bytes(prev[:lim], "big") ^ from_bytes(data[:lim], "big")
            k = lim - 1 - (x.bit_length() - 1) // 8 if x else lim
            if k == n == len(prev):  # same bytes as the previous token
                node = len(byte) - 1
                if token[node] >= 0:
                    extra.setdefault(node, []).append(tid)
                else:
                    token[node] = tid
                continue
            here = len(byte)
            for d in range(k + 1, len(path)):  # the previous branch's subtrees close here
                end[path[d]] = here
            del path[k + 1:]
            byte.extend(data[k:])
            depth.extend(range(k + 1, n + 1))
            end.extend([0] * (n - k))
            token.extend([-1] * (n - k))
            path.extend(range(here, here + n - k))
            token[-1] = tid
            prev = data
        total = len(byte)
        for node in path:
            end[node] = total
        self.byte, self.depth, self.end, self.token, self.extra = byte, depth, end, token, extra
        self.children0 = {byte[i]: i for i in range(1, total) if depth[i] == 1}

    @classmethod
    def from_env(cls, env: TokenEnv, key: str | None = None) -> "TokenTrie":
        """The trie of the vocabulary `env` describes.  A large vocabulary's trie is read from
        its trie file when there is one (with the slicer's parts, once a process built them),
        else built and written there (`trie_cache.py`); `key`: its `trie_cache.vocab_key` if
        known."""
        tb = env.token_bytes
        folder = trie_cache.cache_dir() if len(tb) >= CACHE_MIN_TOKENS else None
        stored = None
        if folder is not None:
            key = key or trie_cache.vocab_key(tb)
            path = os.path.join(folder, trie_cache.file_name(key))
            stored = trie_cache.load(path, key)
        if stored is not None:
            trie = cls.from_arrays(stored, stored.header["trie"], tb, env.n_vocab, env.eos, env.encode)
        else:
            trie = cls(tb, env.n_vocab, env.eos, env.encode)
        if folder is not None:
            trie.stored, trie.cache_file = stored, (path, key)
            if stored is None:
                try:
                    trie_cache.save(path, key, trie)
                except OSError:  # a read-only or full disk: no file, the same trie
                    trie.cache_file = None
        trie.special_names = dict(env.special_names)
        return trie

    @classmethod
    def from_arrays(cls, stored, rec: dict, token_bytes: dict, n_vocab: int, eos, encode) -> "TokenTrie":
        """A trie from its arrays in a trie file (`trie_cache.Stored`; `rec` its header entry)."""
        trie = cls.__new__(cls)
        trie.n_vocab = n_vocab
        trie.eos = trie.default_eos = eos
        trie.stored = trie.cache_file = None
        trie.special_names = {}
        trie.encode = encode
        trie.token_bytes = token_bytes
        trie.max_token_len = rec["max_token_len"]
        i = rec["arrays"][0]
        # the arrays become lists when first used: a mask the slicer serves walks only the
        # parts' own tries, so a process may never need the whole vocabulary's (~400k nodes)
        trie._pending = {name: (stored, i + k) for k, name in enumerate(_ARRAYS)}
        trie.extra = {k: v for k, v in rec["extra"]}
        trie.children0 = {b: k for b, k in rec["children0"]}
        return trie

    @classmethod
    def of(cls, tokenizer, eos_token: int | None = None) -> "TokenTrie":
        """The trie of `tokenizer` (cached on it), read through its `token_env()`: an anytok
        `Encoding`, a `tokenizer.json` pipeline (byte-level BPE such as Llama 3's, or with a
        byte-fallback decoder: Llama 2, Gemma 3), a SentencePiece `.model` with byte fallback
        (`anytok.load("tokenizer.model")`), or a GGUF file's tokenizer."""
        d = getattr(tokenizer, "__dict__", None)
        cache = d.get(_CACHE_ATTR) if d is not None else None
        if cache is not None and eos_token in cache:
            return cache[eos_token]
        if cache:  # the same vocabulary with another end-of-sequence: share the trie
            trie = copy.copy(next(iter(cache.values())))
        else:
            token_env = getattr(tokenizer, "token_env", None)
            if token_env is None:
                raise UnsupportedFeatureError(f"tokenizer type {type(tokenizer).__name__}",
                                              "it has no token_env() method")
            got = d.pop(_ENV_ATTR, None) if d is not None else None
            env, key = got if got is not None else (token_env(), None)
            trie = cls.from_env(env, key)
        if eos_token is not None:
            trie.eos = eos_token
        else:
            trie.eos = trie.default_eos
        if d is not None:
            d.setdefault(_CACHE_ATTR, {})[eos_token] = trie
        return trie

    @classmethod
    def file_name(cls, tokenizer) -> str | None:
        """The name of `tokenizer`'s trie file in the cache folder, when its trie is not made
        yet and its vocabulary is large enough to have one (else None): what a host keeping the
        folder's files elsewhere (the browser worker: in Cache Storage) puts in the folder
        before the first matcher.  The vocabulary and its key are kept on the tokenizer for
        `of`, which does not read or hash them again."""
        d = getattr(tokenizer, "__dict__", None)
        token_env = getattr(tokenizer, "token_env", None)
        if d is None or token_env is None or d.get(_CACHE_ATTR):
            return None
        got = d.get(_ENV_ATTR)
        if got is None:
            env = token_env()
            if len(env.token_bytes) < CACHE_MIN_TOKENS:
                return None
            got = d[_ENV_ATTR] = (env, trie_cache.vocab_key(env.token_bytes))
        return trie_cache.file_name(got[1])

    @classmethod
    def made(cls, tokenizer) -> "TokenTrie | None":
        """`tokenizer`'s trie if a matcher made it already, else None."""
        cache = getattr(tokenizer, "__dict__", {}).get(_CACHE_ATTR)
        return next(iter(cache.values())) if cache else None

    def __getattr__(self, name):
        # (only for attributes not set: the trie arrays of a trie file, until first used)
        pending = self.__dict__.get("_pending")
        if pending is None or name not in pending:
            raise AttributeError(name)
        value = pending[name]
        if isinstance(value, tuple):  # (the dict is shared by copies: one list for all)
            stored, i = value
            value = pending[name] = stored.array(i)
        setattr(self, name, value)
        return value

    # -- walking ---------------------------------------------------------------------------
    def walk(self, derive, state: int, prefix: bytes = b"") -> list[int]:
        """Ids of the tokens T = prefix + rest where every byte of `rest` keeps `state` live,
        and of the tokens that are prefixes of `prefix` (as llguidance's token healing)."""
        byte, depth, end, token, extra = self.byte, self.depth, self.end, self.token, self.extra
        out: list = []
        for k in range(1, len(prefix) + 1):  # tokens that are prefixes of `prefix` (llguidance too),
            p = self.node_at(prefix[:k])  # also when no token extends all of `prefix`
            if p is None:
                break
            if token[p] >= 0:
                out.append(token[p])
                out.extend(extra.get(p, ()))
        node = self.node_at(prefix)
        if node is None:
            return out
        base = depth[node]
        states = [0] * (self.max_token_len + 2)
        states[base] = state
        sset = derive.__self__
        rows = sset.rows  # cached transitions, -1 = not yet derived
        ranges = [(node + 1, end[node], base, state)]
        if not node:
            # from the root, only the subtrees of the bytes that keep `state` live: a state
            # that few bytes continue (a number's digits, whitespace) would otherwise meet
            # each of the root's ~200 children, once per part of the vocabulary (the same
            # tokens, in the same order: the children are sorted by byte)
            children = self.children0
            viable = sset.viable_bytes(state)
            if len(viable) < len(children) // 2:
                ranges = self._first_ranges(derive, rows, state, [c for c in map(children.get, viable) if c is not None], out)
        for i, stop, pd, ps in ranges:
            states[pd] = ps
            while i < stop:
                d = depth[i]
                p = states[d - 1]
                s = rows[p][byte[i]]
                if s < 0:
                    s = derive(p, byte[i])
                if s:
                    t = token[i]
                    if t >= 0:
                        out.append(t)
                        if i in extra:
                            out.extend(extra[i])
                    states[d] = s
                    i += 1
                else:
                    i = end[i]
        return out

    def _first_ranges(self, derive, rows, state: int, firsts: list, out: list) -> list:
        """The ranges of nodes to walk below the root's children `firsts` (ascending), each
        with the depth and state of its parent; the children's own tokens go to `out`.  A
        child with many children of its own, whose state few bytes keep live (after a space
        in a whitespace lexeme: one or two of a hundred), gives the ranges of those only,
        found in a byte -> child map (made on first use), instead of meeting each child."""
        byte, end, token, extra = self.byte, self.end, self.token, self.extra
        kids_of = self.__dict__.get("_kids")
        if kids_of is None:
            kids_of = self._kids = {}
        viable_of = derive.__self__.viable_bytes
        ranges = []
        for c in firsts:
            s1 = rows[state][byte[c]]
            if s1 < 0:
                s1 = derive(state, byte[c])
            if not s1:
                continue
            t = token[c]
            if t >= 0:
                out.append(t)
                if c in extra:
                    out.extend(extra[c])
            e = end[c]
            if e - c > FANOUT:
                kids = kids_of.get(c)
                if kids is None:
                    kids = kids_of[c] = self._children(c)
                if kids:
                    v1 = viable_of(s1)
                    if len(v1) * 4 < len(kids):
                        for b in v1:
                            k = kids.get(b)
                            if k is not None:
                                ranges.append((k, end[k], 1, s1))
                        continue
            ranges.append((c + 1, e, 1, s1))
        return ranges

    def first_mask(self) -> int:
        """The 256-bit set of the bytes some token starts with (kept)."""
        r = self.__dict__.get("_first_mask")
        if r is None:
            r = self._first_mask = sum(1 << b for b in self.children0)
        return r

    def seconds(self, b: int) -> int:
        """The 256-bit set of the bytes that follow byte `b` at the start of some token (kept)."""
        memo = self.__dict__.get("_seconds")
        if memo is None:
            memo = self._seconds = {}
        r = memo.get(b)
        if r is None:
            r = 0
            node = self.children0.get(b)
            if node is not None:
                byte, end = self.byte, self.end
                c, stop = node + 1, end[node]
                while c < stop:
                    r |= 1 << byte[c]
                    c = end[c]
            memo[b] = r
        return r

    def _children(self, node: int):
        """{byte: child} of `node` if it has more than FANOUT children, else False."""
        byte, end = self.byte, self.end
        kids = {}
        c, stop = node + 1, end[node]
        while c < stop:
            kids[byte[c]] = c
            c = end[c]
        return kids if len(kids) > FANOUT else False

    def has_extension(self, derive, state: int, prefix: bytes) -> bool:
        """Whether some token strictly longer than `prefix` starts with it and its remaining
        bytes keep `state` live."""
        node = self.node_at(prefix)
        if node is None:
            return False
        byte, depth, end, token = self.byte, self.depth, self.end, self.token
        states = [0] * (self.max_token_len + 2)
        states[depth[node]] = state
        i, stop = node + 1, end[node]
        while i < stop:
            d = depth[i]
            s = derive(states[d - 1], byte[i])
            if s:
                if token[i] >= 0:
                    return True
                states[d] = s
                i += 1
            else:
                i = end[i]
        return False

    def node_at(self, data: bytes) -> int | None:
        """The node reached by `data` from the root, or None."""
        if not data:
            return 0
        node = self.children0.get(data[0])
        if node is None:
            return None
        byte, end = self.byte, self.end
        for b in data[1:]:
            child = node + 1
            stop = end[node]
            while child < stop and byte[child] != b:
                child = end[child]
            if child >= stop:
                return None
            node = child
        return node

    # -- tokenizing forced bytes -----------------------------------------------------------
    def greedy(self, data: bytes) -> list[int]:
        out = []
        i = 0
        while i < len(data):
            node, best, best_end = 0, None, i
            j = i
            while j < len(data):
                node = self.node_at_child(node, data[j])
                if node is None:
                    break
                if self.token[node] >= 0:
                    best, best_end = self.token[node], j
                j += 1
            if best is None:
                i += 1  # no token for this byte: skipped, as llguidance does
            else:
                out.append(best)
                i = best_end + 1
        return out

    def node_at_child(self, node: int, b: int) -> int | None:
        if node == 0:
            return self.children0.get(b)
        child, stop = node + 1, self.end[node]
        byte, end = self.byte, self.end
        while child < stop and byte[child] != b:
            child = end[child]
        return child if child < stop else None

    def tokenize_bytes(self, data: bytes) -> list[int]:
        out: list = []
        while data:
            try:
                out.extend(self.encode(data.decode("utf-8")))
                break
            except UnicodeDecodeError as e:
                if e.start:
                    out.extend(self.encode(data[:e.start].decode("utf-8")))
                out.extend(self.greedy(data[e.start:e.end]))
                data = data[e.end:]
        return out

    def decode(self, ids) -> bytes:
        tb = self.token_bytes
        return b"".join(tb.get(t, b"") for t in ids)

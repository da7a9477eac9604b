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

Tokenizers: tiktoken-style Encodings and byte-level BPE `tokenizer.json` pipelines read their
token bytes directly; SentencePiece-style vocabularies (a `tokenizer.json` with a byte-fallback
decoder, `_byte_fallback_trie`, or a `.model` file, `_sentencepiece_trie`) are read as
llguidance reads them: `<0xXX>` pieces are that byte, other pieces their text with U+2581 as a
space, control/unknown pieces special; their forced bytes are tokenized without the prepended
U+2581.  GGUF tokenizers (`anytok.load("x.gguf")`) as `llguidance.llamacpp` reads a llama.cpp
vocabulary (`_gguf_trie`).
"""

from __future__ import annotations

import re

from .errors import UnsupportedFeatureError

_CACHE_ATTR = "_anytok_constrain_trie"

# End-of-sequence token when none is given: the first of these special tokens the tokenizer has.
# (llguidance's choice for tokenizer.json models).
EOS_NAMES = ("<|endoftext|>", "<|end_of_text|>", "</s>", "<eos>", "<\uff5cend\u2581of\u2581sentence\uff5c>")


class TokenTrie:
    def __init__(self, token_bytes: dict, n_vocab: int, eos: int | None, encode, order=None):
        """`order`: the ids of `token_bytes` sorted by their bytes, if already known."""
        self.n_vocab = n_vocab
        self.eos = eos
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
    def of(cls, tokenizer, eos_token: int | None = None) -> "TokenTrie":
        """The trie of `tokenizer` (cached on it): an anytok `Encoding`, a `tokenizer.json`
        pipeline that is one (byte-level BPE such as Llama 3's; `to_encoding()` proves it) or
        has a byte-fallback decoder (Llama 2, Gemma 3), or a SentencePiece `.model` with byte
        fallback (`anytok.load("tokenizer.model")`, e.g. Mistral's or Llama 2's)."""
        key = (_CACHE_ATTR, eos_token)
        cache = getattr(tokenizer, "__dict__", {}).get(_CACHE_ATTR)
        if cache is not None and key in cache:
            return cache[key]
        enc = tokenizer
        if type(tokenizer).__name__ == "GGUFTokenizer" and hasattr(tokenizer, "vocab"):
            trie = _gguf_trie(tokenizer, eos_token)
            tokenizer.__dict__.setdefault(_CACHE_ATTR, {})[key] = trie
            return trie
        if not isinstance(getattr(tokenizer, "_mergeable_ranks", None), dict):
            to_encoding = getattr(tokenizer, "to_encoding", None)
            if to_encoding is None:  # a SentencePiece `.model`, or nothing we know
                trie = _sentencepiece_trie(tokenizer, eos_token)
                if hasattr(tokenizer, "__dict__"):
                    tokenizer.__dict__.setdefault(_CACHE_ATTR, {})[key] = trie
                return trie
            try:
                enc = to_encoding()
            except Exception as e:  # the pipeline says why it is not an Encoding
                trie = _byte_fallback_trie(tokenizer, eos_token, str(e))
                if hasattr(tokenizer, "__dict__"):
                    tokenizer.__dict__.setdefault(_CACHE_ATTR, {})[key] = trie
                return trie
        specials = enc._special_tokens
        if eos_token is None and enc is tokenizer:  # a tiktoken-style Encoding
            eos_token = next((specials[n] for n in EOS_NAMES if n in specials), None)
        elif eos_token is None:  # a tokenizer.json: as llguidance, the last EOS name by id
            eos_token = max((specials[n] for n in EOS_NAMES if n in specials), default=None)
        token_bytes = {rank: data for data, rank in enc._mergeable_ranks.items()}
        trie = cls(token_bytes, tokenizer.n_vocab, eos_token, enc.encode_ordinary)
        trie.special_names = dict(specials)
        try:
            tokenizer.__dict__.setdefault(_CACHE_ATTR, {})[key] = trie
        except AttributeError:
            pass
        return trie

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
        i, stop = node + 1, end[node]
        rows = derive.__self__.rows  # cached transitions, -1 = not yet derived
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


def _byte_fallback_trie(tokenizer, eos_token, why: str) -> TokenTrie:
    """The trie of a SentencePiece-style `tokenizer.json` pipeline (byte-fallback decoder, `▁`
    for spaces), read as llguidance reads it: `<0xXX>` tokens are that byte, other tokens (added
    ones too) their text with `▁` as a space; added tokens that are special or look like `<...>` are special;
    forced bytes are tokenized by the same pipeline without its prepended `▁` (no `Prepend`
    normalizer, Metaspace `prepend_scheme` "never")."""
    import copy

    to_config = getattr(tokenizer, "to_config", None)
    cfg = to_config() if to_config is not None else None
    if not cfg or "ByteFallback" not in _types(cfg.get("decoder")):
        raise UnsupportedFeatureError(
            f"tokenizer {getattr(tokenizer, 'name', '')!r} (neither byte-level BPE nor byte-fallback)", why)
    specials, eos_found, names = set(), None, {}
    for a in sorted(cfg.get("added_tokens") or (), key=lambda a: a["id"]):
        content = a["content"]
        if a.get("special") or (content.startswith("<") and content.endswith(">")):
            specials.add(a["id"])
            names[content] = a["id"]
            if content in EOS_NAMES:
                eos_found = a["id"]  # the last one, as llguidance
    token_bytes = {}
    for t in range(tokenizer.n_vocab):
        if t in specials:
            continue
        name = tokenizer.id_to_token(t)
        if name is None:
            continue
        if len(name) == 6 and name.startswith("<0x") and name.endswith(">"):
            token_bytes[t] = bytes((int(name[3:5], 16),))
        else:
            token_bytes[t] = name.replace("\u2581", " ").encode("utf-8")
    if eos_token is None:
        eos_token = eos_found
    plain = copy.deepcopy(cfg)
    plain["normalizer"] = _drop_prepend(plain.get("normalizer"))
    _never_prepend(plain.get("pre_tokenizer"))
    encoder = type(tokenizer).from_config(plain)

    def encode(text: str) -> list:
        return encoder.encode(text, add_special_tokens=False)

    trie = TokenTrie(token_bytes, tokenizer.n_vocab, eos_token, encode)
    trie.special_names = names
    return trie


def _gguf_trie(tokenizer, eos_token) -> TokenTrie:
    """The trie of a GGUF file's tokenizer (`anytok.gguf.GGUFTokenizer`), as llguidance's
    `llguidance.llamacpp.lltokenizer_from_vocab` reads a llama.cpp vocabulary: each token's
    bytes are llama.cpp's piece for it (`llama_token_to_piece` with special=true: control,
    unknown and user-defined tokens as their text, byte tokens as that byte, `▁` as a space);
    control tokens and user-defined tokens shaped `<...>` are special (never allowed but for
    EOS); unused tokens have no bytes.  EOS: the file's EOS token.  Forced bytes are tokenized
    as llama.cpp does (add_special=false, parse_special=false); where that puts something in
    front of the text (SentencePiece's added space), llguidance tokenizes a sentinel byte and
    the text, and drops the sentinel's tokens: the same is done here."""
    from ..gguf import vocab as V

    v = tokenizer.vocab
    pieces = tokenizer._piece_table()
    token_bytes = {}
    for t, (piece, a) in enumerate(zip(pieces, v.attrs)):
        if a & V.CONTROL or (a & V.USER_DEFINED and piece[:1] == b"<" and piece[-1:] == b">"):
            continue
        token_bytes[t] = piece
    if eos_token is None:
        eos_token = v.special.get("eos")
    raw = tokenizer.encode
    trie = TokenTrie(token_bytes, tokenizer.n_vocab, eos_token, raw)
    if trie.decode(raw("a")) == b"a":
        return trie

    def childless(data: bytes) -> bool:
        node = trie.node_at(data)
        return node is None or trie.end[node] == node + 1

    sentinel = next((b for b in range(1, 32) if (n := trie.node_at(bytes([b]))) is not None and trie.token[n] >= 0
                     and childless(bytes([b])) and childless(bytes([32, b]))), None)
    if sentinel is None:
        raise UnsupportedFeatureError(f"GGUF tokenizer {tokenizer.name!r}: no sentinel byte for forced text",
                                      "its tokenizer adds to the text and no byte token in 1..31 stands alone")
    mark = chr(sentinel)
    lead = raw(mark)

    def encode(text: str) -> list:
        if not text:
            return []
        ids = raw(mark + text)
        if ids[:len(lead)] != lead:
            raise ValueError(f"GGUF tokenizer {tokenizer.name!r}: the sentinel byte {sentinel} merged with {text!r}")
        return ids[len(lead):]

    trie.encode = encode
    return trie


def _types(node) -> set:
    """Every "type" in a (nested) tokenizer.json component."""
    out = set()
    if isinstance(node, dict):
        if "type" in node:
            out.add(node["type"])
        for v in node.values():
            out |= _types(v)
    elif isinstance(node, list):
        for v in node:
            out |= _types(v)
    return out


def _drop_prepend(norm):
    if not isinstance(norm, dict):
        return norm
    if norm.get("type") == "Prepend":
        return None
    if norm.get("type") == "Sequence":
        norm["normalizers"] = [n for n in (_drop_prepend(x) for x in norm["normalizers"]) if n is not None]
    return norm


def _never_prepend(pre) -> None:
    if not isinstance(pre, dict):
        return
    if pre.get("type") == "Metaspace":
        pre["prepend_scheme"] = "never"
        pre["add_prefix_space"] = False
    for p in pre.get("pretokenizers") or ():
        _never_prepend(p)


def _sentencepiece_trie(tokenizer, eos_token) -> TokenTrie:
    """The trie of a SentencePiece `.model` (anytok's `SentencePieceTokenizer`), read as
    llguidance reads the same vocabulary converted to a `tokenizer.json` (Llama 2-style:
    byte-fallback decoder, control and unknown pieces as special added tokens, user-defined
    pieces as added tokens): `<0xXX>` pieces are that byte; normal, user-defined and unused
    pieces their text with U+2581 as a space, except user-defined pieces shaped `<...>`, which
    llguidance takes for special tokens; control and unknown pieces are special.  EOS: the
    model's `eos_piece` (`</s>`).  Forced bytes are tokenized by the model itself without its
    dummy-prefix U+2581 (as `_byte_fallback_trie` drops the pipeline's prepended one), the text
    of a control or unknown piece (`</s>`, `[INST]`) standing for that piece, as the converted
    pipeline's special added tokens do.

    Supported: Unigram and BPE models with byte fallback, whitespace escaped as U+2581 (as a
    prefix), no extra-whitespace removal, no normalization charsmap and no denormalizer;
    anything else raises UnsupportedFeatureError naming it (a model without byte fallback
    cannot spell bytes outside its pieces, and llguidance refuses such a vocabulary too)."""
    try:
        from ..sentencepiece.tokenizer import SentencePieceTokenizer
    except ImportError:  # pragma: no cover - a partial install
        SentencePieceTokenizer = None
    if SentencePieceTokenizer is None or not isinstance(tokenizer, SentencePieceTokenizer):
        raise UnsupportedFeatureError(f"tokenizer type {type(tokenizer).__name__}")
    from ..sentencepiece.model_proto import BPE, BYTE, CONTROL, MODEL_TYPE_NAMES, UNIGRAM, UNKNOWN, USER_DEFINED
    from ..sentencepiece.normalizer import Normalizer

    tok = tokenizer
    what = f"SentencePiece tokenizer {tok.name!r}"
    ns = tok.normalizer_spec
    if tok.model_type not in (UNIGRAM, BPE):
        raise UnsupportedFeatureError(f"{what}: model type {MODEL_TYPE_NAMES.get(tok.model_type, tok.model_type)}",
                                      "only Unigram and BPE models")
    if not tok.byte_fallback:
        raise UnsupportedFeatureError(f"{what} without byte fallback",
                                      "bytes outside its pieces have no token (llguidance needs a byte-fallback vocabulary)")
    if not ns.escape_whitespaces or tok.treat_whitespace_as_suffix:
        raise UnsupportedFeatureError(f"{what}: whitespace not escaped as a U+2581 prefix",
                                      "escape_whitespaces false or treat_whitespace_as_suffix")
    if ns.remove_extra_whitespaces:
        raise UnsupportedFeatureError(f"{what}: remove_extra_whitespaces",
                                      "its encoder would drop forced whitespace")
    if ns.precompiled_charsmap:
        raise UnsupportedFeatureError(f"{what}: normalization charsmap {ns.name!r}",
                                      "its encoder would rewrite forced bytes")
    if tok.denormalizer is not None:
        raise UnsupportedFeatureError(f"{what}: denormalizer", "decoded text differs from its pieces")
    token_bytes = {}
    user_defined = []
    special_ids = {}  # control/unknown piece -> id
    for t, (piece, kind) in enumerate(zip(tok.pieces, tok.types)):
        if kind == BYTE:
            token_bytes[t] = bytes((int(piece[3:5], 16),))
        elif kind == CONTROL or kind == UNKNOWN:
            special_ids.setdefault(piece, t)
        else:
            if kind == USER_DEFINED:
                user_defined.append(piece)
                if piece.startswith("<") and piece.endswith(">"):
                    continue
            token_bytes[t] = piece.replace("\u2581", " ").encode("utf-8")
    if eos_token is None and tok.eos_id >= 0:
        eos_token = tok.eos_id
    normalizer = Normalizer(add_dummy_prefix=False, remove_extra_whitespaces=False, escape_whitespaces=True,
                            user_defined=user_defined)
    normalize, tokenize = normalizer.normalize, tok.model.tokenize
    # The converted tokenizer.json has the control/unknown pieces as special added tokens, and
    # its encoder (llguidance's) takes their text for them wherever it appears: `</s>` in forced
    # bytes becomes the EOS id, as with a Llama 2 tokenizer.json.  Leftmost, then longest.
    names = sorted((p for p in special_ids if p), key=lambda p: (-len(p), p))
    find = re.compile("|".join(map(re.escape, names))).search if names else None

    def encode(text: str) -> list:
        m = find(text) if find is not None else None
        if m is None:
            return tokenize(normalize(text))
        out: list = []
        pos = 0
        while m is not None:
            if m.start() > pos:
                out.extend(tokenize(normalize(text[pos:m.start()])))
            out.append(special_ids[m.group()])
            pos = m.end()
            m = find(text, pos)
        if pos < len(text):
            out.extend(tokenize(normalize(text[pos:])))
        return out

    trie = TokenTrie(token_bytes, tok.n_vocab, eos_token, encode)
    trie.special_names = {p: t for p, t in special_ids.items() if p}
    return trie

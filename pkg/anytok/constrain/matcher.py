"""The matcher: one generation constrained by one constraint, over one tokenizer.

Data flow: the matcher keeps a stack with one entry per consumed token: the lexer state (an
expression id of the constraint's `ExprSet`) after the bytes of all tokens so far, and the
token.  `mask()` turns the top entry into the set of allowed tokens, following llguidance's
`TokenParser`:

1. Forced bytes: while the state does not accept and exactly one byte keeps it live, that byte
   is forced (`_forced_bytes`, cached per `es.canonical(state)`: a grammar's states inside a
   lexeme with the same future share it, see earley.py).
2. No forced bytes: the allowed tokens are those whose bytes all keep the state live (a walk of
   the token trie, or, once a walk has allowed many tokens, of the parts of the vocabulary the
   slicer cannot add whole; see `slicer.py`), plus end-of-sequence if the state accepts.
   Cached per state, so a repeated state (as in `[0-9]+` or free text) costs a dict lookup;
   the key is the state with its repetition counts capped past the longest token
   (`ExprSet.truncated`), so `[a-z ]{0,300}` with 200 or 250 repetitions left is one entry;
   for a grammar, the state's `canonical` key.
3. Forced bytes (tokenizers with a canonical tokenization, such as tiktoken's): the last
   consumed token's bytes plus the forced bytes are tokenized with the tokenizer's own encoder;
   trailing tokens that a longer token could replace (some token extends their bytes viably
   past the forced ones) are chopped off.  If tokens remain, the first one is the only allowed
   token (and `forced()` lists them all); otherwise the allowed tokens are those that start
   with the chopped bytes and continue viably from the state after the forced bytes (with
   nothing chopped, that state's mask as in step 2; either way through the slicer if there is
   one).  Cached per (state, last token).

Grammars with special tokens (`es.token_ranges`): the mask also allows the ids of every
token-range lexeme `es.special_next(state)` lists, never an ordinary token with byte 0xFF;
a special token that is the only continuation is forced, and the forced tokens go on after
it.  A grammar that forces the same bytes forever is forced up to `ENDLESS_FORCED_BYTES`, as
llguidance.  Grammars with `stop=`: a consumed token's bytes past the stop are dropped
(`es.barrier`); with `max_tokens=`: `consume` counts the tokens of the current lexeme and
limits it (`es.limit_max_tokens`; see earley.py); with `stop=""`: end-of-sequence is allowed
where it may end the pending lexeme (`es.eos_end`), and consuming it there goes on from the
state after that lexeme, a step with nothing forced.  `%llguidance {"no_forcing": true}`:
nothing is ever forced (steps 1 and 3 are skipped).

`consume(token)` checks the token's bytes against the lexer state (not against the mask: a
non-canonical but valid token is accepted, as llguidance does) and pushes the new state;
`rollback(n)` pops entries.  A rejected token leaves the matcher unchanged.
"""

from __future__ import annotations

from .._gc import gc_paused
from .derivatives import NOTHING
from .errors import UnsupportedFeatureError
from .slicer import Slicer, _bits

# A walk allowing this many tokens builds the tokenizer's slicer (~1.5 s for 200k tokens, once).
SLICER_THRESHOLD = 20000
# Masks kept per (constraint, tokenizer): 1024 masks of a 200k vocabulary are 25 MB.
MASK_CACHE_LIMIT = 1024
# A grammar that forces the same bytes forever: forced this many (llguidance stops near
# 50,000, its item budget, one Earley row per byte).
ENDLESS_FORCED_BYTES = 50_000
# Forced tokens listed at most, when special tokens and bytes alternate without end.
MAX_FORCED_TOKENS = 10_000


# byte -> the positions of its set bits, ascending (masks to id lists)
_BYTE_BITS = tuple(tuple(k for k in range(8) if b >> k & 1) for b in range(256))


class _Shared:
    """Per (constraint, tokenizer) caches, shared by all matchers of that pair."""

    def __init__(self, es, trie):
        self.es = es
        self.trie = trie
        self.forced: dict = {}  # state -> (forced bytes, state after them)
        self.masks: dict = {}  # state or (state, last token) -> (mask bytes, ff tokens)
        self.id_lists: dict = {}  # id(mask bytes) -> (mask bytes, allowed ids)
        self.n_words = (trie.n_vocab + 31) // 32
        # special tokens (grammars with `<|name|>` / `<[ids]>`): `es.token_ranges[j]` lists the
        # ids that the lexeme `\xff` + byte j allows; ordinary tokens containing byte 0xFF are
        # never allowed nor consumed (llguidance never pushes 0xFF)
        self.special = bool(es.token_ranges)
        self.barrier = es.barrier  # grammars with `stop=`: see earley.py
        self.max_tokens = es.has_max_tokens  # `max_tokens=`: ditto
        # %llguidance {"no_forcing": true}: no forced bytes nor tokens (llguidance's
        # `can_force_bytes` false): every mask is the walk from the state
        self.no_forcing = bool(es.no_forcing)
        # `stop=""`: end-of-sequence may end a lexeme (`es.eos_end`) and the output go on
        self.eos_end = es.eos_end if es.has_eos_ending else None
        if self.special:
            self.ff_bits = _bits([t for t, b in trie.token_bytes.items() if 0xFF in b])
            self.range_bits = [
                sum(((1 << (hi + 1)) - (1 << lo)) for lo, hi in ranges) for ranges in es.token_ranges]

    def forced_bytes(self, state: int):
        key = self.es.canonical(state)  # (states with the same future force the same bytes)
        r = self.forced.get(key)
        if r is None:
            es = self.es
            out = bytearray()
            s = state
            seen: dict = {}  # state -> position in `out`
            path: list = []  # the state before each forced byte
            while not es.nullable[s]:
                viable = es.viable_bytes(s)
                if len(viable) != 1 or viable[0] == 0xFF and self.special:
                    break  # (0xFF starts a special token: never forced as a byte)
                if s in seen:  # a cycle (grammars only: an ignored lexeme shadowing the one
                    # required): as llguidance, keep forcing, up to its budget of forced bytes
                    start = seen[s]
                    cycle = bytes(out[start:])
                    while len(out) < ENDLESS_FORCED_BYTES:
                        out += cycle
                    del out[ENDLESS_FORCED_BYTES:]
                    s = path[start + (len(out) - start) % len(cycle)]
                    break
                seen[s] = len(out)
                path.append(s)
                out.append(viable[0])
                s = es.derive(s, viable[0])
            r = self.forced[key] = (bytes(out), s)
        return r

    def _pack(self, ids) -> bytes:
        if len(ids) > 64:  # (as _bits: dense lists are packed in C)
            return _bits(ids).to_bytes(4 * self.n_words, "little")
        buf = bytearray(4 * self.n_words)
        for t in ids:
            buf[t >> 3] |= 1 << (t & 7)
        return bytes(buf)

    def _pack_parts(self, acc: int, ids: list, eos: int | None) -> bytes:
        """The mask bytes of bitmask `acc`, the tokens `ids` and token `eos` (if not None).  A
        sparse list of ids is set in the bytes directly (as `_bits` would in its own buffer),
        not packed into an int and ORed: an int of the vocabulary's width converts from and
        to bytes in 50-100 us natively, more than a whole mask of a few walked parts."""
        n = 4 * self.n_words
        if ids and len(ids) * 8 >= max(ids):  # dense (`_bits`): packed in C as an int
            acc |= _bits(ids)
            ids = ()
        if not ids and eos is None:
            return acc.to_bytes(n, "little")
        buf = bytearray(acc.to_bytes(n, "little")) if acc else bytearray(n)
        for t in ids:
            buf[t >> 3] |= 1 << (t & 7)
        if eos is not None:
            buf[eos >> 3] |= 1 << (eos & 7)
        return bytes(buf)

    def step(self, state: int, last: int | None, no_forcing: bool = False):
        """(mask bytes, forced tokens) for `state` after token `last` (`no_forcing`: as if
        nothing were forced there)."""
        no_forcing = no_forcing or self.no_forcing
        fb, after = self.forced_bytes(state) if not no_forcing else (b"", state)
        # no forced bytes: the mask depends only on the strings of at most the longest token's
        # length that the state allows, so states equal up to that length share it
        key = self.es.truncated(state, self.trie.max_token_len) if not fb else (self.es.canonical(state), last)
        if no_forcing and not self.no_forcing:
            key = ("no forcing", key)
        r = self.masks.get(key)
        if r is not None:
            return r
        es, trie = self.es, self.trie
        ff: list = []
        if not fb and self.special and not no_forcing:
            ff = self._special_forced(state)
            if ff:
                r = self.masks[key] = (self._pack(ff[:1]), ff)
                return r
        if not fb:
            slicer = self._slicer()
            if slicer is not None:
                acc, ids = slicer.parts(es, state)
            else:
                acc, ids = 0, trie.walk(es.derive_class, state)
                if len(ids) >= SLICER_THRESHOLD:  # free text: worth building the slices now
                    Slicer.of(trie)
            eos = trie.eos if trie.eos is not None and (
                es.nullable[state] or self.eos_end and self.eos_end(state)) else None
            if self.special:
                bits = (acc | _bits(ids)) & ~self.ff_bits
                for j in es.special_next(state):
                    bits |= self.range_bits[j]
                if eos is not None:
                    bits |= 1 << eos
                mask = bits.to_bytes(4 * self.n_words, "little")
            else:
                mask = self._pack_parts(acc, ids, eos)
        else:
            existing = [last] if last is not None and last in trie.token_bytes else []
            allb = trie.decode(existing) + fb
            tokens = trie.tokenize_bytes(allb)
            if tokens[:len(existing)] != existing:
                existing = []
                allb = fb
                tokens = trie.tokenize_bytes(fb)
            rest = tokens[len(existing):]
            chop_tokens, chop_bytes = self._chop(rest, after)
            ff = rest[:len(rest) - chop_tokens]
            if ff and not chop_tokens and self.special:  # a special token may follow
                ff = ff + self._special_forced(after)
            prefix = allb[len(allb) - chop_bytes:] if chop_bytes else b""
            slicer = None if ff else self._slicer()
            if ff:
                mask = self._pack([ff[0]])
            elif slicer is not None:  # (the tokens `prefix` + bytes keeping `after` live)
                mask = self._pack_parts(*slicer.parts(es, after, prefix), None)
            else:
                mask = self._pack(trie.walk(es.derive_class, after, prefix))
        r = (mask, ff)
        if len(self.masks) >= MASK_CACHE_LIMIT:  # drop the oldest half (insertion order)
            for k in list(self.masks)[:MASK_CACHE_LIMIT // 2]:
                del self.masks[k]
        self.masks[key] = r
        return r

    def _slicer(self):
        """The tokenizer's slicer if built or in its trie file (then read at once), else None."""
        trie = self.trie
        slicer = trie._slicer
        if slicer is None and Slicer.stored_for(trie):
            slicer = Slicer.of(trie)
        return slicer

    def _special_forced(self, state: int) -> list:
        """Forced tokens from `state` when its only continuation is one special token (one
        token-range lexeme of a single id), then whatever that forces, as llguidance's
        `force_bytes`; [] otherwise."""
        es, trie = self.es, self.trie
        out: list = []
        s = state
        while len(out) < MAX_FORCED_TOKENS:
            if es.nullable[s] or es.viable_bytes(s) != [0xFF]:
                break
            nxt = es.special_next(s)
            ranges = {r for j in nxt for r in es.token_ranges[j]}
            if len(ranges) != 1:
                break
            (tid, hi), = ranges
            if tid != hi:
                break
            s = es.special_consume(s, tid)
            out.append(tid)
            fb, after = self.forced_bytes(s)
            if not fb:
                continue
            tokens = trie.tokenize_bytes(fb)
            chop_tokens, _ = self._chop(tokens, after)
            out.extend(tokens[:len(tokens) - chop_tokens])
            if chop_tokens:
                break
            s = after
        return out

    def ids(self, mask: bytes) -> list[int]:
        """The token ids set in `mask`, ascending (cached per mask object)."""
        r = self.id_lists.get(id(mask))
        if r is not None and r[0] is mask:
            return r[1]
        out: list = []
        bits = _BYTE_BITS
        for i, byte in enumerate(mask):
            if byte:
                base = i << 3
                out.extend([base + k for k in bits[byte]])
        if len(self.id_lists) >= 64:
            self.id_lists.clear()
        self.id_lists[id(mask)] = (mask, out)
        return out

    def _has_extension(self, state: int, tail: bytes) -> bool:
        """`TokenTrie.has_extension` of the vocabulary, through the slicer's parts when there is
        a slicer: then the whole vocabulary's trie (read from the trie file on first use, ~25 ms
        for 200k tokens) is never needed.  A part whose slice `tail` kills has no token
        starting with it (each of its tokens keeps the slice live), so its trie is not read."""
        derive = self.es.derive_class
        slicer = self._slicer()
        if slicer is None:
            return self.trie.has_extension(derive, state, tail)
        for s in slicer.slices:
            if not s.ids:
                continue
            r, d = s.start, s.es.derive
            for b in tail:
                r = d(r, b)
                if not r:
                    break
            if r and s.trie.has_extension(derive, state, tail):
                return True
        return slicer.rest.has_extension(derive, state, tail)

    def _chop(self, tokens: list, state: int):
        """How many trailing tokens (and their bytes) a longer token could replace."""
        trie = self.trie
        suff = trie.decode(tokens[-4:])
        suff = suff[max(0, len(suff) - trie.max_token_len):]
        for i in range(len(suff)):
            tail = suff[i:]
            if self._has_extension(state, tail):
                n = 0
                for k in range(1, len(tokens) + 1):
                    n += len(trie.token_bytes[tokens[-k]])
                    if n >= len(tail):
                        return k, n
        return 0, 0



def _nesting_guard(method):
    """Grammar states grow with nesting (one continuation per open bracket), and derivatives
    recurse into them: past Python's recursion limit (hundreds of levels of JSON nesting),
    raise a clear error rather than fail halfway (the matcher is left unchanged)."""
    def guarded(self, *args):
        self._sh.es.refuel()  # each call has its own work budget (`Limits`, step_*)
        with gc_paused():
            try:
                return method(self, *args)
            except RecursionError:
                raise UnsupportedFeatureError(
                    "output nested this deeply", "beyond Python's recursion limit; sys.setrecursionlimit raises it"
                ) from None

    guarded.__name__, guarded.__doc__ = method.__name__, method.__doc__
    return guarded


class Matcher:
    """Masks for one generation; see the module docstring."""

    def __init__(self, shared: _Shared, start: int):
        self._sh = shared
        # (state, last token, ended by EOS); `ended` is None right after an end-of-sequence
        # that ended a `stop=""` lexeme: that step has no forced bytes (as llguidance, which
        # forces bytes only once per output length, and EOS added no byte)
        self._stack: list = [(start, None, False)]
        # grammars with `max_tokens=`: per stack entry, the index of the first token that
        # touched the current lexeme's Earley set (llguidance's row `token_idx_start`)
        self._rows: list = [0]
        self._stopped = False

    @property
    def n_vocab(self) -> int:
        return self._sh.trie.n_vocab

    @property
    def eos_token(self) -> int | None:
        return self._sh.trie.eos

    @_nesting_guard
    def mask(self) -> bytes:
        """One bit per token id (little-endian 32-bit words, llguidance's layout)."""
        state, last, ended = self._stack[-1]
        if ended:
            return self._sh._pack([self._sh.trie.eos])
        return self._sh.step(state, last, ended is None)[0]

    @_nesting_guard
    def allowed(self) -> list[int]:
        """The allowed token ids, ascending."""
        state, last, ended = self._stack[-1]
        if ended:
            return [self._sh.trie.eos]
        return list(self._sh.ids(self._sh.step(state, last, ended is None)[0]))

    @_nesting_guard
    def forced(self) -> list[int]:
        """Tokens forced now (the only continuation, as llguidance's `compute_ff_tokens`)."""
        state, last, ended = self._stack[-1]
        if ended:
            return []
        return list(self._sh.step(state, last, ended is None)[1])

    def is_accepting(self) -> bool:
        """Whether the output so far is complete (end-of-sequence allowed)."""
        state, _, ended = self._stack[-1]
        return ended or self._sh.es.nullable[state]

    def is_stopped(self) -> bool:
        """Whether the last `consume` left nothing but end-of-sequence possible (or consumed it).
        As in llguidance, this is decided by `consume`: a fresh or rolled-back matcher is not
        stopped, even where only end-of-sequence is allowed."""
        return self._stopped

    @_nesting_guard
    def consume(self, token: int) -> bool:
        """Append `token` if the constraint allows it there; return whether it did.

        End-of-sequence is allowed when the output is complete; once stopped, consuming it
        again succeeds without adding to the history (as llguidance)."""
        state, _, ended = self._stack[-1]
        sh = self._sh
        es = sh.es
        if ended or self._stopped:
            return token == sh.trie.eos
        if token == sh.trie.eos and sh.eos_end:
            s = sh.eos_end(state)
            if s:  # (as llguidance: the token is no output; the last token stays the one before)
                if sh.max_tokens:
                    self._rows[len(self._stack):] = [len(self._stack)]
                self._stack.append((s, self._stack[-1][1], None))
                self._stopped = es.nullable[s] and not es.viable_bytes(s)
                return True
        if token == sh.trie.eos and es.nullable[state]:
            self._stack.append((state, token, True))
            self._stopped = True
            return True
        if sh.special and isinstance(token, int):
            s = es.special_consume(state, token)
            if s:
                if sh.max_tokens:
                    self._rows[len(self._stack):] = [len(self._stack) - 1]
                self._stack.append((s, token, False))
                self._stopped = es.nullable[s] and not es.viable_bytes(s)
                return True
        if token == sh.trie.eos:
            return False
        data = sh.trie.token_bytes.get(token) if isinstance(token, int) else None
        if not data or sh.special and 0xFF in data:
            return False
        derive = es.derive
        s = state
        barrier = sh.barrier
        limited = sh.max_tokens
        if limited:
            i = len(self._stack) - 1  # this token's index
            row = self._rows[-1]
            boundary = False
        for b in data:
            prev = s
            s = derive(s, b)
            if s == NOTHING:
                return False
            if limited:
                boundary = es.is_boundary(prev, b, s)
                if boundary:
                    row = i
            if barrier and s in barrier:  # a `stop=` ended: as llguidance, the token's
                s = barrier[s]  # bytes after the stop are dropped
                break
        if limited:
            if not boundary:  # as llguidance: mid-lexeme, lexemes past their max_tokens go
                s = es.limit_max_tokens(s, i + 1 - row)
                if s == NOTHING:
                    return False
            if es.is_fresh(s) and (i or len(data) > 1):
                # a lexeme ended with the token's last byte (or was ended after it): the new
                # Earley set starts at the next token's first byte, so it is that token's (as
                # llguidance's row start_byte_idx; except after a lexeme ending at byte 0)
                row = i + 1
            self._rows[len(self._stack):] = [row]
        self._stack.append((s, token, False))
        self._stopped = es.nullable[s] and not es.viable_bytes(s)
        return True

    def consume_tokens(self, tokens) -> int:
        """Consume tokens in order until one is rejected; return how many were consumed."""
        n = 0
        for t in tokens:
            if not self.consume(t):
                break
            n += 1
        return n

    def rollback(self, n: int) -> None:
        """Undo the last `n` consumed tokens."""
        if n < 0 or n > len(self._stack) - 1:
            raise ValueError(f"cannot roll back {n} tokens: {len(self._stack) - 1} consumed")
        if n:
            del self._stack[-n:]
            del self._rows[len(self._stack):]
        self._stopped = False

    def reset(self) -> None:
        """Back to the initial state."""
        del self._stack[1:]
        del self._rows[1:]
        self._stopped = False

    @property
    def num_tokens(self) -> int:
        return len(self._stack) - 1

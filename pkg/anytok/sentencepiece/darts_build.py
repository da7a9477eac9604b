"""Building Darts-clone double arrays, unit for unit as darts-clone 0.32's `DoubleArray::build`.

Data flow: sorted byte keys with values -> a DAWG (a trie whose identical sub-tries are
merged: `_Dawg`) -> the DAWG laid out as a double array (`_Arranger`) -> the units' little-endian
bytes, which `darts.DoubleArray` reads back.

SentencePiece stores its normalization tables (the `precompiled_charsmap` of a `.model`) as such
an array and builds it with values given, which in darts-clone always goes through the DAWG.  The
result is one array among many that would answer the same lookups; the choices below (which free
slot a node's children take, when a block is closed, which shared sub-trie is reused) follow
darts-clone's, so that the bytes are the same.

Unit layout and walking: see `darts.py`.
"""

from __future__ import annotations

import sys
from array import array

__all__ = ["build_double_array"]

_MASK32 = 0xFFFFFFFF
_BLOCK_SIZE = 256
_NUM_EXTRA_BLOCKS = 16
_NUM_EXTRAS = _BLOCK_SIZE * _NUM_EXTRA_BLOCKS
_UPPER_MASK = 0xFF << 21
_LOWER_MASK = 0xFF


def build_double_array(keys: list[bytes], values: list[int]) -> bytes:
    """The double array of `keys` (byte strings, strictly increasing in byte order, non-empty,
    without NUL bytes) mapping each to its value (0 <= value < 2**31), as the bytes darts-clone
    writes (`DoubleArray::array()`, `size() * 4` bytes)."""
    if len(keys) != len(values):
        raise ValueError("keys and values differ in length")
    dawg = _Dawg()
    prev = None
    for key, value in zip(keys, values):
        if not key:
            raise ValueError("empty key")
        if 0 in key:
            raise ValueError(f"key {key!r} holds a NUL byte")
        if prev is not None and key <= prev:
            raise ValueError(f"keys are not sorted and unique: {prev!r} then {key!r}")
        if not 0 <= value < 1 << 31:
            raise ValueError(f"value {value} out of range for key {key!r}")
        dawg.insert(key, value, prev)
        prev = key
    dawg.finish()
    units = _Arranger(dawg).build()
    out = array("I", units) if array("I").itemsize == 4 else array("L", units)
    if sys.byteorder == "big":  # pragma: no cover
        out.byteswap()
    return out.tobytes()


class _Dawg:
    """darts-clone's DawgBuilder.  Nodes under construction live in `n_*` lists; when all
    children of a node are known (the next key leaves that branch), they are "flushed" into
    consecutive units (smallest label first), reusing an identical group flushed before.

    A unit packs: for a leaf (label 0) `value << 1 | has_sibling`; else
    `child << 2 | is_state << 1 | has_sibling`, where `child` is the first unit of its children,
    `has_sibling` says the next unit is a sibling, `is_state` marks a group's first unit."""

    def __init__(self):
        # Node 0 is the root (label 0xFF, as darts-clone sets it).
        self.n_child = [0]
        self.n_sibling = [0]
        self.n_label = [0xFF]
        self.n_state = [False]
        self.n_has_sibling = [False]
        self.stack = [0]
        # Unit 0 is the root's, written at finish().
        self.units = [0]
        self.labels = [0]
        self.shared = [False]
        self.groups: dict[tuple, int] = {}
        self.ranks: list[int] = []

    def _unit(self, i: int) -> int:
        if self.n_label[i] == 0:
            return ((self.n_child[i] << 1) | self.n_has_sibling[i]) & _MASK32
        return ((self.n_child[i] << 2) | (self.n_state[i] << 1) | self.n_has_sibling[i]) & _MASK32

    def insert(self, key: bytes, value: int, prev: bytes | None) -> None:
        """Add `key`, which sorts after `prev` (the key added before, or None)."""
        n_child, stack = self.n_child, self.stack
        # darts-clone walks down from the root along the last key's path (the stack holds it:
        # stack[d] is the node reached after d bytes, stack[len(prev) + 1] its end marker) and
        # leaves it where `key` differs: after their common prefix.
        if prev is None:
            depth = 0
        else:
            depth = 0
            limit = min(len(prev), len(key))
            while depth < limit and prev[depth] == key[depth]:
                depth += 1
            branch = stack[depth + 1]
            self.n_has_sibling[branch] = True
            self._flush(branch)
        node = stack[depth]
        n_sibling, n_label, n_state, n_has_sibling = self.n_sibling, self.n_label, self.n_state, self.n_has_sibling
        for label in (*key[depth:], 0):
            child = len(n_child)
            n_child.append(0)
            n_sibling.append(n_child[node])
            n_label.append(label)
            n_state.append(n_child[node] == 0)
            n_has_sibling.append(False)
            n_child[node] = child
            stack.append(child)
            node = child
        n_child[node] = value

    def _flush(self, until: int) -> None:
        stack, n_sibling, n_label = self.stack, self.n_sibling, self.n_label
        while stack[-1] != until:
            node = stack.pop()
            # The sibling chain runs from the largest label down to the smallest.
            group = []
            i = node
            while i:
                group.append(i)
                i = n_sibling[i]
            sig = tuple((n_label[i], self._unit(i)) for i in group)
            match = self.groups.get(sig)
            if match is not None:
                self.shared[match] = True
            else:
                match = len(self.units)
                for i in reversed(group):
                    self.units.append(self._unit(i))
                    self.labels.append(n_label[i])
                    self.shared.append(False)
                self.groups[sig] = match
            self.n_child[stack[-1]] = match
        stack.pop()

    def finish(self) -> None:
        self._flush(0)
        self.units[0] = self._unit(0)
        self.labels[0] = self.n_label[0]
        rank = 0
        ranks = []
        for s in self.shared:
            ranks.append(rank)
            rank += s
        self.ranks = ranks
        self.num_shared = rank
        del self.n_child, self.n_sibling, self.n_label, self.n_state, self.n_has_sibling, self.groups

    def child(self, i: int) -> int:
        return self.units[i] >> 2

    def sibling(self, i: int) -> int:
        return i + 1 if self.units[i] & 1 else 0


class _Arranger:
    """darts-clone's DoubleArrayBuilder (from a DAWG).  Free slots of the last 16 blocks of 256
    units form a circular doubly linked list (`prev`, `next`, indexed modulo 4096); a node's
    children go at the first offset, walking that list from its head, where every child's slot is
    free and the offset itself unused; older blocks are closed, their free slots filled with
    labels that no walk can match."""

    def __init__(self, dawg: _Dawg):
        self.dawg = dawg
        self.units: list[int] = []
        self.prev = [0] * _NUM_EXTRAS
        self.next = [0] * _NUM_EXTRAS
        self.fixed = [False] * _NUM_EXTRAS
        self.used = [False] * _NUM_EXTRAS
        self.head = 0
        self.labels: list[int] = []
        self.table = [0] * dawg.num_shared

    def build(self) -> list[int]:
        self._reserve(0)
        self.used[0] = True
        self._set_offset(0, 1)
        self.units[0] &= ~0xFF
        if self.dawg.child(0) != 0:
            self._build(0, 0)
        n_blocks = len(self.units) // _BLOCK_SIZE
        for block in range(max(0, n_blocks - _NUM_EXTRA_BLOCKS), n_blocks):
            self._fix_block(block)
        return self.units

    def _set_offset(self, i: int, offset: int) -> None:
        if offset >= 1 << 29:
            raise ValueError("double array too large: offset out of range")
        unit = self.units[i] & ((1 << 31) | (1 << 8) | 0xFF)
        if offset < 1 << 21:
            unit |= offset << 10
        else:
            unit |= (offset << 2) | (1 << 9)
        self.units[i] = unit

    def _build(self, dawg_id: int, dic_id: int) -> None:
        dawg = self.dawg
        child = dawg.child(dawg_id)
        shared = dawg.shared[child]
        if shared:
            k = dawg.ranks[child]
            offset = self.table[k]
            if offset:
                offset ^= dic_id
                if not (offset & _UPPER_MASK) or not (offset & _LOWER_MASK):
                    if dawg.labels[child] == 0:
                        self.units[dic_id] |= 1 << 8
                    self._set_offset(dic_id, offset)
                    return
        offset = self._arrange(dawg_id, dic_id)
        if shared:
            self.table[dawg.ranks[child]] = offset
        while True:
            label = dawg.labels[child]
            if label:
                self._build(child, offset ^ label)
            child = dawg.sibling(child)
            if not child:
                break

    def _arrange(self, dawg_id: int, dic_id: int) -> int:
        dawg = self.dawg
        labels = self.labels = []
        child = dawg.child(dawg_id)
        while child:
            labels.append(dawg.labels[child])
            child = dawg.sibling(child)
        offset = self._find_offset(dic_id)
        self._set_offset(dic_id, dic_id ^ offset)
        child = dawg.child(dawg_id)
        units = self.units
        for label in labels:
            dic_child = offset ^ label
            self._reserve(dic_child)
            units = self.units
            if label == 0:
                units[dic_id] |= 1 << 8
                units[dic_child] = (dawg.units[child] >> 1) | (1 << 31)
            else:
                units[dic_child] = (units[dic_child] & ~0xFF) | label
            child = dawg.sibling(child)
        self.used[offset % _NUM_EXTRAS] = True
        return offset

    def _find_offset(self, dic_id: int) -> int:
        size = len(self.units)
        head = self.head
        if head >= size:
            return size | (dic_id & _LOWER_MASK)
        labels = self.labels
        first, rest = labels[0], labels[1:]
        used, fixed, nxt = self.used, self.fixed, self.next
        unfixed = head
        while True:
            offset = unfixed ^ first
            if not used[offset % _NUM_EXTRAS]:
                rel = dic_id ^ offset
                if not ((rel & _LOWER_MASK) and (rel & _UPPER_MASK)):
                    for label in rest:
                        if fixed[(offset ^ label) % _NUM_EXTRAS]:
                            break
                    else:
                        return offset
            unfixed = nxt[unfixed % _NUM_EXTRAS]
            if unfixed == head:
                return size | (dic_id & _LOWER_MASK)

    def _reserve(self, i: int) -> None:
        if i >= len(self.units):
            self._expand()
        prev, nxt = self.prev, self.next
        e = i % _NUM_EXTRAS
        if i == self.head:
            self.head = nxt[e]
            if self.head == i:
                self.head = len(self.units)
        nxt[prev[e] % _NUM_EXTRAS] = nxt[e]
        prev[nxt[e] % _NUM_EXTRAS] = prev[e]
        self.fixed[e] = True

    def _expand(self) -> None:
        src = len(self.units)
        src_blocks = src // _BLOCK_SIZE
        dest = src + _BLOCK_SIZE
        if src_blocks + 1 > _NUM_EXTRA_BLOCKS:
            self._fix_block(src_blocks - _NUM_EXTRA_BLOCKS)
        self.units.extend([0] * _BLOCK_SIZE)
        prev, nxt = self.prev, self.next
        if src_blocks + 1 > _NUM_EXTRA_BLOCKS:
            for i in range(src, dest):
                self.used[i % _NUM_EXTRAS] = False
                self.fixed[i % _NUM_EXTRAS] = False
        for i in range(src + 1, dest):
            nxt[(i - 1) % _NUM_EXTRAS] = i
            prev[i % _NUM_EXTRAS] = i - 1
        s, d, h = src % _NUM_EXTRAS, (dest - 1) % _NUM_EXTRAS, self.head % _NUM_EXTRAS
        prev[s] = dest - 1
        nxt[d] = src
        prev[s] = prev[h]
        nxt[d] = self.head
        nxt[prev[h] % _NUM_EXTRAS] = src
        prev[h] = dest - 1

    def _fix_block(self, block: int) -> None:
        begin = block * _BLOCK_SIZE
        end = begin + _BLOCK_SIZE
        unused_offset = 0
        for offset in range(begin, end):
            if not self.used[offset % _NUM_EXTRAS]:
                unused_offset = offset
                break
        for i in range(begin, end):
            if not self.fixed[i % _NUM_EXTRAS]:
                self._reserve(i)
                self.units[i] = (self.units[i] & ~0xFF) | ((i ^ unused_offset) & 0xFF)

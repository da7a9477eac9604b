"""The token trie and the slicer's parts of a vocabulary, kept in a file between processes.

Data flow: `TokenTrie.from_env` (tokens.py) takes the tokenizer's token bytes from its `TokenEnv`;
for a vocabulary of 20,000 tokens or more it looks for the trie file here.  The vocabulary's
key is a BLAKE2b digest of every (id, bytes) pair, in order, and this file layout's version.  A
file of that name in the cache folder holds the flat trie arrays (see tokens.py), and once the
slicer is built (`Slicer.of`, slicer.py, rewrites the file then) its slice patterns and for each
part its token ids, bitmask, own trie arrays, and its tokens' bytes joined with where each
starts (`_Slice.blob`); a matcher over a trie read with them has the
slicer from its first mask.
Reading it back is a few list conversions (tens of milliseconds for 200k tokens) where building
takes seconds (sorting, laying out ~400k nodes, five walks with derivatives).  Written
atomically (a temporary file renamed).  This module imports nothing of anytok: it stores what
tokens.py and slicer.py hand it.

Folder: `$ANYTOK_CACHE_DIR` if set (`off` or empty: no file at all), else
`$XDG_CACHE_HOME/anytok` or `~/.cache/anytok` (`%LOCALAPPDATA%\\anytok` on Windows): the folder
the Node start-up snapshot uses too (web/node_worker.mjs).  Under Pyodide the file system is in
memory and lost with the page, so nothing is written there unless `ANYTOK_CACHE_DIR` says where:
the browser worker sets it to a folder whose files it keeps in Cache Storage, and under Node to
this same folder on disk (web/worker.js).  A file that cannot be read (missing, truncated,
damaged, another vocabulary's) is built again and rewritten; a folder that cannot be written gets no file (the same trie and slicer, built in this
process).  Without a folder (`off`, Pyodide) the trie is built and the slicer left to the first
mask that allows most of the vocabulary, as without this module.

Layout: b"ANYTOK-TRIE\\n", a 4-byte little-endian length, a JSON header (the key, the small
fields, each array's typecode, offset and count, the arrays' total size and CRC-32), then the
arrays in native byte order (the byte order is part of the key).  A file whose size or CRC-32
does not match (damaged on disk, or in the browser's Cache Storage: web/worker.js keeps these
files there) is built again.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import sys
import tempfile
import zlib
from array import array

MAGIC = b"ANYTOK-TRIE\n"
# Bump when the layout, the trie or the slicer's partition change.
VERSION = 3


def cache_dir() -> str | None:
    """The folder for trie files, or None when none should be used."""
    d = os.environ.get("ANYTOK_CACHE_DIR")
    if d is not None:
        return None if d in ("", "off") else d
    if sys.platform == "emscripten":
        return None
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        return os.path.join(os.environ["LOCALAPPDATA"], "anytok")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "anytok")


def vocab_key(token_bytes: dict) -> str:
    """Hex digest naming a vocabulary's trie file: BLAKE2b-256 of the (id, bytes) pairs as
    pickle writes the dict (one pass in C, each bytes with its length; without pickle's memo,
    so equal pairs give equal bytes whatever objects they share).  Under Pyodide this is ~5x
    faster than SHA-256 of the ids, lengths and bytes as three arrays (wasm has no SHA
    instructions, and the arrays took a Python-level pass each); the same key in both."""
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=4)
    pickler.fast = True
    pickler.dump(token_bytes)
    h = hashlib.blake2b(f"anytok token trie v{VERSION} {sys.byteorder}\n".encode(), digest_size=32)
    h.update(out.getbuffer())
    return h.hexdigest()


def file_name(key: str) -> str:
    """The name of the trie file of the vocabulary whose `vocab_key` is `key`."""
    return key[:40] + ".trie"


def _trie_record(trie, out: list) -> dict:
    """The arrays of `trie` appended to `out` as (name, array); the small fields returned."""
    rec = {"max_token_len": trie.max_token_len, "extra": [[k, v] for k, v in trie.extra.items()],
           "children0": [[b, i] for b, i in trie.children0.items()], "arrays": []}
    for name, code in (("order", "i"), ("byte", "B"), ("depth", "i"), ("end", "i"), ("token", "i")):
        rec["arrays"].append(len(out))
        out.append(array(code, getattr(trie, name)))
    return rec


def save(path: str, key: str, trie, slicer=None) -> None:
    """Write `trie` (a `tokens.TokenTrie`) and its `slicer.Slicer` if built to `path` (atomically)."""
    arrays: list = []
    header = {"key": key, "trie": _trie_record(trie, arrays), "slices": []}
    if slicer is not None:
        header["rest"] = _trie_record(slicer.rest, arrays)
    for s in slicer.slices if slicer is not None else ():
        rec = _trie_record(s.trie, arrays)
        header["slices"].append({"pattern": s.pattern, "ids": len(arrays), "mask": len(arrays) + 1, "trie": rec,
                                 "blob": len(arrays) + 2, "starts": len(arrays) + 3})
        arrays.append(array("i", s.ids))
        arrays.append(array("B", s.mask.to_bytes((s.mask.bit_length() + 7) // 8, "little")))
        blob, starts = s.blob()
        arrays.append(array("B", blob))
        arrays.append(array("i", starts))
    offsets = []
    pos = crc = 0
    for a in arrays:
        offsets.append([a.typecode, pos, len(a)])
        pos += len(a) * a.itemsize
        crc = zlib.crc32(a, crc)
    header["layout"] = offsets
    header["size"], header["crc32"] = pos, crc
    head = json.dumps(header, separators=(",", ":")).encode()
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".trie-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + len(head).to_bytes(4, "little") + head)
            for a in arrays:
                a.tofile(f)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class Stored:
    """A trie file read back: `arrays(i)` gives array i as a list (converted on demand)."""

    def __init__(self, data: bytes, key: str):
        if data[:len(MAGIC)] != MAGIC:
            raise ValueError("not a trie file")
        n = int.from_bytes(data[len(MAGIC):len(MAGIC) + 4], "little")
        start = len(MAGIC) + 4
        self.header = json.loads(data[start:start + n])
        if self.header.get("key") != key:
            raise ValueError("another vocabulary's trie file")
        self.body = memoryview(data)[start + n:]
        if len(self.body) != self.header["size"]:
            raise ValueError("truncated trie file")
        # (a few milliseconds for o200k_base's 16 MB: a damaged file is built again, never read)
        if zlib.crc32(self.body) != self.header["crc32"]:
            raise ValueError("damaged trie file")
        for code, off, count in self.header["layout"]:
            if off + count * array(code).itemsize > len(self.body):
                raise ValueError("truncated trie file")

    def slices(self, patterns) -> list:
        """The slicer parts' header entries if the file has those of `patterns`, else []."""
        got = self.header.get("slices") or []
        return got if [s["pattern"] for s in got] == list(patterns) else []

    def raw(self, i: int) -> bytes:
        code, off, count = self.header["layout"][i]
        return bytes(self.body[off:off + count * array(code).itemsize])

    def typed(self, i: int) -> array:
        """Array i as an `array.array` (no list conversion: for arrays read sparsely)."""
        code, off, count = self.header["layout"][i]
        a = array(code)
        a.frombytes(self.body[off:off + count * a.itemsize])
        return a

    def array(self, i: int) -> list:
        code, off, count = self.header["layout"][i]
        a = array(code)
        a.frombytes(self.body[off:off + count * a.itemsize])
        return a.tolist()


def load(path: str, key: str) -> Stored | None:
    """The trie file at `path` if it is this vocabulary's, else None."""
    try:
        with open(path, "rb") as f:
            data = f.read()
        return Stored(data, key)
    except (OSError, ValueError, KeyError, TypeError):
        return None

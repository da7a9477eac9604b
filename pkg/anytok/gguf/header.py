"""GGUF files (llama.cpp, Ollama, LM Studio): the header's key-values, never the tensors.

A GGUF file is, in this order (all integers little-endian, or all big-endian in the rare
big-endian files):

    magic b"GGUF" · version u32 (2 or 3) · tensor count u64 · key-value count u64
    key-values: key (string) · value type u32 · value
    tensor infos ... · padding · tensor data            (never read here)

A string is a u64 byte length and UTF-8 bytes; an array is an element type u32, a u64 count
and the elements.  The tokenizer is in the key-values (`tokenizer.ggml.*`), ahead of the
weights, so `read_gguf_header` reads only that prefix of a file: from a path it reads
growing chunks until the last key-value is complete.

Every length and count is checked against the bytes that are left before anything is
allocated for it, so a damaged or hostile header raises `VocabFormatError` quickly and never
allocates more than the file holds.
"""

from __future__ import annotations

import io
import os
import struct
from array import array
from typing import Any, BinaryIO, Union

from ..errors import VocabFormatError

__all__ = ["GGUFHeader", "read_gguf_header", "is_gguf", "MAGIC", "GGUF_TYPE_NAMES"]

MAGIC = b"GGUF"

# Value types: (name, struct code) for the fixed-size ones.
_UINT8, _INT8, _UINT16, _INT16, _UINT32, _INT32, _FLOAT32, _BOOL, _STRING, _ARRAY, _UINT64, _INT64, _FLOAT64 = range(13)
_FIXED = {
    _UINT8: "B", _INT8: "b", _UINT16: "H", _INT16: "h", _UINT32: "I", _INT32: "i",
    _FLOAT32: "f", _BOOL: "?", _UINT64: "Q", _INT64: "q", _FLOAT64: "d",
}
GGUF_TYPE_NAMES = {
    _UINT8: "uint8", _INT8: "int8", _UINT16: "uint16", _INT16: "int16", _UINT32: "uint32",
    _INT32: "int32", _FLOAT32: "float32", _BOOL: "bool", _STRING: "string", _ARRAY: "array",
    _UINT64: "uint64", _INT64: "int64", _FLOAT64: "float64",
}
_MAX_DEPTH = 4  # arrays of arrays: llama.cpp writes none deeper than one level
_MAX_KEY = 65535  # bytes of a key name
_FIRST_CHUNK = 1 << 20

Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, BinaryIO]


class GGUFHeader:
    """The header of a GGUF file: `version`, `tensor_count`, `kv` (key -> value, in file
    order), `types` (key -> GGUF type name; arrays as "array[<element type>]"), `byteorder`
    ("<" or ">") and `kv_end` (the offset just after the last key-value).

    Values are Python ints, floats, bools and strs; arrays are lists, except arrays of
    numbers, which are `array.array`s (e.g. `tokenizer.ggml.scores`, `token_type`)."""

    __slots__ = ("version", "tensor_count", "kv", "types", "byteorder", "kv_end")

    def __init__(self, version: int, tensor_count: int, kv: dict, types: dict, byteorder: str, kv_end: int):
        self.version = version
        self.tensor_count = tensor_count
        self.kv = kv
        self.types = types
        self.byteorder = byteorder
        self.kv_end = kv_end

    def get(self, key: str, default: Any = None) -> Any:
        return self.kv.get(key, default)

    def __contains__(self, key: str) -> bool:
        return key in self.kv

    def __repr__(self) -> str:
        return f"<GGUFHeader v{self.version} tensors={self.tensor_count} keys={len(self.kv)}>"


class _Reader:
    """Bytes of a source, read on demand; `need(n)` fails before reading past the end."""

    def __init__(self, data: bytes | None, f: BinaryIO | None, size: int, what: str):
        self.buf = data if data is not None else b""
        self.f = f
        self.size = size  # total bytes in the source
        self.pos = 0
        self.what = what

    def fail(self, msg: str):
        raise VocabFormatError(f"{self.what}: not a valid GGUF header: {msg} (at byte {self.pos})")

    def need(self, n: int, what: str) -> None:
        end = self.pos + n
        if end > self.size:
            self.fail(f"{what} needs {n} bytes, only {self.size - self.pos} are left in the file")
        if end > len(self.buf):
            if self.f is None:  # bytes holding the file's beginning only (size= given)
                self.fail(f"{what} goes past the {len(self.buf)} bytes read of the file's {self.size}")
            # Grow by at least as much again (a header is read in O(log) reads).
            want = max(end, min(self.size, 2 * len(self.buf), len(self.buf) + (64 << 20)), _FIRST_CHUNK)
            want = min(want, self.size)
            self.f.seek(len(self.buf))
            more = self.f.read(want - len(self.buf))
            self.buf += more
            if end > len(self.buf):
                self.fail(f"{what}: the file ended early")


def _open(source: Source, what: str | None, size: int | None = None) -> tuple[_Reader, Any]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        if size is None:
            size = len(data)
        elif size < len(data):
            raise ValueError(f"read_gguf_header: size={size} is less than the {len(data)} bytes given")
        return _Reader(data, None, size, what or "GGUF data"), None
    if size is not None:
        raise TypeError("read_gguf_header: size= is for bytes holding the beginning of a file")
    if isinstance(source, (str, os.PathLike)):
        f = open(source, "rb")
        size = os.fstat(f.fileno()).st_size
        return _Reader(None, f, size, what or os.fspath(source)), f
    if hasattr(source, "read") and hasattr(source, "seek"):
        start = source.tell()
        end = source.seek(0, io.SEEK_END)
        if start:
            # Read from the file's current position as the start of the GGUF data.
            raise ValueError("read_gguf_header: give a file positioned at its start")
        return _Reader(None, source, end, what or getattr(source, "name", None) or "GGUF file"), None
    raise TypeError(f"read_gguf_header: expected a path, bytes or a seekable binary file, not {type(source).__name__}")


def is_gguf(data: bytes) -> bool:
    """Whether `data` (at least the first 4 bytes of a file) starts like a GGUF file."""
    return data[:4] == MAGIC


def read_gguf_header(source: Source, *, what: str | None = None, size: int | None = None) -> GGUFHeader:
    """The header key-values of a GGUF file given as a path, bytes, or a seekable binary file.

    `size`: with bytes that hold only the beginning of a file (e.g. what a browser read of a
    dropped file), the whole file's size, so that lengths are checked against the file.

    Reads only the header (from a path or file: about its size rounded up to a power of two,
    at least 1 MiB or the whole file if smaller), never the tensors.  Raises
    `VocabFormatError` saying what is wrong for anything that is not a well-formed header.
    """
    r, owned = _open(source, what, size)
    try:
        return _read(r)
    finally:
        if owned is not None:
            owned.close()


def _read(r: _Reader) -> GGUFHeader:
    r.need(4, "the magic")
    if r.buf[:4] != MAGIC:
        r.fail(f"starts with {bytes(r.buf[:4])!r}, not {MAGIC!r}")
    r.pos = 4
    r.need(20, "the version and counts")
    bo = "<"
    (version,) = struct.unpack_from("<I", r.buf, 4)
    if version not in (2, 3):
        (be_version,) = struct.unpack_from(">I", r.buf, 4)
        if be_version in (2, 3):
            bo, version = ">", be_version
        elif version == 1:
            r.fail("GGUF version 1 (32-bit lengths, 2023) is not supported: convert the file again with a current llama.cpp")
        else:
            r.fail(f"unknown GGUF version {version}")
    tensor_count, kv_count = struct.unpack_from(bo + "QQ", r.buf, 8)
    r.pos = 24
    # Each key-value takes at least 8 (key length) + 1 (key) + 4 (type) + 1 (value) bytes.
    if kv_count * 14 > r.size - r.pos:
        r.fail(f"{kv_count} key-values cannot fit in the {r.size - r.pos} bytes left")
    # (tensor_count is reported, not checked: the tensor infos after the key-values are never
    # read, so the header's bytes alone, e.g. the first megabytes of a download, are enough)

    u32 = struct.Struct(bo + "I").unpack_from
    u64 = struct.Struct(bo + "Q").unpack_from

    def read_str(what: str) -> str:
        r.need(8, what)
        (n,) = u64(r.buf, r.pos)
        r.pos += 8
        r.need(n, what)
        raw = r.buf[r.pos:r.pos + n]
        r.pos += n
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            r.pos -= n
            r.fail(f"{what} is not UTF-8 ({e.reason} at byte {e.start})")

    def read_value(t: int, what: str, depth: int):
        code = _FIXED.get(t)
        if code is not None:
            size = struct.calcsize(code)
            r.need(size, what)
            (v,) = struct.unpack_from(bo + code, r.buf, r.pos)
            r.pos += size
            return v
        if t == _STRING:
            return read_str(what)
        if t == _ARRAY:
            if depth >= _MAX_DEPTH:
                r.fail(f"{what}: arrays nested deeper than {_MAX_DEPTH}")
            r.need(12, what)
            (et,) = u32(r.buf, r.pos)
            (n,) = u64(r.buf, r.pos + 4)
            r.pos += 12
            if et not in GGUF_TYPE_NAMES:
                r.fail(f"{what}: unknown array element type {et}")
            code = _FIXED.get(et)
            if code is not None:
                size = struct.calcsize(code)
                r.need(n * size, what)
                chunk = r.buf[r.pos:r.pos + n * size]
                r.pos += n * size
                if et == _BOOL:
                    if chunk.strip(b"\x00\x01"):
                        r.fail(f"{what}: a bool that is neither 0 nor 1")
                    return [b == 1 for b in chunk]
                arr = array(code)
                arr.frombytes(chunk)
                if (bo == ">") != (struct.pack("=H", 1) == b"\x00\x01"):
                    arr.byteswap()
                return arr
            # strings take at least 8 bytes each, arrays at least 12
            least = 8 if et == _STRING else 12
            if n * least > r.size - r.pos:
                r.fail(f"{what}: {n} elements cannot fit in the {r.size - r.pos} bytes left")
            if et == _STRING:
                return _read_strings(r, n, bo, what)
            return [read_value(et, what, depth + 1) for _ in range(n)]
        r.fail(f"{what}: unknown value type {t}")

    kv: dict[str, Any] = {}
    types: dict[str, str] = {}
    for i in range(kv_count):
        key = read_str(f"key {i}")
        if len(key) > _MAX_KEY or not key:
            r.fail(f"key {i} is {'empty' if not key else 'longer than 65535 bytes'}")
        if key in kv:
            r.fail(f"key {key!r} appears twice")
        r.need(4, f"the type of {key!r}")
        (t,) = u32(r.buf, r.pos)
        r.pos += 4
        if t not in GGUF_TYPE_NAMES:
            r.fail(f"{key!r} has unknown value type {t}")
        tname = GGUF_TYPE_NAMES[t]
        if t == _ARRAY:
            r.need(4, f"the element type of {key!r}")
            (et,) = u32(r.buf, r.pos)
            tname = f"array[{GGUF_TYPE_NAMES.get(et, et)}]"
        kv[key] = read_value(t, repr(key), 0)
        types[key] = tname
    return GGUFHeader(version, tensor_count, kv, types, bo, r.pos)


def _read_strings(r: _Reader, n: int, bo: str, what: str) -> list[str]:
    """`n` consecutive GGUF strings (a token list: ~10^5 of them), decoded as UTF-8.

    When the bytes at hand hold them all (bytes given, or a header read whole), one loop
    without bounds checks reads them, and the end is checked once; anything else (a string
    past the bytes at hand, invalid UTF-8, a huge length) goes to the checked loop, which reads
    more of the file or names the fault."""
    buf = r.buf
    blen = len(buf)
    unpack = struct.Struct(bo + "Q").unpack_from
    out: list[str] = []
    append = out.append
    pos = r.pos
    try:
        for _ in range(n):
            start = pos + 8
            pos = start + unpack(buf, pos)[0]
            append(buf[start:pos].decode())
    except (struct.error, UnicodeDecodeError, OverflowError):
        pos = blen + 1
    if pos <= blen:
        r.pos = pos
        return out
    return _read_strings_checked(r, n, bo, what)


def _read_strings_checked(r: _Reader, n: int, bo: str, what: str) -> list[str]:
    unpack = struct.Struct(bo + "Q").unpack_from
    out: list[str] = []
    append = out.append
    buf = r.buf
    blen = len(buf)
    pos = r.pos
    for k in range(n):
        if pos + 8 > blen:
            r.pos = pos
            r.need(8, what)
            buf = r.buf
            blen = len(buf)
        (m,) = unpack(buf, pos)
        pos += 8
        end = pos + m
        if end > blen:
            r.pos = pos
            r.need(m, f"{what} element {k}")
            buf = r.buf
            blen = len(buf)
        try:
            append(buf[pos:end].decode("utf-8"))
        except UnicodeDecodeError as e:
            r.pos = pos
            r.fail(f"{what} element {k} is not UTF-8 ({e.reason} at byte {e.start})")
        pos = end
    r.pos = pos
    return out

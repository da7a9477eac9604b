"""The shard files, written by hand with the standard library, byte for byte as the tools that
read them expect.

llmc (llm.c's `.bin`, as `dev/data/data_common.py` writes it and `llmc/dataloader.h` reads it):
    256 little-endian int32 (1024 bytes): [0] magic, [1] version, [2] number of tokens, the rest
    0; then the tokens, little-endian.  uint16 tokens: magic 20240520, version 1 (GPT-2);
    uint32 tokens: magic 20240801, version 7 (Llama 3).  The count is an int32: a shard holds
    fewer than 2**31 tokens.
megatron (Megatron-LM's indexed dataset, `megatron/core/datasets/indexed_dataset.py`):
    PREFIX.bin: the tokens of every document, one after the other, little-endian.
    PREFIX.idx: b"MMIDIDX\\x00\\x00", u64 version 1, u8 dtype code (8 uint16, 4 int32), u64
    number of sequences S, u64 number of document indices (documents + 1), then S int32
    sequence lengths, S int64 byte offsets of the sequences in .bin, and the int64 document
    indices 0, 1, ..., S (one sequence per document, as `preprocess_data.py` writes without
    sentence splitting).  Megatron knows no uint32: a vocabulary of 65,500 ids or more is
    written as int32, as its `DType.optimal_dtype` picks.
npy (numpy's .npy format, version 1.0): b"\\x93NUMPY", bytes 1 and 0, a little-endian u16
    header length, then the header `{'descr': '<u2', 'fortran_order': False, 'shape': (N,), }`
    padded with spaces and a newline to a multiple of 64 bytes (with room for 21 digits of N,
    as numpy leaves it), then the tokens: what `numpy.save` writes for a 1-D array.

Every file is written under a temporary name in the output folder, flushed to disk (fsync) and
renamed into place, so a shard file either is complete or does not exist.
"""

from __future__ import annotations

import os
import struct
import sys
from array import array

# dtype name -> (array typecode, bytes per token, largest id it holds)
DTYPES = {
    "uint16": ("H", 2, 0xFFFF),
    "uint32": ("I", 4, 0xFFFFFFFF),
    "int32": ("i", 4, 0x7FFFFFFF),
}
FORMATS = ("llmc", "megatron", "npy")
FORMAT_DTYPES = {"llmc": ("uint16", "uint32"), "megatron": ("uint16", "int32"), "npy": ("uint16", "uint32")}
LLMC_HEADER = {"uint16": (20240520, 1), "uint32": (20240801, 7)}
LLMC_HEADER_INTS = 256
LLMC_MAX_TOKENS = 2**31 - 1
MEGATRON_MAGIC = b"MMIDIDX\x00\x00"
MEGATRON_CODES = {"uint16": 8, "int32": 4}
MEGATRON_UINT16_BELOW = 65500  # Megatron's DType.optimal_dtype: uint16 below this vocabulary size
NPY_DESCR = {"uint16": "<u2", "uint32": "<u4"}
BIG_ENDIAN = sys.byteorder == "big"
TMP_PREFIX = ".anytok-tmp-"


class DtypeError(ValueError):
    pass


def choose_dtype(fmt: str, n_vocab: int, forced: str | None = None) -> str:
    """The token dtype of a format for a vocabulary of `n_vocab` ids (0 .. n_vocab - 1), or the
    forced one after checking it holds every id (never a silent truncation)."""
    allowed = FORMAT_DTYPES[fmt]
    if forced in (None, "auto"):
        if fmt == "megatron":
            return "uint16" if n_vocab < MEGATRON_UINT16_BELOW else "int32"
        return "uint16" if n_vocab - 1 <= DTYPES["uint16"][2] else "uint32"
    if forced not in allowed:
        raise DtypeError(f"--format {fmt} writes {' or '.join(allowed)} tokens, not {forced}")
    if n_vocab - 1 > DTYPES[forced][2]:
        raise DtypeError(f"dtype {forced} holds ids up to {DTYPES[forced][2]:,}, but the tokenizer has "
                         f"{n_vocab:,} ids (up to {n_vocab - 1:,}): use {allowed[1]} or --dtype auto")
    return forced


def to_array(dtype: str, ids) -> array:
    """Token ids as an array of the dtype; an id out of its range is an error."""
    code, _, top = DTYPES[dtype]
    try:
        return array(code, ids)
    except OverflowError:
        bad = next(i for i in ids if not 0 <= i <= top)
        raise DtypeError(f"token id {bad} does not fit in {dtype}") from None


def le_bytes(a: array) -> bytes:
    """The array's bytes, little-endian."""
    if BIG_ENDIAN and a.itemsize > 1:
        a = array(a.typecode, a)
        a.byteswap()
    return a.tobytes()


def fsync_dir(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def npy_header(dtype: str, n: int) -> bytes:
    text = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (NPY_DESCR[dtype], n)
    text += " " * (21 - len(str(n)))  # numpy leaves room for the shape to grow
    total = 10 + len(text) + 1
    text += " " * (-total % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode("latin-1")


def llmc_header(dtype: str, n: int) -> bytes:
    if n > LLMC_MAX_TOKENS:
        raise ValueError(f"an llm.c shard holds fewer than 2**31 tokens (got {n})")
    magic, version = LLMC_HEADER[dtype]
    ints = array("i", [0] * LLMC_HEADER_INTS)
    ints[0], ints[1], ints[2] = magic, version, n
    return le_bytes(ints)


def megatron_index(dtype: str, lengths: array) -> bytes:
    """The .idx file for documents of these lengths (one sequence each)."""
    size = DTYPES[dtype][1]
    pointers = array("q", [0] * len(lengths))
    pos = 0
    for i, n in enumerate(lengths):
        pointers[i] = pos
        pos += n * size
    sizes = array("i", lengths)
    docs = array("q", range(len(lengths) + 1))
    return b"".join([MEGATRON_MAGIC, struct.pack("<Q", 1), struct.pack("<B", MEGATRON_CODES[dtype]),
                     struct.pack("<Q", len(lengths)), struct.pack("<Q", len(docs)),
                     le_bytes(sizes), le_bytes(pointers), le_bytes(docs)])


def shard_names(fmt: str, index: int) -> list[str]:
    base = f"shard_{index:06d}"
    if fmt == "llmc":
        return [base + ".bin"]
    if fmt == "npy":
        return [base + ".npy"]
    return [base + ".bin", base + ".idx"]


class ShardWriter:
    """One shard, written as tokens arrive (never all in memory), renamed into place by finish().
    `add(data, docs)`: little-endian token bytes and, for megatron, the lengths of the whole
    documents they hold."""

    def __init__(self, folder: str, fmt: str, dtype: str, index: int):
        self.folder, self.fmt, self.dtype, self.index = folder, fmt, dtype, index
        self.names = shard_names(fmt, index)
        self.tmp = os.path.join(folder, TMP_PREFIX + self.names[0])
        self.f = open(self.tmp, "wb")
        self.head = LLMC_HEADER_INTS * 4 if fmt == "llmc" else len(npy_header(dtype, 0)) if fmt == "npy" else 0
        self.f.write(b"\0" * self.head)
        self.tokens = 0
        self.lengths = array("q")

    def add(self, data: bytes, doc_lengths=()) -> None:
        self.f.write(data)
        self.tokens += len(data) // DTYPES[self.dtype][1]
        if doc_lengths:
            self.lengths.extend(doc_lengths)

    def finish(self) -> list[str]:
        f = self.f
        if self.fmt == "llmc":
            f.seek(0)
            f.write(llmc_header(self.dtype, self.tokens))
        elif self.fmt == "npy":
            head = npy_header(self.dtype, self.tokens)
            assert len(head) == self.head
            f.seek(0)
            f.write(head)
        f.flush()
        os.fsync(f.fileno())
        f.close()
        if self.fmt == "megatron":
            idx_tmp = os.path.join(self.folder, TMP_PREFIX + self.names[1])
            with open(idx_tmp, "wb") as g:
                g.write(megatron_index(self.dtype, self.lengths))
                g.flush()
                os.fsync(g.fileno())
            os.replace(idx_tmp, os.path.join(self.folder, self.names[1]))
        os.replace(self.tmp, os.path.join(self.folder, self.names[0]))
        fsync_dir(self.folder)
        return self.names

    def abort(self) -> None:
        try:
            self.f.close()
            os.unlink(self.tmp)
        except OSError:
            pass

"""Reading inputs: which kind a file is, opening it (gzip, zstd), and cutting it into batches.

The reader runs in the coordinating process and does no decoding or parsing: a `.jsonl` file
is cut into raw lines, a `.txt` file is one record, a `.parquet` file gives the strings of one
column.  The worker that tokenizes a batch decodes and parses its records (see `records`), so
the error of a bad record names its file, its line (or row) and, for undecodable bytes, the byte
offset in the (decompressed) file.
"""

from __future__ import annotations

import gzip
import io
import os
from typing import Iterator, NamedTuple

COMPRESSED = {".gz": "gzip", ".zst": "zstd", ".zstd": "zstd"}
JSONL = (".jsonl", ".ndjson")
PARQUET = (".parquet",)


class InputError(Exception):
    """Bad input or a missing optional module; the message is meant for the user."""


def kind_of(path: str) -> tuple[str, str | None]:
    """("txt" | "jsonl" | "parquet", compression or None) from the file name."""
    base, ext = os.path.splitext(path.lower())
    compression = COMPRESSED.get(ext)
    if compression:
        ext = os.path.splitext(base)[1]
    if ext in JSONL:
        return "jsonl", compression
    if ext in PARQUET:
        if compression:
            raise InputError(f"{path}: a compressed .parquet file is not read (parquet compresses its own pages)")
        return "parquet", None
    return "txt", compression


def _zstd_reader(raw):
    try:
        from compression import zstd  # Python 3.14
    except ImportError:
        zstd = None
    if zstd is not None:
        return zstd.ZstdFile(raw)
    try:
        import zstandard
    except ImportError:
        raise InputError("reading .zst files needs Python 3.14 (compression.zstd) or the zstandard package: "
                         "pip install 'anytok[zstd]'") from None
    return io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True))


class Opened:
    """A binary stream of a file's (decompressed) bytes, with the position in the file on disk."""

    def __init__(self, path: str, compression: str | None):
        self.raw = open(path, "rb")
        try:
            if compression == "gzip":
                self.stream = gzip.GzipFile(fileobj=self.raw)
            elif compression == "zstd":
                self.stream = _zstd_reader(self.raw)
            else:
                self.stream = self.raw
        except BaseException:
            self.raw.close()
            raise

    def disk_position(self) -> int:
        try:
            return self.raw.tell()
        except (OSError, ValueError):
            return 0

    def close(self) -> None:
        if self.stream is not self.raw:
            self.stream.close()
        self.raw.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Batch(NamedTuple):
    """Records of one file handed to a worker.  `first`: index of the first record in the file
    (its line for jsonl, 0-based; its row for parquet); `offset`: byte offset of the first
    record in the decompressed file (jsonl, txt); `records`: raw lines (bytes) for jsonl, the
    whole file (bytes) for txt, strings (or other values, reported as errors) for parquet."""

    file_index: int
    path: str
    kind: str
    first: int
    offset: int
    records: list


def batches(file_index: int, path: str, batch_bytes: int, field: str = "text", start_record: int = 0,
            disk_progress=None) -> Iterator[Batch]:
    """The batches of one file, from record `start_record` on (records before it are read past,
    not returned).  `disk_progress(n)` is called with bytes of the file on disk read so far."""
    kind, compression = kind_of(path)
    if kind == "parquet":
        yield from _parquet_batches(file_index, path, batch_bytes, field, start_record, disk_progress)
        return
    with Opened(path, compression) as f:
        if kind == "txt":
            data = f.stream.read()
            if disk_progress:
                disk_progress(f.disk_position())
            if start_record == 0:
                yield Batch(file_index, path, kind, 0, 0, [data])
            return
        stream = f.stream
        index = 0
        offset = 0
        lines: list[bytes] = []
        size = 0
        first = first_offset = 0
        for line in stream:
            if index < start_record:
                index += 1
                offset += len(line)
                continue
            if not lines:
                first, first_offset = index, offset
            lines.append(line)
            size += len(line)
            index += 1
            offset += len(line)
            if size >= batch_bytes:
                if disk_progress:
                    disk_progress(f.disk_position())
                yield Batch(file_index, path, kind, first, first_offset, lines)
                lines, size = [], 0
        if disk_progress:
            disk_progress(f.disk_position())
        if lines:
            yield Batch(file_index, path, kind, first, first_offset, lines)


def _pyarrow_parquet():
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError("reading .parquet files needs pyarrow: pip install 'anytok[parquet]'") from None
    return pq


def parquet_column(path: str, field: str):
    """The row groups of one string column of a parquet file: an iterator of lists."""
    pq = _pyarrow_parquet()
    pf = pq.ParquetFile(path)
    if field not in pf.schema_arrow.names:
        raise InputError(f"{path}: no column {field!r} (columns: {', '.join(pf.schema_arrow.names)})")
    for g in range(pf.num_row_groups):
        yield pf.read_row_group(g, columns=[field]).column(0).to_pylist()


def _parquet_batches(file_index, path, batch_bytes, field, start_record, disk_progress):
    # The column is read here: the Batch of a parquet file holds its values, not raw rows.
    size = os.path.getsize(path)
    row = 0
    values: list = []
    first = 0
    nbytes = 0
    pq = _pyarrow_parquet()
    groups = pq.ParquetFile(path).num_row_groups or 1
    for g, column in enumerate(parquet_column(path, field)):
        for v in column:
            if row >= start_record:
                if not values:
                    first = row
                values.append(v)
                nbytes += len(v) if isinstance(v, str) else 1
                if nbytes >= batch_bytes:
                    yield Batch(file_index, path, "parquet", first, 0, values)
                    values, nbytes = [], 0
            row += 1
        if disk_progress:
            disk_progress(size * (g + 1) // groups)
    if values:
        yield Batch(file_index, path, "parquet", first, 0, values)


def iter_texts(path: str, field: str | None, decode_errors: str = "strict") -> Iterator[str]:
    """The texts of one file, as `anytok tokenize` reads them (for `anytok count --field`);
    raises InputError at the first bad record."""
    for batch in batches(0, path, 1 << 20, field or "text"):
        for _, text, error in records(batch, field or "text", decode_errors):
            if error:
                raise InputError(error)
            if text is not None:
                yield text


def _type_name(v) -> str:
    if v is None:
        return "null"
    return {dict: "an object", list: "an array", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(v), type(v).__name__)


def records(batch: Batch, field: str, decode_errors: str):
    """(record index, text or None, error or None) for each record of a batch: text None and
    no error for a blank line (not a document)."""
    import json

    path = batch.path
    if batch.kind == "parquet":
        for i, v in enumerate(batch.records):
            row = batch.first + i
            if isinstance(v, str):
                yield row, v, None
            else:
                yield row, None, f"{path}: row {row + 1}: field {field!r} is {_type_name(v)}, not a string"
        return
    if batch.kind == "txt":
        data = batch.records[0]
        try:
            yield 0, data.decode("utf-8", decode_errors), None
        except UnicodeDecodeError as e:
            yield 0, None, f"{path}: invalid UTF-8 at byte offset {e.start}"
        return
    offset = batch.offset
    for i, line in enumerate(batch.records):
        index = batch.first + i
        where = f"{path}: line {index + 1}"
        start = offset
        offset += len(line)
        try:
            text = line.decode("utf-8", decode_errors)
        except UnicodeDecodeError as e:
            yield index, None, f"{where}: invalid UTF-8 at byte offset {start + e.start}"
            continue
        if index == 0 and text.startswith("\ufeff"):
            text = text[1:]  # a byte order mark opening the file
        if not text.strip():
            yield index, None, None
            continue
        try:
            obj = json.loads(text)
        except ValueError as e:
            yield index, None, f"{where}: malformed JSON: {e}"
            continue
        if not isinstance(obj, dict):
            yield index, None, f"{where}: a JSON {_type_name(obj).split()[-1]}, not an object"
            continue
        if field not in obj:
            yield index, None, f"{where}: no field {field!r}"
            continue
        value = obj[field]
        if not isinstance(value, str):
            yield index, None, f"{where}: field {field!r} is {_type_name(value)}, not a string"
            continue
        yield index, value, None

"""A small reader for the protobuf wire format (proto2), enough for SentencePiece's `ModelProto`.

A message is a sequence of fields, each `tag value` where `tag = field_number << 3 | wire_type`
is a varint and the value is, by wire type: 0 a varint, 1 eight bytes, 2 a varint length and
that many bytes (strings, bytes, embedded messages, packed arrays), 5 four bytes.  Wire types 3
and 4 (groups) are obsolete and rejected.

Semantics kept from protobuf: a scalar field that occurs several times takes its last value; an
embedded message that occurs several times is the merge of all occurrences, which is what
parsing their concatenation gives (`Fields.message`); unknown fields are skipped.
"""

from __future__ import annotations

import struct

__all__ = ["ProtobufError", "Fields", "read_varint", "parse_fields"]

_FLOAT = struct.Struct("<f")
_DOUBLE = struct.Struct("<d")


class ProtobufError(ValueError):
    """The bytes are not a well-formed protobuf message."""


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """Decode the varint at `buf[pos:]`; return (value, position after it)."""
    result = 0
    shift = 0
    end = len(buf)
    while True:
        if pos >= end:
            raise ProtobufError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise ProtobufError("varint longer than 10 bytes")


def write_varint(n: int) -> bytes:
    """The varint of `n`; a negative int32/int64 is its ten-byte two's complement, as protobuf
    writes it."""
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if not n:
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def length_delimited(number: int, data: bytes) -> bytes:
    """Field `number` holding `data` (wire type 2: bytes, strings, sub-messages)."""
    return write_varint(number << 3 | 2) + write_varint(len(data)) + data


def parse_fields(buf: bytes) -> dict[int, list[tuple[int, object]]]:
    """All fields of one message: field number -> [(wire_type, raw value), ...] in order.

    Raw values: int for varint, fixed32 and fixed64 (unsigned, as stored), bytes for
    length-delimited fields.
    """
    fields: dict[int, list[tuple[int, object]]] = {}
    pos = 0
    end = len(buf)
    while pos < end:
        tag, pos = read_varint(buf, pos)
        number = tag >> 3
        wire = tag & 7
        if number == 0:
            raise ProtobufError("field number 0")
        if wire == 0:
            value, pos = read_varint(buf, pos)
        elif wire == 2:
            length, pos = read_varint(buf, pos)
            if pos + length > end:
                raise ProtobufError(f"field {number}: length {length} runs past the end")
            value = buf[pos : pos + length]
            pos += length
        elif wire == 5:
            if pos + 4 > end:
                raise ProtobufError(f"field {number}: truncated fixed32")
            value = int.from_bytes(buf[pos : pos + 4], "little")
            pos += 4
        elif wire == 1:
            if pos + 8 > end:
                raise ProtobufError(f"field {number}: truncated fixed64")
            value = int.from_bytes(buf[pos : pos + 8], "little")
            pos += 8
        else:
            raise ProtobufError(f"field {number}: unsupported wire type {wire}")
        fields.setdefault(number, []).append((wire, value))
    return fields


class Fields:
    """Typed access to the fields of one message (`parse_fields` plus proto2 conversions)."""

    __slots__ = ("raw",)

    def __init__(self, buf: bytes):
        self.raw = parse_fields(buf)

    def has(self, number: int) -> bool:
        return number in self.raw

    def _last(self, number: int, wire: int, what: str) -> object:
        w, value = self.raw[number][-1]
        if w != wire:
            raise ProtobufError(f"field {number} ({what}): wire type {w}, expected {wire}")
        return value

    def int32(self, number: int, default: int = 0) -> int:
        """int32 / enum: a varint; negative values are stored as 64-bit two's complement."""
        if number not in self.raw:
            return default
        value = self._last(number, 0, "int32") & 0xFFFFFFFF
        return value - (1 << 32) if value >= 1 << 31 else value

    def uint64(self, number: int, default: int = 0) -> int:
        if number not in self.raw:
            return default
        return self._last(number, 0, "uint64") & 0xFFFFFFFFFFFFFFFF

    def bool(self, number: int, default: bool = False) -> bool:
        if number not in self.raw:
            return default
        return self._last(number, 0, "bool") != 0

    def float(self, number: int, default: float = 0.0) -> float:
        """A float (fixed32), widened exactly to a Python float."""
        if number not in self.raw:
            return default
        return _FLOAT.unpack(self._last(number, 5, "float").to_bytes(4, "little"))[0]

    def double(self, number: int, default: float = 0.0) -> float:
        if number not in self.raw:
            return default
        return _DOUBLE.unpack(self._last(number, 1, "double").to_bytes(8, "little"))[0]

    def bytes(self, number: int, default: bytes = b"") -> bytes:
        if number not in self.raw:
            return default
        return bytes(self._last(number, 2, "bytes"))

    def string(self, number: int, default: str = "") -> str:
        if number not in self.raw:
            return default
        try:
            return bytes(self._last(number, 2, "string")).decode("utf-8")
        except UnicodeDecodeError:
            raise ProtobufError(f"field {number}: string is not valid UTF-8") from None

    def repeated_bytes(self, number: int) -> list[bytes]:
        out = []
        for w, value in self.raw.get(number, ()):
            if w != 2:
                raise ProtobufError(f"field {number}: wire type {w}, expected 2")
            out.append(bytes(value))
        return out

    def repeated_string(self, number: int) -> list[str]:
        try:
            return [b.decode("utf-8") for b in self.repeated_bytes(number)]
        except UnicodeDecodeError:
            raise ProtobufError(f"field {number}: string is not valid UTF-8") from None

    def message(self, number: int) -> "Fields | None":
        """The embedded message `number` (all occurrences merged), or None when absent."""
        if number not in self.raw:
            return None
        return Fields(b"".join(self.repeated_bytes(number)))

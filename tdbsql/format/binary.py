"""A bounds-checked little-endian reader and a matching writer.

Every length read from disk goes through ``Reader``, which refuses to read past the end of its
buffer.  A corrupt length therefore becomes a ``CorruptArrayError`` naming the file and field,
never a huge allocation or a wrong answer.
"""

from __future__ import annotations

import struct

import numpy as np

from ..errors import CorruptArrayError

_U8 = struct.Struct("<B")
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U64 = struct.Struct("<Q")
_F64 = struct.Struct("<d")


class Reader:
    """Reads fields one after another from ``data``; ``where`` names the file in errors."""

    __slots__ = ("data", "pos", "where")

    def __init__(self, data: bytes | bytearray | memoryview, where: str = "", pos: int = 0):
        self.data = memoryview(data).cast("B") if not isinstance(data, bytes) else data
        self.pos = pos
        self.where = where

    @property
    def remaining(self) -> int:
        return len(self.data) - self.pos

    def at_end(self) -> bool:
        return self.pos >= len(self.data)

    def error(self, field: str, message: str) -> CorruptArrayError:
        return CorruptArrayError(f"{field}: {message}", self.where or None)

    def _take(self, n: int, field: str) -> int:
        if n < 0 or n > self.remaining:
            raise self.error(
                field,
                f"needs {n} bytes at offset {self.pos} but only {self.remaining} remain "
                "(truncated or corrupt)",
            )
        start = self.pos
        self.pos += n
        return start

    def u8(self, field: str) -> int:
        return _U8.unpack_from(self.data, self._take(1, field))[0]

    def bool(self, field: str) -> bool:
        return self.u8(field) != 0

    def u32(self, field: str) -> int:
        return _U32.unpack_from(self.data, self._take(4, field))[0]

    def i32(self, field: str) -> int:
        return _I32.unpack_from(self.data, self._take(4, field))[0]

    def u64(self, field: str) -> int:
        return _U64.unpack_from(self.data, self._take(8, field))[0]

    def f64(self, field: str) -> float:
        return _F64.unpack_from(self.data, self._take(8, field))[0]

    def bytes(self, n: int, field: str) -> bytes:
        start = self._take(n, field)
        return bytes(self.data[start : start + n])

    def view(self, n: int, field: str) -> memoryview:
        start = self._take(n, field)
        return memoryview(self.data)[start : start + n]

    def string(self, n: int, field: str) -> str:
        raw = self.bytes(n, field)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self.error(field, "is not valid UTF-8") from None

    def array(self, dtype: np.dtype | str, count: int, field: str) -> np.ndarray:
        """``count`` values of ``dtype`` as a fresh writable array."""
        dtype = np.dtype(dtype)
        if count < 0 or count > self.remaining // max(dtype.itemsize, 1):
            raise self.error(field, f"count {count} exceeds the {self.remaining} bytes left")
        start = self._take(count * dtype.itemsize, field)
        return np.frombuffer(self.data, dtype=dtype, count=count, offset=start).copy()

    def skip(self, n: int, field: str) -> None:
        self._take(n, field)


class Writer:
    """Appends little-endian fields; ``getvalue()`` returns the bytes."""

    __slots__ = ("parts",)

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def u8(self, value: int) -> "Writer":
        self.parts.append(_U8.pack(value))
        return self

    def bool(self, value: bool) -> "Writer":
        return self.u8(1 if value else 0)

    def u32(self, value: int) -> "Writer":
        self.parts.append(_U32.pack(value))
        return self

    def i32(self, value: int) -> "Writer":
        self.parts.append(_I32.pack(value))
        return self

    def u64(self, value: int) -> "Writer":
        self.parts.append(_U64.pack(value))
        return self

    def f64(self, value: float) -> "Writer":
        self.parts.append(_F64.pack(value))
        return self

    def raw(self, data: bytes | bytearray | memoryview | np.ndarray) -> "Writer":
        if isinstance(data, np.ndarray):
            data = np.ascontiguousarray(data).tobytes()
        self.parts.append(bytes(data))
        return self

    def getvalue(self) -> bytes:
        return b"".join(self.parts)

    def __len__(self) -> int:
        return sum(len(p) for p in self.parts)

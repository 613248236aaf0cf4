"""WEBP (18): uint8 image tiles compressed with libwebp (via Pillow, an optional extra).

Options (a packed C struct, 12 bytes with padding): ``quality f32, input_format u8
(1 RGB, 2 BGR, 3 RGBA, 4 BGRA), lossless u8, y_extent u16, x_extent u16`` -- the extents are
the tile extents of the array's two dimensions, ``x_extent`` counting colour values (pixels x
3 or 4).  Metadata: ``num_parts u32`` and a ``u32`` size per part; each part is one WebP image.
Without Pillow decoding raises ``MissingExtraError`` naming ``tdbsql[webp]``.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...datatypes import Datatype
from ...errors import CorruptArrayError, DataError, MissingExtraError, UnsupportedFormatError
from ..binary import Reader, Writer
from .base import (
    ChunkContext, Filter, as_uint8, located, part_sizes_header, read_part_sizes, register, rest,
    split_parts,
)

FORMATS = {1: "RGB", 2: "BGR", 3: "RGBA", 4: "BGRA"}
OPTIONS_SIZE = 12


@register
@dataclass(frozen=True)
class WebpFilter(Filter):
    filter_id: ClassVar[int] = 18
    name: ClassVar[str] = "WEBP"

    quality: float = 100.0
    input_format: int = 1
    lossless: bool = False
    y_extent: int = 0
    x_extent: int = 0

    @classmethod
    def read_options(cls, r: Reader, size: int, version: int) -> "WebpFilter":
        quality = r.bytes(4, "WEBP quality")
        fmt = r.u8("WEBP input format")
        lossless = r.bool("WEBP lossless flag")
        y_extent = int.from_bytes(r.bytes(2, "WEBP y extent"), "little")
        x_extent = int.from_bytes(r.bytes(2, "WEBP x extent"), "little")
        return cls(float(np.frombuffer(quality, "<f4")[0]), fmt, lossless, y_extent, x_extent)

    def options_bytes(self) -> bytes:
        w = Writer().raw(np.float32(self.quality).tobytes()).u8(self.input_format)
        w.bool(self.lossless).raw(np.array([self.y_extent, self.x_extent], "<u2").tobytes())
        return w.raw(b"\0\0").getvalue()  # the C struct's tail padding

    def input_refusal(self, datatype: int) -> str | None:
        """UINT8 colour values only."""
        return None if datatype == Datatype.UINT8 else "WEBP needs UINT8 values"

    @property
    def lossy(self) -> bool:
        return not self.lossless

    @property
    def pixel_depth(self) -> int:
        return 3 if self.input_format < 3 else 4

    def decode(self, metadata, data, ctx: ChunkContext):
        image = _pillow()
        self._check(ctx)
        r = Reader(metadata, ctx.where)
        sizes = read_part_sizes(r, self.name)
        out = [self._decode_image(image, part, ctx.where)
               for part in split_parts(data, sizes, ctx.where, self.name)]
        return rest(r), np.concatenate(out) if out else np.empty(0, np.uint8)

    def encode(self, metadata, data, ctx: ChunkContext):
        image = _pillow()
        self._check(ctx)
        src = as_uint8(data)
        row = self.x_extent
        if row == 0 or src.nbytes % row or row % self.pixel_depth:
            raise DataError(f"WEBP tile of {src.nbytes} bytes is not rows of {row} colour values")
        pixels = src.reshape(src.nbytes // row, row // self.pixel_depth, self.pixel_depth)
        if FORMATS[self.input_format].startswith("BGR"):
            pixels = pixels[:, :, [2, 1, 0, 3][: self.pixel_depth]]
        buf = io.BytesIO()
        # (rows, columns, 3 or 4) uint8 arrays become RGB / RGBA images.
        image.fromarray(np.ascontiguousarray(pixels)).save(
            buf, "WEBP", lossless=self.lossless, quality=int(round(self.quality)), exact=True
        )
        encoded = buf.getvalue()
        return part_sizes_header([len(encoded)]) + bytes(metadata), encoded

    def _check(self, ctx: ChunkContext) -> None:
        if ctx.datatype != Datatype.UINT8:
            raise UnsupportedFormatError(located(ctx.where, "WEBP only works on UINT8 data"))
        if self.input_format not in FORMATS:
            raise UnsupportedFormatError(
                located(ctx.where, f"unknown WEBP input format {self.input_format}"))

    def _decode_image(self, image, part: np.ndarray, where: str) -> np.ndarray:
        mode = "RGB" if self.pixel_depth == 3 else "RGBA"
        try:
            with image.open(io.BytesIO(part.tobytes()), formats=["WEBP"]) as img:
                pixels = np.asarray(img.convert(mode))
        except Exception as exc:  # Pillow raises several types for broken images
            raise CorruptArrayError(f"WEBP image does not decode ({exc})", where) from None
        if FORMATS[self.input_format].startswith("BGR"):
            pixels = pixels[:, :, [2, 1, 0, 3][: self.pixel_depth]]
        return np.ascontiguousarray(pixels).reshape(-1)


def _pillow():
    try:
        from PIL import Image, features
    except ImportError:
        raise MissingExtraError(
            "the WEBP filter needs Pillow: install the extra with pip install 'tdbsql[webp]'"
        ) from None
    if not features.check("webp"):
        raise MissingExtraError("the WEBP filter needs a Pillow built with WebP support "
                                "(pip install 'tdbsql[webp]')")
    return Image

"""Filters: one module per filter family, a registry keyed by the TileDB filter id.

=============== ===========================================================================
``base``        the ``Filter`` interface, ``ChunkContext``, the registry, shared helpers
``compression`` GZIP (1), ZSTD (2), LZ4 (3), BZIP2 (5): codec libraries; NONE (0)
``rle``         RLE (4): fixed-size values and var-sized strings
``dictionary``  DICTIONARY (14): var-sized strings
``var_strings`` the framing RLE and DICTIONARY share on var-sized string tiles
``delta``       DELTA (19), DOUBLE_DELTA (6)
``bit_width``   BIT_WIDTH_REDUCTION (7), POSITIVE_DELTA (10)
``shuffle``     BITSHUFFLE (8), BYTESHUFFLE (9)
``checksum``    CHECKSUM_MD5 (12), CHECKSUM_SHA256 (13)
``xor``         XOR (16)
``float_scale`` SCALE_FLOAT (15)
``webp``        WEBP (18), through Pillow (the ``tdbsql[webp]`` extra)
``encryption``  AES-256-GCM, appended to every pipeline of an encrypted array (not registered)
=============== ===========================================================================

Importing this package registers every filter.  The byte loops live in ``tdbsql.kernels``.
"""

# Importing each module registers its filters.
from .base import ChunkContext, Filter, filter_class, register
from .bit_width import BitWidthReductionFilter, PositiveDeltaFilter
from .checksum import ChecksumMd5Filter, ChecksumSha256Filter
from .compression import Bzip2Filter, GzipFilter, Lz4Filter, NoopFilter, ZstdFilter
from .delta import DeltaFilter, DoubleDeltaFilter
from .dictionary import DictionaryFilter
from .encryption import AesGcmFilter
from .float_scale import FloatScaleFilter
from .rle import RleFilter
from .shuffle import BitshuffleFilter, ByteshuffleFilter
from .webp import WebpFilter
from .xor import XorFilter

__all__ = [
    "AesGcmFilter", "BitWidthReductionFilter", "BitshuffleFilter", "ByteshuffleFilter",
    "Bzip2Filter", "ChecksumMd5Filter", "ChecksumSha256Filter", "ChunkContext", "DeltaFilter",
    "DictionaryFilter", "DoubleDeltaFilter", "Filter", "FloatScaleFilter", "GzipFilter",
    "Lz4Filter", "NoopFilter", "PositiveDeltaFilter", "RleFilter", "WebpFilter", "XorFilter",
    "ZstdFilter", "filter_class", "register",
]

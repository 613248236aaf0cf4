"""Filters: one module per filter family, a registry keyed by the TileDB filter id.

``base``        the ``Filter`` interface, ``ChunkContext`` and the registry
``compression`` GZIP, ZSTD, LZ4, BZIP2 (codec libraries) and RLE
``...``        one module per remaining family (see each module's docstring)

Importing this package registers every filter.
"""

from . import compression  # noqa: F401  (registers GZIP, ZSTD, LZ4, BZIP2)
from .base import ChunkContext, Filter, filter_class, register

__all__ = ["ChunkContext", "Filter", "filter_class", "register"]

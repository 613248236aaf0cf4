"""Array metadata, the ``__meta`` folder (spec: metadata.md, vacuum_file.md).

In: the files of ``__meta`` (timestamped names without a version, plus ``.vac`` files).  Each
metadata file is one generic tile of entries ``key_len u32, key, deleted u8`` and, unless
deleted, ``type u8, num u32, num * sizeof(type) bytes``.

Out: ``select_metadata_files`` picks the files TileDB would load for a timestamp window and
``read_merged`` applies them in timestamp order (a later entry replaces or deletes a key),
giving ``MetadataEntry`` objects by key; ``load_metadata`` is the two together.  Reads
(``merge_metadata`` / ``raw_metadata`` over file bytes, ``load_metadata_dir`` over a folder,
which return the values the way ``dict(A.meta)`` of TileDB-Py does) and array_meta
consolidation all load through them.  Writers: ``encode_metadata`` (tile payload) and ``encode_metadata_file``
(the file), plus ``tiledb_py_put`` / ``tiledb_py_delete`` which produce exactly the entries
TileDB-Py writes for ``A.meta[k] = v`` / ``del A.meta[k]``.

Selection rules (TileDB ``ArrayDirectory::load_array_meta_uris``): only files whose whole
timestamp range lies in ``[t_start, t_end]`` count, ``.vac`` files included; a counted ``.vac``
hides the files it lists; the rest load sorted by their first timestamp.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from ..datatypes import Datatype, string_codec, type_info
from ..errors import CorruptArrayError
from .binary import Reader, Writer
from .commits import parse_vacuum_file
from .filter_pipeline import FilterPipeline
from .filters.compression import GzipFilter
from .generic_tile import decode_generic_tile, encode_generic_tile
from .names import META_DIR, VACUUM_EXT, now_ms, parse_name

NP_FLAT_PREFIX = "__np_flat_"  # TileDB-Py stores numpy arrays under this key prefix
NP_SHAPE_PREFIX = "__np_shape_"  # ... and their shape (if not 1-D) under this one

# What TileDB wraps every generic tile it writes in: GZIP level 1, 64 KiB chunks.
GENERIC_TILE_PIPELINE = FilterPipeline((GzipFilter(level=1),))

_FIXED_NUMERIC = frozenset({
    Datatype.INT8, Datatype.UINT8, Datatype.INT16, Datatype.UINT16, Datatype.INT32,
    Datatype.UINT32, Datatype.INT64, Datatype.UINT64, Datatype.FLOAT32, Datatype.FLOAT64,
})
_BYTES_TYPES = frozenset({Datatype.BLOB, Datatype.CHAR, Datatype.STRING_ASCII})


@dataclass(frozen=True)
class MetadataEntry:
    """One put (``deleted`` False) or deletion of a key; ``raw`` holds ``num`` values."""

    key: str
    deleted: bool
    datatype: Datatype | None = None
    num: int = 0
    raw: bytes = b""

    @property
    def key_bytes(self) -> bytes:
        return _key_bytes(self.key)


def _key_bytes(key: str) -> bytes:
    # Keys are arbitrary bytes in TileDB; undecodable ones round-trip through surrogates.
    return key.encode("utf-8", "surrogateescape")


# --- one file -----------------------------------------------------------------------------


def parse_metadata(payload: bytes, where: str = "") -> tuple[MetadataEntry, ...]:
    """The entries of a decoded metadata tile, in file order."""
    r = Reader(bytes(payload), where)
    entries = []
    while not r.at_end():
        entries.append(_read_entry(r))
    return tuple(entries)


def _read_entry(r: Reader) -> MetadataEntry:
    key_len = r.u32("metadata key length")
    key = r.bytes(key_len, "metadata key").decode("utf-8", "surrogateescape")
    if r.u8(f"metadata deletion flag of {key!r}"):
        return MetadataEntry(key, True)
    type_id = r.u8(f"metadata value type of {key!r}")
    try:
        datatype = Datatype(type_id)
    except ValueError:
        raise r.error(f"metadata value type of {key!r}", f"unknown datatype {type_id}") from None
    num = r.u32(f"metadata value count of {key!r}")
    size = num * type_info(datatype).size
    return MetadataEntry(key, False, datatype, num, r.bytes(size, f"metadata value of {key!r}"))


def read_metadata_file(data: bytes, where: str = "",
                       key: bytes | None = None) -> tuple[MetadataEntry, ...]:
    """The entries of a metadata file (TileDB reads only its first generic tile)."""
    return parse_metadata(decode_generic_tile(data, where, key).tobytes(), where)


def encode_metadata(entries: Iterable[MetadataEntry]) -> bytes:
    """The tile payload TileDB writes for a batch of puts/deletes: a later entry for a key
    replaces an earlier one and keys come out in byte order (TileDB keeps a ``std::map``)."""
    batch: dict[bytes, MetadataEntry] = {}
    for e in entries:
        batch[e.key_bytes] = e
    w = Writer()
    for kb in sorted(batch):
        e = batch[kb]
        w.u32(len(kb)).raw(kb).u8(1 if e.deleted else 0)
        if not e.deleted:
            _check_value(e)
            w.u8(int(e.datatype)).u32(e.num).raw(e.raw)
    return w.getvalue()


def _check_value(e: MetadataEntry) -> None:
    if e.datatype is None or len(e.raw) != e.num * type_info(e.datatype).size:
        raise ValueError(f"metadata {e.key!r}: {len(e.raw)} bytes do not hold {e.num} values")


def encode_metadata_file(entries: Iterable[MetadataEntry], version: int = 22,
                         key: bytes | None = None) -> bytes:
    """A metadata file as TileDB writes it (``__meta/<new_name(t, t, None)>``)."""
    return encode_generic_tile(encode_metadata(entries), version,
                               pipeline=GENERIC_TILE_PIPELINE, key=key)


# --- which files, in which order ---------------------------------------------------------


def select_metadata_files(names: Iterable[str], read_vac: Callable[[str], bytes],
                          t_start: int = 0, t_end: int | None = None,
                          folder: str = META_DIR) -> list[str]:
    """The metadata files (names inside ``folder``, ``__meta``; a group's ``__group`` is
    chosen alike) to load for ``[t_start, t_end]``, in load order.  ``read_vac(name)``
    returns a ``.vac`` file's bytes; it is called only for the ``.vac`` files inside the
    window.  Junk names and ``.tmp`` leftovers are skipped."""
    t_end = now_ms() if t_end is None else t_end
    parsed = [p for p in map(parse_name, names) if p is not None]
    inside = [p for p in parsed if t_start <= p.t1 and p.t2 <= t_end]
    hidden = set()
    for vac in (p for p in inside if p.ext == VACUUM_EXT):
        hidden.update(parse_vacuum_file(read_vac(vac.filename), f"{folder}/{vac.filename}"))
    files = [p for p in inside if p.ext == "" and f"{folder}/{p.filename}" not in hidden]
    # TileDB sorts by the first timestamp; its listing (sorted by name) breaks ties.
    files.sort(key=lambda p: (p.t1, p.filename))
    return [p.filename for p in files]


def merge_entries(files: Iterable[Iterable[MetadataEntry]]) -> dict[str, MetadataEntry]:
    """Apply files in order: each entry first removes its key, a put then re-adds it."""
    merged: dict[str, MetadataEntry] = {}
    for entries in files:
        for e in entries:
            merged.pop(e.key, None)
            if not e.deleted:
                merged[e.key] = e
    return {k: merged[k] for k in sorted(merged, key=_key_bytes)}


def read_merged(names: Iterable[str], read: Callable[[str], bytes],
                key: bytes | None = None) -> dict[str, MetadataEntry]:
    """The merged entries (``merge_entries``) of the metadata files ``names`` of ``__meta``,
    in load order; ``read(name)`` returns a file's bytes."""
    return merge_entries(read_metadata_file(read(n), f"__meta/{n}", key) for n in names)


def load_metadata(names: Iterable[str], read: Callable[[str], bytes], t_start: int = 0,
                  t_end: int | None = None, key: bytes | None = None) -> dict[str, MetadataEntry]:
    """The entries TileDB loads from a ``__meta`` folder for ``[t_start, t_end]``: ``names``
    are the folder's file names, ``read(name)`` returns a file's bytes.  The files are
    ``select_metadata_files``'s, merged by ``read_merged``."""
    return read_merged(select_metadata_files(names, read, t_start, t_end), read, key)


def raw_metadata(files: Mapping[str, bytes], t_start: int = 0, t_end: int | None = None,
                 key: bytes | None = None) -> dict[str, MetadataEntry]:
    """Merged entries of ``files`` (every file of ``__meta``: name -> bytes) for the window."""
    return load_metadata(files, files.__getitem__, t_start, t_end, key)


def merge_metadata(files: Mapping[str, bytes], t_start: int = 0, t_end: int | None = None,
                   key: bytes | None = None) -> dict[str, Any]:
    """``dict(A.meta)`` of TileDB-Py for ``tiledb.open(uri, timestamp=(t_start, t_end))``."""
    return tiledb_py_dict(raw_metadata(files, t_start, t_end, key))


def load_metadata_dir(meta_dir: str | os.PathLike, t_start: int = 0, t_end: int | None = None,
                      key: bytes | None = None, raw: bool = False) -> dict[str, Any]:
    """``merge_metadata`` over a local ``__meta`` folder (missing folder: no metadata)."""
    try:
        names = sorted(os.listdir(meta_dir))
    except FileNotFoundError:
        return {}
    except NotADirectoryError:
        raise CorruptArrayError("is a file, expected a folder", os.fspath(meta_dir)) from None

    def read(name: str) -> bytes:
        with open(os.path.join(meta_dir, name), "rb") as f:
            return f.read()

    merged = load_metadata(names, read, t_start, t_end, key)
    return merged if raw else tiledb_py_dict(merged)


# --- values as TileDB-Py returns them ------------------------------------------------------


def python_value(e: MetadataEntry) -> Any:
    """The value of a plain key as ``A.meta[key]`` returns it: ``str`` (STRING_UTF8),
    ``bytes`` (BLOB/CHAR/ASCII), a numpy scalar (one signed int or float), a Python ``int``
    (one unsigned int), a tuple (several values, or ``()`` for none).  Types TileDB-Py cannot
    return (BOOL, dates, other strings) come back as numpy scalars / decoded strings."""
    dt = e.datatype
    if dt == Datatype.STRING_UTF8:
        return e.raw.decode("utf-8", "surrogateescape")
    if dt in _BYTES_TYPES or dt == Datatype.GEOM_WKB:
        return e.raw
    info = type_info(dt)
    if info.kind == "string":
        return e.raw.decode(string_codec(dt), "surrogateescape")
    if e.num == 0:
        return ()
    values = np.frombuffer(e.raw, _numpy_dtype(dt), count=e.num)
    if dt in _FIXED_NUMERIC:
        items = tuple(values.tolist())
        if len(items) > 1:
            return items
        # TileDB-Py wraps single signed ints and floats (numpy kinds "i", "f") in numpy scalars.
        return values.dtype.type(items[0]) if values.dtype.kind in "if" else items[0]
    return tuple(values) if e.num > 1 else values[0]


def ndarray_value(e: MetadataEntry, shape: Any = None) -> np.ndarray:
    """A ``__np_flat_`` value as TileDB-Py rebuilds it (reshaped if ``shape`` is given)."""
    dtype = _ndarray_dtype(e.datatype)
    arr = np.frombuffer(e.raw, dtype).copy() if e.num else np.empty(0, dtype)
    return arr if shape is None else arr.reshape(shape)


def _ndarray_dtype(dt: Datatype) -> np.dtype:
    # TileDB-Py's tdb_to_np_dtype(type, 1): one character per element for strings, int8 for BLOB.
    if dt == Datatype.STRING_UTF8:
        return np.dtype("<U1")
    if dt in (Datatype.CHAR, Datatype.STRING_ASCII):
        return np.dtype("S1")
    if dt in (Datatype.BLOB, Datatype.GEOM_WKB):
        return np.dtype("int8")
    return _numpy_dtype(dt)


def _numpy_dtype(dt: Datatype) -> np.dtype:
    info = type_info(dt)
    if info.kind == "bool":
        return np.dtype(np.bool_)
    if info.kind in ("datetime", "time"):
        return np.dtype(f"{'M8' if info.kind == 'datetime' else 'm8'}[{info.unit}]")
    return info.numpy


def tiledb_py_dict(entries: Mapping[str, MetadataEntry]) -> dict[str, Any]:
    """``dict(A.meta)``: numpy arrays folded back from their ``__np_flat_`` / ``__np_shape_``
    keys, shape keys hidden, keys in TileDB's (byte) order."""
    out: dict[str, Any] = {}
    for k in sorted(entries, key=_key_bytes):
        if k.startswith(NP_SHAPE_PREFIX):
            continue
        name = k[len(NP_FLAT_PREFIX):] if k.startswith(NP_FLAT_PREFIX) else k
        out[name] = _tiledb_py_get(entries, name)
    return out


def _tiledb_py_get(entries: Mapping[str, MetadataEntry], name: str) -> Any:
    if name in entries:
        return python_value(entries[name])
    shape_entry = entries.get(NP_SHAPE_PREFIX + name)
    shape = None if shape_entry is None else python_value(shape_entry)
    return ndarray_value(entries[NP_FLAT_PREFIX + name], shape)


# --- writing like TileDB-Py ----------------------------------------------------------------


def put_entry(key: str, datatype: Datatype, raw: bytes, num: int | None = None) -> MetadataEntry:
    """A put of ``raw`` (``num`` values of ``datatype``; derived from the size if omitted)."""
    size = type_info(datatype).size
    num = len(raw) // size if num is None else num
    return MetadataEntry(key, False, Datatype(datatype), num, bytes(raw[: num * size]))


def delete_entry(key: str) -> MetadataEntry:
    return MetadataEntry(key, True)


def tiledb_py_delete(key: str) -> list[MetadataEntry]:
    """The entries ``del A.meta[key]`` writes (the plain key and both numpy-array keys)."""
    return [delete_entry(k) for k in (key, NP_FLAT_PREFIX + key, NP_SHAPE_PREFIX + key)]


def tiledb_py_put(key: str, value: Any) -> list[MetadataEntry]:
    """The entries ``A.meta[key] = value`` writes in TileDB-Py 0.36 (deletes first)."""
    out = tiledb_py_delete(key)
    if isinstance(value, np.ndarray):
        flat = value.ravel()
        out.append(_ndarray_entry(NP_FLAT_PREFIX + key, flat))
        if value.shape != flat.shape:
            out.extend(tiledb_py_put(NP_SHAPE_PREFIX + key, value.shape))
    elif isinstance(value, np.generic):
        out.append(_numpy_scalar_entry(key, value))
    else:
        out.append(_python_value_entry(key, value))
    return out


_NUMPY_KIND_STRING = {"S": Datatype.STRING_ASCII, "U": Datatype.STRING_UTF8}


def _tiledb_type_of(dtype: np.dtype) -> Datatype:
    if dtype.kind in _NUMPY_KIND_STRING:
        return _NUMPY_KIND_STRING[dtype.kind]
    if dtype.kind == "b":
        return Datatype.BOOL
    if dtype.kind in "Mm":
        unit = _UNIT_NAMES.get(np.datetime_data(dtype)[0], "")
        name = ("DATETIME_" if dtype.kind == "M" else "TIME_") + unit
    else:
        name = {"i": "INT", "u": "UINT", "f": "FLOAT"}.get(dtype.kind, "?") + str(dtype.itemsize * 8)
    if name not in Datatype.__members__:
        raise TypeError(f"numpy dtype {dtype} cannot be stored as metadata")
    return Datatype[name]


_UNIT_NAMES = {"Y": "YEAR", "M": "MONTH", "W": "WEEK", "D": "DAY", "h": "HR", "m": "MIN",
               "s": "SEC", "ms": "MS", "us": "US", "ns": "NS", "ps": "PS", "fs": "FS", "as": "AS"}


def _ndarray_entry(key: str, flat: np.ndarray) -> MetadataEntry:
    datatype = _tiledb_type_of(flat.dtype)
    chars = flat.dtype.itemsize // (4 if flat.dtype.kind == "U" else 1)
    if flat.dtype.kind in "SU" and flat.size > 1 and chars != 1:
        # TileDB-Py refuses arrays of several multi-character strings.
        raise TypeError(f"unsupported dtype {flat.dtype} for metadata")
    raw = np.ascontiguousarray(flat).tobytes()
    # TileDB-Py passes the byte count as the value count of string types.
    num = len(raw) if flat.dtype.kind in "SU" else flat.size
    return MetadataEntry(key, False, datatype, num, raw)


def _numpy_scalar_entry(key: str, value: np.generic) -> MetadataEntry:
    if isinstance(value, np.bytes_):
        return MetadataEntry(key, False, Datatype.CHAR, len(value), bytes(value))
    if isinstance(value, np.str_):
        # TileDB-Py counts characters but hands over UTF-8 bytes: TileDB keeps that many bytes.
        encoded = str(value).encode("utf-8")
        return MetadataEntry(key, False, Datatype.STRING_UTF8, len(value), encoded[: len(value)])
    datatype = _scalar_type(value.dtype)
    size = type_info(datatype).size
    return MetadataEntry(key, False, datatype, 1, value.tobytes()[:size])


def _scalar_type(dtype: np.dtype) -> Datatype:
    # complex scalars go in as their first (real) component, as TileDB-Py does.
    if dtype.kind == "c":
        return Datatype.FLOAT32 if dtype.itemsize == 8 else Datatype.FLOAT64
    return _tiledb_type_of(dtype)


def _python_value_entry(key: str, value: Any) -> MetadataEntry:
    if isinstance(value, bytes):
        return MetadataEntry(key, False, Datatype.BLOB, len(value), value)
    if isinstance(value, str):
        raw = value.encode("utf-8")
        return MetadataEntry(key, False, Datatype.STRING_UTF8, len(raw), raw)
    values = tuple(value) if isinstance(value, (list, tuple)) else (value,)
    if not values:
        return MetadataEntry(key, False, Datatype.INT32, 0, b"")
    is_int = isinstance(values[0], int)
    if not isinstance(values[0], (int, float)):
        raise TypeError(f"Unsupported item type '{type(values[0])}'")
    want = int if is_int else float
    if not all(isinstance(v, want) for v in values):
        raise TypeError(f"Mixed-type sequences are not supported: {value}")
    arr = np.array(values, dtype=np.int64 if is_int else np.float64)
    datatype = Datatype.INT64 if is_int else Datatype.FLOAT64
    return MetadataEntry(key, False, datatype, len(values), arr.tobytes())

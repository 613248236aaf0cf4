"""TileScan: read the cells of an array at its window, restricted to dimension ranges and pruned
by the pushed-down predicate's zone maps.

``scan(array, fields, ranges, predicate=None)`` -> ``ScanResult``.  ``predicate`` is a sqlglot
boolean expression over unqualified column names (the conjuncts the planner pushes into the
scan).  The scan drops tiles that cannot hold a row satisfying it (``planner.zonemap``) but
returns every row of the tiles it keeps: the caller still applies the full predicate, except
on rows flagged in ``ScanResult.always`` (their tile satisfies the whole predicate).

``sparse_scan`` and ``dense_scan`` hold the two read semantics and the soundness rules of
dropping tiles on attribute conjuncts.

``ScanResult.stats`` -- the pruning funnel for EXPLAIN (ANALYZE):

=========================  ==================================================================
fragments_total            committed fragments of the array (any timestamp)
fragments_after_timestamps fragments visible in the timestamp window
fragments_after_domain     ... whose non-empty domain meets the ranges
tiles_total                tiles of the fragments in the window
tiles_after_domain         tiles of the fragments after the non-empty-domain stage
tiles_after_mbr            tiles meeting the ranges (sparse: R-tree MBRs; dense: space tiles)
tiles_after_zonemap        tiles left after the zone maps (the tiles decoded)
tiles_always               of those, tiles where the whole predicate is true for every cell
tiles_after_keys           tiles left whose key column's bounds hold a join key (keyed scans
                           only: absent otherwise)
tiles_from_metadata        tiles left out because ``answer_from_metadata`` used their metadata
bytes_read                 bytes of tile data read from files (compressed, all fields; none for
                           tiles the tile cache served, ``storage.tile_cache``)
bytes_decoded              bytes of the decoded tiles (values, offsets, validity; a tile read
                           by two merge slabs counts twice)
merge_slabs                slabs the newest-wins merge ran in (0: no merge, or one pass)
tiles_summed               tiles with rows an aggregate summed as they came (``scan_sums``)
tiles_summed_coded         ... of them read (in part) by dictionary codes (``tile_codes``)
time_s                     wall time of the scan
rows                       rows returned
=========================  ==================================================================
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np

from ..planner.pruning import Ranges
from ..planner.zonemap import (
    TileClasses, classify, field_kinds, parse_predicate, same_field, stats_getter,
)
from .column import Column
from .fill import empty_column
from .key_filter import stored_keep
from .stored_filter import NOTHING_LEFT, StoredFilter, compress, stored_filter

STAT_KEYS = ("fragments_total", "fragments_after_timestamps", "fragments_after_domain",
             "tiles_total", "tiles_after_domain", "tiles_after_mbr", "tiles_after_zonemap",
             "tiles_always", "tiles_from_metadata", "bytes_read", "bytes_decoded", "merge_slabs",
             "time_s", "rows")


@dataclass(frozen=True)
class ScanResult:
    columns: dict[str, Column]
    length: int
    stats: dict
    always: np.ndarray | None = None  # bool per row: its tile satisfies the whole predicate


class PreparedPredicate:
    """What a scan derives from its predicate and the array schema alone, kept by a cached
    plan across runs: the field kinds, the zone-map parse of the predicate, and the stored-
    value filters per settled set (``TileScan.task_filter``)."""

    def __init__(self, predicate, schema):
        self.schema = schema
        self.kinds = field_kinds(schema)
        self.parsed = None if predicate is None else parse_predicate(predicate, self.kinds)
        self.filters: dict[tuple[int, int], tuple] = {}


class TileScan:
    """What both scans start from: the array at its window, the fields wanted, the ranges, the
    parsed predicate, tiles to leave out (``skip_tiles``: fragment position -> bool per tile)
    and the funnel counters."""

    def __init__(self, array, fields: list[str], ranges: Ranges, predicate=None,
                 skip_tiles: dict[int, np.ndarray] | None = None,
                 prepared: PreparedPredicate | None = None):
        self.array = array
        self.schema = array.schema
        self.fields = fields
        self.ranges = ranges
        self.fragments = array.fragments
        self.dim_names = [d.name for d in self.schema.dimensions]
        if prepared is None or prepared.schema is not self.schema:
            prepared = PreparedPredicate(predicate, self.schema)
        self.kinds = prepared.kinds
        self.predicate = prepared.parsed
        self.skip_tiles = skip_tiles or {}
        self.budget = None  # a MemoryBudget for what the scan must hold whole (merges, boxes)
        self._filters = prepared.filters
        self.stats = dict.fromkeys(STAT_KEYS, 0)
        self.stats["fragments_total"] = len(array.directory.committed)
        self.stats["fragments_after_timestamps"] = len(self.fragments)
        self.stats["tiles_total"] = sum(f.metadata.tile_count for f in self.fragments)
        self._stats_lock = threading.Lock()
        self._same_fields: dict[int, tuple] = {}  # id(spec) -> (spec, same_field)
        self._empty_columns: dict[str, Column] = {}  # see _no_rows

    streamable = False  # can tiles be read one at a time (``SparseScan``'s may)?

    def tasks(self) -> list:
        """Units of work for ``read``: a scan that cannot stream has one, ``None``."""
        return [None]

    def read(self, task) -> ScanResult:
        """The cells of one task of ``tasks()`` (the whole scan for ``None``)."""
        return self.run()

    def task_cells(self, task) -> int | None:
        """How many cells one task of ``tasks()`` reads at most (None: not known)."""
        return None

    def task_tiles(self, task) -> int:
        """How many tiles one task of ``tasks()`` reads (for the stats)."""
        return 1

    def runs(self, tasks: list) -> list:
        """``tasks`` with neighbouring tiles read as one task where the scan can
        (``SparseScan.runs``)."""
        return tasks

    def key_tasks(self, tasks: list, field: str, keys) -> list:
        """``tasks`` without the tiles whose bounds on the stored integer column ``field``
        hold none of the ``KeyFilter`` ``keys`` (counted in ``stats``)."""
        return tasks

    def key_mask(self, task, field: str, keys) -> tuple[np.ndarray, int] | None:
        """``(keep, kept)``: the ``KeyFilter`` ``keys`` tested on the stored integer column
        ``field`` of a task read for nothing else yet, so a tile holding no key is never read
        further; None when the task's cells are not its column's cells as stored."""
        return None

    def no_rows(self, names) -> dict[str, Column]:
        """Empty columns named ``names``, made once per scan: most tiles of a scan for a few
        join keys keep no row, and taking nothing from each column costs."""
        for name in names:
            if name not in self._empty_columns:
                self._empty_columns[name] = empty_column(self.schema, name)
        return {name: self._empty_columns[name] for name in names}

    def task_filter(self, task, condition) -> StoredFilter:
        """How to filter a task's cells by ``condition`` (the predicate this scan was opened
        with, or the same conjuncts in the same order with qualified names): the unsettled
        conjuncts on stored numbers and dates as kernel tests, the rest for the
        evaluator; cached per settled set (the cache keeps ``condition`` alive, so its id stays
        its own)."""
        settled = getattr(task, "settled", 0)
        key = (settled, id(condition))
        if key not in self._filters:
            self._filters[key] = (condition, stored_filter(condition, self.predicate,
                                                           self.kinds, settled))
        return self._filters[key][1]

    def filtered(self, task, result: ScanResult, condition, wanted: set[str] | None = None,
                 keys=None, keyed=None, gather: bool = True) -> tuple:
        """(columns, length, the task's ``StoredFilter``) of a task's cells: the conjuncts
        the zone maps settled for its tile are dropped (all of them when the tile is ALWAYS
        for the whole predicate); of the rest, those on stored numbers and dates filter the
        cells here, before they become Arrow (``engine.stored_filter``), and the filter's
        ``residual`` is what is left to evaluate.  With ``wanted`` (column names), only those
        and the ones the residual reads are gathered after filtering.  ``keys`` (a stored
        integer column's name, a ``KeyFilter`` with a presence table) keeps only the cells
        whose value is a key (``engine.deferred_inputs``); ``keyed`` is that test's
        ``(keep, kept)`` when ``key_mask`` made it already.  Without ``gather`` the kept
        cells stay in the tile's columns and a fourth item gives their indices (None when
        every cell was kept or none was): ``gathered`` copies them out later if need be."""
        columns, length = result.columns, result.length
        if condition is None or (result.always is not None and bool(result.always.all())):
            filtering = NOTHING_LEFT
        else:
            filtering = self.task_filter(task, condition)
        keep, kept, selected = None, length, None
        if keyed is not None:
            keep, kept = keyed
        elif keys is not None:  # first: keys are tested only while few cells have them
            keep = np.ones(length, bool)
            kept = stored_keep(keys[1], columns[keys[0]], keep)
        if filtering.tests and kept:
            keep, kept = filtering.keep(columns, length, keep, kept)
        if kept < length:
            if wanted is not None:
                needed = wanted | filtering.residual_columns
                columns = {n: c for n, c in columns.items() if n in needed}
            if not kept:
                columns = self.no_rows(columns)
            elif gather:
                columns = compress(columns, keep)
            else:
                selected = keep.nonzero()[0]
            length = kept
        return (columns, length, filtering) if gather else (columns, length, filtering, selected)

    @property
    def wants_always(self) -> bool:
        return self.predicate is not None and self.predicate.complete and bool(self.predicate.tests)

    def zone_classes(self, frag, tiles: np.ndarray, dim_bounds, cells: np.ndarray
                     ) -> TileClasses | None:
        """Classes of the fragment's tiles ``tiles``; ``dim_bounds[name]`` = (lows, highs) per
        listed tile, ``cells`` the cell count of each listed tile.  None without tests."""
        if self.predicate is None or not self.predicate.tests:
            return None
        stats_of = stats_getter(frag, self.schema, self.kinds, dim_bounds, cells, tiles)
        return classify(self.predicate, self.kinds, stats_of, len(tiles))

    def same_field(self, spec) -> bool:
        """See ``planner.zonemap.same_field`` (worked out once per field spec: every tile of
        every fragment asks)."""
        found = self._same_fields.get(id(spec))
        if found is None or found[0] is not spec:
            found = self._same_fields[id(spec)] = (spec, same_field(self.schema, spec))
        return found[1]

    def check_budget(self, nbytes: int, what: str) -> None:
        """Refuse to hold ``nbytes`` for ``what`` past the memory budget (if one is set)."""
        if self.budget is not None:
            self.budget.check(nbytes, f"{what} of the array {self.array.path!r}")

    def count_tiles_bytes(self, frag, tiles: range, columns: dict[str, Column],
                          cached) -> None:
        """Count the bytes of ``columns`` of ``frag`` (its stored fields only), read from
        its tiles ``tiles`` (one, or a run) into the stats: decoded, and read from disk
        unless ``cached`` names them."""
        read = decoded = 0
        for name, column in columns.items():
            if name not in frag.fields:
                continue
            if name not in cached:
                read += self._tile_file_bytes(frag.metadata, name, tiles, column)
            decoded += column.nbytes
        with self._stats_lock:  # tiles are read on several threads: one update a tile
            self.stats["bytes_read"] += read
            self.stats["bytes_decoded"] += int(decoded)

    @staticmethod
    def _tile_file_bytes(meta, name: str, tiles: range, column: Column) -> int:
        """The bytes field ``name``'s files hold for ``tiles`` (``column``: what they decode
        to, which says whether there are var values and validity)."""
        read = 0
        for tile_idx in tiles:
            read += meta.tile_range(name, tile_idx)[1]
            if column.offsets is not None:
                read += meta.tile_var_range(name, tile_idx)[1]
            if column.validity is not None:
                read += meta.tile_validity_range(name, tile_idx)[1]
        return int(read)


def open_scan(array, fields: list[str], ranges: Ranges, predicate=None, *,
              skip_tiles: dict[int, np.ndarray] | None = None, budget=None,
              prepared: PreparedPredicate | None = None) -> TileScan:
    """The scan of ``array`` for ``fields`` (sparse or dense), pruned but not read yet;
    ``budget`` (a ``MemoryBudget``) bounds what it must hold whole; ``prepared``: the
    predicate as parsed for this schema before (worked out here otherwise)."""
    if array.schema.sparse:
        from .sparse_scan import SparseScan

        reader = SparseScan(array, fields, ranges, predicate, skip_tiles, prepared)
    else:
        from .dense_scan import DenseScan

        reader = DenseScan(array, fields, ranges, predicate, skip_tiles, prepared)
    reader.budget = budget
    return reader


def scan(array, fields: list[str], ranges: Ranges, predicate=None, *,
         skip_tiles: dict[int, np.ndarray] | None = None) -> ScanResult:
    """Cells of ``fields`` (see the module docstring); ``skip_tiles`` leaves tiles out (only
    for tiles whose cells no other fragment overwrites or is overwritten by -- the metadata
    aggregate path)."""
    started = time.perf_counter()
    runner = open_scan(array, fields, ranges, predicate, skip_tiles=skip_tiles)
    result = runner.run()
    runner.stats["time_s"] = time.perf_counter() - started
    runner.stats["rows"] = result.length
    return result

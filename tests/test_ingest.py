"""Ingest: Parquet, CSV and Arrow IPC files -> arrays that `tiledb` (the oracle) and tdbsql read
back equal to the source rows; streaming in several fragments; appends; bad input leaves
nothing behind."""

from __future__ import annotations

import datetime
import decimal
import importlib
import math
import os

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest

import tdbsql
from tdbsql.ingestion import IngestError, IngestWarning, ingest

tiledb = pytest.importorskip("tiledb")


def sample(n: int = 500, seed: int = 1) -> pa.Table:
    """Rows with every common column kind; (day, station) repeats, so duplicates happen."""
    rng = np.random.default_rng(seed)
    rain = np.round(rng.gamma(1.0, 3.0, n), 1)
    return pa.table({
        "station": pa.array(rng.integers(1, 40, n), pa.int32()),
        "day": pa.array((np.datetime64("2024-01-01") + rng.integers(0, 60, n)).astype(
            "datetime64[D]")),
        "temp": pa.array(np.round(rng.normal(10, 5, n), 2)),
        "rain": pa.array(rain, mask=rain < 1.0),
        "city": pa.array([f"city-{i % 13}" if i % 17 else "Zürich" for i in range(n)]),
        "flag": pa.array(rng.integers(0, 2, n).astype(bool)),
        "count": pa.array(rng.integers(-(2**40), 2**40, n), pa.int64()),
        "at": pa.array(rng.integers(0, 10**12, n).astype("datetime64[ms]")),
    })


def canonical(table: pa.Table, columns: list[str]) -> pa.Table:
    """Source or result rows in one order with plain types (for equality)."""
    out = {}
    for name in columns:
        col = table.column(name).combine_chunks()
        if pa.types.is_large_string(col.type) or pa.types.is_string_view(col.type):
            col = col.cast(pa.string())
        out[name] = col
    t = pa.table(out)
    return t.sort_by([(c, "ascending") for c in columns])


def oracle(uri: str, key: str | None = None) -> pa.Table:
    cfg = tiledb.Config({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": key}) \
        if key else None
    with tiledb.open(uri, ctx=tiledb.Ctx(cfg) if cfg else None) as array:
        return array.query(return_arrow=True).df[:]


def assert_reads_equal(uri: str, source: pa.Table, key: str | None = None) -> None:
    columns = source.column_names
    expected = canonical(source, columns)
    got = tdbsql.query("SELECT * FROM array", uri, key=key)
    assert canonical(got, columns).equals(expected)
    theirs = oracle(uri, key)
    for name in columns:  # tiledb's Arrow types: uint8 for bool, large_string, ...
        theirs = theirs.set_column(theirs.column_names.index(name), name,
                                   theirs.column(name).cast(expected.column(name).type))
    assert canonical(theirs, columns).equals(expected)


# --- the three source formats -----------------------------------------------------------------


def test_parquet_sparse_two_dims(tmp_path):
    table = sample()
    pq.write_table(table, tmp_path / "s.parquet", row_group_size=128)
    report = ingest(tmp_path / "s.parquet", tmp_path / "a", dims=["day", "station"])
    assert report.rows == 500 and len(report.fragments) == 1 and report.created
    assert_reads_equal(str(tmp_path / "a"), table)
    schema = tdbsql.open(str(tmp_path / "a")).schema
    assert [d.name for d in schema.dimensions] == ["day", "station"]
    days = table.column("day").cast(pa.int32()).to_numpy()
    assert schema.dimension("day").domain == (days.min(), days.max())
    assert schema.allows_duplicates
    assert schema.attribute("rain").nullable and not schema.attribute("temp").nullable


def test_csv_with_nulls_and_types(tmp_path):
    table = sample(300)
    pacsv.write_csv(table, tmp_path / "s.csv")
    ingest(tmp_path / "s.csv", tmp_path / "a", dims="station")
    parsed = pacsv.read_csv(tmp_path / "s.csv")  # what the CSV says, as Arrow infers it
    assert parsed.schema.field("day").type == pa.date32()
    assert_reads_equal(str(tmp_path / "a"), parsed)


def test_ipc_file_and_stream(tmp_path):
    table = sample(200)
    with ipc.new_file(tmp_path / "f.arrow", table.schema) as w:
        for batch in table.to_batches(max_chunksize=64):
            w.write_batch(batch)
    with ipc.new_stream(tmp_path / "s.arrows", table.schema) as w:
        w.write_table(table)
    ingest(tmp_path / "f.arrow", tmp_path / "a", dims=["station", "day"])
    assert_reads_equal(str(tmp_path / "a"), table)
    ingest(tmp_path / "s.arrows", tmp_path / "b", dims=["station"])
    assert_reads_equal(str(tmp_path / "b"), table)


def test_streaming_makes_several_fragments(tmp_path):
    table = sample(2000)
    pq.write_table(table, tmp_path / "s.parquet", row_group_size=300)
    report = ingest(tmp_path / "s.parquet", tmp_path / "a", dims=["station", "day"],
                    batch_rows=450)
    assert report.rows == 2000
    assert len(report.fragments) == 5
    fragments = tiledb.array_fragments(str(tmp_path / "a"))
    assert len(fragments) == 5
    assert sorted(f.cell_num for f in fragments) == [200, 450, 450, 450, 450]
    assert_reads_equal(str(tmp_path / "a"), table)


def test_sparse_ingest_converts_and_ranks_each_dimension_once(tmp_path, monkeypatch):
    """Per group, each column becomes a FieldBuffer once (the dimensions in the reader thread,
    for the sort, then handed to the writer as they are) and a string dimension is ranked once
    (the sort, the writer's order check and its MBRs share the ranks)."""
    from tdbsql.storage import tiling, write_buffers, writer

    converted, ranked = [], []
    real_convert, real_rank = write_buffers.field_buffer, tiling.string_ranks

    def convert(column, name, *args, **kwargs):
        converted.append(name)
        return real_convert(column, name, *args, **kwargs)

    monkeypatch.setattr(write_buffers, "field_buffer", convert)
    monkeypatch.setattr(writer, "field_buffer", convert)
    monkeypatch.setattr(tiling, "string_ranks", lambda buf: ranked.append(1) or real_rank(buf))
    table = sample(1000).select(["station", "city", "temp"])
    report = ingest(table, tmp_path / "a", dims=["city", "station"], batch_rows=400,
                    progress=False)
    assert len(report.fragments) == 3
    assert sorted(converted) == sorted(["city", "station", "temp"] * 3)
    assert len(ranked) == 3
    assert_reads_equal(str(tmp_path / "a"), table)


def test_row_dimension_when_no_dims(tmp_path):
    table = sample(300).select(["temp", "city", "rain"])
    pq.write_table(table, tmp_path / "s.parquet")
    ingest(tmp_path / "s.parquet", tmp_path / "a", batch_rows=100)
    got = tdbsql.query("SELECT * FROM array ORDER BY rowid", str(tmp_path / "a"))
    assert got.column("rowid").to_pylist() == list(range(300))
    assert got.select(table.column_names).equals(table)
    ingest(tmp_path / "s.parquet", tmp_path / "a", append=True)  # rows continue at 300
    got = tdbsql.query("SELECT * FROM array ORDER BY rowid", str(tmp_path / "a"))
    assert got.column("rowid").to_pylist() == list(range(600))


def test_dense_row_dimension(tmp_path):
    table = sample(250).select(["temp", "count"])
    pq.write_table(table, tmp_path / "s.parquet")
    ingest(tmp_path / "s.parquet", tmp_path / "a", sparse=False, batch_rows=100)
    with tiledb.open(str(tmp_path / "a")) as array:
        assert not array.schema.sparse
        data = array.multi_index[0:249]
    np.testing.assert_array_equal(data["temp"], table.column("temp").to_numpy())
    np.testing.assert_array_equal(data["count"], table.column("count").to_numpy())
    got = tdbsql.query("SELECT temp FROM array", str(tmp_path / "a"))
    assert got.column("temp").to_pylist() == table.column("temp").to_pylist()


def test_dense_rectangle_and_refusal(tmp_path):
    rows, cols = np.meshgrid(np.arange(5, 15), np.arange(3), indexing="ij")
    table = pa.table({"r": rows.ravel()[::-1].copy(), "c": cols.ravel()[::-1].copy(),
                      "v": np.arange(30, dtype=np.float64)})
    pq.write_table(table, tmp_path / "g.parquet")
    ingest(tmp_path / "g.parquet", tmp_path / "a", dims=["r", "c"], sparse=False)
    with tiledb.open(str(tmp_path / "a")) as array:
        got = array.multi_index[5:14, 0:2]["v"]
    expected = dict(zip(zip(table.column("r").to_pylist(), table.column("c").to_pylist()),
                        table.column("v").to_pylist()))
    assert [expected[(r, c)] for r in range(5, 15) for c in range(3)] == list(got.ravel())
    holey = table.slice(1)
    pq.write_table(holey, tmp_path / "h.parquet")
    with pytest.raises(IngestError, match="do not fill the rectangle"):
        ingest(tmp_path / "h.parquet", tmp_path / "b", dims=["r", "c"], sparse=False)
    assert not os.path.exists(tmp_path / "b")


# --- types ---------------------------------------------------------------------------------------


def test_decimals_round_correctly_and_string_views(tmp_path):
    values = [decimal.Decimal(f"{i}.{i % 100:02d}") for i in range(1, 400)] + [None]
    table = pa.table({"k": pa.array(range(400), pa.int64()),
                      "price": pa.array(values, pa.decimal128(15, 2)),
                      "tag": pa.array([f"t{i % 7}" for i in range(400)]).cast(pa.string_view()),
                      "cat": pa.array([f"c{i % 3}" for i in range(400)]).dictionary_encode()})
    pq.write_table(table, tmp_path / "d.parquet")
    ingest(tmp_path / "d.parquet", tmp_path / "a", dims="k")
    got = tdbsql.query("SELECT * FROM array ORDER BY k", str(tmp_path / "a"))
    assert got.column("price").to_pylist() == [None if v is None else float(str(v))
                                               for v in values]
    assert got.column("tag").to_pylist() == [f"t{i % 7}" for i in range(400)]
    assert got.column("cat").to_pylist() == [f"c{i % 3}" for i in range(400)]


def test_string_dimension_and_filters_and_timestamp(tmp_path):
    table = sample(300)
    pq.write_table(table, tmp_path / "s.parquet")
    ingest(tmp_path / "s.parquet", tmp_path / "a", dims=["city", "station"], timestamp=1234,
           filters={"*": "bitshuffle,lz4:2", "temp": "none"}, capacity=50)
    assert_reads_equal(str(tmp_path / "a"), table)
    with tiledb.open(str(tmp_path / "a")) as array:
        schema = array.schema
        assert schema.capacity == 50
        assert schema.domain.dim("city").dtype == np.bytes_
        assert len(schema.attr("temp").filters) == 0
        assert [type(f).__name__ for f in schema.attr("count").filters] == [
            "BitShuffleFilter", "LZ4Filter"]
        assert schema.attr("count").filters[1].level == 2
    assert tiledb.array_fragments(str(tmp_path / "a"))[0].timestamp_range == (1234, 1234)


def test_encrypted_ingest(tmp_path):
    key = "0123456789abcdeF0123456789abcdeF"
    table = sample(100)
    pq.write_table(table, tmp_path / "s.parquet")
    ingest(tmp_path / "s.parquet", tmp_path / "a", dims=["station"], key=key)
    assert_reads_equal(str(tmp_path / "a"), table, key=key)
    with pytest.raises(tdbsql.EncryptionKeyError):
        tdbsql.query("SELECT * FROM array", str(tmp_path / "a"))


# --- append ---------------------------------------------------------------------------------------


def test_append_adds_fragments(tmp_path):
    columns = ["station", "day", "temp", "rain", "city", "flag", "count"]
    first, second = sample(300, seed=1).select(columns), sample(200, seed=2).select(columns)
    pq.write_table(first, tmp_path / "1.parquet")
    pacsv.write_csv(second, tmp_path / "2.csv")  # station reads back as int64: cast on append
    report = ingest(tmp_path / "1.parquet", tmp_path / "a",
                    dims={"station": (0, 100), "day": ("2023-01-01", "2025-12-31")})
    again = ingest(tmp_path / "2.csv", tmp_path / "a", append=True, timestamp=report.timestamp + 1)
    assert not again.created and again.rows == 200
    assert len(tiledb.array_fragments(str(tmp_path / "a"))) == 2
    assert_reads_equal(str(tmp_path / "a"), pa.concat_tables([first, second]))


# --- bad input: one clear error, nothing written ------------------------------------------------


@pytest.fixture
def parquet_source(tmp_path):
    table = sample(100)
    pq.write_table(table, tmp_path / "s.parquet")
    return tmp_path / "s.parquet"


def test_missing_source(tmp_path):
    with pytest.raises(tdbsql.ArrayNotFoundError, match="does not exist"):
        ingest(tmp_path / "nope.parquet", tmp_path / "a")
    assert not os.path.exists(tmp_path / "a")


def test_unknown_dim_column(tmp_path, parquet_source):
    with pytest.raises(IngestError, match="'nope' is not in the source"):
        ingest(parquet_source, tmp_path / "a", dims=["station", "nope"])
    assert not os.path.exists(tmp_path / "a")


def test_nulls_in_dimension(tmp_path):
    table = pa.table({"d": pa.array([1, None, 3]), "v": [1.0, 2.0, 3.0]})
    for name, write in (("n.parquet", pq.write_table), ("n.csv", pacsv.write_csv)):
        write(table, tmp_path / name)
        with pytest.raises(IngestError, match="'d' holds 1 NULL"):
            ingest(tmp_path / name, tmp_path / "a", dims="d")
        assert not os.path.exists(tmp_path / "a")
    with ipc.new_file(tmp_path / "n.arrow", table.schema) as w:
        w.write_table(table)
    with pytest.raises(IngestError, match="'d' holds 1 NULL"):
        ingest(tmp_path / "n.arrow", tmp_path / "a", dims="d")


@pytest.mark.parametrize("block", [1 << 20, 64])
def test_a_ragged_csv_row_names_the_file_and_row(tmp_path, monkeypatch, block):
    """A row with too few fields, in the first block (read when the file is opened) or a
    later one: an error naming the file and the row, no array left behind."""
    from tdbsql.ingestion import sources

    monkeypatch.setattr(sources, "CSV_BLOCK_BYTES", block)
    lines = ["k,v,w"] + [f"{i},{i},x" for i in range(20)] + ["20,y"]
    (tmp_path / "r.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(tdbsql.Error, match=r"r\.csv: CSV parse error: Expected 3 columns, got 2: "
                                           r"20,y"):
        ingest(tmp_path / "r.csv", tmp_path / "a", dims="k")
    assert not os.path.exists(tmp_path / "a")


def test_mixed_types_in_csv(tmp_path, monkeypatch):
    from tdbsql.ingestion import sources

    monkeypatch.setattr(sources, "CSV_BLOCK_BYTES", 256)  # a later block disagrees
    lines = ["k,v"] + [f"{i},{i}" for i in range(100)] + ["100,oops"]
    (tmp_path / "m.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(tdbsql.Error, match="column 'v' has mixed types.*'oops'"):
        ingest(tmp_path / "m.csv", tmp_path / "a", dims="k")
    assert not os.path.exists(tmp_path / "a")
    # integers, then decimals: a float column, not an error
    lines = ["k,v"] + [f"{i},{i}" for i in range(100)] + ["100,2.5"]
    (tmp_path / "f.csv").write_text("\n".join(lines) + "\n")
    ingest(tmp_path / "f.csv", tmp_path / "a", dims="k")
    got = tdbsql.query("SELECT v FROM array WHERE k = 100", str(tmp_path / "a"))
    assert got.column("v").to_pylist() == [2.5]


def test_existing_array_needs_append(tmp_path, parquet_source):
    ingest(parquet_source, tmp_path / "a", dims="station")
    before = sorted(os.listdir(tmp_path / "a" / "__fragments"))
    with pytest.raises(IngestError, match="already exists; pass --append"):
        ingest(parquet_source, tmp_path / "a", dims="station")
    assert sorted(os.listdir(tmp_path / "a" / "__fragments")) == before
    with pytest.raises(tdbsql.ArrayNotFoundError, match="drop --append"):
        ingest(parquet_source, tmp_path / "b", append=True)


def test_schema_mismatch_on_append(tmp_path, parquet_source):
    ingest(parquet_source, tmp_path / "a", dims="station")
    before = sorted(os.listdir(tmp_path / "a" / "__fragments"))
    cases = [
        (pa.table({"station": pa.array([1], pa.int32()), "temp": [1.0]}), "missing column"),
        (sample(10).append_column("extra", pa.array(range(10))), "not in the array"),
        (sample(10).set_column(2, "temp", pa.array([str(i) for i in range(10)])),
         "'temp' is string in the source but FLOAT64"),
        (sample(10).set_column(0, "station", pa.array(range(1000, 1010), pa.int32())),
         "outside the array's domain"),
        (sample(10).set_column(2, "temp", pa.array([None] * 10, pa.float64())),
         "'temp' holds 10 NULL value"),
    ]
    for table, message in cases:
        pq.write_table(table, tmp_path / "x.parquet")
        with pytest.raises(IngestError, match=message):
            ingest(tmp_path / "x.parquet", tmp_path / "a", append=True)
        assert sorted(os.listdir(tmp_path / "a" / "__fragments")) == before


def test_failure_midway_removes_written_fragments(tmp_path):
    """A NaN in a float dimension of the third batch: the first two fragments are removed."""
    values = np.arange(1000, dtype=np.float64)
    values[850] = np.nan
    pq.write_table(pa.table({"x": values, "v": np.arange(1000)}), tmp_path / "nan.parquet",
                   row_group_size=100)
    pq.write_table(pa.table({"x": np.arange(10.0), "v": np.arange(10)}), tmp_path / "ok.parquet")
    ingest(tmp_path / "ok.parquet", tmp_path / "a", dims={"x": (0, 5000)})
    before = sorted(os.listdir(tmp_path / "a" / "__fragments"))
    with pytest.raises(IngestError, match="NaN"):
        ingest(tmp_path / "nan.parquet", tmp_path / "a", append=True, batch_rows=300)
    assert sorted(os.listdir(tmp_path / "a" / "__fragments")) == before
    assert sorted(os.listdir(tmp_path / "a" / "__commits")) == [f"{n}.wrt" for n in before]
    with pytest.raises(IngestError, match="NaN"):
        ingest(tmp_path / "nan.parquet", tmp_path / "b", dims={"x": (0, 5000)}, batch_rows=300)
    assert not os.path.exists(tmp_path / "b")


def test_no_duplicates_ingest_refuses_a_coordinate_in_two_batches(tmp_path):
    """The batches of one ingest share a timestamp, so a coordinate in two of them has no
    newest write (tiledb and tdbsql read different cells): refused as within one batch, and
    nothing is left; -0.0 and 0.0 are two coordinates, as in TileDB."""
    table = pa.table({"k": [1, 2, 3, 1], "f": [0.0, 0.5, -0.0, 2.0], "v": [10, 20, 30, 40]})
    for batch_rows in (4, 2):
        with pytest.raises(tdbsql.DataError, match=r"duplicate coordinates \(1\)"):
            ingest(table, tmp_path / f"k{batch_rows}", dims=["k"], allows_duplicates=False,
                   batch_rows=batch_rows)
        assert not os.path.exists(tmp_path / f"k{batch_rows}")
    ingest(table, tmp_path / "f", dims=["f"], allows_duplicates=False, batch_rows=1)
    with tiledb.open(str(tmp_path / "f")) as A:
        assert sorted(A[:]["v"].tolist()) == [10, 20, 30, 40]
    # a float coordinate is named by its value (it was its bit pattern, 4602678819172646912)
    floats = pa.table({"k": [1, 2, 1], "f": [0.5, 1.5, 0.5], "v": [1, 2, 3]})
    with pytest.raises(tdbsql.DataError, match=r"duplicate coordinates \(1, 0\.5\)"):
        ingest(floats, tmp_path / "kf", dims=["k", "f"], allows_duplicates=False, batch_rows=1)
    ingest(table, tmp_path / "dups", dims=["k"], batch_rows=2)  # duplicates allowed: kept
    assert tdbsql.query("SELECT count(*) AS n FROM array", str(tmp_path / "dups")).to_pylist() \
        == [{"n": 4}]


def test_unsupported_column_type(tmp_path):
    table = pa.table({"k": [1, 2], "s": pa.array([{"a": 1}, {"a": 2}])})
    pq.write_table(table, tmp_path / "s.parquet")
    with pytest.raises(IngestError, match="column 's' has type struct"):
        ingest(tmp_path / "s.parquet", tmp_path / "a", dims="k")
    assert not os.path.exists(tmp_path / "a")


def test_in_memory_table_source(tmp_path):
    table = sample(50)
    ingest(table, tmp_path / "a", dims=["station", "day"])
    assert_reads_equal(str(tmp_path / "a"), table)


def test_in_memory_sources_read_as_write_reads_them(tmp_path):
    """A DataFrame (named index kept, NaN a value), a RecordBatch and a dict of numpy arrays
    ingest to the same cells ``tdbsql.write`` stores for them."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"k": np.arange(6, dtype=np.int64),
                          "v": [0.5, np.nan, 2.0, None, 4.0, 5.5],
                          "s": ["a", None, "c", "d", "é", "f"]}).set_index("k")
    ingest(frame, tmp_path / "df", dims="k")
    got = tdbsql.query("SELECT k, v, s FROM array ORDER BY k", str(tmp_path / "df"))
    assert got.column("k").to_pylist() == list(range(6))
    assert got.column("s").to_pylist() == ["a", None, "c", "d", "é", "f"]
    v = got.column("v").to_pylist()
    assert [x for i, x in enumerate(v) if i not in (1, 3)] == [0.5, 2.0, 4.0, 5.5]
    assert math.isnan(v[1]) and math.isnan(v[3])  # NaN is a value, as tdbsql.write stores it
    ingest({"x": np.arange(4, dtype=np.uint16), "y": np.array(["p", "q", "r", "s"])},
           tmp_path / "dict")
    got = tdbsql.query("SELECT x, y FROM array ORDER BY x", str(tmp_path / "dict"))
    assert got.column("y").to_pylist() == ["p", "q", "r", "s"]
    assert got.column("x").type == pa.uint16()
    batch = pa.record_batch({"k": pa.array([3, 1, 2], pa.int32()), "w": [1.0, 2.0, 3.0]})
    ingest(batch, tmp_path / "batch", dims="k")
    assert_reads_equal(str(tmp_path / "batch"), pa.Table.from_batches([batch]))
    with pytest.raises(TypeError, match="cannot write int"):
        ingest(42, tmp_path / "bad")


def test_progress_callback(tmp_path, parquet_source):
    seen = []
    ingest(parquet_source, tmp_path / "a", dims="station", batch_rows=30,
           progress=lambda done, total: seen.append((done, total)))
    assert seen == [(30, 100), (60, 100), (90, 100), (100, 100)]


def test_date_domain_given_as_text(tmp_path, parquet_source):
    ingest(parquet_source, tmp_path / "a", dims={"day": ("2023-12-01", "2024-12-31"),
                                                  "station": (0, 1000)}, tile=[7, 100])
    schema = tdbsql.open(str(tmp_path / "a")).schema
    epoch = datetime.date(1970, 1, 1)
    assert schema.dimension("day").domain == ((datetime.date(2023, 12, 1) - epoch).days,
                                              (datetime.date(2024, 12, 31) - epoch).days)
    assert schema.dimension("day").tile_extent == 7
    assert schema.dimension("station").tile_extent == 100


def test_progress_line_only_on_a_terminal(tmp_path, parquet_source, monkeypatch):
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    for stream, expect_line in ((Terminal(), True), (io.StringIO(), False)):
        monkeypatch.setattr(sys, "stderr", stream)
        target = tmp_path / ("tty" if expect_line else "pipe")
        ingest(parquet_source, target, dims="station", batch_rows=50)
        text = stream.getvalue()
        assert ("\ringest: 100 / 100 (100%) rows" in text) == expect_line
        assert (text == "") != expect_line


def test_parquet_folder_and_tsv(tmp_path):
    table = sample(120)
    os.mkdir(tmp_path / "parts")
    for i in range(3):
        pq.write_table(table.slice(40 * i, 40), tmp_path / "parts" / f"p{i}.parquet")
    ingest(tmp_path / "parts", tmp_path / "a", dims="station")
    assert_reads_equal(str(tmp_path / "a"), table)
    plain = table.select(["station", "temp", "city"])
    pacsv.write_csv(plain, tmp_path / "t.tsv", pacsv.WriteOptions(delimiter="\t"))
    ingest(tmp_path / "t.tsv", tmp_path / "b", dims="station")
    assert_reads_equal(str(tmp_path / "b"), plain.cast(pa.schema(
        [("station", pa.int64()), ("temp", pa.float64()), ("city", pa.string())])))


def test_parquet_folder_with_mixed_types(tmp_path):
    os.mkdir(tmp_path / "parts")
    pq.write_table(pa.table({"k": [1, 2], "v": [1.5, 2.5]}), tmp_path / "parts" / "a.parquet")
    pq.write_table(pa.table({"k": [3, 4], "v": ["x", "y"]}), tmp_path / "parts" / "b.parquet")
    with pytest.raises(tdbsql.Error, match=r"b.parquet: column 'v' is string here but double"):
        ingest(tmp_path / "parts", tmp_path / "a", dims={"k": (0, 10)})
    assert not os.path.exists(tmp_path / "a")


def test_append_refuses_other_layout(tmp_path, parquet_source):
    ingest(parquet_source, tmp_path / "a", dims="station", capacity=100)
    with pytest.raises(IngestError, match="capacity 100, not 7"):
        ingest(parquet_source, tmp_path / "a", append=True, capacity=7)
    with pytest.raises(IngestError, match="tile extent"):
        ingest(parquet_source, tmp_path / "a", append=True, tile=3)
    with pytest.raises(IngestError, match=r"dimensions \['station'\], not \['day'\]"):
        ingest(parquet_source, tmp_path / "a", append=True, dims="day")


def test_filter_specs():
    from tdbsql import schema as sch
    from tdbsql.ingestion import parse_filters

    assert parse_filters("zstd:7").filters == (sch.Zstd(7),)
    assert parse_filters("doubledelta, bitwidth:128, gzip").filters == (
        sch.DoubleDelta(), sch.BitWidthReduction(128), sch.Gzip())
    assert parse_filters("none").filters == ()
    with pytest.raises(tdbsql.Error, match="unknown filter 'snappy'"):
        parse_filters("snappy")
    with pytest.raises(tdbsql.Error, match="takes no number"):
        parse_filters("rle:3")


def test_more_arrow_types(tmp_path):
    table = pa.table({
        "k": pa.array([1, 2, 3], pa.int64()),
        "t64": pa.array([1, 2, None], pa.time64("us")),
        "ts": pa.array([1, 2, 3], pa.timestamp("us", tz="Europe/Oslo")),
        "dur": pa.array([5, 6, 7], pa.duration("s")),
        "lst": pa.array([[1, 2], [3], []], pa.list_(pa.int32())),
        "fsl": pa.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], pa.list_(pa.float64(), 2)),
        "bin": pa.array([b"a", b"\x00\xff", b""]),
        "d64": pa.array([datetime.date(2020, 1, d) for d in (1, 2, 3)], pa.date64()),
    })
    pq.write_table(table, tmp_path / "t.parquet")
    with pytest.warns(IngestWarning, match="'dur' is a duration"):  # a count: see below
        ingest(tmp_path / "t.parquet", tmp_path / "a", dims="k")
    got = tdbsql.query("SELECT * FROM array ORDER BY k", str(tmp_path / "a"))
    assert got.column("t64").to_pylist() == table.column("t64").to_pylist()
    assert got.column("ts").type == pa.timestamp("us")  # UTC values, zone dropped (see below)
    assert got.column("ts").cast(pa.int64()).to_pylist() == [1, 2, 3]
    assert got.column("dur").to_pylist() == [5, 6, 7]
    assert got.column("lst").to_pylist() == [[1, 2], [3], []]
    assert got.column("fsl").to_pylist() == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    assert got.column("bin").to_pylist() == [b"a", b"\x00\xff", b""]
    # Parquet keeps date64 as a date32 (DATETIME_DAY); an IPC file keeps it (DATETIME_MS)
    assert got.column("d64").to_pylist() == table.column("d64").to_pylist()
    with ipc.new_file(tmp_path / "t.arrow", table.schema) as w:
        w.write_table(table)
    with pytest.warns(IngestWarning, match="'dur' is a duration"):
        ingest(tmp_path / "t.arrow", tmp_path / "b", dims="k")
    assert tdbsql.open(str(tmp_path / "b")).schema.attribute("d64").datatype.name == "DATETIME_MS"
    with tiledb.open(str(tmp_path / "a")) as array:
        assert array.schema.attr("fsl").ncells == 2 and array.schema.attr("lst").isvar
        data = array[:]
    np.testing.assert_array_equal(data["d64"].astype("datetime64[D]"),
                                  np.array(["2020-01-01", "2020-01-02", "2020-01-03"],
                                           dtype="datetime64[D]"))


@pytest.mark.parametrize("order", ["col-major", "hilbert"])
def test_cell_orders(tmp_path, order):
    table = sample(400)
    pq.write_table(table, tmp_path / "s.parquet")
    ingest(tmp_path / "s.parquet", tmp_path / "a", dims=["station", "count"], cell_order=order,
           batch_rows=150, capacity=32)
    assert_reads_equal(str(tmp_path / "a"), table)


def test_dense_append_continues_rows(tmp_path):
    table = sample(120).select(["temp", "city"])
    pq.write_table(table, tmp_path / "s.parquet")
    ingest(tmp_path / "s.parquet", tmp_path / "a", sparse=False)
    ingest(tmp_path / "s.parquet", tmp_path / "a", append=True, batch_rows=50)
    with tiledb.open(str(tmp_path / "a")) as array:
        assert array.nonempty_domain() == ((0, 239),)
        data = array.multi_index[0:239]
    assert list(data["city"]) == table.column("city").to_pylist() * 2


def test_failure_keeps_an_empty_folder_the_user_made(tmp_path):
    values = np.arange(100, dtype=np.float64)
    values[70] = np.nan
    pq.write_table(pa.table({"x": values, "v": np.arange(100)}), tmp_path / "nan.parquet")
    os.mkdir(tmp_path / "a")
    with pytest.raises(IngestError, match="NaN"):
        ingest(tmp_path / "nan.parquet", tmp_path / "a", dims={"x": (0, 500)}, batch_rows=30)
    assert os.path.isdir(tmp_path / "a") and os.listdir(tmp_path / "a") == []


def test_public_api_ingest_stays_callable(tmp_path):
    """``tdbsql.ingest`` is a function (the package is ``tdbsql.ingestion``): importing the
    package (as the first call does) must not replace the function with a module."""
    table = pa.table({"k": [1, 2], "v": [1.0, 2.0]})
    tdbsql.ingest(table, tmp_path / "a", dims="k")
    importlib.import_module("tdbsql.ingestion.run")  # a later submodule import changes nothing

    assert callable(tdbsql.ingest)
    tdbsql.ingest(table, tmp_path / "b", dims="k")
    assert tdbsql.query("SELECT k FROM array", str(tmp_path / "b")).num_rows == 2


def test_dense_ingest_commits_every_batch_at_the_end(tmp_path, monkeypatch):
    """Dense batches, like sparse ones, stay invisible until the whole source is written."""
    import tdbsql.ingestion.run as run

    seen = []
    real = run.commit_fragment

    def spy(path, name):
        seen.append(sorted(n for n in os.listdir(os.path.join(path, "__commits"))
                           if n.endswith(".wrt")))
        real(path, name)

    monkeypatch.setattr(run, "commit_fragment", spy)
    table = sample(250).select(["temp", "count"])
    pq.write_table(table, tmp_path / "s.parquet")
    ingest(tmp_path / "s.parquet", tmp_path / "a", sparse=False, batch_rows=100)
    assert [len(s) for s in seen] == [0, 1, 2]
    got = tdbsql.query("SELECT temp FROM array", str(tmp_path / "a"))
    assert got.column("temp").to_pylist() == table.column("temp").to_pylist()


def test_zoned_timestamps_are_stored_as_utc_instants(tmp_path):
    """A TIMESTAMP WITH TIME ZONE column keeps its instants, in UTC: tiledb reads the UTC
    datetimes, tdbsql reads what DuckDB's timezone('UTC', ts) gives for the same source (its
    zone name is not kept), as an attribute and as a dimension, from Arrow and Parquet."""
    import duckdb

    oslo = datetime.timezone(datetime.timedelta(hours=1))
    summer = datetime.timezone(datetime.timedelta(hours=2))
    table = pa.table({
        "stamp": pa.array([datetime.datetime(2024, 1, 1, 0, 30, tzinfo=oslo),
                        datetime.datetime(2024, 7, 1, 1, 0, tzinfo=summer),
                        datetime.datetime(2024, 3, 31, 2, 59, 59, 999999, tzinfo=oslo)],
                       pa.timestamp("us", tz="Europe/Oslo")),
        "ny": pa.array([None, 0, -86_400_001], pa.timestamp("ms", tz="America/New_York")),
        "v": pa.array([1, 2, 3], pa.int32()),
    })
    utc = {"stamp": ["2023-12-31T23:30:00", "2024-06-30T23:00:00", "2024-03-31T01:59:59.999999"],
           "ny": [None, "1970-01-01T00:00:00", "1969-12-30T23:59:59.999"]}
    oracle = duckdb.connect()
    oracle.register("src", table)
    want = oracle.sql("SELECT timezone('UTC', stamp) AS stamp, timezone('UTC', ny) AS ny, v FROM src "
                      "ORDER BY v").fetchall()
    pq.write_table(table, tmp_path / "t.parquet")
    for source, name in ((table, "a"), (tmp_path / "t.parquet", "b")):
        path = str(tmp_path / name)
        ingest(source, path, dims="stamp")
        got = tdbsql.query("SELECT stamp, ny, v FROM array ORDER BY v", path)
        assert got.schema.field("stamp").type == pa.timestamp("us")
        assert got.schema.field("ny").type == pa.timestamp("ms")
        assert [tuple(r.values()) for r in got.to_pylist()] == want
        with tiledb.open(path) as array:
            assert array.schema.domain.dim("stamp").dtype == np.dtype("datetime64[us]")
            data = array.query(return_arrow=True).df[:].sort_by("v")
        for column, unit in (("stamp", "us"), ("ny", "ms")):
            assert data.column(column).to_pylist() == [
                None if t is None else np.datetime64(t, unit).astype(datetime.datetime)
                for t in utc[column]]


def test_durations_are_stored_as_counts_with_a_warning(tmp_path, capsys):
    """TileDB has no duration type (TIME_* are times of day to tdbsql's reader): a duration
    column becomes an INT64 count of its unit, and the ingest warns, naming the unit."""
    from tdbsql import cli

    table = pa.table({"k": pa.array([1, 2, 3], pa.int64()),
                      "dur": pa.array([5, -7, 3 * 86_400 * 10**6], pa.duration("us")),
                      "dd": pa.array([1, None, 2], pa.duration("s")).dictionary_encode()})
    with pytest.warns(IngestWarning) as caught:
        ingest(table, tmp_path / "a", dims="k")
    assert [str(w.message) for w in caught] == [
        "column 'dur' is a duration[us]: TileDB has no duration type (its TIME_* types are "
        "times of day), so it is stored as an INT64 count of microseconds",
        "column 'dd' is a duration[s]: TileDB has no duration type (its TIME_* types are "
        "times of day), so it is stored as an INT64 count of seconds"]
    with tiledb.open(str(tmp_path / "a")) as array:
        assert array.schema.attr("dur").dtype == np.dtype("int64")
        data = array.query(return_arrow=True).df[:].sort_by("k")
    assert data.column("dur").to_pylist() == [5, -7, 259_200_000_000]
    assert data.column("dd").to_pylist() == [1, None, 2]
    pq.write_table(table, tmp_path / "t.parquet")
    assert cli.main(["ingest", str(tmp_path / "t.parquet"), str(tmp_path / "b"), "--dims", "k",
                     "-q"]) == 0
    assert capsys.readouterr().err.splitlines() == [  # Parquet made dd a plain int64
        "tdbsql: warning: column 'dur' is a duration[us]: TileDB has no duration type (its "
        "TIME_* types are times of day), so it is stored as an INT64 count of microseconds"]
    assert tdbsql.query("SELECT dur FROM array ORDER BY k", str(tmp_path / "b")) \
        .column("dur").to_pylist() == [5, -7, 259_200_000_000]

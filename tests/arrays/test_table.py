"""``arrowmm.Table`` and ``arrowmm.ChunkedArray`` (issue 18, item 2), against pyarrow's answers."""
import datetime

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm import ArrowInvalid


def _table():
    n = 11
    return pa.table({
        "i": pa.array([None if k == 5 else k for k in range(n)], pa.int64()),
        "s": pa.array([f"s{k}" for k in range(n)]),
        "f": pa.array(np.arange(n, dtype=np.float64)),
        "ts": pa.array([datetime.datetime(2020, 1, 1 + k) for k in range(n)], pa.timestamp("us")),
        "l": pa.array([[k, k + 1] for k in range(n)]),
    })


@pytest.fixture
def paths(tmp_path):
    table = _table()
    path = str(tmp_path / "t.arrow")
    with pa.ipc.new_file(path, table.schema) as w:
        w.write_table(table, max_chunksize=4)
    return pa.ipc.open_file(path).read_all(), path  # (pyarrow's table of the same 3 batches)


def test_read_all_is_a_table(paths):
    want, path = paths
    with arrowmm.open_file(path) as reader:
        t = reader.read_all()
    assert isinstance(t, arrowmm.Table)
    assert (t.num_rows, t.num_columns, len(t), t.shape) == (11, 5, 11, (11, 5))
    assert t.schema.names == want.schema.names == t.column_names
    assert [b.num_rows for b in t.to_batches()] == [4, 4, 3]
    assert t.to_pydict() == want.to_pydict()
    assert t.to_pylist() == want.to_pylist()
    assert not hasattr(t, "__iter__")  # as pyarrow's Table: not iterable over batches
    with arrowmm.open_stream(path) as reader:
        assert reader.read_all().to_pydict() == want.to_pydict()


def test_column_is_a_chunked_array(paths):
    want, path = paths
    t = arrowmm.open_file(path).read_all()
    for name in want.column_names:
        got, exp = t.column(name), want.column(name)
        assert isinstance(got, arrowmm.ChunkedArray)
        assert got.num_chunks == exp.num_chunks == 3
        assert len(got) == len(exp) and str(got.type) == str(exp.type)
        assert got.null_count == exp.null_count
        assert got.to_pylist() == exp.to_pylist()
        assert [len(c) for c in got.chunks] == [len(c) for c in exp.chunks]
    assert t.column(0).to_pylist() == t["i"].to_pylist()
    assert t.column(-1).to_pylist() == want.column(4).to_pylist()
    with pytest.raises(KeyError, match="nope"):
        t.column("nope")
    with pytest.raises(IndexError):
        t.column(7)


def test_chunked_to_numpy_zero_copy_for_one_chunk(paths):
    want, path = paths
    t = arrowmm.open_file(path).read_all()
    one = t.slice(0, 3).column("f")
    assert one.num_chunks == 1
    view = one.to_numpy(zero_copy_only=True)
    assert not view.flags.owndata and not view.flags.writeable
    assert view.tolist() == [0.0, 1.0, 2.0]
    many = t.column("f")
    with pytest.raises(ArrowInvalid, match="3 chunks"):
        many.to_numpy(zero_copy_only=True)
    np.testing.assert_array_equal(many.to_numpy(), want.column("f").to_numpy())
    np.testing.assert_array_equal(t.column("i").to_numpy(), want.column("i").to_numpy())
    np.testing.assert_array_equal(t.column("ts").to_numpy(), want.column("ts").to_numpy())
    empty = t.slice(11).column("f")
    assert empty.num_chunks == 0 and empty.to_numpy().shape == (0,) and empty.to_pylist() == []


def test_chunked_slice_index_and_equals(paths):
    want, path = paths
    c = arrowmm.open_file(path).read_all().column("s")
    for offset, length in [(0, 11), (3, 2), (3, 6), (10, 5), (11, 1), (2, 0)]:
        assert c.slice(offset, length).to_pylist() == want.column("s").slice(offset, length).to_pylist()
    assert c[5] == "s5" and c[-1] == "s10"
    with pytest.raises(IndexError):
        c[11]
    other = arrowmm.ChunkedArray([arrowmm.array([f"s{k}" for k in range(11)])])
    assert c.equals(other) and c == other
    assert not c.equals(c.slice(1))
    assert c.combine_chunks().to_pylist() == want.column("s").to_pylist()
    with pytest.raises(ArrowInvalid, match="chunk 1 is int64"):
        arrowmm.ChunkedArray([arrowmm.array(["a"]), arrowmm.array([1])])


@pytest.mark.parametrize("offset,length", [(0, None), (2, 5), (4, 4), (5, 100), (11, 2), (0, 0)])
def test_slice_and_select_match_pyarrow(paths, offset, length):
    want, path = paths
    t = arrowmm.open_file(path).read_all()
    got = t.slice(offset, length)
    exp = want.slice(offset, length) if length is not None else want.slice(offset)
    assert got.num_rows == exp.num_rows and got.to_pydict() == exp.to_pydict()
    sel = got.select(["l", "i"])
    assert sel.schema.names == ["l", "i"]
    assert sel.to_pydict() == exp.select(["l", "i"]).to_pydict()
    assert got.select([1]).to_pydict() == exp.select([1]).to_pydict()


def test_select_decodes_nothing_until_touched(paths):
    _, path = paths
    with arrowmm.open_file(path) as reader:
        t = reader.read_all().select(["s"])
        assert reader.stats.columns_loaded == 0
        t.column("s").to_pylist()
        assert reader.stats.columns_loaded == 3  # one column of each of the 3 batches
    with pytest.raises(KeyError):
        t.select(["i"])


def test_exports_zero_copy_to_pyarrow_polars_duckdb(paths):
    want, path = paths
    t = arrowmm.open_file(path).read_all()
    got = pa.table(t)
    assert got.equals(want)
    # the consumer's buffers are the mapping's: the first values buffer of column f is the
    # same address as the arrowmm view of it
    f0 = got.column("f").chunk(0).buffers()[1].address
    assert f0 == t.column("f").chunk(0).to_numpy().__array_interface__["data"][0]
    pl = pytest.importorskip("polars")
    assert pl.DataFrame(t).to_dict(as_series=False) == pl.from_arrow(want).to_dict(as_series=False)
    duckdb = pytest.importorskip("duckdb")
    assert duckdb.sql("select sum(f), count(i) from t").fetchall() == [(55.0, 10)]
    assert pa.table(t.select(["s"]).slice(3, 4)).equals(want.select(["s"]).slice(3, 4))


def test_to_pandas_matches_pyarrow(paths):
    want, path = paths
    t = arrowmm.open_file(path).read_all()
    assert t.to_pandas().equals(want.to_pandas())
    assert t.slice(11).to_pandas().shape == (0, 5)
    assert t.column("s").to_pandas().tolist() == want.column("s").to_pandas().tolist()


def test_equals_ignores_chunking(paths):
    want, path = paths
    a = arrowmm.open_file(path).read_all()
    b = arrowmm.Table.from_batches([arrowmm.record_batch(want.combine_chunks().to_batches()[0])])
    assert b.num_rows == 11 and b.to_batches()[0].num_rows == 11
    assert a.equals(b) and a == b
    assert not a.equals(b.slice(1)) and a != b.slice(0, 10)
    assert not a.equals(b.select(["s", "i", "f", "ts", "l"]))
    changed = pa.table({**{n: want.column(n) for n in want.column_names},
                        "f": pa.array(np.arange(11, dtype=np.float64) + 1)})
    assert not a.equals(arrowmm.Table.from_batches(
        [arrowmm.record_batch(b) for b in changed.to_batches()]))


def test_table_checks_its_batches():
    b = arrowmm.record_batch({"x": [1]})
    with pytest.raises(ArrowInvalid, match="batch 1 has schema"):
        arrowmm.Table(b.schema, [b, arrowmm.record_batch({"y": [1]})])
    with pytest.raises(ArrowInvalid, match="needs a schema"):
        arrowmm.Table.from_batches([])
    empty = arrowmm.Table(b.schema, [])
    assert empty.num_rows == 0 and empty.to_pydict() == {"x": []} and pa.table(empty).num_rows == 0


def test_chunked_array_exports_an_array_stream(paths):
    want, path = paths
    t = arrowmm.open_file(path).read_all()
    for name in want.column_names:
        got = pa.chunked_array(t.column(name))
        assert got.type == want.column(name).type and got.num_chunks == 3
        assert got.to_pylist() == want.column(name).to_pylist()
    f = pa.chunked_array(t.column("f"))
    assert f.chunk(1).buffers()[1].address == \
        t.column("f").chunk(1).to_numpy().__array_interface__["data"][0]  # zero-copy
    empty = pa.chunked_array(t.slice(11).column("s"))
    assert empty.type == pa.string() and len(empty) == 0
    pl = pytest.importorskip("polars")
    assert pl.Series(t.column("i")).to_list() == want.column("i").to_pylist()


def test_a_negative_slice_length_is_an_error():
    """pyarrow raises for an array (and builds an invalid batch); arrowmm gave an empty slice."""
    arr = arrowmm.array([1, 2, 3])
    with pytest.raises(ValueError):
        pa.array([1, 2, 3]).slice(2, -1)
    with pytest.raises(ArrowInvalid, match="slice length must be >= 0, got -1"):
        arr.slice(2, -1)
    with pytest.raises(ArrowInvalid, match="slice length must be >= 0"):
        arrowmm.record_batch({"a": arr}).slice(1, -1)
    assert arr.slice(2, 5).to_pylist() == [3] and arr.slice(5).to_pylist() == []

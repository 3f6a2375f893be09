"""pyarrow habits that arrowmm refused (review s45 #4, E4), each against pyarrow's answer on
the same data: pyarrow scalars and arrays as filter values, a pyarrow ChunkedArray as a mask,
a pyarrow Expression given to ``filter`` (a plain error), and ``filter`` / ``take`` /
``sort_indices`` / ``drop_null`` over an arrowmm ChunkedArray."""
from __future__ import annotations

import datetime

import pytest

import arrowmm

from tests.support.helpers import ipc_bytes

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")


@pytest.fixture
def two_chunks():
    """pyarrow's table of two batches and arrowmm's reading of it."""
    table = pa.table({"x": pa.chunked_array([[3, 1, None], [2, 5]]),
                      "t": pa.chunked_array([[datetime.datetime(2020, 1, d) for d in (1, 2, 3)],
                                             [None, datetime.datetime(2020, 1, 5)]],
                                            pa.timestamp("us"))})
    return table, arrowmm.open_file(ipc_bytes(table.to_batches())).read_all()


def _x(table):
    return table.column("x").to_pylist()


@pytest.mark.parametrize("make", [
    lambda f: f("x") == pa.scalar(2), lambda f: f("x") > pa.scalar(1, pa.int8()),
    lambda f: f("x").isin(pa.array([1, 5])), lambda f: f("x").isin([pa.scalar(3), None]),
    lambda f: f("x").isin(pa.chunked_array([[1], [2]])),
    lambda f: f("t") < pa.scalar(datetime.datetime(2020, 1, 3), pa.timestamp("us")),
    lambda f: f("x") == pa.scalar(None, pa.int64()),
], ids=["== scalar", "> int8 scalar", "isin array", "isin scalars", "isin chunked",
        "timestamp scalar", "null scalar"])
def test_pyarrow_scalars_and_arrays_are_filter_values(two_chunks, make):
    table, mt = two_chunks
    assert _x(mt.filter(make(arrowmm.field))) == _x(table.filter(make(pc.field)))


def test_pyarrow_scalars_in_dataset_tuples(two_chunks, tmp_path):
    table, _ = two_chunks
    arrowmm.write_file(str(tmp_path / "a.arrow"), table)
    ds = arrowmm.dataset(str(tmp_path))
    assert _x(ds.to_table(filter=[("x", ">=", pa.scalar(2))])) == \
        _x(table.filter(pc.field("x") >= 2)) == [3, 2, 5]
    assert _x(ds.to_table(filter=[("x", "in", pa.array([1, 5]))])) == [1, 5]


def test_a_pyarrow_chunked_mask_filters_a_table_and_a_batch(two_chunks):
    table, mt = two_chunks
    mask = pc.greater(table["x"], 1)  # (a pyarrow ChunkedArray, the habit)
    assert _x(mt.filter(mask)) == _x(table.filter(mask)) == [3, 2, 5]
    rechunked = pa.chunked_array([mask.combine_chunks().slice(0, 1),
                                  mask.combine_chunks().slice(1)])  # (other chunk bounds)
    assert _x(arrowmm.compute.filter(mt, rechunked)) == [3, 2, 5]
    batch = mt.to_batches()[0]
    assert batch.filter(pa.chunked_array([[True], [False, True]])).column("x").to_pylist() == \
        [3, None]


def test_a_pyarrow_expression_given_to_filter_says_so(two_chunks):
    _, mt = two_chunks
    for run in (mt.filter, mt.to_batches()[0].filter,
                lambda e: arrowmm.compute.filter(mt, e),
                lambda e: arrowmm.compute.filter(mt.column("x").chunks[0], e)):
        with pytest.raises(arrowmm.ArrowInvalid, match=r"pyarrow\.compute\.Expression.*arrowmm\.field"):
            run(pc.field("x") > 1)


def test_compute_over_a_chunked_array_as_pyarrow(two_chunks):
    table, mt = two_chunks
    column, expect = mt.column("x"), table["x"]
    assert arrowmm.compute.sort_indices(column).to_pylist() == \
        pc.sort_indices(expect).to_pylist()
    assert arrowmm.compute.take(column, [4, 0, None]).to_pylist() == \
        pc.take(expect, pa.array([4, 0, None])).to_pylist()
    mask = [True, False, True, False, True]
    assert arrowmm.compute.filter(column, mask).to_pylist() == \
        pc.filter(expect, mask).to_pylist()
    assert isinstance(arrowmm.compute.filter(column, mask), arrowmm.ChunkedArray)
    assert column.filter(pc.greater(expect, 1)).to_pylist() == \
        expect.filter(pc.greater(expect, 1)).to_pylist()
    assert column.take([3, 1]).to_pylist() == expect.take([3, 1]).to_pylist()
    assert column.drop_null().to_pylist() == expect.drop_null().to_pylist()
    with pytest.raises(arrowmm.ArrowInvalid, match="not an Expression"):
        arrowmm.compute.filter(column, arrowmm.field("x") > 1)
    with pytest.raises(arrowmm.ArrowInvalid, match="5 rows"):
        column.filter([True])


def test_compute_over_a_chunked_array_of_no_chunks():
    empty = arrowmm.ChunkedArray([], arrowmm.int64())
    assert arrowmm.compute.sort_indices(empty).to_pylist() == []
    assert arrowmm.compute.take(empty, []).to_pylist() == []
    assert arrowmm.compute.filter(empty, []).to_pylist() == []
    with pytest.raises(IndexError):
        empty.take([0])

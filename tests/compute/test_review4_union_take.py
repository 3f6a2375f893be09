"""take with a null index into a union column (review s45 #4, E3): pyarrow answers with a
slot of the first child holding a null (a union has no bitmap of its own); arrowmm raised."""
from __future__ import annotations

import pytest

import arrowmm

from tests.support.helpers import column_read_back

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")

UNIONS = {
    "sparse": pa.UnionArray.from_sparse(pa.array([0, 1, 0, 1], pa.int8()),
                                        [pa.array([1, 2, 3, 4]), pa.array(["a", "b", "c", "d"])]),
    "dense": pa.UnionArray.from_dense(pa.array([0, 1, 0, 1], pa.int8()),
                                      pa.array([0, 0, 1, 1], pa.int32()),
                                      [pa.array([1, None]), pa.array(["a", "b"])]),
    "dense, empty first child": pa.UnionArray.from_dense(
        pa.array([1, 1], pa.int8()), pa.array([0, 1], pa.int32()),
        [pa.array([], pa.float64()), pa.array(["a", "b"])]),
    "sparse, codes 5 and 2": pa.UnionArray.from_sparse(
        pa.array([5, 2, 5], pa.int8()), [pa.array([1.5, 2.5, 3.5]), pa.array([True, False, None])],
        type_codes=[5, 2]),
    "sparse, null first child": pa.UnionArray.from_sparse(
        pa.array([1, 1, 0], pa.int8()), [pa.nulls(3), pa.array([7, 8, 9])]),
}


@pytest.mark.parametrize("name", UNIONS)
@pytest.mark.parametrize("offset", [0, 1])
def test_take_a_null_index_into_a_union_as_pyarrow(name, offset):
    union = UNIONS[name].slice(offset)
    indices = pa.array([len(union) - 1, None, 0, None], pa.int32())
    expect = pc.take(union, indices).to_pylist()
    mm, _ = column_read_back(UNIONS[name])
    mm = mm.slice(offset)
    for got in (arrowmm.compute.take(mm, indices), mm.take([len(union) - 1, None, 0, None])):
        assert got.to_pylist() == expect
        assert got.logical_validity().tolist() == pc.is_valid(pc.take(union, indices)).to_pylist()
        got.validate(full=True)
        assert pa.array(got).to_pylist() == expect  # (exported: pyarrow reads the same)

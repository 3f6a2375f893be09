"""list_view ``to_numpy`` / ``to_pandas`` rows as pyarrow's (review 22: F1, F2): they converted
the whole child, so a null under no view turned int64 rows into rounded float64, and sliced
it with Python slices, so a view outside the child was clamped into a row that never was."""
import numpy as np
import pyarrow as pa
import pytest

import arrowmm

BIG = 2**53 + 1  # (float64 holds 2**53 + 1 as 2**53)


def _views(offsets, sizes, child, mask=None):
    return pa.ListViewArray.from_arrays(pa.array(offsets, pa.int32()),
                                        pa.array(sizes, pa.int32()), child, mask=mask)


def _rows(converted):
    return [None if r is None else (r.dtype, repr(r.tolist())) for r in converted]  # (NaN too)


def _file_column(tmp_path, column):
    path = str(tmp_path / "c.arrow")
    with pa.ipc.new_file(path, pa.schema([("c", column.type)])) as w:
        w.write(pa.record_batch([column], ["c"]))
    return arrowmm.open_file(path).get_batch(0).column("c")


@pytest.mark.parametrize("views", [
    _views([0, 3], [1, 1], pa.array([BIG, None, None, 5], pa.int64())),  # nulls under no view
    _views([3, 0, 1], [1, 1, 2], pa.array([BIG, None, None, 5], pa.int64()),  # a null slot's
           mask=pa.array([False, False, True])),                          # view covers them
], ids=["nulls_outside_views", "nulls_under_a_null_view"])
def test_rows_hold_what_pyarrow_converts(views):
    got = arrowmm.array(views)
    assert _rows(got.to_numpy(zero_copy_only=False)) == \
        _rows(views.to_numpy(zero_copy_only=False))
    assert _rows(got.to_pandas()) == _rows(views.to_pandas())
    assert _rows(got.to_numpy(zero_copy_only=False))[1][0] == np.int64


def test_nested_list_views_keep_int64_rows(tmp_path):
    views = _views([0, 3], [1, 1], pa.array([BIG, None, None, 5], pa.int64()))
    column = _file_column(tmp_path, pa.StructArray.from_arrays([views], ["v"]))
    rows = column.to_pandas().tolist()
    assert [(r["v"].dtype, r["v"].tolist()) for r in rows] == \
        [(np.dtype(np.int64), [BIG]), (np.dtype(np.int64), [5])]


@pytest.mark.parametrize("offsets,sizes", [([0, 2], [1, 5]), ([0, -1], [1, 1])],
                         ids=["past_the_child", "negative_offset"])
@pytest.mark.parametrize("how", ["to_numpy", "to_pandas"])
def test_views_outside_the_child_are_refused(tmp_path, offsets, sizes, how):
    bad = pa.ListViewArray.from_buffers(
        pa.list_view(pa.int64()), 2,
        [None, pa.py_buffer(np.array(offsets, np.int32)), pa.py_buffer(np.array(sizes, np.int32))],
        children=[pa.array([1, None, 5], pa.int64())])
    column = _file_column(tmp_path, bad)
    with pytest.raises(arrowmm.ArrowInvalid, match=r"offset\[1\]"):
        column.to_numpy(zero_copy_only=False) if how == "to_numpy" else column.to_pandas()

"""A fixed-size list inside a list, struct, map or list view converts to one numpy array per
list, as pyarrow's ``to_numpy`` / ``to_pandas`` give it (review 22: F9): its own 2-D view was
used as its parent's elements, so a list's row was a 2-D array and a struct's field a Python
list (and the shape flipped to pyarrow's once a batch had a null list)."""
import numpy as np
import pyarrow as pa
import pytest

import arrowmm

PAIRS = pa.FixedSizeListArray.from_arrays(pa.array([1, 2, 3, 4, 5, 6]), 2)


def _shape(value):
    """``value`` with its containers and numpy arrays named: a 2-D array and a list of arrays
    print alike in tolist()."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, [_shape(v) for v in value])
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_shape(v) for v in value])
    return value


@pytest.mark.parametrize("column", [
    pa.ListArray.from_arrays(pa.array([0, 2, 3], pa.int32()), PAIRS),
    pa.StructArray.from_arrays([PAIRS], ["f"]),
    pa.MapArray.from_arrays(pa.array([0, 2, 3], pa.int32()), pa.array(["a", "b", "c"]), PAIRS),
    pa.ListViewArray.from_arrays(pa.array([1, 0], pa.int32()), pa.array([2, 1], pa.int32()),
                                 PAIRS),
], ids=["list", "struct", "map", "list_view"])
@pytest.mark.parametrize("how", ["to_numpy", "to_pandas"])
def test_nested_fixed_size_lists_convert_one_array_per_list(column, how):
    convert = {"to_numpy": lambda a: a.to_numpy(zero_copy_only=False),
               "to_pandas": lambda a: a.to_pandas()}[how]
    want, got = convert(column), convert(arrowmm.array(column))
    assert [_shape(v) for v in got] == [_shape(v) for v in want]

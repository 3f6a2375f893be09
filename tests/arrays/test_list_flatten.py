"""``flatten`` of list arrays gives what pyarrow's gives: the values of the lists that are not
null.  Before, a null list backed by values (legal, and what a filter or a C++ builder leaves)
kept them: ``[[1, 2], None, [5]]`` over ``[1, 2, 3, 4, 5]`` flattened to all five, so a sum of
the flattened values counted the null row's."""
from __future__ import annotations

import pyarrow as pa
import pytest

import arrowmm
from tests.support.helpers import column_read_back, int32_buffer, validity_bits

CHILD = pa.array([1, 2, 3, 4, 5], pa.int32())


def _null_list_backed_by_values(large: bool = False) -> pa.Array:
    """[[1, 2], None, [5]]: the null slot spans child values 3 and 4."""
    if large:
        offsets = pa.py_buffer(b"".join(v.to_bytes(8, "little") for v in (0, 2, 4, 5)))
        return pa.Array.from_buffers(pa.large_list(pa.int32()), 3, [validity_bits(1, 0, 1), offsets],
                                     null_count=1, children=[CHILD])
    return pa.Array.from_buffers(pa.list_(pa.int32()), 3, [validity_bits(1, 0, 1), int32_buffer(0, 2, 4, 5)],
                                 null_count=1, children=[CHILD])


def _list_view() -> pa.Array:
    """[[4, 5], None, [2]]: views out of order, the null slot's view non-empty."""
    return pa.Array.from_buffers(pa.list_view(pa.int32()), 3,
                                 [validity_bits(1, 0, 1), int32_buffer(3, 0, 1), int32_buffer(2, 2, 1)],
                                 null_count=1, children=[CHILD])


CASES = {
    "list_null_backed": lambda: _null_list_backed_by_values(),
    "large_list_null_backed": lambda: _null_list_backed_by_values(large=True),
    "list_sliced": lambda: pa.array([[1, 2], [3], None, [4, 5]]).slice(1, 3),
    "list_no_nulls": lambda: pa.array([[1], [], [2, 3]]),
    "fixed_size_list_null": lambda: pa.array([[1, 2], None, [5, 6]], pa.list_(pa.int32(), 2)),
    "fixed_size_list_sliced": lambda: pa.array([[1, 2], [3, 4], None], pa.list_(pa.int32(), 2)).slice(1),
    "list_view": _list_view,
    "list_view_no_nulls": lambda: pa.ListViewArray.from_arrays([2, 1, 0], [2, 2, 2], [1, 2, 3, 4]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_flatten_leaves_out_null_lists_as_pyarrow_does(case):
    arr = CASES[case]()
    arr.validate(full=True)
    col, _ = column_read_back(arr)
    assert col.flatten().to_pylist() == arr.flatten().to_pylist()


def test_flatten_is_zero_copy_when_no_null_list_holds_values():
    col, _ = column_read_back(pa.array([[1, 2], None, [3]], pa.list_(pa.int64())))
    flat = col.flatten()
    assert flat.to_pylist() == [1, 2, 3]
    assert flat.is_zero_copy


def test_recursive_flatten_reaches_the_values():
    arr = pa.array([[[1], None, [2, 3]], None, [[4]]], pa.list_(pa.list_(pa.int64())))
    col, _ = column_read_back(arr)
    assert col.flatten(recursive=True).to_pylist() == arr.flatten(recursive=True).to_pylist() == [1, 2, 3, 4]
    assert col.flatten().to_pylist() == arr.flatten().to_pylist()


def test_what_flatten_feeds_keeps_the_null_rows_values():
    """Writing, casting and converting a list array with a null list backed by values keep
    every row where it was (they use the values by position, not ``flatten``)."""
    arr = _null_list_backed_by_values()
    col, _ = column_read_back(arr)
    assert col.to_pylist() == [[1, 2], None, [5]]
    assert col.cast(arrowmm.large_list(arrowmm.int64())).to_pylist() == [[1, 2], None, [5]]
    back, _ = column_read_back(pa.array(arrowmm.concat_arrays([col, col])))
    assert back.to_pylist() == [[1, 2], None, [5]] * 2
    fsl, _ = column_read_back(pa.array([[1, 2], None, [5, 6]], pa.list_(pa.int32(), 2)))
    assert [list(r) if r is not None else None for r in fsl.to_numpy(zero_copy_only=False)] == \
        [[1, 2], None, [5, 6]]


def test_map_keys_and_items_cover_every_entry_as_pyarrow():
    """pyarrow's ``MapArray.keys`` / ``items`` keep a null map's entries: so do arrowmm's."""
    entries = pa.array([{"key": "a", "value": 1}, {"key": "b", "value": 2}, {"key": "c", "value": 3}],
                       pa.struct([pa.field("key", pa.string(), nullable=False), pa.field("value", pa.int64())]))
    m = pa.MapArray.from_arrays(pa.array([0, 1, 2, 3], pa.int32()), entries.field(0), entries.field(1),
                                mask=pa.array([False, True, False]))
    col, _ = column_read_back(m)
    assert col.keys.to_pylist() == m.keys.to_pylist() == ["a", "b", "c"]
    assert col.items.to_pylist() == m.items.to_pylist()


def test_flatten_refuses_offsets_out_of_order():
    """A list whose offsets go back: before, ``flatten`` cut the child from the first offset to
    the last and answered."""
    arr = pa.Array.from_buffers(pa.list_(pa.int32()), 3, [None, int32_buffer(0, 4, 2, 5)], children=[CHILD])
    with pytest.raises(pa.ArrowInvalid):
        arr.validate(full=True)
    col, _ = column_read_back(arr)
    with pytest.raises(arrowmm.ArrowInvalid, match="offset"):
        col.flatten()

"""Sorting a table or batch by a column whose type does not sort raises ``ArrowTypeError``, as
pyarrow's ``Table.sort_by`` and ``sort_indices(table)`` do (review 22: F5: it raised
``ArrowNotImplementedError``, which is what both raise for a bare array)."""
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import arrowmm
import arrowmm.compute

COLUMNS = [pa.array([[2], [1]], pa.list_(pa.int64())),
           pa.array([(1, 2, 3), (0, 0, 0)], pa.month_day_nano_interval()),
           pa.array([{"a": [1]}, {"a": [0]}], pa.struct([("a", pa.list_(pa.int8()))]))]


@pytest.mark.parametrize("column", COLUMNS, ids=lambda c: str(c.type))
def test_a_table_or_batch_sorted_by_an_unsortable_column_is_a_type_error(column):
    table = pa.table({"c": column, "i": pa.array([1, 2])})
    with pytest.raises(pa.ArrowTypeError):
        table.sort_by("c")
    ours = arrowmm.table(table)
    with pytest.raises(arrowmm.ArrowTypeError, match="column 'c"):
        ours.sort_by("c")
    with pytest.raises(arrowmm.ArrowTypeError, match="column 'c"):
        ours.to_batches()[0].sort_by([("c", "descending")])
    with pytest.raises(arrowmm.ArrowTypeError, match="column 'c"):
        arrowmm.compute.sort_indices(ours, [("c", "ascending")])
    with pytest.raises(arrowmm.ArrowNotImplementedError):  # (a bare array: as pyarrow's)
        arrowmm.compute.sort_indices(arrowmm.array(column))
    if not pa.types.is_struct(column.type):  # (pyarrow's struct array sort: ArrowInvalid)
        with pytest.raises(pa.ArrowNotImplementedError):
            pc.sort_indices(column)

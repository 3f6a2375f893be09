"""A table's and a batch's conversions to Python and pandas name the batch and column of the
damage they refuse, as their exports do (review 16: F5).

Before, they raised the array's own message ("dictionary index 50 out of range for a dictionary
of 3 values"), which named no column, and for a table of many small batches gave a row of the
gathered column ("string value[53]") instead of the batch's.  Each damage is built with
pyarrow's ``Array.from_buffers`` (its IPC writer does not validate).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from tests.support.helpers import ipc_bytes

N = 1000


def _dictionary_indices(bad_index: int) -> pa.Array:
    """N indices into ['a', 'b', 'c'], row 700's ``bad_index``."""
    indices = np.zeros(N, "<i4")
    indices[700] = bad_index
    return pa.DictionaryArray.from_buffers(pa.dictionary(pa.int32(), pa.string()), N,
                                           [None, pa.py_buffer(indices)], pa.array(["a", "b", "c"]))


def _ints_with_nulls(null_count: int) -> pa.Array:
    """N int64, the bitmap marking 3 slots null, the recorded count ``null_count``."""
    valid = np.ones(N, bool)
    valid[[5, 100, 900]] = False
    bits = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(pa.int64(), N, [bits, pa.py_buffer(np.arange(N, dtype="<i8"))],
                                 null_count=null_count)


#: (column maker, its argument for a good column, for a damaged one, the damage's message)
DAMAGES = {"dictionary_index": (_dictionary_indices, 2, 50, r"index\[700\]=50 out of range"),
           "null_count": (_ints_with_nulls, 3, 2, "null count 2 does not match")}


def _table(damage: str) -> arrowmm.Table:
    """Two batches of columns 'good' and 'badcol'; batch 1's 'badcol' is damaged."""
    make, good, bad, _ = DAMAGES[damage]
    batches = [pa.record_batch([pa.array(np.arange(N)), make(arg)], names=["good", "badcol"])
               for arg in (good, bad)]
    return arrowmm.open_file(ipc_bytes(batches)).read_all()


CONVERSIONS = {
    "to_pylist": lambda obj: obj.to_pylist(),
    "to_pandas": lambda obj: obj.to_pandas(),
    "to_pydict": lambda obj: obj.to_pydict(),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
@pytest.mark.parametrize("how", list(CONVERSIONS))
def test_table_conversions_name_the_damaged_batch_and_column(damage, how):
    table = _table(damage)
    with pytest.raises(arrowmm.ArrowInvalid,
                       match=rf"batch 1, column 1 \('badcol'\)\W.*{DAMAGES[damage][3]}"):
        CONVERSIONS[how](table)
    CONVERSIONS[how](table.select(["good"]))  # (the good column converts)


@pytest.mark.parametrize("damage", list(DAMAGES))
@pytest.mark.parametrize("how", list(CONVERSIONS))
def test_batch_conversions_name_the_damaged_column(damage, how):
    batch = _table(damage).to_batches()[1]
    with pytest.raises(arrowmm.ArrowInvalid,
                       match=rf"column 1 \('badcol'\)\W.*{DAMAGES[damage][3]}"):
        CONVERSIONS[how](batch)


def test_table_of_many_small_batches_names_the_batch_and_its_row():
    """20 batches of 10 strings (to_pandas gathers them into one column); batch 7's row 3 is
    not UTF-8.  Before: 'string value[73]', a row of the gathered column."""
    batches = []
    for i in range(20):
        data = bytearray(b"abcd" * 10)
        if i == 7:
            data[12] = 0xFF
        offsets = np.arange(11, dtype="<i4") * 4
        column = pa.Array.from_buffers(pa.string(), 10, [None, pa.py_buffer(offsets),
                                                         pa.py_buffer(bytes(data))])
        batches.append(pa.record_batch([column], names=["s"]))
    table = arrowmm.open_file(ipc_bytes(batches)).read_all()
    with pytest.raises(arrowmm.ArrowInvalid, match=r"batch 7, column 0 \('s'\)\W.*\[3\]"):
        table.to_pandas()

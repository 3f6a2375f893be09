"""Damaged run ends, dictionary indices and list-view sizes raise ``ArrowInvalid`` in
concatenation and the selections built on it, where they read as other values before
(review s44 #3: R0, R1, R3).

Each damage is built with pyarrow's ``Array.from_buffers`` (its IPC writer does not validate)
and pyarrow's ``validate(full=True)`` is shown to refuse it: the oracle of "damaged".
"""
from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm import compute as amc
from tests.support.helpers import column_read_back, int32_buffer, ipc_bytes, pyarrow_refuses, validity_bits


# -- R0: run ends that do not increase -----------------------------------------------------

def _ree_read_back(run_ends):
    """['a', 'a', None, 'c', 'c'] written with run ends 2, 3, 5, which are then replaced by
    ``run_ends`` in the file's bytes (pyarrow's writer cuts the run ends it writes at the
    array's end by a search that damaged ones mislead)."""
    ends = pa.array([2, 3, 5], pa.int32())
    data = ipc_bytes(pa.record_batch([pa.RunEndEncodedArray.from_arrays(ends, pa.array(["a", None, "c"]))],
                                     names=["c"]))
    written = struct.pack("<3i", 2, 3, 5)
    assert data.count(written) == 1
    data = data.replace(written, struct.pack("<3i", *run_ends))
    return arrowmm.open_file(data).get_batch(0).column("c"), pa.ipc.open_file(data).get_batch(0).column("c")


@pytest.mark.parametrize("op", ["take", "filter", "concat"])
@pytest.mark.parametrize("run_ends", [(2, 2130706435, 5), (18, 3, 5)], ids=["huge_middle", "first_past"])
def test_run_ends_not_increasing_are_refused_by_selections(run_ends, op):
    """Before: take gave [None, None, None, 'a', 'a'] or ['c', 'c', 'a', 'a', 'a'] (the seed
    reversed is ['c', 'c', None, 'a', 'a']), concat ['a', 'a', None, None, None] twice."""
    col, pa_col = _ree_read_back(run_ends)
    pyarrow_refuses(pa_col, "strictly greater than the previous run end")
    run = {"take": lambda: amc.take(col, [4, 3, 2, 1, 0]),
           "filter": lambda: amc.filter(col, np.array([0, 1, 0, 1, 1], bool)),
           "concat": lambda: arrowmm.concat_arrays([col, col])}[op]
    with pytest.raises(arrowmm.ArrowInvalid, match="run ends must strictly increase"):
        run()


# -- R1: a dictionary index past its own dictionary ----------------------------------------

def test_concat_refuses_a_dictionary_index_past_its_dictionary():
    """Index 2 of the 2-entry dictionary ['a', 'b']: before, concatenation shifted it by 2 into
    the next array's dictionary and it read 'x'."""
    indices = pa.Array.from_buffers(pa.int8(), 2, [None, pa.py_buffer(bytes([2, 0]))])
    bad = pa.DictionaryArray.from_arrays(indices, pa.array(["a", "b"]), safe=False)
    good = pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int8()), pa.array(["x", "y"]))
    pyarrow_refuses(bad, "out of bounds")
    data = ipc_bytes(pa.record_batch([bad, good], names=["bad", "good"]))
    batch = arrowmm.open_file(data).get_batch(0)
    with pytest.raises(arrowmm.ArrowInvalid, match=r"index|indices"):
        arrowmm.concat_arrays([batch.column("bad"), batch.column("good")])


# -- R3: a list-view slot with a negative size ---------------------------------------------

def _list_view_negative_size() -> pa.Array:
    """[[1, 2], None, [], [3, None], [4]] as written, slot 0's size made -2**31."""
    child = pa.array([1, 2, 3, None, 4], pa.int32())
    return pa.Array.from_buffers(pa.list_view(pa.int32()), 5,
                                 [validity_bits(1, 0, 1, 1, 1), int32_buffer(0, 0, 0, 2, 4),
                                  int32_buffer(-2 ** 31, 0, 0, 2, 1)],
                                 null_count=1, children=[child])


def test_list_view_negative_size_is_refused_by_to_pylist():
    """Before: [[], None, [], [3, None], [4]]."""
    col, pa_col = column_read_back(_list_view_negative_size())
    pyarrow_refuses(pa_col, "size for slot 0 out of bounds")
    with pytest.raises(arrowmm.ArrowInvalid, match=r"size\[0\]=-2147483648 < 0"):
        col.to_pylist()


def test_list_view_negative_size_is_refused_by_concat():
    """Before: the rows of to_pylist above twice, in an array that validated."""
    col, _ = column_read_back(_list_view_negative_size())
    with pytest.raises(arrowmm.ArrowInvalid, match=r"size\[0\]=-2147483648 < 0"):
        arrowmm.concat_arrays([col, col])


def test_list_view_negative_size_is_refused_by_an_is_valid_filter():
    """Before: [[], [], [3, None], [4]]."""
    data = ipc_bytes(pa.record_batch([_list_view_negative_size()], names=["lv"]))
    batch = arrowmm.open_file(data).get_batch(0)
    with pytest.raises(arrowmm.ArrowInvalid, match=r"size\[0\]=-2147483648 < 0"):
        amc.filter(batch, amc.field("lv").is_valid())

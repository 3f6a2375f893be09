"""Damaged message bodies of flat columns raise ``ArrowInvalid`` when converted, where they
read as other values before (review s44 #2, body fuzzing: F1, F3, F5c): an offset beside a
null or in an unused value, a validity bitmap that contradicts its null count, a string view
whose prefix or padding contradicts its value.

Each damage is built with pyarrow's ``Array.from_buffers`` (its IPC writer does not validate)
and pyarrow's ``validate(full=True)`` is shown to refuse it: the oracle of "damaged".
"""
from __future__ import annotations

import io
import struct

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import arrowmm
from tests.support.helpers import column_read_back, validity_bits
from arrowmm.arrays import base
from arrowmm.arrays.array import make_array
from arrowmm._core._region import as_view


def _damaged(arr: pa.Array, why: str):
    """arrowmm's column of ``arr``, once pyarrow's full validation has refused it for ``why``."""
    ours, theirs = column_read_back(arr)
    with pytest.raises(pa.ArrowInvalid, match=why):
        theirs.validate(full=True)
    return ours


def _offsets(dtype, *v) -> pa.Buffer:
    return pa.py_buffer(np.array(v, dtype=np.int64 if dtype in (pa.large_string(), pa.large_binary())
                                 else np.int32).tobytes())


def _every_conversion_raises(col, match):
    """``to_pylist``, ``to_numpy`` and ``to_pandas`` of ``col`` each raise ArrowInvalid."""
    for convert in (lambda: col.to_pylist(), lambda: col.to_numpy(zero_copy_only=False),
                    lambda: col.to_pandas()):
        with pytest.raises(arrowmm.ArrowInvalid, match=match):
            convert()


# -- F1: every offset is checked, a null slot's or an unused value's too ------------------------

@pytest.mark.parametrize("dtype", [pa.string(), pa.large_string(), pa.binary()], ids=str)
def test_offset_beside_a_null_slot(dtype):
    """['a', None, 'ccc'] whose offset[1] was damaged 1 -> 2 (offsets 0, 2, 1, 4): value 0
    (0..2) and value 2 (1..4) each fit the data, the null slot between them goes back, and
    value 0 read 'ac'."""
    arr = pa.Array.from_buffers(dtype, 3, [validity_bits(1, 0, 1), _offsets(dtype, 0, 2, 1, 4),
                                           pa.py_buffer(b"accc")], null_count=1)
    col = _damaged(arr, "non-monotonic offset")
    _every_conversion_raises(col, r"value\[1\] spans offset\[1\]=2 \.\. offset\[2\]=1")
    with pytest.raises(arrowmm.ArrowInvalid, match=r"offset\[1\]=2 \.\. offset\[2\]=1"):
        col.to_objects()  # (the deduplicating loop of to_pandas)


def _unused_dictionary_entry():
    # dictionary ['a', 'b', 'c'] with offset[1] damaged 1 -> 3 (offsets 0, 3, 2, 3): the
    # indices use entries 0 and 2, and entry 0 read 'abc'
    values = pa.Array.from_buffers(pa.string(), 3, [None, _offsets(pa.string(), 0, 3, 2, 3),
                                                    pa.py_buffer(b"abc")])
    return pa.DictionaryArray.from_arrays(pa.array([0, 2, 0], pa.int32()), values)


def _unused_sparse_union_slot():
    # sparse_union<int64, string>, type ids [0, 1, 0, 1]: the string child's unselected slot 2
    # goes back (offsets 0, 1, 2, 1, 3 over "bcd"), and row 3 read 'bc'
    strings = pa.Array.from_buffers(pa.string(), 4, [None, _offsets(pa.string(), 0, 1, 2, 1, 3),
                                                     pa.py_buffer(b"bcd")])
    return pa.UnionArray.from_sparse(pa.array([0, 1, 0, 1], pa.int8()),
                                     [pa.array([1, 2, 3, 4], pa.int64()), strings])


def _run_end_values():
    # run_end_encoded<int32, string>, values ['a', None, 'c'] whose null's end offset was
    # damaged (offsets 0, 1, 0, 2 over "ac"): the last run read 'ac'
    values = pa.Array.from_buffers(pa.string(), 3, [validity_bits(1, 0, 1), _offsets(pa.string(), 0, 1, 0, 2),
                                                    pa.py_buffer(b"ac")], null_count=1)
    return pa.Array.from_buffers(pa.run_end_encoded(pa.int32(), pa.string()), 5, [None],
                                 children=[pa.array([2, 3, 5], pa.int32()), values])


def _struct_child_under_a_null_row():
    # struct<s: string> [{'s': 'a'}, None, {'s': 'c'}], the child's offset[1] damaged 1 -> 2
    # (offsets 0, 2, 1, 2 over "ac"): the child slot under the null row goes back, row 0
    # read 'ac'
    child = pa.Array.from_buffers(pa.string(), 3, [None, _offsets(pa.string(), 0, 2, 1, 2),
                                                   pa.py_buffer(b"ac")])
    return pa.StructArray.from_arrays([child], ["s"], mask=pa.array([False, True, False]))


@pytest.mark.parametrize("make", [_unused_dictionary_entry, _unused_sparse_union_slot,
                                  _run_end_values, _struct_child_under_a_null_row],
                         ids=lambda f: f.__name__.strip("_"))
def test_offsets_no_slot_shows(make):
    """Offsets that go back where no row looks (an unused dictionary entry, an unselected union
    slot, a null run's value, a child slot under a null row): the bulk conversion saw it, and
    the fallback that converts only the used values (for values Python cannot hold) turned
    it back into values."""
    col = _damaged(make(), "non-monotonic offset")
    with pytest.raises(arrowmm.ArrowInvalid, match=r"offset\[\d\]=\d+ \.\. offset\[\d\]=\d+|offsets"):
        col.to_pylist()


def test_invalid_utf8_in_an_unused_dictionary_entry():
    """Invalid UTF-8 in a dictionary entry no index uses was hidden by the same fallback."""
    values = pa.Array.from_buffers(pa.string(), 3, [None, _offsets(pa.string(), 0, 1, 2, 3),
                                                    pa.py_buffer(b"a\xffc")])
    col = _damaged(pa.DictionaryArray.from_arrays(pa.array([0, 2], pa.int32()), values), "UTF8")
    with pytest.raises(arrowmm.ArrowInvalid, match="UTF-8"):
        col.to_pylist()


# -- F3: the validity bitmap against the recorded null count ----------------------------------

_ONE_NULL_FLIPPED = {  # (type, the data buffers after the bitmap): row 1 was the null
    "int32": (pa.int32(), [pa.py_buffer(struct.pack("<3i", 7, 0, 9))]),
    "float64": (pa.float64(), [pa.py_buffer(struct.pack("<3d", 7, 0, 9))]),
    "bool": (pa.bool_(), [validity_bits(1, 0, 1)]),
    "fixed_size_binary": (pa.binary(3), [pa.py_buffer(b"abc\x00\x00\x00def")]),
    "string": (pa.string(), [_offsets(pa.string(), 0, 1, 1, 2), pa.py_buffer(b"ac")]),
    "string_view": (pa.string_view(), [pa.py_buffer(struct.pack("<i12s", 1, b"a") + bytes(16)
                                                    + struct.pack("<i12s", 1, b"c"))]),
    "date32": (pa.date32(), [pa.py_buffer(struct.pack("<3i", 7, 0, 9))]),
}


@pytest.mark.parametrize("name", sorted(_ONE_NULL_FLIPPED))
def test_bitmap_contradicting_its_null_count(name):
    """The node says 1 null, the bitmap (its bit for row 1 flipped) none: the null read as its
    slot's bytes (0, b'\\x00\\x00\\x00', '', False).  Both counts are named."""
    dtype, rest = _ONE_NULL_FLIPPED[name]
    col = _damaged(pa.Array.from_buffers(dtype, 3, [validity_bits(1, 1, 1), *rest], null_count=1),
                   r"null_count value \(1\) doesn't match")
    _every_conversion_raises(col, r"null count 1 does not match the validity bitmap, which "
                                  r"marks 0 of 3 slots null")


def test_bitmap_contradicting_its_null_count_is_checked_before_a_slice():
    """A slice counts its own nulls: the count of the array it was cut from is checked first."""
    col = _damaged(pa.Array.from_buffers(pa.int32(), 3, [validity_bits(1, 1, 1), pa.py_buffer(
        struct.pack("<3i", 7, 0, 9))], null_count=1), "null_count")
    part = col.slice(1, 2)
    with pytest.raises(arrowmm.ArrowInvalid, match="null count 1 does not match"):
        part.to_pylist()
    with pytest.raises(arrowmm.ArrowInvalid, match="null count 1 does not match"):
        col[1]


@pytest.mark.parametrize("dtype,data", [(arrowmm.int32(), struct.pack("<3i", 7, 0, 9)),
                                        (arrowmm.fixed_size_binary(3), b"abc\x00\x00\x00def")],
                         ids=["int32", "fixed_size_binary"])
def test_null_count_zero_beside_a_bitmap_with_a_null(dtype, data):
    """A null count of 0 beside a bitmap (the C data interface can give one) is a claim too:
    values were read as all valid on some paths and null on others."""
    col = make_array(dtype, 3, [as_view(bytes([0b101])), as_view(data)], null_count=0)
    _every_conversion_raises(col, "null count 0 does not match the validity bitmap, which "
                                  "marks 1 of 3")


def test_bitmap_is_counted_once_per_array(monkeypatch):
    """The verdict is kept on the array: a second conversion does not count the bitmap again."""
    calls = []
    count = base.count_set_bits
    monkeypatch.setattr(base, "count_set_bits", lambda *a: calls.append(a) or count(*a))
    col, theirs = column_read_back(pa.array([1.5, None, 3.0] * 100))
    for _ in range(3):
        assert col.to_pylist() == theirs.to_pylist()
        assert np.array_equal(col.to_numpy(zero_copy_only=False),
                              theirs.to_numpy(zero_copy_only=False), equal_nan=True)
    assert len(calls) == 1


def test_bitmaps_contradicting_their_null_counts_across_many_batches():
    """``to_pandas`` of many small batches gathers a column in C (``_core._gather``): two
    batches whose bitmaps each disagree with their null count, one a null short and one a
    null over, summed to the right total and read as other values."""
    from arrowmm.arrays.gather import MIN_BATCHES
    rows = [pa.array([1, None, 3], pa.int64()) for _ in range(MIN_BATCHES)]
    values = pa.py_buffer(struct.pack("<3q", 1, 0, 3))
    rows[3] = pa.Array.from_buffers(pa.int64(), 3, [validity_bits(1, 1, 1), values], null_count=1)
    rows[7] = pa.Array.from_buffers(pa.int64(), 3, [validity_bits(0, 0, 1), values], null_count=1)
    sink = io.BytesIO()
    with ipc.new_file(sink, pa.schema([("x", pa.int64())])) as w:
        for r in rows:
            w.write_batch(pa.record_batch([r], names=["x"]))
    theirs = ipc.open_file(sink.getvalue())
    with pytest.raises(pa.ArrowInvalid, match="null_count"):
        theirs.get_batch(3).validate(full=True)
    with arrowmm.open_file(sink.getvalue()) as reader:
        with pytest.raises(arrowmm.ArrowInvalid, match="null count 1 does not match"):
            reader.to_pandas()


# -- F5c: a string view's prefix and padding against its value ---------------------------------

def test_view_prefix_contradicting_its_data():
    long = b"a string longer than twelve"
    view = struct.pack("<i4sii", len(long), b"XXXX", 0, 0)  # prefix 'XXXX', data 'a st...'
    col = _damaged(pa.Array.from_buffers(pa.string_view(), 1, [None, pa.py_buffer(view),
                                                                pa.py_buffer(long)]),
                   "inlined prefix")
    with pytest.raises(arrowmm.ArrowInvalid,
                       match=r"view\[0\] prefix b'XXXX' != its first 4 data bytes b'a st'"):
        col.to_pylist()


def test_inline_view_with_nonzero_padding():
    """An inline view whose length was damaged 5 -> 2 read "short" as "sh"."""
    view = struct.pack("<i12s", 2, b"short")
    col = _damaged(pa.Array.from_buffers(pa.binary_view(), 1, [None, pa.py_buffer(view)]),
                   "padding|non-zero|inline")
    with pytest.raises(arrowmm.ArrowInvalid, match=r"view\[0\] holds 2 bytes inline, but its "
                                                   r"padding b'ort\\x00.*' is not zero"):
        col.to_pylist()

"""Damaged message bodies raise ``ArrowInvalid`` in the selection kernels and in ``cast``,
where they came out as valid arrays holding other values (review s44 #3: R2, R2c): a validity
bitmap that contradicts its null count was copied bit by bit and its nulls counted again, so
a null slot read as its bytes and the result passed full validation; ``cast(string)`` wrote
text for a decimal past its precision.

Each damage is built with pyarrow's ``Array.from_buffers`` (its IPC writer does not validate)
and pyarrow's ``validate(full=True)`` is shown to refuse it: the oracle of "damaged".
"""
from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm import compute
from tests.support.helpers import ipc_bytes, validity_bits

MISMATCH = "null count 1 does not match the validity bitmap"


def _damaged_batch(arr: pa.Array, why: str = "null_count"):
    """arrowmm's one-column batch of ``arr``, once pyarrow's full validation refused it for
    ``why``."""
    with pytest.raises(pa.ArrowInvalid, match=why):
        arr.validate(full=True)
    return arrowmm.open_file(ipc_bytes(pa.record_batch([arr], names=["c"]))).get_batch(0)


def _no_null_marked(dtype: pa.DataType) -> pa.Array:
    """Three slots of ``dtype`` recorded with 1 null whose bitmap marks none (slot 1 was null,
    its bit flipped)."""
    text = [pa.py_buffer(struct.pack("<4i", 0, 3, 3, 6)), pa.py_buffer(b"abcghi")]
    values = {pa.int64(): [pa.py_buffer(struct.pack("<3q", 7, 0, 9))],
              pa.binary(3): [pa.py_buffer(b"abc\x00\x00\x00ghi")],
              pa.bool_(): [validity_bits(1, 0, 1)],
              pa.binary(): text, pa.string(): text}[dtype]
    return pa.Array.from_buffers(dtype, 3, [validity_bits(1, 1, 1), *values], null_count=1)


SELECTIONS = {
    "compute.filter": lambda b: compute.filter(b.column(0), np.array([False, True, True])),
    "compute.take": lambda b: compute.take(b.column(0), [2, 1, 0]),
    "RecordBatch.filter": lambda b: b.filter(np.array([False, True, True])),
    "RecordBatch.take": lambda b: b.take([2, 1, 0]),
}


@pytest.mark.parametrize("op", list(SELECTIONS))
@pytest.mark.parametrize("dtype", [pa.int64(), pa.binary(3), pa.bool_(), pa.binary()], ids=str)
def test_selection_of_a_bitmap_contradicting_its_null_count(dtype, op):
    """filter and take copied the bitmap and recounted it: the null slot 1 came out as a value
    (b'\\x00\\x00\\x00', 0, False, b'') in an array with no null that validates."""
    batch = _damaged_batch(_no_null_marked(dtype))
    with pytest.raises(arrowmm.ArrowInvalid, match=MISMATCH):
        SELECTIONS[op](batch)


def test_selection_of_a_list_bitmap_contradicting_its_null_count():
    """The same through the zero-copy route of nested layouts (slices joined by concat)."""
    arr = pa.Array.from_buffers(pa.list_(pa.int8()), 3,
                                [validity_bits(1, 1, 1), pa.py_buffer(struct.pack("<4i", 0, 1, 1, 2))],
                                null_count=1, children=[pa.array([1, 2], pa.int8())])
    batch = _damaged_batch(arr)
    for op in SELECTIONS.values():
        with pytest.raises(arrowmm.ArrowInvalid, match=MISMATCH):
            op(batch)


@pytest.mark.parametrize("nest", [
    lambda kid: pa.StructArray.from_arrays([kid], names=["x"]),
    lambda kid: pa.ListArray.from_arrays(pa.array([0, 1, 2, 3], pa.int32()), kid),
], ids=["struct", "list"])
def test_selection_of_a_child_bitmap_contradicting_its_null_count(nest):
    """A child's bitmap was recounted by the slices joined: the child's null slot 1 came out as
    0 ([{'x': 0}, {'x': 9}], [[0], [9]])."""
    kid = _no_null_marked(pa.int64())
    batch = _damaged_batch(nest(kid))
    for op in SELECTIONS.values():
        with pytest.raises(arrowmm.ArrowInvalid, match=MISMATCH):
            op(batch)


@pytest.mark.parametrize("dtype, target", [(pa.binary(), arrowmm.string()),
                                           (pa.string(), arrowmm.binary())], ids=str)
def test_cast_of_a_bitmap_contradicting_its_null_count(dtype, target):
    """binary <-> string kept the buffers and recounted the bitmap: the null slot 1 came out
    as ''."""
    col = _damaged_batch(_no_null_marked(dtype)).column(0)
    with pytest.raises(arrowmm.ArrowInvalid, match=MISMATCH):
        col.cast(target)


@pytest.mark.parametrize("dtype, value, match", [
    (pa.decimal128(5, 2), 10**7, r"cast\(string\): value\[1\] = 10000000: decimal128\(5, 2\) "
                                 "value does not fit in its precision"),
    (pa.decimal256(40, 3), -10**40, r"value\[1\] = -10{40}: decimal256\(40, 3\) value does not "
                                    "fit in its precision"),
], ids=["decimal128", "decimal256"])
@pytest.mark.parametrize("safe", [True, False], ids=["safe", "unsafe"])
def test_cast_to_string_of_a_decimal_past_its_precision(dtype, value, match, safe):
    """Text was written for the damaged slot 1 ('100000.00') where ``to_pylist`` raises.  It is
    damage, not overflow: ``safe=False`` raises too."""
    width = dtype.bit_width // 8
    raw = b"".join(v.to_bytes(width, "little", signed=True) for v in (0, value, 0))
    col = _damaged_batch(pa.Array.from_buffers(dtype, 3, [None, pa.py_buffer(raw)]),
                         "precision").column(0)
    with pytest.raises(arrowmm.ArrowInvalid):
        col.to_pylist()
    with pytest.raises(arrowmm.ArrowInvalid, match=match):
        col.cast(arrowmm.string(), safe=safe)

"""Damaged message bodies raise ``ArrowInvalid`` in the selection kernels and in ``cast``,
where they came out as valid arrays holding other values (review s44 #3: R2, R2c): a validity
bitmap that contradicts its null count was copied bit by bit and its nulls counted again, so
a null slot read as its bytes and the result passed full validation; ``cast(string)`` wrote
text for a decimal past its precision.  Sorts and filters refuse values ``to_pylist`` refuses
(R4, R5): they judged the stored ints and bytes, or read nulls through damaged offsets.

Each damage is built with pyarrow's ``Array.from_buffers`` (its IPC writer does not validate)
and pyarrow's ``validate(full=True)`` is shown to refuse it: the oracle of "damaged".
"""
from __future__ import annotations

import datetime
import struct

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm import compute
from tests.support.helpers import (column_read_back, int32_buffer, ipc_bytes, pyarrow_refuses,
                                   validity_bits)

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


def _int64s(dtype: pa.DataType, *values) -> pa.Array:
    return pa.Array.from_buffers(dtype, len(values), [None, pa.py_buffer(struct.pack(
        f"<{len(values)}q", *values))])


#: (damaged array, pyarrow's reason, what the full validation says of slot 1)
OUT_OF_DOMAIN = {
    "date64_not_whole_days": (_int64s(pa.date64(), 86_400_000, 5, 0),
                              "not represent a whole number of days",
                              r"value\[1\] = 5: date64\[ms\] value is not a whole number of days"),
    "time64_past_a_day": (_int64s(pa.time64("us"), 1, 86_400 * 10**6, 0),
                          "not within the acceptable range",
                          r"value\[1\] = 86400000000: time64\[us\] value is outside \[0, "
                          r"86400000000\) us"),
}

SORTS = {
    "compute.sort_indices": lambda col: compute.sort_indices(col),
    "RecordBatch.sort_by": lambda col: arrowmm.record_batch([col], names=["c"]).sort_by("c"),
    "Table.sort_by": lambda col: arrowmm.Table.from_batches(
        [arrowmm.record_batch([col], names=["c"])] * 2).sort_by([("c", "descending")]),
}


@pytest.mark.parametrize("op", list(SORTS))
@pytest.mark.parametrize("damage", list(OUT_OF_DOMAIN))
def test_sort_of_values_to_pylist_refuses(damage, op):
    """The ranks were of the stored ints: the date64 of 5 ms sorted between 0 and one day
    ([2, 1, 0] ascending), the time64 of a day and more sorted last."""
    arr, why, match = OUT_OF_DOMAIN[damage]
    col, pa_col = column_read_back(arr)
    pyarrow_refuses(pa_col, why)
    with pytest.raises(arrowmm.ArrowInvalid):
        col.to_pylist()
    with pytest.raises(arrowmm.ArrowInvalid, match=r"sort_by: column '(c|values)': " + match):
        SORTS[op](col)


#: (damaged array, pyarrow's reason, a value of its type to compare with)
COMPARED = {
    "date64_not_whole_days": (_int64s(pa.date64(), 86_400_000, 5, 0),
                              "not represent a whole number of days", datetime.date(1970, 1, 2)),
    "invalid_utf8": (pa.Array.from_buffers(pa.string(), 3, [None, int32_buffer(0, 1, 3, 4),
                                                            pa.py_buffer(b"b\xff\xfea")]),
                     "Invalid UTF8", "b"),
}

PREDICATES = {
    "==": lambda v: compute.field("c") == v,
    ">": lambda v: compute.field("c") > v,
    "isin": lambda v: compute.field("c").isin([v]),
}


@pytest.mark.parametrize("how", ["compute.filter", "RecordBatch.filter"])
@pytest.mark.parametrize("op", list(PREDICATES))
@pytest.mark.parametrize("damage", list(COMPARED))
def test_predicate_over_values_to_pylist_refuses(damage, op, how):
    """The comparison kernels judged the stored ints and bytes: the date64 of 5 ms was a
    value less than one day, the bytes ff fe a string less than 'b' or greater, and the
    filter answered."""
    arr, why, value = COMPARED[damage]
    col, pa_col = column_read_back(arr)
    pyarrow_refuses(pa_col, why)
    with pytest.raises(arrowmm.ArrowInvalid):
        col.to_pylist()
    batch = arrowmm.record_batch([col], names=["c"])
    expr = PREDICATES[op](value)
    with pytest.raises(arrowmm.ArrowInvalid, match=r"filter \('c' .*\): .*column 'c'"):
        compute.filter(batch, expr) if how == "compute.filter" else batch.filter(expr)


def _strings_offsets_decreasing() -> pa.Array:
    """['ab', None, 'bc'] whose offsets 0, 2, 1, 3 decrease at the null slot."""
    return pa.Array.from_buffers(pa.string(), 3, [validity_bits(1, 0, 1), int32_buffer(0, 2, 1, 3),
                                                  pa.py_buffer(b"abc")], null_count=1)


NULLS_BELOW = {
    # runs ['ab'] * 2, [None], ['bc'] * 2
    "run_end_encoded": lambda: pa.Array.from_buffers(
        pa.run_end_encoded(pa.int32(), pa.string()), 5, [None],
        children=[pa.array([2, 3, 5], pa.int32()), _strings_offsets_decreasing()]),
    "dictionary": lambda: pa.DictionaryArray.from_arrays(
        pa.array([0, 1, 2, 0], pa.int8()), _strings_offsets_decreasing(), safe=False),
    "sparse_union": lambda: pa.Array.from_buffers(
        pa.sparse_union([pa.field("s", pa.string())]), 3, [None, pa.py_buffer(bytes(3))],
        children=[_strings_offsets_decreasing()]),
}


@pytest.mark.parametrize("layout", list(NULLS_BELOW))
def test_is_valid_over_values_with_damaged_offsets(layout):
    """A null below the column's own bitmap was read through damaged offsets and the filter
    answered (run-end encoded: ['ab', 'ab', 'bc', 'bc'], union: ['ab', 'bc']; the dictionary
    column came back whole) where ``to_pylist`` of the same column raises."""
    col, pa_col = column_read_back(NULLS_BELOW[layout]())
    pyarrow_refuses(pa_col, "non-monotonic offset")
    with pytest.raises(arrowmm.ArrowInvalid):
        col.to_pylist()
    batch = arrowmm.record_batch([col], names=["c"])
    with pytest.raises(arrowmm.ArrowInvalid,
                       match=r"filter \(is_valid 'c'\): offsets of \"column 'c'\.\w+\""):
        compute.filter(batch, compute.field("c").is_valid())

"""Casts refuse a damaged array, safe or not, instead of laundering it into values that read as
data (review s44 #3: R2c and beyond): a date64 that is not a whole number of days was written
as the day it falls in and truncated to a date32, a time past one day written as
``<value out of range: N>``, a decimal past its precision cast to floats and wider decimals,
invalid UTF-8 copied into binaries (which do not check it), a negative dictionary index
re-encoded as the dictionary's last value.

Each damage is built with pyarrow's ``Array.from_buffers`` (its IPC writer does not validate)
and pyarrow's ``validate(full=True)`` is shown to refuse it: the oracle of "damaged".
"""
from __future__ import annotations

import io
import re

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from tests.support.helpers import column_read_back, int32_buffer, pyarrow_refuses


def _int64_buffer(*values) -> pa.Buffer:
    return pa.py_buffer(np.array(values, dtype="<i8").tobytes())


def _invalid_utf8(dtype=pa.string(), offsets=int32_buffer(0, 1, 3)):
    return pa.Array.from_buffers(dtype, 2, [None, offsets, pa.py_buffer(b"a\xff\xfe")])


def _dictionary(*indices):
    """['a', 'b'] indexed by int8 ``indices`` (as bytes: 255 is -1)."""
    raw = pa.Array.from_buffers(pa.int8(), len(indices), [None, pa.py_buffer(bytes(indices))])
    return pa.DictionaryArray.from_arrays(raw, pa.array(["a", "b"]), safe=False)


# name: (damaged array, pyarrow's words for it, arrowmm's, the targets it was laundered into)
DAMAGE = {
    "date64_not_whole_days": (
        pa.Array.from_buffers(pa.date64(), 2, [None, _int64_buffer(86_400_000, 5)]),
        "date64", r"value\[1\] = 5: date64\[ms\] value is not a whole number of days",
        # (before: '1970-01-01'; 1970-01-01 as a date32, unsafe; 00:00:00.005; 5)
        [arrowmm.string(), arrowmm.date32(), arrowmm.timestamp("ms"), arrowmm.int64()]),
    "time64_past_a_day": (
        pa.Array.from_buffers(pa.time64("ns"), 2, [None, _int64_buffer(1, 2**63 - 4 * 10**9)]),
        "time64", r"value\[1\] = 9223372032854775808: time64\[ns\] value is outside "
                  r"\[0, 86400000000000\) ns",
        # (before: '<value out of range: N>'; times past a day again, unsafe; N)
        [arrowmm.string(), arrowmm.time64("us"), arrowmm.int64()]),
    "time32_negative": (
        pa.Array.from_buffers(pa.time32("s"), 2, [None, int32_buffer(1, -1)]),
        "time32", r"value\[1\] = -1: time32\[s\] value is outside \[0, 86400\) s",
        [arrowmm.string(), arrowmm.time64("us"), arrowmm.int32()]),
    "decimal_past_precision": (
        pa.Array.from_buffers(pa.decimal128(5, 0), 2, [None, pa.py_buffer(
            (1).to_bytes(16, "little") + (10**6).to_bytes(16, "little"))]),
        "precision", r"value\[1\] = 1000000: decimal128\(5, 0\) value does not fit in its "
                     r"precision",
        # (before: 1000000.0, 1000000.00, 1000000, 1000000: each a valid value of its type)
        [arrowmm.float64(), arrowmm.decimal128(20, 2), arrowmm.int64(),
         arrowmm.decimal256(40, 0)]),
    "invalid_utf8": (
        _invalid_utf8(), "Invalid UTF8",
        r"value\[1\] \(data\[1:3\]\) is not valid UTF-8",
        # (before: the bytes copied, into binaries that read them as b'\xff\xfe'; parsed as
        # numbers, where the parse is the UTF-8 check, the slot was named value[0])
        [arrowmm.binary(), arrowmm.large_binary(), arrowmm.binary_view(),
         arrowmm.large_string(), arrowmm.string_view(), arrowmm.int64(), arrowmm.float64(),
         arrowmm.bool_()]),
    "large_invalid_utf8": (
        _invalid_utf8(pa.large_string(), _int64_buffer(0, 1, 3)), "Invalid UTF8",
        r"value\[1\] \(data\[1:3\]\) is not valid UTF-8", [arrowmm.binary(), arrowmm.string()]),
    "offsets_out_of_order": (
        pa.Array.from_buffers(pa.string(), 3, [None, int32_buffer(0, 2, 1, 5),
                                               pa.py_buffer(b"abcde")]),
        "non-monotonic offset", r"offset\[2\]=1 < offset\[1\]=2",
        [arrowmm.large_string(), arrowmm.binary(), arrowmm.string_view()]),
    "dictionary_index_negative": (
        _dictionary(0, 255), "out of bounds",
        r"index\[1\]=-1 out of range for dictionary of length 2",
        # (before: ['a', 'b']: -1 indexed the dictionary from its end)
        [arrowmm.dictionary(arrowmm.int16(), arrowmm.string())]),
    "dictionary_index_past": (
        _dictionary(0, 2), "out of bounds",
        r"index\[1\]=2 out of range for dictionary of length 2",
        # (before: numpy's IndexError, not an ArrowInvalid)
        [arrowmm.dictionary(arrowmm.int16(), arrowmm.string())]),
    "list_offsets_out_of_order": (
        pa.Array.from_buffers(pa.list_(pa.int32()), 3, [None, int32_buffer(0, 2, 1, 3)],
                              children=[pa.array([1, 2, 3], pa.int32())]),
        "non-monotonic offset", r"offset\[2\]=1 < offset\[1\]=2",
        [arrowmm.list_(arrowmm.int64()), arrowmm.large_list(arrowmm.int32())]),
    "struct_child_invalid_utf8": (
        pa.StructArray.from_arrays([_invalid_utf8()], names=["s"]), "Invalid UTF8",
        r"value\[1\] \(data\[1:3\]\) is not valid UTF-8",
        [arrowmm.struct([arrowmm.field("s", arrowmm.large_binary())])]),
}

CASES = [pytest.param(name, target, id=f"{name}-{target}")
         for name, (_, _, _, targets, ) in DAMAGE.items() for target in targets]


def _damaged(name):
    """arrowmm's column of damage ``name``, once pyarrow's full validation refused it."""
    arr, why, _, _ = DAMAGE[name]
    col, pa_col = column_read_back(arr)
    pyarrow_refuses(pa_col, why)
    return col


@pytest.mark.parametrize("safe", [True, False], ids=["safe", "unsafe"])
@pytest.mark.parametrize("name, target", CASES)
def test_a_cast_refuses_a_damaged_array(name, target, safe):
    """Damage, not overflow: ``safe=False`` raises too, naming the cast, the slot and why."""
    col = _damaged(name)
    match = rf"cast\({re.escape(str(target))}\).*{DAMAGE[name][2]}"
    with pytest.raises(arrowmm.ArrowInvalid, match=match):
        col.cast(target, safe=safe)


@pytest.mark.parametrize("how", ["ChunkedArray", "RecordBatch", "Table"])
def test_the_casts_of_chunked_arrays_batches_and_tables_refuse_it_too(how):
    """Before: ['1970-01-02', '1970-01-01'] in each."""
    col = _damaged("date64_not_whole_days")
    batch = arrowmm.record_batch([col], names=["d"])
    schema = arrowmm.schema([arrowmm.field("d", arrowmm.string())])
    cast = {"ChunkedArray": lambda: arrowmm.chunked_array([col]).cast(arrowmm.string()),
            "RecordBatch": lambda: batch.cast(schema),
            "Table": lambda: arrowmm.table(batch).cast(schema)}[how]
    with pytest.raises(arrowmm.ArrowInvalid, match=DAMAGE["date64_not_whole_days"][2]):
        cast()


def test_the_writers_cast_refuses_it_too():
    """``cast=True`` re-encodes a dictionary against the writer's index type.  Before: a
    negative index became the dictionary's last value, and the new file read ['a', 'b']."""
    col = _damaged("dictionary_index_negative")
    want = arrowmm.dictionary(arrowmm.int16(), arrowmm.string())
    sink = io.BytesIO()
    with arrowmm.new_stream(sink, arrowmm.schema([arrowmm.field("c", want)]), cast=True) as w:
        with pytest.raises(arrowmm.ArrowInvalid,
                           match=r"field 'c': cannot cast dictionary<values=string, "
                                 r"indices=int8.*index\[1\]=-1 out of range"):
            w.write_batch(arrowmm.record_batch([col], names=["c"]))
    assert pa.ipc.open_stream(sink.getvalue()).read_all().num_rows == 0

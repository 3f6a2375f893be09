"""Damaged message bodies of nested and domain-limited columns raise ``ArrowInvalid`` when
converted, where they read as other values before (review s44 #2, body fuzzing: F2, F4,
F5a/b), and map rows convert as pyarrow's (F6).

Each damage is built with pyarrow's ``Array.from_buffers`` (its IPC writer does not validate)
and pyarrow's ``validate(full=True)`` is shown to refuse it: the oracle of "damaged".
"""
from __future__ import annotations

import datetime
import io
import struct

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import arrowmm
from tests.support.helpers import column_read_back, int32_buffer, pyarrow_refuses, validity_bits


# -- F2: list / large_list / map offsets, every slot, before rows are sliced -------------------

@pytest.mark.parametrize("offsets,pa_why,am_why", [
    ((0, 2, 2, 127, 5), "out of bounds", r"offset\[3\] = 127 lies outside the 5-element child"),
    ((0, 3, 1, 5, 5), "non-monotonic", r"offset\[2\] = 1 is below offset\[1\] = 3"),
], ids=["past_child", "decreasing"])
@pytest.mark.parametrize("list_type", [pa.list_(pa.int32()), pa.large_list(pa.int32())],
                         ids=["list", "large_list"])
def test_list_offsets_are_checked_before_rows_are_cut(list_type, offsets, pa_why, am_why):
    """Before: [[1, 2], [], [], []] and [[1, 2, 3], [], [2, 3, 4, 5], []], Python slices
    clamping the damaged offset into rows that never were."""
    buf = int32_buffer(*offsets) if list_type == pa.list_(pa.int32()) else \
        pa.py_buffer(struct.pack(f"<{len(offsets)}q", *offsets))
    arr = pa.Array.from_buffers(list_type, 4, [None, buf], children=[pa.array([1, 2, 3, 4, 5], pa.int32())])
    col, pa_col = column_read_back(arr)
    pyarrow_refuses(pa_col, pa_why)
    with pytest.raises(arrowmm.ArrowInvalid, match=am_why):
        col.to_pylist()
    with pytest.raises(arrowmm.ArrowInvalid, match=am_why):
        col.to_numpy(zero_copy_only=False)


def test_list_offsets_under_a_null_slot_are_checked():
    """Slot 1 is null and its end offset went back: the row is None either way, but the
    offset after it is read by slot 2, whose row [1, 2, 3] was [2, 3] as written."""
    arr = pa.Array.from_buffers(pa.list_(pa.int32()), 3, [validity_bits(1, 0, 1), int32_buffer(0, 1, 0, 3)],
                                null_count=1, children=[pa.array([1, 2, 3], pa.int32())])
    col, pa_col = column_read_back(arr)
    pyarrow_refuses(pa_col, "non-monotonic")
    with pytest.raises(arrowmm.ArrowInvalid, match=r"offset\[2\] = 0 is below offset\[1\] = 1 \(slot 1"):
        col.to_pylist()


def test_map_offsets_are_checked_before_rows_are_cut():
    """Before: [[('a', 1), ('b', 2)], [], [('b', 2), ('c', 3)]] from offsets 0, 2, 1, 3."""
    entries = pa.array([{"key": "a", "value": 1}, {"key": "b", "value": 2}, {"key": "c", "value": 3}],
                       pa.struct([pa.field("key", pa.string(), nullable=False), ("value", pa.int32())]))
    arr = pa.Array.from_buffers(pa.map_(pa.string(), pa.int32()), 3, [None, int32_buffer(0, 2, 1, 3)],
                                children=[entries])
    col, pa_col = column_read_back(arr)
    pyarrow_refuses(pa_col, "non-monotonic")
    for convert in (col.to_pylist, lambda: col.to_numpy(zero_copy_only=False)):
        with pytest.raises(arrowmm.ArrowInvalid, match=r"map<string, int32> offsets: offset\[2\] = 1"):
            convert()


# -- F4: dense union offsets going back within a child ---------------------------------------

def _dense_union_going_back(first_child: pa.Array) -> pa.Array:
    # type ids [0, 1, 0], offsets [1, 0, 0]: rows 0 and 2 read child 0 backwards
    return pa.UnionArray.from_dense(pa.array([0, 1, 0], pa.int8()), pa.array([1, 0, 0], pa.int32()),
                                    [first_child, pa.array(["y"])])


def test_dense_union_offsets_going_back_are_refused():
    """Before: [3.0, 'y', 1.0], the two values of child 0 swapped with no error.  An offset
    repeated within a child is in order, and still converts."""
    sound = pa.UnionArray.from_dense(pa.array([0, 1, 0, 0], pa.int8()), pa.array([0, 0, 0, 1], pa.int32()),
                                     [pa.array([1.0, None]), pa.array(["y"])])
    col, pa_col = column_read_back(sound)
    pa_col.validate(full=True)
    assert col.to_pylist() == pa_col.to_pylist() == [1.0, "y", 1.0, None]
    col, pa_col = column_read_back(_dense_union_going_back(pa.array([1.0, 3.0])))
    pyarrow_refuses(pa_col, "non-monotonic offset")
    with pytest.raises(arrowmm.ArrowInvalid, match=r"offset\[2\]=0 < offset\[0\]=1, both type code 0"):
        col.to_pylist()


def test_dense_union_offsets_going_back_are_refused_by_logical_validity():
    """Before: [False, True, True], the null of child 0's slot 1 given to row 0."""
    col, pa_col = column_read_back(_dense_union_going_back(pa.array([1.0, None])))
    pyarrow_refuses(pa_col, "non-monotonic offset")
    with pytest.raises(arrowmm.ArrowInvalid, match="must not decrease"):
        col.logical_validity()


# -- F5a/b: values outside their type's domain -------------------------------------------------

def _decimals(dtype, ints, valid=None) -> pa.Array:
    width = dtype.bit_width // 8
    raw = b"".join(v.to_bytes(width, "little", signed=True) for v in ints)
    bitmap = None if valid is None else validity_bits(*valid)
    nulls = 0 if valid is None else valid.count(0)
    return pa.Array.from_buffers(dtype, len(ints), [bitmap, pa.py_buffer(raw)], null_count=nulls)


@pytest.mark.parametrize("dtype,bad", [
    (pa.decimal128(12, 2), 2 ** 100),
    (pa.decimal128(12, 2), -10 ** 12),
    (pa.decimal256(40, 0), 10 ** 40),
    (pa.decimal64(5, 2), -10 ** 5),
    (pa.decimal32(3, 1), 1000),
], ids=["decimal128_huge", "decimal128_one_digit_over", "decimal256", "decimal64", "decimal32"])
def test_decimal_past_its_precision_is_refused(dtype, bad):
    """Before: Decimal('12676506002282294014967032053.76') for a decimal128(12, 2), and so on.
    The precision's largest values convert, and a null slot's bytes are not read."""
    limit = 10 ** dtype.precision - 1
    col, pa_col = column_read_back(_decimals(dtype, [limit, -limit, bad], valid=[1, 1, 0]))
    pa_col.validate(full=True)
    assert col.to_pylist() == pa_col.to_pylist()
    col, pa_col = column_read_back(_decimals(dtype, [5, bad]))
    pyarrow_refuses(pa_col, "does not fit in precision")
    with pytest.raises(arrowmm.ArrowInvalid, match=rf"value\[1\] = {bad} \(unscaled\) does not fit "
                                                   rf"in precision {dtype.precision}"):
        col.to_pylist()


def test_date64_not_a_whole_day_is_refused():
    """Before: datetime.date(1973, 5, 26), the 40 minutes past midnight dropped.  Whole days
    convert, and a null slot's bytes are not read."""
    raw = struct.pack("<3q", -86_400_000, 5, 86_400_000 * 365)
    col, pa_col = column_read_back(pa.Array.from_buffers(pa.date64(), 3, [validity_bits(1, 0, 1), pa.py_buffer(raw)],
                                                null_count=1))
    pa_col.validate(full=True)
    assert col.to_pylist() == pa_col.to_pylist()
    raw = struct.pack("<2q", 86_400_000, 107287782400)
    col, pa_col = column_read_back(pa.Array.from_buffers(pa.date64(), 2, [None, pa.py_buffer(raw)]))
    pyarrow_refuses(pa_col, "whole number of days")
    with pytest.raises(arrowmm.ArrowInvalid, match=r"value\[1\] = 107287782400 ms is not a whole"):
        col.to_pylist()
    with pytest.raises(arrowmm.ArrowInvalid, match="not a whole"):
        col.to_pandas()


# -- F6: map rows in to_numpy / to_pandas are lists of (key, value) tuples, as pyarrow's -------

def _tagged(value):
    """``value`` with every container's and element's type spelled out (1 == 1.0, numpy
    scalars equal Python ones: a plain == would hide the differences pyarrow shows)."""
    if isinstance(value, np.ndarray):
        return ("ndarray", str(value.dtype), [_tagged(v) for v in value])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_tagged(v) for v in value])
    if isinstance(value, dict):
        return ("dict", [(k, _tagged(v)) for k, v in value.items()])
    return (type(value).__name__, repr(value))


_MAP = pa.map_(pa.string(), pa.int32())
_MAPS = [[("a", 1), ("b", None)], None, [], [("c", 3)]]

_AT_3 = datetime.datetime(2020, 1, 2, 3)

MAP_COLUMNS = {
    "with_nulls": pa.array(_MAPS, _MAP),
    "without_nulls": pa.array([[("a", 1)], [], [("c", 3), ("d", 4)]], _MAP),
    "struct_of_map": pa.StructArray.from_arrays([pa.array(_MAPS, _MAP), pa.array([1, 2, 3, 4])],
                                                names=["m", "x"]),
    "list_of_map": pa.array([[[("a", 1)], None], None, [[]]], pa.list_(_MAP)),
    "map_of_map": pa.array([[("k", [("x", 1)])], [("j", None)]], pa.map_(pa.string(), _MAP)),
    "map_of_list": pa.array([[("k", [1, 2])], [("j", None)]], pa.map_(pa.string(), pa.list_(pa.int64()))),
    "map_of_timestamp_ms": pa.array([[(1, _AT_3)], None], pa.map_(pa.int32(), pa.timestamp("ms"))),
    "map_of_timestamp_ns": pa.array([[(1, _AT_3)]], pa.map_(pa.int32(), pa.timestamp("ns"))),
    "map_of_zoned_timestamp": pa.array([[(1, _AT_3.replace(tzinfo=datetime.timezone.utc))]],
                                       pa.map_(pa.int32(), pa.timestamp("s", "Europe/Paris"))),
    "map_of_date32": pa.array([[(1, datetime.date(2020, 1, 2))]], pa.map_(pa.int32(), pa.date32())),
    "map_of_duration": pa.array([[(1, datetime.timedelta(seconds=5)), (2, None)]],
                                pa.map_(pa.int32(), pa.duration("s"))),
    # (no map: the entries are struct rows, and plain struct rows took the same numpy scalars)
    "struct_of_temporal": pa.StructArray.from_arrays(
        [pa.array([datetime.date(2020, 1, 2), None]), pa.array([_AT_3, _AT_3], pa.timestamp("ns"))],
        names=["d", "t"]),
}


@pytest.mark.parametrize("name", list(MAP_COLUMNS))
def test_map_rows_convert_as_pyarrow(name):
    """Before: a numpy array of tuples per map row (and numpy datetime64 / timedelta64
    scalars in the entries), where pyarrow gives a list of (key, value) tuples (and the
    Python objects numpy's ``tolist`` gives)."""
    col, pa_col = column_read_back(MAP_COLUMNS[name])
    for got, want in ((col, pa_col), (col.slice(1), pa_col.slice(1)), (col.slice(0, 1), pa_col.slice(0, 1))):
        assert _tagged(got.to_numpy(zero_copy_only=False)) == _tagged(want.to_numpy(zero_copy_only=False))
        assert _tagged(got.to_pandas().tolist()) == _tagged(want.to_pandas().tolist())


def test_map_rows_of_a_chunked_column_convert_as_pyarrow():
    maps = pa.array(_MAPS, _MAP)
    batches = [pa.record_batch([maps], names=["m"]), pa.record_batch([maps.slice(1)], names=["m"])]
    sink = io.BytesIO()
    with ipc.new_file(sink, batches[0].schema) as w:
        for b in batches:
            w.write_batch(b)
    got = arrowmm.open_file(sink.getvalue()).read_all()
    want = ipc.open_file(sink.getvalue()).read_all()
    assert got.column("m").num_chunks == 2
    assert _tagged(got.column("m").to_numpy()) == _tagged(want.column("m").to_numpy())
    assert _tagged(got.to_pandas()["m"].tolist()) == _tagged(want.to_pandas()["m"].tolist())


@pytest.mark.parametrize("bits,precision", [(128, 38), (128, 20), (128, 19), (256, 76), (256, 40)])
def test_precision_check_of_wide_decimals_is_exact(bits, precision):
    """Values past an int64 are judged by comparing 64-bit words (vectorised; one by one in
    Python before, 13x a decimal128(38, 18) cast's time): against exact integers at the bounds,
    at the type's extremes and at random."""
    from arrowmm.arrays.primitive import _decimal_beyond_precision
    rng = np.random.default_rng(bits + precision)
    bound = 10 ** precision - 1
    edges = [0, 1, -1, bound, -bound, bound + 1, -bound - 1, 2 ** (bits - 1) - 1, -2 ** (bits - 1),
             2 ** 63, -2 ** 63 - 1, 2 ** 63 - 1, -2 ** 63, 2 ** 64, -2 ** 64]
    rand = [int.from_bytes(rng.bytes(bits // 8), "little", signed=True) >> int(s)
            for s in rng.integers(0, bits, 3000)]
    values = [v for v in edges + rand if -2 ** (bits - 1) <= v < 2 ** (bits - 1)]
    raw = np.frombuffer(b"".join(v.to_bytes(bits // 8, "little", signed=True) for v in values),
                        dtype=np.dtype((np.void, bits // 8)))
    dtype = arrowmm.decimal128(precision, 0) if bits == 128 else arrowmm.decimal256(precision, 0)
    got = _decimal_beyond_precision(raw, dtype)
    assert got.tolist() == [not -bound <= v <= bound for v in values]

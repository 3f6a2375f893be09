"""Values of the types in test_read_types.CASES beyond the round trip: temporal values Python
cannot hold, intervals pyarrow has no arrays for, numpy views into the mapping, and what
``validate(full=True)`` rejects (as pyarrow's does)."""
from __future__ import annotations

import importlib.util

import numpy as np
import pyarrow as pa
import pytest

from tests.support.helpers import (assert_array_matches, assert_values_equal, in_region, int_pylist,
                     read_all_paths, roundtrip, write_ipc)
from tests.ipc.test_read_types import CASES, _temporal

import arrowmm

# -- temporal values pyarrow cannot give as Python objects -------------------------------------

UNCONVERTIBLE = {
    "timestamp_ns_nanos": lambda: _temporal(pa.timestamp("ns"), [1, None, 1001]),
    "timestamp_ns_nanos_tz": lambda: _temporal(pa.timestamp("ns", "Europe/Paris"), [10**18 + 1]),
    "duration_ns_nanos": lambda: _temporal(pa.duration("ns"), [None, -1]),
    "time64_ns_nanos": lambda: _temporal(pa.time64("ns"), [1, 999]),
    "timestamp_s_past_9999": lambda: _temporal(pa.timestamp("s"), [0, 253402300800]),
    "timestamp_ms_before_1": lambda: _temporal(pa.timestamp("ms", "UTC"), [-62135596800001]),
    "date32_past_9999": lambda: _temporal(pa.date32(), [2932897]),
    "date64_huge": lambda: _temporal(pa.date64(), [10**17 // 86_400_000 * 86_400_000]),
    "duration_s_huge": lambda: _temporal(pa.duration("s"), [10**17]),
    "duration_s_past_timedelta_max": lambda: _temporal(pa.duration("s"), [86399999999999 + 1]),
    "duration_ms_before_timedelta_min": lambda: _temporal(pa.duration("ms"), [-86399999913600001]),
    "timestamp_s_tz_overflow": lambda: _temporal(pa.timestamp("s", "+05:30"), [0, 253402300799]),
    "timestamp_s_tz_underflow": lambda: _temporal(pa.timestamp("s", "America/New_York"), [-62135596800]),
}


@pytest.mark.parametrize("name", sorted(UNCONVERTIBLE))
def test_temporal_unconvertible(tmp_path, name):
    """Where pyarrow cannot convert, arrowmm raises ArrowInvalid; where it can (nanoseconds
    become pandas objects when pandas is importable) arrowmm gives the same; temporal='int'
    always works."""
    arr = UNCONVERTIBLE[name]()
    try:
        expected = arr.to_pylist()
    except (ValueError, OverflowError):
        expected = None
    path = write_ipc(tmp_path / "t.arrow", pa.record_batch([arr], names=["t"]))
    col = arrowmm.open_file(path).get_batch(0).column(0)
    if expected is None:
        with pytest.raises(arrowmm.ArrowInvalid):
            col.to_pylist()
    else:
        assert "ns" in name and importlib.util.find_spec("pandas") is not None
        assert_values_equal(col.to_pylist(), expected, name)
    assert col.to_pylist(temporal="int") == int_pylist(arr)
    roundtrip(tmp_path, pa.record_batch([arr], names=["t"]))  # the helper's raise path too


def test_temporal_int_mode_nested(tmp_path):
    ts = _temporal(pa.timestamp("ns", "UTC"), [1, 2, None, 3])
    st = pa.StructArray.from_arrays([ts, _temporal(pa.date32(), [1, None, 3, 4])], ["ts", "d"])
    lst = pa.ListArray.from_arrays(pa.array([0, 1, 4], pa.int32()), st)
    path = write_ipc(tmp_path / "t.arrow", pa.record_batch([lst], names=["l"]))
    col = arrowmm.open_file(path).get_batch(0).column(0)
    assert col.to_pylist(temporal="int") == [[{"ts": 1, "d": 1}], [{"ts": 2, "d": None},
                                                                   {"ts": None, "d": 3}, {"ts": 3, "d": 4}]]
    try:
        expected = lst.to_pylist()  # pandas Timestamps when pandas is importable
    except (ValueError, OverflowError):
        with pytest.raises(arrowmm.ArrowInvalid):
            col.to_pylist()
    else:
        assert_values_equal(col.to_pylist(), expected)


def _hidden_cases():
    ns = _temporal(pa.timestamp("ns"), [1000, 1001, 2000, 3001])  # 1001, 3001: nanoseconds
    ints = pa.array([1, 2, 3, 4])
    mask = pa.array([False, True, False, True])  # the rows over 1001 and 3001 are null
    offs = pa.array([0, 1, 2, 3, 4], pa.int32())
    return {
        "list": pa.ListArray.from_arrays(offs, ns, mask=mask),
        "large_list": pa.LargeListArray.from_arrays(offs.cast(pa.int64()), ns, mask=mask),
        "list_view": pa.ListViewArray.from_arrays(offs.slice(0, 4), pa.array([1] * 4, pa.int32()), ns,
                                                  mask=mask),
        "fixed_size_list": pa.FixedSizeListArray.from_arrays(ns, 1, mask=mask),
        "struct": pa.StructArray.from_arrays([ns, ints], ["t", "i"], mask=mask),
        "map": pa.MapArray.from_arrays(offs, ints, ns, mask=mask),
        "sparse_union": pa.UnionArray.from_sparse(pa.array([0, 1, 0, 1], pa.int8()), [ns, ints]),
        "dense_union": pa.UnionArray.from_dense(pa.array([0, 1, 0, 1], pa.int8()),
                                                pa.array([0, 1, 2, 3], pa.int32()), [ns, ints]),
        "dictionary": pa.DictionaryArray.from_arrays(pa.array([0, 2, None, 0], pa.int8()), ns),
    }


@pytest.mark.parametrize("name", sorted(_hidden_cases()))
def test_unconvertible_values_no_slot_shows(tmp_path, name):
    """Values Python cannot hold under null list / struct / map slots, in unselected union slots
    or unused dictionary entries: pyarrow never converts them, nor may arrowmm (which converts
    children in bulk, then only the used ranges when that raises)."""
    arr = _hidden_cases()[name]
    expected = arr.to_pylist()
    for readings in roundtrip(tmp_path, pa.record_batch([arr], names=["x"])):
        for reading in readings:
            assert reading.batches[0].column(0).to_pylist() == expected, reading.label


# -- intervals pyarrow has no Python arrays for --------------------------------------------------

def _type_from_format(fmt: str) -> pa.DataType:
    import pyarrow.cffi as cffi  # a test dependency (cffi): never skipped
    ffi = cffi.ffi

    @ffi.callback("void(struct ArrowSchema*)")
    def release(s):
        s.release = ffi.NULL

    s = ffi.new("struct ArrowSchema*")
    fmt_c = ffi.new("char[]", fmt.encode())
    s.format, s.name, s.metadata, s.flags = fmt_c, ffi.NULL, ffi.NULL, 2
    s.n_children, s.children, s.dictionary, s.release = 0, ffi.NULL, ffi.NULL, release
    return pa.DataType._import_from_c(int(ffi.cast("uintptr_t", s)))


def _relabel(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """``batch`` with ``schema`` (same layouts) through the C data interface."""
    ffi = pytest.importorskip("pyarrow.cffi").ffi
    c = ffi.new("struct ArrowArray*")
    batch._export_to_c(int(ffi.cast("uintptr_t", c)))
    return pa.RecordBatch._import_from_c(int(ffi.cast("uintptr_t", c)), schema)


def test_month_and_day_time_intervals(tmp_path):
    """pyarrow reads and writes month_interval and day_time_interval but has no Python array class
    for them, so the expected values are the stored integers (pyarrow's types give the names)."""
    months = [1, None, -3, 2**31 - 1, -2**31, 0]
    day_ms = [(1, 0), (5, 1), None, (-1, -86_400_000), (2**31 - 1, -2**31), (0, 0)]
    raw = [None if v is None else (v[0] & 0xFFFFFFFF) | (v[1] << 32) for v in day_ms]
    schema = pa.schema([("m", _type_from_format("tiM")), ("d", _type_from_format("tiD"))])
    batch = _relabel(pa.record_batch([pa.array(months, pa.int32()), pa.array(raw, pa.int64())],
                                     names=["m", "d"]), schema)
    for path in (write_ipc(tmp_path / "i.arrow", [batch, batch.slice(3)]),
                 write_ipc(tmp_path / "i.arrows", [batch, batch.slice(3)], fmt="stream")):
        for reading in read_all_paths(path):
            assert [str(f.type) for f in reading.schema] == [str(f.type) for f in schema]
            for b, start in zip(reading.batches, (0, 3)):
                b.validate(full=True)
                m, d = b.column(0), b.column(1)
                assert m.null_count == months[start:].count(None)
                assert m.to_pylist() == m.to_pylist(temporal="int") == months[start:]
                want = [None if v is None else arrowmm.DayTimeInterval(*v) for v in day_ms[start:]]
                assert d.to_pylist() == want and [type(v) for v in d.to_pylist()] == [type(v) for v in want]
                assert m.slice(1, 2).to_pylist() == months[start + 1:start + 3]
                assert d[-1] == want[-1]


# -- numpy views --------------------------------------------------------------------------------

FIXED_WIDTH = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
               "float32", "float64", "date64", "duration_s", "duration_ns",
               "timestamp_us_UTC", "timestamp_ns_None", "fixed_size_binary"]


@pytest.mark.parametrize("name", FIXED_WIDTH)
def test_to_numpy_views_the_mapping(tmp_path, name):
    arr = CASES[name]().drop_null()
    path = write_ipc(tmp_path / "n.arrow", [pa.record_batch([arr], names=["x"])])
    reader = arrowmm.open_file(path)
    col = reader.get_batch(0).column(0)
    region = reader._region
    for view, want in ((col.to_numpy(), arr), (col.slice(3, 4).to_numpy(), arr.slice(3, 4))):
        expected = want.to_numpy(zero_copy_only=False)
        if pa.types.is_fixed_size_binary(arr.type):
            expected = np.array(expected.tolist(), dtype="S3")
        assert view.dtype == expected.dtype
        np.testing.assert_array_equal(view, expected)
        assert region.address <= view.ctypes.data < region.address + region.size
        assert in_region(view, region) and not view.flags.writeable
    with_nulls = arrowmm.open_file(write_ipc(tmp_path / "m.arrow", pa.record_batch(
        [CASES[name]()], names=["x"]))).get_batch(0).column(0)
    if with_nulls.null_count:
        with pytest.raises(arrowmm.ArrowInvalid):
            with_nulls.to_numpy(zero_copy_only=True)


@pytest.mark.parametrize("name", ["bool", "string", "large_binary", "binary_view", "dictionary_int32",
                                  "decimal128", "list", "struct", "date32", "time64_us",
                                  "month_day_nano_interval"])
def test_to_numpy_zero_copy_impossible(tmp_path, name):
    arr = CASES[name]()
    col = arrowmm.open_file(write_ipc(tmp_path / "x.arrow", pa.record_batch([arr], names=["x"]))) \
        .get_batch(0).column(0)
    with pytest.raises(arrowmm.ArrowInvalid):
        col.to_numpy(zero_copy_only=True)
    with pytest.raises(arrowmm.ArrowInvalid):
        col.slice(0, 1).to_numpy(zero_copy_only=True)  # no nulls in that slice
    assert_array_matches(col, arr, name)


def test_date32_to_numpy_copies(tmp_path):
    """numpy has no 4-byte datetime64: like pyarrow, date32 has no view, and the copy is exact."""
    arr = _temporal(pa.date32(), [0, -1, 19000, 2932896, -719162])
    col = arrowmm.open_file(write_ipc(tmp_path / "d.arrow", pa.record_batch([arr], names=["d"]))) \
        .get_batch(0).column(0)
    with pytest.raises(arrowmm.ArrowInvalid):
        col.to_numpy()
    got = col.slice(1, 3).to_numpy(zero_copy_only=False)
    assert got.dtype == np.dtype("datetime64[D]") and len(got) == 3
    np.testing.assert_array_equal(got, arr.slice(1, 3).to_numpy(zero_copy_only=False))


def test_fixed_size_list_to_numpy_is_2d_view(tmp_path):
    arr = pa.array([[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]], pa.list_(pa.int32(), 3))
    reader = arrowmm.open_file(write_ipc(tmp_path / "f.arrow", pa.record_batch([arr], names=["f"])))
    col = reader.get_batch(0).column(0)
    view = col.slice(1, 2).to_numpy()
    np.testing.assert_array_equal(view, np.array([[4, 5, 6], [7, 8, 9]], np.int32))
    assert in_region(view, reader._region) and not view.flags.writeable


# -- validate(full=True) rejects what pyarrow's rejects -------------------------------------------

def _from_values(ty, storage_type, values, valid=None):
    data = pa.array(values, storage_type).buffers()[1]
    bitmap = None if valid is None else pa.array(valid).buffers()[1]
    return pa.Array.from_buffers(ty, len(values), [bitmap, data])


INVALID_VALUES = {
    "time32_s_day": (pa.time32("s"), pa.int32(), [5, 86400]),
    "time32_ms_negative": (pa.time32("ms"), pa.int32(), [0, -1]),
    "time64_ns_day": (pa.time64("ns"), pa.int64(), [0, 86_400 * 10**9]),
    "date64_fraction": (pa.date64(), pa.int64(), [86_400_000, 1]),
    "decimal32_precision": (pa.decimal32(3, 1), pa.int32(), [999, -1000]),
    "decimal64_precision": (pa.decimal64(18, 0), pa.int64(), [0, 10**18]),
    "decimal128_precision": (pa.decimal128(20, 0), pa.decimal128(38, 0), [10**20 - 1, -(10**20)]),
    "decimal128_small": (pa.decimal128(2, 0), pa.decimal128(38, 0), [99, 100]),
    "decimal256_precision": (pa.decimal256(40, 5), pa.decimal256(76, 0), [-(10**40 - 1), 10**40]),
}


@pytest.mark.parametrize("name", sorted(INVALID_VALUES))
def test_validate_full_rejects_out_of_range_values(tmp_path, name):
    ty, storage, values = INVALID_VALUES[name]
    bad = _from_values(ty, storage, values)
    with pytest.raises(pa.ArrowInvalid):
        bad.validate(full=True)
    masked = _from_values(ty, storage, values, [True, False])  # the bad value is a null slot
    masked.validate(full=True)
    path = write_ipc(tmp_path / "v.arrow", pa.record_batch([bad, masked], names=["bad", "masked"]))
    batch = arrowmm.open_file(path).get_batch(0)
    batch.validate()
    batch.column("masked").validate(full=True)
    batch.column("bad").slice(0, 1).validate(full=True)
    with pytest.raises(arrowmm.ArrowInvalid):
        batch.column("bad").validate(full=True)
    with pytest.raises(arrowmm.ArrowInvalid):
        batch.validate(full=True)

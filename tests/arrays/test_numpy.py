"""numpy views and conversions: ``to_numpy``, ``__array__``, validity masks, offsets and values.

The oracle is pyarrow's ``to_numpy(zero_copy_only=False)`` on the same data (dtype and values);
views are proven by address (inside the file mapping) and by being read-only.
"""
from __future__ import annotations

import numpy as np
import pytest

import pyarrow as pa
import arrowmm

from tests.interop.test_cdata import COLUMNS  # (every type, with nulls)

FIXED_WIDTH = [n for n, a in COLUMNS.items() if pa.types.is_primitive(a.type) or
               pa.types.is_decimal(a.type) or pa.types.is_fixed_size_binary(a.type)]
#: pyarrow gives pandas.DateOffset objects here (through pandas); arrowmm's numpy path stays
#: free of pandas and gives MonthDayNano tuples (to_pandas gives DateOffset)
NOT_COMPARED = {"month_day_nano"}
NESTED = ["list", "large_list", "list_view", "large_list_view", "fixed_size_list", "struct", "map",
          "run_end_encoded", "run_end_encoded_int16", "null", "list_of_dictionary"]


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """Every column twice: as written (nulls) and without its null rows."""
    path = tmp_path_factory.mktemp("np") / "all.arrow"
    table = pa.table(COLUMNS)
    with pa.ipc.new_file(path, table.schema) as w:
        w.write_table(table)
    reader = arrowmm.open_file(path)
    return reader, reader.get_batch(0)


def _same(got, want, where):
    """Equal as pyarrow's arrays: dtype, then values (NaN == NaN, NaT == NaT, arrays per row)."""
    assert got.dtype == want.dtype, f"{where}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, where
    if got.dtype != object:
        np.testing.assert_array_equal(got, want, err_msg=where)
        return
    for i, (a, b) in enumerate(zip(got, want)):
        if isinstance(b, np.ndarray):
            _same(a, b, f"{where}[{i}]")
        elif isinstance(b, float) and np.isnan(b):
            assert isinstance(a, float) and np.isnan(a), f"{where}[{i}]"
        elif isinstance(b, dict):
            assert a.keys() == b.keys(), f"{where}[{i}]"
            for k in b:
                x, y = a[k], b[k]
                assert (x == y) or (x != x and y != y), f"{where}[{i}][{k}]: {x!r} != {y!r}"
        elif isinstance(b, list):  # map rows: (key, value) tuples
            assert [tuple(p) for p in a] == [tuple(p) for p in b], f"{where}[{i}]"
        else:
            assert a == b and type(a) is type(b), f"{where}[{i}]: {a!r} != {b!r}"


def _convertible(arr):
    try:
        return arr.to_numpy(zero_copy_only=False)
    except pa.ArrowInvalid:  # time64[ns] with nanoseconds: no Python object holds them
        return None


@pytest.mark.parametrize("name", [n for n in FIXED_WIDTH + NESTED if n not in NOT_COMPARED])
def test_to_numpy_copy_matches_pyarrow(batch, name):
    _, b = batch
    col = b.column(name)
    want_arr = COLUMNS[name]
    for got_col, want in ((col, want_arr), (col.slice(1, 4), want_arr.slice(1, 4)),
                          (col.slice(3, 2), want_arr.slice(3, 2))):
        expected = _convertible(want)
        if expected is None:
            with pytest.raises(arrowmm.ArrowInvalid):
                got_col.to_numpy(zero_copy_only=False)
            continue
        if pa.types.is_list_view(want.type) or pa.types.is_large_list_view(want.type):
            # pyarrow 26 converts every row of a sliced list view to None: the slice of the
            # whole array's conversion is the oracle
            expected = _convertible(want_arr)[want.offset:want.offset + len(want)]
        if pa.types.is_fixed_size_list(want.type) and not want.null_count:
            # no nulls: arrowmm keeps the 2-D view (pyarrow: an object array of the same rows)
            expected = np.stack(list(expected))
        _same(got_col.to_numpy(zero_copy_only=False), expected, name)
        _same(np.asarray(got_col), expected, f"{name} __array__")


@pytest.mark.parametrize("name", FIXED_WIDTH)
def test_validity_mask(batch, name):
    _, b = batch
    col = b.column(name)
    for got, want in ((col, COLUMNS[name]), (col.slice(2, 3), COLUMNS[name].slice(2, 3))):
        mask = got.validity_mask()
        assert mask.dtype == np.bool_
        np.testing.assert_array_equal(mask, want.is_valid().to_numpy(zero_copy_only=False))
    assert not b.column("null").validity_mask().any()


def test_array_protocol_copy_semantics(batch):
    reader, b = batch
    region = reader._region
    col = b.column("float64").slice(2, 3)  # no nulls in rows 2..4
    view = np.asarray(col, copy=False)
    assert region.address <= view.ctypes.data < region.address + region.size
    assert not view.flags.writeable
    copied = np.array(col, copy=True)
    assert copied.flags.writeable and not np.shares_memory(copied, view)
    np.testing.assert_array_equal(copied, view)
    assert np.asarray(col, dtype=np.float32).dtype == np.float32
    with pytest.raises(ValueError):  # a view is impossible: numpy 2's copy=False contract
        np.asarray(b.column("int64"), copy=False)  # has a null
    with pytest.raises(ValueError):
        np.asarray(col, dtype=np.float32, copy=False)
    np.testing.assert_array_equal(np.asarray(b.column("int64")),
                                  COLUMNS["int64"].to_numpy(zero_copy_only=False))


@pytest.mark.parametrize("name", ["binary", "string", "large_binary", "large_string", "list",
                                  "large_list", "map"])
def test_offsets_and_values_are_views(batch, name):
    reader, b = batch
    region = reader._region
    col = b.column(name).slice(1, 4)
    want = COLUMNS[name].slice(1, 4)
    offsets = col.offsets
    if pa.types.is_list(want.type) or pa.types.is_large_list(want.type) or pa.types.is_map(want.type):
        np.testing.assert_array_equal(offsets, want.offsets.to_numpy())  # pyarrow's own view
        assert pa.array(col.values).equals(want.values)
    else:
        pa_offsets = np.frombuffer(want.buffers()[1], offsets.dtype)[want.offset:want.offset + 5]
        np.testing.assert_array_equal(offsets, pa_offsets)
        values = col.values
        assert values.dtype == np.uint8
        assert region.address <= values.ctypes.data < region.address + region.size
        rows = [None if v is None else bytes(values[s:e]) for v, s, e in
                zip(want.to_pylist(), offsets[:-1], offsets[1:])]
        assert rows == [None if v is None else (v.encode() if isinstance(v, str) else v)
                        for v in want.to_pylist()]
    assert len(offsets) == 5 and not offsets.flags.writeable
    assert region.address <= offsets.ctypes.data < region.address + region.size


def test_list_view_offsets_and_sizes(batch):
    _, b = batch
    col = b.column("list_view").slice(1, 4)
    want = COLUMNS["list_view"].slice(1, 4)
    np.testing.assert_array_equal(col.offsets, want.offsets.to_numpy())
    np.testing.assert_array_equal(col.sizes, want.sizes.to_numpy())


def test_union_has_no_numpy_conversion(batch):
    _, b = batch
    for name in ("sparse_union", "dense_union"):
        with pytest.raises(pa.ArrowNotImplementedError):
            COLUMNS[name].to_numpy(zero_copy_only=False)
        with pytest.raises(arrowmm.ArrowNotImplementedError):
            b.column(name).to_numpy(zero_copy_only=False)

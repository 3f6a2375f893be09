"""Every Arrow type written by pyarrow, read by arrowmm through every read path, compared with
pyarrow's reading of the same bytes (values, types, metadata, slices, numpy views)."""
from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from tests.support.helpers import (assert_batch_matches, assert_same_as_pyarrow,
                                   assert_values_equal, ipc_bytes, pa_read, read_all_paths,
                                   roundtrip, write_ipc)

import arrowmm
from arrowmm.ipc.core.framing import read_message_at
from arrowmm.format import MetadataVersion

N = 8  # rows of every case; columns of one batch share it


def _ints(ty, lo, hi):
    return pa.array([lo, None, hi, 0, 1, None, -1 if lo < 0 else 2, hi - 1], ty)


def _temporal(ty, values):
    storage = pa.int32() if ty.bit_width == 32 else pa.int64()
    return pa.array(values, storage).view(ty)


def _struct():
    kids = [pa.array([1, 2, None, 4, 5, 6, 7, 8], pa.int16()),
            pa.array(["a", None, "c", "dd", "", "f", None, "h"]),
            pa.array([[1.5], None, [], [2.5, None], [3.0], [4.0], [], [5.0]], pa.list_(pa.float64()))]
    fields = [pa.field("i", pa.int16()), pa.field("s", pa.string(), False), pa.field("l", kids[2].type)]
    mask = pa.array([False, False, True, False, False, True, False, False])
    return pa.StructArray.from_arrays(kids, fields=fields, mask=mask)


def _dense_union():
    types = pa.array([5, 7, 5, 9, 7, 7, 5, 9], pa.int8())
    offsets = pa.array([0, 0, 1, 0, 1, 2, 2, 1], pa.int32())
    kids = [pa.array([1, None, 3], pa.int32()), pa.array(["x", None, "zz"]),
            pa.array([[1], None], pa.list_(pa.int8()))]
    return pa.UnionArray.from_dense(types, offsets, kids, ["a", "b", "c"], [5, 7, 9])


def _sparse_union():
    types = pa.array([2, 0, 2, 0, 0, 2, 0, 2], pa.int8())
    kids = [pa.array(range(N), pa.int64()), pa.array([None, "a", "b", None, "c", "d", "e", "f"])]
    return pa.UnionArray.from_sparse(types, kids, ["n", "s"], [0, 2])


def _list_view(large=False):
    # out-of-order, overlapping and empty views into one child
    offs = pa.array([4, 0, 2, 0, 1, 6, 3, 0], pa.int64() if large else pa.int32())
    sizes = pa.array([2, 3, 0, 4, 2, 1, 3, 0], offs.type)
    values = pa.array([1, None, 3, 4, 5, 6, 7])
    mask = pa.array([False, False, False, True, False, False, False, False])
    cls = pa.LargeListViewArray if large else pa.ListViewArray
    return cls.from_arrays(offs, sizes, values, mask=mask)


def _map(keys_sorted=False):
    ty = pa.map_(pa.string(), pa.int32(), keys_sorted=keys_sorted)
    return pa.array([[("a", 1), ("b", None)], None, [], [("c", 3)], [("d", 4), ("e", 5), ("f", 6)],
                     [("g", 7)], None, [("h", 8)]], ty)


def _dictionary(index_type, ordered=False):
    idx = pa.array([0, 1, None, 2, 0, 2, None, 1], index_type)
    return pa.DictionaryArray.from_arrays(idx, pa.array(["red", "green", None]), ordered=ordered)


def _ree(run_end_type, values=None):
    values = values if values is not None else pa.array([1, None, 3, 4], pa.int32())
    return pa.RunEndEncodedArray.from_arrays(pa.array([2, 3, 6, 8], run_end_type), values)


CASES = {
    "null": lambda: pa.nulls(N),
    "bool": lambda: pa.array([True, False, None, True, True, None, False, True]),
    "int8": lambda: _ints(pa.int8(), -2**7, 2**7 - 1),
    "int16": lambda: _ints(pa.int16(), -2**15, 2**15 - 1),
    "int32": lambda: _ints(pa.int32(), -2**31, 2**31 - 1),
    "int64": lambda: _ints(pa.int64(), -2**63, 2**63 - 1),
    "uint8": lambda: _ints(pa.uint8(), 0, 2**8 - 1),
    "uint16": lambda: _ints(pa.uint16(), 0, 2**16 - 1),
    "uint32": lambda: _ints(pa.uint32(), 0, 2**32 - 1),
    "uint64": lambda: _ints(pa.uint64(), 0, 2**64 - 1),
    "float16": lambda: pa.array(np.array([1.5, -0.0, np.nan, np.inf, 65504, 6e-8, -2, 0.1], np.float16),
                                mask=np.array([0, 0, 0, 0, 0, 0, 1, 0], bool)),
    "float32": lambda: pa.array([1.5, -0.0, float("nan"), float("-inf"), 3.4e38, None, 1e-45, 0.1],
                                pa.float32()),
    "float64": lambda: pa.array([1.5, -0.0, float("nan"), float("inf"), 1.7e308, None, 5e-324, 0.1]),
    "decimal32": lambda: pa.array([Decimal("1.23"), Decimal("-1.23"), None, Decimal("9999999.99"),
                                   Decimal("-9999999.99"), Decimal("0.00"), Decimal("0.01"), None],
                                  pa.decimal32(9, 2)),
    "decimal64": lambda: pa.array([Decimal("1.2345"), Decimal("-99999999999999.9999"), None,
                                   Decimal("99999999999999.9999"), Decimal("0.0001"), Decimal("-0.0001"),
                                   Decimal("0"), None], pa.decimal64(18, 4)),
    "decimal128": lambda: pa.array([10**38 - 1, -(10**38 - 1), None, 0, 1, -1, 2**64, -(2**64) - 1],
                                   pa.decimal128(38, 0)),
    "decimal128_scaled": lambda: pa.array([Decimal("-1.5"), Decimal("0.0000000001"), None,
                                           Decimal("-" + "9" * 28 + "." + "9" * 10), Decimal("12.5"),
                                           Decimal("-0.0000000001"), Decimal("3"), None],
                                          pa.decimal128(38, 10)),
    "decimal256": lambda: pa.array([Decimal("9" * 66 + "." + "9" * 10), Decimal("-" + "9" * 66 + "." + "9" * 10),
                                    None, Decimal("0"), Decimal("-1e-10"), Decimal(2**200),
                                    Decimal(-(2**130)), None], pa.decimal256(76, 10)),
    "decimal_negative_scale": lambda: pa.array([Decimal("12300"), Decimal("-100"), None, Decimal("0"),
                                                Decimal("9999900"), Decimal("100"), None, Decimal("-9999900")],
                                               pa.decimal128(5, -2)),
    "date32": lambda: _temporal(pa.date32(), [0, -1, None, 19000, -719162, 2932896, 1, None]),
    "date64": lambda: _temporal(pa.date64(), [0, -86_400_000, None, 1_600_000_000_000 // 86_400_000 * 86_400_000,
                                              -62135596800000, 253402214400000, 86_400_000, None]),
    "time32_s": lambda: _temporal(pa.time32("s"), [0, 1, None, 86399, 3600, 45296, 59, None]),
    "time32_ms": lambda: _temporal(pa.time32("ms"), [0, 1, None, 86_399_999, 3_600_000, 45_296_789, 999, None]),
    "time64_us": lambda: _temporal(pa.time64("us"), [0, 1, None, 86_399_999_999, 3_600_000_000, 123456, 7, None]),
    "time64_ns": lambda: _temporal(pa.time64("ns"), [0, 1000, None, 86_399_999_999_000, 3_600_000_000_000,
                                                     123_456_000, 7000, None]),
    "duration_s": lambda: _temporal(pa.duration("s"), [0, -1, None, 10**9, -10**9, 86400, 1, None]),
    "duration_ms": lambda: _temporal(pa.duration("ms"), [0, -1, None, 10**12, -10**12, 86400, 1, None]),
    "duration_us": lambda: _temporal(pa.duration("us"), [0, -1, None, 10**15, -10**15, 86400, 1, None]),
    "duration_ns": lambda: _temporal(pa.duration("ns"), [0, -1000, None, 10**18, -10**18, 86400000, 1000, None]),
    # the ends of Python's datetime and timedelta ranges (values just past them: UNCONVERTIBLE)
    "timestamp_us_extremes": lambda: _temporal(pa.timestamp("us"), [
        253402300799999999, -62135596800000000, None, 0, 1, -1, 253402300799000000, -62135596799999999]),
    "timestamp_s_extremes_tz": lambda: _temporal(pa.timestamp("s", "-05:00"), [
        253402300799, -62135596800 + 5 * 3600, None, 0, 1, -1, 253402300000, -62135596799 + 5 * 3600]),
    "duration_s_extremes": lambda: _temporal(pa.duration("s"), [
        86399999999999, -86399999913600, None, 0, 1, -1, 86399999999998, -86399999913599]),
    "duration_us_extremes": lambda: _temporal(pa.duration("us"), [
        2**63 - 1, -2**63, None, 0, 1, -1, 2**55, -2**55]),  # timedelta holds all of int64 [us]
    "duration_ms_extremes": lambda: _temporal(pa.duration("ms"), [
        86399999999999999, -86399999913600000, None, 0, 2**53 + 1, -1, 2**62, -2**62]),
    "month_day_nano_interval": lambda: pa.array(
        [pa.MonthDayNano([1, 2, 3]), None, pa.MonthDayNano([-1, -2, -3]), pa.MonthDayNano([0, 0, 0]),
         pa.MonthDayNano([2**31 - 1, -2**31, 2**63 - 1]), None, pa.MonthDayNano([12, 31, 10**9]),
         pa.MonthDayNano([0, 1, -1])], pa.month_day_nano_interval()),
    "binary": lambda: pa.array([b"a", None, b"", b"\x00\xff", b"x" * 100, b"yz", None, b"q"]),
    "large_binary": lambda: pa.array([b"a", None, b"", b"\x00\xff", b"x" * 100, b"yz", None, b"q"],
                                     pa.large_binary()),
    "fixed_size_binary": lambda: pa.array([b"abc", None, b"\x00\x00\x00", b"xyz", b"\xff\xfe\xfd", None,
                                           b"123", b"456"], pa.binary(3)),
    "binary_view": lambda: pa.array([b"short", None, b"", b"exactly12byt", b"thirteen byte", b"x" * 40,
                                     None, b"\x00" * 12], pa.binary_view()),
    "string": lambda: pa.array(["a", None, "", "héllo", "日本語", "x" * 50, None, "\x00"]),
    "large_string": lambda: pa.array(["a", None, "", "héllo", "日本語", "x" * 50, None, "\x00"],
                                     pa.large_string()),
    "string_view": lambda: pa.array(["short", None, "", "exactly12chr", "thirteen char", "é" * 30, None,
                                     "日本語日本語"], pa.string_view()),
    "list": lambda: pa.array([[1, 2], None, [], [None], [3], [4, 5, 6], None, [7]], pa.list_(pa.int32())),
    "large_list": lambda: pa.array([["a"], None, [], [None, "b"], ["c"], [], None, ["d", "e"]],
                                   pa.large_list(pa.string())),
    "list_view": lambda: _list_view(False),
    "large_list_view": lambda: _list_view(True),
    "fixed_size_list": lambda: pa.array([[1, 2], None, [None, 3], [4, 5], [6, 7], [8, None], None, [9, 10]],
                                        pa.list_(pa.int64(), 2)),
    "list_of_struct": lambda: pa.array([[{"a": 1}], None, [], [{"a": None}, None], [{"a": 2}], [], None,
                                        [{"a": 3}]], pa.list_(pa.struct([("a", pa.int8())]))),
    "struct": _struct,
    "empty_struct": lambda: pa.array([{}, None, {}, {}, None, {}, {}, {}], pa.struct([])),
    "map": lambda: _map(False),
    "map_keys_sorted": lambda: _map(True),
    "sparse_union": _sparse_union,
    "dense_union": _dense_union,
    "dictionary_ordered": lambda: _dictionary(pa.int32(), ordered=True),
    "dictionary_of_ints": lambda: pa.DictionaryArray.from_arrays(
        pa.array([3, 2, 1, 0, None, 0, 1, 2], pa.int16()), pa.array([10, None, -3, 2**40])),
    "list_of_dictionary": lambda: pa.ListArray.from_arrays(
        pa.array([0, 1, 1, 3, 4, 4, 6, 7, 8], pa.int32()), _dictionary(pa.int8())),
    "ree_of_strings": lambda: _ree(pa.int32(), pa.array(["a", None, "ccc", ""])),
    "ree_of_structs": lambda: _ree(pa.int64(), pa.array([{"x": 1}, None, {"x": None}, {"x": 4}])),
}
for _it in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
    CASES[f"dictionary_{_it}"] = (lambda it: lambda: _dictionary(getattr(pa, it)()))(_it)
for _rt in ("int16", "int32", "int64"):
    CASES[f"ree_{_rt}"] = (lambda rt: lambda: _ree(getattr(pa, rt)()))(_rt)
for _unit in ("s", "ms", "us", "ns"):
    for _tz in (None, "UTC", "Europe/Paris", "+05:30"):
        _per = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[_unit]
        CASES[f"timestamp_{_unit}_{_tz}"] = (lambda u, tz, per: lambda: _temporal(
            pa.timestamp(u, tz), [0, -per, None, 1_700_000_000 * per, 1_711_846_800 * per,  # DST switch
                                  -2_208_988_800 * per, 1, None] if u != "ns" else
            [0, -per, None, 1_700_000_000 * per, 1_711_846_800 * per, -2_208_988_800 * per, 1000, None]))(
            _unit, _tz, _per)


@pytest.mark.parametrize("sliced", [False, True], ids=["whole", "sliced"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_type(tmp_path, name, sliced):
    arr = CASES[name]()
    assert len(arr) == N
    batch = pa.record_batch([arr], names=[name])
    if sliced:  # pyarrow writes the sliced array (offset buffers, bitmaps at a bit offset, ...)
        batch = batch.slice(3, 4)
    roundtrip(tmp_path, batch)


def test_all_types_in_one_batch(tmp_path):
    """Every case as a column of one batch: the node and buffer cursors cross every type."""
    arrays = {name: build() for name, build in sorted(CASES.items())}
    batch = pa.record_batch(list(arrays.values()), names=list(arrays))
    roundtrip(tmp_path, [batch, batch.slice(1, 5), batch.slice(7)], deep_all=True)


def test_batch_slice_matches_pyarrow(tmp_path):
    arrays = {name: build() for name, build in sorted(CASES.items())}
    batch = pa.record_batch(list(arrays.values()), names=list(arrays))
    path = write_ipc(tmp_path / "t.arrow", batch)
    mm = arrowmm.open_file(path).get_batch(0)
    for off, length in ((1, 3), (3, 5), (5, None), (7, 1), (8, 0), (2, 100)):
        assert_batch_matches(mm.slice(off, length), batch.slice(off, length), where=f"slice({off}, {length})")
        # slicing a batch whose columns are already decoded, then slicing again
        mm.columns
        assert_batch_matches(mm.slice(off, length).slice(1, 2), batch.slice(off, length).slice(1, 2))


# -- map child names: a documented difference -----------------------------------------------------

def test_duplicate_names(tmp_path):
    """Columns may share a name (rows: the last wins, as in pyarrow); a struct with duplicate
    field names has no dict form (pyarrow raises ValueError, arrowmm ArrowInvalid, a ValueError)."""
    dup = pa.StructArray.from_arrays([pa.array([1, None]), pa.array(["a", "b"])], names=["x", "x"])
    batch = pa.record_batch([pa.array([1, 2]), pa.array([3, None]), dup], names=["a", "a", "s"])
    for readings in roundtrip(tmp_path, batch):
        for reading in readings:
            b = reading.batches[0]
            assert b.column(2).field(0).to_pylist() == [1, None]
            with pytest.raises(arrowmm.ArrowInvalid):
                b.column(2).to_pylist()
            assert b.column(2).slice(1, 0).to_pylist() == dup.slice(1, 0).to_pylist() == []
    ok = batch.select([0, 1])
    for readings in roundtrip(tmp_path, ok, name="ok"):
        for reading in readings:
            assert reading.batches[0].to_pylist() == ok.to_pylist() == [{"a": 3}, {"a": None}]


def test_map_non_canonical_names(tmp_path):
    """pyarrow's IPC reader renames map children to "entries"/"key"/"value"; arrowmm keeps the
    names the file stores (shown as pyarrow shows them: ``map<int32 ('k'), string ('v')>``)."""
    ty = pa.map_(pa.field("k", pa.int32(), False), pa.field("v", pa.string()))
    arr = pa.array([[(1, "a")], None, [], [(2, None), (3, "c")]], ty)
    for path in (write_ipc(tmp_path / "m.arrow", pa.record_batch([arr], names=["m"])),
                 write_ipc(tmp_path / "m.arrows", pa.record_batch([arr], names=["m"]), fmt="stream")):
        oracle = pa_read(path)
        assert str(oracle.schema.field("m").type) == "map<int32, string>"  # pyarrow: canonical
        for reading in read_all_paths(path):
            mm_type = reading.schema.field("m").type
            assert str(mm_type) == str(ty) == "map<int32 ('k'), string ('v')>"
            assert (mm_type.key_field.name, mm_type.item_field.name) == ("k", "v")
            assert not mm_type.key_field.nullable and mm_type.item_field.nullable
            assert_values_equal(reading.batches[0].column(0).to_pylist(), arr.to_pylist())
            assert_values_equal(reading.batches[0].column(0).to_pylist(),
                                oracle.batches[0].column(0).to_pylist())


# -- extension types ----------------------------------------------------------------------------

class RationalType(pa.ExtensionType):
    def __init__(self):
        super().__init__(pa.struct([("num", pa.int32()), ("den", pa.int32())]), "test.rational")

    def __arrow_ext_serialize__(self):
        return b"v1;reduced"

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type, serialized):
        return cls()


@pytest.fixture
def rational_type():
    ty = RationalType()
    pa.register_extension_type(ty)
    yield ty
    pa.unregister_extension_type("test.rational")


def test_extension_type_registered(tmp_path, rational_type):
    storage = pa.array([{"num": 1, "den": 2}, None, {"num": -3, "den": 4}, {"num": 0, "den": 1}],
                       rational_type.storage_type)
    ext = pa.ExtensionArray.from_storage(rational_type, storage)
    nested = pa.ListArray.from_arrays(pa.array([0, 1, 1, 3, 4], pa.int32()), ext)
    batch = pa.record_batch([ext, nested], schema=pa.schema(
        [pa.field("r", rational_type, metadata={"unit": "none"}), pa.field("l", nested.type)]))
    for readings in roundtrip(tmp_path, batch):
        for reading in readings:
            f = reading.schema.field("r")
            assert str(f.type) == "struct<num: int32, den: int32>"  # the storage type
            assert f.metadata == {"unit": "none", "ARROW:extension:name": "test.rational",
                                  "ARROW:extension:metadata": "v1;reduced"}
            child = reading.schema.field("l").type.value_field
            assert child.metadata["ARROW:extension:name"] == "test.rational"


CANONICAL = {
    "uuid": lambda: pa.ExtensionArray.from_storage(
        pa.uuid(), pa.array([b"0123456789abcdef", None, bytes(range(16))], pa.binary(16))),
    "json": lambda: pa.ExtensionArray.from_storage(pa.json_(), pa.array(['{"a": 1}', None, "[]"])),
    "bool8": lambda: pa.ExtensionArray.from_storage(pa.bool8(), pa.array([1, 0, None], pa.int8())),
}


@pytest.mark.parametrize("name", sorted(CANONICAL))
def test_canonical_extension_types(tmp_path, name):
    if not hasattr(pa, {"uuid": "uuid", "json": "json_", "bool8": "bool8"}[name]):
        pytest.skip(f"this pyarrow has no {name} type")
    arr = CANONICAL[name]()
    for readings in roundtrip(tmp_path, pa.record_batch([arr], names=["x"])):
        for reading in readings:
            f = reading.schema.field("x")
            assert str(f.type) == str(arr.type)  # pyarrow's field type: the extension
            assert f.type.storage_type == f.storage_type
            assert str(f.storage_type) == str(arr.type.storage_type)
            assert f.metadata is None  # (pyarrow shows none: the entries name the type)
            assert f.storage_metadata["ARROW:extension:name"] == arr.type.extension_name
            assert "ARROW:extension:metadata" in f.storage_metadata


# -- metadata at every level --------------------------------------------------------------------

def test_custom_metadata_schema_field_message(tmp_path):
    inner = pa.field("x", pa.int8(), metadata={"inner": "1"})
    schema = pa.schema([pa.field("a", pa.int32(), metadata={"unit": "m", "empty": ""}),
                        pa.field("s", pa.struct([inner]), metadata={"k": "v"}),
                        pa.field("l", pa.list_(pa.field("it", pa.string(), metadata={"li": "é"})))],
                       metadata={"origin": "test", "multi\nline": "ü\x01"})
    b = pa.record_batch([pa.array([1, 2]), pa.array([{"x": 1}, None], schema.field("s").type),
                         pa.array([["a"], None], schema.field("l").type)], schema=schema)
    mds = [{"batch": "0", "rows": "2"}, None, {"batch": "2"}]
    for readings in roundtrip(tmp_path, [b, b, b.slice(1)], batch_metadata=mds):
        for reading in readings:
            assert reading.schema.metadata == {"origin": "test", "multi\nline": "ü\x01"}
            assert [bt.metadata or None for bt in reading.batches] == mds
            assert reading.schema.field("l").type.value_field.metadata == {"li": "é"}
    reader = arrowmm.open_file(tmp_path / "data.arrow")
    assert reader.schema.metadata == {"origin": "test", "multi\nline": "ü\x01"}
    # the footer has none (pyarrow's RecordBatchFileReader.metadata is None): the schema's
    assert pa.ipc.open_file(tmp_path / "data.arrow").metadata is None
    assert reader.metadata == {"origin": "test", "multi\nline": "ü\x01"}


# -- empty things -------------------------------------------------------------------------------

def test_empty_batches_and_zero_length_arrays(tmp_path):
    arrays = {name: build() for name, build in sorted(CASES.items())}
    batch = pa.record_batch(list(arrays.values()), names=list(arrays))
    empty = batch.slice(0, 0)
    readings = roundtrip(tmp_path, [empty, batch, empty, batch.slice(8)], deep_all=True)
    for reading in readings[0] + readings[1]:
        assert [b.num_rows for b in reading.batches] == [0, N, 0, 0]
        for col in reading.batches[0].columns:
            assert len(col) == 0 and col.to_pylist() == [] and col.null_count == 0


@pytest.mark.parametrize("name", ["int64", "string", "struct", "dictionary_int8", "list_view"])
def test_zero_batches(tmp_path, name):
    schema = pa.schema([pa.field(name, CASES[name]().type)])
    for fmt in ("file", "stream"):
        path = write_ipc(tmp_path / f"z.{fmt}", [], schema=schema, fmt=fmt)
        for reading in read_all_paths(path):
            assert reading.batches == [] and str(reading.schema.field(0).type) == str(schema[0].type)
        if fmt == "file":
            assert arrowmm.open_file(path).num_record_batches == 0


# -- compression and legacy formats -------------------------------------------------------------

@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_compression(tmp_path, codec):
    arrays = {name: build() for name, build in sorted(CASES.items())}
    batch = pa.record_batch(list(arrays.values()), names=list(arrays))
    big = pa.record_batch([pa.array(np.arange(10_000) % 7), pa.array(["abc"] * 10_000)], names=["n", "s"])
    opts = pa.ipc.IpcWriteOptions(compression=codec)
    for data, name in (([batch, batch.slice(2, 3)], "all"), (big, "big")):
        for path in (write_ipc(tmp_path / f"{name}.arrow", data, options=opts),
                     write_ipc(tmp_path / f"{name}.arrows", data, fmt="stream", options=opts)):
            assert_same_as_pyarrow(path, views=False)  # decompressed buffers are new memory
    reader = arrowmm.open_file(tmp_path / "big.arrow")
    reader.get_batch(0).columns
    assert reader.stats.buffers_decompressed > 0


def test_legacy_v4_format(tmp_path):
    """Metadata version V4 with the pre-0.15 4-byte length prefix (no continuation marker)."""
    names = [n for n in sorted(CASES) if "view" not in n and not n.startswith("ree")
             and "union" not in n and not n.startswith("decimal32") and not n.startswith("decimal64")]
    batch = pa.record_batch([CASES[n]() for n in names], names=names)
    opts = pa.ipc.IpcWriteOptions(metadata_version=pa.ipc.MetadataVersion.V4, use_legacy_format=True)
    paths = [write_ipc(tmp_path / "v4.arrow", [batch, batch.slice(3)], options=opts),
             write_ipc(tmp_path / "v4.arrows", [batch, batch.slice(3)], fmt="stream", options=opts)]
    for path in paths:
        assert_same_as_pyarrow(path)
    data = Path(paths[1]).read_bytes()
    msg = read_message_at(arrowmm.Region(data), 0, 0)
    assert msg.legacy_prefix and msg.record.version == MetadataVersion.V4
    batch_msg = read_message_at(arrowmm.Region(data), msg.body.offset + msg.body.size, 1)
    assert batch_msg.legacy_prefix and batch_msg.record.version == MetadataVersion.V4


def test_legacy_v4_run_end_encoded(tmp_path):
    ree = pa.RunEndEncodedArray.from_arrays(pa.array([2, 3], pa.int32()), pa.array([1, None], pa.int8()))
    batch = pa.record_batch([ree], names=["r"])
    opts = pa.ipc.IpcWriteOptions(metadata_version=pa.ipc.MetadataVersion.V4)
    for fmt in ("file", "stream"):
        assert_same_as_pyarrow(write_ipc(tmp_path / f"r.{fmt}", batch, fmt=fmt, options=opts))


def test_legacy_v4_message_metadata(tmp_path):
    """V4 record batch messages with custom metadata: arrowmm reads them (pyarrow 26's reader
    cannot: "Only LZ4_FRAME and ZSTD compression allowed"), so the oracle is the written data."""
    batch = pa.record_batch([pa.array([1, None, 3], pa.int16())], names=["x"])
    opts = pa.ipc.IpcWriteOptions(metadata_version=pa.ipc.MetadataVersion.V4)
    for fmt in ("file", "stream"):
        path = write_ipc(tmp_path / f"m.{fmt}", [batch, batch.slice(1)], fmt=fmt, options=opts,
                         batch_metadata=[{"m": "0"}, None])
        with pytest.raises(pa.ArrowInvalid):
            pa_read(path)
        for reading in read_all_paths(path):
            assert [b.metadata or None for b in reading.batches] == [{"m": "0"}, None], reading.label
            assert [b.column(0).to_pylist() for b in reading.batches] == [[1, None, 3], [None, 3]]


def test_legacy_v4_unions(tmp_path):
    """V4 unions carry a (pre-1.0) validity buffer slot."""
    batch = pa.record_batch([_sparse_union(), _dense_union()], names=["s", "d"])
    opts = pa.ipc.IpcWriteOptions(metadata_version=pa.ipc.MetadataVersion.V4)
    for fmt in ("file", "stream"):
        assert_same_as_pyarrow(write_ipc(tmp_path / f"u.{fmt}", batch, fmt=fmt, options=opts))


# -- dictionaries across batches ----------------------------------------------------------------

def _dict_batches():
    schema = pa.schema([pa.field("d", pa.dictionary(pa.int16(), pa.string())),
                        pa.field("l", pa.list_(pa.dictionary(pa.int8(), pa.int64())))])

    def batch(idx, words, lidx, nums, offsets):
        d = pa.DictionaryArray.from_arrays(pa.array(idx, pa.int16()), pa.array(words))
        inner = pa.DictionaryArray.from_arrays(pa.array(lidx, pa.int8()), pa.array(nums))
        return pa.record_batch([d, pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), inner)],
                               schema=schema)

    return schema, [batch([0, 1, None], ["a", "b"], [0, 1], [10, 20], [0, 1, 1, 2]),
                    batch([2, 0, 3], ["a", "b", "c", "d"], [2, 0], [10, 20, 30], [0, 2, 2, 2]),
                    batch([4, None, 1], ["a", "b", "c", "d", "e"], [3, 3], [10, 20, 30, 40], [0, 0, 1, 2])]


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_dictionary_deltas(tmp_path, fmt):
    schema, batches = _dict_batches()
    opts = pa.ipc.IpcWriteOptions(emit_dictionary_deltas=True)
    path = write_ipc(tmp_path / f"delta.{fmt}", batches, schema=schema, fmt=fmt, options=opts)
    readings = assert_same_as_pyarrow(path, deep_all=True)
    for reading in readings:
        assert [b.column("d").to_pylist() for b in reading.batches] == \
            [["a", "b", None], ["c", "a", "d"], ["e", None, "b"]]
        assert len(reading.batches[2].column("d").dictionary) == 5


DELTA_VALUE_TYPES = ["binary_view", "string_view", "list_view", "large_list_view", "sparse_union",
                     "dense_union", "ree_int16", "ree_of_strings", "ree_of_structs", "map", "struct",
                     "fixed_size_list", "bool", "decimal256", "timestamp_ns_UTC", "large_string",
                     "fixed_size_binary", "month_day_nano_interval", "list_of_struct", "empty_struct"]


@pytest.mark.parametrize("fmt", ["file", "stream"])
@pytest.mark.parametrize("name", DELTA_VALUE_TYPES)
def test_dictionary_deltas_of_every_value_type(tmp_path, name, fmt):
    """Delta dictionary batches append to dictionaries of every layout (arrowmm concatenates)."""
    values = CASES[name]()
    ty = pa.dictionary(pa.int8(), values.type)
    batches = [pa.record_batch([pa.DictionaryArray.from_arrays(pa.array(idx, pa.int8()), values.slice(0, k))],
                               schema=pa.schema([pa.field("d", ty)]))
               for k, idx in ((3, [0, 1, 2, None]), (6, [5, 3, 4, 0]), (8, [7, 6, None, 1]))]
    opts = pa.ipc.IpcWriteOptions(emit_dictionary_deltas=True)
    path = write_ipc(tmp_path / f"d.{fmt}", batches, fmt=fmt, options=opts)
    readings = assert_same_as_pyarrow(path, deep_all=True)
    for reading in readings:
        assert len(reading.batches[2].column(0).dictionary) == 8, reading.label


def test_dictionary_replacements_in_stream(tmp_path):
    schema = pa.schema([pa.field("d", pa.dictionary(pa.int32(), pa.string()))])
    words = [["x", "y"], ["p", "q", "r"], ["x"], ["z", "y"]]
    batches = [pa.record_batch([pa.DictionaryArray.from_arrays(pa.array(list(range(len(w)))[::-1],
                                                                        pa.int32()), pa.array(w))],
                               schema=schema) for w in words]
    for opts in (None, pa.ipc.IpcWriteOptions(emit_dictionary_deltas=True)):
        path = write_ipc(tmp_path / "repl.arrows", batches, schema=schema, fmt="stream", options=opts)
        readings = assert_same_as_pyarrow(path, deep_all=True)
        for reading in readings:
            # each batch keeps the dictionary it was read with, even after later replacements
            assert [b.column(0).to_pylist() for b in reading.batches] == [w[::-1] for w in words]


def _nested_dictionary_messages(words, indices, **options) -> list:
    """pyarrow's messages for two batches of a dictionary<list<dictionary<string>>> column (the
    second's outer dictionary one list per word of ``words``, its indices ``indices``):
    [schema, inner 1, outer 1, batch 1, inner 2, outer 2, batch 2, end of stream]."""
    def batch(words, indices):
        inner = pa.DictionaryArray.from_arrays(pa.array(range(len(words)), pa.int32()), pa.array(words))
        values = pa.ListArray.from_arrays(pa.array(range(len(words) + 1), pa.int32()), inner)
        return pa.record_batch([pa.DictionaryArray.from_arrays(pa.array(indices, pa.int16()),
                                                               values)], names=["o"])

    data = ipc_bytes([batch(["a", "b"], [0, 1, 1]), batch(words, indices)], fmt="stream", **options)
    reader = pa.ipc.MessageReader.open_stream(pa.BufferReader(data))
    return [m.serialize().to_pybytes() for m in reader] + [b"\xff\xff\xff\xff\x00\x00\x00\x00"]


# Orders of those messages other producers may send (each valid, read alike by pyarrow): the
# second batch, read with the dictionaries in force when it is read
_REPLACED = (["z", "y"], [1, 0, 0])
NESTED_ORDERS = {
    "inner replaced, outer not sent again": (_REPLACED, {}, (0, 1, 2, 3, 4, 6, 7),
                                             [["y"], ["z"], ["z"]]),
    "outer sent again, then inner replaced": (_REPLACED, {}, (0, 1, 2, 3, 5, 4, 6, 7),
                                              [["y"], ["z"], ["z"]]),
    "outer before its inner": (_REPLACED, {}, (0, 2, 1, 3, 5, 4, 6, 7), [["y"], ["z"], ["z"]]),
    "outer delta before the inner delta": ((["a", "b", "c"], [2, 1, 0]),
                                           {"emit_dictionary_deltas": True},
                                           (0, 1, 2, 3, 5, 4, 6, 7), [["c"], ["b"], ["a"]]),
}


@pytest.mark.parametrize("case", list(NESTED_ORDERS))
def test_nested_dictionaries_are_bound_when_a_record_batch_is_read(tmp_path, case):
    """As Arrow C++: a dictionary's dictionaries are those in force at the record batch, not at
    the outer dictionary batch (a batch read the inner values of an earlier one, or failed)."""
    (words, indices), options, order, second = NESTED_ORDERS[case]
    messages = _nested_dictionary_messages(words, indices, **options)
    path = tmp_path / "nested.arrows"
    path.write_bytes(b"".join(messages[i] for i in order))
    # each batch taken as pyarrow reads it (C++ binds the inner dictionary into the outer one
    # in place: a batch kept while a later one is read changes under its holder)
    expected = [b.column(0).to_pylist() for b in pa.ipc.open_stream(str(path))]
    assert expected[-1] == second
    for reading in read_all_paths(path):
        for b in reading.batches:
            b.validate(full=True)
        assert [b.column(0).to_pylist() for b in reading.batches] == expected, reading.label
    with arrowmm.index_stream(str(path)) as r:
        assert [r.get_batch(i).column(0).to_pylist() for i in (1, 0)] == expected[::-1]
    with arrowmm.open_stream(str(path)) as r:
        assert pa.table(r).column(0).to_pylist() == expected[0] + expected[1]


def test_file_dictionary_replacement_is_refused_by_pyarrow(tmp_path):
    """The file format has one dictionary per id (deltas aside): pyarrow refuses to write more."""
    _, batches = _dict_batches()
    with pytest.raises(pa.ArrowInvalid):
        write_ipc(tmp_path / "r.arrow", [batches[0], batches[0].slice(0, 0),
                                         pa.record_batch([pa.DictionaryArray.from_arrays(
                                             pa.array([0], pa.int16()), pa.array(["zz"])),
                                             batches[0].column(1).slice(0, 1)], schema=batches[0].schema)])

"""Review 4's cast findings (s45), pyarrow as the oracle: C1, casts of zero-length arrays of
every type (and of dictionaries of decimal128/256, which probe the cast on an empty slice of
their dictionary)."""
from decimal import Decimal

import pyarrow as pa
import pytest

import arrowmm
from tests.support.helpers import column_read_back


def _mm_type(pa_type):
    """The arrowmm type of a pyarrow type (through the C data interface)."""
    return arrowmm.array(pa.nulls(0, pa_type)).type


# -- C1: zero-length casts -------------------------------------------------------------------

SAMPLES = [pa.array([1, None], ty) for ty in (
    pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(),
    pa.uint64(), pa.float32(), pa.float64(), pa.date32(), pa.time32("s"), pa.time32("ms"),
    pa.time64("us"), pa.time64("ns"), pa.timestamp("s"), pa.timestamp("ms", "UTC"),
    pa.timestamp("us", "America/New_York"), pa.timestamp("ns", "+05:30"), pa.duration("s"),
    pa.duration("ns"))] + [
    pa.array([1, None], pa.int8()).cast(pa.float16()),
    pa.array([True, None]),
    pa.array([86_400_000, None], pa.date64()),
    *(pa.array(["1", None], ty) for ty in (pa.string(), pa.large_string(), pa.string_view())),
    *(pa.array([b"1", None], ty) for ty in (pa.binary(), pa.large_binary(), pa.binary_view())),
    pa.array([b"abc", None], pa.binary(3)),
    *(pa.array([Decimal("0.5"), None], ty) for ty in (
        pa.decimal32(7, 2), pa.decimal64(18, 4), pa.decimal128(38, 10), pa.decimal256(76, 2),
        pa.decimal128(3, 3))),
    pa.array([pa.MonthDayNano([1, 2, 3]), None], pa.month_day_nano_interval()),
    pa.nulls(2),
    pa.array([[1], None], pa.list_(pa.int32())),
    pa.array([["a"], None], pa.large_list(pa.string())),
    pa.array([[1, 2], None], pa.list_(pa.int32(), 2)),
    pa.array([[1], None], pa.list_view(pa.int32())),
    pa.array([{"a": 1}, None], pa.struct([("a", pa.int32())])),
    pa.array([[("k", 1)], None], pa.map_(pa.string(), pa.int32())),
    pa.array(["a", None]).dictionary_encode(),
    pa.array([1, None]).dictionary_encode(),
    *(pa.DictionaryArray.from_arrays(pa.array([0, None], pa.int32()),
                                     pa.array([Decimal("1.5")], ty))
      for ty in (pa.decimal128(20, 2), pa.decimal256(40, 2))),
    pa.RunEndEncodedArray.from_arrays(pa.array([1, 2], pa.int32()), pa.array([5, None],
                                                                             pa.int32())),
]


def _pyarrow_casts(sample: pa.Array, target: pa.DataType) -> bool:
    """Whether pyarrow casts ``sample`` (a value and a null) to ``target`` (pyarrow returns []
    for every zero-length cast, even of the pairs it refuses on data: not the test here)."""
    try:
        sample.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return False
    return True


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda a: str(a.type))
def test_a_zero_length_cast_is_pyarrows_empty_array(sample):
    column, _ = column_read_back(sample)
    found = []
    for empty in (column.slice(len(column)), column.slice(1, 0)):  # (past the end; inside)
        for target in (s.type for s in SAMPLES):
            try:
                got = empty.cast(_mm_type(target))
            except arrowmm.ArrowError as exc:  # (never a bare ValueError: see C1)
                if _pyarrow_casts(sample, target):
                    found.append((str(target), empty.offset, repr(exc)))
                continue
            if str(got.type) != str(target) or got.to_pylist() != []:
                found.append((str(target), empty.offset, str(got.type), got.to_pylist()))
    assert not found


@pytest.mark.parametrize("dtype", [pa.decimal128(20, 2), pa.decimal256(40, 2)], ids=str)
@pytest.mark.parametrize("target", [pa.float64(), pa.string(), pa.int64(), pa.decimal128(10, 1)],
                         ids=str)
def test_a_dictionary_of_wide_decimals_casts_as_pyarrow(dtype, target):
    encoded = pa.DictionaryArray.from_arrays(pa.array([0, None, 0], pa.int32()),
                                             pa.array([Decimal("2"), Decimal("-20.5")], dtype))
    column, _ = column_read_back(encoded)
    got = column.cast(_mm_type(target))
    assert pa.array(got).equals(encoded.cast(target))


def test_table_cast_after_a_filter_that_kept_nothing():
    table = pa.table({"c": pa.array([Decimal("1.5"), None], pa.decimal128(38, 10)),
                      "x": pa.array([1, 2])})
    column, _ = column_read_back(table.column("c").chunks[0])
    mm_table = arrowmm.Table.from_arrays([column, arrowmm.array([1, 2])], names=["c", "x"])
    empty = mm_table.filter(arrowmm.field("x") > 5)
    target = arrowmm.schema([("c", arrowmm.float64()), ("x", arrowmm.int64())])
    got = empty.cast(target)
    assert got.num_rows == 0 and got.schema == target


# -- W4: temporal casts past int32 days or int64 --------------------------------------------

def _int_values(array: pa.Array) -> list:
    """The stored integers of a temporal array (nulls as None), past ``datetime``'s range too."""
    return array.view(pa.int32() if array.type.bit_width == 32 else pa.int64()).to_pylist()


def _temporal(values: list, dtype: pa.DataType) -> pa.Array:
    return pa.array(values, pa.int32() if dtype.bit_width == 32 else pa.int64()).view(dtype)


# (a null, a plain value, then one whose day count is past int32 or whose ms overflow int64)
PAST_INT32_DAYS = [(pa.timestamp("s"), 2**62), (pa.timestamp("ms"), 2**62),
                   (pa.timestamp("s"), -2**63), (pa.timestamp("ms", "UTC"), 2**63 - 1),
                   (pa.timestamp("s", "America/New_York"), 2**62),
                   (pa.timestamp("s", "+05:30"), -2**62)]


@pytest.mark.parametrize("target", [pa.date32(), pa.date64()], ids=str)
@pytest.mark.parametrize("dtype, value", PAST_INT32_DAYS, ids=str)
def test_timestamp_to_date_past_int32_days_raises_naming_the_slot(dtype, value, target):
    source = _temporal([None, 86_400 * 1000, value], dtype)
    column = arrowmm.array(source)
    day = value // (86_400 * {"s": 1, "ms": 1000}[dtype.unit])
    if target == pa.date64() and abs(day) <= 2**63 // 86_400_000 and dtype.tz in (None, "UTC"):
        # (the milliseconds fit: the exact date, where pyarrow wraps the int32 days)
        got = column.cast(_mm_type(target))
        assert _int_values(pa.array(got)) == [None, _int_values(source.cast(target))[1],
                                              day * 86_400_000]
    else:
        with pytest.raises(arrowmm.ArrowInvalid, match=f"out of bounds .*slot 2 holds {value}"):
            column.cast(_mm_type(target))
    # safe=False: pyarrow's wrap, bit for bit
    got = column.cast(_mm_type(target), safe=False)
    assert _int_values(pa.array(got)) == _int_values(source.cast(target, safe=False))


@pytest.mark.parametrize("value", [2**62 - 2**62 % 86_400_000, -(2**62 - 2**62 % 86_400_000)])
def test_date64_to_date32_past_int32_days_raises_as_pyarrow(value):
    source = _temporal([None, 0, value], pa.date64())
    with pytest.raises(pa.ArrowInvalid, match="would lose data"):
        source.cast(pa.date32())
    with pytest.raises(arrowmm.ArrowInvalid, match=f"would lose data: {value} \\(slot 2\\)"):
        arrowmm.array(source).cast(arrowmm.date32())
    got = arrowmm.array(source).cast(arrowmm.date32(), safe=False)
    assert _int_values(pa.array(got)) == _int_values(source.cast(pa.date32(), safe=False))


@pytest.mark.parametrize("target", [pa.time64("ns"), pa.date64(), pa.date32()], ids=str)
@pytest.mark.parametrize("value", [2**63 - 1, -2**63 + 10**12])
def test_a_zone_offset_past_int64_raises(value, target):
    # (+05:30 takes the largest timestamps past int64 in wall-clock time; -05:30 the smallest)
    dtype = pa.timestamp("ns", "+05:30" if value > 0 else "-05:30")
    source = _temporal([None, value], dtype)
    with pytest.raises(arrowmm.ArrowInvalid, match=f"local time: slot 1 holds {value}"):
        arrowmm.array(source).cast(_mm_type(target))
    got = arrowmm.array(source).cast(_mm_type(target), safe=False)
    assert _int_values(pa.array(got)) == _int_values(source.cast(target, safe=False))


# -- E4: pyarrow types and schemas as cast targets; concat_tables' promote_options -----------

def _two_chunks():
    table = pa.table({"x": pa.chunked_array([[3, 1, None], [2, 5]]), "s": [["a"], None, [], ["b"],
                                                                          ["c", "d"]]})
    return table, arrowmm.table(table)


def test_cast_takes_a_pyarrow_type_or_schema():
    table, mt = _two_chunks()
    assert pa.array(mt.column("x").chunks[0].cast(pa.int32())).equals(
        table["x"].chunks[0].cast(pa.int32()))
    assert pa.chunked_array(mt.column("x").cast(pa.float32())).equals(
        table["x"].cast(pa.float32()))
    target = pa.schema([("x", pa.int16()), ("s", pa.list_(pa.string()))])
    assert pa.table(mt.cast(target)).equals(table.cast(target))
    assert pa.record_batch(mt.to_batches()[1].cast(target)).equals(
        table.to_batches()[1].cast(target))
    assert arrowmm.nulls(2, pa.int16()).type == arrowmm.int16()  # (the same conversion)
    with pytest.raises(TypeError, match="target_schema must be a Schema"):
        mt.cast({"x": "int16"})


def _concat_cases():
    one = pa.table({"x": pa.array([1, 2]), "n": pa.nulls(2)})
    two = pa.table({"x": pa.array([3]), "n": pa.array(["a"]), "y": pa.array([1.5])})
    narrow = pa.table({"x": pa.array([4], pa.int32()), "n": pa.array([5], pa.int8())})
    structs = (pa.table({"s": pa.array([{"a": 1}])}), pa.table({"s": pa.array([{"b": "x"}])}))
    return [("one schema", [one, one.slice(1)], "default"),
            ("null column, missing column", [one, two], "default"),
            ("missing column first", [two, one, two], "default"),
            ("structs merge", list(structs), "default"),
            ("widened", [narrow, pa.table({"x": pa.array([6]), "n": pa.array([7], pa.int16())})],
             "permissive")]


@pytest.mark.parametrize("tables, promote_options",
                         [case[1:] for case in _concat_cases()],
                         ids=[case[0] for case in _concat_cases()])
def test_concat_tables_promotes_as_pyarrow(tables, promote_options):
    want = pa.concat_tables(tables, promote_options=promote_options)
    got = arrowmm.concat_tables([arrowmm.table(tab) for tab in tables],
                                promote_options=promote_options)
    assert pa.table(got).equals(want)
    assert [c.num_chunks for c in got.columns] == [c.num_chunks for c in want.columns]


def test_concat_tables_promotion_refusals_are_pyarrows():
    wide, narrow = pa.table({"x": pa.array([1])}), pa.table({"x": pa.array([1], pa.int32())})
    with pytest.raises(pa.ArrowTypeError, match="incompatible types"):
        pa.concat_tables([wide, narrow], promote_options="default")
    with pytest.raises(arrowmm.ArrowTypeError, match="incompatible types: int64 vs int32"):
        arrowmm.concat_tables([arrowmm.table(wide), arrowmm.table(narrow)],
                              promote_options="default")
    with pytest.raises(ValueError, match="Invalid promote"):
        arrowmm.concat_tables([arrowmm.table(wide)], promote_options="bogus")


def test_concat_tables_a_missing_non_nullable_column_becomes_nullable():
    # (pyarrow keeps "x: int64 not null" and fills a null into it: a schema its data breaks)
    strict = pa.table({"x": pa.array([1])}, schema=pa.schema([pa.field("x", pa.int64(), False)]))
    other = pa.table({"z": pa.array([2])})
    got = arrowmm.concat_tables([arrowmm.table(strict), arrowmm.table(other)],
                                promote_options="default")
    assert got.schema.field("x").nullable and got.to_pydict() == {"x": [1, None], "z": [None, 2]}
    assert pa.concat_tables([strict, other], promote_options="default").to_pydict() == \
        got.to_pydict()

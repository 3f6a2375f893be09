"""The Python Spark source's casts to what Spark holds (a user-given schema, or the ``cast``
option) never wrap a value (review, session 43: ``schema("x INT")`` over int64 read
4294967301 as 5); the one loss meant is a time cut to Spark's microseconds.  Checked at the
function a task runs, without a Spark session."""
import datetime

import pyarrow as pa
import pytest

import arrowmm
from arrowmm.spark.planning import to_spark_batch


def _batch(**columns):
    return arrowmm.record_batch(pa.record_batch(columns))


def test_a_value_the_requested_type_cannot_hold_is_an_error_naming_the_column():
    batch = _batch(x=pa.array([2**32 + 5, 7, -2**40]))
    with pytest.raises(arrowmm.ArrowInvalid, match=r"column 'x': its int64 values do not all "
                                                   r"fit the requested int32"):
        to_spark_batch(batch, pa.schema([("x", pa.int32())]))
    fits = _batch(x=pa.array([5, 7, -2**20]))
    assert to_spark_batch(fits, pa.schema([("x", pa.int32())])).column("x").to_pylist() == \
        [5, 7, -2**20]


def test_seconds_past_int64_microseconds_are_an_error_not_a_wrapped_date():
    batch = _batch(t=pa.array([10**13, 0], pa.timestamp("s")))
    with pytest.raises(arrowmm.ArrowInvalid, match="column 't'"):
        to_spark_batch(batch, pa.schema([("t", pa.timestamp("us"))]))


def test_finer_times_are_cut_to_microseconds_nested_too():
    batch = _batch(t=pa.array([1_500_000_001, None], pa.timestamp("ns", "UTC")),
                   d=pa.array([2_999, 5], pa.duration("ns")),
                   lt=pa.array([[1_999], []], pa.list_(pa.timestamp("ns"))))
    target = pa.schema([("t", pa.timestamp("us", "UTC")), ("d", pa.duration("us")),
                        ("lt", pa.list_(pa.timestamp("us")))])
    out = to_spark_batch(batch, target)
    assert out.schema.equals(target)
    assert out.column("t").cast(pa.int64()).to_pylist() == [1_500_000, None]
    assert out.column("d").cast(pa.int64()).to_pylist() == [2, 0]
    assert out.column("lt").to_pylist()[0][0] == pa.scalar(1, pa.timestamp("us")).as_py()


@pytest.mark.parametrize("column", [
    pa.array([86_400_000 * (2**32 + 5) + 1000, 86_400_000 * 3 + 1000], pa.date64()),
    pa.array([86_400 * (2**32 + 5), 86_400 * 3 + 1], pa.timestamp("s"))])
def test_a_day_past_date32_is_an_error_and_a_time_of_day_is_cut(column):
    # (review, session 43: pyarrow's cast to date32 wraps such a day, safe or not: 1970-01-06)
    with pytest.raises(arrowmm.ArrowInvalid, match=r"column 'd': value \d+ .* falls on day "
                                                   r"4294967301"):
        to_spark_batch(_batch(d=column), pa.schema([("d", pa.date32())]))
    out = to_spark_batch(_batch(d=column.slice(1)), pa.schema([("d", pa.date32())]))
    assert out.column("d").to_pylist() == [datetime.date(1970, 1, 4)]


@pytest.mark.parametrize("column,target", [
    (pa.StructArray.from_arrays([pa.array(["a", "b"], pa.large_string()),
                                 pa.array([1_500, 2_000_000_001], pa.timestamp("ns"))],
                                names=["s", "t"]),
     pa.struct([("s", pa.string()), ("t", pa.timestamp("us"))])),
    (pa.array([1_500, 2_000_000_001], pa.timestamp("ns")).dictionary_encode(),
     pa.timestamp("us")),
    (pa.array([[1_500], [2_000_000_001]], pa.large_list(pa.timestamp("ns"))),
     pa.list_(pa.timestamp("us")))])
def test_the_time_cut_is_made_when_its_container_changes_too(column, target):
    # (review, session 43: the first safe casts refused these: what option("cast") promises
    # for pandas' nanosecond datetimes beside its large strings)
    out = to_spark_batch(_batch(c=column), pa.schema([("c", target)]))
    assert out.column("c").type == target
    times = out.column("c")
    times = times.field("t") if pa.types.is_struct(target) else \
        times.flatten() if pa.types.is_list(target) else times
    assert times.cast(pa.int64()).to_pylist() == [1, 2_000_000]
    wide = _batch(c=pa.StructArray.from_arrays([pa.array(["a"], pa.large_string()),
                                                pa.array([2**40], pa.timestamp("ns"))],
                                               names=["s", "t"]))
    with pytest.raises(arrowmm.ArrowInvalid, match="column 'c'"):  # (a wrap is still refused)
        to_spark_batch(wide, pa.schema([("c", pa.struct([("s", pa.int8()),
                                                         ("t", pa.timestamp("us"))]))]))

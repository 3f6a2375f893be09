"""The Python Spark source's casts to what Spark holds (a user-given schema, or the ``cast``
option) never wrap a value (review, session 43: ``schema("x INT")`` over int64 read
4294967301 as 5); the one loss meant is a time cut to Spark's microseconds.  Checked at the
function a task runs, without a Spark session."""
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

"""A run-end encoded column converts to pandas as its decoded values do, as pyarrow's (review
22: F7): it skipped the values' rules, so dates came back as datetime64 Timestamps and
``integer_object_nulls`` left integers as floats."""
import datetime

import pyarrow as pa
import pytest

import arrowmm


def _ree(values, dtype, ends=(1, 3, 4)):
    return pa.RunEndEncodedArray.from_arrays(pa.array(list(ends), pa.int32()),
                                             pa.array(values, dtype))


@pytest.mark.parametrize("column,options", [
    (_ree([1, None, 19_000], pa.date32()), {}),
    (_ree([1, None, 19_000], pa.date32()), {"date_as_object": False}),  # (datetime64[ms])
    (_ree([1, None, 19_000], pa.date32()).slice(1, 3), {}),
    (_ree([86_400_000, None, 0], pa.date64()), {"integer_object_nulls": True}),
    (_ree([2**53 + 1, None, 5], pa.int64()), {"integer_object_nulls": True}),
], ids=["date32", "date32_as_datetime64", "date32_sliced", "date64", "int64_object_nulls"])
def test_run_end_encoded_converts_as_its_values(column, options):
    want = pa.table({"c": column}).to_pandas(**options)["c"]
    got = arrowmm.table(pa.table({"c": column})).to_pandas(**options)["c"]
    assert got.dtype == want.dtype
    assert repr(got.tolist()) == repr(want.tolist())


def test_run_end_encoded_dates_are_dates_from_an_array_too():
    got = arrowmm.array(_ree([1, None, 2], pa.date32())).to_pandas()
    assert got.tolist() == [datetime.date(1970, 1, 2), None, None, datetime.date(1970, 1, 3)]

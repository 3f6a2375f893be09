"""Review 10's construction findings (s47), pyarrow as the oracle: pandas input converted by its
dtype (W2-W5, E1, T1), numpy casts that wrapped or crashed (W1, E3, E4, L3, L4), lossy Python
values (L1, L2), concat_tables' message (M1) and Table/RecordBatch.from_pandas (O2)."""
import datetime as dt
import re
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import arrowmm


def _same_as_pyarrow(obj, **kw):
    """(pyarrow's type and values, arrowmm's), timestamps compared as their stored ints."""
    p, a = pa.array(obj, **kw), arrowmm.array(obj, **kw)
    if pa.types.is_timestamp(p.type) or pa.types.is_duration(p.type):
        return (str(p.type), p.cast(pa.int64()).to_pylist()), \
            (str(a.type), a.to_pylist(temporal="int"))
    return (str(p.type), p.to_pylist()), (str(a.type), a.to_pylist())


# -- W1, E3: numpy values cast to integer types ---------------------------------------------

@pytest.mark.parametrize("values, target, below", [
    (np.array([2.0 ** 63]), arrowmm.int64(), np.nextafter(2.0 ** 63, 0)),
    (np.array([2.0 ** 63], np.float32), arrowmm.int64(), -2.0 ** 63),
    (np.array([2.0 ** 64]), arrowmm.uint64(), np.nextafter(2.0 ** 64, 0)),
])
def test_w1_float_at_the_integer_bound_is_refused_not_wrapped(values, target, below):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no numpy cast warning leaks either)
        with pytest.raises(arrowmm.ArrowInvalid, match="out of range"):
            arrowmm.array(values, target)
        assert arrowmm.array(np.array([below], values.dtype), target).to_pylist() == \
            pa.array(np.array([below], values.dtype), pa.from_numpy_dtype(target.numpy_dtype)
                     ).to_pylist()


def test_w1_table_with_schema_refuses_the_float_that_wrapped():
    with pytest.raises(arrowmm.ArrowInvalid, match="out of range"):
        arrowmm.table({"x": np.array([2.0 ** 63])}, schema=arrowmm.schema([("x", arrowmm.int64())]))
    # (a narrow type's bounds are exact floats: its maximum itself fits)
    assert arrowmm.array(np.array([127.0, -128.0]), arrowmm.int8()).to_pylist() == [127, -128]
    with pytest.raises(arrowmm.ArrowInvalid, match="out of range"):
        arrowmm.array(np.array([128.0]), arrowmm.int8())


def test_e3_numpy_bools_into_uint64():
    got = arrowmm.array(np.array([True, False]), arrowmm.uint64())
    assert got.to_pylist() == pa.array(np.array([True, False]), pa.uint64()).to_pylist() == [1, 0]


# -- W2-W5, E1, T1: pandas input ------------------------------------------------------------

def test_w2_series_and_index_nan_is_null_everywhere_a_column_goes():
    s = pd.Series([1.5, np.nan])
    assert pa.array(s).to_pylist() == [1.5, None]
    assert arrowmm.array(s).to_pylist() == [1.5, None]
    assert arrowmm.array(pd.Index([1.5, np.nan])).to_pylist() == [1.5, None]
    assert arrowmm.table({"f": s}).column("f").to_pylist() == [1.5, None]
    assert arrowmm.Table.from_pydict({"f": s}).column("f").to_pylist() == [1.5, None]
    assert arrowmm.record_batch({"f": s}).column(0).to_pylist() == [1.5, None]
    assert arrowmm.chunked_array([s]).to_pylist() == [1.5, None]
    # an explicit from_pandas=False keeps NaN a value, as in pyarrow
    assert repr(arrowmm.array(s, from_pandas=False).to_pylist()) == \
        repr(pa.array(s, from_pandas=False).to_pylist()) == "[1.5, nan]"


def test_w3_datetime64_ns_series_keeps_its_nanoseconds():
    s = pd.Series(pd.to_datetime(["2020-01-01 00:00:00.000000001", "2020-01-02 00:00:00.000000005",
                                  None]))
    pyarrow_answer, arrowmm_answer = _same_as_pyarrow(s)
    assert arrowmm_answer == pyarrow_answer
    assert arrowmm_answer[0] == "timestamp[ns]"
    t = arrowmm.table({"t": s})
    assert str(t.schema.field("t").type) == "timestamp[ns]"
    assert t.column("t").to_pylist(temporal="int")[0] == 1577836800000000001


def test_w4_categorical_column_is_a_dictionary_of_its_categories():
    for cat in (pd.Categorical([1, None, 3]), pd.Categorical(["a", None, "b"], ordered=True),
                pd.Categorical(list(range(300)))):
        p, a = pa.table({"c": cat}), arrowmm.table({"c": cat})
        assert str(a.schema.field("c").type) == str(p.schema.field("c").type)
        assert a.column("c").to_pylist() == p.column("c").to_pylist()


_PANDAS_CASES = {
    "int8": pd.Series([1, 2], dtype="int8"),
    "float32": pd.Series([1.5, np.nan], dtype="float32"),
    "float16": pd.Series([1.5, np.nan], dtype="float16"),
    "uint64 max": pd.Series([2 ** 64 - 1], dtype="uint64"),
    "datetime64[s]": pd.Series(np.array(["2020-01-01", "NaT"], "M8[s]")),
    "datetime64[ns, tz]": pd.Series(pd.date_range("2020", periods=2, tz="US/Eastern")),
    "datetime64[ms, tz]": pd.Series(pd.date_range("2020", periods=2, tz="Europe/Paris", unit="ms")),
    "datetime64[ns, UTC]": pd.Series(pd.to_datetime(["2020-01-01", None], utc=True)),
    "timedelta64[ns]": pd.Series(pd.to_timedelta([1, None], unit="s")),
    "Int64": pd.Series([1, None], dtype="Int64"),
    "Int8": pd.Series([-1, None], dtype="Int8"),
    "UInt8": pd.Series([1, None], dtype="UInt8"),
    "UInt16": pd.Series([1, None], dtype="UInt16"),
    "UInt32": pd.Series([1, None], dtype="UInt32"),
    "UInt64": pd.Series([2 ** 64 - 1, None], dtype="UInt64"),
    "Float32": pd.Series([1.5, None], dtype="Float32"),
    "Float64": pd.Series([1.5, None], dtype="Float64"),
    "boolean": pd.Series([True, None], dtype="boolean"),
    "string": pd.Series(["a", None], dtype="string"),
    "string[pyarrow]": pd.Series(["a", None], dtype="string[pyarrow]"),
    "str (NaN semantics)": pd.Series(["a", None], dtype="str"),
    "int32[pyarrow]": pd.Series([1, None], dtype="int32[pyarrow]"),
    "object str/None/NaN": pd.Series(["a", None, np.nan], dtype=object),
    "categorical of timestamps": pd.Series(pd.Categorical(pd.to_datetime(["2020-01-01", None]))),
    "CategoricalIndex": pd.CategoricalIndex(["a", "b", "a"]),
    "DatetimeIndex": pd.DatetimeIndex(["2020-01-01 00:00:00.000000001"]),
    "RangeIndex": pd.RangeIndex(3),
    "IntegerArray": pd.array([1, None]),
    "empty int64": pd.Series([], dtype="int64"),
    "empty float64": pd.Series([], dtype="float64"),
    "empty datetime64": pd.Series([], dtype="datetime64[ns]"),
    "empty string": pd.Series([], dtype="string"),
    "empty categorical": pd.Categorical([], categories=[]),
    "strided": pd.Series(np.arange(10))[::3],
}


def test_w5_e1_t1_pandas_data_converts_by_its_dtype_as_pyarrow_converts_it():
    wrong = {}
    for name, obj in _PANDAS_CASES.items():
        pyarrow_answer, arrowmm_answer = _same_as_pyarrow(obj)
        if arrowmm_answer != pyarrow_answer:
            wrong[name] = (pyarrow_answer, arrowmm_answer)
        if str(arrowmm.infer_type(obj)) != pyarrow_answer[0]:
            wrong[name + " (infer_type)"] = (pyarrow_answer[0], str(arrowmm.infer_type(obj)))
    assert not wrong


def test_w5_typed_series_converts_to_the_type_asked():
    assert arrowmm.array(pd.Series([1, None], dtype="Int64"), arrowmm.int8()).to_pylist() == [1, None]
    with pytest.raises(arrowmm.ArrowInvalid, match="out of range"):
        arrowmm.array(pd.Series([300, None], dtype="Int64"), arrowmm.int8())
    tz = pd.Series(pd.date_range("2020", periods=2, tz="US/Eastern"))
    got = arrowmm.array(tz, arrowmm.timestamp("us", "US/Eastern"))
    assert got.to_pylist(temporal="int") == \
        pa.array(tz, pa.timestamp("us", "US/Eastern")).cast(pa.int64()).to_pylist()
    cat = pd.Categorical([1, None, 3])
    got = arrowmm.array(cat, arrowmm.dictionary(arrowmm.int32(), arrowmm.int32()))
    assert str(got.type) == "dictionary<values=int32, indices=int32, ordered=0>"
    assert got.to_pylist() == [1, None, 3]
    s = pd.Series(["a", None], dtype="string[pyarrow]")
    assert arrowmm.array(s, arrowmm.string()).to_pylist() == ["a", None]


def test_t1_empty_numpy_string_arrays_type_by_dtype():
    assert str(arrowmm.array(np.array([], "U3")).type) == str(pa.array(np.array([], "U3")).type)
    assert str(arrowmm.array(np.array([], "S3")).type) == str(pa.array(np.array([], "S3")).type)


def test_pandas_dtypes_without_a_conversion_are_refused_by_name():
    # pyarrow makes pandas' own extension types of these; arrowmm's arrays have no field to
    # carry that metadata (table(df) keeps it)
    for obj in (pd.Series(pd.period_range("2020-01", periods=2, freq="M")),
                pd.Series(pd.interval_range(0, 2)), pd.Series(pd.arrays.SparseArray([1, 0]))):
        with pytest.raises(arrowmm.ArrowNotImplementedError, match=re.escape(f"pandas {obj.dtype}")):
            arrowmm.array(obj)


# -- E4, L3, L4: numpy values into types pyarrow does not cast them to ----------------------

@pytest.mark.parametrize("unit", ["ms", "ns"])
def test_e4_numpy_timedelta_into_decimal_is_refused(unit):
    with pytest.raises(arrowmm.ArrowInvalid, match="expected a Decimal"):
        arrowmm.array(np.array([1000], f"m8[{unit}]"), arrowmm.decimal64(12, 3))


@pytest.mark.parametrize("values, target, pa_target", [
    (np.array([True, False]), arrowmm.date32(), pa.date32()),
    (np.array([True, False]), arrowmm.timestamp("s"), pa.timestamp("s")),
    (np.array([True, False]), arrowmm.duration("s"), pa.duration("s")),
    (np.array([True, False]), arrowmm.time32("s"), pa.time32("s")),
    (np.array([1000], "m8[ms]"), arrowmm.float64(), pa.float64()),
])
def test_l3_numpy_bools_and_timedeltas_are_no_dates_or_floats(values, target, pa_target):
    with pytest.raises(pa.ArrowNotImplementedError):
        pa.array(values, pa_target)
    with pytest.raises(arrowmm.ArrowInvalid):
        arrowmm.array(values, target)


def test_l4_a_count_of_milliseconds_not_a_whole_day_is_no_date64():
    for values in ([5], np.array([5])):
        with pytest.raises(arrowmm.ArrowInvalid, match="whole number of days"):
            arrowmm.array(values, arrowmm.date64())
    assert arrowmm.array([86_400_000], arrowmm.date64()).to_pylist() == [dt.date(1970, 1, 2)]
    assert arrowmm.array(np.array([-86_400_000]), arrowmm.date64()).to_pylist() == \
        [dt.date(1969, 12, 31)]


# -- L1, L2: Python values that would lose digits ------------------------------------------

def test_l1_float16_refuses_integers_beyond_its_exact_range():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (numpy's overflow warning leaked)
        for v in (2 ** 63 - 1, 2 ** 53 + 1, 70_000, 2049):
            with pytest.raises(arrowmm.ArrowInvalid, match="not exactly representable"):
                arrowmm.array([v], arrowmm.float16())
        assert arrowmm.array([2048, -2048], arrowmm.float16()).to_pylist() == [2048.0, -2048.0]


@pytest.mark.parametrize("value, target", [
    (dt.datetime(2020, 1, 1, 0, 0, 0, 500000), arrowmm.timestamp("s")),
    (dt.datetime(2020, 1, 1, 0, 0, 0, 1000, tzinfo=dt.timezone.utc), arrowmm.timestamp("s", "UTC")),
    (dt.datetime(2020, 1, 1, 0, 0, 0, 1), arrowmm.timestamp("ms")),
    (pd.Timestamp("2020-01-01 00:00:00.000000001"), arrowmm.timestamp("us")),
    (dt.time(1, 2, 3, 4), arrowmm.time32("s")),
    (dt.time(1, 2, 3, 4), arrowmm.time32("ms")),
    (dt.timedelta(microseconds=1), arrowmm.duration("ms")),
    (pd.Timedelta(1, "ns"), arrowmm.duration("us")),
])
def test_l2_python_temporal_value_finer_than_the_unit_is_refused(value, target):
    with pytest.raises(arrowmm.ArrowInvalid, match=f"unit '{target.unit}' would lose precision"):
        arrowmm.array([value], target)


def test_l2_pandas_timestamps_with_nanoseconds_in_a_list_are_not_truncated():
    # pyarrow infers timestamp[us] for them and drops the nanoseconds
    with pytest.raises(arrowmm.ArrowInvalid, match="would lose precision"):
        arrowmm.array([pd.Timestamp("2020-01-01 00:00:00.000000001")])


# -- M1, O2 ---------------------------------------------------------------------------------

def test_m1_concat_tables_names_the_first_schema_first():
    with pytest.raises(arrowmm.ArrowInvalid) as info:
        arrowmm.concat_tables([arrowmm.table({"a": [1]}), arrowmm.table({"a": [1.5]})])
    with pytest.raises(pa.ArrowInvalid) as pinfo:
        pa.concat_tables([pa.table({"a": [1]}), pa.table({"a": [1.5]})])
    assert str(info.value) == str(pinfo.value)


@pytest.mark.parametrize("index", [pd.Index([5, 6]), pd.RangeIndex(2)])
@pytest.mark.parametrize("preserve_index", [None, True, False])
def test_o2_from_pandas_keeps_the_index_as_pyarrow_does(index, preserve_index):
    df = pd.DataFrame({"x": [1, 2], "y": ["a", "b"]}, index=index)
    expected = pa.Table.from_pandas(df, preserve_index=preserve_index)
    got = arrowmm.Table.from_pandas(df, preserve_index=preserve_index)
    assert got.column_names == expected.column_names
    pd.testing.assert_frame_equal(got.to_pandas(), expected.to_pandas())
    batch = arrowmm.RecordBatch.from_pandas(df, preserve_index=preserve_index, columns=["y"])
    assert isinstance(batch, arrowmm.RecordBatch)
    assert batch.schema.names == pa.RecordBatch.from_pandas(
        df, preserve_index=preserve_index, columns=["y"]).schema.names

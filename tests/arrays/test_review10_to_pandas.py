"""Review 10's conversion-out findings (s47), pyarrow as the oracle: pandas' period and interval
columns (E2), the metadata's extension dtypes, a chunked Series' name (T2), run-end encoded and
dictionary dtypes (T3, T5), MultiIndex column labels (T4) and pyarrow's ``to_pandas`` options
(O1: ``date_as_object``, ``timestamp_as_object``, ``integer_object_nulls``, ``maps_as_pydicts``,
``split_blocks``, ``self_destruct``)."""
import itertools
import json
import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import arrowmm


def _pyarrow_file(tmp_path, table):
    path = str(tmp_path / "f.arrow")
    with pa.OSFile(path, "wb") as f, pa.ipc.new_file(f, table.schema) as w:
        w.write_table(table)
    return path


def _with_pandas_columns(table, **numpy_types):
    """``table`` with ``pandas`` metadata naming ``numpy_types`` for its columns."""
    meta = {"index_columns": [{"kind": "range", "name": None, "start": 0,
                               "stop": table.num_rows, "step": 1}],
            "column_indexes": [],
            "columns": [{"name": n, "field_name": n, "pandas_type": "object",
                         "numpy_type": numpy_types[n], "metadata": None}
                        for n in table.column_names]}
    return table.replace_schema_metadata({"pandas": json.dumps(meta)})


# -- E2: pandas' own extension columns --------------------------------------------------------

_PANDAS_FRAMES = {
    "period": lambda: pd.DataFrame({"p": pd.PeriodIndex(["2020-01", None, "2020-03"], freq="M")}),
    "period_day": lambda: pd.DataFrame({"p": pd.period_range("2020-01-01", periods=3, freq="D")}),
    "interval_left": lambda: pd.DataFrame({"i": pd.interval_range(0, 3, closed="left")}),
    "interval_both": lambda: pd.DataFrame({"i": pd.interval_range(0.5, 3.5, closed="both")}),
    "interval_missing": lambda: pd.DataFrame(
        {"i": pd.arrays.IntervalArray.from_tuples([(0.0, 1.0), None, (2.0, 4.0)],
                                                  closed="neither")}),
    "interval_times": lambda: pd.DataFrame(
        {"i": pd.interval_range(pd.Timestamp("2020-01-01"), periods=2, freq="D")}),
    "period_index": lambda: pd.DataFrame(
        {"x": [1, 2, 3]}, index=pd.period_range("2020-01", periods=3, freq="M")),
}


@pytest.mark.parametrize("case", sorted(_PANDAS_FRAMES))
def test_period_and_interval_columns_of_a_pyarrow_file_restore_as_pyarrow_restores(tmp_path,
                                                                                      case):
    # to_pandas raised TypeError ("600", "... is not an interval") from Series.astype
    path = _pyarrow_file(tmp_path, pa.table(_PANDAS_FRAMES[case]()))
    expected = pa.ipc.open_file(path).read_all().to_pandas()
    pd.testing.assert_frame_equal(arrowmm.open_file(path).read_all().to_pandas(), expected)
    pd.testing.assert_frame_equal(arrowmm.open_file(path).to_pandas(), expected)
    ignoring = pa.ipc.open_file(path).read_all().to_pandas(ignore_metadata=True)
    pd.testing.assert_frame_equal(
        arrowmm.open_file(path).read_all().to_pandas(ignore_metadata=True), ignoring)


def test_a_frame_with_a_period_column_round_trips_through_table():
    df = pd.DataFrame({"p": pd.period_range("2020-01", periods=3, freq="M")})
    pd.testing.assert_frame_equal(arrowmm.table(df).to_pandas(), df)


def test_nullable_integers_the_metadata_names_restore_exactly():
    # the metadata's Int64 / UInt64 were applied with Series.astype to the float64 column:
    # 2**53 + 1 came back as 2**53, UInt64 with a null raised TypeError
    df = pd.DataFrame({"i": pd.array([2 ** 53 + 1, None], dtype="Int64"),
                       "u": pd.array([2 ** 64 - 1, None], dtype="UInt64")})
    table = pa.table(df)
    got = arrowmm.table(table).to_pandas()
    pd.testing.assert_frame_equal(got, table.to_pandas())
    assert got["i"][0] == 2 ** 53 + 1


def test_a_dtype_the_metadata_names_that_the_column_cannot_take_is_arrow_invalid():
    # an Int64 named for strings (or a period for strings) raised pandas' TypeError
    for numpy_type in ("Int64", "period[M]"):
        table = _with_pandas_columns(pa.table({"s": ["a", "b"]}), s=numpy_type)
        with pytest.raises(arrowmm.ArrowInvalid, match=rf"column 's'.*{re.escape(numpy_type)}"):
            arrowmm.table(table).to_pandas()


def test_an_extension_dtype_pandas_cannot_make_from_arrow_leaves_the_column_as_pyarrow_does():
    # pyarrow restores only dtypes with __from_arrow__; Sparse has none: the column stays int64
    table = _with_pandas_columns(pa.table({"x": [1, 0]}), x="Sparse[int64, 0]")
    pd.testing.assert_frame_equal(arrowmm.table(table).to_pandas(), table.to_pandas())


# -- T2, T3, T5: names and dtypes ---------------------------------------------------------------

def test_chunked_array_to_pandas_is_unnamed():
    assert arrowmm.chunked_array([[1, 2]]).to_pandas().name is None
    assert arrowmm.chunked_array([], arrowmm.int64()).to_pandas().name is None


def test_a_run_end_encoded_slice_converts_only_its_own_runs():
    p = pc.run_end_encode(pa.array([1, 1, None, 3, 3]))
    a = arrowmm.array(p)
    for offset, length in ((3, 2), (0, 2), (1, 3), (5, 0)):
        want = p.slice(offset, length).to_numpy(zero_copy_only=False)
        got = a.slice(offset, length).to_numpy(zero_copy_only=False)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    pd.testing.assert_series_equal(a.slice(3).to_pandas(), p.slice(3).to_pandas())


def test_an_empty_run_end_encoded_string_array_converts_to_objects():
    p = pc.run_end_encode(pa.array([], pa.string()))
    assert arrowmm.array(p).to_pandas().dtype == p.to_pandas().dtype == object


_DICTIONARY_VALUES = [pa.array([5, 7]), pa.array([5, None]), pa.array([1.5, 2.5]),
                      pa.array([1, 2], pa.timestamp("ms")), pa.array([1, 2], pa.date32()),
                      pa.array([1, 2], pa.duration("s"))]


@pytest.mark.parametrize("values, indices", [
    *((v, [0, 1, None, 0]) for v in _DICTIONARY_VALUES),
    *((v, [0, 1, 1, 0]) for v in _DICTIONARY_VALUES + [pa.array([True, False])]),
    (pa.array([5, 7, None]), [0, 1, 1, 0]),  # a null value no index reaches: still int64
    (pa.array([5, 7, None]), []),
], ids=lambda v: str(v.type) + ("_null" if v.null_count else "") if isinstance(v, pa.Array)
    else ("null_index" if None in v else "valid" if v else "empty"))
def test_dictionary_to_numpy_decodes_as_pyarrow(values, indices):
    # an object array of Python values ([5, 7, None, 5]) where pyarrow gives float64 with NaN
    # (strings, and booleans with a null, were objects already, as pyarrow's)
    p = pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()), values)
    want = p.to_numpy(zero_copy_only=False)
    got = arrowmm.array(p).to_numpy(zero_copy_only=False)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


# -- T4: MultiIndex column labels ---------------------------------------------------------------

@pytest.mark.parametrize("columns", [
    pd.MultiIndex.from_tuples([("a", "x"), ("a", "y")]),
    pd.MultiIndex.from_tuples([("a", 1), ("b", 2)], names=["top", "num"]),
    pd.MultiIndex.from_tuples([("a", "x", 1), ("b", "y", 2)], names=["k", None, "n"]),
], ids=["strings", "named_ints", "three_levels"])
def test_multiindex_column_labels_restore_as_pyarrow_restores(columns):
    # the labels came back as a flat Index of the strings "('a', 'x')"
    df = pd.DataFrame(np.arange(6).reshape(3, 2), columns=columns)
    pd.testing.assert_frame_equal(arrowmm.table(df).to_pandas(), pa.table(df).to_pandas())


def test_column_names_that_are_no_tuples_under_several_levels_are_arrow_invalid():
    table = pa.table(pd.DataFrame([[1, 2]], columns=pd.MultiIndex.from_tuples([("a", "x"),
                                                                              ("a", "y")])))
    meta = json.loads(table.schema.metadata[b"pandas"])
    meta["columns"][0]["name"] = "not a tuple"
    table = table.replace_schema_metadata({"pandas": json.dumps(meta)})
    with pytest.raises(arrowmm.ArrowInvalid, match="'not a tuple' is no tuple of 2 labels"):
        arrowmm.table(table).to_pandas()


# -- O1: pyarrow's options ----------------------------------------------------------------------

def _temporal_and_integer_table():
    columns = {}
    for unit in ("s", "ms", "us", "ns"):
        columns[f"ts_{unit}"] = pa.array([1000, None, 5], pa.timestamp(unit))
        for tz in ("Europe/Paris", "+01:00", "UTC"):
            columns[f"tz_{unit}_{tz}"] = pa.array([1000, None, 5], pa.timestamp(unit, tz))
        columns[f"du_{unit}"] = pa.array([1, None, 3], pa.duration(unit))
    columns["d32"] = pa.array([1, None, 3], pa.date32())
    columns["d64"] = pa.array([86400000, None, 0], pa.date64())
    columns["t32"] = pa.array([1, None, 2], pa.time32("ms"))
    columns["t64"] = pa.array([1000, None, 2000], pa.time64("ns"))
    for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
        columns[name] = pa.array([1, None, 2], name)
        columns[name + "_valid"] = pa.array([1, 3, 2], name)
    columns["uint64_max"] = pa.array([2 ** 64 - 1, None, 0], pa.uint64())
    columns["int64_ends"] = pa.array([2 ** 63 - 1, None, -2 ** 63], pa.int64())
    columns["month_day_nano"] = pa.array([(1, 2, 3), None, (0, 0, 0)],
                                         pa.month_day_nano_interval())
    columns["list_date"] = pa.array([[1, None], None, [3]], pa.list_(pa.date32()))
    columns["list_ts"] = pa.array([[1000, None], None, [3]], pa.list_(pa.timestamp("s", "UTC")))
    columns["list_int"] = pa.array([[1, None], None, [3]], pa.list_(pa.int64()))
    columns["struct"] = pa.array([{"d": 1, "i": None}, None, {"d": None, "i": 3}],
                                 pa.struct([("d", pa.date32()), ("i", pa.int64())]))
    columns["dict_date"] = pa.DictionaryArray.from_arrays(pa.array([0, None, 0], pa.int8()),
                                                          pa.array([1], pa.date32()))
    columns["map"] = pa.array([[("a", 1), ("b", None)], None, [("a", 1), ("a", 2)]],
                              pa.map_(pa.string(), pa.int64()))
    return pa.table(columns)


def _assert_same_objects(got, want):
    """Equal, and object columns hold values of the same Python types and time zones."""
    if isinstance(want, pd.DataFrame):
        pd.testing.assert_frame_equal(got, want)
        pairs = [(got[c], want[c]) for c in want]
    else:
        pd.testing.assert_series_equal(got, want)
        pairs = [(got, want)]
    for g, w in pairs:
        if w.dtype == object:
            assert [(type(x), getattr(x, "tzinfo", None)) for x in g] == \
                [(type(x), getattr(x, "tzinfo", None)) for x in w]


_PYARROW_DEFAULTS = {"date_as_object": True, "timestamp_as_object": False,
                     "integer_object_nulls": False, "maps_as_pydicts": None}
_OPTIONS = [dict(zip(("date_as_object", "timestamp_as_object", "integer_object_nulls",
                      "maps_as_pydicts"), combo))
            for combo in itertools.product([True, False], [False, True], [False, True],
                                           [None, "lossy"])]


def _option_id(options):
    return "-".join(f"{k}={v}" for k, v in options.items() if v != _PYARROW_DEFAULTS[k]) or \
        "default"


@pytest.mark.parametrize("options", _OPTIONS, ids=_option_id)
def test_to_pandas_options_give_pyarrow_frames(options):
    # the keywords raised TypeError (unexpected keyword argument)
    table = _temporal_and_integer_table()
    mine = arrowmm.table(table)
    _assert_same_objects(mine.to_pandas(**options), table.to_pandas(**options))
    for offset, length in ((1, 2), (2, 1)):
        _assert_same_objects(mine.slice(offset, length).to_pandas(**options),
                             table.slice(offset, length).to_pandas(**options))
    # (an empty slice's dictionary column is left out: arrowmm's empty table holds no batch,
    # so no dictionary to take categories from, where pyarrow's keeps the chunk's)
    flat = [n for n in table.column_names if not n.startswith("dict")]
    _assert_same_objects(mine.slice(0, 0).select(flat).to_pandas(**options),
                         table.slice(0, 0).select(flat).to_pandas(**options))
    _assert_same_objects(mine.to_batches()[0].to_pandas(**options),
                         table.to_batches()[0].to_pandas(**options))


@pytest.mark.parametrize("options", _OPTIONS[::3], ids=_option_id)
def test_array_and_chunked_array_to_pandas_options_give_pyarrow_series(options):
    table = _temporal_and_integer_table()
    mine = arrowmm.table(table)
    for name in table.column_names:
        if name.startswith("tz_ns") and options["timestamp_as_object"]:
            continue  # pyarrow's Series of naive Timestamps drops the zone (ours keep it)
        if name.startswith("dict"):
            continue  # (an Array of dictionaries is a Categorical: the table test covers it)
        want, got = table.column(name), mine.column(name)
        _assert_same_objects(got.to_pandas(**options), want.to_pandas(**options))
        _assert_same_objects(arrowmm.array(want.chunk(0)).to_pandas(**options),
                             want.chunk(0).to_pandas(**options))
        empty = pa.chunked_array([], want.type)
        _assert_same_objects(arrowmm.chunked_array([], got.type).to_pandas(**options),
                             empty.to_pandas(**options))


def test_nanosecond_timestamps_as_objects_of_an_array_keep_their_zone():
    p = pa.array([1001, None], pa.timestamp("ns", "Europe/Paris"))
    got = arrowmm.array(p).to_pandas(timestamp_as_object=True)
    assert got.dtype == object
    assert got[0] == pd.Timestamp(1001, tz="Europe/Paris") and got[1] is pd.NaT


def test_maps_as_pydicts_strict_refuses_duplicate_keys_lossy_keeps_the_last():
    m = pa.array([[("a", 1), ("b", None)], None, [("a", 1), ("a", 2)]],
                 pa.map_(pa.string(), pa.int64()))
    table = pa.table({"m": m})
    mine = arrowmm.table(table)
    assert mine.to_pandas(maps_as_pydicts="lossy")["m"].tolist() == \
        table.to_pandas(maps_as_pydicts="lossy")["m"].tolist() == \
        [{"a": 1.0, "b": None}, None, {"a": 2.0}]
    assert mine.slice(0, 2).to_pandas(maps_as_pydicts="strict")["m"].tolist() == \
        table.slice(0, 2).to_pandas(maps_as_pydicts="strict")["m"].tolist()
    with pytest.raises(pa.ArrowException):
        table.to_pandas(maps_as_pydicts="strict")
    with pytest.raises(arrowmm.ArrowInvalid, match="column 'm', row 2: .* 2 entries but 1"):
        mine.to_pandas(maps_as_pydicts="strict")
    with pytest.raises(arrowmm.ArrowInvalid, match="Invalid value for 'maps_as_pydicts'"):
        mine.to_pandas(maps_as_pydicts="bogus")


def test_maps_as_pydicts_refuses_maps_inside_other_types():
    inner = pa.array([[[("a", 1)]], None], pa.list_(pa.map_(pa.string(), pa.int64())))
    with pytest.raises(arrowmm.ArrowNotImplementedError, match="column 'l'.*not maps inside"):
        arrowmm.table(pa.table({"l": inner})).to_pandas(maps_as_pydicts="strict")


def test_split_blocks_and_self_destruct_are_accepted_and_change_nothing():
    table = _temporal_and_integer_table()
    mine = arrowmm.table(table)
    plain = mine.to_pandas()
    pd.testing.assert_frame_equal(mine.to_pandas(split_blocks=True, self_destruct=True), plain)
    pd.testing.assert_frame_equal(plain, table.to_pandas(split_blocks=True))
    column = mine.column("int64")
    pd.testing.assert_series_equal(column.to_pandas(split_blocks=True, self_destruct=True),
                                   column.to_pandas())


def test_a_table_columns_series_is_named_as_the_column_as_pyarrow_names_it():
    import pyarrow as pa
    table = arrowmm.table({"x": [1, 2], "y": ["a", None]})
    oracle = pa.table({"x": [1, 2], "y": ["a", None]})
    for name in ("x", "y"):
        for column, expected in ((table.column(name), oracle.column(name)),
                                 (table[name], oracle[name])):
            assert column.to_pandas().name == expected.to_pandas().name == name
    assert [c.to_pandas().name for c in table.columns] == ["x", "y"]
    assert arrowmm.chunked_array([[1]]).to_pandas().name is None  # (not a table's: unnamed)

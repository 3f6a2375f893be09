"""Dataset filters with pyarrow's values (review s45 #4): a numpy datetime64 past
datetime64[ns]'s years prunes and keeps batches exactly (W1), NaT is a null in tuples as in
expressions (W2), a date bounds a timestamp column and a datetime a date column (E1)."""
from __future__ import annotations

import datetime

import numpy as np
import pytest

import arrowmm

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")


@pytest.fixture
def timestamps(tmp_path):
    """Two batches of timestamp[us] (so footer statistics prune one), pyarrow's table and
    arrowmm's dataset of it."""
    table = pa.table({"x": pa.array([datetime.datetime(2020, 1, 1), datetime.datetime(2024, 6, 1),
                                     None, datetime.datetime(2030, 1, 1)], pa.timestamp("us")),
                      "i": pa.array([0, 1, 2, 3])})
    arrowmm.write_file(str(tmp_path / "a.arrow"), table, max_chunksize=2)
    return table, arrowmm.dataset(str(tmp_path))


def _rows(table):
    return table.column("i").to_pylist()


@pytest.mark.parametrize("op, value", [
    ("<", np.datetime64("9999-12-31T00:00:00")), (">", np.datetime64("1000-01-01T00:00:00")),
    ("<", np.datetime64("2263-01-01", "D")), (">=", np.datetime64("2025", "Y")),
])
def test_datetime64_past_the_ns_years_prunes_exactly(timestamps, op, value):
    table, ds = timestamps
    as_datetime = value.astype("datetime64[us]").astype(datetime.datetime)  # (pyarrow's units)
    expect = _rows(table.filter({"<": pc.field("x") < as_datetime, ">": pc.field("x") > as_datetime,
                                 ">=": pc.field("x") >= as_datetime}[op]))
    assert _rows(ds.to_table(filter=[("x", op, value)])) == expect
    expr = {"<": arrowmm.field("x") < value, ">": arrowmm.field("x") > value,
            ">=": arrowmm.field("x") >= value}[op]
    assert _rows(ds.to_table(filter=expr)) == expect
    assert ds.count_rows(filter=expr) == len(expect)


def test_nat_in_tuples_is_a_null(timestamps):
    table, ds = timestamps
    nat = np.datetime64("NaT", "us")
    for op in ("<", ">", "!=", "==", ">="):
        assert _rows(ds.to_table(filter=[("x", op, nat)])) == []
    assert _rows(ds.to_table(filter=[("x", "in", [nat])])) == \
        _rows(table.filter(pc.field("x").isin([nat]))) == [2]
    assert _rows(ds.to_table(filter=[("x", "not in", [nat])])) == [0, 1, 3]


def test_date_bounds_a_timestamp_column_and_a_datetime_a_date_column(timestamps, tmp_path):
    table, ds = timestamps
    day = datetime.date(2024, 6, 1)
    for op in ("<", ">=", "=="):
        expr = {"<": pc.field("x") < day, ">=": pc.field("x") >= day, "==": pc.field("x") == day}
        assert _rows(ds.to_table(filter=[("x", op, day)])) == _rows(table.filter(expr[op]))
    dates = pa.table({"d": pa.array([datetime.date(2020, 1, 1), datetime.date(2020, 1, 2)],
                                    pa.date32()), "i": pa.array([0, 1])})
    (tmp_path / "dates").mkdir()
    arrowmm.write_file(str(tmp_path / "dates" / "d.arrow"), dates, max_chunksize=1)
    dds = arrowmm.dataset(str(tmp_path / "dates"))
    for when in (datetime.datetime(2020, 1, 1), datetime.datetime(2020, 1, 1, 1)):
        for op, make in (("==", lambda f: f("d") == when), (">", lambda f: f("d") > when),
                         ("<", lambda f: f("d") < when)):
            expect = _rows(dates.filter(make(pc.field)))
            assert _rows(dds.to_table(filter=[("d", op, when)])) == expect
            assert _rows(dds.to_table(filter=make(arrowmm.field))) == expect


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_float_isin_prunes_with_the_set_in_the_column_type(tmp_path, dtype):
    """isin casts its set to a float32 column's type (as pyarrow): the statistics must too, or
    the batch holding float32(0.1), whose minimum is above 0.1, is skipped."""
    values = np.array([0.1, 0.5, 0.7, 0.9, np.nan, 0.3], dtype=dtype)
    table = pa.table({"x": pa.array(values), "i": pa.array(range(6))})
    arrowmm.write_file(str(tmp_path / "a.arrow"), table, max_chunksize=2)
    ds = arrowmm.dataset(str(tmp_path))
    for keep, expect in (([0.1, 0.7], [0, 2]), ([0.1, 1e40], [0]),
                         ([0.3, float("nan")], [4, 5])):
        if dtype == "float32" and 1e40 not in keep:
            assert _rows(table.filter(pc.field("x").isin(keep))) == expect  # (pyarrow's)
        assert _rows(ds.to_table(filter=[("x", "in", keep)])) == expect
        assert _rows(ds.to_table(filter=arrowmm.field("x").isin(keep))) == expect
        assert ds.count_rows(filter=arrowmm.field("x").isin(keep)) == len(expect)
        assert _rows(ds.to_table(filter=[("x", "not in", keep)])) == \
            [i for i in range(6) if i not in expect]


def test_row_mask_float32_isin_agrees_with_the_expression():
    from arrowmm.dataset.filters import Term, row_mask
    table = pa.table({"x": pa.array([0.1, 0.5, None], pa.float32()), "i": pa.array([0, 1, 2])})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    column = arrowmm.open_file(sink.getvalue().to_pybytes()).get_batch(0).column("x")
    assert row_mask(column, Term("x", "in", [0.1, None])).tolist() == [True, False, True]
    assert row_mask(column, Term("x", "not in", [0.5])).tolist() == [True, False, True]

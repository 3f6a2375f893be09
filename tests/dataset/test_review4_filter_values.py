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

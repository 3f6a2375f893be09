"""Filter values as pyarrow takes them (review s45 #4), each judged against pyarrow's answer
on the same column read back by arrowmm: numpy datetime64 values past datetime64[ns]'s years
(W1), NaT as a null (W2), values of the wrong kind on time, duration, interval and
fixed-size binary columns (W3), time / timedelta / date / datetime values (E1), float32
``isin`` (O2), pyarrow scalars and arrays as values (E4)."""
from __future__ import annotations

import datetime

import numpy as np
import pytest

import arrowmm
from arrowmm.compute.predicate import selection_mask

from tests.support.helpers import ipc_bytes

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")


def _read_back(table):
    return arrowmm.open_file(ipc_bytes(table)).read_all()


def _rows(table):
    return table.column("i").to_pylist()


def _same_rows(table, make):
    """The rows ``make(field)`` keeps, by arrowmm (Table.filter and compute.filter) and by
    pyarrow; asserts they agree and returns them."""
    expect = _rows(table.filter(make(pc.field)))
    mt = _read_back(table)
    assert _rows(mt.filter(make(arrowmm.field))) == expect
    assert _rows(arrowmm.compute.filter(mt, make(arrowmm.field))) == expect
    return expect


def _timestamps(unit="us"):
    return pa.table({"x": pa.array([datetime.datetime(2020, 1, 1), datetime.datetime(2024, 6, 1),
                                    None], pa.timestamp(unit)), "i": pa.array([0, 1, 2])})


def _ns(when: datetime.datetime, extra_ns: int = 0) -> int:
    """``when`` (naive) in nanoseconds since the epoch, by Python's own arithmetic."""
    delta = when - datetime.datetime(1970, 1, 1)
    return ((delta.days * 86_400 + delta.seconds) * 10**6 + delta.microseconds) * 1000 + extra_ns


#: numpy values pyarrow cannot take (units D, Y, M, past the ns years) and their instants.
_DATETIME64 = [
    (np.datetime64("9999-12-31T00:00:00"), _ns(datetime.datetime(9999, 12, 31))),
    (np.datetime64("1000-01-01", "D"), _ns(datetime.datetime(1000, 1, 1))),
    (np.datetime64("2263-01-01", "D"), _ns(datetime.datetime(2263, 1, 1))),
    (np.datetime64("2020", "Y"), _ns(datetime.datetime(2020, 1, 1))),
    (np.datetime64("2024-06", "M"), _ns(datetime.datetime(2024, 6, 1))),
    (np.datetime64("2020-01-01T00:00:00.000000001", "ns"), _ns(datetime.datetime(2020, 1, 1), 1)),
]


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
@pytest.mark.parametrize("value, instant", _DATETIME64, ids=str)
def test_datetime64_values_compare_exactly_past_the_ns_years(unit, value, instant):
    table = _timestamps(unit)
    mt = _read_back(table)
    stored = [_ns(v) if v is not None else None for v in table.column("x").to_pylist()]
    for op, f in (("<", lambda a, b: a < b), (">", lambda a, b: a > b),
                  ("==", lambda a, b: a == b), ("!=", lambda a, b: a != b)):
        expr = {"<": arrowmm.field("x") < value, ">": arrowmm.field("x") > value,
                "==": arrowmm.field("x") == value, "!=": arrowmm.field("x") != value}[op]
        expect = [i for i, ns in enumerate(stored) if ns is not None and f(ns, instant)]
        assert _rows(mt.filter(expr)) == expect, op


def test_a_far_datetime64_bound_keeps_the_rows():
    far, old = np.datetime64("9999-12-31T00:00:00"), np.datetime64("1000-01-01T00:00:00")
    assert _same_rows(_timestamps(), lambda f: f("x") < far) == [0, 1]
    assert _same_rows(_timestamps(), lambda f: f("x") > old) == [0, 1]


@pytest.mark.parametrize("nat", [np.datetime64("NaT", "us"), np.datetime64("NaT", "s")])
def test_nat_is_a_null_filter_value(nat):
    for make in (lambda f: f("x") > nat, lambda f: f("x") != nat, lambda f: f("x") <= nat,
                 lambda f: f("x") == nat):
        assert _same_rows(_timestamps(), make) == []
    assert _same_rows(_timestamps(), lambda f: f("x").isin([nat])) == [2]
    assert _same_rows(_timestamps(), lambda f: ~f("x").isin([nat])) == [0, 1]


@pytest.mark.parametrize("column", [pa.timestamp("ns"), pa.duration("us")])
def test_pandas_nat_is_a_null_filter_value_as_numpys(tmp_path, column):
    # (pyarrow raises ValueError for it; it raised "cannot convert float NaN to integer")
    nat = pytest.importorskip("pandas").NaT
    table = pa.table({"x": pa.array([1, None, 3], column), "i": pa.array([0, 1, 2])})
    mt = _read_back(table)
    for make, rows in ((lambda f: f("x") > nat, []), (lambda f: f("x") != nat, []),
                       (lambda f: f("x") == nat, []), (lambda f: f("x").isin([nat]), [1]),
                       (lambda f: ~f("x").isin([nat]), [0, 2])):
        assert _rows(mt.filter(make(arrowmm.field))) == rows
        assert _rows(arrowmm.compute.filter(mt, make(arrowmm.field))) == rows
    arrowmm.write_file(str(tmp_path / "t.arrow"), table)
    ds = arrowmm.dataset(str(tmp_path / "t.arrow"))
    assert ds.count_rows(filter=[("x", "<", nat)]) == 0
    assert ds.to_table(filter=[("x", "in", [nat])]).column("i").to_pylist() == [1]


def test_nat_is_null_against_the_smallest_timestamp():
    table = pa.table({"x": pa.array([-2**63, 0], pa.timestamp("us")), "i": pa.array([0, 1])})
    assert _same_rows(table, lambda f: f("x") <= np.datetime64("NaT", "us")) == []


@pytest.mark.parametrize("column, value", [
    (pa.array([1, 2, None], pa.time32("s")), 1),
    (pa.array([1, 2, None], pa.time64("us")), 1.0),
    (pa.array([1, 2, None], pa.duration("s")), 1),
    (pa.array([1, 2, None], pa.duration("ns")), datetime.time(0, 0, 1)),
    (pa.array([1, 2, None], pa.time64("ns")), datetime.timedelta(seconds=1)),
    (pa.array([pa.MonthDayNano([1, 2, 3]), None]), 1),
    (pa.array([b"abc", b"xyz", None], pa.binary(3)), 5),
], ids=["time32-int", "time64-float", "duration-int", "duration-time", "time-timedelta",
        "interval", "fixed_size_binary-int"])
def test_a_mistyped_value_raises_on_every_column_type(column, value):
    """pyarrow raises for each; arrowmm matched nothing (== / isin) or everything (!=)."""
    table = pa.table({"x": column})
    with pytest.raises((pa.ArrowNotImplementedError, pa.ArrowTypeError, pa.ArrowInvalid)):
        table.filter(pc.field("x") == value)
    mt = _read_back(table)
    for expr in (arrowmm.field("x") == value, arrowmm.field("x") != value,
                 arrowmm.field("x").isin([value]), ~arrowmm.field("x").isin([value])):
        with pytest.raises(arrowmm.ArrowInvalid, match="'x'"):
            mt.filter(expr)
        with pytest.raises(arrowmm.ArrowInvalid, match="'x'"):  # (no check_expression first)
            selection_mask(expr, lambda name: mt.column(name).chunks[0], mt.num_rows)


@pytest.mark.parametrize("make", [
    lambda f: f("x") == "abc", lambda f: f("x") != "abc", lambda f: f("x").isin(["abc"]),
    lambda f: f("x") < "abd", lambda f: f("x") >= "ab", lambda f: f("x") == b"abc",
    lambda f: f("x") == "ab", lambda f: f("x") < b"abcd",
], ids=["== str", "!= str", "isin str", "< str", ">= short str", "== bytes", "== short",
        "< long bytes"])
def test_fixed_size_binary_against_str_and_bytes_as_pyarrow(make):
    table = pa.table({"x": pa.array([b"abc", b"xyz", None], pa.binary(3)), "i": pa.array([0, 1, 2])})
    _same_rows(table, make)


_TIMES = [
    (pa.array([datetime.time(1, 2, 3), datetime.time(4, 5, 6), None], pa.time64("us")),
     datetime.time(1, 2, 3)),
    (pa.array([datetime.time(1, 2, 3), datetime.time(1, 2, 3, 500), None], pa.time64("ns")),
     datetime.time(1, 2, 3, 500)),
    (pa.array([datetime.time(1, 2, 3), datetime.time(23, 59, 59), None], pa.time32("s")),
     datetime.time(1, 2, 3)),
    (pa.array([datetime.time(1, 2, 3), None], pa.time32("ms")), datetime.time(1, 2, 3, 1)),
    (pa.array([datetime.timedelta(seconds=5), datetime.timedelta(0), None], pa.duration("s")),
     datetime.timedelta(seconds=5)),
    (pa.array([datetime.timedelta(seconds=5), datetime.timedelta(-3), None], pa.duration("ms")),
     datetime.timedelta(seconds=5, microseconds=1)),
    (pa.array([5, -7, None], pa.duration("s")), np.timedelta64(5500, "ms")),
    (pa.array([datetime.datetime(2020, 1, 1), datetime.datetime(2020, 1, 1, 1), None],
              pa.timestamp("s")), datetime.date(2020, 1, 1)),
    (pa.array([datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc), None],
              pa.timestamp("ms", "America/New_York")), datetime.date(2020, 1, 1)),
    (pa.array([datetime.date(2020, 1, 1), datetime.date(2020, 1, 2), None], pa.date32()),
     datetime.datetime(2020, 1, 1)),
    (pa.array([datetime.date(2020, 1, 1), datetime.date(2020, 1, 2), None], pa.date64()),
     datetime.datetime(2020, 1, 1, 1)),
]


@pytest.mark.parametrize("column, value", _TIMES, ids=lambda v: str(getattr(v, "type", v)))
@pytest.mark.parametrize("op", ["==", "!=", "<", "<=", ">", ">="])
def test_time_duration_date_and_datetime_values_compare_as_pyarrow(column, value, op):
    table = pa.table({"x": column, "i": pa.array(range(len(column)))})
    _same_rows(table, lambda f: {"==": f("x") == value, "!=": f("x") != value,
                                 "<": f("x") < value, "<=": f("x") <= value,
                                 ">": f("x") > value, ">=": f("x") >= value}[op])


@pytest.mark.parametrize("column, value", [c for c in _TIMES if not (
    isinstance(c[1], datetime.datetime) and c[1].hour)],  # (pyarrow's isin truncates these)
    ids=lambda v: str(getattr(v, "type", v)))
def test_time_duration_date_and_datetime_values_isin_as_pyarrow(column, value):
    table = pa.table({"x": column, "i": pa.array(range(len(column)))})
    _same_rows(table, lambda f: f("x").isin([value]))
    _same_rows(table, lambda f: ~f("x").isin([value, None]))


def test_float32_isin_casts_the_value_set_to_float32_as_pyarrow():
    table = pa.table({"x": pa.array([0.1, 0.5, None, float("inf"), 16777216.0], pa.float32()),
                      "i": pa.array([0, 1, 2, 3, 4])})
    assert _same_rows(table, lambda f: f("x").isin([0.1, 0.5])) == [0, 1]
    assert _same_rows(table, lambda f: f("x").isin([np.float64(0.1), float("inf")])) == [0, 3]
    for make in (lambda f: f("x") == 0.1, lambda f: f("x") <= 0.1, lambda f: f("x") > 0.1):
        _same_rows(table, make)  # (comparisons are in float64, in both)
    # a finite value past float32's range is in no row (pyarrow's cast makes it inf)
    assert _rows(_read_back(table).filter(arrowmm.field("x").isin([1e40]))) == []


def test_float16_isin_casts_the_value_set_to_float16():
    table = pa.table({"x": pa.array(np.array([0.1, 0.5, np.nan], np.float16)),
                      "i": pa.array([0, 1, 2])})
    mt = _read_back(table)
    assert _rows(mt.filter(arrowmm.field("x").isin([0.1]))) == [0]
    assert _rows(mt.filter(arrowmm.field("x").isin([0.5, float("nan")]))) == [1, 2]


def test_a_mistyped_value_raises_on_a_run_end_encoded_column():
    """Judged by its values' type, as a dictionary column already was."""
    column = pa.RunEndEncodedArray.from_arrays(pa.array([1, 3], pa.int32()),
                                               pa.array([1, 2], pa.time32("s")))
    mt = _read_back(pa.table({"x": column}))
    for expr in (arrowmm.field("x") == 1, arrowmm.field("x") != 1, arrowmm.field("x").isin([1])):
        with pytest.raises(arrowmm.ArrowInvalid, match="'x'.*time32"):
            mt.filter(expr)
    kept = mt.filter(arrowmm.field("x") == datetime.time(0, 0, 2)).column("x").to_pylist()
    assert kept == [datetime.time(0, 0, 2)] * 2


@pytest.mark.parametrize("column", [
    pa.array([[1], [2], None]), pa.array([{"a": 1}, None, {"a": 2}]),
    pa.array([[1], [2], None], pa.list_(pa.int64(), 1)),
    pa.UnionArray.from_sparse(pa.array([0, 1, 0], pa.int8()),
                              [pa.array([1, 2, 3]), pa.array(["a", "b", "c"])]),
], ids=["list", "struct", "fixed_size_list", "union"])
def test_isin_over_nested_values_is_refused_as_pyarrow(column):
    """isin judged a list or a struct equal to a number (never: no row, ~isin every row)."""
    table = pa.table({"x": column})
    with pytest.raises(pa.ArrowNotImplementedError):
        table.filter(pc.field("x").isin([1]))
    mt = _read_back(table)
    for expr in (arrowmm.field("x").isin([1]), ~arrowmm.field("x").isin([1])):
        with pytest.raises(arrowmm.ArrowNotImplementedError, match="'x'"):
            mt.filter(expr)
    assert mt.filter(arrowmm.field("x").isin([None])).num_rows == \
        table.filter(pc.field("x").is_null()).num_rows  # (a null set member still matches)

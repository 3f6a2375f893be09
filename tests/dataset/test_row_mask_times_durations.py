"""``arrowmm.dataset.filters.row_mask`` judges time and duration columns by their stored
integers (review 15: 5): it read times as ``datetime.time``, which holds microseconds, so a
1 ns row equalled ``time(0)``."""
from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import arrowmm
from arrowmm.dataset.filters import normalize_filter, row_mask

_COLUMNS = [(pa.time64("ns"), dt.time(0)), (pa.duration("ns"), dt.timedelta(0))]


@pytest.mark.parametrize("op,function", [("==", pc.equal), ("!=", pc.not_equal),
                                         ("<=", pc.less_equal), (">", pc.greater)])
def test_row_mask_judges_nanosecond_rows_by_their_stored_values(op, function):
    for column_type, zero in _COLUMNS:
        values = pa.array([0, 1, None, 1000, 999], column_type)
        term = normalize_filter([("t", op, zero)])[0][0]
        want = function(values, pa.scalar(zero, column_type)).fill_null(False).to_pylist()
        assert row_mask(arrowmm.array(values), term).tolist() == want, column_type


@pytest.mark.parametrize("op", ["in", "not in"])
def test_row_mask_in_matches_nanosecond_rows_exactly(op):
    for column_type, zero in _COLUMNS:
        near = dt.time(0, 0, 0, 1) if column_type == pa.time64("ns") else \
            dt.timedelta(microseconds=1)
        values = pa.array([1000, 1001, None, 999], column_type)
        term = normalize_filter([("t", op, [near])])[0][0]
        hits = [True, False, None, False]  # (a null row passes "not in", as in pyarrow)
        want = [h is True if op == "in" else h is not True for h in hits]
        assert row_mask(arrowmm.array(values), term).tolist() == want, column_type

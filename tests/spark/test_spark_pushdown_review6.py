"""Review 6's findings on the Python source's pushdown (``option("pushdown", "true")``), in a
real local Spark session (one for the module) against Spark-on-Parquet of the same table.

Finding 4: negated filters (pyspark's ``Not``, which has no ``attribute``) failed every query.
Finding 3: Spark hands date literals in 1582-10-05..14 to the source as 1582-10-15, which
pruning judged exactly.
"""
from __future__ import annotations

import datetime
import operator
import random
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql.datasource import EqualTo, Filter, GreaterThan, LessThanOrEqual, Not

import arrowmm
from arrowmm import types as t
from arrowmm.ipc.core.statistics import batch_statistics
from arrowmm.spark import pruning
from arrowmm.spark.source import ArrowmmPushdownReader

UTC = datetime.timezone.utc


def _write(folder, table, rows_per_batch):
    """The table as an arrowmm file with statistics, and as Parquet (the reference)."""
    arrow_path, pq_path = str(folder / "t.arrow"), str(folder / "t.parquet")
    with arrowmm.new_file(arrow_path, table.schema, statistics=True) as w:
        for batch in table.to_batches(max_chunksize=rows_per_batch):
            w.write(batch)
    pq.write_table(table, pq_path)
    return arrow_path, pq_path


def _ids(df, where):
    return sorted(r[0] for r in df.where(where).select("id").collect())


def _pushdown(spark, path, log=None):
    reader = spark.read.format("arrowmm_python").option("pushdown", "true")
    if log:
        reader = reader.option("batchLog", log)
    return reader.load(path)


# -- finding 4: negated filters ------------------------------------------------------------------
NEGATED = ["id != 3", "NOT (id = 3)", "id NOT IN (3, 4)", "NOT (id <=> 3)", "x != 3",
           "NOT (x IN (3, 5))", "NOT (x <=> 3)", "i8 > -128", "i8 < 127",
           "b = false", "NOT b", "NOT (s LIKE 'a%')", "NOT (s LIKE '%a')"]


@pytest.mark.parametrize("where", NEGATED)
def test_negated_filters_give_parquets_rows(spark, tmp_path, where):
    # batches of 2: [3, 3] (a batch NOT (x = 3) skips), [3, NULL] and [5, NULL] (the NULL row
    # fails both x = 3 and its negation: a negation judged "all rows" would keep it)
    table = pa.table({"id": pa.array(range(8), pa.int64()),
                      "x": pa.array([3, 3, 3, None, 5, None, 1, 2], pa.int64()),
                      "i8": pa.array([-128, -128, 0, 1, 127, 127, 3, None], pa.int8()),
                      "b": pa.array([True, True, False, None, True, False, None, None]),
                      "s": pa.array(["ab", "ab", "ba", None, "a", "b", "xa", None])})
    arrow_path, pq_path = _write(tmp_path, table, rows_per_batch=2)
    assert _ids(_pushdown(spark, arrow_path), where) == _ids(spark.read.parquet(pq_path), where)


def test_negation_skips_only_batches_its_child_holds_on_entirely(spark, tmp_path):
    table = pa.table({"id": pa.array(range(6), pa.int64()),
                      "x": pa.array([3, 3, 3, None, 3, 4], pa.int64())})
    arrow_path, _ = _write(tmp_path, table, rows_per_batch=2)
    log = str(tmp_path / "batches.log")
    assert _ids(_pushdown(spark, arrow_path, log), "x != 3") == [5]
    # [3, 3] is skipped; [3, NULL] is read (the child is not true on every row) as is [3, 4]
    assert len(open(log).read().splitlines()) == 2


class _NewFilter(Filter):
    """A filter class the source does not know, with no ``attribute``."""


@dataclass(frozen=True)
class _Column(Filter):
    attribute: tuple


def test_unknown_filter_classes_go_back_to_spark(tmp_path):
    table = pa.table({"x": pa.array([3, 3], pa.int64())})
    arrow_path, _ = _write(tmp_path, table, rows_per_batch=1)
    reader = ArrowmmPushdownReader({"path": arrow_path}, None)
    unknown = [_NewFilter(), Not(_NewFilter()), _Column(("x",)), Not(Not(_Column(("x",))))]
    assert list(reader.pushFilters(unknown)) == unknown
    assert not reader._skip
    # NOT (x = 3) skips both batches: applied exactly, not handed back
    assert list(reader.pushFilters([Not(EqualTo(("x",), 3))])) == []
    assert reader._skip == {(0, 0), (0, 1)}


def test_not_is_never_all_and_none_only_when_the_child_is_all():
    stats = {"min": 3, "max": 3, "nulls": 0}
    int64 = t.int64()
    assert pruning.verdict(Not(EqualTo(("x",), 3)), int64, stats, 2) == pruning.NONE
    # the child is false on every row, but NOT is still handed back (SOME), never ALL
    assert pruning.verdict(Not(EqualTo(("x",), 4)), int64, stats, 2) == pruning.SOME
    with_null = {"min": 3, "max": 3, "nulls": 1}
    assert pruning.verdict(Not(EqualTo(("x",), 3)), int64, with_null, 2) == pruning.SOME


def test_not_verdicts_never_contradict_the_rows():
    # three-valued logic: a row passes NOT (x op v) only where x op v is false, not null
    rng = random.Random(6)
    ops = {EqualTo: operator.eq, GreaterThan: operator.gt, LessThanOrEqual: operator.le}
    decided = 0
    for _ in range(300):
        values = [rng.choice([None, rng.randint(-2, 2)]) for _ in range(rng.randint(1, 4))]
        batch = arrowmm.record_batch({"x": arrowmm.array(values, type=t.int64())})
        stats = batch_statistics(batch)["x"]
        for cls, op in ops.items():
            v = rng.randint(-2, 2)
            got = pruning.verdict(Not(cls(("x",), v)), t.int64(), stats, len(values))
            assert got != pruning.ALL
            if got == pruning.NONE:
                assert not any(x is not None and not op(x, v) for x in values), (cls, v, values)
                decided += 1
    assert decided > 20  # the negations do skip, not only answer SOME


# -- finding 3: dates and timestamps around the calendar change ----------------------------------
GAP = ["d = DATE'1582-10-10'", "d > DATE'1582-10-10'", "d <= DATE'1582-10-10'",
       "d <=> DATE'1582-10-10'", "d != DATE'1582-10-10'", "d IN (DATE'1582-10-10')"]


@pytest.mark.parametrize("where", GAP)
def test_gap_date_literals_give_parquets_rows(spark, tmp_path, where):
    days = [datetime.date(1582, 10, 15), datetime.date(2000, 1, 1), datetime.date(1582, 10, 4)]
    table = pa.table({"id": pa.array([0, 1, 2], pa.int64()), "d": pa.array(days, pa.date32())})
    arrow_path, pq_path = _write(tmp_path, table, rows_per_batch=1)
    assert _ids(_pushdown(spark, arrow_path), where) == _ids(spark.read.parquet(pq_path), where)


@pytest.mark.parametrize("literal, dtype", [
    (datetime.date(1582, 10, 15), t.date32()),
    (datetime.datetime(1582, 10, 15, 12, tzinfo=UTC), t.timestamp("us", "UTC")),
    (datetime.datetime(1582, 10, 15, 12), t.timestamp("us")),
])
def test_literals_on_the_calendar_change_are_not_judged(literal, dtype):
    epoch = datetime.date(1970, 1, 1)
    if isinstance(dtype, t.DateType):
        stat = (literal - epoch).days
    else:
        stat = int((literal.replace(tzinfo=None) - datetime.datetime(1970, 1, 1))
                   / datetime.timedelta(microseconds=1))
    stats = {"min": stat, "max": stat, "nulls": 0}
    assert pruning.verdict(EqualTo(("d",), literal), dtype, stats, 1) == pruning.SOME
    later = literal + datetime.timedelta(days=400)
    assert pruning.verdict(EqualTo(("d",), later), dtype, stats, 1) == pruning.NONE

"""The Python source's pushdown on decimals of more than 28 digits (review 23: F1).

A decimal bound was built with ``Decimal.scaleb``, which rounds to the decimal context's
precision (28 digits by default): a batch [...781, ...782] had the bounds ...780 and ...780, so
``d > ...781`` skipped it (a row lost) and ``d = ...782`` judged it ALL and was not handed back
to Spark (a row gained).
"""
from __future__ import annotations

import decimal
import operator

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql.datasource import (EqualTo, GreaterThan, GreaterThanOrEqual, In, LessThan,
                                    LessThanOrEqual)

import arrowmm
from arrowmm import types as t
from arrowmm.spark import pruning

D = decimal.Decimal
#: 29 significant digits: one more than the default decimal context holds
BIG = 12345678901234567890123456781

JUDGED = {EqualTo: operator.eq, GreaterThan: operator.gt, GreaterThanOrEqual: operator.ge,
          LessThan: operator.lt, LessThanOrEqual: operator.le}


def _decimal(unscaled: int, scale: int) -> D:
    return D(f"{unscaled}E{-scale}")


@pytest.mark.parametrize("dtype", [t.decimal128(38, 0), t.decimal128(38, 10),
                                   t.decimal128(38, -2), t.decimal256(76, 0),
                                   t.decimal256(76, 40)], ids=str)
@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("precision", [None, 6], ids=["default context", "6-digit context"])
def test_verdicts_of_wide_decimals_agree_with_the_rows(dtype, sign, precision):
    # a batch of two values: ...67 999...9 and ...68 000...0 (all of the type's digits); 28
    # digits round the first to the second, which a literal of 27 digits can name.  Every
    # verdict must hold on the two rows: NONE only when neither matches, ALL only when both do
    zeros = dtype.precision - 27
    head = int(("1234567890" * 3)[:26] + "7")
    ends = [head * 10**zeros + 10**zeros - 1, (head + 1) * 10**zeros]
    lo, hi = sorted(sign * u for u in ends)
    stats = {"nulls": 0, "min": lo, "max": hi}
    s = dtype.scale
    rows = [_decimal(lo, s), _decimal(hi, s)]
    literals = [_decimal(sign * (head + d), zeros - s) for d in (-1, 1, 2)]  # (27 digits)
    literals += rows + [_decimal(lo - 1, s), _decimal(hi + 1, s), _decimal(lo * 10 + 5, s + 1)]
    decided = 0
    with decimal.localcontext() as ctx:
        if precision:
            ctx.prec = precision  # (a caller's narrower context changes no bound)
        for v in literals:
            for cls, op in JUDGED.items():
                matches = sum(op(x, v) for x in rows)
                got = pruning.verdict(cls(("d",), v), dtype, stats, 2)
                assert got != pruning.NONE or matches == 0, (cls.__name__, v, got)
                assert got != pruning.ALL or matches == 2, (cls.__name__, v, got)
                decided += got != pruning.SOME
            got = pruning.verdict(In(("d",), (v, D(7))), dtype, stats, 2)
            matches = sum(x == v for x in rows)
            assert got != pruning.NONE or matches == 0, ("In", v, got)
            assert got != pruning.ALL or matches == 2, ("In", v, got)
    assert decided >= 12  # (the bounds still prune: past them, every verdict is decided)


def test_literals_of_28_digits_or_more_are_not_judged():
    # pyspark hands a decimal literal over as Decimal(unscaled) * 10 ** -scale, in the worker's
    # 28-digit context: d = ...781BD arrives as ...780 (1.234567890123456789012345678E+28),
    # so a literal of that many digits says nothing exact about the rows
    dtype, far = t.decimal128(38, 0), D(f"{BIG}E3")
    stats = {"nulls": 0, "min": 1, "max": 2}
    for cls in JUDGED:
        assert pruning.verdict(cls(("d",), far), dtype, stats, 2) == pruning.SOME, cls
    assert pruning.verdict(In(("d",), (far,)), dtype, stats, 2) == pruning.SOME
    assert pruning.verdict(EqualTo(("d",), D(10**26)), dtype, stats, 2) == pruning.NONE


def test_a_decimal_bound_that_is_not_an_integer_is_not_judged():
    # decimal statistics are unscaled integers; another value (a forged 1.5) is not read as 1
    stats = {"nulls": 0, "min": 1.5, "max": 1.5}
    assert pruning.verdict(EqualTo(("d",), D(1)), t.decimal128(10, 0), stats, 1) == pruning.SOME


@pytest.mark.parametrize("dtype", [pa.decimal128(38, 0), pa.decimal128(38, 10),
                                   pa.decimal256(38, 4)], ids=str)
def test_wide_decimal_pushdown_gives_parquets_rows(spark, tmp_path, dtype):
    # batch 0 holds ...781 and ...782 (29 digits); batch 1 holds 5 (decimal256: read by "cast")
    low, high = _decimal(BIG, dtype.scale), _decimal(BIG + 1, dtype.scale)
    batches = [pa.table({"d": pa.array([low, high], dtype)}),
               pa.table({"d": pa.array([D(5)], dtype)})]
    arrow_path, pq_path = str(tmp_path / "d.arrow"), str(tmp_path / "d.parquet")
    with arrowmm.new_file(arrow_path, arrowmm.schema(batches[0].schema), statistics=True) as w:
        for b in batches:
            w.write(b)
    pq.write_table(pa.concat_tables(batches), pq_path)
    for where in [f"d > {low}BD", f"d = {high}BD", f"d <= {low}BD", f"d in ({low}BD, 7BD)",
                  f"d >= {high}BD", f"d < {high}BD"]:
        want = sorted(r.d for r in spark.read.parquet(pq_path).where(where).collect())
        got = sorted(r.d for r in spark.read.format("arrowmm_python").option("pushdown", "true")
                     .option("cast", "true").load(arrow_path).where(where).collect())
        assert got == want, where

"""Filter and limit pushdown of the JVM reader (``format("arrowmm_jvm")``) in a real session.

The reader skips the record batches that arrowmm's footer statistics exclude and, with a
pushed limit, reads only the first batches; Spark still evaluates every filter and the limit.
Skipping is proven with a batch whose buffers are hostile: a read that touches it raises, so a
query that succeeds did not read it.  Answers are compared with Spark's own evaluation of the
same filters on the same rows (``spark.createDataFrame``).
"""
from __future__ import annotations

import datetime
import decimal
import struct

import pyarrow as pa
import pytest

import arrowmm
from arrowmm.spark import jar as jvm_jar

pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")
from pyspark.sql import functions as F


FMT = jvm_jar.JVM_FORMAT
UTC = datetime.timezone.utc


def _write(path, batches, statistics=True):
    with arrowmm.new_file(str(path), batches[0].schema, statistics=statistics) as w:
        for b in batches:
            w.write(b)


def _keyed(path, sizes, statistics=True):
    """Batches of consecutive keys ``k`` (int64) and ``v = k / 2``, of the given sizes; returns
    the byte pattern of the first batch's ``k`` data buffer descriptor (offset 0, length)."""
    batches, start = [], 0
    for n in sizes:
        batches.append(pa.record_batch({"k": pa.array(range(start, start + n), pa.int64()),
                                        "v": pa.array([i / 2 for i in range(start, start + n)])}))
        start += n
    _write(path, batches, statistics)
    return start


def _make_hostile(path, rows):
    """Make the (only) batch of ``rows`` rows claim a terabyte-long ``k`` buffer."""
    data = path.read_bytes()
    pattern = struct.pack("<qq", 0, 8 * rows)
    assert data.count(pattern) == 1
    path.write_bytes(data.replace(pattern, struct.pack("<qq", 0, 1 << 40)))


def _load(spark, path):
    return spark.read.format(FMT).option("maxPartitionBytes", "1k").load(str(path))


def test_batches_the_statistics_exclude_are_not_read(spark, tmp_path):
    path = tmp_path / "keys.arrow"
    total = _keyed(path, [50] + [100] * 19)  # batch 0 (keys 0..49) is the only 50-row one
    _make_hostile(path, 50)
    df = _load(spark, path)
    with pytest.raises(Exception, match="do not fit in the|starts before the buffer before it ends"):
        df.agg(F.sum("k")).collect()  # a full read meets the hostile batch
    # keys >= 1850 live in the last batch only: the hostile one is skipped, the others too
    narrow = df.filter(F.col("k") >= 1850)
    assert sorted(r.k for r in narrow.collect()) == list(range(1850, total))
    assert narrow.rdd.getNumPartitions() == 1
    assert df.filter("k between 300 and 320 or k > 1940").count() == 21 + 9
    assert [r.k for r in df.filter("v = 900.5").collect()] == [1801]
    # filters go back to Spark (rows of a batch that is read are still checked)
    assert df.filter("k > 1855 and k < 1858").count() == 2
    plan = narrow._jdf.queryExecution().executedPlan().toString()
    assert "k" in plan and "GreaterThanOrEqual" in plan, plan


def test_no_reuse_trap_a_filtered_query_does_not_narrow_later_ones(spark, tmp_path):
    path = tmp_path / "keys.arrow"
    total = _keyed(path, [100] * 10)
    df = _load(spark, path)
    assert df.filter(F.col("k") < 100).count() == 100
    assert df.count() == total
    assert df.filter(F.col("k") > 5).filter(F.col("k") < 100).count() == 94
    assert df.groupBy().sum("k").first()[0] == sum(range(total))
    assert df.filter("k < 10 or k >= 990").count() == 20  # an OR keeps both ends' batches


def test_files_without_statistics_are_read_whole(spark, tmp_path):
    path = tmp_path / "plain.arrow"
    _keyed(path, [50] + [100] * 4, statistics=False)
    _make_hostile(path, 50)
    with pytest.raises(Exception, match="do not fit in the|starts before the buffer before it ends"):
        _load(spark, path).filter(F.col("k") >= 400).collect()


def test_a_limit_reads_only_the_first_batches(spark, tmp_path):
    path = tmp_path / "keys.arrow"
    _keyed(path, [100] * 9 + [37])  # the last batch (keys 900..936) is hostile
    _make_hostile(path, 37)
    df = _load(spark, path)
    rows = df.limit(250).collect()
    assert len(rows) == 250
    assert {r.k for r in rows} <= set(range(300))
    assert "limit 250" in df.limit(250)._jdf.queryExecution().executedPlan().toString()
    with pytest.raises(Exception, match="do not fit in the|starts before the buffer before it ends"):
        df.agg(F.sum("k")).collect()
    # a limit over a filter is not pushed (the filter is Spark's): still the right answer
    assert [r.k for r in df.filter(F.col("k") % 2 == 1).limit(3).collect()] == [1, 3, 5]


def _typed_batches():
    """Eight sorted batches of four rows: each column's range differs between batches."""
    out = []
    for b in range(8):
        ks = list(range(4 * b, 4 * b + 4))
        out.append(pa.record_batch({
            "k": pa.array(ks, pa.int32()),
            "f": pa.array([float("nan") if k == 13 else (None if k == 14 else k / 4) for k in ks]),
            "s": pa.array([None if k % 5 == 0 else f"s{k:03d}" for k in ks]),
            "b": pa.array([k >= 16 for k in ks]),
            "dec": pa.array([decimal.Decimal(k) / 100 for k in ks], pa.decimal128(6, 2)),
            "d": pa.array([datetime.date(2024, 1, 1) + datetime.timedelta(days=k) for k in ks]),
            "ts": pa.array([datetime.datetime(2024, 1, 1, tzinfo=UTC)
                            + datetime.timedelta(seconds=k) for k in ks], pa.timestamp("ms", "UTC")),
            "bin": pa.array([bytes([k]) for k in ks]),
            "nul": pa.array([None] * 4 if b % 2 else [k for k in ks], pa.int64()),
        }))
    return out


FILTERS = [
    "k = 9", "k <=> 9", "k > 27", "k >= 28", "k < 3", "k <= 3", "k in (1, 30, 99)", "k != 5",
    "not (k < 20)", "k < 2 or k > 29", "k > 3 and k < 6", "f > 3.0", "f < 0.5", "f = 3.25",
    "isnan(f)", "f is null", "f is not null", "s = 's011'", "s like 's01%'", "s > 's029'",
    "s is null", "b = true", "b", "not b", "dec >= 0.30", "dec = 0.05",
    "d < date'2024-01-03'", "d = date'2024-01-20'",
    "ts >= timestamp'2024-01-01 00:00:30+00:00'", "ts < timestamp'2024-01-01 00:00:02+00:00'",
    "bin = X'05'", "bin > X'1D'", "nul is null", "nul is not null", "nul > 10", "k = null",
    "k <=> null", "s in ('s001', null)",
]


# filters the statistics decide exactly: only the batches holding matches are read
NARROW = {"k = 9", "k > 27", "k in (1, 30, 99)", "k < 2 or k > 29", "s = 's011'", "s like 's01%'",
          "d = date'2024-01-20'", "ts >= timestamp'2024-01-01 00:00:30+00:00'", "bin = X'05'",
          "dec = 0.05", "b = true", "nul is null", "nul > 10", "k = null"}


@pytest.mark.parametrize("where", FILTERS)
def test_filtered_reads_match_sparks_own_evaluation(spark, tmp_path_factory, where):
    base = tmp_path_factory.getbasetemp() / "typed.arrow"
    if not base.exists():
        _write(base, _typed_batches())
    table = pa.Table.from_batches(_typed_batches())
    got = sorted(r.k for r in spark.read.format(FMT).load(str(base)).filter(where).collect())
    expected = sorted(r.k for r in spark.createDataFrame(table).filter(where).collect())
    assert got == expected
    if where in NARROW:  # one partition per batch read
        df = spark.read.format(FMT).option("maxPartitionBytes", "1").load(str(base))
        assert df.filter(where).rdd.getNumPartitions() == len({k // 4 for k in expected})

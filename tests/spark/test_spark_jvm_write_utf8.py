"""The JVM writer (``df.write.format("arrowmm_jvm")``) and strings that are not UTF-8, in a real
session (review 23: F3).

A Spark string is bytes: ``cast(binary as string)`` does not check them.  An Arrow string
column must be UTF-8, so the writer refuses such a value, naming the column (or nested field),
the row and the byte, as the Python writer refuses it; it wrote the bytes as they were, with a
U+FFFD statistics bound above the value it stood for, and readers trusting the bound skipped
the batch.
"""
from __future__ import annotations

import os

import pytest

from arrowmm.spark import jar as jvm_jar

pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")

FMT = jvm_jar.JVM_FORMAT


def _arrow_files(folder):
    return [os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs if f.endswith(".arrow")]


@pytest.mark.parametrize("select, where", [
    # row 1: ten ASCII bytes (past the 8-byte fast path), then 0xFF
    ("select 'é€𝄞abcdefghij' as s union all select cast(unhex('6162636465666768696aff') as string)",
     r"column 's': the string of row 1 .*bad sequence at byte 10 of the value \(byte 0xff\)"),
    ("select named_struct('x', cast(unhex('c3a9e2') as string)) as s",
     r"column 's\.x': the string of row 0 .*bad sequence at byte 2 of the value \(byte 0xe2\)"),
    ("select array('ok', cast(unhex('eda080') as string)) as s",  # a surrogate
     r"column 's\[\]': the string of row 0 .*bad sequence at byte 0 of the value \(byte 0xed\)"),
    ("select map('k', cast(unhex('80') as string)) as s",
     r"column 's\.value': the string of row 0 .*byte 0 of the value \(byte 0x80\)"),
], ids=["flat", "struct", "array", "map"])
def test_a_string_that_is_not_utf8_is_refused(spark, tmp_path, select, where):
    out = str(tmp_path / "out")
    with pytest.raises(Exception, match=where + r".*not check them"):
        spark.sql(select).coalesce(1).write.format(FMT).save(out)
    assert _arrow_files(out) == []  # the task's file was removed, none committed


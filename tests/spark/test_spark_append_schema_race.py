"""An append that planned against one schema and commits after an overwrite of another.

Both engines refuse an append of another schema at planning (before any task writes).  An
overwrite that commits while the append's tasks run changes the directory's schema under it;
publishing the append then would mix two schemas in one version, after which every read of
the directory fails.  The append re-checks the schema of the version it publishes on, and
its job is refused and removed (docs/commit-protocol.md).
"""
from __future__ import annotations

import os
import threading
import time

import pytest

pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")


def _blocked_append(spark, flag: str, started: str):
    """Rows ``id bigint`` whose one task waits for ``flag`` (after touching ``started``)."""
    from pyspark.sql.functions import udf

    @udf("bigint")
    def wait_for_flag(i):
        open(started, "w").close()
        for _ in range(6000):  # (the test makes the flag in any case: no real wait)
            if os.path.exists(flag):
                break
            time.sleep(0.05)
        return i

    return spark.range(0, 2, 1, 1).select(wait_for_flag("id").alias("id"))


@pytest.mark.parametrize("engine", ["arrowmm_python", "arrowmm_jvm"])
def test_an_append_overtaken_by_an_overwrite_of_another_schema_is_refused(spark, tmp_path, engine):
    import arrowmm.spark
    arrowmm.spark.register(spark)
    out = str(tmp_path / "out")
    flag, started = str(tmp_path / "flag"), str(tmp_path / "started")
    spark.range(0, 3, 1, 1).write.format(engine).mode("overwrite").save(out)
    failure = []

    def append():
        try:
            if engine == "arrowmm_jvm":  # a jar added to a running JVM reaches only the threads
                arrowmm.spark.add_jar(spark)  # that add it (docs/spark.md): this is a new one
            _blocked_append(spark, flag, started).write.format(engine).mode("append").save(out)
        except Exception as exc:  # noqa: BLE001  (the test asserts what it was)
            failure.append(exc)

    worker = threading.Thread(target=append)
    worker.start()
    try:
        for _ in range(6000):  # the append planned (its schema check passed) and its task runs
            if os.path.exists(started) or not worker.is_alive():
                break
            time.sleep(0.05)
        reasons = [str(exc) for exc in failure]
        assert os.path.exists(started), f"the append's task never started: {reasons}"
        spark.sql("select 'x' as s").coalesce(1).write.format(engine).mode("overwrite").save(out)
    finally:
        open(flag, "w").close()
        worker.join(600)
    assert not worker.is_alive()
    assert failure, "the append of id bigint onto a directory of s string was published"
    message = str(failure[0])
    assert "cannot append" in message and "s" in message, message
    # the directory still reads, as the overwrite left it, and holds no file of the append
    assert [r.s for r in spark.read.format(engine).load(out).collect()] == ["x"]
    spark.read.format(engine).load(out).collect()
    names = [n for n in os.listdir(out) if not n.startswith(("_", "."))]
    assert len(names) == 1, names

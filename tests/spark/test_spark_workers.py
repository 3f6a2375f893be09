"""Spark's Python workers import the installed arrowmm whatever folder Spark was started from,
and find the Python data source without ``register``.

Spark starts its workers as ``python -m pyspark.daemon``, which puts the current directory first
on ``sys.path``.  Started from a folder holding an ``arrowmm/`` that cannot be imported (the
root of an unbuilt clone), a worker would import that one and fail.  arrowmm's session helper
keeps the folder off the workers' path (``PYTHONSAFEPATH``).

A session without the JVM connector's jar (``jvm=False``, as a Spark Connect client that cannot
add jars) that never calls ``register``: ``arrowmm`` and ``arrowmm_python`` both answer with
the Python source, which Spark's worker lookup finds in the ``pyspark_arrowmm`` modules.  The
probe: a uint32 column, which the Python source reads only with option("cast", "true") and the
JVM connector reads as is.

Both in one child process (a fresh JVM: one start, not two), started from such a folder, whose
own arrowmm comes from ``PYTHONPATH`` as an installed one would; it writes, reads and queries
through the data source by both names.
"""
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")

ROOT = Path(__file__).resolve().parents[2]

JOB = """
import sys, tempfile
assert "poison" not in sys.modules and not sys.path[0].endswith("poisoned"), sys.path[:2]
from arrowmm.spark.session import local_session
folder, probe = sys.argv[1], sys.argv[2]
spark = local_session("local[1]", "arrowmm-workers", tempfile.mkdtemp(dir=folder),
                      register=False, jvm=False)
try:
    df = spark.range(0, 1000).selectExpr("id", "id * 2 AS twice")
    df.write.format("arrowmm_python").mode("overwrite").save(folder + "/data")
    for name in ("arrowmm", "arrowmm_python"):
        total = spark.read.format(name).load(folder + "/data").agg({"twice": "sum"}).first()[0]
        spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW v USING {name} OPTIONS (path '{folder}/data')")
        n = spark.sql("SELECT count(*) FROM v").first()[0]
        try:
            spark.read.format(name).load(probe).collect()
            print("ENGINE", name, "jvm")
        except Exception as exc:
            print("ENGINE", name, "python" if "option('cast', 'true')" in str(exc) else repr(exc))
        print("RESULT", name, total, n)
finally:
    spark.stop()
"""


@pytest.mark.skipif(sys.version_info < (3, 11), reason="Python 3.10 has no PYTHONSAFEPATH: "
                    "local_session warns instead (README, Spark section)")
def test_workers_ignore_an_arrowmm_folder_here_and_find_the_source_without_register(tmp_path):
    poisoned = tmp_path / "poisoned"
    (poisoned / "arrowmm").mkdir(parents=True)
    (poisoned / "arrowmm" / "__init__.py").write_text(
        "raise ImportError('the arrowmm folder of the current directory was imported')\n")
    probe = tmp_path / "u32.arrow"
    table = pa.table({"u": pa.array([1, 2], pa.uint32())})
    with pa.ipc.new_file(probe, table.schema) as w:
        w.write_table(table)
    script = tmp_path / "job.py"  # run as a script: the driver's sys.path[0] is not the folder
    script.write_text(JOB)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONSAFEPATH", "PYSPARK_PYTHON")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    proc = subprocess.run([sys.executable, str(script), str(tmp_path), str(probe)],
                          cwd=str(poisoned), capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    for name in ("arrowmm", "arrowmm_python"):
        assert f"RESULT {name} {sum(range(1000)) * 2} 1000" in proc.stdout, proc.stdout
        assert f"ENGINE {name} python" in proc.stdout, proc.stdout

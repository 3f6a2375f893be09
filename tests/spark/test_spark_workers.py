"""Spark's Python workers import the installed arrowmm whatever folder Spark was started from.

Spark starts its workers as ``python -m pyspark.daemon``, which puts the current directory first
on ``sys.path``.  Started from a folder holding an ``arrowmm/`` that cannot be imported (the
root of an unbuilt clone), a worker would import that one and fail.  arrowmm's session helper
keeps the folder off the workers' path (``PYTHONSAFEPATH``); this test starts a session from
such a folder, in a child process whose own arrowmm comes from ``PYTHONPATH`` as an installed
one would, and reads and writes through the data source.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")

ROOT = Path(__file__).resolve().parents[2]

JOB = """
import sys, tempfile
assert "poison" not in sys.modules and not sys.path[0].endswith("poisoned"), sys.path[:2]
from arrowmm.spark.session import local_session
spark = local_session("local[1]", "arrowmm-workers", tempfile.mkdtemp(dir=sys.argv[1]))
try:
    df = spark.range(0, 1000).selectExpr("id", "id * 2 AS twice")
    df.write.format("arrowmm_python").mode("overwrite").save(sys.argv[1] + "/data")
    total = spark.read.format("arrowmm_python").load(sys.argv[1] + "/data").agg({"twice": "sum"}).first()[0]
    print("sum", total)
finally:
    spark.stop()
"""


@pytest.mark.skipif(sys.version_info < (3, 11), reason="Python 3.10 has no PYTHONSAFEPATH: "
                    "local_session warns instead (README, Spark section)")
def test_workers_ignore_an_arrowmm_folder_in_the_current_directory(tmp_path):
    poisoned = tmp_path / "poisoned"
    (poisoned / "arrowmm").mkdir(parents=True)
    (poisoned / "arrowmm" / "__init__.py").write_text(
        "raise ImportError('the arrowmm folder of the current directory was imported')\n")
    script = tmp_path / "job.py"  # run as a script: the driver's sys.path[0] is not the folder
    script.write_text(JOB)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONSAFEPATH", "PYSPARK_PYTHON")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    proc = subprocess.run([sys.executable, str(script), str(tmp_path)], cwd=str(poisoned),
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert proc.stdout.strip().splitlines()[-1] == f"sum {sum(range(1000)) * 2}", proc.stdout

"""Spark Connect: the JVM connector's jar sent by a client (``arrowmm.spark.add_jar``, Spark's
``addArtifacts``) serves writes as well as reads, and ``configure`` refuses a builder whose
server it cannot reach the class path of (it used to warn and leave ``arrowmm`` to the Python
source).

The writes failed with "ClassNotFound with classloader" before the connector's tasks reported
their files in a commit message of Spark's own class: the driver reads task results with a
class loader that knows no session artifacts.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="the Spark tests need pyspark (pip install arrowmm[test])")
pytest.importorskip("grpc", reason="Spark Connect's client needs grpcio (pip install arrowmm[connect])")

import arrowmm.spark
from arrowmm.spark import jar as jvm_jar

if jvm_jar.java_runtime() is None:
    pytest.skip("no Java runtime: Spark Connect's local server needs one", allow_module_level=True)

SUPPORT = Path(__file__).resolve().parents[1] / "support" / "spark_connect_support.py"


def test_a_jar_sent_as_an_artifact_writes_appends_and_reads(tmp_path):
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    env.pop("SPARK_REMOTE", None)
    done = subprocess.run([sys.executable, str(SUPPORT), str(tmp_path)], capture_output=True,
                          text=True, timeout=600, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["connect"].startswith("pyspark.sql.connect")
    expected = sorted([(i, i * 0.5, str(i)) for i in range(100)]
                      + [(i, i * 0.5, str(i)) for i in range(10)])
    assert [tuple(r) for r in found["rows"]] == expected
    assert "_arrowmm_log" in found["files"]
    assert any(f.endswith(".arrow") for f in found["files"])


@pytest.mark.parametrize("url", ["sc://localhost:15002", "sc://spark.example.com:443/;token=x"])
def test_configure_refuses_a_remote_server_it_cannot_put_the_jar_on(url):
    from pyspark.sql import SparkSession
    with pytest.raises(ValueError, match=r"--jars .*add_jar\(spark\)"):
        arrowmm.spark.configure(SparkSession.builder.remote(url))


def test_configure_keeps_a_local_connect_server_s_jars():
    """``remote("local[...]")`` starts the server in this process with the builder's options,
    so the jar does reach it: configure sets it as for a classic builder."""
    from pyspark.sql import SparkSession
    builder = arrowmm.spark.configure(SparkSession.builder.remote("local[2]")
                                      .config("spark.jars", "/x/other.jar"))
    assert builder._options["spark.jars"].split(",") == ["/x/other.jar", jvm_jar.jar_path()]

"""The test session: arrowmm's quiet local session with two task attempts (retries testable)."""
from __future__ import annotations

import pytest


def start_session(tmp: str, master: str = "local[2,2]"):
    from arrowmm.spark.session import local_session
    return local_session(master, "arrowmm-tests", tmp, jvm=False,  # "arrowmm": the Python source
                         **{"spark.default.parallelism": "2"})


def start_jvm_session(tmp: str, master: str = "local[2]"):
    """A session with the JVM connector's jar; in a JVM an earlier test module started (the jar
    reaches the class path only at JVM start) the jar is added to this thread's loader."""
    from pyspark import SparkContext
    from arrowmm.spark import jar as jvm_jar
    from arrowmm.spark.session import local_session
    jvm_running = SparkContext._gateway is not None
    session = local_session(master, "arrowmm-jvm-tests", tmp, jvm=True,
                            **{"spark.default.parallelism": "2"})
    if jvm_running:
        session.sql(f"ADD JAR '{jvm_jar.jar_path()}'")
    return session


@pytest.fixture(scope="module", name="spark")
def jvm_spark(tmp_path_factory):
    """A test module's ``spark`` fixture: a session with the JVM connector's jar, one per
    module, stopped after it (``from spark_support import jvm_spark``)."""
    session = start_jvm_session(str(tmp_path_factory.mktemp("spark")))
    yield session
    session.stop()

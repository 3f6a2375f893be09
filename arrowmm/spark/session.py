"""A quiet local Spark session for the demo, the benchmarks and the tests.

Its Python workers run this interpreter (``PYSPARK_PYTHON``) with this
arrowmm importable, bind to loopback, log errors only and start the JVM with
C1-only JIT flags (about half the start-up time on small machines).
"""
from __future__ import annotations

import os
import sys
import tempfile
import warnings

__all__ = ["local_session"]

LOG_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")


def local_session(master: str = "local[*]", app: str = "arrowmm", folder: str = None,
                  driver_memory: str = "1g", fast_jit: bool = True, register: bool = True,
                  jvm: bool = False, **conf):
    """Start (or get) a local ``SparkSession`` with ``arrowmm`` registered (``register=False``:
    left to Spark's own lookup of the ``pyspark_arrowmm`` module); ``jvm=True`` adds the JVM
    reader's jar (``format("arrowmm_jvm")``, see ``arrowmm.spark.configure``)."""
    import arrowmm
    folder = folder or tempfile.mkdtemp(prefix="arrowmm-spark-")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable  # not realpath: a venv's python must stay itself
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(arrowmm.__file__)))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [package_root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    from pyspark.sql import SparkSession
    java_opts = f"-Dlog4j2.configurationFile=file:{LOG_CONFIG} -Dderby.system.home={folder}"
    if fast_jit:
        java_opts += " -XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
    builder = (SparkSession.builder.master(master).appName(app)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.memory", driver_memory)
               .config("spark.driver.extraJavaOptions", java_opts)
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.local.dir", os.path.join(folder, "local"))
               .config("spark.sql.warehouse.dir", os.path.join(folder, "warehouse")))
    for key, value in conf.items():
        builder = builder.config(key.replace("__", "."), value)
    if jvm:
        from .jar import configure
        builder = configure(builder)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pyspark's pandas>=3 notice
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if register:
        from . import register as register_source
        register_source(spark)
    return spark

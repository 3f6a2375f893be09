"""A quiet local Spark session for the demo, the benchmarks and the tests.

Its Python workers run this interpreter (``PYSPARK_PYTHON``) with this
arrowmm importable, bind to loopback, log errors only and start the JVM with
C1-only JIT flags (about half the start-up time on small machines).

Spark starts its Python workers as ``python -m pyspark.daemon``, which puts the current
directory first on ``sys.path``: run from a source checkout, a worker would import the
checkout's unbuilt ``arrowmm/`` instead of the installed package.  ``WORKER_ENV``
(``PYTHONSAFEPATH=1``, Python 3.11+) stops that; the session passes it to the JVM, which
every worker on this machine inherits, and to executors as ``spark.executorEnv``.
``safe_worker_path(builder)`` does the same for a builder arrowmm does not start.
"""
from __future__ import annotations

import os
import sys
import tempfile
import warnings
from typing import Optional

from .jar import JAR, configure, java_runtime

__all__ = ["local_session", "safe_worker_path", "WORKER_ENV"]

LOG_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")

#: Environment for Spark's Python workers: no current directory on ``sys.path`` (Python 3.11+).
WORKER_ENV = {"PYTHONSAFEPATH": "1"}


def safe_worker_path(builder):
    """``builder`` configured so that executors' Python workers do not put their current
    directory first on ``sys.path`` (``spark.executorEnv.PYTHONSAFEPATH=1``).

    Workers that the driver's JVM starts itself (local mode, and the data source's planning
    workers) inherit the JVM's environment instead: export ``PYTHONSAFEPATH=1`` before the JVM
    starts (``local_session`` does), or start Spark from a folder without an ``arrowmm/``
    source folder in it.  Python 3.10 has no such setting; there the folder is what counts.
    """
    for key, value in WORKER_ENV.items():
        builder = builder.config(f"spark.executorEnv.{key}", value)
    return builder


def _shadowing_folder() -> str:
    """The current directory's ``arrowmm`` folder when it is not the arrowmm imported here
    (a worker started in this directory would import it first), else ''."""
    import arrowmm
    here = os.path.join(os.getcwd(), "arrowmm")
    mine = os.path.dirname(os.path.abspath(arrowmm.__file__))
    if os.path.isdir(here) and os.path.realpath(here) != os.path.realpath(mine):
        return here
    return ""


def local_session(master: str = "local[*]", app: str = "arrowmm", folder: str = None,
                  driver_memory: str = "1g", fast_jit: bool = True, register: bool = True,
                  jvm: Optional[bool] = None, **conf):
    """Start (or get) a local ``SparkSession`` with arrowmm's data sources.

    ``jvm`` (default: whenever a Java runtime and the jar are there; Spark needs the runtime
    anyway) puts the JVM connector's jar on the session (``arrowmm.spark.configure``), and
    ``format("arrowmm")`` is then the JVM connector; ``jvm=False`` leaves ``arrowmm`` to the
    Python data source.
    ``arrowmm_python`` and (with the jar) ``arrowmm_jvm`` name one engine either way.
    ``register=False`` leaves the Python source to Spark's own lookup of the
    ``pyspark_arrowmm`` modules instead of ``arrowmm.spark.register``.
    """
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
    builder = safe_worker_path(builder)
    for key, value in conf.items():
        builder = builder.config(key.replace("__", "."), value)
    if sys.version_info < (3, 11) and _shadowing_folder():
        warnings.warn(f"Spark's Python workers start in {os.getcwd()} and would import "
                      f"{_shadowing_folder()} before the installed arrowmm (Python 3.10 cannot "
                      f"keep the current directory off sys.path): start from another folder",
                      RuntimeWarning, stacklevel=2)
    if jvm is None:  # (a package without its jar falls back to the Python source)
        jvm = java_runtime() is not None and os.path.isfile(JAR)
    if jvm:
        builder = configure(builder)
    # The JVM, and so every Python worker it starts, inherits the environment it starts with.
    saved = {key: os.environ.get(key) for key in WORKER_ENV}
    os.environ.update(WORKER_ENV)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # pyspark's pandas>=3 notice
            spark = builder.getOrCreate()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    spark.sparkContext.setLogLevel("ERROR")
    if register:
        from . import register as register_source
        register_source(spark)
    return spark

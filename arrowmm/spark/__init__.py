"""Apache Spark integration: ``spark.read.format("arrowmm")`` and ``df.write.format("arrowmm")``.

Needs pyspark 4 and pyarrow (``pip install "arrowmm[spark]"``) in the driver's
and the executors' Python.  ``register(spark)`` registers the data source
and turns on Spark's Python filter pushdown, which lets reads skip record
batches by the statistics arrowmm's writers record.

The JVM reader (stage 1 of issue 16) ships as a jar inside this package:
``configure(builder)`` adds it to a ``SparkSession.builder``, ``jar_path()``
gives its path (``python -m arrowmm.spark jar`` prints it), and then
``spark.read.format("arrowmm_jvm")`` reads the same files column by column
in place.  It takes over the name ``arrowmm`` once it also writes and streams.
"""
from __future__ import annotations

__all__ = ["register", "configure", "jar_path", "JVM_FORMAT", "ArrowmmDataSource", "spark_schema"]

from .jar import JVM_FORMAT, configure, jar_path


def register(spark, *, pushdown: bool = True) -> None:
    """Register the ``arrowmm`` data source on ``spark`` (and enable filter pushdown)."""
    from .source import ArrowmmDataSource
    spark.dataSource.register(ArrowmmDataSource)
    if pushdown:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")


def __getattr__(name):  # the pyspark-dependent parts load on first use
    if name == "ArrowmmDataSource":
        from .source import ArrowmmDataSource
        return ArrowmmDataSource
    if name == "spark_schema":
        from .types import spark_schema
        return spark_schema
    raise AttributeError(name)
